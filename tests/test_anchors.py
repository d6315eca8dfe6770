"""Tests for staleness anchors (issue 20, part 2; sections 11, 16 and 17 of instinct.py).

A memory or instinct anchored to files of its project (path relative to the root, the file's
git blob id, its size and mtime) is briefed as "may be stale" when a file changed and left
out when it is gone; explain says why, doctor lists them, confirming re-anchors. Real files
in real git repositories (when git is installed), real CLI and MCP processes.
Run: python3 -m unittest -v tests.test_anchors
"""
import os
import shutil
import subprocess
import sys
import unittest

import instinct
from instinct import ValidationError
from tests.helpers import (ROOT, ProjectCase, child_env, make_repo, read, run_instinct, serve_once,  # noqa: F401
                           init_msg, INITIALIZED, req, setUpModule, write)

GIT = shutil.which("git")
PYPROJECT = '[project]\nname = "ledger"\nversion = "1.0"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'


def git(cwd, *args):
    return subprocess.run([GIT, "-c", "user.name=t", "-c", "user.email=t@example.com",
                           "-c", "init.defaultBranch=main", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


class _Base(ProjectCase):
    """The project is a real git repository (git init, one commit) when git is installed."""

    def setUp(self):
        super().setUp()
        if GIT:
            shutil.rmtree(os.path.join(self.proj, ".git"))
            git(self.proj, "init", "-q")
        self.pyproject = os.path.join(self.proj, "pyproject.toml")
        write(self.pyproject, PYPROJECT)
        write(os.path.join(self.proj, "package.json"), '{"scripts": {"lint": "eslint ."}}\n')
        if GIT:
            git(self.proj, "add", "-A")
            git(self.proj, "commit", "-qm", "init")

    def edit(self, path, text):
        """Change a file's content (and move its mtime on, however coarse the file system's is)."""
        write(path, text)
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))

    def brief(self):
        return self.store.memory_briefing(self.proj)

    def remember(self, title="Build backend is hatchling", about="pyproject.toml", **kw):
        return self.store.remember("project", title, "the wheel is built by hatchling",
                                   how_to_apply="build with `uv build`", project=self.proj,
                                   about=about, **kw)

    def learned(self, pattern="pref:test=uv run pytest", n=6):
        self.observe(pattern, n, project=instinct.project_fingerprint(self.proj))
        self.store.consolidate()
        return pattern

    def anchor(self, pattern, paths):
        """What mining does for a project command: anchor the instinct to files (section 11)."""
        rec = self.store.get(pattern, project=self.proj)
        with self.store._write() as conn:
            instinct._Anchors.reanchor(conn, self.proj, rec, paths)
        return rec


class TestBlobId(_Base):
    def test_known_ids_without_git(self):
        empty, hello = (os.path.join(self.tmp, n) for n in ("empty", "hello"))
        write(empty, b"")
        write(hello, b"hello\n")
        self.assertEqual(instinct._Anchors.git_blob(empty)[0], "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")
        self.assertEqual(instinct._Anchors.git_blob(hello)[0], "ce013625030ba8dba906f756967f9e9ca394464a")
        blob, size, mtime = instinct._Anchors.git_blob(hello)
        self.assertEqual((size, mtime), (6, os.stat(hello).st_mtime_ns))

    @unittest.skipUnless(GIT, "git is not installed")
    def test_equals_git_hash_object(self):
        files = {"text": "line\r\nnext\n", "binary": bytes(range(256)) * 9000,   # > 1 MiB chunks
                 "utf8": "façade ✓\n", "no-newline": "x"}
        for name, data in files.items():
            path = os.path.join(self.proj, name)
            write(path, data)
            with self.subTest(name=name):
                self.assertEqual(instinct._Anchors.git_blob(path)[0],
                                 git(self.proj, "hash-object", path).strip())
        self.assertEqual(instinct._Anchors.git_blob(self.pyproject)[0],
                         git(self.proj, "rev-parse", "HEAD:pyproject.toml").strip())


