"""The shell reader's cost: median microseconds of _command_shapes per command.

Cases: a realistic ~300-character command (cd, VAR=value, a runner with options, quoted text,
a pipeline, a commit with a message), a heredoc commit, and every Bash command of the real
sessions in ../shared/realdata or $INSTINCT_REALDATA (when present); then 64 KiB inputs (the
read cap). Prints medians and p99.
    python bench/bench_shell.py [REPS=2000]
"""
import argparse
import gzip
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import instinct  # noqa: E402

TYPICAL = ("cd /home/user/project/app && FOO=1 BAR=baz uv run --with pytest-cov pytest -q "
           "tests/unit tests/integration -k 'not slow and not network' --cov=app --cov-report=term "
           "2>&1 | tee /tmp/test-output.log && git add -A && git commit -m \"fix: handle the "
           "empty input case (closes #12)\" && git push origin HEAD")
HEREDOC = ("git add -A && git commit -m \"$(cat <<'EOF'\nfix: the reader keeps shapes only\n\n"
           + "A longer body line that explains why, with (parens) && ops; and | pipes.\n" * 6
           + "EOF\n)\" && git push")


def real_commands():
    root = os.path.join(os.path.dirname(os.path.dirname(HERE)), "shared", "realdata")
    root = os.environ.get("INSTINCT_REALDATA", root)
    cmds = []
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else ():
        if name.endswith(".payloads.jsonl.gz"):
            with gzip.open(os.path.join(root, name), "rt", encoding="utf-8") as f:
                for line in f:
                    p = json.loads(line)["payload"]
                    if p.get("tool_name") == "Bash":
                        cmds.append(p.get("tool_input", {}).get("command"))
    return cmds


def timed(cmd, reps):
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        instinct._Shell.command_shapes(cmd)
        out.append(time.perf_counter() - t0)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reps", nargs="?", type=int, default=2000, help="runs per case (default 2000)")
    reps = ap.parse_args().reps
    if reps < 1:
        sys.exit("bench_shell: REPS must be at least 1")
    for label, cmd in (("typical", TYPICAL), ("heredoc commit", HEREDOC)):
        t = sorted(timed(cmd, reps))
        print(f"{label:16} {len(cmd):5} chars  median {statistics.median(t) * 1e6:7.1f} us  "
              f"p99 {t[int(len(t) * 0.99)] * 1e6:7.1f} us  -> {instinct._Shell.command_shapes(cmd)}")
    real = real_commands()
    if real:
        per = [statistics.median(timed(c, 5)) for c in real]
        chars = [len(c) for c in real if isinstance(c, str)]
        print(f"realdata         {len(real)} commands, median {statistics.median(chars)} chars: "
              f"median {statistics.median(per) * 1e6:.1f} us, max {max(per) * 1e6:.1f} us")
    for label, cmd in (("64 KiB of words", "a " * 32768), ("64 KiB heredoc", "cat <<E\n" + "line\n" * 13000)):
        t = min(timed(cmd, 3))
        print(f"{label:16} {len(cmd):5} chars  {t * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
