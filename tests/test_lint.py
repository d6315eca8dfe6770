"""Tests for lint (issue 20, part 3; section 16 of instinct.py): learned rules against the rules
files a project already has (CLAUDE.md, AGENTS.md, .cursor/rules/*.mdc, .windsurf/rules/*.md,
outside instinct's own block). Contradictions are shown with both sources; duplicates are not
exported or briefed again. Real files, real CLI and MCP processes.
Run: python3 -m unittest -v tests.test_lint
"""
import json
import os
import unittest

import instinct
from tests.helpers import (INITIALIZED, ProjectCase, child_env, init_msg, read, req, serve_once,  # noqa: F401
                           setUpModule, validate, write)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")

CLAUDE_MD = """# Storefront

Next.js storefront for the shop; the API client is generated from `openapi.yaml`.

## Setup

Use npm for dependencies:

```bash
npm install
npm run dev
```

## Tests

Run `make test` before pushing; it starts the mock API first.
"""
AGENTS_MD = """# AGENTS.md

## Conventions

- Lint with `npx eslint .` before you push.
- Do not run `jest` directly; it skips the setup file.
- Components live in `src/components/`, one per folder.
"""
CURSOR_MDC = """---
description: Dependencies
globs: package.json
alwaysApply: false
---
Prefer the standard library first; no new dependency without a reason in the PR.
"""
WINDSURF_MD = """---
trigger: always_on
---
# Workflow

Before committing, run `npx eslint .` and then `npx tsc --noEmit`.
"""


class _Base(ProjectCase):
    def learn(self, *patterns, n=6, source=""):
        fp = instinct.project_fingerprint(self.proj)
        for p in patterns:
            for _ in range(n):
                self.store.observe(p, project=fp, source=source)
        self.store.consolidate()

    def files(self, **named):
        for rel, text in named.items():
            write(os.path.join(self.proj, rel), text)

    @staticmethod
    def short(found):
        return sorted((f["kind"], f["pattern"], f["file"], f["line"]) for f in found)


