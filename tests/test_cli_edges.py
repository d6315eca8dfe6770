"""The CLI's edges (issue 21): a closed pipe, Ctrl-C during import-history, an old Python, usage
errors in one line that name the CLI's own flags, folder imports and symlinks out of the folder,
an export with nothing to export, and what the package and README promise."""
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import unittest

import instinct
from tests.helpers import (INSTINCT_PY, ROOT, ProjectCase, StoreCase, child_env,  # noqa: F401
                           find_python, python_child, rows, run_instinct, setUpModule,
                           subcommands, temp_dir, write)
from tests.test_history import claude_dir_name, make_history


def closed_pipe_run(argv, env, cwd=None):
    """Run argv with its stdout a pipe nobody reads any more (the read end already closed, as
    after `| head -1`): every write to it fails -> (exit code, stderr)."""
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run(argv, stdout=w, stderr=subprocess.PIPE, text=True, env=env,
                              cwd=cwd, timeout=120)
    finally:
        os.close(w)
    return proc.returncode, proc.stderr


class TestClosedPipe(StoreCase):
    COMMANDS = (["setup", "codex"], ["setup", "claude-code", "--json"], ["--help"],
                ["decay", "--help"],
                ["list"], ["--json", "stats"], ["export", "--format", "claude"], ["--version"],
                ["session-summary"], ["doctor"])

    def test_every_kind_of_command_exits_quietly(self):
        for i in range(50):
            self.store.observe(f"seq:p{i}")
        self.store.close()
        env = child_env(self.tmp, self.db)
        for argv in self.COMMANDS:
            with self.subTest(argv=argv):
                code, err = closed_pipe_run([sys.executable, INSTINCT_PY, *argv], env)
                self.assertEqual(err, "")
                self.assertIn(code, (0, 1))       # doctor may find a check failing; no traceback
                if argv[0] != "doctor":
                    self.assertEqual(code, 0)

    def test_the_console_script_form_exits_quietly_too(self):
        """pip's `instinct` script ends with sys.exit(main()): the interpreter's final flush of
        stdout must not report a second broken pipe."""
        code = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import instinct; "
                "sys.exit(instinct.main())")
        for argv in (["setup", "codex"], ["--help"], ["list"]):
            with self.subTest(argv=argv):
                got = closed_pipe_run([sys.executable, "-c", code, ROOT, *argv],
                                      child_env(self.tmp, self.db))
                self.assertEqual(got, (0, ""))


class TestInterruptedImport(unittest.TestCase):
    N = 300

    def setUp(self):
        self.home = temp_dir(self)
        self.repo = os.path.join(self.home, "work", "shop")
        os.makedirs(os.path.join(self.repo, ".git"))
        self.db = os.path.join(self.home, "store.db")
        folder = os.path.join(self.home, ".claude", "projects", claude_dir_name(self.repo))
        start = time.time() - 20 * 86400
        for sid, tr, _ in make_history(n=self.N, cwd=self.repo, start=start, spacing=3600):
            write(os.path.join(folder, sid + ".jsonl"), tr.text())

    def sessions(self):
        if not os.path.exists(self.db):
            return 0
        con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        try:
            return con.execute("SELECT count(DISTINCT session) FROM events"
                               " WHERE kind IN ('tool', 'tool_fail')").fetchone()[0]
        except sqlite3.Error:
            return 0
        finally:
            con.close()

    def test_ctrl_c_says_how_far_it_got_and_a_rerun_continues(self):
        env = child_env(self.home, self.db)
        proc = subprocess.Popen([sys.executable, INSTINCT_PY, "import-history"], cwd=self.repo,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while self.sessions() < 3 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        self.assertIsNone(proc.poll(), "the import ended before it could be interrupted")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 130, err)
        self.assertEqual(out, "")
        m = re.fullmatch(r"instinct: interrupted after (\d+) of (\d+) sessions \(those are kept\); "
                         r"run the same command again to continue\n", err)
        self.assertIsNotNone(m, err)
        done, total = int(m.group(1)), int(m.group(2))
        self.assertEqual(total, self.N)
        self.assertLess(done, self.N)
        kept = self.sessions()
        self.assertIn(kept, (done, done + 1))      # the one after the last count may be in too
        rerun = run_instinct("--json", "import-history", env=env, cwd=self.repo, timeout=600)
        self.assertEqual(rerun.returncode, 0, rerun.stderr)
        r = json.loads(rerun.stdout)
        self.assertEqual((r["skipped"], r["imported"]), (kept, self.N - kept))
        self.assertEqual(self.sessions(), self.N)
        con = sqlite3.connect(self.db)
        try:
            mined = con.execute("SELECT count(*) FROM mined_sessions").fetchone()[0]
        finally:
            con.close()
        self.assertEqual(mined, self.N)           # the interrupted run's unmined ones too


