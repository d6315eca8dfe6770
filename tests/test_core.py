"""Tests for the core (issue 12): one busy timeout, transactions that always end, validation
from the Params for API, CLI and MCP alike, single-pattern lookup by the working directory,
schema v9; one writer of confidence (issue 19, item 1) and corrections that stick (issue 21):
`forget` is final until `unforget`, an alias is forgotten alone, destructive commands preview
(--dry-run) and back up first, imported history keeps its own time and source, project folders
are named; the suite's own rules and instinct.py's layout.

Run: python3 -m unittest -v tests.test_core
"""
import ast
import contextlib
import inspect
import json
import os
import re
import sqlite3
import stat
import time
import unittest
from unittest import mock

import instinct
from instinct import NotFoundError, StoreError, ValidationError
from tests.helpers import (DAY, ROOT, Clock, HomeCase, Server, StoreCase, child_env,
                           cli_in_process, cli_process, make_repo, mcp_in_process, old_schema_db,
                           read, rows, setUpModule, tool_result, write)


def _filler(op, skip):
    """Plain valid arguments for op's required params other than `skip`."""
    out = {}
    for p in op.params:
        if p.required and p.name != skip:
            out[p.name] = (p.choices[0] if p.choices else {str: "seq:x", int: 1, bool: False,
                                                            dict: {}}[p.type])
    return out


def _numeric_params():
    return [(op, p) for op in instinct.OPERATIONS.values() for p in op.params
            if p.type is int]


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
            if len(calls) == 3:                # the first try's own busy wait: 1.9 s of the 2 s
                time.sleep(1.9)
            calls.append(time.monotonic())
            raise sqlite3.OperationalError("database is locked")
        t = time.monotonic()
        with self.assertRaises(sqlite3.OperationalError):
            db.retry(always)
        # 0.1 s were left; a fresh timeout after that try would wait 2 s: half of it is a
        # generous bound
        self.assertLess(time.monotonic() - t, 1.9 + 1.0)


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
                code, out, err = self.cli_in_process(*args)
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
                r = self.cli_process(*cmd, cwd=str(self.repo), env=env)
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
        r = self.cli_process("export-memories", "cli-notes", cwd=str(work))
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
        self.assertEqual(instinct._Hook.take_db(["--db", "x", "observe", "p"]), ("x", ["observe", "p"]))
        self.assertEqual(instinct._Hook.take_db(["observe", "--db=y", "p"]), ("y", ["observe", "p"]))
        self.assertEqual(instinct._Hook.take_db(["observe", "--db"]), (None, ["observe", "--db"]))
        other = self.tmp / "other.db"
        for args in (["observe", "seq:a", "--db", str(other)], ["--db=" + str(other), "observe", "seq:a"],
                     ["observe", "--db=" + str(other), "seq:a", "--json"]):
            with self.subTest(args=args):
                code, _, err = cli_in_process(*args)
                self.assertEqual(code, 0, err)
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


# --- one writer of confidence and corrections that stick (issues 19 and 21) -----------------
SEQ = "seq:pytest->Edit->pytest->ruff check->git add"
CALLS = [("Bash", {"command": "pytest -q"}), ("Edit", {"file_path": "src/a.py"}),
         ("Bash", {"command": "pytest -q"}), ("Bash", {"command": "ruff check ."}),
         ("Bash", {"command": "git add -A"})]


