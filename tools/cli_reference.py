#!/usr/bin/env python3
"""The README's CLI and MCP tool reference, generated from instinct's operation registry.

    python tools/cli_reference.py            print the generated blocks
    python tools/cli_reference.py --write    rewrite them in README.md
    python tools/cli_reference.py --check    exit 1, naming the first difference, if README.md is stale
    ... --readme PATH                        work on another file (the tests use a temp copy)

Each block sits between `<!-- NAME: begin -->` and `<!-- NAME: end -->` lines in the README;
everything outside the markers is prose and left alone. The commands, their arguments and
flags come from the argparse parser `instinct.build_parser()` builds (from `OPERATIONS`,
plus the hand-added commands such as serve, hook and setup); the summaries and the MCP
columns from the `Operation`s. Dev-only, stdlib only; instinct.py is imported from the
repository root this file lives under.
"""
import argparse
import difflib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import instinct  # noqa: E402

WRITE_COMMAND = "python tools/cli_reference.py --write"


def _cell(text):
    """Text for one Markdown table cell: a `|` would end the cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _sentence(text):
    text = " ".join(text.split())
    if text and not text.endswith("."):
        text += "."
    return text[:1].upper() + text[1:]


def _metavar(action):
    if action.metavar:
        return action.metavar
    if action.choices:
        return "|".join(action.choices)
    if not action.option_strings:                 # a positional: its name
        return action.dest.upper()
    return {int: "N"}.get(action.type, action.dest.upper())


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    raise SystemExit("cli_reference: instinct.build_parser() has no subcommands")


def command_line(name, sub, common):
    """`observe PATTERN [--cat CATEGORY] ...`: positionals first, then the flags, as declared;
    the options every command shares (`common`: --db, --json, --version, --help) are left out."""
    required, optional, flags = [], [], []
    for a in sub._actions:
        if not a.option_strings:
            (optional if a.nargs == "?" else required).append(_metavar(a))
        elif not set(a.option_strings) <= common:
            flag = max(a.option_strings, key=len)
            word = flag if a.nargs == 0 else f"{flag} {_metavar(a)}"
            flags.append(word if a.required else f"[{word}]")
    nested = ""
    for word in reversed(optional):               # config [KEY [VALUE]]
        nested = f"[{word} {nested}]" if nested else f"[{word}]"
    return " ".join([name] + required + ([nested] if nested else []) + flags)


def _mcp_cell(op):
    if op is None or not op.mcp:
        return "—"
    notes = [n for n, on in (("listed", op.mcp in instinct._MCP.LEAN_TOOLS),
                             ("read-only", op.read_only), ("destructive", op.destructive)) if on]
    return f"`{op.mcp}`" + (f" ({', '.join(notes)})" if notes else "")


def cli_block():
    parser = instinct.build_parser()
    common = {s for a in parser._actions for s in a.option_strings}
    lines = ["| command | what it does | MCP tool |", "|---|---|---|"]
    for name, sub in _subparsers(parser).items():
        op = sub.get_default("_op")
        summary = op.summary if op is not None else sub.description
        lines.append(f"| `{_cell(command_line(name, sub, common))}` | {_cell(_sentence(summary))} "
                     f"| {_mcp_cell(op)} |")
    lines += ["", "MCP tool: the same operation as an MCP tool; *listed*: in `tools/list` by default, "
                  "*read-only* / *destructive*: its annotations; — : CLI only."]
    return lines


def mcp_block():
    tools = [op.mcp for op in instinct.OPERATIONS.values() if op.mcp]
    lean = [t for t in tools if t in instinct._MCP.LEAN_TOOLS]
    rest = [t for t in tools if t not in instinct._MCP.LEAN_TOOLS]
    return [f"- listed by default ({len(lean)}): " + ", ".join(f"`{t}`" for t in lean) + ";",
            f"- also listed with `INSTINCT_MCP_TOOLS=all` ({len(rest)}): "
            + ", ".join(f"`{t}`" for t in rest) + "."]


BLOCKS = {"cli-reference": cli_block, "mcp-tools": mcp_block}


class Drift(Exception):
    """The README cannot be compared or rewritten (missing markers...)."""


def _span(lines, name):
    """Line indexes of the begin and end markers of block `name`."""
    begin, end = f"<!-- {name}: begin -->", f"<!-- {name}: end -->"
    starts = [i for i, line in enumerate(lines) if line.strip() == begin]
    ends = [i for i, line in enumerate(lines) if line.strip() == end]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise Drift(f"needs exactly one '{begin}' line followed by one '{end}' line")
    return starts[0], ends[0]


def generate(text):
    """README text -> the same text with every block regenerated."""
    lines = text.split("\n")
    for name, make in BLOCKS.items():
        start, stop = _span(lines, name)
        lines[start + 1:stop] = make()
    return "\n".join(lines)


def first_difference(old, new):
    """One line naming where `old` (the README) differs from `new` (what would be generated)."""
    a, b = old.split("\n"), new.split("\n")
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        block = next((name for name in BLOCKS if _span(a, name)[0] < i1 <= _span(a, name)[1]), "?")
        where = f"line {i1 + 1} ({block} block)"
        if tag == "delete":
            return f"{where} has {_short(a[i1])!r}, which the registry no longer gives"
        if tag == "insert":
            return f"{where} lacks {_short(b[j1])!r}"
        row = re.match(r"\| `([^` ]+)", a[i1])
        if row:
            where += f", row `{row.group(1)}`"
        mine, theirs = _excerpts(a[i1], b[j1])
        return f"{where} has {mine!r} where the registry gives {theirs!r}"
    return "no difference"


def _short(line, width=90):
    return line if len(line) <= width else line[:width - 1] + "…"


def _excerpts(x, y, width=90, before=30):
    """The two lines from a little before their first differing character, shortened."""
    k = 0
    while k < min(len(x), len(y)) and x[k] == y[k]:
        k += 1
    start = max(0, k - before)
    return tuple(_short(("…" if start else "") + line[start:], width) for line in (x, y))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="cli_reference.py", description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 if the README's blocks are stale")
    mode.add_argument("--write", action="store_true", help="rewrite the README's blocks")
    ap.add_argument("--readme", default=str(ROOT / "README.md"), help="the file (default: README.md)")
    args = ap.parse_args(argv)
    if not (args.check or args.write):
        for name, make in BLOCKS.items():
            sys.stdout.write(f"<!-- {name}: begin -->\n" + "\n".join(make())
                             + f"\n<!-- {name}: end -->\n")
        return 0
    path = Path(args.readme)
    try:
        old = path.read_text(encoding="utf-8")
        new = generate(old)
    except (OSError, UnicodeDecodeError, Drift) as e:
        sys.stderr.write(f"cli_reference: {path}: {e}\n")
        return 1
    if args.check:
        if old != new:
            sys.stderr.write(f"cli_reference: {path} is out of date with instinct's registry: "
                             f"{first_difference(old, new)}; run `{WRITE_COMMAND}`\n")
            return 1
        return 0
    if old != new:
        path.write_text(new, encoding="utf-8")
        sys.stdout.write(f"rewrote the reference in {path}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
