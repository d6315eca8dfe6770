"""Tests for `instinct import-history` (issue 11, item 5): recorded sessions in the real Claude
Code transcript format and Codex rollout format, replayed through the real CLI; Ctrl-C during an
import and folder imports that skip symlinks out of the folder (issue 21).
Run: python3 -m unittest -v tests.test_history
"""
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import unittest
import uuid
from unittest import mock

import instinct
from tests.helpers import (DAY, INSTINCT_PY, Clock, ProjectCase, child_env, cli_process, label,
                           make_repo, rows, setUpModule, call_summary, temp_dir, write)


# --- planted secrets: none of these bytes may ever reach the store or anything made from it ----
SECRETS = {
    "quoted": "S3cr3t;xQz9Lm|WvTr8",
    "heredoc": "HeredocPassw0rdQv7",
    "url": "urlS3cretPassK9",
    "dash_p": "DashPw0rdQ7zz",
    "userpass": "PgPassw0rdZt4",
    "pem": "MIIEpAIBAAKCAQEA7pemBODYqzLx2Vt9",
    "letters": "correcthorsebatterystaple",
    "env": "wJalrXUtnFEMIK7MDENGbPxRfiCYzz",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.bearerBodyQ.sigZ",
    "header_token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "output": "OutputOnlyS3cretVv",
    "prompt": "PromptOnlyS3cretWw",
}
SECRET_COMMANDS = [
    f"mysql -u root -p'{SECRETS['quoted']}' -e 'select count(*) from users'",
    f"cat > .env <<'EOF'\nDB_PASSWORD={SECRETS['heredoc']}\nDEBUG=1\nEOF",
    f"git clone https://deploy:{SECRETS['url']}@github.com/acme/shop.git /tmp/shop",
    f"mysql -uroot -p{SECRETS['dash_p']} shop < dump.sql",
    f"psql postgres://shop:{SECRETS['userpass']}@localhost:5432/shop -c 'select 1'",
    "cat > deploy_key <<'EOF'\n-----BEGIN RSA PRIVATE KEY-----\n"
    f"{SECRETS['pem']}\nc2VjcmV0a2V5bWF0ZXJpYWxsaW5lMg==\n-----END RSA PRIVATE KEY-----\nEOF",
    f"cat <<EOF | ssh-add -\n{SECRETS['letters']}\nEOF",
    f"sshpass -p {SECRETS['letters']} ssh deploy@staging uptime",
    f"AWS_SECRET_ACCESS_KEY={SECRETS['env']} aws s3 ls s3://shop-backups",
    f"curl -s -H \"Authorization: Bearer {SECRETS['bearer']}\" https://api.example.com/v1/me",
    f"curl -s -H 'Authorization: token {SECRETS['header_token']}' https://api.github.com/user",
]

TEST_CMDS = ["uv run pytest -q", "uv run pytest -q tests/test_api.py", "uv run pytest -q -k checkout",
             "uv run pytest -q -x"]
ROUTINE = ["ruff format .", "ruff check .", "git add -A", "git commit -m {msg}", "git push"]
NOISE_BASH = ["ls -la", "ls src/shop", "cat README.md", "cat pyproject.toml", "head -n 40 src/shop/api.py",
              "grep -rn 'def checkout' src", "git status", "git log --oneline -5", "git diff --stat",
              "find . -name '*.py' -newer setup.cfg", "wc -l src/shop/*.py", "tree -L 2 src"]
NOISE_PROGRAMS = ("ls", "cat", "head", "grep", "git status", "git log", "git diff", "find", "wc", "tree",
                  "mysql", "psql", "curl", "sshpass", "aws", "WebFetch", "WebSearch", "sidechain", "subagent")
FILES = ["src/shop/api.py", "src/shop/cart.py", "src/shop/models.py", "tests/test_api.py",
         "tests/test_cart.py", "README.md", "docs/usage.md", "pyproject.toml"]


