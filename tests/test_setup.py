"""Tests for `instinct setup <client>`: the capture entries it writes (issue 11) and the safety of
users' config files (issue 14): exact merges or refusals, links, modes, backups, odd content."""
import json
import os
import shlex
import sqlite3
import stat
import subprocess
import sys
import tempfile
import unittest

import instinct
from tests.helpers import (INITIALIZED, ROOT, child_env, init_msg, label, make_repo, read, req,  # noqa: F401
                           run_instinct, serve_once, setUpModule, temp_dir, write)

HAS_TOMLLIB = sys.version_info >= (3, 11)


class _SetupEnv(unittest.TestCase):
    def setUp(self):
        self.tmp = temp_dir(self)
        self.home = os.path.join(self.tmp, "home")
        self.repo = make_repo(os.path.join(self.tmp, "repo"))
        os.makedirs(self.home)
        self.db = os.path.join(self.tmp, "pinned.db")

    def setup_(self, client, write=True, scope="user", db=None, python="/usr/bin/python3"):
        return instinct.setup(client, write=write, scope=scope, home=self.home, project_dir=self.repo,
                              python=python, **({"db": db} if db else {}))

    def cli(self, *args, env=None):
        return run_instinct(*args, env=child_env(self.home, **(env or {})), cwd=self.repo)

    def path(self, *parts):
        return os.path.join(self.home, *parts)

    def assertRefused(self, client, path, reason):
        """`setup client --write` (a real process) refuses with one error line naming `reason`,
        prints the lines to add by hand, leaves the file byte-exact and writes no backup."""
        before = read(path, "rb") if os.path.isfile(path) else None
        bak = read(path + ".bak", "rb") if os.path.isfile(path + ".bak") else None
        r = self.cli("setup", client, "--write")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        first = r.stderr.splitlines()[0]
        self.assertTrue(first.startswith("instinct: error: cannot merge into " + path)
                        or first.startswith("instinct: error: " + path), first)
        self.assertIn(reason, first)
        if os.path.isfile(path) or before is not None:
            self.assertEqual(read(path, "rb"), before)
        self.assertEqual(read(path + ".bak", "rb") if os.path.isfile(path + ".bak") else None, bak)
        return r.stderr


