"""End to end with the real Claude Code, Codex, Gemini and Copilot CLIs (issues 11, 31): hooks exactly as
`instinct setup <client> --write` writes them.

Each CLI runs 6 non-interactive sessions (`claude -p`, `codex exec`) in a temp git project with
HOME = a temp dir, talking to a scripted fake model on 127.0.0.1 (tests/interop/fake_model.py:
the Anthropic Messages API, the OpenAI Responses API): the fake model asks for planned shell
calls one per turn, back to back, some failing, then answers. Over the 6 sessions: every call
stored, in call order (with its outcome, where the client tells it); every session mined after
its last call, each +1 given once; the session-start briefing reaches the model's request.

Runs only with INSTINCT_E2E=1 (CI's python3 pass); then the CLIs must be there:
INSTINCT_CLAUDE (latest), INSTINCT_CLAUDE_OLD (2.1.138), INSTINCT_CODEX (latest), or
.ci/install-interop.sh's default paths under $INSTINCT_INTEROP_DIR.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import uuid

from tests.helpers import setUpModule  # noqa: E402,F401 (3.12 placeholder guard)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "interop"))
from e2e_harness import Workspace, hook_gaps_ms  # noqa: E402
from fake_model import FINAL_TEXT, FakeModel  # noqa: E402

INTEROP_DIR = os.environ.get("INSTINCT_INTEROP_DIR") or os.path.join(
    os.path.expanduser("~"), ".cache", "instinct-interop")
OLD_CLAUDE = "2.1.138"           # the last release that ignores a hook's `args`

# The fake model's sessions: the project's test and lint commands recur in every session (with a
# failing run first in some), git inspection around them, and one-off commands. Calls follow each
# other within tens of milliseconds, which is what reorders asynchronous capture.
_RITUAL = [("uv run pytest -q", True), ("ruff check .", True), ("git status", True), ("git diff", True)]
PLANS = [
    [("git status", True), ("uv run pytest -q tests/test_broken.py", False)] + _RITUAL
    + [("ls", True)] + _RITUAL + [("git log --oneline -3", True)],
    [("git log --oneline -1", True)] + _RITUAL + [("cat README.md", True), ("ruff check broken.py", False)]
    + _RITUAL,
    [("git branch", True)] + _RITUAL + [("git rev-parse --verify release", False)] + _RITUAL + [("git status", True)],
    [("uv run pytest -q tests/test_broken.py", False), ("git show --stat HEAD", True)] + _RITUAL
    + [("wc -l app.py", True)] + _RITUAL,
    [("git status", True)] + _RITUAL + [("python3 -c 'raise SystemExit(3)'", False)] + _RITUAL
    + [("git log --oneline -2", True)],
    [("git diff --stat", True)] + _RITUAL + [("head -n 3 app.py", True)] + _RITUAL
    + [("git show --stat HEAD", True)],
]
# A 7th session, once the project's commands are learned (issue 20): `pytest` where the project
# runs `uv run pytest` (a hint before the call), the project's own command (none), a failure of
# it (a memory about the command after the failure).
HINTED = [("pytest -q", True), ("uv run pytest -q", True),
          ("uv run pytest -q tests/test_broken.py", False), ("git status", True)]
HINT_MEMORY = "`uv run pytest` fails on tests/test_broken.py: it is broken on purpose"


def _binary(env_var, *default):
    path = os.environ.get(env_var) or os.path.join(INTEROP_DIR, *default)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def _version(binary):
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60,
                         env={"PATH": os.environ.get("PATH", ""), "HOME": tempfile.gettempdir(),
                              "DISABLE_AUTOUPDATER": "1"}).stdout.split()
    return next((w for w in out if w[:1].isdigit()), "?")


class _EndToEnd(unittest.TestCase):
    maxDiff = None
    names = [f"s{i + 1}" for i in range(len(PLANS))]

    def require(self, what, env_var, *default):
        if os.environ.get("INSTINCT_E2E") != "1":
            self.skipTest("end-to-end client tests run with INSTINCT_E2E=1 (CI's python3 pass)")
        path = _binary(env_var, *default)
        if not path:
            self.fail(f"{what} not found (set {env_var} or run .ci/install-interop.sh to fill {INTEROP_DIR})")
        return path

    def workspace(self):
        tmp = tempfile.TemporaryDirectory(prefix="instinct-e2e-")
        self.addCleanup(tmp.cleanup)
        return Workspace(tmp.name)

    def fake(self):
        plans = {n: [c for c, _ in plan] for n, plan in zip(self.names, PLANS)}
        fake = FakeModel(dict(plans, hinted=[c for c, _ in HINTED])).start()
        self.addCleanup(fake.stop)
        return fake

    def check_ran(self, fake, label, name, plan):
        """The client ran every planned call of the session, with the planned outcome."""
        self.assertEqual(fake.tool_results(name), {i: not ok for i, (_, ok) in enumerate(plan)},
                         f"{label} {name}: the client's tool results (step: is_error)")

    def check_store(self, ws, fake, label, ids, briefings, client="claude-code", kinds=True):
        """0 calls lost or out of order; every session mined after its last call, each +1 once;
        the briefing in the model's request whenever there was one, and after 5 sessions."""
        self.assertTrue(os.path.exists(ws.db), f"{label}: the hooks stored nothing (no database at {ws.db})")
        for name, sid, plan in zip(self.names, ids, PLANS):
            per_call = ws.expected_calls(plan, sid, client)
            for (cmd, ok), rows in zip(plan, per_call):
                if (cmd, ok) in _RITUAL:      # the project's own commands are always kept
                    self.assertTrue(rows, f"capture keeps nothing of {cmd!r}")
                if kinds:
                    self.assertEqual({k for k, _ in rows}, {"tool" if ok else "tool_fail"} if rows else set(),
                                     f"the stored outcome of {cmd!r}")
            want, got = [r for rows in per_call for r in rows], ws.stored_calls(sid)
            if not kinds:                # the client's payload tells no outcome: compare the calls only
                want, got = [d for _, d in want], [d for _, d in got]
            self.assertEqual(got, want, f"{label} {name}: stored calls differ from the calls made, in order")

        mined, last = ws.mined_sessions(), ws.last_call_ids()
        for name, sid in zip(self.names, ids):
            self.assertIn(sid, mined, f"{label}: session {name} was never mined")
            self.assertEqual(mined[sid], last[sid], f"{label}: {name} mined before its last call")
        obs = ws.mining_observations()
        self.assertEqual(len(obs), len(set(obs)), f"{label}: a session counted twice for a pattern: {obs}")
        per_pattern = {}
        for sid, pat in obs:
            per_pattern.setdefault(pat, set()).add(sid)
        self.assertTrue(any(len(s) == len(ids) for s in per_pattern.values()),
                        f"{label}: no habit counted in all {len(ids)} sessions: {sorted(per_pattern)}")

        self.assertTrue(briefings[self.names[-1]], f"{label}: no briefing after 5 sessions of the same habits")
        for name in self.names:
            if briefings[name]:
                text = fake.request_text(fake.agent_requests(name)[0])
                for line in briefings[name].splitlines():
                    self.assertIn(line, text, f"{label} {name}: briefing line missing from the model's request")


    def check_hints(self, fake, label, before):
        """The hints of the `hinted` session reached the model's next request: before `pytest`
        (the project runs `uv run pytest`; where the client's pre-tool answer carries context),
        none after the call that agrees, the memory after the failure of `uv run pytest`."""
        self.check_ran(fake, label, "hinted", HINTED)
        texts = [fake.request_text(r) for r in fake.agent_requests("hinted")]
        self.assertGreaterEqual(len(texts), len(HINTED) + 1, f"{label}: requests of the hinted session")
        hints = [t.count("instinct: ") for t in texts]
        self.assertEqual(hints[:4], [0, 1, 1, 2] if before else [0, 0, 0, 1],
                         f"{label}: hints per request")
        if before:
            self.assertRegex(texts[1], r"Tests here: `uv run pytest` \(\d+ sessions\), not `pytest`\.")
        self.assertIn("Memory about `uv run pytest`: Broken test file", texts[3])


