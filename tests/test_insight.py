"""Tests for section 22 (insight and feedback): explain, history, effectiveness, feedback,
preference conflicts -- on the API, the CLI and MCP."""
import json
import os
import sqlite3
import time
import unittest

import instinct
from instinct import InstinctStore, NotFoundError, ValidationError
from tests.helpers import (DAY, Clock, child_env, cli_in_process, cli_process, mcp_in_process,  # noqa: F401
                           schema_problems, setUpModule, temp_dir, tool_result, validate)

T0 = 1_780_000_000.0          # 2026-05-28


class InsightCase(unittest.TestCase):
    def setUp(self):
        self.dir = temp_dir(self)
        self.path = os.path.join(self.dir, "i.db")
        self.clock = Clock(T0)
        self.store = self.open()

    def open(self, session="s1"):
        store = InstinctStore(self.path, clock=self.clock, cwd=self.dir, session=session)
        self.addCleanup(store.close)
        return store

    def observe(self, pattern, n=1, step=60.0, store=None, **kw):
        for _ in range(n):
            (store or self.store).observe(pattern, **kw)
            self.clock.advance(seconds=step)

    def events(self, kind):
        return [r for r in self.store._read("SELECT pattern, project, delta, data FROM events"
                                            " WHERE kind = ? ORDER BY id", (kind,))]


class ExplainTest(InsightCase):
    def test_level_thresholds_and_their_origin(self):
        self.observe("pref:stdlib-first", 4)
        e = self.store.explain("pref:stdlib-first")
        self.assertEqual((e["confidence"], e["level"], e["level_due"]), (4, "raw", "raw"))
        self.assertEqual(e["thresholds"]["mature"], {"value": 5, "from": "default", "key": "mature_threshold"})
        self.assertEqual(e["next_promotion"], {"level": "mature", "observations_needed": 1})
        self.assertIn("below the mature threshold 5 (default)", e["why"])

        self.store.config("category.preference.mature_threshold", "4")
        e = self.store.explain("pref:stdlib-first")
        self.assertEqual(e["thresholds"]["mature"],
                         {"value": 4, "from": "category", "key": "category.preference.mature_threshold"})
        self.assertEqual(e["level_due"], "mature")
        self.assertEqual(e["level"], "raw")                     # until consolidate runs
        self.assertIn("consolidate will make it mature", e["why"])
        self.assertEqual(e["next_promotion"], {"level": "rule", "observations_needed": 6})

        self.store.config("pattern.pref:stdlib-first.mature_threshold", "6")
        self.store.config("rule_threshold", "8")
        e = self.store.explain("pref:stdlib-first")
        self.assertEqual(e["thresholds"]["mature"]["from"], "pattern")
        self.assertEqual(e["thresholds"]["mature"]["value"], 6)
        self.assertEqual(e["thresholds"]["rule"], {"value": 8, "from": "store", "key": "rule_threshold"})
        self.assertEqual(e["level_due"], "raw")
        # the resolver agrees with what consolidate applies
        self.store.consolidate()
        self.assertEqual(self.store.get("pref:stdlib-first")["level"], "raw")
        self.observe("pref:stdlib-first", 2)
        self.store.consolidate()
        self.assertEqual(self.store.get("pref:stdlib-first")["level"], "mature")
        self.assertEqual(self.store.explain("pref:stdlib-first")["level_due"], "mature")

    def test_contributors_dates_links(self):
        other = self.open(session="s2")
        self.observe("seq:a->b", 2, source="claude-code")
        self.observe("seq:a->b", 3, source="cursor", store=other)
        first = instinct._iso(T0)
        self.store.merge("seq:a - c", "seq:a->b")
        e = self.store.explain("seq:a->b")
        self.assertEqual(e["observations"], 5)
        self.assertEqual(e["sources"], [{"name": "cursor", "count": 3}, {"name": "claude-code", "count": 2}])
        self.assertEqual(e["sessions"], [{"name": "s2", "count": 3}, {"name": "s1", "count": 2}])
        self.assertEqual(e["session_count"], 2)
        self.assertEqual(e["first_seen"], first)
        self.assertEqual(e["aliases"], ["seq:a->c"])
        last = instinct._parse_iso(e["last_seen"])
        self.assertEqual(e["next_decay"], {"date": instinct._iso(last + 90 * DAY), "due": False,
                                           "confidence_after": 4, "deletes": False})
        # a decay charge moves the next decay date on from the charge, not from last_seen
        self.clock.advance(days=100)
        self.store.decay()
        e = self.store.explain("seq:a->b")
        self.assertEqual(e["decayed_at"], instinct._iso(self.clock.t))
        self.assertEqual(e["next_decay"]["date"], instinct._iso(self.clock.t + 90 * DAY))
        # explaining through the alias spelling reaches the canonical pattern
        self.assertEqual(self.store.explain("seq:a->c")["pattern"], "seq:a->b")

    def test_universal_needs_projects(self):
        p1, p2 = "aaaaaaaaaaaa", "bbbbbbbbbbbb"
        self.observe("fix:missing-import", 10, project=p1)
        e = self.store.explain("fix:missing-import", project=p1)
        self.assertEqual(e["level_due"], "rule")
        self.assertEqual(e["next_promotion"], {"level": "universal", "observations_needed": 0,
                                               "projects_needed": 1})
        self.observe("fix:missing-import", 10, project=p2)
        e = self.store.explain("fix:missing-import", project=p1)
        self.assertEqual(e["level_due"], "universal")
        self.assertNotIn("next_promotion", e)
        self.assertEqual({p["project"] for p in e["projects"]}, {p1, p2})

    def test_missing(self):
        with self.assertRaises(NotFoundError):
            self.store.explain("seq:nothing")
        self.observe("seq:x")
        with self.assertRaises(NotFoundError):
            self.store.explain("seq:x", project="cccccccccccc")


