"""Tests for sections 12-13 of instinct.py: knowledge memories (issue 7), and staleness anchors (issue
20, part 2; sections 11, 16 and 17).

remember / recall / forget_memory, reinforcement instead of duplicates,
supersession, ranking and its explanation, aging and archive/restore, gc,
seed 004's Markdown import/export, the .git reader behind memory_briefing, the
CLI and the MCP tools. Real SQLite files in temp dirs, injected clocks.

A memory or instinct anchored to files of its project (path relative to the root, the file's
git blob id, its size and mtime) is briefed as "may be stale" when a file changed and left
out when it is gone; explain says why, doctor lists them, confirming re-anchors. Real files
in real git repositories (when git is installed), real CLI and MCP processes.
Run: python3 -m unittest -v tests.test_memory
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

import instinct
from instinct import InstinctStore, NotFoundError, ValidationError
from tests.helpers import (DAY, INITIALIZED, ROOT, T0, Clock, ProjectCase, StoreCase, child_env,
                           cli_process, init_msg, make_repo, mcp_in_process, read, req, serve_once,
                           setUpModule, tool_result, validate, write)


P1, P2 = "aaaaaaaaaaaa", "bbbbbbbbbbbb"

# A memory file in seed 004's layout, written for these tests.
SAMPLE = """---
name: feedback-wait-for-verification
description: 改完代码不要马上提交，等用户验证后再 commit
metadata:
  type: feedback
---

代码改完后先停下，不要自动 commit 或 push；用户在本地确认功能正常后再提交。

