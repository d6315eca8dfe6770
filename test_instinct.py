"""Tests for instinct.py: store, API, CLI, registry, storage safety and vendoring.

Stdlib unittest only; every store test uses a real SQLite file in a temporary
directory and an injected clock. Classes follow the sections of instinct.py.
Run: python3 -m unittest -v test_instinct
"""
import ast
import contextlib
import hashlib
import inspect
import io
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock
from datetime import timezone
from pathlib import Path

import instinct  # noqa: E402
from instinct import (InstinctStore, NotFoundError, StoreError,  # noqa: E402
                      ValidationError)
from tests.helpers import (DAY, ROOT, T0, Clock, StoreCase, child_env, cli_in_process, find_python,  # noqa: E402,F401
                           mcp_in_process, old_schema_db, schema_problems, seeds_db, setUpModule,
                           subcommands, tool_result)

HERE = Path(ROOT)
INSTINCT_PY = HERE / "instinct.py"
FP_A, FP_B, FP_C = "aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"


def _sha12(path):
    return hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:12]


# =============================================================================
# 5. Small helpers
# =============================================================================
class TestHelpers(unittest.TestCase):

    def test_iso_is_fixed_width_utc_and_round_trips(self):
        for t in (0.0, 1.5, T0, T0 + 0.000001, T0 + 86399.999999):
            with self.subTest(t=t):
                text = instinct._iso(t)
                self.assertEqual(len(text), len("2026-01-01T00:00:00.000000+00:00"))
                self.assertTrue(text.endswith("+00:00"))
                self.assertAlmostEqual(instinct._parse_iso(text), t, places=5)
        self.assertLess(instinct._iso(T0 + 9.5), instinct._iso(T0 + 10))

    def test_parse_iso_reads_naive_as_utc(self):
        self.assertEqual(instinct._parse_iso("2026-01-01T00:00:00"), T0)
        self.assertEqual(instinct._parse_iso("2026-01-01T01:00:00+01:00"), T0)
        self.assertEqual(instinct._parse_iso("2026-01-01T00:00:00Z"), T0)
        self.assertIsNone(instinct._parse_iso("yesterday"))

    def test_metadata_limits(self):
        self.assertIsNone(instinct._check_metadata(None))
        self.assertEqual(json.loads(instinct._check_metadata({"a": [1, "x"]})), {"a": [1, "x"]})
        limit = instinct.MAX_METADATA
        fits = {"k": "x" * (limit - len('{"k":""}'))}
        self.assertEqual(len(instinct._check_metadata(fits).encode()), limit)
        for bad in ([1], "{}", 3, {"k": "x" * limit}, {"k": float("nan")}, {"k": {1, 2}},
                    {"k": "\ud800"}):
            with self.subTest(bad=repr(bad)[:40]):
                with self.assertRaises(ValidationError):
                    instinct._check_metadata(bad)


# =============================================================================
# 6. Domain logic: patterns and categories
# =============================================================================
NORMALISATION = [
    # (spelling, canonical)
    ("seq:test->fix->test", "seq:test->fix->test"),
    ("seq:test - fix - test", "seq:test->fix->test"),
    ("seq:test -> fix -> test", "seq:test->fix->test"),
    ("seq:test \u2192 fix \u2192 test", "seq:test->fix->test"),
    ("seq:test\u2192fix\u2192test", "seq:test->fix->test"),
    ("  seq:test->fix->test  ", "seq:test->fix->test"),
    ("SEQ:test->fix->test", "seq:test->fix->test"),
    ("Seq:  test   ->   fix->test", "seq:test->fix->test"),
    ("pref:style = black", "pref:style=black"),
    ("PREF:style=black", "pref:style=black"),
    ("combo:pytest + coverage", "combo:pytest+coverage"),
    ("combo:pytest  +coverage", "combo:pytest+coverage"),
    ("fix:missing   import", "fix:missing import"),
    ("fix:\tmissing import".replace("\t", " "), "fix:missing import"),
    ("plain words  here", "plain words here"),
    ("pref:nai\u0308ve", "pref:na\u00efve"),                  # NFC
    ("seq:a \u27f6 b", "seq:a->b"),
]

CATEGORIES = [
    ("seq:a->b", "sequence"), ("pref:stdlib-first", "preference"),
    ("fix:missing-import", "fix_pattern"), ("combo:pytest+coverage", "combo"),
    ("SEQ:x", "sequence"), ("PREF:x", "preference"), ("Fix:x", "fix_pattern"),
    ("COMBO:x", "combo"), ("other:thing", "sequence"), ("no prefix at all", "sequence"),
]


class TestPatterns(StoreCase):

    def test_normalisation_table(self):
        for spelling, canonical in NORMALISATION:
            with self.subTest(spelling=spelling):
                self.assertEqual(instinct.normalize_pattern(spelling), canonical)
                self.assertEqual(instinct.normalize_pattern(canonical), canonical)

    def test_normalisation_is_idempotent(self):
        rng = random.Random(20260101)
        parts = ["a", "B", " ", "  ", "-", ">", "=", "+", ":", "->", " - ", " > ", "\u2192", "seq:",
                 "SEQ:", "pref:", "=>", "\u27f6", "e\u0301", "_", "\u00e9"]
        checked = 0
        for _ in range(20000):
            s = "".join(rng.choice(parts) for _ in range(rng.randint(1, 10)))
            try:
                once = instinct.normalize_pattern(s)
            except ValidationError:
                continue
            checked += 1
            self.assertEqual(instinct.normalize_pattern(once), once, repr(s))
        self.assertGreater(checked, 10000)

    def test_spelling_variants_count_as_one_habit(self):
        variants = [s for s, c in NORMALISATION if c == "seq:test->fix->test"]
        for i, v in enumerate(variants, 1):
            r = self.store.observe(v)
            self.assertEqual((r["pattern"], r["confidence"]), ("seq:test->fix->test", i))
        self.assertEqual(self.counts()[0], 1)
        self.assertEqual(self.store.get("seq:test - fix - test")["confidence"], len(variants))

    def test_category_from_prefix(self):
        for pattern, category in CATEGORIES:
            with self.subTest(pattern=pattern):
                self.assertEqual(self.store.observe(pattern)["category"], category)
                self.assertEqual(instinct.category_for(instinct.normalize_pattern(pattern)), category)

    def test_explicit_category_wins_and_is_stored(self):
        r = self.store.observe("seq:a->b", category="Workflow")
        self.assertEqual(r["category"], "workflow")
        self.assertEqual(self.sql("SELECT category FROM instincts")[0][0], "workflow")
        # an observe without a category keeps the stored one
        self.assertEqual(self.store.observe("seq:a->b")["category"], "workflow")

    def _assert_refused(self, call, before):
        with self.assertRaises(ValidationError):
            call()
        self.assertEqual(self.counts(), before)

    def test_invalid_patterns_are_refused_and_nothing_written(self):
        self.store.observe("seq:keep")
        before = self.counts()
        bad = ["", "   ", "\t", "x" * 1001, "a\x00b", "a\x1bb", "a\nb", "a\tb", "a\x7fb",
               "a\u0085b", "a\ud800b", "seq:", "seq:   ", None, 42, b"seq:a", ["seq:a"]]
        for pattern in bad:
            with self.subTest(pattern=repr(pattern)[:30]):
                self._assert_refused(lambda: self.store.observe(pattern), before)
        self.assertEqual(self.store.observe("x" * 1000)["pattern"], "x" * 1000)

    def test_invalid_other_arguments_are_refused_and_nothing_written(self):
        self.store.observe("seq:keep")
        before = self.counts()
        cases = {
            "metadata list": dict(metadata=[1, 2]),
            "metadata string": dict(metadata='{"a": 1}'),
            "metadata too big": dict(metadata={"k": "x" * (64 * 1024)}),
            "metadata not JSON": dict(metadata={"k": object()}),
            "metadata NaN": dict(metadata={"k": float("inf")}),
            "category int": dict(category=3),
            "category empty": dict(category=""),
            "category spaces": dict(category="two words"),
            "source int": dict(source=1),
            "source control": dict(source="a\x00"),
            "source long": dict(source="s" * 201),
            "project int": dict(project=7),
            "project bogus": dict(project="not-a-fingerprint"),
        }
        for name, kw in cases.items():
            with self.subTest(name):
                self._assert_refused(lambda: self.store.observe("seq:new", **kw), before)
        self.assertEqual(self.conf("seq:keep"), 1)

    def test_metadata_merge_overflow_rolls_back(self):
        half = 40 * 1024
        self.store.observe("pref:x", metadata={"a": "x" * half})
        before = self.counts()
        with self.assertRaises(ValidationError):
            self.store.observe("pref:x", metadata={"b": "y" * half})
        self.assertEqual(self.counts(), before)
        self.assertEqual(self.store.get("pref:x")["metadata"], {"a": "x" * half})

    def test_metadata_is_merged(self):
        self.store.observe("pref:x", metadata={"a": 1, "b": 1})
        r = self.store.observe("pref:x", metadata={"b": 2, "c": "\u00e9"})
        self.assertEqual(r["metadata"], {"a": 1, "b": 2, "c": "\u00e9"})
        self.assertEqual(self.store.observe("pref:x")["metadata"], {"a": 1, "b": 2, "c": "\u00e9"})


# =============================================================================
# 6. Domain logic: project fingerprints
# =============================================================================
class TestFingerprint(StoreCase):

    def setUp(self):
        super().setUp()
        self.repo = self.tmp / "repo"
        (self.repo / ".git").mkdir(parents=True)
        self.deep = self.repo / "src" / "pkg" / "deep"
        self.deep.mkdir(parents=True)

    def _marker_free_tmp(self):
        """A temporary directory with no project marker in it or above it (skip if none)."""
        markers = instinct.ROOT_MARKERS + instinct.PROJECT_MARKERS
        for base in (tempfile.gettempdir(), "/dev/shm", "/var/tmp"):
            base = Path(base).resolve()
            if base.is_dir() and os.access(base, os.W_OK) and not any(
                    (d / m).exists() for d in (base, *base.parents) for m in markers):
                tmp = tempfile.TemporaryDirectory(dir=base)
                self.addCleanup(tmp.cleanup)
                return Path(tmp.name).resolve()
        self.skipTest("every temporary location sits below a project marker")

    def test_formula_is_sha256_of_resolved_root(self):
        self.assertEqual(instinct.project_fingerprint(self.repo), _sha12(self.repo))
        self.assertRegex(instinct.project_fingerprint(self.repo), r"^[0-9a-f]{12}$")

    def test_subdirectory_of_git_repo_is_the_same_project(self):
        fp = _sha12(self.repo)
        for p in (self.repo, self.repo / "src", self.deep, str(self.deep) + "/"):
            with self.subTest(path=str(p)):
                self.assertEqual(instinct.project_fingerprint(p), fp)
                self.assertEqual(instinct.project_root(p), str(self.repo))
        f = self.deep / "file.py"
        f.write_text("x = 1\n")
        self.assertEqual(instinct.project_fingerprint(f), fp)

    def test_git_root_wins_over_nested_build_file(self):
        (self.repo / "src" / "pyproject.toml").write_text("")
        self.assertEqual(instinct.project_fingerprint(self.deep), _sha12(self.repo))

    def test_build_file_marks_root_without_vcs(self):
        proj = self._marker_free_tmp() / "plain"
        (proj / "a" / "b").mkdir(parents=True)
        (proj / "package.json").write_text("{}")
        self.assertEqual(instinct.project_fingerprint(proj / "a" / "b"), _sha12(proj))

    def test_tree_without_markers_uses_the_directory_itself(self):
        d = self._marker_free_tmp() / "loose" / "sub"
        d.mkdir(parents=True)
        self.assertEqual(instinct.project_fingerprint(d), _sha12(d))
        self.assertNotEqual(instinct.project_fingerprint(d), instinct.project_fingerprint(d.parent))

    def test_markers_in_the_home_directory_do_not_make_it_a_project(self):
        home = self.tmp / "home"
        (home / ".git").mkdir(parents=True)          # a dotfiles repository
        (home / "package.json").write_text("{}")     # and a stray build file
        loose = home / "notes" / "today"
        loose.mkdir(parents=True)
        (home / "code" / "app" / ".git").mkdir(parents=True)
        with mock.patch.dict(os.environ, {"HOME": str(home)}):
            self.assertEqual(instinct.project_root(loose), str(loose.resolve()))
            self.assertEqual(instinct.project_root(home / "code" / "app"), str((home / "code" / "app").resolve()))
            self.assertEqual(instinct.project_root(home), str(home.resolve()))

    def test_symlinked_path_resolves_to_the_same_project(self):
        link = self.tmp / "link"
        link.symlink_to(self.deep)
        self.assertEqual(instinct.project_fingerprint(link), _sha12(self.repo))

    def test_project_parameter_forms(self):
        fp = _sha12(self.repo)
        for given, stored in (("", ""), (FP_A, FP_A), (str(self.repo), fp), (str(self.deep), fp)):
            with self.subTest(given=given):
                r = self.store.observe("seq:p", project=given)
                self.assertEqual(r["project"], stored)
        self.assertEqual(self.conf("seq:p", project=fp), 2)
        self.assertEqual(self.conf("seq:p", project=str(self.deep)), 2)

    def test_project_parameter_refuses_anything_else(self):
        f = self.tmp / "file.txt"
        f.write_text("x")
        self.store.observe("seq:keep")
        before = self.counts()
        for bad in ("abc", "ABCDEFABCDEF", "abcdefabcde", "abcdefabcdefa", "abcdefabcdeg",
                    str(self.tmp / "missing"), str(f), 12, b"", "x\x00"):
            with self.subTest(bad=bad):
                with self.assertRaises(ValidationError):
                    self.store.observe("seq:p", project=bad)
                with self.assertRaises(ValidationError):
                    self.store.suggest(project=bad)
        self.assertEqual(self.counts(), before)

    def test_same_project_from_a_different_working_directory(self):
        writer = self.open(cwd=str(self.repo))
        self.assertEqual(writer.observe("seq:x", project=str(self.deep))["project"], _sha12(self.repo))
        writer.consolidate()
        self.observe_n("seq:x", 4, project=str(self.repo))
        self.store.consolidate()
        reader = self.open(cwd=str(self.deep))
        self.assertEqual([r["pattern"] for r in reader.suggest()], ["seq:x"])