class ClaudeTranscript:
    """One session in the real Claude Code transcript format (JSONL): summary and
    file-history-snapshot lines, user/assistant lines with uuid/parentUuid, sessionId, cwd,
    timestamp, version, gitBranch; `tool_use` blocks with ids answered by `tool_result`
    blocks (is_error on failure) with the user line's toolUseResult."""

    def __init__(self, rng, session, cwd, start):
        self.rng, self.session, self.cwd, self.t = rng, session, cwd, start
        self.lines, self.parent, self.calls = [], None, []

    def _ts(self):
        self.t += self.rng.uniform(0.4, 9.0)
        return instinct._iso(self.t).replace("+00:00", "Z")

    def _line(self, kind, message, sidechain=False, **extra):
        u = str(uuid.UUID(int=self.rng.getrandbits(128)))
        line = {"parentUuid": self.parent, "isSidechain": sidechain, "userType": "external",
                "cwd": self.cwd, "sessionId": self.session, "version": "2.1.138", "gitBranch": "main",
                "type": kind, "message": message, "uuid": u, "timestamp": self._ts(), **extra}
        self.lines.append(line)
        if not sidechain:
            self.parent = u
        return line

    def summary(self, text):
        self.lines.insert(0, {"type": "summary", "summary": text,
                              "leafUuid": str(uuid.UUID(int=self.rng.getrandbits(128)))})

    def snapshot(self):
        self.lines.append({"type": "file-history-snapshot", "messageId": str(uuid.uuid4()),
                           "snapshot": {"trackedFileBackups": {}, "timestamp": self._ts()},
                           "isSnapshotUpdate": False})

    def prompt(self, text):
        self._line("user", {"role": "user", "content": text})

    def say(self, text):
        self._line("assistant", {"id": f"msg_{self.rng.getrandbits(48):x}", "type": "message",
                                 "role": "assistant", "model": "claude-sonnet-4-5",
                                 "content": [{"type": "text", "text": text}], "stop_reason": None,
                                 "usage": {"input_tokens": 12, "output_tokens": 40}},
                   requestId=f"req_{self.rng.getrandbits(48):x}")

    def tool(self, name, tinput, output="", error=None, sidechain=False, no_hook=None):
        """A tool_use and its tool_result. `error` (text) -> is_error; `no_hook` -> a rejected
        or invalid call (is_error, but Claude Code fires no hook for it)."""
        tid = f"toolu_01{self.rng.getrandbits(80):020x}"
        blocks = []
        if self.rng.random() < 0.3:
            blocks.append({"type": "text", "text": "Let me check that."})
        blocks.append({"type": "tool_use", "id": tid, "name": name, "input": tinput})
        self._line("assistant", {"id": f"msg_{self.rng.getrandbits(48):x}", "type": "message",
                                 "role": "assistant", "model": "claude-sonnet-4-5", "content": blocks,
                                 "stop_reason": "tool_use", "usage": {"input_tokens": 9, "output_tokens": 30}},
                   sidechain=sidechain, requestId=f"req_{self.rng.getrandbits(48):x}")
        failed = error is not None or no_hook is not None
        result = {"tool_use_id": tid, "type": "tool_result", "content": no_hook or error or output}
        if failed:
            result["is_error"] = True
        extra = {}
        if name == "Bash" and not failed:
            extra["toolUseResult"] = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        elif name in ("Read", "Edit", "Write") and not failed:
            extra["toolUseResult"] = {"filePath": tinput.get("file_path", "")}
        elif failed:
            extra["toolUseResult"] = "Error: " + (no_hook or error)
        self._line("user", {"role": "user", "content": [result]}, sidechain=sidechain, **extra)
        if not sidechain and no_hook is None:
            self.calls.append((name, tinput, error is not None))

    def bash(self, command, output="ok", error=None, **kw):
        self.tool("Bash", {"command": command, "description": "Run a command"}, output, error, **kw)

    def text(self, truncate_last=False):
        out = "\n".join(json.dumps(line) for line in self.lines) + "\n"
        return out[:-40] if truncate_last else out


def make_history(seed=1234, n=10, test_skip=(3, 7), routine_skip=(2, 6), cwd="/tmp/shop", start=None,
                 spacing=DAY):
    """n deterministic sessions of one project -> list of (session_id, transcript, plan), where
    plan says whether the session holds the test command / the pre-commit routine."""
    rng = random.Random(seed)
    start = start if start is not None else 1_790_000_000.0
    sessions = []
    for i in range(1, n + 1):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        tr = ClaudeTranscript(rng, sid, cwd, start + (i - 1) * spacing + rng.uniform(0, spacing / 24))
        has_test, has_routine = i not in test_skip, i not in routine_skip
        tr.summary(f"Shop work, day {i}")
        tr.snapshot()
        tr.prompt(f"Please look at issue #{100 + i} in the checkout flow. {SECRETS['prompt']}")
        tr.say("I'll start by looking around.")

        def noise(k):
            for _ in range(k):
                r = rng.random()
                if r < 0.45:
                    tr.bash(rng.choice(NOISE_BASH), output="src tests README.md")
                elif r < 0.6:
                    tr.tool("Read", {"file_path": f"{cwd}/{rng.choice(FILES)}"}, "   1\u2192import os")
                elif r < 0.68:
                    tr.tool("Grep", {"pattern": "checkout", "path": f"{cwd}/src"}, "src/shop/api.py")
                elif r < 0.74:
                    tr.tool("Glob", {"pattern": "**/*.py"}, "src/shop/api.py")
                elif r < 0.8:
                    tr.tool("WebFetch", {"url": "https://docs.python.org/3/library/json.html",
                                         "prompt": "What does json.dumps do with sort_keys?"}, "It sorts.")
                elif r < 0.85:
                    tr.tool("TodoWrite", {"todos": [{"content": "fix checkout", "status": "pending"}]}, "ok")
                elif r < 0.93:
                    f = rng.choice(FILES)
                    tr.tool("Edit", {"file_path": f"{cwd}/{f}", "old_string": "a", "new_string": "b"}, "ok")
                else:
                    tr.bash(rng.choice(SECRET_COMMANDS), output=f"done {SECRETS['output']}")

        noise(rng.randint(3, 7))
        for _ in range(rng.randint(1, 3)):                       # work items
            for _ in range(rng.randint(1, 3)):
                f = rng.choice(FILES[:5])
                tr.tool("Read", {"file_path": f"{cwd}/{f}"}, "   1\u2192import os")
                tr.tool("Edit", {"file_path": f"{cwd}/{f}", "old_string": "x = 1", "new_string": "x = 2"},
                        "The file has been updated.")
            noise(rng.randint(0, 3))
            if has_test:
                cmd = rng.choice(TEST_CMDS)
                if rng.random() < 0.5:                           # fail -> fix -> pass
                    tr.bash(cmd, error="Exit code 1\nFAILED tests/test_api.py::test_checkout - assert 2 == 3")
                    tr.tool("Edit", {"file_path": f"{cwd}/src/shop/api.py", "old_string": "2",
                                     "new_string": "3"}, "The file has been updated.")
                tr.bash(cmd, output="42 passed in 0.81s")
        if i == 4:                                               # a subagent inside the session
            tr.tool("Task", {"description": "Survey", "prompt": "Find slow tests",
                             "subagent_type": "general-purpose"}, "done", sidechain=False)
            tr.lines.pop()                                       # the result comes after its side-chain
            tr.lines.pop()
            task_id = f"toolu_01{rng.getrandbits(80):020x}"
            tr._line("assistant", {"role": "assistant", "content": [
                {"type": "tool_use", "id": task_id, "name": "Task", "input": {"prompt": "Find slow tests"}}]})
            for cmd in ("make sidechain-only", "uv run pytest -q --durations=5", "make sidechain-only"):
                tr.bash(cmd, output="ok", sidechain=True)
            tr._line("user", {"role": "user", "content": [{"tool_use_id": task_id, "type": "tool_result",
                                                           "content": "Three slow tests."}]})
        if rng.random() < 0.5:                                   # a call the user rejected
            tr.bash("rm -rf build dist", no_hook="The user doesn't want to proceed with this tool use. "
                                                  "The tool use was rejected.")
        if i == 5:
            tr.tool("Write", {"file_path": f"{cwd}/x.py"},
                    no_hook="<tool_use_error>File has not been read yet.</tool_use_error>")
        if has_routine:
            for step in ROUTINE:
                tr.bash(step.format(msg=f"'Fix checkout issue #{100 + i}'"), output="ok")
        tr.say("Done: the checkout flow is fixed and pushed.")
        sessions.append((sid, tr, {"test": has_test, "routine": has_routine}))
    return sessions