class _Project(HomeCase):
    """A temp HOME holding a git project and a store; the CLI and hooks as real processes."""

    def setUp(self):
        super().setUp()
        self.fp = instinct.project_fingerprint(self.repo)

    def cli_process(self, *args, code=0):
        r = cli_process(*args, env=child_env(self.home, self.db), cwd=self.repo, timeout=120)
        self.assertEqual(r.returncode, code, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        return r

    def json(self, *args):
        return json.loads(self.cli_process("--json", *args).stdout)

    def hook(self, event, payload):
        r = cli_process("hook", event, input=json.dumps(payload), cwd=self.repo,
                        env=child_env(self.home, self.db))
        self.assertEqual((r.returncode, r.stdout), (0, ""), r.stderr)

    def session(self, sid):
        """One agent session replayed through real hook processes: its calls, then its end."""
        for tool, tinput in CALLS:
            self.hook("post-tool-use", {"session_id": sid, "cwd": self.repo, "tool_name": tool,
                                        "tool_input": tinput, "tool_response": {},
                                        "hook_event_name": "PostToolUse"})
        self.hook("session-end", {"session_id": sid, "cwd": self.repo,
                                  "hook_event_name": "SessionEnd"})


# --- A. one writer of confidence ------------------------------------------------------------
class TestOneWriter(StoreCase):
    def test_the_weight_of_an_observation_is_set_in_one_place(self):
        """_OBSERVATION is what one observation adds: observe, a mined session and an
        imported history session all follow it."""
        repo = make_repo(str(self.tmp / "repo"))
        with mock.patch.object(instinct._Core, "_OBSERVATION", 3):
            self.assertEqual(self.store.observe("pref:weight")["confidence"], 3)
            self.assertEqual(self.store.observe("pref:weight")["confidence"], 6)
            for sid in ("live1", "live2"):          # one session is no evidence: two are
                for tool, tinput in CALLS:
                    self.store._record_tool({"session_id": sid, "cwd": repo, "tool_name": tool,
                                            "tool_input": tinput})
            self.assertIn("pref:test=pytest", self.store.mine()["observed"])
            self.assertEqual(self.conf("pref:test=pytest", project=repo), 6)
            for n in range(2):     # two more sessions of the same commands (issue 30: a command
                hist = self.tmp / "history" / f"old{n}.jsonl"   # must stand out, not be in half)
                write(str(hist), _transcript(f"old{n}", repo, time.time() - (3 + n) * DAY, CALLS))
            self.store.import_history(client="claude-code", path=str(self.tmp / "history"))
            self.assertEqual(self.conf("pref:test=pytest", project=repo), 12)
        self.assertEqual(self.store.observe("pref:weight")["confidence"], 7)     # back to 1
        deltas = {d for d, in self.sql("SELECT delta FROM events WHERE kind = 'observe'")}
        self.assertEqual(deltas, {1, 3})

    def test_only_the_kernel_writes_confidence_increments_and_observe_events(self):
        src = inspect.getsource(instinct)
        kernel = inspect.getsource(instinct._Core._reinforce)
        bumps = [m.start() for m in re.finditer(r"confidence\s*=\s*confidence\s*\+", src)]
        self.assertEqual(len(bumps), 1)
        self.assertIn("confidence = confidence + :delta", instinct._Core._SQL_REINFORCE)
        inserts = re.findall(r"INSERT INTO instincts\s*\(", src)        # v1 migration, kernel
        self.assertEqual(len(inserts), 2)
        quoted = [src[m.start() - 30:m.end()] for m in re.finditer("'observe'", src)]
        self.assertEqual(quoted, [])              # every reader counts through _SQL_OBSERVED
        self.assertIn("_SQL_EVENT", kernel)
        self.assertEqual(instinct._Core._SQL_OBSERVED, "kind IN ('observe')")
        self.assertLessEqual({"observe", "import", "merge", "feedback", "forget", "unforget"},
                             set(instinct._Core.EVENT_KINDS))

    def test_every_kind_in_a_busy_store_is_declared(self):
        repo = make_repo(str(self.tmp / "repo"))
        s = self.store
        for _ in range(3):
            s.observe("seq:a->b")
        s.observe("seq:a-b")
        s.merge("seq:a-b", "seq:a->b")
        s.feedback("seq:a->b", "good")
        s.consolidate()
        s.suggest(project="")
        s._record_tool({"session_id": "x", "cwd": repo, "tool_name": "Bash",
                       "tool_input": {"command": "ls"}})
        m = s.remember("user", "Likes tabs", "Indent with tabs.")
        s.forget_memory(m["id"])
        s.observe("seq:gone")
        s.forget("seq:gone", project="")
        s.unforget("seq:gone")
        kinds = {k for k, in self.sql("SELECT DISTINCT kind FROM events")}
        self.assertLessEqual(kinds, set(instinct._Core.EVENT_KINDS))
        self.assertGreaterEqual(len(kinds), 9)


# --- B1. forget sticks -------------------------------------------------------------------------
class TestForgetSticks(_Project):
    def test_a_forgotten_pattern_stays_gone_through_sessions_a_reimport_and_a_merge(self):
        for n in range(4):
            self.session(f"before-{n}")
        self.assertEqual(self.json("get", SEQ)["confidence"], 4)
        export = os.path.join(self.repo, "rules.json")
        self.cli_process("export", "--min-confidence", "1", "--write", export)
        out = self.cli_process("forget", SEQ).stdout
        self.assertIn(f"Forgot {SEQ} (conf=4, project {self.fp} {self.repo})", out)
        self.assertIn("stays forgotten", out)
        for n in range(3):                                  # 3 more sessions of the same calls
            self.session(f"after-{n}")
        self.assertNotIn(SEQ, self.patterns())
        self.assertEqual(self.json("get", "pref:test=pytest")["confidence"], 7)   # the rest counts
        self.assertEqual(self.sql("SELECT count(*) FROM events WHERE pattern = ?", (SEQ,)), [(0,)])
        # mining says it left the pattern out
        for tool, tinput in CALLS:
            self.hook("post-tool-use", {"session_id": "told", "cwd": self.repo, "tool_name": tool,
                                        "tool_input": tinput, "tool_response": {}})
        self.assertEqual(self.json("mine", "--session", "told")["forgotten"], 1)
        # re-importing the rules file made before the forget
        r = self.json("import", export)
        self.assertEqual(r["forgotten"], 1)
        self.assertIn("1 left out (forgotten)", self.cli_process("import", export).stdout)
        self.assertNotIn(SEQ, self.patterns())
        self.cli_process("gc")                                      # the store holds no copy of its name:
        with open(self.db, "rb") as f:                      # the tombstone is a hash
            self.assertFalse(SEQ.encode() in f.read())
        # a merge into it drops the merged rows instead of bringing it back
        self.cli_process("observe", "seq:pytest-edit", "--project", self.repo)
        r = self.json("merge", "seq:pytest-edit", SEQ)
        self.assertEqual((r["merged"], r["forgotten"]), (0, 1))
        self.assertNotIn(SEQ, self.patterns())
        # observing it by hand: a one-line note, exit 0, nothing stored
        r = self.cli_process("observe", SEQ, "--project", self.repo)
        self.assertEqual(r.stdout.strip(), f"{SEQ} is forgotten (project {self.fp}): not recorded "
                                           "(`instinct unforget` lifts it)")
        self.assertTrue(self.json("observe", SEQ, "--project", self.repo)["forgotten"])
        self.assertNotIn(SEQ, self.patterns())
        # unforget lifts it: the next session counts it again, with every session that held
        # it (all of them held it, so all count)
        self.assertIn("is no longer forgotten", self.cli_process("unforget", SEQ).stdout)
        self.session("lifted")
        self.assertEqual(self.json("get", SEQ)["confidence"], 4 + 3 + 1 + 1)
        self.assertIn("is not forgotten", self.cli_process("unforget", SEQ, code=1).stderr)

    def test_a_forgotten_memory_stays_out_of_a_reimport_and_remember_until_unforgotten(self):
        s = instinct.InstinctStore(self.db)
        self.addCleanup(s.close)
        m = s.remember("feedback", "Never run the deploy script", "It pushes to production.")
        s.remember("user", "Prefers short answers", "Keep replies short.")
        md = os.path.join(self.home, "memories")
        s.export_memories(md)
        s.forget_memory(m["id"])
        r = self.json("import-memories", md)
        self.assertEqual((r["added"], r["unchanged"], r["forgotten"]), (0, 1, 1))
        self.assertIn("forgotten 1", self.cli_process("import-memories", md).stdout)
        self.assertEqual([x["title"] for x in s.memories()], ["Prefers short answers"])
        with self.assertRaises(instinct.ValidationError):     # no writer lifts it (issue 28)
            s.remember("feedback", "Never run the deploy script", "It pushes to production.")
        s.unforget_memory("feedback", "Never run the deploy script", project="")
        s.remember("feedback", "Never run the deploy script", "It pushes to production.")
        self.assertNotIn("forgotten", self.json("import-memories", md))


# --- B2. forgetting an alias, merging unknown names -----------------------------------------
class TestAliases(_Project):
    def test_forgetting_an_alias_removes_only_the_alias(self):
        for _ in range(5):
            self.cli_process("observe", "pref:test=pytest")
        for _ in range(3):
            self.cli_process("observe", "pref:test=py.test")
        self.cli_process("merge", "pref:test=py.test", "pref:test=pytest")
        r = self.cli_process("forget", "pref:test=py.test", "--dry-run")
        self.assertIn("Would remove alias pref:test=py.test (it meant pref:test=pytest", r.stdout)
        self.assertEqual(self.sql("SELECT count(*) FROM aliases"), [(1,)])
        r = self.cli_process("forget", "pref:test=py.test")
        self.assertIn("Removed alias pref:test=py.test (it meant pref:test=pytest, which is kept)",
                      r.stdout)
        self.assertEqual(self.sql("SELECT pattern, confidence FROM instincts"),
                         [("pref:test=pytest", 8)])
        self.assertEqual(self.sql("SELECT count(*) FROM aliases"), [(0,)])
        self.assertEqual(self.json("observe", "pref:test=py.test")["pattern"], "pref:test=py.test")

    def test_merging_names_that_do_not_exist_refuses(self):
        r = cli_process("merge", "pref:tset=x", "pref:test=x", env=child_env(self.home, self.db),
                        cwd=self.repo)
        self.assertEqual((r.returncode, r.stdout), (1, ""))
        self.assertEqual(r.stderr.strip().splitlines(),
                         ["instinct: error: neither 'pref:tset=x' nor 'pref:test=x' is stored: "
                          "nothing to merge"])
        self.assertEqual(self.sql("SELECT count(*) FROM aliases"), [(0,)])
        self.cli_process("observe", "pref:test=x")            # a target that exists: an alias ahead
        self.cli_process("merge", "pref:tset=x", "pref:test=x")
        self.assertEqual(self.json("observe", "pref:tset=x")["confidence"], 2)


# --- B3. dry runs and automatic backups ----------------------------------------------------
class TestPreviewAndUndo(_Project):
    def fill(self):
        for n in range(3):
            self.session(f"s{n}")
        for _ in range(4):
            self.cli_process("observe", "pref:ruff-config=strict")
        self.cli_process("remember", "project", "Lint with ruff", "Run ruff check before commits.")

    def dump(self):
        return {t: self.sql(f"SELECT * FROM {t} ORDER BY 1")
                for t in ("instincts", "events", "memories", "aliases", "forgotten")}

    def backups(self):
        d = os.path.dirname(self.db)
        return sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".bak"))

    def test_dry_runs_change_nothing_and_say_what_would_go(self):
        self.fill()
        before = self.dump()
        r = self.cli_process("forget", SEQ, "--dry-run")
        self.assertIn(f"Would forget {SEQ} (conf=3, project {self.fp} {self.repo}) and 3 events",
                      r.stdout)
        self.assertIn("dry run: nothing changed", r.stdout)
        dry = self.json("purge", "ruff", "--dry-run")
        self.assertTrue(dry["dry_run"])
        self.assertGreaterEqual((dry["instincts"], dry["memories"]), (3, 1))
        self.assertIn("Would purge", self.cli_process("purge", "ruff", "--dry-run").stdout)
        self.assertTrue(self.json("gc", "--dry-run")["dry_run"])
        self.assertEqual(self.dump(), before)
        self.assertEqual(self.backups(), [])
        real = self.json("purge", "ruff")                  # the preview counted what went
        self.assertEqual({k: real[k] for k in ("instincts", "memories", "events", "other")},
                         {k: dry[k] for k in ("instincts", "memories", "events", "other")})

    def test_each_real_run_backs_up_first_and_restore_undoes_it(self):
        self.fill()
        before = self.dump()
        out = self.cli_process("purge", "ruff").stdout
        path = re.search(r"Backup: (\S+) \(`instinct restore` it to undo\)", out).group(1)
        self.assertEqual(self.backups(), [path])
        self.assertEqual(os.path.dirname(path), os.path.dirname(self.db))
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        self.assertFalse(self.patterns() & {"pref:lint=ruff check", "pref:ruff-config=strict"})
        r = self.json("restore", path, "--dry-run")
        self.assertEqual((r["dry_run"], r["instincts"]), (True, len(before["instincts"])))
        self.assertFalse(self.patterns() & {"pref:ruff-config=strict"})
        self.cli_process("restore", path)
        self.assertEqual(self.dump()["instincts"], before["instincts"])
        self.assertEqual(self.dump()["memories"], before["memories"])
        forgot = self.json("forget", SEQ)
        self.assertTrue(os.path.isfile(forgot["backup_file"]))
        self.assertTrue(self.json("gc")["backup_file"].endswith("-gc.bak"))
        self.assertEqual(len(self.backups()), 3 + 1)        # purge, forget, gc; restore's .bak

    def test_backups_are_bounded(self):
        s = instinct.InstinctStore(self.db)
        self.addCleanup(s.close)
        for i in range(instinct.AUTO_BACKUPS + 3):
            s.observe(f"seq:p{i}")
            s.forget(f"seq:p{i}", project="")
        kept = instinct._auto_backups(s.path)
        self.assertEqual(len(kept), instinct.AUTO_BACKUPS)
        self.assertTrue(kept[-1].endswith("-forget.bak"))
        newest = instinct.InstinctStore(kept[-1])
        self.addCleanup(newest.close)
        self.assertEqual([r["pattern"] for r in newest.list()],
                         [f"seq:p{instinct.AUTO_BACKUPS + 2}"])