class HistoryTest(InsightCase):
    def test_timeline_ends_at_current_confidence(self):
        self.observe("seq:t->f", 5)
        self.store.consolidate()
        self.store.feedback("seq:t->f", "bad", note="noisy")
        self.store.feedback("seq:t->f", "good")
        self.observe("seq:t - g", 2)
        self.store.merge("seq:t - g", "seq:t->f")
        self.clock.advance(days=91)
        self.store.decay()
        h = self.store.history("seq:t->f")
        kinds = [e["kind"] for e in h["events"]]
        self.assertEqual(kinds, ["observe"] * 5 + ["promote", "feedback", "feedback"]
                         + ["observe"] * 2 + ["merge", "decay"])
        conf = [e["confidence"] for e in h["events"]]
        self.assertEqual(conf, [1, 2, 3, 4, 5, 5, 4, 5, 6, 7, 7, 6])
        self.assertEqual(h["confidence"], self.store.get("seq:t->f")["confidence"])
        self.assertEqual(h["confidence"], 6)
        self.assertEqual(h["baseline"], 0)
        self.assertEqual(h["events"][5]["detail"], "raw -> mature")
        self.assertEqual(h["events"][6]["detail"], "bad: noisy")
        self.assertEqual(h["events"][10]["detail"], "merged seq:t->g")

        short = self.store.history("seq:t->f", limit=3)
        self.assertEqual((short["count"], len(short["events"]), short["baseline"]), (12, 3, 6))
        self.assertEqual([e["confidence"] for e in short["events"]], [7, 7, 6])

    def test_forgotten_pattern_leaves_no_history(self):
        # issue 14: forgetting removes every copy, its events included
        self.observe("combo:a+b", 3)
        self.assertEqual([e["confidence"] for e in self.store.history("combo:a+b")["events"]], [1, 2, 3])
        self.store.forget("combo:a+b")
        with self.assertRaises(NotFoundError):
            self.store.history("combo:a+b")
        with self.assertRaises(NotFoundError):
            self.store.history("combo:never")
        with self.assertRaises(ValidationError):
            self.store.history("combo:a+b", limit=0)