def kept_calls(tr):
    """The calls of a transcript that capture keeps (it skips client plumbing such as TodoWrite)."""
    return [c for c in tr.calls if call_summary({"tool_name": c[0], "tool_input": c[1]})[0]]


def claude_dir_name(cwd):
    return "".join(c if c.isalnum() else "-" for c in cwd)


def codex_rollout(session, cwd, start, subagent=False):
    """A small Codex rollout (session_meta, turn_context, response_item, event_msg lines)."""
    t = [start]

    def ts():
        t[0] += 1.5
        return instinct._iso(t[0]).replace("+00:00", "Z")
    src = {"subagent": {"thread_spawn": {"parent_thread_id": "p"}}} if subagent else "cli"
    lines = [{"timestamp": ts(), "type": "session_meta", "payload": {
        "id": session, "timestamp": ts(), "cwd": cwd, "originator": "codex_cli_rs",
        "cli_version": "0.171.0", "source": src, "git": {"branch": "main"}}},
        {"timestamp": ts(), "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": f"fix the tests {SECRETS['prompt']}"}]}},
        {"timestamp": ts(), "type": "turn_context", "payload": {
            "cwd": cwd, "approval_policy": "on-request", "model": "gpt-5-codex", "turn_id": "turn-1"}}]

    def call(item, output_item, end=None):
        lines.append({"timestamp": ts(), "type": "response_item", "payload": item})
        if end is not None:
            lines.append({"timestamp": ts(), "type": "event_msg", "payload": end})
        lines.append({"timestamp": ts(), "type": "response_item", "payload": output_item})
    # 1: the classic shell tool, JSON output with metadata.exit_code (a failure)
    call({"type": "function_call", "name": "shell", "call_id": "c1",
          "arguments": json.dumps({"command": ["bash", "-lc", "cargo test --quiet"], "workdir": cwd})},
         {"type": "function_call_output", "call_id": "c1", "output": json.dumps(
             {"output": "test result: FAILED", "metadata": {"exit_code": 101, "duration_seconds": 1.2}})})
    # 2: apply_patch as a freeform custom tool
    call({"type": "custom_tool_call", "status": "completed", "call_id": "c2", "name": "apply_patch",
          "input": "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** End Patch"},
         {"type": "custom_tool_call_output", "call_id": "c2", "output": json.dumps(
             {"output": "Success. Updated the following files:\nM src/lib.rs\n", "metadata": {"exit_code": 0}})})
    # 3: unified exec: exec_command, text output, exit code also in exec_command_end
    call({"type": "function_call", "name": "exec_command", "call_id": "c3",
          "arguments": json.dumps({"cmd": "cargo test --quiet", "workdir": cwd})},
         {"type": "function_call_output", "call_id": "c3",
          "output": "Chunk ID: 1\nWall time: 1.1 seconds\nProcess exited with code 0\nOutput:\nok"},
         end={"type": "exec_command_end", "call_id": "c3", "exit_code": 0})
    # 4: shell_command, text output 'Exit code: N' (a failure), secret in the command
    call({"type": "function_call", "name": "shell_command", "call_id": "c4",
          "arguments": json.dumps({"command": f"mysql -p'{SECRETS['quoted']}' -e 'select 1'"})},
         {"type": "function_call_output", "call_id": "c4",
          "output": f"Exit code: 2\nWall time: 0.2 seconds\nOutput:\n{SECRETS['output']}"})
    # 5: local_shell_call, output without an exit code (success)
    call({"type": "local_shell_call", "call_id": "c5", "status": "completed",
          "action": {"type": "exec", "command": ["git", "status", "--short"], "working_directory": cwd}},
         {"type": "function_call_output", "call_id": "c5", "output": "M src/lib.rs"})
    # 6: an MCP tool; 7: update_plan (Codex runs no hook for it)
    call({"type": "function_call", "name": "mcp__github__get_issue", "call_id": "c6",
          "arguments": json.dumps({"number": 7})},
         {"type": "function_call_output", "call_id": "c6", "output": {"content": "issue", "success": True}})
    call({"type": "function_call", "name": "update_plan", "call_id": "c7", "arguments": "{\"plan\": []}"},
         {"type": "function_call_output", "call_id": "c7", "output": "Plan updated"})
    # 8: git commit, exit code only in the exec_command_end event (non-zero)
    call({"type": "function_call", "name": "exec_command", "call_id": "c8",
          "arguments": json.dumps({"cmd": "git commit -m 'wip'"})},
         {"type": "function_call_output", "call_id": "c8", "output": "nothing to commit"},
         end={"type": "exec_command_end", "call_id": "c8", "exit_code": 1})
    text = "\n".join(json.dumps(x) for x in lines) + "\n"
    return text + '{"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payl\n'


