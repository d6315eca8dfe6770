"""Tests for agent hooks: capture, redaction, skips, session mining, injection, setup (issue 4)."""
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

import instinct
from tests.helpers import (ROOT, Clock, child_env, init_msg, label, make_repo, read,  # noqa: F401
                           req, run_instinct, setUpModule, temp_dir)


class _Env(unittest.TestCase):
    def setUp(self):
        self.tmp = temp_dir(self)
        self.db = os.path.join(self.tmp, "t.db")
        self.repo = make_repo(os.path.join(self.tmp, "repo"), "src")
        self.clock = Clock(1_800_000_000.0)
        self.store = instinct.InstinctStore(self.db, clock=self.clock)
        self.addCleanup(self.store.close)

    def hook(self, event, payload, env=None, db=None):
        """`instinct hook EVENT` as a real process fed `payload` -> CompletedProcess (bytes)."""
        data = payload if isinstance(payload, (bytes, str)) else json.dumps(payload)
        if isinstance(data, str):
            data = data.encode()
        return run_instinct("hook", event, input=data, text=False,
                            env=child_env(db=db or self.db, **(env or {})))

    def payload(self, tool, tool_input, session="s1", cwd=None, **extra):
        return {"session_id": session, "cwd": cwd or self.repo, "hook_event_name": "PostToolUse",
                "tool_name": tool, "tool_input": tool_input, "tool_response": {}, **extra}

    def events(self, kinds=("tool", "tool_fail")):
        self.store.stats()                 # make sure the schema exists
        self.store.close()
        conn = sqlite3.connect(self.db)
        try:
            q = ",".join("?" * len(kinds))
            return [(k, label(d), s, p) for k, d, s, p in conn.execute(
                f"SELECT kind, data, session, project FROM events WHERE kind IN ({q})"
                " ORDER BY id", kinds)]
        finally:
            conn.close()

    def all_text(self):
        """Every text value stored anywhere in the database file (and its WAL)."""
        self.store.close()
        blob = b""
        for suffix in ("", "-wal"):
            if os.path.exists(self.db + suffix):
                with open(self.db + suffix, "rb") as f:
                    blob += f.read()
        return blob


