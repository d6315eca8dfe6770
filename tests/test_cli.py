"""Tests for the command line: the README's command table and MCP tool list are generated from
the operation registry by tools/cli_reference.py (issue 12) and its --check catches drift; the
exit codes (issue 12); the CLI's edges (issue 21): a closed pipe, an old Python, usage errors in
one line that name the CLI's own flags; what the package and README promise, and the seeds'
import `from instinct.store import InstinctStore` from the one copied file.
Run: python3 -m unittest -v tests.test_cli
"""
import json
import os
import re
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

import instinct
from tests.helpers import (ROOT, StoreCase, child_env, cli_process, find_python, python_child,
                           read, rows, setUpModule, subcommands, temp_dir)


HERE = Path(ROOT)
INSTINCT_PY = HERE / "instinct.py"
CLI_REFERENCE = HERE / "tools" / "cli_reference.py"


class TestCliReference(unittest.TestCase):
    """README's command table and MCP tool list are generated from the registry
    (tools/cli_reference.py) and CI fails when they drift."""

    def setUp(self):
        self.tmp = Path(temp_dir(self))

    def run_tool(self, *args, tool=CLI_REFERENCE):
        return subprocess.run([sys.executable, str(tool), *args], capture_output=True, text=True,
                              timeout=120, env=child_env(self.tmp), cwd=str(self.tmp))

    def assertStale(self, r, *expected):
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("cli_reference.py --write", r.stderr)
        for text in expected:
            self.assertIn(text, r.stderr)

    def test_readme_is_what_the_registry_generates(self):
        r = self.run_tool("--check")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))

    def test_every_command_and_tool_is_in_the_generated_blocks(self):
        r = self.run_tool()
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = re.findall(r"^\| `([a-z-]+)[^`]*` \| .+ \| (?:`([a-z_]+)`|—)", r.stdout, re.M)
        cmds = subcommands(instinct.build_parser())
        self.assertEqual([c for c, _ in rows], list(cmds))
        ops = {op.cli: op.mcp for op in instinct.OPERATIONS.values()}
        self.assertEqual({c: t for c, t in rows if t}, ops)
        self.assertEqual(len(rows), len(ops) + len(instinct._CLI.EXTRAS))
        for row in ("| `config [KEY [VALUE]]` |", "| `feedback PATTERN good\\|bad [--note NOTE] ",
                    "| `memory_forget` (listed, destructive) |", "| `list_instincts` (read-only) |"):
            self.assertIn(row, r.stdout)
        lean = re.search(r"^- listed by default \((\d+)\): (.*);$", r.stdout, re.M)
        self.assertEqual(int(lean.group(1)), len(instinct._MCP.LEAN_TOOLS))
        self.assertEqual(set(re.findall(r"`(\w+)`", lean.group(2))), set(instinct._MCP.LEAN_TOOLS))

    def test_check_names_a_changed_row_and_write_repairs_it(self):
        readme = (HERE / "README.md").read_text(encoding="utf-8")
        row = next(line for line in readme.splitlines() if line.startswith("| `decay "))
        copy = self.tmp / "README.md"
        copy.write_text(readme.replace(row, row.replace("lose 1", "lose 2")), encoding="utf-8")
        before = copy.read_bytes()
        line = readme.splitlines().index(row) + 1
        self.assertStale(self.run_tool("--check", "--readme", str(copy)),
                         f"line {line} (cli-reference block)", "lose 2", "lose 1")
        self.assertEqual(copy.read_bytes(), before, "--check must not write")
        r = self.run_tool("--write", "--readme", str(copy))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(copy.read_text(encoding="utf-8"), readme)
        self.assertEqual(self.run_tool("--check", "--readme", str(copy)).returncode, 0)

    def test_check_sees_a_registry_change(self):
        (self.tmp / "tools").mkdir()
        tool = self.tmp / "tools" / "cli_reference.py"
        shutil.copy(CLI_REFERENCE, tool)
        shutil.copy(HERE / "README.md", self.tmp / "README.md")
        src = INSTINCT_PY.read_text(encoding="utf-8")
        self.assertEqual(src.count('"""Record one occurrence of a pattern:'), 1)
        (self.tmp / "instinct.py").write_text(
            src.replace('"""Record one occurrence of a pattern:', '"""Count one sighting of a pattern:'),
            encoding="utf-8")
        self.assertStale(self.run_tool("--check", tool=tool), "Count one sighting")
        self.assertEqual(self.run_tool("--write", tool=tool).returncode, 0)
        self.assertIn("| Count one sighting of a pattern:",
                      (self.tmp / "README.md").read_text(encoding="utf-8"))
        self.assertEqual(self.run_tool("--check", tool=tool).returncode, 0)

    def test_a_readme_without_markers_is_refused(self):
        copy = self.tmp / "README.md"
        copy.write_text((HERE / "README.md").read_text(encoding="utf-8")
                        .replace("<!-- mcp-tools: end -->\n", ""), encoding="utf-8")
        for mode in ("--check", "--write"):
            with self.subTest(mode=mode):
                r = self.run_tool(mode, "--readme", str(copy))
                self.assertEqual(r.returncode, 1)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn("<!-- mcp-tools: end -->", r.stderr)