class EffectivenessTest(InsightCase):
    def test_reinforced_missed_pending(self):
        self.observe("seq:used", 5)
        self.observe("seq:ignored", 5)
        self.store.consolidate()
        shown = self.store.suggest(project="")
        self.assertEqual(len(shown), 2)
        self.assertEqual(self.events("surface"), [("", "", 0, "seq:ignored\t\nseq:used\t")])
        self.clock.advance(days=2)
        self.observe("seq:used")                              # within 7 days: reinforced
        self.clock.advance(days=10)
        e = self.store.effectiveness(days=7)
        self.assertEqual((e["surfaced"], e["reinforced"], e["missed"], e["pending"]), (2, 1, 1, 0))
        self.assertEqual(e["rate"], 0.5)
        by = {p["pattern"]: p for p in e["patterns"]}
        self.assertEqual(by["seq:used"]["rate"], 1.0)
        self.assertEqual(by["seq:ignored"]["missed"], 1)
        # a longer window counts nothing more; a new showing is pending until its window closes
        self.store.suggest(project="", limit=1)
        e = self.store.effectiveness(days=7)
        self.assertEqual((e["surfaced"], e["pending"]), (3, 1))
        self.assertEqual(self.store.explain("seq:used")["surfaced"], 2)
        self.assertEqual(self.store.explain("seq:ignored")["surfaced"], 1)
        self.observe("seq:ignored")                           # 12 days after it was shown
        self.clock.advance(days=8)
        e = self.store.effectiveness(days=7)
        self.assertEqual((e["reinforced"], e["missed"], e["pending"]), (1, 2, 0))
        e = self.store.effectiveness(days=30)
        self.assertEqual((e["reinforced"], e["missed"], e["pending"]), (2, 0, 1))
        self.assertEqual(e["rate"], 1.0)

    def test_no_surface_without_results(self):
        self.observe("seq:raw")
        self.assertEqual(self.store.suggest(project=""), [])
        self.assertEqual(self.events("surface"), [])
        e = self.store.effectiveness()
        self.assertEqual((e["surfaced"], e["patterns"]), (0, []))
        self.assertNotIn("rate", e)


class FeedbackTest(InsightCase):
    def test_good_reinforces(self):
        self.observe("seq:x", 2)
        before = self.store.get("seq:x")["last_seen"]
        r = self.store.feedback("seq:x", "good", note="helped")
        self.assertEqual((r["confidence"], r["delta"], r["quiet"]), (3, 1, 0))
        self.assertGreater(r["last_seen"], before)
        self.assertEqual(self.events("feedback"), [("seq:x", "", 1, '{"verdict":"good","note":"helped"}')])

    def test_bad_quiets_until_observed_again(self):
        self.observe("seq:x", 6)
        self.store.consolidate()
        self.assertEqual([r["pattern"] for r in self.store.suggest(project="")], ["seq:x"])
        r = self.store.feedback("seq:x", "bad")
        self.assertEqual((r["confidence"], r["delta"], r["quiet"]), (5, -1, 3))
        self.assertEqual(self.store.suggest(project=""), [])
        self.assertFalse(self.store.explain("seq:x")["suggested"])
        self.observe("seq:x", 2)
        self.assertEqual(self.store.suggest(project=""), [])
        self.assertEqual(self.store.explain("seq:x")["quiet"], 1)
        self.observe("seq:x")
        self.assertEqual([r["pattern"] for r in self.store.suggest(project="")], ["seq:x"])
        e = self.store.explain("seq:x")
        self.assertEqual((e["quiet"], e["feedback"]["bad"], e["feedback"]["good"]), (0, 1, 0))

    def test_bad_floor_setting_and_errors(self):
        self.store.config("feedback_bad_quiet", "1")
        self.observe("seq:y")
        r = self.store.feedback("seq:y", "bad")
        self.assertEqual((r["confidence"], r["delta"], r["quiet"]), (1, 0, 1))  # never below 1
        self.store.feedback("seq:y", "good")                                    # good lifts the quiet
        self.assertEqual(self.store.explain("seq:y")["quiet"], 0)
        with self.assertRaises(ValidationError):
            self.store.feedback("seq:y", "meh")
        with self.assertRaises(NotFoundError):
            self.store.feedback("seq:missing", "bad")
        with self.assertRaises(ValidationError):
            self.store.feedback("seq:y", "bad", note="x" * 2000)
        self.assertEqual(len(self.events("feedback")), 2)                       # refused ones: nothing written


