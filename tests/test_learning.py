"""What learning makes of whole sessions: habits that recur, said once, where they apply; and
session mining (issue 4): what recurs across a project's sessions, against chance.

Sessions come from bench/sessions.py (realistic Claude Code hook payloads) and go through the
hook entry point in order, as bench/bench_realdata.py replays them; mined sessions are fed to
real hook processes.
Run: python3 -m unittest -v tests.test_learning
"""
import json
import os
import random
import re
import sqlite3
import sys
import tempfile
import unittest
from unittest import mock

import instinct
from tests.helpers import (ROOT, HookCase, mined, child_env, cli_process, label, make_repo,  # noqa: F401
                           mcp_in_process, raw_bytes, req, rows, setUpModule)


sys.path.insert(0, os.path.join(ROOT, "bench"))
import bench_realdata  # noqa: E402
import sessions  # noqa: E402


def commands_named(text):
    """The shell commands a briefing names in backticks (tools such as `Task(x)` left out)."""
    return [n for n in re.findall(r"`([^`]+)`", text) if " " in n or n.islower()
            and not n.startswith("mcp__")]


class Replayed(unittest.TestCase):
    def replay(self, src, name, upto=None, files=None):
        """Replay `src`'s sessions (the first `upto` of them) -> (store, repo folders)."""
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        src.write(tmp.name, name)
        lines = bench_realdata.read_lines(tmp.name, name)
        if upto is not None:
            starts = [i for i, ln in enumerate(lines) if ln["event"] == "session-start"]
            lines = lines[:starts[upto]] if upto < len(starts) else lines
        with open(os.path.join(tmp.name, f"{name}.layout.json")) as f:
            layout = json.load(f)
        root = os.path.join(tmp.name, "root")
        bench_realdata.build_layout(root, layout)
        for cwd in {ln["payload"]["cwd"] for ln in lines if ln["payload"].get("cwd")}:
            for rel, text in (files or {}).items():
                with open(root + cwd + "/" + rel, "w") as f:
                    f.write(text)
        db = os.path.join(tmp.name, "i.db")
        env = {k: os.environ.get(k) for k in ("INSTINCT_DB", "HOME")}
        self.addCleanup(lambda: [os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
                                 for k, v in env.items()])
        bench_realdata.replay(instinct, lines, root, db)
        store = instinct.InstinctStore(db)
        self.addCleanup(store.close)
        cwds = sorted({ln["payload"]["cwd"] for ln in lines if ln["payload"].get("cwd")})
        return store, [root + c for c in cwds]

    def mature(self, store, repo):
        return {r["pattern"]: r["confidence"]
                for r in store.suggest(project=instinct.project_fingerprint(repo))}


