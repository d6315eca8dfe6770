"""MCP edges from issues 19 and 21: the 2026-07-28 envelope checked field by field, optional
arguments sent as null, paging to the end, the project opt-out on every write path, the lean
tool list, and deep input without a bracket scanner.

Real `instinct serve` processes (tests/helpers.Server), real stores in temp directories.
"""
import json
import os
import time
import unittest

from tests.helpers import (INSTINCT_PY, Server, child_env, make_repo, read, req, run_instinct,  # noqa: F401
                           setUpModule, temp_dir, write)

import instinct  # noqa: E402

MODERN = "2026-07-28"
V = "io.modelcontextprotocol/protocolVersion"
C = "io.modelcontextprotocol/clientCapabilities"
I = "io.modelcontextprotocol/clientInfo"
L = "io.modelcontextprotocol/logLevel"
ENV = {V: MODERN, C: {}}


class EdgeCase(unittest.TestCase):
    def setUp(self):
        self.tmp = temp_dir(self)
        self.servers = []

    def tearDown(self):                 # before the temp dir goes
        for s in self.servers:
            s.kill()

    def server(self, tmp=None, version="2025-11-25", **kw):
        s = Server(tmp or self.tmp, **kw)
        self.servers.append(s)
        if version:
            s.init(version)
        return s

    def modern(self, s, method, params=None, meta=ENV):
        mid = s.next_id()
        s.send(req(mid, method, dict(params or {}, _meta=meta)))
        r = s.recv()
        self.assertEqual(r.get("id"), mid, r)
        return r

    def assertToolError(self, res, *words):
        self.assertIs(res["isError"], True, res)
        self.assertNotIn("structuredContent", res)
        for w in words:
            self.assertIn(w, res["content"][0]["text"])
        return res["content"][0]["text"]


class TestEnvelope(EdgeCase):
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


class TestNullArguments(EdgeCase):
    """Agent frameworks send every optional argument, null (or an empty cursor) when unset."""

    PAGED = ("list_instincts", "memory_list", "conflicts", "similar", "trending")

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


class TestPaging(EdgeCase):
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
        r = run_instinct("--json", "list", env=child_env(self.tmp, db), cwd=self.tmp)
        self.assertEqual(len(json.loads(r.stdout)), 5, r.stderr)

    def test_one_definition_of_paging(self):
        for op in instinct.OPERATIONS.values():
            with self.subTest(op=op.name):
                self.assertEqual(op.paged, bool(op.list_key and op.read_only))
                self.assertEqual("cursor" in op.input_schema()["properties"], op.paged)
                self.assertNotIn("cursor", op.known)         # never an API argument
        self.assertFalse(hasattr(instinct._Server, "_page"))
        self.assertFalse(hasattr(instinct, "_paged_schema"))


class TestOptOut(EdgeCase):
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
                    s = self.server(os.path.join(self.proj, "src"), db=self.db)
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
        r = run_instinct("observe", "seq:a->b", env=child_env(self.tmp, self.db), cwd=self.proj)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr.splitlines(),
                         [f"instinct: error: not recorded: {self.proj}/.instinct-disable opts this "
                          "project out; nothing is learned there"])
        r = run_instinct("remember", "user", "t", "c", env=child_env(self.tmp, self.db),
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
        r = run_instinct("observe", "seq:c->d", env=child_env(self.tmp, self.db), cwd=self.proj)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_writes_that_learn_are_marked(self):
        self.assertEqual({op.mcp for op in instinct.OPERATIONS.values() if op.learns},
                         {"observe", "memory_store", "feedback", "memory_import"})


class TestLeanList(EdgeCase):
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


class TestDeepInput(EdgeCase):
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
        got = instinct._Schema.statements(script)
        self.assertEqual(len(got), 3, got)
        self.assertTrue(got[1].startswith("CREATE TRIGGER") and got[1].endswith("END;"))


if __name__ == "__main__":
    unittest.main()
