"""Corrections that stick (issue 21) and one writer of confidence (issue 19, item 1): `forget` is
final until `unforget`, an alias is forgotten alone, destructive commands preview (--dry-run)
and back up first, imported history keeps its own time and source, project folders are named."""
import inspect
import json
import os
import re
import sqlite3
import stat
import time
import unittest
from unittest import mock

import instinct
from tests.helpers import (DAY, INSTINCT_PY, ROOT, StoreCase, child_env, make_repo,  # noqa: F401
                           mcp_in_process, old_schema_db, rows, run_instinct, setUpModule,
                           temp_dir, tool_result, write)

SEQ = "seq:pytest->Edit->pytest->ruff check->git add"
CALLS = [("Bash", {"command": "pytest -q"}), ("Edit", {"file_path": "src/a.py"}),
         ("Bash", {"command": "pytest -q"}), ("Bash", {"command": "ruff check ."}),
         ("Bash", {"command": "git add -A"})]


class _Project(unittest.TestCase):
    """A temp HOME holding a git project and a store; the CLI and hooks as real processes."""

    def setUp(self):
        self.home = temp_dir(self)
        self.repo = make_repo(os.path.join(self.home, "work", "shop"))
        self.db = os.path.join(self.home, "store", "i.db")
        os.mkdir(os.path.dirname(self.db), 0o700)
        self.fp = instinct.project_fingerprint(self.repo)

    def cli(self, *args, code=0):
        r = run_instinct(*args, env=child_env(self.home, self.db), cwd=self.repo, timeout=120)
        self.assertEqual(r.returncode, code, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        return r

    def json(self, *args):
        return json.loads(self.cli("--json", *args).stdout)

    def hook(self, event, payload):
        r = run_instinct("hook", event, input=json.dumps(payload), cwd=self.repo,
                         env=child_env(self.home, self.db))
        self.assertEqual((r.returncode, r.stdout), (0, ""), r.stderr)

    def session(self, sid):
        """One agent session replayed through real hook processes: its calls, then its end."""
        for tool, tinput in CALLS:
            self.hook("post-tool-use", {"session_id": sid, "cwd": self.repo, "tool_name": tool,
                                        "tool_input": tinput, "tool_response": {},
                                        "hook_event_name": "PostToolUse"})
        self.hook("session-end", {"session_id": sid, "cwd": self.repo,
                                  "hook_event_name": "SessionEnd"})

    def sql(self, query, params=()):
        return rows(self.db, query, params)

    def patterns(self):
        return {p for p, in self.sql("SELECT pattern FROM instincts")}


# --- A. one writer of confidence ------------------------------------------------------------
class TestOneWriter(StoreCase):
    def test_the_weight_of_an_observation_is_set_in_one_place(self):
        """_OBSERVATION is what one observation adds: observe, a mined session and an
        imported history session all follow it."""
        repo = make_repo(str(self.tmp / "repo"))
        with mock.patch.object(instinct._Core, "_OBSERVATION", 3):
            self.assertEqual(self.store.observe("pref:weight")["confidence"], 3)
            self.assertEqual(self.store.observe("pref:weight")["confidence"], 6)
            for sid in ("live1", "live2"):          # one session is no evidence: two are
                for tool, tinput in CALLS:
                    self.store.record_tool({"session_id": sid, "cwd": repo, "tool_name": tool,
                                            "tool_input": tinput})
            self.assertIn("pref:test=pytest", self.store.mine()["observed"])
            self.assertEqual(self.conf("pref:test=pytest", project=repo), 6)
            for n in range(2):
                hist = self.tmp / "history" / f"old{n}.jsonl"
                write(str(hist), _transcript(f"old{n}", repo, time.time() - (3 + n) * DAY,
                                             [("Bash", {"command": "cargo test"})]))
            self.store.import_history(client="claude-code", path=str(self.tmp / "history"))
            self.assertEqual(self.conf("pref:test=cargo test", project=repo), 6)
        self.assertEqual(self.store.observe("pref:weight")["confidence"], 7)     # back to 1
        deltas = {d for d, in self.sql("SELECT delta FROM events WHERE kind = 'observe'")}
        self.assertEqual(deltas, {1, 3})

    def test_only_the_kernel_writes_confidence_increments_and_observe_events(self):
        src = inspect.getsource(instinct)
        kernel = inspect.getsource(instinct._Core._reinforce)
        bumps = [m.start() for m in re.finditer(r"confidence\s*=\s*confidence\s*\+", src)]
        self.assertEqual(len(bumps), 1)
        self.assertIn("confidence = confidence + :delta", instinct._Core._SQL_REINFORCE)
        inserts = re.findall(r"INSERT INTO instincts\s*\(", src)        # v1 migration, kernel
        self.assertEqual(len(inserts), 2)
        quoted = [src[m.start() - 30:m.end()] for m in re.finditer("'observe'", src)]
        self.assertEqual(len(quoted), 1, quoted)                 # session_summary reads a count
        self.assertIn("act.get('observe'", quoted[0])
        self.assertIn("_SQL_EVENT", kernel)
        self.assertEqual(instinct._Core._SQL_OBSERVED, "kind IN ('observe')")
        self.assertLessEqual({"observe", "import", "merge", "feedback", "forget", "unforget"},
                             set(instinct._Core.EVENT_KINDS))

    def test_every_kind_in_a_busy_store_is_declared(self):
        repo = make_repo(str(self.tmp / "repo"))
        s = self.store
        for _ in range(3):
            s.observe("seq:a->b")
        s.observe("seq:a-b")
        s.merge("seq:a-b", "seq:a->b")
        s.feedback("seq:a->b", "good")
        s.consolidate()
        s.suggest(project="")
        s.record_tool({"session_id": "x", "cwd": repo, "tool_name": "Bash",
                       "tool_input": {"command": "ls"}})
        m = s.remember("user", "Likes tabs", "Indent with tabs.")
        s.forget_memory(m["id"])
        s.observe("seq:gone")
        s.forget("seq:gone", project="")
        s.unforget("seq:gone")
        kinds = {k for k, in self.sql("SELECT DISTINCT kind FROM events")}
        self.assertLessEqual(kinds, set(instinct._Core.EVENT_KINDS))
        self.assertGreaterEqual(len(kinds), 9)


# --- B1. forget sticks -------------------------------------------------------------------------
class TestForgetSticks(_Project):
    def test_a_forgotten_pattern_stays_gone_through_sessions_a_reimport_and_a_merge(self):
        for n in range(4):
            self.session(f"before-{n}")
        self.assertEqual(self.json("get", SEQ)["confidence"], 4)
        export = os.path.join(self.repo, "rules.json")
        self.cli("export", "--min-confidence", "1", "--write", export)
        out = self.cli("forget", SEQ).stdout
        self.assertIn(f"Forgot {SEQ} (conf=4, project {self.fp} {self.repo})", out)
        self.assertIn("stays forgotten", out)
        for n in range(3):                                  # 3 more sessions of the same calls
            self.session(f"after-{n}")
        self.assertNotIn(SEQ, self.patterns())
        self.assertEqual(self.json("get", "pref:test=pytest")["confidence"], 7)   # the rest counts
        self.assertEqual(self.sql("SELECT count(*) FROM events WHERE pattern = ?", (SEQ,)), [(0,)])
        # mining says it left the pattern out
        for tool, tinput in CALLS:
            self.hook("post-tool-use", {"session_id": "told", "cwd": self.repo, "tool_name": tool,
                                        "tool_input": tinput, "tool_response": {}})
        self.assertEqual(self.json("mine", "--session", "told")["forgotten"], 1)
        # re-importing the rules file made before the forget
        r = self.json("import", export)
        self.assertEqual(r["forgotten"], 1)
        self.assertIn("1 left out (forgotten)", self.cli("import", export).stdout)
        self.assertNotIn(SEQ, self.patterns())
        self.cli("gc")                                      # the store holds no copy of its name:
        with open(self.db, "rb") as f:                      # the tombstone is a hash
            self.assertFalse(SEQ.encode() in f.read())
        # a merge into it drops the merged rows instead of bringing it back
        self.cli("observe", "seq:pytest-edit", "--project", self.repo)
        r = self.json("merge", "seq:pytest-edit", SEQ)
        self.assertEqual((r["merged"], r["forgotten"]), (0, 1))
        self.assertNotIn(SEQ, self.patterns())
        # observing it by hand: a one-line note, exit 0, nothing stored
        r = self.cli("observe", SEQ, "--project", self.repo)
        self.assertEqual(r.stdout.strip(), f"{SEQ} is forgotten (project {self.fp}): not recorded "
                                           "(`instinct unforget` lifts it)")
        self.assertTrue(self.json("observe", SEQ, "--project", self.repo)["forgotten"])
        self.assertNotIn(SEQ, self.patterns())
        # unforget lifts it: the next session counts it again, with every session that held
        # it (all of them held it, so all count)
        self.assertIn("is no longer forgotten", self.cli("unforget", SEQ).stdout)
        self.session("lifted")
        self.assertEqual(self.json("get", SEQ)["confidence"], 4 + 3 + 1 + 1)
        self.assertIn("is not forgotten", self.cli("unforget", SEQ, code=1).stderr)

    def test_a_forgotten_memory_stays_out_of_a_reimport_until_remembered(self):
        s = instinct.InstinctStore(self.db)
        self.addCleanup(s.close)
        m = s.remember("feedback", "Never run the deploy script", "It pushes to production.")
        s.remember("user", "Prefers short answers", "Keep replies short.")
        md = os.path.join(self.home, "memories")
        s.export_memories(md)
        s.forget_memory(m["id"])
        r = self.json("import-memories", md)
        self.assertEqual((r["added"], r["unchanged"], r["forgotten"]), (0, 1, 1))
        self.assertIn("forgotten 1", self.cli("import-memories", md).stdout)
        self.assertEqual([x["title"] for x in s.memories()], ["Prefers short answers"])
        s.remember("feedback", "Never run the deploy script", "It pushes to production.")
        self.assertNotIn("forgotten", self.json("import-memories", md))


# --- B2. forgetting an alias, merging unknown names -----------------------------------------
class TestAliases(_Project):
    def test_forgetting_an_alias_removes_only_the_alias(self):
        for _ in range(5):
            self.cli("observe", "pref:test=pytest")
        for _ in range(3):
            self.cli("observe", "pref:test=py.test")
        self.cli("merge", "pref:test=py.test", "pref:test=pytest")
        r = self.cli("forget", "pref:test=py.test", "--dry-run")
        self.assertIn("Would remove alias pref:test=py.test (it meant pref:test=pytest", r.stdout)
        self.assertEqual(self.sql("SELECT count(*) FROM aliases"), [(1,)])
        r = self.cli("forget", "pref:test=py.test")
        self.assertIn("Removed alias pref:test=py.test (it meant pref:test=pytest, which is kept)",
                      r.stdout)
        self.assertEqual(self.sql("SELECT pattern, confidence FROM instincts"),
                         [("pref:test=pytest", 8)])
        self.assertEqual(self.sql("SELECT count(*) FROM aliases"), [(0,)])
        self.assertEqual(self.json("observe", "pref:test=py.test")["pattern"], "pref:test=py.test")

    def test_merging_names_that_do_not_exist_refuses(self):
        r = run_instinct("merge", "pref:tset=x", "pref:test=x", env=child_env(self.home, self.db),
                         cwd=self.repo)
        self.assertEqual((r.returncode, r.stdout), (1, ""))
        self.assertEqual(r.stderr.strip().splitlines(),
                         ["instinct: error: neither 'pref:tset=x' nor 'pref:test=x' is stored: "
                          "nothing to merge"])
        self.assertEqual(self.sql("SELECT count(*) FROM aliases"), [(0,)])
        self.cli("observe", "pref:test=x")            # a target that exists: an alias ahead
        self.cli("merge", "pref:tset=x", "pref:test=x")
        self.assertEqual(self.json("observe", "pref:tset=x")["confidence"], 2)


# --- B3. dry runs and automatic backups ----------------------------------------------------
class TestPreviewAndUndo(_Project):
    def fill(self):
        for n in range(3):
            self.session(f"s{n}")
        for _ in range(4):
            self.cli("observe", "pref:ruff-config=strict")
        self.cli("remember", "project", "Lint with ruff", "Run ruff check before commits.")

    def dump(self):
        return {t: self.sql(f"SELECT * FROM {t} ORDER BY 1")
                for t in ("instincts", "events", "memories", "aliases", "forgotten")}

    def backups(self):
        d = os.path.dirname(self.db)
        return sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".bak"))

    def test_dry_runs_change_nothing_and_say_what_would_go(self):
        self.fill()
        before = self.dump()
        r = self.cli("forget", SEQ, "--dry-run")
        self.assertIn(f"Would forget {SEQ} (conf=3, project {self.fp} {self.repo}) and 3 events",
                      r.stdout)
        self.assertIn("dry run: nothing changed", r.stdout)
        dry = self.json("purge", "ruff", "--dry-run")
        self.assertTrue(dry["dry_run"])
        self.assertGreaterEqual((dry["instincts"], dry["memories"]), (3, 1))
        self.assertIn("Would purge", self.cli("purge", "ruff", "--dry-run").stdout)
        self.assertTrue(self.json("gc", "--dry-run")["dry_run"])
        self.assertEqual(self.dump(), before)
        self.assertEqual(self.backups(), [])
        real = self.json("purge", "ruff")                  # the preview counted what went
        self.assertEqual({k: real[k] for k in ("instincts", "memories", "events", "other")},
                         {k: dry[k] for k in ("instincts", "memories", "events", "other")})

    def test_each_real_run_backs_up_first_and_restore_undoes_it(self):
        self.fill()
        before = self.dump()
        out = self.cli("purge", "ruff").stdout
        path = re.search(r"Backup: (\S+) \(`instinct restore` it to undo\)", out).group(1)
        self.assertEqual(self.backups(), [path])
        self.assertEqual(os.path.dirname(path), os.path.dirname(self.db))
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        self.assertFalse(self.patterns() & {"pref:lint=ruff check", "pref:ruff-config=strict"})
        r = self.json("restore", path, "--dry-run")
        self.assertEqual((r["dry_run"], r["instincts"]), (True, len(before["instincts"])))
        self.assertFalse(self.patterns() & {"pref:ruff-config=strict"})
        self.cli("restore", path)
        self.assertEqual(self.dump()["instincts"], before["instincts"])
        self.assertEqual(self.dump()["memories"], before["memories"])
        forgot = self.json("forget", SEQ)
        self.assertTrue(os.path.isfile(forgot["backup_file"]))
        self.assertTrue(self.json("gc")["backup_file"].endswith("-gc.bak"))
        self.assertEqual(len(self.backups()), 3 + 1)        # purge, forget, gc; restore's .bak

    def test_backups_are_bounded(self):
        s = instinct.InstinctStore(self.db)
        self.addCleanup(s.close)
        for i in range(instinct.AUTO_BACKUPS + 3):
            s.observe(f"seq:p{i}")
            s.forget(f"seq:p{i}", project="")
        kept = s._auto_backups()
        self.assertEqual(len(kept), instinct.AUTO_BACKUPS)
        self.assertTrue(kept[-1].endswith("-forget.bak"))
        newest = instinct.InstinctStore(kept[-1])
        self.addCleanup(newest.close)
        self.assertEqual([r["pattern"] for r in newest.list()],
                         [f"seq:p{instinct.AUTO_BACKUPS + 2}"])