class TestDefiningFile(_Base):
    def test_shapes_map_to_the_file_that_defines_them_when_it_exists(self):
        root = self.proj
        for name in ("mix.exs", "Makefile", "justfile", "Cargo.toml"):
            write(os.path.join(root, name), "x\n")
        cases = {"npm run lint": "package.json", "pnpm test": "package.json", "npx eslint": "package.json",
                 "uv run pytest": "pyproject.toml", "pytest": "pyproject.toml",
                 "ruff check": "pyproject.toml", "python -m pytest": "pyproject.toml",
                 "mix test": "mix.exs", "make lint": "Makefile", "just test": "justfile",
                 "cargo test": "Cargo.toml", "go test": None, "git commit": None, "Edit": None}
        for shape, want in cases.items():
            with self.subTest(shape=shape):
                self.assertEqual(instinct._Anchors.defining_file(root, shape), want)
        os.remove(os.path.join(root, "Makefile"))
        write(os.path.join(root, "GNUmakefile"), "x\n")
        self.assertEqual(instinct._Anchors.defining_file(root, "make lint"), "GNUmakefile")
        self.assertIsNone(instinct._Anchors.defining_file(self.tmp, "npm run lint"))    # no package.json


class TestMemoryAnchors(_Base):
    def test_changed_file_marks_the_memory_and_remembering_again_re_anchors(self):
        m = self.remember()
        self.assertEqual(m["about"], ["pyproject.toml"])
        line = ("[project] Build backend is hatchling: the wheel is built by hatchling \u2014 "
                "build with `uv build`")
        self.assertEqual(self.brief(), [line])
        os.utime(self.pyproject, ns=(1, 10**18))       # touched, same content: still fresh
        self.assertEqual(self.brief(), [line])
        self.edit(self.pyproject, PYPROJECT.replace("hatchling", "") + 'requires = ["setuptools"]\n')
        self.assertEqual(self.brief(), [line + " (may be stale: pyproject.toml changed)"])
        doctor = {c["name"]: c for c in self.store.doctor()["checks"]}["anchors"]
        self.assertEqual(doctor["level"], "warn")
        self.assertIn(f"memory #{m['id']} (pyproject.toml changed)", doctor["detail"])
        again = self.remember()                         # confirmed: anchored to the file as it is
        self.assertEqual((again["id"], again["status"]), (m["id"], "reinforced"))
        self.assertEqual(self.brief(), [line])
        self.assertEqual({c["name"]: c["level"] for c in self.store.doctor()["checks"]}["anchors"], "ok")

    @unittest.skipUnless(GIT, "git is not installed")
    def test_a_rename_makes_the_memory_vanish_from_the_briefing(self):
        m = self.remember()
        self.remember("Lint config is in package.json", about="package.json")
        self.assertEqual(len(self.brief()), 2)
        git(self.proj, "mv", "pyproject.toml", "config.toml")
        git(self.proj, "commit", "-qm", "rename")
        self.assertEqual([ln.split(":")[0] for ln in self.brief()],
                         ["[project] Lint config is in package.json"])
        detail = {c["name"]: c for c in self.store.doctor()["checks"]}["anchors"]["detail"]
        self.assertIn(f"memory #{m['id']} (pyproject.toml is gone)", detail)
        self.remember(about="")                         # re-remembered: the gone anchor is dropped
        self.assertEqual(len(self.brief()), 2)
        self.assertEqual(self.store._read("SELECT path FROM anchors WHERE memory = ?", (m["id"],)), [])

    def test_paths_from_a_subfolder_and_several_files(self):
        sub = os.path.join(self.proj, "src", "app")
        write(os.path.join(sub, "settings.py"), "DEBUG = False\n")
        store = instinct.InstinctStore(self.db, cwd=sub)
        self.addCleanup(store.close)
        m = store.remember("project", "Settings", "debug is off", project=self.proj,
                           about="settings.py, pyproject.toml,")
        self.assertEqual(m["about"], ["src/app/settings.py", "pyproject.toml"])
        rows = store._read("SELECT path, blob, size FROM anchors WHERE memory = ? ORDER BY path", (m["id"],))
        self.assertEqual(rows, [("pyproject.toml", instinct._Anchors.git_blob(self.pyproject)[0], len(PYPROJECT)),
                                ("src/app/settings.py", instinct._Anchors.git_blob(os.path.join(sub, "settings.py"))[0], 14)])

    def test_bad_paths_are_refused_and_nothing_is_stored(self):
        outside = os.path.join(self.tmp, "outside.toml")
        write(outside, "x\n")
        os.symlink(outside, os.path.join(self.proj, "link.toml"))
        for about in ("missing.toml", ".", outside, "../outside.toml", "link.toml", "a\x00b"):
            with self.subTest(about=about):
                with self.assertRaises(ValidationError):
                    self.remember(about=about)
        self.assertEqual(self.store._read("SELECT count(*) FROM memories")[0][0], 0)
        self.assertEqual(self.store._read("SELECT count(*) FROM anchors")[0][0], 0)

    def test_cli_remember_about_and_its_one_line_error(self):
        r = self.cli("remember", "project", "Build backend", "hatchling", "--about", "pyproject.toml",
                     "--project", ".", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('"about": [\n    "pyproject.toml"\n  ]', r.stdout)
        r = self.cli("remember", "project", "Other", "x", "--about", "nope.toml")
        self.assertEqual((r.returncode, r.stdout), (2, ""), r.stderr)
        self.assertRegex(r.stderr, r"^instinct: error: nope.toml is not a file in the project .*\n$")

    def test_mcp_memory_store_about(self):
        msgs = [init_msg("2025-06-18"), INITIALIZED,
                req(2, "tools/call", {"name": "memory_store", "arguments": {
                    "type": "project", "title": "Build backend", "content": "hatchling",
                    "project": ".", "about": "pyproject.toml"}}),
                req(3, "tools/call", {"name": "memory_store", "arguments": {
                    "type": "project", "title": "Other", "content": "x", "about": "../x"}})]
        replies, p = serve_once(msgs, child_env(db=self.db, INSTINCT_MCP_TOOLS="all"), self.proj)
        by_id = {m.get("id"): m for m in replies}
        self.assertEqual(by_id[2]["result"]["structuredContent"]["about"], ["pyproject.toml"])
        self.assertTrue(by_id[3]["result"]["isError"])
        self.assertIn("is not a file in the project", by_id[3]["result"]["content"][0]["text"])
        self.assertEqual(self.store._read("SELECT path FROM anchors"), [("pyproject.toml",)])

    def test_forgetting_a_memory_drops_its_anchors(self):
        m = self.remember()
        self.store.forget_memory(m["id"])
        self.assertEqual(self.store._read("SELECT count(*) FROM anchors")[0][0], 0)
        fresh = self.remember("Another memory", about="package.json")      # may reuse the id
        self.assertEqual(self.store._read("SELECT path FROM anchors WHERE memory = ?", (fresh["id"],)),
                         [("package.json",)])

    def test_anchors_of_another_checkout_are_not_checked_here(self):
        self.remember()
        other = make_repo(os.path.join(self.tmp, "other"))
        self.edit(self.pyproject, "changed\n")
        self.assertEqual(instinct._Anchors.staleness(self.store._db.conn, other, [{"id": 1}]), [None])
        self.assertEqual(instinct._Anchors.staleness(self.store._db.conn, self.proj, [{"id": 1}, {"id": 2}]),
                         ["pyproject.toml changed", None])


class TestInstinctAnchors(_Base):
    def test_mined_command_anchored_to_its_defining_file(self):
        p = self.learned()
        shape = p.split("=", 1)[1]
        self.assertEqual(instinct._Anchors.defining_file(self.proj, shape), "pyproject.toml")
        rec = self.anchor(p, ["pyproject.toml"])
        self.assertNotIn("stale", self.store.explain(p))
        self.edit(self.pyproject, PYPROJECT + "[tool.ruff]\n")
        e = self.store.explain(p)
        self.assertEqual(e["stale"], "pyproject.toml changed")
        r = self.cli("explain", p)
        self.assertIn("  may be stale: pyproject.toml changed since it was anchored", r.stdout)
        self.assertEqual(instinct._Anchors.staleness(self.store._db.conn, self.proj, [rec]),
                         ["pyproject.toml changed"])
        with self.store._write() as conn:               # what observe / feedback good call
            instinct._Anchors.reanchor(conn, self.proj, rec)
        self.assertNotIn("stale", self.store.explain(p))
        os.remove(self.pyproject)
        self.assertEqual(self.store.explain(p)["stale"], "pyproject.toml is gone")

    def test_export_leaves_stale_items_out(self):
        p, q = self.learned(n=10), self.learned("pref:lint=npm run lint", n=10)
        self.anchor(p, ["pyproject.toml"])
        self.anchor(q, ["package.json"])
        self.assertEqual(self.store.export_rules(format="claude", write="CLAUDE.md")["included"], 2)
        self.edit(os.path.join(self.proj, "package.json"), "{}\n")
        r = self.store.export_rules(format="claude", write="CLAUDE.md")
        self.assertEqual(r["included"], 2)             # marked, as on every channel
        text = read(os.path.join(self.proj, "CLAUDE.md"))
        self.assertIn("Tests here: uv run pytest (rule, seen 10x, this project)", text)
        self.assertIn("Lint here: npm run lint (rule, seen 10x, this project; may be stale: "
                      "package.json changed)", text)
        self.assertEqual(text.count("may be stale"), 1)
        os.remove(os.path.join(self.proj, "package.json"))       # gone: left out
        self.assertEqual(self.store.export_rules(format="claude", write="CLAUDE.md")["included"], 1)
        self.assertNotIn("npm run lint", read(os.path.join(self.proj, "CLAUDE.md")))

    def test_a_vanished_path_is_not_anchored(self):
        p = self.learned()
        self.anchor(p, ["missing.toml", "pyproject.toml"])
        self.assertEqual(self.store._read("SELECT path FROM anchors"), [("pyproject.toml",)])

    def test_two_hundred_anchors_are_checked_by_stat_alone(self):
        items = [{"pattern": f"pref:test=cmd{i}", "project": "p"} for i in range(200)]
        with self.store._write() as conn:
            for it in items:
                instinct._Anchors.reanchor(conn, self.proj, it, ["pyproject.toml", "package.json"])
        conn = self.store._db.conn
        calls = []
        real = instinct._Anchors.git_blob
        instinct._Anchors.git_blob = lambda path: calls.append(path) or real(path)
        try:
            self.assertEqual(instinct._Anchors.staleness(conn, self.proj, items), [None] * 200)
            self.assertEqual(calls, [])                        # unchanged files: never hashed
            self.edit(self.pyproject, "changed\n")
            self.assertEqual(set(instinct._Anchors.staleness(conn, self.proj, items)), {"pyproject.toml changed"})
            self.assertEqual(len(calls), 1)                    # one hash per changed file
        finally:
            instinct._Anchors.git_blob = real

    def test_bench_script_runs(self):                           # its figures: README, bench/README
        r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_anchors.py"), "--reps", "3"],
                           capture_output=True, text=True, timeout=300, env=child_env(home=self.tmp))
        self.assertEqual(r.returncode, 0, r.stderr)
        for heading in ("200 files", "5 files", "1 changed", "target: <= 5 ms"):
            self.assertIn(heading, r.stdout)


if __name__ == "__main__":
    unittest.main()
