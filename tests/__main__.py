"""`python3 -m tests`: the whole suite, what `python3 -m unittest` finds (test_instinct.py and
tests/test_*.py), its test classes shared among one process per core (`INSTINCT_TEST_JOBS`
overrides), each class's lines printed when it ends. Same tests, same environment variables
(INSTINCT_E2E, INSTINCT_FULL, ...), less wall time; exit 1 when anything failed."""
import io
import multiprocessing
import os
import sys
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cases(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _cases(t)
        else:
            yield t


def run_class(name):
    """One test class (a dotted name) -> (name, its report, tests run, problems, skipped)."""
    out = io.StringIO()
    result = unittest.TextTestRunner(stream=out, verbosity=2).run(
        unittest.defaultTestLoader.loadTestsFromName(name))
    problems = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    return name, out.getvalue(), result.testsRun, problems, len(result.skipped)


def main():
    os.chdir(ROOT)
    sys.path.insert(0, ROOT)
    found = unittest.defaultTestLoader.discover(ROOT, top_level_dir=ROOT)
    broken = [t for t in _cases(found) if type(t).__name__ == "_FailedTest"]
    counts = {}
    for t in _cases(found):
        if type(t).__name__ != "_FailedTest":
            name = f"{type(t).__module__}.{type(t).__qualname__}"
            counts[name] = counts.get(name, 0) + 1
    jobs = int(os.environ.get("INSTINCT_TEST_JOBS") or os.cpu_count() or 1)
    start, ran, problems, skipped = time.monotonic(), 0, len(broken), 0
    for t in broken:                                  # a module that does not import: why
        unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(t)
    order = sorted(counts, key=lambda n: -counts[n])  # the biggest classes first
    with multiprocessing.Pool(max(1, jobs)) as pool:
        for name, report, n, bad, skip in pool.imap_unordered(run_class, order):
            report = report.rpartition("\n" + "-" * 70 + "\nRan ")[0] or report  # (its tally:
            sys.stdout.write(f"{report.rstrip()}\n")                        # added up below)
            sys.stdout.flush()
            ran, problems, skipped = ran + n, problems + bad, skipped + skip
    took = time.monotonic() - start
    print("-" * 70 + f"\nRan {ran} tests in {took:.1f}s ({jobs} processes)\n")
    print(f"FAILED (problems={problems}, skipped={skipped})" if problems
          else f"OK (skipped={skipped})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
