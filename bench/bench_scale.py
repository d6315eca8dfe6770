#!/usr/bin/env python3
"""bench_scale: instinct's in-process cost on a large store (stdlib only).

For each store size (default 100,000 and 1,000,000 patterns) two fresh child
processes run: one BUILDS the store (InstinctStore creates the schema, then one
executemany transaction on its connection), one MEASURES it through the public
API and reports its own peak RSS (ru_maxrss) so that memory growth with the
store size is visible.  Measured per size:

  observe   p50/p99 on existing patterns and on new patterns (--calls each),
            next to a bare sqlite upsert+commit interleaved call by call
  suggest   p50/p99 for the busiest project and for a typical one (+ global)
  get, search, list(limit=50)   p50/p99
  consolidate, decay            seconds (decay with the clock 30 days ahead,
                                so about a third of the store is charged)

Data: ~1000 projects (Zipf-sized) + 10 % global patterns, Zipf-like confidence
(~1.5 % mature or better, ~0.3 % rules), 5 % of rows observed since the last
consolidate, a pool of habits shared across projects (a few become universal),
last_seen skewed to recent days; events spread over the past year.

  python bench/bench_scale.py                           # 100k and 1M, 1M events at 1M
  python bench/bench_scale.py --patterns 1000000 --events 10000000 --sizes 1000000
  python bench/bench_scale.py --sizes 2000 --calls 20 --report-only   # a smoke run, ~1 s
Targets at 1M: observe p50 <= 1 ms, suggest p50 <= 5 ms, consolidate and
decay <= 30 s, peak RSS flat between sizes. The exit status is 1 when a target
fails, unless --report-only.
"""
import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DAY = 86400.0
N_PROJECTS = 1000

WORDS = """test fix build lint format commit push pull rebase merge branch review deploy
release tag bump docs readme changelog typecheck mypy ruff black isort pytest unittest
coverage tox nox venv pip poetry uv npm yarn pnpm node tsc eslint prettier jest vitest
cargo clippy rustfmt go vet gofmt make cmake ninja docker compose kubectl helm terraform
ansible bash zsh grep sed awk jq curl http api rest graphql sql sqlite postgres mysql redis
cache queue worker cron log trace debug profile bench perf memory cpu thread async await
retry timeout backoff config env secret token auth login session cookie cors csrf schema
migration model view controller route handler middleware template component hook state
props store reducer action effect query mutation fixture mock stub patch snapshot golden
parse serialize encode decode json yaml toml csv xml html css scss tailwind webpack vite
rollup babel esbuild bundle minify split chunk lazy import export module package vendor
stdlib typing dataclass enum pathlib subprocess argparse logging pytest-xdist hypothesis
small-diff early-return guard-clause pure-function immutable naming comment docstring
error-handling exception validation sanitize escape encoding unicode locale timezone utc
read edit write search glob ls cat diff apply revert bisect blame stash cherry-pick squash""".split()
PREFIXES = (("seq", 55), ("pref", 20), ("fix", 15), ("combo", 10))


def _kb_to_mib(kb):
    return kb / 1024.0


def _pct(sorted_vals, q):
    if not sorted_vals:
        return float("nan")
    return sorted_vals[min(len(sorted_vals) - 1, int(q * len(sorted_vals)))]