# =============================================================================
# 7. Schema and migrations
# =============================================================================
class TestMigrations(StoreCase):

    def _schema(self, path=None):
        return (self.sql("PRAGMA user_version", path=path)[0][0],
                self.sql("SELECT type, name, sql FROM sqlite_master ORDER BY name", path=path))

    def test_fresh_file_reaches_schema_version(self):
        self.store.stats()
        version, schema = self._schema()
        self.assertEqual(version, instinct.SCHEMA_VERSION)
        names = {n for _, n, _ in schema}
        self.assertTrue({"instincts", "events", "settings", "aliases"} <= names, names)
        cols = {r[1] for r in self.sql("PRAGMA table_info(instincts)")}
        self.assertTrue(instinct._Schema.SEED_COLUMNS <= cols)

    def test_reopen_is_a_no_op(self):
        self.store.observe("seq:a")
        self.store.close()
        before = self._schema()
        data = self.sql("SELECT * FROM instincts")
        again = self.open()
        self.assertEqual(again.get("seq:a")["confidence"], 1)
        again.close()
        self.assertEqual(self._schema(), before)
        self.assertEqual(self.sql("SELECT * FROM instincts"), data)

    def test_seeds_database_is_upgraded_in_place(self):
        path = self.tmp / "seeds.db"
        rows = seeds_db(path)
        store = self.open(path)
        got = {(r["pattern"], r["project"]): r for r in store.list(min_confidence=0)}
        self.assertEqual(len(got), len(rows))
        for p, c, n, f, l, s, pr, pm, m in rows:
            with self.subTest(pattern=p):
                r = got[(p, pr)]
                self.assertEqual((r["category"], r["confidence"], r["promoted"], r["source"]),
                                 (c, n, pm, s))
                self.assertEqual(r["level"], instinct.LEVELS[pm])
                self.assertEqual(r["metadata"], json.loads(m))
                # same instant (the original wrote naive isoformat; read as UTC)
                self.assertEqual(instinct._parse_iso(r["first_seen"]),
                                 f.replace(tzinfo=timezone.utc).timestamp())
                self.assertEqual(instinct._parse_iso(r["last_seen"]),
                                 l.replace(tzinfo=timezone.utc).timestamp())
        self.assertEqual(self._schema(path)[0], instinct.SCHEMA_VERSION)
        self.assertEqual(self.sql("PRAGMA integrity_check", path=path), [("ok",)])
        # the upgraded rows keep counting, in their own project
        self.assertEqual(store.observe("seq:test->fix->test")["confidence"], 9)
        self.assertEqual(store.observe("fix:missing-init", project="3f2a9c1b7d4e")["confidence"], 7)
        self.assertEqual(store.observe("pref:stdlib-first")["promoted"], 2)
        self.assertEqual([r["pattern"] for r in store.search("coverage")], ["combo:pytest+coverage"])
        counts = store.consolidate()
        self.assertEqual(counts["total"], len(rows))
        self.assertEqual(counts["demoted"], 0)
        self.assertEqual(store.get("seq:lint->fix->test")["level"], "raw")

    def _old_event_log(self, version, pending=None):
        """A store left at schema `version` holding seq:p0's row and 30 observe events (seq:p0,
        p1, p2: 10 each; `pending(i)` fills v8's lazy-index column), opened by this instinct
        -> (store, path), after checking the upgrade kept seq:p0's 10 events."""
        path = self.tmp / f"v{version}.db"
        con = old_schema_db(path, version)
        ts = "2026-01-01T00:00:00.000000+00:00"
        if pending is None:
            con.executemany("INSERT INTO events (ts, kind, pattern, project, delta) VALUES (?,'observe',?,'',1)",
                            [(ts, f"seq:p{i % 3}") for i in range(30)])
        else:
            con.executemany("INSERT INTO events (ts, kind, pattern, project, delta, pending)"
                            " VALUES (?,'observe',?,'',1,?)", [(ts, f"seq:p{i % 3}", pending(i)) for i in range(30)])
        con.execute("INSERT INTO instincts (pattern, first_seen, last_seen, confidence)"
                    " VALUES ('seq:p0', 'x', 'x', 10)")
        con.close()
        store = self.open(path)
        self.assertEqual(len(store.history("seq:p0")["events"]), 10)
        self.assertEqual(self._schema(path)[0], instinct.SCHEMA_VERSION)
        return store, path

    def test_v7_event_log_is_upgraded_with_every_event_indexed(self):
        store, path = self._old_event_log(7)
        self.assertNotIn("pending", self.sql("SELECT sql FROM sqlite_master WHERE name ="
                                             " 'ix_events_pattern'", path=path)[0][0])
        store.observe("seq:p0")
        self.assertEqual(len(store.history("seq:p0")["events"]), 11)
        self.assertEqual(self.sql("SELECT count(*) FROM events INDEXED BY ix_events_pattern"
                                  " WHERE pattern = 'seq:p0' AND project = '' AND pattern != ''", path=path), [(11,)])
        self.assertEqual(self.sql("PRAGMA integrity_check", path=path), [("ok",)])

    def test_v8_lazy_event_index_is_removed_with_every_event_indexed(self):
        _, path = self._old_event_log(8, pending=lambda i: int(i >= 20))       # 10 outside the index
        names = {n for (n,) in self.sql("SELECT name FROM sqlite_master", path=path)}
        self.assertNotIn("events_state", names)
        self.assertNotIn("events_pending_ai", names)
        cols = {r[1] for r in self.sql("PRAGMA table_info(events)", path=path)}
        if sqlite3.sqlite_version_info >= (3, 35, 0):
            self.assertNotIn("pending", cols)
        for i in range(3):
            self.assertEqual(self.sql("SELECT count(*) FROM events INDEXED BY ix_events_pattern"
                                      " WHERE pattern = ? AND project = '' AND pattern != ''", (f"seq:p{i}",), path=path),
                             [(10,)])
        self.assertEqual(self.sql("PRAGMA integrity_check", path=path), [("ok",)])

    def _foreign_file(self, name, *statements):
        """A database file made by someone else -> (path, its bytes)."""
        path = self.tmp / name
        con = sqlite3.connect(str(path))
        for stmt in statements:
            con.execute(stmt)
        con.commit()
        con.close()
        return path, path.read_bytes()

    def _observe_refused(self, path):
        store = InstinctStore(str(path), clock=self.clock)
        with self.assertRaises(StoreError) as cm:
            store.observe("seq:a")
        store.close()
        return cm

    def test_newer_schema_is_refused_untouched(self):
        path, before = self._foreign_file("future.db", "CREATE TABLE x (y)",
                                          f"PRAGMA user_version = {instinct.SCHEMA_VERSION + 1}")
        cm = self._observe_refused(path)
        self.assertIn("newer", str(cm.exception))
        self.assertEqual(path.read_bytes(), before)

    def test_another_applications_database_is_refused_untouched(self):
        path, before = self._foreign_file("app.sqlite",
                                          "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)",
                                          "INSERT INTO users (name) VALUES ('ada')")
        proc = self.cli_process("observe", "seq:a", db=path)
        self.assertIn("not an instinct database", self.assertOneLineError(proc, 1))
        self.assertEqual(path.read_bytes(), before)
        self.assertEqual(self.sql("SELECT name FROM sqlite_master", path=path), [("users",)])

    def test_foreign_instincts_table_is_refused(self):
        path, before = self._foreign_file("foreign.db",
                                          "CREATE TABLE instincts (id INTEGER PRIMARY KEY, name TEXT)",
                                          "INSERT INTO instincts (name) VALUES ('mine')")
        cm = self._observe_refused(path)
        self.assertEqual(path.read_bytes(), before)
        self.assertIn("did not create", str(cm.exception))
        self.assertEqual(self.sql("SELECT * FROM instincts", path=path), [(1, "mine")])
        self.assertEqual(self._schema(path)[0], 0)
        self.assertEqual([n for _, n, _ in self._schema(path)[1]], ["instincts"])


# =============================================================================
# 8. Database connection: storage safety
# =============================================================================
class TestStorage(StoreCase):

    def test_wal_mode_and_busy_timeout(self):
        self.store.observe("seq:a")
        self.assertEqual(self.sql("PRAGMA journal_mode"), [("wal",)])
        conn = self.store._db.conn
        self.assertEqual(conn.execute("PRAGMA busy_timeout").fetchone()[0],
                         int(instinct.BUSY_TIMEOUT_S * 1000))

    def test_explicit_path_file_is_0600(self):
        self.store.observe("seq:a")
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.db) + suffix)
            if p.exists():
                with self.subTest(file=p.name):
                    self.assertEqual(stat.S_IMODE(p.stat().st_mode), 0o600)

    def test_explicit_path_in_missing_directory_is_not_created(self):
        path = self.tmp / "missing" / "x.db"
        store = InstinctStore(str(path))
        with self.assertRaises(StoreError) as cm:
            store.observe("seq:a")
        self.assertIn("does not exist", str(cm.exception))
        self.assertFalse(path.parent.exists())

    def test_default_path_creates_0700_dir_and_0600_file(self):
        home = self.tmp / "home"
        home.mkdir()
        code = ("import instinct; s = instinct.InstinctStore(); s.observe('seq:a'); "
                "print(s.path); s.close()")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60, cwd=str(HERE), env=child_env(home))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        d = home / ".instinct"
        self.assertEqual(proc.stdout.strip(), str(d / "instinct.db"))
        self.assertEqual(stat.S_IMODE(d.stat().st_mode), 0o700)
        self.assertEqual(stat.S_IMODE((d / "instinct.db").stat().st_mode), 0o600)
        # the CLI uses the same default
        proc = self.cli_process("observe", "seq:a", env=child_env(home))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("conf=2", proc.stdout)

    def test_not_a_database_exits_1_file_untouched(self):
        path = self.tmp / "notes.txt"
        content = b"These are my notes, not a database.\n" * 200
        path.write_bytes(content)
        for args in (["observe", "seq:a"], ["suggest"], ["stats"]):
            with self.subTest(args=args):
                proc = self.cli_process(*args, db=path)
                line = self.assertOneLineError(proc, 1)
                self.assertIn(str(path), line)
                self.assertEqual(path.read_bytes(), content)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["notes.txt"])
        with self.assertRaises(StoreError):
            InstinctStore(str(path)).suggest(project="")
        tiny = self.tmp / "tiny.txt"
        tiny.write_bytes(b"hi\n")
        self.assertOneLineError(self.cli_process("observe", "seq:a", db=tiny), 1)
        self.assertEqual(tiny.read_bytes(), b"hi\n")

    def test_missing_directory_and_path_under_a_file_exit_1(self):
        f = self.tmp / "file.txt"
        f.write_text("hello")
        for path in (self.tmp / "nope" / "x.db", f / "x.db"):
            with self.subTest(path=str(path)):
                proc = self.cli_process("observe", "seq:a", db=path)
                self.assertOneLineError(proc, 1)
                self.assertFalse((self.tmp / "nope").exists())
                self.assertEqual(f.read_text(), "hello")

    def test_default_directory_that_cannot_be_created_exits_1(self):
        home = self.tmp / "homefile"
        home.write_text("not a directory")
        proc = self.cli_process("observe", "seq:a", env=child_env(home))
        line = self.assertOneLineError(proc, 1)
        self.assertIn("cannot create directory", line)

    def test_read_only_directory_exits_1(self):
        ro = self.tmp / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        self.addCleanup(ro.chmod, 0o700)
        try:
            (ro / "probe").write_text("")
        except OSError:
            pass
        else:
            self.skipTest("this user can write into a 0500 directory (root)")
        proc = self.cli_process("observe", "seq:a", db=ro / "x.db")
        self.assertOneLineError(proc, 1)
        self.assertEqual(os.listdir(ro), [])

    def test_read_only_location_even_for_root(self):
        # sysfs refuses new files even for root; skip where that is not so
        target = "/sys/instinct-test-%d.db" % os.getpid()
        try:
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except OSError:
            pass
        else:
            os.unlink(target)
            self.skipTest("/sys accepts new files here")
        proc = self.cli_process("observe", "seq:a", db=target)
        self.assertOneLineError(proc, 1)

    def test_directory_as_database_path(self):
        proc = self.cli_process("observe", "seq:a", db=self.tmp)
        self.assertIn("is a directory", self.assertOneLineError(proc, 1))

    def test_usage_errors_exit_2(self):
        for args in (["observe"], ["frobnicate"], ["list", "--level", "bogus"],
                     ["observe", "x", "--meta", "[1]"], ["observe", "x", "--meta", "{bad"],
                     ["suggest", "--limit", "many"], ["observe", "x", "--bogus"]):
            with self.subTest(args=args):          # one line (issue 21), no usage block
                self.assertOneLineError(self.cli_process(*args), 2)
        proc = self.cli_process()          # no command at all: where to start (issue 32), exit 0
        self.assertEqual((proc.returncode, proc.stderr), (0, ""))
        self.assertIn("instinct init", proc.stdout)

    def test_validation_errors_exit_2_one_line(self):
        for args in (["observe", ""], ["observe", "a\x01b"], ["decay", "--days", "0"],
                     ["suggest", "--project", "nowhere-xyz"], ["config", "nosuchkey"]):
            with self.subTest(args=args):
                self.assertOneLineError(self.cli_process(*args), 2)