# --- B4. imported history keeps its own time ------------------------------------------------------
def _transcript(sid, cwd, start, calls):
    """A Claude Code transcript: each call a tool_use and its tool_result, a minute apart."""
    lines = []
    for i, (tool, tinput) in enumerate(calls):
        ts = instinct._iso(start + 60 * i).replace("+00:00", "Z")
        base = {"sessionId": sid, "cwd": cwd, "timestamp": ts, "isSidechain": False}
        lines.append(dict(base, type="assistant", message={"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{i}", "name": tool, "input": tinput}]}))
        lines.append(dict(base, type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}]}))
    return "\n".join(json.dumps(x) for x in lines) + "\n"


class TestImportedTime(_Project):
    def test_explain_and_history_show_the_transcripts_time_and_source(self):
        folder = os.path.join(self.home, "transcripts")
        starts = [time.time() - d * DAY for d in (10, 9, 8, 7, 6, 5)]
        for n, t in enumerate(starts):
            write(os.path.join(folder, f"sess-{n}.jsonl"),
                  _transcript(f"sess-{n}", self.repo, t, CALLS))
        self.cli_process("import-history", "--client", "claude-code", "--path", folder)
        h = self.json("history", "pref:test=pytest")
        obs = [e for e in h["events"] if e["kind"] == "observe"]
        self.assertEqual(len(obs), 6)
        self.assertEqual({e["source"] for e in obs}, {"import:claude-code"})
        self.assertEqual(len({e["ts"][:10] for e in obs}), 6)           # six days, not one second
        for e, t in zip(obs, starts):
            self.assertEqual(e["ts"], instinct._iso(t + 60 * 4))     # the session's last call
        e = self.json("explain", "pref:test=pytest")
        self.assertEqual(e["sources"], [{"name": "import:claude-code", "count": 6}])
        self.assertEqual((e["first_seen"], e["last_seen"]),
                         (instinct._iso(starts[0] + 240), instinct._iso(starts[-1] + 240)))
        self.assertEqual(e["source"], "import:claude-code")
        # hooks keep their own source; the briefing still shows mined commands as code
        self.session("live")
        self.assertEqual(self.json("get", "pref:test=pytest")["source"], "hooks:claude-code")
        self.assertTrue(instinct._Core._mined_source("import:codex"))
        imported = {"pattern": "pref:test=pytest", "source": "import:codex"}
        self.assertEqual(instinct._Presenter.rule_text(imported),
                         instinct._Presenter.rule_text(dict(imported, source="hooks")))