**Why:** 自动提交打断用户的验证节奏，推到远端后回滚很麻烦。
**How to apply:** 说明改了什么，然后等用户确认再执行 git 操作。
"""


class _Base(StoreCase):
    """A store (m.db) in a temp dir that is also its working directory."""
    DB_NAME = "m.db"

    def open(self, path=None, **kw):
        kw.setdefault("cwd", str(self.tmp))
        return super().open(path, **kw)

    def count(self, table="memories"):
        return self.store._read(f"SELECT count(*) FROM {table}")[0][0]

    def mem(self, type="project", title="Tests use Vitest", content="Unit tests run with vitest.", **kw):
        return self.store.remember(type, title, content, **kw)


class SchemaTest(_Base):
    def test_tables_index_and_triggers(self):
        names = {r[0] for r in self.store._read("SELECT name FROM sqlite_master")}
        self.assertTrue({"memories", "memory_keys", "memories_fts", "memories_fts_ai",
                         "memories_fts_ad", "memories_fts_au", "memories_keys_ad"} <= names)
        self.assertEqual(self.store._read("PRAGMA user_version")[0][0], instinct.SCHEMA_VERSION)
        self.assertEqual(self.store._read("PRAGMA integrity_check")[0][0], "ok")

    def test_fts_follows_updates_and_deletes(self):
        m = self.mem()
        fts = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?"
        self.assertEqual(self.store._read(fts, ('"vitest"',)), [(m["id"],)])
        with self.store._write() as c:
            c.execute("UPDATE memories SET content = 'uses jest' WHERE id = ?", (m["id"],))
        self.assertEqual(self.store._read(fts, ('"vitest"',)), [(m["id"],)])   # still in the title
        self.assertEqual(self.store._read(fts, ('"jest"',)), [(m["id"],)])
        self.store.forget_memory(m["id"])
        self.assertEqual(self.store._read(fts, ('"jest"',)), [])
        self.assertEqual(self.count("memory_keys"), 0)


class RememberTest(_Base):
    def test_created_record(self):
        m = self.mem(why="the team chose it", how_to_apply="write tests with vitest",
                     tags="testing, js", source="claude-code", project=P1)
        self.assertEqual((m["status"], m["type"], m["confidence"], m["project"], m["tags"]),
                         ("created", "project", 1, P1, ["testing", "js"]))
        self.assertEqual(m["created"], instinct._iso(T0))
        self.assertEqual(self.store.get_memory(m["id"])["why"], "the team chose it")

    def test_bad_input_is_refused_and_nothing_written(self):
        bad = [dict(type="fact"), dict(title=""), dict(title="  "), dict(title="!!!"),
               dict(title="a\x07b"), dict(title="two\nlines"), dict(content="bell\x07"),
               dict(content="x" * 8001), dict(title="t" * 201), dict(tags="ok, -bad"),
               dict(tags="a b"), dict(content="text\n**Why:** smuggled"), dict(why="a\x00"),
               dict(metadata=[1]), dict(project="not-a-project"), dict(supersedes=0),
               dict(type="episode", content="", metadata={"steps": "not a list"})]
        for kw in bad:
            with self.subTest(kw=kw):
                with self.assertRaises(ValidationError):
                    self.mem(**kw)
        self.assertEqual(self.count(), 0)
        self.assertEqual(self.count("events"), 0)

    def test_content_keeps_newlines_and_crlf_is_normalised(self):
        m = self.mem(content="line one\r\nline two\n")
        self.assertEqual(m["content"], "line one\nline two")

    def test_episode_keeps_its_parts_in_metadata(self):
        meta = {"task": "upgrade the parser", "steps": ["read the changelog", "bump the pin"],
                "failures": ["tests hung on the old fixture"], "outcome": "merged"}
        m = self.mem(type="episode", title="Parser upgrade", content="", metadata=meta)
        self.assertEqual(m["metadata"], meta)
        self.assertIn("- bump the pin", m["content"])
        self.assertEqual([h["id"] for h in self.store.recall("fixture hung", project="*")], [m["id"]])


class ReinforceTest(_Base):
    def test_same_title_reinforces_instead_of_duplicating(self):
        a = self.mem(source="claude-code", tags="js")
        self.clock.advance(3)
        b = self.mem(title="  tests USE vitest! ", content="other words entirely", source="codex",
                     tags="testing", why="decided in review")
        self.assertEqual((b["status"], b["id"], b["confidence"]), ("reinforced", a["id"], 2))
        self.assertEqual(b["source"], "claude-code,codex")
        self.assertEqual(b["tags"], ["js", "testing"])
        self.assertEqual(b["why"], "decided in review")          # an empty why is filled in
        self.assertEqual(b["content"], a["content"])              # the first wording stays
        self.assertEqual(b["updated"], instinct._iso(T0 + 3 * DAY))
        self.assertEqual(self.count(), 1)

    def test_word_overlap_of_eighty_percent_reinforces(self):
        words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()
        a = self.mem(title="alpha bravo", content=" ".join(words[2:]))
        near = self.mem(title="bravo alpha charlie", content=" ".join(words[3:9]))    # 9 of 10 words
        self.assertEqual((near["status"], near["id"]), ("reinforced", a["id"]))
        far = self.mem(title="alpha bravo kilo", content="charlie delta echo lima mike november")
        self.assertEqual(far["status"], "created")                                    # 5 of 12 words

    def test_other_type_or_scope_is_another_memory(self):
        a = self.mem()
        self.assertEqual(self.mem(type="reference")["status"], "created")
        self.assertEqual(self.mem(project=P1)["status"], "created")
        self.assertEqual(self.mem()["id"], a["id"])
        self.assertEqual(self.count(), 3)

    def test_repeat_revives_an_archived_memory(self):
        a = self.mem()
        self.clock.advance(61)
        self.store.memory_decay()
        self.assertTrue(self.store.get_memory(a["id"])["archived"])
        b = self.mem()
        self.assertEqual((b["id"], b["archived"], b["confidence"], b["status"]), (a["id"], False, 1, "reinforced"))


class SupersedeTest(_Base):
    def test_new_memory_replaces_old_one(self):
        old = self.mem(title="Reports use UTC", content="Report timestamps are in UTC.")
        self.clock.advance(7)
        new = self.mem(title="Reports use Beijing time", content="Report timestamps are in Beijing time.",
                       supersedes=old["id"])
        self.assertEqual((new["status"], new["supersedes"]), ("created", old["id"]))
        self.assertEqual(self.store.get_memory(old["id"])["superseded_by"], new["id"])
        self.assertEqual([h["id"] for h in self.store.recall("report timestamps", project="*")], [new["id"]])
        both = self.store.recall("report timestamps", project="*", include_superseded=True)
        self.assertEqual({h["id"] for h in both}, {old["id"], new["id"]})
        with self.assertRaises(ValidationError):
            self.mem(title="Reports use local time", content="x", supersedes=old["id"])
        # the same title as the replaced memory does not reinforce it: it supersedes
        again = self.mem(title="Reports use UTC", content="Back to UTC.", supersedes=new["id"])
        self.assertEqual(again["status"], "created")
        self.assertNotEqual(again["id"], old["id"])

    def test_unknown_id_writes_nothing(self):
        with self.assertRaises(NotFoundError):
            self.mem(supersedes=99)
        self.assertEqual(self.count(), 0)


class RankingTest(_Base):
    def test_newer_more_confident_more_used_outranks_equally_relevant_old_one(self):
        text = "Deploys go through the staging cluster first."
        old = self.mem(title="Staging before production", content=text, project="")
        self.mem(title="Unrelated memory", content="Cats like warm keyboards.")
        self.clock.advance(200)
        new = self.mem(title="Staging before production", content=text, project=P1)
        self.mem(title="Staging before production", content=text, project=P1)     # confidence 2
        self.mem(title="Staging before production", content=text, project=P1)     # confidence 3
        with self.store._write() as c:
            c.execute("UPDATE memories SET recall_count = 4 WHERE id = ?", (new["id"],))
        hits = self.store.recall("staging deploys", project=P1)
        self.assertEqual([h["id"] for h in hits], [new["id"], old["id"]])
        self.assertEqual(hits[0]["parts"]["relevance"], hits[1]["parts"]["relevance"])
        for part in ("recency", "confidence", "usage"):
            self.assertGreater(hits[0]["parts"][part], hits[1]["parts"][part], part)

    def test_parts_are_the_weighted_signals_and_sum_to_the_score(self):
        m = self.mem()
        h, = self.store.recall("vitest")
        self.assertEqual(h["id"], m["id"])
        self.assertEqual(h["parts"], {"relevance": 0.6, "recency": 0.2, "confidence": 0.015, "usage": 0.0})
        self.assertAlmostEqual(h["score"], sum(h["parts"].values()), places=9)
        self.clock.advance(60)                      # one half-life of a project memory
        h, = self.store.recall("vitest")
        self.assertEqual(h["parts"]["recency"], 0.1)
        self.assertEqual(h["parts"]["usage"], 0.005)            # recalled once before
        self.assertAlmostEqual(h["score"], 0.72, places=9)

    def test_recall_counts_as_usage(self):
        a = self.mem()
        b = self.mem(title="Lint with ruff", content="ruff replaces flake8")
        self.clock.advance(1)
        self.store.recall("vitest")
        self.store.recall("vitest")
        ra, rb = self.store.get_memory(a["id"]), self.store.get_memory(b["id"])
        self.assertEqual((ra["recall_count"], ra["last_recalled"]), (2, instinct._iso(T0 + DAY)))
        self.assertEqual((rb["recall_count"], rb["last_recalled"]), (0, ""))

    def test_weights_are_settings(self):
        text = "Release notes list every user-visible change."
        old = self.mem(title="Release notes", content=text)
        for _ in range(4):
            self.mem(title="Release notes", content=text)                   # confidence 5
        self.clock.advance(300)
        new = self.mem(title="Release notes", content=text, project=P1)     # confidence 1, fresh
        self.assertEqual([h["id"] for h in self.store.recall("release notes", project=P1)], [new["id"], old["id"]])
        self.store.config("memory_weight_recency", "1")
        self.store.config("memory_weight_confidence", "100")
        h = self.store.recall("release notes", project=P1)
        self.assertEqual([x["id"] for x in h], [old["id"], new["id"]])
        self.assertAlmostEqual(h[0]["parts"]["relevance"], 60 / 166, places=5)
        self.assertAlmostEqual(h[0]["parts"]["confidence"], 100 / 166 * 0.5, places=5)

    def test_scope_type_and_limit(self):
        g = self.mem(title="Global vitest", content="vitest everywhere")
        p1 = self.mem(title="P1 vitest", content="vitest in p1", project=P1)
        self.mem(title="P2 vitest", content="vitest in p2", project=P2)
        r = self.mem(type="reference", title="Vitest docs", content="vitest.dev")
        self.assertEqual({h["id"] for h in self.store.recall("vitest", project=P1)}, {g["id"], p1["id"], r["id"]})
        self.assertEqual({h["id"] for h in self.store.recall("vitest", project="")}, {g["id"], r["id"]})
        self.assertEqual(len(self.store.recall("vitest", project="*")), 4)
        self.assertEqual([h["id"] for h in self.store.recall("vitest", project="*", type="reference")], [r["id"]])
        self.assertEqual(len(self.store.recall("vitest", project="*", limit=2)), 2)
        self.assertEqual(self.store.recall("nothing matches this"), [])
        for bad in (dict(query="!!"), dict(query=""), dict(query="x", limit=0), dict(query="x", type="fact")):
            with self.subTest(bad=bad), self.assertRaises(ValidationError):
                self.store.recall(**bad)

    def test_many_common_words_stay_bounded_and_rare_words_win(self):
        rows = [("project", f"Common words {i}", "common shared filler text", "", "", "", "", 1,
                 instinct._iso(T0), instinct._iso(T0)) for i in range(instinct._Mem.COMMON + 20)]
        conn = self.store._db.conn
        with conn:
            conn.executemany("INSERT INTO memories (type, title, content, why, how_to_apply, tags, project,"
                             " confidence, created, updated) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
        target = self.mem(title="Zebra migration", content="common filler about zebras")
        hits = self.store.recall("common zebra filler", project="*")
        self.assertEqual(hits[0]["id"], target["id"])
        self.assertEqual(len(self.store.recall("common shared", project="*", limit=3)), 3)

    def test_token_overlap_fallback_without_fts5(self):
        with self.store._write() as conn:
            for name in ("memories_fts_ai", "memories_fts_ad", "memories_fts_au"):
                conn.execute(f"DROP TRIGGER {name}")
            conn.execute("DROP TABLE memories_fts")
        a = self.mem(title="Vitest for unit tests", content="run vitest in watch mode")
        b = self.mem(title="Coverage", content="vitest coverage via c8")
        self.mem(title="Unrelated", content="nothing here")
        hits = self.store.recall("vitest watch", project="*")
        self.assertEqual([h["id"] for h in hits], [a["id"], b["id"]])
        self.assertEqual(hits[0]["parts"]["relevance"], 0.6)
        self.assertAlmostEqual(hits[1]["score"], sum(hits[1]["parts"].values()), places=9)


class AgingTest(_Base):
    def test_stale_memories_decay_once_per_period_then_archive_and_restore(self):
        m = self.mem(type="project")                         # 60-day period
        self.mem(type="project")                             # confidence 2
        u = self.mem(type="user", title="Prefers tabs", content="indent with tabs")   # 120 days
        self.clock.advance(61)
        self.assertEqual(self.store.memory_decay(), {"decayed": 1, "archived": 0, "active": 2})
        self.assertEqual(self.store.memory_decay()["decayed"], 0)          # charged once per period
        self.store.recall("tabs")                                          # keeps the user memory alive
        self.clock.advance(61)
        self.assertEqual(self.store.memory_decay(), {"decayed": 1, "archived": 1, "active": 1})
        r = self.store.get_memory(m["id"])
        self.assertEqual((r["archived"], r["confidence"], r["archived_at"]), (True, 0, instinct._iso(self.clock())))
        self.assertEqual(self.store.recall("vitest", project="*"), [])
        self.assertEqual([x["id"] for x in self.store.memories()], [u["id"]])
        self.assertEqual([x["id"] for x in self.store.memories(archived=True)], [m["id"]])
        back = self.store.restore_memory(m["id"])
        self.assertEqual((back["archived"], back["confidence"]), (False, 1))
        self.assertEqual([h["id"] for h in self.store.recall("vitest", project="*")], [m["id"]])
        self.assertEqual(self.store.memory_decay()["decayed"], 0)          # a fresh period

    def test_recall_keeps_a_memory_alive(self):
        m = self.mem()
        for _ in range(4):
            self.clock.advance(40)
            self.store.recall("vitest")
            self.store.memory_decay()
        self.assertEqual(self.store.get_memory(m["id"])["confidence"], 1)
        self.assertFalse(self.store.get_memory(m["id"])["archived"])

    def test_gc_deletes_long_archived_memories(self):
        old = self.mem()
        keep = self.mem(title="Lint with ruff", content="ruff")
        self.clock.advance(61)
        self.store.memory_decay()                            # both archived now
        self.store.restore_memory(keep["id"])
        self.clock.advance(179)
        with self.store._write() as conn:
            self.assertEqual(self.store._gc_memories(conn), 0)
        self.clock.advance(2)
        with self.store._write() as conn:
            self.assertEqual(self.store._gc_memories(conn), 1)
        with self.assertRaises(NotFoundError):
            self.store.get_memory(old["id"])
        self.assertEqual(self.store._read("SELECT DISTINCT memory_id FROM memory_keys"), [(keep["id"],)])

    def test_gc_ages_memories_and_deletes_long_archived_ones(self):
        old = self.mem()
        self.clock.advance(61)
        r = self.store.gc()
        self.assertEqual((r["memories_archived"], r["memories_deleted"]), (1, 0))
        self.assertTrue(self.store.get_memory(old["id"])["archived"])
        self.clock.advance(181)
        r = self.store.gc()
        self.assertEqual((r["memories_archived"], r["memories_deleted"]), (0, 1))
        with self.assertRaises(NotFoundError):
            self.store.get_memory(old["id"])

    def test_forget_and_list(self):
        a = self.mem()
        b = self.mem(type="user", title="Prefers tabs", content="tabs", project=P1)
        self.assertEqual([m["id"] for m in self.store.memories(type="user")], [b["id"]])
        self.assertEqual([m["id"] for m in self.store.memories(project=P1)], [b["id"]])
        self.assertEqual(len(self.store.memories(limit=1)), 1)
        gone = self.store.forget_memory(a["id"])
        self.assertEqual(gone["title"], a["title"])
        for call in (self.store.get_memory, self.store.forget_memory, self.store.restore_memory):
            with self.assertRaises(NotFoundError):
                call(a["id"])
        # the forgotten memory's own events go with it (issue 14); the log keeps no copy of its text
        rows = self.store._read("SELECT kind, data FROM events ORDER BY id")
        self.assertEqual([r[0] for r in rows], ["remember", "forget_memory"])
        self.assertNotIn(a["title"], rows[1][1])


class MarkdownTest(_Base):
    def write(self, folder, name, text):
        folder.mkdir(exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8", newline="")

    def files(self, folder):
        return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}

    def test_seed_format_round_trips_byte_for_byte(self):
        src = self.tmp / "in"
        self.write(src, "feedback-wait-for-verification.md", SAMPLE)
        self.write(src, "MEMORY.md", "# Index\n\n- [wait](feedback-wait-for-verification.md)\n")
        r = self.store.import_memories(str(src))
        self.assertEqual(r, {"files": 2, "added": 1, "updated": 0, "unchanged": 0, "skipped": 1,
                             "links_skipped": 0})
        m, = self.store.memories()
        self.assertEqual((m["type"], m["title"]), ("feedback", "改完代码不要马上提交，等用户验证后再 commit"))
        self.assertTrue(m["why"].startswith("自动提交") and m["how_to_apply"].startswith("说明"))
        self.assertEqual(self.store.import_memories(str(src))["unchanged"], 1)
        self.assertEqual(self.count(), 1)
        out = self.tmp / "out"
        self.assertEqual(self.store.export_memories(str(out))["written"], 1)
        self.assertEqual(self.files(out), {"feedback-wait-for-verification.md": SAMPLE.encode()})
        self.assertEqual(self.store.export_memories(str(out)),
                         {"dir": str(out), "files": 1, "written": 0, "unchanged": 1})

    def test_store_to_files_to_store_keeps_everything(self):
        s = self.store
        s.remember("user", "Prefers: short answers", "Keep replies brief.\n\nUse lists.", why="reads on a phone",
                   how_to_apply="at most five lines", tags="style, tone", source="claude-code")
        s.remember("project", "2024", "a title that looks like a number", project=P1)
        s.remember("reference", "- dash first # not a comment", "'quoted' \"both\"", source="x: y")
        s.remember("episode", "Parser upgrade", "", metadata={"task": "upgrade", "steps": ["a", "b"],
                                                              "outcome": "ok", "ticket": 42})
        s.remember("feedback", "Café naïve 中文", "unicode everywhere")
        s.remember("feedback", "Cafe naive!", "another memory, same default name")
        s.remember("project", "Same title", "in project one", project=P1)
        s.remember("project", "Same title", "in project two", project=P2)
        s.remember("user", "Prefers: short answers", "again")                 # confidence 2
        out1 = self.tmp / "one"
        self.assertEqual(s.export_memories(str(out1))["files"], 8)
        other = InstinctStore(self.tmp / "other.db", clock=Clock(T0 + 50 * DAY))
        self.addCleanup(other.close)
        self.assertEqual(other.import_memories(str(out1))["added"], 8)
        out2 = self.tmp / "two"
        other.export_memories(str(out2))
        self.assertEqual(self.files(out1), self.files(out2))
        key = ("type", "title", "content", "why", "how_to_apply", "tags", "project", "source",
               "confidence", "metadata")

        def norm(m):
            meta = {k: v for k, v in m["metadata"].items() if k != "_md"}
            return tuple(json.dumps(meta) if k == "metadata" else m[k] for k in key)
        self.assertEqual(sorted(map(norm, s.memories())), sorted(map(norm, other.memories())))
        self.assertEqual(other.import_memories(str(out2))["unchanged"], 8)

    def test_hand_edits_and_extra_front_matter_survive(self):
        src = self.tmp / "in"
        text = SAMPLE.replace("metadata:\n", "owner: team-a\nmetadata:\n  priority: high\n")
        self.write(src, "a.md", text)
        self.store.import_memories(str(src))
        out = self.tmp / "out"
        self.store.export_memories(str(out))
        exported = (out / "feedback-wait-for-verification.md").read_text(encoding="utf-8")
        self.assertIn("\nowner: team-a\n", exported)
        self.assertIn("\n  priority: high\n", exported)
        self.write(src, "a.md", text.replace("说明改了什么", "先说明改了什么"))
        self.assertEqual(self.store.import_memories(str(src))["updated"], 1)
        self.assertTrue(self.store.memories()[0]["how_to_apply"].startswith("先说明"))
        self.assertEqual(self.count(), 1)

    def test_invalid_file_writes_nothing(self):
        src = self.tmp / "in"
        self.write(src, "a.md", SAMPLE)
        self.write(src, "b.md", SAMPLE.replace("type: feedback", "type: gossip"))
        with self.assertRaises(ValidationError) as cm:
            self.store.import_memories(str(src))
        self.assertIn("b.md", str(cm.exception))
        for text in ("---\nname: x\n", "---\nname: x\ndescription: y\n---\nbody\n",
                     "---\njust a line\n---\n", SAMPLE.replace("  type:", "  confidence: ²\n  type:"),
                     SAMPLE.replace("  type:", "  confidence: -3\n  type:")):
            self.write(src, "b.md", text)
            with self.assertRaises(ValidationError):
                self.store.import_memories(str(src))
        self.assertEqual(self.count(), 0)
        with self.assertRaises(NotFoundError):
            self.store.import_memories(str(self.tmp / "missing"))


class GitAndBriefingTest(_Base):
    Z = "0" * 40

    def reflog(self, gitdir, messages):
        (gitdir / "logs").mkdir(parents=True)
        lines = [f"{self.Z} {self.Z} Dev <dev@example.com> {1767225600 + i} +0000\t{m}\n"
                 for i, m in enumerate(messages)]
        (gitdir / "logs" / "HEAD").write_text("".join(lines), encoding="utf-8")

    def test_last_three_commit_subjects_newest_first(self):
        repo = self.tmp / "shop"
        self.reflog(repo / ".git", ["commit (initial): Initial commit", "commit: Add cart",
                                    "checkout: moving from main to feature", "commit: Add coupons: percent off",
                                    "merge feature: Fast-forward", "rebase (pick): Fix rounding",
                                    "commit (amend): Add coupons, fixed amounts", "pull: Fast-forward"])
        self.assertEqual(instinct._Mem.git_subjects(str(repo)),
                         ["Add coupons, fixed amounts", "Fix rounding", "Add coupons: percent off"])

    def test_worktree_file_missing_and_odd_logs(self):
        main_git = self.tmp / "main" / ".git"
        self.reflog(main_git / "worktrees" / "wt", ["commit: Work in the worktree"])
        wt = self.tmp / "wt"
        wt.mkdir()
        (wt / ".git").write_text("gitdir: ../main/.git/worktrees/wt\n", encoding="utf-8")
        self.assertEqual(instinct._Mem.git_subjects(str(wt)), ["Work in the worktree"])
        (wt / ".git").write_text("not a pointer\n", encoding="utf-8")
        self.assertEqual(instinct._Mem.git_subjects(str(wt)), [])
        bare = self.tmp / "bare"
        (bare / ".git").mkdir(parents=True)
        self.assertEqual(instinct._Mem.git_subjects(str(bare)), [])                # no logs/HEAD
        (bare / ".git" / "logs").mkdir()
        (bare / ".git" / "logs" / "HEAD").write_bytes(b"\xff\xfe garbage\x00\nno tab here\n")
        self.assertEqual(instinct._Mem.git_subjects(str(bare)), [])
        self.assertEqual(instinct._Mem.git_subjects(str(self.tmp / "nowhere")), [])

    def test_long_reflog_is_read_from_its_end(self):
        repo = self.tmp / "big"
        self.reflog(repo / ".git", [f"commit: Old change {i}" for i in range(3000)] + ["commit: Newest"])
        self.assertEqual(instinct._Mem.git_subjects(str(repo)), ["Newest", "Old change 2999", "Old change 2998"])

    def test_briefing_uses_folder_name_and_commits(self):
        repo = self.tmp / "shopfront"
        self.reflog(repo / ".git", ["commit: Add coupon codes", "commit: Speed up checkout"])
        proj = instinct.project_fingerprint(str(repo))
        s = self.store
        coupon = s.remember("project", "Coupons live in pricing.py", "coupon rules",
                            how_to_apply="change pricing.py, not the cart", project=proj)
        s.remember("user", "Shopfront owner prefers small PRs", "small pull requests")
        local = s.remember("project", "Staging URL", "staging.shop.test", project=proj)
        s.remember("project", "Coupons elsewhere", "coupon rules", project=P1)        # other project
        lines = s._memory_briefing(str(repo), 2000)
        # the title, the knowledge itself, how to apply it
        self.assertEqual(set(lines[:2]), {"[project] Coupons live in pricing.py: coupon rules \u2014 "
                                          "change pricing.py, not the cart",
                                          "[user] Shopfront owner prefers small PRs: small pull requests"})
        self.assertEqual(lines[2:], ["[project] Staging URL: staging.shop.test"])     # fills the room
        self.assertEqual(s.get_memory(coupon["id"])["recall_count"], 1)
        self.assertEqual(s.get_memory(local["id"])["recall_count"], 0)
        small = s._memory_briefing(str(repo), len(lines[0]) + 1 + len(lines[2]))
        self.assertEqual(small, [lines[0], lines[2]])                    # the second line did not fit
        self.assertTrue(all(len("\n".join(s._memory_briefing(str(repo), n))) <= n for n in (0, 10, 60, 100)))


class CliTest(_Base):
    def test_main_round_trip(self):
        self.store.close()
        code, out, _ = self.cli_in_process("remember", "feedback", "Run the linter first", "ruff before tests",
                                           "--why", "fast feedback", "--tags", "lint")
        self.assertEqual(code, 0)
        self.assertIn("[feedback] Run the linter first", out)
        code, out, _ = self.cli_in_process("recall", "linter", "--project", "*", "--json")
        hit, = json.loads(out)
        self.assertEqual((code, hit["title"]), (0, "Run the linter first"))
        self.assertAlmostEqual(hit["score"], sum(hit["parts"].values()), places=6)
        code, out, _ = self.cli_in_process("recall", "linter", "--project", "*")
        self.assertRegex(out, r"score=\d\.\d{3} = relevance 0\.600 \+ recency")
        with self.assertRaises(SystemExit) as cm:                      # argparse refuses the choice
            self.cli_in_process("remember", "gossip", "t", "c")
        self.assertEqual(cm.exception.code, 2)
        code, out, err = self.cli_in_process("remember", "user", "bad\x07title", "c")
        self.assertEqual((code, out, err), (2, "", "instinct: error: title must not contain control characters\n"))
        code, out, err = self.cli_in_process("get-memory", "42")
        self.assertEqual((code, out), (1, ""))
        self.assertEqual(err, "instinct: error: no memory #42\n")

    def test_subprocess(self):
        self.store.close()
        env = child_env(self.tmp, self.db)

        def run(*args):
            return cli_process(*args, env=env, cwd=self.tmp)
        p = run("remember", "project", "Uses Vitest", "vitest for unit tests", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        mid = json.loads(p.stdout)["id"]
        p = run("recall", "vitest", "--json")
        self.assertEqual([h["id"] for h in json.loads(p.stdout)], [mid])
        p = run("memories")
        self.assertIn("1 memory", p.stdout)
        p = run("remember", "project", "bad\x07title", "x")
        self.assertEqual((p.returncode, p.stdout), (2, ""))
        self.assertEqual(len(p.stderr.strip().splitlines()), 1)
        self.assertNotIn("Traceback", p.stderr)
        p = run("forget-memory", str(mid))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(run("memories", "--json").stdout.strip(), "[]")


class McpTest(_Base):
    TOOLS = ("memory_store", "memory_recall", "memory_forget", "memory_list", "memory_get",
             "memory_restore", "memory_decay", "memory_import", "memory_export")

    def server(self):
        return mcp_in_process(self.store, "2025-06-18")[0]

    def call(self, srv, name, args, mid=2):
        return tool_result(srv, name, args, mid)

    def check(self, value, schema):
        """value fits the tool's output schema (the portable subset instinct emits)."""
        self.assertEqual(validate(value, schema), [])

    def test_tools_listed_and_calls_match_their_output_schemas(self):
        srv = self.server()
        tools = {t["name"]: t for t in srv.handle_message(
            {"jsonrpc": "2.0", "id": 9, "method": "tools/list"})["result"]["tools"]}
        self.assertTrue(set(self.TOOLS) <= set(tools))
        self.assertTrue(tools["memory_recall"]["annotations"]["readOnlyHint"] is False)
        self.assertTrue(tools["memory_list"]["annotations"]["readOnlyHint"])
        stored = self.call(srv, "memory_store", {"type": "feedback", "title": "Ask before deleting files",
                                                 "content": "confirm deletions", "how_to_apply": "ask first"})
        self.assertFalse(stored["isError"])
        self.check(stored["structuredContent"], tools["memory_store"]["outputSchema"])
        mid = stored["structuredContent"]["id"]
        for name, args in (("memory_recall", {"query": "deleting files", "project": "*"}),
                           ("memory_list", {}), ("memory_get", {"id": mid}), ("memory_decay", {}),
                           ("memory_restore", {"id": mid}),
                           ("memory_export", {"dir": str(self.tmp / "md")}),
                           ("memory_import", {"path": str(self.tmp / "md")}),
                           ("memory_forget", {"id": mid})):
            with self.subTest(tool=name):
                res = self.call(srv, name, args)
                self.assertFalse(res["isError"], res)
                self.check(res["structuredContent"], tools[name]["outputSchema"])
                self.assertEqual(json.loads(res["content"][0]["text"]), res["structuredContent"])
        self.assertEqual(self.count(), 0)

    def test_recall_hit_explains_itself_and_errors_are_tool_errors(self):
        srv = self.server()
        self.call(srv, "memory_store", {"type": "project", "title": "Docs build with mkdocs",
                                        "content": "mkdocs serve for previews"})
        res = self.call(srv, "memory_recall", {"query": "mkdocs previews", "project": "*", "limit": 3})
        hit, = res["structuredContent"]["memories"]
        self.assertEqual(res["structuredContent"]["count"], 1)
        self.assertEqual(set(hit["parts"]), {"relevance", "recency", "confidence", "usage"})
        self.assertAlmostEqual(hit["score"], sum(hit["parts"].values()), places=6)
        bad = self.call(srv, "memory_store", {"type": "gossip", "title": "x", "content": "y"})
        self.assertTrue(bad["isError"])
        missing = self.call(srv, "memory_forget", {"id": 77})
        self.assertTrue(missing["isError"])
        self.assertIn("no memory #77", missing["content"][0]["text"])