# ----------------------------------------------------------------------------- data model
class Model:
    """Deterministic description of the synthetic store (pattern/project of row i)."""

    def __init__(self, n, seed=7):
        self.n = n
        self.seed = seed
        self.projects = ["%012x" % (random.Random(seed * 1000 + k).getrandbits(48))
                         for k in range(N_PROJECTS)]
        w = [1.0 / (k + 1) for k in range(N_PROJECTS)]          # Zipf-sized projects
        tot = sum(w)
        acc, self.cum = 0.0, []
        for x in w:
            acc += x / tot
            self.cum.append(acc)
        self.pool_names = max(100, n // 1000)                     # habits shared across projects
        self.pool_rows = self.pool_names * 8                       # each in 8 projects
        self.global_share = 0.10
        pre = []
        for p, k in PREFIXES:
            pre += [p] * k
        self.prefixes = pre
        self.V = len(WORDS)

    def _words(self, j):
        """Unique 3-word body for index j (scattered so neighbours differ)."""
        V = self.V
        x = (j * 2654435761 + 97) % (V ** 3)
        return WORDS[x % V], WORDS[(x // V) % V], WORDS[x // (V * V)]

    def _pattern_from(self, j):
        a, b, c = self._words(j)
        pre = self.prefixes[(j * 40503) % len(self.prefixes)]
        if pre == "seq":
            return f"seq:{a}->{b}->{c}"
        if pre == "combo":
            return f"combo:{a}+{b}+{c}"
        return f"{pre}:{a}-{b}-{c}"

    def _project_from_hash(self, i):
        u = ((i * 11400714819323198485) % (1 << 64)) / float(1 << 64)
        if u < self.global_share:
            return ""
        u = (u - self.global_share) / (1 - self.global_share)
        lo, hi = 0, N_PROJECTS - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if self.cum[mid] < u:
                lo = mid + 1
            else:
                hi = mid
        return self.projects[lo]

    def row(self, i):
        """(pattern, project) of row i; unique per i."""
        if i < self.pool_rows:
            r, k = i % self.pool_names, i // self.pool_names
            return self._pattern_from(r), self.projects[(k * 37 + r) % N_PROJECTS]
        return self._pattern_from(i), self._project_from_hash(i)


def _zipf_conf(rng, s):
    return min(500, int(rng.random() ** (-1.0 / s)))


# ----------------------------------------------------------------------------- build child
def build(path, n, m, now):
    sys.path.insert(0, REPO)
    import instinct
    t0 = time.perf_counter()
    model = Model(n)
    store = instinct.InstinctStore(path)
    conn = store._db.conn                   # schema created, migrations applied
    conn.execute("PRAGMA cache_size=-262144")   # build only: 256 MiB page cache
    conn.execute("PRAGMA synchronous=OFF")
    rng = random.Random(42)
    iso = instinct._iso
    mature, rule = 5, 10
    stats = {"rows": 0, "mature_plus": 0, "rule_plus": 0, "global": 0}

    def rows():
        for i in range(n):
            pattern, project = model.row(i)
            conf = _zipf_conf(rng, 1.2 if i < model.pool_rows else 2.6)
            first = now - rng.random() * 400 * DAY
            last = max(first, now - min(rng.expovariate(1 / (60 * DAY)), now - first))
            seen = conf - 1 if rng.random() < 0.05 else conf     # observed since last consolidate
            promoted = 2 if seen >= rule else 1 if seen >= mature else 0
            stats["rows"] += 1
            stats["mature_plus"] += conf >= mature
            stats["rule_plus"] += conf >= rule
            stats["global"] += project == ""
            cat = instinct.category_for(pattern)
            yield (pattern, cat, conf, iso(first), iso(last), "claude-code", project,
                   promoted, "{}")

    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT INTO instincts (pattern, category, confidence, first_seen, last_seen, source,"
        " project, promoted, metadata) VALUES (?,?,?,?,?,?,?,?,?)", rows())
    t1 = time.perf_counter()
    # events: a year of observations in time order; the index is rebuilt after the load, from
    # the schema's own definition, and every loaded event counts as indexed (as in a live store)
    (index_sql,), = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'ix_events_pattern'")
    conn.execute("DROP INDEX ix_events_pattern")
    span = 365 * DAY

    def events():
        for e in range(m):
            i = int(n * rng.random() ** 2)          # skewed towards the strong, pooled rows
            pattern, project = model.row(i)
            ts = now - span + span * e / max(1, m)
            yield (iso(ts), "observe", pattern, project, "claude-code", "s%07d" % (e // 40), 1, "")

    conn.executemany(
        "INSERT INTO events (ts, kind, pattern, project, source, session, delta, data)"
        " VALUES (?,?,?,?,?,?,?,?)", events())
    conn.execute(index_sql)
    # decay's clock: the 100 biggest projects had a session every day of the year
    conn.executemany("INSERT INTO mined_sessions (session, last_id, project) VALUES (?,?,?)",
                     ((f"b{k}-{d}", 1 + m * d // 365, p) for d in range(365)
                      for k, p in enumerate(model.projects[:100])))
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'active_days'").fetchone():
        conn.execute("INSERT OR IGNORE INTO active_days SELECT m.project, substr(e.ts, 1, 10)"
                     " FROM mined_sessions m JOIN events e ON e.id = m.last_id")
    conn.execute("COMMIT")
    t2 = time.perf_counter()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("ANALYZE")
    store.close()
    t3 = time.perf_counter()
    stats.update(build_patterns_s=t1 - t0, build_events_s=t2 - t1, checkpoint_s=t3 - t2,
                 build_s=t3 - t0, db_mib=os.path.getsize(path) / 2 ** 20,
                 build_rss_mib=_kb_to_mib(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
    return stats


# ----------------------------------------------------------------------------- measure child
def measure(path, n, now, calls):
    sys.path.insert(0, REPO)
    import instinct
    rss_import = _kb_to_mib(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    model = Model(n)
    rng = random.Random(99)
    clock = [now]
    store = instinct.InstinctStore(path, clock=lambda: clock[0], cwd=tempfile.gettempdir())
    out = {"rss_open_mib": None, "rss_import_mib": rss_import}
    pc = time.perf_counter_ns

    def timed(fn, k):
        lat = []
        for _ in range(k):
            t = pc()
            fn()
            lat.append((pc() - t) / 1e6)
        lat.sort()
        return {"p50_ms": _pct(lat, 0.5), "p99_ms": _pct(lat, 0.99), "n": k}

    steps = out["rss_steps_mib"] = {}

    def mark(phase):            # the peak RSS so far, after each phase (to see which one grows it)
        steps[phase] = round(_kb_to_mib(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss), 1)

    store.stats()    # open + warm the schema
    mark("open")
    out["rss_open_mib"] = steps["open"]
    conn = store._db.conn
    conn.execute("CREATE TABLE IF NOT EXISTS _bench_floor (pattern TEXT PRIMARY KEY, n INTEGER)")

    # observe, existing rows, interleaved with a bare upsert+commit (same file, same conn)
    existing = [model.row(rng.randrange(model.n)) for _ in range(calls)]
    lat_i, lat_f = [], []
    for k, (pattern, project) in enumerate(existing):
        t = pc()
        store.observe(pattern, project=project)
        lat_i.append((pc() - t) / 1e6)
        t = pc()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO _bench_floor VALUES (?, 1) ON CONFLICT (pattern) DO UPDATE"
                     " SET n = n + 1", (pattern,))
        conn.execute("COMMIT")
        lat_f.append((pc() - t) / 1e6)
    lat_i.sort()
    lat_f.sort()
    out["observe_existing"] = {"p50_ms": _pct(lat_i, 0.5), "p99_ms": _pct(lat_i, 0.99), "n": calls}
    out["floor_upsert"] = {"p50_ms": _pct(lat_f, 0.5), "p99_ms": _pct(lat_f, 0.99), "n": calls}
    mark("observe_existing")
    new = iter(range(calls))
    projects = model.projects
    out["observe_new"] = timed(
        lambda: store.observe(f"seq:bench-new->{next(new)}", project=projects[rng.randrange(50)]),
        calls)

    # suggest: busiest project, a typical one (rank 50), and the busiest with limit=20
    for key, proj, limit in (("suggest_top_project", projects[0], None),
                             ("suggest_typical_project", projects[49], None),
                             ("suggest_top_limit20", projects[0], 20)):
        res = store.suggest(project=proj, limit=limit)
        k = max(50, calls // 10)
        out[key] = timed(lambda: store.suggest(project=proj, limit=limit), k)
        out[key]["results"] = len(res)
        mark(key)

    picks = [model.row(rng.randrange(model.n)) for _ in range(calls)]
    it = iter(picks)

    def get_one():
        p, pr = next(it)
        try:
            store.get(p, project=pr)
        except instinct.NotFoundError:
            pass
    out["get"] = timed(get_one, calls)
    mark("get")

    queries = [f"{rng.choice(WORDS)} {rng.choice(WORDS)}" for _ in range(200)]
    qi = iter(queries)
    out["search_2words_limit20"] = timed(lambda: store.search(next(qi), limit=20), len(queries))
    out["search_2words_limit20"]["hits_first"] = len(store.search(queries[0]))
    mark("search")
    out["list_limit50"] = timed(lambda: store.list(limit=50), 20)
    mark("list")

    t = time.perf_counter()
    out["consolidate_result"] = store.consolidate()
    out["consolidate_s"] = time.perf_counter() - t
    t = time.perf_counter()
    store.consolidate()
    out["consolidate_again_s"] = time.perf_counter() - t
    mark("consolidate")
    lv = store.stats()["by_level"]
    out["levels_after_consolidate"] = lv

    clock[0] = now + 30 * DAY          # a month later: rows idle > 90 days are charged
    t = time.perf_counter()
    out["decay_result"] = store.decay(90)
    out["decay_s"] = time.perf_counter() - t
    t = time.perf_counter()
    out["decay_again_result"] = store.decay(90)
    out["decay_again_s"] = time.perf_counter() - t
    mark("decay")
    store.close()
    out["rss_peak_mib"] = _kb_to_mib(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    out["rss_store_mib"] = out["rss_peak_mib"] - rss_import
    return out


# ----------------------------------------------------------------------------- driver
def _env():
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")}


def fresh_cache(py):
    """Write instinct's bytecode cache, so no child pays (in time and RSS) for compiling it."""
    subprocess.run([py, "-c", f"import sys; sys.path.insert(0, {REPO!r}); import instinct"],
                   env=_env(), check=True)


def child(py, *args):
    env = _env()
    r = subprocess.run([py, os.path.abspath(__file__), *map(str, args)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"child {args[:2]} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def verdict(ok):
    return "PASS" if ok else "FAIL"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--patterns", type=int, default=1_000_000, help="largest store (default 1,000,000)")
    ap.add_argument("--events", type=int, default=1_000_000,
                    help="events at the largest size (default 1,000,000; up to 10,000,000);"
                         " smaller sizes get the same events/patterns ratio")
    ap.add_argument("--sizes", help="comma-separated pattern counts (default: 100000,PATTERNS)")
    ap.add_argument("--calls", type=int, default=2000, help="observe/get calls per measure (default 2000)")
    ap.add_argument("--python", default=sys.executable, help="interpreter for the children")
    ap.add_argument("--tmp", default=None, help="folder for the builds (default: system temp)")
    ap.add_argument("--json", action="store_true", help="also print all results as JSON")
    ap.add_argument("--report-only", action="store_true",
                    help="print the targets' verdicts but exit 0 when one fails")
    ap.add_argument("_child", nargs="*", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._child:
        what, path, n, *rest = a._child
        if what == "build":
            res = build(path, int(n), int(rest[0]), float(rest[1]))
        else:
            res = measure(path, int(n), float(rest[0]), int(rest[1]))
        print(json.dumps(res))
        return 0

    try:
        sizes = [int(s) for s in a.sizes.split(",")] if a.sizes else sorted({100_000, a.patterns})
    except ValueError:
        sys.exit(f"bench_scale: --sizes takes comma-separated pattern counts, not {a.sizes!r}")
    if min(sizes) < 1 or a.calls < 1 or a.patterns < 1 or a.events < 0:
        sys.exit("bench_scale: sizes, --patterns and --calls must be at least 1, --events at least 0")
    now = time.time()
    results = {}
    src_mtime = os.path.getmtime(os.path.join(REPO, "instinct.py"))
    print(f"bench_scale: python {a.python}; sizes {sizes}; {os.cpu_count()} cpus; "
          f"load {os.getloadavg()[0]:.2f}", flush=True)
    for n in sizes:
        m = int(a.events * n / a.patterns)
        d = tempfile.mkdtemp(prefix="instinct-scale-", dir=a.tmp)
        try:
            path = os.path.join(d, "scale.db")
            b = child(a.python, "build", path, n, m, now)
            print(f"  built {n:,} patterns + {m:,} events in {b['build_s']:.1f} s "
                  f"(patterns {b['build_patterns_s']:.1f} s, events {b['build_events_s']:.1f} s); "
                  f"{b['db_mib']:.0f} MiB; {b['mature_plus']:,} mature+, {b['rule_plus']:,} rule+, "
                  f"{b['global']:,} global", flush=True)
            fresh_cache(a.python)
            r = child(a.python, "measure", path, n, now, a.calls)
            r["build"], r["events"] = b, m
            results[n] = r
            print(f"  measured {n:,}: observe p50 {r['observe_existing']['p50_ms']:.3f} ms, "
                  f"consolidate {r['consolidate_s']:.1f} s, decay {r['decay_s']:.1f} s, "
                  f"peak RSS {r['rss_peak_mib']:.1f} MiB", flush=True)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    rows = [("observe existing p50 / p99 ms", "observe_existing"),
            ("observe new p50 / p99 ms", "observe_new"),
            ("bare sqlite upsert p50 / p99 ms", "floor_upsert"),
            ("suggest busiest project p50 / p99 ms", "suggest_top_project"),
            ("suggest typical project p50 / p99 ms", "suggest_typical_project"),
            ("suggest busiest, limit=20 p50 / p99", "suggest_top_limit20"),
            ("get p50 / p99 ms", "get"),
            ("search (2 words, limit 20) p50 / p99", "search_2words_limit20"),
            ("list(limit=50) p50 / p99 ms", "list_limit50")]
    w = 40
    print("\n" + f"{'metric':<{w}}" + "".join(f"{n:>20,}" for n in sizes))
    print("-" * (w + 20 * len(sizes)))
    for label, key in rows:
        print(f"{label:<{w}}" + "".join(
            f"{results[n][key]['p50_ms']:>11.3f} /{results[n][key]['p99_ms']:>7.2f}" for n in sizes))
    for label, fn in (
            ("suggest results (busiest / typical)",
             lambda r: f"{r['suggest_top_project']['results']:,} / {r['suggest_typical_project']['results']:,}"),
            ("observe vs bare upsert (p50 ratio)",
             lambda r: f"{r['observe_existing']['p50_ms'] / r['floor_upsert']['p50_ms']:.2f}x"),
            ("consolidate s (again)", lambda r: f"{r['consolidate_s']:.2f} ({r['consolidate_again_s']:.2f})"),
            ("decay s (again)", lambda r: f"{r['decay_s']:.2f} ({r['decay_again_s']:.2f})"),
            ("decay decayed / deleted",
             lambda r: f"{r['decay_result']['decayed']:,} / {r['decay_result']['deleted']:,}"),
            ("levels after consolidate m/r/u",
             lambda r: "{mature:,}/{rule:,}/{universal:,}".format(**r["levels_after_consolidate"])),
            ("events in store", lambda r: f"{r['events']:,}"),
            ("db size MiB", lambda r: f"{r['build']['db_mib']:.0f}"),
            ("build s", lambda r: f"{r['build']['build_s']:.1f}"),
            ("peak RSS MiB (measuring process)", lambda r: f"{r['rss_peak_mib']:.1f}"),
            ("  after import instinct", lambda r: f"{r['rss_import_mib']:.1f}"),
            ("  after open + stats()", lambda r: f"{r['rss_open_mib']:.1f}"),
            ("  peak minus import", lambda r: f"{r['rss_store_mib']:.1f}")):
        print(f"{label:<{w}}" + "".join(f"{fn(results[n]):>20}" for n in sizes))

    big = results[max(sizes)]
    small = results[min(sizes)]
    print(f"\ntargets at {max(sizes):,} patterns:")
    checks = [
        ("observe p50 <= 1 ms (existing)", big["observe_existing"]["p50_ms"] <= 1.0,
         f"{big['observe_existing']['p50_ms']:.3f} ms"),
        ("observe p50 <= 1 ms (new)", big["observe_new"]["p50_ms"] <= 1.0,
         f"{big['observe_new']['p50_ms']:.3f} ms"),
        ("suggest p50 <= 5 ms (typical project)", big["suggest_typical_project"]["p50_ms"] <= 5.0,
         f"{big['suggest_typical_project']['p50_ms']:.3f} ms"),
        ("suggest p50 <= 5 ms (busiest project)", big["suggest_top_project"]["p50_ms"] <= 5.0,
         f"{big['suggest_top_project']['p50_ms']:.3f} ms"),
        ("consolidate <= 30 s", big["consolidate_s"] <= 30, f"{big['consolidate_s']:.2f} s"),
        ("decay <= 30 s", big["decay_s"] <= 30, f"{big['decay_s']:.2f} s"),
    ]
    if len(sizes) > 1:
        grow = big["rss_peak_mib"] - small["rss_peak_mib"]
        checks.append((f"memory flat ({min(sizes):,} -> {max(sizes):,}: +<= 10 MiB)", grow <= 10,
                       f"{small['rss_peak_mib']:.1f} -> {big['rss_peak_mib']:.1f} MiB"))
    for label, ok, val in checks:
        print(f"  {verdict(ok)}  {label:<45} {val}")
    print("peak RSS after each phase (MiB): " + "; ".join(
        f"{n:,}: " + ", ".join(f"{k} {v}" for k, v in results[n]["rss_steps_mib"].items())
        for n in sizes))
    if os.path.getmtime(os.path.join(REPO, "instinct.py")) != src_mtime:
        print("WARNING: instinct.py changed during the run; figures may mix two versions")
    if a.json:
        print(json.dumps({str(k): v for k, v in results.items()}, indent=1))
    return 0 if a.report_only or all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