# --- B5. projects are told apart -----------------------------------------------------------
class TestProjects(_Project):
    def test_every_view_names_the_folder_of_a_fingerprint(self):
        other = make_repo(os.path.join(self.home, "work", "other"))
        self.session("s1")
        self.session("s2")
        self.cli_process("observe", "pref:style=black", "--project", other)
        ofp = instinct.project_fingerprint(other)
        ps = self.json("projects")
        n = self.sql("SELECT count(*) FROM instincts WHERE project = ?", (self.fp,))[0][0]
        self.assertGreater(n, 1)
        self.assertEqual(ps, [
            {"fingerprint": self.fp, "root": self.repo, "sessions": 2, "patterns": n},
            {"fingerprint": ofp, "root": other, "sessions": 0, "patterns": 1}])
        text = self.cli_process("projects").stdout
        self.assertIn(f"  {self.fp}  {self.repo}  2 sessions, {n} patterns", text)
        self.assertIn("2 projects", text)
        listed = self.json("list")
        self.assertEqual({r["root"] for r in listed}, {self.repo, other})
        self.assertRegex(self.cli_process("list").stdout,
                         r"pref:style=black +conf=1 +\[raw\] +preference +" + re.escape(other))
        self.assertEqual(self.json("stats")["folders"], {self.fp: self.repo, ofp: other})
        self.assertIn(f"project {ofp}: {other}", self.cli_process("stats").stdout)
        here = f"(project {self.fp} {self.repo})"
        self.assertIn(here, self.cli_process("explain", "pref:test=pytest").stdout)
        self.assertEqual(self.json("history", "pref:test=pytest")["root"], self.repo)
        self.assertIn(here, self.cli_process("history", "pref:test=pytest").stdout)

    def test_projects_is_one_operation_in_api_cli_and_mcp(self):
        s = instinct.InstinctStore(self.db, cwd=self.repo)
        self.addCleanup(s.close)
        s.observe("seq:a->b", project=self.repo)
        srv, _ = mcp_in_process(s)
        res = tool_result(srv, "projects", {})
        self.assertEqual(res["structuredContent"]["projects"],
                         [{"fingerprint": self.fp, "root": self.repo, "sessions": 0,
                           "patterns": 1}])
        self.assertEqual(s.projects(), res["structuredContent"]["projects"])
        self.assertTrue(instinct.OPERATIONS["projects"].read_only)


