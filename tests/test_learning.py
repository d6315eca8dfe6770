"""What learning makes of whole sessions: habits that recur, said once, where they apply.

Sessions come from bench/sessions.py (realistic Claude Code hook payloads) and go through the
hook entry point in order, as bench/bench_realdata.py replays them."""
import json
import os
import re
import sys
import tempfile
import unittest

from unittest import mock

from tests.helpers import (ROOT, child_env, label, make_repo, mcp_in_process, raw_bytes, req,  # noqa: F401
                           rows, run_instinct, setUpModule)

import instinct

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
        text = store.briefing(repo)
        self.assertIn("- Project command: `just verify` (mature, 6 sessions", text)
        self.assertEqual(commands_named(text), ["just verify"])

    def test_a_seven_step_ritual_is_one_family(self):
        store, (repo,) = self.replay(sessions.ritual(6, steps=7, seed=1), "ritual")
        steps = [s.split()[0] + " " + s.split()[1] for s in sessions.RITUAL[:7]]
        text = store.briefing(repo)
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

    def test_random_commands_hold_no_workflow_fix_or_dominant_command(self):
        store, repos = self.replay(sessions.random_sessions(300, seed=5), "random")
        learned = store.list(min_confidence=1, limit=1000)
        self.assertFalse([r["pattern"] for r in learned if r["level"] != "raw"
                          and r["pattern"].startswith(("seq:", "fix:", "combo:"))])
        for repo in repos:
            text = store.briefing(repo)
            self.assertLessEqual(len(set(commands_named(text))), 2, text)

    def test_a_learned_command_is_anchored_to_the_file_that_defines_it(self):
        mix = "defmodule Shop.MixProject do\nend\n"
        store, (repo,) = self.replay(sessions.plain_command(6, seed=2, command="mix precommit"),
                                     "anchored", files={"mix.exs": mix})
        self.assertIn("mix precommit", store.briefing(repo))
        self.assertEqual(store._read("SELECT path, pattern FROM anchors"),
                         [("mix.exs", "pref:command:mix precommit")])
        with open(os.path.join(repo, "mix.exs"), "a") as f:
            f.write("# deps changed\n")
        self.assertIn("`mix precommit` (mature, 6 sessions, used in 5 of the last 5, this "
                      "project; may be stale: mix.exs changed)", store.briefing(repo))
        store.feedback("pref:command:mix precommit", "good", project=repo)   # confirmed
        self.assertNotIn("may be stale", store.briefing(repo))
        os.remove(os.path.join(repo, "mix.exs"))
        self.assertNotIn("mix precommit", store.briefing(repo))


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
            store.observe("seq:Read->Edit", project=repo, source="hooks")      # generic pair
            store.observe("pref:test=uv run pytest", project=repo, source="hooks")
            store.observe("seq:ruff check->uv run pytest->git commit", project=repo, source="hooks")
            store.observe("seq:ruff check->uv run pytest", project=repo, source="hooks")  # family
            for p in (repo, other):
                store.observe("pref:stdlib-first", project=p)                   # -> universal
            if n < 6:
                store.observe("pref:indent=tabs")
        for _ in range(7):
            store.observe("pref:indent=spaces")                                 # supersedes tabs
        store.remember("project", "Vitest, not Jest", "this repo's tests run on Vitest",
                       project=repo)
        store.consolidate()
        brief = store.briefing(repo)
        items = [ln for ln in brief.splitlines() if ln.startswith("- ") and "Vitest" not in ln]
        self.assertIn("Vitest", brief)
        self.assertEqual(len(items), 4, brief)
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
        r = run_instinct("hook", "post-tool-use", input=json.dumps(payload), env=child_env(db=self.db))
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
            store.record_tool({"session_id": name, "cwd": repo, "tool_name": kind,
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
        self.assertIn(self.SEARCH[0], store.briefing(b))
        self.assertIn(self.SEARCH[0], store.briefing(c))      # a new project: nothing says no
        self.session(store, c, "c1", rng, habit=False)
        self.assertNotIn(self.SEARCH[0], store.briefing(c))   # its own session did not use it
        self.session(store, c, "c2", rng, habit=True)
        self.assertIn("used in 1 of the last 2, all projects", store.briefing(c))


if __name__ == "__main__":
    unittest.main()