# --- exit codes and the CLI's edges (issues 12 and 21) -----------------------------------
class TestCommandLine(StoreCase):
    def test_version_after_the_command(self):
        for args in (["--version"], ["suggest", "--version"], ["--db", str(self.db), "stats", "--version"]):
            with self.subTest(args=args):
                r = self.cli_process(*args)
                self.assertEqual((r.returncode, r.stdout.strip()), (0, f"instinct {instinct.__version__}"))

    def test_main_returns_the_exit_code(self):
        self.assertEqual(self.cli_in_process("observe", "seq:a")[0], 0)
        self.assertEqual(self.cli_in_process("get", "seq:missing")[0], 1)
        self.assertEqual(self.cli_in_process("list", "--limit", "0")[0], 2)
        # the same from a process whose own code runs after main() returns
        code = ("import sys; sys.path.insert(0, sys.argv[1]); import instinct;"
                "sys.argv = ['instinct', '--db', sys.argv[2], 'get', 'seq:missing'];"
                "c = instinct.main(); print('after', c)")
        r = subprocess.run([sys.executable, "-c", code, ROOT, str(self.db)],
                           capture_output=True, text=True, timeout=60, env=child_env(self.tmp))
        self.assertEqual((r.returncode, r.stdout), (0, "after 1\n"), r.stderr)

    def test_readme_exit_codes_are_true(self):
        bad = self.cli_process("list", "--limit", "-1")
        self.assertOneLineError(bad, 2)
        for digits in ("²", "--5"):         # str.isdigit() takes '²'; int() does not
            self.assertOneLineError(self.cli_process("suggest", "--limit", digits), 2)
        missing = self.cli_process("get", "seq:nothing")
        self.assertOneLineError(missing, 1)
        readme = read(os.path.join(ROOT, "README.md"))
        self.assertIn("refused input (a value a parameter does not allow) exit 2", readme)


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
                ["effectiveness"], ["doctor"])

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