class ClaudeCodeEndToEnd(_EndToEnd):
    def test_latest(self):
        self.six_sessions(self.require("Claude Code CLI", "INSTINCT_CLAUDE", "claude-latest", "claude"), None)

    def test_2_1_138(self):
        self.six_sessions(self.require("Claude Code CLI " + OLD_CLAUDE, "INSTINCT_CLAUDE_OLD",
                                       "claude-" + OLD_CLAUDE, "claude"), OLD_CLAUDE)

    def six_sessions(self, claude, want_version):
        version = _version(claude)
        if want_version:
            self.assertEqual(version, want_version)
        label = f"claude {version}"
        ws = self.workspace()
        ws.setup_claude()
        ws.instinct("config", "holdout_percent", "0")     # every briefing item and hint shown
        fake = self.fake()
        ids = [str(uuid.UUID(int=0xE2E0 + i, version=4)) for i in range(len(PLANS))]
        briefings, gaps = {}, []
        for name, sid, plan in zip(self.names, ids, PLANS):
            briefings[name] = ws.briefing_now()
            p, debug = ws.run_claude(claude, fake, name, sid)
            self.assertEqual(p.returncode, 0, f"{label} {name}: {p.stderr[-2000:]}")
            self.assertIn(FINAL_TEXT, p.stdout, f"{label} {name}")
            gaps += hook_gaps_ms(debug)
            self.check_ran(fake, label, name, plan)
        stray = [r["path"] for r in fake.requests if not r["agent"]]
        sys.stderr.write(f"\n  {label}: {len(fake.requests)} model requests ({len(stray)} outside the plan),"
                         f" synchronous hook gap after a Bash call: {_stats(gaps)}\n")
        self.check_store(ws, fake, label, ids, briefings)
        if want_version is None:
            self.hinted_session(ws, fake, claude, label)

    def hinted_session(self, ws, fake, claude, label):
        """The hints reach the model's next request: before `pytest` (the project runs `uv run
        pytest`), after the failure of `uv run pytest`; nothing after the call that agrees."""
        ws.instinct("remember", "project", "Broken test file", HINT_MEMORY)
        p, _ = ws.run_claude(claude, fake, "hinted", str(uuid.UUID(int=0xE2E9, version=4)))
        self.assertEqual(p.returncode, 0, f"{label} hinted: {p.stderr[-2000:]}")
        self.check_hints(fake, label, before=True)


