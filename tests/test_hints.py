"""Hints at the point of action (issue 20): the project's command before a shell call at odds
with it, a learned fix after a failure, a file's memory before its edit; held back at random
and measured by `effectiveness`. The hooks run as `setup` writes them, as real processes."""
import json
import os
import random
import shlex
import subprocess
import sys
import unittest

import instinct
from tests.helpers import ROOT, Clock, child_env, make_repo, run_instinct, setUpModule, temp_dir  # noqa: F401

NOISE = ["cargo build", "docker ps", "make docs", "gh pr view", "just lint-docs", "node x.js",
         "terraform plan", "kubectl get", "helm list", "gh run list"]


def learn(store, repo, sessions=6, seed=1):
    """Sessions that test with `uv run pytest` (a failing run fixed by `uv sync`), mined."""
    rng = random.Random(seed)
    for i in range(sessions):
        sid = f"learn{i}"
        steps = ([("uv run pytest", False), ("uv sync", True), ("uv run pytest", True)]
                 + [(c, True) for c in rng.sample(NOISE, 8)] + [("pnpm install", True)])
        for cmd, ok in steps:
            store.record_tool({"session_id": sid, "cwd": repo, "tool_name": "Bash",
                               "tool_input": {"command": cmd}}, failed=not ok)
        store.mine(sid)


class _Case(unittest.TestCase):
    def setUp(self):
        self.tmp = temp_dir(self)
        self.db = os.path.join(self.tmp, "t.db")
        self.home = os.path.join(self.tmp, "home")
        os.mkdir(self.home)
        self.repo = make_repo(os.path.join(self.tmp, "repo"), "src")
        self.store = instinct.InstinctStore(self.db, clock=Clock(1_800_000_000.0), cwd=self.repo)
        self.addCleanup(self.store.close)
        self.store.config("holdout_percent", "0")

    def commands(self, client="claude-code"):
        """{event: the shell command `setup` writes for it}."""
        plan = instinct._Setup.plan(client, "user", self.home, self.repo, sys.executable, ROOT,
                                    self.db)
        groups = next(entry for _, key, entry in plan if key == ("hooks",))
        return {e: (g.get("matcher"), g["hooks"][0]["command"]) for e, g in groups.items()}

    def hook(self, event, payload, client="claude-code"):
        """The hook command of `event` as setup writes it, run by a shell -> (answer or None)."""
        cmd = self.commands(client)[event][1]
        p = subprocess.run(cmd, shell=True, input=json.dumps(payload), capture_output=True,
                           text=True, timeout=60, cwd=self.repo, env=child_env(home=self.home))
        self.assertEqual(p.returncode, 0, p.stderr)
        if not p.stdout.strip():
            return None
        out = json.loads(p.stdout)["hookSpecificOutput"]
        self.assertEqual(set(out), {"hookEventName", "additionalContext"})   # never a decision
        if event != "SessionStart":
            self.assertLessEqual(len(out["additionalContext"]), instinct._Hints.MAX_CHARS)
        return out["additionalContext"]

    def shell(self, command, session="s1", event="PreToolUse", **extra):
        return {"session_id": session, "cwd": self.repo, "hook_event_name": event,
                "tool_name": "Bash", "tool_input": {"command": command}, **extra}


class TestSetup(_Case):
    def test_setup_registers_pre_tool_use_for_shell_calls_and_edits(self):
        for client in ("claude-code", "codex"):
            matcher, cmd = self.commands(client)["PreToolUse"]
            self.assertIn("hook pre-tool-use", cmd)
            self.assertTrue({"Bash", "Edit", "Write"} <= set(matcher.split("|")), matcher)
            self.assertNotIn("Read", matcher.split("|"))


class TestCommandHints(_Case):
    def setUp(self):
        super().setUp()
        learn(self.store, self.repo)

    def test_a_conflicting_test_command_gets_the_projects_command_once_per_session(self):
        got = self.hook("PreToolUse", self.shell("pytest -q tests/test_x.py"))
        self.assertRegex(got, r"^instinct: Tests here: `uv run pytest` \(6 sessions\), not `pytest`\.$")
        self.assertIsNone(self.hook("PreToolUse", self.shell("python -m pytest")))   # once a session
        self.assertIsNotNone(self.hook("PreToolUse", self.shell("pytest", session="s2")))

    def test_a_call_that_agrees_gets_nothing(self):
        for cmd in ("uv run pytest -q tests", "cd src && uv run pytest", "ruff check .", "ls -la",
                    "git status", "pnpm install --frozen-lockfile", "pnpm add left-pad"):
            self.assertIsNone(self.hook("PreToolUse", self.shell(cmd, session="agree")), cmd)

    def test_a_package_manager_of_another_family_gets_the_projects_one(self):
        got = self.hook("PreToolUse", self.shell("npm install"))
        self.assertEqual(got, "instinct: This project uses `pnpm` (`pnpm install`, 6 sessions), not `npm`.")

    def test_nothing_from_an_opted_out_project_nor_a_subagent(self):
        with open(os.path.join(self.repo, ".instinct-disable"), "w"):
            pass
        self.assertIsNone(self.hook("PreToolUse", self.shell("pytest")))
        os.remove(os.path.join(self.repo, ".instinct-disable"))
        self.assertIsNone(self.hook("PreToolUse", self.shell("pytest", agent_id="a1")))
        self.assertIsNotNone(self.hook("PreToolUse", self.shell("pytest")))

    def test_an_item_not_yet_mature_gives_no_hint(self):
        self.store.observe("pref:lint=ruff check", project=self.repo)
        self.assertIsNone(self.hook("PreToolUse", self.shell("flake8 src")))

    def test_same_purpose_is_decided_by_role_or_family(self):
        P = instinct._Hints.purpose
        self.assertEqual([P(s) for s in ("pytest", "uv run pytest", "mix test", "npm install",
                                         "ruff check", "git push")],
                         ["test", "test", "test", "packages", "lint", None])
        self.assertTrue(instinct._Hints.agrees("mix test", "mix test", "test"))      # `mix test --stale`
        self.assertFalse(instinct._Hints.agrees("pytest", "uv run pytest", "test"))
        self.assertTrue(instinct._Hints.agrees("pnpm add", "pnpm install", "packages"))
        self.assertFalse(instinct._Hints.agrees("yarn", "pnpm install", "packages"))