class TestClosedPipeInAUserShell(StoreCase):
    """Issue 32 item 7: a user's shell sets no PYTHON* variable (stdout is block-buffered):
    --version, --help and a command's --help into a closed pipe, as the file and as the
    console script, exit 0 with nothing on stderr; `setup claude-code --json` adds no note."""

    def env(self):
        return {k: v for k, v in child_env(self.tmp, self.db).items() if not k.startswith("PYTHON")}

    def test_version_and_help_into_a_closed_pipe(self):
        script = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import instinct; "
                  "sys.exit(instinct.main())")
        for argv in (["--version"], ["--help"], ["decay", "--help"], ["list"], ["setup", "codex"]):
            for how in ([INSTINCT_PY], ["-c", script, ROOT]):
                with self.subTest(argv=argv, how=how[0]):
                    self.assertEqual(closed_pipe_run([sys.executable, *how, *argv], self.env()), (0, ""))
        r = subprocess.run([sys.executable, INSTINCT_PY, "--version"], capture_output=True, text=True,
                           env=self.env(), timeout=60)
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, f"instinct {instinct.__version__}\n", ""))

    def test_setup_json_says_nothing_on_stderr(self):
        for client in ("claude-code", "codex"):
            with self.subTest(client=client):
                r = subprocess.run([sys.executable, INSTINCT_PY, "setup", client, "--json"], capture_output=True,
                                   text=True, env=self.env(), timeout=60, cwd=self.tmp)
                self.assertEqual((r.returncode, r.stderr), (0, ""))
                self.assertIsInstance(json.loads(r.stdout), list)


class TestRoughEdges(StoreCase):
    """Issue 32 item 8, each as a process: --db "" is an error, an unknown hook event is echoed
    as typed (exit 0), import-history --path names the folder it looked in, non-UTF-8 bytes in
    a payload never reach the store, history is in time order (event id breaking ties)."""

    def test_empty_db_is_an_error(self):
        for args in (["--db", "", "list"], ["list", "--db="], ["--db=", "stats"]):
            with self.subTest(args=args):
                r = cli_process(*args, env=child_env(self.tmp), cwd=self.tmp)
                self.assertEqual((r.returncode, r.stdout), (2, ""))
                self.assertEqual(r.stderr, "instinct: error: --db needs a path, not an empty value\n")
        self.assertFalse(os.path.exists(os.path.join(self.tmp, ".instinct")))

    def test_unknown_hook_event_is_echoed_as_typed(self):
        r = subprocess.run([sys.executable, str(INSTINCT_PY), "hook", "bogus-event"], input="{}",
                           capture_output=True, text=True, env=child_env(self.tmp, self.db), timeout=60)
        self.assertEqual((r.returncode, r.stdout), (0, ""))
        self.assertIn("unknown hook event bogus-event;", r.stderr)

    def test_import_history_path_names_its_folder(self):
        empty = os.path.join(self.tmp, "empty")
        os.mkdir(empty)
        r = self.cli_process("import-history", "--path", empty)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"(looked in {empty})", r.stdout)
        self.assertNotIn("~/.claude", r.stdout)

    def test_non_utf8_bytes_in_a_payload(self):
        for command, label in ((b"pytest \xff\xfe -q", "Bash(pytest)"), (b"py\xfftest -q", None)):
            payload = (b'{"session_id":"s1","cwd":"%s","hook_event_name":"PostToolUse","tool_name":"Bash",'
                       b'"tool_input":{"command":"%s"},"tool_response":{}}' % (str(self.tmp).encode(), command))
            r = subprocess.run([sys.executable, str(INSTINCT_PY), "hook", "post-tool-use"], input=payload,
                               capture_output=True, env=child_env(self.tmp, self.db), timeout=60)
            self.assertEqual((r.returncode, r.stdout), (0, b""))
        data = [d for d, in self.sql("SELECT data FROM events ORDER BY id")]
        self.assertEqual(instinct._Call.read(data[0]).label(), "Bash(pytest)")   # read past the bytes
        self.assertEqual(len(data), 2)
        for d in data:                                  # no bad byte, no stand-in for one
            self.assertFalse({"\ufffd", "\udcff", "\xff"} & set(d), ascii(d))

    def test_history_is_in_time_order(self):
        self.clock.advance(days=10)
        self.store.observe("pref:x=y")
        self.clock.t -= 20 * 86400                      # an older event stored later (an import)
        self.store.observe("pref:x=y")
        self.clock.advance(days=30)
        self.store.observe("pref:x=y")
        self.store.close()
        r = self.cli_process("--json", "history", "pref:x=y")
        self.assertEqual(r.returncode, 0, r.stderr)
        events = json.loads(r.stdout)["events"]
        self.assertEqual([e["ts"] for e in events], sorted(e["ts"] for e in events))
        self.assertEqual([e["confidence"] for e in events], [1, 2, 3])


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
                proc = cli_process(*argv, python=py, input="{}", env=child_env(temp_dir(self)))
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
                self.assertEqual(self.assertOneLineError(self.cli_process(*argv), 2), line)
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
                self.assertEqual(self.assertOneLineError(self.cli_process(*argv), 2), line)

    def test_every_usage_error_is_one_line_exit_2(self):
        for argv in (["get"], ["export", "--format", "nope"], ["decay", "--days", "x"],
                     ["observe", "x", "--meta", "[1]"], ["setup", "nope"], ["remember", "user"],
                     ["list", "--level"], ["recall"],
                     ["config", "a", "b", "c"], ["--db"]):
            with self.subTest(argv=argv):
                line = self.assertOneLineError(self.cli_process(*argv), 2)
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
                    want = {int: "N", dict: "JSON"}.get(p.type)
                    if want:
                        self.assertEqual(shown[p.flag], want)
                    elif p.name in ("write", "path"):
                        self.assertEqual(shown[p.flag], "PATH")
        helps = {c: self.cli_process(c, "--help").stdout for c in ("export", "import-history")}
        self.assertIn("--write PATH", helps["export"])
        self.assertNotIn("WRITE", helps["export"])
        self.assertIn("--since N", helps["import-history"])
        self.assertNotIn("SINCE", helps["import-history"])


