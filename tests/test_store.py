"""Tests for the store's hardening (issue 14): restore, purge, file modes, temp files, WAL size,
read-only stores, bounded input, secrets in memories.

stdlib unittest only; real SQLite files in temp dirs; real subprocesses for the CLI, the MCP
server and the kills.
"""
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import time
import unittest

import instinct  # noqa: E402
from instinct import InstinctStore, ValidationError  # noqa: E402
from tests.helpers import (INITIALIZED, INSTINCT_PY, ProjectCase, init_msg, python_child,  # noqa: E402,F401
                           raw_bytes, read, req, serve_once, setUpModule, write)

T0 = ProjectCase.T0


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


class _Base(ProjectCase):
    """A git project and a 0700 store folder (tests.helpers.ProjectCase); child Pythons."""

    def python(self, code):
        """Start `code` in a child Python with instinct importable; returns the Popen."""
        return python_child(code)

    def raw(self, path=None):
        """Every byte of the store: the file, its WAL and its SHM."""
        return raw_bytes(path or self.db)


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
        """Run `code` in a child that blocks forever at the step it patches; kill -9 it once it
        says it is blocked; return {name: size} of the temp files it made in `where`."""
        before = set(os.listdir(where))
        p = self.python(code)
        self.addCleanup(p.kill)
        line = p.stdout.readline()      # the child says 'ready' once it is blocked at that step
        if line != "ready\n":
            p.wait()
            self.fail("child ended: " + p.stderr.read())
        left = {n: os.path.getsize(os.path.join(where, n)) for n in set(os.listdir(where)) - before
                if n.startswith(".instinct-")}
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
            f"import instinct\n{block}instinct._Backup.check_backup = stuck\n"
            f"instinct.InstinctStore({self.db!r}).restore({good!r})", self.dbdir)
        self.assertTrue(left2)
        self.assertGreater(max(left2.values()), 4096)          # a full copy of the backup
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