class ConflictTest(InsightCase):
    def test_latest_value_wins(self):
        self.observe("pref:tz=UTC", 6)
        self.store.consolidate()
        self.assertEqual([r["pattern"] for r in self.store.suggest(project="")], ["pref:tz=UTC"])
        self.clock.advance(days=7)
        self.observe("pref:tz=Beijing", 5)
        self.store.consolidate()
        self.assertEqual([r["pattern"] for r in self.store.suggest(project="")], ["pref:tz=Beijing"])
        self.assertEqual(self.store.get("pref:tz=UTC")["confidence"], 6)       # kept
        e = self.store.explain("pref:tz=UTC")
        self.assertTrue(e["preference"]["superseded"])
        self.assertEqual(e["preference"]["superseded_by"], "pref:tz=Beijing")
        self.assertEqual([v["value"] for v in e["preference"]["values"]], ["Beijing", "UTC"])
        self.assertFalse(e["suggested"])
        [c] = self.store.conflicts()
        self.assertEqual((c["key"], c["project"], c["winner"]), ("tz", "", "pref:tz=Beijing"))
        # reinforcing the old value brings it back
        self.observe("pref:tz=UTC")
        self.assertEqual([r["pattern"] for r in self.store.suggest(project="")], ["pref:tz=UTC"])
        self.assertFalse(self.store.explain("pref:tz=UTC")["preference"]["superseded"])
        # a newer value that is still raw silences the older one without being suggested itself
        self.clock.advance(days=1)
        self.observe("pref:tz=Tokyo")
        self.assertEqual(self.store.suggest(project=""), [])
        self.assertEqual(self.store.conflicts()[0]["winner"], "pref:tz=Tokyo")

    def test_scopes(self):
        p = "dddddddddddd"
        self.observe("pref:indent=tabs", 5)                  # global
        self.observe("pref:indent=spaces", 5, project=p)     # project, older than nothing
        self.observe("pref:indent=tabs", 1)                  # global is the most recent now
        self.observe("pref:style=black", 5)
        self.store.consolidate()
        self.assertEqual(self.store.conflicts(), [])         # different scopes do not conflict
        got = [r["pattern"] for r in self.store.suggest(project=p)]
        self.assertEqual(sorted(got), ["pref:indent=spaces", "pref:style=black"])   # project value wins
        self.assertEqual(sorted(r["pattern"] for r in self.store.suggest(project="")),
                         ["pref:indent=tabs", "pref:style=black"])


class LevelLogTest(InsightCase):
    def test_consolidate_logs_level_changes(self):
        self.observe("seq:p", 10)
        self.store.consolidate()
        self.store.consolidate()                             # nothing changes: nothing logged
        self.assertEqual(self.events("promote"), [("seq:p", "", 0, "0->2")])
        self.store.config("rule_threshold", "20")
        self.store.consolidate()
        self.assertEqual(self.events("demote"), [("seq:p", "", 0, "2->1")])


class SchemaTest(InsightCase):
    def test_migration_and_upsert_countdown(self):
        self.observe("seq:z")
        conn = sqlite3.connect(self.path)
        self.addCleanup(conn.close)
        cols = {r[1] for r in conn.execute("PRAGMA table_info(instincts)")}
        self.assertIn("quiet", cols)
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        self.assertIn("ix_events_surface", names)
        conn.execute("UPDATE instincts SET quiet = 2")
        conn.commit()
        self.observe("seq:z")
        self.observe("seq:z")
        self.observe("seq:z")
        self.assertEqual(conn.execute("SELECT quiet, confidence FROM instincts").fetchone(), (0, 4))

    def test_schemas_portable(self):
        for name in ("explain", "history", "effectiveness", "feedback", "conflicts"):
            op = instinct.OPERATIONS[name]
            self.assertEqual(schema_problems(op.output_schema()), [], name)
            self.assertEqual(schema_problems(op.input_schema()), [], name)


