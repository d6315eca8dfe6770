#!/usr/bin/env python3
"""instinct: self-learning memory for AI coding agents, in one stdlib-only file.

Every time a pattern recurs (a tool sequence ``seq:test->fix->test``, a
preference ``pref:stdlib-first``, a recurring fix ``fix:missing-import``, a tool
combo ``combo:pytest+coverage``) its confidence rises. ``consolidate`` promotes
it: confidence >= 5 is *mature* (suggested), >= 10 a *rule* (auto-applied), and
a rule seen in two or more projects becomes *universal*. ``decay`` lets stale
patterns fade and disappear.

Python::

    from instinct import InstinctStore
    with InstinctStore() as store:              # ~/.instinct/instinct.db or $INSTINCT_DB
        store.observe("seq:test->fix->test", source="claude-code")
        store.consolidate()
        store.suggest()

CLI::

    python instinct.py observe "seq:test->fix->test"
    python instinct.py consolidate
    python instinct.py suggest

MCP client config::

    {"mcpServers": {"instinct": {"command": "python3", "args": ["-m", "instinct", "serve"]}}}

Vendor it by copying this single file; stdlib only; Python >= 3.10.

Each concept has one owner: a class. Four layers, in this order: the kernel (sections 2-10:
storage, schema, the pattern grammar, the one writer of confidence, the operation registry); pure
readers shared by many (11-15: memory text, shell commands, tool calls, transcripts, client
config); one block per concept (16-23), its store class beside its pure half: patterns, memories,
then habits (mining's reading of sessions), rules (one wording for every channel) and learning,
then history, sharing and insight; the store classes make up InstinctStore; and the surfaces last
(24-28: InstinctStore, the MCP server, hooks, the CLI). A function that needs no instance is a
@staticmethod, called by its full name (`_Shell.command_shapes(cmd)`); no section uses a later
one.

Sections:
     1. Header
     2. Imports and metadata
     3. Constants
     4. Exceptions
     5. Small helpers (time, JSON, text checks, files)
     6. Patterns and projects (pattern grammar, categories, levels, fingerprints, opt-outs)
     7. Schema and migrations
     8. Database connection (WAL, busy timeout, atomic writes)
     9. Operation registry (one table for API, CLI and MCP)
    10. The kernel (connection, the one writer of confidence, evidence and notes, event kinds)
    11. Memory text and staleness anchors (keys, redaction, memory files, anchors)
    12. Shell commands (the shape reader: program and subcommand, never arguments)
    13. Agent clients and tool calls (the client table, a hook payload, the call record)
    14. Agent transcripts (past Claude Code, Codex, Gemini CLI, Copilot CLI and Cursor sessions)
    15. Client setup (`instinct setup`)
    16. Patterns: the seeds' operations (observe, suggest, forget, merge, consolidate, decay)
    17. Knowledge memories (remember, recall, forget)
    18. Habits in sessions (what mining reads of each session: steps, n-grams, habits, fixes)
    19. Rules (one selection and wording for every channel, rules files, lint, export_rules)
    20. Learning and hints (capture, mining passes, the briefing, hints at the point of action)
    21. History import (replaying past sessions through capture and mining)
    22. Sharing (import, merge, backup, restore, doctor, gc, purge)
    23. Insight and feedback (explain, history, effectiveness, feedback, conflicts)
    24. InstinctStore (the public class)
    25. MCP stdio server
    26. Hooks (`instinct hook EVENT`)
    27. CLI
    28. Entry point

MIT License.
"""


# =============================================================================
# 2. Imports and metadata
# =============================================================================
# Only cheap modules at import time (a hook or CLI process pays for each); the rest where needed.
import functools                 # already loaded by the interpreter's start-up
from collections import Counter, namedtuple  # (so are these: functools imports them)
from itertools import groupby
import os
import sqlite3
import sys
import time

if sys.version_info < (3, 10):       # before anything an older Python would trip on
    if __name__ != "__main__":
        raise ImportError("instinct needs Python 3.10+")
    sys.stderr.write("instinct needs Python 3.10+ (this is Python %d.%d)\n" % sys.version_info[:2])
    raise SystemExit(0 if "hook" in sys.argv[1:4] else 1)      # a hook always exits 0

__version__ = "0.1.0"
__all__ = [
    "InstinctStore", "project_fingerprint", "project_root", "normalize_pattern",
    "main", "serve", "OPERATIONS",
    "InstinctError", "ValidationError", "NotFoundError", "StoreError",
]


# =============================================================================
# 3. Constants
# =============================================================================
ENV_DB = "INSTINCT_DB"
ENV_SESSION = "INSTINCT_SESSION"
DEFAULT_DB = os.path.join("~", ".instinct", "instinct.db")
SCHEMA_VERSION = 17
BUSY_TIMEOUT_S = 30.0
# Hooks and CLI: a commit past ~4 MB of WAL checkpoints (PASSIVE), a restarting WAL is cut to 4 MB.
# The MCP server checkpoints every 10,000 pages (~14 % faster observe); the next hook trims it.
WAL_AUTOCHECKPOINT_PAGES = 1_000
WAL_SERVER_CHECKPOINT_PAGES = 10_000
WAL_SIZE_LIMIT = 4 * 1024 * 1024
HOOK_INPUT_MAX = 4 * 1024 * 1024        # the most of a hook's stdin read; more is refused

LEVELS = ("raw", "mature", "rule", "universal")      # promoted = index
CATEGORY_BY_PREFIX = {"seq": "sequence", "pref": "preference",
                      "fix": "fix_pattern", "combo": "combo"}
DEFAULT_CATEGORY = "sequence"

MAX_PATTERN = 1000
MAX_METADATA = 64 * 1024
MAX_SHORT = 200                   # source, category, setting names
MAX_IMPORT_BYTES = 128 * 1024 * 1024     # a rules file `import` reads (200k records take ~60 MB)
MAX_MEMORY_FILE = 1024 * 1024            # one Markdown memory file
MAX_MEMORY_DIR = 64 * 1024 * 1024        # every Markdown memory file of one import together
SURFACE_REPEAT_S = 3600           # suggest: the same list shown again within this is one showing
SURFACE_MAX_EVENTS = 2000         # surface events kept (newest), about 9 MB at most
MAX_INT_ARG = 10**9               # bound of an integer argument whose Param names none
MAX_DEPTH = 512                   # nesting of a JSON object argument (metadata)

# Settings stored in the database (`instinct config`); values are integers.
SETTINGS = {
    "mature_threshold": (5, "confidence at which a pattern becomes mature (suggested)"),
    "rule_threshold": (10, "confidence at which a pattern becomes a rule (auto-applied)"),
    "universal_projects": (2, "projects a rule must appear in to become universal"),
    "events_max_days": (365, "event-log retention in days"),
    "events_max_rows": (1_000_000, "event-log retention in rows"),
    "suggest_limit": (50, "suggestions returned when no limit is given (keeps agent context"
                          " small)"),
    "list_limit": (200, "list/search results returned when no limit is given"),
    "feedback_bad_quiet": (3, "observations needed after `feedback bad` before it is suggested"
                              " again"),
    "memory_weight_relevance": (60, "recall: weight of full-text relevance (weights are shares of"
                                    " their sum)"),
    "memory_weight_recency": (20, "recall: weight of recency"),
    "memory_weight_confidence": (15, "recall: weight of confidence"),
    "memory_weight_usage": (5, "recall: weight of usage (times recalled)"),
    "memory_gc_days": (180, "days an archived memory is kept before gc deletes it"),
    "holdout_percent": (10, "share of hints and briefing items held back at random, to measure"
                            " their lift (effectiveness)"),
    "hint_demote": (0, "1: a hint or briefing item whose lift is shown to be below 0.05 is"
                       " given no more"),
}
_SETTING_RANGES = {"holdout_percent": (0, 100), "hint_demote": (0, 1)}   # others: 1 .. 10**9
_THRESHOLD_KEYS = ("mature_threshold", "rule_threshold")
# A row's threshold, first found wins: `pattern.<pattern>.<threshold>`, `category.<category>.
# <threshold>`, the store-wide setting, the default (consolidate's SQL and explain both use it).
_THRESHOLD_SCOPES = ("pattern", "category")

# Project root markers: version control first (nearest wins), then build files.
ROOT_MARKERS = (".instinct-project", ".git", ".hg", ".svn", ".jj")
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "package.json", "Cargo.toml",
                   "go.mod", "pom.xml", "build.gradle", "Gemfile", "composer.json")

MAX_LIMIT = 1000                       # the largest `limit` any operation accepts
AUTO_BACKUPS = 10                      # automatic backups kept beside the store (forget, purge, gc)

# Well-known secret prefixes: the shape reader refuses them (section 12), memories redact them (11)
_SECRET_PREFIXES = ("ghp_", "gho_", "ghs_", "ghu_", "github_pat_", "sk-", "xox", "akia", "aiza",
                    "glpat-", "eyj", "npm_", "pypi-")


# =============================================================================
# 4. Exceptions
# =============================================================================
class InstinctError(Exception):
    """Root of every error instinct raises on purpose."""
    exit_code = 1


class ValidationError(InstinctError, ValueError):
    """An argument was refused; nothing was written."""
    exit_code = 2


class NotFoundError(InstinctError, LookupError):
    """The pattern (or other record) does not exist."""


class StoreError(InstinctError):
    """The database cannot be opened, read or written."""


# =============================================================================
# 5. Small helpers (time, JSON, text checks, files)
# =============================================================================
def _iso(t):
    """Epoch seconds -> '2026-11-29T13:20:09.123456+00:00' (fixed width, sortable)."""
    sec, us = divmod(round(t * 1e6), 1000000)      # round: int() loses a microsecond
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)) + ".%06d+00:00" % us


def _parse_iso(text):
    """ISO-8601 text -> epoch seconds; naive times are taken as UTC. None if unreadable."""
    from datetime import datetime, timezone
    try:
        d = datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return d.replace(tzinfo=d.tzinfo or timezone.utc).timestamp()


@functools.lru_cache(maxsize=None)
def _encoder(indent=None, ascii=False):
    """A JSON encoder built on first use: UTF-8 kept, or pure ASCII for protocol lines."""
    import json
    return json.JSONEncoder(ensure_ascii=ascii, allow_nan=False, indent=indent,
                            separators=(",", ": ") if indent else (",", ":"))


def _dumps(obj, indent=None):
    """Compact (or indented) JSON text, UTF-8 kept, NaN/Infinity refused."""
    return _encoder(indent).encode(obj)


def _shown(text):
    """`text` as it may reach an agent, a terminal or a file: control, bidi and zero-width
    characters (of a stored name) as visible escapes, `\\u202e`; JSON text keeps its values."""
    if text.isascii() and text.isprintable():       # the common case: nothing to escape
        return text
    return text.translate(_shown_table())


@functools.lru_cache(maxsize=1)
def _shown_table():               # str.translate, not re (~3 ms to import on every CLI call)
    spans = ((0, 8), (11, 12), (14, 31), (0x7f, 0x9f), (0x61c, 0x61c), (0x180e, 0x180e),
             (0x200b, 0x200f), (0x2028, 0x202e), (0x2060, 0x206f), (0xfeff, 0xfeff))
    return {c: "\\u%04x" % c for lo, hi in spans for c in range(lo, hi + 1)}


class _JSONDefaults:
    """What the json module's C scanner reads from its decoder: json.loads' defaults."""
    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int
    parse_constant = {"NaN": float("nan"), "Infinity": float("inf"),
                      "-Infinity": float("-inf")}.__getitem__


class _StrictJSON(_JSONDefaults):
    """The same, refusing NaN and Infinity (not JSON; MCP messages)."""

    @staticmethod
    def parse_constant(name):
        raise ValueError(f"{name} is not valid JSON")


@functools.lru_cache(maxsize=None)
def _json_scanner(strict=False):
    context = _StrictJSON() if strict else _JSONDefaults()
    try:
        from _json import make_scanner
    except ImportError:                    # a Python without the C accelerator: json's own
        import json
        return json.JSONDecoder(parse_constant=context.parse_constant).scan_once
    return make_scanner(context)


def _loads(text, strict=False):
    """json.loads(text) without importing json (~4 ms of a ~23 ms hook); `strict` refuses NaN.
    What the scanner does not read whole, json.loads decides (ValueError, RecursionError)."""
    s = text.strip(" \t\n\r")
    try:
        value, end = _json_scanner(strict)(s, 0)
        if end == len(s):
            return value
    except RecursionError:
        raise
    except Exception:                      # noqa: BLE001 - json.loads gives the real answer
        pass
    import json
    return json.loads(s, parse_constant=_StrictJSON.parse_constant if strict else None)


def _loads_meta(text):
    if not text or text == "{}":
        return {}
    import json
    try:
        value = json.loads(text)
    except ValueError:
        return {"_raw": text}
    return value if isinstance(value, dict) else {"_value": value}


def _whole(text):
    """`text` as an int if it is ASCII digits with an optional '-', else None (isdigit: '²')."""
    digits = text[1:] if text[:1] == "-" else text
    return int(text) if digits.isascii() and digits.isdigit() else None


def _bad_chars(s):
    """True when s holds control characters or lone surrogates."""
    if s.isprintable():
        return False
    return any(o < 32 or 127 <= o < 160 or 0xD800 <= o <= 0xDFFF for o in map(ord, s))


def _check_text(value, what, limit=MAX_SHORT, empty_ok=True):
    if not isinstance(value, str):
        raise ValidationError(f"{what} must be a string")
    if not empty_ok and not value.strip():
        raise ValidationError(f"{what} must not be empty")
    if len(value) > limit:
        raise ValidationError(f"{what} is longer than {limit} characters")
    if _bad_chars(value):
        raise ValidationError(f"{what} must not contain control characters")
    return value


def _check_int(value, what, lo, hi):
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValidationError(f"{what} must be a whole number from {lo} to {hi}")
    return value


def _check_metadata(metadata):
    """None or a JSON object of at most 64 KiB -> its JSON text."""
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise ValidationError("metadata must be a JSON object")
    try:
        text = _dumps(metadata)
    except (TypeError, ValueError) as e:
        raise ValidationError(f"metadata is not valid JSON: {e}") from None
    if len(text.encode("utf-8", "surrogatepass")) > MAX_METADATA:
        raise ValidationError(f"metadata is larger than {MAX_METADATA // 1024} KiB")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError("metadata must not contain lone surrogates") from None
    return text


def _inside(folder, paths):
    """-> (the regular files of `paths` whose real path stays in `folder`, how many pointed out)."""
    root = os.path.join(os.path.realpath(folder), "")
    kept, out = [], 0
    for p in paths:
        if not os.path.realpath(p).startswith(root):
            out += 1
        elif os.path.isfile(p):
            kept.append(p)
    return kept, out


def _open_regular(path):
    """(binary file, os.stat) of regular file `path`, checked, then opened without blocking: a
    FIFO, a device (a link to /dev/zero) or a folder in its place is a ValidationError."""
    import stat
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise ValidationError(f"{path} is not a regular file")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):                # swapped since the check
        os.close(fd)
        raise ValidationError(f"{path} is not a regular file")
    return open(fd, "rb"), st


def _read_regular(path, limit, tail=False):
    """The bytes of regular file `path` (at most `limit`; `tail`: the last `limit` of a longer
    one) or ValidationError; FIFOs and devices never hang. The one reader of files not ours."""
    f, st = _open_regular(path)
    with f:                                          # one that grew since fstat ends here too
        if tail:
            f.seek(max(0, st.st_size - limit))
        data = f.read(limit + 1) if tail or st.st_size <= limit else None
    if data is None or len(data) > limit and not tail:
        raise ValidationError(f"{path} is larger than {limit // (1024 * 1024)} MiB")
    return data[:limit]


# =============================================================================
# 6. Patterns and projects (pattern grammar, categories, levels, fingerprints, opt-outs)
# =============================================================================
def normalize_pattern(pattern):
    """Return the canonical spelling of a pattern, or raise ValidationError.

    Collapses whitespace, lower-cases the prefix, turns '→' into '->', drops spaces around '->',
    '+' and '=', and reads ' - ' or ' > ' in ``seq:`` as '->' (``seq:test - fix``)."""
    if not isinstance(pattern, str):
        raise ValidationError("pattern must be a string")
    if _bad_chars(pattern):
        raise ValidationError("pattern must not contain control characters")
    s = pattern
    if not s.isascii():
        import unicodedata
        s = unicodedata.normalize("NFC", s).replace("\u2192", "->").replace("\u27f6", "->")
    s = " ".join(s.split())
    head, colon, body = s.partition(":")
    if (colon and head and len(head) <= 32
            and head.strip().replace("_", "").replace("-", "").isalnum()):
        head = head.strip().lower()
        body = body.strip()
        if head == "seq":
            body = body.replace(" - ", "->").replace(" > ", "->").replace(" => ", "->")
        s = head + ":" + body
        if not body:
            raise ValidationError(f"pattern {pattern!r} has a prefix but nothing after it")
    for sep in ("->", "+", "="):
        s = s.replace(" " + sep, sep).replace(sep + " ", sep)
    if not s:
        raise ValidationError("pattern must not be empty")
    if len(s) > MAX_PATTERN:
        raise ValidationError(f"pattern is longer than {MAX_PATTERN} characters")
    return s


class _Pattern:
    """The learned-pattern grammar, read and written here only: `seq:a->b->c` (steps in order),
    `combo:a+b` (used together), `fix:a by b` (a failure and the step that fixed it),
    `pref:key=value` (a preference; `pref:test=mix test` is a project command with its role),
    `pref:command:shape` and `pref:tool:Name` (a command or a tool the project relies on)."""

    @staticmethod
    def parts(p):
        """'seq:a->b' -> ('seq', 'a->b'); ('', p) without a prefix."""
        head, colon, body = p.partition(":")
        return (head, body) if colon else ("", p)

    @staticmethod
    def pref(p):
        """'pref:tz=UTC' -> ('tz', 'UTC'); a body without '=' -> (the body, None)."""
        key, eq, value = _Pattern.parts(p)[1].partition("=")
        return key, (value if eq else None)

    @staticmethod
    def named(p):
        """'pref:tool:Task(Explore)' -> ('tool', 'Task(Explore)'); 'pref:command:x' likewise."""
        kind, _, name = _Pattern.parts(p)[1].partition(":")
        return kind, name

    @staticmethod
    def fix(p):
        """'fix:mix test by mix deps.get' -> ('mix test', 'mix deps.get')."""
        failed, _, by = _Pattern.parts(p)[1].partition(" by ")
        return failed, by

    @staticmethod
    def steps(p):
        """The steps a session takes to use a mined item, in order (a combo's in any order)."""
        head, body = _Pattern.parts(p)
        if head == "seq":
            return body.split("->")
        if head == "combo":
            return sorted(body.split("+"))
        if head == "fix":
            return [_Pattern.fix(p)[0]]
        if head == "pref" and body.startswith(("command:", "tool:")):
            return [_Pattern.named(p)[1]]
        return [_Pattern.pref(p)[1]] if head == "pref" and "=" in body else []

    @staticmethod
    def written(p):
        """Every step of a workflow or a combo as written (a combo's in its order)."""
        return _Pattern.parts(p)[1].replace("->", "+").split("+")

    @staticmethod
    def seq(steps):
        return "seq:" + "->".join(steps)

    @staticmethod
    def combo(steps):
        return "combo:" + "+".join(steps)

    @staticmethod
    def fixed(failed, by):
        return f"fix:{failed} by {by}"

    @staticmethod
    def command(step, role=None, shell=True):
        """A habit step -> 'pref:test=mix test' (its role), else 'pref:command:just verify' or
        'pref:tool:Task(Explore)'."""
        return f"pref:{role}={step}" if role else f"pref:{'command' if shell else 'tool'}:{step}"


def category_for(pattern):
    """Category implied by a pattern's prefix (``seq:`` -> sequence, ...)."""
    return CATEGORY_BY_PREFIX.get(_Pattern.parts(pattern)[0], DEFAULT_CATEGORY)


def _check_category(category):
    _check_text(category, "category", 64, empty_ok=False)
    c = category.strip().lower()
    if not c.replace("_", "").replace("-", "").isalnum():
        raise ValidationError("category may hold only letters, digits, '_' and '-'")
    return c


def project_root(path=None):
    """The project directory containing `path` (default: the working directory): the nearest
    ancestor holding a ROOT_MARKERS entry (``.git``...), else a build file, else the directory
    itself; below home, so a dotfiles repository in ``~`` does not make all one project."""
    p = os.path.realpath(os.path.expanduser(os.fspath(path)) if path else os.getcwd())
    if os.path.isfile(p):
        p = os.path.dirname(p)
    home = os.path.realpath(os.path.expanduser("~"))
    chain = [p]
    while os.path.dirname(chain[-1]) not in (chain[-1], home):
        chain.append(os.path.dirname(chain[-1]))
    for markers in (ROOT_MARKERS, PROJECT_MARKERS):
        for d in chain:
            for m in markers:
                if os.path.exists(os.path.join(d, m)):
                    return _worktree_main(d) if m == ".git" else d
    return p


def _worktree_main(root):
    """The main checkout of a git worktree (`.git` file -> gitdir -> commondir), else `root`."""
    dotgit = os.path.join(root, ".git")
    if not os.path.isfile(dotgit):
        return root
    try:
        line = _read_regular(dotgit, 4096).decode("utf-8").strip()
        if not line.startswith("gitdir:"):
            return root
        gitdir = os.path.join(root, line[7:].strip())
        common = _read_regular(os.path.join(gitdir, "commondir"), 4096).decode("utf-8")
        common = os.path.realpath(os.path.join(gitdir, common.strip()))
    except (OSError, ValueError):
        return root
    if os.path.basename(common) == ".git" and os.path.isdir(common):
        return os.path.dirname(common)
    return common if os.path.isdir(common) else root      # a bare repository's worktrees


@functools.lru_cache(maxsize=None)
def _sha256():
    # CPython's built-in module (_sha256 before 3.12, _sha2 since): ~0.4 ms to import against
    # ~3 ms for hashlib (OpenSSL), paid by every hook; cached, as a failed import is not.
    try:
        from _sha2 import sha256                       # type: ignore[import-not-found]
    except ImportError:
        try:
            from _sha256 import sha256                 # type: ignore[import-not-found]
        except ImportError:
            from hashlib import sha256
    return sha256


def _sha256_hex(text):
    return _sha256()(text.encode("utf-8", "surrogatepass")).hexdigest()


def project_fingerprint(path=None):
    """First 12 hex of sha256 of the resolved project root of `path`."""
    return _sha256_hex(project_root(path))[:12]


def _repo_id(root):
    """A project's id on every machine (a shared file's): 12 hex of sha256 of its `origin` URL
    in the git config as host/path (no scheme, user, port or .git), else its fingerprint."""
    import re
    for config in (os.path.join(root, ".git", "config"), os.path.join(root, "config")):
        try:
            text = _read_regular(config, 1 << 20).decode("utf-8", "replace")
        except (OSError, ValidationError):
            continue
        m = re.search(r'^\s*\[remote\s+"origin"\]\s*$((?:\n(?!\s*\[).*)*)', text, re.M)
        url = m and re.search(r"^\s*url\s*=\s*(\S+)", m.group(1), re.M)
        if url:
            u = re.sub(r"^([a-z][a-z0-9+.-]*://)?([^@/]*@)?([^/:]+)(:(\d+/)?)?/?", r"\3/",
                       url.group(1).lower())
            return _sha256_hex(re.sub(r"(\.git)?/*$", "", u))[:12]
    return _sha256_hex(root)[:12]


def _forgotten_key(pattern, project, key=None):
    """A tombstone's key (section 10): a hash keyed with the store's key file, so no copy of a
    forgotten pattern is kept and a backup alone gives none back; no key: the unkeyed form that
    stores before schema v16 wrote (still honoured)."""
    if key is None:
        return "p" + _sha256_hex(f"{pattern}\x1f{project}")[:31]
    return "k" + _keyed(key, f"{pattern}\x1f{project}", 16)


def _keyed(key, text, size=5):
    """A keyed BLAKE2b of `text` (2*size hex); CPython's built-in _blake2, not hashlib's
    OpenSSL import (~3 ms on every observe and hook)."""
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
    return blake2b(text.encode("utf-8", "surrogatepass"), key=key, digest_size=size).hexdigest()


def _is_fingerprint(s):
    return len(s) == 12 and all(c in "0123456789abcdef" for c in s)


def _resolve_project(project, default_dir=None):
    """'' (global), a 12-hex fingerprint, a path (relative: to `default_dir`), or None
    (`default_dir`'s) -> project key."""
    if project is None:
        return project_fingerprint(default_dir)
    _check_text(project, "project", 4096)
    if project == "" or _is_fingerprint(project):
        return project
    path = os.path.join(default_dir or os.getcwd(), os.path.expanduser(project))
    if os.path.isdir(path):
        return project_fingerprint(path)
    raise ValidationError(
        f"project {project!r} is neither '' (global), a 12-hex fingerprint, nor an existing"
        " directory")


def _level_for(confidence, mature, rule):
    """The level (index into LEVELS, universal aside) a confidence reaches."""
    if confidence >= rule:
        return 2
    return 1 if confidence >= mature else 0


def _level_sql(confidence, mature, rule):
    """`_level_for` as an SQL expression over SQL operands (consolidate's form)."""
    return (f"CASE WHEN {confidence} >= {rule} THEN 2 WHEN {confidence} >= {mature} THEN 1"
            " ELSE 0 END")


def _disabled_reason(payload, cwd):
    if os.environ.get("INSTINCT_DISABLE", "") not in ("", "0"):
        return "INSTINCT_DISABLE is set"
    if payload.get("agent_id"):
        return "subagent session"
    d, below = cwd, None
    while d and d != below:
        if os.path.exists(os.path.join(d, ".instinct-disable")):
            return f"{d}/.instinct-disable opts this project out"
        d, below = os.path.dirname(d), d
    return None


# =============================================================================
# 7. Schema and migrations
# =============================================================================
class _Schema:
    """The schema: MIGRATIONS[i] takes a store from version i to i + 1 (append-only)."""

    # An explicit integer id keeps the full-text index valid across VACUUM; decayed_at is the
    # last decay charge, so running decay often never charges twice per period.
    V1 = """
CREATE TABLE instincts (
    id         INTEGER PRIMARY KEY,
    pattern    TEXT NOT NULL,
    category   TEXT NOT NULL DEFAULT 'sequence',
    confidence INTEGER NOT NULL DEFAULT 1,
    first_seen TEXT NOT NULL,
    last_seen  TEXT NOT NULL,
    source     TEXT NOT NULL DEFAULT '',
    project    TEXT NOT NULL DEFAULT '',
    promoted   INTEGER NOT NULL DEFAULT 0,
    metadata   TEXT NOT NULL DEFAULT '{}',
    decayed_at TEXT NOT NULL DEFAULT '',
    UNIQUE (pattern, project)
);
CREATE INDEX ix_instincts_active ON instincts(project, promoted) WHERE promoted > 0;
CREATE INDEX ix_instincts_level ON instincts(promoted) WHERE promoted > 0;
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE aliases (alias TEXT PRIMARY KEY, pattern TEXT NOT NULL);
CREATE TABLE events (
    id      INTEGER PRIMARY KEY,
    ts      TEXT NOT NULL,
    kind    TEXT NOT NULL,
    pattern TEXT NOT NULL DEFAULT '',
    project TEXT NOT NULL DEFAULT '',
    source  TEXT NOT NULL DEFAULT '',
    session TEXT NOT NULL DEFAULT '',
    delta   INTEGER NOT NULL DEFAULT 0,
    data    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX ix_events_pattern ON events(pattern, project) WHERE pattern != '';
"""
    V2_FTS = """
CREATE VIRTUAL TABLE instincts_fts USING fts5(
    pattern, category, content='instincts', content_rowid='id');
CREATE TRIGGER instincts_fts_ai AFTER INSERT ON instincts BEGIN
    INSERT INTO instincts_fts(rowid, pattern, category) VALUES (new.id, new.pattern, new.category);
END;
CREATE TRIGGER instincts_fts_ad AFTER DELETE ON instincts BEGIN
    INSERT INTO instincts_fts(instincts_fts, rowid, pattern, category)
        VALUES ('delete', old.id, old.pattern, old.category);
END;
CREATE TRIGGER instincts_fts_au AFTER UPDATE OF pattern, category ON instincts
WHEN old.pattern != new.pattern OR old.category != new.category BEGIN
    INSERT INTO instincts_fts(instincts_fts, rowid, pattern, category)
        VALUES ('delete', old.id, old.pattern, old.category);
    INSERT INTO instincts_fts(rowid, pattern, category) VALUES (new.id, new.pattern, new.category);
END;
INSERT INTO instincts_fts(instincts_fts) VALUES ('rebuild');
"""
    SEED_COLUMNS = {"pattern", "category", "confidence", "first_seen", "last_seen",
                    "source", "project", "promoted", "metadata"}

    @staticmethod
    def _statements(script):
        """Split a schema script into statements (SQLite's own test: a trigger body is one)."""
        out, buf = [], ""
        for line in script.strip().splitlines(keepends=True):
            buf += line
            if sqlite3.complete_statement(buf):
                out.append(buf.strip())
                buf = ""
        return out

    @staticmethod
    def _run(conn, script):
        """Execute a schema script inside the open transaction (executescript would commit)."""
        for stmt in _Schema._statements(script):
            conn.execute(stmt)

    @staticmethod
    def _v1(conn):
        """Create the tables, upgrading a seeds-era `instincts` table in place."""
        cols = {r[1] for r in conn.execute("PRAGMA table_info(instincts)")}
        if cols and not _Schema.SEED_COLUMNS <= cols:
            raise StoreError("this database has an 'instincts' table that instinct did not create")
        other = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type IN"
                                            " ('table', 'view')"
                                            " AND name NOT LIKE 'sqlite%' AND name != 'instincts'")]
        if other:                 # another application's database: leave it alone
            raise StoreError("this is not an instinct database"
                             f" (it holds: {', '.join(sorted(other)[:5])})")
        if cols:
            conn.execute("ALTER TABLE instincts RENAME TO _instincts_seed")
        _Schema._run(conn, _Schema.V1)
        if cols:
            rows = conn.execute(
                "SELECT pattern, category, confidence, first_seen, last_seen, source, project,"
                " promoted, metadata FROM _instincts_seed").fetchall()
            now = _iso(time.time())

            def ts(v):
                t = _parse_iso(v) if v else None
                return _iso(t) if t is not None else (str(v) if v else now)
            conn.executemany(
                "INSERT INTO instincts (pattern, category, confidence, first_seen, last_seen,"
                " source, project, promoted, metadata) VALUES (?,?,?,?,?,?,?,?,?)",
                [(str(p), c or DEFAULT_CATEGORY, int(n if n is not None else 1), ts(f), ts(l),
                  s or "", pr or "", max(0, min(3, int(pm or 0))), m or "{}")
                 for p, c, n, f, l, s, pr, pm, m in rows])
            conn.execute("DROP TABLE _instincts_seed")

    @staticmethod
    def _v2(conn):
        """Full-text index over patterns, when this SQLite build has FTS5."""
        if _Schema._has_fts5(conn):
            _Schema._run(conn, _Schema.V2_FTS)

    @staticmethod
    def _v3(conn):
        """Insight and feedback (section 23): the bad-feedback quiet count, surfaced suggestions."""
        conn.execute("ALTER TABLE instincts ADD COLUMN quiet INTEGER NOT NULL DEFAULT 0")
        conn.execute("CREATE INDEX ix_events_surface ON events(ts) WHERE kind = 'surface'")

    V4 = """
CREATE TABLE memories (
    id            INTEGER PRIMARY KEY,
    type          TEXT NOT NULL,
    title         TEXT NOT NULL,
    content       TEXT NOT NULL DEFAULT '',
    why           TEXT NOT NULL DEFAULT '',
    how_to_apply  TEXT NOT NULL DEFAULT '',
    tags          TEXT NOT NULL DEFAULT '',
    project       TEXT NOT NULL DEFAULT '',
    source        TEXT NOT NULL DEFAULT '',
    confidence    INTEGER NOT NULL DEFAULT 1,
    created       TEXT NOT NULL,
    updated       TEXT NOT NULL,
    last_recalled TEXT NOT NULL DEFAULT '',
    recall_count  INTEGER NOT NULL DEFAULT 0,
    archived      INTEGER NOT NULL DEFAULT 0,
    archived_at   TEXT NOT NULL DEFAULT '',
    supersedes    INTEGER,
    superseded_by INTEGER,
    metadata      TEXT NOT NULL DEFAULT '{}',
    decayed_at    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX ix_memories_scope ON memories(project, type) WHERE archived = 0;
CREATE TABLE memory_keys (
    key       INTEGER NOT NULL,
    memory_id INTEGER NOT NULL,
    PRIMARY KEY (key, memory_id)
) WITHOUT ROWID;
CREATE INDEX ix_memory_keys_memory ON memory_keys(memory_id);
CREATE TRIGGER memories_keys_ad AFTER DELETE ON memories BEGIN
    DELETE FROM memory_keys WHERE memory_id = old.id;
END;
"""
    V4_FTS = """
CREATE VIRTUAL TABLE memories_fts USING fts5(
    title, content, why, how_to_apply, tags, content='memories', content_rowid='id',
    tokenize='porter unicode61');
CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, title, content, why, how_to_apply, tags)
        VALUES (new.id, new.title, new.content, new.why, new.how_to_apply, new.tags);
END;
CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, title, content, why, how_to_apply, tags)
        VALUES ('delete', old.id, old.title, old.content, old.why, old.how_to_apply, old.tags);
END;
CREATE TRIGGER memories_fts_au AFTER UPDATE OF title, content, why, how_to_apply, tags ON memories
WHEN old.title != new.title OR old.content != new.content OR old.why != new.why
     OR old.how_to_apply != new.how_to_apply OR old.tags != new.tags BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, title, content, why, how_to_apply, tags)
        VALUES ('delete', old.id, old.title, old.content, old.why, old.how_to_apply, old.tags);
    INSERT INTO memories_fts(rowid, title, content, why, how_to_apply, tags)
        VALUES (new.id, new.title, new.content, new.why, new.how_to_apply, new.tags);
END;
"""

    @staticmethod
    def _v4(conn):
        """Knowledge memories (section 17), their near-duplicate keys, FTS5 when available."""
        _Schema._run(conn, _Schema.V4)
        if _Schema._has_fts5(conn):
            _Schema._run(conn, _Schema.V4_FTS)

    @staticmethod
    def _v5(conn):
        """Learning from tool calls (sections 13, 18 and 20): per-session mining bookkeeping."""
        conn.execute("CREATE INDEX ix_events_session ON events(session, id) WHERE session != ''")
        conn.execute("CREATE TABLE mined (session TEXT NOT NULL, pattern TEXT NOT NULL,"
                     " project TEXT NOT NULL, ts TEXT NOT NULL,"
                     " PRIMARY KEY (session, pattern, project)) WITHOUT ROWID")
        conn.execute("CREATE TABLE mined_sessions (session TEXT PRIMARY KEY,"
                     " last_id INTEGER NOT NULL)")

    @staticmethod
    def _v6(conn):
        """Sharing (sections 19 and 22)."""

    V7_SUGGEST_INDEX = """
DROP INDEX ix_instincts_active;
DROP INDEX ix_instincts_level;
CREATE INDEX ix_instincts_suggest ON instincts(promoted, project, confidence, quiet, pattern)
    WHERE promoted > 0;
"""
    V7_LAZY_FTS = """
CREATE TABLE fts_state (indexed_id INTEGER NOT NULL);
INSERT INTO fts_state (indexed_id) SELECT coalesce(max(id), 0) FROM instincts;
DROP TRIGGER instincts_fts_ai;
DROP TRIGGER instincts_fts_ad;
DROP TRIGGER instincts_fts_au;
CREATE TRIGGER instincts_fts_ai AFTER INSERT ON instincts
WHEN new.id <= (SELECT indexed_id FROM fts_state) BEGIN
    INSERT INTO instincts_fts(rowid, pattern, category) VALUES (new.id, new.pattern, new.category);
END;
CREATE TRIGGER instincts_fts_ad AFTER DELETE ON instincts
WHEN old.id <= (SELECT indexed_id FROM fts_state) BEGIN
    INSERT INTO instincts_fts(instincts_fts, rowid, pattern, category)
        VALUES ('delete', old.id, old.pattern, old.category);
END;
CREATE TRIGGER instincts_fts_au AFTER UPDATE OF pattern, category ON instincts
WHEN (old.pattern != new.pattern OR old.category != new.category)
     AND old.id <= (SELECT indexed_id FROM fts_state) BEGIN
    INSERT INTO instincts_fts(instincts_fts, rowid, pattern, category)
        VALUES ('delete', old.id, old.pattern, old.category);
    INSERT INTO instincts_fts(rowid, pattern, category) VALUES (new.id, new.pattern, new.category);
END;
"""

    @staticmethod
    def _v7(conn):
        """Lazy full-text indexing (`_Core._fts_sync`: an FTS5 insert per new pattern nearly
        doubled the cost of observe); a covering index for suggest's ranking."""
        _Schema._run(conn, _Schema.V7_SUGGEST_INDEX)
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'instincts_fts'").fetchone():
            _Schema._run(conn, _Schema.V7_LAZY_FTS)

    V8_LAZY_EVENT_INDEX = """
ALTER TABLE events ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;
DROP INDEX ix_events_pattern;
CREATE INDEX ix_events_pattern ON events(pattern, project) WHERE pattern != '' AND pending = 0;
CREATE TABLE events_state (indexed_id INTEGER NOT NULL);
INSERT INTO events_state (indexed_id) SELECT coalesce(max(id), 0) FROM events;
CREATE TRIGGER events_pending_ai AFTER INSERT ON events
WHEN new.pending = 1 AND new.id <= (SELECT coalesce(max(indexed_id), 0) FROM events_state) BEGIN
    UPDATE events SET pending = 0 WHERE id = new.id;
END;
"""

    @staticmethod
    def _v8(conn):
        """Lazy pattern index for observe events (pending = 1), undone by v10."""
        _Schema._run(conn, _Schema.V8_LAZY_EVENT_INDEX)

    @staticmethod
    def _v9(conn):
        """Mining compares a project's sessions: mined_sessions knows each session's project."""
        conn.execute("ALTER TABLE mined_sessions ADD COLUMN project TEXT NOT NULL DEFAULT ''")
        conn.execute("UPDATE mined_sessions SET project = coalesce((SELECT e.project FROM events e"
                     " WHERE e.session = mined_sessions.session AND e.kind IN ('tool', 'tool_fail')"
                     " LIMIT 1), '')")
        conn.execute("CREATE INDEX ix_mined_sessions_project ON mined_sessions(project, last_id)")
        # events up to seen_id were read by a full mining pass: the next one reads only the tail
        conn.execute("CREATE TABLE mining_state (seen_id INTEGER NOT NULL)")
        conn.execute("INSERT INTO mining_state (seen_id) VALUES (0)")

    @staticmethod
    def _v10(conn):
        """Undo v8: `pending` is dropped where SQLite can (3.35+), else left unused."""
        conn.execute("DROP TRIGGER IF EXISTS events_pending_ai")
        conn.execute("DROP TABLE IF EXISTS events_state")
        conn.execute("DROP INDEX IF EXISTS ix_events_pattern")
        if sqlite3.sqlite_version_info >= (3, 35, 0):
            conn.execute("ALTER TABLE events DROP COLUMN pending")
        conn.execute("CREATE INDEX ix_events_pattern ON events(pattern, project)"
                     " WHERE pattern != ''")

    @staticmethod
    def _v11(conn):
        """Captured calls become tab-separated `_Call` records; a mined session keeps its steps."""
        rows = conn.execute("SELECT id, data FROM events"
                            " WHERE kind IN ('tool', 'tool_fail')").fetchall()
        for row_id, data in rows:
            head, paren, rest = data.partition("(")
            tool, ext, cmds = head, "", ()
            if paren and head in ("Bash", "PowerShell"):
                cmds = tuple(c for c in rest[:-1].split(";") if c)
            elif paren:
                ext = rest[:-1]
            conn.execute("UPDATE events SET data = ? WHERE id = ?",
                         ("\t".join((tool, "", ext) + cmds), row_id))
        conn.execute("ALTER TABLE mined_sessions ADD COLUMN steps TEXT NOT NULL DEFAULT ''")

    @staticmethod
    def _v12(conn):
        """Staleness anchors (section 11): the files an instinct or a memory is about."""
        conn.execute("CREATE TABLE anchors (root TEXT NOT NULL, memory INTEGER NOT NULL DEFAULT 0,"
                     " pattern TEXT NOT NULL DEFAULT '', project TEXT NOT NULL DEFAULT '',"
                     " path TEXT NOT NULL, blob TEXT NOT NULL, size INTEGER NOT NULL,"
                     " mtime INTEGER NOT NULL, PRIMARY KEY (root, memory, pattern, project, path))"
                     " WITHOUT ROWID")
        conn.execute("CREATE TRIGGER memories_anchors_ad AFTER DELETE ON memories BEGIN"
                     " DELETE FROM anchors WHERE memory = old.id; END")

    @staticmethod
    def _v13(conn):
        """`forgotten`: forget's tombstones (hashes or a memory's key, never text) that learning
        respects; `projects`: the folder of each project fingerprint, noted when first seen."""
        conn.execute("CREATE TABLE forgotten (key TEXT PRIMARY KEY, ts TEXT NOT NULL)"
                     " WITHOUT ROWID")
        conn.execute("CREATE TABLE projects (fingerprint TEXT PRIMARY KEY, root TEXT NOT NULL,"
                     " first_seen TEXT NOT NULL) WITHOUT ROWID")

    @staticmethod
    def _v14(conn):
        """Hints (section 20): each item hinted or briefed in a session, shown or held back."""
        conn.execute("CREATE TABLE hints (session TEXT NOT NULL, pattern TEXT NOT NULL,"
                     " kind TEXT NOT NULL, project TEXT NOT NULL, ts TEXT NOT NULL,"
                     " after_id INTEGER NOT NULL, shown INTEGER NOT NULL,"
                     " PRIMARY KEY (session, pattern, kind)) WITHOUT ROWID")

    @staticmethod
    def _v15(conn):
        """`seen`: keyed hashes of unknown program words and correction-like prompts, with their
        first session; `word` names a program a second session used; row 'key': the store's key."""
        conn.execute("CREATE TABLE seen (hash TEXT PRIMARY KEY, session TEXT NOT NULL, word TEXT)")

    @staticmethod
    def _v16(conn):
        """The key of `seen`'s hashes moves out of the database, into `<database>.key` (0600)."""
        row = conn.execute("SELECT word FROM seen WHERE hash = 'key'").fetchone()
        path = conn.execute("PRAGMA database_list").fetchone()[2] + ".key"
        if row:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                raise StoreError(f"{path} exists, but this store's key is still inside it: move"
                                 " the key file away and open the store again") from None
            with os.fdopen(fd, "w") as f:
                f.write(row[0] + "\n")
            conn.execute("DELETE FROM seen WHERE hash = 'key'")

    @staticmethod
    def _v17(conn):
        """Decay's clock (section 16): each project's days with sessions, past event pruning."""
        conn.execute("CREATE TABLE active_days (project TEXT NOT NULL, day TEXT NOT NULL,"
                     " PRIMARY KEY (project, day)) WITHOUT ROWID")
        conn.execute("INSERT OR IGNORE INTO active_days SELECT m.project, substr(e.ts, 1, 10)"
                     " FROM mined_sessions m JOIN events e ON e.id = m.last_id")

    MIGRATIONS = (_v1, _v2, _v3, _v4, _v5, _v6, _v7, _v8, _v9, _v10, _v11, _v12, _v13, _v14,
                  _v15, _v16, _v17)

    @staticmethod
    def _has_fts5(conn):
        try:
            conn.execute("CREATE VIRTUAL TABLE temp._fts5_probe USING fts5(x)")
            conn.execute("DROP TABLE temp._fts5_probe")
            return True
        except sqlite3.OperationalError:
            return False


# =============================================================================
# 8. Database connection (WAL, busy timeout, atomic writes)
# =============================================================================
def _is_busy(e):
    msg = str(e).lower()
    return "locked" in msg or "busy" in msg


def _auto_backups(path, number=False):
    """The automatic backups beside store `path` (`<db>.N.<time>-<name>.bak`), oldest first by
    their N, never by the clock (unnumbered older ones first); `number`: the next N."""
    import glob
    import re
    n = {p: int(m.group(1)) if (m := re.match(r"(\d+)\.", p[len(path) + 1:])) else 0
         for p in glob.glob(glob.escape(path) + ".*-*.bak")}
    return max(n.values(), default=0) + 1 if number else sorted(n, key=lambda p: (n[p], p))


def _sql_function(fn):
    """`fn` as a SQL function: a Ctrl-C that lands inside it (Python runs the signal handler at
    its first line) stays a Ctrl-C, not a function error of the statement (`_db_error`)."""
    def call(*args):
        try:
            return fn(*args)
        except KeyboardInterrupt:
            _sql_function.interrupted = True
            raise
    return call


def _db_error(path, e):
    """sqlite3 error -> StoreError with one readable line (a Ctrl-C in a SQL function: itself)."""
    msg = str(e)
    low = msg.lower()
    if "user-defined function raised exception" in low and getattr(
            _sql_function, "interrupted", False):
        return KeyboardInterrupt()
    if "malformed" in low or "vtable constructor failed" in low:
        newest = (_auto_backups(path) or ["BACKUP"])[-1]
        return StoreError(f"{path} is damaged ({msg}); restore the newest automatic backup "
                          f"(this file is kept as {os.path.basename(path)}.bak): "
                          f"instinct restore {newest}")
    if "not a database" in low or "file is encrypted" in low:
        return StoreError(f"{path} is not an instinct database (or it is damaged): {msg}")
    if "readonly" in low or "read-only" in low:
        return StoreError(f"{path} is read-only: {msg}")
    if "unable to open" in low:
        return StoreError(f"cannot open database {path}: {msg}")
    if _is_busy(e):
        return StoreError(f"database {path} stayed locked too long: {msg}")
    return StoreError(f"database error on {path}: {msg}")


def _alive(pid):
    """Whether process `pid` may still run (unknown counts as alive)."""
    if os.name == "nt":
        return True                  # os.kill would end it there
    try:
        os.kill(pid, 0)
        return True
    except OSError as e:             # PermissionError: it runs, as another user
        return not isinstance(e, ProcessLookupError)


def _temp_file(d, near=None):
    """A new empty 0600 `.instinct-<pid>-XXXX.tmp` in d that `_tidy(near)` removes if we die."""
    import tempfile
    fd, tmp = tempfile.mkstemp(dir=d, prefix=f".instinct-{os.getpid()}-", suffix=".tmp")
    os.close(fd)
    if near is not None and os.path.realpath(near) != os.path.realpath(d):
        try:
            with open(os.path.join(near, os.path.basename(tmp)[:-4] + ".ptr"), "x") as f:
                f.write(tmp)
        except OSError:
            pass
    return tmp


def _drop_temp(tmp, near=None):
    """Quietly remove temp file `tmp` with its SQLite side files and its `_temp_file` pointer."""
    for p in ([tmp + s for s in ("", "-journal", "-wal", "-shm")]
              + ([os.path.join(near, os.path.basename(tmp)[:-4] + ".ptr")] if near else [])):
        try:
            os.unlink(p)
        except OSError:
            pass


def _tidy(d):
    """Remove what killed backups or restores left in the database folder `d` (and pointed to)."""
    try:
        names = [n for n in os.listdir(d) if n.startswith(".instinct-")]
    except OSError:
        return
    for n in names:
        pid, dash, rest = n[10:].partition("-")
        if not (dash and pid.isdigit() and rest.endswith(
                (".tmp", ".ptr", "-journal", "-wal", "-shm"))) or _alive(int(pid)):
            continue
        p = os.path.join(d, n)
        if n.endswith(".ptr"):
            try:
                with open(p, encoding="utf-8") as f:
                    tmp = f.read(4096)
                if os.path.basename(tmp).startswith(f".instinct-{pid}-") and tmp.endswith(".tmp"):
                    _drop_temp(tmp)
            except (OSError, ValueError):
                pass
        _drop_temp(p)


def _tighten(path):
    """Take group and other permissions off the store and its -wal/-shm files."""
    if os.name == "nt":
        return
    for p in (path, path + "-wal", path + "-shm"):
        try:
            mode = os.stat(p).st_mode & 0o7777
            if mode & 0o077:
                os.chmod(p, mode & ~0o077)
        except OSError:
            pass


class _Write:
    """`with db.write() as conn:` one BEGIN IMMEDIATE transaction (nested: a SAVEPOINT) whose
    sqlite3 errors become one-line StoreErrors; a failed COMMIT is rolled back."""

    __slots__ = ("db", "conn", "nested")

    def __init__(self, db):
        self.db = db

    def __enter__(self):
        try:
            conn = self.conn = self.db.conn
            self.nested = conn.in_transaction
            if self.nested:
                conn.execute("SAVEPOINT w")
            else:
                self.db.retry(conn.execute, "BEGIN IMMEDIATE")
            return conn
        except sqlite3.Error as e:
            raise _db_error(self.db.path, e) from None

    def __exit__(self, et, ev, tb):
        try:
            self._finish(et is None)
        except sqlite3.Error as e:
            raise _db_error(self.db.path, e) from None
        if et is not None and issubclass(et, sqlite3.Error):
            raise _db_error(self.db.path, ev) from None

    def _finish(self, ok):
        conn = self.conn
        if not conn.in_transaction:        # ended inside the block: nothing left to finish
            return
        if ok and self.nested:
            conn.execute("RELEASE w")
        elif ok:
            try:
                try:
                    conn.execute("COMMIT")
                except sqlite3.OperationalError as e:
                    if not _is_busy(e):
                        raise
                    self.db.retry(conn.execute, "COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        else:
            try:
                conn.execute("ROLLBACK TO w" if self.nested else "ROLLBACK")
                if self.nested:
                    conn.execute("RELEASE w")
            except sqlite3.Error:
                pass                       # the block's own error is the one to report


def _atomic_write(path, data, private=False, check=None):
    """Write via a temp file and os.replace, keeping the mode (`private`: 0600, folders 0700);
    with `check`, only if check() is still true just before the replace -> whether written."""
    import tempfile
    d = os.path.dirname(path)
    try:
        os.makedirs(d, mode=0o700 if private else 0o777, exist_ok=True)
        try:
            mode = 0o600 if private else os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mask = os.umask(0o022)
            os.umask(mask)
            mode = 0o666 & ~mask
        fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    except OSError as e:
        raise StoreError(f"cannot write {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if check and not check():
            _drop_temp(tmp)
            return False
        os.replace(tmp, path)
        return True
    except OSError as e:
        _drop_temp(tmp)
        raise StoreError(f"cannot write {path}: {e.strerror}") from None


class _DB:
    """Owns the sqlite3 connection: opening, pragmas, migrations, retries."""

    def __init__(self, path, create_dir, timeout=BUSY_TIMEOUT_S):
        self.path = path
        self.create_dir = create_dir
        self.timeout = timeout
        self._conn = self._key = None
        self.checkpoint_pages = WAL_AUTOCHECKPOINT_PAGES
        self.read_only = False             # set when the store could only be opened read-only

    def set_checkpoint(self, pages):
        """Auto-checkpoint every `pages` WAL pages (now and after reopening)."""
        self.checkpoint_pages = pages
        if self._conn is not None:
            self._conn.execute(f"PRAGMA wal_autocheckpoint={int(pages)}")

    @property
    def conn(self):
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _open(self):
        path = self.path
        d = os.path.dirname(path) or "."
        if not os.path.isdir(d):
            if not self.create_dir:
                raise StoreError(f"cannot open database {path}: directory {d} does not exist")
            try:
                os.makedirs(d, mode=0o700, exist_ok=True)
            except OSError as e:
                raise StoreError(f"cannot create directory {d}: {e.strerror}") from None
        if os.path.isdir(path):
            raise StoreError(f"cannot open database {path}: it is a directory")
        if not os.path.exists(path):
            try:  # create it 0600 before SQLite does (it copies the mode to -wal/-shm)
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except FileExistsError:
                pass
            except OSError as e:
                raise StoreError(f"cannot create database {path}: {e.strerror}") from None
        elif not os.access(path, os.W_OK) or not (os.access(d, os.W_OK) or (
                os.path.exists(path + "-wal") and os.path.exists(path + "-shm"))):
            return self._open_read_only()
        else:
            _tighten(path)
        _tidy(d)
        try:
            conn, version = self._connect(path)
        except sqlite3.Error as e:
            raise _db_error(path, e) from None
        try:
            if version < SCHEMA_VERSION:     # before WAL, so a refused file is left as it was
                self._migrate(conn)
            if self.retry(lambda: conn.execute("PRAGMA journal_mode").fetchone()[0],
                          conn=conn) != "wal":
                self.retry(conn.execute, "PRAGMA journal_mode=WAL", conn=conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA secure_delete=ON")  # deleted rows zeroed, not left in free space
            conn.execute(f"PRAGMA wal_autocheckpoint={int(self.checkpoint_pages)}")
            conn.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
        except BaseException as e:
            conn.close()
            if isinstance(e, sqlite3.Error):
                raise _db_error(path, e) from None
            raise
        return conn

    def _connect(self, target, uri=False):
        """-> (a connection to `target` with instinct_key, its schema version), closed again on
        any error; StoreError for a schema newer than this instinct's."""
        conn = sqlite3.connect(target, uri=uri, timeout=self.timeout, isolation_level=None,
                               check_same_thread=False)
        try:
            conn.create_function("instinct_key", 3, _sql_function(lambda p, proj, keyed: (
                _forgotten_key(p, proj, self.key() if keyed else None))), deterministic=True)
            conn.create_function("instinct_hash", 1, _sql_function(lambda t: _keyed(self.key(), t)))
            version = self.retry(lambda: conn.execute("PRAGMA user_version").fetchone()[0],
                                 conn=conn)
            if version > SCHEMA_VERSION:
                raise StoreError(f"{self.path} has schema v{version}, newer than this instinct "
                                 f"{__version__} (v{SCHEMA_VERSION}); upgrade instinct")
        except BaseException:
            conn.close()
            raise
        return conn, version

    def _open_read_only(self):
        """Open read-only (writes fail with one line); immutable without a folder for the WAL."""
        from urllib.parse import quote
        path = self.path
        self.read_only = True
        for extra in ("", "&immutable=1"):
            try:
                conn, version = self._connect(f"file:{quote(path)}?mode=ro{extra}", uri=True)
                break
            except sqlite3.Error as e:
                if extra or not any(w in str(e).lower() for w in ("unable to open", "readonly")):
                    raise _db_error(path, e) from None
        if version != SCHEMA_VERSION:           # older: newer ones _connect refused
            conn.close()
            raise StoreError(f"{path} is read-only and " + (
                f"has schema v{version}; open it once writable to upgrade it to v{SCHEMA_VERSION}"
                if version else "holds no instinct store yet"))
        return conn

    def key(self):
        """The store's secret key, in the 0600 file `<database>.key` beside it: never in the
        database, a backup or an export. Made on first use, whole or not at all (linked into
        place); schema v16 moved an older one there. A folder it cannot write: this process's own
        key (a read-only store writes no hash)."""
        if self._key is None:
            path, tmp = self.path + ".key", f"{self.path}.key.{os.getpid()}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w") as f:
                    f.write(os.urandom(16).hex() + "\n")
                try:
                    os.link(tmp, path)         # never over another process's key
                finally:
                    os.remove(tmp)
            except OSError:                     # there already, or a folder it cannot write
                pass
            try:
                key = bytes.fromhex(_read_regular(path, 200).decode("ascii").strip())
            except FileNotFoundError:
                key = os.urandom(16)
            except (OSError, ValueError, UnicodeError) as e:
                raise StoreError(f"cannot read the store's key file {path}: {e}") from None
            if len(key) != 16:
                raise StoreError(f"the store's key file {path} is damaged; move it away (hashes "
                                 "made with it will no longer match)")
            self._key = key
        return self._key

    def _migrate(self, conn):
        self.retry(conn.execute, "BEGIN IMMEDIATE", conn=conn)
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            for i in range(version, SCHEMA_VERSION):
                _Schema.MIGRATIONS[i](conn)
                conn.execute(f"PRAGMA user_version = {i + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def retry(self, fn, *args, conn=None):
        """Run fn, retrying 'database is locked' until the busy timeout passed; each retry's busy
        handler gets what is left of it."""
        deadline = time.monotonic() + self.timeout
        pause, shortened = 0.001, None
        try:
            while True:
                try:
                    return fn(*args)
                except sqlite3.OperationalError as e:
                    left = deadline - time.monotonic()
                    if not _is_busy(e) or left <= 0:
                        raise
                time.sleep(min(pause, left))
                pause = min(pause * 2, 0.05)
                c = conn or self._conn
                if c is not None:
                    c.execute("PRAGMA busy_timeout = "
                              f"{max(1, int((deadline - time.monotonic()) * 1000))}")
                    shortened = c
        finally:
            if shortened is not None:
                shortened.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")

    def write(self):
        return _Write(self)

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None


# =============================================================================
# 9. Operation registry (one table for API, CLI and MCP)
# =============================================================================
class Param:
    """One parameter of an operation, as the API, the CLI and MCP see it (bounds: +-MAX_INT_ARG)."""

    __slots__ = ("name", "type", "help", "default", "required", "positional",
                 "flag", "choices", "minimum", "maximum", "setting")

    def __init__(self, name, type, help, default=None, required=False, positional=False,
                 flag=None, choices=None, minimum=None, maximum=None, setting=None):
        self.name, self.type, self.help, self.default = name, type, help, default
        self.setting = setting             # a SETTINGS key giving the default when it is absent
        self.required, self.positional, self.choices = required, positional, choices
        self.flag = flag or "--" + name.replace("_", "-")
        if type is int:
            minimum = -MAX_INT_ARG if minimum is None else minimum
            maximum = MAX_INT_ARG if maximum is None else maximum
        self.minimum, self.maximum = minimum, maximum

    def schema(self):
        s = {"type": {str: "string", int: "integer", bool: "boolean", dict: "object"}[self.type],
             "description": self.help}
        if self.choices:
            s["enum"] = list(self.choices)
        for k in ("minimum", "maximum", "default"):
            if getattr(self, k) is not None:
                s[k] = getattr(self, k)
        return s


class _Out:
    """What an operation's answer looks like: JSON shapes (MCP outputSchema), terminal text."""

    @staticmethod
    def obj(props, required=()):
        s = {"type": "object", "properties": props}
        if required:
            s["required"] = list(required)
        return s

    STR, INT, BOOL = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
    RECORD = obj({
        "pattern": STR, "category": STR, "confidence": INT, "level": STR, "promoted": INT,
        "project": STR, "source": STR, "first_seen": STR, "last_seen": STR,
        "metadata": {"type": "object"}, "root": STR, "repo": STR},
        ("pattern", "category", "confidence", "level", "project", "first_seen", "last_seen"))

    @staticmethod
    def count(n, noun):
        """`1 session`, `2 sessions`, `3 memories`: a number and its noun in agreement."""
        if n != 1:
            noun = (noun[:-1] + "ies" if noun[-1:] == "y" and noun[-2:-1] not in "aeiou" else
                    noun + ("es" if noun.endswith(("s", "ch", "sh", "x")) else "s"))
        return f"{n} {noun}"

    @staticmethod
    def lines(records, noun):
        """One row a record, patterns padded to the longest up to 36 columns (a longer one takes
        its own line), as the seeds': `  seq:test->fix->test    conf=5  [mature]  sequence`."""
        w = max([22] + [len(r["pattern"]) for r in records if len(r["pattern"]) <= 36])
        lw = max((len(r["level"]) for r in records), default=0) + 4
        out = [(f"  {r['pattern']}\n  {'':<{w}}" if len(r["pattern"]) > w else
                f"  {r['pattern']:<{w}}") + f" {'conf=' + str(r['confidence']):<7} "
               f"{'[' + r['level'] + ']':<{lw}}{r['category']}"
               + (f"  {r['root'] or r['project']}" if r.get("project") and "root" in r else "")
               for r in records]
        return "\n".join(out + [_Out.count(len(records), noun)])

    @staticmethod
    def render_record(r):
        return " ".join(x.strip() for x in _Out.lines([r], "instinct").splitlines()[:-1])

    @staticmethod
    def render_stats(s):
        out = [f"Database: {s['db_path']} ({s['db_bytes']} bytes, schema v{s['schema_version']})",
               f"Total instincts: {s['total']}  ("
               + ", ".join(f"{k} {s['by_level'][k]}" for k in LEVELS) + ")"]
        if s["by_category"]:
            out.append("Categories: " + ", ".join(f"{k} {v}" for k, v in s["by_category"].items()))
        out.append(f"Projects: {s['projects']}  Events: {s['events']}  Full-text search: "
                   f"{'FTS5' if s['fts'] else 'LIKE fallback'}")
        out += [f"  project {fp}: {root}" for fp, root in s.get("folders", {}).items()]
        return "\n".join(out)

    @staticmethod
    def render_export(result):
        if isinstance(result, str):
            return result.rstrip("\n")
        if isinstance(result, dict):          # --write: what was written where (section 19)
            return _Out._render_write(result)
        return _dumps(result, indent=2)

    @staticmethod
    def render_markdown(rules):
        out = ["# Learned rules (instinct)", ""]
        for r in rules:
            scope = "global" if not r["project"] else f"project {r['project']}"
            out.append(f"- `{r['pattern']}` ({r['category']}, {r['level']}, "
                       f"confidence {r['confidence']}, {scope})")
        if not rules:
            out.append("_No rules yet._")
        return "\n".join(out) + "\n"

    @staticmethod
    def _render_write(r):
        where = (os.path.relpath(r["path"]) if not os.path.relpath(r["path"]).startswith("..")
                 else r["path"])
        drop = (f" ({_Out.count(r['dropped'], 'lower-confidence rule')}"
                " dropped to fit the size limit)" if r["dropped"] else "")
        n = _Out.count(r["included"], "rule")
        lint = "\n" + _Out.render_lint(r["lint"]) if r.get("lint") else ""
        if not r["changed"]:
            return f"{where} is up to date ({n}){drop}{lint}"
        return f"Wrote {n} to {where} ({r['format']}){drop}{lint}"

    @staticmethod
    def render_lint(found):
        out = [f"  {f['kind']:<14}learned: {f['learned']} ({f['pattern']})\n{'':16}written: "
               f"{f['file']}:{f['line']}: {f['written']}" for f in found]
        c = sum(f["kind"] == "contradiction" for f in found)
        counts = f"{_Out.count(c, 'contradiction')}, {_Out.count(len(found) - c, 'duplicate')}"
        return "\n".join(out + [counts + " of the rules written here"])


class Operation:
    """One operation: an InstinctStore method, a CLI subcommand and an MCP tool."""
    @staticmethod
    def _nested_deeper(value, limit):
        """Whether a JSON value nests more than `limit` levels (one bound whichever Python)."""
        level = [value] if isinstance(value, (dict, list)) else []
        for _ in range(limit):
            level = [x for v in level for x in (v.values() if isinstance(v, dict) else v)
                     if isinstance(x, (dict, list))]
            if not level:
                return False
        return True

    @staticmethod
    def _cursor_token(offset):
        import base64
        return base64.urlsafe_b64encode(b"instinct:%d" % offset).decode("ascii")

    @staticmethod
    def _cursor_offset(token):
        """A nextCursor token -> the row offset it stands for (ValidationError if not ours)."""
        import base64
        try:
            raw = base64.urlsafe_b64decode(token.encode("ascii")) if isinstance(token, str) else b""
        except ValueError:                   # binascii.Error and UnicodeError are ValueErrors
            raw = b""
        tag, _, num = raw.partition(b":")
        if tag != b"instinct" or not num.isdigit() or len(num) > 9:
            raise ValidationError("argument 'cursor' must be a nextCursor value from an earlier"
                                  " call")
        return int(num)

    _OPT_OUTS: dict = {}   # folder -> (time.monotonic(), its reason): a server stats once a second

    @staticmethod
    def _opted_out(store, project):
        """Why nothing may be learned here (the hooks' test, cached a second), or None."""
        dirs = [os.path.abspath(store.cwd) if store.cwd else os.getcwd()]   # getcwd(): absolute
        if project and not _is_fingerprint(project):
            dirs.append(os.path.abspath(os.path.expanduser(project)))
        now = time.monotonic()
        if len(Operation._OPT_OUTS) > 256:
            Operation._OPT_OUTS.clear()
        for d in dirs:
            hit = Operation._OPT_OUTS.get(d)
            if hit is None or not 0 <= now - hit[0] < 1:
                hit = Operation._OPT_OUTS[d] = (now, _disabled_reason({}, d))
            if hit[1]:
                return hit[1]
        return None

    __slots__ = ("name", "cli", "mcp", "title", "summary", "description", "params",
                 "read_only", "destructive", "idempotent", "output", "list_key", "render",
                 "exit_code", "learns", "known", "paged", "fn")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))
        self.known = {p.name: p for p in self.params or ()}
        # MCP pages a reader of a list by cursor (a writer such as suggest logs what it shows)
        self.paged = bool(self.list_key and self.read_only)

    def input_schema(self):
        props = {p.name: p.schema() for p in self.params}
        if self.paged:
            props["cursor"] = {"type": "string", "description": "nextCursor of the previous page "
                               "(when a reply has more results than fit)"}
        s = _Out.obj(props, [p.name for p in self.params if p.required])
        s["additionalProperties"] = False      # strict mode everywhere; unknown args are refused
        return s

    def output_schema(self):
        """The declared output: a list tool's page, and its nextCursor and note (so typed clients
        reach page 2)."""
        s = self.output
        if self.list_key and self.list_key not in self.output.get("properties", {}):
            s = _Out.obj({self.list_key: {"type": "array", "items": self.output},
                          "count": _Out.INT}, (self.list_key, "count"))
        if self.paged:
            s = dict(s, properties={**s["properties"], "nextCursor": _Out.STR, "note": _Out.STR})
        return s

    def structured(self, result):
        """API result -> the MCP structuredContent object."""
        if self.list_key and isinstance(result, list):
            return {self.list_key: result, "count": len(result)}
        return result

    def coerce(self, args, name=None):
        """JSON arguments -> checked kwargs (ValidationError); null is absent; `name(p)` names p."""
        if not isinstance(args, dict):
            raise ValidationError("arguments must be a JSON object")
        known = self.known
        arg = name or (lambda p: f"argument '{p.name}'")
        if not args.keys() <= known.keys():
            extra = sorted(set(args) - set(known))
            raise ValidationError(f"unknown argument(s) for {self.mcp}: {', '.join(extra)}; "
                                  f"expected: {', '.join(known) or 'none'}")
        out = {}
        for p in self.params:
            v = args.get(p.name)
            if v is None:
                if p.required:
                    raise ValidationError(f"missing required {arg(p).rstrip(':')}"
                                          + (" (it is null)" if p.name in args else ""))
                continue
            t = p.type
            if t is int and type(v) is float and v.is_integer():
                v = int(v)
            if not isinstance(v, t) or (t is int and isinstance(v, bool)):
                raise ValidationError(f"{arg(p)} must be of type {p.schema()['type']}")
            if t is dict and Operation._nested_deeper(v, MAX_DEPTH):
                raise ValidationError(f"{arg(p)} nests deeper than {MAX_DEPTH} levels")
            if p.choices and v not in p.choices:
                raise ValidationError(f"{arg(p)} must be one of: {', '.join(p.choices)}")
            if p.minimum is not None and v < p.minimum:
                raise ValidationError(f"{arg(p)} must be >= {p.minimum}")
            if p.maximum is not None and v > p.maximum:
                raise ValidationError(f"{arg(p)} must be <= {p.maximum}")
            out[p.name] = v
        return out

    def run(self, store, kwargs):
        """The body on checked kwargs and settings' defaults; refused where learning opted out."""
        for p in self.params:
            if p.setting and kwargs.get(p.name) is None:
                kwargs[p.name] = store._settings()[p.setting]
        if self.learns:
            why = Operation._opted_out(store, kwargs.get("project"))
            if why:
                raise InstinctError(f"not recorded: {why}; nothing is learned there")
        return self.fn(store, **kwargs)

    def page(self, store, args):
        """MCP paging by `limit` (default: the operation's, else list_limit) and `cursor` ->
        (kwargs asking for one row past the page, to tell if more follow, its offset, size)."""
        args = dict(args)
        cursor = args.pop("cursor", None)
        offset = 0 if cursor in (None, "") else Operation._cursor_offset(cursor)
        kwargs = self.coerce(args)
        lim = self.known.get("limit")
        size = kwargs.get("limit") or (lim and lim.default)
        if not size:                         # a setting's default, else list_limit
            size = store._settings()[(lim and lim.setting) or "list_limit"]
        if lim is not None:                  # past Param.maximum: it bounds a page, not a row
            kwargs["limit"] = offset + size + 1
        return kwargs, offset, size


OPERATIONS: dict = {}  # name -> Operation, in definition order


def operation(*params, cli=None, mcp=None, title, read_only=False, destructive=False,
              idempotent=False, output, list_key=None, render=None, exit_code=None,
              learns=False):
    """Register the decorated InstinctStore method as an operation; the method runs
    `Operation.coerce` first (`op.fn` is the unchecked body). `exit_code(result)`: the CLI's
    status of a success. `learns`: it records what an agent did, refused where opted out."""
    def deco(fn):
        doc = (fn.__doc__ or "").strip()
        summary, _, rest = doc.partition("\n")
        name = fn.__name__
        if name in OPERATIONS:
            raise RuntimeError(f"operation {name} defined twice")
        op = OPERATIONS[name] = Operation(
            name=name, cli=cli or name.replace("_", "-"), mcp=mcp or name, title=title,
            summary=summary.strip() or title, description=" ".join(rest.split()), params=params,
            read_only=read_only, destructive=destructive, idempotent=idempotent,
            output=output, list_key=list_key, render=render, exit_code=exit_code,
            learns=learns, fn=fn)
        code = fn.__code__
        names = code.co_varnames[1:code.co_argcount]
        coerce, run = op.coerce, op.run

        @functools.wraps(fn)
        def checked(self, *args, **kwargs):
            if args:
                if len(args) > len(names):
                    raise TypeError(f"{name}() takes at most {len(names)} positional arguments")
                for k, v in zip(names, args):
                    if k in kwargs:
                        raise TypeError(f"{name}() got multiple values for argument '{k}'")
                    kwargs[k] = v
            return run(self, coerce(kwargs))
        return checked
    return deco


# =============================================================================
# 10. The kernel (connection, the one writer of confidence, evidence and notes, event kinds)
# =============================================================================
class _Core:
    """The kernel (connection, `_reinforce`, event kinds, records); every room is its client."""
    # format -> (file a directory --write writes, size limit in bytes, instinct owns the file).
    # Windsurf truncates rule files past 6,000 chars, Codex reads 32 KiB of AGENTS.md in all.
    _EXPORT_FORMATS = {
        "json": ("instinct-rules.json", None, True),
        "markdown": ("instinct-rules.md", None, False),
        "claude": ("CLAUDE.md", 4000, False),
        "agents": ("AGENTS.md", 32 * 1024, False),
        "gemini": ("GEMINI.md", 32 * 1024, False),
        "copilot": (os.path.join(".github", "copilot-instructions.md"), 32 * 1024, False),
        "cursor": (os.path.join(".cursor", "rules", "instinct.mdc"), 12000, True),
        "windsurf": (os.path.join(".windsurf", "rules", "instinct.md"), 6000, True),
        "skill": (os.path.join(".claude", "skills", "instinct-rules", "SKILL.md"), 20000, True),
    }
    _COLS = ("pattern, category, confidence, promoted, project, source, first_seen, last_seen,"
             " metadata")
    # Not forgotten in that project ({0}: the pattern column, {1}: the project); a forgotten
    # pattern is shown there from no scope. With no tombstone at all no key is hashed.
    _SQL_UNFORGOTTEN = (" AND (NOT EXISTS (SELECT 1 FROM forgotten LIMIT 1)"
                        " OR NOT EXISTS (SELECT 1 FROM forgotten WHERE key IN"
                        " (instinct_key({0}, {1}, 1), instinct_key({0}, {1}, 0))))")
    # The one statement that changes confidence (`_reinforce`): add :delta to (pattern, its alias
    # resolved inside, project) unless a tombstone forbids it (nothing written); a new row: :delta.
    _SQL_REINFORCE = """
INSERT INTO instincts
    (pattern, category, confidence, first_seen, last_seen, source, project, metadata)
SELECT p, :category, :delta, :first, :last, :source, :project, :meta
FROM (SELECT coalesce((SELECT pattern FROM aliases WHERE alias = :pattern), :pattern) AS p)
WHERE 1""" + _SQL_UNFORGOTTEN.format("p", ":project") + """
ON CONFLICT (pattern, project) DO UPDATE SET
    confidence = confidence + :delta,
    first_seen = min(first_seen, :first),
    last_seen = CASE WHEN :delta > 0 THEN max(last_seen, :last) ELSE last_seen END,
    source = CASE WHEN :source != '' THEN :source ELSE source END,
    quiet = CASE WHEN quiet > 0 AND :delta > 0 THEN quiet - 1 ELSE quiet END"""
    _SQL_REINFORCED = _SQL_REINFORCE + " RETURNING " + _COLS
    # which folder a project fingerprint stands for, noted the first time it is seen
    _SQL_PROJECT = "INSERT OR IGNORE INTO projects (fingerprint, root, first_seen) VALUES (?,?,?)"
    _OBSERVATION = 1                    # the confidence one observation adds (observe, mining)

    @staticmethod
    def _sessions(confidence):
        """The sessions a mined confidence stands for (each adds _OBSERVATION), for 'N sessions'."""
        return -(-confidence // _Core._OBSERVATION)

    _DECAY_BATCH = 50_000               # rows per decay (and event-log pruning) transaction
    _PRUNE_PER_CONSOLIDATE = 500_000    # event rows one consolidate cuts at most (gc: all)
    _IMPORT_BATCH = 2_000               # records per import transaction (~0.2-0.4 s)
    # pause between a long writer's transactions: longer than a waiting writer's longest
    # busy-handler sleep (100 ms), so a hook gets the lock instead of waiting for the whole job
    _YIELD_S = 0.11
    _HAS_RETURNING = sqlite3.sqlite_version_info >= (3, 35, 0)
    _SQL_EVENT = ("INSERT INTO events (ts, kind, pattern, project, source, session, delta, data)"
                  " VALUES (?,?,?,?,?,?,?,?)")
    # Every kind of event: kind -> (counts as an observation of its pattern, what it records).
    # Only `_Core._reinforce` writes the kinds that change a pattern's confidence.
    EVENT_KINDS = {
        "observe": (True, "one observation (observe, or mining crediting a session); delta added"),
        "import": (False, "a rules import raised it to the file's confidence; delta added"),
        "merge": (False, "another spelling folded in; delta = its confidence, data = that"
                         " spelling"),
        "feedback": (False, "good (+1) or bad (-1); data = {verdict, note}"),
        "decay": (False, "-1 after a period without observations"),
        "promote": (False, "consolidate raised the level; data = 'old->new'"),
        "demote": (False, "consolidate lowered the level; data = 'old->new'"),
        "forget": (False, "a pattern deleted (no copy of its name); delta = -its confidence"),
        "unforget": (False, "a tombstone lifted (no copy of the name)"),
        "surface": (False, "suggestions shown; data = 'pattern<TAB>project' lines"),
        "tool": (False, "one tool call's shape (data), for mining; delta: its tool-use id hashed"),
        "tool_fail": (False, "one failed tool call's shape (data), for mining"),
        "remember": (False, "a memory stored; data = {memory, type, title}"),
        "reinforce": (False, "a memory stored again; data = {memory, type, title}"),
        "import_memory": (False, "a memory updated from Markdown; data = {memory, title}"),
        "restore_memory": (False, "an archived memory restored; data = {memory, type, title}"),
        "forget_memory": (False, "a memory deleted; data = {memory, type}"),
        "memory_decay": (False, "memories aged; delta = -how many, data = {archived}"),
        "written": (False, "a file instinct wrote; data = 'f:' (export) or 'm:' (a memory) + path"),
    }
    # The condition every reader counts observations by (explain, effectiveness)
    _SQL_OBSERVED = "kind IN (%s)" % ", ".join(f"'{k}'"
                                               for k, (obs, _) in EVENT_KINDS.items() if obs)
    # The project parameter of a command about one pattern (get, forget, explain, history, feedback)
    _PROJECT_OF_ONE = Param(
        "project", str, "'' global, a fingerprint or a project path (default: the row suggest and "
        "list show for the working directory: this project's, else the global one, else a "
        "universal one)")
    _RECORD_AT = _Out.obj({**_Out.RECORD["properties"], "scope": _Out.STR},
                          _Out.RECORD.get("required", ()))
    _DRY_RUN = Param("dry_run", bool, "only show what would go; change nothing", default=False)

    @staticmethod
    def _backup_note(r):
        """A destructive command's last line: where its backup is, or that it was a dry run."""
        if r.get("dry_run"):
            return "\n(dry run: nothing changed)"
        path = r.get("backup_file")
        return f"\nBackup: {path} (`instinct restore` it to undo)" if path else ""

    @staticmethod
    def _where(r):
        """Where a command about one pattern found it: 'project X', 'global' or 'universal...'."""
        folder = f" {r['root']}" if r.get("root") else ""
        if r.get("scope") == "universal":
            return f"universal, project {r['project']}{folder}"
        return f"project {r['project']}{folder}" if r["project"] else "global"

    @staticmethod
    def _record(row):
        p, cat, conf, promoted, proj, src, first, last, meta = row
        return {"pattern": p, "category": cat, "confidence": conf, "level": LEVELS[promoted],
                "promoted": promoted, "project": proj, "source": src, "first_seen": first,
                "last_seen": last, "metadata": _loads_meta(meta)}

    @staticmethod
    def _pref_key(pattern):
        """'pref:tz=UTC' -> 'tz' (a preference with a value); None for any other pattern."""
        if pattern.startswith("pref:"):
            key, value = _Pattern.pref(pattern)
            if key and value:
                return key
        return None

    @staticmethod
    def _pref_groups(rows):
        """Rows (pattern, project, confidence, promoted, last_seen) -> {(key, project): rows}: one
        preference key's values in one scope, the winner (latest, then most confident) first."""
        groups = {}
        for row in sorted(sorted(rows), key=lambda r: (r[4], r[2]), reverse=True):
            key = _Core._pref_key(row[0])
            if key is not None:
                groups.setdefault((key, row[1]), []).append(row)
        return groups

    _keep_events = False     # import-history: the log is not cut while old sessions are mined

    def __init__(self, path=None, *, clock=None, cwd=None, session=None, timeout=None):
        if path is None:
            path = os.environ.get(ENV_DB) or None
        create_dir = path is None
        self.path = os.path.abspath(os.path.expanduser(os.fspath(path or DEFAULT_DB)))
        self._db = _DB(self.path, create_dir, BUSY_TIMEOUT_S if timeout is None else timeout)
        self._clock = clock or time.time
        self.cwd = cwd
        self.session = session if session is not None else os.environ.get(ENV_SESSION, "")

    # -- plumbing -------------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Close the database connection (the store can be reopened by using it)."""
        self._db.close()

    def _now(self):
        return _iso(self._clock())

    def _read(self, sql, params=()):
        try:
            return self._db.retry(lambda: self._db.conn.execute(sql, params).fetchall())
        except sqlite3.Error as e:
            raise _db_error(self.path, e) from None

    def _write(self):
        """`with self._write() as conn:` one short write transaction (see `_Write`)."""
        return self._db.write()

    def _canonical(self, pattern, conn):
        p = normalize_pattern(pattern)
        row = conn.execute("SELECT pattern FROM aliases WHERE alias = ?", (p,)).fetchone()
        return row[0] if row else p

    def _settings(self):
        vals = {k: d for k, (d, _) in SETTINGS.items()}
        for k, v in self._read("SELECT key, value FROM settings"):
            vals[k] = int(v)
        return vals

    def _event(self, conn, kind, pattern="", project="", source="", delta=0, data=""):
        conn.execute(_Core._SQL_EVENT, (self._now(), kind, pattern, project, source, self.session,
                                        delta, data))

    def _wrote(self, path, memory=False):
        """Note a file instinct wrote (once), so that `purge` reaches it too ('m:' a memory's)."""
        data = ("m:" if memory else "f:") + path
        with self._write() as conn:
            conn.execute("DELETE FROM events WHERE kind = 'written' AND data = ?", (data,))
            self._event(conn, "written", data=data)

    def _reinforce(self, conn, pattern, project, *, source, session, ts, delta=None,
                   kind="observe", category=None, metadata=None, seen=None, data=""):
        """The one writer of confidence: add `delta` (default _OBSERVATION) to (pattern, project)
        (its alias resolved; a new row starts there), widen first/last seen to `seen` (default ts)
        and log a `kind` event at `ts` -> the record; None if that pattern is forgotten there."""
        delta = _Core._OBSERVATION if delta is None else delta
        first, last = seen or (ts, ts)
        args = {"pattern": pattern, "project": project, "delta": delta, "first": first,
                "last": last, "source": source, "meta": metadata or "{}",
                "category": category or category_for(pattern)}
        if _Core._HAS_RETURNING:
            row = conn.execute(_Core._SQL_REINFORCED, args).fetchone()
            r = None if row is None else _Core._record(row)
        else:
            r = (self._get_record(conn, self._canonical(pattern, conn), project)
                 if conn.execute(_Core._SQL_REINFORCE, args).rowcount else None)
        if r is not None:
            conn.execute(_Core._SQL_EVENT, (ts, kind, r["pattern"], project, source, session, delta,
                                            data))
        return r

    def _locate(self, pattern, project, conn=None):
        """(canonical pattern, project key, scope) for a command about one pattern: `project` as
        given, else the first row there is of this project's, the global one, the strongest
        universal one (scope 'project', 'global' or 'universal'); NotFoundError if none."""
        def read(sql, args):
            return conn.execute(sql, args).fetchall() if conn is not None else self._read(sql, args)
        p = normalize_pattern(pattern)
        alias = read("SELECT pattern FROM aliases WHERE alias = ?", (p,))
        p = alias[0][0] if alias else p
        if project is not None:
            proj = _resolve_project(project, self.cwd)
            return p, proj, "project" if proj else "global"
        here = project_fingerprint(self.cwd)
        rows = read("SELECT project, confidence FROM instincts WHERE pattern = ?"
                    " AND (project IN (?, '') OR promoted = 3)", (p, here))
        if not rows:
            raise NotFoundError(f"no instinct {p!r} in this project ({here}), global or universal")
        proj = min(rows, key=lambda r: (r[0] != here, r[0] != "", -r[1], r[0]))[0]
        return p, proj, "project" if proj == here else "global" if proj == "" else "universal"

    def _user_path(self, path):
        """A path from the user, relative to the store's working directory (every command)."""
        return os.path.abspath(os.path.join(self.cwd or os.getcwd(), os.path.expanduser(path)))

    @staticmethod
    def _missing(pattern, project):
        """The error for a (pattern, project) that is not stored."""
        return NotFoundError(f"no instinct {pattern!r}"
                             + (f" in project {project}" if project else " (global)"))

    @staticmethod
    def _get_record(conn, pattern, project):
        """The record of (pattern, project), or None."""
        row = conn.execute(f"SELECT {_Core._COLS} FROM instincts WHERE pattern = ? AND project = ?",
                           (pattern, project)).fetchone()
        return None if row is None else _Core._record(row)

    def _surface(self, shown):
        """Log `shown` ('pattern<TAB>project' lines) as a `surface` event, unless it repeats
        the last one within SURFACE_REPEAT_S (the same showing) or the store is read-only."""
        last = self._read("SELECT ts, data FROM events WHERE kind = 'surface'"
                          " ORDER BY ts DESC LIMIT 1")
        if last and last[0][1] == shown and last[0][0] >= _iso(self._clock() - SURFACE_REPEAT_S):
            return
        try:
            with self._write() as conn:
                self._event(conn, "surface", data=shown)
        except StoreError:
            pass

    def _pref_rows(self, keys=None):
        """(pattern, project, confidence, promoted, last_seen) of these pref keys (None: all)."""
        cols = "SELECT pattern, project, confidence, promoted, last_seen FROM instincts WHERE "
        if keys is None or len(keys) > 50:
            return self._read(cols + "pattern >= 'pref:' AND pattern < 'pref;'")
        keys = sorted(keys)  # 'pref:K=' <= pattern < 'pref:K>' is exactly the prefix, on the index
        return self._read(cols + " OR ".join(["(pattern >= ? AND pattern < ?)"] * len(keys)),
                          [b for k in keys for b in (f"pref:{k}=", f"pref:{k}>")])

    def _suggest_filter(self, records, project):
        """Of one `pref:KEY=VALUE` key only the winning value (this project's before global)."""
        keys = {k for k in (_Core._pref_key(r["pattern"]) for r in records) if k}
        if not keys:
            return records
        losers = {(pattern, proj) for g in _Core._pref_groups(self._pref_rows(keys)).values()
                  for pattern, proj, _, _, _ in g[1:]}
        values = {}
        for r in records:
            k = _Core._pref_key(r["pattern"])
            if k is not None and (r["pattern"], r["project"]) not in losers:
                values.setdefault(k, []).append(r)
        keep = {id(max(rs, key=lambda r: (r["project"] == project, r["last_seen"])))
                for rs in values.values()}
        return [r for r in records if id(r) in keep or _Core._pref_key(r["pattern"]) is None]

    def _chunked(self, sql, values, head=()):
        """Rows of `sql` whose "{}" takes an IN-list of `values`, 500 at a time (SQLite: 999)."""
        rows = []
        for i in range(0, len(values), 500):
            part = values[i:i + 500]
            rows += self._read(sql.format(",".join("?" * len(part))), [*head, *part])
        return rows

    def _roots(self, fingerprints):
        """{fingerprint: folder} of the projects among `fingerprints` whose folder is known."""
        fps = sorted({f for f in fingerprints if f})
        return dict(self._chunked("SELECT fingerprint, root FROM projects"
                                  " WHERE fingerprint IN ({})", fps))

    def _fts_sync(self):
        """Index the patterns stored since the last sync (ids above fts_state.indexed_id)."""
        if not self._read("SELECT 1 FROM sqlite_master WHERE name = 'fts_state'"):
            return
        if not self._read("SELECT 1 FROM fts_state, instincts WHERE instincts.id > indexed_id"
                          " LIMIT 1"):
            return
        try:
            with self._write() as conn:
                (mark,), = conn.execute("SELECT indexed_id FROM fts_state").fetchall()
                conn.execute("INSERT INTO instincts_fts (rowid, pattern, category)"
                             " SELECT id, pattern, category FROM instincts WHERE id > ?", (mark,))
                conn.execute("UPDATE fts_state SET indexed_id ="
                             " (SELECT max(?, coalesce(max(id), 0)) FROM instincts)", (mark,))
        except StoreError:
            pass                   # a read-only store: search what is indexed

    def _fts(self):
        return bool(self._read("SELECT 1 FROM sqlite_master WHERE name = 'instincts_fts'"))

    def _forget(self, pattern, project):
        with self._write() as conn:
            a = normalize_pattern(pattern)
            alias = conn.execute("SELECT pattern FROM aliases WHERE alias = ?", (a,)).fetchone()
            if alias:
                conn.execute("DELETE FROM aliases WHERE alias = ?", (a,))
                return {"pattern": alias[0], "alias": a}
            p, proj, scope = self._locate(pattern, project, conn)
            rec = self._get_record(conn, p, proj)
            if rec is None:
                raise _Core._missing(p, proj)
            conn.execute("DELETE FROM instincts WHERE pattern = ? AND project = ?", (p, proj))
            events = conn.execute("DELETE FROM events WHERE pattern = ? AND project = ?",
                                  (p, proj)).rowcount
            conn.execute("DELETE FROM mined WHERE pattern = ? AND project = ?", (p, proj))
            line = p + "\t" + proj
            for eid, data in conn.execute("SELECT id, data FROM events WHERE kind = 'surface'"
                                          " AND instr(data, ?) > 0", (line,)).fetchall():
                conn.execute("UPDATE events SET data = ? WHERE id = ?",
                             ("\n".join(x for x in data.split("\n") if x != line), eid))
            if not conn.execute("SELECT 1 FROM instincts WHERE pattern = ?", (p,)).fetchone():
                conn.execute("DELETE FROM aliases WHERE pattern = ? OR alias = ?", (p, p))
                conn.execute("DELETE FROM settings WHERE substr(key, 1, ?) = ?",
                             (len(p) + 9, f"pattern.{p}."))
            conn.execute("INSERT OR REPLACE INTO forgotten (key, ts) VALUES (?, ?)",
                         (_forgotten_key(p, proj, self._db.key()), self._now()))
            self._event(conn, "forget", "", proj, delta=-rec["confidence"])  # no copy of the name
        self._scrub()
        return {**rec, "scope": scope, "events": events, "root": self._roots([proj]).get(proj, "")}

    def _guarded(self, name, dry_run, fn):
        """A destructive operation `fn(store)`: with dry_run on a private copy of the store (this
        one is left as it is), else here after an automatic backup -> fn's result, saying which."""
        if not dry_run:
            if self._db.read_only or not os.access(os.path.dirname(self.path), os.W_OK):
                raise StoreError(f"{self.path} is read-only: nothing was changed")
            backup = self._auto_backup(name)
            return {**fn(self), "backup_file": backup}
        tmp = _temp_file(os.path.dirname(self.path))
        try:
            try:
                self._snapshot(self._db.conn, tmp)
            except sqlite3.Error as e:
                raise _db_error(self.path, e) from None
            with type(self)(tmp, clock=self._clock, cwd=self.cwd, session=self.session) as copy:
                return {**fn(copy), "dry_run": True}
        finally:
            _drop_temp(tmp)
            _drop_temp(tmp + ".bak")

    def _auto_backup(self, name):
        """Save the store in `<db>.N.<UTC time>-<name>.bak` (0600), keep AUTO_BACKUPS: its path."""
        t = time.time()                             # real time: for the reader only
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(t)) + ".%06dZ" % (t % 1 * 1e6)
        dest = f"{self.path}.{_auto_backups(self.path, number=True)}.{stamp}-{name}.bak"
        if os.path.lexists(dest):
            raise StoreError(f"cannot write the automatic backup {dest}: it exists")
        try:
            self._snapshot(self._db.conn, dest)
        except sqlite3.Error as e:
            raise _db_error(self.path, e) from None
        except OSError as e:
            raise StoreError(f"cannot write the automatic backup {dest}: {e.strerror}") from None
        for old in _auto_backups(self.path)[:-AUTO_BACKUPS]:
            if old != dest:                         # (the one just written: never)
                _drop_temp(old)                     # with its -wal and -shm, if opened
        return dest

    def _snapshot(self, conn, dest):
        """Copy a consistent snapshot of conn into a new file `dest` (atomically, mode 0600)."""
        near = os.path.dirname(self.path)
        tmp = _temp_file(os.path.dirname(dest), near)
        try:
            out = sqlite3.connect(tmp, isolation_level=None)
            try:
                self._db.retry(conn.backup, out)
                out.execute("PRAGMA journal_mode=DELETE")   # one self-contained file
                counts = out.execute("SELECT (SELECT count(*) FROM instincts),"
                                     " (SELECT count(*) FROM events)").fetchone()
            finally:
                out.close()
            os.replace(tmp, dest)
        finally:
            _drop_temp(tmp, near)
        return counts

    def _scrub(self):
        """After forgetting: fold each full-text index into one segment (old ones still hold deleted
        terms; secure_delete zeroes what they free), truncate the WAL (old frames: best effort)."""
        for t in ("instincts_fts", "memories_fts"):
            if self._read("SELECT 1 FROM sqlite_master WHERE name = ?", (t,)):
                with self._write() as conn:
                    conn.execute(f"INSERT INTO {t}({t}) VALUES ('optimize')")
        try:
            self._db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error:
            pass

    def _threshold_sql(self, settings, which):
        """SQL expression for a row's threshold, in _THRESHOLD_SCOPES' order, then store-wide."""
        default = int(settings[which])
        parts = []
        for scope in _THRESHOLD_SCOPES:               # the scope names the row's column
            if any(k.startswith(scope + ".") and k.endswith("." + which) for k in settings):
                parts.append(f"(SELECT CAST(value AS INTEGER) FROM settings WHERE key = "
                             f"'{scope}.' || i.{scope} || '.{which}')")
        return f"coalesce({', '.join(parts + [str(default)])})" if parts else str(default)

    def _prune_events(self, settings, most=None):
        """Cut the event log to its retention (events_max_days, events_max_rows, the newest
        SURFACE_MAX_EVENTS showings), oldest first, in paused _DECAY_BATCH transactions so a hook
        never waits long; at most `most` rows (None: all) -> how many were deleted."""
        cutoff = _iso(self._clock() - settings["events_max_days"] * 86400)
        (lo, hi), = self._read("SELECT min(id), max(id) FROM events")
        deleted = 0
        if lo is not None:
            kept = self._read("SELECT id FROM events WHERE ts >= ? ORDER BY id LIMIT 1", (cutoff,))
            end = max(kept[0][0] if kept else hi + 1, hi - settings["events_max_rows"] + 1)
            end = end if most is None else min(end, lo + most)      # ids below `end` go
            for start in range(lo, end, _Core._DECAY_BATCH):
                if start > lo:
                    time.sleep(_Core._YIELD_S)
                with self._write() as conn:
                    deleted += conn.execute("DELETE FROM events WHERE id >= ? AND id < ?",
                                            (start, min(start + _Core._DECAY_BATCH, end))).rowcount
        with self._write() as conn:
            deleted += conn.execute(
                "DELETE FROM events WHERE kind = 'surface' AND ts < (SELECT ts FROM events WHERE"
                " kind = 'surface' ORDER BY ts DESC LIMIT 1 OFFSET ?)",
                (SURFACE_MAX_EVENTS - 1,)).rowcount
        return deleted

    @staticmethod
    def _setting_key(key):
        _check_text(key, "key", MAX_PATTERN + 64, empty_ok=False)
        if key in SETTINGS:
            return key
        for which in _THRESHOLD_KEYS:
            for scope in _THRESHOLD_SCOPES:
                pre, suf = scope + ".", "." + which
                if key.startswith(pre) and key.endswith(suf) and len(key) > len(pre) + len(suf):
                    name = key[len(pre):-len(suf)]
                    name = _check_category(name) if scope == "category" else normalize_pattern(name)
                    return pre + name + suf
        raise ValidationError(f"unknown setting {key!r}; known: {', '.join(SETTINGS)}, "
                              "category.<name>.mature_threshold|rule_threshold, "
                              "pattern.<pattern>.mature_threshold|rule_threshold")

    @staticmethod
    def _mined_source(src):
        """Whether mining found it: 'hooks[:<client>]' (live) or 'import:<client>' (history).
        Only that is evidence (what the project ran, in sessions) that may instruct: a hint, a
        "follow it" line; an observe, an MCP call or an import of a share file is a note."""
        return src == "hooks" or str(src).startswith(("import:", "hooks:"))

    @staticmethod
    def _note_source(src, imported=False):
        """The source a note is stored with: an import's evidence becomes 'shared:<source>'; an
        observe may not claim to be evidence."""
        if not _Core._mined_source(src):
            return src
        if imported:
            return "shared:" + src
        raise ValidationError(f"source {src!r} is kept for what instinct's hooks captured; name"
                              " who observed it instead (e.g. claude-code)")


# =============================================================================
# 11. Memory text and staleness anchors (keys, redaction, memory files, anchors)
# =============================================================================
class _Mem:
    """A knowledge memory's text: keys, redaction, frontmatter files, JSON shapes and rendering."""

    # Seeds 002 (recall by relevance, recency, confidence, usage) and 004 (typed, Why, How to apply,
    # Markdown). type -> (recency half-life, days unused before it loses 1 confidence; 0: archived).
    MEMORY_TYPES = {"user": (180, 120), "feedback": (120, 90), "project": (60, 60),
                    "reference": (120, 90), "episode": (30, 45)}
    JACCARD = 0.8      # share of words (title + content) at which a memory repeats another
    COMMON = 500       # query words in more memories are skipped; also recall's most candidates
    SATURATE = 10      # confidence and recall counts score fully from here on
    PER_KEY = 200      # remember: newest memories read per key when looking for a repeat
    CANDIDATES = 64    # ... of which this many (sharing the most keys) are compared
    STOP = frozenset("a an and are as at be but by do does for from has have how i if in into is "
                     "it its my no not of on or so than that the then there this to us was we were "
                     "what when which with you your".split())
    COLS = ("id, type, title, content, why, how_to_apply, tags, project, source, confidence,"
            " created, updated, last_recalled, recall_count, archived, archived_at, metadata,"
            " supersedes, superseded_by")
    FIELDS = COLS.split(", ")          # a record's keys, in this order
    MARKERS = (("**why:**", "why"), ("**why**:", "why"),
               ("**how to apply:**", "how_to_apply"), ("**how to apply**:", "how_to_apply"))
    HASHES = ((1390851129, 4071050724), (647892279, 1695753998), (2795742289, 207388624),
              (311111475, 3527346212), (2301595691, 404285457), (1570621945, 2503055453),
              (249103477, 3907149204), (2179419893, 922121676))    # 4 bands of 2 min-hashes
    REDACTED = "[REDACTED]"
    SECRET_KEYS = ("password", "passwd", "pwd", "secret", "token", "api_key", "apikey", "api-key",
                   "access_key", "private_key", "auth", "credential", "bearer")

    @staticmethod
    def words(text):
        """Lower-cased runs of letters and digits: the words FTS5's unicode61 tokenizer indexes."""
        import re
        return re.findall(r"[^\W_]+", text.lower())

    @staticmethod
    def key(kind, mtype, project, text):
        from zlib import crc32
        return crc32(f"{kind}\x1f{mtype}\x1f{project}\x1f{text}".encode())

    @staticmethod
    def tombstones(mtype, project, title, name, key=None):
        """A forgotten memory's tombstones (table `forgotten`): hashes of its title and name keyed
        with `key`, then the unkeyed ones stores before schema v16 wrote (still honoured)."""
        texts = (f"t\x1f{mtype}\x1f{project}\x1f{' '.join(_Mem.words(title))}",
                 f"n\x1f{mtype}\x1f{project}\x1f{name or _Mem.slug(mtype, title)}")
        from zlib import crc32
        return ["n" + _keyed(key, t, 16) for t in texts] + ["m%d" % crc32(t.encode())
                                                            for t in texts]

    @staticmethod
    def keys(mtype, project, title, content, name=""):
        """Keys finding a memory's repeats in its scope: title, name, 4 bands of 2 min-hashes of
        its non-stop words; Jaccard J shares a band with p = 1 - (1 - J**2)**4 (0.98 at 0.8)."""
        from zlib import crc32
        keys = {_Mem.key("t", mtype, project, " ".join(_Mem.words(title)))}
        if name:
            keys.add(_Mem.key("n", mtype, project, name))
        words = set(_Mem.words(title + " " + content))
        base = [crc32(w.encode()) for w in (words - _Mem.STOP or words)]
        mins = [min((h * a + b) % 4294967311 for h in base) for a, b in _Mem.HASHES]
        for i in range(0, len(mins), 2):
            keys.add(_Mem.key(f"b{i}", mtype, project, f"{mins[i]}.{mins[i + 1]}"))
        return keys

    @staticmethod
    def redact_secrets(text):
        """(text with each secret-looking part replaced by [REDACTED], how many), as capture does
        (sections 12, 13): known token prefixes (ghp_, sk-, AKIA, eyJ...), PEM private keys, the
        value of `password=`/`token:` assignments, the password in `scheme://user:pass@host` and
        24+ character words mixing upper, lower case and digits; git hashes and words pass."""
        import re
        n = 0

        def sub(pattern, repl, flags=0):
            nonlocal text, n
            text, k = re.subn(pattern, repl, text, flags=flags)
            n += k
        sub(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----.*?"
            r"(-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\Z)", _Mem.REDACTED, re.S)
        sub(r"([a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]{3,}(@)", r"\1" + _Mem.REDACTED + r"\2", re.I)
        sub(r"((?:%s)[\w.-]*[\"']?\s*[:=]\s*[\"']?)(?!\[REDACTED\])[^\s\"',;]{6,}"
            % "|".join(map(re.escape, _Mem.SECRET_KEYS)), r"\1" + _Mem.REDACTED, re.I)
        sub(r"(?<![\w-])(?:%s)[\w.\-/+=]{8,}" % "|".join(map(re.escape, _SECRET_PREFIXES)),
            _Mem.REDACTED, re.I)
        w = "[A-Za-z0-9_+/=-]"              # a long word mixing upper, lower case and digits
        sub(rf"(?<![\w/+=-])(?={w}*[A-Z])(?={w}*[a-z])(?={w}*[0-9]){w}{{24,}}(?![\w/+=-])",
            _Mem.REDACTED)
        return text, n

    @staticmethod
    def redact_value(value):
        """redact_secrets over every string of a JSON value -> (value, count)."""
        if isinstance(value, str):
            return _Mem.redact_secrets(value)
        if isinstance(value, list):
            pairs = [_Mem.redact_value(v) for v in value]
            return [v for v, _ in pairs], sum(k for _, k in pairs)
        if isinstance(value, dict):
            pairs = {key: _Mem.redact_value(v) for key, v in value.items()}
            return {key: v for key, (v, _) in pairs.items()}, sum(k for _, k in pairs.values())
        return value, 0

    @staticmethod
    def text(value, what, limit, multiline=False, empty_ok=True):
        value = value.replace("\r\n", "\n").strip()
        _check_text(value.replace("\n", " ") if multiline else value, what, limit, empty_ok)
        if multiline and any(line.lower().startswith(tuple(m for m, _ in _Mem.MARKERS))
                             for line in value.split("\n")):
            raise ValidationError(f"{what} must not hold a '**Why:**' or '**How to apply:**' line; "
                                  "pass those as why and how_to_apply")
        return value

    @staticmethod
    def tags(tags):
        """'a, b' -> 'a,b' (distinct, in order)."""
        out = [t.strip() for t in tags.split(",") if t.strip()]
        for t in out:
            if not (t[0].isalnum() and all(c.isalnum() or c in "-_./+" for c in t)):
                raise ValidationError(f"tag {t!r} must start with a letter or digit and hold only "
                                      "letters, digits and - _ . / +")
        text = ",".join(dict.fromkeys(out))
        if len(text) > 500:
            raise ValidationError("tags are longer than 500 characters")
        return text

    @staticmethod
    def merge_csv(old, new):
        parts = [p for p in old.split(",") if p]
        parts += [p for p in new.split(",") if p and p not in parts]
        return ",".join(parts)

    @staticmethod
    def episode(meta):
        """Check an episode's task, steps, failures and outcome -> a text for its content."""
        out = []
        for key in ("task", "steps", "failures", "outcome"):
            v = meta.get(key)
            if v is not None and key in ("steps", "failures"):
                if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
                    raise ValidationError(f"episode metadata '{key}' must be a list of strings")
                if v:
                    out.append(key.capitalize() + ":" + "".join(f"\n- {s}" for s in v))
            elif v is not None and not isinstance(v, str):
                raise ValidationError(f"episode metadata '{key}' must be a string")
            elif v:
                out.append(f"{key.capitalize()}: {v}")
        return "\n".join(out)

    @staticmethod
    def record(row):
        r = {k: v for k, v in zip(_Mem.FIELDS, row)      # no supersedes keys while unset
             if v is not None or k not in ("supersedes", "superseded_by")}
        r["tags"] = [t for t in r["tags"].split(",") if t]
        r["archived"] = bool(r["archived"])
        r["metadata"] = _loads_meta(r["metadata"])
        return r

    @staticmethod
    def slug(mtype, title):
        """The default `name` of a memory in Markdown: its type and the ASCII words of its title."""
        s = "-".join("".join(c if c.isascii() and c.isalnum() else " "
                             for c in title.lower()).split())
        s = s[:60].rstrip("-")
        return f"{mtype}-{s}" if s else f"{mtype}-{_sha256_hex(title)[:8]}"

    @staticmethod
    def digest(r):
        return _sha256_hex("\x1f".join((r["project"], r["type"], r["title"], r["content"])))[:8]

    @staticmethod
    def git_subjects(root, n=3):
        """The last `n` commit subjects at `root`, newest first, from the reflog .git/logs/HEAD (no
        git process; a worktree's `.git` file names its git directory); [] when there is none."""
        git = os.path.join(root, ".git")
        try:
            if os.path.isfile(git):
                head = _read_regular(git, 4096).decode("utf-8", "replace").split("\n")[0]
                if not head.startswith("gitdir:"):
                    return []
                git = os.path.join(root, head[7:].strip())
            tail = _read_regular(os.path.join(git, "logs", "HEAD"), 65536, tail=True)
            lines = tail.decode("utf-8", "replace").split("\n")
        except (OSError, ValueError):
            return []
        if len(tail) == 65536:
            lines = lines[1:]                    # the first one was cut by the seek
        out = []
        for line in reversed(lines):
            kind, colon, subject = line.partition("\t")[2].partition(": ")
            kind, _, step = kind.partition(" (")
            if (colon and subject.strip() and subject.strip() not in out
                    and (kind in ("commit", "cherry-pick", "revert")
                         or kind.startswith("rebase") and step[:4] in ("pick", "rewo"))):
                out.append(subject.strip())
                if len(out) == n:
                    break
        return out

    # --- seed 004's Markdown: front matter (name, description, metadata.type) + body --
    @staticmethod
    def _fm_quote(s):
        """A front-matter value: plain when YAML reads it back unchanged, else double-quoted."""
        plain = (s and s == s.strip() and s[0] not in "-?:,[]{}#&*!|>'\"%@`" and ":" not in s
                 and " #" not in s and s.isprintable()
                 and s.lower() not in ("true", "false", "yes", "no", "on", "off", "null", "~"))
        if plain:
            try:
                float(s)
            except ValueError:
                return s
        return _dumps(s)

    @staticmethod
    def _fm_unquote(raw, where):
        s = raw.strip()
        if s[:1] == '"':
            try:
                v = _loads(s)
            except ValueError:
                v = None
            if not isinstance(v, str):
                raise ValidationError(f"{where}: cannot read the quoted value {s}")
            return v
        if len(s) >= 2 and s[0] == s[-1] == "'":
            return s[1:-1].replace("''", "'")
        return s.partition(" #")[0].rstrip()

    @staticmethod
    def _fm_entries(lines, where):
        """Front-matter lines -> [(key, rest of its line, the more-indented lines under it)]."""
        out, i = [], 0
        while i < len(lines):
            line = lines[i]
            i += 1
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, colon, rest = line.strip().partition(":")
            if not colon or not key.strip() or key.startswith("-"):
                raise ValidationError(f"{where}: cannot read the front-matter line "
                                      f"{line.strip()!r}")
            depth = len(line) - len(line.lstrip())
            block = []
            while i < len(lines) and (not lines[i].strip()
                                      or len(lines[i]) - len(lines[i].lstrip()) > depth):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out.append((key.strip(), rest, block))
        return out

    @staticmethod
    def parse_memory_md(text, where):
        """A seed-004 Markdown memory -> dict of its fields; None without front matter."""
        lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
        if lines[0].rstrip() != "---":
            return None
        end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
        if end is None:
            raise ValidationError(f"{where}: the front matter has no closing '---'")
        m = {"name": "", "title": None, "type": None, "tags": "", "project": None, "source": "",
             "confidence": None, "data": {}, "extra": {}}
        top_type = None

        def one_line(key, rest, block):
            if block:
                raise ValidationError(f"{where}: '{key}' must be a one-line value")
            return _Mem._fm_unquote(rest, where)
        for key, rest, block in _Mem._fm_entries(lines[1:end], where):
            if key == "metadata" and not rest.strip():
                for k, r, b in _Mem._fm_entries(block, where):
                    if k == "tags":
                        items = r.strip()
                        items = items[1:-1].split(",") if items[:1] == "[" and items[-1:] == "]" \
                            else items.split(",") if items \
                            else [x.strip()[1:] for x in b if x.strip().startswith("-")]
                        m["tags"] = ",".join(_Mem._fm_unquote(x, where) for x in items if x.strip())
                    elif k == "data":
                        try:
                            m["data"] = _loads(r) if not b else None
                        except ValueError:
                            m["data"] = None
                        if not isinstance(m["data"], dict):
                            raise ValidationError(f"{where}: metadata.data must be a one-line"
                                                  " JSON object")
                    elif k == "confidence":
                        v = one_line(k, r, b)
                        if not (v.isascii() and v.isdigit()):
                            raise ValidationError(f"{where}: metadata.confidence must be a"
                                                  " whole number")
                        m["confidence"] = int(v)
                    elif k in ("type", "project", "source"):
                        m[k] = one_line(k, r, b)
                    else:
                        m["extra"]["metadata." + k] = r + "".join("\n" + x for x in b)
            elif key in ("name", "description"):
                m["title" if key == "description" else key] = one_line(key, rest, block)
            elif key == "type":
                top_type = one_line(key, rest, block)
            else:
                m["extra"][key] = rest + "".join("\n" + x for x in block)
        m["type"] = m["type"] or top_type
        if not m["type"]:
            raise ValidationError(f"{where}: the front matter names no metadata.type")
        m["title"] = m["title"] or m["name"]
        if not m["title"]:
            raise ValidationError(f"{where}: the front matter has no description")
        parts, cur = {"content": [], "why": [], "how_to_apply": []}, "content"
        for line in lines[end + 1:]:
            low = line.lower()
            for marker, key in _Mem.MARKERS:
                if low.startswith(marker):
                    cur, line = key, line[len(marker):].lstrip(" ")
                    break
            parts[cur].append(line)
        m.update((k, "\n".join(v).strip()) for k, v in parts.items())
        return m

    @staticmethod
    def md(meta):
        """metadata["_md"] ({name, extra}) when it is what import-memories writes, else {}."""
        md = meta.get("_md")
        if not isinstance(md, dict):
            return {}
        out = {}
        if isinstance(md.get("name"), str) and md["name"]:
            out["name"] = md["name"]
        extra = md.get("extra")

        def fits(k, v):                  # written back as `k:v`, its later lines nested under k
            depth = 2 if k.startswith("metadata.") else 0
            return (isinstance(k, str) and isinstance(v, str) and k.strip() == k and k
                    and not any(c in k for c in ":\n#") and not k.startswith("-")
                    and all(not x.strip() or len(x) - len(x.lstrip()) > depth
                            for x in v.split("\n")[1:]))
        if isinstance(extra, dict) and all(fits(k, v) for k, v in extra.items()):
            out["extra"] = extra
        return out

    @staticmethod
    def memory_md(r, name):
        """A memory record -> seed 004's Markdown (the exact inverse of _parse_memory_md)."""
        import json
        md = _Mem.md(r["metadata"])
        extra = md.get("extra") or {}
        data = {k: v for k, v in r["metadata"].items() if k != "_md" or not md}
        out = ["---", f"name: {_Mem._fm_quote(name)}", f"description: {_Mem._fm_quote(r['title'])}"]
        out += [f"{k}:{v}" for k, v in extra.items() if not k.startswith("metadata.")]
        out += ["metadata:", f"  type: {r['type']}"]
        if r["tags"]:
            out.append(f"  tags: [{', '.join(r['tags'])}]")
        out += [f"  {k}: {_Mem._fm_quote(r[k])}" for k in ("project", "source") if r[k]]
        if r["confidence"] != 1:
            out.append(f"  confidence: {r['confidence']}")
        if data:
            out.append("  data: " + json.dumps(data, ensure_ascii=False, separators=(", ", ": ")))
        out += [f"  {k[9:]}:{v}" for k, v in extra.items() if k.startswith("metadata.")]
        marks = ([f"**Why:** {r['why']}"] if r["why"] else []) + \
            ([f"**How to apply:** {r['how_to_apply']}"] if r["how_to_apply"] else [])
        body = "\n\n".join(x for x in (r["content"], "\n".join(marks)) if x)
        return "\n".join(out) + "\n---\n" + ("\n" + body + "\n" if body else "")

    # --- output schemas and renderers ------------------------------------------------
    NUM, STRS = {"type": "number"}, {"type": "array", "items": _Out.STR}
    MEMORY_PROPS = {
        "id": _Out.INT, "type": _Out.STR, "title": _Out.STR, "content": _Out.STR, "why": _Out.STR,
        "how_to_apply": _Out.STR, "tags": STRS, "project": _Out.STR,
        "source": _Out.STR, "confidence": _Out.INT, "created": _Out.STR, "updated": _Out.STR,
        "last_recalled": _Out.STR, "recall_count": _Out.INT, "archived": _Out.BOOL,
        "archived_at": _Out.STR, "supersedes": _Out.INT, "superseded_by": _Out.INT,
        "metadata": {"type": "object"}}
    MEMORY_REQ = ("id", "type", "title", "content", "project", "confidence", "created", "updated")
    MEMORY = _Out.obj(dict(MEMORY_PROPS, status=_Out.STR, warnings=STRS, about=STRS), MEMORY_REQ)
    IMPORTED = ("files", "added", "updated", "unchanged", "skipped")    # import_memories' counts
    PARTS = ("relevance", "recency", "confidence", "usage")      # recall's score, in this order
    MEMORY_HIT = _Out.obj(dict(MEMORY_PROPS, score=NUM, parts=_Out.obj(
        dict.fromkeys(PARTS, NUM), PARTS)), MEMORY_REQ + ("score", "parts"))

    @staticmethod
    def render_memory(r):
        flags = [r.get("status"), f"confidence {r['confidence']}", f"recalled {r['recall_count']}x",
                 f"project {r['project']}" if r["project"] else "global",
                 "archived" if r["archived"] else None,
                 f"supersedes #{r['supersedes']}" if "supersedes" in r else None,
                 f"superseded by #{r['superseded_by']}" if "superseded_by" in r else None]
        out = [f"#{r['id']} [{r['type']}] {r['title']}  ({', '.join(filter(None, flags))})",
               r["content"], f"**Why:** {r['why']}" if r["why"] else None,
               f"**How to apply:** {r['how_to_apply']}" if r["how_to_apply"] else None,
               *(f"warning: {w}" for w in r.get("warnings", ())),
               f"about: {', '.join(r['about'])}" if r.get("about") else None]
        return "\n".join(filter(None, out))

    @staticmethod
    def render_memories(rs):
        out = []
        for r in rs:
            line = f"  #{r['id']:<5} [{r['type']}] {r['title']}  conf={r['confidence']}"
            if "score" in r:
                parts = " + ".join(f"{k} {r['parts'][k]:.3f}" for k in _Mem.PARTS)
                line += f"  score={r['score']:.3f} = {parts}"
            line += "  [archived]" if r["archived"] else ""
            line += f"  [superseded by #{r['superseded_by']}]" if "superseded_by" in r else ""
            out.append(line)
        out.append(_Out.count(len(rs), "memory"))
        return "\n".join(out)

    ID = Param("id", int, "the memory's id", required=True, positional=True, minimum=1,
               maximum=2**63 - 1)
    TYPE = Param("type", str, "only this type", choices=tuple(MEMORY_TYPES))
    SCOPE = Param("project", str, "only this scope: '' global, a fingerprint or a project path "
                  "(default: all)")


class _Anchors:
    """Staleness anchors: an item's files by git blob id (changed: 'may be stale', gone: out)."""

    DEFINING_FILES = {
        **dict.fromkeys("npm pnpm yarn bun npx bunx".split(), ("package.json",)),
        **dict.fromkeys("uv uvx poetry pdm hatch pytest ruff mypy black pyright python "
                        "python3".split(), ("pyproject.toml",)),
        "make": ("Makefile", "makefile", "GNUmakefile"),
        "just": ("justfile", "Justfile", ".justfile"),
        "mix": ("mix.exs",), "cargo": ("Cargo.toml",), "go": ("go.mod",), "tox": ("tox.ini",)}

    @staticmethod
    def defining_file(root, shape):
        """'npm run lint' -> 'package.json' when root holds it (the first found), else None."""
        names = _Anchors.DEFINING_FILES.get(shape.split(" ", 1)[0], ())
        return next((n for n in names if os.path.isfile(os.path.join(root, n))), None)

    @staticmethod
    def _git_blob(path):
        """(git blob id, size, mtime in ns) of a file, as `git hash-object` (no git process)."""
        import hashlib
        st = os.stat(path)                         # before the read: a later change shows
        data = _read_regular(path, MAX_IMPORT_BYTES)
        return hashlib.sha1(b"blob %d\0%s" % (len(data), data)).hexdigest(), st.st_size, \
            st.st_mtime_ns

    @staticmethod
    def path(root, path, cwd=None):
        """A file the user named (from `cwd`, else from `root`) -> its '/' path relative to root."""
        for base in (cwd or root, root):
            full = os.path.realpath(os.path.join(base, os.path.expanduser(path)))
            rel = os.path.relpath(full, root)
            if os.path.isfile(full) and rel != os.pardir and not rel.startswith(os.pardir + os.sep):
                return rel.replace(os.sep, "/")
        raise ValidationError(f"{path} is not a file in the project {root}")

    @staticmethod
    def _key(root, item):
        """(root fingerprint, memory id or 0, pattern, project) of an instinct or memory record."""
        ref = (0, item["pattern"], item["project"]) if "pattern" in item else (item["id"], "", "")
        return (_sha256_hex(root)[:12], *ref)

    WHERE = " WHERE root = ? AND memory = ? AND pattern = ? AND project = ?"

    @staticmethod
    def look(conn, root, item, paths=()):
        """`item`'s anchors in `root`, and `paths` (relative to it), as the files are now: {path:
        (blob, size, mtime), None if gone or not a regular file}, unmoved ones (size, mtime) out."""
        known = {p: st for p, *st in conn.execute("SELECT path, size, mtime FROM anchors"
                                                  + _Anchors.WHERE, _Anchors._key(root, item))}
        out = {}
        for path in dict.fromkeys([*known, *paths]):
            try:
                st = os.stat(os.path.join(root, path))
                if known.get(path) != [st.st_size, st.st_mtime_ns]:
                    out[path] = _Anchors._git_blob(os.path.join(root, path))
            except (OSError, ValueError):
                out[path] = None
        return out

    @staticmethod
    def reanchor(conn, root, item, paths=(), looked=None):
        """Confirm `item` in the caller's write: its anchors take the files as `look` finds them
        now (or found them before the write: `looked`)."""
        key = _Anchors._key(root, item)
        looked = _Anchors.look(conn, root, item, paths) if looked is None else looked
        conn.executemany("INSERT OR REPLACE INTO anchors (root, memory, pattern, project, path,"
                         " blob, size, mtime) VALUES (?,?,?,?,?,?,?,?)",
                         [(*key, path, *got) for path, got in looked.items() if got])
        conn.executemany("DELETE FROM anchors" + _Anchors.WHERE + " AND path = ?",
                         [(*key, path) for path, got in looked.items() if not got])

    @staticmethod
    def staleness(conn, root, items):
        """Per item (instinct or memory record) None or why it may be stale by its anchors in `root`
        ('pyproject.toml changed' / 'is gone'); a file is hashed only if its size or mtime moved."""
        import stat
        want, seen = {}, {}
        for i, item in enumerate(items):
            want.setdefault(_Anchors._key(root, item)[1:], []).append(i)
        out = [None] * len(items)
        for *ref, path, blob, size, mtime in conn.execute(
                "SELECT memory, pattern, project, path, blob, size, mtime FROM anchors"
                " WHERE root = ?", (_sha256_hex(root)[:12],)):
            for i in want.get(tuple(ref), ()):
                k = (path, blob, size, mtime)
                if k not in seen:
                    full = os.path.join(root, path)
                    try:
                        st = os.stat(full)
                        same = (st.st_size, st.st_mtime_ns) == (size, mtime) or (
                            stat.S_ISREG(st.st_mode) and _Anchors._git_blob(full)[0] == blob)
                        seen[k] = None if same else f"{path} changed"
                    except (OSError, ValueError):
                        seen[k] = f"{path} is gone"
                out[i] = out[i] or seen[k]
        return out


# =============================================================================
# 12. Shell commands (the shape reader: program and subcommand, never arguments)
# =============================================================================
class _Shell:
    """Reads a command as a shell does (quotes, escapes, heredocs, $( ), lists, compound commands)
    and keeps only words that pass an allow-list of plain tokens. Not shlex, which knows no
    heredocs, $( ) or newline lists and imports re. It never raises: unbalanced quotes and
    parentheses run to the end of the input."""
    SHAPE_MAX_INPUT, SHAPE_MAX_SHAPES, SHAPE_MAX_DEPTH = 65536, 64, 8
    # Not commands: builtins that only change the shell's state, no-ops, tests, output, lookups.
    NOOPS = frozenset(
        "cd pushd popd dirs export set unset source . alias unalias true false : local declare "
        "typeset readonly shift return exit read wait test [ eval trap let ulimit umask hash shopt "
        "setopt break continue echo printf sleep clear pwd jobs fg bg disown type which".split())
    # Reserved words that open or close a compound command: skipped at command position.
    KEYWORDS = frozenset("if then else elif fi do done while until { } ! esac coproc".split())
    SHELLS = frozenset("sh bash zsh dash ksh mksh ash".split())
    # Prefixes that run the command after them, dropped: name -> (value options, positionals).
    PREFIXES = {name: (frozenset(opts.split()), npos) for name, opts, npos in (
        ("sudo", "-u -g -h -p -C -D -r -t -T -U -R --user --group --host --prompt --close-from "
                 "--chdir --role --type --command-timeout --other-user", 0),
        ("doas", "-u -C", 0),
        ("env", "-u -C -S --unset --chdir --split-string", 0),
        ("timeout", "-s -k --signal --kill-after", 1),
        ("nice", "-n --adjustment", 0),
        ("ionice", "-c -n -p -P -u --class --classdata --pid --pgid --uid", 0),
        ("nohup", "", 0), ("time", "-f -o --format --output", 0), ("exec", "-a", 0),
        ("command", "", 0), ("builtin", "", 0), ("chronic", "", 0), ("unbuffer", "", 0),
        ("stdbuf", "-i -o -e --input --output --error", 0),
        ("xargs", "-a -d -E -I -L -n -P -s --arg-file --delimiter --eof --replace --max-lines "
                  "--max-args --max-procs --max-chars --process-slot-var", 0))}
    # Programs whose first plain word is a subcommand worth keeping ('cargo clippy', 'mix test').
    SUBCOMMAND_PROGRAMS = frozenset((
        "git gh glab hub jj hg svn sl dolt bd "
        "npm pnpm yarn bun deno corepack nx turbo lerna vite vitest playwright prisma drizzle-kit "
        "next nuxt astro ng expo eas wrangler biome "
        "uv pip pip3 pipx poetry pdm hatch rye pipenv conda mamba micromamba pyenv tox nox "
        "pre-commit ruff alembic django-admin flask "
        "cargo rustup go mix rebar3 gleam dune opam cabal stack zig dotnet mvn mvnw gradle gradlew "
        "sbt lein rails rake bundle gem composer flutter dart swift pod fastlane wasm-pack diesel "
        "sqlx docker docker-compose podman kubectl helm kind minikube k3d skaffold terraform tofu "
        "pulumi vagrant aws gcloud az fly flyctl heroku vercel netlify firebase supabase cdk sam "
        "serverless make just task ninja bazel bazelisk buck2 meson mkdocs hugo jekyll mdbook "
        "brew apt apt-get dnf yum apk snap flatpak nix nix-env systemctl launchctl adb "
        "tmux ollama mise asdf openssl manage.py artisan").split())
    # Other programs keep a first word only from this allow-list (`br sync`): no argument passes.
    COMMON_SUBCOMMANDS = frozenset(
        "add apply backup bench blocked build check clean clone close compile config create delete "
        "dep deploy describe dev devices diff doctor down edit exec export fetch fmt format "
        "generate get import info init install label lint list login logout logs ls merge migrate "
        "new plan publish pull push query ready release remove restart restore root run search "
        "serve set shell show sql start stats status stop sync test uninstall up update upgrade "
        "version view watch".split())
    # ... but not programs whose first word is an operand (`rm -rf build`, `grep test f`).
    OPERAND_PROGRAMS = frozenset(
        "ls cat head tail less more grep egrep fgrep rg ag ack find fd rm rmdir mkdir cp mv ln "
        "touch chmod chown chgrp stat file wc sort uniq cut tr sed awk gawk diff cmp comm tee xxd "
        "od hexdump strings base64 md5sum sha1sum sha256sum shasum du df tree realpath readlink "
        "basename dirname open xdg-open code cursor vim vi nvim nano emacs bat man kill pkill "
        "killall pgrep curl wget ssh scp rsync tar zip unzip gzip gunzip jq yq node ruby perl php "
        "lua python ping dig host nc".split())
    # Framework scripts run by an interpreter that take a subcommand (`python manage.py migrate`).
    SCRIPT_TOOLS = frozenset(("manage.py", "artisan"))
    # Separate-value global options per program, skipped on the way to a subcommand (`git -C x`).
    VALUE_OPTIONS = {name: frozenset(opts.split()) for name, opts in (
        ("git", "-C -c --git-dir --work-tree --namespace --config-env --super-prefix"),
        ("gh", "-R --repo --hostname"), ("glab", "-R --repo"),
        ("npm", "--prefix -w --workspace --registry --userconfig --cache --loglevel"),
        ("pnpm", "-C --dir --filter -F --workspace-dir --reporter --loglevel"),
        ("yarn", "--cwd --registry"), ("bun", "--cwd -c --config"),
        ("npx", "-p --package -c --call"), ("bunx", "-p --package"),
        ("cargo", "-C --manifest-path --config -Z --color"), ("go", "-C"),
        ("uv", "--directory --project -p --python --cache-dir --config-file --color --with "
               "--with-editable --with-requirements --package --extra --group --only-group "
               "--env-file --index --default-index --index-url --extra-index-url --find-links -f "
               "--python-preference --no-group"),
        ("uvx", "--from --with --python -p --index --index-url"),
        ("pip", "--python --cache-dir --log --proxy --retries --timeout --exists-action "
                "--trusted-host --cert --client-cert -i --index-url --extra-index-url"),
        ("poetry", "-C --directory -P --project"), ("pdm", "-p --project"),
        ("hatch", "-e --env -p --project --data-dir --cache-dir --config"),
        ("pipx", "--python --spec"), ("conda", "-n --name -p --prefix"),
        ("tox", "-e -c"), ("nox", "-s --session -f --noxfile -t --tags"),
        ("docker", "-H --host -c --context --config -l --log-level --tlscacert --tlscert "
                   "-f --file -p --project-name --profile --env-file --project-directory"),
        ("podman", "--url -c --connection"),
        ("kubectl", "-n --namespace --context --cluster --kubeconfig -s --server --user --as "
                    "--as-group --request-timeout --client-certificate"),
        ("helm", "-n --namespace --kube-context --kubeconfig"),
        ("make", "-C -f --file --makefile -I --include-dir -o --old-file -W --what-if --assume-new "
                 "--new-file"),
        ("just", "-f --justfile -d --working-directory --dotenv-path --dotenv-filename --shell "
                 "--shell-arg"),
        ("mvn", "-f --file -s --settings -gs -P -pl --projects -rf -T -D -l --log-file -t -b"),
        ("gradle", "-p --project-dir -b --build-file -c --settings-file -g --gradle-user-home -I "
                   "--init-script -x --exclude-task --console --warning-mode"),
        ("rake", "-f --rakefile -C --directory -I --libdir -R --rakelibdir -r --require"),
        ("bundle", "--gemfile"), ("composer", "-d --working-dir"), ("apt", "-o -c -t"),
        ("systemctl", "-H --host -M --machine -t --type -p --property --state"),
        ("stack", "--stack-yaml --resolver"),
        ("jj", "-R --repository --at-op --config --config-toml"),
        ("hg", "-R --repository --cwd --config"), ("nix", "--option --extra-experimental-features"),
        ("aws", "--profile --region --output --endpoint-url"), ("gcloud", "--project --account"),
        ("adb", "-s -t -H -P -L"))}
    # Options that take an optional numeric value (`make -j 4 test`).
    NUMERIC_OPTIONS = frozenset("-j --jobs -l --load-average".split())
    # Runners kept with the command they run (`uv run pytest`): program -> verbs ('' = itself).
    RUN_WRAPPERS = {"uv": ("run",), "uvx": ("",), "poetry": ("run",), "pipenv": ("run",),
                    "pdm": ("run",), "hatch": ("run",), "rye": ("run",), "pipx": ("run",),
                    "bundle": ("exec",), "npx": ("",), "pnpx": ("",), "bunx": ("",),
                    "pnpm": ("exec", "dlx"), "yarn": ("dlx", "exec"), "npm": ("exec",),
                    "bun": ("x",), "conda": ("run",), "mamba": ("run",), "micromamba": ("run",),
                    "mise": ("exec", "x")}
    # Subcommands whose next plain word is kept too ('npm run build'); '*' = every subcommand.
    SECOND_WORDS = {"npm": ("run", "run-script"), "pnpm": ("run",), "yarn": ("run",),
                    "bun": ("run",), "deno": ("task",), "composer": ("run-script", "run"),
                    "gh": "*", "glab": "*", "aws": "*", "gcloud": "*", "az": "*",
                    "uv": ("pip", "tool", "python"),
                    "docker": ("compose", "buildx", "container", "image", "volume", "network",
                                "system", "context"),
                    "podman": ("compose", "container", "image", "volume", "network", "system"),
                    "dotnet": ("ef", "tool"), "kubectl": ("config", "rollout"),
                    "git": ("stash", "worktree", "submodule", "remote", "bisect", "lfs")}
    # A subcommand that ends like a file name is a path, not a subcommand (`bun run index.ts`).
    FILE_SUFFIXES = frozenset(
        "py pyc js mjs cjs ts tsx jsx json md txt yml yaml toml ini cfg conf env lock log sh bash "
        "zsh ex exs rb go rs c h cc cpp hpp java kt swift php sql csv xml html css scss vue svelte "
        "lua pl r dart zig nix tf out bin exe dll so gz tgz zip tar".split())
    # Long options whose separate value is a credential (`--token X`), skipped for every program.
    CREDENTIAL_OPTION_WORDS = ("token", "passw", "secret", "key", "auth", "credential")
    SPECIAL = frozenset(" \t\r\n\\'\"$`<>&|;()")

    @staticmethod
    def safe_token(tok, limit=40):
        """A program/tool/extension token with a plain charset, or '?' (redacted)."""
        tok = tok.strip("'\"`")
        if (not tok or len(tok) > limit or tok.lower().startswith(_SECRET_PREFIXES)
                or not all(c.isalnum() or c in "._+-" for c in tok) or not tok.isascii()
                or (len(tok) >= 12 and any(c.isdigit() for c in tok)
                    and any(c.isalpha() for c in tok))):
            return "?"
        return tok

    @staticmethod
    def _plain_subword(word):
        """A subcommand word is kept only when it is a plain lowercase word, not text or a path."""
        v = word[1]
        if (word[3] or not 0 < len(v) <= 24 or not ("a" <= v[0] <= "z") or not v.isascii()
                or sum(c.isdigit() for c in v) > 2 or v.startswith(_SECRET_PREFIXES)
                or not all(c.islower() or c.isdigit() or c in "._:-" for c in v)):
            return False
        return "." not in v or v.rsplit(".", 1)[1] not in _Shell.FILE_SUFFIXES

    @staticmethod
    def _is_assignment(raw):
        """`NAME=value`, `NAME+=value`, `NAME[i]=value`, judged on the source text (with quotes)."""
        k = raw.find("=")
        if k <= 0:
            return False
        name = raw[:k].rstrip("+").split("[", 1)[0]
        return name.isascii() and name.isidentifier()

    @staticmethod
    def _program_name(word):
        """The basename of a command word, without a Windows .exe/.cmd/.bat suffix."""
        value, raw = word[1], word[2]
        # `C:\Tools\node.exe`: a backslash in unquoted source text is a Windows path, not an escape.
        text = raw if "\\" in raw and not any(q in raw for q in "'\"$`") else value
        name = text.replace("\\", "/").rsplit("/", 1)[-1]
        if name[-4:].lower() in (".exe", ".cmd", ".bat"):
            name = name[:-4]
        return name

    @staticmethod
    def _skip_parens(s, i):
        """From the '(' at s[i] to just past its matching ')' (plain counting, as in $(( )))."""
        depth, n = 0, len(s)
        while i < n:
            c = s[i]
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return n

    @staticmethod
    def _quoted(s, i, depth, buf):
        """The escape, quotes or expansion at s[i] (\\ ' " $ ` <( >( ): returns (end, flags);
        appends its text to buf, '$' for an expansion."""
        n, c, nxt = len(s), s[i], s[i + 1:i + 2]
        if c == "\\":
            buf.append(nxt)
            return i + 2, 1
        if c == "'":
            j = s.find("'", i + 1)
            j = n if j < 0 else j
            buf.append(s[i + 1:j])
            return j + 1, 1
        if c == '"':
            return _Shell._dquote(s, i + 1, depth, buf)
        if c == "`":
            j = i + 1
            while j < n and s[j] != "`":
                j += 2 if s[j] == "\\" else 1
            buf.append("$")
            return j + 1, 2
        if c in "<>" or nxt == "(":                    # $( ), <( ), >( ); $(( )) is arithmetic
            buf.append("$")
            if (c == "$" and s[i + 2:i + 3] == "(") or depth >= _Shell.SHAPE_MAX_DEPTH:
                return _Shell._skip_parens(s, i + 1), 2
            return _Shell._lex(s, i + 2, depth + 1, None), 2
        if nxt == "{":
            buf.append("$")
            j = s.find("}", i + 2)
            return (n if j < 0 else j + 1), 2
        if nxt == "'":                                 # $'ANSI-C quoting'
            j = i + 2
            while j < n and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            buf.append(s[i + 2:j])
            return j + 1, 1
        if nxt == '"':                                 # $"locale string"
            return _Shell._dquote(s, i + 2, depth, buf)
        buf.append("$")
        return i + 1, 2

    @staticmethod
    def _dquote(s, i, depth, buf):
        """A double-quoted string from s[i] (after the opening quote): returns (end, flags)."""
        n, flags = len(s), 1
        while i < n:
            c = s[i]
            if c == '"':
                return i + 1, flags
            if c == "\\":
                if i + 1 < n and s[i + 1] in '"\\$`':
                    buf.append(s[i + 1])
                elif i + 1 < n and s[i + 1] != "\n":
                    buf.append(s[i:i + 2])
                i += 2
            elif c == "$" or c == "`":
                i, f = _Shell._quoted(s, i, depth, buf)
                flags |= f
            else:
                j = i + 1
                while j < n and s[j] not in '"\\$`':
                    j += 1
                buf.append(s[i:j])
                i = j
        return n, flags

    @staticmethod
    def _lex(s, i, depth, out):
        """Tokens of shell text s from i into out: ('w', value, source, flags) and ('o', operator);
        flags 1 = quoted or escaped, 2 = holds an expansion. Redirection targets and heredoc bodies
        are dropped. At depth > 0 (in `$( )`) it returns just past the unmatched ')'."""
        n = len(s)
        buf, start, flags = [], -1, 0
        target, heredocs, parens, cases = 0, [], 0, 0
        ops = [] if out is None else out               # out=None: operators go nowhere

        def word_end(end):
            nonlocal buf, start, flags, target, cases
            if start < 0:
                return
            value = "".join(buf)
            if target >= 2:                            # a heredoc delimiter: body on the next lines
                heredocs.append((value, target == 3))
            elif target == 0 and out is not None:
                out.append(("w", value, s[start:end], flags))
            elif target == 0 and not flags and value in ("case", "esac"):
                cases += 1 if value == "case" else -1    # `case x in a)` inside $( ): ')' is no end
            buf, start, flags, target = [], -1, 0, 0

        while i < n:
            c = s[i]
            if c not in _Shell.SPECIAL:                # '#' starting a word: a comment to the \n
                if start < 0:
                    if c == "#":
                        j = s.find("\n", i)
                        i = n if j < 0 else j
                        continue
                    start = i
                j = i + 1
                while j < n and s[j] not in _Shell.SPECIAL:
                    j += 1
                buf.append(s[i:j])
                i = j
            elif c == " " or c == "\t" or c == "\r":     # \r: commands pasted with CRLF line ends
                word_end(i)
                i += 1
            elif c == "\n":
                word_end(i)
                i += 1
                for delim, strip in heredocs:          # skip each pending heredoc body line by line
                    while i < n:
                        j = s.find("\n", i)
                        j = n if j < 0 else j
                        line = s[i:j].lstrip("\t") if strip else s[i:j]
                        i = j + 1
                        if line.rstrip("\r") == delim:
                            break
                heredocs.clear()
                ops.append(("o", "\n"))
            elif c == "\\" and s[i + 1:i + 2] == "\n":     # line continuation
                i += 2
            elif c in "\\'\"$`" or (c in "<>" and s[i + 1:i + 2] == "("):
                if start < 0:
                    start = i
                i, f = _Shell._quoted(s, i, depth, buf)
                flags |= f
            elif c in "<>" or s.startswith("&>", i):  # a redirection: its target is no word
                if c != "&" and start >= 0 and not flags and "".join(buf).isdigit():
                    buf, start = [], -1                # `2>`: the digits name a file descriptor
                word_end(i)
                for op, target in (("<<<", 1), ("<<-", 3), ("<<", 2), ("&>>", 1), (c + ">", 1),
                                   (c + "&", 1), (c + "|", 1), (c, 1)):
                    if s.startswith(op, i):
                        break
                i += len(op)
            elif c in "&|;":
                word_end(i)
                for op in (";;&", "&&", "||", "|&", ";;", ";&", c):
                    if s.startswith(op, i):
                        break
                ops.append(("o", op))
                i += len(op)
            elif c == "(":
                if start >= 0 and buf and buf[-1][-1:] in ("=", "@", "!", "+", "*", "?"):
                    j = _Shell._skip_parens(s, i)       # `a=(x y)`, `@(x|y)`: part of a word
                    buf.append(s[i:j])
                    i = j
                    continue
                word_end(i)
                if s[i + 1:i + 2] == "(":              # (( arithmetic )), for (( ; ; ))
                    i = _Shell._skip_parens(s, i)
                    ops.append(("o", "(("))
                    continue
                parens += 1
                ops.append(("o", "("))
                i += 1
            else:                                      # ")"
                word_end(i)
                i += 1
                if depth and parens <= 0 and cases <= 0:
                    return i
                parens -= 1
                ops.append(("o", ")"))
        word_end(n)
        return n

    @staticmethod
    def _first_word(words, j, key):
        """Index of the first word from j that is not an option, an option's value or VAR=value."""
        opts = _Shell.VALUE_OPTIONS.get(key, ())
        n = len(words)
        while j < n:
            v = words[j][1]
            if v == "--":
                return j + 1 if key in _Shell.RUN_WRAPPERS else n
            if v[:1] == "-" and len(v) > 1:
                j += 1
                if v in opts or (v[:2] == "--" and "=" not in v
                                 and any(w in v for w in _Shell.CREDENTIAL_OPTION_WORDS)):
                    j += 1
                elif v in _Shell.NUMERIC_OPTIONS and j < n and words[j][1].isdigit():
                    j += 1
            elif (v[:1] == "+" and key in ("cargo", "rustup")
                  or _Shell._is_assignment(words[j][2])):
                j += 1                         # `cargo +nightly build`, `make CC=clang test`
            else:
                return j
        return n

    @staticmethod
    def _wrapped(prefix, words, j, depth):
        """`uv run` + the shape of the command it runs, or the runner alone."""
        inner = _Shell._words_shapes(words, j, depth + 1) if depth < _Shell.SHAPE_MAX_DEPTH else []
        shaped = [f"{prefix} {s}" for s in inner if s != "?"]
        if not shaped and j < len(words) and _Shell._plain_subword(words[j]):
            shaped = [f"{prefix} {words[j][1]}"]       # a script: `pdm run test`, `hatch run a:b`
        return shaped or [prefix]

    @staticmethod
    def _program_shape(key, words, j, depth):
        """The shape of known program `key` whose arguments start at words[j]."""
        verbs = _Shell.RUN_WRAPPERS.get(key, ())
        k = _Shell._first_word(words, j, key)
        if verbs == ("",):
            return _Shell._wrapped(key, words, k, depth)
        if k >= len(words) or not _Shell._plain_subword(words[k]):
            return [key]
        sub = words[k][1]
        if sub in verbs:
            return _Shell._wrapped(f"{key} {sub}", words, _Shell._first_word(words, k + 1, key),
                                  depth)
        second = _Shell.SECOND_WORDS.get(key, ())
        if second == "*" or sub in second:
            k = _Shell._first_word(words, k + 1, key)
            if k < len(words) and _Shell._plain_subword(words[k]):
                return [f"{key} {sub} {words[k][1]}"]
        return [f"{key} {sub}"]

    @staticmethod
    def _words_shapes(words, i, depth):
        """The shapes of one simple command (its words from i): [] when it runs nothing."""
        n = len(words)
        while i < n:                                   # drop VAR=value and prefixes (sudo, env...)
            if _Shell._is_assignment(words[i][2]):
                i += 1
                continue
            name = _Shell._program_name(words[i])
            spec = None if words[i][3] & 2 else _Shell.PREFIXES.get(name)
            if spec is None:
                break
            opts, npos = spec
            i += 1
            while i < n and words[i][1][:1] == "-" and len(words[i][1]) > 1:
                opt = words[i][1]
                i += 1
                if opt == "--":
                    break
                if opt in ("-v", "-V") and name == "command":
                    return []                          # `command -v x` looks x up, runs nothing
                if opt in opts:
                    i += 1
            i += npos
        if i >= n:
            return []
        word = words[i]                                # `name` is its program_name (loop above)
        if word[3] & 2 and ("$" in name or "/" not in word[1]):
            if i + 1 < n and words[i + 1][1] in ("=", "+=") and word[2][:1] == "$":
                return []                              # PowerShell's `$env:X = 1` assigns
            return ["?"]                               # `$EDITOR x`; but `$SDK/bin/tool` is `tool`
        key = name.lower()
        if key in _Shell.NOOPS:
            return []
        if _Shell.safe_token(name, 32) != name or not (name[0].isalnum() or name[0] in "._"):
            return ["?"]
        if key in _Shell.SHELLS:                             # `bash -lc 'script'`: read the script
            j, script = i + 1, False
            while j < n and words[j][1][:1] in ("-", "+") and len(words[j][1]) > 1:
                opt = words[j][1]
                j += 1
                if opt in ("-o", "+o"):
                    j += 1
                elif opt[1] != "-" and "c" in opt:
                    script = True
            if script and j < n and depth < _Shell.SHAPE_MAX_DEPTH:
                return _Shell._shapes(words[j][1], depth + 1)
            return [key]
        if key in ("pwsh", "powershell"):              # `pwsh -NoProfile -Command "script"`
            j = i + 1
            while j < n and words[j][1][:1] == "-":
                opt = words[j][1].lower()
                j += 1
                if opt in ("-c", "-command") and j < n and depth < _Shell.SHAPE_MAX_DEPTH:
                    return _Shell._shapes(words[j][1], depth + 1)
                if opt in ("-file", "-f"):
                    break
                if opt in ("-executionpolicy", "-ep", "-windowstyle", "-outputformat",
                           "-inputformat", "-workingdirectory", "-wd", "-configurationname"):
                    j += 1
            return [key]
        if key in ("py", "python") or (key[:6] == "python" and key[6:].replace(".", "").isdigit()):
            j = i + 1                                  # python3.12 -> python; `python -m X` keeps X
            while j < n and words[j][1][:1] == "-" and len(words[j][1]) > 1:
                opt = words[j][1]
                j += 1
                if opt == "-c":
                    break
                if opt in ("-W", "-X"):
                    j += 1
                elif opt[:2] == "-m":
                    module = opt[2:] or (words[j][1] if j < n and not words[j][3] else "")
                    j += 0 if opt[2:] else 1
                    if (_Shell.safe_token(module, 32) != module
                            or not (module[0].isalpha() or module[0] == "_")):
                        return ["python -m"]
                    if module.lower() in _Shell.SUBCOMMAND_PROGRAMS:
                        return ["python -m " + s
                                for s in _Shell._program_shape(module.lower(), words, j, depth)]
                    return ["python -m " + module]
            key, name, i = "python", "python", j - 1
        if (key in ("python", "php") and i + 1 < n       # `python manage.py test`, `php artisan x`
                and (tool := _Shell._program_name(words[i + 1])) in _Shell.SCRIPT_TOOLS):
            return [f"{key} {s}" for s in _Shell._program_shape(tool, words, i + 2, depth)]
        if key in _Shell.SUBCOMMAND_PROGRAMS or key in _Shell.RUN_WRAPPERS:
            return _Shell._program_shape(key, words, i + 1, depth)
        k = n if key in _Shell.OPERAND_PROGRAMS else _Shell._first_word(words, i + 1, key)
        if k < n and not words[k][3] and (words[k][1] in _Shell.SUBCOMMAND_PROGRAMS
                                          or words[k][1] in _Shell.RUN_WRAPPERS):
            return _Shell._wrapped(name, words, k, depth)   # a tool in front of one: `rtk git log`
        if k < n and _Shell._plain_subword(words[k]) and words[k][1] in _Shell.COMMON_SUBCOMMANDS:
            return [f"{name} {words[k][1]}"]
        return [name]

    @staticmethod
    def _parse_shapes(toks, depth):
        """The shapes of the simple commands in a token list, in order."""
        out, cur, skip, cases, t, n = [], [], "", 0, 0, len(toks)
        while t < n and len(out) < _Shell.SHAPE_MAX_SHAPES:
            tok = toks[t]
            t += 1
            if tok[0] == "o":
                op = tok[1]
                if skip:        # a case pattern ends at ')', `for x in WORDS;` at ; or newline
                    if (skip == "pattern" and op == ")") or (skip == "for" and op in (";", "\n")):
                        skip = ""
                    continue
                if op == "(" and len(cur) == 1 and t < n and toks[t] == ("o", ")"):
                    cur, t = [], t + 1                 # `name() { ...; }` defines a function
                    continue
                if cur:
                    out.extend(_Shell._words_shapes(cur, 0, depth))
                    cur = []
                if op in (";;", ";&", ";;&") and cases:
                    skip = "pattern"
                continue
            value, plain = tok[1], not tok[3]
            if skip:
                if skip == "function" or (skip == "]]" and plain and value == "]]"):
                    skip = ""
                elif skip == "case" and plain and value == "in":
                    skip = "pattern"
                elif skip == "pattern" and plain and value == "esac":
                    skip, cases = "", cases - 1
                continue
            if not cur and plain:                      # command position: reserved words
                if value in _Shell.KEYWORDS:
                    if value == "esac" and cases:      # the last branch may omit its ';;'
                        cases -= 1
                    continue
                if value in ("for", "select", "case", "[[", "function"):
                    skip = {"select": "for", "[[": "]]"}.get(value, value)
                    if value == "case":
                        cases += 1
                    continue
            cur.append(tok)
        if cur and len(out) < _Shell.SHAPE_MAX_SHAPES:
            out.extend(_Shell._words_shapes(cur, 0, depth))
        return out

    @staticmethod
    def _shapes(command, depth):
        """The shapes of a shell string or of an argv (Codex's ["bash", "-lc", script])."""
        if isinstance(command, (list, tuple)):
            return _Shell._words_shapes([("w", str(a), str(a), 0) for a in command[:256]], 0, depth)
        if not isinstance(command, str):
            return []
        toks = []
        _Shell._lex(command[:_Shell.SHAPE_MAX_INPUT], 0, 0, toks)
        return _Shell._parse_shapes(toks, depth)

    @staticmethod
    def command_shapes(command):
        """Each simple command's shape, in execution order: 'cd a && FOO=1 uv run pytest -q | tee x'
        -> ['uv run pytest', 'tee']. A shell string or an argv list; never argument values."""
        try:
            return _Shell._shapes(command, 0)[:_Shell.SHAPE_MAX_SHAPES]
        except Exception:                              # a reader bug must never break capture
            return ["?"]


_Shell.VALUE_OPTIONS.update({alias: _Shell.VALUE_OPTIONS[same] for alias, same in (
    ("pip3", "pip"), ("mvnw", "mvn"), ("gradlew", "gradle"), ("apt-get", "apt"), ("gmake", "make"),
    ("pnpx", "npx"))})


# =============================================================================
# 13. Agent clients and tool calls (the client table, a hook payload, the call record)
# =============================================================================
# One agent client, one row of CLIENTS. `hooks`: its hook files (user, project; under HOME or the
# project) and how a handler is written; `events`: (its event name, `instinct hook` event, matcher,
# timeout s); `answer`: how context goes back; `history`: (folder env var, folder under HOME, globs,
# reader); `rules`: the export format of the rules file it reads.
class _Client(namedtuple("_Client", "hooks events answer history rules")):
    # The calls a hint can be about (a shell command, an edit): PreToolUse runs for these only.
    HINT_MATCHER = ("Bash|PowerShell|shell|exec_command|Edit|Write|MultiEdit|NotebookEdit|"
                    "apply_patch")
    # Every entry is synchronous (an async capture stores calls out of order) and one `command`
    # string, no `args` (Claude Code before 2.1.139 ignores `args`). No Stop for Claude Code:
    # `claude -p` cancels it; SessionEnd mines, and SessionStart mines what was left unmined.
    CLAUDE_EVENTS = (("SessionStart", "session-start", None, 30),
                     ("UserPromptSubmit", "user-prompt-submit", None, 10),
                     ("PreToolUse", "pre-tool-use", HINT_MATCHER, 5),
                     ("PostToolUse", "post-tool-use", "*", 10),
                     ("PostToolUseFailure", "post-tool-use-failure", "*", 10),
                     ("SessionEnd", "session-end", None, 30))


# Hook styles: "groups" (Claude Code's matcher groups), "groups-ms" (the same, timeouts in ms),
# "flat" ({"version": 1, "hooks": {event: [handler]}}, Cursor), "bash" (flat, Copilot CLI).
# Answers: "hso" (hookSpecificOutput.additionalContext), "camel" (additionalContext), "snake"
# (additional_context). No hint before a call where the client's pre-tool answer carries none.
CLIENTS = {
    "claude-code": _Client(
        (".claude/settings.json", ".claude/settings.json", "groups"), _Client.CLAUDE_EVENTS, "hso",
        ("CLAUDE_CONFIG_DIR", ".claude", ("projects/*/*.jsonl",), "claude_session"), "claude"),
    # No PostToolUseFailure (failures come in PostToolUse); its SessionEnd (root threads, 0.146
    # and later) caps timeouts at 3 s - a session it misses is mined at the next start.
    "codex": _Client(
        (".codex/hooks.json", ".codex/hooks.json", "groups"),
        _Client.CLAUDE_EVENTS[:4] + (("SessionEnd", "session-end", None, 3),), "hso",
        ("CODEX_HOME", ".codex", ("sessions/**/rollout-*.jsonl",
                                  "archived_sessions/**/rollout-*.jsonl"), "codex_session"),
        "agents"),
    "gemini-cli": _Client(
        (".gemini/settings.json", ".gemini/settings.json", "groups-ms"),
        (("SessionStart", "session-start", None, 30), ("AfterTool", "post-tool-use", "*", 10),
         ("SessionEnd", "session-end", None, 30)), "hso",
        (None, ".gemini", ("tmp/*/chats/*.json", "tmp/*/chats/*.jsonl"),
         "gemini_session"), "gemini"),
    "copilot-cli": _Client(
        (".copilot/hooks/instinct.json", ".github/hooks/instinct.json", "bash"),
        (("sessionStart", "session-start", None, 30), ("preToolUse", "pre-tool-use", None, 5),
         ("postToolUse", "post-tool-use", None, 10),
         ("postToolUseFailure", "post-tool-use-failure", None, 10),
         ("sessionEnd", "session-end", None, 30)), "camel",
        ("COPILOT_HOME", ".copilot", ("session-state/*/events.jsonl",), "copilot_session"),
        "copilot"),
    "cursor": _Client(
        (".cursor/hooks.json", ".cursor/hooks.json", "flat"),
        (("sessionStart", "session-start", None, 30), ("postToolUse", "post-tool-use", None, 10),
         ("postToolUseFailure", "post-tool-use-failure", None, 10), ("stop", "stop", None, 30)),
        "snake", (None, ".cursor", ("projects/*/agent-transcripts/*/*.jsonl",), "cursor_session"),
        "cursor"),
}


class _Capture:
    """What a hook payload says, read without a store: its event, its session, the folder it
    speaks for, whether the project opted out, and whether a prompt corrects the agent."""

    HOOK_EVENTS = {e.replace("-", ""): e for e in (
        "session-start", "user-prompt-submit", "pre-tool-use", "post-tool-use",
        "post-tool-use-failure", "stop", "session-end")}
    HOOK_TIMEOUT_S = 3.0                       # a hook gives up on a locked database after this
    INJECT_MAX_ITEMS, INJECT_MAX_CHARS = 10, 2000

    @staticmethod
    def normal(p, client="claude-code"):
        """A payload in its client's shape -> Claude Code's shape, plus `client` (who sent it,
        told from the payload: a client may run Claude Code's hooks; else the hook's --client)."""
        def parsed(v):
            try:
                return _loads(v) if isinstance(v, str) and v.lstrip()[:1] == "{" else v
            except (ValueError, RecursionError):
                return {}
        q = dict(p)
        if "sessionId" in p or "toolName" in p:     # Copilot CLI: a shell's '... exit code N>'
            res = p.get("toolResult") if isinstance(p.get("toolResult"), dict) else {}
            text = str(res.get("textResultForLlm", "")).rstrip()[-60:]
            q = {"client": "copilot-cli", "session_id": p.get("sessionId"), "cwd": p.get("cwd"),
                 "tool_name": p.get("toolName"), "tool_input": parsed(p.get("toolArgs")),
                 "tool_use_id": p.get("toolCallId", p.get("toolUseId")),
                 "tool_response": {"is_error": res.get("resultType") in ("failure", "error")
                                   or bool(p.get("error")) or "exit code " in text and _whole(
                                       text.rpartition("exit code ")[2].rstrip(">")) not in (None,
                                                                                          0)}}
        elif "conversation_id" in p or "workspace_roots" in p:        # Cursor
            roots = p.get("workspace_roots")
            q.update(client="cursor", session_id=p.get("session_id", p.get("conversation_id")))
            if "cwd" not in p and isinstance(roots, list) and roots:
                q["cwd"] = roots[0]
            if "tool_name" not in p and isinstance(p.get("command"), str):    # a shell event
                q.update(tool_name="Bash", tool_input={"command": p["command"]})
            elif "tool_name" not in p and isinstance(p.get("file_path"), str):
                q.update(tool_name="Edit", tool_input={"file_path": p["file_path"]})
            if p.get("error_message") or p.get("exit_code") not in (None, 0):
                q["tool_response"] = {"is_error": True}
        elif "turn_id" in p or os.path.basename(
                str(p.get("transcript_path", ""))).startswith("rollout-"):
            q["client"] = "codex"
        elif (p.get("hook_event_name") in ("BeforeTool", "AfterTool", "BeforeAgent")
              or client == "gemini-cli" or "/.gemini/" in str(p.get("transcript_path", ""))):
            res, q["client"] = p.get("tool_response"), "gemini-cli"
            text = res.get("llmContent") if isinstance(res, dict) else None
            if isinstance(res, dict) and (res.get("error") or isinstance(text, str) and any(
                    _whole(line[10:].strip()) not in (None, 0) for line in text.splitlines()
                    if line.startswith("Exit Code:"))):
                q["tool_response"] = {"is_error": True}
        q.setdefault("client", client)
        q["tool_input"] = parsed(q.get("tool_input"))
        return q

    @staticmethod
    def safe_session(value):
        if not isinstance(value, str):
            return ""
        return "".join(c for c in value[:400] if c.isalnum() or c in "_.:-")[:100]

    # A prompt that corrects the agent or states a rule: nothing stored, the agent saves the lesson.
    CORRECTION_OPENERS = (
        "no,", "no ", "nope", "don't", "dont ", "do not", "stop ", "never ", "always ",
        "please don't", "please do not", "please always", "please never", "did you ", "didn't you",
        "you forgot", "you didn't", "you did not", "why did you", "why didn't you", "i told you",
        "i said", "that's wrong", "that is wrong", "wrong", "not like that", "remember to",
        "from now on", "make sure to", "you should have", "you should not", "you shouldn't",
        "stop asking")
    CORRECTION_MARKS = (" instead", "from now on", "every time", "next time", "in the future",
                        "remember to", "don't forget", "do not forget", "you forgot", "i told you",
                        "stop asking", "without asking", "as i said", "not what i asked")
    CORRECTION_CONTEXT = (
        "instinct: the user's message may correct you or state a standing rule. If it is lasting "
        "guidance (for this project or this user), save it once with instinct's `memory_store` "
        "tool (type `feedback`): a short title, the rule in your own words, why, and how to apply "
        "it. Do not save one-off instructions.")

    @staticmethod
    def prompt_text(prompt):
        """A prompt as compared: its first 2,000 characters, lowercase, spaces collapsed."""
        return " ".join(prompt[:2000].lower().replace("\u2019", "'").split())

    @staticmethod
    def reads_like_correction(prompt):
        if not isinstance(prompt, str):
            return False
        text = _Capture.prompt_text(prompt)
        return (text.startswith(_Capture.CORRECTION_OPENERS)
                or any(m in text for m in _Capture.CORRECTION_MARKS))

    @staticmethod
    def hook_cwd(payload):
        """The payload's cwd if it is a sane path (str, no NUL, encodable, bounded), else None."""
        cwd = payload.get("cwd")
        if not isinstance(cwd, str) or not cwd or len(cwd) > 4096 or "\x00" in cwd:
            return None
        try:
            cwd.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return cwd


class _Call:
    """One captured tool call, shape only, kept in events.data as tab-separated fields (tool, name,
    extension, command shapes; `encode`, `read`). `name` identifies the call beyond its tool: a
    skill's name, a subagent's type. Never an argument value."""
    # Files showing a toolchain: another project's habit applies here before this one shows its own
    TOOLCHAIN_FILES = {
        "package.json": "npm npx pnpm yarn bun bunx node tsc eslint prettier vitest jest",
        "Cargo.toml": "cargo rustc rustfmt", "mix.exs": "mix iex elixir", "go.mod": "go gofmt",
        "pyproject.toml": "uv uvx poetry pytest ruff mypy pyright tox nox hatch pdm black",
        "setup.py": "pytest tox python", "Makefile": "make", "justfile": "just",
        "Gemfile": "bundle rake rspec rubocop", "pom.xml": "mvn", "build.gradle": "gradle",
        "deno.json": "deno", ".git": "git"}

    # Which project command a shape is (`command_role`): 'uv run pytest', 'ruff check', 'mix format'
    COMMAND_ROLES = (
        ("test", frozenset("test tests pytest unittest jest vitest mocha rspec phpunit ctest tox "
                           "nox spec ava karma cypress playwright nextest".split())),
        ("lint", frozenset("lint credo clippy eslint flake8 pylint rubocop golangci-lint "
                           "shellcheck stylelint hadolint vet ruff biome oxlint ktlint swiftlint "
                           "pyflakes markdownlint".split())),
        ("format", frozenset("format fmt black prettier gofmt rustfmt isort autopep8 yapf "
                             "clang-format goimports shfmt".split())),
        ("typecheck", frozenset("typecheck type-check mypy pyright tsc dialyzer pytype pyre "
                                "check-types".split())),
        ("build", frozenset("build compile webpack rollup esbuild make".split())),
    )

    SHELL_TOOLS = {"Bash": "Bash", "PowerShell": "PowerShell", "shell": "Bash",
                   "local_shell": "Bash", "exec_command": "Bash", "run_shell_command": "Bash",
                   "bash": "Bash", "powershell": "PowerShell", "Shell": "Bash"}
    EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch", "write_file",
                  "replace", "edit", "create", "StrReplace"}
    # Client plumbing is not a habit: loading tools, task lists, plan mode, questions.
    PLUMBING_TOOLS = frozenset(
        "ToolSearch TodoWrite TodoRead TaskCreate TaskUpdate TaskList TaskGet TaskOutput TaskStop "
        "EnterPlanMode ExitPlanMode AskUserQuestion StructuredOutput SendMessage TeamCreate "
        "TeamDelete BashOutput KillShell KillBash ListMcpResourcesTool ReadMcpResourceTool "
        "update_plan view_image request_user_input write_todos report_intent update_todo".split())
    # Looking around (every session of every project does it): captured, never a habit step.
    LOOK_TOOLS = frozenset("Read Grep Glob LS NotebookRead read_file list_dir grep_search "
                           "file_search glob search_files view list_directory read_many_files "
                           "search_file_content".split())
    # Shell utilities every project uses the same way: never a habit step either.
    GENERIC_PROGRAMS = frozenset(
        "? ls cat head tail grep egrep fgrep rg ag find fd wc sort uniq tee echo printf pwd which "
        "whereis type mkdir rmdir rm cp mv ln touch chmod chown sed awk gawk cut tr paste xargs "
        "file stat du df date sleep kill pkill killall ps pgrep top htop clear basename dirname "
        "realpath readlink less more tree open xdg-open seq nl column bat jq yq diff cmp md5sum "
        "sha256sum shasum base64 hexdump xxd od strings lsof whoami id hostname uname free nproc "
        "unzip tar gzip gunzip zip wget curl man help history".split())
    # VCS reads are looking around, like Read: a ritual's steps stay adjacent across status checks.
    LOOK_COMMANDS = frozenset(f"{vcs} {sub}" for vcs in ("git", "hg", "jj", "svn") for sub in (
        "status", "diff", "log", "show", "blame", "branch", "remote", "rev-parse", "reflog"))
    EDIT_STEP = "Edit"
    SEEN_MAX = 20000                  # unlearned program-word and prompt hashes kept (the newest)
    __slots__ = ("tool", "name", "ext", "cmds")
    SHELLS = frozenset(SHELL_TOOLS.values())
    NAMED = {"Skill": "skill", "Task": "subagent_type", "Agent": "subagent_type",
             "task": "agent_type"}

    def __init__(self, tool, name="", ext="", cmds=()):
        self.tool, self.name, self.ext, self.cmds = tool, name, ext, tuple(cmds)

    def encode(self):
        return "\t".join((self.tool, self.name, self.ext) + self.cmds)

    @classmethod
    def read(cls, data):
        f = data.split("\t") + ["", ""]
        return cls(f[0], f[1], f[2], f[3:len(f) - 2])

    def private(self, conn, session, cwd=None, ran=None):
        """This call with each program word not in `known_words` as a keyed hash ('#' + 10 hex)
        until a second session uses it and it names something real (`real`), or ran: `ran` is
        (a plain command that succeeded, the response's text) of a call that did not fail. Then
        the word is learned (table `seen`) and the stored steps holding its hash are rewritten to
        it. A pasted password (command not found) stays a hash however often it recurs."""
        if self.tool not in self.SHELLS:
            return self
        shapes = list(map(_Call._program_words, self.cmds))
        plain, said = ran or (False, "")
        last = shapes[-1][0][shapes[-1][1][-1]] if plain and shapes else None
        known = _Call._known_words()
        found = {words[i]: "" for words, at in shapes for i in at
                 if words[i] not in known and not words[i].startswith("#")}
        if not found:
            return self
        found = {w: _Call.keyed(conn, w) for w in found}
        rows = {h: (s, word) for h, s, word in conn.execute(
            "SELECT hash, session, word FROM seen WHERE hash IN (%s)" % ",".join("?" * len(found)),
            list(found.values()))}
        for w, h in found.items():
            first, word = rows.get(h, (None, None))
            if first is None:
                _Call.seen_add(conn, h, session)
            if (word is None and first not in (None, session)   # a second session, a real name
                    and (w == last or _Call._real(w, cwd) or said and not (
                        w in said and any(m in said for m in _Call.MISSING)))):
                conn.execute("UPDATE seen SET word = ? WHERE hash = ?", (w, h))
                conn.execute("UPDATE events SET data = replace(data, ?, ?) WHERE instr(data, ?)"
                             " AND kind IN ('tool', 'tool_fail')", ("#" + h, w, "#" + h))
                conn.execute("UPDATE mined_sessions SET steps = replace(steps, ?, ?)"
                             " WHERE instr(steps, ?)", ("#" + h, w, "#" + h))
                word = w
            found[w] = w if word is not None else "#" + h
        cmds = [" ".join(found.get(x, x) if i in at else x for i, x in enumerate(words))
                for words, at in shapes]
        return _Call(self.tool, self.name, self.ext, cmds)

    def label(self):
        """How a person reads it: 'Bash(uv run pytest;ruff check)', 'Edit(.py)', 'Skill(x)'."""
        inner = ";".join(self.cmds) or self.ext or self.name
        return f"{self.tool}({inner})" if inner else self.tool

    def steps(self):
        """The habit steps of this call (none for looking around and client plumbing)."""
        if self.tool in self.SHELLS:
            return [c for c in self.cmds if c.split(" ", 1)[0] not in _Call.GENERIC_PROGRAMS
                    and c not in _Call.LOOK_COMMANDS]
        if self.tool in _Call.EDIT_TOOLS:
            return [_Call.EDIT_STEP]
        if self.tool in _Call.LOOK_TOOLS or self.tool in _Call.PLUMBING_TOOLS or self.tool == "?":
            return []
        return [f"{self.tool}({self.name})" if self.name else self.tool]

    @classmethod
    def of(cls, payload):
        """A hook payload -> (_Call, '') or (None, skip reason)."""
        tool = payload.get("tool_name")
        if not isinstance(tool, str) or not tool:
            return None, "no tool_name"
        tinput = payload.get("tool_input")
        tinput = tinput if isinstance(tinput, dict) else {}
        low = tool.lower()
        if low.startswith(("mcp__instinct__", "mcp__plugin_instinct")):
            return None, "instinct's own tool call"
        if tool in _Call.PLUMBING_TOOLS:
            return None, "client plumbing, not a habit step"
        if tool in _Call.SHELL_TOOLS:
            cmd = tinput.get("command", tinput.get("cmd"))
            cmd = cmd if isinstance(cmd, (str, list)) else ""
            text = " ".join(map(str, cmd)) if isinstance(cmd, list) else cmd
            if ("instinct" in text.split("&&")[0].split()[:3] or " instinct.py " in f" {text} "
                    or "-m instinct" in text or text.strip().startswith("instinct ")):
                return None, "instinct's own command"
            shapes = _Shell.command_shapes(cmd)
            while len(" ".join(shapes)) >= 400:       # the first shapes, at most 400 characters
                shapes.pop()
            return cls(_Call.SHELL_TOOLS[tool], cmds=shapes or ["?"]), ""
        name = "".join(c for c in tool if c.isalnum() or c in "_.-")[:64] or "?"
        if low.startswith("mcp__"):
            return cls(name), ""
        if tool in _Call.EDIT_TOOLS:
            path = (tinput.get("file_path") or tinput.get("path") or tinput.get("notebook_path")
                    or "")
            ext = os.path.splitext(str(path).replace("\\", "/").rsplit("/", 1)[-1])[1].lower()
            ok = ext and len(ext) <= 11 and ext[1:].isalnum() and ext.isascii()
            return cls(_Call.EDIT_STEP if tool == "apply_patch" else name,
                       ext=ext if ok else ""), ""
        named = tinput.get(cls.NAMED.get(tool, ""))
        ok = isinstance(named, str) and len(named) <= 64 and all(
            _Shell.safe_token(w, 64) == w for w in named.split(":"))
        return cls(_Shell.safe_token(name, 64), name=named if ok else ""), ""

    @staticmethod
    @functools.lru_cache(maxsize=1)
    def _known_words():
        """Program words kept as text at once: those the shape reader or mining knows by name."""
        return frozenset().union(
            _Shell.SUBCOMMAND_PROGRAMS, _Shell.RUN_WRAPPERS, _Shell.OPERAND_PROGRAMS, _Shell.SHELLS,
            _Shell.NOOPS, _Shell.PREFIXES, _Shell.SCRIPT_TOOLS, _Shell.COMMON_SUBCOMMANDS,
            _Call.GENERIC_PROGRAMS, _Shell.VALUE_OPTIONS, ("python", "-m", "pwsh", "powershell"),
            *(names for _, names in _Call.COMMAND_ROLES),
            *(progs.split() for progs in _Call.TOOLCHAIN_FILES.values()))

    @staticmethod
    def _program_words(shape):
        """A command shape -> (its words, the indexes of those that name a program): the first,
        the one a runner runs (`uv run X`, `npx X`, `uv run npx X`) and `python -m X`'s module."""
        words, at, i = shape.split(" "), [], 0
        while i < len(words):
            at.append(i)
            verbs = _Shell.RUN_WRAPPERS.get(words[i], ())
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if verbs == ("",):
                i += 1
            elif nxt in verbs or (words[i] == "python" and nxt == "-m"):
                i += 2
            else:
                break
        return words, at

    @staticmethod
    def plain(payload):
        """Whether a shell call is one plain command, whose success says its program exists (no
        pipe, list, background job or substitution to succeed for it: `X || true`)."""
        tinput = payload.get("tool_input")
        cmd = tinput.get("command") if isinstance(tinput, dict) else None
        return isinstance(cmd, str) and not any(c in cmd for c in "|;&\n`$()")

    # What a shell says of a word that names no program (bash, zsh, npx, uv, python -m, nohup)
    MISSING = ("not found", "No such file", "not recognized", "No module named", "Failed to spawn",
               "could not determine executable", "404", "Unknown command", "failed to run")

    @staticmethod
    def said(payload):
        """A call's response as text (its first 4,000 characters), to tell a run program."""
        resp = payload.get("tool_response")
        return (resp if isinstance(resp, str) else _dumps(resp) if resp else "")[:4000]

    @staticmethod
    def _real(word, cwd):
        """Whether a program word names something real: a program on the PATH, a file in `cwd`."""
        if not word or os.sep in word or word in (".", ".."):
            return False
        return any(os.access(os.path.join(d, word), os.X_OK) and not os.path.isdir(
            os.path.join(d, word)) for d in os.environ.get("PATH", "").split(os.pathsep) if d) \
            or bool(cwd) and os.path.isfile(os.path.join(cwd, word))

    @staticmethod
    def keyed(conn, text):
        """A keyed hash of `text` (10 hex), with the store's key (`_DB.key`)."""
        return conn.execute("SELECT instinct_hash(?)", (text,)).fetchone()[0]

    @staticmethod
    def seen_add(conn, h, session):
        """Note hash `h` first seen in `session`; the oldest unlearned beyond SEEN_MAX go."""
        rowid = conn.execute("INSERT INTO seen (hash, session) VALUES (?, ?)",
                             (h, session)).lastrowid
        if rowid % 256 == 0:
            conn.execute("DELETE FROM seen WHERE word IS NULL AND rowid < ?",
                         (rowid - _Call.SEEN_MAX,))

    @staticmethod
    def use_id(uid):
        """A tool-use id as the number a tool event keeps in `delta` (0: none)."""
        return int(_sha256_hex(uid)[:15], 16) if isinstance(uid, str) and uid else 0

    @staticmethod
    def response_failed(resp):
        """Did a tool response report failure? Claude Code: a dict with `exit_code`/`interrupted`;
        Codex: a first-lines status 'Exit code: N' / 'Process exited with code N', or JSON."""
        if isinstance(resp, dict):
            meta = resp.get("metadata")
            codes = (resp.get("exit_code"), resp.get("exitCode"),
                     meta.get("exit_code") if isinstance(meta, dict) else None)
            return (resp.get("interrupted") is True or resp.get("is_error") is True
                    or any(isinstance(c, int) and not isinstance(c, bool) and c != 0
                           for c in codes))
        if not isinstance(resp, str):
            return False
        head = resp[:400].lstrip()
        if head.startswith("{"):
            try:
                return _Call.response_failed(_loads(resp[:65536]))
            except (ValueError, RecursionError):
                return False
        for line in head.splitlines()[:6]:
            if line.startswith(("Output:", "Final output:")):
                break                                  # the program's own output follows
            for lead in ("Exit code:", "exit code:", "Process exited with code"):
                if line.startswith(lead):
                    code = line[len(lead):].strip().split(" ", 1)[0].rstrip(".")
                    return _whole(code) not in (None, 0)
        return False


# =============================================================================
# 14. Agent transcripts (past Claude Code, Codex, Gemini CLI, Copilot CLI and Cursor sessions)
# =============================================================================
class _Transcripts:
    """Readers of Claude Code transcripts and Codex rollouts: calls as the live hook's payloads."""

    CLIENTS = ("all", *CLIENTS)
    MAX_LINE = 32 * 1024 * 1024        # a longer transcript line is skipped (counted)
    BRIEFINGS = 3                      # projects whose briefing the summary shows
    MINE_BATCH = 25                    # imported sessions per mining pass (one short write each)
    CLAUDE_NO_HOOK = ("The user doesn't want to proceed", "[Request interrupted by user",
                      "<tool_use_error>")     # rejected, interrupted or invalid: no hook fired
    CODEX_SHELLS = {"shell", "container.exec", "shell_command", "exec_command", "local_shell"}

    @staticmethod
    def _ts(value):
        """'2026-02-10T21:11:52.438Z' -> epoch seconds, or None."""
        return _parse_iso(value) if isinstance(value, str) and len(value) >= 19 else None

    @staticmethod
    def _lines(path, stats, needle=None):
        """The JSON objects of a JSONL file; bad or oversized lines are counted in
        stats['bad_lines'] and skipped, lines without `needle` (bytes) not even parsed."""
        import json
        with _open_regular(path)[0] as f:
            for line in iter(lambda: f.readline(_Transcripts.MAX_LINE), b""):
                if len(line) >= _Transcripts.MAX_LINE and not line.endswith(b"\n"):
                    while line and not line.endswith(b"\n"):
                        line = f.readline(1 << 20)
                    stats["bad_lines"] += 1
                    continue
                if needle is not None and needle not in line:
                    continue
                try:
                    obj = json.loads(line)
                except (ValueError, RecursionError):
                    if line.strip():
                        stats["bad_lines"] += 1
                    continue
                if isinstance(obj, dict):
                    yield obj
                else:
                    stats["bad_lines"] += 1

    @staticmethod
    def files(client, path):
        """([(client or None, file)], symlinks out of `path` skipped): the clients' folders, or
        `path` (a file or a folder; client sniffed per file). No subagent transcripts."""
        import glob
        out = []

        def keep(f):
            return not (os.path.basename(f).startswith("agent-")
                        or "subagents" in f.replace("\\", "/").split("/"))
        if path:
            p = os.path.abspath(os.path.expanduser(path))
            if os.path.isfile(p):
                return [(None, p)], 0
            if not os.path.isdir(p):
                raise ValidationError(f"path {path!r} is neither a transcript file nor a folder")
            files, links = _inside(p, glob.glob(os.path.join(glob.escape(p), "**", "*.jsonl"),
                                                recursive=True))
            return [(None, f) for f in sorted(files) if keep(f)], links
        for name, row in CLIENTS.items():
            env, folder, globs, _ = row.history
            base = os.environ.get(env or "-") or os.path.join(os.path.expanduser("~"), folder)
            if client in ("all", name):
                out += [(name, f) for g in globs for f in sorted(glob.glob(
                    os.path.join(glob.escape(base), g), recursive=True)) if keep(f)]
        return out, 0

    @staticmethod
    def sniff(path):
        """(client, first timestamp) of a transcript from its first lines, else (None, None)."""
        import itertools
        probe = {"bad_lines": 0}
        for obj in itertools.islice(_Transcripts._lines(path, probe), 20):
            if "projectHash" in obj:
                return "gemini-cli", _Transcripts._ts(obj.get("startTime"))
            if str(obj.get("type")).startswith("session.") and isinstance(obj.get("data"), dict):
                return "copilot-cli", _Transcripts._ts(obj.get("timestamp"))
            if "role" in obj and isinstance(obj.get("message"), dict):
                return "cursor", _Transcripts._ts(obj.get("timestamp"))
            if obj.get("type") in ("session_meta", "response_item", "turn_context", "event_msg") \
                    and isinstance(obj.get("payload"), dict):
                return "codex", _Transcripts._ts(obj.get("timestamp"))
            if "sessionId" in obj or obj.get("type") in ("user", "assistant"):
                return "claude-code", _Transcripts._ts(obj.get("timestamp"))
        return None, None

    @staticmethod
    def _block_text(content):
        """First text of a tool_result's content (a string or a list of blocks), capped."""
        if isinstance(content, list):
            content = next((b.get("text") for b in content if isinstance(b, dict)
                            and isinstance(b.get("text"), str)), "")
        return content[:200] if isinstance(content, str) else ""

    @staticmethod
    def claude_session(path, stats):
        """A Claude Code transcript -> (session id, [(payload, failed, ts)]): a tool_use and its
        tool_result as one PostToolUse(Failure) call, in result order; no side-chains, records
        copied from a resumed session, or calls that fired no hook."""
        stem = os.path.splitext(os.path.basename(path))[0]
        pending, calls, seen_ids = {}, [], {}
        for obj in _Transcripts._lines(path, stats, b'"tool_use'):
            msg = obj.get("message")
            content = msg.get("content") if isinstance(msg, dict) else None
            if not isinstance(content, list):
                continue
            if obj.get("isSidechain") is True:
                stats["sidechain_calls"] += sum(1 for b in content if isinstance(b, dict)
                                                and b.get("type") == "tool_use")
                continue
            sid = obj.get("sessionId") if isinstance(obj.get("sessionId"), str) else ""
            seen_ids[sid] = seen_ids.get(sid, 0) + 1
            kind = obj.get("type")
            for block in content:
                if not isinstance(block, dict):
                    continue
                if kind == "assistant" and block.get("type") == "tool_use":
                    if isinstance(block.get("id"), str) and isinstance(block.get("name"), str):
                        pending[block["id"]] = (block["name"], block.get("input"), obj, sid)
                elif kind == "user" and block.get("type") == "tool_result":
                    use = pending.pop(block.get("tool_use_id"), None)
                    if use is None:
                        continue
                    name, tinput, use_line, use_sid = use
                    failed = block.get("is_error") is True
                    text = _Transcripts._block_text(block.get("content")) if failed else ""
                    if text.startswith(_Transcripts.CLAUDE_NO_HOOK) or "<tool_use_error>" in text:
                        continue
                    cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else use_line.get("cwd")
                    payload = {"session_id": use_sid, "transcript_path": path, "cwd": cwd,
                               "permission_mode": obj.get("permissionMode", "default"),
                               "hook_event_name": "PostToolUseFailure" if failed else "PostToolUse",
                               "tool_name": name,
                               "tool_input": tinput if isinstance(tinput, dict) else {},
                               "tool_use_id": block.get("tool_use_id")}
                    if failed:
                        first = text.split("\n", 1)[0]
                        payload["error"] = first if first.startswith("Exit code ") else ""
                        payload["is_interrupt"] = False
                    else:
                        resp = obj.get("toolUseResult")
                        payload["tool_response"] = resp if isinstance(resp, dict) else {}
                    calls.append((payload, failed,
                                  _Transcripts._ts(obj.get("timestamp"))
                                  or _Transcripts._ts(use_line.get("timestamp"))))
        session = stem if stem in seen_ids else max(seen_ids, key=seen_ids.get, default="")
        return session, [c for c in calls if c[0]["session_id"] == session]

    @staticmethod
    def _codex_exit(output):
        """A Codex tool output -> its exit code (None when it does not say): JSON metadata's
        exit_code, or the text 'Exit code: N' / 'Process exited with code N'."""
        if isinstance(output, dict):
            if output.get("success") is False:
                return 1
            output = output.get("content", "")
        if isinstance(output, list):
            output = "\n".join(b.get("text", "") for b in output if isinstance(b, dict)
                               and isinstance(b.get("text"), str))
        if not isinstance(output, str):
            return None
        head = output[:4096]
        if head.lstrip().startswith("{"):
            try:
                meta = _loads(output).get("metadata")
                code = meta.get("exit_code") if isinstance(meta, dict) else None
                return code if isinstance(code, int) else None
            except (ValueError, AttributeError, RecursionError):
                pass
        for marker in ("Exit code: ", "Process exited with code "):
            i = head.find(marker)
            if i >= 0 and (i == 0 or head[i - 1] == "\n"):
                num = (head[i + len(marker):].split(None, 1) or [""])[0].rstrip(".")
                if _whole(num) is not None:
                    return _whole(num)
        return None

    @staticmethod
    def codex_code(payload):
        """The exit code of a live Codex call from the rollout its payload names (Codex 0.171's
        PostToolUse holds the output only), or None: the lines naming its call id, newest first."""
        path, uid = payload.get("transcript_path"), payload.get("tool_use_id")
        if not (isinstance(path, str) and isinstance(uid, str) and uid and path.endswith(".jsonl")
                and os.path.basename(path).startswith("rollout-")):
            return None
        try:
            data = _read_regular(path, 256 * 1024 * 1024)
        except (OSError, ValidationError):
            return None
        key, lines = _dumps(uid).encode(), data.split(b"\n")
        try:                                     # the rollout of this very session
            meta = _loads(lines[0].decode("utf-8", "replace")).get("payload")
            if meta.get("id") != payload.get("session_id"):
                return None
        except (ValueError, AttributeError, RecursionError):
            return None
        for line in reversed([x for x in lines if key in x]):
            try:
                item = _loads(line.decode("utf-8", "replace")).get("payload")
            except (ValueError, AttributeError, RecursionError):
                continue
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "item_completed" and isinstance(item.get("item"), dict):     # 0.171
                item = dict(item["item"], call_id=item["item"].get("id"))
            if kind is None or item.get("call_id") != uid:
                continue
            code = item.get("exit_code") if kind in ("exec_command_end", "item_completed") else (
                _Transcripts._codex_exit(item.get("output"))
                if kind in ("function_call_output", "custom_tool_call_output") else None)
            if isinstance(code, int):
                return code
        return None

    @staticmethod
    def _codex_shell_text(command):
        if isinstance(command, list):
            parts = [str(t) for t in command]
            if len(parts) >= 3 and parts[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") \
                    and parts[1] in ("-c", "-lc"):
                return parts[2]
            import shlex
            return shlex.join(parts)
        return command if isinstance(command, str) else ""

    @staticmethod
    def codex_session(path, stats):
        """A Codex rollout -> (session id, [(payload, failed, ts)]): shell calls as Bash,
        apply_patch and MCP tools with their outputs, failed by exit code (its event or text)."""
        meta, cwd, model, turn = {}, "", "", ""
        calls, by_id, codes = [], {}, {}
        for obj in _Transcripts._lines(path, stats):
            kind, item = obj.get("type"), obj.get("payload")
            if not isinstance(item, dict):
                continue
            if kind == "session_meta":
                if not meta:
                    meta = item
                    cwd = item.get("cwd") if isinstance(item.get("cwd"), str) else cwd
                continue
            if kind == "turn_context":
                cwd = item.get("cwd") if isinstance(item.get("cwd"), str) else cwd
                model = item.get("model") if isinstance(item.get("model"), str) else model
                turn = item.get("turn_id") if isinstance(item.get("turn_id"), str) else turn
                continue
            if kind == "event_msg":
                if (item.get("type") == "exec_command_end"
                        and isinstance(item.get("exit_code"), int)):
                    codes[item.get("call_id")] = item["exit_code"]
                elif item.get("type") == "patch_apply_end" and item.get("success") is False:
                    codes[item.get("call_id")] = 1
                continue
            if kind != "response_item":
                continue
            t = item.get("type")
            call_id = item.get("call_id") or item.get("id")
            if t in ("function_call", "custom_tool_call", "local_shell_call"):
                if t == "local_shell_call":                   # a shell: its args are checked
                    name, args = "local_shell", item.get("action")
                else:
                    name, args = item.get("name"), item.get("arguments", item.get("input"))
                if not isinstance(name, str):
                    continue
                if t == "function_call" and isinstance(args, str):
                    try:
                        args = _loads(args)
                    except (ValueError, RecursionError):
                        args = {"input": args}
                workdir = None
                if name in _Transcripts.CODEX_SHELLS:
                    args = args if isinstance(args, dict) else {}
                    text = _Transcripts._codex_shell_text(args.get("command", args.get("cmd")))
                    tool, tinput = "Bash", {"command": text}
                    workdir = args.get("workdir") or args.get("working_directory")
                elif name == "apply_patch":
                    patch = args.get("input", args.get("patch")) if isinstance(args, dict) else args
                    tool, tinput = "apply_patch", {
                        "command": patch if isinstance(patch, str) else ""}
                elif name.startswith("mcp__") or "__" in name.strip("_"):
                    tool = name if name.startswith("mcp__") else "mcp__" + name
                    tinput = args if isinstance(args, dict) else {}
                else:
                    continue                       # Codex runs hooks for shell, apply_patch, MCP
                by_id[call_id] = (tool, tinput, workdir if isinstance(workdir, str) else None)
            elif t in ("function_call_output", "custom_tool_call_output"):
                call = by_id.pop(call_id, None)
                if call is None:
                    continue
                tool, tinput, workdir = call
                payload = {"session_id": "", "turn_id": turn or "replayed", "transcript_path": path,
                           "cwd": workdir or cwd, "hook_event_name": "PostToolUse", "model": model,
                           "tool_name": tool, "tool_input": tinput, "tool_use_id": call_id}
                calls.append((payload, _Transcripts._codex_exit(item.get("output")),
                              _Transcripts._ts(obj.get("timestamp"))))
        src = meta.get("source")
        if isinstance(src, dict) and "subagent" in src:
            stats["sidechain_calls"] += len(calls)
            return "", []
        session = meta.get("id") if isinstance(meta.get("id"), str) else ""
        for payload, _, _ in calls:
            payload["session_id"] = session
        return session, [(p, codes.get(p["tool_use_id"], code) not in (None, 0), ts)
                         for p, code, ts in calls]

    @staticmethod
    def _call(client, session, cwd, tool, tinput, uid, path):
        """A replayed call as its live hook's payload (Claude Code's shape, as capture reads)."""
        return {"client": client, "session_id": session, "cwd": cwd, "tool_name": tool,
                "tool_input": tinput if isinstance(tinput, dict) else {}, "tool_use_id": uid,
                "hook_event_name": "PostToolUse", "transcript_path": path}

    @staticmethod
    def _slug_root(slug, d=os.sep):
        """The folder under `d` a client's slug names ('home-me-work-shop'), else None."""
        def norm(x):
            return "".join(c if c.isalnum() else "-" for c in x).strip("-")
        rest = norm(slug)
        try:
            names = [] if not rest else sorted(os.listdir(d), key=len, reverse=True)
        except OSError:
            return None
        for n in (n for n in names if norm(n) and (rest + "-").startswith(norm(n) + "-")):
            found = _Transcripts._slug_root(rest[len(norm(n)) + 1:], os.path.join(d, n))
            if found:
                return found
        return d if not rest and d != os.sep and os.path.isdir(d) else None

    @staticmethod
    def gemini_session(path, stats):
        """A Gemini CLI chat (JSON, or JSONL records) -> (session id, [(payload, failed, ts)]):
        its tool calls, failed by status; its folder from .project_root or the project hash."""
        try:
            whole = _loads(_read_regular(path, _Transcripts.MAX_LINE).decode("utf-8", "replace"))
            objs = [whole] if isinstance(whole, dict) else []
        except (ValueError, RecursionError):
            objs = list(_Transcripts._lines(path, stats))
        meta, msgs = {}, {}
        for obj in objs:
            meta = meta or (obj if "projectHash" in obj else {})
            for m in obj.get("messages", [obj]):
                if isinstance(m, dict) and isinstance(m.get("toolCalls"), list):
                    msgs[m.get("id", len(msgs))] = m
        tmp = os.path.dirname(os.path.dirname(path))
        try:
            root = _read_regular(os.path.join(tmp, ".project_root"), 4096).decode().strip()
        except (OSError, ValidationError, UnicodeDecodeError):
            root, want = None, meta.get("projectHash", os.path.basename(tmp))
            paths = [a.get(k) for m in msgs.values() for c in m["toolCalls"] if isinstance(c, dict)
                     for a in [c.get("args")] if isinstance(a, dict)
                     for k in ("dir_path", "directory", "absolute_path", "file_path")]
            for p in stats.get("roots", []) + [project_root(os.path.dirname(p)) for p in paths
                                                if isinstance(p, str) and os.path.isabs(p)]:
                if _sha256_hex(p) == want:
                    root = p
                    stats.setdefault("roots", []).append(p)     # the folder's other sessions
                    break
        sid, calls = meta.get("sessionId", ""), []
        for m in msgs.values():
            for c in m["toolCalls"]:
                if isinstance(c, dict) and isinstance(c.get("name"), str) \
                        and c.get("status") in ("success", "error"):
                    name = c["name"] if "__" not in c["name"].strip("_") or c["name"].startswith(
                        "mcp__") else "mcp__" + c["name"]
                    calls.append((_Transcripts._call("gemini-cli", sid, root, name, c.get("args"),
                                                    c.get("id"), path), c["status"] == "error",
                                  _Transcripts._ts(c.get("timestamp") or m.get("timestamp"))))
        return sid, calls

    @staticmethod
    def copilot_session(path, stats):
        """A Copilot CLI events.jsonl -> (session id, [(payload, failed, ts)]): each tool
        execution of the main agent (a subagent's have a parent call), failed unless success."""
        sid, cwd, started, calls = "", None, {}, []
        for obj in _Transcripts._lines(path, stats):
            d, kind = obj.get("data"), obj.get("type")
            if not isinstance(d, dict):
                continue
            if kind == "session.start":
                ctx = d.get("context") if isinstance(d.get("context"), dict) else {}
                sid, cwd = d.get("sessionId", sid), ctx.get("cwd", cwd)
            elif kind == "tool.execution_start" and isinstance(d.get("toolName"), str):
                started[d.get("toolCallId")] = d
            elif kind == "tool.execution_complete" and d.get("toolCallId") in started:
                s = started.pop(d["toolCallId"])
                if s.get("parentToolCallId") or d.get("parentToolCallId"):
                    stats["sidechain_calls"] += 1
                    continue
                calls.append((_Transcripts._call("copilot-cli", sid, cwd, s["toolName"],
                                                s.get("arguments"), d["toolCallId"], path),
                              d.get("success") is not True, _Transcripts._ts(obj.get("timestamp"))))
        return sid, calls

    @staticmethod
    def cursor_session(path, stats):
        """A Cursor agent transcript -> (session id (its file), [(payload, failed, ts)]): the
        tool_use blocks, failed by their tool_result; its folder from the project's slug."""
        sid = os.path.splitext(os.path.basename(path))[0]
        cwd = _Transcripts._slug_root(os.path.basename(os.path.dirname(os.path.dirname(
            os.path.dirname(path)))))
        when, calls, at = os.path.getmtime(path), [], {}
        for obj in _Transcripts._lines(path, stats, b'"tool_'):
            msg = obj.get("message")
            for b in msg.get("content", []) if isinstance(msg, dict) else []:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    at[b.get("id")] = len(calls)
                    calls.append((_Transcripts._call("cursor", sid, cwd, b.get("name"),
                                                    b.get("input"), b.get("id"), path), False,
                                  _Transcripts._ts(obj.get("timestamp")) or when))
                elif isinstance(b, dict) and b.get("type") == "tool_result" \
                        and b.get("is_error") is True and b.get("tool_use_id") in at:
                    i = at[b["tool_use_id"]]
                    calls[i] = (calls[i][0], True, calls[i][2])
        return sid, calls

    @staticmethod
    def render_import(r):
        verb = "would import" if r["dry_run"] else "imported"
        calls = f"Tool calls replayed: {r['tool_calls']} ({r['failed_calls']} failed)"
        for key, what in (("bad_lines", "unreadable lines"), ("sidechain_calls", "subagent calls"),
                          ("links_skipped", "symlinks out of the folder")):
            calls += f"; {what} skipped: {r[key]}" if r[key] else ""
        out = [f"Sessions: {r['sessions']} found, {r['imported']} {verb}, {r['skipped']} already "
               f"in the store" + (f", {r['too_old']} older than --since" if r["too_old"] else "")
               + (f", {r['empty']} without tool calls or opted out" if r["empty"] else ""), calls]
        if r["old"]:
            out.append(f"{r['old']} sessions are older than the event retention: learned from, "
                       "their raw calls go with the log (`instinct config events_max_days N` keeps "
                       "them)")
        for p in r["projects"]:
            out.append(f"Project {p['cwd'] or '(none)'} [{p['project']}]: {p['sessions']} "
                       f"sessions, {p['tool_calls']} tool calls")
            if p["learned"]:
                out.append("  observed: " + ", ".join(p["learned"][:12])
                           + (f" (+{len(p['learned']) - 12} more)"
                              if len(p["learned"]) > 12 else ""))
            if p["briefing"]:
                out += ["  session-start briefing:"] + ["    " + line
                                                        for line in p["briefing"].splitlines()]
        if not r["projects"] and not r["sessions"]:
            out.append("No agent sessions found (looked in " + (r.get("path") or (
                "~/.claude, ~/.codex, ~/.gemini, ~/.copilot and ~/.cursor; see --path")) + ")")
        return "\n".join(out)

    @staticmethod
    def tty_progress(stream=None):
        """A progress(done, total) callback drawing a bar on a terminal, or None off a terminal."""
        stream = stream or sys.stderr
        try:
            if not stream.isatty():
                return None
        except (AttributeError, ValueError):
            return None

        def progress(done, total):
            fill = 30 * done // max(1, total)
            stream.write(f"\r[{'#' * fill}{'.' * (30 - fill)}] {done}/{total} sessions")
            if done >= total:
                stream.write("\n")
            stream.flush()
        return progress


# =============================================================================
# 15. Client setup (`instinct setup`)
# =============================================================================
class _Setup:
    """`instinct setup`: each client's MCP and hook entries, merged with a backup, or removed."""

    CLIENTS = (*CLIENTS, "vscode", "windsurf", "goose")
    HINT_MATCHER = _Client.HINT_MATCHER
    # The hook command runs instinct with -S from cached bytecode, this file's folder on the path (a
    # project's shared config names no path: there `python3` finds an installed instinct). When the
    # import fails (uninstalled, moved, another Python) it exits 0 silently: a hook never breaks.
    # It caches instinct's bytecode even under PYTHONDONTWRITEBYTECODE: else every call compiles.
    LAUNCHER = ("import sys;sys.dont_write_bytecode=0;sys.path.insert(0,{!r})\ntry:from instinct"
                " import main\nexcept BaseException:sys.exit(0)\nsys.exit(main())")
    LAUNCHER_SHARED = LAUNCHER.replace(";sys.path.insert(0,{!r})", "")
    LAUNCHERS_OLD = (LAUNCHER.replace("sys.dont_write_bytecode=0;", ""),
                     LAUNCHER_SHARED.replace(";sys.dont_write_bytecode=0", ""),
                     "import sys;sys.path.insert(0,{!r});from instinct import main;"
                     "sys.exit(main())")

    @staticmethod
    def _launch_args(python, here, *cli):
        """argv running instinct's CLI: from `here` with -S, or (here None) from python's path."""
        if here is None:
            return [python, "-c", _Setup.LAUNCHER_SHARED, *cli]
        return [python, "-S", "-c", _Setup.LAUNCHER.format(here), *cli]

    @staticmethod
    def _hook_groups(client, python, here, db):
        """{event: our group (or handler, a flat style)} of CLIENTS[client]'s hooks; the command
        names the client where its payload may not (Claude Code's and Codex's do)."""
        import shlex
        groups, style = {}, CLIENTS[client].hooks[2]
        for name, event, matcher, timeout in CLIENTS[client].events:
            argv = _Setup._launch_args(python, here, "hook", event, *(("--db", db) if db else ()),
                                      *(("--client", client) if style != "groups" else ()))
            cmd = shlex.join(argv)
            hook = ({"type": "command", "bash": cmd, "timeoutSec": timeout} if style == "bash"
                    else {"command": cmd, "timeout": timeout} if style == "flat" else
                    {"type": "command", "command": cmd,
                     "timeout": timeout * (1000 if style == "groups-ms" else 1)})
            groups[name] = (hook if style in ("bash", "flat") else {"matcher": matcher,
                            "hooks": [hook]} if matcher else {"hooks": [hook]})
        return groups

    @staticmethod
    def _console_script(here):
        """The `instinct` console script when this very file is pip-installed for this Python."""
        import sysconfig
        for kind in ("prefix", "user"):
            paths = sysconfig.get_paths(sysconfig.get_preferred_scheme(kind))
            script = os.path.join(paths["scripts"],
                                  "instinct.exe" if os.name == "nt" else "instinct")
            libs = {os.path.realpath(paths["purelib"]), os.path.realpath(paths["platlib"])}
            if os.path.realpath(here) in libs and os.path.isfile(script):
                return script
        return None

    @staticmethod
    def plan(client, scope, home, project_dir, python, here, db=None, all_tools=False):
        """[(path, kind, entry)]: what setup merges into which file (kind: toml, yaml, (JSON key,)).
        A project's files are committed and shared: they name no path of this machine."""
        if client not in _Setup.CLIENTS:
            raise ValidationError(f"unknown client {client!r}; choose from: "
                                  f"{', '.join(_Setup.CLIENTS)}")
        user = scope == "user"
        if not user and client in ("windsurf", "goose"):
            raise ValidationError(f"{client} reads MCP servers from a user file only; run it "
                                  "without --scope project")
        if not user and db:
            raise ValidationError("a project's config is shared: --db (or INSTINCT_DB) would put "
                                  "this machine's path in it; unset it, or use --scope user")
        script = _Setup._console_script(here) if user else None
        if not user:
            python, here = "python3", None
        server = ({"command": script, "args": ["serve"]} if script    # pip install: no PYTHONPATH
                  else {"command": python, "args": ["-m", "instinct", "serve"]})
        env = {"PYTHONPATH": here} if user and not script else {}    # this file, cached bytecode
        if db:                         # clients start servers in their own env: pin the same store
            env["INSTINCT_DB"] = db
        if all_tools:                  # every operation as a tool, not only the lean session set
            env["INSTINCT_MCP_TOOLS"] = "all"
        server["env"] = env
        j = os.path.join
        base = home if user else project_dir
        hooks = [(j(base, *CLIENTS[client].hooks[not user].split("/")),
                  ("hooks", "version") if CLIENTS[client].hooks[2] in ("bash", "flat")
                  else ("hooks",), _Setup._hook_groups(client, python, here, db))
                 ] if client in CLIENTS else []
        if client == "claude-code":
            return [(j(home, ".claude.json") if user else j(project_dir, ".mcp.json"),
                     ("mcpServers",), dict(server, type="stdio"))] + hooks
        if client == "gemini-cli" and "PYTHONPATH" in env:     # Gemini refuses to pass it on
            server = dict(server, command=python,
                          args=_Setup._launch_args(python, here, "serve")[1:],
                          env={k: v for k, v in env.items() if k != "PYTHONPATH"})
        if client in ("cursor", "gemini-cli"):
            return [(j(base, ".cursor", "mcp.json") if client == "cursor" else hooks[0][0],
                     ("mcpServers",), server)] + hooks
        if client == "copilot-cli":          # its project MCP file: .mcp.json, as Claude Code's
            return [(j(home, ".copilot", "mcp-config.json"), ("mcpServers",),
                     dict(server, type="stdio", tools=["*"])) if user else
                    (j(project_dir, ".mcp.json"), ("mcpServers",), dict(server, type="stdio"))
                    ] + hooks
        if client == "vscode":
            if not user:
                folder = j(project_dir, ".vscode")
            elif sys.platform == "darwin":
                folder = j(home, "Library", "Application Support", "Code", "User")
            else:
                folder = j(home, "AppData", "Roaming", "Code", "User") if os.name == "nt" \
                    else j(home, ".config", "Code", "User")
            return [(j(folder, "mcp.json"), ("servers",), dict(server, type="stdio"))]
        if client == "windsurf":
            return [(j(home, ".codeium", "windsurf", "mcp_config.json"), ("mcpServers",), server)]
        if client == "codex":
            return [(j(base, ".codex", "config.toml"), "toml", server)] + hooks
        return [(j(home, ".config", "goose", "config.yaml"), "yaml", server)]

    @staticmethod
    def notes(client, scope, project_dir):
        """What the user must still do by hand after `setup client` (printed with the entries)."""
        history = (f"To learn from the sessions you already had, run `instinct import-history "
                   f"--client {client}` once: it replays its transcripts through the same capture "
                   "(shapes only) and mining.")
        notes = [history] if client in CLIENTS else []
        if client == "cursor":
            notes.append("Cursor may not hand a session-start briefing to the model: `instinct "
                         "export --format cursor --write` keeps .cursor/rules/instinct.mdc, the "
                         "rules file it reads, up to date (run it again as habits mature).")
        if scope == "project":
            notes.append("These files are for the whole team and name no path of this machine: "
                         "they run `python3 -m instinct`, so each machine needs instinct installed "
                         "for python3 (pip install); without it, no server, and hooks do nothing.")
        if client != "codex":
            return notes
        notes.append("Codex skips new or changed hooks until you trust them: start `codex` in a "
                     "terminal, type /hooks, review instinct's hooks and trust each one (Codex "
                     "warns at start-up while hooks await review). Trust covers a hook's exact "
                     "text: trust again whenever `instinct setup codex --write` changes them. For "
                     "one unattended run, `codex exec --dangerously-bypass-hook-trust` runs them "
                     "untrusted.")
        if scope == "project":
            notes.append("Codex loads a project's .codex/ hooks only in a trusted project: trust "
                         "the folder when Codex asks, or add to ~/.codex/config.toml:\n"
                         f"[projects.{_Setup._quoted(project_dir)}]\ntrust_level = \"trusted\"")
        return notes

    @staticmethod
    def _is_ours(handler):
        """True only for a hook handler `setup` wrote, now or in an earlier version: a launcher
        running `hook EVENT [--db P]`, shell or exec form. A user's own command never matches."""
        import ast
        import re
        import shlex
        if not isinstance(handler, dict) or handler.get("type", "command") != "command":
            return False
        cmd, args = handler.get("command", handler.get("bash")), handler.get("args")
        if not isinstance(cmd, str):
            return False
        try:
            argv = ([cmd, *args] if isinstance(args, list)
                    else shlex.split(cmd) if args is None else None)
        except ValueError:
            return False
        if not argv or not all(isinstance(a, str) for a in argv):
            return False
        if argv[1:2] == ["-S"]:
            argv = argv[:1] + argv[2:]
        if argv[-2:-1] == ["--client"] and argv[-1] in CLIENTS:
            argv = argv[:-2]
        if (len(argv) not in (5, 7) or argv[1] != "-c" or argv[3] != "hook"
                or argv[4] not in _Capture.HOOK_EVENTS.values() or argv[5:6] not in ([], ["--db"])):
            return False
        for launcher in (_Setup.LAUNCHER, _Setup.LAUNCHER_SHARED, *_Setup.LAUNCHERS_OLD):
            m = re.fullmatch(re.escape(launcher).replace(re.escape("{!r}"), "(.+)"), argv[2])
            try:
                if m and (not m.groups() or isinstance(ast.literal_eval(m.group(1)), str)):
                    return True
            except (ValueError, SyntaxError):
                return False
        return False

    @staticmethod
    def _merge_hooks(node, wanted):
        """Give each event in `node` exactly our group from `wanted` (kept in place when unchanged);
        remove our handlers from every other event (e.g. the Stop entry of earlier versions)."""
        for event in list(node):
            groups = node[event]
            if not isinstance(groups, list):
                if event in wanted:
                    raise ValidationError(f"hooks.{event} is not a list")
                continue
            out, placed = [], False
            for g in groups:
                hs = g.get("hooks", [g]) if isinstance(g, dict) else None     # [g]: flat
                if not isinstance(hs, list) or not any(_Setup._is_ours(h) for h in hs):
                    out.append(g)
                elif not placed and g == wanted.get(event):
                    out.append(g)
                    placed = True
                else:
                    rest = [h for h in hs if not _Setup._is_ours(h)]
                    if rest:                   # the user's handlers in a group with ours stay
                        out.append(dict(g, hooks=rest))
            if event in wanted and not placed:
                out.append(wanted[event])
            if out or event in wanted or not groups:      # a user's empty list stays
                node[event] = out
            else:
                del node[event]
        for event, group in wanted.items():
            node.setdefault(event, [group])

    @staticmethod
    def _strict_json(text):
        """Parse JSON that can be written back unchanged: no NaN/Infinity, duplicate key, lone
        surrogate or number that does not survive a round trip (1e400 would become Infinity)."""
        import decimal
        import json

        def number(s):                 # a JSON literal is never NaN; inf differs from its Decimal
            if decimal.Decimal(s) != decimal.Decimal(repr(float(s))):
                raise ValidationError(f"the number {s[:40]} cannot be written back exactly")
            return float(s)

        def pairs(items, constant=None):
            if constant or len({k for k, _ in items}) < len(items):
                raise ValidationError(f"{constant} is not valid JSON" if constant
                                      else "a key appears twice in one object")
            return dict(items)
        try:
            data = json.loads(text, parse_float=number, object_pairs_hook=pairs,
                              parse_constant=lambda s: pairs((), s))
        except RecursionError:
            raise ValidationError("the JSON is nested too deeply") from None
        except ValidationError:
            raise
        except ValueError as e:
            raise ValidationError(f"not valid JSON: {e}") from None
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValidationError("it holds a lone surrogate escape (like \\ud800) that cannot be "
                                  "written back as UTF-8") from None
        return data

    @staticmethod
    def _merge_json(text, keypath, entry):
        """Merge our entry into a JSON config text, keeping every other key."""
        import json
        data = _Setup._strict_json(text) if text.strip() else dict.fromkeys(keypath[1:], 1)
        if not isinstance(data, dict):
            raise ValidationError("the file does not hold a JSON object")
        node = data.setdefault(keypath[0], {})
        if not isinstance(node, dict):
            raise ValidationError(f"'{keypath[0]}' is not an object")
        if keypath[0] == "hooks":
            _Setup._merge_hooks(node, entry)
        else:
            node["instinct"] = entry
        new = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        # already right: the user's own layout is kept
        return text if text.strip() and json.loads(new) == json.loads(text) else new

    @staticmethod
    def _read_config(path):
        """(text without its BOM, real path, os.stat_result or None when absent, the BOM) of a
        client config: a regular UTF-8 file of at most 64 MiB (a FIFO never hangs)."""
        real = os.path.realpath(path)          # a symlinked config is edited in its target
        try:
            if os.path.islink(path) and not os.path.exists(real):
                raise ValidationError(f"{path} is a link to {real}, which does not exist; "
                                      "create it or remove the link")
            if os.path.isdir(real):
                raise ValidationError(f"{path} is a directory, not a config file; "
                                      "move it away and retry")
            st = os.stat(real)
            text = _read_regular(real, 64 * 1024 * 1024).decode("utf-8")
        except FileNotFoundError:
            return "", real, None, ""
        except OSError as e:
            raise StoreError(f"cannot read {path}: {e.strerror}") from None
        except UnicodeDecodeError as e:
            raise ValidationError(f"{path} is not UTF-8 text (byte {e.start}); "
                                  "fix it and retry") from None
        bom = text[:1] if text[:1] == "\ufeff" else ""
        return text[len(bom):], real, st, bom

    BACKUPS = 10                       # setup's backups kept (by number) in HOME/.instinct/setup

    @staticmethod
    def keep(state, path, text):
        """Save `text`, what `path` held, as STATE/N-NAME.bak (0600, N one past the newest) and
        keep the newest BACKUPS by N (never by time) -> its path."""
        found = sorted((int(f.split("-")[0]), f) for f in
                       (os.listdir(state) if os.path.isdir(state) else [])
                       if f.split("-")[0].isdigit() and f.endswith(".bak"))
        backup = os.path.join(state, f"{found[-1][0] + 1 if found else 1}-"
                                     f"{os.path.basename(path).lstrip('.')}.bak")
        os.makedirs(os.path.dirname(state), mode=0o700, exist_ok=True)   # the store's, 0700
        _atomic_write(backup, text.encode("utf-8"), private=True)
        for _, f in found[:max(0, len(found) + 1 - _Setup.BACKUPS)]:
            _drop_temp(os.path.join(state, f))
        return backup

    @staticmethod
    def manifest(state, records=None):
        """Setup's record of what it added ({config path: {original, entry, dirs}}) in
        STATE/manifest.json: read it, or (records given) write it, or remove it when empty."""
        path = os.path.join(state, "manifest.json")
        if records is None:
            text = _Setup._read_config(path)[0]
            try:
                records = _Setup._strict_json(text) if text else {}
                if isinstance(records, dict) and all(isinstance(r, dict)
                                                     for r in records.values()):
                    return records
                raise ValidationError("not setup's record")
            except ValidationError as e:
                raise ValidationError(f"{path}: {e}; move it away and retry") from None
        if records:
            os.makedirs(os.path.dirname(state), mode=0o700, exist_ok=True)
            _atomic_write(path, (_dumps(records, indent=1) + "\n").encode("utf-8"), private=True)
        elif os.path.exists(path):
            os.remove(path)

    @staticmethod
    def owned(kind, text):
        """What setup owns in a config text, by key: `KEY.instinct` (whoever wrote it), `hooks.
        EVENT` (instinct's own handlers), or the marked block of a TOML or YAML file."""
        if kind in ("toml", "yaml"):
            span = _Setup._marked_span(text)
            key = "mcp_servers" if kind == "toml" else "extensions"
            return {key + ".instinct": text[span[0]:span[1]]} if span else {}
        try:
            data = _Setup._strict_json(text) if text.strip() else {}
        except ValidationError:
            return {}
        node = data.get(kind[0]) if isinstance(data, dict) else None
        if not isinstance(node, dict):
            return {}
        if kind[0] != "hooks":
            return {f"{kind[0]}.instinct": node["instinct"]} if "instinct" in node else {}
        ours = {f"hooks.{e}": [h for g in gs if isinstance(g, dict)            # [g]: flat
                               and isinstance(g.get("hooks", [g]), list)
                               for h in g.get("hooks", [g]) if _Setup._is_ours(h)]
                for e, gs in node.items() if isinstance(gs, list)}
        return {k: v for k, v in ours.items() if v}

    @staticmethod
    def _unmerge(kind, text, rec, entry):
        """`text` without what setup wrote, the user's entry it replaced put back (its record
        `rec`; none: only an entry equal to `entry` is setup's) -> the new text (the original's
        bytes when its data is back), or None: setup created the file and nothing else is left."""
        import json
        original = rec.get("original") if rec else None
        if kind in ("toml", "yaml"):
            span = _Setup._marked_span(text)
            if span is None:
                if _Setup._unmarked_entry(kind, text):
                    raise ValidationError("its instinct entry has no `# instinct:begin` and `# "
                                          "instinct:end` lines (an earlier setup, or added by "
                                          "hand); delete it yourself")
                return text
            head, nl = text[:span[0]], "\r\n" if "\r\n" in text else "\n"
            new = (head[:-len(nl)] if head.endswith(nl + nl) else head) + text[span[1]:]
            if original is not None and original.rstrip("\r\n") == new.rstrip("\r\n"):
                return original
            return None if rec and original is None and not new.strip() else new
        data = _Setup._strict_json(text) if text.strip() else {}
        key = kind[0]
        if not isinstance(data, dict) or not isinstance(data.get(key), dict):
            return text                        # nothing of ours there
        node = data[key]
        old = _Setup._strict_json(original) if original and original.strip() else {}
        theirs = old.get(key) if isinstance(old, dict) else None
        if key == "hooks":
            _Setup._merge_hooks(node, {})
        elif "instinct" in node and node["instinct"] == (rec.get("entry") if rec else entry):
            if isinstance(theirs, dict) and "instinct" in theirs:
                node["instinct"] = theirs["instinct"]          # the user's own, put back
            else:
                del node["instinct"]
        if data == _Setup._strict_json(text):
            return text
        if not node and rec and theirs is None:  # the object setup added, if it is empty now
            del data[key]
        if data == dict.fromkeys(kind[1:], 1) and not old:   # the {"version": 1} setup added
            data = {}
        if original is not None and data == old:
            return original
        if not data and rec and original is None:
            return None
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    @staticmethod
    def _paste_text(kind, entry):
        import json
        if kind in ("toml", "yaml"):
            return ("extensions:  # add the marked lines under it\n" if kind == "yaml" else "") \
                + _Setup._marked_block(kind, entry, top=kind == "toml")
        if kind[0] == "hooks":
            return json.dumps({"hooks": {e: [g] for e, g in entry.items()}}, indent=2)
        return json.dumps({kind[0]: {"instinct": entry}}, indent=2)

    @staticmethod
    def _quoted(v):
        """A double-quoted string valid in both TOML and YAML (control characters as \\uXXXX)."""
        if any(0xd800 <= ord(ch) <= 0xdfff for ch in v):
            raise ValidationError("a path holds a lone surrogate, which no config file can store")
        return '"' + "".join("\\" + ch if ch in '"\\' else f"\\u{ord(ch):04x}"
                             if ord(ch) < 0x20 or 0x7f <= ord(ch) <= 0x9f or ch in "\ufffe\uffff"
                             else ch for ch in v) + '"'

    # Codex's config.toml and Goose's config.yaml are never edited in place: setup appends its
    # entry between these lines, later replaces or (--remove) deletes exactly them; else: paste.
    MARK_BEGIN, MARK_END = "# instinct:begin (written by `instinct setup`)", "# instinct:end"

    @staticmethod
    def _marked_block(kind, entry, top=True, pad="  "):
        """Codex's [mcp_servers.instinct] or Goose's extension (`top`: with `extensions:`)."""
        if kind == "toml":             # plan's env keys are bare TOML keys
            env = ", ".join(f"{k} = {_Setup._quoted(v)}" for k, v in entry["env"].items())
            body = ("[mcp_servers.instinct]\n"
                    f"command = {_Setup._quoted(entry['command'])}\n"
                    "args = [" + ", ".join(_Setup._quoted(a) for a in entry["args"]) + "]\n"
                    f"env = {{ {env} }}\n"
                    "startup_timeout_sec = 20\n")
        else:
            envs = ", ".join(f"{_Setup._quoted(k)}: {_Setup._quoted(v)}"
                             for k, v in entry["env"].items())
            body = ("extensions:\n" if top else "") + "".join(
                pad + "  " * (i > 0) + line + "\n" for i, line in enumerate((
                    "instinct:", "type: stdio", "name: instinct", "enabled: true",
                    f"cmd: {_Setup._quoted(entry['command'])}",
                    "args: [" + ", ".join(_Setup._quoted(x) for x in entry["args"]) + "]",
                    f"envs: {{{envs}}}", "timeout: 300")))
        return f"{_Setup.MARK_BEGIN}\n{body}{_Setup.MARK_END}\n"

    @staticmethod
    def _marked_span(text):
        """(start, end) of the lines from our begin marker to our end marker in `text`, or None."""
        t = "\n" + text
        at = t.find("\n" + _Setup.MARK_BEGIN)
        end = t.find("\n" + _Setup.MARK_END, at + 1) if at >= 0 else -1
        if end < 0:
            return None
        stop = text.find("\n", end)
        return at, len(text) if stop < 0 else stop + 1

    @staticmethod
    def _toml_data(text):
        """The parsed TOML, or None on Python 3.10 (no tomllib); ValidationError when invalid."""
        try:
            import tomllib
        except ImportError:
            return None
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ValidationError(f"not valid TOML: {e}") from None

    @staticmethod
    def _unmarked_entry(kind, text):
        """True when `text` may hold an instinct entry outside our marker lines."""
        import re
        if kind == "yaml":
            return re.search(r"""^[ \t]+["']?instinct["']?[ \t]*:""", text, re.M) is not None
        data = _Setup._toml_data(text)
        if data is None:
            return re.search(r"^[^#\n]*instinct", text, re.M) is not None
        servers = data.get("mcp_servers")
        return isinstance(servers, dict) and "instinct" in servers

    @staticmethod
    def _merge_text(kind, text, entry):
        """Codex's TOML or Goose's YAML with our marked block replaced or added (at the end, or
        first in Goose's block `extensions:` map) if no other instinct entry; else refused."""
        import re
        nl = "\r\n" if "\r\n" in text else "\n"
        span = _Setup._marked_span(text)
        ext = list(re.finditer(r"""^["']?extensions["']?[ \t]*:(.*)$""", text, re.M))
        if span is None and not text.strip():
            return _Setup._marked_block(kind, entry)
        if span is not None:
            inner = re.search(r"^( +)instinct:", text[span[0]:span[1]], re.M)
            top = kind == "toml" or "\nextensions:" in text[span[0]:span[1]]
            new = text[:span[0]] + _Setup._marked_block(
                kind, entry, top, inner.group(1) if inner else "  ").replace("\n", nl) \
                + text[span[1]:]
        elif kind == "yaml":
            at = ext[0].end() if ext else 0
            eol = at + (at < len(text))
            child = re.compile(r"(?:[ \t\r]*(?:#[^\n]*)?\n)*([ \t]*)(-?)").match(text, eol)
            if (_Setup._unmarked_entry(kind, text) or len(ext) > 1 or re.search(
                    r"^(?:[{\[%]|---|\.\.\.)", text, re.M)     # no flow, documents, directives
                    or ext and (ext[0].group(1).strip()[:1] not in ("", "#")
                                or child.group(2) or "\t" in child.group(1))
                    # a line at column 0 that is no `key:`:
                    or re.search(r"^(?![ \t#\r]|$)(?!.*:(?:[ \t\r]|$)).", text, re.M)):
                raise ValidationError("it has an instinct entry setup did not write, or is not "
                                      "plain block YAML with a block `extensions:` map, and "
                                      "instinct does not edit that in place")
            new = (text[:eol] + nl * (at == len(text)) + _Setup._marked_block(
                kind, entry, False, child.group(1) or "  ").replace("\n", nl) + text[eol:]
                if ext else text + ("" if text.endswith("\n") else nl) + nl
                + _Setup._marked_block(kind, entry).replace("\n", nl))
        elif _Setup._unmarked_entry(kind, text) or (_Setup._toml_data(text) is None
                                                   and "mcp_servers" in text):
            raise ValidationError("it has mcp_servers already (an instinct entry setup did not "
                                  "mark, or on Python 3.10 no TOML parser to check it), and "
                                  "instinct does not edit TOML in place")
        else:
            new = text + ("" if text.endswith("\n") else nl) + nl \
                + _Setup._marked_block(kind, entry).replace("\n", nl)
        old = _Setup._toml_data(text) if kind == "toml" else None
        if old is not None:                    # proved: it reads back as the old data plus ours
            servers = old.get("mcp_servers", {})
            ours = _Setup._toml_data(_Setup._marked_block(kind, entry))["mcp_servers"]
            try:
                ok = isinstance(servers, dict) \
                    and _Setup._toml_data(new) == dict(old, mcp_servers={**servers, **ours})
            except ValidationError:
                ok = False
            if not ok:
                raise ValidationError("instinct's table would not read back as its entry alone")
        return new


    @staticmethod
    def prepare(path, items, remove, rec, write):
        """(read_config(path), the text setup leaves there after each (kind, entry) of `items`,
        None: delete the file); a change it cannot make exactly is refused with the lines to add
        (or delete) by hand."""
        kind, entry = items[0]
        try:
            read = _Setup._read_config(path)
            new = read[0]
            for kind, entry in items:              # each entry of this file in turn
                new = new if new is None else (_Setup._unmerge(kind, new, rec, entry) if remove
                       else _Setup._merge_text(kind, new, entry) if kind in ("toml", "yaml")
                       else _Setup._merge_json(new, kind, entry))
        except ValidationError as e:
            if remove:
                raise ValidationError(f"cannot take instinct out of {path} ({e}); nothing was "
                                      "written") from None
            raise ValidationError(f"cannot merge into {path} ({e}); nothing was written. Add this "
                                  "by hand, then run setup again:\n"
                                  + _Setup._paste_text(kind, entry)) from None
        if write and new != read[0] and read[2] and not read[2].st_mode & 0o200:
            add = "" if remove else ", adding:\n" + _Setup._paste_text(kind, entry)
            raise ValidationError(f"{path} is read-only; make it writable (chmod u+w) or edit it "
                                  "by hand" + add)
        return read, "" if new is None and os.path.islink(path) else new   # a link stays

    @staticmethod
    def lock(real):
        """Take Claude Code's lock on a config, the folder `REAL.lock` (a holder is waited for up
        to 2 s, then setup goes on without) -> its path, or None."""
        for _ in range(200 if os.path.isdir(os.path.dirname(real)) else 0):
            try:
                os.mkdir(real + ".lock")
                return real + ".lock"
            except FileExistsError:
                time.sleep(0.01)
            except OSError:
                break
        return None

    @staticmethod
    def commit(path, real, st, text, bom, new):
        """Replace the config `real` by `new` (None: delete it) if it still holds `text` as read
        (same bytes, inode, size, mtime) -> False when another program wrote it meanwhile."""
        sig = (lambda s: s and (s.st_ino, s.st_size, s.st_mtime_ns) or None)
        same = (lambda: _Setup._read_config(path)[::3] == (text, bom)
                and sig(os.path.lexists(real) and os.stat(real)) == sig(st))
        if new is not None:
            return _atomic_write(real, (bom + new).encode("utf-8"), check=same)
        if not same():
            return False
        try:
            os.remove(real)
        except OSError as e:
            raise StoreError(f"cannot delete {path}: {e.strerror}") from None
        return True

    @staticmethod
    def one_scope(client, scope, home, project_dir, python, here, plan):
        """Refuse hooks in a second scope: with both, every call would be recorded twice."""
        other = "project" if scope == "user" else "user"
        try:
            theirs = _Setup.plan(client, other, home, project_dir, python, here)
        except ValidationError:                 # a client with one scope only
            return
        for path in [p for p, kind, _ in theirs
                     if kind[:1] == ("hooks",) and p not in [q for q, _, _ in plan]]:
            try:
                found = _Setup.owned(("hooks",), _Setup._read_config(path)[0])
            except InstinctError:
                found = None
            if found:
                raise ValidationError(f"instinct's hooks are already in {path} ({other} scope), "
                                      "and hooks in both scopes record every call twice: run "
                                      f"`instinct setup {client} --scope {other} --remove` first")

def setup(client, write=False, scope="user", home=None, project_dir=None, python=None, db=None,
          all_tools=False, remove=False):
    """Show (or with write=True merge) the MCP and hook config for `client`; `remove` takes out
    what setup wrote and puts back what it replaced (setup's record and backups are in
    HOME/.instinct/setup, whatever store `db` names). Every file is checked before any is
    written; a change it cannot make exactly is refused with the lines to add by hand.
    -> [{"path", "target", "content" (None: deleted), "changed", "changes" (the keys setup
    owns), "hooks", "backup"}]; twice changes nothing."""
    from contextlib import suppress
    home = home or os.path.expanduser("~")
    project_dir = project_dir or project_root()
    here = os.path.dirname(os.path.abspath(__file__))
    db = db and os.path.abspath(os.path.expanduser(db))
    if db and not remove and not os.path.isdir(os.path.dirname(db)):
        raise ValidationError(f"the store's folder {os.path.dirname(db)} does not exist, so every "
                              "hook would store nothing; create it or choose another --db")
    python = python or sys.executable
    plan = _Setup.plan(client, scope, home, project_dir, python, here, db, all_tools)
    if write and not remove and any(kind[:1] == ("hooks",) for _, kind, _ in plan):
        _Setup.one_scope(client, scope, home, project_dir, python, here, plan)
    # the record is the home's, whatever store a run names (an older one kept it beside --db)
    state, beside = (os.path.join(d, "setup") for d in (os.path.join(home, ".instinct"),
                                                         os.path.dirname(db or home)))
    records, write = _Setup.manifest(state), write or remove
    older = _Setup.manifest(beside) if db and beside != state else {}
    if older and write:
        records = {**older, **records}
        _Setup.manifest(state, records)
        _Setup.manifest(beside, {})
    files = {}                                  # path -> its entries in turn: one write a file
    for path, kind, entry in plan:
        files.setdefault(path, []).append((kind, entry))
    ready = [_Setup.prepare(p, items, remove, records.get(p), write) for p, items in files.items()]
    results, made = [], []
    for (path, items), ((text, real, st, bom), new) in zip(files.items(), ready):
        entry = next((e for k, e in items if k[:1] != ("hooks",)), items[0][1])   # the recorded
        backup, lock = None, None
        try:                           # after a change meanwhile: read again, under the lock
            for _ in range(5):
                if not write or new == text:
                    break
                if not remove:             # recorded before the write: a crash leaves the record
                    rec, got = records.get(path), _Setup.owned(items[0][0], text)
                    if not (rec and got and (items[0][0] in ("toml", "yaml")    # it stands
                                             or items[0][0][:1] == ("hooks",)
                                             or list(got.values()) == [rec.get("entry")])):
                        folders, d = [], os.path.dirname(path)    # while it holds what it says
                        while not os.path.exists(d):   # the folders setup makes, deepest first
                            folders, d = folders + [d], os.path.dirname(d)
                        rec = records[path] = {"original": text if st else None, "dirs": folders}
                    rec["entry"] = entry
                    _Setup.manifest(state, records)
                backup = backup or (_Setup.keep(state, path, text) if st else None)
                lock = lock or _Setup.lock(real)
                if _Setup.commit(path, real, st, text, bom, new):
                    break
                (text, real, st, bom), new = _Setup.prepare(path, items, remove,
                                                            records.get(path), write)
            else:
                raise StoreError(f"{path} changed each time setup read it (another program "
                                 "keeps rewriting it); it was left as it is: run setup again")
        finally:
            with suppress(OSError):
                os.rmdir(lock) if lock else None
        made += records.pop(path, {}).get("dirs", []) if remove else []
        was, now = ({k: v for kind, _ in items for k, v in _Setup.owned(kind, t).items()}
                    for t in (text, new or ""))
        results.append({"path": path, "target": real, "content": new, "changed": new != text,
                        "changes": [{"op": "remove", "key": k} for k in was if was[k] != now.get(k)]
                        + [{"op": "add", "key": k, "value": v} for k, v in now.items()
                           if v != was.get(k)],
                        "hooks": any(k[:1] == ("hooks",) for k, _ in items), "backup": backup})
    for d in sorted(made, key=len, reverse=True):     # the folders setup made (if empty now)
        with suppress(OSError):
            os.rmdir(d)
    if remove:
        _Setup.manifest(state, records)
    return results


# =============================================================================
# 16. Patterns: the seeds' operations (observe, suggest, forget, merge, consolidate, decay)
# =============================================================================
class _Patterns(_Core):
    """The seeds' operations on patterns, each a client of the kernel's one writer of confidence."""

    @operation(
        Param("pattern", str, "the pattern, e.g. seq:test->fix->test, pref:stdlib-first",
              required=True, positional=True),
        Param("category", str, "category (default: from the prefix: seq: sequence, pref: "
              "preference, fix: fix_pattern, combo: combo)", flag="--cat"),
        Param("source", str, "who observed it, e.g. claude-code", default=""),
        Param("project", str, "'' for global (default), a 12-hex fingerprint or a project path",
              default=""),
        Param("metadata", dict, "a JSON object merged into the pattern's metadata (free keys: "
              "OpenAI strict mode cannot type it; omit it there)", flag="--meta"),
        title="Observe a pattern", learns=True,
        output=_Out.obj({**_Out.RECORD["properties"], "forgotten": _Out.BOOL},
                        _Out.RECORD["required"]),
        render=lambda r: (f"{r['pattern']} is forgotten ({_Core._where(r)}): not recorded"
                          " (`instinct unforget` lifts it)"
                          if r.get("forgotten") else _Out.render_record(r)))
    def observe(self, pattern, category=None, source="", project="", metadata=None):
        """Record one occurrence of a pattern: new ones start at confidence 1, known ones gain 1.

        Call it whenever you notice a recurring habit, preference, fix or tool combination; levels
        change when consolidate runs. A forgotten pattern is not recorded (`forgotten` true)."""
        given = normalize_pattern(pattern)
        cat = _check_category(category) if category is not None else None
        source = _Core._note_source(_check_text(source, "source"))
        proj = _resolve_project(project, self.cwd)
        meta = _check_metadata(metadata)
        with self._write() as conn:
            now = self._now()
            r = self._reinforce(conn, given, proj, source=source, session=self.session, ts=now,
                                category=cat, metadata=meta)
            if proj and proj != project and not conn.execute(   # a folder: note which one, once
                    "SELECT 1 FROM projects WHERE fingerprint = ?", (proj,)).fetchone():
                conn.execute(_Core._SQL_PROJECT, (proj, project_root(project), now))
            if r is None:                               # forgotten: nothing is recorded
                row = (self._canonical(given, conn), cat or category_for(given), 0, 0, proj,
                       source, "", "", "{}")
                return {**_Core._record(row), "forgotten": True}
            p, want = r["pattern"], cat                 # the canonical pattern
            new = r["confidence"] == _Core._OBSERVATION and r["first_seen"] == now
            if want is None and p != given and new:
                want = category_for(p)                  # new under an alias: canonical's category
            if want is not None and r["category"] != want:
                conn.execute("UPDATE instincts SET category = ? WHERE pattern = ? AND project = ?",
                             (want, p, proj))
                r["category"] = want
            if meta and r["confidence"] > _Core._OBSERVATION:
                r["metadata"].update(_loads_meta(meta))
                conn.execute("UPDATE instincts SET metadata = ? WHERE pattern = ? AND project = ?",
                             (_check_metadata(r["metadata"]), p, proj))
        return r

    @operation(
        Param("project", str, "project to suggest for: '' global only, a fingerprint or a path "
              "(default: the project of the working directory)"),
        Param("limit", int, "at most this many suggestions (default: the suggest_limit"
              " setting, 50)", minimum=1, maximum=MAX_LIMIT, setting="suggest_limit"),
        title="Suggest learned habits", idempotent=True,       # it logs what it showed (surface)
        output=_Out.RECORD, list_key="suggestions",
        render=lambda rs: _Out.lines(rs, "suggestion") if rs else
        "0 suggestions: nothing mature here yet (`instinct init` learns from past sessions)")
    def suggest(self, project=None, limit=None):
        """Mature, rule and universal patterns for a project (plus global ones), strongest first.

        Ask for these at the start of a task; raw observations are never suggested."""
        proj = _resolve_project(project, self.cwd)
        # Candidates strongest first from the covering index, one per pattern (this project's
        # row, else the strongest); the window of k grows until it provably holds the answer.
        narrow = "id, pattern, project, promoted, confidence FROM instincts WHERE promoted > 0"
        here = _Core._SQL_UNFORGOTTEN.format("pattern", ":p")      # forgotten here: in no scope
        ranked = (f"SELECT {narrow} AND project = '' AND quiet = 0{here} UNION ALL SELECT {narrow}"
                  f" AND project = :p AND :p != '' AND quiet = 0 UNION ALL SELECT {narrow}"
                  f" AND promoted = 3 AND project NOT IN ('', :p) AND quiet = 0{here}"
                  f" ORDER BY promoted DESC, confidence DESC, pattern LIMIT :k")
        k = limit * 2 + 16
        while True:
            cand = self._read(ranked, {"p": proj, "k": k})
            best = {}                                   # pattern -> id of the row to show
            for rid, pat, pr, _, _ in cand:
                if pat not in best or pr == proj:
                    best[pat] = rid
            if proj:                                   # this project's row wins, even if weaker
                for rid, pat in self._chunked(
                        "SELECT id, pattern FROM instincts WHERE project = ? AND promoted > 0"
                        " AND quiet = 0 AND pattern IN ({})", list(best), (proj,)):
                    best[pat] = rid
            rows = self._chunked(f"SELECT {_Core._COLS} FROM instincts WHERE id IN ({{}})",
                                 list(best.values()))
            recs = sorted(map(_Core._record, rows),
                          key=lambda r: (-r["promoted"], -r["confidence"], r["pattern"]))
            out = self._suggest_filter(recs, proj)
            if len(cand) < k:
                break
            _, pat, _, promoted, conf = cand[-1]
            cut = (-promoted, -conf, pat)
            strong = [r for r in out if (-r["promoted"], -r["confidence"], r["pattern"]) <= cut]
            if len(strong) >= limit:
                out = strong
                break
            k *= 4
        out = out[:limit]
        if out:               # what was shown, for effectiveness (section 23)
            self._surface("\n".join(r["pattern"] + "\t" + r["project"] for r in out[:100]))
        return out

    @operation(
        Param("min_confidence", int, "only patterns with at least this confidence", default=1,
              minimum=0),
        Param("category", str, "only this category"),
        Param("project", str, "only this project ('' = global only; default: all)"),
        Param("level", str, "only this level", choices=LEVELS),
        Param("limit", int, "at most this many (default: the list_limit setting, 200)", minimum=1,
              maximum=MAX_LIMIT, setting="list_limit"),
        mcp="list_instincts", title="List instincts", read_only=True, idempotent=True,
        output=_Out.RECORD, list_key="instincts", render=lambda rs: _Out.lines(rs, "instinct"))
    def list(self, min_confidence=1, category=None, project=None, level=None, limit=None):
        """List stored patterns, highest confidence first, with optional filters.

        A project's row carries its folder (`root`, '' when unknown)."""
        where, params = ["confidence >= ?"], [min_confidence]
        for column, value, check in (("category", category, _check_category),
                                     ("project", project, lambda v: _resolve_project(v, self.cwd)),
                                     ("promoted", level, LEVELS.index)):
            if value is not None:
                where.append(column + " = ?")
                params.append(check(value))
        sql = (f"SELECT {_Core._COLS} FROM instincts WHERE {' AND '.join(where)}"
               " ORDER BY confidence DESC, pattern, project LIMIT ?")
        params.append(int(limit))
        out = [_Core._record(r) for r in self._read(sql, params)]
        roots = self._roots(r["project"] for r in out)
        return [dict(r, root=roots.get(r["project"], "")) if r["project"] else r for r in out]

    @operation(
        Param("query", str, "words to look for in patterns and categories", required=True,
              positional=True),
        Param("limit", int, "at most this many (default: the list_limit setting, 200)", minimum=1,
              maximum=MAX_LIMIT, setting="list_limit"),
        mcp="search_instincts", title="Search instincts", idempotent=True,   # indexes new patterns
        output=_Out.RECORD, list_key="instincts", render=lambda rs: _Out.lines(rs, "match"))
    def search(self, query, limit=None):
        """Full-text search over patterns (FTS5 prefix match; substring match without FTS5)."""
        _check_text(query, "query", MAX_PATTERN, empty_ok=False)
        words = "".join(c if c.isalnum() or c == "_" else " " for c in query).split()
        lim = f" LIMIT {int(limit)}"
        cols = ", ".join("i." + c.strip() for c in _Core._COLS.split(","))
        if words and self._fts():
            self._fts_sync()
            fts_q = " AND ".join('"%s"*' % w for w in words)
            rows = self._read(
                f"SELECT {cols} FROM instincts_fts f JOIN instincts i ON i.id = f.rowid"
                " WHERE instincts_fts MATCH ? ORDER BY f.rank, i.confidence DESC, i.pattern" + lim,
                (fts_q,))
        else:                     # each word (or the raw query) as a substring, like FTS's AND
            terms = [t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                     for t in (words or [query])]
            rows = self._read(
                f"SELECT {cols} FROM instincts i WHERE "
                + " AND ".join(["(i.pattern LIKE ? ESCAPE '\\' OR i.category LIKE ? ESCAPE '\\')"]
                               * len(terms))
                + " ORDER BY i.confidence DESC, i.pattern" + lim,
                [f"%{t}%" for t in terms for _ in (0, 1)])
        return [_Core._record(r) for r in rows]

    @operation(
        Param("pattern", str, "the pattern", required=True, positional=True),
        _Core._PROJECT_OF_ONE,
        mcp="get_instinct", title="Get one instinct", read_only=True, idempotent=True,
        output=_Core._RECORD_AT, render=lambda r: f"{_Out.render_record(r)}  ({_Core._where(r)})")
    def get(self, pattern, project=None):
        """One pattern's record (confidence, level, first/last seen...) and where it was found."""
        p, proj, scope = self._locate(pattern, project)
        row = self._read(f"SELECT {_Core._COLS} FROM instincts WHERE pattern = ? AND project = ?",
                         (p, proj))
        if not row:
            raise _Core._missing(p, proj)
        return {**_Core._record(row[0]), "scope": scope}

    @operation(
        Param("pattern", str, "the pattern to delete (an alias: the alias goes, its pattern stays)",
              required=True, positional=True),
        _Core._PROJECT_OF_ONE, _Core._DRY_RUN,
        title="Forget an instinct", destructive=True, idempotent=True,
        output=_Out.obj({**_Core._RECORD_AT["properties"], "alias": _Out.STR, "events": _Out.INT,
                         "dry_run": _Out.BOOL, "backup_file": _Out.STR}, ("pattern",)),
        render=lambda r: (f"{'Would remove' if r.get('dry_run') else 'Removed'} alias {r['alias']}"
                          f" (it meant {r['pattern']}, which is kept)" if "alias" in r else
                          f"{'Would forget' if r.get('dry_run') else 'Forgot'} {r['pattern']} "
                          f"(conf={r['confidence']}, {_Core._where(r)}) and {r['events']} events;"
                          f" it stays forgotten (`instinct unforget` lifts it)")
                         + _Core._backup_note(r))
    def forget(self, pattern, project=None, dry_run=False):
        """Delete a pattern for good: observing, mining, importing or merging it leaves it out.

        Its events and mining rows go (and, when no project keeps it, its aliases and settings);
        the search index and the WAL are purged. A tombstone (a hash, not the text) stays until
        `unforget`. A backup is written first (`restore` it to undo)."""
        return self._guarded("forget", dry_run, lambda s: s._forget(pattern, project))

    @operation(
        Param("pattern", str, "the forgotten pattern", required=True, positional=True),
        Param("project", str, "'' global, a fingerprint or a project path (default: this "
              "project's tombstone, else the global one)"),
        title="Unforget a pattern", idempotent=True,
        output=_Out.obj({"pattern": _Out.STR, "project": _Out.STR}, ("pattern", "project")),
        render=lambda r: (f"{r['pattern']} is no longer forgotten ({_Core._where(r)}): it counts"
                          " again"))
    def unforget(self, pattern, project=None):
        """Lift a `forget`: the pattern may be observed, mined, imported and merged again."""
        p = normalize_pattern(pattern)
        projs = ([_resolve_project(project, self.cwd)] if project is not None
                 else [project_fingerprint(self.cwd), ""])
        with self._write() as conn:
            p = self._canonical(p, conn)
            for proj in projs:
                keys = _forgotten_key(p, proj, self._db.key()), _forgotten_key(p, proj)
                if conn.execute("DELETE FROM forgotten WHERE key IN (?, ?)", keys).rowcount:
                    self._event(conn, "unforget", "", proj)
                    return {"pattern": p, "project": proj}
        where = f"in project {projs[0]}" if projs[0] else "globally"
        raise NotFoundError(f"{p!r} is not forgotten {where}" + " or globally" * (len(projs) > 1))

    @operation(
        Param("source", str, "the pattern (spelling) to fold away", required=True, positional=True),
        Param("target", str, "the pattern it means", required=True, positional=True),
        title="Merge one pattern into another", idempotent=True,
        output=_Out.obj({"alias": _Out.STR, "pattern": _Out.STR, "merged": _Out.INT,
                         "forgotten": _Out.INT}, ("alias", "pattern", "merged")),
        render=lambda r: f"{r['alias']} -> {r['pattern']} ({r['merged']} rows merged"
                         + (f", {r['forgotten']} dropped: forgotten there)" if r.get("forgotten")
                            else ")"))
    def merge(self, source, target):
        """Fold `source` into `target` (confidence, events, every project) and leave an alias.

        Later observations of `source` count for `target`. A row whose target was forgotten
        there is dropped, not merged (`forgotten`)."""
        a, target = normalize_pattern(source), normalize_pattern(target)
        if a == target:
            raise ValidationError("an alias must differ from its pattern")
        with self._write() as conn:
            t = self._canonical(target, conn)
            if t == a:
                raise ValidationError(f"{target!r} is already an alias of {a!r}")
            rows = conn.execute(f"SELECT {_Core._COLS} FROM instincts WHERE pattern = ?",
                                (a,)).fetchall()
            if not rows and not conn.execute("SELECT 1 FROM instincts WHERE pattern = ?",
                                             (t,)).fetchone():
                raise NotFoundError(f"neither {a!r} nor {t!r} is stored: nothing to merge")
            conn.execute("INSERT INTO aliases (alias, pattern) VALUES (?, ?) ON CONFLICT (alias)"
                         " DO UPDATE SET pattern = excluded.pattern", (a, t))
            conn.execute("UPDATE aliases SET pattern = ? WHERE pattern = ?", (t, a))
            now, forgotten = self._now(), 0
            for _, cat, conf, _, proj, src, first, last, meta in rows:
                if self._reinforce(conn, t, proj, source=src, session=self.session, ts=now,
                                   delta=conf, kind="merge", category=cat, metadata=meta,
                                   seen=(first, last), data=a) is None:
                    forgotten += 1                      # forgotten there: its history goes too
                    conn.execute("DELETE FROM events WHERE pattern = ? AND project = ?", (a, proj))
            conn.execute("DELETE FROM instincts WHERE pattern = ?", (a,))
            conn.execute("UPDATE events SET pattern = ? WHERE pattern = ? AND pattern != ''"
                         " AND kind != 'merge'", (t, a))
            out = {"alias": a, "pattern": t, "merged": len(rows) - forgotten}
            return dict(out, forgotten=forgotten) if forgotten else out

    _CONSOLIDATED = (("promoted_mature", "Promoted to mature"),       # consolidate's counts
                     ("promoted_rule", "Promoted to rule"),
                     ("promoted_universal", "Promoted to universal"), ("demoted", "Demoted"),
                     ("total", "Total instincts"))

    @operation(
        title="Consolidate: promote and demote", idempotent=True,
        output=_Out.obj({k: _Out.INT for k, _ in _CONSOLIDATED}, [k for k, _ in _CONSOLIDATED]),
        render=lambda r: "\n".join(f"{label}: {r[k]}" for k, label in _Patterns._CONSOLIDATED
                                   if r[k] or k in ("total", "promoted_mature", "promoted_rule")))
    def consolidate(self):
        """Promote patterns at a threshold (mature 5, rule 10) and demote those below it.

        A rule in 2 or more projects becomes universal; this is the only place levels change.
        It also cuts the event log toward its retention (at most 500,000 rows a run)."""
        self._fts_sync()
        settings = self._settings()
        mature = self._threshold_sql(settings, "mature_threshold")
        rule = self._threshold_sql(settings, "rule_threshold")
        with self._write() as conn:
            conn.execute("DROP TABLE IF EXISTS temp._lv")
            conn.execute("CREATE TEMP TABLE _lv (rid INTEGER PRIMARY KEY, pattern TEXT,"
                         " project TEXT, old INTEGER, new INTEGER)")
            conn.execute(f"INSERT INTO _lv SELECT i.id, i.pattern, i.project, i.promoted,"
                         f" {_level_sql('i.confidence', mature, rule)} FROM instincts i")
            conn.execute("UPDATE _lv SET new = 3 WHERE new = 2 AND pattern IN (SELECT pattern"
                         " FROM _lv WHERE new = 2 AND project != '' GROUP BY pattern"
                         " HAVING count(DISTINCT project) >= ?)", (settings["universal_projects"],))
            counts = {k: 0 for k, _ in self._CONSOLIDATED[:-1]}
            for old, new, n in conn.execute(
                    "SELECT old, new, count(*) FROM _lv WHERE old != new GROUP BY old, new"):
                key = "demoted" if new < old else ("promoted_" + LEVELS[new])
                counts[key] += n
            conn.execute("UPDATE instincts SET promoted = (SELECT new FROM _lv"
                         " WHERE rid = instincts.id)"
                         " WHERE id IN (SELECT rid FROM _lv WHERE old != new)")
            counts["total"] = conn.execute("SELECT count(*) FROM _lv").fetchone()[0]
            conn.execute("INSERT INTO events (ts, kind, pattern, project, session, data) SELECT ?,"
                         " CASE WHEN new > old THEN 'promote' ELSE 'demote' END, pattern,"
                         " project, ?, old || '->' || new FROM _lv WHERE old != new",
                         (self._now(), self.session))
            conn.execute("DROP TABLE temp._lv")
        if not self._keep_events:
            self._prune_events(settings, most=_Core._PRUNE_PER_CONSOLIDATE)
        return counts

    @operation(
        Param("days_inactive", int, "days without an observation before a pattern loses 1",
              default=90, flag="--days", minimum=1, maximum=36500),
        title="Decay stale patterns", destructive=True,
        output=_Out.obj({"decayed": _Out.INT, "deleted": _Out.INT, "total": _Out.INT},
                        ("decayed", "deleted", "total")),
        render=lambda r: (f"Decayed: {r['decayed']}\nDeleted: {r['deleted']}\n"
                          f"Total instincts: {r['total']}"))
    def decay(self, days_inactive=90):
        """Patterns unseen for N active days (default 90) lose 1 confidence; at 0 deleted.

        A project's days are those on which it had sessions; a global pattern's, those on which
        any project had one (calendar days in a store that never saw a project: the seeds' API).
        So imported history and dormant projects keep their habits. A pattern is charged once per
        inactive period however often decay runs; an interrupted decay finishes without charging
        anything twice."""
        now, clock = self._now(), self._active_days()
        cutoffs = [(k, _iso(self._clock() - days_inactive * 86400) if d is None else
                    d[days_inactive - 1]) for k, d in clock.items()
                   if d is None or len(d) >= days_inactive]
        stale = ("id > ? AND id <= ? AND max(last_seen, decayed_at) <"
                 " (SELECT cutoff FROM temp._clock c WHERE c.project = instincts.project)")
        with self._write() as conn:      # each scope's cutoff: its N-th newest active day
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS _clock (project TEXT PRIMARY KEY,"
                         " cutoff TEXT)")
            conn.execute("DELETE FROM temp._clock")
            conn.executemany("INSERT INTO temp._clock VALUES (?, ?)", cutoffs)
        top = self._read("SELECT coalesce(max(id), 0) FROM instincts")[0][0] if cutoffs else 0
        decayed = deleted = 0
        for lo in range(0, top, _Core._DECAY_BATCH):
            rng = (lo, lo + _Core._DECAY_BATCH)
            with self._write() as conn:     # events in ix_events_pattern order: each leaf once
                conn.execute(f"INSERT INTO events (ts, kind, pattern, project, session, delta)"
                             f" SELECT ?, 'decay', pattern, project, ?, -1 FROM instincts"
                             f" WHERE {stale} ORDER BY pattern, project", (now, self.session) + rng)
                decayed += conn.execute(f"UPDATE instincts SET confidence = confidence - 1,"
                                        f" decayed_at = ? WHERE {stale}", (now,) + rng).rowcount
                deleted += conn.execute("DELETE FROM instincts WHERE id > ? AND id <= ?"
                                        " AND confidence <= 0", rng).rowcount
        (total,), = self._read("SELECT count(*) FROM instincts")
        return {"decayed": decayed, "deleted": deleted, "total": total}

    def _active_days(self):
        """Decay's clock: {project: its days with sessions, newest first}, '' for every project's
        days, or '': None (the calendar) in a store that never saw a project."""
        days = {}
        for proj, day in self._read("SELECT project, day FROM active_days"):
            for scope in {proj, ""}:
                days.setdefault(scope, set()).add(day)
        if not days and not self._read("SELECT 1 FROM projects LIMIT 1"):
            return {"": None}
        return {k: sorted(v, reverse=True) for k, v in days.items()}

    def _db_bytes(self):
        """The database file's size with its write-ahead log (stats, gc)."""
        return sum(os.path.getsize(self.path + s) for s in ("", "-wal")
                   if os.path.exists(self.path + s))

    @operation(
        title="Store statistics", read_only=True, idempotent=True,
        output=_Out.obj({"total": _Out.INT, "by_level": _Out.obj({k: _Out.INT for k in LEVELS}),
                     "by_category": {"type": "object"}, "projects": _Out.INT, "events": _Out.INT,
                     "aliases": _Out.INT, "db_path": _Out.STR, "db_bytes": _Out.INT,
                     "schema_version": _Out.INT, "fts": _Out.BOOL, "folders": {"type": "object"}},
                        ("total", "by_level", "by_category", "projects", "events")),
        render=_Out.render_stats)
    def stats(self):
        """Counts by level and category, projects, event-log size, database file facts."""
        by_level = {k: 0 for k in LEVELS}
        for lv, n in self._read("SELECT promoted, count(*) FROM instincts GROUP BY promoted"):
            by_level[LEVELS[lv]] = n
        by_cat = {c: n for c, n in self._read(
            "SELECT category, count(*) FROM instincts GROUP BY category"
            " ORDER BY count(*) DESC, category")}
        (projects, events, aliases), = self._read(
            "SELECT (SELECT count(DISTINCT project) FROM instincts WHERE project != ''),"
            " (SELECT count(*) FROM events), (SELECT count(*) FROM aliases)")
        (version,), = self._read("PRAGMA user_version")
        return {"total": sum(by_level.values()), "by_level": by_level, "by_category": by_cat,
                "projects": projects, "events": events, "aliases": aliases, "db_path": self.path,
                "db_bytes": self._db_bytes(), "schema_version": version, "fts": self._fts(),
                "folders": dict(self._read("SELECT fingerprint, root FROM projects"
                                           " ORDER BY first_seen DESC LIMIT 20"))}

    @operation(
        title="List projects", read_only=True, idempotent=True, list_key="projects",
        output=_Out.obj({"fingerprint": _Out.STR, "root": _Out.STR, "sessions": _Out.INT,
                         "patterns": _Out.INT}, ("fingerprint", "root", "sessions", "patterns")),
        render=lambda rs: "\n".join([f"  {r['fingerprint']}  {r['root'] or '(folder unknown)'}  "
                                     f"{_Out.count(r['sessions'], 'session')}, "
                                     f"{_Out.count(r['patterns'], 'pattern')}"
                                     for r in rs]
                                    + [_Out.count(len(rs), "project")]))
    def projects(self):
        """Which folder each project fingerprint stands for, with its sessions and patterns.

        A fingerprint is 12 hex of sha256 of the project's root folder, whose path is known once
        a hook, import-history or observe with a project path saw it."""
        roots = dict(self._read("SELECT fingerprint, root FROM projects"))
        pats = dict(self._read("SELECT project, count(*) FROM instincts WHERE project != ''"
                               " GROUP BY project"))
        sess = dict(self._read("SELECT project, count(*) FROM mined_sessions WHERE project != ''"
                               " GROUP BY project"))
        return [{"fingerprint": f, "root": roots.get(f, ""), "sessions": sess.get(f, 0),
                 "patterns": pats.get(f, 0)}
                for f in sorted(set(roots) | set(pats) | set(sess),
                                key=lambda f: (-pats.get(f, 0), f))]

    @operation(
        Param("key", str, "setting: mature_threshold, rule_threshold, universal_projects, "
              "events_max_days, events_max_rows, feedback_bad_quiet, or "
              "category.<name>.<threshold> / pattern.<pattern>.<threshold>", positional=True),
        Param("value", str, "new integer value ('default' removes the setting)", positional=True),
        title="Show or change settings", idempotent=True,
        output={"type": "object"}, render=lambda r: "\n".join(f"{k}: {v}" for k, v in r.items()))
    def config(self, key=None, value=None):
        """Show or set settings (thresholds store-wide, per category or per pattern)."""
        if key is None:
            if value is not None:
                raise ValidationError("give a key to set a value")
            vals = self._settings()
            return dict(sorted(vals.items(), key=lambda kv: (kv[0] not in SETTINGS, kv[0])))
        key = self._setting_key(key)
        if value is None:
            return {key: self._settings().get(key, None if "." in key else SETTINGS[key][0])}
        _check_text(value, "value")
        if value.strip().lower() == "default":
            with self._write() as conn:
                conn.execute("DELETE FROM settings WHERE key = ?", (key,))
            return {key: None if "." in key else SETTINGS[key][0]}
        try:
            n = int(value)
        except ValueError:
            raise ValidationError(f"value for {key} must be a whole number") from None
        lo, hi = _SETTING_RANGES.get(key, (1, 10**9))
        if not lo <= n <= hi:
            raise ValidationError(f"value for {key} must be between {lo} and {hi}")
        with self._write() as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key)"
                         " DO UPDATE SET value = excluded.value", (key, str(n)))
        return {key: n}


# =============================================================================
# 17. Knowledge memories (remember, recall, forget)
# =============================================================================
class _Memory(_Patterns):
    """Typed knowledge memories next to the counted instincts (issue 7)."""

    @staticmethod
    def _mem_get(conn, mid):
        """The record of memory `mid` (NotFoundError if there is none)."""
        row = conn.execute(f"SELECT {_Mem.COLS} FROM memories WHERE id = ?", (mid,)).fetchone()
        if row is None:
            raise NotFoundError(f"no memory #{mid}")
        return _Mem.record(row)

    @staticmethod
    def _mem_fields(mtype, title, content, why, how_to_apply, tags, source, metadata):
        """Check one memory's fields -> a dict ready to store (ValidationError on bad input)."""
        if mtype not in _Mem.MEMORY_TYPES:
            raise ValidationError(f"type must be one of: {', '.join(_Mem.MEMORY_TYPES)}")
        f = {"type": mtype, "title": _Mem.text(title, "title", MAX_SHORT, empty_ok=False),
             "content": _Mem.text(content, "content", 8000, True),
             "why": _Mem.text(why, "why", 2000, True),
             "how_to_apply": _Mem.text(how_to_apply, "how_to_apply", 2000, True),
             "tags": _Mem.tags(tags), "source": _Mem.text(source, "source", MAX_SHORT),
             "metadata": _check_metadata(metadata) or "{}"}
        if not _Mem.words(f["title"]):
            raise ValidationError("title must contain a word")
        if mtype == "episode" and not f["content"]:
            f["content"] = _Mem.text(_Mem.episode(metadata or {}), "content", 8000, True)
        f["redacted"] = []                 # fields where a secret-looking value was replaced
        for k in ("title", "content", "why", "how_to_apply"):
            f[k], n = _Mem.redact_secrets(f[k])
            if n:
                f["redacted"].append(k)
        if metadata:
            clean, n = _Mem.redact_value(metadata)
            if n:
                f["metadata"] = _check_metadata(clean)
                f["redacted"].append("metadata")
        return f

    def _mem_insert(self, conn, f, proj, keys, supersedes=None, confidence=1):
        now = self._now()
        mid = conn.execute(
            "INSERT INTO memories (type, title, content, why, how_to_apply, tags, project, source,"
            " confidence, created, updated, supersedes, metadata)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (f["type"], f["title"], f["content"], f["why"], f["how_to_apply"], f["tags"], proj,
             f["source"], confidence, now, now, supersedes, f["metadata"])).lastrowid
        conn.executemany("INSERT OR IGNORE INTO memory_keys (key, memory_id) VALUES (?, ?)",
                         [(k, mid) for k in keys])
        self._event(conn, "remember", project=proj, source=f["source"], delta=confidence,
                    data=_dumps({"memory": mid, "type": f["type"], "title": f["title"]}))
        return mid

    def _mem_repeat(self, conn, f, proj, keys):
        """The stored memory `f` repeats (same type and scope, same title or 80% of its words): of
        the newest PER_KEY per key (bounded cost), the CANDIDATES sharing most keys by words."""
        shared = Counter(mid for k in keys for (mid,) in conn.execute(
            "SELECT memory_id FROM memory_keys WHERE key = ? ORDER BY memory_id DESC LIMIT ?",
            (k, _Mem.PER_KEY)))
        ids = sorted(shared, key=lambda m: (-shared[m], -m))[:_Mem.CANDIDATES]
        if not ids:
            return None
        rows = conn.execute(
            "SELECT id, title, content, archived FROM memories"
            f" WHERE id IN ({','.join('?' * len(ids))})"
            f" AND type = ? AND project = ? AND superseded_by IS NULL ORDER BY archived, id DESC",
            (*ids, f["type"], proj)).fetchall()
        title = _Mem.words(f["title"])
        words = set(_Mem.words(f["title"] + " " + f["content"]))
        best, best_j = None, _Mem.JACCARD
        for mid, t, c, _ in rows:
            if _Mem.words(t) == title:
                return mid
            other = set(_Mem.words(t + " " + c))
            j = len(words & other) / len(words | other)
            if j >= best_j:
                best, best_j = mid, j
        return best

    @operation(
        Param("type", str, "user, feedback, project, reference or episode", required=True,
              positional=True, choices=tuple(_Mem.MEMORY_TYPES)),
        Param("title", str, "one line naming the knowledge", required=True, positional=True),
        Param("content", str, "the knowledge itself (may span lines; '' for an episode described "
              "by its metadata)", required=True, positional=True),
        Param("why", str, "the reason it holds", default=""),
        Param("how_to_apply", str, "what to do because of it", default=""),
        Param("tags", str, "comma-separated tags", default=""),
        Param("project", str, "'' for global (default), a 12-hex fingerprint or a project path",
              default=""),
        Param("source", str, "who stored it, e.g. claude-code", default=""),
        Param("supersedes", int, "id of an older memory this one replaces", minimum=1,
              maximum=2**63 - 1),
        Param("metadata", dict, "a JSON object kept with the memory; an episode keeps task, steps, "
              "failures and outcome here (free keys: OpenAI strict mode cannot type it; omit it "
              "there)", flag="--meta"),
        Param("about", str, "comma-separated files of this project the memory is about: when one "
              "changes or goes, it is briefed as maybe stale (remembering it again re-anchors it)",
              default=""),
        mcp="memory_store", title="Remember a piece of knowledge", output=_Mem.MEMORY,
        render=_Mem.render_memory, learns=True)
    def remember(self, type, title, content, why="", how_to_apply="", tags="", project="",
                 source="", supersedes=None, metadata=None, about=""):
        """Store a typed memory; storing nearly the same one again reinforces it instead.

        Store distilled knowledge, not transcripts: a user preference, feedback on how to work, a
        project fact, a reference, or an episode (one task). A memory with the same type, scope and
        title, or sharing 80% of its words, gains 1 confidence and merges sources (status
        'reinforced'). `supersedes` replaces an older memory: it is kept, marked, not recalled."""
        f = self._mem_fields(type, title, content, why, how_to_apply, tags, source, metadata)
        proj = _resolve_project(project, self.cwd)
        keys = _Mem.keys(f["type"], proj, f["title"], f["content"])
        root = project_root(self.cwd)
        paths = [_Anchors.path(root, p.strip(), self.cwd)
                 for p in _check_text(about, "about", 4096).split(",") if p.strip()]
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM forgotten WHERE key IN (?, ?, ?, ?)",  # none lifts it
                            _Mem.tombstones(f["type"], proj, f["title"], "",
                                            self._db.key())).fetchone():
                raise ValidationError(
                    f"a {f['type']} memory titled {f['title']!r} was forgotten here; not stored"
                    f" (`instinct unforget-memory {f['type']} TITLE` lets it be stored again)")
            if supersedes is not None:
                old = self._mem_get(conn, supersedes)
                if "superseded_by" in old:
                    raise ValidationError(f"memory #{supersedes} is already superseded by "
                                          f"#{old['superseded_by']}; supersede that one instead")
            mid = None if supersedes is not None else self._mem_repeat(conn, f, proj, keys)
            if mid is not None:                                     # a near-copy: reinforce it
                out = dict(self._mem_reinforce(conn, mid, f), status="reinforced")
            else:
                mid = self._mem_insert(conn, f, proj, keys, supersedes)
                if supersedes is not None:
                    conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?",
                                 (mid, supersedes))
                out = dict(self._mem_get(conn, mid), status="created")
            _Anchors.reanchor(conn, root, out, paths)
        if paths:
            out["about"] = paths
        if f["redacted"]:
            out["warnings"] = [f"secret-looking text in {', '.join(f['redacted'])} was replaced by "
                               f"{_Mem.REDACTED}; keep secrets out of memories"]
        return out

    def _mem_reinforce(self, conn, mid, f):
        src, tags, meta = conn.execute("SELECT source, tags, metadata FROM memories WHERE id = ?",
                                       (mid,)).fetchone()
        merged = _loads_meta(meta)
        merged.update((k, v) for k, v in _loads_meta(f["metadata"]).items() if k not in merged)
        conn.execute(
            "UPDATE memories SET confidence = max(confidence, 0) + 1, source = ?, tags = ?,"
            " why = CASE WHEN why = '' THEN ? ELSE why END,"
            " how_to_apply = CASE WHEN how_to_apply = '' THEN ? ELSE how_to_apply END,"
            " metadata = ?, updated = ?, decayed_at = '', archived = 0, archived_at = ''"
            " WHERE id = ?",
            (_Mem.merge_csv(src, f["source"]), _Mem.tags(_Mem.merge_csv(tags, f["tags"])), f["why"],
             f["how_to_apply"], _check_metadata(merged), self._now(), mid))
        rec = self._mem_get(conn, mid)
        self._event(conn, "reinforce", project=rec["project"], source=f["source"], delta=1,
                    data=_dumps({"memory": mid, "type": rec["type"], "title": rec["title"]}))
        return rec

    def _mem_scored(self, cands, limit):
        """[(raw relevance, id, type, updated, confidence, uses)] -> the top `limit` [(score, id,
        parts)], in relevance order, stopping once perfect other parts could not reach them."""
        s = self._settings()
        w = [max(0, s["memory_weight_" + k]) for k in _Mem.PARTS]
        total = sum(w) or 1
        w = [x / total for x in w]
        top = max(c[0] for c in cands)
        now = self._clock()
        best = []
        for raw, mid, mtype, updated, conf, uses in sorted(cands, key=lambda c: (-c[0], -c[1])):
            rel = raw / top if top > 0 else 1.0
            if len(best) >= limit and w[0] * rel + w[1] + w[2] + w[3] < best[-1][0]:
                break
            t = _parse_iso(updated)
            age = max(0.0, now - t) / 86400 if t is not None else 0.0
            sat = _Mem.SATURATE
            shares = ((rel, 1), (0.5 ** (age / _Mem.MEMORY_TYPES.get(mtype, (90,))[0]), 1),
                      (max(0, min(conf, sat)), sat), (min(uses, sat), sat))   # (part, out of)
            parts = {k: round(x * n / d, 6) for k, x, (n, d) in zip(_Mem.PARTS, w, shares)}
            best.append((round(sum(parts.values()), 6), mid, parts))
            best.sort(key=lambda b: (-b[0], -b[1]))
            del best[limit:]
        return best

    def _mem_candidates(self, words, where, params):
        """Memories matching the query words -> [(raw relevance, id, type, updated, conf, uses)].
        FTS5: BM25 (title, tags weigh more) over the words in at most COMMON memories, at most
        COMMON candidates, newest first: bounded at any size. Without: shared words, title x2."""
        cols = "m.id, m.type, m.updated, m.confidence, m.recall_count"
        terms = [w for w in words if w not in _Mem.STOP] or words
        if not self._read("SELECT 1 FROM sqlite_master WHERE name = 'memories_fts'"):
            text = ("(m.title || ' ' || m.content || ' ' || m.why || ' ' || m.how_to_apply || ' '"
                    " || m.tags)")
            rows = self._read(f"SELECT {cols}, m.title, {text} FROM memories m WHERE {where}"
                              f" AND ({' OR '.join([text + ' LIKE ?'] * len(terms))})",
                              [*params, *(f"%{t}%" for t in terms)])
            out = []
            for *head, title, body in rows:
                in_title = set(_Mem.words(title))
                body = set(_Mem.words(body))
                raw = sum(2.0 if t in in_title else 1.0 for t in terms if t in body)
                if raw:
                    out.append((raw, *head))
            return out
        (n,), = self._read("SELECT coalesce(max(id), 0) FROM memories")
        rare = terms if n <= _Mem.COMMON else [t for t in terms if self._read(
            "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)",
            (f'"{t}"', _Mem.COMMON + 1))[0][0] <= _Mem.COMMON]
        sql = (f"SELECT -bm25(memories_fts, 3.0, 1.0, 1.0, 1.0, 2.0), {cols} FROM memories_fts"
               " JOIN memories m ON m.id = memories_fts.rowid"
               f" WHERE memories_fts MATCH ? AND {where}"
               f" ORDER BY memories_fts.rowid DESC LIMIT {_Mem.COMMON}")
        queries = [" OR ".join(f'"{t}"' for t in rare)] if rare else []
        queries += [" AND ".join(f'"{t}"' for t in terms), " OR ".join(f'"{t}"' for t in terms)]
        for q in queries:
            rows = self._read(sql, [q, *params])
            if rows:
                return rows
        return []

    @operation(
        Param("query", str, "what the task is about: words, names of files, tools, topics",
              required=True, positional=True),
        _Mem.TYPE,
        Param("project", str, "a project path or fingerprint: its memories plus global ones; '' "
              "global only; '*' every project (default: the working directory's project)"),
        Param("limit", int, "at most this many", default=5, minimum=1, maximum=100),
        Param("include_superseded", bool, "also return memories a newer one replaced",
              default=False),
        mcp="memory_recall", title="Recall memories", output=_Mem.MEMORY_HIT, list_key="memories",
        render=_Mem.render_memories)
    def recall(self, query, type=None, project=None, limit=5, include_superseded=False):
        """Find the memories most relevant to a query, ranked and explained; each counts as used.

        score = 0.6 x relevance (full-text BM25, best match = 1) + 0.2 x recency (halves every
        30-180 days by type) + 0.15 x confidence + 0.05 x usage (both saturate at 10); the weights
        are settings memory_weight_*. Every hit carries its id, score and the four weighted parts,
        which sum to the score. Archived and superseded memories are left out."""
        _check_text(query, "query", 4000, empty_ok=False)
        words = list(dict.fromkeys(_Mem.words(query)))
        if not words:
            raise ValidationError("query must contain a word")
        where, params = ["m.archived = 0"], []
        if not include_superseded:
            where.append("m.superseded_by IS NULL")
        if type is not None:
            where.append("m.type = ?")
            params.append(type)
        if project != "*":
            where.append("m.project IN (?, '')")
            params.append(_resolve_project(project, self.cwd))
        cands = self._mem_candidates(words, " AND ".join(where), params)
        hits = self._mem_scored(cands, limit) if cands else []
        if not hits:
            return []
        ids = [h[1] for h in hits]
        marks = ",".join("?" * len(ids))
        try:
            with self._write() as conn:
                conn.execute(f"UPDATE memories SET recall_count = recall_count + 1,"
                             f" last_recalled = ? WHERE id IN ({marks})", (self._now(), *ids))
        except StoreError:
            if not self._db.read_only:
                raise                     # a read-only store answers without counting the use
        rows = self._read(f"SELECT {_Mem.COLS} FROM memories WHERE id IN ({marks})", ids)
        recs = {r["id"]: r for r in map(_Mem.record, rows)}
        return [dict(recs[mid], score=score, parts=parts)
                for score, mid, parts in hits if mid in recs]

    @operation(
        _Mem.ID, mcp="memory_forget", title="Forget a memory", destructive=True, idempotent=True,
        output=_Mem.MEMORY, render=lambda r: f"Forgot #{r['id']} [{r['type']}] {r['title']}")
    def forget_memory(self, id):
        """Delete a memory for good (for one that is wrong); returns the deleted record.

        Importing or storing it again leaves it out until `unforget-memory`. Stale memories need
        no forgetting: they fade and are archived."""
        with self._write() as conn:
            rec = self._mem_get(conn, id)
            conn.execute("DELETE FROM memories WHERE id = ?", (id,))
            conn.executemany("INSERT OR REPLACE INTO forgotten (key, ts) VALUES (?, ?)", [
                (k, self._now()) for k in _Mem.tombstones(
                    rec["type"], rec["project"], rec["title"], _Mem.md(rec["metadata"]).get("name"),
                    self._db.key())[:2]])
            conn.execute("DELETE FROM events WHERE substr(data, 1, ?) IN (?, ?)",
                         (len(str(id)) + 11, f'{{"memory":{id},', f'{{"memory":{id}}}'))
            self._event(conn, "forget_memory", project=rec["project"], delta=-rec["confidence"],
                        data=_dumps({"memory": id, "type": rec["type"]}))    # no copy of its text
        self._scrub()
        return rec

    @operation(
        Param("type", str, "the forgotten memory's type", required=True, positional=True,
              choices=tuple(_Mem.MEMORY_TYPES)),
        Param("title", str, "its title", required=True, positional=True),
        Param("project", str, "'' global, a fingerprint or a project path (default: this one)"),
        mcp="memory_unforget", title="Unforget a memory", idempotent=True,
        output=_Out.obj({"type": _Out.STR, "title": _Out.STR, "project": _Out.STR},
                        ("type", "title", "project")),
        render=lambda r: f"[{r['type']}] {r['title']} may be stored again")
    def unforget_memory(self, type, title, project=None):
        """Lift a forgotten memory's tombstone, so that `remember` may store it again."""
        proj = _resolve_project(project, self.cwd)
        with self._write() as conn:
            keys = _Mem.tombstones(type, proj, title, "", self._db.key())
            if not conn.execute("DELETE FROM forgotten WHERE key IN (?, ?, ?, ?)",
                                keys).rowcount:
                raise NotFoundError(f"no forgotten {type} memory titled {title!r} here")
            self._event(conn, "unforget", "", proj)
        return {"type": type, "title": title, "project": proj}

    @operation(
        _Mem.TYPE, _Mem.SCOPE,
        Param("archived", bool, "list archived memories instead of current ones", default=False),
        Param("limit", int, "at most this many", minimum=1, maximum=MAX_LIMIT),
        mcp="memory_list", title="List memories", read_only=True, idempotent=True,
        output=_Mem.MEMORY, list_key="memories", render=_Mem.render_memories)
    def memories(self, type=None, project=None, archived=False, limit=None):
        """List memories, most recently stored or reinforced first (superseded ones are marked)."""
        where, params = ["archived = ?"], [1 if archived else 0]
        if type is not None:
            where.append("type = ?")
            params.append(type)
        if project is not None:
            where.append("project = ?")
            params.append(_resolve_project(project, self.cwd))
        params.append(-1 if limit is None else limit)                    # SQLite: -1, no limit
        sql = (f"SELECT {_Mem.COLS} FROM memories WHERE {' AND '.join(where)}"
               " ORDER BY updated DESC, id DESC LIMIT ?")
        return [_Mem.record(r) for r in self._read(sql, params)]

    @operation(_Mem.ID, mcp="memory_get", title="Get one memory", read_only=True, idempotent=True,
               output=_Mem.MEMORY, render=_Mem.render_memory)
    def get_memory(self, id):
        """Return one memory by id, archived or superseded ones included."""
        try:
            return self._mem_get(self._db.conn, id)
        except sqlite3.Error as e:
            raise _db_error(self.path, e) from None

    @operation(_Mem.ID, mcp="memory_restore", title="Restore an archived memory", idempotent=True,
               output=_Mem.MEMORY, render=_Mem.render_memory)
    def restore_memory(self, id):
        """Bring an archived memory back (confidence at least 1, a fresh aging period)."""
        with self._write() as conn:
            rec = self._mem_get(conn, id)
            if rec["archived"]:
                conn.execute("UPDATE memories SET archived = 0, archived_at = '', decayed_at = ?,"
                             " confidence = max(confidence, 1) WHERE id = ?", (self._now(), id))
                self._event(conn, "restore_memory", project=rec["project"],
                            data=_dumps({"memory": id, "type": rec["type"], "title": rec["title"]}))
            return self._mem_get(conn, id)

    @operation(
        title="Age stale memories", destructive=True,
        output=_Out.obj({"decayed": _Out.INT, "archived": _Out.INT, "active": _Out.INT},
                        ("decayed", "archived", "active")),
        render=lambda r: (f"Decayed: {r['decayed']}\nArchived: {r['archived']}\n"
                          f"Active memories: {r['active']}"))
    def memory_decay(self):
        """Memories not recalled nor reinforced for their type's period lose 1; at 0, archived.

        Periods in days: user 120, feedback 90, project 60, reference 90, episode 45. A memory is
        charged at most once per period however often this runs. Archived memories are hidden but
        restorable (restore_memory); gc deletes them memory_gc_days after archiving."""
        now, t = self._now(), self._clock()
        case = "CASE type " + " ".join(f"WHEN '{k}' THEN ?" for k in _Mem.MEMORY_TYPES) + " END"
        cutoffs = [_iso(t - days * 86400) for _, days in _Mem.MEMORY_TYPES.values()]
        with self._write() as conn:
            decayed = conn.execute(
                f"UPDATE memories SET confidence = confidence - 1, decayed_at = ?"
                f" WHERE archived = 0 AND max(updated, last_recalled, decayed_at) < {case}",
                (now, *cutoffs)).rowcount
            archived = conn.execute("UPDATE memories SET archived = 1, archived_at = ?,"
                                    " confidence = 0 WHERE archived = 0 AND confidence <= 0",
                                    (now,)).rowcount
            if decayed:
                self._event(conn, "memory_decay", delta=-decayed,
                            data=_dumps({"archived": archived}))
            (active,), = conn.execute("SELECT count(*) FROM memories WHERE archived = 0").fetchall()
            return {"decayed": decayed, "archived": archived, "active": active}

    def _gc_memories(self, conn):
        """gc, in the caller's write: delete memories archived over memory_gc_days ago -> count."""
        cutoff = _iso(self._clock() - self._settings()["memory_gc_days"] * 86400)
        return conn.execute("DELETE FROM memories WHERE archived = 1 AND archived_at < ?",
                            (cutoff,)).rowcount

    def _memory_briefing(self, project_dir=None, max_chars=2000, limit=5):
        """Lines '[type] title: content — how to apply' for a session in `project_dir`, at most
        max_chars with newlines: recall of its folder's name and last 3 commit subjects (counted
        as used), then its project's memories; anchored file changed: "may be stale", gone: out."""
        root = project_root(project_dir)
        proj = _sha256_hex(root)[:12]
        query = " ".join([os.path.basename(root)] + _Mem.git_subjects(root))
        hits = self.recall(query, project=proj, limit=limit) if _Mem.words(query) else []
        if len(hits) < limit:
            seen = {h["id"] for h in hits}
            rows = self._read(f"SELECT {_Mem.COLS} FROM memories WHERE project = ?"
                              " AND archived = 0 AND superseded_by IS NULL ORDER BY confidence DESC"
                              ", updated DESC, id DESC LIMIT ?", (proj, limit + len(seen)))
            hits += [r for r in map(_Mem.record, rows) if r["id"] not in seen][:limit - len(hits)]

        def clean(text):                   # a memory stored before redaction existed: redact now
            return " ".join(_Mem.redact_secrets(text)[0].split())
        lines = []
        for h, why in zip(hits, _Anchors.staleness(self._db.conn, root, hits)):
            if why and why.endswith(" is gone"):
                continue
            line = f"[{h['type']}] {clean(h['title'])}"
            fact = clean(h["content"])                                        # the knowledge itself
            if fact and fact.lower() != h["title"].strip().lower():
                line += ": " + (fact if len(fact) <= 160 else fact[:159].rstrip() + "\u2026")
            how = clean(h["how_to_apply"])
            line += f" \u2014 {how}" if how else ""
            line += f" (may be stale: {why})" if why else ""
            if len("\n".join([*lines, line])) <= max_chars:
                lines.append(line)
        return lines

    @operation(
        Param("path", str, "a Markdown memory file, or a directory of them (*.md)", required=True,
              positional=True),
        Param("project", str, "scope of files that name none: '' global (default), a fingerprint "
              "or a project path", default=""),
        mcp="memory_import", title="Import Markdown memories", idempotent=True, learns=True,
        output=_Out.obj(dict.fromkeys(_Mem.IMPORTED + ("links_skipped", "forgotten"), _Out.INT),
                        _Mem.IMPORTED + ("links_skipped",)),
        render=lambda r: ", ".join(f"{k} {r[k]}" for k in _Mem.IMPORTED + ("forgotten",) if k in r)
        + (f"; symlinks out of the folder skipped: {r['links_skipped']}"
           if r["links_skipped"] else ""))
    def import_memories(self, path, project=""):
        """Read Markdown memories in Claude Code's format (front matter: name, description, type).

        The body is the content, then `**Why:**` and `**How to apply:**` lines. A file updates the
        memory of its type and scope with its name (or title), restoring an archived one, so
        importing twice adds nothing; a forgotten one stays out (`forgotten`). Files without front
        matter (an index such as MEMORY.md) are skipped. Nothing is written if any is invalid."""
        _check_text(path, "path", 4096, empty_ok=False)
        default = _resolve_project(project, self.cwd)
        p = self._user_path(path)
        try:
            files, links = (_inside(p, [os.path.join(p, n) for n in sorted(os.listdir(p))
                                        if n.endswith(".md")]) if os.path.isdir(p) else ([p], 0))
            texts, total = [], 0
            for fp in files:
                data = _read_regular(fp, MAX_MEMORY_FILE)
                total += len(data)
                if total > MAX_MEMORY_DIR:
                    raise ValidationError(f"{path}: the Markdown files hold more than "
                                          f"{MAX_MEMORY_DIR // (1024 * 1024)} MiB;"
                                          " import fewer at once")
                texts.append((fp, data.decode("utf-8")))
        except FileNotFoundError:
            raise NotFoundError(f"no such file or directory: {path}") from None
        except (OSError, UnicodeDecodeError) as e:
            raise ValidationError(f"cannot read {path}: {e}") from None
        items, skipped = [], 0
        for fp, text in texts:
            m = _Mem.parse_memory_md(text, fp)
            if m is None:
                skipped += 1
                continue
            try:
                _check_text(m["name"], "name")
                meta = dict(m["data"])
                if m["extra"] or (m["name"] and m["name"] != _Mem.slug(m["type"], m["title"])):
                    meta["_md"] = dict({"name": m["name"]},
                                       **({"extra": m["extra"]} if m["extra"] else {}))
                f = self._mem_fields(m["type"], m["title"], m["content"], m["why"],
                                     m["how_to_apply"], m["tags"], m["source"], meta)
                proj = default if m["project"] is None else _resolve_project(m["project"])
                if m["confidence"] is not None:
                    _check_int(m["confidence"], "confidence", 1, 10**9)
            except ValidationError as e:
                raise ValidationError(f"{fp}: {e}") from None
            items.append((f, proj, m["name"], m["confidence"]))
        counts = {"files": len(texts), "added": 0, "updated": 0, "unchanged": 0, "skipped": skipped,
                  "links_skipped": links, "forgotten": 0}
        for i in range(0, len(items), 200):  # short transactions: hooks never wait long
            if i:
                time.sleep(_Core._YIELD_S)
            with self._write() as conn:
                for item in items[i:i + 200]:
                    counts[self._mem_import_one(conn, *item)] += 1
        if not counts["forgotten"]:
            del counts["forgotten"]
        return counts

    def _mem_import_one(self, conn, f, proj, name, confidence):
        mtype, title = f["type"], f["title"]
        if conn.execute("SELECT 1 FROM forgotten WHERE key IN (?, ?, ?, ?)",
                        _Mem.tombstones(mtype, proj, title, name, self._db.key())).fetchone():
            return "forgotten"
        keys = _Mem.keys(mtype, proj, title, f["content"], name)
        rows = conn.execute(
            f"SELECT {_Mem.COLS} FROM memories WHERE type = ? AND project = ?"
            " AND id IN (SELECT memory_id FROM memory_keys WHERE key IN (?, ?))"
            " ORDER BY superseded_by IS NOT NULL, archived, id",
            (mtype, proj, _Mem.key("n", mtype, proj, name),
             _Mem.key("t", mtype, proj, " ".join(_Mem.words(title))))).fetchall()
        recs = [_Mem.record(r) for r in rows]
        match = (next((r for r in recs if name and name == (_Mem.md(r["metadata"]).get("name")
                                                             or _Mem.slug(mtype, r["title"]))),
                      None)
                 or next((r for r in recs if _Mem.words(r["title"]) == _Mem.words(title)), None))
        if match is None:
            self._mem_insert(conn, f, proj, keys, confidence=confidence or 1)
            return "added"
        new = (title, f["content"], f["why"], f["how_to_apply"], f["tags"], f["source"],
               _loads_meta(f["metadata"]), confidence or match["confidence"], False)
        old = (match["title"], match["content"], match["why"], match["how_to_apply"],
               ",".join(match["tags"]), match["source"], match["metadata"], match["confidence"],
               match["archived"])
        if new == old:
            return "unchanged"
        conn.execute(
            "UPDATE memories SET title = ?, content = ?, why = ?, how_to_apply = ?, tags = ?,"
            " source = ?, metadata = ?, confidence = ?, updated = ?, archived = 0, archived_at = ''"
            " WHERE id = ?",
            (*new[:6], f["metadata"], new[7], self._now(), match["id"]))
        conn.execute("DELETE FROM memory_keys WHERE memory_id = ?", (match["id"],))
        conn.executemany("INSERT OR IGNORE INTO memory_keys (key, memory_id) VALUES (?, ?)",
                         [(k, match["id"]) for k in keys])
        self._event(conn, "import_memory", project=proj,
                    data=_dumps({"memory": match["id"], "title": title}))
        return "updated"

    @operation(
        Param("dir", str, "directory for the <name>.md files (created if missing)", required=True,
              positional=True),
        _Mem.TYPE, _Mem.SCOPE,
        mcp="memory_export", title="Export memories as Markdown", idempotent=True, destructive=True,
        output=_Out.obj({"dir": _Out.STR, "files": _Out.INT, "written": _Out.INT,
                         "unchanged": _Out.INT}, ("dir", "files", "written", "unchanged")),
        render=lambda r: (f"{r['files']} files in {r['dir']} ({r['written']} written, "
                          f"{r['unchanged']} unchanged)"))
    def export_memories(self, dir, type=None, project=None):
        """Write current memories (not archived, not superseded) as Markdown files, one each.

        import-memories reads them back without loss. Files whose bytes would not change are not
        rewritten; files of memories no longer stored are left alone."""
        import re
        _check_text(dir, "dir", 4096, empty_ok=False)
        items = []
        for r in self.memories(type=type, project=project):
            if "superseded_by" not in r:
                stored = _Mem.md(r["metadata"]).get("name")
                items.append([r, stored or _Mem.slug(r["type"], r["title"]), bool(stored)])
        scopes = Counter((r["type"], r["project"], name) for r, name, _ in items)
        for it in items:                     # two titles with one default name: tell them apart
            if not it[2] and scopes[(it[0]["type"], it[0]["project"], it[1])] > 1:
                it[1] += "-" + _Mem.digest(it[0])
        d = self._user_path(dir)
        used, written, same = set(), 0, 0
        for r, name, _ in sorted(items, key=lambda it: (it[1], it[0]["project"], it[0]["title"],
                                                        it[0]["content"], it[0]["id"])):
            safe = re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", name)
            stem = name if safe else _Mem.slug(r["type"], r["title"])
            if stem.lower() in used:
                stem += "-" + _Mem.digest(r)
            if stem.lower() in used:
                stem += f"-{r['id']}"
            used.add(stem.lower())
            prose = {k: r[k] for k in ("title", "content", "why", "how_to_apply", "metadata")}
            r.update(_Mem.redact_value(prose)[0])               # stored before redaction existed
            data = _shown(_Mem.memory_md(r, name)).encode("utf-8")
            path = os.path.join(d, stem + ".md")
            try:
                if not os.stat(path).st_mode & 0o077 and _read_regular(path, len(data)) == data:
                    same += 1
                    continue
            except (OSError, ValidationError):
                pass
            _atomic_write(path, data, private=True)
            self._wrote(path, memory=True)
            written += 1
        return {"dir": d, "files": len(items), "written": written, "unchanged": same}


# =============================================================================
# 18. Habits in sessions (what mining reads of each session: steps, n-grams, habits, fixes)
# =============================================================================
class _Corpus:
    """What mining reads of each session, once per pass: steps, n-grams, habits and fixes."""
    ROLE_TITLES = {"test": "Tests here", "lint": "Lint here", "format": "Format here",
                   "typecheck": "Type-check here", "build": "Build here"}
    SEQ_MAX = 5                        # longest workflow mined (steps)
    SESSIONS_COMPARED = 100            # a project's most recent sessions compared when mining
    CHANCE_P = 1e-3                    # a workflow counts when less likely than this by chance
    HABIT_WINDOW = 20                  # a project's recent sessions: fixes, an item's use
    STAND_OUT = 2.5                    # held by this many times the sessions of the average item
    BACKFILL = 4                       # a workflow found backfills at most this many recent ones
    STEPS_KEPT = 400                   # steps of a mined session kept for the briefing's use counts
    # an interpreter alone ('python x.py') runs any script: it names no command of the project
    BARE = frozenset("python python3 node bash sh zsh ruby perl".split())

    def __init__(self):
        self.grams, self.stats, self.items, self.fixes, self.calls = {}, {}, {}, {}, {}
        self.held, self.fresh, self.bit, self.free = {}, set(), {}, []   # (bits: `add`)

    def renew(self, load):
        """A new pass (import-history's share a corpus): each session read again, others go."""
        for s in set(self.calls) - self.fresh:
            self.add(s, ())                                     # its n-grams out of `held`
            for d in (self.grams, self.stats, self.items, self.fixes, self.calls):
                del d[s]
            self.free.append(self.bit.pop(s))                   # its bit for another session
        self.load, self.fresh = load, set()
        return self

    def add(self, session, rows=None):
        """Read a session once a pass (`rows`: read again, with its new calls) -> its collapsed
        steps, derived again only when its calls differ from what they were derived from."""
        if rows is not None or session not in self.fresh:
            self.fresh.add(session)
            rows = self.load(session) if rows is None else rows
            calls = tuple(rows)
            if calls == self.calls.get(session):
                return self.stats[session][0]
            bit = self.bit.get(session) or self.bit.setdefault(   # held: n-gram -> [run, any]
                session, self.free.pop() if self.free else 1 << len(self.bit))  # sessions' bits
            for g in set().union(*self.grams.get(session, ())):     # what it held before
                self.held[g] = [have & ~bit for have in self.held[g]]
                if not self.held[g][1]:
                    del self.held[g]
            steps = _Corpus._steps_of(calls)
            col = tuple(k for k, _ in groupby(st for st, _ in steps))      # repeats collapsed
            freq, n = Counter(col), len(col)
            rest = {t: 1.0 / max(1, n - c) for t, c in freq.items()}   # 1 / steps unlike t
            runs, gapped, _ = self.grams[session] = _Corpus._ngrams(col)
            self.calls[session], self.stats[session] = calls, (col, n, freq, rest, {})
            shell = {st for c in map(_Call.read, (d for _, d in calls))
                     if c.tool in _Call.SHELLS for st in c.steps()}
            self.items[session] = ({_Corpus._command_pattern(st, st in shell) for st in col
                                    if st != _Call.EDIT_STEP and st not in _Corpus.BARE}
                                   | {_Pattern.command(st.partition("(")[0], shell=False)
                                      for st in col if "(" in st and st not in shell}  # any skill
                                   | _Corpus._combos(calls))
            self.fixes[session] = _Corpus._fixes_in(steps)
            for i, grams in ((1, gapped), (0, runs), (1, runs)):
                for g in grams:
                    self.held.setdefault(g, [0, 0])[i] |= bit
        return self.stats[session][0]

    @staticmethod
    def command_role(shape):
        """'mix test' -> 'test', else None: the last word decides ('make docs' is no build), or
        the tool before a plain verb ('ruff check' is lint)."""
        words = shape.split()
        if len(words) > 1 and words[-1] in ("check", "run", "exec", "ci"):
            words = words[:-1]
        for w in words[-1:]:
            for role, names in _Call.COMMAND_ROLES:
                if w in names or (role == "test" and w.startswith(("test:", "test-", "test."))) \
                        or (role in ("lint", "format", "build") and w.startswith(role + ":")):
                    return role
        return None

    @staticmethod
    def _steps_of(rows):
        """A session's [(kind, data)] -> [(step, ok)]; a failed call failed at its last step."""
        out = []
        for kind, data in rows:
            steps = _Call.read(data).steps()
            out += [(st, True) for st in steps[:-1]]
            if steps:
                out.append((steps[-1], kind == "tool"))
        return out

    @staticmethod
    def _periodic(g):
        """More than one cycle of a shorter loop (a->b->a->b; a->b->a says it)."""
        return any(all(g[i] == g[i % p] for i in range(len(g))) and len(g) > p + 1
                   for p in range(1, len(g)))

    @staticmethod
    def _ngrams(col):
        """The 2-5 step runs of `col` -> (contiguous ones, ones with one extra step inside, the
        workflow candidates of both: from a command to a command, no loop restated)."""
        runs, gapped = set(), set()
        for n in range(2, _Corpus.SEQ_MAX + 1):
            for i in range(len(col) - n + 1):
                runs.add(col[i:i + n])
                w = col[i:i + n + 1]
                if n > 2 and len(w) > n:                     # a -> (x) -> b alone says little
                    for j in range(1, n):
                        g = w[:j] + w[j + 1:]
                        if g[j - 1] != g[j]:
                            gapped.add(g)
        return runs, gapped, {g for g in runs | gapped if g[0] != _Call.EDIT_STEP != g[-1]
                              and not _Corpus._periodic(g) and len(set(g)) > 1}

    @staticmethod
    def _chance_sessions(g, stats, gapped):
        """Sessions expected to hold `g` by chance (each one's collapsed steps shuffled), summed in
        order. `gapped`: as a run or with one step inside (n placements, not 1). Each session's
        share is kept with its stats (`known`: it does not change)."""
        n, need, key = len(g), set(g), "\t".join(g) + "+" * gapped   # (a string keeps its hash)
        shares = [known.get(key) for _, _, _, known in stats]
        for i in [i for i, e in enumerate(shares) if e is None]:
            length, freq, rest, known = stats[i]
            e = 0.0
            if length >= n and need <= freq.keys():
                e = (length - n + 1) * freq[g[0]] / length * (n if gapped else 1)
                for prev, t in zip(g, g[1:]):
                    e *= freq[t] * rest[prev]
            shares[i] = known[key] = min(e, 1.0)
        return functools.reduce(float.__add__, shares, 0.0)

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def _chance_limit(k):
        """The largest chance expectation under which k holders still count (bisection): P(at
        least k sessions hold it by chance), Poisson with that expectation, under CHANCE_P."""
        import math
        lo, hi = 0.0, float(k)
        for _ in range(30):
            mid = (lo + hi) / 2
            term = total = math.exp(-mid)
            for i in range(1, k):
                term *= mid / i
                total += term
            lo, hi = (mid, hi) if 1.0 - total < _Corpus.CHANCE_P else (lo, mid)
        return lo

    @staticmethod
    def _fixes_in(steps):
        """One session's fixes -> ({(A, B)}, {A}): A failed, then passed within 10 steps, B the
        step before that run; the second set: every A that failed then passed (B or not)."""
        pairs, passed = set(), set()
        for i, (a, ok) in enumerate(steps):
            if ok or a == _Call.EDIT_STEP:
                continue
            for j in range(i + 1, min(i + 11, len(steps))):
                if steps[j][0] == a:
                    if steps[j][1]:
                        passed.add(a)
                        if j > i + 1:
                            pairs.add((a, steps[j - 1][0]))
                    break
        return pairs, passed

    @staticmethod
    def _combos(calls):
        """combo:a+b - two to four different command shapes chained in one shell call."""
        found = set()
        for _, data in calls:
            shapes = sorted(set(_Call.read(data).steps()) - {_Call.EDIT_STEP})
            if 2 <= len(shapes) <= 4:
                found.add(_Pattern.combo(shapes))
        return found

    @staticmethod
    def _command_pattern(step, shell):
        """A habit step -> 'pref:test=mix test' (one per role), else 'pref:command:just verify' or
        'pref:tool:Task(Explore)' (any number)."""
        return _Pattern.command(step, _Corpus.command_role(step) if shell else None, shell)

    @staticmethod
    def recurring(session, window, corpus):
        """The commands, tools and combos of `session` standing out in the project's sessions
        compared (`window`, this one first) -> {pattern: holders}: held by STAND_OUT times the
        average item's sessions (2+), or by 3/4 of them (a ritual). Sessions drawn evenly from 40
        commands hold each as often: none stands out, whatever how recent sessions went."""
        held, total = {}, Counter()
        for s in window:                 # (a tool's name beside its kinds is no other item)
            named = {p.partition("(")[0] for p in corpus.items[s] if "(" in p}
            total.update(corpus.items[s] - named)
            for p in corpus.items[session] & corpus.items[s]:
                held.setdefault(p, []).append(s)
        mean = sum(total.values()) / max(1, len(total))
        need = max(2, min(_Corpus.STAND_OUT * mean, 0.75 * len(window)))
        return {p: have for p, have in held.items() if len(have) >= need}

    @staticmethod
    def fix_habits(session, window, corpus):
        """Fixes of `session` -> {'fix:A by B': holders}, judged by where B stands: before A's
        passing re-run after A failed in more sessions than B runs anywhere else (a fix made every
        time), or there more often than chance explains (B as likely there as among the steps)."""
        out = {}
        for a, b in corpus.fixes[session][0]:
            have, expected, elsewhere = [], 0.0, 0
            for s in window:
                got, passed = corpus.fixes[s]
                _, n, freq, _, _ = corpus.stats[s]
                fixed = (a, b) in got
                elsewhere += freq.get(b, 0) - fixed
                if a in passed:
                    expected += min(1.0, freq.get(b, 0) / max(1, n))
                    have += [s] * fixed
            if len(have) >= 2 and (elsewhere < len(have)
                                   or expected <= _Corpus._chance_limit(len(have))):
                out[_Pattern.fixed(a, b)] = have
        return out

    @staticmethod
    def workflows(session, others, corpus, known):
        """Workflows of `session` held by 2+ of `others` beyond chance -> {pattern: holders}, each
        family's best. Candidates: 2-5 steps from a command to a command (edits may sit between), no
        loop restated. Held as a run or with one extra step inside (the looser reading, n times
        likelier by chance, tried first); untried: one restating a longer one as widely held."""
        corpus.add(session)
        own = corpus.grams[session][2]
        if not own:
            return {}
        ids = [session] + [s for s in others if s != session]
        for s in [s for s in ids if s not in corpus.fresh]:
            corpus.add(s)
        stats, within = [corpus.stats[s][1:] for s in ids], sum(map(corpus.bit.get, set(ids)))
        # sessions holding each candidate: as a run, as one or with one step inside
        n_loose = {g: (corpus.held[g][1] & within).bit_count() for g in own}
        n_run = {g: (corpus.held[g][0] & within).bit_count() for g, k in n_loose.items() if k > 1}
        # the loose reading only when it adds holders (else the run's smaller chance decides)
        tried, best = {g: [(gap, k) for gap, k in ((True, n_loose[g]), (False, k_run))
                           if k >= 2 and (k > k_run or not gap)] for g, k_run in n_run.items()}, []

        @functools.lru_cache(maxsize=None)
        def reading(g):           # the reading `g` passes by (True: loose); None: none, or restated
            if any(len(h) > len(g) and n_run[h] >= n_loose[g] and _Corpus.subsequence(g, h)
                   and reading(h) is not None for h in n_run):
                return None
            return next((gap for gap, k in tried[g] if _Corpus._chance_sessions(g, stats, gap)
                         <= _Corpus._chance_limit(k)), None)
        # each family's best: most holders, longest, most learned (equal variants do not take
        # turns), most held as a run; a candidate a better one's family holds is not tried
        for _, tie in groupby(sorted((-k, -len(g), g, gap) for g, r in tried.items()
                                     for gap, k in r), key=lambda t: t[:2]):
            tie = [t for t in tie if not any(_Corpus._same_family(t[2], h) for h in best)]
            for _, _, g, gap in sorted(tie, key=lambda t: (-known(t[2]), -n_run[t[2]], t[2])):
                if not any(_Corpus._same_family(g, h) for h in best) and reading(g) == gap:
                    best.append(g)
        return {_Pattern.seq(g): [s for s in ids if corpus.bit[s] & mask]
                for g in best for mask in [corpus.held[g][reading(g)]]}

    @staticmethod
    @functools.lru_cache(maxsize=1 << 16)
    def _same_family(g, h):
        """One ritual told twice: in order, they share all steps of the shorter but one (2+)."""
        if len(g) > len(h):
            g, h = h, g
        prev = [0] * (len(h) + 1)                 # longest common subsequence, row by row
        for x in g:
            cur = [0]
            for j, y in enumerate(h):
                cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
            prev = cur
        return prev[-1] >= max(2, len(g) - 1)

    @staticmethod
    def subsequence(small, big):
        """Whether the steps of `small` occur in `big` in the same order."""
        steps = iter(big)
        return all(step in steps for step in small)


# =============================================================================
# 19. Rules (one selection and wording for every channel, rules files, lint, export_rules)
# =============================================================================
class _Presenter:
    """One selection and wording of learned items for every channel (briefing, MCP, rules files)."""
    UNUSED_RUN = 5          # an item is said through at least this many sessions without it,
    UNUSED_P = 0.05         # and longer while its own rate of use makes the run this likely;
    HABIT_RUN = 3           # a habit with no role (a tool, a skill, `br sync`): through 3

    @staticmethod
    def rule_text(r):
        """One learned pattern -> its sentence: mined shapes shown as code, observed words as is."""
        p = r["pattern"]
        mined = _Core._mined_source(r.get("source"))
        code = (lambda s: f"`{s}`") if mined else (lambda s: s)
        head, body = _Pattern.parts(p)
        if head == "pref":
            kind, used = _Pattern.named(p)
            if kind in ("command", "tool") and mined:
                names = r.get("kinds") or [used]
                names += [x for x in (_Pattern.named(x)[1] for x in r.get("also", ()))
                          if x not in names]
                what = {"command": ("Project command", "Common command"),   # universal: any
                        "tool": ("Often used here", "Often used")}[kind][
                    r.get("level") == "universal"]
                return what + ("s: " if names[1:] and kind == "command" else ": ") + ", ".join(
                    map(code, names))
            key, value = _Pattern.pref(p)
            if value is not None and key in _Corpus.ROLE_TITLES:
                return f"{_Corpus.ROLE_TITLES[key]}: {code(value)}"
            return f"Preference: {key} = {value}" if value is not None else f"Preference: {body}"
        if head == "seq":
            steps = _Presenter._line_steps(r)
            shown = ["edit the code" if s == _Call.EDIT_STEP else code(s) for s in steps]
            label = next((label for last, label in (("git commit", "Before committing"),
                                                    ("git push", "Before pushing"))
                          if last in steps[1:]), "Usual workflow")   # (it may also start one)
            return f"{label}: " + " \u2192 ".join(shown)
        if head == "fix":
            failed, by = _Pattern.fix(p)
            if by == _Call.EDIT_STEP or by.startswith(_Call.EDIT_STEP + "("):
                return f"When {code(failed)} fails: fix the code, then rerun it"
            if by:
                return f"When {code(failed)} fails: run {code(by)}, then rerun it"
            return f"Recurring fix: {body}"
        if head == "combo":
            return "Used together: " + " + ".join(code(s.strip()) for s in _Pattern.written(p))
        return f"Habit: {p}"

    @staticmethod
    def briefing_line(r):
        """The one wording of a learned item on every channel (briefing, MCP, rules files)."""
        scope = ("every project" if r["level"] == "universal" else "this project" if r["project"]
                 else "all projects")
        stale = f"; may be stale: {r['stale']}" if r.get("stale") else ""
        n, use = r["confidence"], r.get("use")
        evidence = f"{_Core._sessions(n)} sessions" + (
            f", used in {use[0]} of the last {use[1]}" if use else "")
        if not _Core._mined_source(r.get("source")):   # a note: counted as observed, said where
            src = r.get("source") or ""
            evidence = f"observed {n}\u00d7, " + ("imported" if src.startswith("shared:")
                                                else f"noted by {src}" if src else "noted")
        return f"- {_Presenter.rule_text(r)} ({r['level']}, {evidence}, {scope}{stale})"

    @staticmethod
    def generic_habit(pattern):
        """Habits every project has (Read -> Edit, head + ls), which an older store may hold."""
        return _Pattern.parts(pattern)[0] in ("seq", "combo") and all(
            s in _Call.LOOK_TOOLS or s in _Call.EDIT_TOOLS
            or s.split(" ", 1)[0] in _Call.GENERIC_PROGRAMS
            or s == _Call.EDIT_STEP for s in _Pattern.written(pattern))

    @staticmethod
    def applies(steps, root):
        """Whether the files of `root` show the toolchain of every program among `steps` (a tool,
        skill or subagent step never: no file shows that a new project wants another's)."""
        progs = {st.split(" ", 1)[0] for st in steps}
        have = {prog for f, progs_ in _Call.TOOLCHAIN_FILES.items()
                if root and os.path.exists(os.path.join(root, f)) for prog in progs_.split()}
        return progs <= have

    @staticmethod
    def arrange(items, why, recent=()):
        """Items -> lines, most useful first (`select`): a routine claims its steps first (its
        family's weaker members and any later item naming one of them are left out), and a
        role-less command the sessions holding it mostly run after it joins its line ('also');
        then each item in order of rank, use and count."""
        def use(r):
            return r["use"][0] / r["use"][1] if r.get("use") else 0.5

        def rank(r):     # a role command (test first) or a routine holding one, a routine, the rest
            p, roles = r["pattern"], [k for k, _ in _Call.COMMAND_ROLES]
            if not _Core._mined_source(r.get("source")):
                return 2                   # a note (observed, imported rules): by its count
            role = [_Corpus.command_role(st) for st in _Pattern.steps(p)]
            if any(role) and (p.startswith("seq:") or p.startswith("pref:")
                              and _Pattern.pref(p)[0] in roles):
                return min(roles.index(k) for k in role if k) / len(roles)
            return 1 if p.startswith(("seq:", "fix:")) else 2

        def order(r):
            return (not _Core._mined_source(r.get("source")), rank(r), -use(r), -r["confidence"],
                    -len(r["pattern"]), r["pattern"])

        def held(steps):
            return sum(_Corpus.subsequence(steps, x) for x in recent)
        items = sorted(items, key=order)
        named, out, by_prog = set(), [], {}
        strong = {st: r["confidence"] for r in items if rank(r) < 1       # a role command's
                  and not r["pattern"].startswith("seq:") for st in _Pattern.steps(
                      r["pattern"])}                              # own line beats a weaker routine
        for routines in (True, False):     # routines: a family's best first (most sessions)
            for r in (sorted(items, key=lambda r: (-r["confidence"], -len(r["pattern"])))
                      if routines else items):
                p = r["pattern"]
                steps = _Pattern.steps(p) if _Core._mined_source(r.get("source")) else []
                if p.startswith("seq:") != routines or p in why:
                    continue
                if set(steps) & named:
                    why[p] = "superseded by a family line"
                    continue
                if routines and any(strong.get(st, 0) > r["confidence"] for st in steps):
                    why[p] = "superseded by a stronger command"
                    continue
                named |= set(steps)
                for x in [x for x in out if x["pattern"].startswith("seq:")] * (
                        len(steps) == 1 and rank(r) >= 1):      # where its sessions run it
                    have = _Presenter._line_steps(x)
                    k, i = max((held(have[:i] + steps + have[i:]), -i)    # within or after it
                               for i in range(1, len(have) + 1))  # (ties: the earliest place)
                    if 2 * k > held(have) > 0:
                        x.update(line=have[:-i] + steps + have[-i:], also=x.get("also", []) + [p])
                        break
                else:
                    kind, name = _Pattern.named(p) if p.startswith("pref:") else ("", "")
                    prog = (name.split(" ", 1)[0] if kind == "command" and " " in name
                            else "tool:" + name.partition("(")[0] if kind == "tool" else None)
                    if prog and prog in by_prog:        # bd ready, bd show: one line (a tool's too)
                        by_prog[prog]["also"] = by_prog[prog].get("also", []) + [p]
                        continue
                    r = dict(r)
                    by_prog.setdefault(prog or p, r)
                    out.append(r)
        return sorted(out, key=order)

    @staticmethod
    def _line_steps(r):
        """The steps one line names in order: a routine's with those that joined it ('line')."""
        return list(r.get("line") or _Pattern.steps(r["pattern"]))


class _Lint:
    """lint: contradictions and duplicates between a project's rules files and what was learned."""

    TOOL_FAMILIES = (frozenset("npm pnpm yarn bun".split()),
                     frozenset("pip uv poetry pipenv pdm conda hatch".split()))
    NOT = frozenset("not never don't dont avoid instead rather over".split())
    USE = frozenset("use prefer always using run".split())
    OTHER = frozenset("docker podman buildah".split())     # their `build` is not the project's
    SHELL_FENCES = frozenset("sh bash shell console zsh fish terminal".split()) | {""}
    RUN_PREFIXES = ("uv run ", "poetry run ", "pipenv run ", "pdm run ", "hatch run ", "python -m ",
                    "python3 -m ", "npx ", "bunx ", "pnpm exec ", "bundle exec ")

    @staticmethod
    def _bare_command(shape):
        """'uv run pytest' -> 'pytest': the command without a runner in front."""
        return next((shape[len(p):] for p in _Lint.RUN_PREFIXES if shape.startswith(p)), shape)

    @staticmethod
    def _prose_mentions(line):
        """Commands (in `code`) and tool names (after use/prefer/always, or negated) of one prose
        line -> [(shape, negated)]: 'Use `pnpm`, not `npm`' -> [('pnpm', False), ('npm', True)]."""
        import re
        neg, comma, prev, out = False, False, "", []
        for tok in re.findall(r"`[^`]+`|[\w'\u2019-]+|[.;:!?()\u2013\u2014,]", line):
            w = tok.lower().replace("\u2019", "'")
            if tok[0] == "`":
                out += [(s, neg) for s in _Shell.command_shapes(tok[1:-1].lstrip("$ "))]
            elif w in ".;:!?()\u2013\u2014":
                neg = False
            elif w != ",":
                neg = neg and not (comma and w in _Lint.USE) or w in _Lint.NOT
                if any(w in f for f in _Lint.TOOL_FAMILIES) and (neg or prev in _Lint.USE):
                    out.append((w, neg))
            prev, comma = w, w == ","
        return out

    @staticmethod
    def _written_lines(root):
        """The lines of `root`'s rules files outside instinct's block and files -> [(file, line no,
        text, paragraph no, [(command shape, negated)])]: `code` in prose, lines of shell blocks."""
        import glob
        import re
        out, para = [], 0
        for pattern in _Export.RULES_FILES:
            for path in sorted(glob.glob(os.path.join(root, pattern))):
                try:
                    text = _read_regular(path, MAX_MEMORY_FILE).decode("utf-8", "replace")
                except (OSError, ValidationError):
                    continue
                found = _Export.block_markers(text)
                b, e = (min(found.get(m, [-1])) for m in (_Export.BLOCK_BEGIN, _Export.BLOCK_END))
                if 0 <= b < e:
                    text = text[:b] + "\n" * text.count("\n", b, e) + text[e:]
                if _Export.SIGNATURE in text:           # a whole file instinct wrote
                    continue
                fence, rel = None, os.path.relpath(path, root).replace(os.sep, "/")
                for n, line in enumerate(text.splitlines(), 1):
                    bare = line.strip()
                    m = re.match(r"(`{3,}|~{3,})\s*([\w-]*)", bare)
                    if m or not bare or fence is None and bare.startswith("#"):
                        para += 1
                        fence = (m.group(2).lower() if fence is None else None) if m else fence
                    elif fence is None:
                        out.append((rel, n, bare, para, _Lint._prose_mentions(bare)))
                    elif fence in _Lint.SHELL_FENCES and not bare.startswith("#"):
                        shapes = _Shell.command_shapes(re.sub(r"^[$%>]\s+", "", bare))
                        out.append((rel, n, bare, para, [(s, False) for s in shapes]))
        return out

    @staticmethod
    def _hit(r, lines):
        """The first written line contradicting or repeating learned record `r` -> (kind, line)."""
        head, body = _Pattern.parts(r["pattern"])
        key, value = _Pattern.pref(r["pattern"])
        tool = (body if value is None else value).split(" ", 1)[0]
        family = next((f for f in _Lint.TOOL_FAMILIES if tool in f), ())
        if head == "pref" and value is not None and key in _Corpus.ROLE_TITLES:    # a command
            said = [(_Lint._bare_command(s) == _Lint._bare_command(value), neg, ln) for ln in lines
                    for s, neg in ln[4]
                    if _Corpus.command_role(s) == key and s.split()[0] not in _Lint.OTHER]
        elif head == "pref" and family:                              # a package manager
            said = [(s.split()[0] == tool, neg, ln) for ln in lines for s, neg in ln[4]
                    if s.split()[0] in family]
        elif head == "pref":                                         # its words, all on one line
            words = set(_Mem.words(body)) - _Mem.STOP
            return next((("duplicate", ln) for ln in lines
                         if len(words) > 1 and words <= set(_Mem.words(ln[2]))), None)
        elif head in ("seq", "combo"):                               # its steps, in one paragraph
            steps = [_Lint._bare_command(x.strip()) for x in _Pattern.written(r["pattern"])]
            steps = [x for x in steps if x != _Call.EDIT_STEP]
            paras = {}
            for ln in lines:
                paras.setdefault(ln[3], []).append(ln)
            for group in paras.values() if len(steps) > 1 else ():
                said = [_Lint._bare_command(s) for ln in group for s, neg in ln[4] if not neg]
                words = {w for ln in group for w in _Mem.words(ln[2])}     # "... before committing"
                said += [f"git {v}" for v in ("commit", "push")
                         if any(w.startswith(v) for w in words)]
                if _Corpus.subsequence(steps, said) if head == "seq" else set(steps) <= set(said):
                    return "duplicate", group[0]
            return None
        else:
            return None
        return (next((("contradiction", ln) for same, neg, ln in said if neg and same), None)
                or next((("duplicate", ln) for same, neg, ln in said if same and not neg), None)
                or next((("contradiction", ln) for same, neg, ln in said if not neg), None))

    @staticmethod
    def lint(root, rows):
        """Learned records against project `root`'s rules files -> findings {kind: contradiction |
        duplicate, pattern, ...}; deterministic: command roles and shapes, tool families, words."""
        lines = _Lint._written_lines(root) if rows else []
        hits = [(r, _Lint._hit(r, lines)) for r in rows]
        return [{"kind": kind, "pattern": r["pattern"], "project": r["project"],
                 "learned": _Presenter.rule_text(r), "file": f, "line": n, "written": text[:200]}
                for r, hit in hits if hit for kind, (f, n, text, _, _) in [hit]]

    @staticmethod
    def duplicates(root, rows):
        """`rows` (records) without the rules the user already wrote in root's rules files."""
        dup = {(f["pattern"], f["project"]) for f in _Lint.lint(root, rows)
               if f["kind"] == "duplicate"}
        return [r for r in rows if (r["pattern"], r["project"]) not in dup]

    FINDING = _Out.obj({"kind": _Out.STR, "pattern": _Out.STR, "project": _Out.STR,
                        "learned": _Out.STR, "file": _Out.STR, "line": _Out.INT,
                        "written": _Out.STR},
                       ("kind", "pattern", "project", "learned", "file", "line", "written"))


class _Export:
    """Rules files an export writes (CLAUDE.md, AGENTS.md, Cursor and Windsurf rules, SKILL.md)."""

    BLOCK_BEGIN, BLOCK_END = "<!-- instinct:begin -->", "<!-- instinct:end -->"
    SKILL_NAME = "instinct-rules"
    ABOUT = "Habits learned by instinct from repeated work in this project"
    SKILL_DESCRIPTION = (
        "Habits and rules learned by instinct from repeated work in this project (usual workflows, "
        "preferences, recurring fixes, tools used together). Use it when starting a coding task "
        "here, or when choosing how to test, fix or structure a change.")

    @staticmethod
    def skill_name(folder):
        import re
        name = os.path.basename(os.path.normpath(folder))
        if not (re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) and len(name) <= 64):
            raise ValidationError(f"skill folder name {name!r} is not a valid skill name (1-64 "
                                  "chars a-z, 0-9 and single inner hyphens)")
        if "claude" in name or "anthropic" in name:
            raise ValidationError(f"skill name {name!r} must not contain 'claude' or 'anthropic'")
        return name

    @staticmethod
    def agent_text(fmt, rules, budget, name=SKILL_NAME):
        """Rules in an agent format within `budget` bytes -> (text, kept, dropped): the last (the
        weakest) go first, a line says how many; a block format: the block, no final newline."""
        if fmt == "markdown":
            body = _Out.render_markdown(rules)
            return _Export.BLOCK_BEGIN + "\n" + body + _Export.BLOCK_END, len(rules), 0
        front = {"cursor": f"description: {_Export.ABOUT}\nalwaysApply: true",
                 "windsurf": f"trigger: always_on\ndescription: {_Export.ABOUT}",
                 "skill": f"name: {name}\ndescription: {_Export.SKILL_DESCRIPTION}"}.get(fmt)
        if front:                      # a whole file, under its front matter
            head, tail, title = f"---\n{front}\n---\n", "", "# Learned habits (instinct)\n\n"
        else:                          # claude, agents: a block in the user's file
            head, tail, title = (_Export.BLOCK_BEGIN + "\n", _Export.BLOCK_END,
                                 "## Learned habits (instinct)\n\n")
        note = (f"Learned from repeated work; {_Export.SIGNATURE}, which replaces this "
                + ("block" if tail else "file") + " on the next export.\n\n")
        items = [" ".join(_Presenter.briefing_line(r).split()).replace("<!--", "&lt;!--") + "\n"
                 for r in rules] or ["No rules learned yet.\n"]
        limit = _Core._EXPORT_FORMATS[fmt][1]

        def omitted(n):
            return (f"\n{_Out.count(n, 'lower-confidence rule')} omitted to stay under "
                    f"{limit} bytes.\n") if n else ""
        keep = len(rules)
        total = len((head + title + note + tail).encode()) + sum(len(i.encode()) for i in items)
        while keep and total + len(omitted(len(rules) - keep).encode()) > budget:
            keep -= 1
            total -= len(items[keep].encode())
        kept = items[:keep] if rules else items
        return (head + title + note + "".join(kept) + omitted(len(rules) - keep) + tail, keep,
                len(rules) - keep)

    @staticmethod
    def purge_files(paths, text, dry_run):
        """Drop the lines holding `text` from what instinct wrote in `paths` (its block, or the
        whole file it owns; a memory file: the file) -> (files changed, files where the text stands
        outside instinct's part, which purge cannot reach)."""
        changed, missed = 0, []
        for kind, _, path in (p.partition(":") for p in paths):
            try:
                raw = _read_regular(path, 8 * 1024 * 1024)
            except (OSError, ValueError):
                continue
            data = raw.decode("utf-8", "surrogateescape")
            if text not in data:
                continue
            found = _Export.block_markers(data)      # where export finds it: not in a fence
            begin, end = (min(found.get(m, [-1])) for m in (_Export.BLOCK_BEGIN, _Export.BLOCK_END))
            if kind == "m":
                new = None                     # an exported memory: the file goes
            else:                              # no marker at all: a file instinct owns whole
                lo, hi = ((begin, end) if 0 <= begin < end else (0, 0) if found
                          or _Export.BLOCK_BEGIN in data else (0, len(data)))
                keep = [ln for ln in data[lo:hi].splitlines(True) if text not in ln]
                new = data[:lo] + "".join(keep) + data[hi:]
                if text in new:
                    missed.append(path)
                    if new == data:
                        continue
            changed += 1
            try:
                if not dry_run and new is None:
                    os.remove(path)
                elif not dry_run:
                    _atomic_write(path, new.encode("utf-8", "surrogateescape"))
            except (OSError, StoreError):
                missed.append(path)
        return changed, missed

    SIGNATURE = "written by `instinct export`"

    @staticmethod
    def block_markers(text):
        """{marker: [offsets]} of instinct's block markers that start a line outside fenced code
        blocks (``` or ~~~, CommonMark rules); one quoted in a fence or mid-line is not ours."""
        import re
        found, fence, pos = {}, None, 0
        for line in text.splitlines(keepends=True):
            bare = line.rstrip("\r\n")
            m = re.match(r" {0,3}(`{3,}|~{3,})", bare)
            if fence is None and m and not (m.group(1)[0] == "`" and "`" in bare[m.end():]):
                fence, opened = m.group(1), pos + len(line)
            elif fence is None:
                for marker in (_Export.BLOCK_BEGIN, _Export.BLOCK_END):
                    if line.startswith(marker):
                        found.setdefault(marker, []).append(pos)
            elif (m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)
                    and not bare[m.end():].strip()):
                fence = None
            pos += len(line)
        if fence is not None:                  # a fence never closed: what follows is read as text
            for marker, at in _Export.block_markers(text[opened:]).items():
                found.setdefault(marker, []).extend(opened + p for p in at)
        return found

    @staticmethod
    def written_by_us(fmt, path, text):
        """Whether a whole-file target is instinct's to replace: empty, its own path, an export."""
        own = os.sep + os.path.normpath(_Core._EXPORT_FORMATS[fmt][0])
        if not text.strip() or _Export.SIGNATURE in text or os.path.normpath(path).endswith(own):
            return True
        if fmt != "json":
            return False
        try:
            data = _loads(text)
        except ValueError:
            return False
        data = data.get("rules") if isinstance(data, dict) else data
        return isinstance(data, list) and all(isinstance(r, dict) and "pattern" in r for r in data)

    @staticmethod
    def safe_target(path, root, force):
        """Refuse symlinks, non-files and paths outside `root` (unless force) -> the path."""
        if os.path.islink(path):
            if not force:
                raise ValidationError(f"{path} is a symlink; "
                                      "refusing to write through it (use --force)")
            path = os.path.realpath(path)
        if os.path.exists(path) and not os.path.isfile(path):
            raise ValidationError(f"{path} exists and is not a regular file")
        if not force and os.path.commonpath([os.path.realpath(path), root]) != root:
            raise ValidationError(f"{path} is outside the project {root}; "
                                  "refusing to write (use --force)")
        return path

    RULES_FILES = ("CLAUDE.md", "AGENTS.md", ".cursor/rules/*.mdc", ".windsurf/rules/*.md")


class _Rules(_Memory):
    """The rules room: one selection of what was learned for every channel (the briefing,
    MCP resources, rules files) and exporting it."""

    @operation(
        Param("min_confidence", int, "only patterns with at least this confidence (default: 10 for "
              "json/markdown; the rules files hold what the session briefing shows)", minimum=0),
        Param("format", str, "json (records), markdown, or a file agents read: claude (CLAUDE.md "
              "block), agents (AGENTS.md), gemini (GEMINI.md), copilot (.github/copilot-"
              "instructions.md), cursor (.mdc rule), windsurf (rule), skill (SKILL.md)",
              default="json", choices=tuple(_Core._EXPORT_FORMATS)),
        Param("project", str, "rules of this project plus global and universal ones ('' = global; "
              "default: every project for json/markdown, the working directory's project "
              "otherwise)"),
        Param("category", str, "only this category"),
        Param("write", str, "write into this file (a directory: the format's usual file there; "
              "skill: the skill folder), replacing only the marked instinct block; unchanged "
              "files are not rewritten"),
        Param("force", bool, "allow --write through a symlink, outside the project, or over a "
              "file instinct did not write", default=False),
        cli="export", title="Export rules", idempotent=True, destructive=True, list_key="rules",
        output=_Out.obj({"rules": {"type": "array", "items": _Out.RECORD}, "count": _Out.INT,
                     "text": _Out.STR, "path": _Out.STR, "format": _Out.STR, "included": _Out.INT,
                     "dropped": _Out.INT, "changed": _Out.BOOL, "bytes": _Out.INT}),
        render=_Out.render_export)
    def export_rules(self, min_confidence=None, format="json", project=None, category=None,
                     write=None, force=False):
        """Export rules (high-confidence patterns) as JSON, Markdown or the rules files agents read.

        json returns the records, other formats their text (within the format's size limit, the
        weakest rules dropped and counted); `write` updates the file atomically. Universal rules
        go into every project's export."""
        return self._export(min_confidence, format, project, category, write, force)

    def _select(self, project, root, limit=_Capture.INJECT_MAX_ITEMS, why=None):
        """Mature items of `project` and global ones that apply here, most useful first (`arrange`:
        one routine one line, no step on two lines); `why` (a dict) gets each left out -> why."""
        why = {} if why is None else why
        recent = [tuple(x.split("\t")) for x, in self._read(     # by when first mined: a
            "SELECT steps FROM mined_sessions WHERE project = ? ORDER BY rowid DESC LIMIT ?",
            (project, _Corpus.HABIT_WINDOW))]     # resumed session's new calls keep its place
        out, roles = [], {}
        for r in self.suggest(project=project, limit=MAX_LIMIT):
            p = r["pattern"]
            if p in why or p in roles.values() or any(x["pattern"] == p for x in out):
                continue                          # a habit both here and global: once
            steps = _Pattern.steps(p) if _Core._mined_source(r.get("source")) else []
            if any(w.startswith("#") for st in steps for w in st.split()):
                why[p] = "an unnamed program"     # a hashed program tells nothing
                continue
            if steps:               # (a tool's name holds any of its kinds: Skill, Skill(adr))
                held = [_Corpus.subsequence(steps, x) if p.startswith("seq:") else set(steps) <=
                        set(x) | {st.partition("(")[0] for st in x} for x in recent]
                k, gap = sum(held), held.index(True) if any(held) else len(recent)
                r = dict(r, use=(k, len(recent)) if recent else None)
                if p.startswith("pref:tool:") and "(" not in p:     # named by its kinds used
                    kinds = Counter(st for x in recent for st in set(x)
                                    if st.startswith(steps[0] + "("))
                    r["kinds"] = sorted(kinds, key=lambda st: (-kinds[st], st))[:3]
                # standing knowledge (a test, lint, build... command, or a routine holding one)
                # stays said: it leaves after a run of sessions without it that its own rate of
                # use makes unlikely (5 at least; 3 for a habit with no role), or a whole window
                run = (_Presenter.UNUSED_RUN if any(map(_Corpus.command_role, steps))
                       else _Presenter.HABIT_RUN)
                if gap >= len(recent) >= _Corpus.HABIT_WINDOW or gap >= run \
                        and k and (1 - k / (len(recent) - gap)) ** gap < _Presenter.UNUSED_P:
                    why[p] = f"not used in the last {gap} sessions here"
                    continue
                # a habit of all projects is this one's where its sessions hold it as often as
                # not, or, before its first session, where its files show the toolchain
                if r["project"] != project and (k < len(recent) / 2 if recent else
                                                not _Presenter.applies(steps, root)):
                    why[p] = "not applicable here"
                    continue
            key = _Pattern.pref(p)[0] if p.startswith("pref:") else None
            if key in _Corpus.ROLE_TITLES and key in roles:
                why[p] = f"superseded by {roles[key]}"
            elif _Presenter.generic_habit(p):
                why[p] = "a habit every project has"
            else:
                if steps:                         # a note never takes the role of what was run
                    roles.setdefault(key, p)
                out.append(r)
        if root and out:               # the user wrote it already, or its files changed or went
            stale = _Anchors.staleness(self._db.conn, root, out)
            why.update((r["pattern"], f"stale anchor: {w}") for r, w in zip(out, stale)
                       if w and w.endswith(" is gone"))
            out = [dict(r, stale=w) if w else r for r, w in zip(out, stale)
                   if r["pattern"] not in why]
            kept = _Lint.duplicates(root, out)
            why.update((r["pattern"], "already in the project's rules file") for r in out
                       if r not in kept)
            out = kept
        out = _Presenter.arrange(out, why, recent)
        why.update((r["pattern"], "over the budget") for r in out[limit:])
        return out[:limit]

    def _export(self, min_confidence, fmt, project, category, write, force):
        """The body of export_rules: select, render, optionally write."""
        cat = _check_category(category) if category is not None else None
        lint = []                      # lint findings against the project's own rules files
        proj = None
        if fmt not in ("json", "markdown"):          # what the briefing shows, in its words
            proj = _resolve_project(project, self.cwd)
            root = project_root(project if project and not _is_fingerprint(project) else self.cwd)
            rules = [r for r in self._select(
                proj, root if project_fingerprint(root) == proj else None, MAX_LIMIT)
                     if (min_confidence is None or r["confidence"] >= min_confidence)
                     and (cat is None or r["category"] == cat)]
            if project_fingerprint(root) == proj:   # reported; duplicates left out by the presenter
                lint = _Lint.lint(root, self.suggest(project=proj, limit=MAX_LIMIT))
        elif project is None:
            rules = self.list(min_confidence=10 if min_confidence is None else min_confidence,
                               category=cat)
        else:                          # one project: its rules, global ones, universal ones
            proj = _resolve_project(project, self.cwd)
            rows = self._read(
                f"SELECT {_Core._COLS} FROM instincts WHERE confidence >= :c AND (project IN"
                " ('', :p) OR promoted = 3)" + (" AND category = :cat" if cat else "")
                + _Core._SQL_UNFORGOTTEN.format("pattern", ":p")
                + " ORDER BY project = :p DESC, confidence DESC, pattern, project",  # its row first
                {"c": 10 if min_confidence is None else min_confidence, "p": proj, "cat": cat})
            best = {}
            for r in map(_Core._record, rows):
                best.setdefault(r["pattern"], r)
            rules = sorted(best.values(), key=lambda r: (-r["confidence"], r["pattern"]))
        roots = self._roots(r["project"] for r in rules) if fmt == "json" else {}
        for r in rules if fmt == "json" else ():     # a shared file: no folder of this machine
            if r.pop("root", None) is not None or r["project"]:    # but its repository's id
                r["repo"] = _repo_id(roots[r["project"]]) if r["project"] in roots else r["project"]
        if write is None:
            if fmt == "json":
                return rules
            if fmt == "markdown":
                return _Out.render_markdown(rules)
            return _Export.agent_text(fmt, rules, _Core._EXPORT_FORMATS[fmt][1])[0]
        _check_text(write, "write path", 4096, empty_ok=False)
        path = self._user_path(write)
        name = _Export.SKILL_NAME
        default, limit, owned = _Core._EXPORT_FORMATS[fmt]
        if fmt == "skill":
            if os.path.basename(path) != "SKILL.md":
                path = os.path.join(path, "SKILL.md")
            name = _Export.skill_name(os.path.dirname(path))
        elif os.path.isdir(path):
            path = os.path.join(path, default)
        path = _Export.safe_target(path, project_root(self.cwd), force)
        old = b""
        if os.path.exists(path):
            try:
                old = _read_regular(path, MAX_IMPORT_BYTES)
            except OSError as e:
                raise StoreError(f"cannot read {path}: {e.strerror}") from None
        text = old.decode("utf-8", "surrogateescape")
        if not rules and not (text if owned else _Export.block_markers(text)):
            raise NotFoundError(self._nothing_to_export(min_confidence, proj, cat, path))
        nl = "\r\n" if "\r\n" in text else "\n"
        before = after = ""
        budget = limit
        if owned:
            if not force and not _Export.written_by_us(fmt, path, text):
                raise ValidationError(f"{path} was not written by instinct; refusing to replace it "
                                      "(write into CLAUDE.md/AGENTS.md-style files with --format "
                                      "claude or agents, or use --force)")
        else:
            found = _Export.block_markers(text)
            begin, end = (min(found.get(m, [-1])) for m in (_Export.BLOCK_BEGIN, _Export.BLOCK_END))
            if any(len(v) > 1 for v in found.values()):
                raise ValidationError(f"{path} holds more than one instinct block; "
                                      "keep one and retry")
            if (begin < 0) != (end < 0) or end < begin:
                raise ValidationError(f"{path} has an unmatched "
                                      f"{_Export.BLOCK_BEGIN if begin >= 0 else _Export.BLOCK_END} "
                                      "marker; fix the file by hand and retry")
            if begin >= 0:
                before, after = text[:begin], text[end + len(_Export.BLOCK_END):]
            else:
                sep = nl if text.endswith(nl) or not text.strip() else nl + nl
                before, after = text + (sep if text else ""), nl
            if fmt == "agents":        # the 32 KiB cap counts the whole file, human text included
                budget -= len((before + after).encode("utf-8", "surrogateescape"))
        if fmt == "json":
            block, kept, dropped = _dumps(rules, indent=2) + "\n", len(rules), 0
        else:
            block, kept, dropped = _Export.agent_text(fmt, rules, budget, name)
        data = (before + _shown(block).replace("\n", nl) + after).encode("utf-8", "surrogateescape")
        changed = data != old
        if changed:
            _atomic_write(path, data)
            self._wrote(path)
        return {"path": path, "format": fmt, "included": kept, "dropped": dropped,
                "changed": changed, "bytes": len(data), "lint": lint}

    def _nothing_to_export(self, min_confidence, proj, cat, path=None):
        """Why `export` (`--write`: to `path`) has no rules, and what would export the mature ones
        (those the session-start briefing shows: below the rule threshold, above the mature one)."""
        where = "" if proj is None else " AND (project IN ('', ?) OR promoted = 3)"
        n, low = self._read("SELECT count(*), min(confidence) FROM instincts WHERE promoted >= 1"
                             " AND quiet = 0" + where + (" AND category = ?" if cat else ""),
                             tuple(x for x in (proj, cat) if x is not None))[0]
        hint = (f"{_Out.count(n, 'mature pattern')} (confidence {low} and up, the ones the "
                f"briefing shows): add --min-confidence {low} to export them" if n else
                "no pattern is mature yet (instinct import-history learns from past sessions"
                + ("" if path else "; --min-confidence 1 exports raw ones too") + ")")
        what = ("nothing the session briefing shows here" if min_confidence is None
                else f"nothing at confidence >= {min_confidence}")
        return f"{what} to export" + (f", {path} not written" if path else "") + f"; {hint}"


# =============================================================================
# 20. Learning and hints (capture, mining passes, the briefing, hints at the point of action)
# =============================================================================
class _Miner:
    """One mining pass in the caller's write: each (session, pattern, project) +1 at most once."""
    # Sessions with tool events past the full-pass mark and not mined that far: the log's tail by
    # rowid (`+e.session` keeps SQLite from walking the whole session index for the GROUP BY).
    SQL_UNMINED = ("SELECT e.session, max(e.id) FROM events e LEFT JOIN mined_sessions m"
                   " ON m.session = e.session WHERE e.id > ? AND e.session != ''"
                   " AND e.kind IN ('tool', 'tool_fail') GROUP BY +e.session"
                   " HAVING max(e.id) > coalesce(max(m.last_id), 0) ORDER BY max(e.id)")
    # A session's tool calls, by the session index
    SQL_CALLS = (" FROM events WHERE session = ? AND session != ''"
                 " AND kind IN ('tool', 'tool_fail')")

    def __init__(self, store, conn):
        self.store, self.conn, self.now = store, conn, store._now()
        self.canon, self.credited, self.observed = {}, set(), []   # aliases cannot change mid-pass
        self.when, self.forgotten, self.had = {}, [], {}      # had: a session's credits, read once
        self.corpus = (store._corpus or _Corpus()).renew(self.rows_of)

    def rows_of(self, sess, what="kind, data"):
        """A session's tool calls in order: (kind, summary) each, or the columns `what`."""
        return self.conn.execute(f"SELECT {what}" + _Miner.SQL_CALLS + " ORDER BY id",
                                 (sess,)).fetchall()

    def credit(self, sessions, pat, proj):
        conn, p = self.conn, self.canon.get(pat)
        if p is None:
            try:
                p = self.canon[pat] = self.store._canonical(pat, conn)
            except ValidationError:
                return
        for sess in [s for s in sessions if (s, pat, proj) not in self.credited]:
            self.credited.add((sess, pat, proj))
            had = self.had.get(sess)
            if had is None:   # (what a pass inserts, `credited` holds; none of these can go)
                had = self.had[sess] = set(conn.execute("SELECT pattern, project FROM mined"
                                                        " WHERE session = ?", (sess,)))
            if (p, proj) in had or not conn.execute(
                    "INSERT OR IGNORE INTO mined (session, pattern, project, ts) VALUES (?,?,?,?)",
                    (sess, p, proj, self.now)).rowcount:
                continue
            if sess not in self.when:                   # the session's own time and source
                ts, src = conn.execute("SELECT max(ts), max(source)" + _Miner.SQL_CALLS,
                                       (sess,)).fetchone()
                self.when[sess] = (ts or self.now, src if _Core._mined_source(src)
                                   else f"hooks:{src}"[:40] if src else "hooks")
            ts, src = self.when[sess]
            if self.store._reinforce(conn, p, proj, source=src, session=sess, ts=ts) is None:
                conn.execute("DELETE FROM mined WHERE session = ? AND pattern = ? AND project = ?",
                             (sess, p, proj))
                self.forgotten.append(p)
            else:
                self.observed.append(p)

    def known(self, g, proj):
        """The confidence workflow `g` already has in `proj` (0: not learned)."""
        row = self.conn.execute("SELECT confidence FROM instincts WHERE pattern = ?"
                                " AND project = ?", (_Pattern.seq(g), proj)).fetchone()
        return row[0] if row else 0

    def anchor(self, sess, proj, found):
        """Anchor each project command this session used to its defining file as it is now."""
        row = self.conn.execute("SELECT root FROM projects WHERE fingerprint = ?",
                                (proj,)).fetchone()
        if not row or not os.path.isdir(row[0]):
            return
        for pat, have in found.items():
            steps = _Pattern.steps(pat)
            if sess in have and pat.startswith("pref:") and steps:
                path = _Anchors.defining_file(row[0], steps[0])
                if path and self.canon.get(pat):
                    _Anchors.reanchor(self.conn, row[0],
                                      {"pattern": self.canon[pat], "project": proj}, [path])

    def session(self, sess, last_id):
        """Mine one session (calls up to event `last_id`): its habits, combos and fixes, then the
        workflows shared with its project's recent sessions, and any project's (global in 2+)."""
        conn, corpus = self.conn, self.corpus
        proj = Counter(self.rows_of(sess, "project")).most_common(1)[0][0][0]  # where most ran
        steps = "\t".join(corpus.add(sess, self.rows_of(sess))[:_Corpus.STEPS_KEPT])  # (new calls)
        conn.execute("INSERT INTO mined_sessions (session, last_id, project, steps)"
                     " VALUES (?, ?, ?, ?) ON CONFLICT (session) DO UPDATE SET"
                     " last_id = excluded.last_id, project = excluded.project,"
                     " steps = excluded.steps", (sess, last_id, proj, steps))
        conn.execute("INSERT OR IGNORE INTO active_days SELECT ?, substr(ts, 1, 10) FROM events"
                     " WHERE id = ?", (proj, last_id))          # decay's clock (section 16)
        same = [s for s, in conn.execute("SELECT session FROM mined_sessions WHERE project = ?"
                                          " ORDER BY last_id DESC LIMIT ?",
                                          (proj, _Corpus.SESSIONS_COMPARED))]
        compared = [sess] + [s for s in same if s != sess]
        window = compared[:_Corpus.HABIT_WINDOW]
        for s in compared:
            corpus.add(s)
        found = _Corpus.recurring(sess, compared, corpus)
        found.update(_Corpus.fix_habits(sess, window, corpus))
        found.update(_Corpus.workflows(sess, same, corpus, lambda g: self.known(g, proj)))
        # a command or fix first found counts every session compared that held it, so it
        # is mature when its 5th holder ends; a workflow first found counts the latest ones:
        # chance makes a workflow of a random walk pass now and then, once, with many holders
        for pat, have in sorted(found.items()):      # (all of them when nearly every one did)
            back = (len(have) if not pat.startswith("seq:") or len(have) >= 0.75 * len(window)
                    else _Corpus.BACKFILL)
            self.credit(reversed(have[:back]), pat, proj)  # oldest first: the log in time order
        self.anchor(sess, proj, found)
        where = dict(conn.execute(      # (picked in the project index: it holds last_id too)
            "SELECT session, project FROM mined_sessions WHERE rowid IN (SELECT rowid FROM"
            " mined_sessions ORDER BY last_id DESC LIMIT ?) ORDER BY last_id DESC",
            (_Corpus.SESSIONS_COMPARED,)))
        for pat, have in sorted(_Corpus.workflows(sess, list(where), corpus,
                                                  lambda g: self.known(g, "")).items()):
            if len({where.get(s, proj) for s in have}) >= 2:
                self.credit(reversed(have[:_Corpus.BACKFILL]), pat, "")


class _Hints:
    """Hints of mature items before a conflicting command, after a failure, or at an edit of an
    anchored file: one indexed query per call, each once per session, some held back (lift)."""

    MAX_CHARS = 300
    PACKAGE_MANAGERS = frozenset("npm pnpm yarn bun".split())
    FIX_WINDOW = 10                  # a fix hint is followed when the command passes within this
    LIFT_MIN = 10                    # decided hints of each arm (shown, held) before a lift is told
    NO_LIFT = 0.05                   # a lift whose interval ends below this is none (hint_demote)
    SQL_MATURE = ("SELECT pattern, confidence FROM instincts WHERE promoted > 0 AND quiet = 0"
                  " AND project IN (:p, '') AND pattern >= :lo AND pattern < :hi"  # evidence only:
                  " AND (source = 'hooks' OR source GLOB 'hooks:*' OR source GLOB 'import:*')"
                  + _Core._SQL_UNFORGOTTEN.format("pattern", ":p")
                  + " ORDER BY project = '', confidence DESC, pattern")

    @staticmethod
    def purpose(shape):
        """What a shape is for: its role ('test'), 'packages' (a package manager's), else None."""
        packages = "packages" if shape.split(" ", 1)[0] in _Hints.PACKAGE_MANAGERS else None
        return _Corpus.command_role(shape) or packages

    @staticmethod
    def agrees(shape, learned, purpose):
        """Whether `shape` is the `learned` command for `purpose`, or extends it or is extended
        ('mix test.watch' differs from 'mix test', 'npm test unit' does not from 'npm test')."""
        if purpose == "packages":
            return shape.split(" ", 1)[0] == learned.split(" ", 1)[0]
        return (shape == learned or shape.startswith(learned + " ")
                or learned.startswith(shape + " "))

    @staticmethod
    def _toolchains(shape):
        """The toolchain files whose programs a shape names ('npx vitest' -> package.json)."""
        words = set(shape.split())
        return {f for f, progs in _Call.TOOLCHAIN_FILES.items() if words & set(progs.split())}

    @staticmethod
    def learned_for(rows, purpose, shape):
        """The learned commands among `rows` (pattern, confidence) for `purpose` in the toolchain
        of `shape` (`mix test` says nothing of `npx vitest`), strongest first."""
        out, mine = [], _Hints._toolchains(shape)
        for p, n in rows:
            key, value = _Pattern.pref(p)[0], (_Pattern.steps(p) or [""])[0]
            theirs = _Hints._toolchains(value)
            if value and (key == purpose or purpose == "packages"
                          and value.split(" ", 1)[0] in _Hints.PACKAGE_MANAGERS) \
                    and not (mine and theirs and not mine & theirs):
                out.append((p, value, n))
        return out

    @staticmethod
    def outcome(kind, key, calls):
        """Whether a hint or briefed item was followed, from the later calls ([(ok, _Call)]) ->
        (True/False, None while undecided; calls until fixed)."""
        if kind == "fix" and key.startswith("fix:"):
            failed = _Pattern.fix(key)[0]
            n = next((i + 1 for i, (ok, c) in enumerate(calls) if ok and failed in c.steps()), None)
            return (None if n is None else n <= _Hints.FIX_WINDOW), n
        if kind == "brief":
            steps = [st for _, c in calls for st in c.steps()]
            return (_Corpus.subsequence(_Pattern.steps(key), steps) if steps else None), None
        if kind in _Corpus.ROLE_TITLES or kind == "packages":
            learned = _Pattern.pref(key)[1] or ""
            for _, c in calls[1:]:                  # the first is the call the hint came before
                mine = [s for s in c.cmds if _Hints.purpose(s) == kind]
                if mine:
                    return any(_Hints.agrees(s, learned, kind) for s in mine), None
        return None, None

    @staticmethod
    def lift(arms):
        """{'shown': [hits, decided], 'held': [...]} -> lift (shown rate - held rate) and its 95 %
        interval (Agresti-Caffo); 'not enough data' below LIFT_MIN decided in either arm."""
        (x1, n1), (x0, n0) = arms["shown"], arms["held"]
        if min(n1, n0) < _Hints.LIFT_MIN:
            return {"lift": None, "note": "not enough data"}
        p1, p0 = (x1 + 1) / (n1 + 2), (x0 + 1) / (n0 + 2)
        half = 1.96 * (p1 * (1 - p1) / (n1 + 2) + p0 * (1 - p0) / (n0 + 2)) ** 0.5
        return {"lift": round(x1 / n1 - x0 / n0, 3),
                "interval": [round(p1 - p0 - half, 3), round(p1 - p0 + half, 3)]}

    @staticmethod
    def no_lift(r):
        return r["lift"] is not None and r["interval"][1] < _Hints.NO_LIFT


class _Learning(_Rules):
    """Operations fed by agent hooks: session mining and the session-start briefing."""
    _corpus = None          # import-history: one corpus for its mining passes (each reads it)

    @operation(
        Param("session", str, "mine only this session id (default: every session with new events)"),
        title="Mine sessions into patterns", idempotent=True,
        output=_Out.obj({"sessions": _Out.INT, "observed": {"type": "array", "items": _Out.STR},
                         "forgotten": _Out.INT, "consolidated": {"type": "object"}},
                        ("sessions", "observed")),
        render=lambda r: "\n".join([f"Sessions mined: {r['sessions']}"]
                                   + [f"  observed {p}" for p in r["observed"]]
                                   + [f"Observations: {len(r['observed'])}"]
                                   + [f"Left out (forgotten): {r['forgotten']}"]
                                   * bool(r["forgotten"])))
    def mine(self, session=None):
        """Mine the sessions' tool calls into pref:/seq:/fix:/combo: observations, then consolidate.

        At most +1 per pattern and session, so confidence counts sessions; mining again changes
        nothing. Workflows are judged across the project's recent sessions against chance."""
        if session is not None:
            _check_text(session, "session", 100, empty_ok=False)
        with self._write() as conn:
            if session is None:            # every session with events past the full-pass mark
                seen = conn.execute("SELECT seen_id FROM mining_state").fetchone()[0]
                todo = conn.execute(_Miner.SQL_UNMINED, (seen,)).fetchall()
                conn.execute("UPDATE mining_state SET seen_id = (SELECT coalesce(max(id), 0)"
                             " FROM events)")
            else:
                todo = conn.execute(_Miner.SQL_UNMINED.replace("e.id > ?", "e.session = ?"),
                                    (session,)).fetchall()
            miner = _Miner(self, conn)
            for sess, last_id in todo:
                miner.session(sess, last_id)
            # bookkeeping lives as long as the events it describes (the event-log retention)
            cutoff = _iso(self._clock() - self._settings()["events_max_days"] * 86400)
            conn.execute("DELETE FROM mined WHERE ts < ?", (cutoff,))
            # (`mined` stays: an imported session whose calls went is not credited again)
            conn.execute("DELETE FROM mined_sessions WHERE last_id < (SELECT coalesce(min(id), 0)"
                         " FROM events)")
        # an idle pass (every SessionStart runs one) does not pay for a whole-store consolidate
        observed = miner.observed
        return {"sessions": len(todo), "observed": observed, "forgotten": len(set(miner.forgotten)),
                "consolidated": self.consolidate() if observed else {}}

    def _record_tool(self, payload, failed=False, ts=None, roots=None):
        """Store one tool call of a hook payload -> its summary or the skip reason. `ts` (epoch
        seconds) dates a replayed call; `roots`, a dict the caller keeps, resolves folders once."""
        payload = payload if "client" in payload else _Capture.normal(payload)
        call, reason = _Call.of(payload)
        if call is None:
            return "skipped: " + reason
        session = _Capture.safe_session(payload.get("session_id"))
        if not session:
            return "skipped: no session_id"
        uid = _Call.use_id(payload.get("tool_use_id")) if ts is None else 0    # live: stored once
        cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
        roots = {} if roots is None else roots
        if cwd not in roots:
            roots[cwd] = project_root(cwd)
        proj = _sha256_hex(roots[cwd])[:12]
        failed = failed or _Call.response_failed(payload.get("tool_response"))
        source = os.environ.get("INSTINCT_SOURCE") or payload["client"]
        with self._write() as conn:
            if uid and conn.execute("SELECT 1" + _Miner.SQL_CALLS + " AND delta = ?",
                                    (session, uid)).fetchone():
                return "skipped: reported twice (same tool-use id)"
            call = call.private(conn, session, cwd, None if failed else (
                source != "codex" and _Call.plain(payload), _Call.said(payload)))
            when = self._now() if ts is None else _iso(ts)
            conn.execute(_Core._SQL_EVENT, (when, "tool_fail" if failed else "tool", "", proj,
                                            source[:40], session, uid, call.encode()))
            conn.execute(_Core._SQL_PROJECT, (proj, roots[cwd], when))
        return call.label()

    def _new_prompt(self, prompt, cwd, session):
        """Whether `prompt` is new to the project of `cwd`. Its keyed hash (never its text) is
        kept: a prompt seen before (an automation's fixed prompt) is not a correction."""
        with self._write() as conn:
            h = _Call.keyed(conn, project_fingerprint(cwd) + "\0" + _Capture.prompt_text(prompt))
            if conn.execute("SELECT 1 FROM seen WHERE hash = ?", (h,)).fetchone():
                return False
            _Call.seen_add(conn, h, session)
            return True

    def _briefing(self, cwd=None, max_items=_Capture.INJECT_MAX_ITEMS,
                 max_chars=_Capture.INJECT_MAX_CHARS, project=None, session="", why=None):
        """The session-start context for the project of `cwd` (or fingerprint `project`), capped;
        '' if none. With a `session`, items are recorded, `holdout_percent` held back. `why` (a
        dict) gets every mature item: pattern -> '' when shown, else why not (`_Presenter`)."""
        why = {} if why is None else why
        proj = project_fingerprint(cwd) if project is None else project
        root = project_root(cwd) if cwd or project is None else None
        items = self._select(proj, root, max_items, why)
        if session and items:
            try:
                show = set(self._hold_out(session, proj,
                                           [("brief", r["pattern"]) for r in items], again=True))
                why.update((p, "held back for the lift measure") for r in items
                           if r["pattern"] not in show for p in [r["pattern"]] + r.get("also", []))
                items = [r for r in items if r["pattern"] in show]
            except StoreError:                 # a read-only store: everything, unmeasured
                pass
        lines = [(r, _Presenter.briefing_line(r)) for r in items
                 if _Core._mined_source(r["source"])]
        try:
            if root:
                lines += [(None, "- " + m)
                          for m in self._memory_briefing(cwd or os.getcwd(), max_chars)]
        except InstinctError:
            pass
        notes = [(r, _Presenter.briefing_line(r)) for r in items
                 if not _Core._mined_source(r["source"])]
        text = ("What instinct learned from this user's past sessions here"
                " (follow it unless told otherwise):") if lines else ""
        if notes:                      # not seen in sessions: said as notes, never as instructions
            lines += [(None, "Noted by hand or shared, not seen in this project's sessions (check"
                       " before relying on it):")] + notes
            text = text or lines.pop(-len(notes) - 1)[1]
        for r, line in lines:
            fits = len(text) + 1 + len(line) <= max_chars
            if r is not None:
                why.update((p, "" if fits else "over the budget")
                           for p in [r["pattern"]] + r.get("also", []))
            if fits:
                text += "\n" + line
            else:
                max_chars = -1                 # (nothing after the first line that does not fit)
        return text if "\n" in text else ""

    @operation(
        Param("project", str, "a project path or fingerprint (default: the working directory's)"),
        cli="explain-briefing", title="Explain the session-start briefing", read_only=True,
        idempotent=True,
        output=_Out.obj({"project": _Out.STR, "items": {"type": "array", "items": _Out.obj(
            {"pattern": _Out.STR, "shown": _Out.BOOL, "why": _Out.STR},
            ("pattern", "shown", "why"))}}, ("project", "items")),
        render=lambda r: "\n".join(
            [f"Briefing of {r['project']}: {sum(x['shown'] for x in r['items'])} of"
             f" {len(r['items'])} mature items shown"]
            + [f"  {'shown' if x['shown'] else 'not shown'}  {x['pattern']}"
               + (f": {x['why']}" if x["why"] else "") for x in r["items"]]))
    def explain_briefing(self, project=None):
        """Every mature item of a folder: whether the session-start briefing shows it, and why not.

        The reasons come from the briefing's own selection (`INSTINCT_DEBUG=1` prints them at
        session start too, with the items held back there for the lift measure)."""
        fp = project is not None and _is_fingerprint(project)
        where = None if fp else self._user_path(project or ".")
        proj = project if fp else _resolve_project(where)
        why, opted = {}, Operation._opted_out(self, project)
        self._briefing(where, project=proj if fp else None, why=why)
        items = [{"pattern": p, "shown": not (w or opted), "why": opted and "opted out" or w}
                 for p, w in why.items()]
        return {"project": proj, "items": sorted(items, key=lambda x: not x["shown"])}

    def _command_hint(self, project, shapes):
        """The first shape at odds with its purpose's mature command -> (purpose, pattern, text)."""
        rows = None
        for shape in shapes:
            purpose = _Hints.purpose(shape)
            if purpose is None:
                continue
            rows = (self._read(_Hints.SQL_MATURE, {"p": project, "lo": "pref:", "hi": "pref;"})
                    if rows is None else rows)
            learned = _Hints.learned_for(rows, purpose, shape)
            if learned and not any(_Hints.agrees(shape, v, purpose) for _, v, _ in learned):
                p, v, n = learned[0]
                if purpose == "packages":
                    return purpose, p, (f"This project uses `{v.split()[0]}` (`{v}`,"
                                        f" {_Core._sessions(n)} sessions),"
                                        f" not `{shape.split()[0]}`.")
                return purpose, p, (f"{_Corpus.ROLE_TITLES[purpose]}: `{v}`"
                                    f" ({_Core._sessions(n)} sessions),"
                                    f" not `{shape}`.")
        return None

    def _fix_hint(self, project, step):
        """A failed command's learned fix, and a memory about the command -> ('fix', key, text)."""
        fix = self._read(_Hints.SQL_MATURE, {"p": project, "lo": _Pattern.fixed(step, ""),
                                                "hi": _Pattern.fixed(step, "")[:-1] + "!"})
        # `make`, not make (nor `make db`)
        names = (f"`{step}`",) + ((step,) if " " in step else ())
        mem = [(i, t) for i, t, c in self._read(
            "SELECT id, title, content FROM memories WHERE archived = 0 AND project IN (?, '') AND"
            " instr(title || ' ' || content, ?) > 0 ORDER BY confidence DESC, id LIMIT 20",
            (project, step)) if any(n in f"{t} {c}" for n in names)]
        text = ""
        if fix:
            n, by = fix[0][1], _Pattern.fix(fix[0][0])[1]
            how = "fixing the code" if by.split("(")[0] == _Call.EDIT_STEP else f"`{by}`"
            text = (f"When `{step}` failed here, {how} then a re-run fixed it"
                    f" ({_Core._sessions(n)} sessions).")
        if mem:
            text += f" Memory about `{step}`: {mem[0][1]}"
        return ("fix", fix[0][0] if fix else f"memory:{mem[0][0]}", text.strip()) if text else None

    def _edit_hint(self, root, path):
        """The memory anchored to the file about to be edited -> ('edit', key, text), else None."""
        rel = os.path.relpath(os.path.realpath(path), os.path.realpath(root)).replace(os.sep, "/")
        mem = self._read("SELECT m.id, m.title, m.content FROM anchors a JOIN memories m ON"
                          " m.id = a.memory WHERE a.root = ? AND a.memory > 0 AND a.path = ?"
                          " AND m.archived = 0 ORDER BY m.confidence DESC, m.id LIMIT 1",
                          (_sha256_hex(root)[:12], rel))
        if not mem:
            return None
        mid, title, content = mem[0]
        first = " ".join(content.split())
        return "edit", f"memory:{mid}", (f"A memory about `{rel}`: {title}"
                                         + f" - {first}" * bool(first))

    def _hold_out(self, session, project, items, again=False):
        """Record each (kind, key) once per session, shown or held back (`holdout_percent`) ->
        the keys to show: new and not held (`again`: or shown before, as on a resume)."""
        settings = self._settings()
        share = settings["holdout_percent"]
        if settings["hint_demote"]:               # enough evidence that it changes nothing: demoted
            items = [(k, p) for k, p in items
                     if not _Hints.no_lift(self._effect(1, (p, k))["overall"])]
        show = []
        with self._write() as conn:
            after = conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0]
            for kind, key in items:
                # held at random, but the same draw for the same session and item (reproducible)
                shown = int(_sha256_hex(f"{session}\0{kind}\0{key}")[:8], 16) % 100 >= share
                if conn.execute("INSERT OR IGNORE INTO hints (session, pattern, kind, project, ts,"
                                " after_id, shown) VALUES (?,?,?,?,?,?,?)",
                                (session, key, kind, project, self._now(), after, shown)).rowcount:
                    show += [key] * shown
                elif again and conn.execute("SELECT shown FROM hints WHERE session = ?"
                                            " AND pattern = ? AND kind = ?",
                                            (session, key, kind)).fetchone()[0]:
                    show.append(key)
        return show

    def _hint(self, event, payload, cwd):
        """The hint for a call about to run ('pre-tool-use') or one that failed -> text, or ''."""
        session = _Capture.safe_session(payload.get("session_id"))
        call = _Call.of(payload)[0]
        if not session or call is None:
            return ""
        root = project_root(cwd)
        project = _sha256_hex(root)[:12]
        found = None
        if event != "pre-tool-use":
            steps = call.steps() if call.tool in _Call.SHELLS else []
            found = self._fix_hint(project, steps[-1]) if steps else None
        elif call.tool in _Call.SHELLS:
            found = self._command_hint(project, call.cmds)
        elif call.tool in _Call.EDIT_TOOLS and isinstance(payload.get("tool_input"), dict):
            tinput = payload["tool_input"]
            path = tinput.get("file_path") or tinput.get("path") or tinput.get("notebook_path")
            if isinstance(path, str) and path and "\x00" not in path:
                found = self._edit_hint(root, os.path.join(cwd, path))
        if not found or not self._hold_out(session, project, [found[:2]]):
            return ""
        text = "instinct: " + found[2]
        return text if len(text) <= _Hints.MAX_CHARS else text[:_Hints.MAX_CHARS - 3] + "..."

    def _effect(self, limit, only=None):
        """Per item (`only`: this (pattern, kind)) and overall: shown and held counts, followed
        of decided, calls until a fixed command passed, and the lift."""
        rows = self._read("SELECT session, pattern, kind, shown, after_id FROM hints"
                           + " WHERE pattern = ? AND kind = ?" * bool(only) + " ORDER BY session",
                           only or ())
        def blank():
            return {"shown": 0, "held": 0, "arms": {"shown": [0, 0], "held": [0, 0]}, "calls": []}
        per, calls, last = {("", ""): blank()}, [], None
        for sess, key, kind, shown, after in rows:
            if sess != last:
                last, calls = sess, [(i, k == "tool", _Call.read(d)) for i, k, d in self._read(
                    "SELECT id, kind, data" + _Miner.SQL_CALLS + " ORDER BY id", (sess,))]
            ok, n = _Hints.outcome(kind, key, [(o, c) for i, o, c in calls if i > after])
            for k in ((kind, key), ("", "")):
                d = per.setdefault(k, blank())
                arm = "shown" if shown else "held"
                d[arm] += 1
                if ok is not None:
                    d["arms"][arm][0] += ok
                    d["arms"][arm][1] += 1
                if n is not None and shown:
                    d["calls"].append(n)

        def out(d):
            r = {"shown": d["shown"], "held": d["held"], "followed_shown": d["arms"]["shown"][0],
                 "decided_shown": d["arms"]["shown"][1], "followed_held": d["arms"]["held"][0],
                 "decided_held": d["arms"]["held"][1], **_Hints.lift(d["arms"])}
            if d["calls"]:
                r["calls_to_pass"] = round(sum(d["calls"]) / len(d["calls"]), 2)
            return r
        total = out(per.pop(("", "")))
        items = sorted(({"pattern": p, "kind": k, **out(d)} for (k, p), d in per.items()),
                       key=lambda r: (-r["shown"] - r["held"], r["pattern"]))
        return {"overall": total, "items": items[:limit]}

    def _codex_outcomes(self, session, transcript_path):
        """At a Codex session's end, mark as failed the stored calls its rollout records as failed
        (by tool-use id: an exit code the rollout had not yet at PostToolUse) -> how many."""
        if not (isinstance(transcript_path, str) and transcript_path.endswith(".jsonl")
                and os.path.basename(transcript_path).startswith("rollout-")
                and os.path.isfile(transcript_path)):
            return 0
        try:
            sid, calls = _Transcripts.codex_session(transcript_path, {"bad_lines": 0,
                                                                      "sidechain_calls": 0})
        except (OSError, ValidationError):
            return 0
        with self._write() as conn:
            return sum(conn.execute("UPDATE events SET kind = 'tool_fail' WHERE session = ? AND"
                                    " session != '' AND kind = 'tool' AND delta = ?",
                                    (session, _Call.use_id(p["tool_use_id"]))).rowcount
                       for p, failed, _ in calls if failed and sid == session)

    def _on_hook(self, event, payload, cwd, session, say, answer):
        """What one hook event does to the store; `answer(event name, text)` hands context back
        to the agent and `say(text, always=False)` logs (the hook prints both, the store never)."""
        if event == "user-prompt-submit":  # a new correction: ask the agent to keep the lesson
            if self._new_prompt(payload["prompt"], cwd, session):
                answer("UserPromptSubmit", _Capture.CORRECTION_CONTEXT)
        elif event == "pre-tool-use":      # nothing kept: maybe a hint about the call
            answer("PreToolUse", self._hint(event, payload, cwd))
        elif event in ("post-tool-use", "post-tool-use-failure"):
            failed = event.endswith("failure") or (payload["client"] == "codex" and (
                _Transcripts.codex_code(payload) or 0) != 0)
            say(f"{event}: {self._record_tool(payload, failed=failed)}")
            if failed or _Call.response_failed(payload.get("tool_response")):
                answer("PostToolUseFailure" if failed else "PostToolUse",
                       self._hint(event, payload, cwd))     # Codex: PostToolUse
        elif event in ("stop", "session-end") and session:
            if payload["client"] == "codex":
                say(f"{event}: {self._codex_outcomes(session, payload.get('transcript_path'))}"
                    " failed calls read from the Codex rollout")
            say(f"{event}: mined {len(self.mine(session)['observed'])} observations")
        elif event == "session-start":
            try:                           # sessions whose end hook never ran (crash, cancel)
                say(f"{event}: mined {self.mine()['sessions']} unmined sessions")
            except (InstinctError, sqlite3.Error) as e:   # e.g. a read-only store: still brief
                say(f"{event}: mining skipped: {e}", True)
            why = {}                       # INSTINCT_DEBUG=1: what explain-briefing says
            answer("SessionStart", self._briefing(cwd, session=session, why=why))
            for p, w in why.items():
                say(f"{event}: {p}: {'not shown: ' + w if w else 'shown'}")


# =============================================================================
# 21. History import (replaying past sessions through capture and mining)
# =============================================================================
class _History(_Learning):
    """`import-history`: learn from the sessions the user already had before instinct."""

    progress = None        # optional callback(done, total) for long operations (not a Param)

    @operation(
        Param("client", str, "whose history to read", default="all", choices=_Transcripts.CLIENTS),
        Param("path", str, "read this transcript file or folder instead of the clients' "
                           "default folders (~/.claude, ~/.codex, ~/.gemini, ~/.copilot ...)"),
        Param("since", int, "only sessions active in the last N days", minimum=1),
        Param("dry_run", bool, "only count what would be imported; store nothing", default=False),
        title="Import past agent sessions", idempotent=True,
        output=_Out.obj({"sessions": _Out.INT, "imported": _Out.INT, "skipped": _Out.INT,
                         "empty": _Out.INT, "too_old": _Out.INT, "old": _Out.INT,
                         "tool_calls": _Out.INT, "failed_calls": _Out.INT, "bad_lines": _Out.INT,
                     "sidechain_calls": _Out.INT, "dry_run": _Out.BOOL, "links_skipped": _Out.INT,
                     "path": _Out.STR,
                     "projects": {"type": "array", "items": _Out.obj({
                         "project": _Out.STR, "cwd": _Out.STR, "sessions": _Out.INT,
                         "tool_calls": _Out.INT, "learned": {"type": "array", "items": _Out.STR},
                         "briefing": _Out.STR})}},
                        ("sessions", "imported", "skipped", "tool_calls", "projects")),
        render=_Transcripts.render_import)
    def import_history(self, client="all", path=None, since=None, dry_run=False):
        """Replay the agent clients' past sessions through capture and mining.

        Reads each client's transcripts (Claude Code, Codex, Gemini CLI, Copilot CLI, Cursor:
        CLIENTS' `history`), no subagent side-chains. Each call is stored as the live hook
        stores it (its shape only), each session mined and dated with its own time. A session
        already in the store is skipped: running it again changes nothing."""
        if path is not None:
            _check_text(path, "path", 4096, empty_ok=False)
        stats = {"bad_lines": 0, "sidechain_calls": 0,     # roots: known folders (Gemini's hash)
                 "roots": [r for r, in self._read("SELECT root FROM projects")]}
        now = self._clock()
        cutoffs = (now - 86400 * since if since else float("-inf"),        # --since, retention
                   now - 86400 * self._settings()["events_max_days"])
        files = []
        found, links = _Transcripts.files(client, path)
        for who, f in found:
            try:
                sniffed, first = _Transcripts.sniff(f)
            except (OSError, ValidationError):
                stats["bad_lines"] += 1
                continue
            who = who or sniffed
            if who is None or (client != "all" and who != client):
                continue
            files.append((first or 0.0, f, who))
        files.sort()
        res = {"sessions": 0, "imported": 0, "skipped": 0, "empty": 0, "too_old": 0, "old": 0,
               "tool_calls": 0, "failed_calls": 0, "dry_run": bool(dry_run), "links_skipped": links,
               **({"path": path} if path else {})}
        projects, disabled, done, imported, pending = {}, {}, set(), {}, 0
        self._keep_events, self._corpus = True, _Corpus()
        try:
            for n, (_, f, who) in enumerate(files, 1):
                reader = getattr(_Transcripts, CLIENTS[who].history[3])
                try:
                    session, calls = reader(f, stats)
                except (OSError, ValidationError):
                    stats["bad_lines"] += 1
                    calls, session = [], ""
                session = _Capture.safe_session(session)
                if not (session and session in done):          # (a session is read once)
                    res["sessions"] += 1
                    done.add(session)
                    if session and calls:
                        proj = self._history_one(session, calls, cutoffs, dry_run, res, projects,
                                                 disabled)
                        if proj is not None and not dry_run:
                            imported[session], pending = proj, pending + 1
                    else:
                        res["empty"] += 1
                if pending >= _Transcripts.MINE_BATCH:
                    self.mine()                # oldest first: event ids follow the import order
                    pending = 0
                if self.progress is not None:
                    self.progress(n, len(files))
            if pending or not dry_run:         # (also what an interrupted run left unmined)
                self.mine()
        finally:
            del self._keep_events, self._corpus
        for sess, proj in imported.items():        # what mining credited to the imported sessions
            for pattern, in self._read("SELECT pattern FROM mined WHERE session = ?", (sess,)):
                projects[proj]["seen"][pattern] += 1
        del stats["roots"]
        res.update(stats)
        ranked = sorted(projects.values(), key=lambda p: -p["tool_calls"])
        for i, p in enumerate(ranked):
            cwds = p.pop("cwds")
            p["cwd"] = max(cwds, key=cwds.get)
            learned = p.pop("seen")
            p["learned"] = sorted(learned, key=lambda k: (-learned[k], k))
            p["briefing"] = (self._briefing(p["cwd"]) if i < _Transcripts.BRIEFINGS and not dry_run
                             else "")
        res["projects"] = ranked
        return res

    def _history_one(self, session, calls, cutoffs, dry_run, res, projects, disabled):
        """Import one session's calls in one transaction; its project key, None if skipped."""
        last = max((ts for _, _, ts in calls if ts), default=None)
        if last is not None and last < cutoffs[0]:
            res["too_old"] += 1
            return
        if self._read("SELECT 1" + _Miner.SQL_CALLS + " UNION ALL SELECT 1 FROM mined"
                      " WHERE session = ? LIMIT 1", (session, session)):   # its calls or credits
            res["skipped"] += 1
            return
        cwds = Counter(p["cwd"] for p, _, _ in calls if isinstance(p.get("cwd"), str) and p["cwd"])
        cwd = cwds.most_common(1)[0][0] if cwds else ""
        if cwd and cwd not in disabled:
            disabled[cwd] = _disabled_reason({}, cwd)
        if not cwd or disabled[cwd]:       # no folder to credit (never the importer's) or opted out
            res["empty"] += 1
            return
        for payload, _, _ in calls:        # a line without its cwd belongs to the session's folder
            if not isinstance(payload.get("cwd"), str) or not payload["cwd"]:
                payload["cwd"] = cwd
        res["imported"] += 1
        res["old"] += last is not None and last < cutoffs[1]
        proj = project_fingerprint(cwd)
        p = projects.setdefault(proj, {"project": proj, "sessions": 0, "tool_calls": 0,
                                       "cwds": Counter(), "seen": Counter()})
        p["sessions"] += 1
        p["cwds"][cwd] += 1
        kept = fails = 0                   # the calls capture keeps (it skips plumbing, its own)
        if dry_run:
            for payload, failed, _ in calls:
                if _Call.of(payload)[0] is not None:
                    kept, fails = kept + 1, fails + failed
        else:
            roots = {}
            with self._write() as conn:         # one transaction; captures nest as savepoints
                for payload, failed, ts in calls:
                    if not self._record_tool(payload, failed=failed, ts=ts,
                                            roots=roots).startswith("skipped: "):
                        kept, fails = kept + 1, fails + failed
                conn.execute("UPDATE events SET source = 'import:' || source WHERE session = ?"
                             " AND session != '' AND kind IN ('tool', 'tool_fail')", (session,))
        res["tool_calls"] += kept
        res["failed_calls"] += fails
        p["tool_calls"] += kept
        return proj


# =============================================================================
# 22. Sharing (import, merge, backup, restore, doctor, gc, purge)
# =============================================================================
class _Backup:
    """Backups (SQLite's backup API, 0600, newest kept), restore's checks, and doctor's report."""

    @staticmethod
    def check_backup(conn):
        """'' when conn holds a sound instinct database, else what is wrong with it."""
        rows = conn.execute("PRAGMA integrity_check(5)").fetchall()
        if rows != [("ok",)]:
            return "integrity check failed: " + "; ".join(str(r[0]) for r in rows)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            return f"schema v{version} is newer than this instinct (v{SCHEMA_VERSION})"
        cols = {r[1] for r in conn.execute("PRAGMA table_info(instincts)")}
        if not _Schema.SEED_COLUMNS <= cols:
            return ("it has no instincts table" if not cols
                    else "its instincts table lacks columns: "
                    + ", ".join(sorted(_Schema.SEED_COLUMNS - cols)))
        return ""

    @staticmethod
    def foreign_objects(conn):
        """'type name' of each object in conn that instinct's own schema (all migrations) lacks."""
        from contextlib import closing
        with closing(sqlite3.connect(":memory:")) as own:
            for migrate in _Schema.MIGRATIONS:
                migrate(own)
            mine = set(own.execute("SELECT type, name FROM sqlite_master"))
        return sorted(f"{t} {n}"
                      for t, n in conn.execute("SELECT type, name FROM main.sqlite_master")
                      if (t, n) not in mine and not n.startswith("sqlite_"))

    SEED_TABLE = ("CREATE TABLE instincts (pattern TEXT, category TEXT, confidence INTEGER,"
                  " first_seen TEXT, last_seen TEXT, source TEXT, project TEXT, promoted INTEGER,"
                  " metadata TEXT)")

    @staticmethod
    def copy_backup_data(staged_path, built_path, version, page_size):
        """restore: instinct's own schema at the backup's `version` in the new file `built_path`,
        with the rows of its tables (the columns both have); nothing else of the backup is kept."""
        from contextlib import closing
        with closing(sqlite3.connect(built_path, isolation_level=None)) as out:
            out.execute(f"PRAGMA page_size = {int(page_size)}")
            out.execute("BEGIN")
            if version == 0:
                out.execute(_Backup.SEED_TABLE)
            for migrate in _Schema.MIGRATIONS[:version]:
                migrate(out)
            out.execute(f"PRAGMA user_version = {int(version)}")
            out.execute("COMMIT")
            out.execute("ATTACH DATABASE ? AS b", (staged_path,))
            kinds = dict(out.execute("SELECT name, type FROM b.sqlite_master"))
            if kinds.get("instincts") != "table":
                raise ValidationError("its 'instincts' is not a table")
            fts = {"instincts_fts", "memories_fts"}
            ours = [n for (n,) in out.execute("SELECT name FROM main.sqlite_master"
                                              " WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
                                              " ORDER BY name")
                    if n not in fts and not n.startswith(tuple(f + "_" for f in fts))]
            out.execute("BEGIN")
            for t in ours:
                if kinds.get(t) != "table":
                    continue
                theirs = {r[1] for r in out.execute(f'PRAGMA b.table_info("{t}")')}
                cols = ", ".join(f'"{c[1]}"' for c in out.execute(f'PRAGMA main.table_info("{t}")')
                                 if c[1] in theirs)
                if cols:
                    out.execute(f'INSERT INTO main."{t}" ({cols}) SELECT {cols} FROM b."{t}"')
            if version:
                bad = out.execute("SELECT count(*) FROM main.instincts WHERE"
                                  " typeof(pattern) != 'text' OR typeof(confidence) != 'integer'"
                                  " OR typeof(promoted) != 'integer'"
                                  " OR promoted NOT BETWEEN 0 AND 3").fetchone()[0]
                if bad:
                    raise ValidationError(f"{bad} of its instincts hold invalid values")
            if "memories" in ours:
                bad = out.execute("SELECT count(*) FROM main.memories WHERE typeof(title) != 'text'"
                                  " OR typeof(confidence) != 'integer' OR type NOT IN (%s)"
                                  % ",".join("?" * len(_Mem.MEMORY_TYPES)),
                                  tuple(_Mem.MEMORY_TYPES)).fetchone()[0]
                if bad:
                    raise ValidationError(f"{bad} of its memories hold invalid values")
            for t in sorted(fts & {n for (n,)
                                   in out.execute("SELECT name FROM main.sqlite_master")}):
                out.execute(f"INSERT INTO main.{t}({t}) VALUES ('rebuild')")
            if "events_state" in ours:       # v8 and v9, which have `pending` with it
                out.execute("UPDATE main.events SET pending = 0 WHERE pending != 0")
            for state, table in (("fts_state", "instincts"), ("events_state", "events")):
                if state in ours:            # everything is indexed now
                    out.execute(f"DELETE FROM main.{state}")
                    out.execute(f"INSERT INTO main.{state} SELECT coalesce(max(id), 0)"
                                f" FROM main.{table}")
            out.execute("COMMIT")
            out.execute("DETACH DATABASE b")

    @staticmethod
    def render_doctor(r):
        out = [f"  {'ok' if c['level'] == 'ok' else c['level'].upper():<6}{c['name']:<12}"
               f"{c['detail']}" for c in r["checks"]]
        bad, warn = (sum(c["level"] == lv for c in r["checks"]) for lv in ("error", "warn"))
        out.append(f"{r['db_path']}: " + ("healthy" if not bad and not warn else
                                          f"{_Out.count(bad, 'problem')}, "
                                          f"{_Out.count(warn, 'warning')}"))
        return "\n".join(out)

    DOCTOR_CHECK = _Out.obj({"name": _Out.STR, "ok": _Out.BOOL, "level": _Out.STR,
                             "detail": _Out.STR}, ("name", "ok", "level", "detail"))


class _Sharing(_Memory):
    """Operations that carry learned rules to other agents, machines and years."""
    @staticmethod
    def _fold(a, b):
        """Two imported records for one (pattern, project) -> one, by the import merge rule."""
        return {"confidence": max(a["confidence"], b["confidence"]),
                "category": a["category"] or b["category"], "source": a["source"] or b["source"],
                "promoted": max(a["promoted"], b["promoted"]),
                "first_seen": min(filter(None, (a["first_seen"], b["first_seen"])), default=""),
                "last_seen": max(a["last_seen"], b["last_seen"]),
                "metadata": {**b["metadata"], **a["metadata"]}}

    @operation(
        Param("file", str, "a JSON export: the list export_rules returns, or {\"rules\": [...]}",
              required=True, positional=True),
        Param("project", str, "store every imported rule under this project instead of the file's "
              "('' global, a fingerprint or a path)"),
        cli="import", title="Import rules", idempotent=True,
        output=_Out.obj({k: _Out.INT for k in ("records", "added", "updated", "unchanged",
                                               "forgotten")}
                        | {"file": _Out.STR}, ("file", "records", "added", "updated", "unchanged")),
        render=lambda r: f"Imported {r['records']} records from {r['file']}: {r['added']} added, "
                         f"{r['updated']} updated, {r['unchanged']} unchanged"
                         + (f", {r['forgotten']} left out (forgotten)" if r.get("forgotten")
                            else ""))
    def import_rules(self, file, project=None):
        """Merge another store's JSON export (a teammate's, another machine's) into this one.

        Per (pattern, project): confidence, last_seen and level = max, first_seen = min; local
        category, source and metadata keys are kept. Patterns are normalised and local aliases
        applied; a pattern forgotten here stays out (`forgotten`); importing twice = once; a
        project's record goes to this machine's clone of its `repo` (the working directory's
        first). One bad record refuses the whole file. Written 2,000 records per transaction, so
        hooks never wait long; importing it again after an interruption finishes the rest.
        """
        import json
        _check_text(file, "file", 4096, empty_ok=False)
        path = self._user_path(file)
        try:
            data = json.loads(_read_regular(path, MAX_IMPORT_BYTES).decode("utf-8"))
        except OSError as e:
            raise ValidationError(f"cannot read {path}: {e.strerror}") from None
        except (ValueError, RecursionError) as e:
            raise ValidationError(f"{path} is not a JSON export: {e}") from None
        if isinstance(data, dict) and isinstance(data.get("rules"), list):
            data = data["rules"]
        if not isinstance(data, list):
            raise ValidationError(f"{path} is not an instinct export: expected a list of rule "
                                  "records or {\"rules\": [...]}")
        remap = None if project is None else _resolve_project(project, self.cwd)
        local = {_repo_id(r): f for f, r in self._read("SELECT fingerprint, root FROM projects")
                 + [(project_fingerprint(self.cwd), project_root(self.cwd))]}   # the cwd's wins
        merged = {}
        for i, rec in enumerate(data):
            try:
                key, row = self._import_record(rec, remap, local)
            except ValidationError as e:
                raise ValidationError(f"{path}: record {i + 1}: {e}") from None
            cur = merged.get(key)
            merged[key] = row if cur is None else _Sharing._fold(cur, row)
        items = sorted(merged.items())
        done = Counter()
        for i in range(0, len(items), _Core._IMPORT_BATCH):
            if i:
                time.sleep(_Core._YIELD_S)
            with self._write() as conn:
                for (pattern, proj), row in items[i:i + _Core._IMPORT_BATCH]:
                    done[self._import_one(conn, pattern, proj, row)] += 1
        out = {"file": path, "records": len(data), "added": done["added"],
               "updated": done["updated"], "unchanged": done["unchanged"]}
        return dict(out, forgotten=done["forgotten"]) if done["forgotten"] else out

    def _import_one(self, conn, pattern, proj, row):
        """Fold one imported record in: 'added', 'updated', 'unchanged' or 'forgotten' (here)."""
        p = self._canonical(pattern, conn)
        old = self._get_record(conn, p, proj)
        now = self._now()
        if old is None:
            if self._reinforce(conn, p, proj, source=row["source"], session=self.session, ts=now,
                               delta=row["confidence"], kind="import", category=row["category"],
                               metadata=_check_metadata(row["metadata"]),
                               seen=(row["first_seen"] or now, row["last_seen"] or now)) is None:
                return "forgotten"
            conn.execute("UPDATE instincts SET promoted = ? WHERE pattern = ? AND project = ?",
                         (row["promoted"], p, proj))
            return "added"
        new = dict(_Sharing._fold(old, row), category=old["category"])     # the rule, local first
        if all(old[k] == v for k, v in new.items()):
            return "unchanged"
        self._reinforce(conn, p, proj, source=row["source"], session=self.session, ts=now,
                        delta=new["confidence"] - old["confidence"], kind="import")
        conn.execute("UPDATE instincts SET promoted = ?, source = ?, first_seen = ?, last_seen = ?,"
                     " metadata = coalesce(?, metadata) WHERE pattern = ? AND project = ?",
                     (new["promoted"], new["source"], new["first_seen"],
                      new["last_seen"], None if new["metadata"] == old["metadata"]
                      else _check_metadata(new["metadata"]), p, proj))
        return "updated"

    @staticmethod
    def _import_record(rec, remap, local):
        if not isinstance(rec, dict):
            raise ValidationError("expected an object with at least pattern and confidence")
        pattern = normalize_pattern(rec.get("pattern"))
        conf = rec.get("confidence", 1)
        if isinstance(conf, bool) or not isinstance(conf, int) or not 1 <= conf <= 10**9:
            raise ValidationError(f"confidence of {pattern!r} must be a whole number "
                                  "from 1 to 10**9")
        cat = rec.get("category")
        cat = _check_category(cat) if cat not in (None, "") else ""
        proj = rec.get("project", "")
        if not isinstance(proj, str) or not (proj == "" or _is_fingerprint(proj)):
            raise ValidationError(f"project of {pattern!r} must be '' or a 12-hex fingerprint")
        if remap is None and proj and isinstance(rec.get("repo"), str):
            proj = local.get(rec["repo"], proj)       # this machine's clone of its repository
        level = rec.get("level", LEVELS[0])
        promoted = rec.get("promoted", LEVELS.index(level) if level in LEVELS else None)
        if isinstance(promoted, bool) or promoted not in range(len(LEVELS)):
            raise ValidationError(f"level of {pattern!r} must be one of: {', '.join(LEVELS)}")
        stamps = []
        for k in ("first_seen", "last_seen"):
            v = rec.get(k)
            t = _parse_iso(v) if isinstance(v, str) else None
            if v is not None and t is None:
                raise ValidationError(f"{k} of {pattern!r} is not an ISO-8601 time")
            stamps.append(_iso(t) if t is not None else "")
        meta = rec.get("metadata") or {}
        _check_metadata(meta)
        source = _Core._note_source(_check_text(rec.get("source") or "", "source"), True)
        return ((pattern, proj if remap is None else remap),
                {"confidence": conf, "category": cat, "promoted": promoted, "first_seen": stamps[0],
                 "last_seen": stamps[1], "source": source, "metadata": meta})

    @staticmethod
    def _drop_orphan_events(conn):
        """gc: the events of patterns and memories that are gone (decayed, deleted), so no copy
        of their text outlives them. Tool calls stay for mining until the retention cuts them."""
        conn.execute("DELETE FROM events WHERE pattern != '' AND kind NOT IN ('tool', 'tool_fail')"
                     " AND NOT EXISTS (SELECT 1 FROM instincts i WHERE i.pattern = events.pattern"
                     " AND i.project = events.project)")
        conn.execute("DELETE FROM events WHERE substr(data, 1, 10) = '{\"memory\":'"
                     " AND CAST(substr(data, 11, instr(substr(data, 11), ',') - 1) AS INTEGER)"
                     " NOT IN (SELECT id FROM memories)")
        conn.execute("DELETE FROM mined WHERE NOT EXISTS (SELECT 1 FROM instincts i"
                     " WHERE i.pattern = mined.pattern AND i.project = mined.project)")

    @operation(
        Param("text", str, "the text to remove wherever it appears (at least 4 characters; "
              "case-sensitive)", required=True, positional=True),
        _Core._DRY_RUN,
        title="Purge a text from the store", destructive=True, idempotent=True,
        output=_Out.obj({k: _Out.INT for k in ("instincts", "memories", "events", "other",
                                               "backup", "files")}
                        | {"dry_run": _Out.BOOL, "backup_file": _Out.STR,
                           "not_reached": {"type": "array", "items": _Out.STR}},
                        ("instincts", "memories", "events", "other", "backup")),
        render=lambda r: (f"{'Would purge' if r.get('dry_run') else 'Purged'}: " + ", ".join(
            _Out.count(r[k], n) for k, n in (("instincts", "instinct"), ("memories", "memory"),
                                             ("events", "event"), ("other", "other row")))
            + (f"; {_Out.count(r['backup'], 'row')} from older backups" if r["backup"] else "")
            + (f"; {_Out.count(r['files'], 'file')} instinct wrote" if r.get("files") else "")
            + "".join(f"\nnot reached (the text stands outside what instinct wrote): {p}"
                      for p in r.get("not_reached", ()))
            + _Core._backup_note(r) + ("; it still holds the purged text: delete it once sure"
                                       if r.get("backup_file") else "")))
    def purge(self, text, dry_run=False):
        """Delete every record holding a text (a leaked secret, a name), here and in the backups.

        Patterns, memories, events, aliases, settings, folders and mining rows go, here, in the
        `.bak` restore keeps and in older automatic backups; the full-text indexes and WAL are
        purged, freed pages zeroed. The automatic backup written first (`backup_file`) still
        holds the text: delete it once sure. dry_run counts what would go, changing nothing.
        """
        _check_text(text, "text", MAX_PATTERN, empty_ok=False)
        if len(text.strip()) < 4:
            raise ValidationError("text must hold at least 4 characters (a shorter one would match "
                                  "too much)")
        from contextlib import suppress
        older = [p for p in [self.path + ".bak"] + _auto_backups(self.path) if os.path.isfile(p)]

        written = [p for p, in self._read("SELECT DISTINCT data FROM events"
                                          " WHERE kind = 'written'")]

        def run(store):
            counts = dict(store._purge(text), backup=0)
            for bak in older if store is self else ():
                with suppress(InstinctError), type(self)(bak, timeout=self._db.timeout) as old:
                    counts["backup"] += sum(old._purge(text).values())
            counts["files"], counts["not_reached"] = _Export.purge_files(
                written, text, dry_run or store is not self)
            return counts
        return self._guarded("purge", dry_run, run)

    def _purge(self, text):
        import json
        needles = list(dict.fromkeys([text, json.dumps(text)[1:-1],
                                      json.dumps(text, ensure_ascii=False)[1:-1]]))
        plan = {"instincts": ("pattern", "category", "source", "metadata"),
                "memories": ("title", "content", "why", "how_to_apply", "tags", "source",
                             "metadata"),
                "events": ("pattern", "source", "session", "data"),
                "aliases": ("alias", "pattern"), "settings": ("key", "value"),
                "mined": ("session", "pattern"), "mined_sessions": ("session", "steps"),
                "seen": ("session", "word"), "hints": ("session", "pattern"),
                "anchors": ("root", "pattern", "path"), "projects": ("root",)}
        counts = {"instincts": 0, "memories": 0, "events": 0, "other": 0}
        tables = {r[0] for r in self._read("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table, cols in plan.items():
            if table in tables:
                where = " OR ".join(f"instr({c}, ?) > 0" for c in cols for _ in needles)
                with self._write() as conn:
                    counts[table if table in counts else "other"] += conn.execute(
                        f"DELETE FROM {table} WHERE {where}", needles * len(cols)).rowcount
        with self._write() as conn:
            self._drop_orphan_events(conn)
        self._scrub()
        return counts

    @operation(
        Param("path", str, "the backup file to create", required=True, positional=True),
        Param("force", bool, "overwrite an existing file", default=False),
        title="Back up the database", destructive=True,
        output=_Out.obj({"path": _Out.STR, "bytes": _Out.INT, "instincts": _Out.INT,
                         "events": _Out.INT}, ("path", "bytes", "instincts", "events")),
        render=lambda r: f"Backed up {r['instincts']} instincts and {r['events']} events to "
                         f"{r['path']} ({r['bytes']} bytes)")
    def backup(self, path, force=False):
        """Copy the database to a file with SQLite's online backup API (safe while others write)."""
        _check_text(path, "path", 4096, empty_ok=False)
        dest = self._user_path(path)
        if os.path.isdir(dest):
            raise ValidationError(f"{dest} is a directory; give a file name")
        if os.path.realpath(dest) in {os.path.realpath(self.path + s)
                                      for s in ("", "-wal", "-shm", ".bak")}:
            raise ValidationError(f"{dest} is the database itself (or its .bak)")
        if os.path.lexists(dest) and not force:
            raise ValidationError(f"{dest} already exists (use --force to overwrite it)")
        if not os.path.isdir(os.path.dirname(dest)):
            raise ValidationError(f"directory {os.path.dirname(dest)} does not exist")
        try:
            n, e = self._snapshot(self._db.conn, dest)
        except sqlite3.Error as e:
            raise _db_error(self.path, e) from None
        except OSError as e:
            raise StoreError(f"cannot write {dest}: {e.strerror}") from None
        return {"path": dest, "bytes": os.path.getsize(dest), "instincts": n, "events": e}

    @operation(
        Param("path", str, "the backup file to restore", required=True, positional=True),
        _Core._DRY_RUN,
        title="Restore the database from a backup", destructive=True, idempotent=True,
        output=_Out.obj({"path": _Out.STR, "previous": _Out.STR, "instincts": _Out.INT,
                         "events": _Out.INT, "schema_version": _Out.INT, "dry_run": _Out.BOOL},
                        ("path", "previous", "instincts", "events")),
        render=lambda r: (f"Would restore {r['instincts']} instincts and {r['events']} events from "
                          f"{r['path']}" + _Core._backup_note(r) if r.get("dry_run") else
                          f"Restored {r['instincts']} instincts and {r['events']} events from "
                          f"{r['path']}; the previous database is kept as {r['previous']}"))
    def restore(self, path, dry_run=False):
        """Replace the database's contents with a backup's, after checking its integrity and schema.

        Only data is taken: rows of instinct's own tables and columns go into a schema instinct
        creates (at the backup's version, then migrated), so foreign tables, triggers and views
        are never installed; a file unreadable that way is refused, changing nothing. The store
        is first saved as `<db>.bak` (`restore <db>.bak` undoes it); processes holding it open
        see the restored contents. dry_run checks the backup and counts what it holds.
        """
        if dry_run:
            return self._guarded("restore", True,
                                 lambda s: dict(s.restore(path), previous=self.path + ".bak"))
        from contextlib import closing
        from urllib.request import pathname2url
        _check_text(path, "path", 4096, empty_ok=False)
        src_path = self._user_path(path)
        if not os.path.isfile(src_path):
            raise ValidationError(f"no backup file {src_path}")
        if os.path.realpath(src_path) == os.path.realpath(self.path):
            raise ValidationError("cannot restore the database from itself")
        conn = self._db.conn
        d = os.path.dirname(self.path)
        tmp, built_path = _temp_file(d), _temp_file(d)
        try:             # read the backup through SQLite (read-only) into a private copy
            url = "file:" + pathname2url(src_path) + "?mode=ro"
            with closing(sqlite3.connect(url, uri=True)) as src, \
                    closing(sqlite3.connect(tmp, isolation_level=None)) as staged:
                src.backup(staged)
                problem = _Backup.check_backup(staged)
                version = staged.execute("PRAGMA user_version").fetchone()[0]
            if problem:
                raise ValidationError(problem)
            page = conn.execute("PRAGMA page_size").fetchone()[0]
            _Backup.copy_backup_data(tmp, built_path, version, page)
            with type(self)(built_path, timeout=self._db.timeout) as built:
                bconn = built._db.conn             # migrates the copy to this schema
                try:
                    self._snapshot(conn, self.path + ".bak")
                    self._db.retry(bconn.backup, conn)
                except sqlite3.Error as e:
                    raise _db_error(self.path, e) from None
        except (sqlite3.Error, ValidationError, StoreError, ValueError, TypeError) as e:
            if isinstance(e, StoreError) and not str(e).startswith(built_path):
                raise
            msg = str(e).replace(built_path, "the copy")
            raise ValidationError(f"{src_path} is not a usable instinct backup: {msg}") from None
        finally:
            _drop_temp(tmp)
            _drop_temp(built_path)
        self._db.close()                 # reopen on next use
        n = self._read("SELECT count(*) FROM instincts")[0][0]
        events = self._read("SELECT count(*) FROM events")[0][0]
        return {"path": src_path, "previous": self.path + ".bak", "instincts": n, "events": events,
                "schema_version": version}

    @operation(
        title="Lint learned rules against the written ones", read_only=True, idempotent=True,
        output=_Lint.FINDING, list_key="findings", render=_Out.render_lint,
        exit_code=lambda found: int(any(f["kind"] == "contradiction" for f in found)))
    def lint(self):
        """Compare what was learned here with the project's rules files: contradictions, duplicates.

        Reads CLAUDE.md, AGENTS.md, .cursor/rules/*.mdc and .windsurf/rules/*.md outside its
        block. A contradiction (learned `pnpm`, written "use npm") shows both sources (the CLI
        exits 1); a duplicate (a rule the user already wrote) is not exported or briefed again.
        """
        root = project_root(self.cwd)        # the records suggest may show here
        rows = self._read(f"SELECT {_Core._COLS} FROM instincts WHERE promoted > 0 AND quiet = 0"
                          " AND (project IN ('', ?) OR promoted = 3) ORDER BY confidence DESC,"
                          " pattern", (_sha256_hex(root)[:12],))
        return _Lint.lint(root, [_Core._record(r) for r in rows])

    @operation(
        title="Check the store's health", read_only=True, idempotent=True,
        output=_Out.obj({"ok": _Out.BOOL, "db_path": _Out.STR,
                         "checks": {"type": "array", "items": _Backup.DOCTOR_CHECK}},
                        ("ok", "db_path", "checks")),
        render=_Backup.render_doctor, exit_code=lambda r: 0 if r["ok"] else 1)
    def doctor(self):
        """Check integrity, schema, search index, WAL, file modes, aliases, stale items, lint.

        `ok` is false when a check failed (the CLI then exits 1); warnings (loose file modes, a
        large WAL, unapplied aliases) leave it true.
        """
        def check(name, level, detail):
            return {"name": name, "ok": level == "ok", "level": level, "detail": detail}
        try:
            conn = self._db.conn
        except InstinctError as e:
            return {"ok": False, "db_path": self.path, "checks": [check("open", "error", str(e))]}
        root = project_root(self.cwd)

        def integrity():
            rows = self._db.retry(lambda: conn.execute("PRAGMA integrity_check(10)").fetchall())
            return "ok" if rows == [("ok",)] else "error", "; ".join(str(r[0]) for r in rows)

        def schema():
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master"
                                                " WHERE type = 'table'")}
            missing = sorted({"instincts", "events", "aliases", "settings"} - names)
            foreign = _Backup.foreign_objects(conn)
            return ("error" if missing or foreign or version != SCHEMA_VERSION else "ok",
                    f"v{version} (this instinct: v{SCHEMA_VERSION})"
                    + (f"; missing tables: {', '.join(missing)}" if missing else "")
                    + (f"; not instinct's (an older restore installed them?): "
                       f"{', '.join(foreign[:10])}" if foreign else ""))

        def fts():
            if not conn.execute("SELECT 1 FROM sqlite_master"
                                " WHERE name = 'instincts_fts'").fetchone():
                return "ok", "no FTS5 index (search uses LIKE)"
            lazy = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'fts_state'").fetchone()
            mark = conn.execute("SELECT indexed_id FROM fts_state").fetchone()[0] if lazy else 2**62
            rows, new, docs = conn.execute(        # rows above the mark wait for the next sync
                "SELECT count(*), coalesce(sum(id > ?), 0),"
                " (SELECT count(*) FROM instincts_fts_docsize) FROM instincts", (mark,)).fetchone()
            # against the table only when every row is indexed; else the index's own structure
            if not self._db.read_only and os.access(self.path, os.W_OK):  # (a command, a write)
                self._db.retry(conn.execute, "INSERT INTO instincts_fts(instincts_fts, rank)"
                                             f" VALUES ('integrity-check', {0 if new else 1})")
            if rows - new != docs:
                return "error", (f"index holds {docs} entries for {rows - new} patterns;"
                                 " run: instinct gc")
            return "ok", f"index in sync with {rows - new} patterns" + (
                f" ({new} newer ones are indexed by the next search or consolidate)" if new else "")

        def wal():
            size = os.path.getsize(self.path + "-wal") if os.path.exists(self.path + "-wal") else 0
            big = size > 64 * 1024 * 1024
            return "warn" if big else "ok", f"{size} bytes" + ("; run: instinct gc" if big else "")

        def modes():
            problems = []
            for what, p, want in (("database", self.path, 0o600),
                                  ("directory", os.path.dirname(self.path), 0o700)):
                mode = os.stat(p).st_mode & 0o777
                if mode & 0o077:
                    problems.append(f"{what} {p} is {mode:04o} "
                                    f"(expected {want:04o}: chmod {want:o} {p})")
            return ("warn" if problems else "ok",
                    "; ".join(problems) or "database 0600, directory 0700")

        def aliases():
            chains, stale, total = conn.execute(
                "SELECT (SELECT count(*) FROM aliases WHERE pattern IN (SELECT alias FROM aliases)"
                " OR alias = pattern), (SELECT count(*) FROM instincts WHERE pattern IN"
                " (SELECT alias FROM aliases)), (SELECT count(*) FROM aliases)").fetchone()
            issues = [f"{chains} aliases point at another alias or at themselves"] if chains else []
            if stale:
                issues.append(f"{stale} patterns are stored under an alias")
            if issues:
                return "warn", "; ".join(issues) + "; run: instinct gc"
            return "ok", f"{total} aliases, all resolved"

        def anchors():
            items = [{"id": m} if m else {"pattern": p, "project": pr} for m, p, pr in conn.execute(
                "SELECT DISTINCT memory, pattern, project FROM anchors WHERE root = ?",
                (_sha256_hex(root)[:12],))]
            stale = [f"{'memory #%d' % it['id'] if 'id' in it else it['pattern']} ({why})"
                     for it, why in zip(items, _Anchors.staleness(conn, root, items)) if why]
            if stale:
                return "warn", "may be stale: " + "; ".join(stale)
            return "ok", f"{len(items)} anchored item(s) here, none stale"

        def lint():
            found = self.lint()
            c = sum(f["kind"] == "contradiction" for f in found)
            return ("warn" if c else "ok", f"{c} contradiction(s), {len(found) - c} duplicate(s) of"
                    " the rules written here" + ("; run: instinct lint" if found else ""))

        checks = []
        for fn in (integrity, schema, fts, wal, modes, aliases, anchors, lint):
            try:
                level, detail = fn()
            except (sqlite3.Error, InstinctError) as e:
                level, detail = "error", f"{type(e).__name__}: {e}"
            if fn is integrity and level == "error":
                detail += " (copy the file aside, then: instinct restore BACKUP)"
            checks.append(check(fn.__name__, level, detail))
        return {"ok": all(c["level"] != "error" for c in checks), "db_path": self.path,
                "checks": checks}

    @operation(
        Param("days_inactive", int, "decay: days without an observation before a pattern loses 1",
              default=90, flag="--days", minimum=1),
        _Core._DRY_RUN,
        title="Garbage-collect the store", destructive=True,
        output=_Out.obj({k: _Out.INT for k in ("aliases_applied", "decayed", "deleted",
                                       "events_pruned", "memories_archived", "memories_deleted",
                                       "bytes_before", "bytes_after")}
                        | {"dry_run": _Out.BOOL, "backup_file": _Out.STR},
                        ("aliases_applied", "decayed", "deleted", "events_pruned", "bytes_before",
                         "bytes_after")),
        render=lambda r: "\n".join([f"Aliases applied: {r['aliases_applied']}",
                                    f"Decayed: {r['decayed']}", f"Deleted: {r['deleted']}",
                                    f"Events pruned: {r['events_pruned']}",
                                    f"Memories archived: {r['memories_archived']}",
                                    f"Archived memories deleted: {r['memories_deleted']}",
                                    f"Optimized and vacuumed: {r['bytes_before']} -> "
                                    f"{r['bytes_after']} bytes"]) + _Core._backup_note(r))
    def gc(self, days_inactive=90, dry_run=False):
        """Housekeeping: apply aliases, decay, prune the event log, age memories, VACUUM.

        Alias chains are flattened and rows under an alias merged into its pattern; long-archived
        memories are deleted and the WAL truncated. A backup comes first (`backup_file`).
        """
        return self._guarded("gc", dry_run, lambda s: s._gc(days_inactive))

    def _gc(self, days_inactive):
        before = self._db_bytes()
        with self._write() as conn:              # alias chains flattened first
            for _ in range(16):
                if not conn.execute("UPDATE aliases SET pattern = (SELECT b.pattern FROM aliases b"
                                    " WHERE b.alias = aliases.pattern) WHERE alias != pattern"
                                    " AND pattern IN (SELECT alias FROM aliases)").rowcount:
                    break
            conn.execute("DELETE FROM aliases WHERE alias = pattern")
            stored = conn.execute("SELECT alias, pattern FROM aliases WHERE alias IN"
                                  " (SELECT pattern FROM instincts)").fetchall()
        applied = sum(self.merge(a, p)["merged"] for a, p in stored)
        decayed = self.decay(days_inactive)
        pruned = self._prune_events(self._settings())
        archived = self.memory_decay()["archived"]
        with self._write() as conn:
            dropped = self._gc_memories(conn)
            self._drop_orphan_events(conn)
        self._fts_sync()
        self._scrub()                    # deleted text out of the full-text indexes, before VACUUM
        try:
            conn = self._db.conn
            conn.execute("PRAGMA optimize")
            self._db.retry(conn.execute, "VACUUM")          # never inside a transaction
            self._db.retry(conn.execute, "PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as e:
            raise _db_error(self.path, e) from None
        return {"aliases_applied": applied, "decayed": decayed["decayed"],
                "deleted": decayed["deleted"], "events_pruned": pruned,
                "memories_archived": archived, "memories_deleted": dropped,
                "bytes_before": before, "bytes_after": self._db_bytes()}


# =============================================================================
# 23. Insight and feedback (explain, history, effectiveness, feedback, conflicts)
# =============================================================================
class _Insight(_Learning):
    """Operations that show why the memory believes something and let people correct it.

    Bad feedback sets the row's `quiet` (`feedback_bad_quiet`), which each observation counts
    down and good feedback lifts; suggest skips a quiet row. Preference conflicts are worked out
    when suggest runs, so never stale; each pattern of a `surface` event is one showing.
    """
    @staticmethod
    def _pref_values(group):
        """One preference key's rows in one scope, the winner first (`_pref_groups`) -> values."""
        return [{"pattern": pattern, "value": _Pattern.pref(pattern)[1], "project": project,
                 "confidence": conf, "level": LEVELS[promoted], "last_seen": last_seen,
                 "winner": i == 0}
                for i, (pattern, project, conf, promoted, last_seen) in enumerate(group)]

    @staticmethod
    def _level_change(data):
        """A promote/demote event's data '0->1' -> 'raw -> mature'."""
        try:
            a, b = (LEVELS[int(x)] for x in data.split("->"))
        except (ValueError, IndexError):
            return data
        return f"{a} -> {b}"

    @staticmethod
    def _listof(items):
        return {"type": "array", "items": items}

    _THRESHOLD = _Out.obj({"value": _Out.INT, "from": _Out.STR, "key": _Out.STR},
                          ("value", "from", "key"))
    _NAMED = _listof(_Out.obj({"name": _Out.STR, "count": _Out.INT}, ("name", "count")))
    _PREF_VALUES = _listof(_Out.obj({
        "pattern": _Out.STR, "value": _Out.STR, "project": _Out.STR, "confidence": _Out.INT,
        "level": _Out.STR, "last_seen": _Out.STR, "winner": _Out.BOOL},
        ("pattern", "value", "project", "winner")))
    _EXPLAIN = _Out.obj({
        **_Out.RECORD["properties"], "scope": _Out.STR, "decayed_at": _Out.STR,
        "level_due": _Out.STR, "suggested": _Out.BOOL, "quiet": _Out.INT, "why": _Out.STR,
        "thresholds": _Out.obj({"mature": _THRESHOLD, "rule": _THRESHOLD,
                                "universal_projects": _THRESHOLD},
                               ("mature", "rule", "universal_projects")),
        "next_promotion": _Out.obj({"level": _Out.STR, "observations_needed": _Out.INT,
                                    "projects_needed": _Out.INT}),
        "next_decay": _Out.obj({"clock": _Out.STR, "date": _Out.STR, "days_left": _Out.INT,
                                "due": _Out.BOOL, "confidence_after": _Out.INT,
                                "deletes": _Out.BOOL}),
        "observations": _Out.INT, "sources": _NAMED, "sessions": _NAMED, "session_count": _Out.INT,
        "projects": _listof(_Out.obj(
            {"project": _Out.STR, "confidence": _Out.INT, "level": _Out.STR})),
        "aliases": _listof(_Out.STR),
        "preference": _Out.obj({"key": _Out.STR, "superseded": _Out.BOOL, "superseded_by": _Out.STR,
                                "values": _PREF_VALUES}, ("key", "superseded", "values")),
        "feedback": _Out.obj({"good": _Out.INT, "bad": _Out.INT, "recent": _listof(_Out.obj(
            {"ts": _Out.STR, "verdict": _Out.STR, "note": _Out.STR}))}, ("good", "bad", "recent")),
        "surfaced": _Out.INT, "stale": _Out.STR},
        _Out.RECORD["required"] + ["level_due", "suggested", "quiet", "why", "thresholds",
                                   "observations", "sources", "sessions", "projects", "aliases",
                                   "feedback", "surfaced"])
    _HISTORY = _Out.obj({
        "pattern": _Out.STR, "project": _Out.STR, "scope": _Out.STR, "exists": _Out.BOOL,
        "confidence": _Out.INT, "level": _Out.STR, "baseline": _Out.INT, "count": _Out.INT,
        "root": _Out.STR,
        "events": _listof(_Out.obj({
            "ts": _Out.STR, "kind": _Out.STR, "delta": _Out.INT, "confidence": _Out.INT,
            "session": _Out.STR, "source": _Out.STR, "detail": _Out.STR},
            ("ts", "kind", "delta", "confidence")))},
        ("pattern", "project", "exists", "confidence", "baseline", "count", "events"))
    _EFFECT_COUNTS = {"surfaced": _Out.INT, "reinforced": _Out.INT, "missed": _Out.INT,
                      "pending": _Out.INT, "rate": {"type": "number"}}
    _EFFECT = _Out.obj({
        "days": _Out.INT, **_EFFECT_COUNTS,
        "patterns": _listof(_Out.obj({"pattern": _Out.STR, **_EFFECT_COUNTS},
                                     ("pattern", "surfaced", "reinforced"))),
        "hints": _Out.obj({"overall": {"type": "object"}, "items": _listof({"type": "object"})},
                          ("overall", "items"))},
                       ("days", "surfaced", "reinforced", "missed", "pending", "patterns"))
    _FEEDBACK = _Out.obj({**_Out.RECORD["properties"], "scope": _Out.STR, "verdict": _Out.STR,
                          "delta": _Out.INT, "quiet": _Out.INT, "note": _Out.STR},
                         _Out.RECORD["required"] + ["verdict", "delta", "quiet"])
    _CONFLICT = _Out.obj({"key": _Out.STR, "project": _Out.STR, "winner": _Out.STR,
                          "values": _PREF_VALUES}, ("key", "project", "winner", "values"))
    @staticmethod
    def _render_explain(e):
        def th(name):
            x = e["thresholds"][name]
            return f"{x['value']} ({x['from']}{'' if x['from'] == 'default' else ': ' + x['key']})"
        out = [f"{e['pattern']} ({_Core._where(e)}): conf={e['confidence']} [{e['level']}]"
               f" {e['category']}",
               f"  why: {e['why']}",
               f"  thresholds: mature {th('mature')}, rule {th('rule')}, universal projects "
               f"{th('universal_projects')}",
               f"  seen: first {e['first_seen'][:19]}, last {e['last_seen'][:19]}"
               + (f", last decay {e['decayed_at'][:19]}" if e.get("decayed_at") else "")]
        n = e.get("next_promotion")
        if n:
            out.append(f"  next promotion: {n['level']} after {n['observations_needed']} more"
                       " observation(s)" if n["level"] != "universal" else
                       f"  next promotion: universal once a rule in {n['projects_needed']}"
                       " more project(s)")
        d = e.get("next_decay")
        if d:
            when = ("due now" if d["due"] else d["date"][:10] + " if not observed" if "date" in d
                    else f"after {d['days_left']} more such day(s) without it")
            out.append(f"  next decay: {when} (to conf={d['confidence_after']}"
                       f"{', deleted' if d['deletes'] else ''}; clock: {d['clock']})")
        out.append(f"  suggested: {'yes' if e['suggested'] else 'no'}"
                   + (f" (quiet for {e['quiet']} more observation(s) after bad feedback)"
                      if e["quiet"] else ""))
        out.append(f"  observations: {e['observations']}"
                   + (f" in {e['session_count']} session(s)" if e["session_count"] else ""))
        out += [f"  {key}: " + ", ".join(f"{x['name']} ({x['count']})" for x in e[key])
                for key in ("sources", "sessions") if e[key]]
        if len(e["projects"]) > 1:         # the row itself is always one of them
            out.append("  projects: " + ", ".join(
                f"{p['project'] or 'global'} conf={p['confidence']} [{p['level']}]"
                for p in e["projects"]))
        if e["aliases"]:
            out.append("  aliases: " + ", ".join(e["aliases"]))
        p = e.get("preference")
        if p and len(p["values"]) > 1:
            out.append(f"  preference {p['key']}: "
                       + (f"superseded by {p['superseded_by']}" if p["superseded"]
                          else "wins over the other values"))
            out += [f"    {'*' if v['winner'] else ' '} {v['value']:<20} conf={v['confidence']:<3}"
                    f" [{v['level']}] last seen {v['last_seen'][:19]}" for v in p["values"]]
        f = e["feedback"]
        if f["good"] or f["bad"]:
            out.append(f"  feedback: {f['good']} good, {f['bad']} bad")
            out += [f"    {x['ts'][:19]} {x['verdict']}" + (f": {x['note']}" if x["note"] else "")
                    for x in f["recent"]]
        out.append(f"  surfaced: {e['surfaced']} time(s)")
        if e.get("stale"):
            out.append(f"  may be stale: {e['stale']} since it was anchored (observe it again or"
                       " give good feedback to re-anchor it)")
        return "\n".join(out)

    @staticmethod
    def _render_history(h):
        out = [f"{h['pattern']} ({_Core._where(h)}): "
               + (f"conf={h['confidence']} [{h['level']}]" if h["exists"] else "no longer stored")]
        if h["count"] > len(h["events"]):
            out.append(f"  ... {h['count'] - len(h['events'])} earlier event(s); confidence then"
                       f" {h['baseline']}")
        out += [f"  {x['ts'][:19]}  {x['kind']:<8} {x['delta']:+d}  -> {x['confidence']:<4}"
                + (f" {x['detail']}" if x["detail"] else "")
                + (f" [{x['source']}]" if x["source"] else "")
                for x in h["events"]]
        out.append(_Out.count(h["count"], "event"))
        return "\n".join(out)

    @staticmethod
    def _render_effectiveness(e):
        def rate(r):
            return f"{r['rate'] * 100:.0f}%" if "rate" in r else "n/a"
        out = [f"Suggestions surfaced: {e['surfaced']}  reinforced within {e['days']} days:"
               f" {e['reinforced']}  missed: {e['missed']}  pending: {e['pending']}"
               f"  rate: {rate(e)}"]
        if e["patterns"]:
            w = max(22, max(len(p["pattern"]) for p in e["patterns"]))
            out += [f"  {p['pattern']:<{w}} {p['reinforced']}/{p['surfaced']} reinforced,"
                    f" {p['pending']} pending, rate {rate(p)}" for p in e["patterns"]]
        for r in [dict(e["hints"]["overall"], pattern="Hints and briefing items", kind="all")] + \
                e["hints"]["items"]:
            lo, hi = r.get("interval", (0, 0))
            lift = r.get("note") or f"lift {r['lift']:+.2f} [{lo:+.2f}, {hi:+.2f}]"
            out.append(f"  {r['pattern']} ({r['kind']}): shown {r['shown']}, followed "
                       f"{r['followed_shown']}/{r['decided_shown']}; held {r['held']}, followed "
                       f"{r['followed_held']}/{r['decided_held']}; {lift}")
        return "\n".join(out)

    @staticmethod
    def _render_conflicts(rows):
        out = []
        for c in rows:
            out.append(f"{c['key']} ({_Core._where(c)}): {c['winner']} wins")
            out += [f"  {'*' if v['winner'] else ' '} {v['pattern']:<30} conf={v['confidence']:<3}"
                    f" [{v['level']}] last seen {v['last_seen'][:19]}"
                    + ("" if v["winner"] else "  superseded") for v in c["values"]]
        return "\n".join(out + [_Out.count(len(rows), "conflict")])

    def _thresholds(self, pattern, category):
        """Each threshold of one row and where it comes from, in consolidate's order:
        _THRESHOLD_SCOPES (pattern, then category), the store-wide setting, the default."""
        names = {"mature": "mature_threshold", "rule": "rule_threshold",
                 "universal_projects": "universal_projects"}
        row = {"pattern": pattern, "category": category}
        cands = {name: ([] if name == "universal_projects" else
                        [(scope, f"{scope}.{row[scope]}.{which}") for scope in _THRESHOLD_SCOPES])
                 + [("store", which)] for name, which in names.items()}
        keys = [k for c in cands.values() for _, k in c]
        stored = dict(self._chunked("SELECT key, value FROM settings WHERE key IN ({})", keys))
        out = {}
        for name, which in names.items():
            origin, key = next(((o, k) for o, k in cands[name] if k in stored), ("default", which))
            out[name] = {"value": int(stored[key]) if key in stored else SETTINGS[which][0],
                         "from": origin, "key": key}
        return out

    @operation(
        Param("pattern", str, "the pattern", required=True, positional=True),
        _Core._PROJECT_OF_ONE,
        title="Explain a pattern's level", read_only=True, idempotent=True,
        output=_EXPLAIN, render=_render_explain)
    def explain(self, pattern, project=None):
        """Why a pattern is at its level: confidence, thresholds, contributors, links.

        Also the next promotion and decay, aliases, preference conflicts and feedback received.
        """
        p, proj, scope = self._locate(pattern, project)
        recs = [dict(_Core._record(cols), decayed_at=decayed_at, quiet=quiet)
                for *cols, decayed_at, quiet in self._read(
                    f"SELECT {_Core._COLS}, decayed_at, quiet FROM instincts WHERE pattern = ?",
                    (p,))]
        e = next((r for r in recs if r["project"] == proj), None)
        if e is None:
            raise _Core._missing(p, proj)
        e["scope"], e["root"] = scope, self._roots([proj]).get(proj, "")
        conf, promoted = e["confidence"], e["promoted"]
        ths = {cat: self._thresholds(p, cat) for cat in {r["category"] for r in recs}}
        th = ths[e["category"]]
        mature, rule, need = (th[k]["value"] for k in ("mature", "rule", "universal_projects"))
        at_rule = {r["project"] for r in recs
                   if r["project"] and r["confidence"] >= ths[r["category"]]["rule"]["value"]}
        due = _level_for(conf, mature, rule)
        if due == 2 and len(at_rule) >= need:
            due = 3

        def origin(name):
            return ("default" if th[name]["from"] == "default"
                    else f"{th[name]['from']} setting {th[name]['key']}")
        mat, rul = (f"mature threshold {mature} ({origin('mature')})",
                    f"rule threshold {rule} ({origin('rule')})")
        why = (f"confidence {conf} is below the {mat}" if due == 0 else
               f"confidence {conf} reaches the {mat} but not the {rul}" if due == 1 else
               f"confidence {conf} reaches the {rul}; a rule in {len(at_rule)} project(s), "
               f"universal needs {need} ({origin('universal_projects')})")
        if due != promoted:
            why += f"; consolidate will make it {LEVELS[due]} (now {LEVELS[promoted]})"
        e.update(level_due=LEVELS[due], why=why, thresholds=th)
        if due < 2:
            e["next_promotion"] = {"level": LEVELS[due + 1],
                                   "observations_needed": (mature if due == 0 else rule) - conf}
        elif due == 2:
            e["next_promotion"] = {"level": "universal", "observations_needed": 0,
                                   "projects_needed": need - len(at_rule)}
        stamp = max(e["last_seen"], e["decayed_at"])
        days, last = self._active_days().get(proj, []), _parse_iso(stamp)
        if last is not None and days is None:                       # the calendar (default 90)
            at, now = last + 90 * 86400, self._clock()          # past: the next decay charges it
            e["next_decay"] = {"clock": "calendar days", "date": _iso(max(at, now)),
                               "due": at <= now}
        elif last is not None:                      # active days after the day it was last seen
            idle = sum(d > stamp[:10] for d in days)
            e["next_decay"] = {"clock": "days with sessions in " + ("this project" if proj else
                                                                    "any project"),
                               "days_left": max(0, 90 - idle), "due": idle >= 90}
        if last is not None:
            e["next_decay"].update(confidence_after=conf - 1, deletes=conf <= 1)
        where = " FROM events WHERE pattern = :p AND project = :proj AND pattern != ''"
        obs = self._read("SELECT session, source, count(*)" + where + " AND " + _Core._SQL_OBSERVED
                         + " GROUP BY session, source", {"p": p, "proj": proj})
        sessions, sources = {}, {}
        for s, src, n in obs:
            sessions[s] = sessions.get(s, 0) + n
            sources[src] = sources.get(src, 0) + n

        def top(d):
            return [{"name": k, "count": n}
                    for k, n in sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))[:10] if k]
        e.update(observations=sum(sessions.values()), sources=top(sources), sessions=top(sessions),
                 session_count=len([s for s in sessions if s]))
        e["projects"] = [{k: r[k] for k in ("project", "confidence", "level")}
                         for r in sorted(recs, key=lambda r: (-r["confidence"], r["project"]))]
        e["aliases"] = [a for a, in self._read("SELECT alias FROM aliases WHERE pattern = ?"
                                               " ORDER BY alias", (p,))]
        superseded = False
        key = _Core._pref_key(p)
        if key:
            group = _Core._pref_groups(self._pref_rows({key})).get((key, proj), [])
            superseded = bool(group) and group[0][0] != p
            e["preference"] = {"key": key, "superseded": superseded,
                               "values": _Insight._pref_values(group)}
            if superseded:
                e["preference"]["superseded_by"] = group[0][0]
        fb = self._read("SELECT ts, data" + where + " AND kind = 'feedback' ORDER BY id DESC",
                        {"p": p, "proj": proj})
        verdicts = [(ts, _loads_meta(d)) for ts, d in fb]
        e["feedback"] = {"good": sum(v.get("verdict") == "good" for _, v in verdicts),
                         "bad": sum(v.get("verdict") == "bad" for _, v in verdicts),
                         "recent": [{"ts": ts, "verdict": str(v.get("verdict", "")),
                                     "note": str(v.get("note", ""))} for ts, v in verdicts[:5]]}
        (e["surfaced"],), = self._read("SELECT count(*) FROM events WHERE kind = 'surface'"
                                       " AND instr(char(10) || data || char(10), ?)",
                                       (f"\n{p}\t{proj}\n",))
        e["suggested"] = promoted > 0 and not e["quiet"] and not superseded
        why = _Anchors.staleness(self._db.conn, project_root(self.cwd), [e])[0]
        if why:
            e["stale"] = why
        return e

    @operation(
        Param("pattern", str, "the pattern", required=True, positional=True),
        _Core._PROJECT_OF_ONE,
        Param("limit", int, "show at most the latest this many events", default=100, minimum=1,
              maximum=MAX_LIMIT),
        title="Confidence history of a pattern", read_only=True, idempotent=True,
        output=_HISTORY, render=_render_history)
    def history(self, pattern, project=None, limit=100):
        """A pattern's confidence timeline: observations, feedback, decays, merges.

        Each entry carries the confidence after it. Promotions and demotions (by consolidate)
        have a delta of 0, and so has a merge: the merged pattern's observations join it.
        """
        try:
            p, proj, scope = self._locate(pattern, project)
        except NotFoundError:              # no row left: the events of this project, else global
            p, _, _ = self._locate(pattern, "")
            here = project_fingerprint(self.cwd)
            seen = self._read("SELECT project FROM events WHERE pattern = ? AND pattern != ''"
                              " AND project IN (?, '') ORDER BY project = '' LIMIT 1", (p, here))
            proj = seen[0][0] if seen else ""
            scope = "global" if proj == "" else "project"
        cur = self._read("SELECT confidence, promoted FROM instincts WHERE pattern = ?"
                         " AND project = ?", (p, proj))
        ev = self._read("SELECT ts, kind, delta, session, source, data FROM events"
                        " WHERE pattern = :p AND project = :proj AND pattern != '' ORDER BY ts, id",
                        {"p": p, "proj": proj})
        if not cur and not ev:
            raise NotFoundError(f"no instinct or history for {p!r}"
                                + (f" in project {proj}" if proj else " (global)"))
        conf, promoted = cur[0] if cur else (0, None)
        running = conf
        out = []
        for ts, kind, delta, session, source, data in reversed(ev[-limit:]):
            d = 0 if kind == "merge" else delta
            if kind == "feedback":
                v = _loads_meta(data)
                detail = str(v.get("verdict", "")) + (f": {v['note']}" if v.get("note") else "")
            else:
                detail = (f"merged {data}" if kind == "merge" else
                          _Insight._level_change(data) if kind in ("promote", "demote") else "")
            out.append({"ts": ts, "kind": kind, "delta": d, "confidence": running,
                        "session": session, "source": source, "detail": detail})
            running -= d
        out.reverse()
        h = {"pattern": p, "project": proj, "scope": scope, "exists": bool(cur), "confidence": conf,
             "baseline": running, "count": len(ev), "events": out,
             "root": self._roots([proj]).get(proj, "")}
        if cur:
            h["level"] = LEVELS[promoted]
        return h

    @operation(
        Param("days", int, "a suggestion counts as reinforced when observed within this many days"
              " after", default=7, minimum=1, maximum=3650),
        Param("limit", int, "at most this many patterns in the per-pattern list", default=20,
              minimum=1, maximum=MAX_LIMIT),
        title="Effectiveness of suggestions", read_only=True, idempotent=True,
        output=_EFFECT, render=_render_effectiveness)
    def effectiveness(self, days=7, limit=20):
        """How many of the suggestions shown (suggest, briefing, resources) were followed.

        A showing is reinforced when the pattern is observed (or given good feedback) within
        `days` after it, missed when that window closed without one, pending while it is open;
        rate = reinforced / (reinforced + missed), absent while nothing is decided. `hints`:
        each hint and briefing item, shown or held back (`holdout_percent`), and its lift.
        """
        from bisect import bisect_right
        window, now = days * 86400, self._clock()
        shown = [(line.partition("\t")[0], ts) for ts, data in self._read(
            "SELECT ts, data FROM events WHERE kind = 'surface' ORDER BY ts")
            for line in data.split("\n") if line]
        hits = {}
        for p, ts in self._chunked(
                "SELECT pattern, ts FROM events WHERE pattern IN ({}) AND pattern != '' AND ("
                + _Core._SQL_OBSERVED + " OR (kind = 'feedback' AND delta > 0)) ORDER BY ts",
                sorted({p for p, _ in shown})):
            hits.setdefault(p, []).append(ts)
        per = {}
        total = dict.fromkeys(("surfaced", "reinforced", "missed", "pending"), 0)
        for p, ts in shown:
            t = _parse_iso(ts)
            if t is None:
                continue
            h = hits.get(p, ())
            i = bisect_right(h, ts)
            outcome = ("reinforced" if i < len(h) and h[i] <= _iso(t + window) else
                       "pending" if now - t < window else "missed")
            c = per.setdefault(p, dict.fromkeys(total, 0))
            for d in (c, total):
                d["surfaced"] += 1
                d[outcome] += 1
        for d in list(per.values()) + [total]:
            if d["reinforced"] + d["missed"]:
                d["rate"] = round(d["reinforced"] / (d["reinforced"] + d["missed"]), 4)
        pats = sorted(({"pattern": p, **c} for p, c in per.items()),
                      key=lambda r: (-r["surfaced"], r["pattern"]))
        return {"days": days, **total, "patterns": pats[:limit],
                "hints": self._effect(limit)}

    @operation(
        Param("pattern", str, "the pattern the feedback is about", required=True, positional=True),
        Param("verdict", str, "good (reinforce) or bad (lower it and keep it out of suggestions)",
              required=True, positional=True, choices=("good", "bad")),
        Param("note", str, "why (kept in the event log)", default=""),
        _Core._PROJECT_OF_ONE,
        title="Give feedback on a pattern", output=_FEEDBACK, learns=True,
        render=lambda r: (f"{r['verdict'].capitalize()} feedback on {r['pattern']}"
                          f" ({_Core._where(r)}): conf={r['confidence']} ({r['delta']:+d})"
                          + (f", not suggested until observed {r['quiet']} more time(s)"
                             if r["quiet"] else "")))
    def feedback(self, pattern, verdict, note="", project=None):
        """Confirm (good) or reject (bad) a learned pattern: a suggestion that helped or misled.

        good: +1 confidence, like an observation. bad: -1 (never below 1), not suggested again
        until observed `feedback_bad_quiet` more times (default 3). Both show in explain, history.
        """
        _check_text(note, "note", MAX_PATTERN)
        normalize_pattern(pattern)
        quiet = self._settings()["feedback_bad_quiet"] if verdict == "bad" else 0
        with self._write() as conn:
            p, proj, scope = self._locate(pattern, project, conn)
            rec = self._get_record(conn, p, proj)
            if rec is None:
                raise _Core._missing(p, proj)
            delta = 1 if verdict == "good" else -1 if rec["confidence"] > 1 else 0
            self._reinforce(conn, p, proj, source="", session=self.session, ts=self._now(),
                            delta=delta, kind="feedback",
                            data=_dumps({"verdict": verdict, "note": note}))
            conn.execute("UPDATE instincts SET quiet = ? WHERE pattern = ? AND project = ?",
                         (quiet, p, proj))
            root = conn.execute("SELECT root FROM projects WHERE fingerprint = ?",
                                (proj,)).fetchone()
            rec = self._get_record(conn, p, proj)
        if verdict == "good" and root:              # confirmed: its files as they are now, read
            item = {"pattern": p, "project": proj}  # outside a write (a FIFO never holds one)
            looked = _Anchors.look(self._db.conn, root[0], item)
            with self._write() as conn:
                _Anchors.reanchor(conn, root[0], item, looked=looked)
        return {**rec, "scope": scope, "verdict": verdict, "delta": delta, "quiet": quiet,
                "note": note}

    @operation(
        title="Preference conflicts", read_only=True, idempotent=True,
        output=_CONFLICT, list_key="conflicts", render=_render_conflicts)
    def conflicts(self):
        """Preferences `pref:KEY=VALUE` holding different values for one KEY in one project scope.

        The value reinforced last wins; the others are superseded (kept, never suggested).
        """
        groups = _Core._pref_groups(self._pref_rows())
        return [{"key": k, "project": proj, "winner": g[0][0],
                 "values": _Insight._pref_values(g)}
                for (k, proj), g in sorted(groups.items()) if len(g) > 1]


# =============================================================================
# 24. InstinctStore (the public class)
# =============================================================================
class InstinctStore(_History, _Sharing, _Insight):
    """The instinct memory: a SQLite file of patterns with confidence and levels.

    ``InstinctStore(path=None)`` opens ``path``, else ``$INSTINCT_DB``, else
    ``~/.instinct/instinct.db`` (a 0700 directory, a 0600 file), lazily on first use. Use it as
    a context manager or call ``close()``. `clock` (epoch seconds) and `cwd` (the directory
    whose project ``suggest()`` uses) exist for tests and servers.
    """


# `from instinct.store import InstinctStore`, the seeds' import, from this one file too
_store_module = type(sys)(("instinct" if __name__ == "__main__" else __name__) + ".store")
_store_module.InstinctStore = InstinctStore             # type: ignore[attr-defined]
sys.modules[_store_module.__name__] = _store_module


# =============================================================================
# 25. MCP stdio server
# =============================================================================
class _ToolReply(dict):
    """A successful tools/call result whose structuredContent is `text`, already encoded for
    the text copy. `_MCP.reply_line` splices that text in instead of encoding the object twice."""

    __slots__ = ("text",)
    KEYS = ("content", "isError", "structuredContent")

    def __init__(self, text, structured):
        super().__init__(content=[{"type": "text", "text": text}], isError=False,
                         structuredContent=structured)
        self.text = text


class _RpcError(Exception):
    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class _Server:
    """The MCP session state and dispatch; IO lives in serve()."""

    def __init__(self, store, lean=False):
        self.store = store
        self.lean = lean                   # list LEAN_TOOLS only (serve()'s default)
        store._db.set_checkpoint(WAL_SERVER_CHECKPOINT_PAGES)
        self.version = None                # negotiated protocol version, compared as a string
        self.cancelled = set()             # _MCP.id_key()s of requests the client cancelled

    def handle_line(self, line):
        """One input line (bytes, no newline) -> reply object/list, or None."""
        try:
            msg = _loads(line.decode("utf-8"), strict=True)
        except UnicodeDecodeError:             # a ValueError too: caught first
            return self._error(None, _MCP.PARSE_ERROR, "Parse error: input is not valid UTF-8")
        except (ValueError, RecursionError) as e:
            return self._error(None, _MCP.PARSE_ERROR, f"Parse error: {e}")
        if isinstance(msg, list):
            if self.version != "2025-03-26":
                return self._invalid(None, "batches are not supported in this protocol version")
            if not msg:
                return self._invalid(None, "empty batch")
            replies = [self._error(m.get("id") if _MCP.valid_id(m.get("id")) else None,
                                   _MCP.INVALID_REQUEST, "initialize must not be batched")
                       if isinstance(m, dict) and m.get("method") == "initialize"
                       else self.handle_message(m) for m in msg]
            return [r for r in replies if r is not None] or None
        return self.handle_message(msg)

    def _error(self, mid, code, message, data=None):
        err = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        reply = {"jsonrpc": "2.0", "id": mid, "error": err}
        if mid is None and self.version == "2025-11-25":
            del reply["id"]               # 2025-11-25: id is omitted when it could not be read
        return reply

    def _invalid(self, mid, why):
        return self._error(mid, _MCP.INVALID_REQUEST, "Invalid Request: " + why)

    def handle_message(self, msg):
        if not isinstance(msg, dict):
            return self._invalid(None, "expected a JSON object")
        has_id = "id" in msg
        mid = msg.get("id")
        if has_id and not _MCP.valid_id(mid):
            return self._invalid(None, "id must be a string or an integer")
        method = msg.get("method")
        if msg.get("jsonrpc") != "2.0":
            return self._invalid(mid, "jsonrpc must be \"2.0\"")
        if method is None and has_id and ("result" in msg or "error" in msg):
            return None                    # a response to a request we never send
        if not isinstance(method, str):
            return self._invalid(mid, "method must be a string")
        params = {} if msg.get("params") is None else msg["params"]
        if not has_id:                     # notification: never answered
            if self.cancelled and method == "notifications/cancelled" and type(params) is dict:
                self.cancelled.discard(_MCP.id_key(params.get("requestId")))   # later ids are new
            return None
        if self.cancelled and _MCP.id_key(mid) in self.cancelled:
            return None                    # cancelled before it was reached: no work, no reply
        if not isinstance(params, dict):
            return self._error(mid, _MCP.INVALID_PARAMS, "Invalid params: params must be an object")
        try:
            return {"jsonrpc": "2.0", "id": mid, "result": self.dispatch(method, params)}
        except _RpcError as e:
            return self._error(mid, e.code, e.message, e.data)
        except Exception as e:            # a bug: report it, keep serving
            import traceback
            _MCP.log("internal error:\n" + traceback.format_exc())
            return self._error(mid, _MCP.INTERNAL_ERROR, f"Internal error: {type(e).__name__}: {e}")

    def dispatch(self, method, params):
        if method == "initialize":             # a legacy session starts, envelope or not
            return self.initialize(params)
        meta = params.get("_meta")
        if type(meta) is dict:
            if _MCP.VERSION in meta:
                return self.modern(method, params, meta)
            if _MCP.CAPS in meta or _MCP.INFO in meta or _MCP.LOG in meta:
                raise _RpcError(_MCP.INVALID_PARAMS, f"Invalid params: _meta lacks {_MCP.VERSION}")
        if method == "server/discover":        # exists only in the modern era
            raise _RpcError(_MCP.INVALID_PARAMS, "Invalid params: server/discover needs _meta"
                            f" with {_MCP.VERSION} and {_MCP.CAPS}")
        if method == "ping":
            return {}
        if self.version is None:
            raise _RpcError(_MCP.INVALID_REQUEST, "server not initialized: send initialize first")
        handler = _MCP.METHODS.get(method)
        if handler is None:
            raise _RpcError(_MCP.METHOD_NOT_FOUND, f"Method not found: {method}")
        return handler(self, params)

    def initialize(self, params):
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            raise _RpcError(_MCP.INVALID_PARAMS, "Invalid params: protocolVersion must be a string")
        self.version = asked if asked in _MCP.PROTOCOL_VERSIONS else _MCP.PROTOCOL_VERSIONS[0]
        return {"protocolVersion": self.version, "capabilities": _MCP.CAPABILITIES,
                "serverInfo": dict(_MCP.SERVER_INFO), "instructions": _MCP.INSTRUCTIONS}

    def modern(self, method, params, meta):
        """A 2026-07-28 request: check the envelope, serve it statelessly, mark the result."""
        asked = _MCP.check_envelope(meta)
        handler = _MCP.MODERN_METHODS.get(method)
        if handler is None:
            raise _RpcError(_MCP.METHOD_NOT_FOUND, f"Method not found: {method}")
        legacy = self.version
        self.version = asked                  # nothing from earlier requests is used
        try:
            result = handler(self, params)
        finally:
            self.version = legacy
        result["resultType"] = "complete"
        if method in _MCP.CACHEABLE:
            result["ttlMs"], result["cacheScope"] = _MCP.CACHEABLE[method], "private"
        result["_meta"] = {_MCP.SERVER: _MCP.SERVER_INFO}
        return result

    def discover(self, params):
        return {"supportedVersions": list(_MCP.MODERN_VERSIONS),
                "capabilities": _MCP.CAPABILITIES, "instructions": _MCP.INSTRUCTIONS}

    def _check_cursor(self, params):
        if params.get("cursor") is not None:
            raise _RpcError(_MCP.INVALID_PARAMS, "Invalid params: unknown cursor")

    def tools_list(self, params):
        self._check_cursor(params)
        tools, full = [], not self.lean
        for op in _MCP.TOOLS.values():
            if not full and op.mcp not in _MCP.LEAN_TOOLS:
                continue
            help = _MCP.TOOL_HELP.get(op.mcp) or (op.summary + " " + (op.description or "")).strip()
            t = {"name": op.mcp, "description": help, "inputSchema": op.input_schema()}
            if self.version >= "2025-06-18":
                t["title"] = op.title
                if full:                          # optional; left out to keep the list small
                    t["outputSchema"] = op.output_schema()
            if self.version >= "2025-03-26":
                t["annotations"] = {"title": op.title, "readOnlyHint": bool(op.read_only),
                                    "destructiveHint": bool(op.destructive),
                                    "idempotentHint": bool(op.idempotent), "openWorldHint": False}
            tools.append(t)
        return {"tools": tools}

    def tools_call(self, params):
        name = params.get("name")
        if not isinstance(name, str):
            raise _RpcError(_MCP.INVALID_PARAMS, "Invalid params: tools/call needs a string 'name'")
        op = _MCP.TOOLS.get(name)
        if op is None:
            raise _RpcError(_MCP.INVALID_PARAMS, f"Unknown tool: {name}")
        args = {} if params.get("arguments") is None else params["arguments"]
        if not isinstance(args, dict):
            raise _RpcError(_MCP.INVALID_PARAMS, "Invalid params: 'arguments' must be an object")
        try:
            kwargs, page, size = op.page(self.store, args) if op.paged else (op.coerce(args), 0, 0)
            result = op.run(self.store, kwargs)         # checked once, above
        except InstinctError as e:
            return {"content": [{"type": "text", "text": _shown(f"Error: {e}")}], "isError": True}
        except Exception as e:            # a tool failure must not kill the session
            import traceback
            _MCP.log(f"tool {name} failed:\n" + traceback.format_exc())
            return {"content": [{"type": "text", "text": f"Error: {type(e).__name__}: {e}"}],
                    "isError": True}
        more = None
        if op.paged and isinstance(result, list):
            more = len(result) > page + size
            result = result[page:page + size]
        structured = op.structured(result)
        if not isinstance(structured, dict):        # export_rules' markdown text
            structured = {"text": structured if isinstance(structured, str) else _dumps(structured)}
        if more:
            structured["nextCursor"] = Operation._cursor_token(page + len(result))
            structured["note"] = ("More results: call again with the same arguments and "
                                  "cursor=nextCursor for the next page.")
        text = _dumps(structured)
        if len(text) * 13 + 200 > _MCP.max_reply():     # could a reply outgrow the budget?
            text, structured = _MCP.fit_reply(op, structured, text,
                                              page if more is not None else None)
            if text is None:
                return {"content": [{"type": "text", "text": _shown(structured)}], "isError": True}
        text = _shown(text)
        if self.version < "2025-06-18":       # structuredContent exists from 2025-06-18
            return {"content": [{"type": "text", "text": text}], "isError": False}
        return _ToolReply(text, structured)

    def resources_list(self, params):
        self._check_cursor(params)
        titled = self.version >= "2025-06-18"
        return {"resources": [dict({"uri": uri, "name": name, "description": desc,
                                    "mimeType": "application/json"},
                                   **({"title": title} if titled else {}))
                              for uri, name, title, desc in _MCP.RESOURCES]}

    def templates_list(self, params):
        self._check_cursor(params)
        return {"resourceTemplates": []}

    def resources_read(self, params):
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise _RpcError(_MCP.INVALID_PARAMS,
                            "Invalid params: resources/read needs a string 'uri'")
        s = self.store
        try:
            if uri == "instinct://suggestions":
                data = s.suggest()
                md = s._briefing(s.cwd) or "No learned habits for this project yet.\n"
                data = {"suggestions": data, "count": len(data)}
            elif uri == "instinct://rules":
                rules = s.export_rules()
                data, md = {"rules": rules, "count": len(rules)}, _Out.render_markdown(rules)
            elif uri == "instinct://stats":
                data = s.stats()
                md = "```\n" + _Out.render_stats(data) + "\n```\n"
            else:                              # the stateless revision made it -32602
                code = (_MCP.INVALID_PARAMS if self.version in _MCP.MODERN_VERSIONS
                        else _MCP.RESOURCE_NOT_FOUND)
                raise _RpcError(code, f"Resource not found: {uri}", {"uri": uri})
        except InstinctError as e:
            raise _RpcError(_MCP.INTERNAL_ERROR, f"could not read {uri}: {e}") from None
        return {"contents": [{"uri": uri, "mimeType": "application/json",
                              "text": _shown(_dumps(data))},
                             {"uri": uri, "mimeType": "text/markdown", "text": _shown(md)}]}

    def prompts_list(self, params):
        self._check_cursor(params)
        p = dict(_MCP.PROMPT)
        if self.version < "2025-06-18":
            del p["title"]
        return {"prompts": [p]}

    def prompts_get(self, params):
        if params.get("name") != _MCP.PROMPT["name"]:
            raise _RpcError(_MCP.INVALID_PARAMS, f"Unknown prompt: {params.get('name')}")
        args = params.get("arguments") or {}
        if not isinstance(args, dict) or not all(isinstance(v, str) for v in args.values()):
            raise _RpcError(_MCP.INVALID_PARAMS, "Invalid params: prompt arguments must be strings")
        project = args.get("project") or None
        try:
            proj = _resolve_project(project, self.store.cwd)
        except InstinctError as e:
            raise _RpcError(_MCP.INVALID_PARAMS, f"Invalid params: {e}") from None
        cwd = project if project and not _is_fingerprint(project) else self.store.cwd
        text = self.store._briefing(cwd if project_fingerprint(cwd) == proj else None, project=proj)
        return {"description": _MCP.PROMPT["description"],
                "messages": [{"role": "user", "content": {
                    "type": "text", "text": "# Session briefing\n\n"
                    + _shown(text or "No learned habits for this project yet.")}}]}


class _Input:
    """stdin lines from the raw descriptor, with a look-ahead: before a reply is written, poll()
    reads what the client already sent (bounded), so that a request it cancelled gets no reply."""

    AHEAD = 1 << 20                        # bytes of look-ahead kept at most

    def __init__(self, fd, cancelled):
        self.fd, self.cancelled = fd, cancelled
        self.buf, self.pos, self.scanned = bytearray(), 0, 0

    def readline(self, limit):
        buf = self.buf
        while buf.find(b"\n", self.pos, self.pos + limit) < 0 and len(buf) - self.pos < limit:
            if self.pos:
                del buf[:self.pos]
                self.scanned = max(0, self.scanned - self.pos)
                self.pos = 0
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                break
            buf += chunk
        i = buf.find(b"\n", self.pos, self.pos + limit)
        end = i + 1 if i >= 0 else min(len(buf), self.pos + limit)
        line = bytes(buf[self.pos:end])
        self.pos = end
        return line

    def poll(self):
        """Read what is already waiting (never blocks) and note the cancellations in it."""
        import select                      # on the first reply, not at start-up
        buf = self.buf
        try:
            while len(buf) - self.pos < self.AHEAD and select.select([self.fd], [], [], 0)[0]:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    break
                buf += chunk
        except (OSError, ValueError):
            return
        start = max(self.pos, self.scanned)
        if buf.find(b"notifications/cancelled", start) < 0:
            self.scanned = max(start, len(buf) - 64)
            return
        end = buf.rfind(b"\n") + 1
        for line in bytes(buf[start:end]).split(b"\n"):
            if b"notifications/cancelled" in line:
                try:
                    msg = _loads(line.decode("utf-8"), strict=True)
                    if msg.get("method") == "notifications/cancelled" and "id" not in msg:
                        key = _MCP.id_key(msg["params"].get("requestId"))
                        if key:
                            self.cancelled.add(key)
                except (ValueError, AttributeError, TypeError, KeyError, RecursionError):
                    pass                   # malformed cancellations are ignored
        self.scanned = max(self.scanned, end)


class _MCP:
    """The MCP protocol: versions, error codes, size limits, what is offered, envelope checks."""

    PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")   # newest first
    # The stateless revision: no initialize; version and capabilities ride in every request's
    # _meta (the "envelope"). Which era a request belongs to is decided per request.
    MODERN_VERSIONS = ("2026-07-28",)
    VERSION = "io.modelcontextprotocol/protocolVersion"
    CAPS = "io.modelcontextprotocol/clientCapabilities"
    INFO = "io.modelcontextprotocol/clientInfo"
    LOG = "io.modelcontextprotocol/logLevel"
    SERVER = "io.modelcontextprotocol/serverInfo"
    LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
    UNSUPPORTED_VERSION = -32022
    MAX_LINE = 16 * 1024 * 1024
    MAX_REPLY = 1024 * 1024  # bytes per tool reply line (INSTINCT_MCP_MAX_REPLY)
    PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND = -32700, -32600, -32601
    INVALID_PARAMS, INTERNAL_ERROR, RESOURCE_NOT_FOUND = -32602, -32603, -32002
    INSTRUCTIONS = (
        "instinct is this user's learned-habit memory. At the start of every task call `suggest` "
        "(or read instinct://suggestions) and follow the mature and rule patterns it returns; "
        "rules are strong habits, mature ones are good defaults. Whenever you notice a recurring "
        "pattern, call `observe` with a prefixed name: `seq:` a tool/action sequence "
        "(seq:test->fix->test), `pref:` a user preference (pref:stdlib-first, pref:style=black), "
        "`fix:` a recurring fix (fix:missing-import), `combo:` tools used together "
        "(combo:pytest+coverage). Reuse the exact spelling of existing patterns (see "
        "`search_instincts`). Confidence 5 makes a pattern mature, 10 a rule. Call `feedback` when "
        "a suggestion helped or misled. For knowledge rather than habits "
        "(\"this repo uses Vitest\", a decision and why), call `memory_recall` with a few words "
        "before answering, and `memory_store` when you learn a durable fact, with why and how to "
        "apply it.")
    # The tools listed by default: what an agent needs in a session. Every tool stays callable;
    # INSTINCT_MCP_TOOLS=all lists all of them (housekeeping, export, backup, insight...).
    LEAN_TOOLS = ("suggest", "observe", "consolidate", "decay", "search_instincts", "feedback",
                  "memory_recall", "memory_store", "memory_forget")
    TOOL_HELP = {                      # for the model: what each tool is for, when to call it
        "suggest": "The user's learned habits and rules for this project, strongest first. Call it "
                   "at the start of every task and follow what it returns.",
        "observe": "Record one more occurrence of a habit: seq: a tool/action sequence, pref: a "
                   "user preference, fix: a recurring fix, combo: tools used together. Call it "
                   "whenever you notice a recurring pattern, reusing the exact spelling of known "
                   "ones.",
        "consolidate": "Promote patterns that reached their thresholds (5 mature, 10 rule) and "
                       "demote weakened ones. Call it after a batch of observe calls.",
        "decay": "Let patterns unseen for a while lose confidence; the weakest disappear. Call it "
                 "now and then, or when suggestions feel stale.",
        "search_instincts": "Find learned patterns by words. Call it before observe to reuse an "
                            "existing pattern's spelling, or to see what is known about a topic.",
        "feedback": "Say whether a learned pattern helped (good) or misled (bad); bad keeps it out "
                    "of suggestions for a while. Call it when a suggestion proved right or wrong.",
        "memory_recall": "The stored memories most relevant to a few words, best first. Call it "
                         "before answering or starting work that may depend on earlier facts or "
                         "decisions.",
        "memory_store": "Save durable knowledge (a user preference, feedback on how to work, a "
                        "project fact, a reference, or an episode) with why and how to apply it. "
                        "Call it when you learn something worth knowing next session; the same "
                        "knowledge stored again is reinforced.",
        "memory_forget": "Delete a memory by id for good. Call it when the user says a stored "
                         "memory is wrong or should be dropped.",
    }

    RESOURCES = (("instinct://suggestions", "suggestions", "Current suggestions",
                  "Mature, rule and universal patterns for this server's project"),
                 ("instinct://rules", "rules", "Learned rules", "Patterns with confidence >= 10"),
                 ("instinct://stats", "stats", "Store statistics", "Counts by level and category"))
    PROMPT = {"name": "session_briefing", "title": "Session briefing",
              "description": "Learned habits and rules to keep in mind for this session",
              "arguments": [{"name": "project", "required": False,
                             "description": "project path or fingerprint (default: the server's)"}]}

    @staticmethod
    def reply_line(reply):
        """A reply object (or batch list) -> its protocol line: compact, pure-ASCII JSON (other
        characters escaped, the safest choice for every client) and a newline."""
        enc = _encoder(None, True).encode
        res = reply.get("result") if type(reply) is dict else None
        if type(res) is _ToolReply and len(reply) == 3 and res.text.isascii():
            # ASCII text is exactly what encoding structuredContent here would give: splice it
            more = "".join(",%s:%s" % (enc(k), enc(v)) for k, v in res.items()
                           if k not in _ToolReply.KEYS) if len(res) > 3 else ""
            return ('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}],'
                    '"isError":false,"structuredContent":%s%s}}\n'
                    % (mid if type(mid := reply["id"]) is int else enc(mid), enc(res.text),
                       res.text, more)).encode("ascii")
        return (enc(reply) + "\n").encode("ascii")

    @staticmethod
    def log(msg):
        try:
            sys.stderr.write(f"instinct: {msg}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass

    METHODS = {"tools/list": _Server.tools_list, "tools/call": _Server.tools_call,
               "resources/list": _Server.resources_list, "resources/read": _Server.resources_read,
               "resources/templates/list": _Server.templates_list,
               "prompts/list": _Server.prompts_list, "prompts/get": _Server.prompts_get}
    # 2026-07-28: ping, logging/setLevel and resources/(un)subscribe are gone; discover is new
    MODERN_METHODS = dict(METHODS, **{"server/discover": _Server.discover})
    STATIC_TTL = 3600 * 1000                   # lists fixed for the process's life
    CACHEABLE = {"server/discover": STATIC_TTL, "tools/list": STATIC_TTL,
                 "prompts/list": STATIC_TTL, "resources/list": STATIC_TTL,
                 "resources/templates/list": STATIC_TTL, "resources/read": 0}
    SERVER_INFO = {"name": "instinct", "title": "instinct", "version": __version__}

    @staticmethod
    def check_envelope(meta):
        """A 2026-07-28 request's _meta envelope -> its protocol version; every malformed field is
        refused (-32602, naming it). An unsupported version is -32022 once the version and the
        capabilities are there: the rest of the envelope may differ in another revision."""
        def bad(key, what):
            raise _RpcError(_MCP.INVALID_PARAMS, f"Invalid params: _meta {key} must be {what}")
        if _MCP.CAPS not in meta:
            raise _RpcError(_MCP.INVALID_PARAMS,
                            f"Invalid params: _meta lacks {_MCP.CAPS} (an object)")
        caps, asked = meta[_MCP.CAPS], meta[_MCP.VERSION]
        if not isinstance(asked, str):
            bad(_MCP.VERSION, "a string")
        if type(caps) is not dict:
            bad(_MCP.CAPS, "an object")
        if asked not in _MCP.MODERN_VERSIONS:
            raise _RpcError(_MCP.UNSUPPORTED_VERSION, "Unsupported protocol version",
                            {"supported": list(_MCP.MODERN_VERSIONS), "requested": asked})
        for k, v in caps.items():                  # every capability the schema names is an object
            if type(v) is not dict:
                bad(f"{_MCP.CAPS}.{k}", "an object")
        if _MCP.INFO in meta:                        # optional; an Implementation when sent
            info = meta[_MCP.INFO]
            if type(info) is not dict:
                bad(_MCP.INFO, "an object with a name and a version")
            for k in ("name", "version", "title", "description", "websiteUrl"):   # 2 required
                if (k in info or k in ("name", "version")) and not isinstance(info.get(k), str):
                    bad(f"{_MCP.INFO}.{k}", "a string")
            if "icons" in info and type(info["icons"]) is not list:
                bad(f"{_MCP.INFO}.icons", "an array")
        if _MCP.LOG in meta and meta[_MCP.LOG] not in _MCP.LOG_LEVELS:
            bad(_MCP.LOG, "one of: " + ", ".join(_MCP.LOG_LEVELS))
        token = meta.get("progressToken", "")
        if type(token) is bool or not isinstance(token, (str, int, float)):
            bad("progressToken", "a string or a number")
        return asked

    CAPABILITIES = {"tools": {"listChanged": False},
                    "resources": {"subscribe": False, "listChanged": False},
                    "prompts": {"listChanged": False}}
    TOOLS = {op.mcp: op for op in OPERATIONS.values()}          # MCP tool name -> Operation

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def max_reply():
        """The reply budget in bytes, read from INSTINCT_MCP_MAX_REPLY once per process."""
        try:
            return max(4096, int(os.environ.get("INSTINCT_MCP_MAX_REPLY") or _MCP.MAX_REPLY))
        except ValueError:
            return _MCP.MAX_REPLY

    @staticmethod
    def _reply_size(text, structured):
        """Bytes of the tools/call reply line around `text` and `structured` (pure-ASCII JSON)."""
        enc = _encoder(None, True).encode
        return len(enc(text)) + (len(text) if text.isascii() else len(enc(structured))) + 200

    @staticmethod
    def fit_reply(op, structured, text, offset):
        """Cut the longest list of a result until its reply fits the byte budget, saying so (and,
        for a list tool, where the next page starts). -> (text, structured), or (None, message)."""
        budget = _MCP.max_reply()
        while _MCP._reply_size(text, structured) > budget:
            holder, key, longest = None, None, 0
            for k, v in structured.items():  # the longest list, at the top or one level down
                for h, kk, vv in [(structured, k, v)] + ([(v, k2, v2) for k2, v2 in v.items()]
                                                         if isinstance(v, dict) else []):
                    if isinstance(vv, list) and len(vv) > longest:
                        holder, key, longest = h, kk, len(vv)
            if longest <= 1:
                return None, (f"Error: the result is larger than the {budget}-byte reply budget; "
                              "narrow the query (filters, a smaller limit)")
            keep = max(1, longest * budget * 9 // (_MCP._reply_size(text, structured) * 10))
            keep = min(keep, longest - 1)
            holder[key] = holder[key][:keep]
            if holder is structured and key == op.list_key and offset is not None:
                structured["count"] = keep
                structured["nextCursor"] = Operation._cursor_token(offset + keep)
                structured["note"] = (f"Cut to {keep} results to stay under {budget} bytes: "
                                      "call again with the same arguments and cursor=nextCursor "
                                      "for the rest.")
            else:
                structured["note"] = (f"Cut '{key}' to its first {keep} entries to stay under "
                                      f"{budget} bytes; ask for less (a smaller limit) to see it "
                                      "whole.")
            text = _dumps(structured)
        return text, structured

    @staticmethod
    def id_key(mid):
        return (type(mid) is str, mid) if _MCP.valid_id(mid) else None

    @staticmethod
    def valid_id(mid):
        return isinstance(mid, str) or (isinstance(mid, int) and not isinstance(mid, bool))


def serve(store=None):
    """Run the MCP stdio server until stdin closes; returns the exit status (0). Protocol lines go
    to a private duplicate of fd 1, and fd 1 itself is pointed at stderr, so stray prints,
    warnings and child processes can never corrupt the channel."""
    import signal
    if store is None:
        store = InstinctStore()
    if store.cwd is None:
        store.cwd = (os.environ.get("INSTINCT_PROJECT_DIR") or os.environ.get("CLAUDE_PROJECT_DIR")
                     or None)
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb")       # buffered: retries partial pipe writes
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    inp = sys.stdin.buffer
    try:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    except ValueError:                     # not the main thread (tests)
        pass
    all_tools = os.environ.get("INSTINCT_MCP_TOOLS", "").strip().lower() in ("all", "full")
    server = _Server(store, lean=not all_tools)
    ahead = None
    if os.name != "nt":                    # select() works on pipes only on POSIX
        try:
            ahead = inp = _Input(inp.fileno(), server.cancelled)
        except (AttributeError, OSError, ValueError):
            pass                           # a stdin without a descriptor
    try:
        while True:
            line = inp.readline(_MCP.MAX_LINE + 1)
            if not line:
                break
            if len(line) > _MCP.MAX_LINE and not line.endswith(b"\n"):
                chunk = line               # discard the rest of an oversized line
                while chunk and not chunk.endswith(b"\n"):
                    chunk = inp.readline(1 << 20)
                _MCP.log(f"dropped an input line longer than {_MCP.MAX_LINE} bytes")
                reply = server._invalid(None, "line too long")
            else:
                line = line.rstrip(b"\r\n")
                if not line.strip():
                    continue
                reply = server.handle_line(line)
            if reply is None:
                continue
            if ahead is not None and type(reply) is dict:
                ahead.poll()               # cancelled while it ran? then it gets no reply
                if server.cancelled and _MCP.id_key(reply.get("id")) in server.cancelled:
                    continue
            out.write(_MCP.reply_line(reply))
            out.flush()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    finally:
        store.close()
    return 0


# =============================================================================
# 26. Hooks (`instinct hook EVENT`)
# =============================================================================
class _Hook:
    """The hook entry point (`instinct hook EVENT`): what one hook call becomes. It imports nothing
    heavy, stores a short safe summary (never contents, prompts or output) and exits 0
    whatever happens, never blocking the agent."""

    @staticmethod
    def run_hook(argv, stdin=None, stdout=None, close=True):
        """`instinct hook EVENT [--db PATH]`: exits 0 whatever happens; one stderr line on error."""
        try:
            _Hook._handle(argv, stdin, stdout or sys.stdout, close)
        except KeyboardInterrupt:
            pass
        except Exception as e:                 # noqa: BLE001 - a hook never breaks the agent
            _Hook._say(f"{type(e).__name__}: {e}", True)
        return 0

    @staticmethod
    def _say(msg, always=False):
        """One line on stderr (always, or with INSTINCT_DEBUG set)."""
        if always or os.environ.get("INSTINCT_DEBUG", "") not in ("", "0"):
            try:
                sys.stderr.write("instinct hook: " + " ".join(str(msg).split())[:400] + "\n")
            except (OSError, ValueError, AttributeError):
                pass

    @staticmethod
    def _handle(argv, stdin, stdout, close):
        say = _Hook._say

        def answer(event_name, text):
            if text:
                import json
                row = CLIENTS[client]
                name = next((n for n, e, _, _ in row.events if e == event), event_name)
                key = "additional_context" if row.answer == "snake" else "additionalContext"
                out = {"hookSpecificOutput": {"hookEventName": name, key: _shown(text)}}
                stdout.write(json.dumps(out if row.answer == "hso" else {key: _shown(text)}) + "\n")
        db, args = _Hook.take_db(list(argv))
        client = args.pop(args.index("--client") + 1) if "--client" in args[:-1] else ""
        args = [a for a in args if a != "--client"]
        if client not in CLIENTS:
            say(f"unknown client {client!r}; expected one of: {', '.join(CLIENTS)}", client)
            client = "claude-code"
        event = args[0] if args else None
        for a in args[1:]:
            say(f"ignoring unexpected argument {a!r}", True)
        try:
            stream = stdin or sys.stdin.buffer
            try:            # a client written in Node hands a non-blocking pipe: one read would
                os.set_blocking(stream.fileno(), True)       # stop at what it holds (64 KiB)
            except (AttributeError, OSError, ValueError):    # not a file (a test's BytesIO)
                pass
            raw = stream.read(HOOK_INPUT_MAX + 1)
            if len(raw) > HOOK_INPUT_MAX:
                raise ValueError("the payload is larger than"
                                 f" {HOOK_INPUT_MAX // (1024 * 1024)} MiB")
            payload = _loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
            if not isinstance(payload, dict):
                raise ValueError("the payload is not a JSON object")
            payload = _Capture.normal(payload, client)
        except (ValueError, OSError, RecursionError) as e:
            say(f"unreadable hook input ({type(e).__name__}: {str(e)[:200]});"
                " nothing recorded", True)
            return
        named = payload.get("hook_event_name")
        typed = (event or (named if isinstance(named, str) else "") or "")[:64]
        event = _Capture.HOOK_EVENTS.get(typed.replace("-", "").replace("_", "").lower())
        if event is None:
            say(f"unknown hook event {_shown(typed) or '(none)'}; expected one of:"
                f" {', '.join(_Capture.HOOK_EVENTS.values())}", True)
            return
        cwd = _Capture.hook_cwd(payload)
        if cwd is None and "cwd" in payload:
            say(f"skipped {event}: the payload's cwd is not a usable path", True)
            return
        cwd = cwd or os.getcwd()
        reason = _disabled_reason(payload, cwd)
        if reason:
            say(f"skipped {event}: {reason}")
            return
        if (event == "user-prompt-submit"
                and not _Capture.reads_like_correction(payload.get("prompt"))):
            return                             # nothing stored
        session = _Capture.safe_session(payload.get("session_id"))
        store = InstinctStore(db, timeout=_Capture.HOOK_TIMEOUT_S)
        try:
            store._on_hook(event, payload, cwd, session, say, answer)
        except InstinctError as e:
            say(f"{event}: {e}", True)
        except sqlite3.Error as e:
            say(f"{event}: database error: {e}", True)
        finally:
            if close:                          # a hook process skips the close-time checkpoint
                store.close()

    @staticmethod
    def take_db(argv):
        """argv -> (the --db value or None, argv without it): --db read once, without argparse."""
        db, rest, i = None, [], 0
        while i < len(argv):
            if argv[i] == "--db" and i + 1 < len(argv):
                db, i = argv[i + 1], i + 1
            elif argv[i].startswith("--db="):
                db = argv[i][5:]
            else:
                rest.append(argv[i])
            i += 1
        return db, rest


# =============================================================================
# 27. CLI
# =============================================================================
class _CLI:
    """The command line: argparse from the operation table, a fast path, one-line usage errors."""

    EXTRAS = {                     # not store operations: name -> (help, [(args, kwargs)])
        "serve": ("run the MCP stdio server (newline-delimited JSON-RPC 2.0)", []),
        "hook": ("record an agent hook event read as JSON on stdin (always exits 0)",
                 [(("event",), {"help": " or ".join(", ".join(_Capture.HOOK_EVENTS.values())
                                                     .rsplit(", ", 1))}),
                  (("--client",), {"choices": tuple(CLIENTS), "help": "who runs the hook (default: "
                                   "told by the payload, else claude-code)"})]),
        "setup": ("print (or --write) the MCP server and hook config for an agent",
                  [(("client",), {"metavar": "|".join(_Setup.CLIENTS)}),     # checked by setup_cli
                   (("--write",), {"action": "store_true",
                                   "help": "merge into the config files (backup: store folder)"}),
                   (("--scope",), {"choices": ("user", "project"), "default": "user",
                                   "help": "user-wide config or this project's (default: user)"}),
                   (("--all-tools",), {"action": "store_true",
                                       "help": "list every tool, not only the lean session set"}),
                   (("--remove",), {"action": "store_true",
                                    "help": "take out what setup wrote, only that"
                                            " (keeps a backup)"})]),
        "init": ("wire an agent (setup --write) and learn from its past sessions (import-history)",
                 [(("client",), {"choices": _Setup.CLIENTS, "nargs": "?",
                                 "help": "default: each agent whose folder is here"})]),
    }
    GROUPS = (("start", "init setup import-history"),   # `instinct --help`, a new user's order
              ("see what was learned", "suggest list search get explain history stats projects "
               "effectiveness conflicts recall memories get-memory"),
              ("correct it", "observe feedback forget unforget merge config remember "
               "forget-memory restore-memory"),
              ("share it", "export import export-memories import-memories"),
              ("maintain", "consolidate decay mine memory-decay gc doctor lint backup restore "
               "purge"),
              ("agent plumbing", "hook serve"))
    START = ("Self-learning memory for AI coding agents. Start here:\n"
             "  instinct init          wire Claude Code / Codex, learn from past sessions\n"
             "  instinct suggest       what was learned for the project you are in\n"
             "  instinct --help        every command, by task\n")

    @staticmethod
    def json_object_arg(text):
        import argparse
        import json
        try:
            v = json.loads(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(f"not valid JSON: {e}") from None
        if not isinstance(v, dict):
            raise argparse.ArgumentTypeError("must be a JSON object, e.g. '{\"why\": \"...\"}'")
        return v

    COMMANDS = {op.cli: op for op in OPERATIONS.values()}     # subcommand -> Operation

    METAVARS = {int: "N", dict: "JSON", "write": "PATH", "path": "PATH"}  # by type, else name

    @staticmethod
    def metavar(p):
        """How help and usage show a Param's value: by its type, else its name (PATH, WHEN, ID)."""
        if p.positional:
            return p.name.upper()
        return _CLI.METAVARS.get(p.type) or _CLI.METAVARS.get(p.name, p.name.upper())

    @staticmethod
    def _name(p):
        """How a CLI error names a Param: as argparse's own errors do (`argument --days:`)."""
        return f"argument {_CLI.metavar(p) if p.positional else p.flag}:"

    @staticmethod
    def _fast_args(argv):
        """Parse the common forms of `[--db P] [--json] COMMAND args` from the Params without
        argparse (a few ms a process); None means "let argparse decide" (help, errors, the rest)."""
        db, argv = _Hook.take_db(argv)
        as_json, i = False, 0
        op, positional, kwargs = None, [], {}
        while i < len(argv):
            a = argv[i]
            i += 1
            if a == "--json":
                as_json = True
            elif op is None:
                op = _CLI.COMMANDS.get(a)
                if op is None:
                    return None
                flags = {p.flag: p for p in op.params if not p.positional}
            elif a.startswith("-"):
                name, eq, value = a.partition("=")
                p = flags.get(name)
                if p is not None and p.type is bool and not eq:  # a store_true flag takes no value
                    kwargs[p.name] = True
                    continue
                if p is None or p.type is bool or (not eq and i >= len(argv)):
                    return None
                if not eq:
                    value, i = argv[i], i + 1
                kwargs[p.name] = value
            else:
                positional.append(a)
        if op is None:
            return None
        pos = [p for p in op.params if p.positional]
        if len(positional) > len(pos) or any(p.required for p in pos[len(positional):]):
            return None
        kwargs.update((p.name, v) for p, v in zip(pos, positional))
        for p in op.params:
            if p.name not in kwargs:
                kwargs[p.name] = p.default
                continue
            v = kwargs[p.name]
            if p.type is int:
                v = _whole(v)
            elif p.type is dict:
                try:
                    v = _loads(v)
                except ValueError:
                    return None
            if not isinstance(v, p.type) or (p.choices and v not in p.choices):
                return None
            kwargs[p.name] = v
        return op, kwargs, db, as_json

    @staticmethod
    def exit_now(code):
        """Flush stdout and stderr, then end the process: no teardown, no close-time checkpoint."""
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        os._exit(code)

    @staticmethod
    def cli(argv, close=True):
        if "--briefing" in argv and [a for a in _Hook.take_db(argv)[1] if a[:1] != "-"][:1] == [
                "explain"]:                                 # `explain --briefing`: its operation
            argv = [a for a in argv if a != "--briefing"]
            argv[argv.index("explain")] = "explain-briefing"
        db, rest = _Hook.take_db(argv)
        if rest[:1] == ["hook"] and "-h" not in rest and "--help" not in rest:
            return _Hook.run_hook(argv[argv.index("hook") + 1:] if argv[:1] == ["hook"] else
                                  rest[1:] + ["--db", db], close=close)   # hot path: no argparse
        if db == "":
            sys.stderr.write("instinct: error: --db needs a path, not an empty value\n")
            return 2
        if rest == ["serve"]:                         # clients spawn it per window
            return serve(InstinctStore(db))
        fast = _CLI._fast_args(argv)
        if fast is not None:                          # (op, kwargs, db, as_json)
            return _CLI._run_op(*fast, close)
        word = next((a for a in rest if a[:1] != "-"), None)
        known = list(_CLI.COMMANDS) + list(_CLI.EXTRAS)
        if word is not None and word not in known:
            return _CLI._usage_error(f"unknown command {word!r}", word, known,
                                    "(instinct --help lists them)")
        args, extra = build_parser(argv).parse_known_args(argv)
        if extra:
            op = getattr(args, "_op", None)
            flags = ([p.flag for p in op.params if not p.positional] if op else
                     [a[0] for a, _ in _CLI.EXTRAS.get(args.command, ("", ()))[1]
                      if a[0][:1] == "-"])
            return _CLI._usage_error(f"unrecognized arguments: {' '.join(extra)}",
                                    extra[0].partition("=")[0], flags + ["--db", "--json"],
                                    f"(see instinct {args.command or ''} --help)")
        if not args.command:
            sys.stdout.write(_CLI.START)
            return 0
        db = getattr(args, "db", None)
        try:
            if args.command == "serve":
                return serve(InstinctStore(db))
            if args.command == "hook":                 # an odd form (`--json hook ...`)
                return _Hook.run_hook([args.event] + (["--db", db] if db else [])
                                      + (["--client", args.client] if args.client else []),
                                      close=close)
            if args.command == "setup":
                return _CLI._setup_cli(args, db)
            if args.command == "init":
                return _CLI._init_cli(args, db, close)
        except InstinctError as e:
            sys.stderr.write(f"instinct: error: {e}\n")
            return e.exit_code
        kwargs = {p.name: getattr(args, p.name) for p in args._op.params}  # defaults: the Params'
        return _CLI._run_op(args._op, kwargs, db, getattr(args, "json", False), close)

    @staticmethod
    def _usage_error(message, word, names, otherwise):
        """Print the one line of a usage error, with the closest name to `word`; returns 2."""
        import difflib
        close = difflib.get_close_matches(word, names, n=1)
        hint = f"(did you mean {close[0]!r}?)" if close else otherwise
        sys.stderr.write(f"instinct: error: {message} {' '.join(hint.split())}\n")
        return 2

    @staticmethod
    def _setup_cli(args, db):
        """`instinct setup CLIENT [--write | --remove]`: what would change, or what was done (the
        keys setup owns, never the rest of a file), on stdout."""
        if args.client not in _Setup.CLIENTS:
            return _CLI._usage_error(f"unknown client {args.client!r}", args.client,
                                    _Setup.CLIENTS, f"(choose from: {', '.join(_Setup.CLIENTS)})")
        as_json, dry = getattr(args, "json", False), not (args.write or args.remove)
        results = setup(args.client, write=args.write, scope=args.scope, all_tools=args.all_tools,
                        remove=args.remove, db=db or os.environ.get("INSTINCT_DB"))
        out = [_dumps([{k: v for k, v in r.items() if k != "content"} for r in results],
                      indent=2)] if as_json else []
        for r in [] if as_json else results:
            done = (("deleted" if r["content"] is None else "took instinct out of" if r["changed"]
                     else "nothing of instinct's in") if args.remove
                    else "wrote" if r["changed"] else "unchanged")
            via = f" (a link: edited {r['target']})" if os.path.islink(r["path"]) else ""
            out.append(f"{r['path']}{via}: " + ("would change" if r["changed"] else
                                                 "nothing to change") if dry else
                       f"{done} {r['path']}{via}"
                       + (f" (previous version in {r['backup']})" if r["backup"] else ""))
            for c in r["changes"]:                    # a value shown is always setup's own
                v = c.get("value") if dry else None
                out.append(f"  {'-+'[c['op'] == 'add']} {c['key']}" + ("" if v is None else ": " + (
                    v.rstrip("\n").replace("\n", "\n    ") if isinstance(v, str) else _dumps(v))))
        if dry and not as_json and any(r["changed"] for r in results):
            out.append("nothing written; run again with --write")
        notes = [] if args.remove or as_json else (        # --json: the JSON alone
            ["this client gets no hooks, so nothing is learned from its sessions; use instinct's "
             "MCP tools (observe, suggest) in them"] * (not any(r["hooks"] for r in results))
            + [n for n in _Setup.notes(args.client, args.scope, project_root())
               if not (getattr(args, "init", False) and "import-history" in n)])  # init runs it
        sys.stdout.write("".join(x + "\n" for x in out + [f"note: {n}" for n in notes]))
        return 0

    @staticmethod
    def _init_cli(args, db, close):
        """`instinct init [CLIENT]`: setup --write for the client (default: each agent whose
        folder exists: ~/.claude, ~/.codex, ...), then import-history of their past sessions."""
        import argparse
        home = os.path.expanduser("~")
        clients = [args.client] if args.client else [
            c for c, (var, folder, _, _) in ((c, row.history) for c, row in CLIENTS.items())
            if os.path.isdir(var and os.environ.get(var) or os.path.join(home, folder))]
        if getattr(args, "json", False) or not clients:
            sys.stderr.write("instinct: error: " + ("no agent's folder here (~/.claude, ~/.codex,"
                             " ...); name your agent: instinct init "
                             f"{{{','.join(_Setup.CLIENTS)}}}"
                             if clients == [] else "init prints text; setup and import-history "
                             "take --json") + "\n")
            return 2
        for c in clients:
            _CLI._setup_cli(argparse.Namespace(client=c, write=True, scope="user", all_tools=False,
                                              remove=False, init=True), db)
        read = [c for c in clients if c in _Transcripts.CLIENTS]
        op = OPERATIONS["import_history"]
        code = read and _CLI._run_op(op, {p.name: p.default for p in op.params} | {
            "client": read[0] if len(read) == 1 else "all"}, db, False, close)
        if not code:
            sys.stdout.write("Each new session in these projects starts with its briefing; "
                             * bool(read) + "`instinct suggest` in a project lists what was "
                             "learned there.\n")
        return code or 0

    @staticmethod
    def help_text(parser, sub):
        """The commands of `instinct --help` by task (GROUPS; one missing there: the last)."""
        import textwrap
        names = {a.dest: a.help for a in sub._choices_actions}
        groups = [(t, w.split()) for t, w in _CLI.GROUPS]
        groups[-1][1].extend(n for n in names if not any(n in g for _, g in groups))
        return "\n\n".join(f"{title}:\n" + "\n".join(textwrap.fill(
            names[n], 79, initial_indent=f"  {n:<15} ", subsequent_indent=" " * 18)
            for n in group if n in names) for title, group in groups)

    @staticmethod
    def _run_op(op, kwargs, db, as_json, close):
        """Run one operation for the CLI: print its JSON or text, map errors to exit codes.
        import-history also gets a progress bar on a terminal, and its count if interrupted."""
        store = InstinctStore(db)
        at = [0, None, False]                # sessions read, sessions found, a bar half drawn
        try:
            if op.name == "import_history":
                bar = _Transcripts.tty_progress()

                def progress(done, total):
                    at[:] = done, total, bar is not None and done < total
                    if bar is not None:
                        bar(done, total)
                store.progress = progress
            kwargs = op.coerce(kwargs, _CLI._name)                  # errors name the flags
            result = op.run(store, kwargs)                          # checked once, above
            text = _dumps(result, indent=2) if as_json else op.render(result)
            sys.stdout.write(_shown(text) + "\n")
            sys.stdout.flush()
            if op.name == "export_rules" and result in ([], _Out.render_markdown([])):
                proj, low = kwargs.get("project"), kwargs.get("min_confidence")  # say why
                sys.stderr.write("instinct: " + store._nothing_to_export(
                    10 if low is None else low, proj and _resolve_project(proj, store.cwd),
                    kwargs.get("category")) + "\n")
            return op.exit_code(result) if op.exit_code else 0
        except InstinctError as e:
            sys.stderr.write(f"instinct: error: {e}\n")
            return e.exit_code
        except KeyboardInterrupt:
            if op.name == "import_history":
                done, total, half = at
                sys.stderr.write(("\n" if half else "") + "instinct: interrupted "
                                 + (f"after {done} of {total} sessions (those are kept)" if total
                                    else "before any session was imported")
                                 + "; run the same command again to continue\n")
            return 130
        finally:
            if close:
                store.close()


def build_parser(argv=None):
    """The argparse parser; with argv, only the subcommand argv names is built (fast start)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message):        # one line, like every other CLI error
            self.exit(2, f"instinct: error: {message} (see {self.prog} --help)\n")
    common = Parser(add_help=False)
    common.add_argument("--db", default=argparse.SUPPRESS, metavar="PATH",
                        help="database file (default: $INSTINCT_DB or ~/.instinct/instinct.db)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print the result as JSON (the same JSON the API returns)")
    common.add_argument("--version", action="version", version=f"instinct {__version__}")
    parser = Parser(prog="instinct", parents=[common], description=_CLI.START,
                    usage="instinct [--db PATH] [--json] COMMAND ...",
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help=argparse.SUPPRESS,
                                prog="instinct")
    wanted = next((a for a in _Hook.take_db(argv or [])[1]
                   if a in _CLI.COMMANDS or a in _CLI.EXTRAS), None)
    for cli, op in _CLI.COMMANDS.items():
        if wanted and cli != wanted:
            continue
        sp = sub.add_parser(cli, parents=[common], help=op.summary,
                            description=(op.summary + " " + (op.description or "")).strip())
        for p in op.params:
            kw = {"help": p.help + (f" (default: {p.default})"
                                    if p.default not in (None, "", False) else "")}
            if p.choices:
                kw["choices"] = p.choices
            elif p.type is not bool:
                kw["metavar"] = _CLI.metavar(p)
            if p.type is bool:
                kw["action"] = "store_true"
            elif p.type is not str:
                kw["type"] = _CLI.json_object_arg if p.type is dict else p.type
            if p.positional:
                if not p.required:
                    kw["nargs"] = "?"
                sp.add_argument(p.name, **kw)
            else:
                sp.add_argument(p.flag, dest=p.name, default=p.default, **kw)
        sp.set_defaults(_op=op)
    for name, (help, extra) in _CLI.EXTRAS.items():
        if not wanted or wanted == name:
            sp = sub.add_parser(name, parents=[common], help=help, description=help)
            for a, kw in extra:
                sp.add_argument(*a, **kw)
            sp.set_defaults(_op=None)
    parser.epilog = None if wanted else _CLI.help_text(parser, sub)
    return parser


def main(argv=None):
    """Command-line entry point: runs one command and returns its exit status. With no argv it
    reads sys.argv and leaves the database open for the ending process to drop; hook and serve,
    which agents start per tool call and per window, then end the process themselves
    (`_CLI.exit_now`), skipping SQLite's close-time checkpoint (committed data is in the WAL)."""
    ending = argv is None
    args = list(sys.argv[1:] if ending else argv)
    try:
        try:
            code = _CLI.cli(args, close=not ending)
        except SystemExit as e:       # --help, --version, bad usage: flushed here like the rest
            if not ending:
                raise
            code = e.code if isinstance(e.code, int) else int(e.code is not None)
        if ending:
            sys.stdout.flush()
    except BrokenPipeError:          # the reader left (`instinct setup codex | head -1`): quietly
        try:                         # and without a second error when the exit flushes stdout
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        code = 0
    except KeyboardInterrupt:
        code = 0 if "hook" in args[:3] else 130           # a hook always exits 0
    if ending and {"hook", "serve"} & set(args[:3]):
        _CLI.exit_now(code)
    return code


# =============================================================================
# 28. Entry point
# =============================================================================
if __name__ == "__main__":
    _CLI.exit_now(main())
