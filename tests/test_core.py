"""Tests for the core (issue 12): one busy timeout, transactions that always end, validation
from the Params for API, CLI and MCP alike, single-pattern lookup by the working directory,
schema v9, and the command line's exit codes.

Run: python3 -m unittest -v tests.test_core
"""
import ast
import contextlib
import io
import os
import sqlite3
import subprocess
import sys
import time
import unittest
from unittest import mock

import instinct
from instinct import NotFoundError, StoreError, ValidationError
from tests.helpers import ROOT, Clock, Server, StoreCase, child_env, read, setUpModule  # noqa: F401


def _filler(op, skip):
    """Plain valid arguments for op's required params other than `skip`."""
    out = {}
    for p in op.params:
        if p.required and p.name != skip:
            out[p.name] = (p.choices[0] if p.choices else {str: "seq:x", int: 1, float: 0.5,
                                                            bool: False, dict: {}}[p.type])
    return out


def _numeric_params():
    return [(op, p) for op in instinct.OPERATIONS.values() for p in op.params
            if p.type in (int, float)]


class TestBusyWait(StoreCase):
    """A busy wait lasts one timeout, not two (issue 12)."""

    def locked(self):
        self.store.stats()
        holder = sqlite3.connect(str(self.db), isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        self.addCleanup(holder.close)
        self.addCleanup(holder.execute, "ROLLBACK")

    def test_write_on_locked_store_gives_up_after_its_timeout(self):
        self.locked()
        s = self.open(timeout=1)
        waits = []
        for _ in range(3):          # a doubled wait (2 s) fails every try; load noise only some
            t = time.monotonic()
            with self.assertRaises(StoreError) as cm:
                s.observe("seq:a->b")
            waits.append(time.monotonic() - t)
            self.assertIn("locked", str(cm.exception))
            self.assertGreaterEqual(waits[-1], 0.9)
            if waits[-1] < 1.5:
                break
        self.assertLess(min(waits), 1.5, waits)
        # the connection's own busy timeout is back to the full setting after the retry loop
        self.assertEqual(s._db.conn.execute("PRAGMA busy_timeout").fetchone()[0], 1000)

    def test_a_fast_busy_error_is_retried_within_the_same_timeout(self):
        db = instinct._DB(str(self.db), False, timeout=2.0)
        calls = []

        def flaky():
            calls.append(time.monotonic())
            if len(calls) < 3:
                raise sqlite3.OperationalError("database is locked")
            return "ok"
        self.assertEqual(db.retry(flaky), "ok")
        self.assertEqual(len(calls), 3)

        def always():
            raise sqlite3.OperationalError("database is locked")
        t = time.monotonic()
        with self.assertRaises(sqlite3.OperationalError):
            db.retry(always, start=t - 1.9)        # 1.9 s of the 2 s already spent
        # 0.1 s were left; a fresh timeout would wait 2 s: half of it is a generous bound
        self.assertLess(time.monotonic() - t, 1.0)


class TestWriteEnds(StoreCase):
    """_Write never leaves a transaction open and never hides the block's own error."""

    def test_failed_commit_is_rolled_back(self):
        conn = self.store._db.conn
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("CREATE TEMP TABLE parent (id INTEGER PRIMARY KEY)")
        conn.execute("CREATE TEMP TABLE child (pid INTEGER REFERENCES parent(id)"
                     " DEFERRABLE INITIALLY DEFERRED)")
        with self.assertRaisesRegex(StoreError, "FOREIGN KEY"):  # the COMMIT fails: one line
            with self.store._db.write() as c:
                c.execute("INSERT INTO child (pid) VALUES (42)")
        self.assertFalse(conn.in_transaction)
        self.assertEqual(conn.execute("SELECT count(*) FROM temp.child").fetchone()[0], 0)
        self.store.observe("seq:after")                          # the store still writes
        self.assertEqual(self.conf("seq:after"), 1)

    def test_nested_block_whose_transaction_is_gone_reports_its_own_error(self):
        with self.assertRaises(KeyError):
            with self.store._db.write() as c:
                c.execute("INSERT INTO settings (key, value) VALUES ('x', '1')")
                with self.store._db.write() as inner:
                    inner.execute("ROLLBACK")
                    raise KeyError("mine")
        self.assertFalse(self.store._db.conn.in_transaction)
        self.assertEqual(self.sql("SELECT count(*) FROM settings WHERE key = 'x'")[0][0], 0)

    def test_nested_block_error_rolls_back_only_the_savepoint(self):
        with self.store._db.write() as c:
            c.execute("INSERT INTO settings (key, value) VALUES ('outer', '1')")
            with self.assertRaises(KeyError):
                with self.store._db.write() as inner:
                    inner.execute("INSERT INTO settings (key, value) VALUES ('inner', '1')")
                    raise KeyError("inner")
        self.assertEqual(self.sql("SELECT key FROM settings ORDER BY key"), [("outer",)])


class TestValidation(StoreCase):
    """Every caller is held to the Params: API, CLI and MCP alike (issues 12 and 14)."""

    def test_api_list_refuses_what_the_params_refuse(self):
        for i in range(3):
            self.store.observe(f"seq:p{i}")
        for kw in ({"limit": -1}, {"limit": 0}, {"min_confidence": "x"}, {"limit": True},
                   {"limit": 10**26}, {"min_confidence": -5}, {"level": "gold"}):
            with self.subTest(**kw):
                with self.assertRaises(ValidationError):
                    self.store.list(**kw)
        self.assertEqual(len(self.store.list(limit=2)), 2)
        self.assertEqual(len(self.store.list(1)), 3)            # positional: min_confidence
        self.assertEqual(self.store.list(2), [])
        with self.assertRaises(TypeError):
            self.store.list(1, min_confidence=1)

    def test_every_numeric_param_refuses_huge_values_through_the_api(self):
        params = _numeric_params()
        self.assertGreater(len(params), 15)
        for op, p in params:
            for bad in (10**26, -10**26, float("inf"), float("nan"), "7"):
                with self.subTest(op=op.name, param=p.name, value=bad):
                    with self.assertRaises(ValidationError):
                        getattr(self.store, op.name)(**_filler(op, p.name), **{p.name: bad})

    def test_every_numeric_param_refuses_huge_values_on_the_command_line(self):
        for op, p in _numeric_params():
            args = [op.cli]
            for q in op.params:
                if q.required and q.name != p.name:
                    v = _filler(op, p.name)[q.name]
                    args += [str(v)] if q.positional else [q.flag, str(v)]
            args += ["1" + "0" * 26] if p.positional else [p.flag, "1" + "0" * 26]
            with self.subTest(args=args):
                code, out, err = self.cli(*args)
                self.assertEqual(code, 2, err)
                self.assertEqual(out, "")
                self.assertNotIn("Traceback", err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_every_numeric_param_refuses_huge_values_over_mcp(self):
        srv = Server(str(self.tmp), db=str(self.tmp / "mcp.db"))
        self.addCleanup(srv.kill)
        srv.init()
        for op, p in _numeric_params():
            with self.subTest(tool=op.mcp, param=p.name):
                r = srv.tool(op.mcp, {**_filler(op, p.name), p.name: 10**26})
                self.assertTrue(r.get("isError"), r)
                text = r["content"][0]["text"]
                self.assertNotIn("Traceback", text)
                self.assertNotIn("OverflowError", text)
                self.assertEqual(len(text.splitlines()), 1, text)
        self.assertEqual(srv.close(), 0)


class TestCommandLine(StoreCase):
    def test_version_after_the_command(self):
        for args in (["--version"], ["suggest", "--version"], ["--db", str(self.db), "stats", "--version"]):
            with self.subTest(args=args):
                r = self.run_cli(*args)
                self.assertEqual((r.returncode, r.stdout.strip()), (0, f"instinct {instinct.__version__}"))

    def test_main_returns_the_exit_code(self):
        self.assertEqual(self.cli("observe", "seq:a")[0], 0)
        self.assertEqual(self.cli("get", "seq:missing")[0], 1)
        self.assertEqual(self.cli("list", "--limit", "0")[0], 2)
        # the same from a process whose own code runs after main() returns
        code = ("import sys; sys.path.insert(0, sys.argv[1]); import instinct;"
                "sys.argv = ['instinct', '--db', sys.argv[2], 'get', 'seq:missing'];"
                "c = instinct.main(); print('after', c)")
        r = subprocess.run([sys.executable, "-c", code, ROOT, str(self.db)],
                           capture_output=True, text=True, timeout=60, env=child_env(self.tmp))
        self.assertEqual((r.returncode, r.stdout), (0, "after 1\n"), r.stderr)

    def test_readme_exit_codes_are_true(self):
        bad = self.run_cli("list", "--limit", "-1")
        self.assertOneLineError(bad, 2)
        missing = self.run_cli("get", "seq:nothing")
        self.assertOneLineError(missing, 1)
        readme = read(os.path.join(ROOT, "README.md"))
        self.assertIn("refused input (a value a parameter does not allow) exit 2", readme)


class TestOnePatternLookup(StoreCase):
    """What suggest shows for the working directory is what get/explain/history/feedback/forget
    find (this project's row, else global, else universal), and they say which they used."""

    def setUp(self):
        super().setUp()
        self.repo = self.tmp / "repo"
        (self.repo / ".git").mkdir(parents=True)
        self.fp = instinct.project_fingerprint(str(self.repo))
        self.here = self.open(cwd=str(self.repo))

    def test_project_row_is_found_first(self):
        for _ in range(5):
            self.here.observe("pref:use-uv", project=str(self.repo))
        self.here.observe("pref:use-uv")                       # a weaker global row too
        self.here.consolidate()
        self.assertEqual([(r["pattern"], r["project"]) for r in self.here.suggest()],
                         [("pref:use-uv", self.fp)])
        g = self.here.get("pref:use-uv")
        self.assertEqual((g["project"], g["scope"], g["confidence"]), (self.fp, "project", 5))
        e = self.here.explain("pref:use-uv")
        self.assertEqual((e["project"], e["scope"]), (self.fp, "project"))
        h = self.here.history("pref:use-uv")
        self.assertEqual((h["project"], h["scope"], h["count"]), (self.fp, "project", 6))
        f = self.here.feedback("pref:use-uv", "good")
        self.assertEqual((f["project"], f["scope"], f["confidence"]), (self.fp, "project", 6))
        self.assertEqual(self.here.get("pref:use-uv", project="")["confidence"], 1)   # explicit: as asked
        gone = self.here.forget("pref:use-uv")
        self.assertEqual((gone["project"], gone["scope"]), (self.fp, "project"))
        self.assertEqual(self.here.get("pref:use-uv")["scope"], "global")             # next in line
        # the global row goes too; forgetting removes the history with it (issue 14)
        self.assertEqual(self.here.forget("pref:use-uv")["scope"], "global")
        with self.assertRaises(NotFoundError):
            self.here.history("pref:use-uv")

    def test_global_then_universal(self):
        self.here.observe("seq:g")
        self.assertEqual(self.here.get("seq:g")["scope"], "global")
        a, b = self.tmp / "a", self.tmp / "b"
        for d in (a, b):
            (d / ".git").mkdir(parents=True)
            for _ in range(10):
                self.here.observe("seq:u", project=str(d))
        self.here.observe("seq:u", project=str(a))              # a holds the stronger row
        self.here.consolidate()
        self.assertIn("seq:u", [r["pattern"] for r in self.here.suggest()])
        u = self.here.get("seq:u")
        self.assertEqual((u["scope"], u["project"], u["level"]),
                         ("universal", instinct.project_fingerprint(str(a)), "universal"))
        self.assertEqual(self.here.explain("seq:u")["scope"], "universal")
        self.assertEqual(self.here.feedback("seq:u", "good")["confidence"], 12)
        with self.assertRaises(NotFoundError) as cm:
            self.here.get("seq:raw-elsewhere-only")
        self.assertIn("global or universal", str(cm.exception))
        # a raw row in another project is not what this directory sees
        self.here.observe("seq:other", project=str(b))
        with self.assertRaises(NotFoundError):
            self.here.explain("seq:other")

    def test_cli_in_a_project_says_where_it_found_it(self):
        for _ in range(5):
            self.here.observe("pref:use-uv", project=str(self.repo))
        self.here.consolidate()
        env = child_env(self.tmp, self.db)
        for cmd, want in ((["suggest"], "pref:use-uv"),
                          (["get", "pref:use-uv"], f"(project {self.fp})"),
                          (["explain", "pref:use-uv"], f"pref:use-uv (project {self.fp} {self.repo}"),
                          (["history", "pref:use-uv"], f"pref:use-uv (project {self.fp} {self.repo}"),
                          (["feedback", "pref:use-uv", "good"], f"(project {self.fp})")):
            with self.subTest(cmd=cmd):
                r = self.run_cli(*cmd, cwd=str(self.repo), env=env)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn(want, r.stdout)


class TestMemoryCore(StoreCase):
    def _similar(self, store, n):
        """n episodes sharing most of their words (templated), written straight into the tables."""
        conn = store._db.conn
        now = instinct._iso(self.clock())
        with store._db.write() as c:
            for i in range(n):
                title = f"episode {i}"
                content = (f"Task: fix flaky test number{i} in module m{i % 7}. Steps: run pytest,"
                           " read the failure, fix the import, rerun pytest. Outcome: green")
                mid = c.execute("INSERT INTO memories (type, title, content, project, created, updated)"
                                " VALUES ('episode', ?, ?, '', ?, ?)", (title, content, now, now)).lastrowid
                c.executemany("INSERT OR IGNORE INTO memory_keys (key, memory_id) VALUES (?, ?)",
                              [(k, mid) for k in instinct._Mem.keys("episode", "", title, content)])
        return conn

    def _steps_of_remember(self, n):
        store = self.open(self.tmp / f"m{n}.db")
        conn = self._similar(store, n)
        steps = [0]

        def tick():
            steps[0] += 1
        conn.set_progress_handler(tick, 10)
        r = store.remember("episode", "another episode", "Task: fix flaky test number0 in module m0."
                           " Steps: run pytest, read the failure, fix the import, rerun pytest. Outcome: green")
        conn.set_progress_handler(None, 0)
        return steps[0], r

    def test_remember_does_not_slow_down_with_similar_memories(self):
        small, r1 = self._steps_of_remember(300)
        large, r2 = self._steps_of_remember(2400)       # 8x the similar memories
        self.assertEqual((r1["status"], r2["status"]), ("reinforced", "reinforced"))
        self.assertLess(large, small * 2, (small, large))   # linear would be ~8x

    def test_memory_files_resolve_against_the_working_directory(self):
        work = self.tmp / "work"
        work.mkdir()
        s = self.open(cwd=str(work))
        s.remember("user", "Prefers tabs", "Indent with tabs.")
        out = s.export_memories("notes")
        self.assertTrue((work / "notes").is_dir(), out)
        other = self.open(self.tmp / "other.db", cwd=str(work))
        got = other.import_memories("notes")
        self.assertEqual(other.memories()[0]["title"], "Prefers tabs", got)
        r = self.run_cli("export-memories", "cli-notes", cwd=str(work))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue((work / "cli-notes").is_dir())


class TestReadersWriteLittle(StoreCase):
    def test_suggest_logs_a_showing_once_and_keeps_the_log_bounded(self):
        for _ in range(5):
            self.store.observe("seq:x")
        self.store.consolidate()
        surface = "SELECT count(*) FROM events WHERE kind = 'surface'"
        for _ in range(50):
            self.store.suggest(project="")
        self.assertEqual(self.sql(surface), [(1,)])        # the same list again: the same showing
        self.clock.advance(seconds=instinct.SURFACE_REPEAT_S + 1)
        self.store.suggest(project="")
        self.assertEqual(self.sql(surface), [(2,)])
        with mock.patch.object(instinct, "SURFACE_MAX_EVENTS", 3):
            for i in range(6):
                self.clock.advance(seconds=instinct.SURFACE_REPEAT_S + 1)
                self.store.suggest(project="")
            self.assertEqual(self.sql(surface), [(8,)])
            self.store.consolidate()
            self.assertEqual(self.sql(surface), [(3,)])
        self.assertEqual(self.store.effectiveness()["surfaced"], 3)

    def test_doctor_writes_nothing_and_annotations_are_true(self):
        self.store.observe("seq:new-pattern")             # not yet in the search index
        before = self.sql("SELECT count(*) FROM instincts_fts_docsize") if self.store._fts() else None
        def files():
            return [(self.tmp / n).read_bytes() if (self.tmp / n).exists() else None
                    for n in ("t.db", "t.db-wal")]
        self.store._db.conn
        was = files()
        r = self.store.doctor()
        self.assertTrue(r["ok"], r)
        self.assertEqual(files(), was)                      # not a byte written
        if before is not None:
            self.assertEqual(self.sql("SELECT count(*) FROM instincts_fts_docsize"), before)
            fts = next(c for c in r["checks"] if c["name"] == "fts")
            self.assertIn("1 newer ones are indexed", fts["detail"])
        ops = instinct.OPERATIONS
        self.assertTrue(ops["doctor"].read_only)
        self.assertFalse(ops["suggest"].read_only)         # it logs what it showed
        self.assertFalse(ops["search"].read_only)          # it indexes new patterns


class TestOneSource(StoreCase):
    def test_level_rule_in_sql_matches_python(self):
        con = sqlite3.connect(":memory:")
        for mature, rule in ((5, 10), (1, 1), (3, 2), (7, 7)):
            for conf in range(0, 13):
                with self.subTest(conf=conf, mature=mature, rule=rule):
                    (sql,), = con.execute("SELECT " + instinct._level_sql(str(conf), str(mature), str(rule)))
                    self.assertEqual(sql, instinct._level_for(conf, mature, rule))
        con.close()

    def test_threshold_precedence_explain_matches_consolidate(self):
        for _ in range(4):
            self.store.observe("seq:a", category="build")
        self.store.config("mature_threshold", "6")
        self.store.config("category.build.mature_threshold", "4")
        self.store.consolidate()
        e = self.store.explain("seq:a", project="")
        self.assertEqual((e["level"], e["thresholds"]["mature"]["from"]), ("mature", "category"))
        self.store.config("pattern.seq:a.mature_threshold", "5")
        self.store.consolidate()
        e = self.store.explain("seq:a", project="")
        self.assertEqual((e["level"], e["thresholds"]["mature"]["from"]), ("raw", "pattern"))

    def test_db_is_read_the_same_everywhere(self):
        self.assertEqual(instinct._CLI.take_db(["--db", "x", "observe", "p"]), ("x", ["observe", "p"]))
        self.assertEqual(instinct._CLI.take_db(["observe", "--db=y", "p"]), ("y", ["observe", "p"]))
        self.assertEqual(instinct._CLI.take_db(["observe", "--db"]), (None, ["observe", "--db"]))
        other = self.tmp / "other.db"
        for args in (["observe", "seq:a", "--db", str(other)], ["--db=" + str(other), "observe", "seq:a"],
                     ["observe", "--db=" + str(other), "seq:a", "--json"]):
            with self.subTest(args=args):
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    self.assertEqual(instinct.main(args), 0, err.getvalue())
        self.assertEqual(self.open(other).get("seq:a", project="")["confidence"], 3)
        self.assertEqual(instinct.OPERATIONS["export_rules"].known["format"].choices,
                         tuple(instinct._Core._EXPORT_FORMATS))


class TestObserveWithoutReturning(StoreCase):
    """SQLite before 3.35 has no RETURNING: observe then upserts and reads the row back. That
    path gives the same records and leaves the same rows as the RETURNING one, aliases resolved."""

    FP = "3f2a9c1b7d4e"

    def scenario(self, store):
        """Observations (and the merges that make aliases) -> the records observe returned."""
        out = []

        def obs(pattern, **kw):
            self.clock.advance(seconds=1)
            out.append(store.observe(pattern, **kw))
        obs("seq:test->fix->test", source="claude-code")
        obs("seq:test->fix->test")
        obs("pref:stdlib-first", category="preference", metadata={"why": "fewer deps"})
        obs("pref:stdlib-first", metadata={"n": 2})                  # metadata merged
        obs("seq:tets->fix")                                          # a typo, later an alias
        store.merge("seq:tets->fix", "seq:test->fix->test")
        obs("seq:tets->fix", source="codex")                          # counts for the canonical
        store.merge("combo:tets", "seq:test->fix->test")              # an alias with no row
        obs("combo:tets", project=self.FP)          # new under an alias: the canonical's category
        obs("combo:tets", project=self.FP, metadata={"via": "alias"})
        store.merge("seq:test->fix->test", "seq:test->fix->test->ok")  # the aliases follow
        obs("seq:tets->fix")
        obs("seq:tets->fix", category="combo")                        # an explicit category wins
        return out

    def stored(self, path):
        return {table: self.sql(f"SELECT * FROM {table} ORDER BY 1, 2", path=path)
                for table in ("instincts", "aliases", "events")}

    def observe_all(self, returning):
        self.clock = Clock()                                          # the same instants each run
        path = self.tmp / f"returning-{returning}.db"
        with contextlib.ExitStack() as patches:
            patches.enter_context(mock.patch.object(instinct._Core, "_HAS_RETURNING", returning))
            if not returning:                   # as on SQLite < 3.35: a RETURNING statement fails
                patches.enter_context(mock.patch.object(instinct._Core, "_SQL_REINFORCED",
                                                        "SELECT * FROM no_returning_here"))
            store = self.open(path)
            records = self.scenario(store)
            store.close()
        return records, self.stored(path)

    def test_the_fallback_resolves_aliases_and_merges_like_returning(self):
        records, rows = self.observe_all(False)
        self.assertEqual([(r["pattern"], r["project"], r["category"], r["confidence"]) for r in records], [
            ("seq:test->fix->test", "", "sequence", 1),
            ("seq:test->fix->test", "", "sequence", 2),
            ("pref:stdlib-first", "", "preference", 1),
            ("pref:stdlib-first", "", "preference", 2),
            ("seq:tets->fix", "", "sequence", 1),
            ("seq:test->fix->test", "", "sequence", 4),
            ("seq:test->fix->test", self.FP, "sequence", 1),
            ("seq:test->fix->test", self.FP, "sequence", 2),
            ("seq:test->fix->test->ok", "", "sequence", 5),
            ("seq:test->fix->test->ok", "", "combo", 6)])
        self.assertEqual(records[3]["metadata"], {"why": "fewer deps", "n": 2})
        self.assertEqual(records[7]["metadata"], {"via": "alias"})
        self.assertEqual(records[0]["first_seen"], records[1]["first_seen"])
        self.assertLess(records[0]["last_seen"], records[1]["last_seen"])
        self.assertEqual(rows["aliases"], [("combo:tets", "seq:test->fix->test->ok"),
                                           ("seq:test->fix->test", "seq:test->fix->test->ok"),
                                           ("seq:tets->fix", "seq:test->fix->test->ok")])
        observed = [r for r in rows["events"] if r[2] == "observe"]
        self.assertEqual(len(observed), len(records))
        if sqlite3.sqlite_version_info < (3, 35, 0):
            self.skipTest(f"SQLite {sqlite3.sqlite_version} has no RETURNING to compare with")
        self.assertTrue(instinct._Core._HAS_RETURNING)
        self.assertEqual(self.observe_all(True), (records, rows))


class TestTheTests(unittest.TestCase):
    """The suite's own rules (issue 12): nothing `python3 -O` strips, nothing only this machine has."""

    def files(self):
        tests = os.path.join(ROOT, "tests")
        out = [os.path.join(ROOT, "test_instinct.py")] + sorted(
            os.path.join(tests, f) for f in os.listdir(tests) if f.endswith(".py"))
        self.assertGreater(len(out), 10)
        return out

    def test_no_bare_assert(self):
        for path in self.files():
            bare = [n.lineno for n in ast.walk(ast.parse(read(path), path)) if isinstance(n, ast.Assert)]
            self.assertEqual(bare, [], f"{os.path.relpath(path, ROOT)}: assert statements (use self.assert*)")

    def test_no_interpreter_path_of_this_machine(self):
        for path in self.files():
            if os.path.samefile(path, __file__):
                continue                                # the needles below
            text = read(path)
            for needle in ("/.pyenv/", "/root/"):
                self.assertFalse(needle in text, f"{os.path.relpath(path, ROOT)} names {needle}")


if __name__ == "__main__":
    unittest.main()


class TestStructure(unittest.TestCase):
    """instinct.py's layout promises (issue 12): the table of sections is true, and each room
    of InstinctStore uses only what it or the rooms it extends define (no sibling's method
    found through the final class, no override decided by the MRO)."""

    ROOMS = ("_Core", "_Patterns", "_Memory", "_Learning", "_History", "_Sharing", "_Insight")

    def setUp(self):
        self.src = read(os.path.join(ROOT, "instinct.py"))
        self.tree = ast.parse(self.src)

    def test_the_table_of_sections_matches_the_section_headers(self):
        import re
        heads = re.findall(r"^# (\d+)\. (.+)$", self.src, re.M)
        self.assertEqual([int(n) for n, _ in heads], list(range(2, len(heads) + 2)))
        toc = re.findall(r"^ +(\d+)\. (.+)$", instinct.__doc__, re.M)
        self.assertEqual(toc[1:], heads)

    def test_each_room_uses_only_what_it_and_its_bases_define(self):
        classes = {n.name: n for n in self.tree.body if isinstance(n, ast.ClassDef)}
        assigned = {t.attr for c in self.ROOMS for t in ast.walk(classes[c])
                    if isinstance(t, ast.Attribute) and isinstance(t.ctx, ast.Store)
                    and isinstance(t.value, ast.Name) and t.value.id == "self"}
        defined_in = {}
        for name in self.ROOMS:
            for node in classes[name].body:
                if isinstance(node, ast.FunctionDef):
                    defined_in.setdefault(node.name, []).append(name)
        self.assertEqual({k: v for k, v in defined_in.items() if len(v) > 1}, {})   # no overrides
        for name in self.ROOMS:
            cls = getattr(instinct, name)
            for node in ast.walk(classes[name]):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr":
                    self.assertFalse(isinstance(node.args[0], ast.Name) and node.args[0].id == "self",
                                     f"{name}: getattr(self, ...) at line {node.lineno}")
                if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                        and node.value.id == "self" and isinstance(node.ctx, ast.Load)):
                    with self.subTest(room=name, attr=node.attr):
                        self.assertTrue(hasattr(cls, node.attr) or node.attr in assigned,
                                        f"{name} uses self.{node.attr} (line {node.lineno}), which "
                                        f"only {defined_in.get(node.attr)} defines")
