"""History replay speed: `instinct import-history` over a generated Claude Code history.

Generates realistic transcripts (tests/test_history.py's generator: tool_use/tool_result pairs,
noise, failures, side-chains) totalling about N tool calls across 5 projects in a temp HOME,
then times one `instinct import-history` process (parse + capture + per-session mining +
summary) and a second, idempotent run, then the same import in-process with mining timed
apart. Prints calls/s. Usage:
    python bench/bench_history.py [N=50000]     (at least one session per project: ~140 calls)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
from tests.test_history import claude_dir_name, make_history  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=50_000, help="about how many tool calls (default 50000)")
    target = ap.parse_args().n
    if target < 1:
        sys.exit("bench_history: N must be at least 1")
    with tempfile.TemporaryDirectory() as home:
        calls = sessions = 0
        now = time.time()
        per_project = max(1, target // 5 // 24)
        for p in range(5):
            repo = os.path.join(home, "work", f"proj{p}")
            os.makedirs(os.path.join(repo, ".git"))
            pdir = os.path.join(home, ".claude", "projects", claude_dir_name(repo))
            os.makedirs(pdir)
            hist = make_history(seed=p, n=per_project, cwd=repo, start=now - 100 * 86400,
                                spacing=90 * 86400 / per_project)
            for sid, tr, _ in hist:
                with open(os.path.join(pdir, sid + ".jsonl"), "w") as f:
                    f.write(tr.text())
                calls += len(tr.calls)
                sessions += 1
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(home, ".claude"))
                   for f in fs)
        print(f"history: {sessions} sessions, {calls} tool calls, {size / 1e6:.1f} MB of transcripts")
        env = {k: v for k, v in os.environ.items()          # nothing steers the child but HOME and the DB
               if not k.startswith("INSTINCT_") and k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
        env.update(HOME=home, INSTINCT_DB=os.path.join(home, "bench.db"))
        for label in ("first run", "second run (idempotent)"):
            t = time.perf_counter()
            out = subprocess.run([sys.executable, os.path.join(HERE, "instinct.py"), "import-history", "--json"],
                                 capture_output=True, text=True, env=env)
            dt = time.perf_counter() - t
            if out.returncode != 0:
                sys.exit(f"bench_history: import-history failed (rc={out.returncode}): {out.stderr[-800:]}")
            r = json.loads(out.stdout)
            print(f"{label}: {r['imported']} imported, {r['skipped']} skipped, {r['tool_calls']} calls "
                  f"in {dt:.2f} s -> {calls / dt:,.0f} tool calls/s")
        # the same import in-process on a fresh store, mining timed apart from parse + capture
        import instinct
        store = instinct.InstinctStore(os.path.join(home, "split.db"))
        spent = [0.0, 0]
        mine = store.mine

        def timed_mine(*a, **kw):
            t0 = time.perf_counter()
            try:
                return mine(*a, **kw)
            finally:
                spent[0] += time.perf_counter() - t0
                spent[1] += 1
        store.mine = timed_mine
        t = time.perf_counter()
        r = store.import_history(path=os.path.join(home, ".claude"))
        dt = time.perf_counter() - t
        store.close()
        print(f"in-process: {dt:.2f} s; replay (parse + capture + summary) {dt - spent[0]:.2f} s -> "
              f"{calls / (dt - spent[0]):,.0f} tool calls/s; mining {spent[0]:.2f} s in {spent[1]} passes "
              f"({1000 * spent[0] / max(1, r['imported']):.1f} ms per session)")


if __name__ == "__main__":
    main()