# --- staleness anchors (issue 20, part 2) ------------------------------------------------
GIT = shutil.which("git")
PYPROJECT = '[project]\nname = "ledger"\nversion = "1.0"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'


def git(cwd, *args):
    return subprocess.run([GIT, "-c", "user.name=t", "-c", "user.email=t@example.com",
                           "-c", "init.defaultBranch=main", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


class _AnchorCase(ProjectCase):
    """The project is a real git repository (git init, one commit) when git is installed."""

    def setUp(self):
        super().setUp()
        if GIT:
            shutil.rmtree(os.path.join(self.proj, ".git"))
            git(self.proj, "init", "-q")
        self.pyproject = os.path.join(self.proj, "pyproject.toml")
        write(self.pyproject, PYPROJECT)
        write(os.path.join(self.proj, "package.json"), '{"scripts": {"lint": "eslint ."}}\n')
        if GIT:
            git(self.proj, "add", "-A")
            git(self.proj, "commit", "-qm", "init")

    def edit(self, path, text):
        """Change a file's content (and move its mtime on, however coarse the file system's is)."""
        write(path, text)
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))

    def brief(self):
        return self.store._memory_briefing(self.proj)

    def remember(self, title="Build backend is hatchling", about="pyproject.toml", **kw):
        return self.store.remember("project", title, "the wheel is built by hatchling",
                                   how_to_apply="build with `uv build`", project=self.proj,
                                   about=about, **kw)

    def learned(self, pattern="pref:test=uv run pytest", n=6):
        self.observe(pattern, n, project=instinct.project_fingerprint(self.proj))
        self.store.consolidate()
        return pattern

    def anchor(self, pattern, paths):
        """What mining does for a project command: anchor the instinct to files (section 12)."""
        rec = self.store.get(pattern, project=self.proj)
        with self.store._write() as conn:
            instinct._Anchors.reanchor(conn, self.proj, rec, paths)
        return rec