class TestPlanted(_Base):
    def setUp(self):
        super().setUp()
        self.files(**{"CLAUDE.md": CLAUDE_MD, "AGENTS.md": AGENTS_MD,
                      ".cursor/rules/deps.mdc": CURSOR_MDC, ".windsurf/rules/workflow.md": WINDSURF_MD})
        self.learn("pref:pkg=pnpm", "pref:test=pnpm test", "pref:lint=npx eslint",
                   "pref:standard-library-first", "seq:npx eslint->Edit->npx tsc->git commit",
                   "fix:pnpm test by Edit", "combo:git diff+git status", "pref:format=npx prettier")

    def test_contradictions_and_duplicates_found_in_every_rules_file(self):
        found = self.store.lint()
        self.assertEqual(self.short(found), [
            ("contradiction", "pref:pkg=pnpm", "CLAUDE.md", 7),
            ("contradiction", "pref:test=pnpm test", "CLAUDE.md", 16),
            ("duplicate", "pref:lint=npx eslint", "AGENTS.md", 5),
            ("duplicate", "pref:standard-library-first", ".cursor/rules/deps.mdc", 6),
            ("duplicate", "seq:npx eslint->Edit->npx tsc->git commit", ".windsurf/rules/workflow.md", 6)])
        test = next(f for f in found if f["pattern"] == "pref:test=pnpm test")
        self.assertEqual((test["learned"], test["written"]),
                         ("Tests here: pnpm test", "Run `make test` before pushing; it starts the mock API first."))
        self.assertEqual(found, self.store.lint())                 # deterministic
        for f in found:
            self.assertEqual(validate(f, instinct._Lint.FINDING), [])

    def test_a_learned_command_the_file_forbids_is_a_contradiction(self):
        self.learn("pref:test=jest")
        f = next(f for f in self.store.lint() if f["pattern"] == "pref:test=jest")
        self.assertEqual((f["kind"], f["file"], f["line"]), ("contradiction", "AGENTS.md", 6))

    def test_cli_shows_both_sources_and_exits_1(self):
        r = self.cli("lint")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("  contradiction learned: Preference: pkg = pnpm (pref:pkg=pnpm)\n"
                      "                written: CLAUDE.md:7: Use npm for dependencies:\n", r.stdout)
        self.assertTrue(r.stdout.endswith("2 contradictions, 3 duplicates of the rules written here\n"))
        r = self.cli("lint", "--json")
        self.assertEqual(len(json.loads(r.stdout)), 5)
        other = os.path.join(self.tmp, "elsewhere")
        os.mkdir(other)
        r = self.cli("lint", cwd=other)                         # another project: its own files
        self.assertEqual((r.returncode, r.stdout.strip()),
                         (0, "0 contradictions, 0 duplicates of the rules written here"))

    def test_doctor_reports_lint(self):
        check = {c["name"]: c for c in self.store.doctor()["checks"]}["lint"]
        self.assertEqual((check["level"], check["detail"]),
                         ("warn", "2 contradiction(s), 3 duplicate(s) of the rules written here; "
                                  "run: instinct lint"))

    def test_export_write_omits_duplicates_and_reports_lint(self):
        self.learn("pref:test=pnpm test", "pref:lint=npx eslint", "pref:pkg=pnpm", n=4)   # now rules
        r = self.cli("export", "--format", "agents", "--write", "AGENTS.md")
        self.assertEqual(r.returncode, 0, r.stderr)
        # what the briefing shows (mature and up), without what the user wrote already
        self.assertTrue(r.stdout.startswith("Wrote 5 rules to AGENTS.md (agents)\n"), r.stdout)
        self.assertIn("  contradiction learned: Preference: pkg = pnpm (pref:pkg=pnpm)\n"
                      "                written: CLAUDE.md:7: Use npm for dependencies:\n", r.stdout)
        self.assertIn("  duplicate     learned: Lint here: npx eslint (pref:lint=npx eslint)\n", r.stdout)
        block = read(os.path.join(self.proj, "AGENTS.md")).split("<!-- instinct:begin -->")[1]
        self.assertIn("- Preference: pkg = pnpm (rule", block)     # a contradiction stays, shown
        self.assertIn("- Tests here: pnpm test (rule", block)
        self.assertNotIn("standard-library-first", block)
        self.assertNotIn("eslint", block)                          # the user wrote it already
        self.assertEqual(len(self.store.lint()), 5)                # our own block is not read

    def test_lint_duplicates_for_the_presenters(self):
        rows = self.store.suggest(project=instinct.project_fingerprint(self.proj))
        kept = {r["pattern"] for r in instinct._Lint.duplicates(self.proj, rows)}
        self.assertEqual(kept, {r["pattern"] for r in rows} - {
            "pref:lint=npx eslint", "pref:standard-library-first",
            "seq:npx eslint->Edit->npx tsc->git commit"})

    def test_mcp_lint_tool(self):
        msgs = [init_msg("2025-06-18"), INITIALIZED,
                req(2, "tools/call", {"name": "lint", "arguments": {}})]
        replies, _ = serve_once(msgs, child_env(db=self.db, INSTINCT_MCP_TOOLS="all"), self.proj)
        res = next(m for m in replies if m.get("id") == 2)["result"]
        self.assertFalse(res.get("isError"))
        self.assertEqual(res["structuredContent"]["count"], 5)
        self.assertEqual(self.short(res["structuredContent"]["findings"]), self.short(self.store.lint()))