class _Home(unittest.TestCase):
    """A temp HOME with ~/.claude/projects and ~/.codex/sessions, a project repo, a db."""

    def setUp(self):
        self.home = temp_dir(self)
        self.repo = make_repo(os.path.join(self.home, "work", "shop"))
        self.db = os.path.join(self.home, "store.db")
        self.projdir = os.path.join(self.home, ".claude", "projects", claude_dir_name(self.repo))
        os.makedirs(self.projdir)
        self.now = 1_790_000_000.0 + 30 * DAY

    def cli_process(self, *args, check=True, env=None):
        r = cli_process(*args, env=child_env(self.home, self.db, **(env or {})), cwd=self.repo,
                        timeout=300)
        if check:
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("Traceback", r.stderr)
        return r

    def import_json(self, *args, **kw):
        r = self.cli_process("import-history", "--json", *args, **kw)
        return json.loads(r.stdout)

    def write_session(self, sid, tr, truncate=False):
        """The transcript file; `truncate` cuts it inside its last tool_result line (a crash)."""
        path = os.path.join(self.projdir, sid + ".jsonl")
        text = tr.text()
        if truncate:
            cut = text.rindex('"tool_result"')
            text = text[:cut]
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def stored(self):
        conn = sqlite3.connect(self.db)
        try:
            return [(k, label(d), *rest) for k, d, *rest in conn.execute(
                "SELECT kind, data, session, source, ts, pattern FROM events"
                " WHERE kind IN ('tool', 'tool_fail') ORDER BY id")]
        finally:
            conn.close()

    def history(self, **kw):
        return make_history(cwd=self.repo, **kw)