class TestFailureAndEditHints(_Case):
    def test_a_failed_command_gets_its_learned_fix_and_a_memory_about_it(self):
        learn(self.store, self.repo)
        fail = self.shell("uv run pytest -x", event="PostToolUseFailure", error="Exit code 1")
        got = self.hook("PostToolUseFailure", fail)
        self.assertEqual(got, "instinct: When `uv run pytest` failed here, `uv sync` then a re-run "
                              "fixed it (6 sessions).")
        self.store.remember("project", "Tests need the db container", "`uv run pytest` needs "
                            "`docker compose up db` first", project=self.repo)
        got = self.hook("PostToolUseFailure", dict(fail, session_id="s2"))
        self.assertTrue(got.endswith("Memory about `uv run pytest`: Tests need the db container"), got)
        self.assertIsNone(self.hook("PostToolUseFailure", dict(fail, session_id="s2")))
        self.assertIsNone(self.hook("PostToolUseFailure", self.shell("cargo build", "s3",
                                                                     "PostToolUseFailure")))

    def test_a_memory_joins_only_when_it_names_the_command(self):
        self.store.remember("project", "Edit with care", "make sure the db is up; `make db` starts"
                            " it", project=self.repo)
        edit = {"session_id": "s1", "cwd": self.repo, "hook_event_name": "PostToolUseFailure",
                "tool_name": "Edit", "tool_input": {"file_path": os.path.join(self.repo, "a.py")}}
        self.assertIsNone(self.hook("PostToolUseFailure", edit))              # not a command
        self.assertIsNone(self.hook("PostToolUseFailure", self.shell("make", "s1", "PostToolUseFailure")))
        got = self.hook("PostToolUseFailure", self.shell("make db", "s1", "PostToolUseFailure"))
        self.assertEqual(got, "instinct: Memory about `make db`: Edit with care")

    def test_codex_failed_call_signal_in_post_tool_use(self):
        learn(self.store, self.repo)
        call = dict(self.shell("uv run pytest", event="PostToolUse", turn_id="t1"),
                    tool_response="Exit code: 1\nWall time: 0.2 seconds\nOutput:\nFAILED")
        got = self.hook("PostToolUse", call, client="codex")
        self.assertIn("`uv sync` then a re-run fixed it", got)
        ok = dict(call, session_id="s2", tool_response="Exit code: 0\nOutput:\nok")
        self.assertIsNone(self.hook("PostToolUse", ok, client="codex"))

    def test_an_edit_of_an_anchored_file_gets_its_memory(self):
        path = os.path.join(self.repo, "src", "settings.py")
        with open(path, "w") as f:
            f.write("X = 1\n")
        self.store.remember("project", "Settings are generated", "run `make settings`, do not edit",
                            project=self.repo, about="src/settings.py")
        edit = {"session_id": "s1", "cwd": self.repo, "hook_event_name": "PreToolUse",
                "tool_name": "Edit", "tool_input": {"file_path": path, "old_string": "1",
                                                    "new_string": "2"}}
        self.assertEqual(self.hook("PreToolUse", edit), "instinct: A memory about `src/settings.py`:"
                         " Settings are generated - run `make settings`, do not edit")
        other = dict(edit, session_id="s2", tool_input={"file_path": os.path.join(self.repo, "x.py")})
        self.assertIsNone(self.hook("PreToolUse", other))


