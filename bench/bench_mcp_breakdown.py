#!/usr/bin/env python3
"""bench_mcp_breakdown: where an MCP `observe` call's time goes, in-process (stdlib only).

Feeds K tools/call lines (new patterns p0..pK-1, like the MCP suite) straight into
instinct's server object and into the stdlib floor's handler, no pipes, and repeats
instinct's run on variants of a fresh database, so each row's gap to "server call,
as shipped" is what that piece of today's code costs:

  floor handle()              floor_stdlib.py's handler: one upsert + commit + select (from
                              $SHARED_BENCH or ../shared/bench; the row and the "x floor"
                              column are left out when it is not there)
  server call, as shipped     _Server.handle_line + _MCP.reply_line: what the serve loop does for
                              one line (JSON-RPC parse, MCP validation, observe, reply encoding)
  store.observe() only        the API call alone, without JSON-RPC / MCP framing (with the
                              server's auto-checkpoint, so only the framing differs)
  - event pattern index       the server call with ix_events_pattern dropped: what indexing
                              observe's event costs (schema v8 deferred it, v10 took that back)
  - FTS insert trigger        the server call with instincts_fts_ai dropped: the cost of the
                              lazy full-text trigger's check on every new pattern
  wal_autocheckpoint=1000     the server call with SQLite's default auto-checkpoint (1,000
                              pages, what one-shot CLI and hook processes keep) instead of
                              the server's WAL_SERVER_CHECKPOINT_PAGES

Rounds are interleaved (the order rotates); medians of the per-call mean cost (us).
  python bench/bench_mcp_breakdown.py [--calls 2000] [--rounds 5]
"""
import argparse
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SHARED = os.environ.get("SHARED_BENCH") or os.path.join(REPO, "..", "shared", "bench")
sys.path.insert(0, REPO)
import instinct  # noqa: E402

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "breakdown", "version": "1"}}}

# (label, variant): None is the floor; every other variant is a fresh instinct store
ROWS = [("floor handle()", None),
        ("server call, as shipped", "server"),
        ("store.observe() only", "api"),
        ("  - event pattern index", "noindex"),
        ("  - FTS insert trigger", "nofts"),
        ("  wal_autocheckpoint=1000", "ckpt")]


def lines(k, tag):
    return [json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                        "params": {"name": "observe", "arguments": {"pattern": f"{tag}{i}"}}}).encode()
            for i in range(k)]


def check_instinct():
    """The pieces this bench drives; a clear message when a refactor renamed one."""
    missing = [n for n in ("InstinctStore", "_Server", "_MCP", "WAL_SERVER_CHECKPOINT_PAGES")
               if not hasattr(instinct, n)]
    if not hasattr(getattr(instinct, "_DB", None), "set_checkpoint"):
        missing.append("_DB.set_checkpoint")
    if missing:
        raise SystemExit(f"bench_mcp_breakdown: instinct.py has no {', '.join(missing)}; "
                         "update this bench to today's server")


def drop(conn, kind, name):
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?", (kind, name)).fetchone():
        raise SystemExit(f"bench_mcp_breakdown: today's schema has no {kind} {name}; "
                         "this variant no longer measures anything, drop or update it")
    conn.execute(f"DROP {kind.upper()} {name}")


def run_instinct(path, msgs, variant):
    store = instinct.InstinctStore(path)
    try:
        store.stats()                  # schema created before the clock starts, in every variant
        conn = store._db.conn
        if variant == "noindex":
            drop(conn, "index", "ix_events_pattern")
        elif variant == "nofts":
            drop(conn, "trigger", "instincts_fts_ai")
        if variant == "api":
            store._db.set_checkpoint(instinct.WAL_SERVER_CHECKPOINT_PAGES)
            pats = [json.loads(m)["params"]["arguments"]["pattern"] for m in msgs]
            t = time.perf_counter()
            for p in pats:
                store.observe(p)
            return (time.perf_counter() - t) / len(msgs)
        srv = instinct._Server(store)         # sets the server's auto-checkpoint
        if variant == "ckpt":
            store._db.set_checkpoint(1000)
        srv.handle_line(json.dumps(INIT).encode())
        srv.handle_line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        out = io.BytesIO()
        t = time.perf_counter()
        for m in msgs:
            out.write(instinct._MCP.reply_line(srv.handle_line(m)))
        dt = time.perf_counter() - t
        if b'"isError":true' in out.getvalue() or b'"error"' in out.getvalue():
            raise SystemExit(f"bench_mcp_breakdown: variant {variant!r}: the server answered with "
                             f"an error: {out.getvalue()[:300]!r}")
        return dt / len(msgs)
    finally:
        store.close()


def load_floor():
    """floor_stdlib from the shared bench folder, or None when it is not there."""
    if not os.path.isfile(os.path.join(SHARED, "floor_stdlib.py")):
        return None
    sys.path.insert(0, SHARED)
    sys.dont_write_bytecode = True       # never leave a __pycache__ in the shared folder
    import floor_stdlib
    return floor_stdlib


def run_floor(floor, path, msgs):
    conn = floor.open_db(path)
    out = io.StringIO()
    t = time.perf_counter()
    for m in msgs:
        r = floor.handle(conn, json.loads(m))
        out.write(json.dumps(r, separators=(",", ":")) + "\n")
    dt = time.perf_counter() - t
    conn.close()
    return dt / len(msgs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=2000, help="tools/call lines per run (default 2000)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    a = ap.parse_args()
    if a.calls < 1 or a.rounds < 1:
        raise SystemExit("bench_mcp_breakdown: --calls and --rounds must be at least 1")
    check_instinct()
    floor = load_floor()
    rows = [r for r in ROWS if r[1] is not None or floor is not None]
    msgs = lines(a.calls, "p")
    res = {name: [] for name, _ in rows}
    tmp = tempfile.mkdtemp(prefix="instinct-bd-")
    try:
        for rnd in range(a.rounds):
            order = rows[rnd % len(rows):] + rows[:rnd % len(rows)]
            for name, variant in order:
                path = os.path.join(tmp, f"{rnd}-{variant}.db")
                res[name].append(run_floor(floor, path, msgs) if variant is None
                                 else run_instinct(path, msgs, variant))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"in-process cost per observe call, {a.calls} new patterns, median of {a.rounds} rounds "
          f"({os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f})")
    if floor is None:
        print(f"(no floor_stdlib.py in {SHARED}: set SHARED_BENCH for the floor row)")
    base = statistics.median(res["floor handle()"]) if floor is not None else None
    print(f"{'variant':<30} {'us/call':>8}" + (f" {'x floor':>8}" if base else ""))
    for name, _ in rows:
        v = statistics.median(res[name])
        print(f"{name:<30} {v * 1e6:>8.1f}" + (f" {v / base:>7.2f}x" if base else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
