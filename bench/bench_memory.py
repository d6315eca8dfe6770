#!/usr/bin/env python3
"""bench_memory: recall and remember on a store of 100,000 knowledge memories (stdlib only).

The corpus is synthetic but not kind: words are drawn from a 20,000-word
vocabulary with a Zipf distribution (s = 1.05) plus a list of everyday English
and programming words, so the commonest words occur in most memories, as "the",
"test" or "file" would. Each memory has a 4-8 word title, 15-40 words of
content, a why and a how-to-apply of 5-12 words and 0-3 tags; types are mixed,
30% are global and the rest spread over 50 projects. It is written with one
executemany on the store's own connection (triggers fill the FTS5 index), and
the near-duplicate keys with a second one.

Measured through the public API (each recall includes its usage write):
  recall  2-6 word queries: words of a random stored memory's title mixed with
          random words; once across every project ('*'), once in one project
  recall  20-word session-start style queries (folder name + 3 commit subjects)
  remember new memories; remember repeats (the reinforcement path), by title and by
          min-hash (a reworded title over the same content)

Targets (issue 7): recall p50 <= 10 ms, remember p50 <= 2 ms.

  python bench/bench_memory.py [--n 100000] [--reps 300] [--db PATH]
"""
import argparse
import bisect
import itertools
import os
import random
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import instinct  # noqa: E402

COMMON = ("the a to of and in for is on with that this it be use when not run test tests file files "
          "code user project build error fix check config before after always never commit push "
          "branch review api function module import type value data time report log server client "
          "database query cache release version update install script command output input").split()


def vocabulary(rng, size):
    syll = "ka lo mi ne ru ta vo zi pe sa do fu gi ha ju ke ba co de xo".split()
    words, seen = list(COMMON), set(COMMON)
    while len(words) < size:
        w = "".join(rng.choice(syll) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    cum = list(itertools.accumulate(1 / (i + 1) ** 1.05 for i in range(size)))
    return lambda n: " ".join(words[bisect.bisect(cum, rng.random() * cum[-1])] for _ in range(n))


def build(path, n, rng, words, now):
    projects = [instinct._sha256_hex(f"/home/dev/p{i}")[:12] for i in range(50)]
    types = list(instinct._Mem.MEMORY_TYPES)
    rows = []
    for i in range(n):
        t = instinct._iso(now - rng.random() * 400 * 86400)
        rows.append((rng.choice(types), words(rng.randint(4, 8)).capitalize(), words(rng.randint(15, 40)),
                     words(rng.randint(5, 12)), words(rng.randint(5, 12)),
                     ",".join(dict.fromkeys(words(rng.randint(0, 3)).split())),
                     "" if rng.random() < 0.3 else rng.choice(projects), rng.randint(1, 12), t, t,
                     rng.randint(0, 20)))
    store = instinct.InstinctStore(path, clock=lambda: now)
    conn = store._db.conn
    t0 = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO memories (type, title, content, why, how_to_apply, tags, project,"
                     " confidence, created, updated, recall_count) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
    conn.executemany("INSERT OR IGNORE INTO memory_keys (key, memory_id) VALUES (?, ?)",
                     ((k, i + 1) for i, r in enumerate(rows)
                      for k in instinct._Mem.keys(r[0], r[6], r[1], r[2])))
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")      # leave the build's WAL out of the timings
    print(f"built {n:,} memories in {time.perf_counter() - t0:.1f} s "
          f"({os.path.getsize(path) / 1e6:.0f} MB before checkpoint)")
    return store, rows, projects


def pct(ts, q):
    return sorted(ts)[min(len(ts) - 1, int(q * len(ts)))] * 1000


def report(label, ts, extra=""):
    print(f"{label:<44} p50 {statistics.median(ts) * 1000:6.2f} ms   p90 {pct(ts, 0.9):6.2f} ms"
          f"   p99 {pct(ts, 0.99):6.2f} ms {extra}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--db", help="reuse or create this database file (default: a temp file)")
    a = ap.parse_args()
    rng = random.Random(20260929)
    words = vocabulary(rng, 20_000)
    now = 1_800_000_000.0
    tmp = tempfile.TemporaryDirectory()
    path = a.db or os.path.join(tmp.name, "memories.db")
    print(f"python {sys.version.split()[0]}, SQLite {instinct.sqlite3.sqlite_version}")
    store, rows, projects = build(path, a.n, rng, words, now)
    fts = store._read("SELECT 1 FROM sqlite_master WHERE name = 'memories_fts'")
    print(f"FTS5: {bool(fts)}")

    def query():
        title = rng.choice(rows)[1].split()
        k = rng.randint(2, 6)
        picked = rng.sample(title, min(len(title), rng.randint(1, k)))
        return " ".join(picked + words(k - len(picked)).split()[:max(0, k - len(picked))])

    for label, proj in (("recall 2-6 words, every project ('*')", "*"),
                        ("recall 2-6 words, one project + global", projects[0])):
        ts, hits = [], []
        for _ in range(a.reps):
            q = query()
            t0 = time.perf_counter()
            r = store.recall(q, project=proj, limit=5)
            ts.append(time.perf_counter() - t0)
            hits.append(len(r))
        report(label, ts, f"(mean hits {statistics.mean(hits):.1f})")
    ts = []
    for _ in range(max(50, a.reps // 3)):
        q = "shop-frontend " + " ".join(words(rng.randint(4, 7)) for _ in range(3))
        t0 = time.perf_counter()
        store.recall(q, project=projects[1], limit=5)
        ts.append(time.perf_counter() - t0)
    report("recall 20-word session-start query", ts)

    ts, statuses = [], []
    for i in range(a.reps):
        args = (rng.choice(list(instinct._Mem.MEMORY_TYPES)), words(rng.randint(4, 8)).capitalize() + f" n{i}",
                words(rng.randint(15, 40)))
        t0 = time.perf_counter()
        r = store.remember(*args, why=words(8), how_to_apply=words(8), project=rng.choice(projects + [""]))
        ts.append(time.perf_counter() - t0)
        statuses.append(r["status"])
    report("remember (new memories)", ts, f"({statuses.count('created')} created)")
    ts, statuses = [], []
    for _ in range(max(50, a.reps // 3)):
        r = rng.choice(rows)
        t0 = time.perf_counter()
        out = store.remember(r[0], r[1].lower() + "!", r[2] + " again", project=r[6])
        ts.append(time.perf_counter() - t0)
        statuses.append(out["status"])
    report("remember (repeats: reinforcement)", ts, f"({statuses.count('reinforced')} reinforced)")
    ts, statuses = [], []
    for _ in range(max(50, a.reps // 3)):
        r = rng.choice(rows)                 # a new title, the same content: found by min-hash bands
        t0 = time.perf_counter()
        out = store.remember(r[0], "Reworded " + r[1], r[2], project=r[6])
        ts.append(time.perf_counter() - t0)
        statuses.append(out["status"])
    report("remember (reworded title, same content)", ts, f"({statuses.count('reinforced')} reinforced)")
    store.close()
    tmp.cleanup()


if __name__ == "__main__":
    main()
