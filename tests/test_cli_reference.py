"""The README's command table and MCP tool list are generated from the operation registry by
tools/cli_reference.py (issue 12); these tests run its --check as CI does and show it catches drift.

Run: python3 -m unittest -v tests.test_cli_reference
"""
import re
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

import instinct
from tests.helpers import ROOT, child_env, setUpModule, subcommands, temp_dir  # noqa: F401

HERE = Path(ROOT)
INSTINCT_PY = HERE / "instinct.py"
CLI_REFERENCE = HERE / "tools" / "cli_reference.py"


class TestCliReference(unittest.TestCase):
    """README's command table and MCP tool list are generated from the registry
    (tools/cli_reference.py) and CI fails when they drift."""

    def setUp(self):
        self.tmp = Path(temp_dir(self))

    def run_tool(self, *args, tool=CLI_REFERENCE):
        return subprocess.run([sys.executable, str(tool), *args], capture_output=True, text=True,
                              timeout=120, env=child_env(self.tmp), cwd=str(self.tmp))

    def assertStale(self, r, *expected):
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("cli_reference.py --write", r.stderr)
        for text in expected:
            self.assertIn(text, r.stderr)

    def test_readme_is_what_the_registry_generates(self):
        r = self.run_tool("--check")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))

    def test_every_command_and_tool_is_in_the_generated_blocks(self):
        r = self.run_tool()
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = re.findall(r"^\| `([a-z-]+)[^`]*` \| .+ \| (?:`([a-z_]+)`|—)", r.stdout, re.M)
        cmds = subcommands(instinct.build_parser())
        self.assertEqual([c for c, _ in rows], list(cmds))
        ops = {op.cli: op.mcp for op in instinct.OPERATIONS.values()}
        self.assertEqual({c: t for c, t in rows if t}, ops)
        self.assertEqual(len(rows), len(ops) + len(instinct._CLI.EXTRAS))
        for row in ("| `config [KEY [VALUE]]` |", "| `feedback PATTERN good\\|bad [--note NOTE] ",
                    "| `memory_forget` (listed, destructive) |", "| `list_instincts` (read-only) |"):
            self.assertIn(row, r.stdout)
        lean = re.search(r"^- listed by default \((\d+)\): (.*);$", r.stdout, re.M)
        self.assertEqual(int(lean.group(1)), len(instinct._MCP.LEAN_TOOLS))
        self.assertEqual(set(re.findall(r"`(\w+)`", lean.group(2))), set(instinct._MCP.LEAN_TOOLS))

    def test_check_names_a_changed_row_and_write_repairs_it(self):
        readme = (HERE / "README.md").read_text(encoding="utf-8")
        row = next(line for line in readme.splitlines() if line.startswith("| `decay "))
        copy = self.tmp / "README.md"
        copy.write_text(readme.replace(row, row.replace("lose 1", "lose 2")), encoding="utf-8")
        before = copy.read_bytes()
        line = readme.splitlines().index(row) + 1
        self.assertStale(self.run_tool("--check", "--readme", str(copy)),
                         f"line {line} (cli-reference block)", "lose 2", "lose 1")
        self.assertEqual(copy.read_bytes(), before, "--check must not write")
        r = self.run_tool("--write", "--readme", str(copy))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(copy.read_text(encoding="utf-8"), readme)
        self.assertEqual(self.run_tool("--check", "--readme", str(copy)).returncode, 0)

    def test_check_sees_a_registry_change(self):
        (self.tmp / "tools").mkdir()
        tool = self.tmp / "tools" / "cli_reference.py"
        shutil.copy(CLI_REFERENCE, tool)
        shutil.copy(HERE / "README.md", self.tmp / "README.md")
        src = INSTINCT_PY.read_text(encoding="utf-8")
        self.assertEqual(src.count('"""Record one occurrence of a pattern:'), 1)
        (self.tmp / "instinct.py").write_text(
            src.replace('"""Record one occurrence of a pattern:', '"""Count one sighting of a pattern:'),
            encoding="utf-8")
        self.assertStale(self.run_tool("--check", tool=tool), "Count one sighting")
        self.assertEqual(self.run_tool("--write", tool=tool).returncode, 0)
        self.assertIn("| Count one sighting of a pattern:",
                      (self.tmp / "README.md").read_text(encoding="utf-8"))
        self.assertEqual(self.run_tool("--check", tool=tool).returncode, 0)

    def test_a_readme_without_markers_is_refused(self):
        copy = self.tmp / "README.md"
        copy.write_text((HERE / "README.md").read_text(encoding="utf-8")
                        .replace("<!-- mcp-tools: end -->\n", ""), encoding="utf-8")
        for mode in ("--check", "--write"):
            with self.subTest(mode=mode):
                r = self.run_tool(mode, "--readme", str(copy))
                self.assertEqual(r.returncode, 1)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn("<!-- mcp-tools: end -->", r.stderr)
