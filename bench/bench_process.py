#!/usr/bin/env python3
"""bench_process: what one `instinct ...` process costs, start to exit (stdlib only).

Each rep runs every command once, in an order rotated from rep to rep so that
machine noise hits all of them alike; medians are quoted with their ratio to the
floor measured in the same run, `python -c "import sqlite3"`:

  floor              python -c "import sqlite3"
  observe -m         python -m instinct observe X          (PYTHONPATH=repo; cached bytecode)
  observe -S -m      python -S -m instinct observe X       (no site: what a lean hook could use)
  observe file       python instinct.py observe X          (recompiles the file at every start)
  suggest -m         python -m instinct suggest
  hook post-tool-use python -m instinct hook post-tool-use < Claude Code PostToolUse JSON
  hook pre-tool-use  the command `setup` writes for PreToolUse (a hint read), same call
                     (only when the CLI has a `hook` subcommand)

Targets (design.md section 7): `observe -m`, `hook post-tool-use` and `hook pre-tool-use` <= 1.5x
the floor.
Every command gets its own pre-created temp database (INSTINCT_DB) and runs in a
temp project folder (with .git).  PYTHONUNBUFFERED / PYTHONDONTWRITEBYTECODE are
removed from the children's environment; instinct's __pycache__ is written first.
Afterwards `-X importtime` of the observe path shows what it imports beyond the floor.

The exit status is 1 when a target fails, unless --report-only (a smoke run at tiny sizes).

  python bench/bench_process.py [--python PATH] [--reps 40] [--warmup 3] [--split-runs 15]
                                [--report-only] [--json]
"""
import argparse
import ast
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SRC = os.path.join(REPO, "instinct.py")
DEFAULT_PY = os.path.expanduser("~/.pyenv/versions/3.12.1/bin/python")


def payload(cwd):
    """A realistic Claude Code PostToolUse payload: the Bash tool ran `pytest -q`."""
    sid = "3f0c9a52-7d1e-4b8a-9c55-2e6f1d0b7a41"
    return json.dumps({
        "session_id": sid,
        "transcript_path": f"/home/dev/.claude/projects/-home-dev-shop/{sid}.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "pytest -q", "description": "Run the test suite"},
        "tool_response": {
            "stdout": "........................................ [ 85%]\n"
                      "....... [100%]\n47 passed in 1.92s\n",
            "stderr": "", "interrupted": False, "isImage": False},
        "tool_use_id": "toolu_01HqN6w1X2mYbq8C6o4Vn7zR",
        "duration_ms": 2310,
    }).encode()


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH",
                        "INSTINCT_DB", "PYTHONSTARTUP", "PYTHONPROFILEIMPORTTIME")}
    env.update(extra)
    return env


def cli_extras(py):
    """The CLI's extra subcommands (instinct._CLI.EXTRAS), read in a child process."""
    r = subprocess.run([py, "-c", "import instinct, json; print(json.dumps(sorted(instinct._CLI.EXTRAS)))"],
                       env=clean_env(PYTHONPATH=REPO), capture_output=True, text=True, cwd=REPO)
    if r.returncode != 0:
        sys.exit(f"cannot import instinct with {py}:\n{r.stderr}")
    return json.loads(r.stdout)


def ensure_pycache(py):
    r = subprocess.run([py, "-c", "import instinct, sys; print(instinct.__cached__)"],
                       env=clean_env(PYTHONPATH=REPO), capture_output=True, text=True, cwd=REPO)
    pyc = r.stdout.strip()
    if r.returncode != 0 or not os.path.exists(pyc):
        sys.exit(f"instinct's bytecode cache was not written ({pyc!r}): {r.stderr}")
    return pyc


def precreate(py, db):
    r = subprocess.run([py, "-m", "instinct", "stats"], env=clean_env(PYTHONPATH=REPO, INSTINCT_DB=db),
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"cannot create {db}: {r.stderr}")


def importtime(py, argv, env, cwd, stdin=None):
    """{module: (self_us, cumulative_us)} from -X importtime."""
    r = subprocess.run([py, "-X", "importtime"] + argv, env=env, cwd=cwd, input=stdin,
                       capture_output=True)
    mods = {}
    for line in r.stderr.decode(errors="replace").splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        try:
            _, rest = line.split(":", 1)
            s, c, name = rest.split("|", 2)
            mods[name.strip()] = (int(s), int(c))
        except ValueError:
            continue
    return mods


