"""Tests for the MCP server's tools, resources and prompts (`instinct serve`, issue 3; edges
from issues 19 and 21): every listed tool called with arguments its schema allows, bounded work
on a big store, the lean tool set and its default list, resources and prompts, optional
arguments sent as null, paging to the end, and the project opt-out on every write path.

Real `instinct serve` processes (tests/helpers.Server), real stores in temp directories.
Run: python3 -m unittest -v tests.test_mcp_tools
"""
import json
import os
import random
import re
import time
import unittest

import instinct
from tests.helpers import (ENV, LATER, NEWEST, VERSIONS, Clock, ServerCase, child_env, cli_process, make_repo,
                           mcp_in_process, modern, read, req, schema_problems, setUpModule,
                           validate, write)


NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


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


def call_plan(tools, tmp):
    """[(tool, arguments, must_succeed)] covering every listed tool, in a sensible order."""
    calls = [("observe", {"pattern": P, "source": "test"}, True)] * 12
    calls.append(("consolidate", {}, True))
    calls += [(n, a, True) for n, a in KNOWN_CALLS if n in tools]
    rules, mem, backup = (os.path.join(tmp, n) for n in ("rules.json", "memories", "backup.db"))
    later = [   # the tools of issues 4-7, with real arguments: they must succeed too
        ("mine", {}), ("explain", {"pattern": P}), ("history", {"pattern": P}),
        ("effectiveness", {}), ("feedback", {"pattern": P, "verdict": "good", "note": "interop"}),
        ("conflicts", {}),
        ("export_rules", {"format": "json", "min_confidence": 1, "write": rules, "force": True}),
        ("import_rules", {"file": rules}),
        ("memory_store", {"type": "project", "title": "Tests use pytest", "content": "Run pytest -q",
                          "why": "CI runs it", "how_to_apply": "before every commit"}),
        ("memory_recall", {"query": "pytest"}), ("memory_list", {}), ("memory_get", {"id": 1}),
        ("memory_export", {"dir": mem}), ("memory_import", {"path": mem}), ("memory_decay", {}),
        ("memory_restore", {"id": 1}), ("doctor", {}), ("backup", {"path": backup, "force": True}),
        ("restore", {"path": backup}), ("gc", {}), ("memory_forget", {"id": 1}),
        ("memory_unforget", {"type": "project", "title": "Tests use pytest", "project": ""}),
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


class TestTools(ServerCase):
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
        for mid in (-7, 2 ** 70, ""):                  # an int id is spliced as its digits
            reply = srv.handle_message(req(mid, "tools/call", {"name": "observe",
                                                               "arguments": {"pattern": "seq:a"}}))
            self.assertIs(type(reply["result"]), instinct._ToolReply)
            self.assertEqual(instinct._MCP.reply_line(reply),
                             (json.dumps(reply, separators=(",", ":")) + "\n").encode())

    def test_one_mib_result_is_one_line(self):                                # 10.27
        db = os.path.join(self.tmp, "instinct.db")
        with instinct.InstinctStore(db, clock=Clock(LATER)) as st:
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
        with instinct.InstinctStore(db, clock=Clock(LATER)) as st:
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
    st = instinct.InstinctStore(path, clock=Clock(LATER))
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


class TestBoundedWork(ServerCase):
    """Issue 13: every limit has a maximum, no reply is over the budget."""

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

    def test_no_reply_over_the_budget_on_a_100k_store(self):
        db = os.path.join(self.tmp, "instinct.db")
        build_big_store(db)
        s = self.server()
        tools = {t["name"]: t for t in s.result("tools/list")["tools"]}
        biggest = {"limit": None, "days": 36500, "days_inactive": 36500,
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
        self.assertIn("explain", slow)
        # the issue asks for 2 s per tool on an idle machine; this one is shared, so generous
        self.assertLess(max(slow.values()), 30, slow)


class TestLeanToolSet(ServerCase):
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
                                 [n for n in instinct._MCP.TOOLS if n in instinct._MCP.LEAN_TOOLS])
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
            self.assertEqual(len(tools), len(instinct._MCP.TOOLS))
            self.assertTrue(all("outputSchema" in t for t in tools))
            s.close()
        named = set(re.findall(r"`([a-z_]+)`", instinct._MCP.INSTRUCTIONS))   # only listed tools
        self.assertLessEqual(named, set(instinct._MCP.LEAN_TOOLS))


class TestResourcesAndPrompts(ServerCase):
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


# --- null arguments, paging, the opt-out, the lean list (issues 19 and 21) ----------------
class TestNullArguments(ServerCase):
    """Agent frameworks send every optional argument, null (or an empty cursor) when unset."""

    PAGED = ("list_instincts", "memory_list", "conflicts")

    def test_all_optional_arguments_null(self):
        s = self.server()
        s.tool("observe", {"pattern": "pref:style=black"})
        s.tool("observe", {"pattern": "pref:style=ruff"})
        s.tool("memory_store", {"type": "project", "title": "uses pytest", "content": "pytest"})
        tools = {t["name"]: t for t in s.result("tools/list")["tools"]}
        for name in self.PAGED:
            props = tools[name]["inputSchema"]["properties"]
            self.assertIn("cursor", props)
            for cursor in (None, ""):
                with self.subTest(tool=name, cursor=cursor):
                    args = dict({k: None for k in props}, cursor=cursor)
                    res = s.tool(name, args)
                    self.assertIs(res["isError"], False, res)
                    self.assertEqual(res["structuredContent"],
                                     s.tool(name, {})["structuredContent"])
        # every tool: each optional argument null means absent (LlamaIndex, mcp-use)
        for name, t in tools.items():
            schema = t["inputSchema"]
            required = schema.get("required", [])
            if required:
                continue
            with self.subTest(tool=name):
                args = {k: None for k in schema["properties"]}
                res = s.tool(name, args)
                self.assertNotIn("must be of type", res["content"][0]["text"])
                self.assertNotIn("nextCursor value", res["content"][0]["text"])

    def test_a_required_argument_null_is_refused_clearly(self):
        s = self.server()
        text = self.assertToolError(s.tool("observe", {"pattern": None, "source": None}),
                                    "missing required argument 'pattern'", "null")
        self.assertEqual(len(text.splitlines()), 1)
        self.assertToolError(s.tool("memory_store", {"type": "user", "title": None,
                                                     "content": "x"}), "'title'")
        self.assertEqual(s.tool("list_instincts", {})["structuredContent"]["count"], 0)

    def test_python_api_treats_null_the_same(self):
        with instinct.InstinctStore(os.path.join(self.tmp, "i.db"), cwd=self.tmp) as st:
            st.observe("seq:a->b", category=None, metadata=None, source=None)
            self.assertEqual(len(st.list(limit=None, level=None)), 1)
            with self.assertRaises(instinct.ValidationError) as cm:
                st.observe(None)
            self.assertIn("missing required argument 'pattern'", str(cm.exception))


class TestPaging(ServerCase):
    """Following nextCursor returns every row once, in order, to the very end."""

    def fill(self, n):
        db = os.path.join(self.tmp, "instinct.db")
        with instinct.InstinctStore(db, cwd=self.tmp) as st:
            with st._write() as conn:
                now = instinct._iso(time.time())
                conn.executemany(
                    "INSERT INTO instincts (pattern, category, confidence, first_seen, last_seen)"
                    " VALUES (?, 'preference', ?, ?, ?)",
                    [(f"pref:p{i:05d}", 1 + i % 7, now, now) for i in range(n)])
        return [r[0] for r in instinct.sqlite3.connect(db).execute(
            "SELECT pattern FROM instincts ORDER BY confidence DESC, pattern, project")]

    def follow(self, s, tool, args):
        got, pages = [], 0
        while True:
            sc = s.tool(tool, args)["structuredContent"]
            pages += 1
            page = sc[{"list_instincts": "instincts", "memory_list": "memories"}[tool]]
            self.assertEqual(sc["count"], len(page))
            got += page
            if "nextCursor" not in sc:
                self.assertNotIn("note", sc)          # the last page says nothing more
                return got, pages
            self.assertIn("cursor=nextCursor", sc["note"])
            args = dict(args, cursor=sc["nextCursor"])

    def test_1100_rows_page_to_the_end(self):
        everything = self.fill(1100)
        s = self.server()
        for limit, pages in ((None, 6), (1000, 2), (100, 11), (999, 2)):
            with self.subTest(limit=limit):
                got, n = self.follow(s, "list_instincts", {} if limit is None else {"limit": limit})
                self.assertEqual([r["pattern"] for r in got], everything)
                self.assertEqual(n, pages)
        sc = s.tool("list_instincts", {"limit": 1000, "cursor": instinct.Operation._cursor_token(1000)})
        self.assertEqual(sc["structuredContent"]["count"], 100)
        sc = s.tool("list_instincts", {"cursor": instinct.Operation._cursor_token(5000)})["structuredContent"]
        self.assertEqual((sc["count"], "nextCursor" in sc), (0, False))     # past the end: empty

    def test_memories_and_the_setting_default(self):
        db = os.path.join(self.tmp, "instinct.db")
        with instinct.InstinctStore(db, cwd=self.tmp) as st:
            for i in range(23):
                st.remember("project", f"fact {i}", f"the fact number {i} about thing{i}")
            st.config("list_limit", "5")
            self.assertEqual(len(st.list()), 0)
            self.assertEqual(len(st.memories()), 23)      # the API's own default: all of them
        self.fill(12)
        s = self.server()
        got, pages = self.follow(s, "memory_list", {})
        self.assertEqual((len(got), pages), (23, 5))      # pages of list_limit (5)
        self.assertEqual(len({m["id"] for m in got}), 23)
        got, pages = self.follow(s, "list_instincts", {})
        self.assertEqual((len(got), pages), (12, 3))      # its default page: list_limit
        with instinct.InstinctStore(db, cwd=self.tmp) as st:
            self.assertEqual(len(st.list()), 5)           # one default for every surface
            self.assertEqual(len(st.search("pref")), 5)
        r = cli_process("--json", "list", env=child_env(self.tmp, db), cwd=self.tmp)
        self.assertEqual(len(json.loads(r.stdout)), 5, r.stderr)

    def test_one_definition_of_paging(self):
        for op in instinct.OPERATIONS.values():
            with self.subTest(op=op.name):
                self.assertEqual(op.paged, bool(op.list_key and op.read_only))
                self.assertEqual("cursor" in op.input_schema()["properties"], op.paged)
                self.assertNotIn("cursor", op.known)         # never an API argument
        self.assertFalse(hasattr(instinct._Server, "_page"))
        self.assertFalse(hasattr(instinct, "_paged_schema"))


class TestOptOut(ServerCase):
    """A project's .instinct-disable (or INSTINCT_DISABLE) holds on every write path."""

    WRITES = [("observe", {"pattern": "seq:a->b"}),
              ("memory_store", {"type": "project", "title": "t", "content": "c"}),
              ("feedback", {"pattern": "seq:known", "verdict": "good", "project": ""}),
              ("memory_import", {"path": "mem.md"})]

    def setUp(self):
        super().setUp()
        self.proj = make_repo(os.path.join(self.tmp, "proj"), "src")
        write(os.path.join(self.proj, ".instinct-disable"), "")
        write(os.path.join(self.proj, "mem.md"), "---\nname: x\ndescription: d\nmetadata:\n"
              "  type: project\n---\nbody\n")
        write(os.path.join(self.tmp, "mem.md"), read(os.path.join(self.proj, "mem.md")))
        self.db = os.path.join(self.tmp, "instinct.db")
        with instinct.InstinctStore(self.db, cwd=self.tmp) as st:     # written from elsewhere
            st.observe("seq:known")

    def counts(self):
        con = instinct.sqlite3.connect(self.db)
        try:
            return [con.execute(f"SELECT count(*), coalesce(sum(confidence), 0) FROM {t}").fetchone()
                    for t in ("instincts", "memories")]
        finally:
            con.close()

    def test_mcp_writes_refused_in_an_opted_out_project(self):
        before = self.counts()
        marker = os.path.join(self.proj, ".instinct-disable")
        for how in ("cwd", "env"):
            with self.subTest(how=how):
                if how == "cwd":                   # the server runs in the project
                    s = self.server(tmp=os.path.join(self.proj, "src"), db=self.db)
                else:                              # the client names it (Claude Code)
                    s = self.server(db=self.db, env={"INSTINCT_PROJECT_DIR": self.proj})
                for name, args in self.WRITES:
                    self.assertToolError(s.tool(name, args), marker, "not recorded")
                self.assertEqual(self.counts(), before)
                # reads and housekeeping still work there
                self.assertIs(s.tool("list_instincts")["isError"], False)
                self.assertIs(s.tool("suggest")["isError"], False)
                self.assertIs(s.tool("stats")["isError"], False)
                s.assert_silent()
                s.close()
        s = self.server(db=self.db)                 # elsewhere: recorded
        for name, args in self.WRITES:
            self.assertIs(s.tool(name, args)["isError"], False, name)
        self.assertToolError(s.tool("observe", {"pattern": "seq:x", "project": self.proj}),
                             marker)                # a project named by its opted-out path
        self.assertIs(s.tool("forget", {"pattern": "seq:known"})["isError"], False)

    def test_a_marker_made_mid_session_holds_within_a_second(self):
        os.remove(os.path.join(self.proj, ".instinct-disable"))
        s = self.server(db=self.db, env={"INSTINCT_PROJECT_DIR": self.proj})
        self.assertIs(s.tool("observe", {"pattern": "seq:a->b"})["isError"], False)
        write(os.path.join(self.proj, "src", ".instinct-disable"), "")    # a subfolder: not it
        write(os.path.join(self.tmp, ".instinct-disable"), "")            # a parent folder: it
        t0 = time.monotonic()
        while not s.tool("observe", {"pattern": "seq:a->b"})["isError"]:
            self.assertLess(time.monotonic() - t0, 5)
        self.assertLess(time.monotonic() - t0, 2.5)

    def test_instinct_disable_variable(self):
        before = self.counts()
        s = self.server(db=self.db, env={"INSTINCT_DISABLE": "1"})
        for name, args in self.WRITES:
            self.assertToolError(s.tool(name, args), "INSTINCT_DISABLE")
        self.assertEqual(self.counts(), before)
        s = self.server(db=self.db, env={"INSTINCT_DISABLE": "0"})
        self.assertIs(s.tool("observe", {"pattern": "seq:a->b"})["isError"], False)

    def test_cli_and_python_api(self):
        before = self.counts()
        r = cli_process("observe", "seq:a->b", env=child_env(self.tmp, self.db), cwd=self.proj)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr.splitlines(),
                         [f"instinct: error: not recorded: {self.proj}/.instinct-disable opts this "
                          "project out; nothing is learned there"])
        r = cli_process("remember", "user", "t", "c", env=child_env(self.tmp, self.db),
                        cwd=os.path.join(self.proj, "src"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(self.counts(), before)
        with instinct.InstinctStore(self.db, cwd=self.proj) as st:
            with self.assertRaises(instinct.InstinctError) as cm:
                st.observe("seq:a->b", project="")
            self.assertIn(".instinct-disable", str(cm.exception))
            st.forget("seq:known")                                     # housekeeping works
            self.assertEqual(st.list(), [])
        with instinct.InstinctStore(self.db, cwd=self.tmp) as st:
            with self.assertRaises(instinct.InstinctError):
                st.remember("user", "t", "c", project=self.proj)
            fp = instinct.project_fingerprint(self.proj)
            self.assertEqual(st.observe("seq:a->b", project=fp)["project"], fp)    # by key: kept
        os.remove(os.path.join(self.proj, ".instinct-disable"))       # (a process holds it 1 s)
        r = cli_process("observe", "seq:c->d", env=child_env(self.tmp, self.db), cwd=self.proj)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_writes_that_learn_are_marked(self):
        self.assertEqual({op.mcp for op in instinct.OPERATIONS.values() if op.learns},
                         {"observe", "memory_store", "feedback", "memory_import"})


class TestLeanList(ServerCase):
    def test_the_seeds_four_are_listed_by_default(self):
        """After setup the seeds promise observe, suggest, consolidate and decay."""
        for version in ("2024-11-05", "2025-11-25", None):
            with self.subTest(version=version):
                s = self.server(version=version, env={"INSTINCT_MCP_TOOLS": ""})
                mid = s.next_id()
                params = {"_meta": ENV} if version is None else None
                s.send(req(mid, "tools/list", params))
                line = s.recv_line()
                self.assertLessEqual(len(line), 8 * 1024)
                names = [t["name"] for t in json.loads(line)["result"]["tools"]]
                self.assertLessEqual({"observe", "suggest", "consolidate", "decay"}, set(names))
                self.assertEqual(len(names), len(instinct._MCP.LEAN_TOOLS))
                s.close()
        s = self.server(env={"INSTINCT_MCP_TOOLS": ""})
        for name in ("consolidate", "decay"):
            self.assertIs(s.tool(name, {})["isError"], False)


if __name__ == "__main__":
    unittest.main()


class TestNamesShownSafely(unittest.TestCase):
    """Issue 28 item 8: bidi overrides and isolates, zero-width and other invisible or control
    characters in a stored name never reach an agent or a file as they are: the briefing, a
    hint, MCP tool text, prompts and resources, the CLI, rules files and exports show them
    escaped (`\\u202e`); JSON keeps the value (the escape is JSON's own)."""

    BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e"
                     "\u2060-\u206f\ufeff]")
    NAMES = ["pref:test=py\u202etest", "pref:lint=ru\u200bff check", "pref:build=ma\u2066ke\u2069",
             "pref:fmt=bl\ufeffack", "pref:docs=mk\u2060docs", "pref:pkg=np\u200fm"]

    def test_plain_text_passes_as_it_is_and_ascii_controls_are_escaped_too(self):
        plain = "seq:test->fix->test (conf=8) [mature]"
        self.assertIs(instinct._shown(plain), plain)
        self.assertEqual(instinct._shown("a\x1b[31mb\x7fc\td\ne"), "a\\u001b[31mb\\u007fc\td\ne")
        self.assertEqual(instinct._shown("caf\u00e9 \u202e"), "caf\u00e9 \\u202e")

    def test_no_raw_character_in_any_agent_facing_text_or_file(self):
        from tests.helpers import temp_dir, tool_result
        home = temp_dir(self)
        repo = make_repo(os.path.join(home, "shop"))
        db = os.path.join(home, "i.db")
        store = instinct.InstinctStore(db, cwd=repo)
        self.addCleanup(store.close)
        for name in self.NAMES:
            for _ in range(12):
                store.observe(name, project=repo)
        store.consolidate()
        store.remember("project", "Deploy with \u202emake ship\u202c", "run \u200bmake ship\u2028 first",
                       project=repo)
        env = child_env(home, db)
        texts = {}

        def cli(*args, stdin=None):
            r = cli_process(*args, env=env, cwd=repo, input=stdin, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            texts[" ".join(args)] = r.stdout + r.stderr
            return r.stdout
        for args in (("suggest",), ("list",), ("--json", "list"), ("memories",), ("export",),
                     ("export", "--format", "json"), ("recall", "deploy")):
            cli(*args)
        for fmt, name in (("markdown", "rules.md"), ("json", "rules.json")):
            cli("export", "--format", fmt, "--write", name, "--min-confidence", "1")
            texts[name] = read(os.path.join(repo, name))
        cli("export-memories", os.path.join(home, "mem"))
        for f in os.listdir(os.path.join(home, "mem")):
            texts[f] = read(os.path.join(home, "mem", f))
        hook = {"session_id": "s1", "cwd": repo, "hook_event_name": "SessionStart"}
        texts["briefing"] = json.loads(cli("hook", "session-start", stdin=json.dumps(hook)))[
            "hookSpecificOutput"]["additionalContext"]
        hook.update(hook_event_name="PreToolUse", tool_name="Bash", tool_input={"command": "pytest -q"})
        out = cli("hook", "pre-tool-use", stdin=json.dumps(hook))
        texts["hint"] = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
        srv, _ = mcp_in_process(store)
        for tool, args in (("suggest", {}), ("list_instincts", {}), ("memory_recall", {"query": "deploy"}),
                           ("memory_list", {}), ("explain", {"pattern": self.NAMES[0]}),
                           ("get_instinct", {"pattern": "pref:nope=x\u202e"})):
            res = tool_result(srv, tool, args)
            texts["mcp " + tool] = "".join(c["text"] for c in res["content"])
        for n, (method, params) in enumerate((("prompts/get", {"name": "briefing", "arguments": {}}),
                                              ("resources/read", {"uri": "instinct://rules"}))):
            reply = srv.handle_message(req(10 + n, method, params))
            texts[method] = json.dumps(reply.get("result") or reply, ensure_ascii=False)
        for what, text in texts.items():
            with self.subTest(what=what):
                self.assertIsNone(self.BAD.search(text), ascii(text[:2000]))
        self.assertIn("py\\u202etest", texts["rules.md"])              # shown, escaped
        self.assertIn("py\\u202etest", texts["briefing"])
        self.assertIn("\\u202emake ship\\u202c", texts["mcp memory_list"] + texts["memories"])
        self.assertEqual({r["pattern"] for r in json.loads(texts["rules.json"])} >= set(self.NAMES[:1]), True)


class TestPagedOutputSchemas(ServerCase):
    """Issue 31: a typed client (fastmcp) reads structuredContent through the tool's outputSchema,
    so page 1's nextCursor and note must be declared there or page 2 is out of reach."""
    fill = TestPaging.fill

    def test_every_paged_tool_declares_next_cursor_and_page_one_validates_closed(self):
        paged = {op.mcp for op in instinct.OPERATIONS.values() if op.paged}
        self.assertIn("list_instincts", paged)
        self.fill(120)
        s = self.server(env={"INSTINCT_MCP_TOOLS": "all"})
        tools = {t["name"]: t for t in s.result("tools/list")["tools"]}
        for name in sorted(paged & set(tools)):
            with self.subTest(tool=name):
                props = tools[name]["outputSchema"]["properties"]
                self.assertEqual((props["nextCursor"], props["note"]),
                                 ({"type": "string"}, {"type": "string"}))
        schema = dict(tools["list_instincts"]["outputSchema"], additionalProperties=False)
        sc = s.tool("list_instincts", {"limit": 50})["structuredContent"]
        self.assertIn("nextCursor", sc)
        self.assertEqual(validate(sc, schema), [])                 # nothing undeclared on page 1
        sc2 = s.tool("list_instincts", {"limit": 50, "cursor": sc["nextCursor"]})["structuredContent"]
        self.assertEqual(validate(sc2, schema), [])
        self.assertEqual(sc2["count"], 50)
        self.assertNotEqual(sc2["instincts"][0], sc["instincts"][0])
        for name in ("observe", "memory_store"):                # why metadata is not strict-typed
            self.assertIn("OpenAI strict mode cannot type it",
                          tools[name]["inputSchema"]["properties"]["metadata"]["description"])
