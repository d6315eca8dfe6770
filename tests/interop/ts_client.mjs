// Drive `instinct serve` with the official MCP TypeScript SDK v2 client (dev-only interop).
// Run with the working directory at a folder whose node_modules has @modelcontextprotocol/client (2.x). Reads a JSON
// plan on stdin, like sdk_client.py:
//   {"command", "args", "env", "mode": "legacy"|"auto"|"modern",
//    "calls": [[tool, arguments, must_succeed], ...], "prompt": name}
// Lists tools, calls each (the SDK validates structuredContent against outputSchema and,
// in the modern era, resultType and the cache hints), reads every resource, gets the
// prompt, and prints one JSON summary line. Exit 0 only when all went well.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

// resolved from the working directory (the install folder), not from this file's folder
const require = createRequire(pathToFileURL(process.cwd() + "/"));
const { Client } = require("@modelcontextprotocol/client");
const { StdioClientTransport } = require("@modelcontextprotocol/client/stdio");

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const plan = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const mode = plan.mode === "modern" ? { pin: "2026-07-28" } : plan.mode;

const client = new Client({ name: "instinct-interop", version: "0" },
                          { versionNegotiation: { mode } });
const transport = new StdioClientTransport({ command: plan.command, args: plan.args,
                                             env: plan.env, stderr: "pipe" });
const out = { failures: [] };
try {
  await client.connect(transport);
  out.protocol = client.getNegotiatedProtocolVersion();
  out.server = client.getServerVersion()?.name ?? null;
  if (out.protocol < "2026") await client.ping();
  const listed = await client.listTools();
  if (out.server === null) out.server = listed._meta?.["io.modelcontextprotocol/serverInfo"]?.name ?? null;
  out.tools = listed.tools.map((t) => t.name).sort();
  const planned = new Set(plan.calls.map((c) => c[0]));
  const missing = out.tools.filter((t) => !planned.has(t));
  if (missing.length) out.failures.push(`plan misses tools: ${missing}`);
  const ok = new Set();
  out.tool_errors = {};
  for (const [name, args, must] of plan.calls) {
    try {
      const res = await client.callTool({ name, arguments: args });
      if (res.isError) {
        out.tool_errors[name] = res.content[0].text;
        if (must) out.failures.push(`${name} returned isError: ${res.content[0].text}`);
      } else if (res.structuredContent === undefined) {
        out.failures.push(`${name}: no structuredContent`);
      } else {
        ok.add(name);
      }
    } catch (e) {
      out.failures.push(`${name}: ${e?.name}: ${e?.message}`);
    }
  }
  out.ok = [...ok].sort();
  out.resources = {};
  for (const r of (await client.listResources()).resources) {
    const got = await client.readResource({ uri: r.uri });
    out.resources[r.uri] = got.contents.map((c) => c.mimeType).sort();
  }
  out.templates = (await client.listResourceTemplates()).resourceTemplates.length;
  out.prompts = (await client.listPrompts()).prompts.map((p) => p.name);
  const prompt = await client.getPrompt({ name: plan.prompt, arguments: {} });
  out.prompt_text = prompt.messages[0].content.text;
} catch (e) {
  out.failures.push(`session: ${e?.name}: ${e?.message}`);
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify(out));
process.exit(out.failures.length ? 1 : 0);