BREAKDOWN = r"""
import os, sys, time
t0 = time.perf_counter()
import instinct
t1 = time.perf_counter()
before = set(sys.modules)
argv = sys.argv[1:]
out, sys.stdout = sys.stdout, open(os.devnull, "w")
cli = instinct._CLI.cli                     # the process entry without its os._exit
t2 = time.perf_counter()
code = cli(argv, close=False)
t3 = time.perf_counter()
sys.stdout = out
print(repr({"import instinct": (t1 - t0) * 1e3, "run command": (t3 - t2) * 1e3,
            "code": code, "new_modules": sorted(set(sys.modules) - before)}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", default=DEFAULT_PY if os.path.exists(DEFAULT_PY) else sys.executable,
                    help="a real interpreter (not the pyenv shim); default %(default)s "
                         f"({DEFAULT_PY} when it exists, else this interpreter)")
    ap.add_argument("--reps", type=int, default=40, help="interleaved repetitions (default 40)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed runs of each command first (default 3)")
    ap.add_argument("--split-runs", type=int, default=15,
                    help="child runs for the in-process split, import vs command (default 15)")
    ap.add_argument("--report-only", action="store_true",
                    help="print the targets' verdicts but exit 0 when one fails")
    ap.add_argument("--json", action="store_true", help="also print the raw timings as JSON")
    a = ap.parse_args()
    py = a.python
    if a.reps < 1 or a.warmup < 0 or a.split_runs < 1:
        sys.exit("bench_process: --reps and --split-runs must be at least 1, --warmup at least 0")
    if not os.path.exists(py):
        sys.exit(f"bench_process: no interpreter at {py}")
    if "shims" in py:
        sys.exit(f"{py} is a pyenv shim (~95 ms per start); give a real interpreter")

    pyc = ensure_pycache(py)
    extras = cli_extras(py)
    src_mtime = os.path.getmtime(SRC)
    tmp = tempfile.mkdtemp(prefix="instinct-proc-")
    try:
        proj = os.path.join(tmp, "shop")
        os.makedirs(os.path.join(proj, ".git"))
        hook_in = payload(proj)
        cmds = [("floor: -c 'import sqlite3'", [py, "-c", "import sqlite3"], None, False),
                ("observe -m", [py, "-m", "instinct", "observe", "X"], None, True),
                ("observe -S -m", [py, "-S", "-m", "instinct", "observe", "X"], None, True),
                ("observe instinct.py", [py, SRC, "observe", "X"], None, True),
                ("suggest -m", [py, "-m", "instinct", "suggest"], None, True)]
        if "hook" in extras:
            cmds.append(("hook post-tool-use -m", [py, "-m", "instinct", "hook", "post-tool-use"],
                         hook_in, True))
            sys.path.insert(0, REPO)          # the exact command `instinct setup` writes
            import instinct
            cmds.append(("hook (setup's command)",
                         instinct._Setup._launch_args(py, REPO, "hook", "post-tool-use"), hook_in, True))
            pre_in = json.dumps(dict(json.loads(hook_in), hook_event_name="PreToolUse",
                                     tool_response=None)).encode()
            cmds.append(("hook pre-tool-use (setup's)",
                         instinct._Setup._launch_args(py, REPO, "hook", "pre-tool-use"), pre_in, True))
        envs = []
        for k, (name, argv, stdin, uses_db) in enumerate(cmds):
            if uses_db:
                db = os.path.join(tmp, f"db{k}", "i.db")
                os.makedirs(os.path.dirname(db))
                precreate(py, db)
                envs.append(clean_env(PYTHONPATH=REPO, INSTINCT_DB=db))
            else:
                envs.append(clean_env())

        def run(k):
            name, argv, stdin, _ = cmds[k]
            t = time.perf_counter()
            r = subprocess.run(argv, env=envs[k], cwd=proj, input=stdin,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            dt = time.perf_counter() - t
            if r.returncode != 0:
                sys.exit(f"{name} failed (rc={r.returncode}): {r.stderr.decode()[-800:]}")
            return dt

        print(f"bench_process: {py} ({subprocess.run([py, '-V'], capture_output=True, text=True).stdout.strip()}),"
              f" {a.reps} interleaved reps, {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}")
        print(f"bytecode cache: {pyc}; CLI extras: {', '.join(extras) or '-'}")
        if "hook" not in extras:
            print("note: no `hook` subcommand in this instinct.py yet; hook row skipped")
        for k in range(len(cmds)):
            for _ in range(a.warmup):
                run(k)
        times = [[] for _ in cmds]
        for rep in range(a.reps):
            order = list(range(len(cmds)))
            s = rep % len(order)
            for k in order[s:] + order[:s]:
                times[k].append(run(k))
        if os.path.getmtime(SRC) != src_mtime:
            print("WARNING: instinct.py changed during the run (the cache was rebuilt once); rerun")

        floor = times[0]
        fmed = statistics.median(floor)
        print(f"\n{'command':<24} {'median ms':>10} {'min ms':>8} {'p90 ms':>8} {'x floor':>8} {'paired x':>9}")
        print("-" * 72)
        summary = {}
        for (name, *_), ts in zip(cmds, times):
            med = statistics.median(ts)
            p90 = sorted(ts)[int(0.9 * (len(ts) - 1))]
            paired = statistics.median(t / f for t, f in zip(ts, floor))
            summary[name] = {"median_ms": med * 1e3, "min_ms": min(ts) * 1e3, "p90_ms": p90 * 1e3,
                             "ratio": med / fmed, "paired_ratio": paired}
            print(f"{name:<24} {med * 1e3:>10.1f} {min(ts) * 1e3:>8.1f} {p90 * 1e3:>8.1f} "
                  f"{med / fmed:>7.2f}x {paired:>8.2f}x")
        print("(x floor = median / floor median; paired x = median of per-rep ratios)")

        print("\ntargets (<= 1.5x the floor):")
        ok_all = True
        for name in ("observe -m", "hook post-tool-use -m", "hook (setup's command)",
                     "hook pre-tool-use (setup's)"):
            if name in summary:
                r = summary[name]["ratio"]
                ok = r <= 1.5
                ok_all &= ok
                print(f"  {'PASS' if ok else 'FAIL'}  {name:<24} {r:.2f}x "
                      f"({summary[name]['median_ms']:.1f} ms vs {fmed * 1e3:.1f} ms)")
            else:
                print(f"  n/a   {name:<24} (subcommand missing)")

        # what the observe path imports beyond the floor, once
        base = importtime(py, ["-c", "import sqlite3"], clean_env(), proj)
        obs = importtime(py, ["-m", "instinct", "observe", "X"], envs[1], proj)
        extra = {m: v for m, v in obs.items() if m not in base}
        print(f"\n-X importtime, `-m instinct observe X`: {len(obs)} modules "
              f"({len(extra)} beyond the floor's {len(base)}); top by self time:")
        print(f"  {'module':<28} {'self us':>8} {'cumul us':>9}  beyond floor")
        for m, (s, c) in sorted(obs.items(), key=lambda kv: -kv[1][0])[:12]:
            print(f"  {m:<28} {s:>8} {c:>9}  {'yes' if m in extra else ''}")
        print("  modules beyond the floor: " + ", ".join(
            f"{m} ({s} us)" for m, (s, c) in sorted(extra.items(), key=lambda kv: -kv[1][0])))
        k_hook = next((i for i, c in enumerate(cmds) if c[0] == "hook post-tool-use -m"), None)
        if k_hook is not None:
            hk = importtime(py, cmds[k_hook][1][1:], envs[k_hook], proj, hook_in)
            hx = {m: v for m, v in hk.items() if m not in base}
            print(f"  hook path beyond the floor ({len(hx)}): " + ", ".join(
                f"{m} ({s} us)" for m, (s, c) in sorted(hx.items(), key=lambda kv: -kv[1][0])))
        # where the process spends its time once the interpreter is up (import vs command)
        print(f"\nin-process split (median of {a.split_runs} child runs; the floor process is "
              f"{fmed * 1e3:.1f} ms):")
        for k in [1] + ([k_hook] if k_hook is not None else []):
            name, argv, stdin, _ = cmds[k]
            runs = []
            for _ in range(a.split_runs):
                r = subprocess.run([py, "-c", BREAKDOWN] + argv[argv.index("instinct") + 1:],
                                   env=envs[k], cwd=proj, input=stdin, capture_output=True)
                if r.returncode != 0:
                    sys.exit(f"in-process split of {name} failed (rc={r.returncode}): "
                             f"{r.stderr.decode()[-800:]}")
                runs.append(ast.literal_eval(r.stdout.decode().strip().splitlines()[-1]))
            if runs:
                imp = statistics.median(x["import instinct"] for x in runs)
                run_ms = statistics.median(x["run command"] for x in runs)
                print(f"  {name:<24} import instinct {imp:6.2f} ms   command {run_ms:6.2f} ms   "
                      f"modules it imports: {', '.join(runs[0]['new_modules']) or '-'}")
        if a.json:
            print(json.dumps({"summary": summary,
                              "times_ms": {c[0]: [t * 1e3 for t in ts] for c, ts in zip(cmds, times)}},
                             indent=1))
        return 0 if ok_all or a.report_only else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