class SurfacesTest(InsightCase):
    """The CLI (main() in-process and a real subprocess) and one MCP tools/call."""

    def seed(self):
        self.clock.t = time.time() - 3600          # main() runs on the real clock
        self.observe("pref:tz=UTC", 6, source="claude-code")
        self.store.consolidate()
        self.observe("pref:tz=Beijing", 1)
        self.store.close()

    def cli_in_process(self, *argv):
        return cli_in_process(*argv, "--db", self.path)

    def test_cli_text_and_json(self):
        self.seed()
        code, out, _ = self.cli_in_process("explain", "pref:tz=UTC")
        self.assertEqual(code, 0)
        self.assertIn("pref:tz=UTC (global): conf=6 [mature] preference", out)
        self.assertIn("superseded by pref:tz=Beijing", out)
        self.assertIn("sources: claude-code (6)", out)
        code, out, _ = self.cli_in_process("explain", "pref:tz=UTC", "--json")
        data = json.loads(out)
        self.assertEqual(validate(data, instinct.OPERATIONS["explain"].output_schema()), [])
        self.assertEqual(data["preference"]["superseded_by"], "pref:tz=Beijing")

        code, out, _ = self.cli_in_process("history", "pref:tz=UTC")
        self.assertEqual(out.splitlines()[-1], "7 events")
        self.assertIn("promote  +0  -> 6    raw -> mature", out)
        code, out, _ = self.cli_in_process("feedback", "pref:tz=Beijing", "good", "--note", "confirmed")
        self.assertEqual(out.strip(), "Good feedback on pref:tz=Beijing (global): conf=2 (+1)")
        code, out, _ = self.cli_in_process("conflicts", "--json")
        self.assertEqual(json.loads(out)[0]["winner"], "pref:tz=Beijing")
        code, out, _ = self.cli_in_process("effectiveness", "--json")
        self.assertEqual(json.loads(out)["days"], 7)
        code, out, err = self.cli_in_process("feedback", "pref:tz=nope", "bad")
        self.assertEqual((code, out), (1, ""))
        self.assertRegex(err, r"^instinct: error: no instinct 'pref:tz=nope' in this project "
                              r"\([0-9a-f]{12}\), global or universal\n$")

    def test_cli_subprocess(self):
        self.seed()
        env = dict(os.environ, INSTINCT_DB=self.path)
        p = cli_process("feedback", "pref:tz=UTC", "bad", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("conf=5 (-1), not suggested until observed 3 more time(s)", p.stdout)
        p = cli_process("feedback", "pref:tz=UTC", "meh", env=env)
        self.assertEqual((p.returncode, p.stdout), (2, ""))
        self.assertIn("invalid choice: 'meh'", p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def test_mcp_tools_call(self):
        self.seed()
        store = self.open()
        server, init = mcp_in_process(store, "2025-06-18")
        self.assertEqual(init["protocolVersion"], "2025-06-18")
        tools = {t["name"]: t for t in server.handle_message(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["result"]["tools"]}
        for name in ("explain", "history", "effectiveness", "feedback", "conflicts"):
            self.assertIn(name, tools)
        self.assertTrue(tools["explain"]["annotations"]["readOnlyHint"])
        self.assertFalse(tools["feedback"]["annotations"]["readOnlyHint"])
        for name, args in (("explain", {"pattern": "pref:tz=UTC"}),
                           ("history", {"pattern": "pref:tz=UTC", "limit": 2}),
                           ("feedback", {"pattern": "pref:tz=UTC", "verdict": "bad", "note": "wrong"}),
                           ("conflicts", {}), ("effectiveness", {})):
            reply = tool_result(server, name, args, mid=3)
            self.assertFalse(reply["isError"], reply)
            self.assertEqual(validate(reply["structuredContent"], tools[name]["outputSchema"], name), [])
            self.assertEqual(json.loads(reply["content"][0]["text"]), reply["structuredContent"])
        e = server.handle_message({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "explain", "arguments": {"pattern": "pref:tz=UTC"}}})["result"]["structuredContent"]
        self.assertEqual(e["feedback"]["recent"][0], {"ts": e["feedback"]["recent"][0]["ts"], "verdict": "bad",
                                                      "note": "wrong"})
        self.assertEqual(e["quiet"], 3)
        bad = server.handle_message({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "feedback", "arguments": {"pattern": "pref:tz=UTC", "verdict": "maybe"}}})
        self.assertIn("must be one of: good, bad", json.dumps(bad))


class TestExplainNextDecay(unittest.TestCase):
    """Issue 32 item 8: `explain` never dates the next decay in the past."""

    def test_a_decay_already_due_says_due_now(self):
        tmp = temp_dir(self)
        db = os.path.join(tmp, "i.db")
        with instinct.InstinctStore(db, clock=Clock(time.time() - 200 * DAY)) as old:
            old.observe("seq:a->b", project="")
        now = time.time()
        with instinct.InstinctStore(db, clock=Clock(now)) as recent:
            recent.observe("seq:c->d", project="")
        env = child_env(tmp, db)
        r = cli_process("explain", "seq:a->b", "--project", "", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("  next decay: due now (to conf=0, deleted)\n", r.stdout)
        d = json.loads(cli_process("--json", "explain", "seq:a->b", "--project", "",
                                   env=env).stdout)["next_decay"]
        self.assertTrue(d["due"])
        self.assertGreaterEqual(instinct._parse_iso(d["date"]), time.time() - 60)
        r = cli_process("explain", "seq:c->d", "--project", "", env=env)
        day = time.strftime("%Y-%m-%d", time.gmtime(now + 90 * DAY))
        self.assertIn(f"  next decay: {day} if not observed (to conf=0, deleted)\n", r.stdout)
        # the due one is what decay really charges now (conf 1 -> deleted); the other stays
        self.assertEqual(cli_process("decay", env=env).returncode, 0)
        kept = [r["pattern"] for r in json.loads(cli_process("--json", "list", env=env).stdout)]
        self.assertEqual(kept, ["seq:c->d"])


if __name__ == "__main__":
    unittest.main()