class TestCaptureEntries(_SetupEnv):
    """Issue 11: the hook entries are synchronous, in the shell form, for the events that matter."""

    def hooks(self, client="claude-code", db=None):
        r = self.setup_(client, write=False, db=db, python=sys.executable)
        return json.loads(r[1]["content"])["hooks"]

    def test_claude_code_entries_are_sync_shell_form(self):
        hooks = self.hooks()
        self.assertEqual(set(hooks), {"SessionStart", "UserPromptSubmit", "PreToolUse",
                                      "PostToolUse", "PostToolUseFailure", "SessionEnd"})
        here = os.path.dirname(os.path.abspath(instinct.__file__))
        for name, event, timeout, matcher in (("SessionStart", "session-start", 30, None),
                                              ("UserPromptSubmit", "user-prompt-submit", 10, None),
                                              ("PreToolUse", "pre-tool-use", 5, instinct._Setup.HINT_MATCHER),
                                              ("PostToolUse", "post-tool-use", 10, "*"),
                                              ("PostToolUseFailure", "post-tool-use-failure", 10, "*"),
                                              ("SessionEnd", "session-end", 30, None)):
            with self.subTest(event=name):
                (group,) = hooks[name]
                self.assertEqual(group.get("matcher"), matcher)
                (h,) = group["hooks"]
                self.assertEqual(set(h), {"type", "command", "timeout"})    # no async, no args
                self.assertEqual(h["timeout"], timeout)
                self.assertEqual(shlex.split(h["command"]),
                                 instinct._Setup.launch_args(sys.executable, here, "hook", event))

    def test_shell_form_really_records_through_sh(self):
        """The exact string Claude Code hands to its shell records the call (and SessionEnd mines)."""
        hooks = self.hooks()
        env = {**os.environ, "INSTINCT_DB": self.db}
        payload = {"session_id": "s1", "cwd": self.repo, "hook_event_name": "PostToolUse",
                   "tool_name": "Bash", "tool_input": {"command": "pytest -q"}, "tool_response": {}}
        for name in ("PostToolUse", "SessionEnd"):
            p = subprocess.run(hooks[name][0]["hooks"][0]["command"], shell=True, cwd=self.tmp, env=env,
                               input=json.dumps(dict(payload, hook_event_name=name)).encode(),
                               capture_output=True, timeout=60)
            self.assertEqual((p.returncode, p.stderr), (0, b""))
        conn = sqlite3.connect(self.db)
        try:
            self.assertEqual([label(d) for d, in conn.execute(
                "SELECT data FROM events WHERE kind='tool'")], ["Bash(pytest)"])
        finally:
            conn.close()

    def test_rerun_removes_our_old_stop_and_async_entries_keeps_users(self):
        old_ours = {"type": "command", "command": "/usr/bin/python3", "async": True, "timeout": 30,
                    "args": instinct._Setup.launch_args("/usr/bin/python3", "/opt/old", "hook", "stop")[1:]}
        old_post = {"type": "command", "command": "/usr/bin/python3", "async": True, "timeout": 10,
                    "args": instinct._Setup.launch_args("/usr/bin/python3", "/opt/old", "hook", "post-tool-use")[1:]}
        mine = {"type": "command", "command": "/home/u/instinct-research/lint.sh"}
        notify = {"type": "command", "command": "notify-send done"}
        settings = self.path(".claude", "settings.json")
        write(settings, json.dumps({"hooks": {
            "Stop": [{"hooks": [old_ours]}, {"hooks": [notify]}],
            "PostToolUse": [{"matcher": "*", "hooks": [old_post, mine]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                                                           "command": "python3 ~/instinct/guard.py hook"}]}]}}))
        self.setup_("claude-code")
        hooks = json.loads(read(settings))["hooks"]
        self.assertEqual(hooks["Stop"], [{"hooks": [notify]}])             # ours gone, theirs kept
        self.assertEqual(hooks["PostToolUse"][0], {"matcher": "*", "hooks": [mine]})
        self.assertEqual(len(hooks["PostToolUse"]), 2)
        self.assertNotIn("async", hooks["PostToolUse"][1]["hooks"][0])
        self.assertEqual(hooks["PreToolUse"][0]["hooks"][0]["command"], "python3 ~/instinct/guard.py hook")
        # an old config holding only our Stop entry loses the event entirely; a re-run is a no-op
        write(settings, json.dumps({"hooks": {"Stop": [{"hooks": [old_ours]}]}}))
        self.setup_("claude-code")
        self.assertNotIn("Stop", json.loads(read(settings))["hooks"])
        self.assertFalse(any(r["changed"] for r in self.setup_("claude-code")))

    def test_users_hook_whose_path_contains_instinct_is_kept(self):
        """Issue 14: only instinct's own entries are recognised, not any path containing 'instinct'."""
        theirs = [{"type": "command", "command": "/home/u/instinct-research/lint.sh"},
                  {"type": "command", "command": "python3", "args": ["/opt/instinct/hooks.py", "post"]},
                  {"type": "command", "command": "instinct-notify hook post-tool-use"},
                  {"type": "command", "command": "python3 -S -c 'print(1)' hook post-tool-use"}]
        settings = self.path(".claude", "settings.json")
        write(settings, json.dumps({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": theirs}],
                                               "SessionEnd": [{"hooks": theirs[:1]}]}}))
        self.setup_("claude-code")
        hooks = json.loads(read(settings))["hooks"]
        self.assertEqual(hooks["PostToolUse"][0], {"matcher": "Bash", "hooks": theirs})
        self.assertEqual(hooks["SessionEnd"][0], {"hooks": theirs[:1]})
        self.assertEqual(len(hooks["PostToolUse"]), 2)
        for h in theirs:
            self.assertFalse(instinct._Setup.is_ours(h), h)

    def test_codex_events_db_and_trust_note(self):
        hooks = self.hooks("codex", db=self.db)
        self.assertEqual(set(hooks), {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                                      "SessionEnd"})
        self.assertLessEqual(hooks["SessionEnd"][0]["hooks"][0]["timeout"], 3)   # Codex's cap
        for name, (group,) in hooks.items():
            argv = shlex.split(group["hooks"][0]["command"])
            self.assertEqual(argv[-2:], ["--db", self.db], name)
        # the CLI: INSTINCT_DB reaches the server's env and every hook; the trust step is printed
        for extra in ((), ("--write",)):
            r = self.cli("setup", "codex", *extra, env={"INSTINCT_DB": self.db})
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("/hooks", r.stdout)
            self.assertIn("trust", r.stdout)
            self.assertIn("instinct import-history", r.stdout)
        toml = read(self.path(".codex", "config.toml"))
        self.assertIn(f'INSTINCT_DB = "{self.db}"', toml)
        if HAS_TOMLLIB:
            import tomllib
            self.assertEqual(tomllib.loads(toml)["mcp_servers"]["instinct"]["env"]["INSTINCT_DB"], self.db)
        hooks = json.loads(read(self.path(".codex", "hooks.json")))["hooks"]
        # a hook started with a clean environment (as Codex may) still writes the pinned store
        cmd = hooks["PostToolUse"][0]["hooks"][0]["command"]
        env = {k: v for k, v in os.environ.items() if k != "INSTINCT_DB"}
        payload = {"session_id": "c1", "cwd": self.repo, "hook_event_name": "PostToolUse",
                   "tool_name": "shell", "tool_input": {"command": ["bash", "-lc", "cargo test"]}}
        p = subprocess.run(cmd, shell=True, input=json.dumps(payload).encode(), env=env, cwd=self.tmp,
                           capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0)
        conn = sqlite3.connect(self.db)
        try:
            self.assertEqual(conn.execute("SELECT count(*) FROM events WHERE kind='tool'").fetchone()[0], 1)
        finally:
            conn.close()
        r = self.cli("setup", "codex", "--scope", "project")
        self.assertIn("trust_level", r.stdout)

    def test_all_tools_flag_lists_every_tool_through_the_written_server_entry(self):
        for flag, want in ((("--all-tools",), "all"), ((), None)):
            r = self.cli("setup", "cursor", "--json", *flag)
            self.assertEqual(r.returncode, 0, r.stderr)
            env = json.loads(json.loads(r.stdout)[0]["content"])["mcpServers"]["instinct"]["env"]
            self.assertEqual(env.get("INSTINCT_MCP_TOOLS"), want)
            # the server started with that entry's env lists all tools, or the lean set
            e = {k: v for k, v in os.environ.items() if k != "INSTINCT_MCP_TOOLS"}
            e.update(env, INSTINCT_DB=self.db)
            replies, p = serve_once([init_msg("2025-06-18"), INITIALIZED, req(2, "tools/list")], env=e,
                                    cwd=self.tmp, argv=[sys.executable, "-m", "instinct", "serve"])
            tools = replies[-1]["result"]["tools"]
            self.assertEqual(len(tools) == len(instinct.OPERATIONS), want == "all", len(tools))

    def test_claude_code_setup_points_to_the_history_import(self):
        r = self.cli("setup", "claude-code")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("instinct import-history", r.stdout)

    def test_every_server_entry_pins_the_store(self):
        for client in instinct._Setup.CLIENTS:
            with self.subTest(client=client):
                r = self.setup_(client, write=False, db=self.db)
                text = r[0]["content"]
                self.assertIn("INSTINCT_DB", text)
                self.assertIn(self.db, text)
                unpinned = self.setup_(client, write=False)
                self.assertNotIn("INSTINCT_DB", unpinned[0]["content"])
                if client == "claude-code":
                    for (g,) in json.loads(r[1]["content"])["hooks"].values():
                        self.assertEqual(shlex.split(g["hooks"][0]["command"])[-2:], ["--db", self.db])
        r = self.cli("setup", "cursor", "--db", "rel.db")
        self.assertIn(json.dumps(os.path.join(self.repo, "rel.db")), r.stdout)   # made absolute