class TestHookInput(_Env):
    """The hook reads its payload with the json module's C scanner and skips importing json
    (whose import compiles regular expressions: ~4 ms of a ~23 ms hook process)."""

    GOOD = ['{"a": 1}', ' \n{"a": [1, 2.5, -3e2, true, false, null]}\t ', '"x"', '[]', '0', '-0.0',
            '{"s": "\\u00e9\\ud83d\\ude00 \\n", "n": {"m": {}}}', '{"a": 1, "a": 2}',
            '[NaN, Infinity, -Infinity]', '{"big": 123456789012345678901234567890}', '"\\ud800"']
    BAD = ['', ' ', '{', '{"a": 1} x', '{"a": 1}{}', "{'a': 1}", '[1,]', '{"a" 1}', '"\x01"',
           '01', 'nan', 'tru', '{"a": 1,}', '\ufeff{}', '[' * 50 + ']' * 49]

    def test_it_reads_what_json_loads_reads_and_refuses_the_rest(self):
        import math
        for text in self.GOOD:
            with self.subTest(text=text):
                got, want = instinct._loads(text), json.loads(text)
                self.assertEqual(json.dumps(got), json.dumps(want))
                if isinstance(want, list) and want and isinstance(want[0], float) and math.isnan(want[0]):
                    self.assertTrue(math.isnan(got[0]))
        for text in self.BAD:
            with self.subTest(text=text):
                with self.assertRaises(ValueError):
                    json.loads(text)
                with self.assertRaises(ValueError):
                    instinct._loads(text)
        with self.assertRaises(RecursionError):
            instinct._loads("[" * 100_000 + "]" * 100_000)
        # a Python without the C accelerator: json's own pure-Python scanner, the same answers
        code = ("import sys; sys.modules['_json'] = None; sys.path.insert(0, sys.argv[1]); import instinct\n"
                "print(type(instinct._json_scanner()).__module__ == '_json')\n"
                "print(instinct._loads(sys.argv[2]))\n"
                "try:\n    instinct._loads(sys.argv[3])\nexcept ValueError:\n    print('ValueError')\n")
        p = subprocess.run([sys.executable, "-c", code, ROOT, '{"a": [1, 2.5]}', self.BAD[3]],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual((p.returncode, p.stdout), (0, "False\n{'a': [1, 2.5]}\nValueError\n"), p.stderr)
        with self.assertRaises(ValueError):                        # MCP messages: no NaN
            instinct._loads("[NaN]", strict=True)
        self.assertEqual(instinct._loads('{"a": [1.5]}', strict=True), {"a": [1.5]})

    def test_a_post_tool_use_hook_process_imports_neither_json_nor_re(self):
        code = ("import sys; sys.path.insert(0, sys.argv[1]); "
                "pre = {m for m in ('json', 're') if m in sys.modules}; "   # e.g. a site .pth's
                "import instinct; code = instinct.main(['hook', 'post-tool-use']); "
                "sys.stderr.write(repr(sorted(m for m in ('json', 're') if m in sys.modules and m not in pre)))")
        payload = self.payload("Bash", {"command": "pytest -q"},
                               tool_response='{"stdout": "", "exit_code": 2}')
        p = subprocess.run([sys.executable, "-c", code, ROOT], input=json.dumps(payload).encode(),
                           capture_output=True, env=child_env(db=self.db), timeout=60)
        self.assertEqual((p.returncode, p.stderr.decode()), (0, "[]"))
        self.assertEqual(self.events(), [("tool_fail", "Bash(pytest)", "s1",
                                          instinct.project_fingerprint(self.repo))])


class TestSummaries(unittest.TestCase):
    def test_shell_call_keeps_program_and_subcommand_only(self):
        table = [
            ("pytest -q tests/", "pytest"),
            ("git commit -m 'secret message'", "git commit"),
            ("FOO=1 BAR=2 sudo git push origin main", "git push"),
            ("cd src && python -m pytest -x", "python -m pytest"),
            ("python3.12 -m mypy .", "python -m mypy"),
            ("/usr/local/bin/npm run build", "npm run build"),
            ("C:\\Tools\\node.exe script.js", "node"),
            ("timeout 10 cargo test", "cargo test"),
            ("echo hi | grep h", "grep"),
            ("git 1234abcd", "git"),
            (["bash", "-lc", "uv run pytest"], "uv run pytest"),
            (["ls", "-la"], "ls"),
            ("export TOKEN=abc; make", "make"),
            ("", "?"),
            ("ghp_0123456789abcdefghij --help", "?"),
        ]
        for cmd, want in table:
            with self.subTest(cmd=cmd):
                payload = {"tool_name": "Bash", "tool_input": {"command": cmd}}
                self.assertEqual(instinct._Call.tool_summary(payload)[0], f"Bash({want})")

    def test_tool_summary_forms(self):
        table = [
            ({"tool_name": "Bash", "tool_input": {"command": "pytest"}}, "Bash(pytest)"),
            ({"tool_name": "Bash", "tool_input": {"command": "mix test && mix credo | tail"}},
             "Bash(mix test;mix credo;tail)"),
            ({"tool_name": "PowerShell", "tool_input": {"command": "dotnet test"}}, "PowerShell(dotnet test)"),
            ({"tool_name": "shell", "tool_input": {"command": ["bash", "-lc", "cargo build"]}}, "Bash(cargo build)"),
            ({"tool_name": "Edit", "tool_input": {"file_path": "/a/b/c.PY", "old_string": "x"}}, "Edit(.py)"),
            ({"tool_name": "Write", "tool_input": {"file_path": "C:\\src\\README.md"}}, "Write(.md)"),
            ({"tool_name": "Edit", "tool_input": {"file_path": "/a/Makefile"}}, "Edit"),
            ({"tool_name": "apply_patch", "tool_input": {"input": "*** Begin Patch"}}, "Edit"),
            ({"tool_name": "Read", "tool_input": {"file_path": "/etc/passwd"}}, "Read"),
            ({"tool_name": "mcp__github__create_issue", "tool_input": {"body": "x"}}, "mcp__github__create_issue"),
        ]
        for payload, want in table:
            with self.subTest(payload=payload):
                self.assertEqual(instinct._Call.tool_summary(payload)[0], want)

    def test_own_calls_are_skipped(self):
        for payload in ({"tool_name": "mcp__instinct__observe", "tool_input": {"pattern": "x"}},
                        {"tool_name": "Bash", "tool_input": {"command": "instinct observe seq:a->b"}},
                        {"tool_name": "Bash", "tool_input": {"command": "python3 instinct.py suggest"}},
                        {"tool_name": "Bash", "tool_input": {"command": "python -m instinct list"}}):
            with self.subTest(payload=payload):
                summary, reason = instinct._Call.tool_summary(payload)
                self.assertIsNone(summary)
                self.assertIn("instinct", reason)


class TestCapture(_Env):
    def test_post_tool_use_records_one_short_event_and_prints_nothing(self):
        r = self.hook("post-tool-use", self.payload("Bash", {"command": "pytest -q"}, cwd=os.path.join(self.repo, "src")))
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))
        self.assertEqual(self.events(), [("tool", "Bash(pytest)", "s1", instinct.project_fingerprint(self.repo))])

    def test_failure_event_and_exit_code_response(self):
        self.hook("post-tool-use-failure", self.payload("Bash", {"command": "pytest"}, error="Exit code 1"))
        self.hook("post-tool-use", self.payload("Bash", {"command": "make"}, tool_response={"exit_code": 2}))
        self.assertEqual([e[:2] for e in self.events()], [("tool_fail", "Bash(pytest)"), ("tool_fail", "Bash(make)")])

    def test_claude_event_names_and_payload_event_name_are_accepted(self):
        p = self.payload("Read", {"file_path": "/x"})
        self.assertEqual(self.hook("PostToolUse", p).returncode, 0)
        r = run_instinct("hook", "", input=json.dumps(p).encode(), text=False, env=child_env(db=self.db))
        self.assertEqual(r.returncode, 0)
        self.assertEqual(len(self.events()), 2)

    def test_secrets_never_reach_the_database(self):
        secrets = ["ghp_abcdefghijklmnopqrstuvwxyz0123456789", "sk-live-0123456789abcdefABCDEF",
                   "hunter2password", "AKIAIOSFODNN7EXAMPLE", "Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
                   "user:pa55word@", "xoxb-1234-5678-abcdef", "TOP-SECRET-FILE-CONTENT",
                   "my private prompt text"]
        payloads = [
            self.payload("Bash", {"command": f"GITHUB_TOKEN={secrets[0]} gh pr create"}),
            self.payload("Bash", {"command": f"curl -H 'Authorization: {secrets[4]}' https://{secrets[5]}example.com/x"}),
            self.payload("Bash", {"command": f"mysql -u root -p{secrets[2]} -e 'select 1'"}),
            self.payload("Bash", {"command": f"{secrets[3]} deploy"}),
            self.payload("Bash", {"command": f"export SLACK={secrets[6]}; {secrets[1]}"}),
            self.payload("Write", {"file_path": "/r/.env", "content": secrets[7]},
                         tool_response={"stdout": secrets[0]}),
            self.payload("Edit", {"file_path": "/r/a.py", "old_string": secrets[7], "new_string": secrets[1]}),
            self.payload("mcp__db__query", {"sql": f"select '{secrets[2]}'"}),
        ]
        for p in payloads:
            self.assertEqual(self.hook("post-tool-use", p).returncode, 0)
        self.assertEqual(self.hook("user-prompt-submit", {"session_id": "s1", "cwd": self.repo,
                                                         "prompt": secrets[8]}).returncode, 0)
        self.assertEqual(self.hook("stop", {"session_id": "s1", "cwd": self.repo}).returncode, 0)
        self.assertEqual(len(self.events()), len(payloads))
        blob = self.all_text()
        for s in secrets:
            with self.subTest(secret=s):
                self.assertNotIn(s.encode(), blob)
                self.assertNotIn(s[:12].encode(), blob)

    def test_skips(self):
        cases = [
            ("subagent", self.payload("Read", {}, agent_id="a1", agent_type="Explore"), {}),
            ("env opt-out", self.payload("Read", {}), {"INSTINCT_DISABLE": "1"}),
            ("own tool", self.payload("mcp__instinct__suggest", {}), {}),
            ("own command", self.payload("Bash", {"command": "instinct consolidate"}), {}),
        ]
        for name, p, env in cases:
            with self.subTest(name):
                r = self.hook("post-tool-use", p, env={**env, "INSTINCT_DEBUG": "1"})
                self.assertEqual((r.returncode, r.stdout), (0, b""))
                self.assertIn(b"skip", r.stderr)
        with open(os.path.join(self.repo, ".instinct-disable"), "w"):
            pass
        r = self.hook("post-tool-use", self.payload("Read", {}, cwd=os.path.join(self.repo, "src")),
                      env={"INSTINCT_DEBUG": "1"})
        self.assertIn(b".instinct-disable", r.stderr)
        self.assertEqual(self.events(), [])

    def test_never_breaks_the_agent(self):
        bad_inputs = [b"not json", b"[1,2]", b"\xff\xfe\x00", b'{"tool_name": 5}', b"",
                      b'{"tool_input":' + b"[" * 200000 + b"]" * 200000 + b"}"]
        for data in bad_inputs:
            with self.subTest(data=data):
                r = self.hook("post-tool-use", data)
                self.assertEqual((r.returncode, r.stdout), (0, b""))
                self.assertNotIn(b"Traceback", r.stderr)
        r = self.hook("post-tool-use", self.payload("Read", {}),
                      db=os.path.join(self.tmp, "missing", "dir", "t.db"))
        self.assertEqual((r.returncode, r.stdout), (0, b""))
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)
        self.assertIn(b"does not exist", r.stderr)
        r = self.hook("no-such-event", {"session_id": "s"})
        self.assertEqual(r.returncode, 0)
        self.assertIn(b"unknown hook event", r.stderr)

    def test_locked_database_gives_up_quietly(self):
        self.store.stats()                 # create the file
        self.store.close()
        excess = []
        for _ in range(3):                 # a doubled wait fails every try; load noise only some
            t = time.monotonic()           # what one hook process costs here without waiting
            self.hook("post-tool-use", self.payload("Read", {}))
            unlocked = time.monotonic() - t
            holder = sqlite3.connect(self.db, isolation_level=None)
            holder.execute("BEGIN EXCLUSIVE")
            try:
                t = time.monotonic()
                r = self.hook("post-tool-use", self.payload("Read", {}))
                elapsed = time.monotonic() - t
            finally:
                holder.execute("ROLLBACK")
                holder.close()
            self.assertEqual((r.returncode, r.stdout), (0, b""))
            self.assertIn(b"locked", r.stderr)
            self.assertNotIn(b"Traceback", r.stderr)
            self.assertGreaterEqual(elapsed, instinct._Capture.HOOK_TIMEOUT_S)
            excess.append(elapsed - unlocked)
            if excess[-1] < instinct._Capture.HOOK_TIMEOUT_S + 0.5:
                break
        # one busy timeout, not two (issue 12): the wait on top of an ordinary run is
        # at most the hook's timeout plus half a second
        self.assertLess(min(excess), instinct._Capture.HOOK_TIMEOUT_S + 0.5, excess)

    def test_hook_hot_path_skips_argparse(self):
        code = ("import sys, io, instinct; sys.stdin = io.TextIOWrapper(io.BytesIO(b'{}'));"
                "instinct.main(['hook', 'pre-tool-use']); print('argparse' in sys.modules,"
                " instinct._json_scanner.cache_info().currsize == 1)")    # it did read the payload
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                           env={**os.environ, "INSTINCT_DB": self.db}, timeout=60)
        self.assertEqual(r.stdout.split(), ["False", "True"], r.stderr)