# --- bounded input ----------------------------------------------------------------------
class TestBoundedInput(_Base):
    def mcp(self, *calls):
        """Run the stdio server over these tools/call (name, arguments) -> the results, in order."""
        lines = [init_msg("2025-06-18", mid=0), INITIALIZED]
        lines += [req(i + 1, "tools/call", {"name": n, "arguments": a}) for i, (n, a) in enumerate(calls)]
        out, _ = serve_once(lines, env={**os.environ, "INSTINCT_DB": self.db}, cwd=self.proj)
        self.assertEqual([o["id"] for o in out], list(range(len(calls) + 1)))
        return [o["result"] for o in out[1:]]

    def sparse(self, name, size):
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.truncate(size)                 # no data blocks: cheap at any size
        return path

    def fifo(self, name):
        path = os.path.join(self.tmp, name)
        os.mkfifo(path)
        return path

    @unittest.skipUnless(hasattr(os, "mkfifo"), "needs FIFOs")
    def test_cli_import_refuses_a_fifo_and_an_oversized_file(self):
        big = self.sparse("big.json", instinct.MAX_IMPORT_BYTES + 1)
        r = self.cli_process("import", big)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertIn("larger than 128 MiB", r.stderr)
        r = self.cli_process("import", self.fifo("rules.json"), timeout=30)      # would block forever
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("not a regular file", r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        r = self.cli_process("import", "/dev/null")                             # a device, even an empty one
        self.assertIn("not a regular file", r.stderr)
        self.assertEqual(self.store.stats()["total"], 0)

    @unittest.skipUnless(hasattr(os, "mkfifo"), "needs FIFOs")
    def test_mcp_imports_refuse_a_fifo_and_oversized_files_and_keep_serving(self):
        md = os.path.join(self.tmp, "mem")
        os.mkdir(md)
        with open(os.path.join(md, "a.md"), "w") as f:
            f.write("---\nname: a\ndescription: Uses tabs\nmetadata:\n  type: user\n---\nTabs.\n")
        os.mkfifo(os.path.join(md, "b.md"))                  # a FIFO among the files: skipped
        big_md = self.sparse("big.md", instinct.MAX_MEMORY_FILE + 1)
        res = self.mcp(("import_rules", {"file": self.fifo("r.json")}),
                       ("import_rules", {"file": self.sparse("r2.json", instinct.MAX_IMPORT_BYTES + 1)}),
                       ("memory_import", {"path": self.fifo("m.md")}),
                       ("memory_import", {"path": big_md}),
                       ("memory_import", {"path": md}),
                       ("stats", {}))
        for r, what in zip(res[:4], ("not a regular file", "larger than 128 MiB",
                                     "not a regular file", "larger than 1 MiB")):
            self.assertTrue(r["isError"], r)
            self.assertIn(what, r["content"][0]["text"])
            self.assertNotIn("Traceback", r["content"][0]["text"])
        self.assertFalse(res[4]["isError"], res[4])
        self.assertEqual(res[4]["structuredContent"]["added"], 1)
        self.assertFalse(res[5]["isError"])

    def test_memory_import_bounds_a_whole_folder(self):
        md = os.path.join(self.tmp, "many")
        os.mkdir(md)
        for i in range(5):
            with open(os.path.join(md, f"m{i}.md"), "w") as f:
                f.write(f"---\nname: m{i}\ndescription: Fact {i}\nmetadata:\n  type: reference\n---\n"
                        + "x" * 7000 + "\n")
        old = instinct.MAX_MEMORY_DIR
        instinct.MAX_MEMORY_DIR = 3 * 7100         # the folder holds ~35,500 bytes
        try:
            with self.assertRaises(ValidationError) as cm:
                self.store.import_memories(md)
        finally:
            instinct.MAX_MEMORY_DIR = old
        self.assertIn("import fewer at once", str(cm.exception))
        self.assertEqual(self.store.memories(), [])
        self.assertEqual(self.store.import_memories(md)["added"], 5)

# --- the WAL stays small -------------------------------------------------------------------
class TestWal(_Base):
    def test_wal_stays_bounded_when_no_process_ever_closes(self):
        """Like hook processes: each call opens the store, writes and ends with os._exit, so
        SQLite's close-time checkpoint never runs. 8 MB of writes; the WAL stays near 4 MB."""
        self.store.observe("seq:warm")
        code = (f"import os, instinct\nkeep = []\nfor i in range(500):\n"
                f"    s = instinct.InstinctStore({self.db!r}, timeout=3.0)\n"
                f"    s.observe(f'seq:w{{os.getpid()}}-{{i}}', metadata={{'pad': 'x' * 4000}})\n"
                f"    keep = (keep + [s])[-20:]\n"
                f"os._exit(0)\n")
        procs = [self.python(code) for _ in range(4)]
        for p in procs:
            out, err = p.communicate(timeout=300)
            self.assertEqual(p.returncode, 0, err)
        wal = os.path.getsize(self.db + "-wal")
        self.assertLess(wal, 6 * 1024 * 1024, wal)
        self.assertEqual(self.store.stats()["total"], 2001)

    def test_the_next_one_shot_writer_trims_the_wal_after_a_server_burst(self):
        server = self.open(self.db)
        server._db.set_checkpoint(instinct.WAL_SERVER_CHECKPOINT_PAGES)      # as _Server does
        for i in range(1000):                       # ~20 MB of WAL, under 10,000 pages
            server.observe(f"seq:burst{i}", metadata={"pad": "x" * 4000})
        self.assertGreater(os.path.getsize(self.db + "-wal"), 8 * 1024 * 1024)
        for i in range(2):                          # two hook calls: checkpoint, then restart
            hook = InstinctStore(self.db, timeout=3.0)
            hook.observe("seq:after->burst")
            kept = hook._db._conn                   # never closed, like a hook process
        self.assertLessEqual(os.path.getsize(self.db + "-wal"), instinct.WAL_SIZE_LIMIT + 64 * 1024)
        kept.close()
        self.assertEqual(server.get("seq:after->burst")["confidence"], 2)


# --- read-only stores ------------------------------------------------------------------------
def _ro_prefix(folder):
    """argv prefix running a command with `folder` mounted read-only (a private mount namespace),
    or None where this machine cannot do that."""
    base = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-r", "-m"]
    probe = subprocess.run(base + ["sh", "-c", f"mount --bind {folder} {folder} && "
                                   f"mount -o remount,ro,bind {folder} && ! touch {folder}/probe"],
                           capture_output=True, timeout=30)
    if probe.returncode != 0:
        return None
    return base + ["sh", "-c", f'mount --bind {folder} {folder} && mount -o remount,ro,bind {folder}'
                   ' && exec "$0" "$@"']


class TestReadOnly(_Base):
    def setUp(self):
        super().setUp()
        for _ in range(6):
            self.store.observe("pref:tabs", project=self.proj)
        self.store.consolidate()
        self.store.remember("project", "Tabs everywhere", "Indent with tabs.", project=self.proj,
                            how_to_apply="Configure the editor for tabs")
        self.store.close()
        self.script = INSTINCT_PY

    def run_ro(self, prefix, *args, stdin=None):
        env = {**os.environ, "INSTINCT_DB": self.db}
        env.pop("INSTINCT_SESSION", None)
        return subprocess.run(prefix + [sys.executable, self.script, *args], capture_output=True,
                              text=True, timeout=60, env=env, cwd=self.proj, input=stdin)

    def check_reads(self, prefix, total=1):
        r = self.run_ro(prefix, "suggest")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("pref:tabs", r.stdout)
        r = self.run_ro(prefix, "--json", "stats")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["total"], total)
        r = self.run_ro(prefix, "recall", "tabs", "--project", self.proj)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Tabs everywhere", r.stdout)
        r = self.run_ro(prefix, "hook", "session-start",
                        stdin=json.dumps({"cwd": self.proj, "session_id": "s1"}))
        self.assertEqual(r.returncode, 0, r.stderr)
        ctx = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
        self.assertIn("Preference: tabs", ctx)
        self.assertIn("Tabs everywhere", ctx)
        r = self.run_ro(prefix, "observe", "pref:spaces")
        self.assertEqual(r.returncode, 1)
        self.assertIn("read-only", r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)

    def test_reads_work_on_a_read_only_file_system(self):
        prefix = _ro_prefix(self.dbdir)
        if prefix is None:
            self.skipTest("cannot mount a read-only folder here")
        self.check_reads(prefix)                   # a cleanly closed store: no WAL beside it
        c = sqlite3.connect(self.db)           # an open reader keeps the next writer's WAL
        c.execute("SELECT count(*) FROM instincts").fetchall()
        self.addCleanup(c.close)
        self.assertEqual(self.cli_process("observe", "seq:a->b").returncode, 0)
        self.assertTrue(os.path.exists(self.db + "-wal"))
        self.check_reads(prefix, total=2)
        r = self.run_ro(prefix, "--json", "get", "seq:a->b")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_reads_work_on_a_read_only_store_file(self):
        os.chmod(self.db, 0o444)
        prefix = []
        if os.geteuid() == 0:                      # root writes anything: run as nobody
            for p in (self.tmp, self.dbdir, self.proj):
                os.chmod(p, 0o755)
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            if subprocess.run(prefix + [sys.executable, "-c", "pass"], capture_output=True).returncode != 0:
                self.skipTest("cannot run as another user here")
            # a checkout in a private (0700) folder, as a home often is: nobody cannot open the
            # file there, so it runs a copy beside the store (a 0755 temp dir)
            self.script = shutil.copy(INSTINCT_PY, os.path.join(self.tmp, "instinct.py"))
            os.chmod(self.script, 0o644)
            if subprocess.run(prefix + [sys.executable, self.script, "--version"],
                              capture_output=True).returncode != 0:
                self.skipTest(f"another user cannot reach {self.tmp} (a private temp dir)")
        self.check_reads(prefix)
        self.assertEqual(mode(self.db), 0o444)


