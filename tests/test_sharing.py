"""Tests for sections 20-21 (rules files and sharing): rules files, import, merge, backup/restore, doctor, gc,
an export with nothing to export; and lint (issue 20, part 3): learned rules against the rules
files a project already has (CLAUDE.md, AGENTS.md, .cursor/rules/*.mdc, .windsurf/rules/*.md,
outside instinct's own block). Contradictions are shown with both sources; duplicates are not
exported or briefed again.

stdlib unittest only; real SQLite files in temp dirs; real subprocesses for the CLI and MCP.
Run: python3 -m unittest -v tests.test_sharing
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import unittest
from datetime import datetime

import instinct
from instinct import InstinctStore, ValidationError
from tests.helpers import (DAY, INITIALIZED, mined, ROOT, Clock, ProjectCase, child_env,
                           cli_process, init_msg, mcp_in_process, read, req, rows, seeds_db,
                           serve_once, setUpModule, temp_dir, tool_result, validate, write)


T0 = ProjectCase.T0           # the fixed "now" (2026-09) of the stores' injected clock


def front_matter(text):
    """'---\\nkey: value\\n...---\\n' -> ({key: raw value text}, body). Fails on anything else."""
    if not text.startswith("---\n"):
        raise AssertionError("no front-matter: " + text[:40])
    end = text.index("\n---\n", 4)
    fm = {}
    for line in text[4:end].split("\n"):
        m = re.fullmatch(r"([A-Za-z][\w-]*): (\S.*)", line)
        if not m:
            raise AssertionError(f"front-matter line is not 'key: value': {line!r}")
        if m.group(1) in fm:
            raise AssertionError(f"duplicate key {m.group(1)}")
        fm[m.group(1)] = m.group(2)
    return fm, text[end + 5:]


def db_dump(path):
    """Everything a store holds, for before/after comparisons."""
    c = sqlite3.connect(path)
    try:
        return {t: c.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
                for t in ("instincts", "events", "aliases", "settings")}
    finally:
        c.close()


class _Base(ProjectCase):
    """A git project and a 0700 store folder in a temp dir (tests.helpers.ProjectCase)."""


# --- export formats ------------------------------------------------------------
class TestExportFormats(_Base):
    def setUp(self):
        super().setUp()
        self.observe("seq:test->fix->test", 12, self.proj)
        self.observe("combo:pytest+coverage", 11, self.proj)
        self.observe("pref:stdlib-first", 10)
        self.observe("fix:missing-import", 3, self.proj)          # below the rule threshold
        self.store.consolidate()

    def test_no_argument_export_is_the_seed_contract(self):
        rules = self.store.export_rules()
        self.assertIsInstance(rules, list)
        # list's records, but a project's folder (`root`) stays here: its repository's id goes,
        # for a repository with no remote the folder's fingerprint (issue 32)
        self.assertEqual(rules, [{k: v for k, v in r.items() if k != "root"}
                                 | ({"repo": r["project"]} if r["project"] else {})
                                 for r in self.store.list(min_confidence=10)])
        self.assertEqual(sum("repo" in r for r in rules), 2)
        self.assertEqual({r["pattern"] for r in rules},
                         {"seq:test->fix->test", "combo:pytest+coverage", "pref:stdlib-first"})
        self.assertEqual(self.store.export_rules(min_confidence=3, category="fix_pattern")[0]["pattern"],
                         "fix:missing-import")

    def test_one_factual_line_per_rule(self):
        text = self.store.export_rules(format="claude")
        lines = [ln for ln in text.splitlines() if ln.startswith("- ")]
        self.assertEqual(lines, ["- Usual workflow: test → fix → test (rule, observed 12×, noted, this project)",
                                 "- Used together: pytest + coverage (rule, observed 11×, noted, this project)",
                                 "- Preference: stdlib-first (rule, observed 10×, noted, all projects)"])
        self.assertTrue(text.startswith("<!-- instinct:begin -->\n"))
        self.assertTrue(text.endswith("<!-- instinct:end -->"))
        self.assertNotIn("missing-import", text)
        self.assertEqual(text, self.store.export_rules(format="claude"))      # deterministic

    def test_cursor_front_matter(self):
        fm, body = front_matter(self.store.export_rules(format="cursor"))
        self.assertEqual(set(fm), {"description", "alwaysApply"})
        self.assertEqual(fm["alwaysApply"], "true")          # the YAML boolean, not "true" quoted
        self.assertTrue(fm["description"].strip() and ":" not in fm["description"])
        self.assertIn("- Usual workflow: test → fix → test (rule, observed 12×, noted, this project)", body)

    def test_windsurf_front_matter(self):
        text = self.store.export_rules(format="windsurf")
        fm, body = front_matter(text)
        self.assertEqual(fm["trigger"], "always_on")
        self.assertLessEqual(set(fm), {"trigger", "description", "globs"})
        self.assertIn("pytest + coverage", body)

    def test_skill_folder_and_front_matter(self):
        res = self.store.export_rules(format="skill", write=".claude/skills/team-habits")
        path = os.path.join(self.proj, ".claude", "skills", "team-habits", "SKILL.md")
        self.assertEqual(res["path"], path)
        fm, body = front_matter(self.read(path))
        self.assertEqual(set(fm), {"name", "description"})
        self.assertEqual(fm["name"], "team-habits")
        self.assertRegex(fm["name"], r"^[a-z0-9]+(-[a-z0-9]+)*$")
        self.assertTrue(1 <= len(fm["name"]) <= 64)
        self.assertTrue(1 <= len(fm["description"]) <= 1024)
        self.assertIn("Preference: stdlib-first", body)
        # naming SKILL.md itself is the same target
        again = self.store.export_rules(format="skill", write=path)
        self.assertFalse(again["changed"])
        for bad in ("Team_Habits", "-x", "a--b", "x" * 65, "claude-habits"):
            with self.subTest(bad=bad), self.assertRaises(ValidationError):
                self.store.export_rules(format="skill", write=os.path.join(self.proj, bad))
            self.assertFalse(os.path.exists(os.path.join(self.proj, bad)))
        fm, _ = front_matter(self.store.export_rules(format="skill"))
        self.assertEqual(fm["name"], "instinct-rules")

    def test_project_scope_and_universal_rules(self):
        other = os.path.join(self.tmp, "other")
        third = os.path.join(self.tmp, "third")
        for d in (other, third):
            os.makedirs(os.path.join(d, ".git"))
        self.observe("seq:test->fix->test", 10, other)              # a rule in 2 projects
        self.observe("seq:lint->commit", 10, other)                 # only in `other`
        self.assertEqual(self.store.consolidate()["promoted_universal"], 2)
        text = self.store.export_rules(format="agents", project=third)
        self.assertIn("test → fix → test", text)            # universal: every project
        self.assertIn("stdlib-first", text)                         # global
        self.assertNotIn("lint", text)                              # another project's own rule
        self.assertNotIn("pytest", text)
        self.assertEqual(text.count("test → fix → test"), 1)
        recs = self.store.export_rules(project=self.proj)
        self.assertEqual(sorted(r["pattern"] for r in recs),
                         ["combo:pytest+coverage", "pref:stdlib-first", "seq:test->fix->test"])
        self.assertEqual(next(r for r in recs if r["pattern"].startswith("seq"))["confidence"], 12)

    def test_size_limits_drop_lowest_confidence(self):
        for i in range(300):
            with self.store._write() as c:
                c.execute("INSERT INTO instincts (pattern, category, confidence, first_seen, last_seen,"
                          " project) VALUES (?, 'preference', ?, 't', 't', '')",
                          (f"pref:rule-number-{i:03d}-" + "w" * 40, 20 + i))
        self.store.consolidate()
        for fmt, limit in (("windsurf", 6000), ("claude", 4000), ("cursor", 12000), ("skill", 20000)):
            with self.subTest(fmt=fmt):
                text = self.store.export_rules(format=fmt)
                size = len(text.encode())
                self.assertLessEqual(size, limit)
                self.assertGreater(size, limit - 200)                # not needlessly short
                kept = [int(n) for n in re.findall(r"rule-number-(\d{3})", text)]
                dropped = 303 - len(kept)
                self.assertIn(f"{dropped} lower-confidence rules omitted", text)
                self.assertEqual(kept, list(range(299, 299 - len(kept), -1)))   # strongest first
        # AGENTS.md: the 32 KiB cap counts the human text of the file too
        agents = os.path.join(self.proj, "AGENTS.md")
        self.write(agents, "# Team notes\n" + "x" * 20000 + "\n")
        res = self.store.export_rules(format="agents", write="AGENTS.md")
        self.assertLessEqual(os.path.getsize(agents), 32 * 1024)
        self.assertGreater(res["dropped"], 0)
        self.assertEqual(res["included"] + res["dropped"], 303)
        self.assertIn(f"{res['dropped']} lower-confidence rules omitted", self.read(agents))
        said = instinct.OPERATIONS["export_rules"].render
        self.assertIn(f"({res['dropped']} lower-confidence rules dropped to fit", said(res))
        self.assertIn("(1 lower-confidence rule dropped to fit", said(dict(res, dropped=1)))

    def test_rules_silenced_by_bad_feedback_stay_out_of_agent_files(self):
        self.store.feedback("combo:pytest+coverage", "bad", project=self.proj)
        self.assertNotIn("pytest", self.store.export_rules(format="cursor"))
        self.assertIn("combo:pytest+coverage", [r["pattern"] for r in self.store.export_rules(project=self.proj)])

    def test_bad_arguments(self):
        for kw in ({"format": "yaml"}, {"category": "no spaces!"}, {"project": "/nonexistent/dir"},
                   {"min_confidence": -1}):
            with self.subTest(kw=kw), self.assertRaises(ValidationError):
                self.store.export_rules(**kw)


# --- --write -------------------------------------------------------------------
class TestWrite(_Base):
    def setUp(self):
        super().setUp()
        self.observe("seq:test->fix->test", 10, self.proj)
        self.store.consolidate()
        self.path = os.path.join(self.proj, "CLAUDE.md")

    def test_whole_file_formats_never_replace_a_file_instinct_did_not_write(self):
        readme = os.path.join(self.proj, "README.md")
        self.write(readme, "# My project\n\nHand-written.\n")
        for fmt in ("cursor", "windsurf", "skill", "json"):
            with self.subTest(fmt=fmt):
                target = readme if fmt != "skill" else os.path.join(self.proj, "sk", "SKILL.md")
                if fmt == "skill":
                    self.write(target, "---\nname: sk\ndescription: mine\n---\nHand-written skill\n")
                before = self.read(target, "rb")
                r = self.cli_process("export", "--format", fmt, "--write", target)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn("was not written by instinct", r.stderr)
                self.assertEqual(self.read(target, "rb"), before)
        self.assertTrue(self.store.export_rules(format="cursor", write=readme, force=True)["changed"])
        self.assertIn("written by `instinct export`", self.read(readme))
        # its own earlier output (and an empty file) is replaced without --force
        self.assertFalse(self.store.export_rules(format="cursor", write=readme)["changed"])
        rules = os.path.join(self.proj, "rules.json")
        self.write(rules, "")
        self.assertTrue(self.store.export_rules(format="json", write=rules, min_confidence=1)["changed"])
        self.observe("seq:another", 10, self.proj)
        self.assertTrue(self.store.export_rules(format="json", write=rules, min_confidence=1)["changed"])

    def test_block_replaced_human_text_byte_exact(self):
        before = "# Project\r\n\r\nHand-written text \u00e9\r\n".encode() + b"\xff\xfe raw bytes\r\n\r\n"
        after = b"\r\n## After the block\r\nkeep me \xc3\xa9 exactly\r\n"
        self.write(self.path, before)
        first = self.store.export_rules(format="claude", write=self.path)
        self.assertTrue(first["changed"])
        data = self.read(self.path, "rb")
        self.assertTrue(data.startswith(before))
        self.assertTrue(data.rstrip(b"\r\n").endswith(b"<!-- instinct:end -->"))
        # a human adds text after the block; the next export must keep both sides byte for byte
        self.write(self.path, data[:data.index(b"<!-- instinct:end -->") + 21] + after)
        self.observe("combo:make+test", 10, self.proj)
        self.store.consolidate()
        second = self.store.export_rules(format="claude", write=self.path)
        self.assertTrue(second["changed"])
        data = self.read(self.path, "rb")
        self.assertTrue(data.startswith(before))
        self.assertTrue(data.endswith(after))
        block = data[len(before):len(data) - len(after)]
        self.assertIn("Used together: make + test (rule, observed 10×, noted, this project)\r\n".encode(), block)
        self.assertNotIn(b"\n", block.replace(b"\r\n", b""))       # the file's CRLF style is kept
        # writing again changes nothing and does not even rewrite the file
        st = os.stat(self.path)
        third = self.store.export_rules(format="claude", write=self.path)
        self.assertFalse(third["changed"])
        self.assertEqual(self.read(self.path, "rb"), data)
        st2 = os.stat(self.path)
        self.assertEqual((st.st_ino, st.st_mtime_ns), (st2.st_ino, st2.st_mtime_ns))

    def test_create_append_idempotent_and_mode_kept(self):
        agents = os.path.join(self.proj, "docs", "AGENTS.md")
        self.store.export_rules(format="agents", write=agents)         # creates dirs and file
        created = self.read(agents, "rb")
        self.assertTrue(created.startswith(b"<!-- instinct:begin -->\n"))
        self.write(self.path, "no trailing newline")
        os.chmod(self.path, 0o640)
        self.store.export_rules(format="claude", write=self.path)
        data = self.read(self.path, "rb")
        self.assertTrue(data.startswith(b"no trailing newline\n\n<!-- instinct:begin -->\n"))
        self.assertTrue(data.endswith(b"<!-- instinct:end -->\n"))
        self.assertEqual(os.stat(self.path).st_mode & 0o777, 0o640)
        for fmt, target in (("claude", self.path), ("agents", agents), ("cursor", self.proj),
                            ("windsurf", self.proj), ("markdown", "notes.md"), ("json", "rules.json")):
            with self.subTest(fmt=fmt):
                one = self.store.export_rules(format=fmt, write=target)
                snap = self.read(one["path"], "rb")
                two = self.store.export_rules(format=fmt, write=target)
                self.assertFalse(two["changed"])
                self.assertEqual(self.read(one["path"], "rb"), snap)
        self.assertTrue(os.path.isfile(os.path.join(self.proj, ".cursor", "rules", "instinct.mdc")))
        self.assertTrue(os.path.isfile(os.path.join(self.proj, ".windsurf", "rules", "instinct.md")))
        self.assertEqual(json.loads(self.read(os.path.join(self.proj, "rules.json"))),
                         self.store.export_rules())
        leftovers = [f for _, _, fs in os.walk(self.proj) for f in fs if f.endswith(".tmp")]
        self.assertEqual(leftovers, [])

    def test_whole_file_formats_replace_the_file(self):
        mdc = os.path.join(self.proj, ".cursor", "rules", "instinct.mdc")
        self.write(mdc, "stale content\n")
        self.store.export_rules(format="cursor", write=mdc)
        self.assertEqual(self.read(mdc), self.store.export_rules(format="cursor"))

    def test_refuses_symlink_and_outside_unless_forced(self):
        real = os.path.join(self.proj, "AGENTS.md")
        self.write(real, "# agents\n")
        os.symlink("AGENTS.md", self.path)                           # CLAUDE.md -> AGENTS.md
        with self.assertRaisesRegex(ValidationError, "symlink"):
            self.store.export_rules(format="claude", write=self.path)
        self.assertEqual(self.read(real), "# agents\n")
        self.store.export_rules(format="claude", write=self.path, force=True)
        self.assertTrue(os.path.islink(self.path))                   # the link stays a link
        self.assertIn("<!-- instinct:begin -->", self.read(real))
        outside = os.path.join(self.tmp, "elsewhere", "CLAUDE.md")
        for target in (outside, "../elsewhere/CLAUDE.md"):
            with self.subTest(target=target), self.assertRaisesRegex(ValidationError, "outside the project"):
                self.store.export_rules(format="claude", write=target)
        self.assertFalse(os.path.exists(os.path.dirname(outside)))
        # a symlinked directory leading out of the project counts as outside
        os.makedirs(os.path.join(self.tmp, "out"))
        os.symlink(os.path.join(self.tmp, "out"), os.path.join(self.proj, "linkdir"))
        with self.assertRaisesRegex(ValidationError, "outside the project"):
            self.store.export_rules(format="claude", write="linkdir/CLAUDE.md")
        self.store.export_rules(format="claude", write=outside, force=True)
        self.assertTrue(os.path.isfile(outside))

    def test_broken_markers_refused_file_untouched(self):
        for text in ("a\n<!-- instinct:begin -->\nb\n", "<!-- instinct:end -->\n<!-- instinct:begin -->\n",
                     "<!-- instinct:begin -->\n<!-- instinct:end -->\n" * 2):
            with self.subTest(text=text):
                self.write(self.path, text)
                with self.assertRaises(ValidationError):
                    self.store.export_rules(format="claude", write=self.path)
                self.assertEqual(self.read(self.path), text)

    def test_pattern_cannot_forge_a_marker(self):
        self.observe("fix:use <!-- instinct:end --> markers", 10, self.proj)
        self.store.consolidate()
        self.store.export_rules(format="claude", write=self.path)
        self.store.export_rules(format="claude", write=self.path)
        text = self.read(self.path)
        self.assertEqual(text.count("<!-- instinct:end -->"), 1)
        self.assertIn("&lt;!-- instinct:end -->markers", text)

    def test_cli_write(self):
        self.write(self.path, "# Mine\n")
        r = self.cli_process("export", "--format", "claude", "--write", "CLAUDE.md")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Wrote 1 rule to CLAUDE.md", r.stdout)
        data = self.read(self.path, "rb")
        r = self.cli_process("export", "--format", "claude", "--write", "CLAUDE.md")
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "CLAUDE.md is up to date (1 rule)"))
        self.assertEqual(self.read(self.path, "rb"), data)
        r = self.cli_process("export", "--format", "claude", "--write", os.path.join(self.tmp, "x.md"))
        self.assertEqual(r.returncode, 2)
        self.assertRegex(r.stderr, r"^instinct: error: .*outside the project.*--force\)\n$")
        r = self.cli_process("export", "--format", "claude", "--write", os.path.join(self.tmp, "x.md"), "--force")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.cli_process("--json", "export", "--force", "--write", os.path.join(self.tmp, "y.md"), "--format",
                             "agents")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["path"], os.path.join(self.tmp, "y.md"))


# --- import ----------------------------------------------------------------------
class TestImport(_Base):
    def setUp(self):
        super().setUp()
        self.teammate = self.open(os.path.join(self.tmp, "mate.db"))
        self.clock.t = T0 - 10 * DAY
        self.observe("seq:test->fix->test", 14, store=self.teammate)
        self.observe("pref:stdlib-first", 11, "abcdefabcdef", store=self.teammate)
        self.clock.t = T0
        self.observe("seq:test->fix->test", 12)                        # local: lower, later
        self.observe("combo:pytest+coverage", 20)
        self.teammate.consolidate()
        self.file = os.path.join(self.tmp, "export.json")
        self.write(self.file, json.dumps(self.teammate.export_rules()))

    def test_merge_rule_and_idempotency(self):
        first = self.store.import_rules(self.file)
        self.assertEqual((first["records"], first["added"], first["updated"]), (2, 1, 1))
        after_one = db_dump(self.db)
        second = self.store.import_rules(self.file)
        self.assertEqual((second["added"], second["updated"], second["unchanged"]), (0, 0, 2))
        self.assertEqual(db_dump(self.db), after_one)                  # events included
        seq = self.store.get("seq:test->fix->test")
        mate = self.teammate.get("seq:test->fix->test")
        self.assertEqual(seq["confidence"], 14)                         # max(12, 14)
        self.assertEqual(seq["first_seen"], mate["first_seen"])         # min: the teammate's, earlier
        self.assertEqual(seq["last_seen"], instinct._iso(T0))           # max: ours
        self.assertEqual(seq["level"], "rule")
        self.assertEqual(self.store.get("pref:stdlib-first", "abcdefabcdef")["confidence"], 11)
        self.assertEqual(self.store.get("combo:pytest+coverage")["confidence"], 20)   # untouched
        # {"rules": [...]} (the MCP/structured form) is the same file
        self.write(self.file, json.dumps({"rules": self.teammate.export_rules(), "count": 2}))
        self.assertEqual(self.store.import_rules(self.file)["unchanged"], 2)
        self.assertEqual(db_dump(self.db), after_one)

    def test_remap_project_and_aliases(self):
        self.store.merge("seq:test-fix-test", "seq:test->fix->test")
        self.write(self.file, json.dumps([{"pattern": "seq:test-fix-test", "confidence": 30,
                                           "project": "abcdefabcdef"}]))
        self.store.import_rules(self.file, project="")
        self.assertEqual(self.store.get("seq:test->fix->test")["confidence"], 30)
        self.assertEqual(self.store.list(project="abcdefabcdef"), [])

    def test_invalid_files_change_nothing(self):
        good = self.teammate.export_rules()[0]
        cases = {
            "not json": "{nope",
            "wrong shape": json.dumps({"instincts": []}),
            "scalar": "42",
            "record not object": json.dumps([good, "x"]),
            "bad pattern": json.dumps([good, dict(good, pattern="seq:\u0007bell")]),
            "empty pattern": json.dumps([dict(good, pattern="  ")]),
            "bad confidence": json.dumps([dict(good, confidence="12")]),
            "zero confidence": json.dumps([dict(good, confidence=0)]),
            "path project": json.dumps([dict(good, project="/home/x/repo")]),
            "bad time": json.dumps([dict(good, first_seen="yesterday")]),
            "bad level": json.dumps([dict(good, level="legendary", promoted=7)]),
            "bad metadata": json.dumps([dict(good, metadata=[1, 2])]),
        }
        before = db_dump(self.db)
        for name, text in cases.items():
            with self.subTest(name=name):
                self.write(self.file, text)
                with self.assertRaises(ValidationError) as cm:
                    self.store.import_rules(self.file)
                self.assertNotIn("\n", str(cm.exception))
                self.assertEqual(db_dump(self.db), before)
        with self.assertRaisesRegex(ValidationError, "cannot read"):
            self.store.import_rules(os.path.join(self.tmp, "missing.json"))
        r = self.cli_process("import", self.file)
        self.assertEqual(r.returncode, 2)
        self.assertRegex(r.stderr, r"^instinct: error: .*record 1: .*\n$")
        self.assertEqual(r.stdout, "")
        self.assertEqual(db_dump(self.db), before)

    def test_cli_export_import_round_trip(self):
        out = os.path.join(self.tmp, "mine.json")
        r = self.cli_process("export", "--write", out, "--force")
        self.assertEqual(r.returncode, 0, r.stderr)
        other = os.path.join(self.tmp, "other.db")
        for _ in range(2):
            r = self.cli_process("import", out, db=other)
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("0 added, 0 updated, 2 unchanged", r.stdout)
        mine = {(x["pattern"], x["confidence"]) for x in self.store.export_rules()}
        theirs = {(x["pattern"], x["confidence"]) for x in self.open(other).export_rules()}
        self.assertEqual(mine, theirs)



# --- a teammate's clone (issue 32, item 3): nothing of the machine leaves it ------------------
class TestTeammate(unittest.TestCase):
    """Two fake HOMEs: zelda's checkout (remote on a planted host) exports with the README's
    recipe; bob's clone of the same repository, at another path and under another URL form,
    imports it from a worktree and gets the items in `suggest` and the session-start briefing."""
    USER, HOST = "zelda", "build-host-7.corp.example"

    def setUp(self):
        self.tmp = temp_dir(self)
        self.home_a, self.home_b = (os.path.join(self.tmp, h) for h in ("home-zelda", "bob"))
        self.repo_a = os.path.join(self.home_a, "src", "shop")
        write(os.path.join(self.repo_a, ".git", "config"), '[core]\n\tbare = false\n[remote "o'
              f'rigin"]\n\turl = ssh://{self.USER}@{self.HOST}:2222/Team/shop.git\n')
        clone = os.path.join(self.home_b, "code", "elsewhere", "shop-copy")
        write(os.path.join(clone, ".git", "config"),
              f'[remote "origin"]\n\tfetch = +refs/heads/*\n\turl = https://{self.HOST}/team/shop'
              '\n')
        write(os.path.join(clone, ".git", "worktrees", "wt", "commondir"), "../..\n")
        self.wt_b = os.path.join(self.home_b, "wt")                 # bob works in a worktree
        write(os.path.join(self.wt_b, ".git"), f"gitdir: {clone}/.git/worktrees/wt\n")
        for h in (self.home_a, self.home_b):
            os.makedirs(os.path.join(h, "store"), 0o700)
        with InstinctStore(self.db(self.home_a), cwd=self.repo_a) as s:
            for _ in range(12):
                s.observe("pref:build=quuxmake", project=self.repo_a)
                s.observe("seq:lint->test")
            s.consolidate()

    def db(self, home):
        return os.path.join(home, "store", "i.db")

    def run_in(self, home, cwd, *args, stdin=None):
        r = cli_process(*args, cwd=cwd, input=stdin, env=child_env(
            home, self.db(home), USER=self.USER if home == self.home_a else "bob",
            LOGNAME=self.USER if home == self.home_a else "bob"))
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def test_no_export_format_or_share_file_names_the_machine(self):
        shared = {}
        for fmt in instinct._Core._EXPORT_FORMATS:
            for scope in ((), ("--project", ".")):
                shared[fmt, scope] = self.run_in(self.home_a, self.repo_a, "export", "--format",
                                                 fmt, *scope).stdout
            target = "skills/shop-habits" if fmt == "skill" else "."
            self.run_in(self.home_a, self.repo_a, "export", "--format", fmt, "--write", target)
        for folder, dirs, files in os.walk(self.repo_a):
            dirs[:] = [d for d in dirs if d != ".git"]
            shared.update({os.path.join(folder, f): read(os.path.join(folder, f)) for f in files})
        self.assertEqual(len([k for k in shared if isinstance(k, str)]),  # one file per format
                         len(instinct._Core._EXPORT_FORMATS))
        for where, text in shared.items():
            with self.subTest(where=where):
                self.assertIn("quuxmake", text)                            # not vacuous
                for planted in (self.home_a, self.USER, self.HOST, "build-host", "/home/"):
                    self.assertNotIn(planted, text)
        rec = next(r for r in json.loads(shared["json", ()]) if r["project"])
        self.assertNotIn("root", rec)
        self.assertEqual(rec["repo"], instinct._repo_id(self.repo_a))
        self.assertNotEqual(rec["repo"], rec["project"])            # the remote's, not the folder's

    def test_the_readme_recipe_gives_a_clone_at_another_path_the_habits(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            m = re.search(r"`instinct export([^`]*) > team\.json` then "
                          r"`instinct import team\.json`", f.read())
        self.assertIsNotNone(m, "the README's Sharing recipe")
        team = self.run_in(self.home_a, self.repo_a, "export", *m.group(1).split()).stdout
        write(os.path.join(self.wt_b, "team.json"), team)           # sent to bob
        self.run_in(self.home_b, self.wt_b, "config", "holdout_percent", "0")
        r = self.run_in(self.home_b, self.wt_b, "import", "team.json")
        self.assertIn("2 added", r.stdout)
        self.assertIn("quuxmake", self.run_in(self.home_b, self.wt_b, "suggest").stdout)
        event = {"session_id": "b1", "cwd": self.wt_b, "hook_event_name": "SessionStart",
                 "source": "startup"}
        r = self.run_in(self.home_b, self.wt_b, "hook", "session-start", stdin=json.dumps(event))
        briefing = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
        self.assertIn("quuxmake", briefing)
        self.assertIn("lint", briefing)
        # in another project of bob's, the project's habit stays out
        other = os.path.join(self.home_b, "other")
        write(os.path.join(other, ".git", "config"), '[remote "origin"]\n\turl = https://x.test\n')
        self.assertNotIn("quuxmake", self.run_in(self.home_b, other, "suggest").stdout)

    def test_an_empty_export_says_why_on_stderr(self):
        r = self.run_in(self.home_b, self.wt_b, "export")
        self.assertEqual(r.stdout, "[]\n")
        self.assertRegex(r.stderr, r"^instinct: nothing at confidence >= 10 to export; no pattern "
                         r"is mature yet .*--min-confidence 1 exports raw ones too\)\n$")
        r = self.run_in(self.home_a, self.repo_a, "export", "--min-confidence", "50", "--format",
                        "markdown")
        self.assertRegex(r.stderr, r"^instinct: nothing at confidence >= 50 to export; 2 mature "
                         r"patterns \(confidence 12 and up.*add --min-confidence 12 to export "
                         r"them\n$")


# --- merge -----------------------------------------------------------------------
class TestMerge(_Base):
    def test_merge_via_cli(self):
        self.observe("seq:test->fix", 3)
        self.observe("seq:test->fix->test", 4)
        r = self.cli_process("merge", "seq:test->fix", "seq:test->fix->test")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "seq:test->fix -> seq:test->fix->test (1 rows merged)")
        self.assertEqual(self.store.get("seq:test->fix->test")["confidence"], 7)
        self.cli_process("observe", "seq:test->fix")
        self.assertEqual(self.store.get("seq:test->fix->test")["confidence"], 8)
        self.assertEqual([r["pattern"] for r in self.store.list()], ["seq:test->fix->test"])


# --- backup and restore ----------------------------------------------------------
_WRITER = r"""
import os, sys
sys.path.insert(0, sys.argv[1])
import instinct
s = instinct.InstinctStore(sys.argv[2])
s.observe("seq:writer-%s->start" % sys.argv[3])
print("ready", flush=True)
i = 0
while not os.path.exists(sys.argv[4]) and i < 500000:
    s.observe("seq:w%s->step%d" % (sys.argv[3], i % 40), project="abcdefabcdef")
    i += 1