class TestFastCLI(unittest.TestCase):
    """The argparse-free fast paths (test_instinct checks they agree with argparse)."""

    def test_serve_takes_the_fast_path_with_db_in_either_place(self):
        init = init_msg("2025-06-18")
        call = req(2, "tools/call", {"name": "observe", "arguments": {"pattern": "seq:a->b"}})
        with tempfile.TemporaryDirectory() as tmp:
            db = os.path.join(tmp, "s.db")
            code = ("import sys, instinct; sys.exit(instinct.main(sys.argv[1:]) or "
                    "('argparse' in sys.modules and 3))")
            for argv in (["--db", db, "serve"], ["serve", f"--db={db}"], ["serve", "--db", db]):
                with self.subTest(argv=argv):
                    r = subprocess.run([sys.executable, "-c", code, *argv], cwd=ROOT, timeout=60,
                                       input=(json.dumps(init) + "\n" + json.dumps(call) + "\n").encode(),
                                       capture_output=True, env={**os.environ, "INSTINCT_DB": os.devnull})
                    self.assertEqual(r.returncode, 0, r.stderr)
                    replies = [json.loads(l) for l in r.stdout.splitlines()]
                    self.assertEqual([m["id"] for m in replies], [1, 2])
            with instinct.InstinctStore(db) as s:
                self.assertEqual(s.get("seq:a->b")["confidence"], 3)

    def test_unusual_forms_fall_back_to_argparse(self):
        for argv in (["observe"], ["observe", "a", "b"], ["list", "--min-confidence", "x"],
                     ["list", "--level", "nope"], ["observe", "p", "--meta", "[1]"], ["--version"], [],
                     ["observe", "p", "--unknown", "1"], ["list", "--min", "2"], ["observe", "-h"],
                     ["nosuch"], ["observe", "p", "--cat"]):
            with self.subTest(argv=argv):
                self.assertIsNone(instinct._CLI.fast_args(argv))


