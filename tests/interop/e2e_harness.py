"""Drive a real coding-agent CLI against a scripted fake model, with instinct's hooks installed.

Test-only helpers for tests/test_e2e_clients.py (standard library only). Everything runs in one temp
dir: HOME (so `setup --write` and the client's own state land there), a git repository as the
project, a bin/ of stand-ins for `uv` and `ruff` (so planned commands never reach a network and
fail or pass as planned), and the fake model server on 127.0.0.1.

A plan is a list of (bash command, ok): the command the fake model asks for, and whether it is
meant to succeed. The harness checks that the client really saw that outcome (the tool_result it
sent back to the model), so the expected stored kind ('tool' / 'tool_fail') is not a guess.
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))   # the repository root
INSTINCT_PY = os.path.join(ROOT, "instinct.py")
sys.path.insert(0, HERE)
from fake_model import tool_id  # noqa: E402

# Stand-ins: a failing run when an argument names something "broken", a passing one otherwise.
_SHIMS = {
    "uv": 'case "$*" in *broken*) echo "1 failed, 4 passed"; exit 1;; esac\necho "5 passed"\n',
    "ruff": 'case "$*" in *broken*) echo "F401 unused import"; exit 1;; esac\necho "All checks passed!"\n',
    "pytest": 'echo "5 passed"\n',
}

# Environment of the client: nothing of the outer one but PATH and the locale, so a developer's
# INSTINCT_DB, CLAUDE_* or ANTHROPIC_* can never leak in. Non-loopback traffic goes to a dead proxy.
_QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1", "DISABLE_COST_WARNINGS": "1",
    "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
    "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
}


class Workspace:
    """A temp HOME + git project + shims; `setup_claude()`, then `run_claude()` per session."""

    def __init__(self, tmp, python=None):
        self.tmp = tmp
        self.python = python or sys.executable
        self.home = os.path.join(tmp, "home")
        self.repo = os.path.join(tmp, "project")
        self.bin = os.path.join(tmp, "bin")
        for d in (self.home, self.repo, self.bin):
            os.makedirs(d)
        for name, body in _SHIMS.items():
            path = os.path.join(self.bin, name)
            with open(path, "w") as f:
                f.write("#!/bin/sh\n" + body)
            os.chmod(path, 0o755)
        git = ["git", "-c", "user.email=e2e@example.invalid", "-c", "user.name=e2e",
               "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
        subprocess.run(git + ["init", "-q", self.repo], check=True, timeout=30)
        os.makedirs(os.path.join(self.repo, "tests"))
        for rel, text in (("README.md", "# demo\n"), ("app.py", "def add(a, b):\n    return a + b\n"),
                          ("tests/test_app.py", "from app import add\n\n\ndef test_add():\n"
                                                "    assert add(1, 2) == 3\n")):
            with open(os.path.join(self.repo, rel), "w") as f:
                f.write(text)
        subprocess.run(git + ["add", "-A"], cwd=self.repo, check=True, timeout=30)
        subprocess.run(git + ["commit", "-qm", "initial"], cwd=self.repo, check=True, timeout=30)
        self.db = os.path.join(self.home, ".instinct", "instinct.db")

    def base_env(self):
        env = {"PATH": self.bin + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
               "HOME": self.home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
               "TMPDIR": os.path.join(self.tmp, "t")}
        os.makedirs(env["TMPDIR"], exist_ok=True)
        return env

    def instinct(self, *args, env=None, stdin=None, check=True):
        """Run instinct.py as the user would (HOME = the temp home)."""
        e = self.base_env()
        e.update(env or {})
        p = subprocess.run([self.python, INSTINCT_PY, *args], cwd=self.repo, env=e, input=stdin,
                           capture_output=True, text=True, timeout=120)
        if check and p.returncode != 0:
            raise AssertionError(f"instinct {' '.join(args)} exited {p.returncode}: {p.stderr.strip()}")
        return p

    # --- Claude Code ------------------------------------------------------------------
    def setup_claude(self):
        """`instinct setup claude-code --write` (user scope): returns the settings it wrote."""
        self.instinct("setup", "claude-code", "--write")
        with open(os.path.join(self.home, ".claude", "settings.json"), encoding="utf-8") as f:
            return json.load(f)

    def run_claude(self, claude, fake, name, session_id, timeout=180):
        """One `claude -p` session playing plan `name`; returns (CompletedProcess, debug log text)."""
        env = self.base_env()
        env.update(_QUIET, ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="sk-ant-e2e-dummy-key",
                   IS_SANDBOX="1")
        debug = os.path.join(self.tmp, f"claude-debug-{name}.txt")
        p = subprocess.run([claude, "-p", f"E2E-SESSION {name}\nRun the project's checks.",
                            "--dangerously-skip-permissions", "--session-id", session_id,
                            "--max-turns", "60", "--debug-file", debug],
                           cwd=self.repo, env=env, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        text = ""
        if os.path.exists(debug):
            with open(debug, encoding="utf-8", errors="replace") as f:
                text = f.read()
        return p, text

    # --- Codex -----------------------------------------------------------------------------
    def setup_codex(self):
        """`instinct setup codex --write` (user scope): returns the hooks.json it wrote."""
        self.instinct("setup", "codex", "--write")
        with open(os.path.join(self.home, ".codex", "hooks.json"), encoding="utf-8") as f:
            return json.load(f)

    def codex_env(self):
        env = self.base_env()
        env.update(_QUIET, E2E_OPENAI_KEY="sk-e2e-dummy-key", CODEX_HOME=os.path.join(self.home, ".codex"))
        return env

    def trust_codex_hooks(self, codex, timeout=60):
        """Trust the hooks `setup` wrote, as the user's review in Codex's /hooks screen does.

        Codex runs no hook until its current hash is stored as trusted (config.toml
        `[hooks.state."<key>"] trusted_hash`). Done without a terminal through Codex's own
        app-server: `hooks/list` gives each hook's key and currentHash, `config/batchWrite`
        stores them. Returns {hook key: trust status} as listed afterwards.
        """
        p = subprocess.Popen([codex, "app-server"], cwd=self.repo, env=self.codex_env(), text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        import threading
        killer = threading.Timer(timeout, p.kill)
        killer.start()

        def call(i, method, params):
            p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
            p.stdin.flush()
            for line in p.stdout:
                msg = json.loads(line)
                if msg.get("id") == i:
                    if "error" in msg:
                        raise AssertionError(f"codex app-server {method}: {msg['error']}")
                    return msg["result"]
            raise AssertionError(f"codex app-server closed before answering {method}")

        def listed():
            return [h for d in call(next(ids), "hooks/list", {"cwds": [self.repo]})["data"] for h in d["hooks"]]
        ids = iter(range(1, 100))
        try:
            call(next(ids), "initialize", {"clientInfo": {"name": "instinct-e2e", "version": "1"}})
            p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "initialized"}) + "\n")
            state = {h["key"]: {"trusted_hash": h["currentHash"]} for h in listed() if not h.get("isManaged")}
            call(next(ids), "config/batchWrite",
                 {"edits": [{"keyPath": "hooks.state", "value": state, "mergeStrategy": "upsert"}]})
            return {h["key"]: h["trustStatus"] for h in listed()}
        finally:
            killer.cancel()
            p.stdin.close()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            p.stdout.close()

    def run_codex(self, codex, fake, name, timeout=180):
        """One `codex exec` session playing plan `name` against the fake Responses API.

        The fake provider is given with -c overrides, so the config.toml `setup` wrote stays as
        it wrote it (plus the hooks' trust, see trust_codex_hooks).
        """
        provider = ('{ name = "e2e", base_url = "%s/v1", wire_api = "responses", env_key = "E2E_OPENAI_KEY",'
                    ' request_max_retries = 0, stream_max_retries = 0 }' % fake.url)
        return subprocess.run([codex, "exec", "--dangerously-bypass-approvals-and-sandbox",
                               "--skip-git-repo-check", "--json",
                               "-c", 'model="gpt-e2e"', "-c", 'model_provider="e2e"',
                               "-c", f"model_providers.e2e={provider}",
                               "-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false",
                               f"E2E-SESSION {name}\nRun the project's checks."],
                              cwd=self.repo, env=self.codex_env(), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    # --- Gemini CLI ---------------------------------------------------------------------
    def setup_gemini(self):
        """`instinct setup gemini-cli --write` (user scope), then the API-key login Gemini CLI
        needs to talk to GOOGLE_GEMINI_BASE_URL: returns the settings setup wrote."""
        self.instinct("setup", "gemini-cli", "--write")
        path = os.path.join(self.home, ".gemini", "settings.json")
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(dict(data, security={"auth": {"selectedType": "gemini-api-key"}}), f, indent=2)
        return data

    def run_gemini(self, gemini, fake, name, timeout=180):
        """One `gemini -p` session (JSON output, every tool approved) playing plan `name`."""
        env = self.base_env()
        node = os.environ.get("INSTINCT_NODE")
        if node:
            env["PATH"] = os.path.dirname(node) + os.pathsep + env["PATH"]
        env.update(_QUIET, GOOGLE_GEMINI_BASE_URL=fake.url, GEMINI_API_KEY="e2e-dummy-key",
                   GEMINI_CLI_TRUST_WORKSPACE="true", GEMINI_CLI_NO_RELAUNCH="1", NO_COLOR="1")
        return subprocess.run([gemini, "-p", f"E2E-SESSION {name}\nRun the project's checks.",
                               "-m", "gemini-2.5-flash", "--yolo", "--output-format", "json"],
                              cwd=self.repo, env=env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    # --- Copilot CLI --------------------------------------------------------------------
    def run_copilot(self, copilot, fake, name, timeout=180):
        """One `copilot -p` session playing plan `name`, its model the fake Anthropic API through
        Copilot's own-provider mode (BYOK, offline: no GitHub login); -> (process, session id)."""
        env = self.base_env()
        env.update(_QUIET, COPILOT_PROVIDER_BASE_URL=fake.url, COPILOT_PROVIDER_TYPE="anthropic",
                   COPILOT_PROVIDER_API_KEY="e2e-dummy-key", COPILOT_MODEL="claude-sonnet-4.5",
                   COPILOT_OFFLINE="true", COPILOT_ALLOW_ALL="true", COPILOT_AUTO_UPDATE="false",
                   NO_COLOR="1")
        p = subprocess.run([copilot, "-p", f"E2E-SESSION {name}\nRun the project's checks.",
                            "--allow-all-tools"], cwd=self.repo, env=env, capture_output=True,
                           text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        m = re.search(r"--resume=([0-9a-f-]{36})", p.stdout + p.stderr)
        return p, m.group(1) if m else None

    # --- what instinct stored -----------------------------------------------------------
    def _query(self, sql, args=()):
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        try:
            return conn.execute(sql, args).fetchall()
        finally:
            conn.close()

    def stored_calls(self, session_id, db=None):
        """[(kind, data)] of one session's captured tool calls, in stored order."""
        ws = self if db is None else _Db(db)
        return [tuple(r) for r in ws._query(
            "SELECT kind, data FROM events WHERE session = ? AND kind IN ('tool', 'tool_fail')"
            " ORDER BY id", (session_id,))]

    def mined_sessions(self):
        return dict(self._query("SELECT session, last_id FROM mined_sessions"))

    def last_call_ids(self):
        return dict(self._query("SELECT session, max(id) FROM events WHERE kind IN ('tool', 'tool_fail')"
                                " GROUP BY session"))

    def mining_observations(self):
        """[(session, pattern)] of every +1 that mining gave a pattern (observe events from hooks)."""
        return [tuple(r) for r in self._query(
            "SELECT session, pattern FROM events WHERE kind = 'observe' AND source LIKE 'hooks%'"
            " AND session != '' ORDER BY id")]

    def expected_calls(self, plan, session_id, client="claude-code"):
        """For each call of `plan`, the [(kind, data)] instinct stores of it, fed in order through
        its own hook command (one shell call may hold several command shapes, or none worth keeping).

        A separate store, fed the client's payloads one by one (Claude Code: PostToolUse or
        PostToolUseFailure; Codex 0.171: PostToolUse only, `tool_response` a string, no exit
        code): what capture keeps of each call, independent of the client's timing.
        """
        ref_home = os.path.join(self.tmp, "ref-home")
        os.makedirs(ref_home, exist_ok=True)
        ref_db = os.path.join(self.tmp, f"ref-{session_id}.db")
        per_call = []
        for i, (cmd, ok) in enumerate(plan):
            payload = {"session_id": session_id, "cwd": self.repo, "permission_mode": "bypassPermissions",
                       "transcript_path": os.path.join(ref_home, "t.jsonl"), "tool_name": "Bash",
                       "tool_input": {"command": cmd}, "tool_use_id": tool_id("ref", i),
                       "hook_event_name": "PostToolUse"}
            event = "post-tool-use"
            if client == "codex":
                payload.update(turn_id="ref-turn", model="gpt-e2e", tool_response="")
            elif ok:
                payload["tool_input"]["description"] = f"planned step {i + 1}"
                payload["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}
            else:
                payload["tool_input"]["description"] = f"planned step {i + 1}"
                payload.update(hook_event_name="PostToolUseFailure", error="Exit code 1", is_interrupt=False)
                event = "post-tool-use-failure"
            self.instinct("hook", event, env={"INSTINCT_DB": ref_db, "HOME": ref_home}, stdin=json.dumps(payload))
            stored = self.stored_calls(session_id, db=ref_db) if os.path.exists(ref_db) else []
            per_call.append(stored[sum(map(len, per_call)):])
        return per_call

    def briefing_now(self):
        """The SessionStart additionalContext a new session would get now (from a copy of the store)."""
        if not os.path.exists(self.db):
            return ""
        probe = os.path.join(self.tmp, "probe")
        shutil.rmtree(probe, ignore_errors=True)
        os.makedirs(os.path.join(probe, "home"))
        copy = os.path.join(probe, "instinct.db")
        src = sqlite3.connect(self.db, timeout=30)
        dst = sqlite3.connect(copy)
        try:
            src.backup(dst)
        finally:
            src.close()
            dst.close()
        payload = {"session_id": "e2e-probe", "cwd": self.repo, "hook_event_name": "SessionStart",
                   "source": "startup"}
        p = self.instinct("hook", "session-start", env={"INSTINCT_DB": copy, "HOME": os.path.join(probe, "home")},
                          stdin=json.dumps(payload))
        out = p.stdout.strip()
        if not out:
            return ""
        if out.startswith("{"):
            return json.loads(out).get("hookSpecificOutput", {}).get("additionalContext", "")
        return out


class _Db(Workspace):
    def __init__(self, db):                 # only for _query on another file
        self.db = db


_TS = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z ")


def hook_gaps_ms(debug_text):
    """Claude Code's debug log -> [ms] from each Bash tool's end to its (synchronous) hook's output.

    Uses the `tool_dispatch_end` line and the next `Hook output` line (newer clients log both);
    [] when the log does not have them. Only a measurement for the report, never asserted.
    """
    import datetime
    gaps, end = [], None
    for line in debug_text.splitlines():
        m = _TS.match(line)
        if not m:
            continue
        t = datetime.datetime.fromisoformat(m.group(1)).timestamp()
        if "tool_dispatch_end tool=Bash" in line:
            end = t
        elif end is not None and "Hook output does not start with" in line:
            gaps.append(round((t - end) * 1000, 1))
            end = None
    return gaps