class TestUsersFiles(_SetupEnv):
    """Issue 14: a user's config is merged exactly or refused with the lines to paste."""

    def test_symlinked_config_is_written_through_the_link(self):
        real = os.path.join(self.tmp, "dotfiles", "mcp.json")
        write(real, json.dumps({"mcpServers": {"x": {"command": "y"}}}))
        link = self.path(".cursor", "mcp.json")
        os.makedirs(os.path.dirname(link))
        os.symlink(real, link)
        r = self.cli("setup", "cursor", "--write")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.islink(link))
        self.assertEqual(os.readlink(link), real)
        data = json.loads(read(real))
        self.assertEqual(set(data["mcpServers"]), {"x", "instinct"})
        self.assertEqual(json.loads(read(link + ".bak")), {"mcpServers": {"x": {"command": "y"}}})

    def test_read_only_config_is_refused(self):
        path = self.path(".cursor", "mcp.json")
        write(path, "{}")
        os.chmod(path, 0o444)
        out = self.assertRefused("cursor", path, "read-only")
        self.assertIn('"instinct"', out)                    # the entry to add by hand
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o444)

    def test_non_round_trippable_json_is_refused(self):
        path = self.path(".cursor", "mcp.json")
        for text, why in (('{"limit": 1e400}', "1e400"), ('{"x": 1e-400}', "1e-400"),
                          ('{"x": NaN}', "NaN"), ('{"x": Infinity}', "Infinity"),
                          ('{"a": 1, "a": 2}', "twice"), ('{"k": "\\ud800"}', "surrogate"),
                          ('{"mcpServers": {"x": 1}', "not valid JSON"), ("[1, 2]", "JSON object")):
            with self.subTest(text=text):
                write(path, text)
                self.assertRefused("cursor", path, why)

    def test_undecodable_or_odd_files_give_one_line_errors(self):
        path = self.path(".cursor", "mcp.json")
        write(path, b'{"name": "caf\xe9"}')
        self.assertRefused("cursor", path, "not UTF-8")
        os.remove(path)
        os.makedirs(path)
        r = self.cli("setup", "cursor", "--write")
        self.assertEqual(r.returncode, 2)
        self.assertNotIn("Traceback", r.stderr)
        self.assertIn("is a directory", r.stderr.splitlines()[0])
        r = self.cli("setup", "cursor")                     # printing fails the same way
        self.assertIn("is a directory", r.stderr)
        self.assertTrue(os.path.isdir(path))

    def test_backup_keeps_mode_and_is_only_announced_when_made(self):
        path = self.path(".claude.json")
        write(path, json.dumps({"primaryApiKey": "sk-secret", "projects": {}}))
        os.chmod(path, 0o600)
        r = self.cli("setup", "claude-code", "--write")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(path + ".bak").st_mode), 0o600)
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        lines = r.stdout.splitlines()
        self.assertIn(f"wrote {path} (previous version in {path}.bak)", lines)
        settings = self.path(".claude", "settings.json")
        self.assertIn(f"wrote {settings}", lines)          # a new file: no backup, none announced
        self.assertFalse(os.path.exists(settings + ".bak"))
        # issue 21: a second backup gets its own name; the first is never overwritten
        first = read(path + ".bak")
        write(path, json.dumps({"primaryApiKey": "sk-other"}))
        os.chmod(path, 0o600)
        r = self.cli("setup", "claude-code", "--write")
        self.assertIn(f"wrote {path} (previous version in {path}.bak.2)", r.stdout.splitlines())
        self.assertEqual(read(path + ".bak"), first)
        self.assertEqual(stat.S_IMODE(os.stat(path + ".bak.2").st_mode), 0o600)
        self.assertIn("sk-other", read(path + ".bak.2"))

    def test_unchanged_json_keeps_users_layout(self):
        path = self.path(".cursor", "mcp.json")
        self.setup_("cursor")
        compact = json.dumps(json.loads(read(path)), separators=(",", ":"))
        write(path, compact)
        self.assertFalse(self.setup_("cursor")[0]["changed"])
        self.assertEqual(read(path), compact)


