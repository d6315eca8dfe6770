"""Every agent client is one row of instinct.CLIENTS (issue 31): Gemini CLI, Copilot CLI and Cursor
beside Claude Code and Codex. Their hook payloads (each client's own documented shape) replayed
through real `instinct hook` processes, their transcripts through import-history, Claude Code's
hooks fed other clients' payloads, a call reported by two hooks, Codex's exit code from its rollout.
"""
import json
import os
import sqlite3
import unittest
import uuid

from tests.helpers import (HomeCase, child_env, cli_process, label, mined, read,  # noqa: F401
                           setUpModule, temp_dir, write)
import instinct

# Six sessions of one project (a step: (kind, what, ok)): the test and lint commands recur in each,
# some runs fail first, edits, reads, an MCP tool and a subagent in some sessions, one-off commands.
_RITUAL = [("sh", "uv run pytest -q", True), ("sh", "ruff check .", True), ("sh", "git status", True)]
PLANS = [
    [("sh", "uv run pytest -q tests/test_broken.py", False), ("edit", "src/app.py", True)] + _RITUAL
    + [("read", "README.md", True), ("sh", "ls", True)],
    [("sh", "git log --oneline -1", True), ("mcp", "list_issues", True)] + _RITUAL
    + [("sh", "ruff check broken.py", False), ("edit", "src/app.py", True)] + _RITUAL,
    [("agent", "explore", True)] + _RITUAL + [("sh", "git rev-parse --verify release", False)],
    [("sh", "uv run pytest -q tests/test_broken.py", False), ("edit", "tests/test_app.py", True)]
    + _RITUAL + [("sh", "wc -l app.py", True)],
    [("read", "src/app.py", True)] + _RITUAL + [("sh", "python3 -c 'raise SystemExit(3)'", False),
                                                ("mcp", "get_issue", True)],
    [("sh", "git diff --stat", True), ("edit", "src/app.py", True)] + _RITUAL
    + [("agent", "review", True), ("sh", "head -n 3 app.py", True)],
]

# Each client's tool names and argument names (from its documentation), and how it names events.
TOOLS = {
    "gemini-cli": {"sh": ("run_shell_command", "command"), "edit": ("replace", "file_path"),
                   "read": ("read_file", "absolute_path"), "mcp": ("mcp__github__{}", "owner"),
                   "agent": ("codebase_investigator", "objective")},
    "copilot-cli": {"sh": ("bash", "command"), "edit": ("edit", "path"), "read": ("view", "path"),
                    "mcp": ("github-mcp-server-{}", "owner"), "agent": ("task", "agent_type")},
    "cursor": {"sh": ("Shell", "command"), "edit": ("StrReplace", "path"), "read": ("Read", "path"),
               "mcp": ("mcp__github__{}", "owner"), "agent": ("Task", "subagent_type")},
}


def tool_of(client, kind, what, repo):
    name, arg = TOOLS[client][kind]
    value = os.path.join(repo, what) if kind in ("edit", "read") else what
    return name.format(what), {arg: value, "description": "step"}


def hook_payload(client, event, sid, repo, step=None, uid=None, ts="2026-09-20T10:00:00Z"):
    """What the client's own hook sends for `event` (one of ours) and a step, in its shape."""
    if step is not None:
        kind, what, ok = step
        tool, args = tool_of(client, kind, what, repo)
    if client == "gemini-cli":
        p = {"session_id": sid, "cwd": repo, "timestamp": ts, "transcript_path": os.path.join(
            repo, "..", ".gemini", "tmp", "h", "chats", f"session-{sid}.json"),
             "hook_event_name": {"session-start": "SessionStart", "post-tool-use": "AfterTool",
                                 "session-end": "SessionEnd"}[event]}
        if step is not None:
            p.update(tool_name=tool, tool_input=args, tool_response={
                "llmContent": f"Command: x\nOutput: done\nExit Code: {0 if ok else 1}",
                "returnDisplay": "done"} if kind == "sh" else (
                {"llmContent": "ok"} if ok else {"error": "failed", "llmContent": ""}))
        return p
    if client == "copilot-cli":
        p = {"sessionId": sid, "cwd": repo, "timestamp": 1_790_000_000_000}
        if step is not None:
            p.update(toolName=tool, toolArgs=args if kind == "sh" else json.dumps(args),
                     toolResult={"resultType": "success", "textResultForLlm": "output"})
            if kind == "sh":            # as 1.0.102 sends it: a failed command is a success
                p["toolResult"]["textResultForLlm"] += (
                    f"\n<shellId: 3 completed with exit code {0 if ok else 1}>")
            elif not ok:
                p.update(toolResult={"resultType": "failure", "textResultForLlm": "denied"},
                         error="Tool failed")
        else:
            p["source"] = "new"
        return p
    p = {"conversation_id": sid, "generation_id": str(uuid.uuid4()), "workspace_roots": [repo],
         "hook_event_name": {"session-start": "sessionStart", "post-tool-use": "postToolUse",
                             "post-tool-use-failure": "postToolUseFailure", "stop": "stop",
                             "session-end": "stop"}[event], "model": "auto"}
    if step is not None:
        p.update(tool_name=tool, tool_input=args, tool_use_id=uid)
        p.update({"tool_output": "output"} if ok else {"error_message": "exit code 1",
                                                       "failure_type": "error"})
    return p