# --- forgetting removes every copy --------------------------------------------------------------
class TestPurge(_Base):
    SECRET = b"zqxsecret"

    def setUp(self):
        super().setUp()
        for _ in range(6):
            self.store.observe("pref:keep-this", project=self.proj)
            self.store.observe("pref:zqxsecret-token-77", project=self.proj,
                               metadata={"note": "zqxsecret in metadata"})
        self.store.consolidate()
        self.assertTrue(self.store.search("zqxsecret"))          # into the full-text index
        self.assertTrue(self.store.suggest(project=self.proj))   # a 'surface' event lists it
        self.store.merge("pref:zqxsecret-alias", "pref:zqxsecret-token-77")
        self.store.config("pattern.pref:zqxsecret-token-77.rule_threshold", "20")

    def assertGone(self, secret=None, path=None):
        raw = self.raw(path)
        at = raw.find(secret or self.SECRET)
        self.assertEqual(at, -1, f"{secret or self.SECRET!r} still at byte {at} of {len(raw)}")
        self.assertGreater(len(raw), 4096)

    def test_forget_removes_every_copy_of_a_pattern(self):
        self.assertIn(self.SECRET, self.raw())
        self.store.forget("pref:zqxsecret-token-77", project=self.proj)
        self.assertGone()
        self.assertEqual([r["pattern"] for r in self.store.suggest(project=self.proj)], ["pref:keep-this"])
        self.assertEqual(self.store.search("keep")[0]["pattern"], "pref:keep-this")
        self.assertEqual(self.store.doctor()["ok"], True)

    def test_forget_memory_removes_every_copy(self):
        m = self.store.remember("project", "Deploy key zqxmemsecret", "The key is zqxmemsecret-1.",
                                why="zqxmemsecret why")
        self.store.remember("project", "Deploy key zqxmemsecret", "The key is zqxmemsecret-1.")  # reinforce
        self.assertTrue(self.store.recall("zqxmemsecret deploy"))
        self.store.remember("user", "Prefers short answers", "Keep replies short.")
        self.assertIn(b"zqxmemsecret", self.raw())
        self.store.forget_memory(m["id"])
        self.assertGone(b"zqxmemsecret")
        self.assertEqual([r["title"] for r in self.store.recall("short answers")], ["Prefers short answers"])

    def test_gc_removes_what_it_deletes(self):
        m = self.store.remember("episode", "Fixed zqxgcsecret outage", "Restarted the zqxgcsecret pod.")
        self.store.forget("pref:zqxsecret-token-77", project=self.proj)
        self.store.observe("seq:zqxdecay->gone", project=self.proj)      # confidence 1: decays away
        self.assertTrue(self.store.search("zqxdecay"))
        self.clock.advance(days=400)                      # the memory fades, is archived, then deleted
        for _ in range(3):
            self.store.memory_decay()
            self.clock.advance(days=50)
        self.assertEqual(self.store.get_memory(m["id"])["archived"], True)
        self.clock.advance(days=200)
        for day in range(30):                             # 30 days of the project's sessions
            self.clock.advance(days=1)
            self.store._record_tool({"session_id": f"d{day}", "cwd": self.proj,
                                    "tool_name": "Bash", "tool_input": {"command": "ls"}})
        self.store.mine()
        r = self.store.gc(days_inactive=30)
        self.assertEqual(r["memories_deleted"], 1)
        with self.assertRaises(instinct.NotFoundError):
            self.store.get("seq:zqxdecay->gone", project=self.proj)
        self.assertGone(b"zqxgcsecret")
        self.assertGone(b"zqxdecay")

    def exported_under(self, human, pattern):
        """CLAUDE.md holding `human`, then a learned `pattern` exported into it -> its path."""
        claude = os.path.join(self.proj, "CLAUDE.md")
        write(claude, human)
        for _ in range(6):
            self.store.observe(pattern, project=self.proj)
        self.store.consolidate()
        self.store.export_rules(format="claude", project=self.proj, min_confidence=1,
                                write=claude)
        return claude

    def purged_but_not_reached(self, text, claude):
        """`instinct purge TEXT` as a process; it names `claude` as not reached -> its text."""
        self.store.close()
        r = self.cli_process("purge", text)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"not reached (the text stands outside what instinct wrote): {claude}",
                      r.stdout)
        return read(claude)

    def test_purge_rewrites_what_instinct_wrote_and_names_what_it_cannot_reach(self):
        claude = self.exported_under("# Notes\nOur token prefix is zqxsecret, see the wiki.\n",
                                     "pref:zqxsecret-token-77")
        cursor = self.store.export_rules(format="cursor", project=self.proj, min_confidence=1,
                                         write=os.path.join(self.proj, "x.mdc"))["path"]
        self.store.remember("reference", "API zqxsecret", "Call it with the zqxsecret token.")
        self.store.remember("user", "Prefers short answers", "Keep replies short.")
        mems = os.path.join(self.proj, "mem")
        self.store.export_memories(mems)
        self.assertEqual(len(os.listdir(mems)), 2)
        text = self.purged_but_not_reached("zqxsecret", claude)
        self.assertIn("Our token prefix is zqxsecret", text)          # the user's own line
        block = text[text.index("<!-- instinct:begin -->"):]
        self.assertNotIn("zqxsecret", block)
        self.assertIn("keep-this", block)
        self.assertNotIn("zqxsecret", read(cursor))
        self.assertIn("keep-this", read(cursor))
        self.assertEqual(os.listdir(mems), [m for m in os.listdir(mems) if "short" in m])
        self.assertEqual(len(os.listdir(mems)), 1)

    def test_purge_finds_instincts_block_as_export_does_not_a_marker_quoted_in_a_fence(self):
        """A rules file that quotes instinct's marker in a code fence, above a human line holding
        the text: purge reads the block where export wrote it and leaves the human line."""
        human = ("# Notes\n```\n<!-- instinct:begin -->\n```\n"
                 "Our token prefix is zqxfence, see the wiki.\n")
        claude = self.exported_under(human, "pref:zqxfence-token-78")
        text = self.purged_but_not_reached("zqxfence", claude)
        self.assertTrue(text.startswith(human), text)              # the user's part, untouched
        self.assertNotIn("zqxfence", text[len(human):])            # the learned line, gone

    def test_purge_removes_a_text_everywhere_and_from_the_bak(self):
        self.store.remember("reference", "API endpoint", "Call it with token zqxsecret-abc.")
        self.store.remember("user", "Prefers short answers", "Keep replies short.")
        self.store.close()
        import shutil
        shutil.copy(self.db, self.db + ".bak")               # what restore keeps
        r = self.cli_process("--json", "purge", "zqxsecret")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = json.loads(r.stdout)
        self.assertEqual((out["instincts"], out["memories"]), (1, 1))
        self.assertGreater(out["events"], 6)
        self.assertGreaterEqual(out["other"], 2)                 # the alias and the setting
        self.assertGreater(out["backup"], 8)
        self.assertGone()
        self.assertGone(path=self.db + ".bak")
        s = self.open(self.db)
        self.assertEqual(s.stats()["total"], 1)
        self.assertEqual([m["title"] for m in s.memories()], ["Prefers short answers"])
        self.assertEqual(self.cli_process("purge", "zqxsecret").returncode, 0)       # idempotent
        r = self.cli_process("purge", "abc")
        self.assertEqual(r.returncode, 2)
        self.assertIn("at least 4 characters", r.stderr)
        self.assertTrue(instinct.OPERATIONS["purge"].destructive)