class TestRelativeProjectPaths(_Project):
    def test_a_relative_project_is_the_stores_working_directory_not_the_processes(self):
        s = instinct.InstinctStore(self.db, cwd=self.repo)
        self.addCleanup(s.close)
        before = os.getcwd()
        os.chdir(self.home)                     # the process elsewhere
        self.addCleanup(os.chdir, before)
        self.assertEqual(s.observe("pref:x=1", project=".")["project"], self.fp)
        os.makedirs(os.path.join(self.repo, "sub"))
        self.assertEqual(s.observe("pref:x=1", project="sub")["project"], self.fp)
        with self.assertRaises(instinct.ValidationError):  # relative to the store's, not here
            s.observe("pref:x=1", project=os.path.relpath(self.home, self.repo) + "/nowhere")


class TestMigration(StoreCase):
    def test_a_v10_store_gains_the_tombstones_and_projects_tables(self):
        path = self.tmp / "old.db"
        con = old_schema_db(path, 10)
        con.execute("INSERT INTO instincts (pattern, confidence, first_seen, last_seen)"
                    " VALUES ('seq:x->y', 3, 't', 't')")
        con.close()
        s = self.open(path)
        self.assertEqual(s.stats()["schema_version"], instinct.SCHEMA_VERSION)
        s.forget("seq:x->y", project="")
        self.assertEqual(s.observe("seq:x->y")["confidence"], 0)
        self.assertEqual(s.projects(), [])


