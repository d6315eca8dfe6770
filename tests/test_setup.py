"""Tests for `instinct setup <client>`: the capture entries it writes (issue 11), the safety of
users' config files (issue 14): exact merges or refusals, links, modes, backups, odd content;
every client printed and written idempotently (issue 4); and removal (issues 19 and 21):
`setup --remove` takes out exactly what setup wrote, backups are never overwritten, `--scope` is
honoured or refused (a project's shared files name no path of this machine), Codex's TOML and
Goose's YAML are appended to or pasted by hand (never edited in place), and a hook command never
breaks the agent once instinct is gone.
Run: python3 -m unittest -v tests.test_setup
"""
import json
import os
import shlex
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import instinct
from tests.helpers import (INITIALIZED, INSTINCT_PY, ROOT, HookCase, child_env, cli_process,
                           init_msg, label, make_repo, read, req, serve_once, setUpModule,
                           temp_dir, write)


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

    def cli_process(self, *args, env=None, cwd=None):
        return cli_process(*args, env=child_env(self.home, **(env or {})), cwd=cwd or self.repo)

    def ok(self, *args, **kw):
        r = self.cli_process(*args, **kw)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        return r

    def paths(self, client, scope="user"):
        r = self.ok("setup", client, "--scope", scope, "--json")
        return [x["path"] for x in json.loads(r.stdout)]

    def snapshot(self):
        """Every file under the home and the project (not .git), with its bytes."""
        out = {}
        for top in (self.home, self.repo):
            for d, dirs, files in os.walk(top):
                dirs[:] = [x for x in dirs if x != ".git"]
                for f in files:
                    out[os.path.join(d, f)] = read(os.path.join(d, f), "rb")
        return out

    def configs(self, snap):
        return {p: b for p, b in snap.items() if ".bak" not in os.path.basename(p)}

    def path(self, *parts):
        return os.path.join(self.home, *parts)

    def assertRefused(self, client, path, reason):
        """`setup client --write` (a real process) refuses with one error line naming `reason`,
        prints the lines to add by hand, leaves the file byte-exact and writes no backup."""
        before = read(path, "rb") if os.path.isfile(path) else None
        bak = read(path + ".bak", "rb") if os.path.isfile(path + ".bak") else None
        r = self.cli_process("setup", client, "--write")
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
                                 instinct._Setup._launch_args(sys.executable, here, "hook", event))

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
                    "args": instinct._Setup._launch_args("/usr/bin/python3", "/opt/old", "hook", "stop")[1:]}
        old_post = {"type": "command", "command": "/usr/bin/python3", "async": True, "timeout": 10,
                    "args": instinct._Setup._launch_args("/usr/bin/python3", "/opt/old", "hook", "post-tool-use")[1:]}
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
            self.assertFalse(instinct._Setup._is_ours(h), h)

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
            r = self.cli_process("setup", "codex", *extra, env={"INSTINCT_DB": self.db})
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
        r = self.cli_process("setup", "codex", "--scope", "project")
        self.assertIn("trust_level", r.stdout)

    def test_all_tools_flag_lists_every_tool_through_the_written_server_entry(self):
        for flag, want in ((("--all-tools",), "all"), ((), None)):
            r = self.cli_process("setup", "cursor", "--json", *flag)
            self.assertEqual(r.returncode, 0, r.stderr)
            (change,) = json.loads(r.stdout)[0]["changes"]          # the entry, not the file
            self.assertEqual((change["op"], change["key"]), ("add", "mcpServers.instinct"))
            env = change["value"]["env"]
            self.assertEqual(env.get("INSTINCT_MCP_TOOLS"), want)
            # the server started with that entry's env lists all tools, or the lean set
            e = {k: v for k, v in os.environ.items() if k != "INSTINCT_MCP_TOOLS"}
            e.update(env, INSTINCT_DB=self.db)
            replies, p = serve_once([init_msg("2025-06-18"), INITIALIZED, req(2, "tools/list")], env=e,
                                    cwd=self.tmp, argv=[sys.executable, "-m", "instinct", "serve"])
            tools = replies[-1]["result"]["tools"]
            self.assertEqual(len(tools) == len(instinct.OPERATIONS), want == "all", len(tools))

    def test_claude_code_setup_points_to_the_history_import(self):
        r = self.cli_process("setup", "claude-code")
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
        r = self.cli_process("setup", "cursor", "--db", "rel.db")
        self.assertIn(json.dumps(os.path.join(self.repo, "rel.db")), r.stdout)   # made absolute


class TestUsersFiles(_SetupEnv):
    """Issue 14: a user's config is merged exactly or refused with the lines to paste."""

    def test_symlinked_config_is_written_through_the_link(self):
        real = os.path.join(self.tmp, "dotfiles", "mcp.json")
        write(real, json.dumps({"mcpServers": {"x": {"command": "y"}}}))
        link = self.path(".cursor", "mcp.json")
        os.makedirs(os.path.dirname(link))
        os.symlink(real, link)
        r = self.cli_process("setup", "cursor", "--write")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.islink(link))
        self.assertEqual(os.readlink(link), real)
        self.assertIn(f"wrote {link} (a link: edited {real}) (previous version in ", r.stdout)
        data = json.loads(read(real))
        self.assertEqual(set(data["mcpServers"]), {"x", "instinct"})
        self.assertEqual(os.listdir(os.path.dirname(real)), ["mcp.json"])     # no backup there
        self.assertEqual(json.loads(read(self.path(".instinct", "setup", "1-mcp.json.bak"))),
                         {"mcpServers": {"x": {"command": "y"}}})
        # removed: the target gets its bytes back, the link stays (a lone entry too: never deleted)
        self.ok("setup", "cursor", "--remove")
        self.assertEqual(read(real), json.dumps({"mcpServers": {"x": {"command": "y"}}}))
        write(real, "")
        self.ok("setup", "cursor", "--write")
        self.ok("setup", "cursor", "--remove")
        self.assertEqual((os.readlink(link), read(real)), (real, ""))

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
        r = self.cli_process("setup", "cursor", "--write")
        self.assertEqual(r.returncode, 2)
        self.assertNotIn("Traceback", r.stderr)
        self.assertIn("is a directory", r.stderr.splitlines()[0])
        r = self.cli_process("setup", "cursor")                     # printing fails the same way
        self.assertIn("is a directory", r.stderr)
        self.assertTrue(os.path.isdir(path))

    def test_backup_is_private_in_the_store_folder_and_only_announced_when_made(self):
        path, state = self.path(".claude.json"), self.path(".instinct", "setup")
        write(path, json.dumps({"primaryApiKey": "sk-secret", "projects": {}}))
        os.chmod(path, 0o600)
        r = self.cli_process("setup", "claude-code", "--write")
        self.assertEqual(r.returncode, 0, r.stderr)
        first = os.path.join(state, "1-claude.json.bak")
        self.assertEqual(stat.S_IMODE(os.stat(first).st_mode), 0o600)
        self.assertEqual(stat.S_IMODE(os.stat(state).st_mode), 0o700)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(state)).st_mode), 0o700)
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        lines = r.stdout.splitlines()
        self.assertIn(f"wrote {path} (previous version in {first})", lines)
        settings = self.path(".claude", "settings.json")
        self.assertIn(f"wrote {settings}", lines)          # a new file: no backup, none announced
        self.assertEqual(sorted(os.listdir(state)), ["1-claude.json.bak", "manifest.json"])
        self.assertEqual(sorted(os.listdir(self.home)), [".claude", ".claude.json", ".instinct"])
        # issue 21: a second backup gets its own name; the first is never overwritten
        before = read(first)
        write(path, json.dumps({"primaryApiKey": "sk-other"}))
        os.chmod(path, 0o600)
        r = self.cli_process("setup", "claude-code", "--write")
        second = os.path.join(state, "2-claude.json.bak")
        self.assertIn(f"wrote {path} (previous version in {second})", r.stdout.splitlines())
        self.assertEqual(read(first), before)
        self.assertEqual(stat.S_IMODE(os.stat(second).st_mode), 0o600)
        self.assertIn("sk-other", read(second))

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