# --- restore copies data, never a schema ---------------------------------------------------------
class TestRestore(_Base):
    def setUp(self):
        super().setUp()
        for _ in range(3):
            self.store.observe("seq:mine->live", project=self.proj)
        self.store.remember("user", "Prefers tabs", "Indent with tabs.")

    def hostile_backup(self, name, *sql):
        """A real backup of a store with 2 patterns and 1 memory, then `sql` run on it."""
        src = self.open(os.path.join(self.tmp, name + "-src.db"))
        for _ in range(5):
            src.observe("seq:from->backup")
        src.observe("pref:stdlib-first")
        src.remember("project", "Uses pytest", "Run pytest -q.")
        path = os.path.join(self.tmp, name + ".db")
        src.backup(path)
        src.close()
        c = sqlite3.connect(path)
        for stmt in sql:
            c.execute(stmt)
        c.commit()
        c.close()
        return path

    def names(self):
        return sorted(r[0] for r in sqlite3.connect(self.db).execute(
            "SELECT type || ' ' || name FROM sqlite_master WHERE name NOT LIKE 'sqlite%'"))

    def test_foreign_tables_triggers_and_views_are_never_installed(self):
        own = self.names()
        path = self.hostile_backup(
            "hostile",
            "CREATE TABLE evil (x TEXT)", "INSERT INTO evil VALUES ('payload')",
            "CREATE VIEW v_evil AS SELECT * FROM evil",
            "CREATE TRIGGER wipe AFTER INSERT ON events BEGIN DELETE FROM memories; END",
            "CREATE TRIGGER wipe2 AFTER UPDATE ON instincts BEGIN DELETE FROM instincts; END",
            "CREATE INDEX ix_evil ON instincts(source)")
        r = self.store.restore(path)
        self.assertEqual(r["instincts"], 2)
        self.assertEqual(self.names(), own)                   # exactly instinct's own schema
        self.store.observe("seq:from->backup")                # would fire both triggers
        self.store.remember("feedback", "Short answers", "Keep it short.")
        self.assertEqual(self.store.get("seq:from->backup")["confidence"], 6)
        self.assertEqual(sorted(m["title"] for m in self.store.memories()), ["Short answers", "Uses pytest"])
        self.assertEqual(self.store.recall("pytest")[0]["title"], "Uses pytest")
        self.assertEqual(self.store.search("stdlib")[0]["pattern"], "pref:stdlib-first")
        self.assertTrue(self.store.doctor()["ok"])
        self.assertNotIn(b"payload", self.raw())
        # the .bak holds the store as it was, and restoring it brings that back
        self.store.restore(self.db + ".bak")
        self.assertEqual(self.store.get("seq:mine->live", project=self.proj)["confidence"], 3)

    def test_doctor_reports_objects_instinct_did_not_create(self):
        self.assertTrue(self.store.doctor()["ok"])
        with self.store._write() as c:
            c.execute("CREATE TRIGGER wipe AFTER INSERT ON events BEGIN DELETE FROM memories; END")
        r = self.store.doctor()
        self.assertFalse(r["ok"])
        check = next(c for c in r["checks"] if c["name"] == "schema")
        self.assertIn("trigger wipe", check["detail"])

    def test_a_view_named_instincts_is_refused_and_the_store_keeps_working(self):
        path = self.hostile_backup("viewed", "ALTER TABLE instincts RENAME TO real_instincts",
                                   "CREATE VIEW instincts AS SELECT * FROM real_instincts")
        with self.assertRaises(ValidationError) as cm:
            self.store.restore(path)
        self.assertIn("not a usable instinct backup", str(cm.exception))
        self.assertEqual(self.store.observe("seq:mine->live", project=self.proj)["confidence"], 4)
        self.assertTrue(self.store.doctor()["ok"])
        self.assertEqual([n for n in os.listdir(self.dbdir) if n.startswith(".instinct-")], [])

    def test_hostile_table_definitions_and_values(self):
        # a backup whose instincts table caps confidence: the data comes, the cap does not
        path = self.hostile_backup(
            "capped", "ALTER TABLE instincts RENAME TO old",
            "CREATE TABLE instincts (id INTEGER PRIMARY KEY, pattern TEXT NOT NULL, category TEXT NOT NULL,"
            " confidence INTEGER CHECK (confidence < 7), first_seen TEXT NOT NULL, last_seen TEXT NOT NULL,"
            " source TEXT NOT NULL, project TEXT NOT NULL, promoted INTEGER NOT NULL, metadata TEXT NOT NULL,"
            " decayed_at TEXT NOT NULL DEFAULT '', quiet INTEGER NOT NULL DEFAULT 0, UNIQUE (pattern, project))",
            "INSERT INTO instincts SELECT id, pattern, category, confidence, first_seen, last_seen, source,"
            " project, promoted, metadata, decayed_at, quiet FROM old", "DROP TABLE old")
        self.store.restore(path)
        for _ in range(3):
            self.store.observe("seq:from->backup")
        self.assertEqual(self.store.get("seq:from->backup")["confidence"], 8)
        # values instinct cannot read are refused, the store untouched
        bad = self.hostile_backup("bad", "UPDATE instincts SET promoted = 99")
        with self.assertRaises(ValidationError) as cm:
            self.store.restore(bad)
        self.assertIn("invalid values", str(cm.exception))
        self.assertEqual(self.store.get("seq:from->backup")["confidence"], 8)
        r = self.cli_process("restore", bad)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)