s.close()
print(i + 1, flush=True)
"""


class TestBackupRestore(_Base):
    def test_backup_while_two_writers_run(self):
        self.observe("pref:seed", 3)
        stop = os.path.join(self.tmp, "stop")
        writers = [subprocess.Popen([sys.executable, "-c", _WRITER, ROOT, self.db, str(n), stop],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                   for n in (1, 2)]
        try:
            for w in writers:
                self.assertEqual(w.stdout.readline().strip(), "ready", w.stderr.read() if w.poll() else "")
            # both writers are inside their write loops now
            res = self.store.backup(os.path.join(self.tmp, "snap.db"))
            b2 = self.store.backup(os.path.join(self.tmp, "snap2.db"))
            self.assertEqual([w.poll() for w in writers], [None, None])   # still writing
        finally:
            self.write(stop, "")
            outs = [w.communicate(timeout=60) for w in writers]
        done = [int(o.split()[-1]) for o, _ in outs]
        self.assertEqual([w.returncode for w in writers], [0, 0], [e for _, e in outs])
        for snap in (res, b2):
            c = sqlite3.connect(snap["path"])
            self.assertEqual(c.execute("PRAGMA integrity_check").fetchall(), [("ok",)])
            conf, = c.execute("SELECT sum(confidence) FROM instincts").fetchone()
            obs, = c.execute("SELECT count(*) FROM events WHERE kind = 'observe'").fetchone()
            self.assertEqual(conf, obs)                    # a consistent snapshot: each observe has both
            self.assertTrue(3 + 2 <= conf <= 3 + sum(done))
            self.assertEqual(c.execute("PRAGMA journal_mode").fetchone()[0], "delete")
            c.close()
            self.assertEqual(os.stat(snap["path"]).st_mode & 0o777, 0o600)
        self.assertLessEqual(res["events"], b2["events"])
        live_total = sum(r["confidence"] for r in self.store.list())
        self.assertEqual(live_total, 3 + sum(done))        # no increment lost meanwhile
        # restore the first snapshot into the live store
        out = self.store.restore(res["path"])
        self.assertEqual(out["instincts"], res["instincts"])
        self.assertEqual(self.store.doctor()["ok"], True)
        self.assertEqual(sum(r["confidence"] for r in self.store.list()),
                         sqlite3.connect(res["path"]).execute("SELECT sum(confidence) FROM instincts").fetchone()[0])
        bak = sqlite3.connect(self.db + ".bak")
        self.assertEqual(bak.execute("SELECT sum(confidence) FROM instincts").fetchone()[0], live_total)
        bak.close()

    def test_restore_keeps_bak_and_store_keeps_working(self):
        self.observe("seq:a->b", 4)
        snap = self.store.backup(os.path.join(self.tmp, "b.db"))["path"]
        self.observe("seq:c->d", 2)
        other = self.open(self.db)                          # a second handle on the live file
        self.assertEqual(len(other.list()), 2)
        res = self.store.restore(snap)
        self.assertEqual(res["previous"], self.db + ".bak")
        self.assertEqual([r["pattern"] for r in self.store.list()], ["seq:a->b"])
        self.assertEqual([r["pattern"] for r in other.list()], ["seq:a->b"])     # sees it too
        self.store.observe("seq:a->b")
        other.observe("seq:a->b")
        self.assertEqual(self.store.get("seq:a->b")["confidence"], 6)
        kept = sqlite3.connect(self.db + ".bak")
        self.assertEqual(sorted(kept.execute("SELECT pattern, confidence FROM instincts")),
                         [("seq:a->b", 4), ("seq:c->d", 2)])
        kept.close()
        self.assertTrue(self.store.doctor()["ok"])
        r = self.cli_process("restore", snap)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("previous database is kept as " + self.db + ".bak", r.stdout)

    def test_backup_refuses_existing_target_unless_forced(self):
        target = os.path.join(self.tmp, "b.db")
        self.write(target, "precious")
        with self.assertRaisesRegex(ValidationError, "already exists"):
            self.store.backup(target)
        self.assertEqual(self.read(target), "precious")
        r = self.cli_process("backup", target)
        self.assertEqual(r.returncode, 2)
        r = self.cli_process("backup", "--force", target)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^Backed up 0 instincts and 0 events to ")
        for bad in (self.db, self.dbdir, os.path.join(self.tmp, "nodir", "b.db")):
            with self.subTest(bad=bad), self.assertRaises(ValidationError):
                self.store.backup(bad, force=True)

    def test_restore_refuses_bad_backups(self):
        self.observe("seq:keep->me", 2)
        before = db_dump(self.db)
        garbage = os.path.join(self.tmp, "garbage.db")
        self.write(garbage, b"SQLite format 3\x00" + b"\x07" * 5000)
        foreign = os.path.join(self.tmp, "foreign.db")
        c = sqlite3.connect(foreign)
        c.execute("CREATE TABLE notes (x)")
        c.commit()
        c.close()
        newer = os.path.join(self.tmp, "newer.db")
        self.store.backup(newer)
        c = sqlite3.connect(newer)
        c.execute(f"PRAGMA user_version = {instinct.SCHEMA_VERSION + 1}")
        c.commit()
        c.close()
        damaged = os.path.join(self.tmp, "damaged.db")
        shutil.copyfile(self._big_db(), damaged)
        self._damage(damaged)
        for path, why in ((garbage, "not a usable instinct backup"), (foreign, "no instincts table"),
                          (newer, "newer than this instinct"), (damaged, "integrity check failed|malformed"),
                          (os.path.join(self.tmp, "none.db"), "no backup file")):
            with self.subTest(path=os.path.basename(path)):
                with self.assertRaisesRegex(ValidationError, why):
                    self.store.restore(path)
                self.assertEqual(db_dump(self.db), before)
                self.assertFalse(os.path.exists(self.db + ".bak"))
        self.assertEqual([f for f in os.listdir(self.dbdir) if f.startswith(".instinct")], [])

    def test_restore_migrates_a_seed_schema_backup(self):
        seed = os.path.join(self.tmp, "seed.db")
        seeds_db(seed, [("seq:old->habit", "sequence", 7, datetime(2025, 1, 1), datetime(2025, 2, 1), "cli",
                         "", 1, "{}")], page_size=1024)      # a page size unlike the live WAL file's
        self.store.restore(seed)
        self.assertEqual(self.store.get("seq:old->habit")["confidence"], 7)
        self.store.observe("seq:old->habit")
        self.assertEqual(self.store.get("seq:old->habit")["confidence"], 8)
        self.assertEqual(self.store.stats()["schema_version"], instinct.SCHEMA_VERSION)

    # helpers shared with the doctor tests
    def _big_db(self):
        path = os.path.join(self.tmp, "big.db")
        s = InstinctStore(path, clock=Clock(T0))
        with s._write() as c:
            c.executemany("INSERT INTO instincts (pattern, category, confidence, first_seen, last_seen,"
                          " project) VALUES (?, 'sequence', ?, 't', 't', '')",
                          [(f"seq:step-{i}->next-{i}-" + "p" * 60, i % 30 + 1) for i in range(3000)])
        s.close()                                          # checkpoints the WAL into the file
        self.assertFalse(os.path.exists(path + "-wal"))
        return path

    @staticmethod
    def _damage(path):
        page = 4096
        with open(path, "r+b") as f:
            size = f.seek(0, 2)
            start = (size // page // 2) * page             # pages in the middle of the file
            f.seek(start)
            f.write(bytes((i * 131 + 7) % 256 for i in range(page * 4)))


# --- doctor --------------------------------------------------------------------------
class TestDoctor(_Base):
    def test_fresh_store_is_healthy(self):
        self.observe("seq:a->b", 2)
        r = self.store.doctor()
        self.assertTrue(r["ok"], r)
        self.assertEqual([c["name"] for c in r["checks"]],
                         ["integrity", "schema", "fts", "wal", "modes", "aliases", "anchors", "lint"])
        self.assertTrue(all(c["ok"] and c["level"] == "ok" for c in r["checks"]), r)
        cli = self.cli_process("doctor")
        self.assertEqual(cli.returncode, 0, cli.stdout + cli.stderr)
        self.assertTrue(cli.stdout.strip().endswith(": healthy"), cli.stdout)

    def test_damaged_copy_fails_with_readable_report(self):
        copy = os.path.join(self.dbdir, "copy.db")
        shutil.copyfile(TestBackupRestore._big_db(self), copy)
        os.chmod(copy, 0o600)
        self.assertEqual(self.cli_process("doctor", db=copy).returncode, 0)
        TestBackupRestore._damage(copy)
        r = self.cli_process("doctor", db=copy)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertRegex(r.stdout, r"(?m)^  ERROR +integrity ")
        self.assertRegex(r.stdout, r"(?m)^.*copy\.db: [1-9]\d* problems?, \d+ warnings?$")
        r = self.cli_process("--json", "doctor", db=copy)
        self.assertEqual(r.returncode, 1)
        self.assertFalse(json.loads(r.stdout)["ok"])
        # not a database at all: reported, not a traceback
        junk = os.path.join(self.dbdir, "junk.db")
        self.write(junk, b"\x00garbage" * 1000)
        r = self.cli_process("doctor", db=junk)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stdout, r"(?m)^  ERROR +open +.*not an instinct database")

    def test_table_and_index_disagree(self):
        copy = os.path.join(self.dbdir, "copy.db")
        shutil.copyfile(TestBackupRestore._big_db(self), copy)
        with open(copy, "rb") as f:
            data = f.read()
        i = data.index(b"seq:step-1500->")                  # in the table or in its unique index
        with open(copy, "wb") as f:
            f.write(data[:i] + b"seq:STEP-1500->" + data[i + 15:])
        r = self.open(copy).doctor()
        self.assertFalse(r["ok"])
        check = r["checks"][0]
        self.assertEqual((check["name"], check["level"]), ("integrity", "error"))
        self.assertIn("sqlite_autoindex_instincts_1", check["detail"])
        self.assertIn("instinct restore", check["detail"])

    def test_fts_out_of_sync_and_warnings(self):
        self.observe("seq:a->b", 2)
        if not self.store._fts():
            self.skipTest("no FTS5 in this SQLite build")
        self.store.search("a")                              # index what observe queued
        with self.store._write() as c:
            c.execute("DROP TRIGGER instincts_fts_au")
            c.execute("UPDATE instincts SET pattern = 'seq:x->y'")
        r = self.store.doctor()
        self.assertFalse(r["ok"])
        self.assertEqual([c["name"] for c in r["checks"] if c["level"] == "error"], ["fts"])
        # loose modes and unapplied aliases are warnings, not failures
        os.mkdir(os.path.join(self.tmp, "fresh"), 0o700)
        fresh = self.open(os.path.join(self.tmp, "fresh", "f.db"))
        fresh.observe("seq:p->q")
        fresh.merge("seq:p-q", "seq:p->q")
        with fresh._write() as c:
            c.execute("INSERT INTO instincts (pattern, first_seen, last_seen) VALUES ('seq:p-q', 't', 't')")
        os.chmod(fresh.path, 0o644)
        r = fresh.doctor()
        self.assertTrue(r["ok"])
        warn = {c["name"]: c["detail"] for c in r["checks"] if c["level"] == "warn"}
        self.assertEqual(set(warn), {"modes", "aliases"})
        self.assertIn("0644", warn["modes"])
        self.assertIn("1 patterns are stored under an alias", warn["aliases"])


# --- gc ------------------------------------------------------------------------------
class TestGC(_Base):
    def test_gc_reports_what_it_did(self):
        self.observe("seq:new->name", 3)
        self.store.merge("seq:old-name", "seq:new->name")
        # a row under the alias (e.g. written by an older version) and an alias chain
        with self.store._write() as c:
            c.execute("INSERT INTO instincts (pattern, confidence, first_seen, last_seen)"
                      " VALUES ('seq:old-name', 4, 't', 't')")
            c.execute("INSERT INTO aliases VALUES ('seq:older', 'seq:old-name')")
        self.observe("seq:stale", 1)
        for i in range(400):
            self.store.observe(f"seq:bulk-{i}->" + "z" * 200)
        for i in range(400):
            self.store.forget(f"seq:bulk-{i}->" + "z" * 200)
        self.store.config("events_max_rows", "100")
        self.clock.t = T0 + 91 * DAY
        self.store.observe("seq:new->name")                 # fresh: not decayed
        r = self.store.gc()
        self.assertEqual(r["aliases_applied"], 1)
        self.assertEqual(self.store.get("seq:new->name")["confidence"], 8)     # 3 + 4 + 1
        self.assertEqual(r["decayed"], 1)                    # seq:stale
        self.assertEqual(r["deleted"], 1)
        self.assertGreater(r["events_pruned"], 300)        # forget already took the 400 observes' events
        self.assertLessEqual(self.store.stats()["events"], 100)
        self.assertLess(r["bytes_after"], r["bytes_before"])
        self.assertEqual(db_dump(self.db)["aliases"], [("seq:old-name", "seq:new->name"),
                                                        ("seq:older", "seq:new->name")])
        self.assertTrue(self.store.doctor()["ok"])
        self.assertEqual(os.path.getsize(self.db + "-wal") if os.path.exists(self.db + "-wal") else 0, 0)
        self.store.close()
        out = self.cli_process("gc")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertRegex(out.stdout, r"^Aliases applied: 0\nDecayed: 0\nDeleted: 0\nEvents pruned: \d+\n"
                                     r"Memories archived: 0\nArchived memories deleted: 0\n"
                                     r"Optimized and vacuumed: \d+ -> \d+ bytes\n"
                                     r"Backup: \S+-gc\.bak \(`instinct restore` it to undo\)\n$")


# --- registry / MCP surface --------------------------------------------------------
class TestSurface(_Base):
    def test_operations_reach_cli_and_mcp(self):
        ops = {o.name: o for o in instinct.OPERATIONS.values()}
        for name, cli in (("export_rules", "export"), ("import_rules", "import"),
                          ("backup", "backup"), ("restore", "restore"), ("doctor", "doctor"),
                          ("gc", "gc"), ("merge", "merge")):
            with self.subTest(name=name):
                self.assertEqual((ops[name].cli, ops[name].mcp), (cli, name))
        self.assertEqual(set(ops["export_rules"].params[1].choices), set(instinct._Core._EXPORT_FORMATS))
        srv, _ = mcp_in_process(self.store, "2025-06-18")
        self.observe("seq:a->b", 10)
        call = lambda name, args: tool_result(srv, name, args, mid=1)  # noqa: E731
        r = call("export_rules", {})
        self.assertEqual(r["structuredContent"]["count"], 1)
        self.assertEqual(r["structuredContent"]["rules"], self.store.export_rules())
        r = call("export_rules", {"format": "cursor", "project": ""})
        self.assertTrue(r["structuredContent"]["text"].startswith("---\n"))
        r = call("doctor", {})
        self.assertTrue(r["structuredContent"]["ok"])
        r = call("export_rules", {"write": "/etc/instinct-test.md"})
        self.assertTrue(r["isError"])
        self.assertIn("outside the project", r["content"][0]["text"])
        tools = srv.handle_message({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        schemas = {t["name"]: t["outputSchema"] for t in tools["result"]["tools"]}
        self.assertIn("rules", schemas["export_rules"]["properties"])
        self.assertEqual(schemas["conflicts"]["required"], ["conflicts", "count"])


# --- an export with nothing to export (issue 21) -----------------------------------------
class TestExportNothing(ProjectCase):
    def test_no_rules_writes_no_file_and_a_rules_file_holds_what_the_briefing_shows(self):
        target = os.path.join(self.proj, "CLAUDE.md")
        r = self.cli_process("export", "--format", "claude", "--write", "CLAUDE.md")
        self.assertEqual((r.returncode, r.stdout), (1, ""))
        self.assertEqual(r.stderr, "instinct: error: nothing the session briefing shows here to "
                         f"export, {target} not written; no pattern is mature yet (instinct "
                         "import-history learns from past sessions)\n")
        self.observe("pref:tabs", 6, project=self.proj)
        self.observe("seq:lint->test", 7)
        self.store.consolidate()
        briefing = [ln[2:] for ln in self.store._briefing(self.proj).splitlines()
                    if ln.startswith("- ")]
        self.assertEqual(len(briefing), 2)
        for fmt, path in (("claude", target), ("cursor", os.path.join(self.proj, ".cursor", "rules",
                                                                        "instinct.mdc"))):
            with self.subTest(fmt=fmt):
                r = self.cli_process("export", "--format", fmt, "--write", self.proj)
                self.assertEqual(r.returncode, 0, r.stderr)
                lines = [ln[2:] for ln in self.read(path).splitlines() if ln.startswith("- ")]
                self.assertEqual(lines, briefing)                 # the same items, same words
        r = self.cli_process("export", "--format", "claude", "--write", "CLAUDE.md",
                             "--min-confidence", "7")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("Preference: tabs", self.read(target))
        # a block instinct wrote before is brought up to date, to nothing if need be
        r = self.cli_process("export", "--format", "claude", "--write", "CLAUDE.md",
                             "--min-confidence", "50")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("No rules learned yet.", self.read(target))

    def test_the_mcp_tool_gets_the_same_error(self):
        with self.assertRaisesRegex(instinct.NotFoundError,
                                    "nothing the session briefing shows here to export"):
            self.store.export_rules(format="agents", write=os.path.join(self.proj, "AGENTS.md"))
        self.assertFalse(os.path.exists(os.path.join(self.proj, "AGENTS.md")))


# --- lint: learned rules against the project's rules files (issue 20, part 3) -------------
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


class _LintCase(ProjectCase):
    def learn(self, *patterns, n=6, source=""):
        fp = instinct.project_fingerprint(self.proj)
        for p in patterns:
            if source == "hooks":             # evidence: what mining credits
                mined(self.store, p, fp, n)
                continue
            for _ in range(n):
                self.store.observe(p, project=fp, source=source)
        self.store.consolidate()

    def files(self, **named):
        for rel, text in named.items():
            write(os.path.join(self.proj, rel), text)

    @staticmethod
    def short(found):
        return sorted((f["kind"], f["pattern"], f["file"], f["line"]) for f in found)


class TestPlanted(_LintCase):
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
        r = self.cli_process("lint")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("  contradiction learned: Preference: pkg = pnpm (pref:pkg=pnpm)\n"
                      "                written: CLAUDE.md:7: Use npm for dependencies:\n", r.stdout)
        self.assertTrue(r.stdout.endswith("2 contradictions, 3 duplicates of the rules written here\n"))
        r = self.cli_process("lint", "--json")
        self.assertEqual(len(json.loads(r.stdout)), 5)
        other = os.path.join(self.tmp, "elsewhere")
        os.mkdir(other)
        r = self.cli_process("lint", cwd=other)                         # another project: its own files
        self.assertEqual((r.returncode, r.stdout.strip()),
                         (0, "0 contradictions, 0 duplicates of the rules written here"))

    def test_doctor_reports_lint(self):
        check = {c["name"]: c for c in self.store.doctor()["checks"]}["lint"]
        self.assertEqual((check["level"], check["detail"]),
                         ("warn", "2 contradiction(s), 3 duplicate(s) of the rules written here; "
                                  "run: instinct lint"))

    def test_export_write_omits_duplicates_and_reports_lint(self):
        self.learn("pref:test=pnpm test", "pref:lint=npx eslint", "pref:pkg=pnpm", n=4)   # now rules
        r = self.cli_process("export", "--format", "agents", "--write", "AGENTS.md")
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


class TestClean(_LintCase):
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
        r = self.cli_process("lint")
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


class TestOwnText(_LintCase):
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
                self.assertEqual(instinct._Lint._prose_mentions(line), want)


if __name__ == "__main__":
    unittest.main()
