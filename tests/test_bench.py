"""The benchmark scripts in bench/ still run against today's instinct.py.

Each script runs once as a real process at its smallest size; the test checks that it exits 0,
writes no traceback and prints its figures' headings. These are smoke runs, not timings: no
figure is ever checked. bench_realdata needs the real sessions ($INSTINCT_REALDATA, else
../shared/realdata beside the repository) and is skipped without them; bench_mcp_breakdown adds
its floor row when the shared bench folder is there ($SHARED_BENCH, else ../shared/bench).
run_mcp_bench.sh needs the MCP peer venvs, so only its arguments and suite are checked here.
"""
import ast
import collections
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import unittest

import instinct
from tests.helpers import ROOT, child_env, instinct, setUpModule, temp_dir


BENCH = os.path.join(ROOT, "bench")
TIMEOUT = 300              # a hung script fails the test; a healthy smoke run takes about a second


def shared(env_var, name):
    """A folder of ../shared: $env_var, else beside the repository; None when absent."""
    path = os.environ.get(env_var) or os.path.join(ROOT, "..", "shared", name)
    return path if os.path.isdir(path) else None


class BenchSmoke(unittest.TestCase):

    def bench(self, script, *args, env=None):
        """Run bench/<script> ARGS from the repository root -> its stdout (exit 0 checked)."""
        home = temp_dir(self)
        r = subprocess.run([sys.executable, os.path.join(BENCH, script), *map(str, args)],
                           cwd=ROOT, env=env or child_env(home=home), capture_output=True, text=True,
                           timeout=TIMEOUT)
        self.assertEqual(r.returncode, 0, f"{script} {' '.join(map(str, args))} exited "
                                          f"{r.returncode}:\n{r.stderr[-3000:]}\n{r.stdout[-2000:]}")
        self.assertNotIn("Traceback", r.stderr)
        return r.stdout

    def assertHeadings(self, out, *headings):
        for h in headings:
            self.assertIn(h, out)

    def test_process(self):
        out = self.bench("bench_process.py", "--python", sys.executable, "--reps", 1, "--warmup", 0,
                         "--split-runs", 1, "--report-only")
        self.assertHeadings(out, "command", "median ms", "paired x", "floor: -c 'import sqlite3'",
                            "observe -m", "observe -S -m", "observe instinct.py", "suggest -m",
                            "hook post-tool-use -m", "hook (setup's command)",
                            "targets (<= 1.5x the floor):", "-X importtime", "in-process split",
                            "import instinct")

    def test_scale(self):
        out = self.bench("bench_scale.py", "--sizes", 2000, "--calls", 20, "--report-only")
        self.assertHeadings(out, "built 2,000 patterns", "metric", "observe existing p50 / p99 ms",
                            "observe new p50 / p99 ms", "bare sqlite upsert", "suggest busiest project",
                            "search (2 words, limit 20)", "list(limit=50)", "consolidate s (again)",
                            "decay s (again)", "peak RSS MiB (measuring process)",
                            "targets at 2,000 patterns:", "peak RSS after each phase")

    def test_memory(self):
        out = self.bench("bench_memory.py", "--n", 300, "--reps", 5)
        self.assertHeadings(out, "built 300 memories", "FTS5:", "recall 2-6 words, every project",
                            "recall 2-6 words, one project + global", "recall 20-word session-start query",
                            "remember (new memories)", "remember (repeats: reinforcement)",
                            "remember (reworded title, same content)")

    def test_history(self):
        out = self.bench("bench_history.py", 1)
        self.assertHeadings(out, "history: 5 sessions", "first run: 5 imported",
                            "second run (idempotent): 0 imported, 5 skipped", "in-process:", "mining")

    def test_shell(self):
        data = shared("INSTINCT_REALDATA", "realdata")
        env = child_env(home=temp_dir(self))
        env.pop("INSTINCT_REALDATA", None)
        if data:
            env["INSTINCT_REALDATA"] = data
        out = self.bench("bench_shell.py", 5, env=env)
        self.assertHeadings(out, "typical", "heredoc commit", "64 KiB of words", "64 KiB heredoc")
        if data:
            self.assertIn("realdata", out)

    def test_mcp_breakdown(self):
        floor = shared("SHARED_BENCH", "bench")
        floor = floor if floor and os.path.isfile(os.path.join(floor, "floor_stdlib.py")) else None
        env = child_env(home=temp_dir(self))
        env["SHARED_BENCH"] = floor or temp_dir(self)     # an empty folder: no floor row
        out = self.bench("bench_mcp_breakdown.py", "--calls", 5, "--rounds", 1, env=env)
        self.assertHeadings(out, "in-process cost per observe call", "variant", "us/call",
                            "server call, as shipped", "store.observe() only", "- event pattern index",
                            "- FTS insert trigger", "wal_autocheckpoint=1000")
        for heading in ("floor handle()", "x floor"):
            (self.assertIn if floor else self.assertNotIn)(heading, out)

    def test_realdata(self):
        data = shared("INSTINCT_REALDATA", "realdata")
        payloads = sorted(glob.glob(os.path.join(data, "*.payloads.jsonl.gz")) if data else [],
                          key=os.path.getsize)
        if not payloads:
            self.skipTest("no real sessions: set INSTINCT_REALDATA or put them in ../shared/realdata")
        source = os.path.basename(payloads[0])[:-len(".payloads.jsonl.gz")]      # the smallest
        out = self.bench("bench_realdata.py", "--data", data, "--source", source)
        self.assertHeadings(out, f"# {source}:", "hook calls", "replayed in", "## ", "sessions; patterns raw",
                            "briefing:")


    def test_predict(self):
        """bench_predict on a small generated dataset: every section's headings."""
        data, out = temp_dir(self), temp_dir(self)
        for name, src in (("ritual", sessions.ritual(seed=1)), ("plain", sessions.plain_command(seed=2)),
                          ("noise", sessions.random_sessions(n=12, seed=3))):
            src.write(data, name, gz=name != "plain")
        report = os.path.join(out, "predict.json")
        printed = self.bench("bench_predict.py", "--data", data, "--json", report, "--show", 2, "--hints",
                             "--pre-tool-use", "on", "--tmp", out)
        self.assertHeadings(printed, "## noise: 12 sessions", "## plain: 6 sessions", "## ritual: 6 sessions",
                            "scored", "briefed", "names", "R spec", "test named", "empty&known", "top5 P",
                            "TOTAL ritual", "## overall", "most missed known habits",
                            "## hints: hook answers other than the briefing (PreToolUse sent: yes)",
                            "## the 2 worst briefings", "bench_predict:", "written: " + report)
        with open(report, encoding="utf-8") as f:
            self.assertEqual(sorted(json.load(f)["sources"]), ["noise", "plain", "ritual"])