# --- long writers leave room for hooks ------------------------------------------------------------
class TestShortTransactions(_Base):
    def test_a_big_import_never_makes_a_hook_wait_past_its_timeout(self):
        n = 40_000                     # one transaction of these held the lock for 3-8 s here
        path = os.path.join(self.tmp, "big.json")
        with open(path, "w") as f:
            json.dump([{"pattern": f"seq:step{i}->next{i % 97}", "confidence": 1 + i % 12}
                       for i in range(n)], f)
        self.store.observe("seq:warm")
        stop = os.path.join(self.tmp, "stop")
        hook = self.python(
            f"import os, time, instinct\nok = locked = 0\nworst = 0.0\n"
            f"while not os.path.exists({stop!r}):\n"
            f"    s = instinct.InstinctStore({self.db!r}, timeout=instinct._Capture.HOOK_TIMEOUT_S)\n"
            f"    t = time.monotonic()\n"
            f"    try:\n        s.observe('seq:hook->write'); ok += 1\n"
            f"    except instinct.InstinctError as e:\n        locked += 1; print(e, flush=True)\n"
            f"    worst = max(worst, time.monotonic() - t)\n"
            f"    s.close(); time.sleep(0.05)\n"
            f"print('ok', ok, 'locked', locked, 'worst', worst)\n")
        self.addCleanup(hook.kill)
        time.sleep(0.5)
        r = self.store.import_rules(path)
        with open(stop, "w"):
            pass
        out, err = hook.communicate(timeout=120)
        self.assertEqual(r["added"], n)
        last = out.strip().splitlines()[-1].split()
        self.assertEqual(last[2:4], ["locked", "0"], out + err)
        # a hook waits for one short transaction at most: well inside its 3 s timeout
        self.assertLess(float(last[5]), instinct._Capture.HOOK_TIMEOUT_S / 2, out)
        self.assertGreater(int(last[1]), 5)
        self.assertEqual(self.store.get("seq:hook->write")["confidence"], int(last[1]))

