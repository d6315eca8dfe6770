"""Drive `instinct serve` with the official MCP Python SDK client (dev-only interop check).

Run with an interpreter that has `mcp` installed. Reads a JSON plan on stdin:
{"command": str, "args": [...], "env": {...}, "mode": "auto"|"legacy",
 "calls": [[tool, arguments, must_succeed], ...], "prompt": name}
Lists tools, checks the plan covers every listed tool, calls each one (the SDK
validates structuredContent against outputSchema), reads every resource, gets
the prompt, and prints one JSON summary line. Exit 0 only when all went well.
"""
import asyncio
import json
import sys


def field(obj, *names):
    for n in names:                      # SDK v2 snake_case, v1 camelCase
        if hasattr(obj, n):
            return getattr(obj, n)
    return None


async def run(plan):
    from mcp import StdioServerParameters
    params = StdioServerParameters(command=plan["command"], args=plan["args"], env=plan["env"])
    try:
        from mcp import Client           # SDK 2.x
    except ImportError:
        Client = None
    if Client is not None:
        async with Client(params, mode=plan.get("mode", "auto")) as c:
            return await exercise(c, c.protocol_version, c.server_info)
    from mcp import ClientSession        # SDK 1.x
    from mcp.client.stdio import stdio_client
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            init = await s.initialize()
            return await exercise(s, init.protocolVersion, init.serverInfo)


async def exercise(c, version, info):
    import importlib.metadata
    out = {"protocol": version, "server": info.name if info else None, "failures": [],
           "sdk": importlib.metadata.version("mcp")}
    if version < "2026":                 # ping is gone from the stateless revision
        await c.send_ping()
    listed = await c.list_tools()
    tools = listed.tools
    if info is None:                     # pinned modern mode skips discover: every result's _meta
        meta = field(listed, "meta", "_meta") or {}
        out["server"] = meta.get("io.modelcontextprotocol/serverInfo", {}).get("name")
    out["tools"] = sorted(t.name for t in tools)
    missing = set(out["tools"]) - {name for name, _, _ in PLAN["calls"]}
    if missing:
        out["failures"].append(f"plan misses tools: {sorted(missing)}")
    ok, tool_errors = set(), {}
    for name, args, must in PLAN["calls"]:
        try:
            res = await c.call_tool(name, args)
        except Exception as e:           # schema mismatch, protocol error...
            out["failures"].append(f"{name}: {type(e).__name__}: {e}")
            continue
        if field(res, "is_error", "isError"):
            tool_errors[name] = res.content[0].text
            if must:
                out["failures"].append(f"{name} returned isError: {res.content[0].text}")
        elif field(res, "structured_content", "structuredContent") is None:
            out["failures"].append(f"{name}: no structuredContent")
        else:
            ok.add(name)
    out["ok"], out["tool_errors"] = sorted(ok), tool_errors
    resources = (await c.list_resources()).resources
    out["resources"] = {}
    for r in resources:
        contents = (await c.read_resource(r.uri)).contents
        out["resources"][str(r.uri)] = sorted(field(x, "mime_type", "mimeType") for x in contents)
    out["templates"] = len(field(await c.list_resource_templates(), "resource_templates",
                                 "resourceTemplates"))
    prompts = (await c.list_prompts()).prompts
    out["prompts"] = [p.name for p in prompts]
    got = await c.get_prompt(PLAN["prompt"], {})
    out["prompt_text"] = got.messages[0].content.text
    return out


PLAN = json.loads(sys.stdin.read())
summary = asyncio.run(run(PLAN))
print(json.dumps(summary))
sys.exit(1 if summary["failures"] else 0)
