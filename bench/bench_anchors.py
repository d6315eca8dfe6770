#!/usr/bin/env python3
"""bench_anchors: the session-start staleness check of 200 anchored items (stdlib only).

A project (a temp dir) holds 200 instincts and memories anchored to its files; the store also
holds 2,000 anchors of other projects. Measured, in-process, on the store's own connection:
`_staleness(conn, root, items)` for the 200 items, as the briefing calls it, with
  200 files    every item anchored to its own file (200 stats)
  5 files      the usual case: items anchored to pyproject.toml, package.json, Makefile, ...
  1 changed    the 5-file case after one file's content changed (that file is hashed)
Target (issue 20): <= 5 ms for 200 anchors of unchanged files.

  python bench/bench_anchors.py [--reps 200]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import instinct  # noqa: E402


def median_ms(fn, reps):
    """Medians of wall and CPU time in ms (on a shared machine the wall time waits for a core)."""
    wall, cpu = [], []
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.realpath(os.path.join(tmp, "proj"))
        os.makedirs(os.path.join(root, ".git"))
        other = os.path.join(tmp, "other")
        os.makedirs(os.path.join(other, ".git"))
        names = [f"src/mod{i:03d}.py" for i in range(200)]
        common = ["pyproject.toml", "package.json", "Makefile", "justfile", "mix.exs"]
        for rel in names + common:
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(f"# {rel}\n" + "x = 1\n" * 200)
        with open(os.path.join(other, "pyproject.toml"), "w") as f:
            f.write("[project]\n")
        with instinct.InstinctStore(os.path.join(tmp, "i.db"), cwd=root) as store:
            own = [{"pattern": f"pref:test=cmd{i}", "project": "p"} if i % 2 else {"id": i + 1}
                   for i in range(200)]
            shared = [{"pattern": f"pref:lint=cmd{i}", "project": "p"} if i % 2 else {"id": 1000 + i}
                      for i in range(200)]
            with store._write() as conn:
                for item, rel in zip(own, names):
                    instinct._Anchors.reanchor(conn, root, item, [rel])
                for i, item in enumerate(shared):
                    instinct._Anchors.reanchor(conn, root, item, [common[i % len(common)]])
                for i in range(2000):
                    instinct._Anchors.reanchor(conn, other, {"id": 5000 + i}, ["pyproject.toml"])
            conn = store._db.conn
            rows = [("200 files", own), ("5 files", shared)]
            print(f"staleness check of 200 anchored items, {args.reps} reps (ms)")
            for label, items in rows:
                if instinct._Anchors.staleness(conn, root, items) != [None] * 200:
                    raise SystemExit(f"{label}: unchanged files read as stale")
                wall, cpu = median_ms(lambda: instinct._Anchors.staleness(conn, root, items), args.reps)
                print(f"  {label:<12} median wall {wall:6.3f}   cpu {cpu:6.3f}")
            with open(os.path.join(root, "Makefile"), "a") as f:
                f.write("lint:\n\truff check\n")
            stale = instinct._Anchors.staleness(conn, root, shared)
            if stale.count("Makefile changed") != 40:
                raise SystemExit(f"1 changed: expected 40 stale items, got {stale}")
            wall, cpu = median_ms(lambda: instinct._Anchors.staleness(conn, root, shared), args.reps)
            print(f"  {'1 changed':<12} median wall {wall:6.3f}   cpu {cpu:6.3f}")
    print("target: <= 5 ms for 200 anchors of unchanged files")


if __name__ == "__main__":
    main()