# --- secrets never reach memories, the briefing or exports -----------------------------------------
GH = "ghp_" + "Q7x" * 10                  # a GitHub-token-shaped value
RANDOM = "Zk8Jq2Lw9Xv4Nb7Mc1Rt5Yp3"


class TestMemorySecrets(_Base):
    def test_remember_redacts_and_warns(self):
        m = self.store.remember("project", f"Deploy with token {GH}",
                                f"Run deploy.sh; password={RANDOM}x and https://bob:hunter22@example.com",
                                how_to_apply=f"export API_KEY={RANDOM}", project=self.proj,
                                metadata={"env": {"TOKEN": GH}})
        self.assertEqual(len(m["warnings"]), 1)
        for field in ("title", "content", "how_to_apply"):
            self.assertIn("[REDACTED]", m[field])
        blob = json.dumps(m)
        for secret in (GH, RANDOM, "hunter22"):
            self.assertNotIn(secret, blob)
            self.assertEqual(self.raw().find(secret.encode()), -1)
        self.assertEqual(m["metadata"], {"env": {"TOKEN": "[REDACTED]"}})
        plain = self.store.remember("user", "Prefers pytest", "Run pytest -q; commit 3f2a9c0d1e4b5a69 fixed it.")
        self.assertNotIn("warnings", plain)
        self.assertEqual(plain["content"], "Run pytest -q; commit 3f2a9c0d1e4b5a69 fixed it.")
        r = self.cli_process("remember", "reference", "CI token", f"the token is {GH}")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("warning: secret-looking text in content", r.stdout)
        self.assertNotIn(GH, r.stdout)

    def test_a_stored_secret_never_reaches_the_briefing_or_an_export(self):
        # as an older instinct stored it, before redaction existed
        m = self.store.remember("project", "Deploy key", "Use the deploy key.", project=self.proj,
                                how_to_apply="Run deploy.sh")
        with self.store._write() as c:
            c.execute("UPDATE memories SET title = ?, how_to_apply = ?, content = ? WHERE id = ?",
                      (f"Deploy key {GH}", f"export TOKEN={RANDOM}", f"key {GH}", m["id"]))
        text = self.store._briefing(self.proj)
        self.assertIn("Deploy key [REDACTED]", text)
        self.assertNotIn(GH, text)
        self.assertNotIn(RANDOM, text)
        out = os.path.join(self.tmp, "out")
        self.store.export_memories(out)
        for n in os.listdir(out):
            with open(os.path.join(out, n), encoding="utf-8") as f:
                body = f.read()
            self.assertNotIn(GH, body)
            self.assertNotIn(RANDOM, body)
            self.assertIn("[REDACTED]", body)

    def test_import_memories_redacts(self):
        d = os.path.join(self.tmp, "md")
        os.mkdir(d)
        with open(os.path.join(d, "a.md"), "w") as f:
            f.write(f"---\nname: a\ndescription: Registry login\nmetadata:\n  type: reference\n---\n"
                    f"npm login with {GH}\n")
        self.store.import_memories(d)
        self.assertEqual(self.store.memories()[0]["content"], "npm login with [REDACTED]")
        self.assertEqual(self.raw().find(GH.encode()), -1)