class TestClaudeTranscripts(_Home):
    def test_each_call_is_the_live_hook_payload_in_order_with_its_time(self):
        (sid, tr, _), = self.history(n=1)
        path = self.write_session(sid, tr)
        stats = {"bad_lines": 0, "sidechain_calls": 0, "copied_calls": 0, "no_hook": 0}
        session, calls = instinct._Transcripts.claude_session(path, stats)
        self.assertEqual(session, sid)
        self.assertEqual([(p["tool_name"], p["tool_input"], f) for p, f, _ in calls], tr.calls)
        for payload, failed, ts in calls:
            self.assertEqual(payload["session_id"], sid)
            self.assertEqual(payload["cwd"], self.repo)
            self.assertEqual(payload["hook_event_name"], "PostToolUseFailure" if failed else "PostToolUse")
            self.assertTrue(payload["tool_use_id"].startswith("toolu_01"))
            self.assertIsInstance(ts, float)
        self.assertEqual([ts for _, _, ts in calls], sorted(ts for _, _, ts in calls))
        self.assertEqual(stats["bad_lines"], 0)

    def test_import_stores_shapes_with_call_times_then_mines(self):
        (sid, tr, _), = self.history(n=1)
        self.write_session(sid, tr)
        r = self.import_json()
        self.assertEqual((r["sessions"], r["imported"], r["skipped"]), (1, 1, 0))
        kept = kept_calls(tr)
        self.assertLess(len(kept), len(tr.calls))                 # TodoWrite is client plumbing
        self.assertEqual(r["tool_calls"], len(kept))
        self.assertEqual(r["failed_calls"], sum(1 for c in kept if c[2]))
        rows = self.stored()
        self.assertEqual(len(rows), len(kept))
        self.assertEqual([k == "tool_fail" for k, *_ in rows], [c[2] for c in kept])
        self.assertTrue(all(s == sid and src == "import:claude-code" for _, _, s, src, _, _ in rows))
        times = [ts for *_, ts, _ in rows]
        self.assertEqual(times, sorted(times))
        self.assertLess(times[0], instinct._iso(tr.t + 1))      # the calls' own times, not now
        self.assertGreater(times[0], instinct._iso(1_790_000_000.0 - 1))
        self.assertEqual([d.split("(")[0] for _, d, *_ in rows], [name for name, _, _ in kept])
        conn = sqlite3.connect(self.db)
        try:
            mined = conn.execute("SELECT count(*) FROM mined_sessions WHERE session = ?", (sid,)).fetchone()[0]
        finally:
            conn.close()
        self.assertEqual(mined, 1)
        proj = r["projects"][0]
        self.assertEqual((proj["cwd"], proj["sessions"], proj["tool_calls"]), (self.repo, 1, len(kept)))
        self.assertEqual(proj["project"], instinct.project_fingerprint(self.repo))

    def test_rerun_and_live_captured_sessions_are_skipped(self):
        hist = self.history(n=3)
        for sid, tr, _ in hist[:2]:
            self.write_session(sid, tr)
        first = self.import_json()
        self.assertEqual((first["imported"], first["skipped"]), (2, 0))
        before = self.stored()
        conn = sqlite3.connect(self.db)
        snap = lambda: conn.execute("SELECT pattern, confidence, promoted FROM instincts ORDER BY 1").fetchall()  # noqa
        patterns = snap()
        again = self.import_json()
        self.assertEqual((again["sessions"], again["imported"], again["skipped"], again["tool_calls"]),
                         (2, 0, 2, 0))
        self.assertEqual(self.stored(), before)
        self.assertEqual(snap(), patterns)
        # a session the hooks already captured live is left alone too
        sid3, tr3, _ = hist[2]
        payload = {"session_id": sid3, "cwd": self.repo, "hook_event_name": "PostToolUse",
                   "tool_name": "Bash", "tool_input": {"command": "make live"}, "tool_response": {}}
        h = cli_process("hook", "post-tool-use", input=json.dumps(payload), env=child_env(db=self.db))
        self.assertEqual(h.returncode, 0, h.stderr)
        self.write_session(sid3, tr3)
        third = self.import_json()
        self.assertEqual((third["imported"], third["skipped"]), (0, 3))
        self.assertEqual([d for _, d, s, *_ in self.stored() if s == sid3], ["Bash(make live)"])
        conn.close()

    def test_sidechains_subagent_files_rejections_and_corrupt_lines(self):
        hist = self.history(n=5)
        for k, (sid, tr, _) in enumerate(hist):
            self.write_session(sid, tr, truncate=(k == 2))
        sid4 = hist[3][0]
        # subagent transcripts: the newer <session>/subagents/agent-*.jsonl and older agent-*.jsonl
        sub = ClaudeTranscript(random.Random(5), sid4, self.repo, 1_790_000_000.0)
        for _ in range(6):
            sub.bash("make subagent-only", sidechain=True)
        os.makedirs(os.path.join(self.projdir, sid4, "subagents"))
        for p in (os.path.join(self.projdir, sid4, "subagents", "agent-a1b2.jsonl"),
                  os.path.join(self.projdir, "agent-c3d4.jsonl")):
            with open(p, "w") as f:
                f.write(sub.text())
        with open(os.path.join(self.projdir, hist[0][0] + ".jsonl"), "ab") as f:
            f.write(b'\xff\xfe"tool_use" not json\n["tool_use"]\n' + b"[" * 100000 + b'"tool_use"\n'
                    + b'{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu\n')
        r = self.import_json()
        self.assertEqual(r["imported"], 5)
        self.assertGreaterEqual(r["bad_lines"], 4)
        self.assertEqual(r["sidechain_calls"], 3)
        data = " ".join(d for _, d, *_ in self.stored())
        self.assertNotIn("sidechain", data)
        self.assertNotIn("subagent", data)
        self.assertNotIn("rm", data.replace("(", " ").replace(")", " ").split())   # rejected: no hook
        self.assertNotIn("Write", [d.split("(")[0] for _, d, *_ in self.stored()])   # invalid: no hook
        expected = sum(len(kept_calls(tr)) for _, tr, _ in hist)
        self.assertEqual(r["tool_calls"], expected - 1)            # only the truncated line's call

    def test_an_oversized_line_is_skipped_and_counted(self):
        (sid, tr, _), = self.history(n=1)
        path = self.write_session(sid, tr)
        size = max(len(json.dumps(line)) for line in tr.lines)
        old, instinct._Transcripts.MAX_LINE = instinct._Transcripts.MAX_LINE, size - 1
        self.addCleanup(setattr, instinct._Transcripts, "MAX_LINE", old)
        stats = {"bad_lines": 0, "sidechain_calls": 0, "copied_calls": 0, "no_hook": 0}
        _, calls = instinct._Transcripts.claude_session(path, stats)
        self.assertGreaterEqual(stats["bad_lines"], 1)
        self.assertLess(len(calls), len(tr.calls))
        self.assertTrue(calls)

    def test_resumed_session_copies_are_not_counted_twice(self):
        (sid1, tr1, _), (sid2, tr2, _) = self.history(n=2)
        copied = [dict(line) for line in tr1.lines if line.get("sessionId") == sid1][:12]
        tr2.lines = copied + tr2.lines                            # a resumed session starts with them
        self.write_session(sid2, tr2)
        r = self.import_json()
        self.assertEqual(r["imported"], 1)
        self.assertEqual({s for _, _, s, *_ in self.stored()}, {sid2})
        self.assertEqual(r["tool_calls"], len(kept_calls(tr2)))
        self.write_session(sid1, tr1)
        r = self.import_json()
        self.assertEqual((r["imported"], r["tool_calls"]), (1, len(kept_calls(tr1))))

    def test_dry_run_since_paths_and_clients(self):
        hist = self.history(n=3)
        for sid, tr, _ in hist:
            self.write_session(sid, tr)
        dry = self.import_json("--dry-run")
        self.assertEqual((dry["imported"], dry["dry_run"]), (3, True))
        self.assertFalse(os.path.exists(self.db) and self.stored())
        self.assertEqual(self.import_json("--client", "codex")["sessions"], 0)
        r = self.import_json("--path", os.path.join(self.projdir, hist[0][0] + ".jsonl"))
        self.assertEqual((r["sessions"], r["imported"]), (1, 1))
        other = os.path.join(self.home, "elsewhere")
        shutil.copytree(os.path.join(self.home, ".claude"), os.path.join(other, ".claude"))
        shutil.rmtree(os.path.join(self.home, ".claude"))
        r = self.import_json(env={"CLAUDE_CONFIG_DIR": os.path.join(other, ".claude")})
        self.assertEqual((r["imported"], r["skipped"]), (2, 1))
        bad = self.cli_process("import-history", "--path", os.path.join(self.home, "nope"), check=False)
        self.assertEqual(bad.returncode, 2)
        self.assertEqual(len(bad.stderr.strip().splitlines()), 1)
        bad = self.cli_process("import-history", "--client", "emacs", check=False)
        self.assertEqual(bad.returncode, 2)

    def test_since_skips_old_sessions_the_retention_does_not(self):
        store = instinct.InstinctStore(self.db, clock=Clock(self.now))
        self.addCleanup(store.close)
        hist = make_history(cwd=self.repo, n=3, start=self.now - 40 * DAY)
        for sid, tr, _ in hist:
            self.write_session(sid, tr)
        claude = os.path.join(self.home, ".claude")
        r = store.import_history(path=claude, since=39)
        self.assertEqual((r["imported"], r["too_old"]), (2, 1))
        store.config("events_max_days", "37")        # older than the retention: learned from
        r = store.import_history(path=claude)
        self.assertEqual((r["imported"], r["too_old"], r["old"], r["skipped"]), (1, 0, 1, 2))

    def test_lines_without_cwd_belong_to_the_session_folder_never_the_importers(self):
        (sid1, tr1, _), (sid2, tr2, _) = self.history(n=2)
        for k, line in enumerate(tr1.lines):
            if k % 3 == 0:
                line.pop("cwd", None)
        for line in tr2.lines:
            line.pop("cwd", None)
        self.write_session(sid1, tr1)
        self.write_session(sid2, tr2)
        r = self.import_json()
        self.assertEqual((r["imported"], r["empty"]), (1, 1))
        fp = instinct.project_fingerprint(self.repo)
        conn = sqlite3.connect(self.db)
        try:
            projects = conn.execute("SELECT DISTINCT project, session FROM events"
                                    " WHERE kind IN ('tool', 'tool_fail')").fetchall()
        finally:
            conn.close()
        self.assertEqual(projects, [(fp, sid1)])

    def test_opted_out_project_is_not_imported(self):
        (sid, tr, _), = self.history(n=1)
        self.write_session(sid, tr)
        open(os.path.join(self.repo, ".instinct-disable"), "w").close()
        r = self.import_json()
        self.assertEqual((r["imported"], r["tool_calls"]), (0, 0))
        self.assertFalse(self.stored())

    def test_progress_only_on_a_terminal(self):
        hist = self.history(n=2)
        for sid, tr, _ in hist:
            self.write_session(sid, tr)
        r = self.cli_process("import-history")
        self.assertEqual(r.stderr, "")                          # not a terminal: no bar
        self.assertIn("2 imported", r.stdout)
        seen = []
        store = instinct.InstinctStore(os.path.join(self.home, "other.db"))
        self.addCleanup(store.close)
        store.progress = lambda d, t: seen.append((d, t))
        store.import_history(path=self.projdir)
        self.assertEqual(seen, [(1, 2), (2, 2)])
        import io

        class Tty(io.StringIO):
            def isatty(self):
                return True
        buf = Tty()
        bar = instinct._Transcripts.tty_progress(buf)
        bar(1, 2)
        bar(2, 2)
        self.assertIn("2/2 sessions", buf.getvalue())
        self.assertIsNone(instinct._Transcripts.tty_progress(io.StringIO()))


