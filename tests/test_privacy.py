"""Privacy of what capture keeps (issues 18 and 21): a word in program position that instinct
does not know by name is kept as a keyed hash until a second session uses it (a pasted
password never lands as text; a real tool is learned by name, live or imported); a prompt
repeated verbatim (an automation's) is no correction; old history is learned from."""
import glob
import json
import os
import unittest

import instinct
from tests.helpers import (child_env, make_repo, raw_bytes, read, rows, run_instinct,  # noqa: F401
                           setUpModule, temp_dir)
from tests.test_bench import sessions

PASSWORD = "CorrectHorseBatteryStaple"


class _Home(unittest.TestCase):
    """A temp HOME with a git project and a store; hooks and the CLI as real processes."""

    def setUp(self):
        self.home = temp_dir(self)
        self.repo = make_repo(os.path.join(self.home, "src", "shop"))
        self.db = os.path.join(self.home, "store", "i.db")
        os.mkdir(os.path.dirname(self.db), 0o700)

    def env(self):
        return child_env(self.home, self.db)

    def hook(self, event, payload):
        payload = dict({"cwd": self.repo}, **payload)
        r = run_instinct("hook", event, input=json.dumps(payload), cwd=self.repo, env=self.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        return json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"] if r.stdout else ""

    def bash(self, sid, *commands):
        for cmd in commands:
            self.hook("post-tool-use", {"session_id": sid, "tool_name": "Bash",
                                        "tool_input": {"command": cmd}, "tool_response": {},
                                        "hook_event_name": "PostToolUse"})
        self.hook("session-end", {"session_id": sid, "hook_event_name": "SessionEnd"})

    def cli(self, *args):
        r = run_instinct(*args, env=self.env(), cwd=self.repo, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def calls(self):
        return [instinct._Call.read(d) for d, in rows(
            self.db, "SELECT data FROM events WHERE kind IN ('tool', 'tool_fail') ORDER BY id")]

    def patterns(self):
        return {p for p, in rows(self.db, "SELECT pattern FROM instincts")}


class TestProgramWords(_Home):
    def test_a_password_typed_as_a_command_never_lands_as_text(self):
        self.bash("s1", "git status", PASSWORD, f"echo ok && {PASSWORD} --now | tee x",
                  f"uv run {PASSWORD}")
        self.bash("s2", "git status", "make test")
        backup = os.path.join(self.home, "b.db")
        self.cli("backup", backup)
        for path in [self.db, backup] + glob.glob(self.db + "-*"):
            with self.subTest(path=path):
                stored = raw_bytes(path)
                self.assertTrue(stored)
                self.assertNotIn(PASSWORD.encode(), stored)
                self.assertNotIn(PASSWORD.lower().encode(), stored.lower())
        cmds = [c for call in self.calls() for c in call.cmds]
        hashed = [c for c in cmds if c.startswith(("#", "uv run #"))]
        self.assertEqual(len(hashed), 3)
        self.assertEqual(len(set(hashed)), 2)      # one word, one hash: `#h` and `uv run #h`
        self.assertRegex(hashed[0], r"^#[0-9a-f]{10}$")
        self.assertIn("make test", cmds)            # a known program is kept as it is, at once

    def test_the_hash_is_keyed_per_store(self):
        other = os.path.join(self.home, "other.db")
        self.bash("s1", PASSWORD)
        first = self.calls()[0].cmds
        self.db = other
        self.bash("s1", PASSWORD)
        self.assertNotEqual(self.calls()[0].cmds, first)

    def test_a_tool_used_in_three_sessions_is_learned_by_name_and_briefed(self):
        """`mytool` is not installed and in no list: hashed in the first session, a word from
        the second on, and the first session's steps read as it too."""
        self.cli("config", "mature_threshold", "3")
        self.bash("s1", "mytool sync --all", "git status")
        self.assertRegex(self.calls()[0].cmds[0], r"^#[0-9a-f]{10} sync$")
        for sid in ("s2", "s3"):
            self.bash(sid, "ls", "mytool sync -q")
        self.assertEqual([c.cmds for c in self.calls() if "sync" in c.cmds[0]],
                         [("mytool sync",)] * 3)
        self.assertIn("pref:command:mytool sync", self.patterns())
        self.assertEqual(rows(self.db, "SELECT confidence FROM instincts WHERE pattern = ?",
                              ("pref:command:mytool sync",)), [(3,)])
        text = self.hook("session-start", {"session_id": "s4", "hook_event_name": "SessionStart"})
        self.assertIn("mytool sync", text)

    def test_imported_sessions_learn_an_unknown_tool_by_name(self):
        src = sessions.Source(seed=3, home=self.home)
        repo = src.repo("shop")
        for _ in range(3):
            s = src.start(repo)
            s.noise(2)
            s.bash("mytool sync --force")
            s.end()
        sessions.transcripts(src, self.home)
        self.cli("config", "mature_threshold", "3")
        r = json.loads(self.cli("--json", "import-history"))
        self.assertEqual(r["imported"], 3)
        self.assertIn("pref:command:mytool sync", r["projects"][0]["learned"])
        self.assertIn("mytool sync", r["projects"][0]["briefing"])
        self.assertNotIn("#", " ".join(c for call in self.calls() for c in call.cmds))

    def test_a_call_is_hashed_the_same_way_within_a_session(self):
        """What codex_outcomes matches a rollout by: the same call gives the same record."""
        store = instinct.InstinctStore(self.db)
        self.addCleanup(store.close)
        with store._write() as conn:
            a = instinct._Call("Bash", cmds=["zorptool build"]).private(conn, "x")
            b = instinct._Call("Bash", cmds=["zorptool build"]).private(conn, "x")
            c = instinct._Call("Bash", cmds=["cargo build"]).private(conn, "x")
        self.assertEqual(a.cmds, b.cmds)
        self.assertRegex(a.cmds[0], r"^#[0-9a-f]{10} build$")
        self.assertEqual(c.cmds, ("cargo build",))


class TestRepeatedPrompts(_Home):
    def test_an_automations_fixed_prompt_gets_the_correction_context_at_most_once(self):
        src = sessions.automation_prompt(n=6, seed=2)
        prompts = [line["payload"] for line in src.lines if line["event"] == "user-prompt-submit"]
        self.assertGreater(len(prompts), 6)
        self.assertTrue(instinct._Capture.reads_like_correction(sessions.LOOP_PROMPT))
        given = [self.hook("user-prompt-submit", dict(p, cwd=self.repo)) for p in prompts]
        self.assertEqual(given.count(instinct._Capture.CORRECTION_CONTEXT), 1)
        self.assertEqual(set(given), {instinct._Capture.CORRECTION_CONTEXT, ""})
        one_off = "no, run the tests with uv run pytest instead"
        self.assertEqual(self.hook("user-prompt-submit", {"session_id": "s9", "prompt": one_off}),
                         instinct._Capture.CORRECTION_CONTEXT)
        stored = raw_bytes(self.db)
        for text in (sessions.LOOP_PROMPT, one_off, "uv run pytest instead"):
            self.assertNotIn(text.lower().encode(), stored.lower())

    def test_the_same_correction_in_another_project_is_new_there(self):
        prompt = {"session_id": "s1", "prompt": "Don't push to main, open a PR instead"}
        self.assertTrue(self.hook("user-prompt-submit", prompt))
        self.assertFalse(self.hook("user-prompt-submit", dict(prompt, session_id="s2")))
        self.repo = make_repo(os.path.join(self.home, "src", "other"))
        self.assertTrue(self.hook("user-prompt-submit", dict(prompt, session_id="s3")))


class TestOldHistory(_Home):
    def test_sessions_older_than_the_retention_are_learned_from(self):
        sessions.old_history(self.home, n=5, days=400)
        out = self.cli("import-history")
        self.assertEqual(sum("older than the event retention" in line for line in out.splitlines()),
                         1, out)
        self.assertIn("events_max_days", out)
        self.assertIn("pref:test=make test", out)
        self.assertIn("pref:test=make test", self.patterns())
        (conf, last), = rows(self.db, "SELECT confidence, last_seen FROM instincts WHERE pattern = ?",
                             ("pref:test=make test",))
        self.assertEqual(conf, 5)
        self.assertLess(last, instinct._iso(instinct.time.time() - 399 * 86400))   # its own time
        self.cli("consolidate")                     # the retention prunes their raw calls ...
        self.assertEqual(rows(self.db, "SELECT count(*) FROM events WHERE kind = 'tool'"), [(0,)])
        r = json.loads(self.cli("--json", "import-history"))
        self.assertEqual((r["imported"], r["skipped"]), (0, 5))   # ... and nothing is learned twice
        self.assertIn("pref:test=make test", self.patterns())
        self.assertEqual(rows(self.db, "SELECT confidence FROM instincts WHERE pattern = ?",
                              ("pref:test=make test",)), [(5,)])


if __name__ == "__main__":
    unittest.main()