class TestBlobId(_AnchorCase):
    def test_known_ids_without_git(self):
        empty, hello = (os.path.join(self.tmp, n) for n in ("empty", "hello"))
        write(empty, b"")
        write(hello, b"hello\n")
        self.assertEqual(instinct._Anchors._git_blob(empty)[0], "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")
        self.assertEqual(instinct._Anchors._git_blob(hello)[0], "ce013625030ba8dba906f756967f9e9ca394464a")
        blob, size, mtime = instinct._Anchors._git_blob(hello)
        self.assertEqual((size, mtime), (6, os.stat(hello).st_mtime_ns))

    @unittest.skipUnless(GIT, "git is not installed")
    def test_equals_git_hash_object(self):
        files = {"text": "line\r\nnext\n", "binary": bytes(range(256)) * 9000,   # > 1 MiB chunks
                 "utf8": "façade ✓\n", "no-newline": "x"}
        for name, data in files.items():
            path = os.path.join(self.proj, name)
            write(path, data)
            with self.subTest(name=name):
                self.assertEqual(instinct._Anchors._git_blob(path)[0],
                                 git(self.proj, "hash-object", path).strip())
        self.assertEqual(instinct._Anchors._git_blob(self.pyproject)[0],
                         git(self.proj, "rev-parse", "HEAD:pyproject.toml").strip())