class TestCodexRollouts(_Home):
    def test_rollout_calls_become_codex_hook_payloads(self):
        sid = "0199aaaa-0000-7000-8000-000000000002"
        path = os.path.join(self.home, "rollout.jsonl")
        with open(path, "w") as f:
            f.write(codex_rollout(sid, self.repo, 1_790_000_000.0))
        stats = {"bad_lines": 0, "sidechain_calls": 0, "copied_calls": 0, "no_hook": 0}
        session, calls = instinct._Transcripts.codex_session(path, stats)
        self.assertEqual(session, sid)
        got = [(p["tool_name"], p["tool_input"].get("command", p["tool_input"]), f) for p, f, _ in calls]
        self.assertEqual(got[:5], [("Bash", "cargo test --quiet", True),
                                   ("apply_patch", got[1][1], False),
                                   ("Bash", "cargo test --quiet", False),
                                   ("Bash", f"mysql -p'{SECRETS['quoted']}' -e 'select 1'", True),
                                   ("Bash", "git status --short", False)])
        self.assertTrue(got[1][1].startswith("*** Begin Patch"))
        self.assertEqual(got[5], ("mcp__github__get_issue", {"number": 7}, False))
        self.assertEqual(got[6], ("Bash", "git commit -m 'wip'", True))
        self.assertEqual(len(got), 7)                              # update_plan fires no hook
        self.assertEqual(stats["bad_lines"], 1)                    # the truncated last line
        for p, _, ts in calls:
            self.assertEqual((p["session_id"], p["cwd"], p["hook_event_name"]), (sid, self.repo, "PostToolUse"))
            self.assertIn("turn_id", p)
            self.assertIsInstance(ts, float)
        self.assertEqual(instinct._Transcripts._codex_exit("Exit code: 3\nWall time: 1 seconds"), 3)
        self.assertEqual(instinct._Transcripts._codex_exit("Process running with session ID 4\nOutput:"), None)
        for odd in ("Exit code: ²", "Exit code: --5"):     # digits int() refuses: no exit code
            self.assertEqual(instinct._Transcripts._codex_exit(odd), None)
        self.assertEqual(instinct._Transcripts._codex_exit([{"type": "input_text", "text": "Exit code: 0"}]), 0)

    def test_codex_home_import_skips_subagents_and_is_idempotent(self):
        base = os.path.join(self.home, "codexhome")
        day = os.path.join(base, "sessions", "2026", "09", "20")
        os.makedirs(day)
        for name, sid, sub in (("rollout-2026-09-20T10-00-00-a.jsonl", "0199-main", False),
                               ("rollout-2026-09-20T10-05-00-b.jsonl", "0199-sub", True)):
            with open(os.path.join(day, name), "w") as f:
                f.write(codex_rollout(sid, self.repo, 1_790_000_000.0, subagent=sub))
        r = self.import_json("--client", "codex", env={"CODEX_HOME": base})
        self.assertEqual((r["imported"], r["tool_calls"], r["failed_calls"]), (1, 7, 3))
        self.assertEqual(r["sidechain_calls"], 7)
        rows = self.stored()
        self.assertEqual({(s, src) for _, _, s, src, *_ in rows}, {("0199-main", "import:codex")})
        self.assertEqual([d for _, d, *_ in rows][:2], ["Bash(cargo test)", "Edit"])
        again = self.import_json("--client", "codex", env={"CODEX_HOME": base})
        self.assertEqual((again["imported"], again["skipped"]), (0, 1))
        self.assertEqual(self.stored(), rows)