# --- the suite and instinct.py's layout --------------------------------------------------
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


class TestStructure(unittest.TestCase):
    """instinct.py's layout promises (issue 12): the table of sections is true, and each room
    of InstinctStore uses only what it or the rooms it extends define (no sibling's method
    found through the final class, no override decided by the MRO)."""

    ROOMS = ("_Core", "_Patterns", "_Memory", "_Rules", "_Learning", "_History", "_Sharing",
             "_Insight")

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

    def test_a_function_in_a_class_takes_its_instance_or_says_it_takes_none(self):
        """Issue 29: no bag of plain functions posing as methods (ruff N805, mypy arg-type)."""
        wrong = []
        for c in (n for n in ast.walk(self.tree) if isinstance(n, ast.ClassDef)):
            for f in (m for m in c.body if isinstance(m, ast.FunctionDef)):
                decos = {ast.unparse(d) for d in f.decorator_list}
                first = f.args.args[0].arg if f.args.args else None
                ok = (first not in ("self", "cls") if "staticmethod" in decos
                      else first == "cls" if "classmethod" in decos else first == "self")
                if not ok:
                    wrong.append(f"{c.name}.{f.name} (line {f.lineno})")
        self.assertEqual(wrong, [])

    def test_every_store_attribute_can_be_called_on_an_instance(self):
        import inspect
        import types
        bad = [name for name in dir(instinct.InstinctStore)
               if isinstance(inspect.getattr_static(instinct.InstinctStore, name),
                             types.FunctionType)
               and list(inspect.signature(getattr(instinct.InstinctStore, name)).parameters)[:1]
               != ["self"]]
        self.assertEqual(bad, [])

    def test_internals_carry_an_underscore(self):
        """A room's public method is an operation or the seeds' `close`; a reader's public
        function is one another class calls (or one a client row names)."""
        public = {op.fn.__name__ for op in instinct.OPERATIONS.values()} | {"close"}
        classes = {n.name: n for n in self.tree.body if isinstance(n, ast.ClassDef)}
        for name in self.ROOMS:
            with self.subTest(room=name):
                self.assertEqual([f.name for f in classes[name].body
                                  if isinstance(f, ast.FunctionDef) and f.name[0] != "_"
                                  and f.name not in public], [])
        readers = {name: c for name, c in classes.items() if name not in self.ROOMS and all(
            "staticmethod" in map(ast.unparse, f.decorator_list)
            for f in c.body if isinstance(f, ast.FunctionDef))}       # never instantiated
        named = {row.history[3] for row in instinct.CLIENTS.values()}  # a client row's reader
        for name, c in readers.items():
            used = {x.attr for other in self.tree.body if other is not c for x in ast.walk(other)
                    if isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name)
                    and x.value.id == name}
            loose = [f.name for f in c.body if isinstance(f, ast.FunctionDef)
                     and f.name[0] != "_" and f.name not in used | named]
            with self.subTest(reader=name):
                self.assertEqual(loose, [], f"{name}: used only inside, so say it is internal")

    def test_the_pattern_grammar_is_taken_apart_and_put_together_in_one_place(self):
        """Issue 29: `seq:a->b`, `combo:a+b`, `fix:a by b`, `pref:k=v` are read and written by
        _Pattern alone (normalize_pattern only cleans the user's spelling)."""
        seps = {"->", "+", " by "}          # ("=" is a CLI key=value's too)
        outside = []
        skip = {id(x) for f in ast.walk(self.tree) if getattr(f, "name", None) == "_level_change"
                for x in ast.walk(f)}                               # an event's "0->1", no pattern
        for top in self.tree.body:
            if getattr(top, "name", None) in ("_Pattern", "normalize_pattern"):
                continue
            for x in ast.walk(top):
                if id(x) in skip or not (isinstance(x, ast.Call)
                                         and isinstance(x.func, ast.Attribute)):
                    continue
                arg = x.args[0] if x.args else None
                lit = arg.value if isinstance(arg, ast.Constant) else None
                if (x.func.attr in ("split", "partition") and lit in seps
                        or x.func.attr == "join" and isinstance(x.func.value, ast.Constant)
                        and x.func.value.value in ("->", "+")):
                    outside.append(f"{getattr(top, 'name', '?')} line {x.lineno}")
        self.assertEqual(outside, [])
        P = instinct._Pattern
        for p, steps in (("seq:mix test->git commit", ["mix test", "git commit"]),
                         ("combo:ruff check+pytest", ["pytest", "ruff check"]),
                         ("fix:mix test by mix deps.get", ["mix test"]),
                         ("pref:test=uv run pytest", ["uv run pytest"]),
                         ("pref:command:just verify", ["just verify"]),
                         ("pref:tool:Task(Explore)", ["Task(Explore)"]), ("pref:tz", [])):
            with self.subTest(p=p):
                self.assertEqual(P.steps(p), steps)
        self.assertEqual(P.seq(["a", "b"]), "seq:a->b")
        self.assertEqual(P.fix(P.fixed("mix test", "mix deps.get")), ("mix test", "mix deps.get"))
        self.assertEqual(P.pref("pref:tz=UTC"), ("tz", "UTC"))
        self.assertEqual(P.pref("pref:tz"), ("tz", None))
        self.assertEqual(P.named(P.command("Skill", shell=False)), ("tool", "Skill"))
        self.assertEqual(P.command("mix test", "test"), "pref:test=mix test")
        self.assertEqual(instinct.category_for("plain words"), "sequence")

    def test_no_section_uses_a_name_a_later_section_defines(self):
        """Issue 29: the file reads in dependency order (kernel, readers, rooms, surfaces)."""
        import re
        starts = [(i + 1, int(m.group(1))) for i, line in enumerate(self.src.split("\n"))
                  for m in [re.match(r"^# (\d+)\. ", line)] if m]

        def section(lineno):
            return max((n for at, n in starts if at <= lineno), default=1)
        defined = {}
        for n in self.tree.body:
            names = ([n.name] if isinstance(n, (ast.FunctionDef, ast.ClassDef)) else
                     [t.id for t in getattr(n, "targets", []) if isinstance(t, ast.Name)])
            for x in names:
                defined.setdefault(x, section(n.lineno))
        forward = sorted({(section(n.lineno), x.id, defined[x.id]) for n in self.tree.body
                          for x in ast.walk(n) if isinstance(x, ast.Name)
                          and isinstance(x.ctx, ast.Load) and defined.get(x.id, 0) > section(
                              n.lineno)})
        self.assertEqual(forward, [])