# --- B4. imported history keeps its own time ------------------------------------------------------
def _transcript(sid, cwd, start, calls):
    """A Claude Code transcript: each call a tool_use and its tool_result, a minute apart."""
    lines = []
    for i, (tool, tinput) in enumerate(calls):
        ts = instinct._iso(start + 60 * i).replace("+00:00", "Z")
        base = {"sessionId": sid, "cwd": cwd, "timestamp": ts, "isSidechain": False}
        lines.append(dict(base, type="assistant", message={"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{i}", "name": tool, "input": tinput}]}))
        lines.append(dict(base, type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}]}))
    return "\n".join(json.dumps(x) for x in lines) + "\n"


class TestImportedTime(_Project):
    def test_explain_and_history_show_the_transcripts_time_and_source(self):
        folder = os.path.join(self.home, "transcripts")
        starts = [time.time() - d * DAY for d in (10, 9, 8, 7, 6, 5)]
        for n, t in enumerate(starts):
            write(os.path.join(folder, f"sess-{n}.jsonl"),
                  _transcript(f"sess-{n}", self.repo, t, CALLS))
        self.cli("import-history", "--client", "claude-code", "--path", folder)
        h = self.json("history", "pref:test=pytest")
        obs = [e for e in h["events"] if e["kind"] == "observe"]
        self.assertEqual(len(obs), 6)
        self.assertEqual({e["source"] for e in obs}, {"import:claude-code"})
        self.assertEqual(len({e["ts"][:10] for e in obs}), 6)           # six days, not one second
        for e, t in zip(obs, starts):
            self.assertEqual(e["ts"], instinct._iso(t + 60 * 4))     # the session's last call
        e = self.json("explain", "pref:test=pytest")
        self.assertEqual(e["sources"], [{"name": "import:claude-code", "count": 6}])
        self.assertEqual((e["first_seen"], e["last_seen"]),
                         (instinct._iso(starts[0] + 240), instinct._iso(starts[-1] + 240)))
        self.assertEqual(e["source"], "import:claude-code")
        # hooks keep their own source; the briefing still shows mined commands as code
        self.session("live")
        self.assertEqual(self.json("get", "pref:test=pytest")["source"], "hooks")
        self.assertTrue(instinct._Corpus.mined_source("import:codex"))
        imported = {"pattern": "pref:test=pytest", "source": "import:codex"}
        self.assertEqual(instinct._Presenter.rule_text(imported),
                         instinct._Presenter.rule_text(dict(imported, source="hooks")))


