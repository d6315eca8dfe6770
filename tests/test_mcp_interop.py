"""Interop of the MCP server with real clients: the official MCP Python SDK and TypeScript SDK,
the official conformance suite, the MCP Inspector CLI, and an optimized (-OO) interpreter.

Install the clients with `.ci/install-interop.sh`; the tests find them through
INSTINCT_MCP_PYTHON / INSTINCT_INSPECTOR (and the rest) or the script's default directory and
skip when they are missing, unless INSTINCT_REQUIRE_INTEROP=1 (CI).
Run: python3 -m unittest -v tests.test_mcp_interop
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import instinct
from tests.helpers import (INSTINCT_PY, INTEROP, MODERN, NEWEST, ServerCase, enc, init_msg, req,
                           setUpModule)
from tests.test_mcp_tools import MUST_SUCCEED, P, call_plan


# -----------------------------------------------------------------------------
# 6. interop with real clients
# -----------------------------------------------------------------------------
INTEROP_DIR = os.environ.get("INSTINCT_INTEROP_DIR") or os.path.join(
    os.path.expanduser("~"), ".cache", "instinct-interop")


def _interop_tool(env_var, *default):
    path = os.environ.get(env_var) or os.path.join(INTEROP_DIR, *default)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


class InteropTestCase(ServerCase):
    def require(self, what, env_var, *default):
        path = _interop_tool(env_var, *default)
        if path:
            return path
        msg = f"{what} not found (set {env_var} or run .ci/install-interop.sh to fill {INTEROP_DIR})"
        if os.environ.get("INSTINCT_REQUIRE_INTEROP") == "1":
            self.fail(msg)
        self.skipTest(msg)

    def env(self, **extra):
        e = {k: v for k, v in os.environ.items()
             if k not in ("CLAUDE_PROJECT_DIR", "INSTINCT_PROJECT_DIR", "INSTINCT_SESSION")}
        e.update(INSTINCT_DB=os.path.join(self.tmp, "instinct.db"), HOME=self.tmp,
                 MCP_CATALOG_PATH=os.path.join(self.tmp, "catalog.json"), INSTINCT_MCP_TOOLS="all")
        e.update(extra)
        return e

    def listed_tools(self):
        s = self.server()
        tools = {t["name"]: t for t in s.result("tools/list")["tools"]}
        s.close()
        return tools


class TestPythonSdk(InteropTestCase):
    def test_sdk_client_exercises_everything(self):
        py = self.require("MCP Python SDK", "INSTINCT_MCP_PYTHON", "venv", "bin", "python")
        tools = self.listed_tools()
        plan = {"command": sys.executable, "args": [INSTINCT_PY, "serve"],
                "env": {"INSTINCT_DB": os.path.join(self.tmp, "instinct.db"), "HOME": self.tmp,
                        "PATH": os.environ.get("PATH", ""), "INSTINCT_MCP_TOOLS": "all"},
                "calls": call_plan(tools, self.tmp), "prompt": "session_briefing"}
        # auto probes server/discover and goes modern; "2026-07-28" skips the probe; legacy
        # is the initialize handshake (SDK 1.x has only that)
        expect = {"auto": MODERN, "2026-07-28": MODERN, "legacy": NEWEST}
        for mode in ("auto", "2026-07-28", "legacy"):
            with self.subTest(mode=mode):
                plan["env"]["INSTINCT_DB"] = os.path.join(self.tmp, f"sdk-{mode}.db")
                p = subprocess.run([py, os.path.join(INTEROP, "sdk_client.py")],
                                   input=json.dumps(dict(plan, mode=mode)).encode(),
                                   capture_output=True, timeout=120, env=self.env(), cwd=self.tmp)
                out = p.stdout.decode("utf-8", "replace")
                self.assertEqual(p.returncode, 0, out + p.stderr.decode("utf-8", "replace")[-3000:])
                summary = json.loads(out.strip().splitlines()[-1])
                self.assertEqual(summary["failures"], [])
                self.assertEqual(summary["protocol"], expect[mode] if summary["sdk"] >= "2" else NEWEST)
                self.assertEqual(summary["server"], "instinct")
                self.assertEqual(summary["tools"], sorted(tools))
                self.assertLessEqual(MUST_SUCCEED, set(summary["ok"]))
                self.assertEqual(set(summary["ok"]), set(tools))     # every tool, SDK-validated
                self.assertEqual(summary["resources"], {
                    u: ["application/json", "text/markdown"]
                    for u in ("instinct://suggestions", "instinct://rules", "instinct://stats")})
                self.assertEqual(summary["templates"], 0)
                self.assertEqual(summary["prompts"], ["session_briefing"])
                self.assertIn(instinct._Presenter.rule_text({"pattern": P}), summary["prompt_text"])  # P: a rule
                self.__class__.last_summary = summary


class TestTypeScriptSdk(InteropTestCase):
    """The official TypeScript SDK v2 client (@modelcontextprotocol/client) in its legacy,
    auto (server/discover probe on a sibling process) and pinned-modern modes."""

    def test_ts_client_every_mode(self):
        node = self.require("node >= 22 (npm package node)", "INSTINCT_NODE",
                            "node", "node_modules", ".bin", "node")
        mods = os.path.dirname(os.path.dirname(node))         # the node_modules beside it
        if not os.path.isdir(os.path.join(mods, "@modelcontextprotocol", "client")):
            msg = f"@modelcontextprotocol/client not found in {mods} (run .ci/install-interop.sh)"
            if os.environ.get("INSTINCT_REQUIRE_INTEROP") == "1":
                self.fail(msg)
            self.skipTest(msg)
        tools = self.listed_tools()
        expect = {"auto": MODERN, "modern": MODERN, "legacy": NEWEST}
        for mode in ("auto", "modern", "legacy"):
            with self.subTest(mode=mode):
                plan = {"command": sys.executable, "args": [INSTINCT_PY, "serve"], "mode": mode,
                        "env": {"INSTINCT_DB": os.path.join(self.tmp, f"ts-{mode}.db"), "HOME": self.tmp,
                                "PATH": os.environ.get("PATH", ""), "INSTINCT_MCP_TOOLS": "all"},
                        "calls": call_plan(tools, self.tmp), "prompt": "session_briefing"}
                p = subprocess.run([node, os.path.join(INTEROP, "ts_client.mjs")],
                                   input=json.dumps(plan).encode(), capture_output=True, timeout=300,
                                   env=self.env(), cwd=os.path.dirname(mods))
                out = p.stdout.decode("utf-8", "replace")
                self.assertEqual(p.returncode, 0, out[-3000:] + p.stderr.decode("utf-8", "replace")[-3000:])
                summary = json.loads(out.strip().splitlines()[-1])
                self.assertEqual(summary["failures"], [])
                self.assertEqual(summary["protocol"], expect[mode])
                self.assertEqual(summary["server"], "instinct")
                self.assertEqual(summary["tools"], sorted(tools))
                self.assertEqual(set(summary["ok"]), set(tools))     # every tool, SDK-validated
                self.assertEqual(set(summary["resources"]), {
                    "instinct://suggestions", "instinct://rules", "instinct://stats"})
                self.assertIn(instinct._Presenter.rule_text({"pattern": P}), summary["prompt_text"])


class TestConformanceSuite(InteropTestCase):
    """The official conformance suite (npm @modelcontextprotocol/conformance; HTTP only) through
    tests/interop/stdio_http_front.py: every applicable check of both requirement sets passes."""

    def test_both_requirement_sets(self):
        conformance = self.require("MCP conformance suite", "INSTINCT_CONFORMANCE",
                                   "node", "node_modules", ".bin", "conformance")
        out = os.path.join(self.tmp, "conformance")
        p = subprocess.run([sys.executable, os.path.join(INTEROP, "run_conformance.py"),
                            conformance, out], capture_output=True, timeout=1800, env=self.env())
        text = p.stdout.decode("utf-8", "replace")
        self.assertEqual(p.returncode, 0, text[-4000:] + p.stderr.decode("utf-8", "replace")[-2000:])
        summary = json.loads(text.strip().splitlines()[-1])
        self.assertEqual(summary["applicable_failures"], [])
        self.assertGreater(summary["counts"]["applicable"]["pass"], 100)
        for req_set in ("2025-11-25", "2026-07-28"):
            self.assertIn(f"== {req_set}: Total:", text)


CANARY = r"""
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "canary", "version": "0"}}
    elif m["method"] == "tools/list":
        r = {"tools": [{"name": "bad", "inputSchema": {"type": "object", "properties": {"x": True}}}]}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "no"}}),
              flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"""


class TestInspector(InteropTestCase):
    def inspect(self, *args, server=None):
        cmd = [self.inspector, "--cli", "-e", "INSTINCT_MCP_TOOLS=all"] + (
            server or [sys.executable, INSTINCT_PY, "serve"]) + list(args)
        p = subprocess.run(cmd, capture_output=True, timeout=120, env=self.env(), cwd=self.tmp)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

    def setUp(self):
        super().setUp()
        self.inspector = self.require("MCP Inspector", "INSTINCT_INSPECTOR",
                                      "node", "node_modules", ".bin", "mcp-inspector")

    def test_tools_list_strict(self):
        rc, out, err = self.inspect("--method", "tools/list", "--strict")
        self.assertEqual(rc, 0, out[-2000:] + err[-3000:])
        names = sorted(t["name"] for t in json.loads(out)["tools"])
        self.assertEqual(names, sorted(self.listed_tools()))
        for rule in ("boolean-schema", "type-union", "untyped-schema", "remote-ref"):
            self.assertNotIn(rule, err)                     # not even warnings

    def test_strict_lint_is_live(self):
        rc, out, err = self.inspect("--method", "tools/list", "--strict",
                                    server=[sys.executable, "-c", CANARY])
        self.assertEqual(rc, 6, out + err)

    def test_tools_call_and_more(self):
        for n in (1, 2):
            rc, out, err = self.inspect("--method", "tools/call", "--tool-name", "observe",
                                        "--tool-arg", "pattern=seq:a->b")
            self.assertEqual(rc, 0, out + err)
            res = json.loads(out)
            self.assertIs(res.get("isError", False), False)
            self.assertEqual(res["structuredContent"]["pattern"], "seq:a->b")
            self.assertEqual(res["structuredContent"]["confidence"], n)
        rc, out, err = self.inspect("--method", "tools/call", "--tool-name", "get_instinct",
                                    "--tool-arg", "pattern=seq:never")
        self.assertEqual(rc, 5, out + err)                  # isError results are reported
        for args in (("--method", "resources/read", "--uri", "instinct://stats"),
                     ("--method", "prompts/get", "--prompt-name", "session_briefing")):
            with self.subTest(args=args):
                rc, out, err = self.inspect(*args)
                self.assertEqual(rc, 0, out + err)
                self.assertIsInstance(json.loads(out), dict)



class TestOptimizedInterpreter(unittest.TestCase):
    def test_tools_keep_descriptions_under_python_OO(self):
        """-OO strips docstrings (where summaries come from): titles stand in, never ''."""
        with tempfile.TemporaryDirectory() as tmp:
            lines = enc(init_msg("2025-06-18")) + enc(req(2, "tools/list"))
            r = subprocess.run([sys.executable, "-OO", INSTINCT_PY, "serve"], input=lines, timeout=60,
                               capture_output=True, env={**os.environ, "INSTINCT_DB": os.path.join(tmp, "t.db"),
                                                         "INSTINCT_MCP_TOOLS": "all"})
            tools = json.loads(r.stdout.splitlines()[1])["result"]["tools"]
            self.assertEqual(len(tools), len(instinct._MCP.TOOLS))
            for t in tools:
                with self.subTest(tool=t["name"]):
                    self.assertTrue(t["description"].strip())


if __name__ == "__main__":
    unittest.main()