class TestOldPython(unittest.TestCase):
    """The version check comes before anything Python 3.8 cannot run (a dict | dict at class
    creation was the first): one line, no traceback; a hook still exits 0."""

    FAKE = ("import runpy, sys; sys.version_info = (3, 8, 18, 'final', 0); "
            "sys.argv = [sys.argv[1]] + sys.argv[2:]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")

    def test_a_faked_old_version_gets_one_line(self):
        for argv, code in ((["--version"], 1), (["stats"], 1), (["hook", "stop"], 0)):
            with self.subTest(argv=argv):
                proc = subprocess.run([sys.executable, "-c", self.FAKE, INSTINCT_PY, *argv],
                                      capture_output=True, text=True, timeout=60, input="{}",
                                      env=child_env(temp_dir(self)))
                self.assertEqual((proc.returncode, proc.stdout), (code, ""))
                self.assertEqual(proc.stderr, "instinct needs Python 3.10+ (this is Python 3.8)\n")

    def test_importing_it_on_an_old_version_is_an_import_error(self):
        child = python_child("sys.version_info = (3, 9, 0, 'final', 0)\n"
                             "try:\n    import instinct\nexcept ImportError as e:\n    print(e)")
        out, err = child.communicate(timeout=60)
        self.assertEqual((child.returncode, out, err), (0, "instinct needs Python 3.10+\n", ""))

    def test_a_real_python_3_8(self):
        py = find_python("3.8")
        if py is None:
            self.skipTest("no Python 3.8 on this machine (the faked version is tested above)")
        for argv, code in ((["--version"], 1), (["hook", "session-start"], 0)):
            with self.subTest(argv=argv):
                proc = run_instinct(*argv, python=py, input="{}", env=child_env(temp_dir(self)))
                self.assertEqual((proc.returncode, proc.stdout), (code, ""))
                self.assertEqual(proc.stderr, "instinct needs Python 3.10+ (this is Python 3.8)\n")