class _Clients(HomeCase):
    maxDiff = None

    def hook(self, client, event, payload):
        r = cli_process("hook", event, "--client", client, input=json.dumps(payload).encode(),
                        text=False, env=self.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(b"Traceback", r.stderr)
        return r.stdout

    def expected(self, client, step):
        kind, what, ok = step
        if kind == "sh":
            shapes = instinct._Shell.command_shapes(what)
            return ("tool" if ok else "tool_fail", f"Bash({';'.join(shapes)})")
        tool, _ = tool_of(client, kind, what, self.repo)
        want = {"edit": f"{tool}(.py)", "read": tool, "mcp": None, "agent": None}[kind]
        return ("tool" if ok else "tool_fail", want)

    def stored(self, sid):
        return [(k, label(d), src) for k, d, src in self.sql(
            "SELECT kind, data, source FROM events WHERE session = ? AND kind IN"
            " ('tool', 'tool_fail') ORDER BY id", (sid,))]

    def live(self, client, sessions):
        """Replay `sessions` [(sid, plan)] through the client's hooks -> the start answers."""
        answers = []
        end = "stop" if client == "cursor" else "session-end"
        for sid, plan in sessions:
            answers.append(self.hook(client, "session-start", hook_payload(
                client, "session-start", sid, self.repo)))
            for i, step in enumerate(plan):
                event = "post-tool-use" if step[2] or client == "gemini-cli" or (
                    client == "copilot-cli" and step[0] == "sh") else "post-tool-use-failure"
                self.hook(client, event, hook_payload(client, event, sid, self.repo, step,
                                                      uid=f"call_{sid}_{i}"))
            self.hook(client, end, hook_payload(client, end, sid, self.repo))
        return answers

    def context(self, client, out):
        """The context text of a hook's answer, read the way the client reads it."""
        if not out.strip():
            return ""
        data = json.loads(out)
        if client == "gemini-cli":
            self.assertEqual(data["hookSpecificOutput"]["hookEventName"], "SessionStart")
            return data["hookSpecificOutput"]["additionalContext"]
        return data["additionalContext" if client == "copilot-cli" else "additional_context"]


class _EachClient:
    """One test per new client, each running `check_client`."""
    def test_gemini_cli(self):
        self.check_client("gemini-cli")

    def test_copilot_cli(self):
        self.check_client("copilot-cli")

    def test_cursor(self):
        self.check_client("cursor")


class TestLiveReplay(_EachClient, _Clients):
    """Six sessions of each client's own hook payloads: every call stored in order with its
    outcome, each session mined once, the test command matured and briefed at the 7th start."""

    def check_client(self, client):
        r = cli_process("config", "holdout_percent", "0", env=self.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        sessions = [(f"{client}-s{i + 1}-{uuid.uuid4().hex[:6]}", plan)
                    for i, plan in enumerate(PLANS)]
        answers = self.live(client, sessions)
        for sid, plan in sessions:
            got = self.stored(sid)
            want = [self.expected(client, st) for st in plan]
            self.assertEqual([(k, lab) if w is not None else (k,) for (k, lab, _), (_, w)
                              in zip(got, want)],
                             [(k, w) if w is not None else (k,) for k, w in want], sid)
            self.assertEqual(len(got), len(plan), sid)
            self.assertEqual({src for _, _, src in got}, {client})
        mined = dict(self.sql("SELECT session, last_id FROM mined_sessions"))
        last = dict(self.sql("SELECT session, max(id) FROM events WHERE kind IN ('tool',"
                             " 'tool_fail') GROUP BY session"))
        self.assertEqual(mined, last)                       # each mined after its last call
        obs = self.sql("SELECT session, pattern FROM mined")
        self.assertEqual(len(obs), len(set(obs)))           # +1 once per session and pattern
        (level, conf, src), = self.sql("SELECT promoted, confidence, source FROM instincts"
                                       " WHERE pattern = 'pref:test=uv run pytest'")
        self.assertGreaterEqual(level, 1)
        self.assertEqual((conf, src), (6, f"hooks:{client}"))
        self.assertEqual(answers[:5], [b""] * 5)            # nothing learned before the 5th end
        seventh = self.hook(client, "session-start", hook_payload(
            client, "session-start", f"{client}-s7", self.repo))
        text = self.context(client, seventh)
        self.assertIn("`uv run pytest`", text)
        self.assertIn("`ruff check`", text)
        explain = json.loads(cli_process("explain", "pref:test=uv run pytest", "--json",
                                         "--project", self.repo, env=self.env()).stdout)
        self.assertEqual(explain["sources"], [{"name": f"hooks:{client}", "count": 6}])
        # the hint before a conflicting command, where the client's pre-tool answer carries one
        events = [e for _, e, _, _ in instinct.CLIENTS[client].events]
        self.assertEqual("pre-tool-use" in events, client == "copilot-cli")
        if client == "copilot-cli":
            pre = hook_payload(client, "post-tool-use", f"{client}-s7", self.repo,
                               ("sh", "pytest -q tests", True))
            del pre["toolResult"]
            hint = self.context(client, self.hook(client, "pre-tool-use", pre))
            self.assertEqual(hint, "instinct: Tests here: `uv run pytest` (6 sessions), not "
                                   "`pytest`.")
        return sessions

    def test_claude_code_in_the_morning_gemini_in_the_afternoon_is_one_project(self):
        claude = [("cc-" + uuid.uuid4().hex[:6], plan) for plan in PLANS[:3]]
        for sid, plan in claude:
            for i, (kind, what, ok) in enumerate(plan):
                if kind == "sh":
                    r = cli_process("hook", "post-tool-use" if ok else "post-tool-use-failure",
                                    input=json.dumps({
                                        "session_id": sid, "cwd": os.path.join(self.repo, "src")
                                        if i % 2 else self.repo, "hook_event_name": "PostToolUse",
                                        "tool_name": "Bash", "tool_input": {"command": what},
                                        "tool_response": {}}).encode(), text=False, env=self.env())
                    self.assertEqual(r.returncode, 0, r.stderr)
            cli_process("hook", "session-end", input=json.dumps(
                {"session_id": sid, "cwd": self.repo}).encode(), text=False, env=self.env())
        self.live("gemini-cli", [("gm-" + uuid.uuid4().hex[:6], plan) for plan in PLANS[3:]])
        self.assertEqual(len(self.sql("SELECT DISTINCT project FROM events WHERE kind IN"
                                      " ('tool', 'tool_fail')")), 1)
        (conf,), = self.sql("SELECT confidence FROM instincts WHERE pattern ="
                            " 'pref:test=uv run pytest'")
        self.assertEqual(conf, 6)
        explain = json.loads(cli_process("explain", "pref:test=uv run pytest", "--json",
                                         "--project", self.repo, env=self.env()).stdout)
        self.assertEqual(sorted((s["name"], s["count"]) for s in explain["sources"]),
                         [("hooks:claude-code", 3), ("hooks:gemini-cli", 3)])


class TestOtherPayloadsInClaudeCodesHooks(_Clients):
    """Copilot CLI and Cursor run a repository's .claude/settings.json hooks: the command has no
    --client, the payload tells who sent it."""

    def claude_hook(self, event, payload):
        r = cli_process("hook", event, input=json.dumps(payload).encode(), text=False,
                        env=self.env())
        self.assertEqual((r.returncode, r.stdout), (0, b""), r.stderr)
        self.assertNotIn(b"Traceback", r.stderr)

    def test_copilot_and_cursor_shapes_are_stored_correctly(self):
        step = ("sh", "uv run pytest -q tests/test_app.py", True)
        camel = hook_payload("copilot-cli", "post-tool-use", "cop-1", self.repo, step, uid="c1")
        self.claude_hook("post-tool-use", camel)
        claude_style = {"session_id": "cop-2", "cwd": self.repo, "hook_event_name": "PostToolUse",
                        "tool_name": "bash", "tool_input": json.dumps(
                            {"command": "npm run lint", "description": "lint"})}
        self.claude_hook("post-tool-use", claude_style)
        cursor = hook_payload("cursor", "post-tool-use-failure", "cur-1", self.repo,
                              ("sh", "cargo test --workspace", False), uid="t9")
        self.claude_hook("post-tool-use-failure", cursor)
        shell = {"conversation_id": "cur-1", "generation_id": "g", "hook_event_name":
                 "beforeShellExecution", "command": "make build", "cwd": "",
                 "workspace_roots": [self.repo]}
        shell.pop("cwd")
        self.claude_hook("post-tool-use", shell)
        self.assertEqual(self.stored("cop-1"), [("tool", "Bash(uv run pytest)", "copilot-cli")])
        self.assertEqual(self.stored("cop-2"), [("tool", "Bash(npm run lint)", "claude-code")])
        self.assertEqual(self.stored("cur-1"), [("tool_fail", "Bash(cargo test)", "cursor"),
                                                ("tool", "Bash(make build)", "cursor")])
        (root,), = self.sql("SELECT DISTINCT p.root FROM events e JOIN projects p ON"
                            " p.fingerprint = e.project WHERE e.kind IN ('tool', 'tool_fail')")
        self.assertEqual(root, self.repo)

    def test_a_call_two_hooks_report_is_stored_once(self):
        step = ("sh", "uv run pytest -q", False)
        own = hook_payload("cursor", "post-tool-use-failure", "conv-7", self.repo, step,
                           uid="toolu_01")
        claude = {"session_id": "conv-7", "cwd": self.repo, "hook_event_name":
                  "PostToolUseFailure", "tool_name": "Shell", "tool_use_id": "toolu_01",
                  "tool_input": {"command": "uv run pytest -q"}, "error": "Exit code 1"}
        self.hook("cursor", "post-tool-use-failure", own)
        self.claude_hook("post-tool-use-failure", claude)
        self.claude_hook("post-tool-use", dict(claude, tool_use_id="toolu_02"))   # another call
        self.claude_hook("post-tool-use", dict(claude, session_id="conv-8"))   # another session
        self.assertEqual([k for k, _, _ in self.stored("conv-7")], ["tool_fail", "tool"])
        self.assertEqual(len(self.stored("conv-8")), 1)


class TestHistoryImport(_EachClient, _Clients):
    """The same six sessions as each client's transcripts: import-history learns the same
    habits as the live hooks did."""

    def transcripts(self, client, sessions, base):
        t0 = 1_790_000_000
        for n, (sid, plan) in enumerate(sessions):
            start = t0 + n * 86400
            calls = []
            for i, step in enumerate(plan):
                tool, args = tool_of(client, step[0], step[1], self.repo)
                ts = instinct._iso(start + 10 * i)
                calls.append((f"{sid}-{i}", tool, args, step[2], ts))
            if client == "gemini-cli":
                folder = os.path.join(base, ".gemini", "tmp", instinct._sha256_hex(self.repo),
                                      "chats")
                os.makedirs(folder, exist_ok=True)
                msgs = [{"id": "m0", "timestamp": instinct._iso(start), "type": "user",
                         "content": [{"text": "fix the tests"}]}]
                msgs += [{"id": f"m{i + 1}", "timestamp": ts, "type": "gemini", "content": "",
                          "model": "gemini-2.5-pro", "toolCalls": [{
                              "id": cid, "name": tool, "args": args, "timestamp": ts,
                              "status": "success" if ok else "error",
                              "result": [{"functionResponse": {"id": cid, "name": tool}}]}]}
                         for i, (cid, tool, args, ok, ts) in enumerate(calls)]
                msgs.append({"id": "mx", "timestamp": ts, "type": "gemini", "toolCalls": [{
                    "id": "cancel", "name": "run_shell_command", "args": {"command": "rm -rf x"},
                    "status": "cancelled", "timestamp": ts}]})
                write(os.path.join(folder, f"session-{n}-{sid[:8]}.json"), json.dumps({
                    "sessionId": sid, "projectHash": instinct._sha256_hex(self.repo),
                    "startTime": instinct._iso(start), "lastUpdated": ts, "messages": msgs},
                    indent=2))
            elif client == "copilot-cli":
                folder = os.path.join(base, ".copilot", "session-state", sid)
                os.makedirs(folder)
                lines = [{"type": "session.start", "id": "e0", "timestamp": instinct._iso(start),
                          "data": {"sessionId": sid, "version": 1, "producer": "copilot-agent",
                                   "startTime": instinct._iso(start),
                                   "context": {"cwd": self.repo, "gitRoot": self.repo}}}]
                for cid, tool, args, ok, ts in calls:
                    lines.append({"type": "tool.execution_start", "timestamp": ts, "data": {
                        "toolCallId": cid, "toolName": tool, "arguments": args}})
                    if tool == "task":                    # the subagent's own call: skipped
                        lines += [{"type": "tool.execution_start", "timestamp": ts, "data": {
                            "toolCallId": cid + "s", "toolName": "bash", "parentToolCallId": cid,
                            "arguments": {"command": "grep -r x ."}}},
                            {"type": "tool.execution_complete", "timestamp": ts, "data": {
                                "toolCallId": cid + "s", "success": True,
                                "parentToolCallId": cid}}]
                    lines.append({"type": "tool.execution_complete", "timestamp": ts, "data": {
                        "toolCallId": cid, "success": ok, "result": {"content": "out"}}})
                write(os.path.join(folder, "events.jsonl"),
                      "".join(json.dumps(x) + "\n" for x in lines))
            else:
                slug = self.repo.strip("/").replace("/", "-").replace("_", "-").replace(".", "-")
                folder = os.path.join(base, ".cursor", "projects", slug, "agent-transcripts", sid)
                os.makedirs(folder)
                lines = [{"role": "user", "message": {"content": [
                    {"type": "text", "text": "<user_query>fix it</user_query>"}]}}]
                for cid, tool, args, ok, ts in calls:
                    lines.append({"role": "assistant", "message": {"content": [
                        {"type": "text", "text": "running"},
                        {"type": "tool_use", "id": cid, "name": tool, "input": args}]}})
                    lines.append({"role": "tool", "message": {"content": [
                        {"type": "tool_result", "tool_use_id": cid, "is_error": not ok,
                         "content": "out"}]}})
                path = os.path.join(folder, sid + ".jsonl")
                write(path, "".join(json.dumps(x) + "\n" for x in lines))
                os.utime(path, (start, start))

    def learned(self, db):
        return {p for p, in sqlite3.connect(db).execute(
            "SELECT pattern FROM instincts WHERE promoted > 0")}

    def check_client(self, client):
        sessions = [(f"{uuid.uuid4()}", plan) for plan in PLANS]
        self.live(client, sessions)
        live = self.learned(self.db)
        self.assertIn("pref:test=uv run pytest", live)
        home = temp_dir(self)
        self.transcripts(client, sessions, home)
        db = os.path.join(home, "imported.db")
        r = cli_process("import-history", "--client", client, "--json",
                        env=child_env(home, db), cwd=self.repo)
        self.assertEqual(r.returncode, 0, r.stderr)
        res = json.loads(r.stdout)
        self.assertEqual((res["sessions"], res["imported"]), (6, 6), res)
        self.assertEqual(res["tool_calls"], sum(len(p) for p in PLANS))
        self.assertEqual(res["failed_calls"], sum(not ok for p in PLANS for *_, ok in p))
        self.assertEqual(self.learned(db), live)
        self.assertEqual(res["projects"][0]["cwd"], self.repo)
        if client == "copilot-cli":
            self.assertEqual(res["sidechain_calls"], 2)
        again = json.loads(cli_process("import-history", "--client", client, "--json",
                                       env=child_env(home, db)).stdout)
        self.assertEqual((again["imported"], again["skipped"]), (0, 6))


class TestCodexFailureHint(HomeCase):
    """Codex 0.171's PostToolUse holds the output only: the exit code comes from the rollout the
    payload names (its item_completed event, written before the hook runs), so the hint after a
    failed command fires at that call."""

    def test_hint_after_a_failed_command_read_from_the_rollout(self):
        sid = "0199cccc-0000-7000-8000-000000000001"
        r = cli_process("remember", "project", "`cargo test` needs the db container",
                        "start it with docker compose up db first",
                        "--project", self.repo, env=self.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        cli_process("config", "holdout_percent", "0", env=self.env())
        rollout = os.path.join(self.home, ".codex", "sessions", "rollout-2026-09-20T10-00-00-x.jsonl")
        lines = [{"timestamp": "2026-09-20T10:00:00Z", "type": "session_meta",
                  "payload": {"id": sid, "cwd": self.repo}},
                 {"timestamp": "2026-09-20T10:00:01Z", "type": "response_item", "payload": {
                     "type": "function_call", "name": "exec_command", "call_id": "call_ok",
                     "arguments": json.dumps({"cmd": "cargo test"})}},
                 {"timestamp": "2026-09-20T10:00:02Z", "type": "event_msg", "payload": {
                     "type": "exec_command_end", "call_id": "call_ok", "exit_code": 0}},
                 {"timestamp": "2026-09-20T10:00:03Z", "type": "response_item", "payload": {
                     "type": "function_call", "name": "exec_command", "call_id": "call_bad",
                     "arguments": json.dumps({"cmd": "cargo test"})}},
                 {"timestamp": "2026-09-20T10:00:04Z", "type": "event_msg", "payload": {
                     "type": "item_completed", "thread_id": sid, "turn_id": "t1", "item": {
                         "type": "CommandExecution", "id": "call_bad", "command": [
                             "/bin/bash", "-c", "cargo test"], "status": "completed",
                         "aggregated_output": "test result: FAILED", "exit_code": 101}}}]
        write(rollout, "".join(json.dumps(x) + "\n" for x in lines))

        def post(uid):
            payload = {"session_id": sid, "turn_id": "t1", "transcript_path": rollout,
                       "cwd": self.repo, "hook_event_name": "PostToolUse", "model": "gpt-5",
                       "tool_name": "Bash", "tool_input": {"command": "cargo test"},
                       "tool_use_id": uid, "tool_response": "test result: FAILED. 3 passed"}
            r = cli_process("hook", "post-tool-use", input=json.dumps(payload).encode(),
                            text=False, env=self.env())
            self.assertEqual(r.returncode, 0, r.stderr)
            return r.stdout
        self.assertEqual(post("call_ok"), b"")
        out = json.loads(post("call_bad"))["hookSpecificOutput"]
        self.assertEqual(out["hookEventName"], "PostToolUse")
        self.assertIn("Memory about `cargo test`: `cargo test` needs the db container",
                      out["additionalContext"])
        self.assertEqual([k for k, in self.sql("SELECT kind FROM events WHERE session = ?"
                                               " AND kind LIKE 'tool%' ORDER BY id", (sid,))],
                         ["tool", "tool_fail"])
        # an exit code the rollout gets only after the hook ran: SessionEnd marks it, by its id
        late = [{"timestamp": "2026-09-20T10:00:05Z", "type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": "call_late",
            "arguments": json.dumps({"cmd": "cargo test"})}}]
        with open(rollout, "a") as f:
            f.write("".join(json.dumps(x) + "\n" for x in late))
        self.assertEqual(post("call_late"), b"")
        with open(rollout, "a") as f:
            f.write(json.dumps({"timestamp": "2026-09-20T10:00:06Z", "type": "event_msg",
                                "payload": {"type": "exec_command_end", "call_id": "call_late",
                                            "exit_code": 2}}) + "\n")
            f.write(json.dumps({"timestamp": "2026-09-20T10:00:06Z", "type": "response_item",
                                "payload": {"type": "function_call_output", "call_id": "call_late",
                                            "output": "Wall time: 1.2 seconds\nOutput:\nerror"}})
                    + "\n")
        r = cli_process("hook", "session-end", input=json.dumps({
            "session_id": sid, "cwd": self.repo, "transcript_path": rollout, "turn_id": "t1",
            "hook_event_name": "SessionEnd"}).encode(), text=False, env=self.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([k for k, in self.sql("SELECT kind FROM events WHERE session = ?"
                                               " AND kind LIKE 'tool%' ORDER BY id", (sid,))],
                         ["tool", "tool_fail", "tool_fail"])


class TestSetupRows(HomeCase):
    """setup's files for the new clients: the events and formats each client reads."""

    def plan(self, client, scope):
        results = instinct.setup(client, scope=scope, home=self.home, project_dir=self.repo)
        return {os.path.relpath(x["path"], self.home if scope == "user" else self.repo):
                json.loads(x["content"]) for x in results}

    def test_each_client_gets_its_own_hook_format(self):
        gem = self.plan("gemini-cli", "project")[".gemini/settings.json"]
        self.assertEqual(sorted(gem["hooks"]), ["AfterTool", "SessionEnd", "SessionStart"])
        self.assertIn("instinct", gem["mcpServers"])
        (h,) = gem["hooks"]["AfterTool"][0]["hooks"]
        self.assertEqual(h["timeout"], 10000)                      # milliseconds
        self.assertTrue(h["command"].endswith("hook post-tool-use --client gemini-cli"))
        cop = self.plan("copilot-cli", "user")
        self.assertEqual(cop[".copilot/hooks/instinct.json"]["version"], 1)
        (h,) = cop[".copilot/hooks/instinct.json"]["hooks"]["postToolUseFailure"]
        self.assertEqual((h["type"], h["timeoutSec"]), ("command", 10))
        self.assertTrue(h["bash"].endswith("hook post-tool-use-failure --client copilot-cli"))
        self.assertIn("instinct", cop[".copilot/mcp-config.json"]["mcpServers"])
        cur = self.plan("cursor", "project")
        self.assertEqual(sorted(cur[".cursor/hooks.json"]["hooks"]),
                         ["postToolUse", "postToolUseFailure", "sessionStart", "stop"])
        self.assertTrue(cur[".cursor/hooks.json"]["hooks"]["stop"][0]["command"].endswith(
            "hook stop --client cursor"))
        self.assertIn("instinct", cur[".cursor/mcp.json"]["mcpServers"])
        server = self.plan("gemini-cli", "user")[".gemini/settings.json"]["mcpServers"]["instinct"]
        self.assertNotIn("PYTHONPATH", server["env"])     # Gemini CLI refuses to pass it on
        self.assertEqual((server["args"][0], server["args"][-1]), ("-S", "serve"))
        for client in ("gemini-cli", "copilot-cli", "cursor"):       # all read back as ours
            for path, data in self.plan(client, "user").items():
                for groups in data.get("hooks", {}).values():
                    for g in groups:
                        for h in g.get("hooks", [g]):
                            self.assertTrue(instinct._Setup._is_ours(h), (client, h))

    def test_existing_cursor_hooks_and_a_second_write_round_trip(self):
        hooks = os.path.join(self.repo, ".cursor", "hooks.json")
        mine = ('{"version": 1, "hooks": {"afterFileEdit": [{"command": "./fmt.sh"}],\n'
                '  "stop": [{"command": "say done"}]}}\n')
        write(hooks, mine)
        for _ in range(2):
            r = cli_process("setup", "cursor", "--scope", "project", "--write",
                            env=child_env(self.home), cwd=self.repo)
            self.assertEqual(r.returncode, 0, r.stderr)
        data = json.loads(read(hooks))
        self.assertEqual(data["hooks"]["afterFileEdit"], [{"command": "./fmt.sh"}])
        self.assertEqual(data["hooks"]["stop"][0], {"command": "say done"})
        self.assertEqual(len(data["hooks"]["stop"]), 2)
        r = cli_process("setup", "cursor", "--scope", "project", "--remove",
                        env=child_env(self.home), cwd=self.repo)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(read(hooks), mine)


class TestRulesFiles(HomeCase):
    def test_export_gemini_and_copilot_write_their_files(self):
        store = instinct.InstinctStore(self.db)
        self.addCleanup(store.close)
        mined(store, "pref:test=uv run pytest", self.repo, 6)
        store.consolidate()
        store.cwd = self.repo
        for fmt, rel in (("gemini", "GEMINI.md"),
                         ("copilot", os.path.join(".github", "copilot-instructions.md"))):
            path = os.path.join(self.repo, rel)
            if fmt == "gemini":
                write(path, "# Team notes\n\nUse tabs.\n")
            r = store.export_rules(format=fmt, write=self.repo, project=self.repo)
            self.assertEqual(r["path"], path)
            text = read(path)
            self.assertIn("`uv run pytest`", text)
            self.assertIn("<!-- instinct:begin -->", text)
            if fmt == "gemini":
                self.assertTrue(text.startswith("# Team notes\n\nUse tabs.\n"))
            self.assertFalse(store.export_rules(format=fmt, write=self.repo,
                                                project=self.repo)["changed"])


if __name__ == "__main__":
    unittest.main()