class CodexEndToEnd(_EndToEnd):
    """Codex CLI (`codex exec`) against the fake Responses API, hooks as `setup codex --write`
    writes them. Codex silently runs no hook the user has not reviewed: the test trusts them once
    the way the review does (stored hashes, through Codex's app-server), and they stay trusted for
    every session. Its PostToolUse payload carries no exit code (0.171: `tool_response` is the
    command's output alone), so only the calls and their order are compared, not their outcome;
    the hint after a failure reads the exit code from the rollout (issue 31)."""

    def test_latest(self):
        codex = self.require("Codex CLI", "INSTINCT_CODEX", "codex-latest", "codex")
        label = f"codex {_version(codex)}"
        ws = self.workspace()
        hooks = ws.setup_codex()["hooks"]
        ws.instinct("config", "holdout_percent", "0")     # random thread ids: none held back
        trust = ws.trust_codex_hooks(codex)
        self.assertEqual(len(trust), sum(len(g["hooks"]) for groups in hooks.values() for g in groups),
                         f"{label}: Codex does not list every hook setup wrote: {trust}")
        self.assertEqual(set(trust.values()), {"trusted"}, f"{label}: {trust}")
        fake = self.fake()
        briefings, ids = {}, []
        for name, plan in zip(self.names, PLANS):
            briefings[name] = ws.briefing_now()
            p = ws.run_codex(codex, fake, name)
            self.assertEqual(p.returncode, 0, f"{label} {name}: {p.stderr[-2000:]}")
            events = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
            ids += [e["thread_id"] for e in events if e.get("type") == "thread.started"][:1]
            self.assertEqual(len(ids), self.names.index(name) + 1, f"{label} {name}: no thread id in {p.stdout}")
            self.assertIn(FINAL_TEXT, p.stdout, f"{label} {name}")
            self.check_ran(fake, label, name, plan)
        self.check_store(ws, fake, label, ids, briefings, client="codex", kinds=False)
        # issue 31: the hint after a failure too (the exit code read from the rollout)
        ws.instinct("remember", "project", "Broken test file", HINT_MEMORY)
        p = ws.run_codex(codex, fake, "hinted")
        self.assertEqual(p.returncode, 0, f"{label} hinted: {p.stderr[-2000:]}")
        self.check_hints(fake, label, before=True)


