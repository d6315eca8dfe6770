#!/usr/bin/env python3
"""bench_mcp_breakdown: where an MCP `observe` call's time goes, in-process (stdlib only).

Feeds K tools/call lines (new patterns p0..pK-1, like the suite) straight into
instinct's server object and into the stdlib floor's handler, no pipes, and
repeats instinct's run on variants of a fresh database, so each row's gap to
"as shipped" is what that piece costs or saves:

  floor handle()                 floor_stdlib.py's handler (one upsert + commit + select)
  instinct, as shipped           _Server.handle_line + _reply_line (the serve loop's work)
  lazy event index (v8's trick)  observe's event kept out of ix_events_pattern (schema v8
                                 did this; v10 indexes every event again)
  - lazy FTS trigger             the trigger's check on new patterns dropped
  wal_autocheckpoint=1000        SQLite's default instead of instinct's 10,000 pages
  store.observe() only           the API call without JSON-RPC / MCP framing

Rounds are interleaved; medians of per-call mean cost (us) are printed.
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
SHARED = os.environ.get("SHARED_BENCH", os.path.join(REPO, "..", "shared", "bench"))
sys.path.insert(0, REPO)
sys.path.insert(0, SHARED)
import instinct  # noqa: E402

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "breakdown", "version": "1"}}}


def lines(k, tag):
    return [json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                        "params": {"name": "observe", "arguments": {"pattern": f"{tag}{i}"}}}).encode()
            for i in range(k)]


def run_instinct(path, msgs, variant):
    store = instinct.InstinctStore(path)
    conn = store._db.conn
    saved = instinct._SQL_OBSERVE_EVENT
    if variant == "v8":            # schema v8's lazy event index, write side (its bulk pass not counted)
        conn.execute("ALTER TABLE events ADD COLUMN pending INTEGER NOT NULL DEFAULT 0")
        conn.execute("DROP INDEX ix_events_pattern")
        conn.execute("CREATE INDEX ix_events_pattern ON events(pattern, project)"
                     " WHERE pattern != '' AND pending = 0")
        instinct._SQL_OBSERVE_EVENT = saved.replace("delta)", "delta, pending)").replace(",1)", ",1,1)")
        assert instinct._SQL_OBSERVE_EVENT.endswith(",1,1)")
    if variant == "nofts":
        conn.execute("DROP TRIGGER IF EXISTS instincts_fts_ai")
    if variant == "ckpt":
        conn.execute("PRAGMA wal_autocheckpoint=1000")
    try:
        if variant == "api":
            pats = [json.loads(m)["params"]["arguments"]["pattern"] for m in msgs]
            t = time.perf_counter()
            for p in pats:
                store.observe(p)
            return (time.perf_counter() - t) / len(msgs)
        srv = instinct._Server(store)
        srv.handle_line(json.dumps(INIT).encode())
        srv.handle_line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        out = io.BytesIO()
        t = time.perf_counter()
        for m in msgs:
            out.write(instinct._reply_line(srv.handle_line(m)))
        return (time.perf_counter() - t) / len(msgs)
    finally:
        instinct._SQL_OBSERVE_EVENT = saved
        store.close()


def run_floor(path, msgs):
    sys.dont_write_bytecode = True       # never leave a __pycache__ in the shared folder
    import floor_stdlib
    conn = floor_stdlib.open_db(path)
    out = io.StringIO()
    t = time.perf_counter()
    for m in msgs:
        r = floor_stdlib.handle(conn, json.loads(m))
        out.write(json.dumps(r, separators=(",", ":")) + "\n")
    dt = time.perf_counter() - t
    conn.close()
    return dt / len(msgs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    msgs = lines(a.calls, "p")
    rows = [("floor handle()", None), ("instinct, as shipped", "full"),
            ("  lazy event index (v8's trick)", "v8"), ("  - lazy FTS trigger", "nofts"),
            ("  wal_autocheckpoint=1000", "ckpt"), ("store.observe() only (as shipped)", "api")]
    res = {name: [] for name, _ in rows}
    tmp = tempfile.mkdtemp(prefix="instinct-bd-")
    try:
        for rnd in range(a.rounds):
            order = rows[rnd % len(rows):] + rows[:rnd % len(rows)]
            for name, variant in order:
                path = os.path.join(tmp, f"{rnd}-{variant}.db")
                res[name].append(run_floor(path, msgs) if variant is None
                                 else run_instinct(path, msgs, variant))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base = statistics.median(res["floor handle()"])
    print(f"in-process cost per observe call, {a.calls} new patterns, median of {a.rounds} rounds "
          f"({os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f})")
    print(f"{'variant':<36} {'us/call':>8} {'x floor':>8}")
    for name, _ in rows:
        v = statistics.median(res[name])
        print(f"{name:<36} {v * 1e6:>8.1f} {v / base:>7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