# what a user already has in each client's files (odd layouts on purpose), by file name
# --- setup --remove, --scope, text configs, a hook once instinct is gone (issues 19, 21) ----
PLANTED = {
    ".claude.json": '{"projects":{"/w":{"allowedTools":[]}},\n "mcpServers":{"mine":{"command":"m"}}}',
    "settings.json": ('{\n    "model": "opus",\n    "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": '
                      '[{"type": "command", "command": "my-lint"}]}]}\n}\n'),
    ".mcp.json": '{"mcpServers": {"team": {"command": "t", "args": []}}}\n',
    "mcp.json": '{"servers": {"x": {"command": "y"}}, "inputs": []}',
    "config.toml": 'model = "o3"  # mine\n\n[profiles.x]\nmodel = "m"\n',
    "mcp_config.json": '{"mcpServers":{}}',
    "config.yaml": "GOOSE_MODEL: gpt\nGOOSE_PROVIDER: openai  # mine\n",
    "hooks.json": '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send"}]}]}}',
    "mcp-config.json": '{"mcpServers": {"gh": {"type": "http", "url": "https://x"}}}',
    "instinct.json": '{"version": 1, "hooks": {"sessionEnd": [{"type": "command", "bash": "log"}]}}',
}


class TestRemove(_SetupEnv):
    def round_trip(self, client, scope, planted):
        paths = self.paths(client, scope)
        for p in paths:
            if planted:
                write(p, PLANTED[os.path.basename(p)])
        before = self.configs(self.snapshot())
        self.ok("setup", client, "--scope", scope, "--write")
        during = self.configs(self.snapshot())
        self.assertTrue(all(during.get(p) != before.get(p) for p in paths), client)
        r = self.ok("setup", client, "--scope", scope, "--remove")
        self.assertEqual(self.configs(self.snapshot()), before, r.stdout)
        r = self.ok("setup", client, "--scope", scope, "--remove")     # again: nothing to do
        self.assertEqual(r.stdout.splitlines(), [f"nothing of instinct's in {p}" for p in paths])

    def test_remove_after_write_restores_every_config_byte_for_byte(self):
        for client in instinct._Setup.CLIENTS:
            for planted in (True, False):
                with self.subTest(client=client, planted=planted):
                    self.round_trip(client, "user", planted)

    def test_project_scope_round_trip(self):
        for client in ("claude-code", "cursor", "vscode", "codex", "gemini-cli", "copilot-cli"):
            for planted in (True, False):
                with self.subTest(client=client, planted=planted):
                    self.round_trip(client, "project", planted)

    def test_remove_finds_setups_record_whatever_store_either_run_names(self):
        """Setup's record belongs to the home whose files it changed: written with `--db` (or
        INSTINCT_DB) and removed without it, or the other way round, every file gets its bytes
        back and the server entry goes; a record an older version left beside the store still
        counts."""
        paths = self.paths("claude-code")
        for p in paths:
            write(p, PLANTED[os.path.basename(p)])
        before = self.configs(self.snapshot())
        beside = os.path.join(self.tmp, "setup")               # the pinned store's folder
        for write_env, remove_env in (({"INSTINCT_DB": self.db}, {}),
                                      ({}, {"INSTINCT_DB": self.db})):
            with self.subTest(write=write_env, remove=remove_env):
                self.ok("setup", "claude-code", "--write", env=write_env)
                self.assertNotEqual(self.configs(self.snapshot()), before)
                r = self.ok("setup", "claude-code", "--remove", env=remove_env)
                self.assertEqual(self.configs(self.snapshot()), before, r.stdout)
                self.assertFalse(os.path.exists(os.path.join(beside, "manifest.json")))
        self.ok("setup", "claude-code", "--write", "--db", self.db)
        os.makedirs(beside)
        os.rename(self.path(".instinct", "setup", "manifest.json"),
                  os.path.join(beside, "manifest.json"))
        r = self.ok("setup", "claude-code", "--remove", "--db", self.db)
        self.assertEqual(self.configs(self.snapshot()), before, r.stdout)
        self.assertEqual(os.listdir(beside), [])

    def test_users_entries_added_after_setup_are_kept(self):
        claude, settings = self.paths("claude-code")
        write(claude, PLANTED[".claude.json"])
        self.ok("setup", "claude-code", "--write")
        data = json.loads(read(claude))
        data["mcpServers"]["later"] = {"command": "l"}
        data["numStartups"] = 3
        write(claude, json.dumps(data, indent=2))
        hooks = json.loads(read(settings))
        hooks["hooks"]["PostToolUse"][0]["hooks"].append({"type": "command", "command": "after"})
        hooks["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "bell"}]}]
        write(settings, json.dumps(hooks))
        self.ok("setup", "claude-code", "--remove")
        want = json.loads(PLANTED[".claude.json"])
        want["mcpServers"]["later"] = {"command": "l"}
        want["numStartups"] = 3
        self.assertEqual(json.loads(read(claude)), want)
        self.assertEqual(json.loads(read(settings)), {"hooks": {
            "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "after"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "bell"}]}]}})

    def test_backups_get_unique_names_and_are_never_overwritten(self):
        path, _ = self.paths("cursor")              # (and .cursor/hooks.json)
        state = self.path(".instinct", "setup")
        bak = lambda n: os.path.join(state, f"{n}-mcp.json.bak")        # noqa: E731
        write(path, '{"mcpServers": {"a": {"command": "1"}}}')
        self.ok("setup", "cursor", "--write")
        write(path, '{"mcpServers": {"b": {"command": "2"}}}')
        r = self.ok("setup", "cursor", "--write")
        self.assertIn(f"(previous version in {bak(2)})", r.stdout)
        r = self.ok("setup", "cursor", "--remove")
        self.assertIn(f"(previous version in {bak(3)})", r.stdout)
        self.assertEqual(read(bak(1)), '{"mcpServers": {"a": {"command": "1"}}}')
        self.assertEqual(read(bak(2)), '{"mcpServers": {"b": {"command": "2"}}}')
        self.assertIn('"instinct"', read(bak(3)))
        self.assertEqual(read(path), '{"mcpServers": {"b": {"command": "2"}}}')
        # a link or a folder in the way of a name is skipped, never written through
        os.remove(bak(3))
        os.symlink(os.path.join(self.tmp, "elsewhere"), bak(3))
        os.mkdir(bak(4))
        r = self.ok("setup", "cursor", "--write")
        self.assertIn(f"(previous version in {bak(5)})", r.stdout)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "elsewhere")))

    def test_backups_are_bounded_by_their_own_order_not_the_clock(self):
        """Issue 32: the newest BACKUPS are kept by number; an old-looking (or future) mtime on
        a file changes nothing, and the one just written is never pruned."""
        path = self.paths("cursor")[0]              # (and .cursor/hooks.json)
        state = self.path(".instinct", "setup")
        n = instinct._Setup.BACKUPS
        for i in range(n + 5):
            write(path, json.dumps({"mcpServers": {"a": {"command": str(i)}}}))
            r = self.ok("setup", "cursor", "--write")
            made = r.stdout.split("(previous version in ", 1)[1].split(")", 1)[0]
            self.assertTrue(os.path.isfile(made), made)
            os.utime(made, (1e9, 1e9) if i % 2 else (4e9, 4e9))      # the clock says nothing
        kept = sorted(int(f.split("-")[0]) for f in os.listdir(state) if f.endswith(".bak"))
        self.assertEqual(kept, list(range(6, n + 6)))
        self.assertIn('"command": "14"', read(os.path.join(state, f"{n + 5}-mcp.json.bak")))

    def test_earlier_unmarked_toml_entry_is_left_with_a_one_line_error(self):
        (toml, hooks) = self.paths("codex")
        text = 'model = "o3"\n[mcp_servers.instinct]\ncommand = "old"\n'
        write(toml, text)
        r = self.cli_process("setup", "codex", "--remove")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("delete it yourself", r.stderr)
        self.assertEqual(read(toml), text)


class TestTextConfigs(_SetupEnv):
    """Issue 19: Codex's TOML and Goose's YAML: a marked block appended, or pasted by hand."""

    def test_goose_extensions_map_is_merged_and_removed_exactly(self):
        """Issue 28: an existing `extensions:` map gets the marked block as its first entry, at
        its own indentation (a BOM, CRLF, comments, a null map too); --remove gives the bytes
        back; a re-run changes nothing."""
        (path,) = self.paths("goose")
        try:
            import yaml                    # dev-only: a second opinion when present
        except ImportError:
            yaml = None
        for original in ("extensions:\n  developer:\n    enabled: true\nGOOSE_MODEL: gpt\n",
                         "\ufeffGOOSE_MODEL: gpt\nextensions:  # mine\n\n    # c\n    dev:\n"
                         "        enabled: true\n",
                         "A: 1\r\nextensions:\r\n   dev:\r\n      x: 1\r\nB: 2\r\n",
                         "'extensions':\n  a: 1\n", "extensions:\nGOOSE_MODEL: gpt\n",
                         "GOOSE_MODEL: gpt\nextensions:"):
            with self.subTest(original=original):
                write(path, original.encode())
                self.ok("setup", "goose", "--write")
                text = read(path, "rb").decode()
                self.assertEqual(text.count("extensions"), 1, text)
                self.assertEqual(text.startswith("\ufeff"), original.startswith("\ufeff"))
                self.assertIn("# instinct:begin", text)
                if "\r\n" in original:
                    self.assertNotIn("\n", text.replace("\r\n", ""))
                if yaml is not None:
                    ext = yaml.safe_load(text.lstrip("\ufeff"))["extensions"]
                    self.assertEqual(ext["instinct"]["args"], ["-m", "instinct", "serve"])
                    theirs = yaml.safe_load(original.lstrip("\ufeff"))["extensions"] or {}
                    self.assertEqual({k: v for k, v in ext.items() if k != "instinct"}, theirs)
                r = self.ok("setup", "goose", "--write")
                self.assertEqual(r.stdout.splitlines()[0], f"unchanged {path}")
                self.ok("setup", "goose", "--remove")
                self.assertEqual(read(path, "rb"), original.encode())

    def test_changed_entry_is_replaced_between_the_markers(self):
        (toml, _) = self.paths("codex")
        write(toml, 'model = "o3"\n')
        self.ok("setup", "codex", "--write")
        first = read(toml)
        r = self.ok("setup", "codex", "--write", env={"INSTINCT_DB": os.path.join(self.tmp, "p.db")})
        text = read(toml)
        self.assertTrue(text.startswith('model = "o3"\n\n# instinct:begin'), text)
        self.assertIn("INSTINCT_DB", text)
        self.assertEqual(text.count("[mcp_servers.instinct]"), 1)
        self.assertNotEqual(text, first)
        self.assertIn("previous version", r.stdout)
        self.ok("setup", "codex", "--remove")
        self.assertEqual(read(toml), 'model = "o3"\n')

    def test_toml_with_other_servers(self):
        (toml, _) = self.paths("codex")
        text = 'model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n'
        write(toml, text)
        r = self.cli_process("setup", "codex", "--write")
        if not HAS_TOMLLIB:                # nothing can check the result: paste by hand
            self.assertEqual(r.returncode, 2)
            self.assertIn("[mcp_servers.instinct]\ncommand = ", r.stderr)
            self.assertEqual(read(toml), text)
            return
        self.assertEqual(r.returncode, 0, r.stderr)
        import tomllib
        data = tomllib.loads(read(toml))
        self.assertEqual(data["mcp_servers"]["other"], {"command": "x"})
        self.assertEqual(data["mcp_servers"]["instinct"]["args"], ["-m", "instinct", "serve"])
        self.ok("setup", "codex", "--remove")
        self.assertEqual(read(toml), text)

    def test_toml_that_an_appended_table_would_break_is_refused(self):
        (toml, hooks) = self.paths("codex")
        for text in ('mcp_servers = { other = { command = "x" } }\n', "mcp_servers = 3\n",
                     "[mcp_servers.instinct]\ncommand = 'old'\n", 'model = "o3"\n[mcp_servers\n'):
            with self.subTest(text=text):
                write(toml, text)
                r = self.cli_process("setup", "codex", "--write")
                self.assertEqual(r.returncode, 2, r.stdout)
                self.assertNotIn("Traceback", r.stderr)
                self.assertIn("# instinct:begin (written by `instinct setup`)\n[mcp_servers.instinct]",
                              r.stderr)
                self.assertEqual(read(toml), text)
                self.assertFalse(os.path.exists(hooks))

    def test_yaml_outside_a_plain_top_level_map_is_refused(self):
        (path,) = self.paths("goose")
        for text in ("extensions: {}\n", "{a: 1}\n", "a: 1\n---\nb: 2\n", "just some words\n",
                     "extensions:\n- a\n", "extensions:\n  - a\n",      # a list, not a map
                     "extensions:\n  mine:\n    a: 1\n  instinct:\n    a: 1\n",   # the user's own
                     "extensions:\n  a: 1\nextensions:\n  b: 2\n"):
            with self.subTest(text=text):
                write(path, text)
                r = self.cli_process("setup", "goose", "--write")
                self.assertEqual(r.returncode, 2, r.stdout)
                self.assertIn("  instinct:\n    type: stdio\n", r.stderr)
                self.assertEqual(read(path), text)


class TestScope(_SetupEnv):
    def test_user_only_clients_refuse_project_scope(self):
        for client in ("windsurf", "goose"):
            with self.subTest(client=client):
                r = self.cli_process("setup", client, "--scope", "project", "--write")
                self.assertEqual(r.returncode, 2)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn("user file only", r.stderr)
                self.assertEqual(os.listdir(self.home), [])

    def test_vscode_user_scope_writes_the_user_file_not_the_project(self):
        (path,) = self.paths("vscode")
        self.assertTrue(path.startswith(self.home + os.sep), path)
        self.ok("setup", "vscode", "--write")
        self.assertFalse(os.path.exists(os.path.join(self.repo, ".vscode")))
        self.assertIn("instinct", json.loads(read(path))["servers"])
        (proj,) = self.paths("vscode", "project")
        self.assertEqual(proj, os.path.join(self.repo, ".vscode", "mcp.json"))

    def test_project_files_name_no_path_of_this_machine(self):
        for client in ("claude-code", "cursor", "vscode", "codex"):
            with self.subTest(client=client):
                self.ok("setup", client, "--scope", "project", "--write")
        for path, data in self.snapshot().items():
            if path.startswith(self.repo + os.sep) and ".git" not in path:
                text = data.decode()
                for local in (self.tmp, ROOT, sys.executable, os.path.dirname(sys.executable)):
                    self.assertNotIn(local, text, path)
        self.assertEqual(os.listdir(self.home), [".instinct"])          # setup's record only
        self.assertEqual(os.listdir(os.path.join(self.home, ".instinct")), ["setup"])
        hooks = json.loads(read(os.path.join(self.repo, ".claude", "settings.json")))["hooks"]
        server = json.loads(read(os.path.join(self.repo, ".mcp.json")))["mcpServers"]["instinct"]
        self.assertEqual((server["command"], server["args"]), ("python3", ["-m", "instinct", "serve"]))
        # the shared hook command records where python3 finds instinct, and is silent where not
        cmd = hooks["PostToolUse"][0]["hooks"][0]["command"]
        db = os.path.join(self.tmp, "p.db")
        payload = json.dumps({"session_id": "s", "cwd": self.repo, "tool_name": "Bash",
                              "tool_input": {"command": "pytest -q"}}).encode()
        for extra, stored in (({"PYTHONPATH": ROOT}, 1), ({}, 1)):     # (stored so far)
            env = child_env(self.home, db, **extra)
            env.pop("PYTHONPATH", None) if not extra else None
            p = subprocess.run(["sh", "-c", cmd], input=payload, env=env, cwd=self.tmp,
                               capture_output=True, timeout=60)
            self.assertEqual((p.returncode, p.stdout, p.stderr), (0, b"", b""))
            n = 0
            if os.path.exists(db):
                con = sqlite3.connect(db)
                n = con.execute("SELECT count(*) FROM events WHERE kind = 'tool'").fetchone()[0]
                con.close()
            self.assertEqual(n, stored)

    def test_db_pin_is_refused_in_a_shared_file(self):
        r = self.cli_process("setup", "cursor", "--scope", "project", "--db", os.path.join(self.tmp, "x.db"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("shared", r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1)


def _run_hooks(test, commands, n=20, env=None):
    """Each hook command (round robin, n runs) through `sh -c`: exit 0, no output at all."""
    payload = json.dumps({"session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"}})
    for i in range(n):
        cmd = commands[i % len(commands)]
        p = subprocess.run(["sh", "-c", cmd], input=payload.encode(), capture_output=True, timeout=60,
                           env=env or child_env(test.home), cwd=test.tmp)
        test.assertEqual((p.returncode, p.stdout, p.stderr), (0, b"", b""), cmd)


def _commands(settings):
    return [h["command"] for groups in json.loads(read(settings))["hooks"].values()
            for g in groups for h in g["hooks"]]


class TestHookBytecode(_SetupEnv):
    def test_the_hook_caches_a_vendored_copys_bytecode_even_when_the_user_forbids_writes(self):
        """A user's PYTHONDONTWRITEBYTECODE (common in containers) would make every tool call
        compile the whole file (~80 ms): the hook command setup writes caches instinct's own
        bytecode, beside the copy, and that cache is what the next call reads."""
        import importlib.util
        vendor = os.path.join(self.tmp, "vendor")
        os.makedirs(vendor)
        shutil.copy(INSTINCT_PY, vendor)
        r = cli_process("setup", "claude-code", "--write", script=os.path.join(vendor, "instinct.py"),
                        env=child_env(self.home, self.db), cwd=self.repo)
        self.assertEqual(r.returncode, 0, r.stderr)
        cmd = json.loads(read(self.path(".claude", "settings.json")))[
            "hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        cached = importlib.util.cache_from_source(os.path.join(vendor, "instinct.py"))
        self.assertFalse(os.path.exists(cached))
        payload = {"session_id": "b1", "cwd": self.repo, "hook_event_name": "PostToolUse",
                   "tool_name": "Bash", "tool_input": {"command": "make test"}}
        for n in (1, 2):
            p = subprocess.run(cmd, shell=True, input=json.dumps(payload).encode(), cwd=self.tmp,
                               env=child_env(self.home), capture_output=True, timeout=60)
            self.assertEqual((p.returncode, p.stderr), (0, b""))
            self.assertTrue(os.path.isfile(cached))
            if n == 1:
                first = os.stat(cached).st_mtime_ns
        self.assertEqual(os.stat(cached).st_mtime_ns, first)            # read, not rewritten
        conn = sqlite3.connect(self.db)
        try:
            self.assertEqual(conn.execute("SELECT count(*) FROM events WHERE kind = 'tool'")
                             .fetchone()[0], 2)
        finally:
            conn.close()
        # the command the previous version wrote is still setup's own: a rerun replaces it
        before = ("import sys;sys.path.insert(0,%r)\ntry:from instinct import main\n"
                  "except BaseException:sys.exit(0)\nsys.exit(main())" % vendor)
        for launcher in (before, before.replace(";sys.path.insert(0,%r)" % vendor, "")):
            old = shlex.join(["/usr/bin/python3", "-S", "-c", launcher, "hook", "post-tool-use"])
            self.assertTrue(instinct._Setup._is_ours({"type": "command", "command": old}))


class TestHookWithoutInstinct(_SetupEnv):
    """Issue 21: the hook command setup writes exits 0, silently, once instinct is gone."""

    def test_vendored_file_moved_away(self):
        vendor = os.path.join(self.tmp, "vendor")
        os.makedirs(vendor)
        shutil.copy(INSTINCT_PY, vendor)
        r = cli_process("setup", "claude-code", "--write", script=os.path.join(vendor, "instinct.py"),
                        env=child_env(self.home), cwd=self.repo)
        self.assertEqual(r.returncode, 0, r.stderr)
        commands = _commands(os.path.join(self.home, ".claude", "settings.json"))
        self.assertEqual(len(commands), 6)
        self.assertTrue(all(vendor in c for c in commands))
        os.remove(os.path.join(vendor, "instinct.py"))
        _run_hooks(self, commands)
        # and a copy that this Python cannot even compile (another Python's file): silent too
        write(os.path.join(vendor, "instinct.py"), "def broken(:\n")
        _run_hooks(self, commands, n=6)

    def test_pip_install_then_uninstall(self):
        if os.environ.get("INSTINCT_FULL") != "1":      # minutes (pip builds in isolation)
            self.skipTest("pip install/uninstall runs with INSTINCT_FULL=1 (CI's python3 pass)")
        venv = os.path.join(self.tmp, "venv")
        made = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, timeout=300)
        if made.returncode != 0:
            self.skipTest(f"no venv here: {made.stderr.decode()[-300:]}")
        py = os.path.join(venv, "bin", "python")
        src = os.path.join(self.tmp, "src")        # a clean copy: the build never touches the tree
        os.makedirs(src)
        for f in ("instinct.py", "pyproject.toml", "README.md"):
            shutil.copy(os.path.join(ROOT, f), src)
        got = subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", src],
                             capture_output=True, timeout=600)
        if got.returncode != 0:
            self.skipTest(f"pip could not install (offline?): {got.stderr.decode()[-300:]}")
        env = child_env(self.home)
        r = subprocess.run([os.path.join(venv, "bin", "instinct"), "setup", "claude-code", "--write"],
                           capture_output=True, text=True, env=env, cwd=self.repo, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        server = json.loads(read(os.path.join(self.home, ".claude.json")))["mcpServers"]["instinct"]
        self.assertEqual((server["command"], server["args"]),
                         (os.path.join(venv, "bin", "instinct"), ["serve"]))     # the console script
        self.assertNotIn("PYTHONPATH", server["env"])
        commands = _commands(os.path.join(self.home, ".claude", "settings.json"))
        self.assertEqual(shlex.split(commands[0])[:2], [py, "-S"])
        _run_hooks(self, commands, n=6)                # installed: they run (and record)
        self.assertTrue(os.path.exists(os.path.join(self.home, ".instinct", "instinct.db")))
        got = subprocess.run([py, "-m", "pip", "uninstall", "-y", "-q", "instinct"],
                             capture_output=True, timeout=300)
        self.assertEqual(got.returncode, 0, got.stderr)
        _run_hooks(self, commands)


# --- every client printed and written (issue 4) ------------------------------------------
class TestSetup(HookCase):
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
        r = self.run_setup("cursor", write=True)[0]          # (and .cursor/hooks.json)
        data = json.loads(read(mcp))
        self.assertEqual(data["theme"], "dark")
        self.assertEqual(data["mcpServers"]["other"], {"command": "x"})
        self.assertEqual(data["mcpServers"]["instinct"]["args"], ["-m", "instinct", "serve"])
        self.assertEqual(r["backup"], os.path.join(self.tmp, ".instinct", "setup", "1-mcp.json.bak"))
        self.assertEqual(read(r["backup"]), original)

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
        yaml = self.existing_config(".config", "goose", "config.yaml", text=(    # the user's own
            "GOOSE_MODEL: gpt\nextensions:\n  instinct:\n    enabled: true\n    cmd: old\n"))
        for client, path in (("codex", toml), ("goose", yaml)):
            before = read(path)
            with self.assertRaises(instinct.ValidationError) as cm:
                self.run_setup(client, write=True)
            self.assertIn("# instinct:begin", str(cm.exception))          # the block to paste
            self.assertEqual(read(path), before)
            self.assertFalse(os.path.exists(os.path.join(self.tmp, ".instinct")))   # no backup

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
        r = cli_process("setup", "cursor", env=e)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('"instinct"', r.stdout)
        r = cli_process("setup", "cursor", "--write", env=e)
        self.assertTrue(r.stdout.startswith("wrote "), r.stdout)
        r = cli_process("setup", "cursor", "--write", env=e)
        self.assertTrue(r.stdout.startswith("unchanged "), r.stdout)
        r = cli_process("setup", "nope", env=e)
        self.assertEqual(r.returncode, 2)


# --- issues 28 and 32: setup edits what it wrote and nothing else, shows only that, no litter ---
def _tree(*tops):
    """{path: bytes, folder: None} of everything under `tops` (not .git)."""
    out = {}
    for top in tops:
        for d, dirs, files in os.walk(top):
            dirs[:] = [x for x in dirs if x != ".git"]
            out.update({os.path.join(d, x): None for x in dirs})
            out.update({os.path.join(d, f): read(os.path.join(d, f), "rb") for f in files})
    return out


class _Writer(threading.Thread):
    """Another program saving a JSON config the way Claude Code does: take `REAL.lock` (a
    folder; wait while it is held), read, add a key, write a temp file, rename it over, release;
    again every few milliseconds. Keeps the file's BOM and mode."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.keys, self.stop = path, [], threading.Event()

    def run(self):
        real = os.path.realpath(self.path)
        while not self.stop.is_set():
            try:
                os.mkdir(real + ".lock")
            except FileExistsError:
                time.sleep(0.0005)
                continue
            try:
                raw = read(real, "rb") if os.path.exists(real) else b""
                text = raw.decode("utf-8-sig")
                data = json.loads(text) if text.strip() else {}
                key = f"writer-{len(self.keys)}"
                data[key] = len(self.keys)
                with open(real + ".w.tmp", "wb") as f:
                    f.write(raw[:3] * raw.startswith(b"\xef\xbb\xbf")
                            + json.dumps(data, indent=2, ensure_ascii=False).encode())
                if os.path.exists(real):
                    os.chmod(real + ".w.tmp", stat.S_IMODE(os.stat(real).st_mode))
                os.replace(real + ".w.tmp", real)
                self.keys.append(key)
            finally:
                os.rmdir(real + ".lock")
            time.sleep(0.005 + 0.01 * (len(self.keys) % 3))


def _hostile(key):
    """15 hostile texts for a JSON config whose servers sit under `key` -> [(name, text)]."""
    huge = json.dumps({"projects": {f"/home/u/p{i}": {"history": [
        {"display": f"PLANTED prompt {i}: deploy with token hunter2 " * 3}]} for i in range(1200)},
        "oauthAccount": {"emailAddress": "planted.person@example.com"}}, indent=2)
    return [("empty object", "{}"), ("empty file", ""), ("bom", '\ufeff{"a": 1}\n'),
            ("odd whitespace", '{\r\n\t"a" :\t[1 ,2] ,\r\n\t"b":{ }\r\n}\r\n'),
            ("unicode", '{"ключ": "значение 🚀", "rtl": "\u202eabc", "ls": "a\u2028b", '
                        '"esc": "\\u00e9\\ud83d\\ude80"}'),
            ("huge", huge),
            ("own entry", json.dumps({key: {"instinct": {"command": "my-instinct", "args": ["x"]}}})),
            ("only key", json.dumps({key: {"instinct": {"command": "mine"}}}, indent=4)),
            ("string entry", json.dumps({key: {"instinct": "disabled"}, "z": 1})),
            ("null entry", json.dumps({key: {"instinct": None}, "x": [1]})),
            ("list entry", json.dumps({key: {"instinct": [], "other": {"command": "o"}}})),
            ("empty servers", json.dumps({key: {}, "z": 1, "a": 2})),
            ("numbers", '{"n": 1.5e10, "i": 12345678901234567890, "f": 0.1, "neg": -0.0}'),
            ("symlink", json.dumps({key: {"o": {"command": "o"}}, "linked": True})),
            ("read-only", json.dumps({key: {"o": {"command": "o"}}}))]


class TestUsersEntriesUnderAConcurrentWriter(_SetupEnv):
    """Issue 28: 60 hostile configs x `setup --write` then `--remove` (real processes) while
    another program keeps adding keys to the same file: no key of that program is lost, every
    entry of the user's comes back (a hand-made `instinct` entry too); without the other program
    the file comes back byte for byte. A read-only file is refused in one line and left as is."""

    CLIENTS = ("claude-code", "cursor", "vscode", "windsurf")

    def configs(self):
        for client in self.CLIENTS:
            key = "servers" if client == "vscode" else "mcpServers"
            for name, text in _hostile(key):
                yield client, name, text

    def plant(self, home, client, name, text):
        path = instinct._Setup.plan(client, "user", home, self.repo, "python3", ROOT)[0][0]
        if name == "symlink":                          # a dotfiles link out of the folder
            real = os.path.join(home, "dotfiles", os.path.basename(path))
            write(real, text.encode())
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.symlink(real, path)
        else:
            write(path, text.encode())
        if name == "read-only":
            os.chmod(path, 0o444)
        if client == "claude-code":               # and hooks of the user's beside it
            write(os.path.join(home, ".claude", "settings.json"), '{"hooks": {"Stop": [], '
                  '"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", '
                  '"command": "my-lint"}]}]}, "model": "opus"}')
        return path

    def test_sixty_hostile_configs_byte_identical_without_a_writer(self):
        for i, (client, name, text) in enumerate(self.configs()):
            with self.subTest(client=client, config=name):
                home = os.path.join(self.tmp, f"b{i}")
                path = self.plant(home, client, name, text)
                before = _tree(home)
                try:
                    instinct.setup(client, write=True, home=home, project_dir=self.repo)
                except instinct.ValidationError as e:
                    self.assertEqual(name, "read-only", e)
                    self.assertEqual(_tree(home), before)
                    continue
                self.assertIn("instinct", json.loads(read(path).lstrip("\ufeff"))[
                    "servers" if client == "vscode" else "mcpServers"])
                instinct.setup(client, remove=True, home=home, project_dir=self.repo)
                after = _tree(home)
                for p in list(after):                  # setup's own folder: record gone
                    if p.startswith(os.path.join(home, ".instinct")):
                        self.assertNotEqual(os.path.basename(p), "manifest.json")
                        del after[p]
                self.assertEqual(after, before)
                self.assertEqual(os.path.islink(path), name == "symlink")

    def test_sixty_hostile_configs_with_a_concurrent_writer(self):
        lost = refused = 0
        for i, (client, name, text) in enumerate(self.configs()):
            with self.subTest(client=client, config=name):
                home = os.path.join(self.tmp, f"w{i}")
                path = self.plant(home, client, name, text)
                theirs = json.loads(text.lstrip("\ufeff")) if text.strip() else {}
                writer = _Writer(path)
                if name != "read-only":            # nothing rewrites that one
                    writer.start()
                try:
                    for verb in ("--write", "--remove"):
                        r = cli_process("setup", client, verb, cwd=self.repo,
                                        env=child_env(home))
                        self.assertNotIn("Traceback", r.stderr)
                        if r.returncode:
                            self.assertEqual(len(r.stderr.splitlines()) if name != "read-only"
                                             else 1, 1, r.stderr)
                            refused += 1
                finally:
                    writer.stop.set()
                    writer.join() if writer.is_alive() else None
                final = json.loads(read(path).lstrip("\ufeff"))
                lost += sum(k not in final for k in writer.keys)
                self.assertEqual([k for k in writer.keys if k not in final], [])
                for k, v in theirs.items():            # the user's own, back as they were
                    self.assertEqual(json.dumps(final.get(k)), json.dumps(v), k)
                key = "servers" if client == "vscode" else "mcpServers"
                self.assertEqual(key in final, key in theirs)
                if name == "read-only":
                    self.assertEqual(read(path, "rb"), text.encode())
                self.assertEqual(os.path.islink(path), name == "symlink")
                self.assertTrue(writer.keys or name == "read-only")
        self.assertEqual(lost, 0)
        self.assertLessEqual(refused, 8, "the writer leaves setup time to write")


class TestWhatSetupOwns(_SetupEnv):
    """Issue 28: a user's own `instinct` entry is put back, a file setup did not create is
    never deleted, a link is edited in place (and said so), a dangling one is refused."""

    def test_users_own_entry_that_was_the_only_key_comes_back(self):
        path = self.path(".claude.json")
        mine = '{\n  "mcpServers": {"instinct": {"command": "/opt/mine/instinct", "args": ["serve"]}}\n}'
        write(path, mine)
        r = self.ok("setup", "claude-code", "--write")
        self.assertIn("  - mcpServers.instinct", r.stdout.splitlines())
        self.assertIn("  + mcpServers.instinct", r.stdout.splitlines())
        self.assertNotEqual(read(path), mine)
        self.ok("setup", "claude-code", "--remove")
        self.assertEqual(read(path), mine)
        # Claude Code rewrote the file meanwhile: the user's entry still comes back, theirs stays
        self.ok("setup", "claude-code", "--write")
        data = json.loads(read(path))
        data["numStartups"] = 7
        write(path, json.dumps(data))
        self.ok("setup", "claude-code", "--remove")
        self.assertEqual(json.loads(read(path)), dict(json.loads(mine), numStartups=7))

    def test_an_entry_changed_by_hand_after_setup_is_left(self):
        path = self.path(".cursor", "mcp.json")
        self.ok("setup", "cursor", "--write")
        data = json.loads(read(path))
        data["mcpServers"]["instinct"]["args"].append("--mine")
        write(path, json.dumps(data))
        r = self.ok("setup", "cursor", "--remove")
        self.assertEqual(json.loads(read(path)), data)          # not setup's any more: kept
        self.assertIn("nothing of instinct's in", r.stdout)

    def test_without_a_record_only_setups_own_entry_goes_and_no_file_is_deleted(self):
        path = self.path(".cursor", "mcp.json")
        self.ok("setup", "cursor", "--write")
        shutil.rmtree(self.path(".instinct"))                  # an older setup: no record
        self.ok("setup", "cursor", "--remove")
        self.assertEqual(json.loads(read(path)), {"mcpServers": {}})       # kept, not deleted
        write(path, '{"mcpServers": {"instinct": {"command": "mine"}}}')
        self.ok("setup", "cursor", "--remove")
        self.assertEqual(read(path), '{"mcpServers": {"instinct": {"command": "mine"}}}')

    def test_a_damaged_record_is_named_in_one_line(self):
        record = self.path(".instinct", "setup", "manifest.json")
        for text in ("{", "[1]", '{"/x": 3}'):
            write(record, text)
            r = self.cli_process("setup", "cursor", "--write")
            self.assertEqual(r.returncode, 2)
            (line,) = r.stderr.splitlines()
            self.assertIn(record, line)
            self.assertIn("move it away", line)
        self.assertFalse(os.path.exists(self.path(".cursor")))

    def test_dangling_link_is_refused_in_one_line(self):
        link = self.path(".cursor", "mcp.json")
        os.makedirs(os.path.dirname(link))
        os.symlink(os.path.join(self.tmp, "dotfiles", "mcp.json"), link)
        for verb in ("--write", "--remove"):
            r = self.cli_process("setup", "cursor", verb)
            self.assertEqual(r.returncode, 2)
            self.assertIn("which does not exist", r.stderr.splitlines()[0])
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "dotfiles")))

    def test_a_change_made_between_read_and_write_is_kept(self):
        """The file changes after setup read it: the check before the replace sees it, setup
        reads again and merges into the new text."""
        path = self.path(".cursor", "mcp.json")
        write(path, '{"a": 1}')
        real_prepare, calls = instinct._Setup.prepare, []

        def prepare(*a):
            got = real_prepare(*a)
            calls.append(1)
            if len(calls) == 1:
                write(path, '{"a": 1, "b": 2}')      # another program, just after the read
            return got
        instinct._Setup.prepare = prepare
        try:
            self.setup_("cursor")
        finally:
            instinct._Setup.prepare = real_prepare
        self.assertEqual(len(calls), 3)          # cursor's two files, then this one again
        data = json.loads(read(path))
        self.assertEqual((data["a"], data["b"]), (1, 2))
        self.assertIn("instinct", data["mcpServers"])


class TestDryRunAndLitter(_SetupEnv):
    """Issue 32: a dry run prints the keys setup owns, never the file, and writes nothing; ten
    setup/remove cycles leave nothing behind but bounded backups in the store's folder."""

    def test_dry_run_of_a_real_sized_claude_json_shows_no_private_text(self):
        path = self.path(".claude.json")
        huge = dict(_hostile("mcpServers"))["huge"]
        write(path, huge)
        self.assertGreater(len(huge), 270_000)
        before = _tree(self.home, self.repo)
        r = self.ok("setup", "claude-code")
        lines = r.stdout.splitlines()
        self.assertLess(len(lines), 40, r.stdout)
        for planted in ("PLANTED", "hunter2", "planted.person@example.com", "/home/u/p1"):
            self.assertNotIn(planted, r.stdout + r.stderr)
        self.assertIn("nothing written; run again with --write", lines)
        self.assertIn(f"{path}: would change", lines)
        self.assertTrue(any(x.startswith("  + mcpServers.instinct: {") for x in lines), lines)
        self.assertEqual(_tree(self.home, self.repo), before)       # no store, no folder
        r = self.ok("setup", "claude-code", "--json")
        got = json.loads(r.stdout)
        self.assertNotIn("PLANTED", r.stdout)
        self.assertEqual([x["path"] for x in got], [path, self.path(".claude", "settings.json")])
        self.assertEqual(len(got[1]["changes"]), 6)
        self.assertEqual(_tree(self.home, self.repo), before)
        # with a store path set, still nothing: not the store, not its folder's setup record
        self.ok("setup", "claude-code", env={"INSTINCT_DB": self.db})
        self.assertFalse(os.path.exists(self.db))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "setup")))

    def test_ten_cycles_leave_nothing_but_bounded_backups(self):
        os.makedirs(os.path.join(self.repo, ".claude"))        # the user's own, kept even empty
        for scope, clients in (("user", instinct._Setup.CLIENTS),
                               ("project", ("claude-code", "cursor", "vscode", "codex"))):
            for planted in (False, True):
                if planted:
                    for client in clients:
                        for p in self.paths(client, scope):
                            write(p, PLANTED[os.path.basename(p)])
                before = _tree(self.home, self.repo)
                # 10 cycles (~140 s) where .ci/run sets INSTINCT_FULL=1; 3 still pass the bound
                for _ in range(10 if os.environ.get("INSTINCT_FULL") == "1" else 3):
                    for client in clients:
                        self.ok("setup", client, "--scope", scope, "--write")
                        self.ok("setup", client, "--scope", scope, "--remove")
                after = _tree(self.home, self.repo)
                state = self.path(".instinct", "setup")
                extra = sorted(set(after) - set(before))
                self.assertTrue(all(p == self.path(".instinct") or p.startswith(state)
                                    for p in extra), extra)
                mine = {p: b for p, b in before.items() if not p.startswith(state)}
                self.assertEqual({p: b for p, b in after.items() if p in mine}, mine)
                self.assertLessEqual(len(os.listdir(state)), instinct._Setup.BACKUPS)
                self.assertFalse(os.path.exists(os.path.join(state, "manifest.json")))
        self.assertTrue(os.path.isdir(os.path.join(self.repo, ".claude")))