class TestRulesFileFence(unittest.TestCase):
    def test_markers_quoted_in_a_fence_are_left_alone(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, ".git"))
            store = instinct.InstinctStore(os.path.join(tmp, "t.db"), cwd=tmp)
            self.addCleanup(store.close)
            for _ in range(10):                    # a rule to write (none: nothing is written)
                store.observe("pref:tabs")
            store.consolidate()
            example = ("# Notes\n\ninstinct writes its block like this:\n\n```markdown\n"
                       "<!-- instinct:begin -->\n(learned habits)\n<!-- instinct:end -->\n```\n\n"
                       "~~~~\n<!-- instinct:begin -->\n~~~\n~~~~\n")
            path = os.path.join(tmp, "CLAUDE.md")
            write(path, example)
            first = store.export_rules(format="claude", write=path)
            self.assertTrue(first["changed"])
            text = read(path)
            self.assertTrue(text.startswith(example))
            self.assertEqual(text.count("<!-- instinct:begin -->"), 3)
            self.assertFalse(store.export_rules(format="claude", write=path)["changed"])
            # a fence left open: what follows it is text, so exporting twice still adds one block
            write(path, "```\nunclosed example\n")
            store.export_rules(format="claude", write=path)
            store.export_rules(format="claude", write=path)
            self.assertEqual(read(path).count("<!-- instinct:begin -->"), 1)


if __name__ == "__main__":
    unittest.main()
