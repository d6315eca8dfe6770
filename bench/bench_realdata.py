"""Replay real Claude Code sessions (hook payloads) through instinct and print what it learned.

    python bench/bench_realdata.py [--data DIR] [--instinct PATH] [--source NAME]

--data defaults to $INSTINCT_REALDATA, else ../shared/realdata beside the repository.

Each payload line is one `instinct hook <event>` call, run in-process in `seq` order through the
same entry point a hook process uses, with the sessions' directories (git repositories and
worktrees as the layout file describes them) recreated under a temporary root and HOME mapped
there. Prints, per project: sessions, patterns by level, the mature+ patterns and the
session-start briefing; then replay speed. `--instinct` replays through another copy of
instinct.py (e.g. an older commit) for a before/after comparison in one run.
"""
import argparse
import gzip
import importlib.util
import io
import json
import os
import sqlite3
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    spec = importlib.util.spec_from_file_location("instinct_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def build_layout(root, layout, beside=False):
    """Recreate repositories, worktrees and plain directories under `root`.

    A worktree's main repository is the one whose folder name starts its own (spotter-gqc ->
    spotter); `beside` gives the worktrees of one folder a main repository of their own beside
    them instead (<parent>/.main-repo.git, as ../shared/bench/predict.py lays them out)."""
    repos = [r for r in layout["repos"] if r["git"] == "dir"]
    for d in layout["dirs"]:
        os.makedirs(root + d, exist_ok=True)
    for r in repos:
        os.makedirs(root + r["path"] + "/.git/worktrees", exist_ok=True)
    for r in layout["repos"]:
        if r["git"] != "file":
            continue
        name = os.path.basename(r["path"])
        main = next((m for m in repos if name.startswith(os.path.basename(m["path"]))), repos[0] if repos else None)
        if beside:
            common = root + os.path.dirname(r["path"]) + "/.main-repo.git"
        elif main is None:
            continue
        else:
            common = root + main["path"] + "/.git"
        wt = f"{common}/worktrees/{name}"
        os.makedirs(wt, exist_ok=True)
        os.makedirs(root + r["path"], exist_ok=True)
        with open(root + r["path"] + "/.git", "w") as f:
            f.write(f"gitdir: {wt}\n")
        for fname, text in (("commondir", "../..\n"), ("gitdir", root + r["path"] + "/.git\n"),
                            ("HEAD", f"ref: refs/heads/{name}\n")):
            with open(f"{wt}/{fname}", "w") as f:
                f.write(text)


def sources(data):
    """The sources in a realdata folder: <source>.payloads.jsonl or .jsonl.gz."""
    names = os.listdir(data) if os.path.isdir(data) else []
    return sorted({n.split(".payloads.jsonl")[0] for n in names
                   if n.endswith((".payloads.jsonl", ".payloads.jsonl.gz"))})


def read_lines(data, source):
    """A source's payload lines in `seq` order."""
    path = os.path.join(data, f"{source}.payloads.jsonl")
    opener = open if os.path.exists(path) else gzip.open
    with opener(path if opener is open else path + ".gz", "rt", encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    lines.sort(key=lambda r: r["seq"])
    return lines


def home_of(cwd):
    """The user's home of an original path: /home/<user>."""
    parts = cwd.split("/")
    return "/".join(parts[:3]) if len(parts) > 2 else ""


def replay(mod, lines, root, db, answer=None):
    """Every line through the hook entry point, in order -> (tool calls, seconds).

    `answer(index, line, out, err)` gets each call's stdout (its answer) and stderr when either
    is not empty."""
    calls, t0, stderr = 0, time.perf_counter(), sys.stderr
    os.environ["INSTINCT_DB"] = db
    for i, r in enumerate(lines):
        p = dict(r["payload"])
        cwd = p.get("cwd")
        if isinstance(cwd, str) and cwd.startswith("/"):
            p["cwd"] = root + cwd
            os.environ["HOME"] = root + home_of(cwd)
        if "transcript_path" in p:
            p["transcript_path"] = root + "/transcript.jsonl"
        out, err = io.StringIO(), io.StringIO()
        if answer:
            sys.stderr = err
        try:
            mod._Hook.run_hook([r["event"]], stdin=io.BytesIO(json.dumps(p).encode()), stdout=out)
        finally:
            sys.stderr = stderr
        calls += r["event"].startswith("post-tool")
        if answer and (out.getvalue().strip() or err.getvalue().strip()):
            answer(i, r, out.getvalue(), err.getvalue())
    return calls, time.perf_counter() - t0


def report(mod, lines, root, db):
    conn = sqlite3.connect(db)
    names = {}
    for r in lines:
        cwd = r["payload"].get("cwd")
        if isinstance(cwd, str) and cwd.startswith("/"):
            os.environ["HOME"] = root + home_of(cwd)
            fp = mod.project_fingerprint(root + cwd)
            names.setdefault(fp, (mod.project_root(root + cwd)[len(root):], set(), cwd))[1].add(r["session"])
    store = mod.InstinctStore(db)
    for fp, (name, sessions, cwd) in sorted(names.items(), key=lambda kv: -len(kv[1][1])):
        rows = conn.execute("SELECT pattern, confidence, promoted FROM instincts WHERE project = ?"
                            " ORDER BY promoted DESC, confidence DESC, pattern", (fp,)).fetchall()
        levels = [sum(1 for r in rows if r[2] == k) for k in range(4)]
        print(f"\n## {name}  ({len(sessions)} sessions; patterns raw {levels[0]}, mature {levels[1]},"
              f" rule {levels[2]}, universal {levels[3]})")
        for p, c, lvl in rows:
            if lvl > 0:
                print(f"   {('raw', 'mature', 'rule', 'universal')[lvl]:<9} {c:>3}  {p}")
        os.environ["HOME"] = root + home_of(cwd)
        text = store._briefing(root + cwd)
        print("   briefing:" + ("\n     " + text.replace("\n", "\n     ") if text else " (none)"))
    store.close()
    conn.close()


def checked(a, name):
    """The sources of a.data, after checking a.source and a.instinct (exits with one line)."""
    found = sources(a.data)
    if not found:
        sys.exit(f"{name}: no <source>.payloads.jsonl(.gz) in {a.data} (give --data or set INSTINCT_REALDATA)")
    unknown = [s for s in a.source or () if s not in found]
    if unknown:
        sys.exit(f"{name}: no source {', '.join(unknown)} in {a.data} (there: {', '.join(found)})")
    if not os.path.isfile(a.instinct):
        sys.exit(f"{name}: no instinct.py at {a.instinct}")
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.environ.get("INSTINCT_REALDATA")
                    or os.path.join(HERE, "..", "..", "shared", "realdata"),
                    help="the realdata folder (default: $INSTINCT_REALDATA, else %(default)s)")
    ap.add_argument("--instinct", default=os.path.join(HERE, "..", "instinct.py"))
    ap.add_argument("--source", action="append", help="replay only this source (repeatable)")
    a = ap.parse_args()
    found = checked(a, "bench_realdata")
    mod = load(a.instinct)
    home = os.environ.get("HOME")
    for source in a.source or found:
        with tempfile.TemporaryDirectory() as root:
            db = os.path.join(root, "instinct.db")
            with open(os.path.join(a.data, f"{source}.layout.json")) as f:
                build_layout(root, json.load(f))
            lines = read_lines(a.data, source)
            calls, secs = replay(mod, lines, root, db)
            print(f"\n# {source}: {len(lines)} hook calls ({calls} tool calls) replayed in {secs:.2f} s"
                  f" ({len(lines) / secs:,.0f} hook calls/s in-process)")
            report(mod, lines, root, db)
            if home is not None:
                os.environ["HOME"] = home


if __name__ == "__main__":
    main()