# --- what the package and README promise -------------------------------------------------
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


class TestReadmeQuickStart(unittest.TestCase):
    """The README's quick start is what the code prints: `instinct init`'s sample, from the
    history it describes (the demo block: test_instinct's test_readme_quick_start_runs_verbatim)."""

    def readme(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            text = f.read()
        return text[text.index("## Quick start"):text.index("Run the tests")]

    def test_the_init_sample_is_what_init_prints_for_that_history(self):
        from tests.test_history import claude_dir_name, make_history
        home = temp_dir(self)
        for name, seed in (("shop", 3), ("api", 9)):      # two Python projects, 12 sessions each
            repo = os.path.join(home, "code", name)
            os.makedirs(os.path.join(repo, ".git"))
            folder = os.path.join(home, ".claude", "projects", claude_dir_name(repo))
            os.makedirs(folder)
            for sid, tr, _ in make_history(cwd=repo, n=12, seed=seed):
                with open(os.path.join(folder, sid + ".jsonl"), "w", encoding="utf-8") as f:
                    f.write(tr.text())
        proc = cli_process("init", env=child_env(home), cwd=home, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        sample = re.search(r"<!-- init-example: begin -->\n```\n(.*?)```", self.readme(), re.S)
        printed = proc.stdout.splitlines()
        for line in sample.group(1).splitlines():          # each line, in the order printed
            self.assertIn(line, printed)
            printed = printed[printed.index(line) + 1:]


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
        proc = cli_process("--help")
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


class TestStoreImport(unittest.TestCase):
    """The seeds' Python API: `from instinct.store import InstinctStore`, from one copied file."""

    def test_from_a_folder_holding_only_the_copied_file(self):
        tmp = temp_dir(self)
        folder = os.path.join(tmp, "only")
        os.makedirs(folder)
        shutil.copy(INSTINCT_PY, folder)
        code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
                "from instinct.store import InstinctStore\n"
                "import instinct\n"
                "assert InstinctStore is instinct.InstinctStore\n"
                "with InstinctStore(sys.argv[2]) as s:\n"
                "    print(s.observe('seq:a->b')['confidence'])\n")
        p = subprocess.run([sys.executable, "-I", "-c", code, folder, os.path.join(tmp, "t.db")],
                           capture_output=True, text=True, timeout=60, cwd=tmp)
        self.assertEqual((p.returncode, p.stdout), (0, "1\n"), p.stderr)
        p = subprocess.run([sys.executable, "-c", "from instinct.store import InstinctStore as S; "
                            "print(S.__module__)"], capture_output=True, text=True, timeout=60,
                           cwd=tmp, env=child_env(PYTHONPATH=folder))
        self.assertEqual((p.returncode, p.stdout), (0, "instinct\n"), p.stderr)


if __name__ == "__main__":
    unittest.main()


class TestOnePathIn(StoreCase):
    """Issue 32: `instinct` alone says where to start; --help groups the commands by task with
    init first; `instinct init` wires the agent and learns from its history; an empty suggest
    says what to run."""

    def test_bare_instinct_prints_the_start_text_and_exits_0(self):
        r = self.cli_process()
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(r.stdout, instinct._CLI.START)
        self.assertTrue(r.stdout.splitlines()[1].split()[:2] == ["instinct", "init"])
        self.assertLess(len(r.stdout.splitlines()), 8)

    def test_help_groups_every_command_by_task_with_init_first(self):
        r = self.cli_process("--help")
        self.assertEqual(r.returncode, 0)
        titles = [t for t, _ in instinct._CLI.GROUPS]
        self.assertEqual(titles[0], "start")
        found = re.findall(r"^([a-z][a-z ]+):\n((?:  .*\n?)+)", r.stdout.split("\n\n", 3)[-1],
                           re.M)
        self.assertEqual([t for t, _ in found], titles)
        listed = [re.match(r"  (\S+)", line).group(1) for _, block in found
                  for line in block.splitlines() if not line.startswith("   ")]
        self.assertEqual(listed[0], "init")
        self.assertEqual(sorted(listed), sorted(subcommands(instinct.build_parser())))
        self.assertTrue(all(len(line) <= 80 for line in r.stdout.splitlines()))

    def test_empty_suggest_says_what_to_run(self):
        r = self.cli_process("suggest")
        self.assertEqual((r.returncode, r.stdout), (0, "0 suggestions: nothing mature here yet "
                                                       "(`instinct init` learns from past sessions)\n"))

    def test_explain_briefing_is_read_only_as_the_command_word(self):
        r = self.cli_process("--json", "explain", "--briefing")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["items"], [])
        r = self.cli_process("observe", "explain", "--briefing")     # a value, not the command
        self.assertIn("unrecognized arguments: --briefing", self.assertOneLineError(r, 2))
        self.assertEqual(self.cli_process("--json", "list").stdout.strip(), "[]")

    def test_init_wires_the_agent_and_says_what_it_learned(self):
        from tests.test_history import claude_dir_name, make_history
        repo = os.path.join(self.tmp, "work", "shop")
        os.makedirs(os.path.join(repo, ".git"))
        no_agent = self.cli_process("init")
        self.assertEqual(self.assertOneLineError(no_agent, 2),
                         "instinct: error: no agent's folder here (~/.claude, ~/.codex, ...);"
                         " name your agent: "
                         f"instinct init {{{','.join(instinct._Setup.CLIENTS)}}}")
        folder = os.path.join(self.tmp, ".claude", "projects", claude_dir_name(repo))
        os.makedirs(folder)
        for sid, tr, _ in make_history(cwd=repo, n=8):
            with open(os.path.join(folder, sid + ".jsonl"), "w", encoding="utf-8") as f:
                f.write(tr.text())
        r = self.cli_process("init", cwd=repo, timeout=300)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        lines = r.stdout.splitlines()
        for name in (".claude.json", os.path.join(".claude", "settings.json")):
            self.assertIn(f"wrote {os.path.join(self.tmp, name)}", lines)
        self.assertNotIn("import-history", r.stdout)          # setup's hint: init just ran it
        self.assertIn("Sessions: 8 found, 8 imported, 0 already in the store", r.stdout)
        self.assertIn(f"Project {repo} [", r.stdout)
        self.assertIn("    - Tests here: `uv run pytest` (mature, 6 sessions", r.stdout)
        self.assertTrue(lines[-1].startswith("Each new session in these projects starts with"))
        again = self.cli_process("init", "claude-code", cwd=repo, timeout=300)
        self.assertIn("unchanged", again.stdout)
        self.assertIn("0 imported, 8 already in the store", again.stdout)
        r = self.cli_process("suggest", cwd=repo)
        self.assertIn("pref:test=uv run pytest", r.stdout, r.stderr)
        self.assertOneLineError(self.cli_process("init", "--json"), 2)
        os.makedirs(os.path.join(self.tmp, ".gemini", "tmp"))     # another agent, found as well
        r = self.cli_process("init", cwd=repo, timeout=300)
        self.assertIn(f"wrote {os.path.join(self.tmp, '.gemini', 'settings.json')}",
                      r.stdout.splitlines())
        self.assertIn("0 imported, 8 already in the store", r.stdout)


