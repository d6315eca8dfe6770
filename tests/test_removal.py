"""Issue 21 and 19: `setup --remove` takes out exactly what setup wrote, backups are never
overwritten, `--scope` is honoured or refused (a project's shared files name no path of this
machine), Codex's TOML and Goose's YAML are appended to or pasted by hand (never edited in
place), a hook command never breaks the agent once instinct is gone, and the seeds' import
`from instinct.store import InstinctStore` works from the one file."""
import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import unittest

import instinct
from tests.helpers import (INSTINCT_PY, ROOT, child_env, make_repo, read, run_instinct,  # noqa: F401
                           setUpModule, temp_dir, write)

HAS_TOMLLIB = sys.version_info >= (3, 11)

# what a user already has in each client's files (odd layouts on purpose), by file name
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
}


class _Env(unittest.TestCase):
    def setUp(self):
        self.tmp = temp_dir(self)
        self.home = os.path.join(self.tmp, "home")
        self.repo = make_repo(os.path.join(self.tmp, "repo"))
        os.makedirs(self.home)

    def cli(self, *args, env=None, cwd=None):
        return run_instinct(*args, env=child_env(self.home, **(env or {})), cwd=cwd or self.repo)

    def ok(self, *args, **kw):
        r = self.cli(*args, **kw)
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


class TestRemove(_Env):
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
        for client in ("claude-code", "cursor", "vscode", "codex"):
            for planted in (True, False):
                with self.subTest(client=client, planted=planted):
                    self.round_trip(client, "project", planted)

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
        (path,) = self.paths("cursor")
        write(path, '{"mcpServers": {"a": {"command": "1"}}}')
        self.ok("setup", "cursor", "--write")
        write(path, '{"mcpServers": {"b": {"command": "2"}}}')
        r = self.ok("setup", "cursor", "--write")
        self.assertIn(f"(previous version in {path}.bak.2)", r.stdout)
        r = self.ok("setup", "cursor", "--remove")
        self.assertIn(f"(previous version in {path}.bak.3)", r.stdout)
        self.assertEqual(read(path + ".bak"), '{"mcpServers": {"a": {"command": "1"}}}')
        self.assertEqual(read(path + ".bak.2"), '{"mcpServers": {"b": {"command": "2"}}}')
        self.assertIn('"instinct"', read(path + ".bak.3"))
        self.assertEqual(read(path), '{"mcpServers": {"b": {"command": "2"}}}')
        # a link or a folder in the way of a name is skipped, never written through
        os.remove(path + ".bak.3")
        os.symlink(os.path.join(self.tmp, "elsewhere"), path + ".bak.3")
        os.mkdir(path + ".bak.4")
        r = self.ok("setup", "cursor", "--write")
        self.assertIn(f"(previous version in {path}.bak.5)", r.stdout)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "elsewhere")))

    def test_earlier_unmarked_toml_entry_is_left_with_a_one_line_error(self):
        (toml, hooks) = self.paths("codex")
        text = 'model = "o3"\n[mcp_servers.instinct]\ncommand = "old"\n'
        write(toml, text)
        r = self.cli("setup", "codex", "--remove")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("delete it yourself", r.stderr)
        self.assertEqual(read(toml), text)