# --- B5. projects are told apart -----------------------------------------------------------
class TestProjects(_Project):
    def test_every_view_names_the_folder_of_a_fingerprint(self):
        other = make_repo(os.path.join(self.home, "work", "other"))
        self.session("s1")
        self.session("s2")
        self.cli("observe", "pref:style=black", "--project", other)
        ofp = instinct.project_fingerprint(other)
        ps = self.json("projects")
        n = self.sql("SELECT count(*) FROM instincts WHERE project = ?", (self.fp,))[0][0]
        self.assertGreater(n, 1)
        self.assertEqual(ps, [
            {"fingerprint": self.fp, "root": self.repo, "sessions": 2, "patterns": n},
            {"fingerprint": ofp, "root": other, "sessions": 0, "patterns": 1}])
        text = self.cli("projects").stdout
        self.assertIn(f"  {self.fp}  {self.repo}  2 sessions, {n} patterns", text)
        self.assertIn("2 projects", text)
        listed = self.json("list")
        self.assertEqual({r["root"] for r in listed}, {self.repo, other})
        self.assertRegex(self.cli("list").stdout,
                         r"pref:style=black +conf=1 +\[raw\] +preference +" + re.escape(other))
        self.assertEqual(self.json("stats")["folders"], {self.fp: self.repo, ofp: other})
        self.assertIn(f"project {ofp}: {other}", self.cli("stats").stdout)
        here = f"(project {self.fp} {self.repo})"
        self.assertIn(here, self.cli("explain", "pref:test=pytest").stdout)
        self.assertEqual(self.json("history", "pref:test=pytest")["root"], self.repo)
        self.assertIn(here, self.cli("history", "pref:test=pytest").stdout)

    def test_projects_is_one_operation_in_api_cli_and_mcp(self):
        s = instinct.InstinctStore(self.db, cwd=self.repo)
        self.addCleanup(s.close)
        s.observe("seq:a->b", project=self.repo)
        srv, _ = mcp_in_process(s)
        res = tool_result(srv, "projects", {})
        self.assertEqual(res["structuredContent"]["projects"],
                         [{"fingerprint": self.fp, "root": self.repo, "sessions": 0,
                           "patterns": 1}])
        self.assertEqual(s.projects(), res["structuredContent"]["projects"])
        self.assertTrue(instinct.OPERATIONS["projects"].read_only)


class TestMigration(StoreCase):
    def test_a_v10_store_gains_the_tombstones_and_projects_tables(self):
        path = self.tmp / "old.db"
        con = old_schema_db(path, 10)
        con.execute("INSERT INTO instincts (pattern, confidence, first_seen, last_seen)"
                    " VALUES ('seq:x->y', 3, 't', 't')")
        con.close()
        s = self.open(path)
        self.assertEqual(s.stats()["schema_version"], instinct.SCHEMA_VERSION)
        s.forget("seq:x->y", project="")
        self.assertEqual(s.observe("seq:x->y")["confidence"], 0)
        self.assertEqual(s.projects(), [])


if __name__ == "__main__":
    unittest.main()