class TestCodexLiveOutcomes(_Home):
    """Codex's PostToolUse carries the output, not the exit code: SessionEnd reads the outcomes
    from the rollout the payload points to, so fail -> pass fixes are learned live too."""

    def hook(self, event, payload):
        r = cli_process("hook", event, input=json.dumps(payload).encode(), text=False,
                        env=child_env(self.home, self.db))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(b"Traceback", r.stderr)
        return r

    def test_session_end_marks_the_rollouts_failures_and_mines_the_fix(self):
        sid = "0199bbbb-0000-7000-8000-000000000003"
        day = os.path.join(self.home, ".codex", "sessions", "2026", "09", "20")
        os.makedirs(day)
        path = os.path.join(day, "rollout-2026-09-20T10-00-00-x.jsonl")
        with open(path, "w") as f:
            f.write(codex_rollout(sid, self.repo, 1_790_000_000.0))
        stats = {"bad_lines": 0, "sidechain_calls": 0, "copied_calls": 0, "no_hook": 0}
        _, calls = instinct._Transcripts.codex_session(path, stats)
        fails = ["tool_fail", "tool", "tool", "tool_fail", "tool", "tool", "tool_fail"]
        for payload, _, _ in calls:                 # what Codex 0.171 sends: output, no exit code
            self.hook("post-tool-use", dict(payload, tool_response="test result: FAILED", transcript_path=path))
        # issue 31: the exit code is read from the rollout at PostToolUse (the failure hint's turn)
        self.assertEqual([k for k, *_ in self.stored()], fails)
        self.hook("session-end", {"session_id": sid, "cwd": self.repo, "hook_event_name": "SessionEnd",
                                  "transcript_path": path, "reason": "other"})
        kinds = [k for k, *_ in self.stored()]
        self.assertEqual(kinds, ["tool_fail", "tool", "tool", "tool_fail", "tool", "tool", "tool_fail"])
        store = instinct.InstinctStore(self.db)
        self.addCleanup(store.close)
        # the session was mined with its failures: the fix is there for mining to weigh
        # (one session is no evidence of a habit, so nothing is credited yet)
        self.assertEqual([s for s, in store._read("SELECT session FROM mined_sessions")], [sid])
        rows = store._read("SELECT kind, data FROM events WHERE session = ? ORDER BY id", (sid,))
        self.assertIn(("cargo test", "Edit"), instinct._Corpus._fixes_in(instinct._Corpus._steps_of(rows))[0])
        with open(self.db, "rb") as f:
            self.assertNotIn(SECRETS["output"].encode(), f.read())

    def test_a_rollout_of_another_session_or_no_rollout_changes_nothing(self):
        path = os.path.join(self.home, "rollout-other.jsonl")
        with open(path, "w") as f:
            f.write(codex_rollout("another-session", self.repo, 1_790_000_000.0))
        stats = {"bad_lines": 0, "sidechain_calls": 0, "copied_calls": 0, "no_hook": 0}
        _, calls = instinct._Transcripts.codex_session(path, stats)
        for payload, _, _ in calls:
            self.hook("post-tool-use", dict(payload, session_id="mine", tool_response=""))
        for tp in (path, os.path.join(self.home, "missing-rollout.jsonl"), self.home, "/dev/null", 5):
            self.hook("session-end", {"session_id": "mine", "cwd": self.repo, "hook_event_name": "SessionEnd",
                                      "transcript_path": tp})
        self.assertEqual([k for k, *_ in self.stored()], ["tool"] * 7)


class TestSecrets(_Home):
    def test_no_planted_secret_reaches_store_wal_exports_briefing_or_backup(self):
        hist = self.history(n=10, seed=77)
        for sid, tr, _ in hist:
            self.write_session(sid, tr)
        for k, cmd in enumerate(SECRET_COMMANDS):             # every planted form at least 5 times
            extra = ClaudeTranscript(random.Random(k), f"secret-{k}", self.repo, 1_790_000_000.0 + k)
            for _ in range(5):
                extra.bash(cmd, output=SECRETS["output"])
                extra.bash("ls")
            self.write_session(f"secret-{k}", extra)
        codex = os.path.join(self.home, ".codex", "sessions", "2026", "09", "20")
        os.makedirs(codex)
        with open(os.path.join(codex, "rollout-2026-09-20T10-00-00-x.jsonl"), "w") as f:
            f.write(codex_rollout("0199aaaa-0000-7000-8000-000000000001", self.repo, 1_790_100_000.0))
        summary = self.cli_process("import-history").stdout
        outputs = [summary, self.cli_process("import-history", "--json").stdout]
        for fmt in ("json", "markdown", "claude", "agents", "cursor", "windsurf", "skill"):
            outputs.append(self.cli_process("export", "--format", fmt, "--min-confidence", "1",
                                            "--project", self.repo).stdout)
        outputs.append(self.cli_process("suggest", "--json", "--project", self.repo).stdout)
        outputs.append(self.cli_process("list", "--json", "--min-confidence", "1").stdout)
        hook = cli_process("hook", "session-start", env=child_env(db=self.db),
                           input=json.dumps({"session_id": "new", "cwd": self.repo,
                                              "hook_event_name": "SessionStart"}))
        outputs.append(hook.stdout)
        backup = os.path.join(self.home, "backup.db")
        self.cli_process("backup", backup)
        blobs = [o.encode() for o in outputs]
        for path in (self.db, self.db + "-wal", backup):
            if os.path.exists(path):
                with open(path, "rb") as f:
                    blobs.append(f.read())
        blob = b"\n".join(blobs)
        self.assertGreater(len(self.stored()), 200)
        for name, secret in SECRETS.items():
            pieces = {secret} | {p for p in secret.replace(";", " ").replace("|", " ").replace(".", " ").split()
                                 if len(p) >= 5}
            for piece in pieces:
                for form in (piece.encode(), piece.lower().encode()):
                    with self.subTest(secret=name, piece=piece):
                        self.assertFalse(form in blob, f"planted secret {name!r} ({piece}) was stored")


