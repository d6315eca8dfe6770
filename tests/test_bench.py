"""The benchmark scripts in bench/ still run against today's instinct.py.

Each script runs once as a real process at its smallest size; the test checks that it exits 0,
writes no traceback and prints its figures' headings. These are smoke runs, not timings: no
figure is ever checked. bench_realdata needs the real sessions ($INSTINCT_REALDATA, else
../shared/realdata beside the repository) and is skipped without them; bench_mcp_breakdown adds
its floor row when the shared bench folder is there ($SHARED_BENCH, else ../shared/bench).
run_mcp_bench.sh needs the MCP peer venvs, so only its arguments and suite are checked here.
"""
import ast
import glob
import json
import os
import shutil
import subprocess
import sys
import unittest

from tests.helpers import ROOT, child_env, setUpModule, temp_dir  # noqa: F401

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


class BenchScripts(unittest.TestCase):
    """What can be checked of the scripts without running them all."""

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


if __name__ == "__main__":
    unittest.main()
