#!/usr/bin/env bash
# MCP stdio benchmark: instinct vs the stdlib floor and the FastMCP peer, in one interleaved
# suite run of /work/shared/bench/mcpbench.py (see bench/README.md).
#   bash bench/run_mcp_bench.sh [--reps N] [--calls K]   (extra args go to mcpbench.py)
#   --calls 0 measures start-up only (the calls/s targets are then left out); a smoke run:
#   bash bench/run_mcp_bench.sh --reps 1 --calls 50
# Env: BENCHENV (default /tmp/benchenv), SHARED_BENCH (default <repo>/../shared/bench),
#      OUT (JSON results, default /tmp/instinct_mcp_bench.json).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
B=${BENCHENV:-/tmp/benchenv}
SB=${SHARED_BENCH:-$REPO/../shared/bench}
if [ ! -f "$SB/mcpbench.py" ]; then
  echo "run_mcp_bench.sh: no mcpbench.py in $SB (set SHARED_BENCH to the shared bench folder)" >&2
  exit 2
fi
SB=$(cd "$SB" && pwd)
OUT=${OUT:-/tmp/instinct_mcp_bench.json}
if [ ! -x "$B/venv0/bin/python" ] || [ ! -x "$B/venv1/bin/python" ]; then
  echo "building the peer environments in $B (setup_env.sh)..." >&2
  BENCHENV="$B" bash "$SB/setup_env.sh" >&2
fi
PY="$B/venv0/bin/python"
CLEAN=(env -u PYTHONUNBUFFERED -u PYTHONDONTWRITEBYTECODE -u PYTHONPATH)
# the cached form needs instinct's bytecode: write it now with the interpreter under test
"${CLEAN[@]}" PYTHONPATH="$REPO" "$PY" -c 'import instinct' 
# the suite names /tmp/benchenv and ../../shared/bench; follow BENCHENV / SHARED_BENCH if moved
SUITE="$HERE/mcp_suite.json"
if [ "$B" != /tmp/benchenv ] || [ "$SB" != "$(cd "$HERE/../../shared/bench" 2>/dev/null && pwd)" ]; then
  SUITE="$HERE/.mcp_suite.local.json"
  sed -e "s#/tmp/benchenv#$B#g" -e "s#\.\./\.\./shared/bench#$SB#g" "$HERE/mcp_suite.json" > "$SUITE"
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cpus; $("$PY" -V)" >&2
rc=0
"${CLEAN[@]}" "$PY" "$SB/mcpbench.py" --suite "$SUITE" --json "$@" > "$OUT" || rc=$?
[ "$SUITE" = "$HERE/mcp_suite.json" ] || rm -f "$SUITE"
# targets (issue 3 / design.md section 7), from the medians of this one run
trc=0
"$PY" - "$OUT" <<'PY' || trc=$?
import json, sys
import statistics
data = json.load(open(sys.argv[1]))["servers"]
res = {s["name"]: s["summary"] for s in data}
runs = {s["name"]: {r.get("rep"): r.get("calls_per_s") for r in s["runs"]} for s in data}
fl, peer = res["floor-stdlib"], res["fastmcp-peer"]
print("\ntargets (ratios of this run's medians; calls/s also paired: the median of per-rep")
print("ratios, each rep's servers having run back to back):")
ok_all = True
for name in ("instinct -m", "instinct.py"):
    s = res[name]
    checks = [
        ("list_ms <= 1.3x floor", s["list_ms"] / fl["list_ms"], lambda r: r <= 1.3),
        ("list_ms >= 10x faster than FastMCP", peer["list_ms"] / s["list_ms"], lambda r: r >= 10),
    ]
    if s.get("calls_per_s") and fl.get("calls_per_s") and peer.get("calls_per_s"):  # not with --calls 0
        checks += [
            ("calls/s >= 0.7x floor", s["calls_per_s"] / fl["calls_per_s"], lambda r: r >= 0.7),
            ("calls/s >= 4x FastMCP", s["calls_per_s"] / peer["calls_per_s"], lambda r: r >= 4),
        ]
    checks += [
        ("RSS <= 1.5x floor", s["tree_hwm_kb"] / fl["tree_hwm_kb"], lambda r: r <= 1.5),
        ("RSS <= 30 MB", s["tree_hwm_kb"] * 1024 / 1e6, lambda r: r <= 30),
    ]
    held = name == "instinct -m"           # the cached form is the one held to the targets
    print(f"  {name}{'' if held else ' (reported beside, not held)'}:")
    for label, v, test in checks:
        ok = test(v)
        ok_all &= ok or not held
        unit = " MB" if "MB" in label else "x"
        extra = ""
        if label.startswith("calls/s >= 0.7x"):
            base = runs["floor-stdlib"]
            pairs = [v / base[k] for k, v in runs[name].items() if v and base.get(k)]
            extra = f"   (paired {statistics.median(pairs):.2f}x)" if pairs else ""
        print(f"    {'PASS' if ok else 'FAIL'}  {label:<36} {v:.2f}{unit}{extra}")
sys.exit(0 if ok_all else 1)
PY
echo "full JSON: $OUT" >&2
exit $(( rc || trc ))