if __name__ == "__main__":
    unittest.main()


class TestBackupOrder(_Project):
    """Issue 28 item 4: automatic backups are kept by their own number, not by the clock: with the
    clock stepped back the one just written (the undo `forget` prints) is never pruned."""

    def test_clock_stepped_back_keeps_the_fresh_backup(self):
        s = instinct.InstinctStore(self.db)
        self.addCleanup(s.close)
        old = self.db + ".20991231T000000.000000Z-forget.bak"       # an unnumbered one, "from 2099"
        with open(old, "wb") as f:
            f.write(b"")
        for i in range(instinct.AUTO_BACKUPS + 2):
            s.observe(f"seq:p{i}")
            with mock.patch.object(instinct.time, "time", return_value=time.time() - (i % 3) * 400 * DAY):
                path = s.forget(f"seq:p{i}", project="")["backup_file"]
            kept = instinct._auto_backups(s.path)
            self.assertEqual(kept[-1], path)                       # the undo just printed is there
            self.assertTrue(os.path.isfile(path))
            self.assertLessEqual(len(kept), instinct.AUTO_BACKUPS)
        self.assertFalse(os.path.exists(old))                    # pruned first, whatever its time
        with instinct.InstinctStore(kept[-1]) as newest:
            self.assertEqual([r["pattern"] for r in newest.list()], [f"seq:p{instinct.AUTO_BACKUPS + 1}"])
        self.assertEqual([int(os.path.basename(p).split(".")[2]) for p in kept],
                         list(range(3, instinct.AUTO_BACKUPS + 3)))