def _session(steps, session, store, repo, fail=()):
    for i, tool in enumerate(steps):
        kind, _, arg = tool.partition(":")
        tinput = {"command": arg} if kind == "Bash" else {"file_path": f"/r/x{arg or '.py'}"}
        store.record_tool({"session_id": session, "cwd": repo, "tool_name": kind, "tool_input": tinput},
                          failed=i in fail)


class TestMining(_Env):
    """Mining counts per session what recurs across a project's sessions, against chance."""
    TEST = "Bash:cargo test"
    ROUTINE = ["Bash:cargo fmt", "Bash:cargo clippy", "Bash:git commit -m 'x'", "Bash:git push"]
    NOISE = ["Read", "Edit", "Grep", "Glob", "Bash:git status", "Write:.md", "Bash:ls", "WebFetch",
             "TodoWrite", "Bash:head -5 x", "Bash:git diff", "Bash:git log --oneline", "Bash:docker ps",
             "Bash:cat a | grep b", "Bash:git add .", "Bash:cargo build", "Bash:make docs"]

    def work(self, rng, n=None):
        return [rng.choice(self.NOISE) for _ in range(rng.randint(4, 12) if n is None else n)]

    def habit_session(self, rng, name, routine=True):
        steps = []
        for _ in range(rng.randint(2, 4)):
            steps += self.work(rng) + [self.TEST] + self.work(rng, 2)
        steps += (self.ROUTINE if routine else []) + self.work(rng, 3)
        _session(steps, name, self.store, self.repo)
        return self.store.mine(name)

    def level(self, pattern):
        try:
            rec = self.store.get(pattern, project=self.repo)
        except instinct.NotFoundError:
            return None, 0
        return rec["level"], rec["confidence"]

    def test_project_command_and_routine_mature_by_the_5th_session_and_rule_at_10(self):
        rng = random.Random(1234)
        routine = "seq:cargo fmt->cargo clippy->git commit->git push"
        steps = tuple(routine[4:].split("->"))
        seen = []
        for n in range(1, 11):
            self.habit_session(rng, f"h{n}")
            # the workflows suggested that hold the routine's steps in order (the routine, or
            # it with the test run before it: the generator runs the tests just before)
            holding = [r for r in self.store.suggest(project=self.repo) if r["pattern"].startswith("seq:")
                       and instinct._Corpus.subsequence(steps, tuple(r["pattern"][4:].split("->")))]
            seen.append((self.level("pref:test=cargo test"), self.level(routine), holding))
        for n, (test, wf, holding) in enumerate(seen, 1):
            want = "raw" if n < 5 else "mature" if n < 10 else "rule"
            # one session is no evidence; at the second both count
            self.assertEqual(test, (want, n) if n > 1 else (None, 0), f"after session {n}")
            self.assertLessEqual(wf[1], n)                     # at most +1 per session
            self.assertEqual(bool(holding), n >= 5, f"after session {n}: {holding}")
            self.assertTrue(all(r["pattern"] in (routine, "seq:cargo test->" + routine[4:])
                                for r in holding), holding)
        self.assertEqual(seen[-1][1], ("rule", 10))           # every session held the routine
        suggested = {r["pattern"] for r in self.store.suggest(project=self.repo)}
        self.assertIn(routine, suggested)
        self.assertNotIn("seq:cargo fmt->cargo clippy", suggested)   # only restates the routine
        text = self.store.briefing(self.repo)
        self.assertIn("Tests here: `cargo test` (rule, 10 sessions, used in 5 of the last 5, this project)", text)
        self.assertIn("Before committing: `cargo fmt`, then `cargo clippy` (then `git push`)", text)

    def test_a_habit_counts_in_every_session_even_when_it_first_passes_late(self):
        rng = random.Random(7)
        for n in range(1, 4):                  # the routine once per session: 1 session is no evidence,
            self.habit_session(rng, f"h{n}")   # 2 are: both are counted, then one per session
        self.assertEqual(self.level("seq:cargo fmt->cargo clippy->git commit->git push")[1], 3)

    def test_a_session_without_the_routine_does_not_count_it(self):
        rng = random.Random(5)
        for n in range(1, 7):
            self.habit_session(rng, f"h{n}", routine=n % 2 == 0)
        self.assertEqual(self.level("seq:cargo fmt->cargo clippy->git commit->git push")[1], 3)
        self.assertEqual(self.level("pref:test=cargo test")[1], 6)

    def test_a_full_pass_reads_only_the_logs_tail(self):
        _session(self.ROUTINE, "a", self.store, self.repo)
        _session(self.ROUTINE, "b", self.store, self.repo)
        self.assertEqual(self.store.mine()["sessions"], 2)
        self.assertEqual(self.store.mine()["sessions"], 0)
        _session([self.TEST], "a", self.store, self.repo)          # an old session goes on
        _session(self.ROUTINE + [self.TEST], "c", self.store, self.repo)
        r = self.store.mine()
        self.assertEqual(r["sessions"], 2)
        self.assertIn("pref:test=cargo test", r["observed"])
        conn = sqlite3.connect(self.db)
        self.addCleanup(conn.close)
        plan = [row[-1] for row in conn.execute("EXPLAIN QUERY PLAN " + instinct._Miner.SQL_UNMINED, (5,))]
        self.assertIn("SEARCH e USING INTEGER PRIMARY KEY (rowid>?)", plan)
        self.assertFalse([p for p in plan if p.startswith("SCAN")], plan)

    def test_a_users_workflow_across_projects_becomes_global(self):
        other = os.path.join(self.tmp, "other")
        os.makedirs(os.path.join(other, ".git"))
        search = ["mcp__serper__google_search", "mcp__ddg-search__search", "mcp__tavily__tavily_search"]
        rng = random.Random(11)
        for n in range(6):
            repo = self.repo if n % 2 else other
            _session(self.work(rng) + search + self.work(rng), f"w{n}", self.store, repo)
            self.store.mine(f"w{n}")
        pattern = "seq:" + "->".join(search)
        rec = self.store.get(pattern, project="")
        self.assertEqual((rec["confidence"], rec["level"]), (6, "mature"))
        text = self.store.briefing(self.repo)
        self.assertEqual(text.count("mcp__serper__google_search"), 1, text)
        self.assertIn("all projects", text)
        only_here = ["Bash:cargo fmt", "Bash:cargo clippy", "Bash:cargo doc"]
        for n in range(4):
            _session(self.work(rng) + only_here, f"o{n}", self.store, self.repo)
            self.store.mine(f"o{n}")
        self.assertEqual(self.level("seq:cargo fmt->cargo clippy->cargo doc")[1], 4)
        with self.assertRaises(instinct.NotFoundError):
            self.store.get("seq:cargo fmt->cargo clippy->cargo doc", project="")

    def test_a_command_role_comes_from_the_last_word(self):
        table = {"make docs": None, "make": "build", "ruff check": "lint", "cargo check": None,
                 "mix test": "test", "uv run pytest": "test", "npm run build": "build",
                 "python -m mypy": "typecheck", "npx tsc": "typecheck", "go vet": "lint",
                 "npm run test:unit": "test", "bundle exec rspec": "test", "mix phx.server": None,
                 "ruff format": "format", "git commit": None, "cargo fmt": "format"}
        for shape, role in table.items():
            with self.subTest(shape=shape):
                self.assertEqual(instinct._Corpus.command_role(shape), role)

    def test_noise_never_matures(self):
        rng = random.Random(99)
        for n in range(25):
            _session(self.work(rng, rng.randint(15, 60)), f"n{n}", self.store, self.repo)
        r = self.store.mine()
        self.assertEqual(r["sessions"], 25)
        mature = [x["pattern"] for x in self.store.suggest(project=self.repo)]
        # a command or tool in most sessions is a fact about the project (here the generator
        # puts each in nearly every session), not noise; no workflow, fix or combo is
        self.assertEqual([p for p in mature if not p.startswith("pref:")], [])
        self.assertFalse(any(x["pattern"].startswith("seq:") and x["confidence"] >= 5
                             for x in self.store.list(project=self.repo)))

    def test_core_sequence_keeps_its_count_when_longer_chance_variants_recur(self):
        rng = random.Random(3)
        core = ["Bash:cargo fmt", "Bash:cargo clippy", "Bash:cargo test"]
        for n in range(12):
            steps = self.work(rng) + core + [rng.choice(["Bash:make docs", "Bash:docker ps"])] \
                + self.work(rng) + core + self.work(rng)
            _session(steps, f"c{n}", self.store, self.repo)
            self.store.mine(f"c{n}")
        self.assertEqual(self.level("seq:cargo fmt->cargo clippy->cargo test"), ("rule", 12))

    def test_a_ritual_with_looks_and_one_other_step_inside_is_still_the_ritual(self):
        # the finish ritual of a real project: the agent checks status/diff/log between its
        # steps (version-control reads are looking around, like Read) and some sessions do one
        # other thing in the middle (a format run, an edit); contiguous runs alone held it in
        # 2 of 6 sessions here, never enough to mature
        rng = random.Random(11)
        looks = ["Bash:git status", "Bash:git diff --stat", "Bash:git log --oneline -3", "Read"]
        extra = [[], [], ["Bash:mix format"], ["Edit"], ["Bash:mix format"], ["Edit"]]
        for n in range(6):
            steps = self.work(rng) + ["Bash:mix test", rng.choice(looks), "Bash:mix credo"] + extra[n] \
                + [rng.choice(looks), "Bash:bd close 42", rng.choice(looks), "Bash:git commit -m x"] \
                + self.work(rng)
            _session(steps, f"r{n}", self.store, self.repo)
            self.store.mine(f"r{n}")
        ritual = "seq:mix test->mix credo->bd close->git commit"
        self.assertEqual(self.level(ritual), ("mature", 6))
        self.assertFalse([r for r in self.store.list(project=self.repo)
                          if "git status" in r["pattern"] or "git diff" in r["pattern"]])
        self.assertIn("Before committing: `mix test`, then `mix credo`, then `bd close`",
                      self.store.briefing(self.repo))

    def test_a_longer_weaker_workflow_does_not_hide_a_stronger_one_in_the_briefing(self):
        short, long_ = "seq:cargo fmt->cargo clippy", "seq:cargo fmt->cargo test->cargo clippy->git push"
        for _ in range(9):
            self.store.observe(short, project=self.repo, source="hooks")
        for _ in range(5):
            self.store.observe(long_, project=self.repo, source="hooks")
        self.store.consolidate()
        text = self.store.briefing(self.repo)
        self.assertIn("`cargo fmt`, then `cargo clippy` (mature, 9 sessions", text)
        for _ in range(4):                     # as strong: the longer one says it all
            self.store.observe(long_, project=self.repo, source="hooks")
        self.store.consolidate()
        text = self.store.briefing(self.repo)
        self.assertNotIn("`cargo fmt`, then `cargo clippy` (", text)
        self.assertIn("`cargo fmt`, then `cargo test`, then `cargo clippy`", text)

    def test_one_session_adds_at_most_one_and_mining_twice_changes_nothing(self):
        _session(([self.TEST, "Edit"] + self.ROUTINE) * 6, "big0", self.store, self.repo)
        self.assertEqual(self.store.mine("big0")["observed"], [])      # one session: no evidence
        _session(([self.TEST, "Edit"] + self.ROUTINE) * 6, "big", self.store, self.repo)
        first = self.store.mine("big")                                 # two: both count, once
        self.assertEqual(first["observed"].count("pref:test=cargo test"), 2)
        before = self.store.list()
        self.assertTrue(before and all(x["confidence"] == 2 for x in before))
        again = self.store.mine("big")
        self.assertEqual((again["sessions"], again["observed"]), (0, []))
        self.assertEqual(self.store.mine()["observed"], [])
        self.assertEqual(self.store.list(), before)
        _session([self.TEST, "Edit"], "big", self.store, self.repo)
        more = self.store.mine("big")            # new events in the same session: nothing new counts
        self.assertEqual(more["observed"], [])
        self.assertTrue(all(x["confidence"] == 2 for x in self.store.list()))

    def test_fix_names_what_made_the_failing_command_pass(self):
        steps = ["Read", "Bash:cargo test", "Edit", "Bash:git status", "Bash:cargo test",
                 "Bash:cargo build", "Bash:cargo update", "Bash:cargo build",
                 "Bash:cargo clippy", "Bash:cargo clippy", "Bash:ls", "Bash:cargo fmt && cargo clippy"]
        observed = set()
        for n in range(5):                # one session is no evidence: five short ones beat chance
            _session(steps, f"s{n}", self.store, self.repo, fail={1, 5, 8})
            observed |= set(self.store.mine(f"s{n}")["observed"])
        self.assertIn("fix:cargo test by Edit", observed)
        self.assertIn("fix:cargo build by cargo update", observed)
        self.assertNotIn("fix:cargo clippy by cargo clippy", observed)   # a plain retry fixes nothing
        self.assertIn("combo:cargo clippy+cargo fmt", observed)
        rec = self.store.get("fix:cargo build by cargo update", project=self.repo)
        self.assertEqual((rec["category"], rec["source"]), ("fix_pattern", "hooks"))
        self.assertEqual(instinct._Presenter.rule_text(rec), "When `cargo build` fails: run `cargo update`, then rerun it")

    def test_generic_habits_are_not_steps_and_not_briefed(self):
        for n in range(6):
            _session(["Read", "Edit", "Bash:ls -la", "Bash:head -3 f | wc -l", "Grep", "Edit"] * 3,
                     f"g{n}", self.store, self.repo)
        self.store.mine()
        self.assertEqual(self.store.list(project=self.repo), [])
        for _ in range(6):                      # a store from an older instinct may hold them
            self.store.observe("seq:Read->Edit", project=self.repo)
            self.store.observe("combo:head+ls", project=self.repo)
        self.store.consolidate()
        self.assertEqual(self.store.briefing(self.repo), "")
        # committing and pushing is a habit, not looking around: briefed where it applies (a
        # project with no sessions yet whose files show git), not where sessions never do it
        other = make_repo(os.path.join(self.tmp, "other"))
        for _ in range(6):
            for repo in (self.repo, other):
                self.store.observe("seq:git add->git commit->git push", project=repo, source="hooks")
        self.store.consolidate()
        self.assertIn("Before committing: `git add` (then `git push`)", self.store.briefing(other))
        self.assertEqual(self.store.briefing(self.repo), "")

    def test_session_end_and_stop_mine_and_session_start_mines_leftovers(self):
        def calls(session):
            for cmd in ["cargo fmt", "cargo clippy", "git commit -m x", "git push"]:
                self.hook("post-tool-use", self.payload("Bash", {"command": cmd}, session=session))
        calls("a")
        r = self.hook("session-end", {"session_id": "a", "cwd": self.repo, "hook_event_name": "SessionEnd"},
                      env={"INSTINCT_DEBUG": "1"})
        self.assertEqual((r.returncode, r.stdout), (0, b""))
        self.assertIn(b"mined", r.stderr)
        calls("b")
        r = self.hook("stop", {"session_id": "b", "cwd": self.repo, "hook_event_name": "Stop"})
        self.assertEqual(r.returncode, 0)
        calls("c")                               # crashed: no end hook ever ran for c
        r = self.hook("session-start", {"session_id": "d", "cwd": self.repo, "hook_event_name": "SessionStart",
                                        "source": "startup"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.store.close()
        done = dict(self.store._read("SELECT session, last_id FROM mined_sessions"))
        self.assertEqual(set(done), {"a", "b", "c"})
        self.assertEqual(self.level("seq:cargo fmt->cargo clippy->git commit->git push")[1], 3)
        self.assertEqual(self.store.mine()["sessions"], 0)       # each mined once

    def test_event_log_and_mining_bookkeeping_are_bounded(self):
        self.store.config("events_max_rows", "50")
        _session(["Read", "Edit"] * 100, "s", self.store, self.repo)
        self.store.consolidate()
        self.assertLessEqual(self.store.stats()["events"], 50)
        _session(self.ROUTINE * 3, "old", self.store, self.repo)
        self.store.mine("old")
        self.clock.advance(days=400)                # past events_max_days (365)
        _session(self.ROUTINE * 3, "new", self.store, self.repo)
        self.store.mine("new")                       # consolidate prunes the old events...
        self.store.mine("new")                       # ...and the next mining drops their bookkeeping
        sessions = {r[0] for r in self.store._read("SELECT session FROM mined_sessions")}
        self.assertEqual(sessions, {"new"})
        self.clock.advance(days=400)                # what mining credited lives as long as the log
        _session(self.ROUTINE * 3, "newer", self.store, self.repo)
        self.store.mine("newer")
        self.assertNotIn("old", {r[0] for r in self.store._read("SELECT DISTINCT session FROM mined")})


class TestCaptureUnderRealClients(_Env):
    def test_git_worktrees_are_their_repositorys_project(self):
        common = os.path.join(self.repo, ".git")
        wt = os.path.join(self.tmp, "elsewhere", "repo-feature")
        meta = os.path.join(common, "worktrees", "repo-feature")
        os.makedirs(os.path.join(wt, "lib"))
        os.makedirs(meta)
        with open(os.path.join(wt, ".git"), "w") as f:
            f.write(f"gitdir: {meta}\n")
        for name, text in (("commondir", "../..\n"), ("gitdir", wt + "/.git\n"), ("HEAD", "ref: x\n")):
            with open(os.path.join(meta, name), "w") as f:
                f.write(text)
        main = instinct.project_fingerprint(self.repo)
        self.assertEqual(instinct.project_fingerprint(wt), main)
        self.assertEqual(instinct.project_fingerprint(os.path.join(wt, "lib")), main)
        broken = os.path.join(self.tmp, "broken")
        os.makedirs(broken)
        with open(os.path.join(broken, ".git"), "w") as f:
            f.write("gitdir: /nonexistent/worktrees/x\n")
        self.assertEqual(instinct.project_root(broken), os.path.realpath(broken))

    def test_client_plumbing_is_not_a_step(self):
        for tool in ("ToolSearch", "TodoWrite", "TaskUpdate", "ExitPlanMode", "AskUserQuestion"):
            with self.subTest(tool=tool):
                got = self.store.record_tool(self.payload(tool, {"query": "select:mcp__instinct__suggest"}))
                self.assertEqual(got, "skipped: client plumbing, not a habit step")
        self.assertEqual(self.events(), [])

    def test_codex_failures_are_read_from_the_tool_response(self):
        cases = [("Exit code: 2\nWall time: 0.1 seconds\nOutput:\nboom", "tool_fail"),
                 ("Exit code: 0\nOutput:\nok", "tool"), ('{"output": "x", "metadata": {"exit_code": 1}}', "tool_fail"),
                 ({"exit_code": 0, "stdout": ""}, "tool"), ({"exit_code": 127}, "tool_fail"),
                 ("plain output", "tool"), ("Chunk ID: a1\nWall time: 0.2 seconds\nProcess exited with code 7\n"
                                            "Output:\nx", "tool_fail"),
                 ("Chunk ID: a1\nProcess exited with code 0\nOutput:\n", "tool"),
                 ("Output:\nExit code: 3 was printed by the program\n" + "x\n" * 10, "tool")]
        for i, (resp, _) in enumerate(cases):
            self.store.record_tool(self.payload("Bash", {"command": "cargo test"}, session=f"c{i}",
                                                tool_response=resp, turn_id="t1"))
        self.assertEqual([k for k, *_ in self.events()], [want for _, want in cases])

    def test_a_correction_asks_the_agent_to_save_a_feedback_memory_and_stores_nothing(self):
        before = os.path.getsize(self.db) if os.path.exists(self.db) else 0
        for prompt in ("no, use `rtk git log` instead", "Did you push?", "don't stop to ask me, just do it",
                       "From now on run the linter before committing"):
            with self.subTest(prompt=prompt):
                r = self.hook("user-prompt-submit", {"session_id": "s", "cwd": self.repo, "prompt": prompt,
                                                     "hook_event_name": "UserPromptSubmit"})
                self.assertEqual(r.returncode, 0, r.stderr)
                out = json.loads(r.stdout)["hookSpecificOutput"]
                self.assertEqual(out["hookEventName"], "UserPromptSubmit")
                self.assertIn("memory_store", out["additionalContext"])
                self.assertNotIn(prompt, out["additionalContext"])
        for prompt in ("add a login page with tests", "What does this function do?", 42, None):
            with self.subTest(prompt=prompt):
                r = self.hook("user-prompt-submit", {"session_id": "s", "cwd": self.repo, "prompt": prompt,
                                                     "hook_event_name": "UserPromptSubmit"})
                self.assertEqual((r.returncode, r.stdout), (0, b""))
        self.assertEqual(self.events(("tool", "tool_fail", "observe")), [])
        with open(self.db, "rb") as f:
            self.assertNotIn(b"rtk git log", f.read())
        self.assertGreaterEqual(os.path.getsize(self.db), before)

    def test_hostile_hook_input_exits_0_quickly_without_a_traceback(self):
        base = {"session_id": "s", "tool_name": "Bash", "tool_input": {"command": "cargo test"},
                "hook_event_name": "PostToolUse"}
        payloads = [dict(base, cwd="/tmp/a\x00b"), json.dumps(dict(base, cwd="X")).replace('"X"', '"\\ud800"'),
                    dict(base, cwd="/a" * 100_000), dict(base, hook_event_name=5), dict(base, hook_event_name=["x"]),
                    dict(base, cwd=7), dict(base, session_id={"a": 1})]
        for i, p in enumerate(payloads):
            with self.subTest(case=i):
                event = None if i in (3, 4) else "post-tool-use"
                t0 = time.monotonic()
                data = p.encode() if isinstance(p, str) else json.dumps(p).encode()
                r = run_instinct("hook", *([event] if event else []), input=data, text=False,
                                 env=child_env(db=self.db))
                self.assertEqual(r.returncode, 0)
                self.assertNotIn(b"Traceback", r.stderr)
                self.assertLess(time.monotonic() - t0, 30)
        self.assertEqual(self.events(), [])


class TestInjection(_Env):
    def test_session_start_prints_capped_facts_rules_first(self):
        for i in range(15):
            for _ in range(12 if i < 3 else 6):
                self.store.observe(f"seq:step{i:02d}->Bash(pytest)", project=self.repo)
        self.store.observe("pref:" + "x" * 900, project=self.repo)
        for _ in range(11):
            self.store.observe("pref:long=" + "y" * 600)
        self.store.consolidate()
        self.store.close()
        r = self.hook("session-start", {"session_id": "n", "cwd": os.path.join(self.repo, "src"),
                                        "hook_event_name": "SessionStart", "source": "startup"})
        self.assertEqual(r.returncode, 0, r.stderr)
        out = json.loads(r.stdout)
        self.assertEqual(out["hookSpecificOutput"]["hookEventName"], "SessionStart")
        text = out["hookSpecificOutput"]["additionalContext"]
        self.assertLessEqual(len(text), instinct._Capture.INJECT_MAX_CHARS)
        items = [l for l in text.splitlines() if l.startswith("- ")]
        self.assertTrue(0 < len(items) <= 10)
        self.assertIn("(rule", items[0])
        levels = [l.rsplit("(", 1)[1].split(",")[0] for l in items]
        self.assertEqual(levels, sorted(levels, key=lambda v: v != "rule"))
        self.assertNotIn("step14", text)       # weakest of 15 mature ones is cut by the 10-item cap

    def test_session_start_with_nothing_to_say_prints_nothing(self):
        r = self.hook("session-start", {"session_id": "n", "cwd": self.repo, "source": "startup"})
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))