class TestUsageErrors(StoreCase):
    def test_refused_values_name_the_flag_not_the_parameter(self):
        cases = {("decay", "--days", "-5"): "instinct: error: argument --days: must be >= 1",
                 ("gc", "--days=0"): "instinct: error: argument --days: must be >= 1",
                 ("import-history", "--since", "0"):
                     "instinct: error: argument --since: must be >= 1",
                 ("export", "--min-confidence", "-1"):
                     "instinct: error: argument --min-confidence: must be >= 0"}
        for argv, line in cases.items():
            with self.subTest(argv=argv):
                self.assertEqual(self.assertOneLineError(self.run_cli(*argv), 2), line)
        with self.assertRaisesRegex(instinct.ValidationError,
                                    r"^argument 'days_inactive' must be >= 1$"):
            self.store.decay(days_inactive=-5)           # the API and MCP keep the parameter's name

    def test_a_typo_gets_the_closest_name_in_one_line(self):
        cases = {("sugest",): "instinct: error: unknown command 'sugest' (did you mean 'suggest'?)",
                 ("--json", "consolidte"):
                     "instinct: error: unknown command 'consolidte' (did you mean 'consolidate'?)",
                 ("frobnicate",):
                     "instinct: error: unknown command 'frobnicate' (instinct --help lists them)",
                 ("suggest", "--limt", "3"):
                     "instinct: error: unrecognized arguments: --limt 3 (did you mean '--limit'?)",
                 ("setup", "codex", "--skope=user"):
                     "instinct: error: unrecognized arguments: --skope=user "
                     "(did you mean '--scope'?)"}
        for argv, line in cases.items():
            with self.subTest(argv=argv):
                self.assertEqual(self.assertOneLineError(self.run_cli(*argv), 2), line)

    def test_every_usage_error_is_one_line_exit_2(self):
        for argv in (["get"], ["export", "--format", "nope"], ["decay", "--days", "x"],
                     ["observe", "x", "--meta", "[1]"], ["setup", "nope"], ["remember", "user"],
                     ["similar", "--threshold", "nan"], ["list", "--level"], ["recall"],
                     ["config", "a", "b", "c"], ["--db"]):
            with self.subTest(argv=argv):
                line = self.assertOneLineError(self.run_cli(*argv), 2)
                self.assertNotIn("usage:", line)

    def test_metavars_say_what_a_value_is(self):
        cmds = subcommands(instinct.build_parser())
        for op in instinct.OPERATIONS.values():
            shown = {max(a.option_strings, key=len): a.metavar for a in cmds[op.cli]._actions
                     if a.option_strings}
            for p in op.params:
                if p.positional or p.type is bool or p.choices:
                    continue
                with self.subTest(op=op.cli, flag=p.flag):
                    want = {int: "N", float: "X", dict: "JSON"}.get(p.type)
                    if want:
                        self.assertEqual(shown[p.flag], want)
                    elif p.name in ("write", "path"):
                        self.assertEqual(shown[p.flag], "PATH")
        helps = {c: self.run_cli(c, "--help").stdout for c in ("export", "import-history",
                                                               "session-summary")}
        self.assertIn("--write PATH", helps["export"])
        self.assertNotIn("WRITE", helps["export"])
        self.assertIn("--since N", helps["import-history"])
        self.assertIn("--since WHEN", helps["session-summary"])
        self.assertNotIn("SINCE", helps["import-history"] + helps["session-summary"])