class TestOneScopeAndPlainWords(_SetupEnv):
    """Issue 32: hooks in one scope only; a client without hooks says so; a store path in a
    missing folder is refused; a misspelt client gets a "did you mean"."""

    def test_second_scope_is_refused_naming_the_first(self):
        self.ok("setup", "claude-code", "--write")
        before = _tree(self.repo)
        r = self.cli_process("setup", "claude-code", "--scope", "project", "--write")
        self.assertEqual(r.returncode, 2)
        (line,) = r.stderr.splitlines()
        self.assertIn(self.path(".claude", "settings.json"), line)
        self.assertIn("instinct setup claude-code --scope user --remove", line)
        self.assertEqual(_tree(self.repo), before)
        self.ok("setup", "claude-code", "--scope", "project")          # a dry run still shows
        self.ok("setup", "cursor", "--scope", "project", "--write")     # no hooks: no conflict
        self.ok("setup", "claude-code", "--scope", "user", "--remove")
        self.ok("setup", "claude-code", "--scope", "project", "--write")
        r = self.cli_process("setup", "claude-code", "--write")
        self.assertEqual(r.returncode, 2)
        self.assertIn(os.path.join(self.repo, ".claude", "settings.json"), r.stderr)
        self.assertIn("--scope project --remove", r.stderr)

    def test_clients_without_hooks_say_so(self):
        for client in instinct._Setup.CLIENTS:
            with self.subTest(client=client):
                hooked = any(r["hooks"] for r in self.setup_(client, write=False))
                for extra in ((), ("--write",)):
                    r = self.ok("setup", client, *extra)
                    self.assertEqual("gets no hooks, so nothing is learned" in r.stdout, not hooked)
        self.assertFalse(any(r["hooks"] for r in self.setup_("vscode", write=False)))
        self.assertTrue(any(r["hooks"] for r in self.setup_("codex", write=False)))

    def test_store_in_a_missing_folder_is_refused(self):
        missing = os.path.join(self.tmp, "nope", "x.db")
        for args, env in ((("--db", missing), {}), ((), {"INSTINCT_DB": missing})):
            for extra in ((), ("--write",)):
                r = self.cli_process("setup", "claude-code", *args, *extra, env=env)
                self.assertEqual(r.returncode, 2)
                (line,) = r.stderr.splitlines()
                self.assertIn(os.path.dirname(missing), line)
                self.assertIn("does not exist", line)
        self.assertEqual(os.listdir(self.home), [])

    def test_misspelt_client_gets_did_you_mean(self):
        r = self.cli_process("setup", "claud-code")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, "instinct: error: unknown client 'claud-code' "
                                   "(did you mean 'claude-code'?)\n")
        r = self.cli_process("setup", "zzz")
        self.assertEqual(r.returncode, 2)
        self.assertIn("choose from: claude-code", r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