class TestSetup(_Env):
    def run_setup(self, client, write, scope="user", python="/usr/bin/python3"):
        return instinct.setup(client, write=write, scope=scope, home=self.tmp, project_dir=self.repo,
                              python=python)

    def existing_config(self, *parts, text):
        """A client config file the user already has, under the fake home -> its path."""
        path = os.path.join(self.tmp, *parts)
        os.makedirs(os.path.dirname(path))
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_every_client_prints_and_writes_idempotently(self):
        for client in instinct._Setup.CLIENTS:
            with self.subTest(client=client):
                printed = self.run_setup(client, write=False)
                self.assertTrue(printed and all(not os.path.exists(r["path"]) for r in printed))
                first = self.run_setup(client, write=True)
                self.assertTrue(all(r["changed"] for r in first))
                contents = {r["path"]: read(r["path"]) for r in first}
                self.assertEqual(contents, {r["path"]: r["content"] for r in printed})
                second = self.run_setup(client, write=True)
                self.assertFalse(any(r["changed"] for r in second))
                self.assertEqual({r["path"]: read(r["path"]) for r in second}, contents)

    def test_merge_keeps_other_keys_and_writes_backup(self):
        original = json.dumps({"mcpServers": {"other": {"command": "x"}}, "theme": "dark"})
        mcp = self.existing_config(".cursor", "mcp.json", text=original)
        self.run_setup("cursor", write=True)
        data = json.loads(read(mcp))
        self.assertEqual(data["theme"], "dark")
        self.assertEqual(data["mcpServers"]["other"], {"command": "x"})
        self.assertEqual(data["mcpServers"]["instinct"]["args"], ["-m", "instinct", "serve"])
        self.assertEqual(read(mcp + ".bak"), original)

    def test_claude_hooks_merge_replaces_only_ours(self):
        mine = {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-linter"}]}
        settings = self.existing_config(".claude", "settings.json", text=json.dumps(
            {"hooks": {"PostToolUse": [mine]}, "model": "opus"}))
        self.run_setup("claude-code", write=True)
        self.run_setup("claude-code", write=True)
        data = json.loads(read(settings))
        self.assertEqual(data["model"], "opus")
        post = data["hooks"]["PostToolUse"]
        self.assertEqual(post[0], mine)
        self.assertEqual(len(post), 2)
        ours = post[1]["hooks"][0]
        self.assertNotIn("async", ours)    # synchronous: stored order = call order (issue 11)
        self.assertNotIn("args", ours)     # shell form: Claude Code < 2.1.139 ignores `args`
        self.assertEqual(ours["command"].split()[-2:], ["hook", "post-tool-use"])
        self.assertEqual(set(data["hooks"]), {"SessionStart", "UserPromptSubmit", "PreToolUse",
                                              "PostToolUse", "PostToolUseFailure", "SessionEnd"})

    def test_windows_paths_are_escaped(self):
        py = "C:\\Users\\dev\\tools\\python.exe"
        r = self.run_setup("vscode", write=True, python=py)
        data = json.loads(read(r[0]["path"]))
        self.assertEqual(data["servers"]["instinct"]["command"], py)
        self.assertIn("\\\\Users", r[0]["content"])

    def test_codex_toml_and_goose_yaml_with_an_entry_are_refused_untouched(self):
        """Issue 19: no in-place TOML/YAML editing; an entry setup did not mark is left to the user."""
        toml = self.existing_config(".codex", "config.toml", text=(
            'model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n\n[mcp_servers.instinct]\ncommand = "old"\n'))
        yaml = self.existing_config(".config", "goose", "config.yaml", text=(
            "GOOSE_MODEL: gpt\nextensions:\n  developer:\n    enabled: true\n    type: builtin\n"))
        for client, path in (("codex", toml), ("goose", yaml)):
            before = read(path)
            with self.assertRaises(instinct.ValidationError) as cm:
                self.run_setup(client, write=True)
            self.assertIn("# instinct:begin", str(cm.exception))          # the block to paste
            self.assertEqual(read(path), before)
            self.assertFalse(os.path.exists(path + ".bak"))

    def test_written_hook_command_really_runs(self):
        r = self.run_setup("claude-code", write=False, python=sys.executable)
        hooks = json.loads(r[1]["content"])["hooks"]
        handler = hooks["PostToolUse"][0]["hooks"][0]
        p = subprocess.run(handler["command"], shell=True, input=json.dumps(self.payload("Bash", {"command": "pytest"})).encode(),
                           capture_output=True, timeout=60, env={**os.environ, "INSTINCT_DB": self.db},
                           cwd=self.tmp)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, b"", b""))
        self.assertEqual(self.events()[0][1], "Bash(pytest)")

    def test_cli_setup(self):
        e = child_env(self.tmp, self.db)
        r = run_instinct("setup", "cursor", env=e)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('"instinct"', r.stdout)
        r = run_instinct("setup", "cursor", "--write", env=e)
        self.assertTrue(r.stdout.startswith("wrote "), r.stdout)
        r = run_instinct("setup", "cursor", "--write", env=e)
        self.assertTrue(r.stdout.startswith("unchanged "), r.stdout)
        r = run_instinct("setup", "nope", env=e)
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()
