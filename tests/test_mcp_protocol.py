"""Tests for the MCP stdio server's protocol (`instinct serve`, issue 3; edges from issues 19
and 21): the lifecycle and JSON-RPC conformance with the checklist in
shared/reference/mcp-stdio.md section 10, cancellation, the 2026-07-28 era and its envelope
checked field by field, the stdout guard (prints, fd 1 writes and child processes land on
stderr), failures, a seeded fuzz run of thousands of hostile frames against one process, deep
input without a bracket scanner, and a pipelined burst followed by EOF with several servers on
one database.

Every test talks to a real subprocess (`sys.executable instinct.py serve`, tests/helpers.Server)
with INSTINCT_DB in a temporary directory.
Run: python3 -m unittest -v tests.test_mcp_protocol
"""
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import unittest

import instinct
from tests.helpers import (ENV, INITIALIZED, INSTINCT_PY, MODERN, NEWEST, NOID, ROOT, VERSIONS,
                           Server, ServerCase, check_message, enc, init_msg, modern, req,
                           setUpModule)
from tests.test_mcp_tools import P


# -----------------------------------------------------------------------------
# 1. conformance (reference section 10)
# -----------------------------------------------------------------------------
class TestLifecycle(ServerCase):
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


class TestJsonRpc(ServerCase):
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


class TestCancellation(ServerCase):
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


SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


class TestModernEra(ServerCase):
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
class TestStdoutGuard(ServerCase):
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


class TestFailures(ServerCase):
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


class TestFuzz(ServerCase):
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
class TestLoad(ServerCase):
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


# --- the 2026-07-28 envelope field by field, deep input (issues 19 and 21) ---------------
V = "io.modelcontextprotocol/protocolVersion"
C = "io.modelcontextprotocol/clientCapabilities"
I = "io.modelcontextprotocol/clientInfo"
L = "io.modelcontextprotocol/logLevel"


class TestEnvelope(ServerCase):
    """Every malformed _meta field of a 2026-07-28 request is refused with -32602, named."""

    def test_each_malformed_field_is_refused_by_name(self):
        s = self.server(version=None)
        info = {"name": "c", "version": "1"}
        cases = [
            ({V: MODERN, C: {}, I: 7}, I),                          # the conformance case
            ({V: MODERN, C: {}, I: "client"}, I),
            ({V: MODERN, C: {}, I: {"version": "1"}}, I + ".name"),
            ({V: MODERN, C: {}, I: {"name": "c", "version": 1}}, I + ".version"),
            ({V: MODERN, C: {}, I: dict(info, title=5)}, I + ".title"),
            ({V: MODERN, C: {}, I: dict(info, icons="x.png")}, I + ".icons"),
            ({V: MODERN, C: {"sampling": True}}, C + ".sampling"),
            ({V: MODERN, C: {"roots": []}}, C + ".roots"),
            ({V: MODERN, C: "all"}, C),
            ({V: MODERN, C: None}, C),
            ({V: MODERN}, C),
            ({V: 2026, C: {}}, V),
            ({V: None, C: {}}, V),
            ({V: MODERN, C: {}, L: "verbose"}, L),
            ({V: MODERN, C: {}, L: 3}, L),
            ({V: MODERN, C: {}, "progressToken": True}, "progressToken"),
            ({V: MODERN, C: {}, "progressToken": {"t": 1}}, "progressToken"),
            ({C: {}, I: info}, V),                                   # no version at all
            ({L: "debug"}, V),
        ]
        for meta, field in cases:
            for method in ("server/discover", "tools/list", "tools/call"):
                with self.subTest(meta=meta, method=method):
                    r = self.modern(s, method, {"name": "stats"}, meta)
                    self.assertEqual(r["error"]["code"], -32602, r)
                    self.assertIn(field, r["error"]["message"])
        s.assert_silent()                 # (a legacy ping: the process is still serving)

    def test_valid_envelopes_are_served(self):
        s = self.server(version=None)
        full = {V: MODERN, C: {"sampling": {}, "roots": {"listChanged": True}, "experimental": {}},
                I: {"name": "c", "version": "1", "title": "C", "websiteUrl": "https://x.test",
                    "icons": []}, L: "warning", "progressToken": "p1", "com.example/trace": [1]}
        for meta in (ENV, full, dict(ENV, progressToken=7), dict(ENV, **{I: {"name": "c",
                                                                             "version": "2"}})):
            with self.subTest(meta=meta):
                r = self.modern(s, "server/discover", meta=meta)
                self.assertEqual(r["result"]["resultType"], "complete", r)
                r = self.modern(s, "tools/call", {"name": "stats", "arguments": {}}, meta)
                self.assertIs(r["result"]["isError"], False, r)

    def test_an_unsupported_version_is_named_before_the_rest(self):
        """-32022 lets a client retry with a version listed; the rest of another revision's
        envelope may differ, so it is not judged first."""
        s = self.server(version=None)
        r = self.modern(s, "tools/list", meta={V: "2027-01-01", C: {"sampling": 1}, I: 7})
        self.assertEqual(r["error"]["code"], -32022, r)
        self.assertEqual(r["error"]["data"], {"supported": [MODERN], "requested": "2027-01-01"})


