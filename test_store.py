"""Tests for the store's hardening (issue 14): restore, purge, file modes, temp files, WAL size,
read-only stores, bounded input, secrets in memories.

stdlib unittest only; real SQLite files in temp dirs; real subprocesses for the CLI, the MCP
server and the kills.
"""
import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import instinct  # noqa: E402
from instinct import InstinctStore, StoreError, ValidationError  # noqa: E402
from test_instinct import setUpModule  # noqa: E402,F401 (3.12 placeholder guard)

INSTINCT_PY = os.path.join(HERE, "instinct.py")
T0 = 1_790_000_000.0
DAY = 86400


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


class _Base(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = os.path.realpath(tmp.name)
        self.proj = os.path.join(self.tmp, "proj")
        os.makedirs(os.path.join(self.proj, ".git"))
        self.dbdir = os.path.join(self.tmp, "store")
        os.mkdir(self.dbdir, 0o700)
        self.db = os.path.join(self.dbdir, "i.db")
        self.now = T0
        self.store = self.open(self.db)

    def open(self, path, **kw):
        s = InstinctStore(path, clock=lambda: self.now, cwd=self.proj, **kw)
        self.addCleanup(s.close)
        return s

    def cli(self, *args, db=None, stdin=None, timeout=60):
        env = {**os.environ, "INSTINCT_DB": db or self.db, "PYTHONIOENCODING": "utf-8"}
        env.pop("INSTINCT_SESSION", None)
        return subprocess.run([sys.executable, INSTINCT_PY, *args], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=self.proj, input=stdin)

    def python(self, code):
        """Start `code` in a child Python with instinct importable; returns the Popen."""
        return subprocess.Popen([sys.executable, "-c", f"import sys; sys.path.insert(0, {HERE!r})\n"
                                 + code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def raw(self, path=None):
        """Every byte of the store: the file, its WAL and its SHM."""
        out = b""
        for s in ("", "-wal", "-shm"):
            p = (path or self.db) + s
            if os.path.exists(p):
                with open(p, "rb") as f:
                    out += f.read()
        return out


# --- memories exported as Markdown ------------------------------------------------
class TestExportMemories(_Base):
    def test_a_memory_with_a_foreign_md_key_does_not_break_the_export(self):
        good = self.store.remember("project", "Tests use pytest", "Run pytest -q.")
        odd = [self.store.remember("reference", f"Odd bookkeeping {i}", "x", metadata={"_md": v})
               for i, v in enumerate(["text", 5, ["a"], {"name": 3}, {"extra": "x"},
                                      {"extra": {"key": 7}}, {"extra": {"k": " v\nname: evil"}}])]
        out = os.path.join(self.tmp, "out")
        r = self.store.export_memories(out)
        self.assertEqual(r["files"], 1 + len(odd))
        names = sorted(os.listdir(out))
        self.assertEqual(len(names), 1 + len(odd))
        # every file reads back: the export is a faithful, importable Markdown for each memory
        other = self.open(os.path.join(self.tmp, "other.db"))
        back = other.import_memories(out)
        self.assertEqual(back["added"], 1 + len(odd))
        titles = {m["title"] for m in other.memories()}
        self.assertEqual(titles, {good["title"]} | {m["title"] for m in odd})
        for name in names:
            with open(os.path.join(out, name), encoding="utf-8") as f:
                text = f.read()
            self.assertEqual(text.count("\nname:"), 1, text)      # nothing injected a second key

    def test_exported_files_are_private(self):
        self.store.remember("user", "Prefers tabs", "Indent with tabs.")
        out = os.path.join(self.tmp, "new", "mem")
        old = os.umask(0o022)
        try:
            self.store.export_memories(out)
        finally:
            os.umask(old)
        self.assertEqual(mode(out), 0o700)
        for n in os.listdir(out):
            self.assertEqual(mode(os.path.join(out, n)), 0o600)
        # a file an older instinct wrote 0644 is tightened on the next export, bytes unchanged
        f = os.path.join(out, os.listdir(out)[0])
        os.chmod(f, 0o644)
        self.assertEqual(self.store.export_memories(out)["written"], 1)
        self.assertEqual(mode(f), 0o600)


# --- file modes and temp files --------------------------------------------------------
class TestFiles(_Base):
    def test_a_loose_store_is_tightened_on_open(self):
        self.store.observe("seq:a->b")
        c = sqlite3.connect(self.db)               # keeps -wal and -shm on disk
        c.execute("SELECT count(*) FROM instincts").fetchall()
        self.store.close()
        for s in ("", "-wal", "-shm"):
            if os.path.exists(self.db + s):
                os.chmod(self.db + s, 0o644)
        self.assertTrue(os.path.exists(self.db + "-wal"))
        s = self.open(self.db)
        s.stats()
        c.close()
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.db + suffix):
                self.assertEqual(mode(self.db + suffix), 0o600, suffix)

    def test_a_read_only_store_file_stays_read_only(self):
        self.store.observe("seq:a->b")
        self.store.close()
        os.chmod(self.db, 0o444)
        self.addCleanup(os.chmod, self.db, 0o600)
        instinct._tighten(self.db)
        self.assertEqual(mode(self.db), 0o400)

    def _killed_midway(self, code, where):
        """Run `code` in a child that blocks forever at the step it patches; kill -9 it once its
        temp file appears in `where`; return the names of the temp files it left."""
        before = set(os.listdir(where))
        p = self.python(code)
        self.addCleanup(p.kill)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            left = [n for n in set(os.listdir(where)) - before if n.endswith(".tmp")]
            if left and p.stdout.readable():
                break
            if p.poll() is not None:
                self.fail("child ended: " + p.stderr.read())
            time.sleep(0.02)
        else:
            self.fail("the child made no temp file")
        time.sleep(0.3)                 # it is now blocked after filling the temp file
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        p.stdout.close()
        p.stderr.close()
        return left

    def test_killed_backup_and_restore_leave_nothing_after_the_next_open(self):
        for i in range(300):
            self.store.observe(f"seq:step{i}->next")
        self.store.close()
        elsewhere = os.path.join(self.tmp, "backups")
        os.mkdir(elsewhere)
        good = os.path.join(elsewhere, "good.db")
        self.open(self.db).backup(good)
        block = "import time\ndef stuck(*a, **k):\n    print('ready', flush=True)\n    time.sleep(600)\n"
        # backup into another folder, killed before its temp file is renamed
        left = self._killed_midway(
            f"import instinct\n{block}instinct.os.replace = stuck\n"
            f"instinct.InstinctStore({self.db!r}).backup({os.path.join(elsewhere, 'b.db')!r})",
            elsewhere)
        self.assertTrue(left)
        # restore, killed after it staged the backup
        left2 = self._killed_midway(
            f"import instinct\n{block}instinct._check_backup = stuck\n"
            f"instinct.InstinctStore({self.db!r}).restore({good!r})", self.dbdir)
        self.assertTrue(left2)
        self.assertGreater(os.path.getsize(os.path.join(self.dbdir, left2[0])), 4096)
        s = self.open(self.db)
        self.assertEqual(s.stats()["total"], 300)
        self.assertEqual([n for n in os.listdir(elsewhere) if n.startswith(".instinct-")], [])
        self.assertEqual([n for n in os.listdir(self.dbdir) if n.startswith(".instinct-")], [])
        self.assertEqual(sorted(os.listdir(elsewhere)), ["good.db"])

    def test_a_running_backup_keeps_its_temp_file(self):
        d = os.path.join(self.tmp, "other")
        os.mkdir(d)
        tmp = instinct._temp_file(d, self.dbdir)      # this process is alive
        self.open(self.db).stats()
        self.assertTrue(os.path.exists(tmp))
        instinct._drop_temp(tmp, self.dbdir)
        self.assertEqual(os.listdir(d), [])
        self.assertEqual([n for n in os.listdir(self.dbdir) if n.startswith(".instinct-")], [])


if __name__ == "__main__":
    unittest.main()