class TestTextConfigs(_Env):
    """Issue 19: Codex's TOML and Goose's YAML: a marked block appended, or pasted by hand."""

    def test_goose_block_pasted_under_extensions_is_kept_and_removed_exactly(self):
        (path,) = self.paths("goose")
        original = "extensions:\n  developer:\n    enabled: true\nGOOSE_MODEL: gpt\n"
        write(path, original)
        r = self.cli("setup", "goose", "--write")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(read(path), original)
        paste = r.stderr.split("run setup again:\n", 1)[1]
        block = paste.split("\n", 1)[1].rstrip("\n") + "\n"    # the marked lines, for extensions:
        self.assertTrue(block.startswith("# instinct:begin"), paste)
        write(path, original.replace("GOOSE_MODEL", block + "GOOSE_MODEL"))
        r = self.ok("setup", "goose", "--write")
        self.assertEqual(r.stdout.splitlines()[0], f"unchanged {path}")
        try:
            import yaml                    # dev-only: a second opinion when present
        except ImportError:
            yaml = None
        if yaml is not None:
            ext = yaml.safe_load(read(path))["extensions"]
            self.assertEqual(set(ext), {"developer", "instinct"})
            self.assertEqual(ext["instinct"]["args"], ["-m", "instinct", "serve"])
        self.ok("setup", "goose", "--remove")
        self.assertEqual(read(path), original)

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
        r = self.cli("setup", "codex", "--write")
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
                r = self.cli("setup", "codex", "--write")
                self.assertEqual(r.returncode, 2, r.stdout)
                self.assertNotIn("Traceback", r.stderr)
                self.assertIn("# instinct:begin (written by `instinct setup`)\n[mcp_servers.instinct]",
                              r.stderr)
                self.assertEqual(read(toml), text)
                self.assertFalse(os.path.exists(hooks))

    def test_yaml_outside_a_plain_top_level_map_is_refused(self):
        (path,) = self.paths("goose")
        for text in ("extensions: {}\n", "'extensions':\n  a: 1\n", "{a: 1}\n", "a: 1\n---\nb: 2\n",
                     "just some words\n"):
            with self.subTest(text=text):
                write(path, text)
                r = self.cli("setup", "goose", "--write")
                self.assertEqual(r.returncode, 2, r.stdout)
                self.assertIn("  instinct:\n    type: stdio\n", r.stderr)
                self.assertEqual(read(path), text)


class TestScope(_Env):
    def test_user_only_clients_refuse_project_scope(self):
        for client in ("windsurf", "goose"):
            with self.subTest(client=client):
                r = self.cli("setup", client, "--scope", "project", "--write")
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
        self.assertEqual(os.listdir(self.home), [])
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
        r = self.cli("setup", "cursor", "--scope", "project", "--db", os.path.join(self.tmp, "x.db"))
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


class TestHookWithoutInstinct(_Env):
    """Issue 21: the hook command setup writes exits 0, silently, once instinct is gone."""

    def test_vendored_file_moved_away(self):
        vendor = os.path.join(self.tmp, "vendor")
        os.makedirs(vendor)
        shutil.copy(INSTINCT_PY, vendor)
        r = run_instinct("setup", "claude-code", "--write", script=os.path.join(vendor, "instinct.py"),
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


class TestStoreImport(unittest.TestCase):
    """The seeds' Python API: `from instinct.store import InstinctStore`, from one copied file."""

    def test_from_a_folder_holding_only_the_copied_file(self):
        tmp = temp_dir(self)
        folder = os.path.join(tmp, "only")
        os.makedirs(folder)
        shutil.copy(INSTINCT_PY, folder)
        code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
                "from instinct.store import InstinctStore\n"
                "import instinct\n"
                "assert InstinctStore is instinct.InstinctStore\n"
                "with InstinctStore(sys.argv[2]) as s:\n"
                "    print(s.observe('seq:a->b')['confidence'])\n")
        p = subprocess.run([sys.executable, "-I", "-c", code, folder, os.path.join(tmp, "t.db")],
                           capture_output=True, text=True, timeout=60, cwd=tmp)
        self.assertEqual((p.returncode, p.stdout), (0, "1\n"), p.stderr)
        p = subprocess.run([sys.executable, "-c", "from instinct.store import InstinctStore as S; "
                            "print(S.__module__)"], capture_output=True, text=True, timeout=60,
                           cwd=tmp, env=child_env(PYTHONPATH=folder))
        self.assertEqual((p.returncode, p.stdout), (0, "instinct\n"), p.stderr)


if __name__ == "__main__":
    unittest.main()