class TestConcurrency(StoreCase):
    PATTERNS = ("seq:test->fix->test", "pref:stdlib-first", "combo:pytest+coverage")
    PROJECTS = ("", FP_A)

    CHILD = r"""
import sys
sys.path.insert(0, sys.argv[1])
import instinct
pats, projs = %r, %r
s = instinct.InstinctStore(sys.argv[2])
errors = 0
for i in range(int(sys.argv[3])):
    try:
        s.observe(pats[i %% len(pats)], project=projs[(i // len(pats)) %% len(projs)],
                  source="w" + sys.argv[4])
    except Exception as e:
        errors += 1
        sys.stderr.write(repr(e) + "\n")
s.close()
print(errors)
"""

    def _spawn(self, code, procs, per):
        """`procs` child Pythons running CHILD-shaped `code`, `per` observes each -> the Popens."""
        return [subprocess.Popen([sys.executable, "-c", code, str(HERE), str(self.db), str(per), str(k)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=child_env(self.tmp))
                for k in range(procs)]

    def test_processes_observing_the_same_patterns_get_exact_totals(self):
        procs, n, per = 8, 2000, 2000
        self.store.stats()                       # create the file first
        self.store.close()
        code = self.CHILD % (self.PATTERNS, self.PROJECTS)
        children = self._spawn(code, procs, per)
        for c in children:
            out, err = c.communicate(timeout=120)
            self.assertEqual(c.returncode, 0, err)
            self.assertEqual(out.strip(), "0", err)
            self.assertNotIn("locked", err)
            self.assertEqual(err, "")
        expected = {}
        for i in range(per):
            key = (self.PATTERNS[i % 3], self.PROJECTS[(i // 3) % 2])
            expected[key] = expected.get(key, 0) + procs
        got = {(p, pr): c for p, pr, c in self.sql("SELECT pattern, project, confidence FROM instincts")}
        self.assertEqual(got, expected)
        self.assertEqual(sum(got.values()), procs * per)
        self.assertEqual(self.sql("SELECT count(*) FROM events WHERE kind = 'observe'"), [(procs * n,)])
        per_pattern = ("SELECT count(*) FROM events INDEXED BY ix_events_pattern"
                       " WHERE pattern = ? AND project = ? AND pattern != '' AND kind = 'observe'")
        for (p, pr), c in expected.items():
            self.assertEqual(self.sql(per_pattern, (p, pr)), [(c,)])
        self.assertEqual(self.sql("PRAGMA integrity_check"), [("ok",)])

    def _race(self, procs, per, pattern="seq:x"):
        code = self.CHILD % ((pattern,), ("",))
        children = self._spawn(code, procs, per)
        for c in children:
            out, err = c.communicate(timeout=120)
            self.assertEqual((c.returncode, out.strip(), err), (0, "0", ""))

    def test_processes_racing_to_create_a_fresh_file(self):
        self.assertFalse(self.db.exists())
        self._race(8, 50)
        self.assertEqual(self.conf("seq:x"), 400)
        self.assertEqual(self.sql("PRAGMA user_version"), [(instinct.SCHEMA_VERSION,)])

    def test_processes_racing_to_upgrade_a_seeds_file(self):
        seeds_db(self.db)
        self._race(6, 50, "seq:test->fix->test")
        self.assertEqual(self.conf("seq:test->fix->test"), 8 + 300)
        self.assertEqual(self.store.get("pref:stdlib-first")["confidence"], 12)
        self.assertEqual(len(self.store.list(min_confidence=0)), 6)

    def test_parallel_cli_processes(self):
        rounds, width = 5, 4
        env = child_env(self.tmp, self.db)
        for r in range(rounds):
            ps = [subprocess.Popen([sys.executable, str(INSTINCT_PY), "observe", "seq:cli->race",
                                    "--source", f"p{k}"], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=env)
                  for k in range(width)]
            for p in ps:
                out, err = p.communicate(timeout=60)
                self.assertEqual(p.returncode, 0, err)
                self.assertEqual(err, "")
                self.assertRegex(out, r"conf=\d+")
        self.assertEqual(self.conf("seq:cli->race"), rounds * width)
        self.assertEqual(self.sql("PRAGMA integrity_check"), [("ok",)])


class TestCrashSafety(StoreCase):
    CHILD = r"""
import sys
sys.path.insert(0, sys.argv[1])
import instinct
s = instinct.InstinctStore(sys.argv[2])
pats = ("seq:crash->a", "pref:crash-b", "fix:crash-c")
out = sys.stdout
i = 0
while True:
    p = pats[i % 3]
    r = s.observe(p, metadata={"i": i, "pad": "x" * (i % 7) * 100}, source="crash")
    out.write("%d %d\n" % (i % 3, r["confidence"]))
    out.flush()
    i += 1
"""

    def test_kill_9_mid_burst_keeps_every_acknowledged_observe(self):
        seed = random.randrange(1 << 30)
        rng = random.Random(seed)
        self.store.stats()
        self.store.close()
        pats = ("seq:crash->a", "pref:crash-b", "fix:crash-c")
        acked = [0, 0, 0]
        for rnd in range(6):
            child = subprocess.Popen([sys.executable, "-c", self.CHILD, str(HERE), str(self.db)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=child_env(self.tmp))
            target = rng.randrange(5, 400)
            for _ in range(target):
                line = child.stdout.readline()
                if not line:
                    break
                k, c = map(int, line.split())
                acked[k] = c
            os.kill(child.pid, signal.SIGKILL)
            rest = child.stdout.read()          # not communicate(): it skips readline's buffer
            err = child.stderr.read()
            child.wait(timeout=30)
            child.stdout.close()
            child.stderr.close()
            self.assertEqual(child.returncode, -signal.SIGKILL, f"seed={seed} {err!r}")
            for line in rest.decode().splitlines():
                parts = line.split()
                if len(parts) == 2:
                    acked[int(parts[0])] = int(parts[1])
            self.assertEqual(self.sql("PRAGMA integrity_check"), [("ok",)], f"seed={seed}")
            for k, p in enumerate(pats):
                rows = self.sql("SELECT confidence FROM instincts WHERE pattern = ?", (p,))
                have = rows[0][0] if rows else 0
                with self.subTest(round=rnd, pattern=p, seed=seed):
                    self.assertGreaterEqual(have, acked[k])
                    self.assertLessEqual(have, acked[k] + 1)   # at most one unacknowledged commit
        store = self.open()
        self.assertEqual(store.stats()["total"], 3)
        self.assertGreater(sum(acked), 30)

    BULK = r"""
import sys
sys.path.insert(0, sys.argv[1])
import instinct
t = [float(sys.argv[3])]
s = instinct.InstinctStore(sys.argv[2], clock=lambda: t[0])
out = sys.stdout
while True:
    t[0] += 91 * 86400
    r = s.decay(days_inactive=90)
    out.write("%d\n" % r["decayed"])
    out.flush()
"""

    def test_kill_9_mid_bulk_decay_is_all_or_nothing(self):
        rows, start = 1500, 10_000
        for i in range(rows):
            self.store.observe(f"seq:bulk{i}")
        self.store.close()
        con = sqlite3.connect(str(self.db))
        con.execute("UPDATE instincts SET confidence = ?", (start,))
        con.commit()
        con.close()
        seed = random.randrange(1 << 30)
        rng = random.Random(seed)
        done, t = 0, T0
        for rnd in range(4):
            child = subprocess.Popen([sys.executable, "-c", self.BULK, str(HERE), str(self.db), repr(t)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=child_env(self.tmp))
            for _ in range(rng.randrange(1, 6)):
                line = child.stdout.readline()
                if not line:
                    break
                self.assertEqual(int(line), rows)
                done += 1
            os.kill(child.pid, signal.SIGKILL)
            for line in child.stdout.read().split():
                self.assertEqual(int(line), rows)
                done += 1
            err = child.stderr.read()
            child.wait(timeout=30)
            child.stdout.close()
            child.stderr.close()
            self.assertEqual(child.returncode, -signal.SIGKILL, f"seed={seed} {err!r}")
            self.assertEqual(self.sql("PRAGMA integrity_check"), [("ok",)], f"seed={seed}")
            confs = self.sql("SELECT DISTINCT confidence FROM instincts")
            self.assertEqual(len(confs), 1, f"a decay was half applied (seed={seed}): {confs[:5]}")
            self.assertIn(start - confs[0][0], (done, done + 1), f"seed={seed}")
            done = start - confs[0][0]
            last = self.sql("SELECT max(decayed_at) FROM instincts")[0][0]
            t = instinct._parse_iso(last) + DAY if last else t     # the next child starts later
            self.assertEqual(self.sql("SELECT count(*) FROM instincts"), [(rows,)])


# =============================================================================
# 9. Operation registry (drift tests)
# =============================================================================
class TestRegistry(unittest.TestCase):
    NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

    def test_every_operation_and_param_is_documented(self):
        self.assertTrue(instinct.OPERATIONS)
        for op in instinct.OPERATIONS.values():
            with self.subTest(op=op.name):
                self.assertTrue(op.summary and op.summary.strip(), op.name)
                self.assertTrue(op.title)
                for p in op.params:
                    self.assertTrue(p.help and p.help.strip(), f"{op.name}.{p.name}")

    def test_params_match_the_method_signature(self):
        for op in instinct.OPERATIONS.values():
            with self.subTest(op=op.name):
                method = getattr(InstinctStore, op.name)
                sig = list(inspect.signature(method).parameters.values())[1:]
                self.assertEqual([p.name for p in op.params], [s.name for s in sig])
                for p, s in zip(op.params, sig):
                    self.assertEqual(p.required, s.default is inspect.Parameter.empty,
                                     f"{op.name}.{p.name}")
                    if p.default is not None:
                        self.assertEqual(p.default, s.default, f"{op.name}.{p.name}")

    def test_argparse_subcommands_are_the_operations_plus_extras(self):
        cmds = subcommands(instinct.build_parser())
        self.assertEqual(set(cmds), {op.cli for op in instinct.OPERATIONS.values()}
                         | set(instinct._CLI.EXTRAS))
        for op in instinct.OPERATIONS.values():
            sp = cmds[op.cli]
            opts = {s for a in sp._actions for s in a.option_strings}
            dests = {a.dest for a in sp._actions}
            for p in op.params:
                with self.subTest(op=op.name, param=p.name):
                    self.assertIn(p.name, dests)
                    if not p.positional:
                        self.assertIn(p.flag, opts)
            self.assertTrue({"--db", "--json"} <= opts, op.cli)

    def test_fast_path_reads_the_same_arguments_as_argparse(self):
        fast = instinct._CLI._fast_args
        sample = {str: "v", int: "3", dict: '{"a": 1}'}

        def slow(argv):
            args = instinct.build_parser(argv).parse_args(argv)
            kw = {p.name: getattr(args, p.name) for p in args._op.params}
            for p in args._op.params:
                if kw[p.name] is None and p.default is not None:
                    kw[p.name] = p.default
            return args._op, kw, getattr(args, "db", None), getattr(args, "json", False)
        for op in instinct.OPERATIONS.values():
            pos, flags, eq_flags = [], [], []
            for p in op.params:
                value = p.choices[-1] if p.choices else sample.get(p.type)
                if p.positional:
                    pos.append(value)
                elif p.type is bool:
                    flags.append(p.flag)
                    eq_flags.append(p.flag)
                else:
                    flags += [p.flag, value]
                    eq_flags.append(f"{p.flag}={value}")
            for argv in ([op.cli] + pos, [op.cli] + pos + flags, ["--json", op.cli] + flags + pos,
                         ["--db", "x.db", op.cli, *pos, *eq_flags, "--json"]):
                with self.subTest(argv=argv):
                    got = fast(argv)
                    self.assertIsNotNone(got, "the common forms must not need argparse")
                    self.assertEqual(got[0].name, slow(argv)[0].name)
                    self.assertEqual(got[1:], slow(argv)[1:])

    def test_fast_parser_builds_only_the_wanted_subcommand(self):
        for op in instinct.OPERATIONS.values():
            with self.subTest(op=op.cli):
                self.assertEqual(set(subcommands(instinct.build_parser([op.cli]))), {op.cli})

    def test_input_schemas(self):
        names = set()
        for op in instinct.OPERATIONS.values():
            with self.subTest(op=op.name):
                schema = op.input_schema()
                self.assertEqual(json.loads(json.dumps(schema)), schema)
                self.assertEqual(schema["type"], "object")
                props = schema.get("properties", {})
                self.assertTrue(set(schema.get("required", [])) <= set(props))
                for name in props:
                    self.assertRegex(name, self.NAME)
                self.assertEqual(schema_problems(schema), [])
                if op.mcp:
                    self.assertRegex(op.mcp, self.NAME)
                    self.assertNotIn(op.mcp, names)
                    names.add(op.mcp)

    def test_output_schemas_are_portable(self):
        for op in instinct.OPERATIONS.values():
            with self.subTest(op=op.name):
                schema = op.output_schema()
                self.assertEqual(json.loads(json.dumps(schema)), schema)
                self.assertEqual(schema["type"], "object")
                self.assertEqual(schema_problems(schema), [])
                self.assertTrue(set(schema.get("required", [])) <= set(schema.get("properties", {})))

    def test_coerce_checks_types(self):
        op = instinct.OPERATIONS["observe"]
        self.assertEqual(op.coerce({"pattern": "x", "metadata": {"a": 1}}),
                         {"pattern": "x", "metadata": {"a": 1}})
        for bad in ({}, {"pattern": 1}, {"pattern": "x", "bogus": 1}, {"pattern": "x", "metadata": []},
                    []):
            with self.subTest(bad=bad):
                with self.assertRaises(ValidationError):
                    op.coerce(bad)
        sug = instinct.OPERATIONS["suggest"]
        self.assertEqual(sug.coerce({"limit": 3.0}), {"limit": 3})
        for bad in ({"limit": True}, {"limit": 0}, {"limit": "3"}):
            with self.subTest(bad=bad):
                with self.assertRaises(ValidationError):
                    sug.coerce(bad)

    def test_sql_placeholders_are_plain_or_named(self):
        # numbered ?1 placeholders bound from a tuple warn on 3.12 and fail on 3.14
        src = (HERE / "instinct.py").read_text(encoding="utf-8")
        self.assertEqual(re.findall(r"\?\d", src), [])

    def test_readme_mentions_every_subcommand(self):
        readme = HERE / "README.md"
        if not readme.exists():
            self.skipTest("README.md does not exist yet (the lead is writing it)")
        text = readme.read_text(encoding="utf-8")
        cmds = {op.cli for op in instinct.OPERATIONS.values()} | set(instinct._CLI.EXTRAS)
        missing = sorted(c for c in cmds if not re.search(r"\b%s\b" % re.escape(c), text))
        self.assertEqual(missing, [], "README.md does not mention these subcommands")


# =============================================================================
# 10. Core API semantics (injected clock)
# =============================================================================
class TestAPI(StoreCase):

    def set(self, key, value):
        self.store.config(key, str(value))

    def level(self, pattern, project=""):
        return self.store.get(pattern, project=project)["level"]

    def test_observe_upserts(self):
        r1 = self.store.observe("seq:a->b", source="claude-code")
        self.assertEqual((r1["confidence"], r1["level"], r1["promoted"], r1["project"]), (1, "raw", 0, ""))
        self.assertEqual(r1["first_seen"], r1["last_seen"])
        self.assertEqual(r1["first_seen"], instinct._iso(T0))
        self.clock.advance(seconds=90)
        r2 = self.store.observe("seq:a->b")
        self.assertEqual(r2["confidence"], 2)
        self.assertEqual(r2["first_seen"], instinct._iso(T0))
        self.assertEqual(r2["last_seen"], instinct._iso(T0 + 90))
        self.assertEqual(r2["source"], "claude-code")          # an empty source keeps the old one
        self.assertEqual(self.store.observe("seq:a->b", source="cursor")["source"], "cursor")

    def test_same_pattern_in_two_projects_is_two_rows(self):
        self.observe_n("seq:x", 2, project=FP_A)
        self.observe_n("seq:x", 3, project=FP_B)
        self.store.observe("seq:x")
        rows = sorted(self.sql("SELECT project, confidence FROM instincts"))
        self.assertEqual(rows, [("", 1), (FP_A, 2), (FP_B, 3)])
        self.assertEqual(self.conf("seq:x", FP_B), 3)
        with self.assertRaises(NotFoundError):
            self.store.get("seq:x", project=FP_C)

    def test_only_consolidate_changes_levels(self):
        r = self.observe_n("seq:a", 12)
        self.assertEqual((r["confidence"], r["level"]), (12, "raw"))
        self.assertEqual(self.store.suggest(project=""), [])
        self.store.consolidate()
        self.assertEqual(self.level("seq:a"), "rule")
        self.clock.advance(days=100)
        self.store.decay(days_inactive=90)
        self.assertEqual(self.store.observe("seq:a")["level"], "rule")

    def test_consolidate_counts(self):
        for i in range(3):
            self.observe_n(f"seq:m{i}", 5)
        self.observe_n("pref:r", 10)
        self.observe_n("seq:raw", 4)
        self.observe_n("fix:jump", 12)
        counts = self.store.consolidate()
        self.assertEqual(counts, {"promoted_mature": 3, "promoted_rule": 2, "promoted_universal": 0,
                                  "demoted": 0, "total": 6})
        self.assertEqual(self.store.consolidate(), {"promoted_mature": 0, "promoted_rule": 0,
                                                    "promoted_universal": 0, "demoted": 0, "total": 6})
        self.observe_n("seq:raw", 1)
        self.observe_n("seq:m0", 5)
        self.assertEqual(self.store.consolidate(), {"promoted_mature": 1, "promoted_rule": 1,
                                                    "promoted_universal": 0, "demoted": 0, "total": 6})
        self.assertEqual({r["pattern"]: r["level"] for r in self.store.list()},
                         {"seq:m0": "rule", "seq:m1": "mature", "seq:m2": "mature", "pref:r": "rule",
                          "seq:raw": "mature", "fix:jump": "rule"})

    def test_demotion_after_decay(self):
        self.observe_n("seq:m", 5)
        self.observe_n("pref:r", 10)
        self.store.consolidate()
        self.clock.advance(days=91)
        self.assertEqual(self.store.decay(), {"decayed": 2, "deleted": 0, "total": 2})
        self.assertEqual(self.store.consolidate(), {"promoted_mature": 0, "promoted_rule": 0,
                                                    "promoted_universal": 0, "demoted": 2, "total": 2})
        self.assertEqual((self.level("seq:m"), self.level("pref:r")), ("raw", "mature"))

    def test_thresholds_store_wide(self):
        self.observe_n("seq:a", 3)
        self.observe_n("seq:b", 7)
        self.set("mature_threshold", 3)
        self.set("rule_threshold", 7)
        self.assertEqual(self.store.consolidate()["promoted_mature"], 1)
        self.assertEqual((self.level("seq:a"), self.level("seq:b")), ("mature", "rule"))
        self.assertEqual(self.store.config("mature_threshold"), {"mature_threshold": 3})
        self.assertEqual(self.store.config("mature_threshold", "default"), {"mature_threshold": 5})
        self.assertEqual(self.store.consolidate()["demoted"], 1)
        self.assertEqual(self.level("seq:a"), "raw")

    def test_thresholds_precedence_pattern_over_category_over_store(self):
        self.set("mature_threshold", 3)
        self.set("category.preference.mature_threshold", 4)
        self.set("pattern.pref:special.mature_threshold", 6)
        self.set("category.fix_pattern.rule_threshold", 6)
        cases = {   # pattern: (observations, expected level)
            "seq:three": (3, "mature"),          # store-wide 3
            "pref:three": (3, "raw"),            # category 4 beats store-wide 3
            "pref:four": (4, "mature"),          # category 4
            "pref:special": (5, "raw"),          # pattern 6 beats category 4
            "fix:six": (6, "rule"),              # category rule threshold 6
            "fix:five": (5, "mature"),
        }
        for p, (n, _) in cases.items():
            self.observe_n(p, n)
        self.store.consolidate()
        for p, (_, lv) in cases.items():
            with self.subTest(pattern=p):
                self.assertEqual(self.level(p), lv)
        self.observe_n("pref:special", 1)
        self.store.consolidate()
        self.assertEqual(self.level("pref:special"), "mature")
        # pattern keys are normalised, category keys lower-cased
        self.assertEqual(self.store.config("pattern.PREF:special.mature_threshold"),
                         {"pattern.pref:special.mature_threshold": 6})
        self.assertEqual(self.store.config("category.Preference.mature_threshold", "4"),
                         {"category.preference.mature_threshold": 4})

    def test_config_refuses_bad_keys_and_values(self):
        for key, value in (("nope", "3"), ("mature_threshold", "x"), ("mature_threshold", "0"),
                           ("category..mature_threshold", "3"), ("pattern.seq:a.bogus", "3"),
                           ("", None), ("mature_threshold", 3)):
            self.store.stats()
            with self.subTest(key=key, value=value):
                with self.assertRaises(ValidationError):
                    self.store.config(key, value)
        with self.assertRaises(ValidationError):
            self.store.config(None, "3")
        self.assertEqual(self.sql("SELECT count(*) FROM settings"), [(0,)])
        self.assertEqual(self.store.config(), {k: d for k, (d, _) in instinct.SETTINGS.items()})

    def test_universal_is_a_rule_in_two_projects(self):
        self.observe_n("pref:stdlib-first", 10, project=FP_A)
        self.observe_n("pref:stdlib-first", 9, project=FP_B)
        self.observe_n("pref:only-a", 10, project=FP_A)
        c = self.store.consolidate()
        self.assertEqual((c["promoted_rule"], c["promoted_mature"], c["promoted_universal"]), (2, 1, 0))
        self.store.observe("pref:stdlib-first", project=FP_B)
        c = self.store.consolidate()
        self.assertEqual((c["promoted_universal"], c["demoted"]), (2, 0))
        self.assertEqual(self.level("pref:stdlib-first", FP_A), "universal")
        self.assertEqual(self.level("pref:stdlib-first", FP_B), "universal")
        self.assertEqual(self.level("pref:only-a", FP_A), "rule")
        # a project that never saw it gets the universal habit, not A's project rule
        self.assertEqual([(r["pattern"], r["level"]) for r in self.store.suggest(project=FP_C)],
                         [("pref:stdlib-first", "universal")])
        self.set("universal_projects", 3)
        self.assertEqual(self.store.consolidate()["demoted"], 2)

    def test_suggest_scope_and_order(self):
        def at(pattern, n, project=""):
            self.observe_n(pattern, n, project=project)
        at("seq:raw-global", 4)
        at("seq:mature-global-6", 6)
        at("seq:mature-global-8", 8)
        at("pref:rule-global", 10)
        at("fix:mature-a", 7, FP_A)
        at("fix:rule-a", 11, FP_A)
        at("fix:mature-b", 9, FP_B)
        at("combo:uni", 10, FP_B)
        at("combo:uni", 12, FP_C)
        self.store.consolidate()
        got = [(r["pattern"], r["confidence"], r["level"]) for r in self.store.suggest(project=FP_A)]
        self.assertEqual(got, [("combo:uni", 12, "universal"), ("fix:rule-a", 11, "rule"),
                               ("pref:rule-global", 10, "rule"), ("seq:mature-global-8", 8, "mature"),
                               ("fix:mature-a", 7, "mature"), ("seq:mature-global-6", 6, "mature")])
        self.assertEqual([r["pattern"] for r in self.store.suggest(project="")],
                         ["combo:uni", "pref:rule-global", "seq:mature-global-8", "seq:mature-global-6"])
        b = [(r["pattern"], r["project"]) for r in self.store.suggest(project=FP_B)]
        self.assertEqual(b[0], ("combo:uni", FP_B))              # the own project's row
        self.assertIn(("fix:mature-b", FP_B), b)
        self.assertNotIn("fix:mature-a", [p for p, _ in b])
        self.assertEqual(len(self.store.suggest(project=FP_A, limit=2)), 2)
        self.assertTrue(all(r["level"] != "raw" for r in self.store.suggest(project=FP_A)))

    def test_suggest_default_project_is_the_working_directory(self):
        repo = self.tmp / "repo"
        (repo / ".git").mkdir(parents=True)
        (repo / "sub").mkdir()
        other = self.tmp / "other"
        other.mkdir()
        self.observe_n("seq:here", 5, project=str(repo))
        self.observe_n("seq:global", 5)
        self.store.consolidate()
        in_repo = self.open(cwd=str(repo / "sub"))
        self.assertEqual([r["pattern"] for r in in_repo.suggest()], ["seq:global", "seq:here"])
        elsewhere = self.open(cwd=str(other))
        self.assertEqual([r["pattern"] for r in elsewhere.suggest()], ["seq:global"])

    def test_limits_must_be_positive(self):
        self.observe_n("seq:a", 5)
        self.observe_n("seq:b", 6)
        self.store.consolidate()
        self.assertEqual(len(self.store.suggest(project="", limit=1)), 1)
        for bad in (0, -1, True, "2"):
            with self.subTest(limit=bad):
                with self.assertRaises(ValidationError):
                    self.store.suggest(project="", limit=bad)

    def test_decay_refuses_bad_days(self):
        self.store.observe("seq:a")
        for bad in (0, -1, True, 1.5, "90", 10**26, float("nan")):
            with self.subTest(days=bad):
                with self.assertRaises(ValidationError):
                    self.store.decay(bad)
        self.assertEqual(self.conf("seq:a"), 1)
        # None is "not given" for every optional argument, as in MCP: the default (90 days)
        self.assertEqual(self.store.decay(None)["decayed"], 0)

    def test_decay_charges_once_per_period_and_deletes_at_zero(self):
        self.observe_n("seq:two", 2)
        self.store.observe("seq:one")
        self.clock.advance(days=89, seconds=86399)
        self.assertEqual(self.store.decay(90), {"decayed": 0, "deleted": 0, "total": 2})
        self.clock.advance(seconds=2)
        self.assertEqual(self.store.decay(90), {"decayed": 2, "deleted": 1, "total": 1})
        self.assertEqual(self.conf("seq:two"), 1)
        with self.assertRaises(NotFoundError):
            self.store.get("seq:one")
        self.assertEqual(self.store.decay(90)["decayed"], 0)     # same period: not again
        self.clock.advance(days=89)
        self.assertEqual(self.store.decay(90)["decayed"], 0)
        self.clock.advance(days=2)
        self.assertEqual(self.store.decay(90), {"decayed": 1, "deleted": 1, "total": 0})

    def test_decay_daily_equals_once(self):
        def run(schedule):
            tmp = tempfile.TemporaryDirectory()
            self.addCleanup(tmp.cleanup)
            clock = Clock()
            s = self.open(Path(tmp.name) / "d.db", clock=clock)
            for p, n in (("seq:a", 1), ("seq:b", 3), ("seq:c", 10)):
                for _ in range(n):
                    s.observe(p)
            clock.advance(days=20)
            s.observe("seq:c")                # observed later: its own inactive period
            clock.t = T0
            for day in schedule:
                clock.t = T0 + day * DAY
                s.decay(days_inactive=90)
            return {r["pattern"]: r["confidence"] for r in s.list(min_confidence=0)}
        daily = run(range(1, 92))
        once = run([91])
        self.assertEqual(daily, once)
        self.assertEqual(daily, {"seq:b": 2, "seq:c": 11})
        # daily over a longer span charges once per elapsed period, like weekly
        self.assertEqual(run(range(1, 200)), run(range(7, 200, 7)))
        self.assertEqual(run(range(1, 200))["seq:b"], 1)

    def test_observe_resets_the_inactive_period(self):
        self.observe_n("seq:a", 3)
        self.clock.advance(days=91)
        self.store.decay()
        self.store.observe("seq:a")
        self.clock.advance(days=89)
        self.assertEqual(self.store.decay()["decayed"], 0)
        self.clock.advance(days=2)
        self.assertEqual(self.store.decay()["decayed"], 1)
        self.assertEqual(self.conf("seq:a"), 2)

    def test_list_filters(self):
        self.observe_n("seq:a", 6)
        self.observe_n("pref:b", 3, project=FP_A)
        self.observe_n("fix:c", 1)
        self.observe_n("combo:d", 12, project=FP_B)
        self.store.consolidate()
        names = lambda rs: [r["pattern"] for r in rs]        # noqa: E731
        self.assertEqual(names(self.store.list()), ["combo:d", "seq:a", "pref:b", "fix:c"])
        self.assertEqual(names(self.store.list(min_confidence=3)), ["combo:d", "seq:a", "pref:b"])
        self.assertEqual(names(self.store.list(category="Preference")), ["pref:b"])
        self.assertEqual(names(self.store.list(project="")), ["seq:a", "fix:c"])
        self.assertEqual(names(self.store.list(project=FP_A)), ["pref:b"])
        self.assertEqual(names(self.store.list(level="rule")), ["combo:d"])
        self.assertEqual(names(self.store.list(level="raw", project="")), ["fix:c"])
        self.assertEqual(names(self.store.list(limit=2)), ["combo:d", "seq:a"])
        with self.assertRaises(ValidationError):
            self.store.list(level="expert")
        with self.assertRaises(ValidationError):
            self.store.list(project="nowhere/at/all")

    def _search_data(self):
        for p in ("seq:test->fix->test", "pref:stdlib-first", "combo:pytest+coverage",
                  "fix:missing-import", "pref:a_b", "pref:axb"):
            self.store.observe(p)

    def _search_checks(self, fts):
        names = lambda q: sorted(r["pattern"] for r in self.store.search(q))     # noqa: E731
        self.assertEqual(names("stdlib"), ["pref:stdlib-first"])
        self.assertEqual(names("coverage"), ["combo:pytest+coverage"])
        self.assertEqual(names("missing import"), ["fix:missing-import"])
        self.assertEqual(names("a_b"), ["pref:a_b"])
        self.assertEqual(names("->"), ["seq:test->fix->test"])
        self.assertEqual(names("nothing-like-this"), [])
        self.assertIn("seq:test->fix->test", names("test"))
        self.assertEqual(names("100%"), [])
        self.assertEqual(names('"quote'), [])
        self.assertEqual(len(self.store.search("pref", limit=2)), 2)
        with self.assertRaises(ValidationError):
            self.store.search("  ")
        self.assertEqual(self.store.stats()["fts"], fts)

    def test_search_fts(self):
        if not self.store._fts():
            self.skipTest("this SQLite build has no FTS5")
        self._search_data()
        self._search_checks(True)
        self.store.forget("pref:stdlib-first")
        self.assertEqual(self.store.search("stdlib"), [])

    def test_search_like_fallback_when_fts_table_is_missing(self):
        self.store.stats()
        con = sqlite3.connect(str(self.db))
        for t in ("instincts_fts_ai", "instincts_fts_ad", "instincts_fts_au"):
            con.execute(f"DROP TRIGGER IF EXISTS {t}")
        con.execute("DROP TABLE IF EXISTS instincts_fts")
        con.commit()
        con.close()
        self._search_data()
        self._search_checks(False)
        self.assertEqual(sorted(r["pattern"] for r in self.store.search("pytest")),
                         ["combo:pytest+coverage"])

    def test_search_like_fallback_when_fts_is_off(self):
        self.store._fts = lambda: False
        self._search_data()
        self._search_checks(False)

    def test_get_and_forget(self):
        self.observe_n("seq:a", 3, project=FP_A)
        self.assertEqual(self.store.get("seq:a", project=FP_A)["confidence"], 3)
        for call in (lambda: self.store.get("seq:a"), lambda: self.store.get("seq:zzz"),
                     lambda: self.store.forget("seq:a"), lambda: self.store.forget("seq:zzz", FP_A)):
            before = self.counts()
            with self.assertRaises(NotFoundError):
                call()
            self.assertEqual(self.counts(), before)
        r = self.store.forget("SEQ:a", project=FP_A)
        self.assertEqual((r["pattern"], r["confidence"]), ("seq:a", 3))
        with self.assertRaises(NotFoundError):
            self.store.get("seq:a", project=FP_A)
        self.assertTrue(self.store.observe("seq:a", project=FP_A)["forgotten"])    # forget is final
        self.store.unforget("seq:a", project=FP_A)
        self.assertEqual(self.store.observe("seq:a", project=FP_A)["confidence"], 1)

    def test_merge_folds_and_leaves_an_alias(self):
        self.clock.advance(days=1)
        self.observe_n("seq:lint-fix", 3)
        self.observe_n("seq:lint-fix", 2, project=FP_A)
        self.clock.advance(days=1)
        self.observe_n("seq:lint->fix", 4)
        r = self.store.merge("seq:lint-fix", "seq:lint->fix")
        self.assertEqual(r, {"alias": "seq:lint-fix", "pattern": "seq:lint->fix", "merged": 2})
        g = self.store.get("seq:lint->fix")
        self.assertEqual(g["confidence"], 7)
        self.assertEqual(g["first_seen"], instinct._iso(T0 + DAY))
        self.assertEqual(self.store.get("seq:lint->fix", project=FP_A)["confidence"], 2)
        self.assertEqual(self.sql("SELECT count(*) FROM instincts WHERE pattern = 'seq:lint-fix'"), [(0,)])
        # later observations of the alias count for the target
        self.assertEqual(self.store.observe("seq:lint-fix")["pattern"], "seq:lint->fix")
        self.assertEqual(self.conf("seq:lint->fix"), 8)
        self.assertEqual(self.store.get("seq:lint-fix")["pattern"], "seq:lint->fix")
        self.assertEqual(self.sql("SELECT count(*) FROM events WHERE pattern = 'seq:lint-fix'"), [(0,)])
        # aliases chain onto the final target; cycles are refused
        self.store.merge("seq:lint->fix", "seq:lint->fix->test")
        self.assertEqual(self.store.observe("seq:lint-fix")["pattern"], "seq:lint->fix->test")
        self.assertEqual(self.conf("seq:lint->fix->test"), 9)
        with self.assertRaises(ValidationError):
            self.store.merge("seq:lint->fix->test", "seq:lint-fix")
        with self.assertRaises(ValidationError):
            self.store.merge("seq:a", "SEQ:a")
        self.assertEqual(self.store.stats()["aliases"], 2)

    def test_alias_to_another_prefix_takes_the_targets_category(self):
        self.observe_n("missing-init", 2)
        self.observe_n("fix:missing-init", 1)
        self.store.merge("missing-init", "fix:missing-init")
        # a first observation of the alias in a new project: the canonical row, its category
        r = self.store.observe("missing-init", project=FP_A)
        self.assertEqual((r["pattern"], r["category"], r["confidence"]),
                         ("fix:missing-init", "fix_pattern", 1))
        r = self.store.observe("missing-init", project=FP_A)   # same clock instant: still counts
        self.assertEqual((r["pattern"], r["category"], r["confidence"]),
                         ("fix:missing-init", "fix_pattern", 2))
        # an explicit category wins, and later alias observations keep it
        self.store.observe("fix:missing-init", category="workflow", project=FP_B)
        r = self.store.observe("missing-init", project=FP_B)
        self.assertEqual((r["category"], r["confidence"]), ("workflow", 2))
        self.assertEqual(self.store.history("fix:missing-init", project=FP_A)["count"], 2)

    def test_export_rules(self):
        self.observe_n("pref:stdlib-first", 12)
        self.observe_n("seq:test->fix->test", 10, project=FP_A)
        self.observe_n("seq:almost", 9)
        self.store.consolidate()
        rules = self.store.export_rules()
        self.assertEqual([(r["pattern"], r["confidence"], r["level"]) for r in rules],
                         [("pref:stdlib-first", 12, "rule"), ("seq:test->fix->test", 10, "rule")])
        self.assertEqual(len(self.store.export_rules(min_confidence=9)), 3)
        md = self.store.export_rules(format="markdown")
        self.assertIsInstance(md, str)
        self.assertTrue(md.startswith("# "))
        self.assertIn("`pref:stdlib-first`", md)
        self.assertIn(FP_A, md)
        self.assertNotIn("seq:almost", md)
        with self.assertRaises(ValidationError):
            self.store.export_rules(format="yaml")

    def test_stats(self):
        self.observe_n("seq:a", 5)
        self.observe_n("pref:b", 10, project=FP_A)
        self.store.observe("pref:c", project=FP_B)
        self.store.consolidate()
        s = self.store.stats()
        self.assertEqual(s["total"], 3)
        self.assertEqual(s["by_level"], {"raw": 1, "mature": 1, "rule": 1, "universal": 0})
        self.assertEqual(s["by_category"], {"preference": 2, "sequence": 1})
        self.assertEqual((s["projects"], s["aliases"]), (2, 0))
        self.assertEqual(s["events"], self.sql("SELECT count(*) FROM events")[0][0])
        self.assertEqual(self.sql("SELECT count(*) FROM events WHERE kind = 'observe'"), [(16,)])
        self.assertEqual(s["schema_version"], instinct.SCHEMA_VERSION)
        self.assertEqual(s["db_path"], str(self.db))
        self.assertGreater(s["db_bytes"], 0)

    def test_event_log(self):
        s = self.open(session="sess-1")
        s.observe("seq:a", source="claude-code", project="")    # global, no project: calendar
        self.clock.advance(days=100)
        s.observe("seq:b")
        s.decay(days_inactive=90)
        s.forget("seq:b")
        rows = self.sql("SELECT ts, kind, pattern, project, source, session, delta FROM events ORDER BY id")
        # forget removes the pattern's events and logs no copy of it (issue 14)
        self.assertEqual(rows, [
            (instinct._iso(T0), "observe", "seq:a", "", "claude-code", "sess-1", 1),
            (instinct._iso(T0 + 100 * DAY), "decay", "seq:a", "", "", "sess-1", -1),
            (instinct._iso(T0 + 100 * DAY), "forget", "", "", "", "sess-1", -1),
        ])

    def test_event_log_pruned_by_rows(self):
        for i in range(10):
            self.store.observe(f"seq:{i}")
        self.set("events_max_rows", 4)
        self.store.consolidate()
        self.assertEqual([p for (p,) in self.sql("SELECT pattern FROM events ORDER BY id")],
                         ["seq:6", "seq:7", "seq:8", "seq:9"])

    def test_consolidate_prunes_a_huge_backlog_a_bounded_slice_at_a_time(self):
        # a log far past its retention (e.g. years of MCP observes with no consolidate) is cut
        # oldest first in short transactions, a bounded share per consolidate; gc cuts the rest
        for i in range(30):
            self.store.observe(f"seq:{i}")
        self.set("events_max_rows", 4)
        ends = []
        real_write = self.store._write

        def counting_write():
            ends.append(1)
            return real_write()
        with mock.patch.object(instinct._Core, "_PRUNE_PER_CONSOLIDATE", 10), \
                mock.patch.object(instinct._Core, "_DECAY_BATCH", 3), mock.patch.object(instinct._Core, "_YIELD_S", 0), \
                mock.patch.object(self.store, "_write", counting_write):
            self.store.consolidate()
            self.assertEqual(self.sql("SELECT min(id), count(*) FROM events WHERE kind = 'observe'"),
                             [(11, 20)])                 # the 10 oldest went
            ends.clear()
            self.store.consolidate()
            self.assertEqual(self.sql("SELECT min(id) FROM events WHERE kind = 'observe'"), [(21,)])
            self.assertEqual(len(ends), 1 + 4 + 1)      # levels, 4 slices of <= 3 rows, surface cap
            r = self.store.gc()
        self.assertGreater(r["events_pruned"], 0)
        self.assertEqual([p for (p,) in self.sql("SELECT pattern FROM events WHERE kind = 'observe'"
                                                 " ORDER BY id")], ["seq:26", "seq:27", "seq:28", "seq:29"])
        self.assertLessEqual(self.sql("SELECT count(*) FROM events")[0][0], 4)
        self.assertEqual(self.conf("seq:3"), 1)                # pruning never touches instincts

    def test_event_log_pruned_by_age(self):
        self.observe_n("seq:old", 3)
        self.clock.advance(days=20)
        self.observe_n("seq:new", 2)
        self.set("events_max_days", 30)
        self.store.consolidate()
        self.assertEqual(self.sql("SELECT count(*) FROM events"), [(5,)])
        self.set("events_max_days", 10)
        self.store.consolidate()
        self.assertEqual(self.sql("SELECT pattern, count(*) FROM events GROUP BY pattern"),
                         [("seq:new", 2)])
        self.clock.advance(days=11)
        self.store.consolidate()
        self.assertEqual(self.sql("SELECT count(*) FROM events"), [(0,)])
        self.assertEqual(self.conf("seq:old"), 3)               # pruning never touches instincts
        self.store.observe("seq:new")
        self.assertEqual(self.store.explain("seq:new")["observations"], 1)

    def test_context_manager_and_reopen_after_close(self):
        with InstinctStore(str(self.db), clock=self.clock) as s:
            s.observe("seq:a")
        self.assertIsNone(s._db._conn)
        self.assertEqual(s.observe("seq:a")["confidence"], 2)     # reopens lazily
        s.close()

    def test_instinct_db_environment_variable(self):
        path = self.tmp / "env.db"
        old = os.environ.get("INSTINCT_DB")
        os.environ["INSTINCT_DB"] = str(path)
        try:
            s = InstinctStore(clock=self.clock)
            self.addCleanup(s.close)
        finally:
            if old is None:
                del os.environ["INSTINCT_DB"]
            else:
                os.environ["INSTINCT_DB"] = old
        s.observe("seq:a")
        self.assertEqual(s.path, str(path))
        self.assertTrue(path.exists())


# =============================================================================
# 16. CLI (in process)
# =============================================================================
class TestBoundedWork(StoreCase):
    """Large stores: capped default results, SQL-side suggest ranking, lazy FTS, batched decay."""

    def test_suggest_list_search_have_configurable_default_caps(self):
        for i in range(60):
            self.store.observe(f"seq:step{i:02d}->test")
        self.store.config("mature_threshold", "1")
        self.store.consolidate()
        self.assertEqual(len(self.store.suggest(project="")), 50)
        self.assertEqual(len(self.store.suggest(project="", limit=60)), 60)
        self.store.config("suggest_limit", "7")
        self.assertEqual(len(self.store.suggest(project="")), 7)
        self.store.config("list_limit", "9")
        self.assertEqual(len(self.store.list()), 9)
        self.assertEqual(len(self.store.search("step")), 9)
        self.assertEqual(len(self.store.list(limit=60)), 60)

    def test_suggest_ranks_dedupes_and_limits_in_sql(self):
        self.store.config("mature_threshold", "2")
        self.store.config("rule_threshold", "4")
        self.observe_n("seq:shared", 5, project=FP_A)       # rule in A and B -> universal
        self.observe_n("seq:shared", 4, project=FP_B)
        self.observe_n("seq:shared", 2)                     # a weaker global row of the same pattern
        self.observe_n("seq:mine", 3, project=FP_C)
        self.observe_n("seq:global", 3)
        self.observe_n("pref:tabs=no", 2)
        self.store.consolidate()
        got = [(r["pattern"], r["project"], r["level"]) for r in self.store.suggest(project=FP_C)]
        self.assertEqual(got, [("seq:shared", FP_A, "universal"), ("seq:global", "", "mature"),
                               ("seq:mine", FP_C, "mature"), ("pref:tabs=no", "", "mature")])
        self.assertEqual([r["pattern"] for r in self.store.suggest(project=FP_C, limit=2)],
                         ["seq:shared", "seq:global"])
        mine = self.store.suggest(project=FP_B)[0]          # this project's own row wins
        self.assertEqual((mine["pattern"], mine["project"], mine["confidence"]), ("seq:shared", FP_B, 4))

    def test_suggest_matches_a_brute_force_reference(self):
        rng = random.Random(42)
        projects = ["", FP_A, FP_B, FP_C]
        self.store.config("mature_threshold", "2")
        self.store.config("rule_threshold", "6")
        for _ in range(900):
            self.store.observe(f"seq:h{int(rng.paretovariate(1.2)) % 120}", project=rng.choice(projects))
        for i in range(40):       # strong universal rules that A only has weakly: A's rows must
            self.observe_n(f"seq:g{i:02d}", 30, project=FP_B)   # win, which needs a wider window
            self.observe_n(f"seq:g{i:02d}", 30, project=FP_C)
            self.observe_n(f"seq:g{i:02d}", 2, project=FP_A)
        self.store.consolidate()
        rounds = []
        real_read = self.store._read
        with mock.patch.object(self.store, "_read", side_effect=lambda sql, p=(): (
                rounds.append(1) if "LIMIT :k" in sql else None, real_read(sql, p))[1]):
            self.store.suggest(project=FP_A, limit=3)
        self.assertGreater(len(rounds), 1)
        rows = self.sql("SELECT pattern, project, promoted, confidence FROM instincts"
                        " WHERE promoted > 0 AND quiet = 0")

        def reference(proj, limit):
            best = {}
            for pat, pr, lv, conf in sorted(rows, key=lambda r: (-r[2], -r[3], r[0])):
                if pr in ("", proj) or lv == 3:
                    if pat not in best or pr == proj:
                        best[pat] = (pat, pr, lv, conf)
            return sorted(best.values(), key=lambda r: (-r[2], -r[3], r[0]))[:limit]
        for proj in projects[1:] + [""]:
            for limit in (1, 3, 7, 40, 500):
                with self.subTest(project=proj, limit=limit):
                    got = [(r["pattern"], r["project"], r["promoted"], r["confidence"])
                           for r in self.store.suggest(project=proj, limit=limit)]
                    self.assertEqual(got, reference(proj, limit))

    def test_pattern_event_readers_use_the_index(self):
        s = self.store
        for i in range(20):
            s.observe(f"seq:c{i % 2}")
        self.assertEqual(len(s.history("seq:c0")["events"]), 10)
        plan = " ".join(r[3] for r in self.sql(
            "EXPLAIN QUERY PLAN SELECT id FROM events WHERE pattern = 'seq:a' AND project = ''"
            " AND pattern != '' ORDER BY id"))
        self.assertIn("ix_events_pattern", plan)
        self.assertNotIn("SCAN events", plan)

    def test_pattern_event_reads_match_a_full_scan_under_random_operations(self):
        rng = random.Random(8)
        s = self.store
        names = ["seq:a", "seq:b", "pref:c=1", "fix:d"]
        keys = [(p, pr) for p in names for pr in ("", FP_A)]
        for step in range(300):
            op = rng.random()
            p, pr = rng.choice(keys)
            try:
                if op < 0.6:
                    s.observe(p, project=pr)
                elif op < 0.68:
                    s.feedback(p, rng.choice(["good", "bad"]), project=pr)
                elif op < 0.74:
                    s.forget(p, project=pr)
                elif op < 0.8:
                    other = rng.choice([n for n in names if n != p])
                    s.merge(p, other)
                    self.assertEqual(self.sql("SELECT count(*) FROM events WHERE pattern = ?"
                                              " AND kind != 'merge'", (p,)),
                                     [(0,)])              # its events moved
                    names.remove(p)
                    names.append(p + "x")                # keep four live names
                    keys = [(q, r) for q in names for r in ("", FP_A)]
                elif op < 0.86:
                    s.config("events_max_rows", str(rng.choice([5, 50, 1000])))
                    s.consolidate()
                elif op < 0.92:                         # the top of the log disappears
                    with s._db.write() as conn:
                        conn.execute("DELETE FROM events WHERE id > (SELECT max(id) FROM events) - ?",
                                     (rng.randint(1, 4),))
                else:
                    self.clock.advance(days=rng.choice([1, 200, 400]))
            except (NotFoundError, ValidationError):
                pass
            with self.subTest(step=step):
                for q, r in [(q, r) for q in names + ["seq:gone"] for r in ("", FP_A)]:
                    lazy = [i for (i,) in self.sql(
                        "SELECT id FROM events INDEXED BY ix_events_pattern WHERE pattern = ?"
                        " AND project = ? AND pattern != '' ORDER BY id", (q, r))]
                    scan = [i for (i,) in self.sql("SELECT id FROM events NOT INDEXED WHERE pattern = ?"
                                                   " AND project = ? ORDER BY id", (q, r))]
                    self.assertEqual(lazy, scan, (q, r))
        self.assertEqual(self.sql("PRAGMA integrity_check"), [("ok",)])

    def test_new_patterns_are_searchable_and_deletes_keep_the_index_sound(self):
        if not self.store._fts():
            self.skipTest("no FTS5 in this SQLite build")
        fts_rows = "SELECT count(*) FROM instincts_fts_docsize"
        self.store.observe("seq:lint->fix")
        self.store.observe("pref:tool=ruff")
        self.assertEqual(self.sql(fts_rows)[0][0], 0)       # not indexed on the hot path
        self.assertEqual([r["pattern"] for r in self.store.search("ruff")], ["pref:tool=ruff"])
        self.assertEqual(self.sql(fts_rows)[0][0], 2)
        self.store.observe("seq:queued->only")              # deleted before being indexed
        self.store.forget("seq:queued->only")
        self.store.observe("seq:top")                       # indexed, then deleted: its id is reused
        self.store.search("top")
        self.store.forget("seq:top")
        self.store.observe("seq:reused->id")                # id below the mark: indexed at once
        self.assertEqual([r["pattern"] for r in self.store.search("reused")], ["seq:reused->id"])
        self.store.forget("seq:lint->fix")                  # deleted after being indexed
        self.store.merge("pref:tool=ruff", "pref:linter=ruff")
        self.assertEqual([r["pattern"] for r in self.store.search("ruff")], ["pref:linter=ruff"])
        self.assertEqual(self.store.search("fix"), [])
        self.assertEqual(self.sql("INSERT INTO instincts_fts(instincts_fts, rank)"
                                  " VALUES ('integrity-check', 1)"), [])
        self.assertTrue(self.store.doctor()["ok"])

    def test_decay_runs_in_batches_with_the_same_result(self):
        repo = str(self.tmp)                 # a project folder: its sessions are its clock
        os.makedirs(os.path.join(repo, ".git"))
        fp = instinct.project_fingerprint(repo)
        with mock.patch.object(instinct._Core, "_DECAY_BATCH", 7):
            for i in range(40):
                self.store.observe(f"seq:p{i}", project=fp if i % 2 else "")
            self.observe_n("seq:p3", 2, project=fp)
            for day in range(91):            # busy for 90 days (decay counts active days)
                self.clock.advance(days=1)
                self.store._record_tool({"session_id": f"d{day}", "cwd": repo, "tool_name": "Bash",
                                        "tool_input": {"command": "ls"}})
            self.store.mine()
            self.store.observe("seq:p5", project=fp)      # fresh: not charged
            mined = self.sql("SELECT count(*) FROM instincts")[0][0] - 40
            r = self.store.decay(days_inactive=90)
        self.assertEqual(r, {"decayed": 39, "deleted": 38, "total": 2 + mined})
        self.assertEqual(self.conf("seq:p3", fp), 2)
        # one 'decay' event (-1, no data) per charged pattern, whatever order a batch writes them
        # in (ids run p0, p1, ..., p10, ...: not the (pattern, project) order of the events index)
        charged = {(f"seq:p{i}", fp if i % 2 else "", -1, "") for i in range(40) if i != 5}
        rows = self.sql("SELECT pattern, project, delta, data FROM events WHERE kind = 'decay'")
        self.assertEqual((len(rows), set(rows)), (39, charged))
        hist = self.store.history("seq:p3", project=fp)["events"]
        self.assertEqual([(e["kind"], e["delta"]) for e in hist if e["kind"] == "decay"],
                         [("decay", -1)])


SUGGEST_LINE = re.compile(r"^  seq:test->fix->test {4}conf=5  \[mature\]  sequence$", re.M)


class TestCLI(StoreCase):

    def test_version_and_help(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit) as cm:
            instinct.main(["--version"])
        self.assertEqual(cm.exception.code, 0)
        self.assertEqual(out.getvalue().strip(), f"instinct {instinct.__version__}")
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit) as cm:
            instinct.main(["--help"])
        self.assertEqual(cm.exception.code, 0)
        self.assertTrue(out.getvalue().startswith("usage:"))
        for op in instinct.OPERATIONS.values():
            self.assertIn(op.cli, out.getvalue())

    def test_no_command_prints_the_start_text_and_returns_0(self):      # issue 32 changed it
        self.assertEqual(cli_in_process(), (0, instinct._CLI.START, ""))

    def test_usage_error_raises_system_exit_2(self):
        with self.assertRaises(SystemExit) as cm:
            self.cli_in_process("observe")
        self.assertEqual(cm.exception.code, 2)

    def test_seeds_walkthrough(self):
        for i in range(1, 4):
            code, out, err = self.cli_in_process("observe", "seq:test->fix->test")
            self.assertEqual((code, err), (0, ""))
            self.assertRegex(out, rf"conf={i}\s+\[raw\]")
        self.assertEqual(self.cli_in_process("consolidate"),
                         (0, "Promoted to mature: 0\nPromoted to rule: 0\nTotal instincts: 1\n", ""))
        self.assertEqual(self.cli_in_process("suggest", "--project", ""), (0, "0 suggestions: nothing mature "
                         "here yet (`instinct init` learns from past sessions)\n", ""))
        self.cli_in_process("observe", "seq:test->fix->test")
        self.assertIn("conf=5", self.cli_in_process("observe", "seq:test->fix->test")[1])
        code, out, _ = self.cli_in_process("consolidate")
        self.assertEqual(out, "Promoted to mature: 1\nPromoted to rule: 0\nTotal instincts: 1\n")
        code, out, err = self.cli_in_process("suggest", "--project", "")
        self.assertEqual((code, err), (0, ""))
        self.assertRegex(out, SUGGEST_LINE)
        self.assertEqual(out.splitlines()[-1], "1 suggestion")

    def test_json_output_is_the_api_result(self):
        self.store.observe("pref:a")
        self.store.close()
        code, out, _ = self.cli_in_process("--json", "get", "pref:a")
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(out), json.loads(json.dumps(self.store.get("pref:a"))))
        code, out, _ = self.cli_in_process("list", "--json", "--min-confidence", "1")      # flag after command
        self.assertEqual([r["pattern"] for r in json.loads(out)], ["pref:a"])

    def test_every_command_runs(self):
        fp_dir = self.tmp / "proj"
        fp_dir.mkdir()
        steps = [
            (["observe", "pref:x", "--cat", "style", "--source", "me", "--project", str(fp_dir),
              "--meta", '{"why": "tests"}'], 0, "conf=1"),
            (["observe", "pref:y"], 0, "[raw]"),
            (["config", "category.preference.mature_threshold", "1"], 0,
             "category.preference.mature_threshold: 1"),
            (["config", "mature_threshold"], 0, "mature_threshold: 5"),
            (["config"], 0, "rule_threshold: 10"),
            (["consolidate"], 0, "Promoted to mature: 1"),
            (["suggest", "--project", str(fp_dir), "--limit", "5"], 0, "1 suggestion"),
            (["list", "--category", "style"], 0, "1 instinct"),
            (["list", "--level", "mature"], 0, "pref:y"),
            (["search", "pref"], 0, "2 matches"),
            (["get", "pref:x", "--project", str(fp_dir)], 0, "conf=1"),
            (["export", "--min-confidence", "1"], 0, '"pattern": "pref:'),
            (["export", "--format", "markdown", "--min-confidence", "1"], 0, "`pref:y`"),
            (["merge", "pref:y", "pref:z"], 0, "pref:y -> pref:z (1 rows merged)"),
            (["stats"], 0, "Total instincts: 2"),
            (["decay", "--days", "1"], 0, "Decayed: 0"),
            (["forget", "pref:z"], 0, "Forgot pref:z"),
            (["forget", "pref:z"], 1, ""),
            (["get", "nope"], 1, ""),
            (["observe", "x" * 1001], 2, ""),
            (["suggest", "--limit", "-1"], 2, ""),
            (["list", "--limit", "0"], 2, ""),
            (["list", "--min-confidence", "-3"], 2, ""),
        ]
        for args, code, needle in steps:
            with self.subTest(args=args[:2]):
                got, out, err = self.cli_in_process(*args)
                self.assertEqual(got, code, err)
                if code:
                    self.assertEqual(out, "")
                    self.assertEqual(len(err.splitlines()), 1)
                    self.assertTrue(err.startswith("instinct: error: "), err)
                else:
                    self.assertEqual(err, "")
                    self.assertIn(needle, out)
        self.assertEqual(self.sql("SELECT metadata FROM instincts WHERE pattern = 'pref:x'"),
                         [('{"why":"tests"}',)])

    def test_broken_pipe_is_quiet(self):
        for i in range(300):
            self.store.observe(f"seq:p{i}")
        self.store.close()
        proc = subprocess.Popen([sys.executable, str(INSTINCT_PY), "list"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=child_env(self.tmp, self.db))
        proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        proc.stderr.close()
        proc.wait(timeout=30)
        self.assertNotIn("Traceback", err)
        self.assertIn(proc.returncode, (0, 1, -signal.SIGPIPE))


class TestCLISubprocess(StoreCase):

    def test_version_and_help(self):
        proc = self.cli_process("--version")
        self.assertEqual((proc.returncode, proc.stdout.strip()), (0, f"instinct {instinct.__version__}"))
        proc = self.cli_process("--help")
        self.assertEqual(proc.returncode, 0)
        self.assertTrue(proc.stdout.startswith("usage:"))

    def test_seeds_walkthrough_verbatim(self):
        for i in range(1, 4):
            proc = self.cli_process("observe", "seq:test->fix->test")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertRegex(proc.stdout, rf"conf={i}\s+\[raw\]")
        proc = self.cli_process("list", "--min-confidence", "1")
        self.assertRegex(proc.stdout, r"seq:test->fix->test\s+conf=3\s+\[raw\]\s+sequence")
        proc = self.cli_process("consolidate")
        self.assertEqual(proc.stdout.splitlines(),
                         ["Promoted to mature: 0", "Promoted to rule: 0", "Total instincts: 1"])
        self.cli_process("observe", "seq:test->fix->test")
        self.cli_process("observe", "seq:test->fix->test")
        proc = self.cli_process("consolidate")
        self.assertIn("Promoted to mature: 1", proc.stdout.splitlines())
        proc = self.cli_process("suggest", cwd=str(self.tmp))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, SUGGEST_LINE)
        self.assertEqual(proc.stdout.splitlines()[-1], "1 suggestion")
        proc = self.cli_process("decay", "--days", "90")
        self.assertEqual(proc.stdout.splitlines()[0], "Decayed: 0")

    def test_readme_quick_start_runs_verbatim(self):
        readme = HERE / "README.md"
        if not readme.exists():
            self.skipTest("README.md does not exist yet (the lead is writing it)")
        text = readme.read_text(encoding="utf-8")
        m = re.search(r"## Quick start.*?```sh\n(export INSTINCT_DB=.*?)```", text, re.S)
        self.assertIsNotNone(m, "README.md has no demo ```sh block under '## Quick start'")
        script = m.group(1)
        self.assertIn("observe", script)
        env = child_env(self.tmp, TMPDIR=str(self.tmp))
        proc = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True, timeout=120,
                              cwd=str(HERE), env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        self.assertIn("Promoted to mature: 0\nPromoted to rule: 0\nTotal instincts: 1\n", proc.stdout)
        self.assertIn("Promoted to mature: 1\n", proc.stdout)
        self.assertRegex(proc.stdout, SUGGEST_LINE)
        self.assertTrue(proc.stdout.rstrip().endswith("1 suggestion"), proc.stdout)
        self.assertFalse((self.tmp / ".instinct").exists())      # the demo used its own database

    def test_python_dash_m(self):
        proc = subprocess.run([sys.executable, "-m", "instinct", "observe", "pref:m"], capture_output=True,
                              text=True, timeout=60, cwd=str(HERE), env=child_env(self.tmp, self.db))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("conf=1", proc.stdout)

    def test_domain_error(self):
        line = self.assertOneLineError(self.cli_process("get", "seq:missing"), 1)
        self.assertIn("seq:missing", line)


# =============================================================================
# 17. Parity: API, CLI --json and MCP tools/call give the same JSON
# =============================================================================
class TestParity(StoreCase):
    """The CLI runs on the real clock, so these stores do too; timestamps are compared apart."""
    VOLATILE = ("first_seen", "last_seen")

    def open(self, path=None, **kw):
        kw.setdefault("clock", time.time)
        return super().open(path, **kw)

    def mcp_call(self, store, name, arguments):
        server, _ = mcp_in_process(store, "2025-06-18")
        result = tool_result(server, name, arguments)
        self.assertFalse(result["isError"], result)
        op = next(o for o in instinct.OPERATIONS.values() if o.mcp == name)
        sc = result["structuredContent"]
        self.assertEqual(json.loads(result["content"][0]["text"]), sc)
        if op.list_key:
            self.assertEqual(sc["count"], len(sc[op.list_key]))
            return sc[op.list_key]
        return sc

    def three_ways(self, op_name, kwargs, cli_args, db=None):
        db = db or self.db
        op = instinct.OPERATIONS[op_name]
        store = self.open(db)
        api = json.loads(json.dumps(getattr(store, op_name)(**kwargs)))
        store.close()
        code, out, err = self.cli_in_process("--json", op.cli, *cli_args, db=db)
        self.assertEqual(code, 0, err)
        store = self.open(db)
        mcp = self.mcp_call(store, op.mcp, kwargs)
        store.close()
        return api, json.loads(out), mcp

    def _strip(self, value):
        if isinstance(value, list):
            return [self._strip(v) for v in value]
        return {k: v for k, v in value.items() if k not in self.VOLATILE}

    def _seed(self, db):
        s = self.open(db)
        for p, n, proj in (("seq:test->fix->test", 6, ""), ("pref:stdlib-first", 11, FP_A),
                           ("combo:pytest+coverage", 2, "")):
            for _ in range(n):
                s.observe(p, project=proj, source="parity")
        s.consolidate()
        s.close()

    def test_read_operations_agree_exactly(self):
        self._seed(self.db)
        cases = [
            ("list", {"min_confidence": 1}, ["--min-confidence", "1"]),
            ("suggest", {"project": FP_A}, ["--project", FP_A]),
            ("get", {"pattern": "pref:stdlib-first", "project": FP_A},
             ["pref:stdlib-first", "--project", FP_A]),
            ("search", {"query": "test"}, ["test"]),
            ("export_rules", {"min_confidence": 5}, ["--min-confidence", "5"]),
            ("config", {"key": "rule_threshold"}, ["rule_threshold"]),
        ]
        for name, kwargs, args in cases:
            with self.subTest(op=name):
                api, cli, mcp = self.three_ways(name, kwargs, args)
                self.assertTrue(api)
                self.assertEqual(api, cli)
                self.assertEqual(api, mcp)

    def test_write_operations_agree(self):
        dbs = [self.tmp / f"p{i}.db" for i in range(3)]
        for db in dbs:
            self._seed(db)
        op = "observe"
        kwargs = {"pattern": "seq:test - fix - test", "source": "parity", "metadata": {"k": 1}}
        store = self.open(dbs[0])
        api = json.loads(json.dumps(store.observe(**kwargs)))
        store.close()
        code, out, err = self.cli_in_process("--json", "observe", "seq:test - fix - test", "--source", "parity",
                                             "--meta", '{"k": 1}', db=dbs[1])
        self.assertEqual(code, 0, err)
        store = self.open(dbs[2])
        mcp = self.mcp_call(store, instinct.OPERATIONS[op].mcp, kwargs)
        store.close()
        self.assertEqual(api["confidence"], 7)
        self.assertEqual(self._strip(api), self._strip(json.loads(out)))
        self.assertEqual(self._strip(api), self._strip(mcp))
        for name, args in (("consolidate", []), ("decay", ["--days", "90"])):
            with self.subTest(op=name):
                results = []
                for i, db in enumerate(dbs):
                    if i == 1:
                        results.append(json.loads(self.cli_in_process("--json", instinct.OPERATIONS[name].cli,
                                                                      *args, db=db)[1]))
                    else:
                        s = self.open(db)
                        kw = {"days_inactive": 90} if name == "decay" else {}
                        results.append(json.loads(json.dumps(getattr(s, name)(**kw))) if i == 0
                                       else self.mcp_call(s, instinct.OPERATIONS[name].mcp, kw))
                        s.close()
                self.assertEqual(results[0], results[1])
                self.assertEqual(results[0], results[2])


# =============================================================================
# Vendoring: the file alone, stdlib only, isolated mode
# =============================================================================
class TestVendoring(StoreCase):

    def _vendored_round_trip(self, python):
        vendor = self.tmp / ("vendor-" + Path(python).name)
        vendor.mkdir()
        copy = vendor / "instinct.py"
        shutil.copy(INSTINCT_PY, copy)
        db = self.tmp / (vendor.name + ".db")
        env = child_env(self.tmp, db)
        run = lambda *a: subprocess.run([str(python), "-I", "instinct.py", *a], capture_output=True,  # noqa
                                        text=True, timeout=60, cwd=str(vendor), env=env)
        proc = run("--version")
        self.assertEqual((proc.returncode, proc.stdout.strip()), (0, f"instinct {instinct.__version__}"),
                         proc.stderr)
        for _ in range(5):
            proc = run("observe", "seq:vendored->works")
            self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(run("consolidate").returncode, 0)
        proc = run("suggest", "--project", "")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r"seq:vendored->works\s+conf=5\s+\[mature\]")
        self.assertEqual(sorted(os.listdir(vendor)), ["instinct.py"])     # nothing written beside it
        self.assertTrue(db.exists())

    def test_vendored_copy_runs_isolated(self):
        self._vendored_round_trip(sys.executable)

    def test_vendored_copy_runs_on_python_310(self):
        py310 = find_python("3.10")
        if py310 is None:
            self.skipTest("no Python 3.10 here ($INSTINCT_PYTHON310, python3.10 on PATH or pyenv's)")
        self._vendored_round_trip(py310)

    def test_imports_are_stdlib_only(self):
        if sys.version_info < (3, 10):
            self.skipTest("sys.stdlib_module_names needs 3.10")
        tree = ast.parse(INSTINCT_PY.read_text(encoding="utf-8"))
        optional = set()              # imports inside `try: ... except ImportError`
        for node in ast.walk(tree):
            if isinstance(node, ast.Try) and any(
                    isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
                    for h in node.handlers):
                for sub in node.body:
                    for n in ast.walk(sub):
                        optional.add(id(n))
        # accelerator modules renamed between versions (_sha256 -> _sha2 in 3.12); tomllib joined
        # the standard library in 3.11 (setup refuses what it cannot parse without it)
        renamed = {"_sha2", "_sha256", "tomllib"}
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                found.add(top)
                if id(node) in optional and top in renamed:
                    continue
                with self.subTest(module=top):
                    self.assertIn(top, sys.stdlib_module_names)
        self.assertIn("sqlite3", found)

    def test_module_import_stays_lean(self):
        code = ("import sys, sqlite3; before = set(sys.modules); import instinct; "
                "print(' '.join(sorted(set(sys.modules) - before)))")
        proc = subprocess.run([sys.executable, "-I", "-c", "import sys; sys.path.insert(0, %r); " % str(HERE)
                               + code], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        loaded = set(proc.stdout.split())
        self.assertFalse(loaded & {"json", "re", "hashlib", "argparse", "datetime", "inspect"}, loaded)


if __name__ == "__main__":
    unittest.main()


from tests.helpers import make_repo  # noqa: E402


class TestActivityClock(StoreCase):
    """Decay counts a project's days with sessions, not the calendar (issue 30 item 5)."""

    def sessions(self, repo, days, commands):
        """One session a day for `days` days in `repo`, each running `commands`, mined."""
        for _ in range(days):
            self.clock.advance(days=1)
            sid = f"d{self.clock.t:.0f}"
            for cmd in commands:
                self.store._record_tool({"session_id": sid, "cwd": repo, "tool_name": "Bash",
                                        "tool_input": {"command": cmd}})
            self.store.mine(sid)

    def test_a_busy_project_loses_a_command_it_stopped_using_a_dormant_one_keeps_it(self):
        busy, idle = make_repo(str(self.tmp / "busy")), make_repo(str(self.tmp / "idle"))
        fb, fi = instinct.project_fingerprint(busy), instinct.project_fingerprint(idle)
        self.sessions(idle, 6, ["make test", "make lint"])
        self.sessions(busy, 6, ["make test", "make lint"])
        self.store.consolidate()
        lint, test = "pref:lint=make lint", "pref:test=make test"
        before = {(p, f): self.store.get(p, project=f)["confidence"]
                  for p in (lint, test) for f in (fb, fi)}
        self.assertEqual(set(before.values()), {6})
        self.sessions(busy, 89, ["make test"])             # lint unused for 89 of its days
        self.assertEqual(self.store.decay(90)["decayed"], 0)
        e = self.store.explain(lint, project=fb)["next_decay"]
        self.assertEqual((e["clock"], e["days_left"], e["due"]),
                         ("days with sessions in this project", 1, False))
        self.assertNotIn("date", e)
        self.clock.advance(days=200)                       # the calendar alone charges nothing
        self.assertEqual(self.store.decay(90)["decayed"], 0)
        self.sessions(busy, 1, ["make test"])              # the 90th such day
        self.assertTrue(self.store.explain(lint, project=fb)["next_decay"]["due"])
        self.assertEqual(self.store.decay(90)["decayed"], 1)
        self.assertEqual(self.store.decay(90)["decayed"], 0)          # once per period
        self.assertEqual(self.store.get(lint, project=fb)["confidence"], 5)
        self.assertEqual(self.store.get(test, project=fb)["confidence"], 96)
        for p in (lint, test):                             # the dormant project keeps its habits
            self.assertEqual(self.store.get(p, project=fi)["confidence"], 6)
        code, text, err = self.cli_in_process("explain", lint, "--project", fb)
        self.assertEqual(code, 0, err)
        self.assertIn("after 90 more such day(s) without it", text)
        self.assertIn("clock: days with sessions in this project", text)

    def test_the_clock_survives_event_log_pruning(self):
        repo = make_repo(str(self.tmp / "r"))
        fp, lint = instinct.project_fingerprint(repo), "pref:lint=make lint"
        self.sessions(repo, 6, ["make test", "make lint"])
        self.sessions(repo, 60, ["make test"])
        self.store.config("events_max_rows", "100")
        self.store.gc()
        self.store.mine()                                   # drops the pruned sessions' rows
        self.assertLess(self.sql("SELECT count(*) FROM mined_sessions")[0][0], 60)
        self.sessions(repo, 29, ["make test"])             # lint unused for 89 of its days
        self.assertEqual(self.store.explain(lint, project=fp)["next_decay"]["days_left"], 1)
        self.assertEqual(self.store.decay(90)["decayed"], 0)
        self.sessions(repo, 1, ["make test"])
        self.assertEqual(self.store.decay(90)["decayed"], 1)

    def test_a_v16_store_gets_its_days_from_the_sessions_it_mined(self):
        repo = make_repo(str(self.tmp / "r"))
        self.sessions(repo, 3, ["make test"])
        days = self.store._active_days()
        self.store.close()
        con = sqlite3.connect(self.db)
        con.execute("DROP TABLE active_days")
        con.execute("PRAGMA user_version = 16")
        con.commit()
        con.close()
        self.store = self.open()
        self.assertEqual(self.store._active_days(), days)
        self.assertEqual(len(days[instinct.project_fingerprint(repo)]), 3)

    def test_global_patterns_count_days_with_sessions_in_any_project(self):
        self.store.observe("seq:g", project="")
        repo = make_repo(str(self.tmp / "r"))
        self.sessions(repo, 89, ["make test"])
        self.clock.advance(days=200)
        self.assertEqual(self.store.decay(90)["decayed"], 0)
        self.assertEqual(self.store.explain("seq:g", project="")["next_decay"]["clock"],
                         "days with sessions in any project")
        self.sessions(repo, 1, ["make test"])
        self.assertEqual(self.store.decay(90)["decayed"], 1)