class TestHabits(Replayed):
    def test_a_command_with_no_role_word_matures_by_the_5th_session_and_is_briefed(self):
        for n, want in ((4, None), (5, 5)):
            store, (repo,) = self.replay(sessions.plain_command(6, seed=3), "plain", upto=n)
            self.assertEqual(self.mature(store, repo).get("pref:command:just verify"), want, n)
        store, (repo,) = self.replay(sessions.plain_command(6, seed=3), "plain")
        text = store._briefing(repo)
        self.assertIn("- Project command: `just verify` (mature, 6 sessions", text)
        self.assertEqual(commands_named(text), ["just verify"])

    def test_a_seven_step_ritual_is_one_family(self):
        store, (repo,) = self.replay(sessions.ritual(6, steps=7, seed=1), "ritual")
        steps = [s.split()[0] + " " + s.split()[1] for s in sessions.RITUAL[:7]]
        text = store._briefing(repo)
        lines = [ln for ln in text.splitlines() if ln.startswith("- ")]
        ritual = [ln for ln in lines if sum(f"`{s}`" in ln for s in steps) >= 2]
        self.assertTrue(1 <= len(ritual) <= 2, text)
        seqs = [p for p in self.mature(store, repo) if p.startswith("seq:")]
        self.assertTrue(1 <= len(seqs) <= 3, seqs)
        for role, cmd in (("test", "mix test"), ("lint", "mix credo"), ("build", "mix compile")):
            self.assertIn(f"pref:{role}={cmd}", self.mature(store, repo))
        # every channel names the same commands: the briefing and the CLAUDE.md block
        store.cwd = repo
        block = store.export_rules(format="claude", project=repo)
        items = "\n".join(ln for ln in block.splitlines() if ln.startswith("- "))
        self.assertEqual(items, "\n".join(lines))

    def test_with_8x_the_history_test_lint_and_format_are_still_said_first(self):
        store, (repo,) = self.replay(sessions.ritual(48, steps=7, seed=1), "ritual8x")
        lines = [ln for ln in store._briefing(repo).splitlines() if ln.startswith("- ")]
        self.assertLessEqual(len(lines), 2, lines)            # the ritual, format: no noise line
        self.assertIn("`mix credo` \u2192 `mix test`", lines[0])
        self.assertTrue(any(ln.startswith("- Format here: `mix format`") for ln in lines), lines)

    def test_random_commands_hold_no_workflow_fix_or_dominant_command(self):
        # 300 sessions (about 100 s) where .ci/run sets INSTINCT_FULL=1; 60 by default
        n = 300 if os.environ.get("INSTINCT_FULL") == "1" else 60
        store, repos = self.replay(sessions.random_sessions(n, seed=5), "random")
        learned = store.list(min_confidence=1, limit=1000)
        self.assertFalse([r["pattern"] for r in learned if r["level"] != "raw"
                          and r["pattern"].startswith(("seq:", "fix:", "combo:"))])
        for repo in repos:
            text = store._briefing(repo)
            self.assertLessEqual(len(set(commands_named(text))), 2, text)

    def test_a_learned_command_is_anchored_to_the_file_that_defines_it(self):
        mix = "defmodule Shop.MixProject do\nend\n"
        store, (repo,) = self.replay(sessions.plain_command(6, seed=2, command="mix precommit"),
                                     "anchored", files={"mix.exs": mix})
        self.assertIn("mix precommit", store._briefing(repo))
        self.assertEqual(store._read("SELECT path, pattern FROM anchors"),
                         [("mix.exs", "pref:command:mix precommit")])
        with open(os.path.join(repo, "mix.exs"), "a") as f:
            f.write("# deps changed\n")
        self.assertIn("`mix precommit` (mature, 6 sessions, used in 6 of the last 6, this "
                      "project; may be stale: mix.exs changed)", store._briefing(repo))
        store.feedback("pref:command:mix precommit", "good", project=repo)   # confirmed
        self.assertNotIn("may be stale", store._briefing(repo))
        os.remove(os.path.join(repo, "mix.exs"))
        self.assertNotIn("mix precommit", store._briefing(repo))