class TestDefiningFile(_AnchorCase):
    def test_shapes_map_to_the_file_that_defines_them_when_it_exists(self):
        root = self.proj
        for name in ("mix.exs", "Makefile", "justfile", "Cargo.toml"):
            write(os.path.join(root, name), "x\n")
        cases = {"npm run lint": "package.json", "pnpm test": "package.json", "npx eslint": "package.json",
                 "uv run pytest": "pyproject.toml", "pytest": "pyproject.toml",
                 "ruff check": "pyproject.toml", "python -m pytest": "pyproject.toml",
                 "mix test": "mix.exs", "make lint": "Makefile", "just test": "justfile",
                 "cargo test": "Cargo.toml", "go test": None, "git commit": None, "Edit": None}
        for shape, want in cases.items():
            with self.subTest(shape=shape):
                self.assertEqual(instinct._Anchors.defining_file(root, shape), want)
        os.remove(os.path.join(root, "Makefile"))
        write(os.path.join(root, "GNUmakefile"), "x\n")
        self.assertEqual(instinct._Anchors.defining_file(root, "make lint"), "GNUmakefile")
        self.assertIsNone(instinct._Anchors.defining_file(self.tmp, "npm run lint"))    # no package.json


class TestMemoryAnchors(_AnchorCase):
    def test_changed_file_marks_the_memory_and_remembering_again_re_anchors(self):
        m = self.remember()
        self.assertEqual(m["about"], ["pyproject.toml"])
        line = ("[project] Build backend is hatchling: the wheel is built by hatchling \u2014 "
                "build with `uv build`")
        self.assertEqual(self.brief(), [line])
        os.utime(self.pyproject, ns=(1, 10**18))       # touched, same content: still fresh
        self.assertEqual(self.brief(), [line])
        self.edit(self.pyproject, PYPROJECT.replace("hatchling", "") + 'requires = ["setuptools"]\n')
        self.assertEqual(self.brief(), [line + " (may be stale: pyproject.toml changed)"])
        doctor = {c["name"]: c for c in self.store.doctor()["checks"]}["anchors"]
        self.assertEqual(doctor["level"], "warn")
        self.assertIn(f"memory #{m['id']} (pyproject.toml changed)", doctor["detail"])
        again = self.remember()                         # confirmed: anchored to the file as it is
        self.assertEqual((again["id"], again["status"]), (m["id"], "reinforced"))
        self.assertEqual(self.brief(), [line])
        self.assertEqual({c["name"]: c["level"] for c in self.store.doctor()["checks"]}["anchors"], "ok")

    @unittest.skipUnless(GIT, "git is not installed")
    def test_a_rename_makes_the_memory_vanish_from_the_briefing(self):
        m = self.remember()
        self.remember("Lint config is in package.json", about="package.json")
        self.assertEqual(len(self.brief()), 2)
        git(self.proj, "mv", "pyproject.toml", "config.toml")
        git(self.proj, "commit", "-qm", "rename")
        self.assertEqual([ln.split(":")[0] for ln in self.brief()],
                         ["[project] Lint config is in package.json"])
        detail = {c["name"]: c for c in self.store.doctor()["checks"]}["anchors"]["detail"]
        self.assertIn(f"memory #{m['id']} (pyproject.toml is gone)", detail)
        self.remember(about="")                         # re-remembered: the gone anchor is dropped
        self.assertEqual(len(self.brief()), 2)
        self.assertEqual(self.store._read("SELECT path FROM anchors WHERE memory = ?", (m["id"],)), [])

    def test_paths_from_a_subfolder_and_several_files(self):
        sub = os.path.join(self.proj, "src", "app")
        write(os.path.join(sub, "settings.py"), "DEBUG = False\n")
        store = instinct.InstinctStore(self.db, cwd=sub)
        self.addCleanup(store.close)
        m = store.remember("project", "Settings", "debug is off", project=self.proj,
                           about="settings.py, pyproject.toml,")
        self.assertEqual(m["about"], ["src/app/settings.py", "pyproject.toml"])
        rows = store._read("SELECT path, blob, size FROM anchors WHERE memory = ? ORDER BY path", (m["id"],))
        self.assertEqual(rows, [("pyproject.toml", instinct._Anchors._git_blob(self.pyproject)[0], len(PYPROJECT)),
                                ("src/app/settings.py", instinct._Anchors._git_blob(os.path.join(sub, "settings.py"))[0], 14)])

    def test_bad_paths_are_refused_and_nothing_is_stored(self):
        outside = os.path.join(self.tmp, "outside.toml")
        write(outside, "x\n")
        os.symlink(outside, os.path.join(self.proj, "link.toml"))
        for about in ("missing.toml", ".", outside, "../outside.toml", "link.toml", "a\x00b"):
            with self.subTest(about=about):
                with self.assertRaises(ValidationError):
                    self.remember(about=about)
        self.assertEqual(self.store._read("SELECT count(*) FROM memories")[0][0], 0)
        self.assertEqual(self.store._read("SELECT count(*) FROM anchors")[0][0], 0)

    def test_cli_remember_about_and_its_one_line_error(self):
        r = self.cli_process("remember", "project", "Build backend", "hatchling", "--about", "pyproject.toml",
                             "--project", ".", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('"about": [\n    "pyproject.toml"\n  ]', r.stdout)
        r = self.cli_process("remember", "project", "Other", "x", "--about", "nope.toml")
        self.assertEqual((r.returncode, r.stdout), (2, ""), r.stderr)
        self.assertRegex(r.stderr, r"^instinct: error: nope.toml is not a file in the project .*\n$")

    def test_mcp_memory_store_about(self):
        msgs = [init_msg("2025-06-18"), INITIALIZED,
                req(2, "tools/call", {"name": "memory_store", "arguments": {
                    "type": "project", "title": "Build backend", "content": "hatchling",
                    "project": ".", "about": "pyproject.toml"}}),
                req(3, "tools/call", {"name": "memory_store", "arguments": {
                    "type": "project", "title": "Other", "content": "x", "about": "../x"}})]
        replies, p = serve_once(msgs, child_env(db=self.db, INSTINCT_MCP_TOOLS="all"), self.proj)
        by_id = {m.get("id"): m for m in replies}
        self.assertEqual(by_id[2]["result"]["structuredContent"]["about"], ["pyproject.toml"])
        self.assertTrue(by_id[3]["result"]["isError"])
        self.assertIn("is not a file in the project", by_id[3]["result"]["content"][0]["text"])
        self.assertEqual(self.store._read("SELECT path FROM anchors"), [("pyproject.toml",)])

    def test_forgetting_a_memory_drops_its_anchors(self):
        m = self.remember()
        self.store.forget_memory(m["id"])
        self.assertEqual(self.store._read("SELECT count(*) FROM anchors")[0][0], 0)
        fresh = self.remember("Another memory", about="package.json")      # may reuse the id
        self.assertEqual(self.store._read("SELECT path FROM anchors WHERE memory = ?", (fresh["id"],)),
                         [("package.json",)])

    def test_anchors_of_another_checkout_are_not_checked_here(self):
        self.remember()
        other = make_repo(os.path.join(self.tmp, "other"))
        self.edit(self.pyproject, "changed\n")
        self.assertEqual(instinct._Anchors.staleness(self.store._db.conn, other, [{"id": 1}]), [None])
        self.assertEqual(instinct._Anchors.staleness(self.store._db.conn, self.proj, [{"id": 1}, {"id": 2}]),
                         ["pyproject.toml changed", None])


class TestInstinctAnchors(_AnchorCase):
    def test_mined_command_anchored_to_its_defining_file(self):
        p = self.learned()
        shape = p.split("=", 1)[1]
        self.assertEqual(instinct._Anchors.defining_file(self.proj, shape), "pyproject.toml")
        rec = self.anchor(p, ["pyproject.toml"])
        self.assertNotIn("stale", self.store.explain(p))
        self.edit(self.pyproject, PYPROJECT + "[tool.ruff]\n")
        e = self.store.explain(p)
        self.assertEqual(e["stale"], "pyproject.toml changed")
        r = self.cli_process("explain", p)
        self.assertIn("  may be stale: pyproject.toml changed since it was anchored", r.stdout)
        self.assertEqual(instinct._Anchors.staleness(self.store._db.conn, self.proj, [rec]),
                         ["pyproject.toml changed"])
        with self.store._write() as conn:               # what observe / feedback good call
            instinct._Anchors.reanchor(conn, self.proj, rec)
        self.assertNotIn("stale", self.store.explain(p))
        os.remove(self.pyproject)
        self.assertEqual(self.store.explain(p)["stale"], "pyproject.toml is gone")

    def test_export_leaves_stale_items_out(self):
        p, q = self.learned(n=10), self.learned("pref:lint=npm run lint", n=10)
        self.anchor(p, ["pyproject.toml"])
        self.anchor(q, ["package.json"])
        self.assertEqual(self.store.export_rules(format="claude", write="CLAUDE.md")["included"], 2)
        self.edit(os.path.join(self.proj, "package.json"), "{}\n")
        r = self.store.export_rules(format="claude", write="CLAUDE.md")
        self.assertEqual(r["included"], 2)             # marked, as on every channel
        text = read(os.path.join(self.proj, "CLAUDE.md"))
        self.assertIn("Tests here: uv run pytest (rule, observed 10×, noted, this project)", text)
        self.assertIn("Lint here: npm run lint (rule, observed 10×, noted, this project; may be stale: "
                      "package.json changed)", text)
        self.assertEqual(text.count("may be stale"), 1)
        os.remove(os.path.join(self.proj, "package.json"))       # gone: left out
        self.assertEqual(self.store.export_rules(format="claude", write="CLAUDE.md")["included"], 1)
        self.assertNotIn("npm run lint", read(os.path.join(self.proj, "CLAUDE.md")))

    def test_a_vanished_path_is_not_anchored(self):
        p = self.learned()
        self.anchor(p, ["missing.toml", "pyproject.toml"])
        self.assertEqual(self.store._read("SELECT path FROM anchors"), [("pyproject.toml",)])

    def test_two_hundred_anchors_are_checked_by_stat_alone(self):
        items = [{"pattern": f"pref:test=cmd{i}", "project": "p"} for i in range(200)]
        with self.store._write() as conn:
            for it in items:
                instinct._Anchors.reanchor(conn, self.proj, it, ["pyproject.toml", "package.json"])
        conn = self.store._db.conn
        calls = []
        real = instinct._Anchors._git_blob
        instinct._Anchors._git_blob = lambda path: calls.append(path) or real(path)
        try:
            self.assertEqual(instinct._Anchors.staleness(conn, self.proj, items), [None] * 200)
            self.assertEqual(calls, [])                        # unchanged files: never hashed
            self.edit(self.pyproject, "changed\n")
            self.assertEqual(set(instinct._Anchors.staleness(conn, self.proj, items)), {"pyproject.toml changed"})
            self.assertEqual(len(calls), 1)                    # one hash per changed file
        finally:
            instinct._Anchors._git_blob = real

    def test_bench_script_runs(self):                           # its figures: README, bench/README
        r = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_anchors.py"), "--reps", "3"],
                           capture_output=True, text=True, timeout=300, env=child_env(home=self.tmp))
        self.assertEqual(r.returncode, 0, r.stderr)
        for heading in ("200 files", "5 files", "1 changed", "target: <= 5 ms"):
            self.assertIn(heading, r.stdout)