def load_bench(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", os.path.join(BENCH, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


sessions = load_bench("sessions")
EVENTS = {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit",
          "post-tool-use": "PostToolUse", "post-tool-use-failure": "PostToolUseFailure",
          "stop": "Stop", "session-end": "SessionEnd"}


class SyntheticSessions(unittest.TestCase):
    """bench/sessions.py writes what Claude Code would send, the same for the same seed."""

    def check_payloads(self, src):
        dirs = set(src.layout()["dirs"])
        tools = set()
        for n, line in enumerate(src.lines):
            self.assertEqual(sorted(line), ["event", "payload", "seq", "session", "ts"])
            self.assertEqual(line["seq"], n)
            p = line["payload"]
            self.assertEqual(p["hook_event_name"], EVENTS[line["event"]])
            self.assertEqual(p["session_id"], line["session"])
            self.assertIn(p["cwd"], dirs)
            self.assertTrue(p["transcript_path"].endswith(f"/{line['session']}.jsonl"))
            if line["event"].startswith("post-tool-use"):
                tools.add(p["tool_name"])
                self.assertIsInstance(p["tool_input"], dict)
                self.assertTrue(p["tool_use_id"].startswith("toolu_01"))
                if line["event"].endswith("failure"):
                    self.assertRegex(p["error"], r"^Exit code \d+")
                    self.assertNotIn("tool_response", p)
                else:
                    self.assertIn("tool_response", p)
                want = {"Bash": {"command", "description"}, "Skill": {"skill"},
                        "Task": {"subagent_type", "description", "prompt"},
                        "Read": {"file_path"}}.get(p["tool_name"])
                if want:
                    self.assertEqual(set(p["tool_input"]), want)
            elif line["event"] == "user-prompt-submit":
                self.assertIsInstance(p["prompt"], str)
            elif line["event"] == "session-start":
                self.assertIn(p["source"], ("startup", "resume", "compact", "clear"))
        self.assertEqual(json.loads(json.dumps(src.lines)), src.lines)      # plain JSON all through
        return tools

    def test_scenarios_are_well_formed_and_deterministic(self):
        for name, make in (("random_sessions", lambda s: sessions.random_sessions(n=300, seed=s)),
                           ("plain_command", lambda s: sessions.plain_command(seed=s)),
                           ("ritual", lambda s: sessions.ritual(seed=s)),
                           ("automation_prompt", lambda s: sessions.automation_prompt(seed=s))):
            with self.subTest(name):
                src = make(7)
                tools = self.check_payloads(src)
                self.assertEqual(len({line["session"] for line in src.lines}), 300 if name == "random_sessions" else 6)
                self.assertIn("Bash", tools)
                self.assertEqual(make(7).lines, src.lines)
                self.assertNotEqual(make(8).lines, src.lines)
        tools = self.check_payloads(sessions.random_sessions(n=40, seed=1))
        self.assertTrue({"Read", "Edit", "Grep", "Task", "mcp__context7__get-library-docs"} <= tools, tools)
        self.assertIn("Skill", self.check_payloads(sessions.automation_prompt(seed=1)))

    def test_written_files_replay_as_realdata(self):
        data = temp_dir(self)
        src = sessions.ritual(seed=3)
        for gz in (True, False):
            path, layout = src.write(data, f"r{int(gz)}", gz=gz)
            self.assertTrue(path.endswith(".payloads.jsonl.gz" if gz else ".payloads.jsonl"))
            with open(layout, encoding="utf-8") as f:
                self.assertEqual(json.load(f), {"repos": [{"path": "/home/dev/src/spotter", "git": "dir"}],
                                                "dirs": ["/home/dev/src/spotter"]})
        realdata = load_bench("bench_realdata")
        self.assertEqual(realdata.sources(data), ["r0", "r1"])
        self.assertEqual(realdata.read_lines(data, "r1"), src.lines)
        self.assertEqual(realdata.read_lines(data, "r0"), src.lines)

    def test_old_history_is_a_claude_code_transcript(self):
        home = temp_dir(self)
        paths = sessions.old_history(home, n=4, days=400, seed=5)
        self.assertEqual(len(paths), 4)
        for path in paths:
            self.assertEqual(os.path.dirname(os.path.dirname(path)), os.path.join(home, ".claude", "projects"))
            self.assertGreater(time.time() - os.path.getmtime(path), 400 * 86400)
            with open(path, encoding="utf-8") as f:
                records = [json.loads(line) for line in f]
            uses = sum(1 for r in records if r["type"] == "assistant" and not r["isSidechain"])
            stats = collections.Counter()
            sid, calls = instinct._Transcripts.claude_session(path, stats)
            self.assertEqual(sid, os.path.basename(path)[:-len(".jsonl")])
            self.assertEqual(len(calls), uses)
            self.assertTrue(any(p["tool_name"] == "Bash" and p["tool_input"]["command"] == "make lint"
                                for p, failed, ts in calls))
            self.assertTrue(all(time.time() - ts > 400 * 86400 for _, _, ts in calls))


class BenchScripts(unittest.TestCase):
    """What can be checked of the scripts without running them all."""

    def test_predict_reads_what_was_run_without_instinct(self):
        """The ground truth's own shell reading: program and subcommand of each simple command."""
        bp = load_bench("bench_predict")
        cases = {
            "cd /x && MIX_ENV=test mix test --failed | tail -5": ["cd", "mix test", "tail"],
            "git -C /a/b commit -m 'x; y | z' && git push": ["git commit", "git push"],
            "git commit -m \"$(cat <<'EOF'\nFix the user's bug; don't | care\nEOF\n)\" && bd sync":
                ["git commit", "bd sync"],
            "cat <<EOF > f.txt\nhello | world && x\nEOF\nbd close abc": ["cat", "bd close"],
            "uv run pytest -x tests/": ["uv run pytest"], "python3 -m pytest tests": ["python3 -m pytest"],
            "sudo -u bob env A=1 timeout 30 nice -n 5 make test": ["make test"],
            "npm run build -- --watch": ["npm run build"], "npx vitest run": ["npx vitest"],
            "for f in *.py; do python3 $f; done": ["python3"], "(cd web && npm test) 2>&1": ["cd", "npm test"],
            "mix ecto.migrate && ./gradlew test": ["mix ecto.migrate", "gradlew test"],
            "ls src 2>/dev/null || echo `date` >&2": ["ls", "echo"], "br show US-007": ["br show"],
        }
        for text, want in cases.items():
            got = [r[0] for r in map(bp.shape, bp.commands(text)) if r]
            self.assertEqual(got, want, text)
        step = bp.steps_of({"tool_name": "Bash", "tool_input": {"command": "uv run pytest -q"}})[0]
        self.assertEqual(step, ("cmd", "uv run pytest", ["uv", "run", "pytest", "-q"], True))
        self.assertEqual(bp.steps_of({"tool_name": "Skill", "tool_input": {"skill": "x"}}), [("tool", "Skill")])
        text = ("intro\n- Tests here: `mix test` (mature)\n- Before committing: `mix credo`, then `bd close`"
                " (then `git push`, `Skill(commit)`)")
        names = bp.names_in(text, implied=True)
        self.assertEqual([n[2] for n in names],
                         ["mix test", "mix credo", "bd close", "git commit", "git push", "Skill"])
        self.assertEqual([n[2] for n in bp.names_in(text)], ["mix test", "mix credo", "bd close", "git push", "Skill"])
        ritual = (("cmd", "mix credo"), ("cmd", "bd close"), ("cmd", "git commit"))
        self.assertTrue(bp.names_habit(ritual, names))
        self.assertFalse(bp.names_habit((("cmd", "mix test"), ("cmd", "mix credo")), names))   # two lines
        self.assertTrue(bp.names_habit(("tool", "Skill"), names))

    def test_no_bare_assert(self):
        """`python -O` strips an assert: a bench reports a broken assumption with SystemExit."""
        for path in glob.glob(os.path.join(BENCH, "*.py")):
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Assert)]
            self.assertEqual(lines, [], f"bare assert in {os.path.basename(path)}")

    def test_mcp_suite_names_what_the_targets_read(self):
        with open(os.path.join(BENCH, "mcp_suite.json"), encoding="utf-8") as f:
            suite = json.load(f)
        names = [s["name"] for s in suite["servers"]]
        self.assertEqual(names, ["floor-stdlib", "fastmcp-peer", "instinct -m", "instinct.py"])
        self.assertEqual(suite["baseline"], "floor-stdlib")
        with open(os.path.join(BENCH, "run_mcp_bench.sh"), encoding="utf-8") as f:
            script = f.read()
        for name in names:
            self.assertIn(f'"{name}"', script)
        for s in suite["servers"]:
            self.assertEqual((s["tool"], s["args"]), ("observe", {"pattern": "p{i}"}))

    @unittest.skipUnless(shutil.which("bash"), "no bash")
    def test_mcp_runner_parses_and_names_a_missing_shared_bench(self):
        script = os.path.join(BENCH, "run_mcp_bench.sh")
        r = subprocess.run(["bash", "-n", script], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        empty = temp_dir(self)
        r = subprocess.run(["bash", script, "--reps", "1", "--calls", "0"],
                           capture_output=True, text=True, timeout=60,
                           env=child_env(home=empty, SHARED_BENCH=empty, BENCHENV=os.path.join(empty, "env")))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("no mcpbench.py in", r.stderr)
        self.assertIn("SHARED_BENCH", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(empty, "env")), "built venvs before checking its folder")


