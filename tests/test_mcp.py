"""Tests for the MCP stdio server (`instinct serve`), issue 3.

Every test talks to a real subprocess (`sys.executable instinct.py serve`) with
INSTINCT_DB in a temporary directory:

* conformance with the checklist in shared/reference/mcp-stdio.md section 10;
* the stdout guard (prints, fd 1 writes and child processes land on stderr);
* a seeded fuzz run of thousands of hostile frames against one process;
* a pipelined burst followed by EOF, and several servers on one database;
* interop with real clients: the official MCP Python SDK and the MCP Inspector
  CLI. Install them with `.ci/install-interop.sh`; the tests find them through
  INSTINCT_MCP_PYTHON / INSTINCT_INSPECTOR or the script's default directory and
  skip when they are missing, unless INSTINCT_REQUIRE_INTEROP=1 (CI).
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from tests.helpers import (INITIALIZED, INSTINCT_PY, INTEROP, NEWEST, ROOT, Server,  # noqa: F401
                           check_message, enc, init_msg, mcp_in_process, req, schema_problems, setUpModule,
                           temp_dir, validate)

import instinct  # noqa: E402

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
NOID = object()          # "the id could not be read": null, or omitted under 2025-11-25
P = "seq:test->fix->test"

# The tools the issue requires, with arguments that must succeed (called in this order,
# after P has been observed 12 times and consolidated into a rule).
KNOWN_CALLS = [
    ("suggest", {"project": "", "limit": 5}),
    ("list_instincts", {"min_confidence": 1}),
    ("search_instincts", {"query": "test"}),
    ("get_instinct", {"pattern": P}),
    ("stats", {}),
    ("export_rules", {"format": "json"}),
    ("export_rules", {"format": "markdown", "min_confidence": 1}),
    ("config", {}),
    ("config", {"key": "mature_threshold"}),
    ("observe", {"pattern": "seq:tset->fix", "source": "interop", "metadata": {"why": "typo"}}),
    ("merge", {"source": "seq:tset->fix", "target": "seq:test->fix"}),
    ("decay", {"days_inactive": 365}),
    ("forget", {"pattern": "seq:test->fix"}),
]
MUST_SUCCEED = {name for name, _ in KNOWN_CALLS} | {"observe", "consolidate"}


class ServerTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = temp_dir(self)
        self.servers = []

    def tearDown(self):                 # before the temp dir goes (cleanups run after tearDown)
        for s in self.servers:
            s.kill()

    def server(self, version=NEWEST, **kw):
        s = Server(self.tmp, **kw)
        self.servers.append(s)
        if version:
            s.init(version)
        return s

    def assertError(self, reply, code, mid=NOID, version=None):
        self.assertIn("error", reply, reply)
        self.assertEqual(reply["error"]["code"], code, reply)
        if mid is NOID:
            if version == "2025-11-25":         # id omitted; otherwise (and pre-init) id null
                self.assertNotIn("id", reply, reply)
            else:
                self.assertIsNone(reply.get("id"), reply)
        else:
            self.assertEqual(reply["id"], mid)
            self.assertIs(type(reply["id"]), type(mid))


def call_plan(tools, tmp):
    """[(tool, arguments, must_succeed)] covering every listed tool, in a sensible order."""
    calls = [("observe", {"pattern": P, "source": "test"}, True)] * 12
    calls.append(("consolidate", {}, True))
    calls += [(n, a, True) for n, a in KNOWN_CALLS if n in tools]
    rules, mem, backup = (os.path.join(tmp, n) for n in ("rules.json", "memories", "backup.db"))
    later = [   # the tools of issues 4-7, with real arguments: they must succeed too
        ("mine", {}), ("explain", {"pattern": P}), ("history", {"pattern": P}), ("trending", {}),
        ("effectiveness", {}), ("feedback", {"pattern": P, "verdict": "good", "note": "interop"}),
        ("conflicts", {}), ("session_summary", {"since": "24"}), ("similar", {}),
        ("export_rules", {"format": "json", "min_confidence": 1, "write": rules, "force": True}),
        ("import_rules", {"file": rules}),
        ("memory_store", {"type": "project", "title": "Tests use pytest", "content": "Run pytest -q",
                          "why": "CI runs it", "how_to_apply": "before every commit"}),
        ("memory_recall", {"query": "pytest"}), ("memory_list", {}), ("memory_get", {"id": 1}),
        ("memory_export", {"dir": mem}), ("memory_import", {"path": mem}), ("memory_decay", {}),
        ("memory_restore", {"id": 1}), ("doctor", {}), ("backup", {"path": backup, "force": True}),
        ("restore", {"path": backup}), ("gc", {}), ("memory_forget", {"id": 1}),
        ("observe", {"pattern": "pref:gone"}), ("forget", {"pattern": "pref:gone"}),
        ("unforget", {"pattern": "pref:gone"})]
    calls += [(n, a, True) for n, a in later if n in tools]
    done = {c[0] for c in calls}
    extra = [t for t in sorted(tools) if t not in done]
    # other (later) tools: writers first, then readers, destructive ones last; arguments
    # from the schema (these may legitimately answer isError, e.g. a file that is missing)
    def rank(n):
        a = tools[n].get("annotations", {})
        return (2 if a.get("destructiveHint", True) and not a.get("readOnlyHint") else
                1 if a.get("readOnlyHint") else 0, n)
    extra.sort(key=rank)
    for n in extra:
        calls.append((n, schema_args(tools[n]["inputSchema"], tmp), False))
    return calls


def schema_args(schema, tmp):
    out = {}
    for name in schema.get("required", []):
        s = schema["properties"][name]
        t = s.get("type")
        if "enum" in s:
            v = s["enum"][0]
        elif t == "string":
            low = name.lower()
            v = (P if "pattern" in low else os.path.join(tmp, "interop-" + name)
                 if any(w in low for w in ("path", "file", "dir")) else "" if low == "project"
                 else "test fixture text")
        elif t == "integer":
            v = max(s.get("minimum", 1), 1)
        elif t == "number":
            v = float(max(s.get("minimum", 1), 1))
        else:
            v = {"boolean": False, "object": {}, "array": []}.get(t)
        out[name] = v
    return out


# -----------------------------------------------------------------------------
# 1. conformance (reference section 10)
# -----------------------------------------------------------------------------
class TestLifecycle(ServerTestCase):
    def test_initialize_each_version(self):                                   # 10.1
        for v in VERSIONS:
            with self.subTest(version=v):
                s = self.server(None)
                s.send(init_msg(v))
                r = s.recv()
                self.assertEqual(r["id"], 1)
                res = r["result"]
                self.assertEqual(res["protocolVersion"], v)
                self.assertIsInstance(res["capabilities"], dict)
                for cap in res["capabilities"].values():
                    self.assertIsInstance(cap, dict)
                self.assertEqual(set(res["capabilities"]), {"tools", "resources", "prompts"})
                self.assertIsInstance(res["serverInfo"]["name"], str)
                self.assertIsInstance(res["serverInfo"]["version"], str)
                self.assertLessEqual(len(res["instructions"]), 2048)
                self.assertIn("suggest", res["instructions"][:300])
                s.version = v
                s.send(INITIALIZED)
                s.assert_silent()
                self.assertEqual(s.close(), 0)

    def test_unknown_versions_get_the_newest(self):                          # 10.2
        for v in ("1999-01-01", "2026-07-28", "", "2025-11-25x"):
            with self.subTest(version=v):
                s = self.server(None)
                s.send(init_msg(v))
                r = s.recv()
                self.assertEqual(r["result"]["protocolVersion"], NEWEST)

    def test_malformed_initialize(self):
        s = self.server(None)
        for params in ({}, {"protocolVersion": 5}, {"protocolVersion": None}):
            self.assertError(s.call("initialize", params, mid=9), -32602, 9)
        self.assertError(s.call("initialize", mid=10), -32602, 10)            # no params at all
        s.init("2025-06-18")                                                   # still usable
        self.assertEqual(s.version, "2025-06-18")

    def test_second_initialize_renegotiates(self):
        s = self.server("2025-06-18")
        s.send(init_msg("2024-11-05", mid=2))
        self.assertEqual(s.recv()["result"]["protocolVersion"], "2024-11-05")
        s.version = "2024-11-05"
        tools = s.result("tools/list")["tools"]
        self.assertNotIn("outputSchema", tools[0])

    def test_notifications_never_answered(self):                             # 10.3
        s = self.server()
        s.send(INITIALIZED, {"jsonrpc": "2.0", "method": "notifications/foo"},
               {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
               {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "odd"},
               {"jsonrpc": "2.0", "method": "ping"},
               {"jsonrpc": "2.0", "method": "tools/call",
                "params": {"name": "observe", "arguments": {"pattern": "seq:by-notification"}}},
               {"jsonrpc": "2.0", "method": "foo/bar", "params": [1, 2], "extra": True})
        s.assert_silent()
        self.assertEqual(s.tool("list_instincts")["structuredContent"]["count"], 0)

    def test_ping_before_init_and_without_params(self):                      # 10.4
        s = self.server(None)
        s.send(req("p", "ping"))
        self.assertEqual(s.recv_line(), b'{"jsonrpc":"2.0","id":"p","result":{}}\n')
        s.init()
        s.send(req(2, "ping"))
        self.assertEqual(s.recv(), {"jsonrpc": "2.0", "id": 2, "result": {}})
        s.send(req(3, "ping", {"_meta": {"progressToken": "x"}}))
        self.assertEqual(s.recv(), {"jsonrpc": "2.0", "id": 3, "result": {}})

    def test_requests_before_init_error_and_stay_alive(self):                # 10.5, 10.6
        s = self.server(None)
        for mid, method in ((4, "tools/list"), (5, "server/discover"), ("x", "tools/call"),
                            (6, "resources/read"), (7, "prompts/get")):
            r = s.call(method, {}, mid=mid)
            self.assertIn("error", r)
            self.assertNotIn(r["error"]["code"], range(-32099, -32019))
            self.assertNotEqual(r["error"]["code"], -32002)
            self.assertEqual(r["id"], mid)
        s.init()
        self.assertTrue(s.result("tools/list")["tools"])

    def test_pipelined_in_one_write(self):                                   # 10.33
        s = self.server(None)
        s.write(enc(init_msg("2025-06-18")) + enc(INITIALIZED) + enc(req(2, "tools/list"))
                + enc(req(3, "ping")))
        s.version = "2025-06-18"
        r1, r2, r3 = s.recv(), s.recv(), s.recv()
        self.assertEqual((r1["id"], r2["id"], r3["id"]), (1, 2, 3))
        self.assertIn("protocolVersion", r1["result"])
        self.assertTrue(r2["result"]["tools"])
        self.assertEqual(r3["result"], {})
        s.assert_silent()

    def exits_within(self, bound, stop, tries=3):
        """Start an idle server, `stop(server)` it -> seconds until it exited; up to `tries`
        servers until one exits within `bound`, which one must: a server that really waits
        misses it every time, a loaded machine only sometimes."""
        took = []
        for _ in range(tries):
            s = self.server()
            s.assert_silent()
            t0 = time.monotonic()
            stop(s)
            took.append(time.monotonic() - t0)
            if took[-1] < bound:
                break
        self.assertLess(min(took), bound, took)
        return s

    def test_stdin_eof_exits_promptly(self):                                 # 10.34
        def close(s):
            self.assertEqual(s.close(timeout=30), 0)
        s = self.exits_within(2.0, close)                   # the SDK client waits 2 s
        self.assertIsNone(s.lines.get(timeout=1))            # EOF, nothing more written
        self.assertNotIn("Traceback", s.stderr)

    def test_eof_answers_everything_received(self):
        s = self.server()
        s.write(b"".join(enc(req(i, "ping")) for i in range(1, 51)) + enc(req(51, "tools/list")))
        s.p.stdin.close()
        ids = [s.recv()["id"] for _ in range(51)]
        self.assertEqual(ids, list(range(1, 52)))
        self.assertEqual(s.p.wait(5), 0)
        self.assertIsNone(s.lines.get(timeout=1))

    def test_eof_without_trailing_newline(self):
        s = self.server()
        s.write(b'{"jsonrpc":"2.0","id":8,"method":"ping"}')
        s.p.stdin.close()
        self.assertEqual(s.recv()["id"], 8)
        self.assertEqual(s.p.wait(5), 0)

    @unittest.skipIf(os.name == "nt", "POSIX signals")
    def test_sigterm_while_idle(self):                                       # 10.35
        def term(s):
            s.p.send_signal(signal.SIGTERM)
            self.assertIn(s.p.wait(30), (0, -signal.SIGTERM))
        s = self.exits_within(2.0, term)
        for t in s._t:
            t.join(5)
        self.assertEqual(len(s.all_lines), 2, s.all_lines)    # initialize + ping replies
        self.assertNotIn("Traceback", s.stderr)


class TestJsonRpc(ServerTestCase):
    def test_unknown_method(self):                                           # 10.7
        s = self.server()
        self.assertError(s.call("foo/bar", mid=7), -32601, 7)
        self.assertError(s.call("notifications/initialized", mid=8), -32601, 8)  # has an id

    def test_parse_errors(self):                                             # 10.8, 10.9
        for v in ("2025-06-18", "2025-11-25"):
            with self.subTest(version=v):
                s = self.server(v)
                for bad in (b'{"jsonrpc":', b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":NaN}}',
                            b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":Infinity}}',
                            b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":-Infinity}}',
                            b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"\xff"}}',
                            b'{"jsonrpc":"2.0","id":2,"method":"ping"} trailing',
                            b"\xef\xbb\xbf\xef\xbb\xbf{}", b"[" * 100000):
                    s.send(bad + b"\n")
                    self.assertError(s.recv(), -32700, NOID, v)
                s.assert_silent()

    def test_invalid_requests(self):                                         # 10.10, 10.11
        s = self.server("2025-06-18")
        for bad in ('"hello"', "42", '{"foo":1}', "null", "true",
                    '{"jsonrpc":"2.0","id":null,"method":"ping"}',
                    '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
                    '{"jsonrpc":"2.0","id":true,"method":"ping"}',
                    '{"jsonrpc":"2.0","id":{},"method":"ping"}',
                    '{"jsonrpc":"2.0","id":[1],"method":"ping"}'):
            s.send(bad.encode() + b"\n")
            self.assertError(s.recv(), -32600, NOID, "2025-06-18")
        for bad, mid in (('{"jsonrpc":"1.0","id":3,"method":"ping"}', 3),
                         ('{"id":"3","method":"ping"}', "3"),
                         ('{"jsonrpc":2.0,"id":3,"method":"ping"}', 3),
                         ('{"jsonrpc":"2.0","id":4,"method":5}', 4),
                         ('{"jsonrpc":"2.0","id":4}', 4)):
            s.send(bad.encode() + b"\n")
            self.assertError(s.recv(), -32600, mid)
        s.assert_silent()

    def test_ids_echoed_with_their_type(self):                               # 10.12
        s = self.server()
        for mid in ("abc", "", "1", 0, -1, 9007199254740993, 10 ** 40, "é😀\u2028"):
            with self.subTest(id=mid):
                s.send(req(mid, "ping"))
                line = s.recv_line()
                self.assertIn(b'"id":' + json.dumps(mid).encode() + b",", line)
                self.assertEqual(json.loads(line)["id"], mid)
                self.assertIs(type(json.loads(line)["id"]), type(mid))

    def test_params_must_be_an_object(self):                                 # 10.13
        s = self.server()
        for params in ([], [1], "x", 5, True):
            r = s.call("tools/list", params, mid=4)
            self.assertIn(r["error"]["code"], (-32602, -32600))
            self.assertEqual(r["id"], 4)
        self.assertIn("tools", s.result("tools/list", None))

    def test_batches_rejected_after_06_18_and_11_25(self):                    # 10.14
        for v in ("2025-06-18", "2025-11-25", "2024-11-05"):
            with self.subTest(version=v):
                s = self.server(v)
                for batch in ([req(1, "ping"), req(2, "ping")], [], [INITIALIZED], [1]):
                    s.send(batch)
                    line = s.recv_line()
                    self.assertTrue(line.startswith(b"{"), line)
                    self.assertError(json.loads(line), -32600, NOID, v)
                s.assert_silent()

    def test_batch_before_initialize(self):
        s = self.server(None)
        s.send([req(1, "ping")])
        self.assertError(s.recv(), -32600, NOID)

    def test_batches_in_2025_03_26(self):                                     # 10.15
        s = self.server("2025-03-26")
        s.send([req(1, "ping"), req(2, "ping")])
        r = s.recv(allow_array=True)
        self.assertEqual(sorted(x["id"] for x in r), [1, 2])
        self.assertTrue(all(x["result"] == {} for x in r))
        s.send([])
        self.assertError(s.recv(), -32600, NOID, "2025-03-26")
        s.send([INITIALIZED])
        s.assert_silent()
        s.send([1])
        r = s.recv(allow_array=True)
        self.assertEqual(len(r), 1)
        self.assertError(r[0], -32600, NOID, "2025-03-26")
        s.send([req(5, "tools/list"), INITIALIZED, req(6, "nope"), init_msg("2025-03-26", 7),
                {"jsonrpc": "2.0", "id": 8.5, "method": "ping"},
                req(9, "tools/call", {"name": "stats"})])
        r = {x.get("id"): x for x in s.recv(allow_array=True)}
        self.assertEqual(set(r), {5, 6, 7, None, 9})
        self.assertIn("tools", r[5]["result"])
        self.assertEqual(r[6]["error"]["code"], -32601)
        self.assertEqual(r[7]["error"]["code"], -32600)
        self.assertEqual(r[None]["error"]["code"], -32600)
        self.assertIn("total", r[9]["result"]["content"][0]["text"])
        s.assert_silent()

    def test_oversized_line_then_ping(self):                                 # 10.28
        s = self.server()
        big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * (32 << 20) + b'"}}\n'
        w = threading.Thread(target=s.write, args=(big + enc(req(2, "ping")),))
        w.start()
        self.assertError(s.recv(timeout=60), -32600, NOID, NEWEST)
        self.assertEqual(s.recv(timeout=60), {"jsonrpc": "2.0", "id": 2, "result": {}})
        w.join()
        s.assert_silent()
        self.assertEqual(s.close(), 0)
        self.assertIn("longer than", s.stderr)

    def test_large_but_allowed_line(self):
        s = self.server()
        s.send(req(3, "ping", {"x": "b" * (8 << 20)}), b"\r\n", b"  \t \n")
        self.assertEqual(s.recv(timeout=60), {"jsonrpc": "2.0", "id": 3, "result": {}})
        s.assert_silent()

    def test_crlf_and_raw_line_separators_inside_strings(self):
        s = self.server()
        s.write(b'{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n')
        self.assertEqual(s.recv()["id"], "crlf")
        raw = '{"jsonrpc":"2.0","id":"u","method":"tools/call","params":{"name":"observe",' \
              '"arguments":{"pattern":"pref:x","metadata":{"n":"a\u2028b\u0085c\u2029d"}}}}\n'
        s.write(raw.encode("utf-8"))
        r = s.recv()
        self.assertEqual(r["id"], "u")
        self.assertEqual(r["result"]["structuredContent"]["metadata"], {"n": "a\u2028b\u0085c\u2029d"})


class TestTools(ServerTestCase):
    def tools(self, s):
        return {t["name"]: t for t in s.result("tools/list")["tools"]}

    def test_tools_list_shape(self):                                          # 10.16
        for v in VERSIONS:
            with self.subTest(version=v):
                s = self.server(v)
                for params in (None, {}, {"_meta": {"progressToken": 1}}):
                    s.send(req(2, "tools/list", params))
                    line = s.recv_line()
                    self.assertEqual(line.count(b"\n"), 1)
                    res = json.loads(line)["result"]
                    self.assertNotIn("nextCursor", res)
                    names = [t["name"] for t in res["tools"]]
                    self.assertEqual(len(names), len(set(names)))
                    required = {"observe", "suggest", "consolidate", "decay", "list_instincts",
                                "search_instincts", "get_instinct", "stats", "export_rules", "forget"}
                    self.assertLessEqual(required, set(names))
                    for t in res["tools"]:
                        self.assertTrue(NAME_RE.fullmatch(t["name"]), t["name"])
                        self.assertLessEqual(len("instinct") + len(t["name"]), 60)
                        self.assertTrue(t["description"].strip())
                        self.assertLessEqual(len(t["description"]), 2048)
                        schema = t["inputSchema"]
                        self.assertEqual(schema["type"], "object")
                        self.assertIsInstance(schema["properties"], dict)
                        self.assertEqual(schema_problems(schema), [], t["name"])
                        self.assertEqual(set(t) - {"name", "title", "description", "inputSchema",
                                                   "outputSchema", "annotations"}, set())
                        if v >= "2025-06-18":
                            self.assertTrue(t["title"])
                            self.assertEqual(t["outputSchema"]["type"], "object")
                            self.assertEqual(schema_problems(t["outputSchema"]), [], t["name"])
                        else:
                            self.assertNotIn("outputSchema", t)
                            self.assertNotIn("title", t)
                        if v >= "2025-03-26":
                            a = t["annotations"]
                            for k in ("readOnlyHint", "destructiveHint", "idempotentHint"):
                                self.assertIsInstance(a[k], bool)
                        else:
                            self.assertNotIn("annotations", t)
                tools = {t["name"]: t for t in res["tools"]}
                if v >= "2025-03-26":
                    self.assertTrue(tools["stats"]["annotations"]["readOnlyHint"])
                    # suggest logs what it showed (the surface event): annotated truthfully (issue 12)
                    self.assertFalse(tools["suggest"]["annotations"]["readOnlyHint"])
                    self.assertFalse(tools["observe"]["annotations"]["readOnlyHint"])
                    self.assertTrue(tools["forget"]["annotations"]["destructiveHint"])
                self.assertEqual(tools["observe"]["inputSchema"]["required"], ["pattern"])

    def test_bad_cursor(self):                                                # 10.17
        s = self.server()
        for method in ("tools/list", "resources/list", "resources/templates/list", "prompts/list"):
            for cursor in ("garbage", "", 5):
                self.assertError(s.call(method, {"cursor": cursor}, mid=17), -32602, 17)

    def test_unknown_and_malformed_tool_calls(self):                          # 10.18, 10.19
        s = self.server()
        for params in ({"name": "nope", "arguments": {}}, {}, {"name": 5},
                       {"name": "observe", "arguments": "x"}, {"name": "observe", "arguments": [1]},
                       {"name": None}, {"name": "stats", "arguments": 3}):
            with self.subTest(params=params):
                self.assertError(s.call("tools/call", params, mid=18), -32602, 18)
        s.assert_silent()

    def test_schema_violations_are_tool_errors(self):                         # 10.20, 10.21
        s = self.server()
        for name, args in (("observe", {"pattern": 5}), ("observe", {}),
                           ("observe", {"pattern": "seq:a", "bogus": 1}),
                           ("observe", {"pattern": "seq:a", "metadata": "not-an-object"}),
                           ("observe", {"pattern": "bad\x01control"}),
                           ("suggest", {"limit": "many"}), ("suggest", {"limit": 0}),
                           ("list_instincts", {"level": "godlike"}),
                           ("export_rules", {"format": "pdf"}),
                           ("decay", {"days_inactive": True}),
                           ("get_instinct", {"pattern": "seq:never-seen"}),
                           ("forget", {"pattern": "seq:never-seen"})):
            with self.subTest(name=name, args=args):
                res = s.tool(name, args)
                self.assertIs(res["isError"], True, res)
                self.assertNotIn("structuredContent", res)
                self.assertEqual(res["content"][0]["type"], "text")
                self.assertTrue(res["content"][0]["text"].strip())
        s.assert_silent()
        self.assertEqual(s.tool("stats")["structuredContent"]["total"], 0)   # nothing written

    def test_zero_arg_tools(self):                                            # 10.22
        s = self.server()
        tools = self.tools(s)
        zero = [n for n, t in tools.items() if not t["inputSchema"].get("required")
                and not t.get("annotations", {}).get("destructiveHint")]
        self.assertIn("stats", zero)
        self.assertIn("consolidate", zero)
        for n in ("stats", "consolidate"):
            self.assertIs(tools[n]["inputSchema"]["additionalProperties"], False)
            for params in ({"name": n}, {"name": n, "arguments": None}, {"name": n, "arguments": {}}):
                with self.subTest(params=params):
                    res = s.result("tools/call", params)
                    self.assertIs(res["isError"], False, res)
                    self.assertEqual(validate(res["structuredContent"],
                                              tools[n]["outputSchema"]), [])
            # issue 13: unknown arguments are refused by every tool, parameterless ones too
            # (strict-mode clients rely on additionalProperties: false meaning it)
            res = s.result("tools/call", {"name": n, "arguments": {"placeholder": "x"}})
            self.assertIs(res["isError"], True, res)
            self.assertIn("placeholder", res["content"][0]["text"])
        for name, t in tools.items():
            self.assertIs(t["inputSchema"].get("additionalProperties"), False, name)

    def test_every_tool_structured_content(self):                             # 10.23
        s = self.server("2025-06-18")
        tools = self.tools(s)
        seen, results = set(), {}
        for name, args, must in call_plan(tools, self.tmp):
            with self.subTest(tool=name, args=args):
                res = s.tool(name, args)
                self.assertIsInstance(res["content"], list)
                if res.get("isError"):
                    self.assertFalse(must, res)
                    self.assertNotIn("structuredContent", res)
                    continue
                sc = res["structuredContent"]
                self.assertIsInstance(sc, dict)
                self.assertEqual(validate(sc, tools[name]["outputSchema"]), [], name)
                self.assertEqual(res["content"][0]["type"], "text")
                self.assertEqual(json.loads(res["content"][0]["text"]), sc)
                seen.add(name)
                results.setdefault(name, sc)
        self.assertLessEqual(MUST_SUCCEED, seen)
        # the plan did real work: P became a rule, the merge folded the typo in, forget ran
        self.assertEqual((results["get_instinct"]["confidence"], results["get_instinct"]["level"]),
                         (12, "rule"))
        self.assertEqual([r["pattern"] for r in results["suggest"]["suggestions"]], [P])
        self.assertEqual(results["export_rules"]["count"], 1)
        self.assertEqual(results["merge"], {"alias": "seq:tset->fix", "pattern": "seq:test->fix",
                                            "merged": 1})
        self.assertEqual((results["forget"]["pattern"], results["forget"]["confidence"]),
                         ("seq:test->fix", 1))

    def test_validator_catches_mismatches(self):
        schema = instinct.OPERATIONS["observe"].output_schema()
        good = {"pattern": "p", "category": "c", "confidence": 1, "level": "raw",
                "project": "", "first_seen": "t", "last_seen": "t"}
        self.assertEqual(validate(good, schema), [])
        self.assertTrue(validate(dict(good, confidence="1"), schema))
        self.assertTrue(validate(dict(good, confidence=True), schema))
        self.assertTrue(validate({k: v for k, v in good.items() if k != "level"}, schema))
        self.assertTrue(validate({"rules": [{"x": 1}], "count": 1},
                                 instinct.OPERATIONS["export_rules"].output_schema()))
        self.assertTrue(schema_problems({"type": "object", "properties": {"x": True}}))
        self.assertTrue(schema_problems({"type": ["string", "null"]}))
        self.assertTrue(schema_problems({"type": "object", "$ref": "#/x"}))

    def test_older_versions_get_text_only(self):
        for v in ("2024-11-05", "2025-03-26"):
            with self.subTest(version=v):
                s = self.server(v)
                res = s.tool("observe", {"pattern": P})
                self.assertNotIn("structuredContent", res)
                self.assertEqual(json.loads(res["content"][0]["text"])["pattern"], P)

    def test_text_round_trip_under_c_locale(self):                            # 10.25
        s = self.server(env={"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": "ascii",
                             "PYTHONUTF8": "0"})
        pattern = 'pref:quote " slash \\ accent \u0110 emoji \U0001F600'
        note = 'line1\nline2 "q" \u2028 \u0110\U0001F600 \\ /'
        s.send(req("t", "tools/call", {"name": "observe",
                                       "arguments": {"pattern": pattern, "metadata": {"note": note}}}))
        line = s.recv_line()
        self.assertEqual(line.count(b"\n"), 1)
        self.assertTrue(line.isascii())
        res = json.loads(line)["result"]
        self.assertEqual(res["structuredContent"]["pattern"], pattern)
        self.assertEqual(res["structuredContent"]["metadata"], {"note": note})
        self.assertEqual(json.loads(res["content"][0]["text"]), res["structuredContent"])
        res = s.tool("search_instincts", {"query": "emoji"})
        self.assertEqual([r["pattern"] for r in res["structuredContent"]["instincts"]], [pattern])

    def test_reply_lines_equal_plain_encoding(self):
        # serve() splices a tool's already-encoded structuredContent into the line instead of
        # encoding it twice; the bytes must be exactly what plain json.dumps gives
        store = instinct.InstinctStore(os.path.join(self.tmp, "i.db"), cwd=self.tmp)
        self.addCleanup(store.close)
        srv, _ = mcp_in_process(store, NEWEST)
        tools = {t["name"]: t for t in srv.handle_message(req(1, "tools/list"))["result"]["tools"]}
        calls = call_plan(tools, self.tmp) + [
            ("observe", {"pattern": "pref:caf\u00e9 \U0001F600", "metadata": {"n": 1.5}}, True),
            ("get_instinct", {"pattern": "nope"}, False)]
        spliced = 0
        for i, (name, args, _) in enumerate(calls):
            with self.subTest(tool=name, args=args):
                reply = srv.handle_message(req(f"c{i}" if i % 2 else i, "tools/call",
                                               {"name": name, "arguments": args}))
                line = instinct._MCP.reply_line(reply)
                plain = (json.dumps(reply, separators=(",", ":"), allow_nan=False) + "\n").encode()
                self.assertEqual(line, plain)
                spliced += type(reply["result"]) is instinct._ToolReply
        self.assertGreater(spliced, 20)

    def test_one_mib_result_is_one_line(self):                                # 10.27
        db = os.path.join(self.tmp, "instinct.db")
        with instinct.InstinctStore(db, clock=lambda: 1.8e9) as st:
            for i in range(700):
                st.observe(f"pref:{i:04d}-" + "x" * 900)
        s = self.server(env={"INSTINCT_MCP_MAX_REPLY": str(8 << 20)})     # over the default
        s.send(req("big", "tools/call", {"name": "list_instincts", "arguments": {"limit": 700}}))
        line = s.recv_line(timeout=30)
        self.assertGreater(len(line), 1 << 20)
        self.assertEqual(line.count(b"\n"), 1)
        res = json.loads(line)["result"]
        self.assertEqual(res["structuredContent"]["count"], 700)
        self.assertNotIn("nextCursor", res["structuredContent"])
        s.assert_silent()

    def test_reply_budget_pages_by_cursor(self):                             # issue 13
        db = os.path.join(self.tmp, "instinct.db")
        with instinct.InstinctStore(db, clock=lambda: 1.8e9) as st:
            for i in range(700):
                st.observe(f"pref:{i:04d}-" + "x" * 900)
            everything = [r["pattern"] for r in st.list(limit=1000)]
        s = self.server()
        schema = {t["name"]: t for t in s.result("tools/list")["tools"]}["list_instincts"]["inputSchema"]
        self.assertEqual(schema["properties"]["cursor"]["type"], "string")
        got, args, pages = [], {"limit": 700}, 0
        while True:
            s.send(req("p", "tools/call", {"name": "list_instincts", "arguments": args}))
            line = s.recv_line(timeout=30)
            self.assertLessEqual(len(line), 1 << 20)
            res = json.loads(line)["result"]
            self.assertIs(res["isError"], False)
            sc = res["structuredContent"]
            self.assertEqual(json.loads(res["content"][0]["text"]), sc)
            self.assertEqual(sc["count"], len(sc["instincts"]))
            got += [r["pattern"] for r in sc["instincts"]]
            pages += 1
            if "nextCursor" not in sc:
                break
            self.assertIn("cursor", sc["note"])              # the reply says how to get the rest
            args = {"limit": 700, "cursor": sc["nextCursor"]}
        self.assertGreater(pages, 1)
        self.assertEqual(got, everything)                     # every row once, in order
        # a small explicit page also pages, and a cursor that is not ours is a tool error
        sc = s.tool("list_instincts", {"limit": 3})["structuredContent"]
        self.assertEqual(sc["count"], 3)
        sc2 = s.tool("list_instincts", {"limit": 3, "cursor": sc["nextCursor"]})["structuredContent"]
        self.assertEqual([r["pattern"] for r in sc["instincts"] + sc2["instincts"]], everything[:6])
        for bad in ("garbage", 5, "aW5zdGluY3Q6LTE="):     # "" and null: the first page
            with self.subTest(cursor=bad):
                res = s.tool("list_instincts", {"cursor": bad})
                self.assertIs(res["isError"], True)
        res = s.tool("list_instincts", {"limit": 1001})          # every limit has a maximum
        self.assertIs(res["isError"], True)
        s.assert_silent()

    def test_deep_arguments_do_not_kill_the_server(self):
        """metadata nested up to MAX_DEPTH is stored, deeper is refused on every Python version:
        a tool error, or -32700 past the depth this Python's JSON decoder reads (~1,000 to
        ~10,000)."""
        s = self.server()
        limit = instinct.MAX_DEPTH - 1            # the innermost {} is one level more
        for depth in [10, 200, limit - 1, limit, limit + 1] + list(range(900, 1100, 37)) + [5000]:
            meta = "{}"
            for _ in range(depth):
                meta = '{"a":' + meta + "}"
            s.write(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"observe",'
                    b'"arguments":{"pattern":"seq:deep","metadata":%s}}}\n' % (depth, meta.encode()))
            line = s.recv_line()
            self.assertEqual(line.count(b"\n"), 1)
            with self.subTest(depth=depth):
                if depth <= limit:
                    self.assertTrue(line.startswith(b'{"jsonrpc":"2.0","id":%d,"result":{"content"' % depth),
                                    line[:200])
                    self.assertNotIn(b'"isError":true', line[-40:])
                elif b'"error"' in line[:40]:
                    self.assertEqual(json.loads(line)["error"]["code"], -32700, line[:200])
                else:
                    res = json.loads(line)["result"]
                    self.assertIs(res["isError"], True)
                    self.assertIn("nests deeper than", res["content"][0]["text"])
        s.assert_silent()

    def test_nesting_check_is_linear(self):                                  # issue 14
        """> MAX_DEPTH brackets and a long run of escaped quotes once took 132 s at 157 KiB
        (a bracket scanner's quadratic backtracking): JSON's own decoder reads it in one pass."""
        s = self.server()
        hostile = b"[" * 600 + b'"' + b'\\"' * (80 * 1024)          # 160 KiB, never closed
        t0 = time.monotonic()
        s.write(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + hostile + b"}}\n")
        self.assertEqual(s.recv()["error"]["code"], -32700)
        s.write(b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":["' + b'\\"' * 81920
                + b'",' + b"[]," * 600 + b'"\\\\"]}}\n')               # legal: 600 flat lists
        self.assertEqual(s.recv(), {"jsonrpc": "2.0", "id": 2, "result": {}})
        s.assert_silent()
        self.assertLess(time.monotonic() - t0, 10)      # generous: ~20 ms on one core


def build_big_store(path, n=100_000):
    """n patterns written straight into a real store's schema (seconds, not minutes)."""
    rng = random.Random(13)
    words = ["test", "fix", "lint", "build", "run", "edit", "read", "grep", "commit", "push",
             "deploy", "format", "review", "debug", "install", "migrate", "docs", "bench"]
    stamp = instinct._iso(1.8e9)
    st = instinct.InstinctStore(path, clock=lambda: 1.8e9)
    rows = []
    for i in range(n):
        p = f"{('seq', 'pref', 'fix', 'combo')[i % 4]}:" + "->".join(rng.choice(words) for _ in range(3))
        p += f"-{i}" if i % 50 else ""
        conf = 1 + int(rng.random() ** -1.5) % 60
        rows.append((p, instinct.category_for(p), conf, stamp, stamp, "bench", "" if i % 3 else "proj",
                     2 if conf >= 10 else 1 if conf >= 5 else 0, '{"k":"' + "v" * (i % 40) + '"}'))
    conn = st._db.conn
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT OR IGNORE INTO instincts (pattern, category, confidence, first_seen,"
                     " last_seen, source, project, promoted, metadata) VALUES (?,?,?,?,?,?,?,?,?)", rows)
    conn.execute("COMMIT")
    st.close()


class TestBoundedWork(ServerTestCase):
    """Issue 13: every limit has a maximum, no reply is over the budget, similar is capped."""

    def test_every_limit_has_a_maximum(self):
        for op in instinct.OPERATIONS.values():
            for p in op.params:
                if p.name == "limit":
                    with self.subTest(op=op.name):
                        self.assertIsNotNone(p.maximum)
                        self.assertLessEqual(p.maximum, instinct.MAX_LIMIT)

    def test_recall_is_not_paged(self):
        """memory_recall counts every hit as used: it is never asked for a row it does not show."""
        s = self.server()
        for i in range(3):
            s.tool("memory_store", {"type": "project", "title": f"pytest fact {i}", "content": f"pytest {i}"})
        props = {t["name"]: t for t in s.result("tools/list")["tools"]}["memory_recall"]["inputSchema"]
        self.assertNotIn("cursor", props["properties"])
        sc = s.tool("memory_recall", {"query": "pytest", "limit": 2})["structuredContent"]
        self.assertEqual(sc["count"], 2)
        self.assertNotIn("nextCursor", sc)
        rows = s.tool("memory_list", {})["structuredContent"]["memories"]
        self.assertEqual(sum(r.get("recall_count", 0) for r in rows), 2)
        self.assertIs(s.tool("memory_recall", {"query": "pytest", "cursor": "x"})["isError"], True)

    def test_similar_prefix_filter_is_exact(self):
        rng = random.Random(5)
        words = ["a", "b", "c", "d", "e", "f", "g", "h"]
        db = os.path.join(self.tmp, "sim.db")
        with instinct.InstinctStore(db, clock=lambda: 1.8e9) as st:
            for i in range(300):
                k = rng.randrange(1, 6)
                st.observe(rng.choice(["seq:", "pref:", ""]) + "-".join(rng.choice(words) for _ in range(k)))
            conf = dict(st._db.conn.execute("SELECT pattern, sum(confidence) FROM instincts GROUP BY pattern"))
            toks = {p: instinct._Pairs.tokens(p) for p in conf}
            for t in (0.0, 0.25, 0.5, 0.6, 0.8, 1.0):
                want = set()                 # brute force: every pair sharing a word
                for p in conf:
                    for q in conf:
                        (hp, a), (hq, b) = toks[p], toks[q]
                        if p < q and hp == hq and set(a) & set(b):
                            inter = sum(min(n, b.get(w, 0)) for w, n in a.items())
                            if inter / (sum(a.values()) + sum(b.values()) - inter) >= t:
                                want.add(frozenset((p, q)))
                with self.subTest(threshold=t):
                    got = st.similar(threshold=t)
                    self.assertIsNone(got.note)
                    self.assertEqual({frozenset((r["pattern"], r["similar_to"])) for r in got}, want)
                    self.assertTrue(want or t > 0.5)

    def test_no_reply_over_the_budget_on_a_100k_store(self):
        db = os.path.join(self.tmp, "instinct.db")
        build_big_store(db)
        s = self.server()
        tools = {t["name"]: t for t in s.result("tools/list")["tools"]}
        biggest = {"limit": None, "days": 36500, "days_inactive": 36500, "threshold": 0.0,
                   "min_confidence": 1, "query": "test", "pattern": "seq:test->fix->lint",
                   "since": "1000000", "format": "json"}
        slow = {}
        for name, t in sorted(tools.items()):
            a = t.get("annotations", {})
            if not a.get("readOnlyHint") and name != "export_rules":
                continue                       # writers are covered elsewhere; keep the store
            props = t["inputSchema"]["properties"]
            args = schema_args(t["inputSchema"], self.tmp)
            args.update((k, v) for k, v in biggest.items() if k in props)
            args.update((k, s_["maximum"]) for k, s_ in props.items()
                        if s_.get("type") == "integer" and "maximum" in s_)
            with self.subTest(tool=name, args=args):
                t0 = time.monotonic()
                s.send(req(name, "tools/call", {"name": name, "arguments": args}))
                line = s.recv_line(timeout=120)
                slow[name] = time.monotonic() - t0
                self.assertLessEqual(len(line), 1 << 20)
                if name not in ("memory_get", "get_instinct", "explain", "history"):   # one item
                    self.assertNotIn(b'"isError":true', line[-200:], line[:300])
        self.assertIn("similar", slow)
        # the issue asks for 2 s per tool on an idle machine; this one is shared, so generous
        self.assertLess(max(slow.values()), 30, slow)


class TestLeanToolSet(ServerTestCase):
    """Issue 13: by default tools/list holds the session tools only, in <= 8 KB."""

    def test_default_list_is_lean_and_small(self):
        for version in VERSIONS:
            with self.subTest(version=version):
                s = self.server(version, env={"INSTINCT_MCP_TOOLS": ""})
                s.send(req(2, "tools/list"))
                line = s.recv_line()
                self.assertLessEqual(len(line), 8 * 1024)
                tools = json.loads(line)["result"]["tools"]
                self.assertEqual([t["name"] for t in tools],
                                 [n for n in instinct._MCP.tools_by_name() if n in instinct._MCP.LEAN_TOOLS])
                self.assertEqual(set(instinct._MCP.LEAN_TOOLS), {t["name"] for t in tools})
                for t in tools:
                    self.assertLessEqual(t["description"].count(". "), 2, t["description"])
                    self.assertIn("Call it", t["description"])      # says when to call it
                    self.assertIs(t["inputSchema"]["additionalProperties"], False)
                res = s.tool("stats")                   # unlisted tools stay callable
                self.assertIs(res["isError"], False)
                s.close()
        s = self.server(None, env={"INSTINCT_MCP_TOOLS": ""})
        mid = s.next_id()
        s.send(modern(mid, "tools/list"))
        self.assertLessEqual(len(s.recv_line()), 8 * 1024)

    def test_full_set_behind_the_switch(self):
        for value in ("all", "ALL", "full"):
            s = self.server(env={"INSTINCT_MCP_TOOLS": value})
            tools = s.result("tools/list")["tools"]
            self.assertEqual(len(tools), len(instinct._MCP.tools_by_name()))
            self.assertTrue(all("outputSchema" in t for t in tools))
            s.close()
        named = set(re.findall(r"`([a-z_]+)`", instinct._MCP.INSTRUCTIONS))   # only listed tools
        self.assertLessEqual(named, set(instinct._MCP.LEAN_TOOLS))


class TestCancellation(ServerTestCase):
    """notifications/cancelled: a request cancelled before its reply is written gets none."""

    def cancel(self, rid, meta=False):
        m = {"jsonrpc": "2.0", "method": "notifications/cancelled",
             "params": {"requestId": rid, "reason": "user"}}
        if meta:
            m["params"]["_meta"] = dict(ENV)
        return m

    def test_cancelled_requests_get_no_reply(self):
        s = self.server()
        obs = lambda mid: req(mid, "tools/call", {"name": "observe", "arguments": {"pattern": "seq:c->d"}})
        # in flight (its reply not yet written when the cancel is read), and queued behind it
        s.send(obs(1), self.cancel(1), obs("two"), obs(3), self.cancel(3, meta=True), req(4, "ping"))
        r = s.recv()
        self.assertEqual(r["id"], "two")
        self.assertEqual(s.recv(), {"jsonrpc": "2.0", "id": 4, "result": {}})
        s.assert_silent()
        # unknown, finished and malformed cancellations are ignored; ids stay usable after
        s.send(self.cancel(99), self.cancel("two"), self.cancel(None), self.cancel({"x": 1}),
               {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"},
               b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1\n',
               obs(1))
        self.assertEqual(s.recv()["error"]["code"], -32700)      # the truncated line
        self.assertEqual(s.recv()["id"], 1)                      # id 1 again: a new request
        s.assert_silent()
        self.assertEqual(s.tool("get_instinct", {"pattern": "seq:c->d"})["structuredContent"]
                         ["confidence"], 3)     # 1 ran (reply dropped), "two", 1 again; 3 never ran
        # a cancel for the other type of id does not match (1 is not "1")
        s.send(obs("1"), self.cancel(1), req(5, "ping"))
        self.assertEqual(s.recv()["id"], "1")
        self.assertEqual(s.recv()["id"], 5)

    def test_modern_cancel_and_pipelined_burst(self):
        s = self.server(None)
        frames = []
        for i in range(200):
            frames.append(modern(i, "tools/call", {"name": "observe", "arguments": {"pattern": "seq:b"}}))
            if i % 3 == 0:
                frames.append(self.cancel(i, meta=True))
        s.send(*frames)
        got = [s.recv()["id"] for i in range(200) if i % 3]
        self.assertEqual(got, [i for i in range(200) if i % 3])
        s.assert_silent()


class TestResourcesAndPrompts(ServerTestCase):
    def test_resources(self):                                                 # 10.29
        db = os.path.join(self.tmp, "instinct.db")
        with instinct.InstinctStore(db) as st:
            for _ in range(10):
                st.observe(P)
            st.consolidate()
        s = self.server()
        res = s.result("resources/list")
        self.assertNotIn("nextCursor", res)
        uris = {r["uri"]: r for r in res["resources"]}
        self.assertEqual(set(uris), {"instinct://suggestions", "instinct://rules", "instinct://stats"})
        for r in res["resources"]:
            self.assertTrue(r["name"] and r["description"])
        self.assertEqual(s.result("resources/templates/list"), {"resourceTemplates": []})
        for uri in uris:
            with self.subTest(uri=uri):
                contents = s.result("resources/read", {"uri": uri})["contents"]
                by_type = {c["mimeType"]: c for c in contents}
                self.assertEqual(set(by_type), {"application/json", "text/markdown"})
                for c in contents:
                    self.assertEqual(c["uri"], uri)
                    self.assertNotIn("blob", c)
                data = json.loads(by_type["application/json"]["text"])
                self.assertIsInstance(data, dict)
                md = by_type["text/markdown"]["text"]
                if uri == "instinct://suggestions":       # the briefing's words
                    self.assertIn(instinct._Presenter.rule_text({"pattern": P}), md)
                    self.assertEqual(data["count"], 1)
                elif uri != "instinct://stats":
                    self.assertIn(P, md)
                    self.assertEqual(data["count"], 1)
                else:
                    self.assertEqual(data["total"], 1)
        r = s.call("resources/read", {"uri": "x://missing"}, mid=29)
        self.assertError(r, -32002, 29)
        self.assertEqual(r["error"]["data"], {"uri": "x://missing"})
        for bad in ({}, {"uri": 5}):
            self.assertError(s.call("resources/read", bad, mid=30), -32602, 30)
        for method in ("resources/subscribe", "resources/unsubscribe"):
            self.assertError(s.call(method, {"uri": "instinct://stats"}, mid=31), -32601, 31)

    def test_prompts(self):                                                   # 10.31
        s = self.server()
        s.tool("observe", {"pattern": P})
        prompts = s.result("prompts/list")["prompts"]
        self.assertEqual([p["name"] for p in prompts], ["session_briefing"])
        for a in prompts[0].get("arguments", []):
            self.assertIsInstance(a["name"], str)
        for params in ({"name": "session_briefing"}, {"name": "session_briefing", "arguments": {}},
                       {"name": "session_briefing", "arguments": {"project": ""}}):
            got = s.result("prompts/get", params)
            self.assertEqual(got["messages"][0]["role"], "user")
            self.assertEqual(got["messages"][0]["content"]["type"], "text")
            self.assertIn("Session briefing", got["messages"][0]["content"]["text"])
        for bad in ({"name": "nope"}, {}, {"name": "session_briefing", "arguments": {"project": 5}},
                    {"name": "session_briefing", "arguments": "x"}):
            self.assertError(s.call("prompts/get", bad, mid=31), -32602, 31)

    def test_undeclared_capabilities(self):                                   # 10.30, 10.32
        s = self.server()
        for method, params in (("logging/setLevel", {"level": "debug"}),
                               ("completion/complete", {"ref": {"type": "ref/prompt",
                                                                "name": "session_briefing"},
                                                        "argument": {"name": "project", "value": ""}})):
            self.assertError(s.call(method, params, mid=32), -32601, 32)


# -----------------------------------------------------------------------------
# 2. the stdout guard
# -----------------------------------------------------------------------------
NOISY = r"""
import os, subprocess, sys, warnings
sys.path.insert(0, sys.argv[1])
import instinct
real = instinct.OPERATIONS["stats"].fn     # what the server runs for tools/call
def noisy(self):
    print("NOISE-print")
    sys.stdout.write("NOISE-sys-stdout\n")
    sys.__stdout__.write("NOISE-dunder-stdout\n"); sys.__stdout__.flush()
    os.write(1, b"NOISE-fd1\n")
    os.system("echo NOISE-os-system")
    subprocess.run(["echo", "NOISE-subprocess"])
    subprocess.run([sys.executable, "-c", "print('NOISE-child-python')"])
    warnings.warn("NOISE-warning")
    return real(self)
instinct.OPERATIONS["stats"].fn = noisy
sys.exit(instinct.main(["serve"]))
"""


MODERN = "2026-07-28"
ENV = {"io.modelcontextprotocol/protocolVersion": MODERN,
       "io.modelcontextprotocol/clientCapabilities": {}}
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


def modern(mid, method, params=None, meta=None):
    p = dict(params or {})
    p["_meta"] = dict(ENV) if meta is None else meta
    return req(mid, method, p)


class TestModernEra(ServerTestCase):
    """The stateless revision 2026-07-28 beside the legacy ones (reference mcp-2026-07-28.md)."""

    def ask(self, s, method, params=None, meta=None):
        mid = s.next_id()
        s.send(modern(mid, method, params, meta))
        r = s.recv()
        self.assertEqual(r.get("id"), mid, r)
        return r

    def assertModernResult(self, r, cacheable):
        self.assertIn("result", r, r)
        res = r["result"]
        self.assertEqual(res["resultType"], "complete")
        self.assertEqual(res["_meta"][SERVER_INFO_KEY]["name"], "instinct")
        self.assertIsInstance(res["_meta"][SERVER_INFO_KEY]["version"], str)
        if cacheable:
            self.assertIs(type(res["ttlMs"]), int)
            self.assertGreaterEqual(res["ttlMs"], 0)
            self.assertIn(res["cacheScope"], ("public", "private"))
        else:
            self.assertNotIn("ttlMs", res)
            self.assertNotIn("cacheScope", res)
        return res

    def test_discover_first_then_initialize(self):                           # 2026 10.1
        s = self.server(None)
        r = self.ask(s, "server/discover")
        res = self.assertModernResult(r, cacheable=True)
        self.assertEqual(res["supportedVersions"], [MODERN])
        self.assertEqual(set(res["capabilities"]), {"tools", "resources", "prompts"})
        self.assertNotIn("serverInfo", res)              # only in result _meta
        self.assertIsInstance(res["instructions"], str)
        s.init()                                          # the same process still shakes hands
        self.assertTrue(s.result("tools/list")["tools"])

    def test_bad_envelopes(self):                                            # 2026 10.2, 10.3
        s = self.server(None)
        V, C = "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities"
        for meta in ({}, {V: MODERN}, {C: {}}, {V: 7, C: {}}, {V: MODERN, C: []},
                     {"io.modelcontextprotocol/clientInfo": {"name": "x", "version": "1"}}):
            with self.subTest(meta=meta):
                r = self.ask(s, "server/discover", meta=meta)
                s.version = None
                self.assertError(r, -32602, r["id"])
        for params in (None, {}):                         # bare discover: modern-only method
            r = s.call("server/discover", params)
            self.assertError(r, -32602, r["id"])
        for v in ("v999", "2025-11-25", "1900-01-01"):
            with self.subTest(version=v):
                r = self.ask(s, "tools/list", meta={V: v, C: {}})
                self.assertEqual(r["error"]["code"], -32022, r)
                self.assertEqual(r["error"]["data"], {"supported": [MODERN], "requested": v})
        r = self.ask(s, "tools/list", meta=dict(ENV, **{"io.modelcontextprotocol/logLevel": "verbose"}))
        self.assertError(r, -32602, r["id"])
        r = self.ask(s, "tools/list", meta=dict(ENV, **{"io.modelcontextprotocol/logLevel": "debug"}))
        self.assertModernResult(r, cacheable=True)       # and no notifications/message line
        s.assert_silent()

    def test_every_method_marks_its_result(self):                            # 2026 10.4
        s = self.server(None)                             # no initialize at all
        tools = self.assertModernResult(self.ask(s, "tools/list"), True)["tools"]
        self.assertTrue(tools)
        self.assertNotIn("nextCursor", self.ask(s, "tools/list")["result"])
        for t in tools:
            self.assertIn("outputSchema", t)
        self.assertModernResult(self.ask(s, "resources/list"), True)
        self.assertModernResult(self.ask(s, "resources/templates/list"), True)
        self.assertModernResult(self.ask(s, "prompts/list"), True)
        res = self.assertModernResult(self.ask(s, "resources/read", {"uri": "instinct://stats"}), True)
        self.assertEqual(res["ttlMs"], 0)                 # it changes with every observe
        self.assertModernResult(self.ask(s, "prompts/get", {"name": "session_briefing"}), False)
        res = self.assertModernResult(self.ask(s, "tools/call", {"name": "observe", "arguments": {
            "pattern": "seq:a->b", "source": "t"}}), False)
        self.assertIs(res["isError"], False)
        self.assertEqual(json.loads(res["content"][0]["text"]), res["structuredContent"])
        self.assertEqual(res["structuredContent"]["pattern"], "seq:a->b")
        res = self.assertModernResult(self.ask(s, "tools/call", {"name": "observe", "arguments": {
            "pattern": "seq:\u00e9->\u00fc", "source": "t"}}), False)   # non-ASCII: plain encoding
        self.assertEqual(res["structuredContent"]["pattern"], "seq:\u00e9->\u00fc")

    def test_removed_and_unknown_methods(self):                               # 2026 10.5, 10.8
        s = self.server(None)
        for method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
                       "foo/bar", "subscriptions/listen", "completion/complete", "initialize/x"):
            with self.subTest(method=method):
                r = self.ask(s, method, {"uri": "instinct://stats", "level": "debug"})
                self.assertError(r, -32601, r["id"])

    def test_errors_per_era(self):                                           # 2026 10.6, 10.7
        s = self.server(None)
        r = self.ask(s, "resources/read", {"uri": "x://missing"})
        self.assertError(r, -32602, r["id"])
        self.assertEqual(r["error"]["data"], {"uri": "x://missing"})
        r = self.ask(s, "tools/call", {"name": "nope", "arguments": {}})
        self.assertError(r, -32602, r["id"])
        res = self.assertModernResult(self.ask(s, "tools/call", {"name": "observe",
                                                                  "arguments": {"pattern": 5}}), False)
        self.assertIs(res["isError"], True)
        self.assertNotIn("structuredContent", res)
        s.init()                                          # legacy keeps -32002
        r = s.call("resources/read", {"uri": "x://missing"})
        self.assertError(r, -32002, r["id"])

    def test_eras_mix_in_one_process(self):                                  # 2026 10.11-10.13
        s = self.server(None)
        r = s.call("tools/list")                          # un-enveloped before initialize
        self.assertError(r, -32600, r["id"])
        self.assertModernResult(self.ask(s, "tools/list"), True)
        legacy = s.init("2025-11-25")                     # enveloped request, then initialize
        self.assertEqual(legacy["protocolVersion"], "2025-11-25")
        self.assertNotIn("resultType", legacy)
        for method in ("tools/list", "resources/list", "prompts/list"):
            res = s.result(method)
            for k in ("resultType", "ttlMs", "cacheScope", "_meta"):
                self.assertNotIn(k, res)
        res = s.tool("stats")
        self.assertNotIn("resultType", res)
        self.assertEqual(set(res), {"content", "isError", "structuredContent"})
        self.assertModernResult(self.ask(s, "tools/list"), True)     # after legacy initialize
        self.assertEqual(s.call("ping")["result"], {})     # the legacy session is unchanged
        # an envelope on initialize itself is still the legacy handshake
        mid = s.next_id()
        s.send(modern(mid, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                          "clientInfo": {"name": "t", "version": "0"}}))
        r = s.recv()
        self.assertEqual(r["result"]["protocolVersion"], "2025-06-18")
        self.assertNotIn("resultType", r["result"])

    def test_legacy_replies_byte_for_byte(self):                            # 2026 10.13
        s = self.server(None)
        s.send(init_msg("2025-11-25"), INITIALIZED, req(2, "tools/call", {"name": "stats"}),
               req(3, "resources/read", {"uri": "instinct://rules"}))
        lines = [s.recv_line() for _ in range(3)]
        for line in lines:
            for key in (b'"resultType"', b'"ttlMs"', b'"cacheScope"', b'"_meta"'):
                self.assertNotIn(key, line)

    def test_probe_then_eof_exits_cleanly(self):                             # 2026 §8 (TS probe)
        s = self.server(None)
        s.send(modern("server-discover-probe-1", "server/discover"))
        self.assertModernResult(s.recv(), True)
        self.assertEqual(s.close(), 0)