class TestFolderImports(ProjectCase):
    MEMORY = "---\nname: {name}\ndescription: {title}\nmetadata:\n  type: user\n---\n{body}\n"

    def test_import_memories_skips_symlinks_out_of_the_folder(self):
        d = os.path.join(self.tmp, "mem")
        write(os.path.join(d, "tabs.md"),
              self.MEMORY.format(name="tabs", title="Tabs", body="Use tabs."))
        outside = os.path.join(self.tmp, "secret.md")
        write(outside,
              self.MEMORY.format(name="secret", title="Outside", body="Not in the folder."))
        os.symlink(outside, os.path.join(d, "outside.md"))
        os.symlink("/dev/zero", os.path.join(d, "zero.md"))
        os.symlink("/etc/hostname", os.path.join(d, "host.md"))
        os.symlink("tabs.md", os.path.join(d, "again.md"))           # inside: read (same memory)
        os.mkfifo(os.path.join(d, "fifo.md"))
        r = self.cli("--json", "import-memories", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual((got["files"], got["added"], got["links_skipped"]), (2, 1, 3))
        self.assertEqual([m["title"] for m in self.store.memories()], ["Tabs"])
        r = self.cli("import-memories", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("symlinks out of the folder skipped: 3", r.stdout)

    def test_import_history_path_skips_symlinks_out_of_the_folder(self):
        d = os.path.join(self.tmp, "hist")
        (sid, tr, _), (sid2, tr2, _) = make_history(n=2, cwd=self.proj, start=time.time() - 86400,
                                                     spacing=600)
        write(os.path.join(d, sid + ".jsonl"), tr.text())
        write(os.path.join(self.tmp, "elsewhere", sid2 + ".jsonl"), tr2.text())
        os.symlink(os.path.join(self.tmp, "elsewhere", sid2 + ".jsonl"), os.path.join(d, "b.jsonl"))
        os.symlink("/dev/zero", os.path.join(d, "zero.jsonl"))        # read, it would never end
        os.symlink(os.path.join(self.tmp, "elsewhere"), os.path.join(d, "linked"))
        os.mkfifo(os.path.join(d, "fifo.jsonl"))                      # opened, it would block
        r = self.cli("--json", "import-history", "--path", d, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual((got["sessions"], got["imported"], got["links_skipped"]), (1, 1, 3))
        sessions = {s for s, in rows(self.db,
                                     "SELECT DISTINCT session FROM events WHERE session != ''")}
        self.assertEqual(sessions, {sid})
        r = self.cli("import-history", "--path", d, timeout=120)
        self.assertIn("symlinks out of the folder skipped: 3", r.stdout)


class TestExportNothing(ProjectCase):
    def test_no_rules_writes_no_file_and_a_rules_file_holds_what_the_briefing_shows(self):
        target = os.path.join(self.proj, "CLAUDE.md")
        r = self.cli("export", "--format", "claude", "--write", "CLAUDE.md")
        self.assertEqual((r.returncode, r.stdout), (1, ""))
        self.assertEqual(r.stderr, "instinct: error: nothing the session briefing shows here to "
                         f"export, {target} not written; no pattern is mature yet (instinct "
                         "import-history learns from past sessions)\n")
        self.observe("pref:tabs", 6, project=self.proj)
        self.observe("seq:lint->test", 7)
        self.store.consolidate()
        briefing = [ln[2:] for ln in self.store.briefing(self.proj).splitlines()
                    if ln.startswith("- ")]
        self.assertEqual(len(briefing), 2)
        for fmt, path in (("claude", target), ("cursor", os.path.join(self.proj, ".cursor", "rules",
                                                                        "instinct.mdc"))):
            with self.subTest(fmt=fmt):
                r = self.cli("export", "--format", fmt, "--write", self.proj)
                self.assertEqual(r.returncode, 0, r.stderr)
                lines = [ln[2:] for ln in self.read(path).splitlines() if ln.startswith("- ")]
                self.assertEqual(lines, briefing)                 # the same items, same words
        r = self.cli("export", "--format", "claude", "--write", "CLAUDE.md",
                     "--min-confidence", "7")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("Preference: tabs", self.read(target))
        # a block instinct wrote before is brought up to date, to nothing if need be
        r = self.cli("export", "--format", "claude", "--write", "CLAUDE.md",
                     "--min-confidence", "50")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("No rules learned yet.", self.read(target))

    def test_the_mcp_tool_gets_the_same_error(self):
        with self.assertRaisesRegex(instinct.NotFoundError,
                                    "nothing the session briefing shows here to export"):
            self.store.export_rules(format="agents", write=os.path.join(self.proj, "AGENTS.md"))
        self.assertFalse(os.path.exists(os.path.join(self.proj, "AGENTS.md")))


def _toml_tables(path):
    """pyproject.toml's `key = "string"` lines by [table] (all this file needs; 3.10 has no
    tomllib)."""
    tables, table = {}, ""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.fullmatch(r"\[([^\]]+)\]\s*", line)
            if m:
                table = m.group(1)
            m = re.fullmatch(r'([\w.-]+)\s*=\s*"([^"]*)"\s*', line)
            if m:
                tables.setdefault(table, {})[m.group(1)] = m.group(2)
    return tables


class TestPackageAndDocs(unittest.TestCase):
    def test_distribution_name_is_free_and_the_command_and_module_stay_instinct(self):
        t = _toml_tables(os.path.join(ROOT, "pyproject.toml"))
        self.assertNotEqual(t["project"]["name"], "instinct")     # PyPI's instinct: another one
        self.assertEqual(t["project"]["name"], "instinct-memory")
        self.assertEqual(t["project.scripts"], {"instinct": "instinct:main"})
        self.assertEqual(t["tool.flit.module"]["name"], "instinct")
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            self.assertIn("instinct-memory", f.read())

    def test_license_file_matches_the_metadata(self):
        with open(os.path.join(ROOT, "LICENSE"), encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text.startswith("MIT License\n"))
        self.assertIn("Copyright (c) 2026 the instinct authors", text)
        with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
            self.assertIn('license = {text = "MIT"}', f.read())

    def test_no_internal_references_in_help_or_tool_descriptions(self):
        for op in instinct.OPERATIONS.values():
            text = " ".join([op.summary, op.description or ""] + [p.help for p in op.params])
            with self.subTest(op=op.name):
                self.assertIsNone(re.search(r"seed[- ]?0\d", text, re.I), text)
        proc = run_instinct("--help")
        self.assertNotRegex(proc.stdout, r"seed[- ]?0\d")

    def test_readme_recall_weights_are_the_settings(self):
        w = [instinct.SETTINGS["memory_weight_" + k][0]
             for k in ("relevance", "recency", "confidence", "usage")]
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            readme = " ".join(f.read().split())
        self.assertIn("weights " + " / ".join(map(str, w)) + ",", readme)
        self.assertNotIn("0.6 / 0.2", readme)

    def test_pip_install_gives_the_instinct_command(self):
        """`pip install .` (into a target folder: no venv to build) -> the instinct-memory
        distribution, its licence, and an `instinct` script that runs and meets a closed pipe
        quietly."""
        target = temp_dir(self)
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-compile",
                               "--disable-pip-version-check", "--target", target, ROOT],
                              capture_output=True, text=True, timeout=600, cwd=target)
        if proc.returncode and "flit" in proc.stderr and "No matching distribution" in proc.stderr:
            self.skipTest("pip cannot fetch the build backend (flit_core) here")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        info = [n for n in os.listdir(target) if n.endswith(".dist-info")]
        self.assertEqual(len(info), 1, info)
        self.assertTrue(info[0].startswith("instinct_memory-"), info)
        licences = [f for _, _, fs in os.walk(os.path.join(target, info[0])) for f in fs]
        self.assertIn("LICENSE", licences)
        script = os.path.join(target, "bin", "instinct")
        env = child_env(temp_dir(self), PYTHONPATH=target)
        got = subprocess.run([script, "--version"], capture_output=True, text=True, env=env,
                             timeout=60)
        self.assertEqual(got.stdout, f"instinct {instinct.__version__}\n")
        self.assertEqual(closed_pipe_run([script, "setup", "codex"], env), (0, ""))


class TestPrivateCheckout(unittest.TestCase):
    def test_read_only_tests_pass_from_a_checkout_in_a_0700_folder(self):
        """tests.test_store.TestReadOnly runs the CLI as another user: from a checkout that user
        cannot enter (a home is often 0700) it must still pass (or skip saying why)."""
        if os.geteuid() != 0:
            self.skipTest("only root runs the CLI as another user there")
        private = os.path.join(temp_dir(self), "home")
        os.mkdir(private, 0o700)
        repo = os.path.join(private, "instinct")
        os.mkdir(repo)
        shutil.copy(INSTINCT_PY, repo)
        shutil.copytree(os.path.join(ROOT, "tests"), os.path.join(repo, "tests"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        proc = subprocess.run([sys.executable, "-m", "unittest", "-v",
                               "tests.test_store.TestReadOnly"], cwd=repo, capture_output=True,
                              text=True, timeout=600, env=child_env())
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        self.assertNotIn("Permission denied", proc.stderr)
        self.assertRegex(proc.stderr,
                         r"test_reads_work_on_a_read_only_store_file \S+ \.\.\. (ok|skipped)")


if __name__ == "__main__":
    unittest.main()