# --- bench_predict judges the hints offline (issue 20) ------------------------------------
class TestOfflineBenchmark(unittest.TestCase):
    def test_bench_predict_judges_each_hint_by_what_the_agent_did_next(self):
        """Recorded sessions (no hints shown): six test with `uv run pytest`; then the agent
        runs `pytest` and next `uv run pytest` twice (the hint was right), `pytest -x` once."""
        import importlib.util
        spec = importlib.util.spec_from_file_location("bench_sessions",
                                                      os.path.join(ROOT, "bench", "sessions.py"))
        sessions = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sessions)
        src = sessions.Source(seed=4)
        repo = src.repo("shop")
        for then in [None] * 6 + ["uv run pytest -q", "uv run pytest", "pytest -x"]:
            s = src.start(repo)
            s.noise(3)
            s.bash("pytest -q" if then else "uv run pytest -q")
            s.noise(2)
            if then:
                s.bash(then)
            s.end()
        data, out = temp_dir(self), temp_dir(self)
        src.write(data, "hinted")
        report = os.path.join(out, "r.json")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_predict.py"),
                            "--data", data, "--hints", "--json", report, "--tmp", out],
                           capture_output=True, text=True, timeout=300, env=child_env(home=out))
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        with open(report, encoding="utf-8") as f:
            h = json.load(f)["sources"]["hinted"]["hints"]
        self.assertEqual((h["hints"], h["right"], h["decided"]), (3, 2, 3))
        self.assertIn("hinted: pre-tool-use 3", p.stdout)
        self.assertIn("RIGHT: 'instinct: Tests here: `uv run pytest` (6 sessions), not `pytest`.'",
                      p.stdout)


if __name__ == "__main__":
    unittest.main()
