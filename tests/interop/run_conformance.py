"""Run the official MCP conformance suite against `instinct serve` (dev-only).

    python3 tests/interop/run_conformance.py CONFORMANCE_BIN OUT_DIR [REQUIREMENTS...]

Starts tests/interop/stdio_http_front.py in front of `python3 instinct.py serve` (a fresh
store under OUT_DIR), runs `conformance server --requirements R` for each requirement set
(default: 2025-11-25 and 2026-07-28), and summarises with conformance_summary.py. Exits 1
when an applicable check failed.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))   # the repository root


def main(argv):
    conformance, out = argv[0], os.path.abspath(argv[1])
    sets = argv[2:] or ["2025-11-25", "2026-07-28"]
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, INSTINCT_DB=os.path.join(out, "instinct.db"), HOME=out)
    env.pop("INSTINCT_MCP_TOOLS", None)                # the default (lean) tool list
    front = subprocess.Popen([sys.executable, os.path.join(HERE, "stdio_http_front.py"), "--port", "0",
                              "--", sys.executable, os.path.join(ROOT, "instinct.py"), "serve"],
                             env=env, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        first = front.stderr.readline().decode()
        if "listening on " not in first:
            print("front did not start: " + first, file=sys.stderr)
            return 1
        url = first.split("listening on ", 1)[1].strip()
        # node >= 22 from the same node_modules (npm package `node`) when it is there
        node_env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(conformance)) + os.pathsep
                        + os.environ.get("PATH", ""))
        dirs = []
        for req in sets:
            d = os.path.join(out, req)
            dirs.append(d)
            r = subprocess.run([conformance, "server", "--url", url, "--requirements", req, "-o", d],
                               capture_output=True, text=True, timeout=900, env=node_env)
            tail = [ln for ln in r.stdout.splitlines() if ln.startswith("Total")]
            print(f"== {req}: {tail[-1] if tail else r.stdout[-500:] + r.stderr[-1500:]}", flush=True)
        return subprocess.run([sys.executable, os.path.join(HERE, "conformance_summary.py")] + dirs).returncode
    finally:
        front.terminate()
        front.wait(10)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