class TestClean(_Base):
    LEARNED = ("pref:typecheck=uv run mypy", "pref:stdlib-first", "pref:no-emoji-in-commit-messages",
               "seq:uv run ruff format->uv run mypy->git commit", "fix:uv run pytest by Edit",
               "combo:git diff+git status", "seq:uv run alembic upgrade->uv run pytest",
               "pref:build=uv build")

    def setUp(self):
        super().setUp()
        self.text = read(os.path.join(FIXTURES, "clean_CLAUDE.md"))
        self.assertEqual(len(self.text.splitlines()), 200)
        self.files(**{"CLAUDE.md": self.text})
        self.learn(*self.LEARNED, source="hooks")

    def test_a_clean_200_line_claude_md_gives_nothing(self):
        self.assertEqual(self.store.lint(), [])
        r = self.cli("lint")
        self.assertEqual((r.returncode, r.stdout), (0, "0 contradictions, 0 duplicates of the rules written here\n"))
        check = {c["name"]: c for c in self.store.doctor()["checks"]}["lint"]
        self.assertEqual(check["level"], "ok")

    def test_one_planted_line_gives_one_finding(self):
        for line, *want in (("Type-check with `uv run pyright`.", ("contradiction", "pref:typecheck=uv run mypy")),
                           ("Before committing: `uv run ruff format .`, then `uv run mypy app`.",
                            ("duplicate", "pref:typecheck=uv run mypy"),
                            ("duplicate", "seq:uv run ruff format->uv run mypy->git commit")),
                           ("- Stdlib first, always.", ("duplicate", "pref:stdlib-first"))):
            with self.subTest(line=line):
                self.files(**{"CLAUDE.md": self.text + "\n" + line + "\n"})
                self.assertEqual(sorted((f["kind"], f["pattern"], f["line"]) for f in self.store.lint()),
                                 [w + (202,) for w in want])

    def test_what_the_file_already_says_is_a_duplicate_not_a_contradiction(self):
        self.learn("pref:test=uv run pytest", "pref:lint=ruff check", "pref:pkg=pnpm")
        self.assertEqual(self.short(self.store.lint()), [
            ("duplicate", "pref:lint=ruff check", "CLAUDE.md", 53),
            ("duplicate", "pref:pkg=pnpm", "CLAUDE.md", 41),
            ("duplicate", "pref:test=uv run pytest", "CLAUDE.md", 51)])


class TestOwnText(_Base):
    def test_instincts_own_block_and_files_are_not_read(self):
        self.files(**{"CLAUDE.md": "# Mine\n\nKeep it short.\n"})
        self.learn("pref:test=pnpm test", "seq:pnpm run lint->pnpm test", n=10)
        for fmt, target in (("claude", "CLAUDE.md"), ("cursor", "."), ("windsurf", "."), ("agents", ".")):
            self.assertEqual(self.store.export_rules(format=fmt, write=target)["included"], 2)
        self.assertEqual(self.store.lint(), [])
        self.assertEqual(self.store.export_rules(format="claude", write="CLAUDE.md")["included"], 2)
        quoted = ("# Mine\n\n```markdown\n<!-- instinct:begin -->\n```\n\nRun `pnpm test` first.\n\n"
                  "```markdown\n<!-- instinct:end -->\n```\n")
        self.files(**{"CLAUDE.md": quoted})            # markers quoted in a fence are not ours
        self.assertEqual(self.short(self.store.lint()), [("duplicate", "pref:test=pnpm test", "CLAUDE.md", 7)])


class TestProse(unittest.TestCase):
    def test_mentions_and_negation(self):
        cases = {
            "Use `pnpm`, not `npm`.": [("pnpm", False), ("npm", True)],
            "Never run `npm install`, `npm ci` or yarn; use pnpm.": [
                ("npm install", True), ("npm ci", True), ("yarn", True), ("pnpm", False)],
            "Prefer uv over pip.": [("uv", False), ("pip", True)],
            "We publish the package to npm.": [],
            "Don\u2019t use npm, always use pnpm": [("npm", True), ("pnpm", False)],
            "Tests run with `uv run pytest -x`, not `python -m unittest`.": [
                ("uv run pytest", False), ("python -m unittest", True)],
        }
        for line, want in cases.items():
            with self.subTest(line=line):
                self.assertEqual(instinct._Lint.prose_mentions(line), want)


if __name__ == "__main__":
    unittest.main()