if __name__ == "__main__":
    unittest.main()


def put_in_place(path):
    """Put a FIFO, a symlink to /dev/zero and a folder in `path`'s place in turn -> their names."""
    for kind in ("fifo", "/dev/zero link", "folder"):
        if os.path.islink(path) or os.path.isfile(path) or os.path.exists(path) and not os.path.isdir(path):
            os.remove(path)
        elif os.path.isdir(path):
            shutil.rmtree(path)
        {"fifo": os.mkfifo, "folder": os.mkdir}.get(kind, lambda p: os.symlink("/dev/zero", p))(path)
        yield kind


@unittest.skipUnless(hasattr(os, "mkfifo") and os.path.exists("/dev/zero"), "needs FIFOs and /dev/zero")
class TestNoBlockingReads(_AnchorCase):
    """Issue 28 item 1: a FIFO, a /dev/zero link or a folder in the place of a file instinct reads
    but did not write never hangs a command (each returns in < 5 s) and is never read unbounded."""

    def quick(self, *args, stdin=None):
        r = self.cli_process(*args, stdin=stdin, timeout=5)        # a hang fails here
        self.assertNotIn("Traceback", r.stderr)
        return r

    def test_anchored_file_feedback_explain_and_briefing(self):
        p = self.learned()
        m = self.remember()
        self.anchor(p, ["pyproject.toml"])
        for kind in put_in_place(self.pyproject):
            with self.subTest(kind=kind):
                self.assertEqual(self.quick("feedback", p, "good").returncode, 0)
                self.assertEqual(self.quick("explain", p).returncode, 0)
                self.quick("hook", "session-start", stdin=json.dumps({"session_id": "s", "cwd": self.proj}))
                self.assertEqual(instinct._Anchors.look(self.store._db.conn, self.proj, m), {"pyproject.toml": None})
                self.assertNotIn(m["title"] + "\n", "\n".join(self.brief()) + "\n")   # marked or left out
                with self.assertRaises(ValidationError):
                    instinct._read_regular(self.pyproject, 1024)

    def test_git_files_memory_files_rules_files_and_configs(self):
        home = os.path.join(self.tmp, "home")
        os.makedirs(os.path.join(home, ".codex"))
        env = child_env(home=home, db=self.db)
        targets = [(os.path.join(self.proj, "CLAUDE.md"), [("lint",), ("export", "--format", "claude",
                                                                       "--write", "CLAUDE.md")]),
                   (os.path.join(self.tmp, "m.md"), [("import-memories", os.path.join(self.tmp, "m.md"))]),
                   (os.path.join(self.tmp, "rules.json"), [("import", os.path.join(self.tmp, "rules.json"))]),
                   (os.path.join(home, ".claude.json"), [("setup", "claude-code")]),
                   (os.path.join(home, ".codex", "config.toml"), [("setup", "codex")]),
                   (os.path.join(self.proj, ".git", "logs", "HEAD"), [("hook", "session-start")])]
        self.learned(n=10)
        os.makedirs(os.path.join(self.proj, ".git", "logs"), exist_ok=True)
        for path, commands in targets:
            for kind in put_in_place(path):
                for args in commands:
                    with self.subTest(path=os.path.basename(path), kind=kind, args=args):
                        r = subprocess.run([sys.executable, instinct.__file__, *args], cwd=self.proj, env=env,
                                           input="{}", capture_output=True, text=True, timeout=5)
                        self.assertNotIn("Traceback", r.stderr)
                        if kind != "folder" and args[0] not in ("hook", "lint"):    # one line, refused
                            self.assertNotEqual(r.returncode, 0)
                            self.assertTrue(r.stderr.startswith("instinct: error:"), r.stderr)
        os.mkdir(os.path.join(self.tmp, "out"))
        for kind in put_in_place(os.path.join(self.tmp, "out", "feedback-x.md")):
            with self.subTest(kind=kind):                      # a Markdown memory file to compare
                self.assertIn(self.quick("export-memories", os.path.join(self.tmp, "out")).returncode, (0, 1))