class TestDeepInput(ServerCase):
    """No bracket scanner: the adversarial lines are bounded by JSON's own decoder."""

    def test_stall_cases_answer_within_a_second(self):
        """157 KiB of [ once stalled a bracket scanner: now well under a second; 15 MB of
        nesting costs no more than moving a flat 15 MB line through the pipe."""
        s = self.server()

        def timed(line, codes=(-32700, -32600)):
            t0 = time.monotonic()
            s.write(line + b"\n")
            r = s.recv()
            dt = time.monotonic() - t0
            if codes:
                self.assertIn(r["error"]["code"], codes)
            s.assert_silent()
            return dt
        self.assertLess(timed(b"[" * (157 * 1024)), 1.0)
        head = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":'
        flat = timed(head + b'"' + b"a" * (15 << 20) + b'"}}', codes=None)     # answered: {}
        for line in (b"[" * (15 << 20), b'{"a":' * (3 << 20), head + b"[" * (15 << 20)):
            with self.subTest(size=len(line)):
                self.assertLess(timed(line), 2 * flat + 0.5)

    def test_metadata_depth_has_one_bound(self):
        def nest(n):
            v = {}
            for _ in range(n - 1):
                v = {"a": v}
            return v
        with instinct.InstinctStore(os.path.join(self.tmp, "i.db"), cwd=self.tmp) as st:
            st.observe("seq:ok", metadata=nest(instinct.MAX_DEPTH))
            with self.assertRaises(instinct.ValidationError) as cm:
                st.observe("seq:deep", metadata=nest(instinct.MAX_DEPTH + 1))
            self.assertIn("nests deeper than", str(cm.exception))
            with self.assertRaises(instinct.ValidationError):        # arrays count too
                st.observe("seq:deep", metadata={"l": [nest(instinct.MAX_DEPTH - 1)]})
            self.assertEqual([r["pattern"] for r in st.list()], ["seq:ok"])

    def test_statements_split_by_sqlite(self):
        script = ("CREATE TABLE t (a TEXT DEFAULT ';');\nCREATE TRIGGER tr AFTER INSERT ON t BEGIN\n"
                  "  UPDATE t SET a = 'x;y';\n  DELETE FROM t WHERE a = 'END;';\nEND;\n"
                  "CREATE INDEX ix ON t(a);\n")
        got = instinct._Schema._statements(script)
        self.assertEqual(len(got), 3, got)
        self.assertTrue(got[1].startswith("CREATE TRIGGER") and got[1].endswith("END;"))


if __name__ == "__main__":
    unittest.main()