class TestLearning(_Home):
    """The acceptance test: realistic recorded sessions replayed one by one."""

    def test_test_command_and_precommit_routine_mature_by_the_fifth_session_noise_never(self):
        hist = self.history(n=10, seed=2024)
        fp = instinct.project_fingerprint(self.repo)
        first_test = first_routine = None
        for k, (sid, tr, plan) in enumerate(hist, 1):
            self.write_session(sid, tr)
            r = self.import_json()
            self.assertEqual((r["imported"], r["skipped"]), (1, k - 1))
            store = instinct.InstinctStore(self.db)
            try:
                suggested = [s["pattern"] for s in store.suggest(project=fp, limit=50)]
                briefing = store._briefing(self.repo)
            finally:
                store.close()
            for p in suggested:
                words = p.replace("(", " ").replace(")", " ").replace("+", " ").replace(">", " ")
                for noise in NOISE_PROGRAMS:
                    with self.subTest(k=k, pattern=p, noise=noise):
                        self.assertNotIn(f" {noise} ", f" {words} ")
            if first_test is None and any("pytest" in p for p in suggested):
                first_test = k
                self.assertIn("pytest", briefing)
            if first_routine is None and any("ruff" in p and "commit" in p for p in suggested):
                first_routine = k
        with_test = [k for k, (_, _, plan) in enumerate(hist, 1) if plan["test"]]
        with_routine = [k for k, (_, _, plan) in enumerate(hist, 1) if plan["routine"]]
        self.assertIsNotNone(first_test, "the test command never matured")
        self.assertIsNotNone(first_routine, "the pre-commit routine never matured")
        self.assertLessEqual(first_test, with_test[4])
        self.assertLessEqual(first_routine, with_routine[4])


# --- Ctrl-C during an import, folder imports and symlinks (issue 21) ------------------------
class TestCtrlCInASqlFunction(unittest.TestCase):
    """A SIGINT is handled at the next Python line: often inside instinct's SQL functions (the
    keyed hash), where sqlite3 would turn it into 'user-defined function raised exception'."""

    def test_it_stays_a_ctrl_c(self):
        store = instinct.InstinctStore(os.path.join(temp_dir(self), "i.db"))
        self.addCleanup(store.close)
        store.stats()                                         # opened before the Ctrl-C
        with mock.patch.object(instinct, "_keyed", side_effect=KeyboardInterrupt):
            with self.assertRaises(KeyboardInterrupt):
                store._new_prompt("don't do that", temp_dir(self), "s1")
        self.assertTrue(store._new_prompt("don't do that", temp_dir(self), "s1"))   # still usable


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
        rerun = cli_process("--json", "import-history", env=env, cwd=self.repo, timeout=600)
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
        r = self.cli_process("--json", "import-memories", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual((got["files"], got["added"], got["links_skipped"]), (2, 1, 3))
        self.assertEqual([m["title"] for m in self.store.memories()], ["Tabs"])
        r = self.cli_process("import-memories", d)
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
        r = self.cli_process("--json", "import-history", "--path", d, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual((got["sessions"], got["imported"], got["links_skipped"]), (1, 1, 3))
        sessions = {s for s, in rows(self.db,
                                     "SELECT DISTINCT session FROM events WHERE session != ''")}
        self.assertEqual(sessions, {sid})
        r = self.cli_process("import-history", "--path", d, timeout=120)
        self.assertIn("symlinks out of the folder skipped: 3", r.stdout)


if __name__ == "__main__":
    unittest.main()


@unittest.skipUnless(hasattr(os, "mkfifo") and os.path.exists("/dev/zero"), "needs FIFOs and /dev/zero")
class TestTranscriptsNeverHang(_Home):
    """Issue 28 item 1: a FIFO, a /dev/zero link or a folder where a transcript or rollout is
    expected (the default ~/.claude and ~/.codex folders, --path, the rollout read at
    SessionEnd) is skipped in < 5 s, the real sessions beside it still imported."""

    def test_default_folders_path_and_session_end(self):
        (sid, tr, _), = self.history(n=1)
        self.write_session(sid, tr)
        codex = os.path.join(self.home, ".codex", "sessions", "2026", "09", "20")
        os.makedirs(codex)
        odd = [os.path.join(self.projdir, "odd.jsonl"), os.path.join(codex, "rollout-2026-09-20T10-00-00-x.jsonl")]
        env = child_env(self.home, self.db)
        for kind in ("fifo", "/dev/zero link", "folder"):
            for path in odd:
                {"fifo": os.mkfifo, "folder": os.mkdir}.get(kind, lambda p: os.symlink("/dev/zero", p))(path)
            for args in (("import-history", "--json", "--dry-run"), ("import-history", "--json"),
                         ("import-history", "--json", "--path", self.projdir)):
                with self.subTest(kind=kind, args=args):
                    r = cli_process(*args, env=env, cwd=self.repo, timeout=5)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertGreaterEqual(json.loads(r.stdout)["sessions"], 1)
            with self.subTest(kind=kind, hook="session-end"):
                r = cli_process("hook", "session-end", env=env, cwd=self.repo, timeout=5, input=json.dumps(
                    {"session_id": "s", "cwd": self.repo, "hook_event_name": "SessionEnd", "transcript_path": odd[1]}))
                self.assertEqual((r.returncode, r.stderr), (0, ""))
                with self.assertRaises(instinct.ValidationError):
                    list(instinct._Transcripts._lines(odd[1], {"bad_lines": 0}))
            for path in odd:
                (os.rmdir if kind == "folder" else os.remove)(path)