class TestMeasuredLift(_Case):
    def test_held_back_hints_are_recorded_not_shown(self):
        learn(self.store, self.repo)
        self.store.config("holdout_percent", "100")
        self.assertIsNone(self.hook("PreToolUse", self.shell("pytest")))
        p = run_instinct("effectiveness", "--json", env=child_env(db=self.db), cwd=self.repo)
        h = json.loads(p.stdout)["hints"]
        self.assertEqual((h["overall"]["shown"], h["overall"]["held"]), (0, 1))
        self.assertEqual(h["overall"]["note"], "not enough data")
        self.assertEqual(h["items"][0]["pattern"], "pref:test=uv run pytest")

    def study(self, sessions, p_shown, p_held, seed):
        """A simulated study: in each session the agent is about to run `pytest`; a shown hint
        makes its next test command `uv run pytest` with p_shown, else with p_held."""
        self.store.config("holdout_percent", "50")
        rng = random.Random(seed + 1000)
        random.seed(seed)
        for i in range(sessions):
            sid = f"study{i}"
            text = instinct._Hints.hint(self.store, "pre-tool-use", self.shell("pytest", sid), self.repo)
            self.store.record_tool(self.shell("pytest", sid))
            use = rng.random() < (p_shown if text else p_held)
            self.store.record_tool(self.shell("uv run pytest" if use else "pytest -x", sid))
        return self.store.effectiveness()["hints"]

    def test_a_simulated_study_recovers_the_planted_lift(self):
        learn(self.store, self.repo)
        h = self.study(400, 0.8, 0.3, seed=7)
        item = next(r for r in h["items"] if r["pattern"] == "pref:test=uv run pytest")
        self.assertEqual(item["shown"] + item["held"], 400)
        self.assertGreater(item["held"], 120)
        lo, hi = item["interval"]
        self.assertLess(lo, 0.5)
        self.assertGreater(hi, 0.5)
        self.assertGreater(lo, 0.2)                # a lift, told apart from none
        self.assertAlmostEqual(item["lift"], 0.5, delta=0.15)

    def test_below_the_sample_size_it_says_not_enough_data(self):
        learn(self.store, self.repo)
        h = self.study(12, 0.8, 0.3, seed=3)
        self.assertEqual(h["overall"]["note"], "not enough data")
        self.assertIsNone(h["overall"]["lift"])

    def test_a_hint_shown_to_change_nothing_is_demoted_when_asked(self):
        learn(self.store, self.repo)
        self.study(300, 0.1, 0.5, seed=11)          # the hint makes things worse
        item = self.store.effectiveness()["hints"]["items"][0]
        self.assertLess(item["interval"][1], 0.05)
        self.store.config("holdout_percent", "0")
        self.assertIsNotNone(self.hook("PreToolUse", self.shell("pytest", "after1")))
        self.store.config("hint_demote", "1")
        self.assertIsNone(self.hook("PreToolUse", self.shell("pytest", "after2")))

    def test_briefing_items_are_held_back_and_scored_in_their_session(self):
        learn(self.store, self.repo)
        self.store.config("holdout_percent", "0")
        pay = {"session_id": "b1", "cwd": self.repo, "hook_event_name": "SessionStart"}
        brief = self.hook("SessionStart", pay)
        self.assertIn("uv run pytest", brief)
        self.assertEqual(self.hook("SessionStart", pay), brief)     # resumed: the same items
        self.store.record_tool(self.shell("uv run pytest", "b1"))
        self.store.config("holdout_percent", "100")
        self.assertIsNone(self.hook("SessionStart", dict(pay, session_id="b2")))
        items = {(r["pattern"], r["kind"]): r for r in self.store.effectiveness()["hints"]["items"]}
        r = items[("pref:test=uv run pytest", "brief")]
        self.assertEqual((r["shown"], r["held"], r["followed_shown"], r["decided_held"]), (1, 1, 1, 0))


class TestOfflineBenchmark(unittest.TestCase):
    def test_bench_predict_judges_each_hint_by_what_the_agent_did_next(self):
        """Recorded sessions (no hints shown): six test with `uv run pytest`; then the agent
        runs `pytest` and next `uv run pytest` twice (the hint was right), `pytest -x` once."""
        import importlib.util
        spec = importlib.util.spec_from_file_location("bench_sessions",
                                                      os.path.join(ROOT, "bench", "sessions.py"))
        sessions = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sessions)
        src = sessions.Source(seed=4)
        repo = src.repo("shop")
        for then in [None] * 6 + ["uv run pytest -q", "uv run pytest", "pytest -x"]:
            s = src.start(repo)
            s.noise(3)
            s.bash("pytest -q" if then else "uv run pytest -q")
            s.noise(2)
            if then:
                s.bash(then)
            s.end()
        data, out = temp_dir(self), temp_dir(self)
        src.write(data, "hinted")
        report = os.path.join(out, "r.json")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_predict.py"),
                            "--data", data, "--hints", "--json", report, "--tmp", out],
                           capture_output=True, text=True, timeout=300, env=child_env(home=out))
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        with open(report, encoding="utf-8") as f:
            h = json.load(f)["sources"]["hinted"]["hints"]
        self.assertEqual((h["hints"], h["right"], h["decided"]), (3, 2, 3))
        self.assertIn("hinted: pre-tool-use 3", p.stdout)
        self.assertIn("RIGHT: 'instinct: Tests here: `uv run pytest` (6 sessions), not `pytest`.'",
                      p.stdout)


if __name__ == "__main__":
    unittest.main()
