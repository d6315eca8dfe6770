"""Summarise an `npx conformance server -o DIR` run against instinct (dev-only).

    python3 tests/interop/conformance_summary.py DIR [DIR...]

Every check is sorted into one bucket, each with its reason:
  applicable   a requirement instinct's server has to meet: must pass
  fixture      needs the suite's own demo tools/prompts/resources (test_simple_text,
               test://static-text, slow_compute...), which a real server does not have
  not-offered  a feature instinct does not declare (completions, logging, subscriptions, MRTR
               input requests): the check expects it to be offered
  extension    scored by nobody: the tasks extension
  pending      the suite's own pending (not yet required) scenarios
Prints one line per non-passing check outside `applicable`, then a JSON summary on the
last line. Exits 1 when an applicable check did not pass.
"""
import glob
import json
import os
import re
import sys

PENDING = {"json-schema-2020-12", "http-header-validation", "http-custom-header-server-validation",
           "server-sse-polling"}
NOT_OFFERED = {   # scenario -> what it needs that instinct does not declare
    "completion-complete": "completions capability",
    "logging-set-level": "logging capability",
    "tools-call-with-logging": "logging capability",
    "resources-subscribe": "resources.subscribe",
    "resources-unsubscribe": "resources.subscribe",
    "tools-call-sampling": "sampling (a server-to-client request)",
    "tools-call-elicitation": "elicitation (a server-to-client request)",
    "elicitation-sep1034-defaults": "elicitation (a server-to-client request)",
    "elicitation-sep1330-enums": "elicitation (a server-to-client request)",
}
FIXTURE = re.compile(r"Unknown (tool|prompt): |Resource not found: test://|Not testable|"
                     r"not found\. Available tools|InputRequiredResult|Prerequisite failed|"
                     r"fixture|no tool with x-mcp-header")


def scenario_of(path):
    name = os.path.basename(os.path.dirname(path))
    name = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", name)
    return name[len("server-"):] if name.startswith("server-") else name


def bucket(scenario, check):
    if scenario.startswith("tasks-"):
        return "extension", "the tasks extension (never scored)"
    if scenario in PENDING:
        return "pending", "pending in the suite (not required by the revision)"
    msg = check.get("errorMessage") or ""
    if scenario in NOT_OFFERED and check["id"] != "wire-schema-valid":
        return "not-offered", NOT_OFFERED[scenario] + " is not declared"
    if scenario.startswith("input-required-result") and FIXTURE.search(msg):
        return "not-offered", "MRTR input requests (instinct never needs client input)"
    if FIXTURE.search(msg):
        return "fixture", "needs the suite's demo fixture: " + msg[:90]
    return "applicable", ""


def main(dirs):
    counts, problems = {}, []
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*", "checks.json"))):
            scenario = scenario_of(path)
            for check in json.load(open(path)):
                status = check.get("status")
                kind, why = bucket(scenario, check)
                passed = status in ("SUCCESS", "INFO", "SKIPPED")
                c = counts.setdefault(kind, {"pass": 0, "other": 0})
                c["pass" if passed else "other"] += 1
                if kind == "applicable" and status == "WARNING":
                    c["other"] -= 1                  # warnings never fail the suite either
                    c.setdefault("warning", 0)
                    c["warning"] += 1
                    print(f"warning      {scenario}: {check['id']}: {check.get('errorMessage', '')[:120]}")
                elif not passed:
                    print(f"{kind:12} {scenario}: {check['id']}: {why or check.get('errorMessage', '')[:160]}")
                    if kind == "applicable":
                        problems.append(f"{scenario}: {check['id']}")
    print(json.dumps({"counts": counts, "applicable_failures": problems}))
    return 1 if problems or not counts.get("applicable", {}).get("pass") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