class TestCosmetics(StoreCase):
    """Issue 32 item 9, as the CLI prints it."""

    def test_rows_keep_the_seeds_format_and_a_long_pattern_takes_its_own_line(self):
        long = "seq:" + "->".join(f"step-number-{i}" for i in range(6))
        with self.open() as s:
            for pattern, n in (("seq:test->fix->test", 5), ("pref:stdlib-first", 292), (long, 12)):
                for _ in range(n):
                    s.observe(pattern)
        self.cli_process("consolidate")
        out = self.cli_process("suggest", "--project", "").stdout
        self.assertEqual(out.splitlines(), [
            "  pref:stdlib-first      conf=292 [rule]    preference",
            f"  {long}", " " * 24 + " conf=12 [rule]    sequence",
            "  seq:test->fix->test    conf=5  [mature]  sequence", "3 suggestions"])
        self.assertTrue(all(len(line) <= 80 for line in out.splitlines() if long not in line))

    def test_plural_agreement_and_purge_says_its_backup_holds_the_text(self):
        self.cli_process("observe", "pref:leaked-token-xyz")
        out = self.cli_process("purge", "leaked-token-xyz").stdout.splitlines()
        self.assertEqual(out[0], "Purged: 1 instinct, 0 memories, 1 event, 0 other rows")
        self.assertRegex(out[1], r"^Backup: \S+-purge\.bak \(`instinct restore` it to undo\); "
                                 r"it still holds the purged text: delete it once sure$")
        self.assertEqual(instinct._Out.count(1, "memory"), "1 memory")
        self.assertEqual(instinct._Out.count(2, "match"), "2 matches")

    def test_a_universal_command_is_not_a_project_command(self):
        from tests.test_history import claude_dir_name, make_history
        for name in ("a", "b"):               # the same commands, 10 sessions in each project
            repo = os.path.join(self.tmp, name)
            os.makedirs(os.path.join(repo, ".git"))
            folder = os.path.join(self.tmp, "t", claude_dir_name(repo))
            os.makedirs(folder)
            for sid, tr, _ in make_history(cwd=repo, n=12, seed=len(name) + ord(name)):
                with open(os.path.join(folder, sid + ".jsonl"), "w", encoding="utf-8") as f:
                    f.write(tr.text())
        self.cli_process("import-history", "--path", os.path.join(self.tmp, "t"), timeout=300)
        self.assertIn("[universal]", self.cli_process("list", "--level", "universal").stdout)
        text = self.cli_process("export", "--format", "agents", cwd=repo).stdout
        self.assertRegex(text, r"\(universal, \d+ sessions")
        self.assertNotRegex(text, r"Project command: .*universal")
        rows = json.loads(self.cli_process("list", "--level", "universal", "--json").stdout)
        git = [r for r in rows if r["pattern"].startswith("pref:command:git ")]
        self.assertTrue(git)              # one the commit routine's line holds in the export above
        self.assertRegex(instinct._Presenter.briefing_line(git[0]), r"- Common command: `git \w+`")