if __name__ == "__main__":
    unittest.main()


class TestReadOnlyAndDamagedSay(_Base):
    """Issue 32 item 8: on a healthy read-only store doctor finds no error and forget, purge and gc
    say the store is read-only (not that the backup failed); a damaged store names the newest
    automatic backup and the restore command."""

    run_ro, script = TestReadOnly.run_ro, INSTINCT_PY

    def setUp(self):
        super().setUp()
        for _ in range(6):
            self.store.observe("pref:tabs", project=self.proj)
        self.store.close()

    def test_doctor_forget_and_gc_on_a_read_only_file_system(self):
        prefix = _ro_prefix(self.dbdir)
        if prefix is None:
            self.skipTest("cannot mount a read-only folder here")
        r = self.run_ro(prefix, "doctor")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn("ERROR", r.stdout)
        for args in (("forget", "pref:tabs"), ("gc",), ("purge", "tabs")):
            with self.subTest(args=args):
                r = self.run_ro(prefix, *args)
                self.assertEqual((r.returncode, r.stderr), (1, f"instinct: error: {self.db} is read-only:"
                                                               " nothing was changed\n"))
        self.assertEqual([n for n in os.listdir(self.dbdir) if n.endswith(".bak")], [])

    def test_a_damaged_store_names_its_newest_backup(self):
        self.assertEqual(self.cli_process("forget", "pref:tabs").returncode, 0)
        self.assertEqual(self.cli_process("gc").returncode, 0)
        newest = instinct._auto_backups(self.db)[-1]
        self.assertTrue(newest.endswith("-gc.bak"))
        c = sqlite3.connect(self.db)
        page = c.execute("SELECT rootpage FROM sqlite_master WHERE name = 'instincts_fts_config'").fetchone()[0]
        size = c.execute("PRAGMA page_size").fetchone()[0]
        c.close()
        with open(self.db, "r+b") as f:                 # the search index's config page: garbage
            f.seek((page - 1) * size)
            f.write(b"\xff" * size)
        r = self.cli_process("search", "tabs")
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"{self.db} is damaged", r.stderr)
        self.assertIn(f"instinct restore {newest}", r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertEqual(self.cli_process("restore", newest).returncode, 0)
        self.assertEqual(self.cli_process("search", "tabs").returncode, 0)