class TestOneSelection(unittest.TestCase):
    """The briefing, the MCP session_briefing prompt and every rules-file format show the same
    items in the same words."""

    def test_every_channel_shows_the_same_items(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        repo = make_repo(os.path.join(tmp.name, "repo"))
        other = make_repo(os.path.join(tmp.name, "other"))
        store = instinct.InstinctStore(os.path.join(tmp.name, "i.db"), cwd=repo)
        self.addCleanup(store.close)
        for n in range(12):
            mined(store, "seq:Read->Edit", repo)      # generic pair
            mined(store, "pref:test=uv run pytest", repo)
            mined(store, "seq:ruff check->uv run pytest->git commit", repo)
            mined(store, "seq:ruff check->uv run pytest", repo)  # family
            for p in (repo, other):
                store.observe("pref:stdlib-first", project=p)                   # -> universal
            if n < 6:
                store.observe("pref:indent=tabs")
        for _ in range(7):
            store.observe("pref:indent=spaces")                                 # supersedes tabs
        store.remember("project", "Vitest, not Jest", "this repo's tests run on Vitest",
                       project=repo)
        store.consolidate()
        brief = store._briefing(repo)
        items = [ln for ln in brief.splitlines() if ln.startswith("- ") and "Vitest" not in ln]
        self.assertIn("Vitest", brief)
        self.assertEqual(len(items), 3, brief)      # the test command is on the routine's line
        text = "\n".join(items)
        for absent in ("Read", "tabs", "Usual workflow: `ruff check`"):
            self.assertNotIn(absent, text)
        self.assertIn("every project", text)
        srv, _ = mcp_in_process(store)
        got = srv.handle_message(req(3, "prompts/get", {"name": "session_briefing"}))["result"]
        prompt = got["messages"][0]["content"]["text"]
        self.assertEqual([ln for ln in prompt.splitlines() if ln in items], items)
        for fmt in ("claude", "agents", "cursor", "windsurf", "skill"):
            with self.subTest(fmt=fmt):
                out = store.export_rules(format=fmt, project=repo)
                self.assertEqual([ln for ln in out.splitlines() if ln.startswith("- ")], items)


def _session(steps, session, store, repo, fail=()):
    for i, tool in enumerate(steps):
        kind, _, arg = tool.partition(":")
        tinput = {"command": arg} if kind == "Bash" else {"file_path": f"/r/x{arg or '.py'}"}
        store._record_tool({"session_id": session, "cwd": repo, "tool_name": kind, "tool_input": tinput},
                          failed=i in fail)


class TestMining(HookCase):
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
        text = self.store._briefing(self.repo)
        self.assertIn("Tests here: `cargo test` (rule, 10 sessions, used in 10 of the last 10, this project)", text)
        self.assertIn("Before committing: `cargo fmt` \u2192 `cargo clippy` \u2192 `git commit` \u2192 `git push`", text)

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
        self.assertIn("pref:lint=cargo clippy", r["observed"])
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
        text = self.store._briefing(self.repo)
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
        self.assertIn("Before committing: `mix test` → `mix credo` → `bd close` → `git commit`",
                      self.store._briefing(self.repo))

    def test_a_longer_weaker_workflow_does_not_hide_a_stronger_one_in_the_briefing(self):
        short, long_ = "seq:cargo fmt->cargo clippy", "seq:cargo fmt->cargo test->cargo clippy->git push"
        for _ in range(9):
            mined(self.store, short, self.repo)
        for _ in range(5):
            mined(self.store, long_, self.repo)
        self.store.consolidate()
        text = self.store._briefing(self.repo)
        self.assertIn("`cargo fmt` → `cargo clippy` (mature, 9 sessions", text)
        for _ in range(4):                     # as strong: the longer one says it all
            mined(self.store, long_, self.repo)
        self.store.consolidate()
        text = self.store._briefing(self.repo)
        self.assertNotIn("`cargo fmt` → `cargo clippy` (", text)
        self.assertIn("`cargo fmt` → `cargo test` → `cargo clippy`", text)

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
        self.assertEqual((rec["category"], rec["source"]), ("fix_pattern", "hooks:claude-code"))
        self.assertEqual(instinct._Presenter.rule_text(rec), "When `cargo build` fails: run `cargo update`, then rerun it")
        # a workflow that starts with a commit and commits again: what comes before the second
        rec = {"pattern": "seq:git commit->cargo fmt->git commit", "source": "hooks"}
        self.assertEqual(instinct._Presenter.rule_text(rec),
                         "Before committing: `git commit` → `cargo fmt` → `git commit`")

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
        self.assertEqual(self.store._briefing(self.repo), "")
        # committing and pushing is a habit, not looking around: briefed where it applies (a
        # project with no sessions yet whose files show git); a project's own habit stays said
        # until a long window of its sessions (20) did without it (issue 30), not after 6
        other = make_repo(os.path.join(self.tmp, "other"))
        for _ in range(6):
            for repo in (self.repo, other):
                mined(self.store, "seq:git add->git commit->git push", repo)
        self.store.consolidate()
        self.assertIn("Before committing: `git add` → `git commit` → `git push`", self.store._briefing(other))
        self.assertIn("used in 0 of the last 6", self.store._briefing(self.repo))

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


class TestCallRecord(unittest.TestCase):
    """A step keeps the names that identify it (skill, subagent type, MCP tool, program and
    subcommand), never argument values; what a step is lives in the call record alone."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.db = os.path.join(tmp.name, "i.db")
        self.repo = make_repo(os.path.join(tmp.name, "repo"))

    def hook(self, tool, tool_input, session="s1"):
        payload = {"session_id": session, "cwd": self.repo, "hook_event_name": "PostToolUse",
                   "tool_name": tool, "tool_input": tool_input, "tool_response": {}}
        r = cli_process("hook", "post-tool-use", input=json.dumps(payload), env=child_env(db=self.db))
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))

    def labels(self):
        return [label(d) for (d,) in rows(self.db, "SELECT data FROM events WHERE kind = 'tool'"
                                                   " ORDER BY id")]

    def test_the_hook_keeps_skill_subagent_and_mcp_names_and_no_argument(self):
        self.hook("Skill", {"skill": "story-writer", "args": "sekrit-arg-1"})
        self.hook("Task", {"subagent_type": "security-reviewer", "description": "sekrit-arg-2",
                           "prompt": "review sekrit-arg-3"})
        self.hook("mcp__github__create_issue", {"title": "sekrit-arg-4"})
        self.hook("Bash", {"command": "uv run pytest tests/sekrit_arg_5.py -k x"})
        self.assertEqual(self.labels(), ["Skill(story-writer)", "Task(security-reviewer)",
                                         "mcp__github__create_issue", "Bash(uv run pytest)"])
        stored = b"".join(raw_bytes(self.db + ext) for ext in ("", "-wal")
                          if os.path.exists(self.db + ext))
        self.assertNotIn(b"sekrit", stored)

    def test_keeping_another_name_is_a_change_in_the_call_record_only(self):
        call = {"tool_name": "SlashCommand", "tool_input": {"command": "release", "x": "y"}}
        self.assertEqual(instinct._Call.of(call)[0].label(), "SlashCommand")
        with mock.patch.dict(instinct._Call.NAMED, {"SlashCommand": "command"}):
            got, _ = instinct._Call.of(call)
            self.assertEqual((got.label(), instinct._Call.read(got.encode()).label()),
                             ("SlashCommand(release)", "SlashCommand(release)"))
            self.assertEqual(got.steps(), ["SlashCommand(release)"])


class TestWhereItApplies(unittest.TestCase):
    """A habit learned in other projects is briefed in a project until the project's own
    sessions show it is not one of its habits."""

    SEARCH = ["mcp__serper__google_search", "mcp__ddg-search__search", "mcp__tavily__tavily_search"]
    NOISE = ["Read", "Edit", "Grep", "Glob", "Bash:git status", "Bash:ls", "WebFetch", "TodoWrite",
             "Bash:head -5 x", "Bash:git diff", "Bash:docker ps", "Bash:cargo build", "Bash:make docs"]

    def session(self, store, repo, name, rng, habit):
        steps = [rng.choice(self.NOISE) for _ in range(rng.randint(4, 12))]
        steps += (self.SEARCH if habit else []) + [rng.choice(self.NOISE) for _ in range(5)]
        for tool in steps:
            kind, _, arg = tool.partition(":")
            tinput = {"command": arg} if kind == "Bash" else {"file_path": "/r/x.py"}
            store._record_tool({"session_id": name, "cwd": repo, "tool_name": kind,
                               "tool_input": tinput})
        store.mine(name)

    def test_a_global_habit_no_session_of_this_project_used_is_not_briefed(self):
        import random
        rng = random.Random(11)
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        a, b, c = (make_repo(os.path.join(tmp.name, n)) for n in "abc")
        store = instinct.InstinctStore(os.path.join(tmp.name, "i.db"))
        self.addCleanup(store.close)
        for n in range(6):
            self.session(store, (a, b)[n % 2], f"w{n}", rng, habit=True)
        self.assertEqual(store.get("seq:" + "->".join(self.SEARCH), project="")["level"], "mature")
        self.assertIn(self.SEARCH[0], store._briefing(b))
        self.assertNotIn(self.SEARCH[0], store._briefing(c))   # a new project: no other's tool habit
        self.session(store, c, "c1", rng, habit=False)
        self.assertNotIn(self.SEARCH[0], store._briefing(c))   # its own session did not use it
        self.session(store, c, "c2", rng, habit=True)
        self.assertIn("used in 1 of the last 2, all projects", store._briefing(c))


class TestSaidInTime(HookCase):
    """Issue 30: a habit is mature when its 5th holder ends and stays said; one routine is one
    line; a fix made every time is a fix; the briefing can say why it leaves an item out."""
    # varied other work: 40 shapes, 3 a session, none standing out
    OTHER = [f"{prog} {sub}" for prog in ("terraform", "kubectl", "helm", "aws", "gcloud", "az")
             for sub in ("plan", "apply", "get", "list", "describe", "rollout", "upgrade", "sync",
                         "login", "import")]

    def other(self, rng):
        return ["Bash:" + c for c in rng.sample(self.OTHER, 2)] + ["Read", "Edit"]

    def test_a_command_in_every_third_session_matures_at_its_5th_holder_and_stays_said(self):
        rng = random.Random(3)
        holders = 0
        for n in range(18):
            uses = n % 3 == 0 and n <= 12            # holders: sessions 0, 3, 6, 9, 12; then none
            steps = self.other(rng)
            if uses:
                steps.insert(rng.randint(0, len(steps)), "Bash:just verify")
                holders += 1
            _session(steps, f"s{n}", self.store, self.repo)
            self.store.mine(f"s{n}")
            mature = {r["pattern"] for r in self.store.suggest(project=self.repo)}
            self.assertEqual("pref:command:just verify" in mature, holders >= 5, f"after session {n}")
            if holders >= 5:                         # and said through the 5 sessions without it
                self.assertIn("`just verify` (mature, 5 sessions", self.store._briefing(self.repo), n)
        self.assertFalse([p for p in mature if p != "pref:command:just verify"], mature)

    def leaves_after(self, command, pattern):
        """Sessions running `command` every time (a rate of 1), then 6 without it, the first
        session resumed each time (its new calls do not make it a recent session) -> the last
        session without it at whose end the briefing still names it."""
        rng, said = random.Random(8), []
        for n in range(8):
            _session(self.other(rng) + [f"Bash:{command}"], f"u{n}", self.store, self.repo)
            self.store.mine(f"u{n}")
        for n in range(8, 14):
            _session(self.other(rng), f"u{n}", self.store, self.repo)
            self.store.mine(f"u{n}")
            _session([f"Bash:{command}"], "u0", self.store, self.repo)
            self.store.mine("u0")
            said.append(f"`{command}`" in self.store._briefing(self.repo))
        why = {x["pattern"]: x["why"] for x in self.store.explain_briefing(self.repo)["items"]}
        self.assertEqual(why[pattern], "not used in the last 6 sessions here")
        self.assertEqual(said, sorted(said, reverse=True))         # said, then never again
        return said.count(True)

    def test_a_command_with_a_role_stays_through_4_sessions_without_it(self):
        """Standing knowledge: a test, lint, build... command leaves after a run of sessions
        without it that its own rate makes unlikely, 5 at least."""
        self.assertEqual(self.leaves_after("just test", "pref:test=just test"), 4)

    def test_a_habit_with_no_role_stays_through_2_sessions_without_it(self):
        """A habit with no role (a tool, a skill, `just verify`) is judged by its use: 3 sessions
        without what was in every one are evidence enough."""
        self.assertEqual(self.leaves_after("just verify", "pref:command:just verify"), 2)

    def test_a_tool_used_in_every_session_under_changing_names_is_one_habit(self):
        rng = random.Random(9)
        skills = ["adr", "adr", "brainstorming", "adr", "dut-console", "writing-plans"]
        for n, skill in enumerate(skills):            # a skill each session, rarely the same one
            _session(self.other(rng), f"k{n}", self.store, self.repo)
            self.store._record_tool({"session_id": f"k{n}", "cwd": self.repo, "tool_name": "Skill",
                                    "tool_input": {"skill": skill}})
            self.store.mine(f"k{n}")
            mature = {r["pattern"] for r in self.store.suggest(project=self.repo)}
            self.assertEqual("pref:tool:Skill" in mature, n >= 4, n)
        self.assertNotIn("pref:tool:Skill(adr)", mature)       # 3 sessions: not yet its own
        brief = self.store._briefing(self.repo)
        self.assertIn("- Often used here: `Skill(adr)`, `Skill(brainstorming)`, ", brief)
        self.assertEqual(brief.count("Skill("), 3, brief)     # one line, the 3 most used kinds

    def routine_sessions(self, n, rng):
        for k in range(n):
            steps = self.other(rng) + ["Bash:bd ready", "Bash:bd show x-1", "Edit",
                                       "Bash:pnpm run typecheck", "Bash:git add -A",
                                       "Bash:git commit -m 'x'", "Bash:bd close x-1"]
            _session(steps, f"r{k}", self.store, self.repo)
            self.store.mine(f"r{k}")

    def test_the_commit_routine_is_one_line_and_no_line_repeats_a_step(self):
        self.routine_sessions(8, random.Random(4))
        text = self.store._briefing(self.repo)
        lines = [re.findall(r"`([^`]+)`", ln) for ln in text.splitlines() if ln.startswith("- ")]
        named = [n for ln in lines for n in ln]
        self.assertEqual(len(named), len(set(named)), text)              # no step twice
        commit = [ln for ln in lines if {"git add", "git commit"} & set(ln)]
        self.assertEqual(len(commit), 1, text)                            # the routine: one line
        self.assertEqual([n for n in commit[0] if n in ("pnpm run typecheck", "git add", "git commit")],
                         ["pnpm run typecheck", "git add", "git commit"], text)   # in order
        self.assertIn("- Before committing: ", text)
        self.assertTrue({"bd ready", "bd show", "bd close"} <= set(named), text)
        self.assertLessEqual(len(lines), 2, text)          # a 7-step claim-work-close ritual

    def test_a_fix_made_every_time_is_a_fix_and_a_command_run_anywhere_is_not(self):
        self.store.config("holdout_percent", "0")
        steps = ["Read", "Bash:mix test", "Bash:mix deps.get", "Bash:mix test", "Bash:mix format"]
        for n in range(6):                          # the failure in every session, the fix after it
            _session(steps, f"f{n}", self.store, self.repo, fail={1})
            self.store.mine(f"f{n}")
            level = {r["pattern"] for r in self.store.suggest(project=self.repo)}
            self.assertEqual("fix:mix test by mix deps.get" in level, n >= 4, f"after session {n + 1}")
        fail = self.payload("Bash", {"command": "mix test"}, session="f9")
        out = self.hook("post-tool-use-failure", fail).stdout.decode()
        self.assertIn("When `mix test` failed here, `mix deps.get` then a re-run fixed it (6 sessions)", out)
        # `cargo update` after a failing build, but as often where nothing failed: no fix
        steps = ["Bash:cargo update", "Bash:cargo build", "Bash:cargo update", "Bash:cargo build",
                 "Bash:cargo update", "Bash:cargo test"]
        for n in range(6):
            _session(steps, f"c{n}", self.store, self.repo, fail={1})
            self.store.mine(f"c{n}")
        self.assertFalse([r for r in self.store.list(project=self.repo, limit=1000)
                          if r["pattern"].startswith("fix:cargo build")])

    def test_explain_briefing_accounts_for_every_mature_item_as_the_hook_says(self):
        self.routine_sessions(6, random.Random(5))
        mature = {r["pattern"] for r in self.store.suggest(project=self.repo, limit=1000)}
        out = cli_process("explain", "--briefing", "--json", cwd=self.repo, env=child_env(db=self.db))
        self.assertEqual(out.returncode, 0, out.stderr)
        report = json.loads(out.stdout)
        said = {x["pattern"]: x["why"] for x in report["items"]}
        self.assertEqual(set(said), mature)
        self.assertIn("superseded by a family line", said.values())
        self.assertTrue(all(x["shown"] == (not x["why"]) for x in report["items"]))
        text = cli_process("explain", "--briefing", cwd=self.repo, env=child_env(db=self.db)).stdout
        self.assertIn(f"mature items shown", text)
        start = self.hook("session-start", {"session_id": "new", "cwd": self.repo, "source": "startup"},
                          env={"INSTINCT_DEBUG": "1"})
        told = dict(re.findall(r"session-start: (.+?): (?:not shown: )?(.+)$", start.stderr.decode(),
                               re.M))
        told.pop("mined 0 unmined sessions", None)
        self.assertEqual(set(told), mature)
        for p, why in said.items():                 # the same reasons (held back: only the hook's)
            if told[p] != "held back for the lift measure":
                self.assertEqual(told[p], why or "shown", p)

    def test_sessions_are_counted_as_sessions_at_any_observation_weight(self):
        with mock.patch.object(instinct._Core, "_OBSERVATION", 3):
            rng = random.Random(6)
            for n in range(6):
                _session(self.other(rng) + ["Bash:just verify"], f"w{n}", self.store, self.repo)
                self.store.mine(f"w{n}")
            rec = self.store.get("pref:command:just verify", project=self.repo)
            self.assertEqual(rec["confidence"], 18)
            self.assertIn("`just verify` (rule, 6 sessions", self.store._briefing(self.repo))
            why = self.store.explain("pref:command:just verify", project=self.repo)
            self.assertEqual((why["observations"], why["session_count"]), (6, 6))
            self.store.cwd = self.repo
            self.assertIn("6 sessions", self.store.export_rules(format="claude", project=self.repo))
            self.assertNotIn("18 sessions", self.store.export_rules(format="claude", project=self.repo))


if __name__ == "__main__":
    unittest.main()