@unittest.skipIf(os.name == "nt", "uses echo")
class TestStdoutGuard(ServerTestCase):
    def test_stray_output_goes_to_stderr(self):                               # 10.26
        s = self.server(argv=[sys.executable, "-c", NOISY, ROOT])
        for _ in range(2):
            res = s.tool("stats")
            self.assertIs(res["isError"], False)
            self.assertIn("total", res["structuredContent"])
        s.assert_silent()
        self.assertEqual(s.close(), 0)
        for line in s.all_lines:
            self.assertEqual(check_message(json.loads(line), NEWEST), [], line)
        err = s.stderr
        for marker in ("print", "sys-stdout", "dunder-stdout", "fd1", "os-system", "subprocess",
                       "child-python", "warning"):
            self.assertIn("NOISE-" + marker, err)
            self.assertFalse(any(b"NOISE" in line for line in s.all_lines))


BROKEN = r"""
import sys
sys.path.insert(0, sys.argv[1])
import instinct
def boom(self, *args, **kwargs):
    raise RuntimeError("boom-from-tool")
instinct.OPERATIONS["suggest"].fn = boom     # what the server runs for tools/call
instinct.InstinctStore.suggest = boom          # and what resources/read calls
sys.exit(instinct.main(["serve"]))
"""


class TestFailures(ServerTestCase):
    def test_unexpected_exceptions(self):                                   # 10.21
        s = self.server(argv=[sys.executable, "-c", BROKEN, ROOT])
        res = s.tool("suggest")
        self.assertIs(res["isError"], True)
        self.assertNotIn("structuredContent", res)
        self.assertIn("boom-from-tool", res["content"][0]["text"])
        s.assert_silent()
        for method, params in (("resources/read", {"uri": "instinct://suggestions"}),
                               ("prompts/get", {"name": "session_briefing"})):
            self.assertError(s.call(method, params, mid=21), -32603, 21)
        self.assertIs(s.tool("stats")["isError"], False)
        self.assertEqual(s.close(), 0)
        self.assertIn("Traceback", s.stderr)
        self.assertIn("boom-from-tool", s.stderr)
        for line in s.all_lines:
            self.assertEqual(check_message(json.loads(line), NEWEST), [])

    def test_unusable_database(self):
        os.mkdir(os.path.join(self.tmp, "a-directory"))
        s = self.server(db=os.path.join(self.tmp, "a-directory"))
        self.assertTrue(s.result("tools/list")["tools"])
        for name, args in (("observe", {"pattern": P}), ("stats", {}), ("suggest", {})):
            res = s.tool(name, args)
            self.assertIs(res["isError"], True, res)
            self.assertNotIn("structuredContent", res)
        r = s.call("resources/read", {"uri": "instinct://stats"}, mid=3)
        self.assertIn(r["error"]["code"], (-32603, -32002), r)
        s.assert_silent()
        self.assertEqual(s.close(), 0)
        self.assertNotIn("Traceback", s.stderr)

    def test_client_gone_exits_quietly(self):
        env = dict(os.environ, INSTINCT_DB=os.path.join(self.tmp, "instinct.db"), HOME=self.tmp)
        p = subprocess.Popen([sys.executable, INSTINCT_PY, "serve"], cwd=self.tmp, env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdin.write(enc(init_msg(NEWEST)))
        p.stdin.flush()
        self.assertIn(b'"result"', p.stdout.readline())
        p.stdout.close()                        # the client stops reading
        try:
            p.stdin.write(b"".join(enc(req(i, "tools/list")) for i in range(50)))
            p.stdin.close()
        except BrokenPipeError:
            pass
        self.assertEqual(p.wait(10), 0)
        err = p.stderr.read().decode()
        p.stderr.close()
        self.assertNotIn("Traceback", err)
        self.assertNotIn("Exception ignored", err)

    def test_progress_token_is_harmless(self):                              # 10.24
        s = self.server()
        s.send(req(24, "tools/call", {"name": "consolidate", "arguments": {},
                                      "_meta": {"progressToken": "t1"}}))
        while True:                             # zero or more progress notifications first
            msg = json.loads(s.recv_line())
            if msg.get("method") != "notifications/progress":
                break
            self.assertEqual(msg["params"]["progressToken"], "t1")
        self.assertEqual(msg["id"], 24)
        self.assertIs(msg["result"]["isError"], False)
        s.assert_silent()


# -----------------------------------------------------------------------------
# 3. fuzz
# -----------------------------------------------------------------------------
class Fuzzer:
    """Builds hostile frames with the reply each must get, under one negotiated version."""

    def __init__(self, seed, version):
        self.rng, self.version = random.Random(seed), version
        self.frames, self.expect = [], []        # expect: None or (id|NOID, code|"ok"|"tool_error")
        self.n, self.observed = 0, {}

    def uid(self):
        self.n += 1
        return self.n if self.rng.random() < 0.6 else f"f-{self.n}"

    def add(self, frame, expect):
        if not isinstance(frame, bytes):
            frame = json.dumps(frame, separators=(",", ":")).encode()
        self.frames.append(frame + b"\n")
        self.expect.append(expect)

    def valid(self):
        r, mid = self.rng.random(), self.uid()
        if r < 0.5:
            self.add(req(mid, "ping"), (mid, "ok"))
        elif r < 0.9:
            pat = f"seq:fuzz->{self.rng.randrange(20)}"
            self.observed[pat] = self.observed.get(pat, 0) + 1
            self.add(req(mid, "tools/call", {"name": "observe", "arguments": {"pattern": pat}}),
                     (mid, "ok"))
        elif r < 0.97:
            self.add(req(mid, "tools/call", {"name": "stats"}), (mid, "ok"))
        else:
            self.add(req(mid, "tools/list"), (mid, "ok"))

    def hostile(self):
        rng, mid = self.rng, self.uid()
        kind = rng.randrange(22)
        if kind == 0:                                           # truncated JSON
            text = json.dumps(req(mid, "tools/call", {"name": "observe",
                                                      "arguments": {"pattern": "seq:x"}}))
            self.add(text[:rng.randrange(1, len(text))].encode(), (NOID, -32700))
        elif kind == 1:                                         # wrong jsonrpc
            m = req(mid, "ping")
            v = rng.choice(["1.0", 2.0, 2, None, "", "2.00", [], {}, "2.0 ", "DELETE"])
            if v == "DELETE":
                del m["jsonrpc"]
            else:
                m["jsonrpc"] = v
            self.add(m, (mid, -32600))
        elif kind == 2:                                         # id of a wrong type
            m = req(0, rng.choice(["ping", "tools/list", "nope"]))
            m["id"] = rng.choice([None, 1.5, True, False, {}, [], [1], {"a": 1}, -0.5])
            self.add(m, (NOID, -32600))
        elif kind == 3:                                         # method of a wrong type
            m = {"jsonrpc": "2.0", "id": mid}
            v = rng.choice([1, None, [], {}, True, "MISSING"])
            if v != "MISSING":
                m["method"] = v
            self.add(m, (mid, -32600))
        elif kind == 4:                                         # params of a wrong type
            m = req(mid, rng.choice(["ping", "tools/list", "tools/call", "resources/read"]),
                    rng.choice([[], [1, 2], "x", 1, True, 0.5]))
            self.add(m, (mid, -32602))
        elif kind == 5:                                         # huge ids
            big = rng.choice([10 ** rng.randint(16, 400), -(10 ** rng.randint(16, 400)),
                              "i" * rng.randint(1000, 100000), 2 ** 63, -(2 ** 63) - 1])
            self.add(req(big, "ping"), (big, "ok"))
        elif kind == 6:                                         # deep nesting
            d = rng.choice([30000, 50000, 300000])        # past every Python's JSON depth
            frame = rng.choice([b"[" * d + b"]" * d, b"[" * d, b'{"a":' * d + b"1" + b"}" * d,
                                b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":'
                                + b"[" * d + b"]" * d + b"}}"])
            self.add(frame, (NOID, -32700))
        elif kind == 7:                                         # shallow nesting is fine
            self.add(req(mid, "ping", {"x": json.loads("[" * 50 + "]" * 50)}), (mid, "ok"))
        elif kind == 8:                                         # invalid UTF-8
            frame = rng.choice([b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff"}}',
                                b"\x80" + bytes(rng.randrange(256) for _ in range(rng.randrange(50))),
                                b'{"jsonrpc":"2.0","id":"\xc0\xaf","method":"ping"}',
                                b'{"jsonrpc":"2.0","id":1,"method":"p\xed\xa0\x80"}'])
            self.add(frame.replace(b"\n", b" "), (NOID, -32700))
        elif kind == 9:                                         # unknown methods (with an id)
            method = rng.choice(["tools/lists", "", "rpc.discover", "\u0000", "x" * 5000,
                                 "notifications/initialized", "server/discover", "sampling/createMessage",
                                 "logging/setLevel", "completion/complete", "resources/subscribe",
                                 "\ud800", "PING", "ping "])
            # server/discover exists (2026-07-28) but needs the _meta envelope: -32602 without
            self.add(req(mid, method, {}), (mid, -32602 if method == "server/discover" else -32601))
        elif kind == 10:                                        # notifications with odd fields
            m = {"jsonrpc": "2.0", "method": rng.choice(["notifications/initialized", "notifications/x",
                                                         "notifications/cancelled", "ping", "tools/call",
                                                         "nope", ""])}
            m.update(rng.choice([{}, {"params": [1]}, {"params": None}, {"params": {"requestId": {}}},
                                 {"extra": 1, "_meta": {}}, {"params": "s", "result": {}},
                                 {"params": {"name": "observe", "arguments": {"pattern": "seq:notif"}}}]))
            self.add(m, None)
        elif kind == 11:                                        # batches (not allowed here)
            batch = rng.choice([[req(mid, "ping")], [], [1], [INITIALIZED],
                                [req(mid, "ping"), {"jsonrpc": "2.0", "method": "x"}], [[]]])
            self.add(batch, (NOID, -32600))
        elif kind == 12:                                        # random bytes / junk text
            junk = "".join(rng.choice("{}[]\":,abc \\tnul0123456789.eE+-") for _ in range(rng.randrange(1, 80)))
            self.add(("#" + junk).encode(), (NOID, -32700))
        elif kind == 13:                                        # JSON values that are not objects
            self.add(rng.choice([b'"hello"', b"42", b"null", b"true", b"-1.5e3", b'{"foo":1}',
                                 b'{"jsonrpc":"2.0"}', b'{"jsonrpc":"2.0","result":{}}']),
                     (NOID, -32600))
        elif kind == 14:                                        # NaN and friends
            self.add(('{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"x":%s}}'
                      % (self.n, rng.choice(["NaN", "Infinity", "-Infinity"]))).encode(), (NOID, -32700))
        elif kind == 15:                                        # blank lines
            self.add(rng.choice([b"", b" ", b"\t \r", b"\r"]), None)
        elif kind == 16:                                        # responses to nobody
            self.add(rng.choice([{"jsonrpc": "2.0", "id": mid, "result": {}},
                                 {"jsonrpc": "2.0", "id": mid, "error": {"code": 1, "message": "x"}}]),
                     None)
        elif kind == 17:                                        # malformed tools/call
            params = rng.choice([{}, {"name": 5}, {"name": None}, {"name": "nope"},
                                 {"name": "observe", "arguments": "x"}, {"name": "observe", "arguments": 7},
                                 {"name": "observe\u0000"}, {"name": ["observe"]}])
            self.add(req(mid, "tools/call", params), (mid, -32602))
        elif kind == 18:                                        # schema-violating arguments
            args = rng.choice([{"pattern": 5}, {}, {"pattern": "seq:a", "nope": 1}, {"pattern": ""},
                               {"pattern": "x" * 5000}, {"pattern": "seq:a", "metadata": [1]},
                               {"pattern": "seq:a", "source": {}}, {"pattern": "\ud800"},
                               {"pattern": "seq:a", "metadata": {"s": "\udfff"}},
                               {"pattern": None}, {"pattern": "a\x00b"}])
            self.add(req(mid, "tools/call", {"name": "observe", "arguments": args}), (mid, "tool_error"))
        elif kind == 19:                                        # bad resource / prompt / cursor
            m, code = rng.choice([(("resources/read", {"uri": "x://y"}), -32002),
                                  (("resources/read", {}), -32602),
                                  (("prompts/get", {"name": "nope"}), -32602),
                                  (("tools/list", {"cursor": "zz"}), -32602),
                                  (("initialize", {"protocolVersion": 1}), -32602)])
            self.add(req(mid, m[0], m[1]), (mid, code))
        elif kind == 20:                                        # valid request with trailing junk
            self.add(enc(req(mid, "ping"))[:-1] + rng.choice([b"\x00", b"x", b"}", b",{}"]), (NOID, -32700))
        else:                                                   # re-initialize, same version
            self.add(init_msg(self.version, mid), (mid, "ok"))

    def giant(self):
        self.add(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"z" * (17 << 20) + b'"}}',
                 (NOID, -32600))


class TestFuzz(ServerTestCase):
    def run_fuzz(self, fz, version, frames_per_write=64):
        s = self.server(version)
        data = fz.frames

        def writer():
            try:
                for i in range(0, len(data), frames_per_write):
                    s.write(b"".join(data[i:i + frames_per_write]))
                s.p.stdin.close()
            except (BrokenPipeError, OSError):
                pass
        w = threading.Thread(target=writer, daemon=True)
        w.start()
        w.join(120)
        self.assertEqual(s.p.wait(60), 0, s.stderr[-3000:])
        for t in s._t:
            t.join(10)
        return s

    def test_fuzz_one_process(self):
        fz = Fuzzer(20261129, NEWEST)
        for i in range(6000):
            if i in (1000, 4000):
                fz.giant()
            (fz.valid if fz.rng.random() < 0.35 else fz.hostile)()
        t0 = time.monotonic()
        s = self.run_fuzz(fz, NEWEST)
        lines = s.all_lines[1:]                 # after the initialize reply
        expected = [e for e in fz.expect if e is not None]
        self.assertGreaterEqual(len(fz.frames), 6000)
        self.assertEqual(len(lines), len(expected), "one reply per request, none for notifications")
        for n, (line, (mid, what)) in enumerate(zip(lines, expected)):
            self.assertTrue(line.endswith(b"\n") and line.count(b"\n") == 1)
            msg = json.loads(line)
            probs = check_message(msg, NEWEST)
            self.assertEqual(probs, [], (n, line[:300]))
            if mid is NOID:
                self.assertNotIn("id", msg, (n, line[:300]))
            else:
                self.assertEqual(msg.get("id"), mid, (n, line[:300]))
                self.assertIs(type(msg.get("id")), type(mid))
            if what == "ok":
                self.assertIn("result", msg, (n, line[:300]))
                if "content" in msg["result"]:
                    self.assertIs(msg["result"]["isError"], False, (n, line[:300]))
            elif what == "tool_error":
                self.assertIs(msg["result"]["isError"], True, (n, line[:300]))
                self.assertNotIn("structuredContent", msg["result"])
            else:
                self.assertEqual(msg["error"]["code"], what, (n, line[:300]))
        with instinct.InstinctStore(s.db) as st:
            got = {r["pattern"]: r["confidence"] for r in st.list()}
        self.assertEqual(got, fz.observed)      # exact counts; no notification was executed
        self.assertLess(time.monotonic() - t0, 40)

    def test_fuzz_batches_2025_03_26(self):
        fz, el = Fuzzer(326, "2025-03-26"), Fuzzer(327, "2025-03-26")

        def strict_loads(frame):
            def no_constant(name):
                raise ValueError(name)
            return json.loads(frame, parse_constant=no_constant)
        for _ in range(400):
            items, exp = [], []
            for _ in range(el.rng.randrange(1, 6)):
                r = el.rng.random()
                if r < 0.4:
                    el.valid()
                elif r < 0.55:
                    el.add(INITIALIZED, None)
                else:
                    el.hostile()
                try:
                    item = strict_loads(el.frames[-1].decode("utf-8"))
                except (ValueError, RecursionError):
                    continue                     # not JSON: cannot be a batch element
                if isinstance(item, list):
                    continue
                e = el.expect[-1]
                if isinstance(item, dict) and item.get("method") == "initialize" and "id" in item:
                    ok_id = isinstance(item["id"], (str, int)) and not isinstance(item["id"], bool)
                    e = (item["id"] if ok_id else NOID, -32600)    # never inside a batch
                items.append(item)
                exp.append(e)
            if items:
                fz.add(items, exp)
        fz.observed = el.observed
        s = self.run_fuzz(fz, "2025-03-26")
        lines = s.all_lines[1:]
        expected = [e for e in fz.expect if any(x is not None for x in e)]
        self.assertEqual(len(lines), len(expected))
        for line, exp in zip(lines, expected):
            msg = json.loads(line)
            self.assertEqual(check_message(msg, "2025-03-26", allow_array=True), [], line[:300])
            self.assertIsInstance(msg, list)
            want = sorted(repr(self.norm(e)) for e in exp if e is not None)
            self.assertEqual(sorted(repr(self.norm_reply(m)) for m in msg), want, line[:500])
        with instinct.InstinctStore(s.db) as st:
            got = {r["pattern"]: r["confidence"] for r in st.list()}
        self.assertEqual(got, fz.observed)

    @staticmethod
    def norm(e):
        mid, what = e
        return (None if mid is NOID else mid, "ok" if what == "tool_error" else what)

    @staticmethod
    def norm_reply(m):
        return (m.get("id"), "ok" if "result" in m else m["error"]["code"])


# -----------------------------------------------------------------------------
# 4./5. burst and concurrency
# -----------------------------------------------------------------------------
class TestLoad(ServerTestCase):
    def test_burst_then_eof(self):
        s = Server(self.tmp)
        self.servers.append(s)
        s.version = NEWEST
        s.write(enc(init_msg(NEWEST)) + enc(INITIALIZED) + b"".join(
            enc(req(i, "tools/call", {"name": "observe", "arguments": {"pattern": P}}))
            for i in range(1, 101)))
        s.p.stdin.close()
        self.assertEqual(s.p.wait(30), 0)
        for t in s._t:
            t.join(10)
        replies = [json.loads(x) for x in s.all_lines]
        self.assertEqual(len(replies), 101)
        self.assertEqual([r["id"] for r in replies[1:]], list(range(1, 101)))
        self.assertEqual([r["result"]["structuredContent"]["confidence"] for r in replies[1:]],
                         list(range(1, 101)))
        with instinct.InstinctStore(s.db) as st:
            self.assertEqual(st.get(P)["confidence"], 100)

    def test_servers_share_one_database(self):
        n, per = 4, 250
        procs = []
        for _ in range(n):
            s = Server(self.tmp)
            self.servers.append(s)
            procs.append(s)
        payload = enc(init_msg(NEWEST)) + enc(INITIALIZED) + b"".join(
            enc(req(i, "tools/call", {"name": "observe", "arguments": {"pattern": P, "source": "x"}}))
            for i in range(1, per + 1))

        def feed(s):
            s.write(payload)
            s.p.stdin.close()
        ts = [threading.Thread(target=feed, args=(s,)) for s in procs]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        confidences = []
        for s in procs:
            self.assertEqual(s.p.wait(60), 0, s.stderr[-2000:])
            for t in s._t:
                t.join(10)
            replies = [json.loads(x) for x in s.all_lines[1:]]
            self.assertEqual(len(replies), per)
            for r in replies:
                self.assertIs(r["result"]["isError"], False, r)
                confidences.append(r["result"]["structuredContent"]["confidence"])
        self.assertEqual(sorted(confidences), list(range(1, n * per + 1)))   # each step exactly once
        with instinct.InstinctStore(procs[0].db) as st:
            self.assertEqual(st.get(P)["confidence"], n * per)


# -----------------------------------------------------------------------------
# 6. interop with real clients
# -----------------------------------------------------------------------------
INTEROP_DIR = os.environ.get("INSTINCT_INTEROP_DIR") or os.path.join(
    os.path.expanduser("~"), ".cache", "instinct-interop")


def _interop_tool(env_var, *default):
    path = os.environ.get(env_var) or os.path.join(INTEROP_DIR, *default)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


class InteropTestCase(ServerTestCase):
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
            self.assertEqual(len(tools), len(instinct._MCP.tools_by_name()))
            for t in tools:
                with self.subTest(tool=t["name"]):
                    self.assertTrue(t["description"].strip())


if __name__ == "__main__":
    unittest.main()