class GeminiEndToEnd(_EndToEnd):
    """Gemini CLI (`gemini -p`, API-key login) against the fake Gemini API on 127.0.0.1
    (GOOGLE_GEMINI_BASE_URL), hooks as `setup gemini-cli --write` writes them (issue 31). Its
    AfterTool payload carries the shell's "Exit Code: N", so outcomes are compared too. Gemini's
    BeforeTool answer carries no context: the hint it gets is the one after a failure."""

    def test_latest(self):
        gemini = self.require("Gemini CLI", "INSTINCT_GEMINI", "gemini-latest", "gemini")
        label = f"gemini {_version(gemini)}"
        ws = self.workspace()
        hooks = ws.setup_gemini()["hooks"]
        self.assertEqual(sorted(hooks), ["AfterTool", "SessionEnd", "SessionStart"])
        ws.instinct("config", "holdout_percent", "0")
        fake = self.fake()
        briefings, ids = {}, []
        for name, plan in zip(self.names, PLANS):
            briefings[name] = ws.briefing_now()
            p = ws.run_gemini(gemini, fake, name)
            self.assertEqual(p.returncode, 0, f"{label} {name}: {p.stderr[-2000:]}")
            out = json.loads(p.stdout[p.stdout.index("{"):])
            ids.append(out["session_id"])
            self.assertIn(FINAL_TEXT, out.get("response", ""), f"{label} {name}")
            self.check_ran(fake, label, name, plan)
        self.check_store(ws, fake, label, ids, briefings, client="gemini-cli")
        ws.instinct("remember", "project", "Broken test file", HINT_MEMORY)
        p = ws.run_gemini(gemini, fake, "hinted")
        self.assertEqual(p.returncode, 0, f"{label} hinted: {p.stderr[-2000:]}")
        self.check_hints(fake, label, before=False)     # BeforeTool carries no context


class CopilotEndToEnd(_EndToEnd):
    """Copilot CLI (`copilot -p`) in its own-provider mode (COPILOT_PROVIDER_BASE_URL, offline:
    no GitHub account) against the fake Anthropic API, hooks as `setup copilot-cli --write`
    writes them (~/.copilot/hooks/instinct.json). A failed shell call comes as postToolUse with
    '... exit code N>' at the end of its result (1.0.102 fires no postToolUseFailure for it)."""

    def test_latest(self):
        copilot = self.require("Copilot CLI", "INSTINCT_COPILOT", "copilot-latest", "copilot")
        label = f"copilot {_version(copilot)}"
        ws = self.workspace()
        ws.instinct("setup", "copilot-cli", "--write")
        ws.instinct("config", "holdout_percent", "0")
        fake = self.fake()
        briefings, ids = {}, []
        for name, plan in zip(self.names, PLANS):
            briefings[name] = ws.briefing_now()
            p, sid = ws.run_copilot(copilot, fake, name)
            self.assertEqual(p.returncode, 0, f"{label} {name}: {p.stderr[-2000:]}")
            self.assertTrue(sid, f"{label} {name}: no session id in {p.stdout[-500:]}")
            ids.append(sid)
            self.assertIn(FINAL_TEXT, p.stdout, f"{label} {name}")
            self.check_ran(fake, label, name, plan)
        self.check_store(ws, fake, label, ids, briefings, client="copilot-cli")
        ws.instinct("remember", "project", "Broken test file", HINT_MEMORY)
        p, _ = ws.run_copilot(copilot, fake, "hinted")
        self.assertEqual(p.returncode, 0, f"{label} hinted: {p.stderr[-2000:]}")
        self.check_hints(fake, label, before=True)


def _stats(ms):
    if not ms:
        return "n/a (not in this client's debug log)"
    s = sorted(ms)
    return f"median {s[len(s) // 2]} ms, p90 {s[int(len(s) * 0.9)]} ms, max {s[-1]} ms over {len(s)} calls"


if __name__ == "__main__":
    unittest.main()
