"""What the test modules share: paths, the clock, temp stores and projects, child processes
(the CLI, hooks, the stdio server), the JSON-RPC and JSON-schema checkers, old-schema stores.

Standard library only, like the tests. test_instinct.py and every module in tests/ import from
here; nothing here is a test.
"""
import contextlib
import glob
import io
import json
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import unittest
import warnings
from datetime import datetime, timedelta
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))     # the repository
INSTINCT_PY = os.path.join(ROOT, "instinct.py")
INTEROP = os.path.join(ROOT, "tests", "interop")                        # dev-only client scripts
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import instinct  # noqa: E402

T0 = 1_767_225_600.0          # 2026-01-01T00:00:00Z, the default "now" of an injected clock
LATER = 1_800_000_000.0       # 2027-01-15: for stores that real-clock processes (hooks, the CLI) write too
DAY = 86400


def setUpModule():
    """Python 3.12 deprecates binding named placeholders (:x, ?1) from a sequence and 3.14
    refuses it: make such a call an error in the tests. The runner resets the warning filters
    before it runs anything, so this is installed at run time; every test module imports it."""
    warnings.filterwarnings("error", message=r"Binding .* is a named parameter",
                            category=DeprecationWarning)


def label(data):
    """A stored call record (events.data) as a person reads it: 'Bash(pytest)'."""
    return instinct._Call.read(data).label()


def call_summary(payload):
    """A hook payload as capture reads it -> (its call's label, '') or (None, skip reason)."""
    call, reason = instinct._Call.of(payload)
    return (call.label() if call else None), reason


class Clock:
    """An injectable clock: epoch seconds that only move when told to."""

    def __init__(self, t=T0):
        self.t = t

    def __call__(self):
        return self.t

    def advance(self, days=0, seconds=0):
        self.t += days * DAY + seconds


# -----------------------------------------------------------------------------
# files and folders
# -----------------------------------------------------------------------------
def temp_dir(test):
    """A temporary directory removed when `test` ends -> its real path (str)."""
    tmp = tempfile.TemporaryDirectory()
    test.addCleanup(tmp.cleanup)
    return os.path.realpath(tmp.name)


def make_repo(path, *subdirs):
    """A git project folder (a `.git` directory is what instinct looks for) -> path."""
    os.makedirs(os.path.join(path, ".git"))
    for sub in subdirs:
        os.makedirs(os.path.join(path, sub))
    return path


def mined(store, pattern, project="", n=1):
    """Credit `pattern` as mining does (evidence: source 'hooks'), once for each of n sessions;
    `project` a folder or a fingerprint. A plain observe is a note and may not claim 'hooks'."""
    proj = instinct._resolve_project(project, store.cwd)
    with store._write() as conn:
        for _ in range(n):
            store._reinforce(conn, instinct.normalize_pattern(pattern), proj, source="hooks",
                             session="", ts=store._now())


def read(path, mode="r"):
    with open(path, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
        return f.read()


def write(path, data):
    """Write text (UTF-8) or bytes, creating the parent folders."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    binary = isinstance(data, bytes)
    with open(path, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as f:
        f.write(data)


def rows(path, query, params=()):
    """Rows from a fresh raw sqlite3 connection (sees only committed data)."""
    con = sqlite3.connect(str(path))
    try:
        return con.execute(query, params).fetchall()
    finally:
        con.close()


def raw_bytes(path):
    """Every byte of a store: the file, its WAL and its SHM (the ones that exist)."""
    out = b""
    for suffix in ("", "-wal", "-shm"):
        p = str(path) + suffix
        if os.path.exists(p):
            out += read(p, "rb")
    return out


def old_schema_db(path, version):
    """A store left at schema `version` by this instinct's own first `version` migrations (as an
    older instinct would have left it) -> an open autocommit connection to fill; close it before
    opening the store."""
    con = sqlite3.connect(str(path), isolation_level=None)
    for migrate in instinct._Schema.MIGRATIONS[:version]:
        migrate(con)
    con.execute(f"PRAGMA user_version = {int(version)}")
    return con


# the seeds' schema: the table the original tool made, before instinct's first migration
SEEDS_SCHEMA = ("CREATE TABLE instincts (pattern TEXT PRIMARY KEY, category TEXT NOT NULL DEFAULT "
                "'sequence', confidence INTEGER NOT NULL DEFAULT 1, first_seen TEXT NOT NULL, "
                "last_seen TEXT NOT NULL, source TEXT NOT NULL DEFAULT '', project TEXT NOT NULL "
                "DEFAULT '', promoted INTEGER NOT NULL DEFAULT 0, metadata TEXT NOT NULL DEFAULT '{}')")
_SEEDS_NOW = datetime(2025, 3, 14, 9, 26, 53, 589793)
# pattern, category, confidence, first seen, last seen, source, project, promoted, metadata
SEED_ROWS = [
    ("seq:test->fix->test", "sequence", 8, _SEEDS_NOW - timedelta(days=30), _SEEDS_NOW, "claude-code",
     "", 1, "{}"),
    ("pref:stdlib-first", "preference", 12, _SEEDS_NOW - timedelta(days=60),
     _SEEDS_NOW - timedelta(days=1), "", "", 2, json.dumps({"note": "prefer stdlib", "n": [1, 2]})),
    ("fix:missing-init", "fix_pattern", 6, _SEEDS_NOW - timedelta(days=10), _SEEDS_NOW, "cursor",
     "3f2a9c1b7d4e", 1, "{}"),
    ("combo:pytest+coverage", "combo", 5, _SEEDS_NOW - timedelta(days=5), _SEEDS_NOW, "",
     "3f2a9c1b7d4e", 1, json.dumps({"why": "always with coverage"})),
    ("seq:lint->fix->test", "sequence", 3, _SEEDS_NOW - timedelta(days=2), _SEEDS_NOW, "", "", 0, "{}"),
    ("pref:style=black", "preference", 11, _SEEDS_NOW - timedelta(days=90), _SEEDS_NOW, "",
     "0123456789ab", 2, "{}"),
]


def seeds_db(path, rows=SEED_ROWS, page_size=None):
    """A database made with exactly the seeds' schema, filled the way the original tool did
    (observe inserts, later UPDATEs set promoted; naive isoformat times) -> the rows."""
    con = sqlite3.connect(str(path))
    if page_size:
        con.execute(f"PRAGMA page_size = {int(page_size)}")
    con.execute(SEEDS_SCHEMA)
    for p, c, n, f, l, s, pr, pm, m in rows:
        con.execute("INSERT INTO instincts (pattern, category, confidence, first_seen, last_seen,"
                    " source, project, metadata) VALUES (?,?,?,?,?,?,?,?)",
                    (p, c, n, f.isoformat(), l.isoformat(), s, pr, m))
        if pm:
            con.execute("UPDATE instincts SET promoted = ? WHERE pattern = ?", (pm, p))
    con.commit()
    con.close()
    return rows


# -----------------------------------------------------------------------------
# child processes: the CLI, hooks, other interpreters
# -----------------------------------------------------------------------------
# what steers instinct (or the clients it reads) from outside; a child never inherits it
_STEERING = ("INSTINCT_DB", "INSTINCT_SESSION", "INSTINCT_DISABLE", "INSTINCT_PROJECT_DIR",
             "INSTINCT_SOURCE", "INSTINCT_MCP_TOOLS", "INSTINCT_MCP_MAX_REPLY", "INSTINCT_DEBUG",
             "CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME")


def child_env(home=None, db=None, **extra):
    """This process's environment without instinct's steering variables, UTF-8 output, no
    bytecode writes; HOME and INSTINCT_DB when given; then `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in _STEERING}
    env.update(PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
    if home is not None:
        env["HOME"] = str(home)
    if db is not None:
        env["INSTINCT_DB"] = str(db)
    env.update(extra)
    return env


def cli_process(*args, env=None, cwd=None, input=None, text=True, timeout=60, python=None,
                script=None):
    """The CLI as a real process: `python instinct.py ARGS` -> CompletedProcess (output
    captured; the environment is child_env() unless given)."""
    cmd = [str(python or sys.executable), str(script or INSTINCT_PY), *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=text, timeout=timeout, cwd=cwd,
                          env=env if env is not None else child_env(), input=input)


def cli_in_process(*args):
    """The CLI in this process: instinct.main(ARGS) with stdout and stderr captured -> (exit
    code, stdout, stderr). A usage error's SystemExit is raised as main raises it."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = instinct.main(list(args))
    return code, out.getvalue(), err.getvalue()


def python_child(code, *argv, **popen):
    """`code` in a child Python with instinct importable (sys.argv[1:] = argv) -> the Popen,
    stdout and stderr piped as text unless told otherwise."""
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    popen.setdefault("text", True)
    return subprocess.Popen([sys.executable, "-c", f"import sys; sys.path.insert(0, {ROOT!r})\n" + code,
                             *map(str, argv)], **popen)


def find_python(version):
    """A working interpreter of `version` ("3.10") on this machine, or None: $INSTINCT_PYTHON310
    (say), `python3.10` on PATH, then pyenv's versions. Each candidate is asked its version."""
    tag = version.replace(".", "")
    candidates = [os.environ.get("INSTINCT_PYTHON" + tag), shutil.which("python" + version)]
    pyenv = shutil.which("pyenv")
    root = os.environ.get("PYENV_ROOT")
    if not root and pyenv:
        got = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=60)
        root = got.stdout.strip() if got.returncode == 0 else None
    if root:
        candidates += sorted(glob.glob(os.path.join(root, "versions", version + ".*", "bin", "python")))
    for py in filter(None, candidates):
        try:
            got = subprocess.run([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=60)
        except OSError:
            continue
        if got.returncode == 0 and got.stdout.strip() == version:
            return py
    return None


def subcommands(parser):
    """An argparse parser's subcommands -> {name: subparser}."""
    import argparse
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return a.choices
    raise AssertionError("no subcommands")


# -----------------------------------------------------------------------------
# test case bases
# -----------------------------------------------------------------------------
class StoreCase(unittest.TestCase):
    """A temporary directory (`self.tmp`, a Path), a database path inside it and a store on an
    injected clock; raw SQL, the CLI in process (`cli_in_process`) and as a real process
    (`cli_process`)."""

    DB_NAME = "t.db"

    def setUp(self):
        self.tmp = Path(temp_dir(self))
        self.db = self.tmp / self.DB_NAME
        self.clock = Clock()
        self.store = self.open()

    def open(self, path=None, **kw):
        kw.setdefault("clock", self.clock)
        s = instinct.InstinctStore(str(path or self.db), **kw)
        self.addCleanup(s.close)
        return s

    def sql(self, query, params=(), path=None):
        """Rows from a fresh raw sqlite3 connection (sees only committed data)."""
        return rows(path or self.db, query, params)

    def counts(self):
        return (self.sql("SELECT count(*) FROM instincts")[0][0],
                self.sql("SELECT count(*) FROM events")[0][0],
                self.sql("SELECT coalesce(sum(confidence), 0) FROM instincts")[0][0])

    def conf(self, pattern, project=""):
        return self.store.get(pattern, project=project)["confidence"]

    def observe_n(self, pattern, n, **kw):
        r = None
        for _ in range(n):
            r = self.store.observe(pattern, **kw)
        return r

    def cli_in_process(self, *args, db=None):
        """The CLI in process on this store (--db first) -> (exit code, stdout, stderr)."""
        return cli_in_process("--db", str(db or self.db), *args)

    def cli_process(self, *args, db=None, python=None, script=None, cwd=None, env=None, timeout=60):
        """The CLI as a real process on this store (HOME = the temp dir) -> CompletedProcess."""
        return cli_process(*args, python=python, script=script, cwd=cwd, timeout=timeout,
                           env=env or child_env(self.tmp, db or self.db))

    def assertOneLineError(self, proc, code=1):
        self.assertEqual(proc.returncode, code, proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertNotIn("Traceback", proc.stderr)
        lines = proc.stderr.splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertTrue(lines[0].startswith("instinct: error: "), lines[0])
        return lines[0]


class ProjectCase(unittest.TestCase):
    """A temp dir (`self.tmp`, str) holding a git project `proj` and a 0700 store folder; the
    store (`self.db`) is opened in the project on an injected clock (`self.clock`)."""

    T0 = 1_790_000_000.0           # 2026-09

    def setUp(self):
        self.tmp = temp_dir(self)
        self.proj = make_repo(os.path.join(self.tmp, "proj"))
        self.dbdir = os.path.join(self.tmp, "store")
        os.mkdir(self.dbdir, 0o700)
        self.db = os.path.join(self.dbdir, "i.db")
        self.clock = Clock(self.T0)
        self.store = self.open(self.db)

    def open(self, path, **kw):
        s = instinct.InstinctStore(path, clock=self.clock, cwd=self.proj, **kw)
        self.addCleanup(s.close)
        return s

    def observe(self, pattern, n, project="", store=None):
        for _ in range(n):
            (store or self.store).observe(pattern, project=project)

    def cli_process(self, *args, cwd=None, db=None, stdin=None, timeout=60):
        """The CLI as a real process in the project (the real HOME) -> CompletedProcess."""
        return cli_process(*args, env=child_env(db=db or self.db), cwd=cwd or self.proj, input=stdin,
                           timeout=timeout)

    read = staticmethod(read)
    write = staticmethod(write)


class HomeCase(unittest.TestCase):
    """A temp HOME (`self.home`, str) holding a git project (`self.repo`, at REPO under it) and
    a 0700 store folder; `self.db` is the store's path in it (no store is opened). Hooks and the
    CLI run as real processes with this HOME."""

    REPO = ("work", "shop")

    def setUp(self):
        self.home = temp_dir(self)
        self.repo = make_repo(os.path.join(self.home, *self.REPO))
        self.db = os.path.join(self.home, "store", "i.db")
        os.mkdir(os.path.dirname(self.db), 0o700)

    def env(self):
        return child_env(self.home, self.db)

    def sql(self, query, params=()):
        """Rows from a fresh raw sqlite3 connection (sees only committed data)."""
        return rows(self.db, query, params)

    def patterns(self):
        return {p for p, in self.sql("SELECT pattern FROM instincts")}


class HookCase(unittest.TestCase):
    """A temp dir (`self.tmp`, str) with a git project `repo` (holding `src/`) and a store
    (`self.db`) on an injected clock; `instinct hook EVENT` as a real process."""

    def setUp(self):
        self.tmp = temp_dir(self)
        self.db = os.path.join(self.tmp, "t.db")
        self.repo = make_repo(os.path.join(self.tmp, "repo"), "src")
        self.clock = Clock(LATER)
        self.store = instinct.InstinctStore(self.db, clock=self.clock)
        self.addCleanup(self.store.close)

    def hook(self, event, payload, env=None, db=None):
        """`instinct hook EVENT` as a real process fed `payload` -> CompletedProcess (bytes)."""
        data = payload if isinstance(payload, (bytes, str)) else json.dumps(payload)
        if isinstance(data, str):
            data = data.encode()
        return cli_process("hook", event, input=data, text=False,
                           env=child_env(db=db or self.db, **(env or {})))

    def payload(self, tool, tool_input, session="s1", cwd=None, **extra):
        return {"session_id": session, "cwd": cwd or self.repo, "hook_event_name": "PostToolUse",
                "tool_name": tool, "tool_input": tool_input, "tool_response": {}, **extra}

    def events(self, kinds=("tool", "tool_fail")):
        self.store.stats()                 # make sure the schema exists
        self.store.close()
        conn = sqlite3.connect(self.db)
        try:
            q = ",".join("?" * len(kinds))
            return [(k, label(d), s, p) for k, d, s, p in conn.execute(
                f"SELECT kind, data, session, project FROM events WHERE kind IN ({q})"
                " ORDER BY id", kinds)]
        finally:
            conn.close()

    def all_text(self):
        """Every text value stored anywhere in the database file (and its WAL)."""
        self.store.close()
        blob = b""
        for suffix in ("", "-wal"):
            if os.path.exists(self.db + suffix):
                with open(self.db + suffix, "rb") as f:
                    blob += f.read()
        return blob


# -----------------------------------------------------------------------------
# JSON Schema (the portable subset) and JSON-RPC
# -----------------------------------------------------------------------------
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int,
          "number": (int, float), "null": type(None)}
_PORTABLE_KEYS = {"type", "properties", "required", "items", "enum", "const", "description",
                  "default", "minimum", "maximum", "minLength", "maxLength", "pattern",
                  "minItems", "maxItems", "additionalProperties", "title", "format"}
_FORMATS = {"date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}


def schema_problems(schema, path="$"):
    """Portability problems of a schema node (reference section 8): [] when portable."""
    if not isinstance(schema, dict):
        return [f"{path}: a schema must be an object, got {schema!r}"]
    out = [f"{path}: keyword {k!r} is not in the portable subset"
           for k in schema if k not in _PORTABLE_KEYS]
    t = schema.get("type")
    if not isinstance(t, str) or t not in _TYPES:
        out.append(f"{path}: needs a single string type, got {t!r}")
    if "format" in schema and schema["format"] not in _FORMATS:
        out.append(f"{path}: format {schema['format']!r} is not portable")
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        out.append(f"{path}.properties must be an object")
        props = {}
    for name, sub in props.items():
        out += schema_problems(sub, f"{path}.properties.{name}")
    req_ = schema.get("required", [])
    if not isinstance(req_, list) or any(r not in props for r in req_):
        out.append(f"{path}.required {req_!r} names a missing property")
    if "items" in schema:
        out += schema_problems(schema["items"], f"{path}.items")
    ap = schema.get("additionalProperties")
    if ap is not None and not isinstance(ap, bool):
        out += schema_problems(ap, f"{path}.additionalProperties")
    return out


def validate(value, schema, path="$"):
    """Validate value against the portable subset: type/properties/required/items/enum/
    minimum/maximum/additionalProperties. Returns a list of errors."""
    t = schema.get("type")
    if t is not None:
        ok = isinstance(value, _TYPES[t]) and not (t in ("integer", "number") and isinstance(value, bool))
        if not ok:
            return [f"{path}: expected {t}, got {type(value).__name__} {value!r:.60}"]
    errs = []
    if "enum" in schema and value not in schema["enum"]:
        errs.append(f"{path}: {value!r} not in {schema['enum']}")
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        errs.append(f"{path}: {value} < minimum {schema['minimum']}")
    if "maximum" in schema and isinstance(value, (int, float)) and value > schema["maximum"]:
        errs.append(f"{path}: {value} > maximum {schema['maximum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for r in schema.get("required", []):
            if r not in value:
                errs.append(f"{path}: missing required {r!r}")
        for k, v in value.items():
            if k in props:
                errs += validate(v, props[k], f"{path}.{k}")
            elif schema.get("additionalProperties") is False:
                errs.append(f"{path}: unexpected property {k!r}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            errs += validate(v, schema["items"], f"{path}[{i}]")
    return errs


def check_message(msg, version, allow_array=False):
    """Problems with msg as one JSON-RPC 2.0 response our server may send ([] when none)."""
    if isinstance(msg, list):
        if not allow_array:
            return ["array reply outside a 2025-03-26 batch"]
        if not msg:
            return ["empty array reply"]
        return [p for m in msg for p in check_message(m, version)]
    if not isinstance(msg, dict):
        return [f"not an object: {msg!r:.80}"]
    probs = []
    if msg.get("jsonrpc") != "2.0":
        probs.append("jsonrpc is not 2.0")
    extra = set(msg) - {"jsonrpc", "id", "result", "error"}
    if extra:
        probs.append(f"unexpected keys {sorted(extra)}")
    if ("result" in msg) == ("error" in msg):
        probs.append("needs exactly one of result/error")
    if "result" in msg and not isinstance(msg["result"], dict):
        probs.append("result is not an object")
    if "result" in msg and not (isinstance(msg.get("id"), (str, int)) and not isinstance(msg.get("id"), bool)):
        probs.append(f"result with a bad id {msg.get('id')!r}")
    if "error" in msg:
        e = msg["error"]
        if not (isinstance(e, dict) and isinstance(e.get("code"), int) and isinstance(e.get("message"), str)):
            probs.append(f"malformed error {e!r:.100}")
        elif -32099 <= e["code"] <= -32020 and not (       # only a modern request's -32022
                e["code"] == -32022 and (e.get("data") or {}).get("supported") == ["2026-07-28"]):
            probs.append(f"error code {e['code']} is reserved by 2026-07-28")
        if "id" not in msg and version != "2025-11-25":
            probs.append("error without id before 2025-11-25")
        if "id" in msg and msg["id"] is None and version == "2025-11-25":
            probs.append("id null under 2025-11-25 (must be omitted)")
    return probs


NEWEST = "2025-11-25"
WAIT = 15.0              # generous per-line timeout; a healthy server answers in ms


def req(mid, method, params=None):
    m = {"jsonrpc": "2.0", "id": mid, "method": method}
    if params is not None:
        m["params"] = params
    return m


def init_msg(version, mid=1):
    return req(mid, "initialize", {"protocolVersion": version, "capabilities": {},
                                   "clientInfo": {"name": "t", "version": "0"}})


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def enc(obj):
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def mcp_in_process(store, version="2025-06-18"):
    """instinct's MCP server on `store` in this process, initialized -> (server, the result of
    initialize); send it messages with server.handle_message(msg)."""
    srv = instinct._Server(store)
    reply = srv.handle_message(init_msg(version))
    if not isinstance(reply, dict) or "result" not in reply:
        raise AssertionError(f"initialize failed: {reply}")
    return srv, reply["result"]


def tool_result(srv, name, arguments, mid=2):
    """One tools/call on an in-process server -> its result (isError or not)."""
    return srv.handle_message(req(mid, "tools/call", {"name": name, "arguments": arguments}))["result"]


def serve_once(messages, env, cwd, argv=None, timeout=60):
    """`instinct serve` fed `messages` (one JSON line each) until EOF -> (replies parsed from
    stdout, the CompletedProcess)."""
    p = subprocess.run(argv or [sys.executable, INSTINCT_PY, "serve"], env=env, cwd=cwd,
                       input="".join(json.dumps(m) + "\n" for m in messages),
                       capture_output=True, text=True, timeout=timeout)
    return [json.loads(line) for line in p.stdout.splitlines()], p


class Server:
    """One `instinct serve` subprocess with a reader thread on stdout and stderr. A reply that
    breaks the protocol raises AssertionError (a failure of the test that reads it)."""

    def __init__(self, tmp, argv=None, env=None, db=None):
        self.db = db or os.path.join(tmp, "instinct.db")
        # the whole tool surface; TestLeanToolSet passes INSTINCT_MCP_TOOLS=""
        e = child_env(tmp, self.db, **{"INSTINCT_MCP_TOOLS": "all", **(env or {})})
        self.version = None
        self.p = subprocess.Popen(argv or [sys.executable, INSTINCT_PY, "serve"], cwd=tmp, env=e,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.lines, self.err = queue.Queue(), []
        self.all_lines = []
        self._ids = 100000
        self._t = [threading.Thread(target=self._pump_out, daemon=True),
                   threading.Thread(target=self._pump_err, daemon=True)]
        for t in self._t:
            t.start()

    def _pump_out(self):
        for line in iter(self.p.stdout.readline, b""):
            self.all_lines.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def _pump_err(self):
        for chunk in iter(lambda: self.p.stderr.read(65536), b""):
            self.err.append(chunk)

    @property
    def stderr(self):
        return b"".join(self.err).decode("utf-8", "replace")

    def write(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, *msgs):
        self.write(b"".join(m if isinstance(m, bytes) else enc(m) for m in msgs))

    def recv_line(self, timeout=WAIT):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no reply within {timeout}s; stderr: {self.stderr[-2000:]}") from None
        if line is None:
            raise AssertionError(f"server closed stdout; stderr: {self.stderr[-2000:]}")
        return line

    def recv(self, timeout=WAIT, allow_array=False):
        line = self.recv_line(timeout)
        if not (line.endswith(b"\n") and line.count(b"\n") == 1):
            raise AssertionError(f"not one line: {line[:200]!r}")
        msg = json.loads(line)
        probs = check_message(msg, self.version, allow_array)
        if probs:
            raise AssertionError(f"{probs}: {line[:300]!r}")
        return msg

    def next_id(self):
        self._ids += 1
        return self._ids

    def call(self, method, params=None, mid=None):
        mid = self.next_id() if mid is None else mid
        self.send(req(mid, method, params))
        reply = self.recv()
        if reply.get("id") != mid:
            raise AssertionError(f"reply to {mid!r} has the id {reply.get('id')!r}: {reply}")
        return reply

    def result(self, method, params=None):
        reply = self.call(method, params)
        if "result" not in reply:
            raise AssertionError(f"no result: {reply}")
        return reply["result"]

    def tool(self, name, arguments=None):
        params = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return self.result("tools/call", params)

    def init(self, version=NEWEST):
        self.send(init_msg(version), INITIALIZED)
        reply = self.recv()
        self.version = reply["result"]["protocolVersion"]
        return reply["result"]

    def assert_silent(self):
        """Nothing was written since the last read: the next line answers a fresh ping."""
        mid = self.next_id()
        self.send(req(mid, "ping"))
        reply = self.recv()
        if reply != {"jsonrpc": "2.0", "id": mid, "result": {}}:
            raise AssertionError(f"expected the answer to ping {mid}, got {reply}")

    def close(self, timeout=10):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        rc = self.p.wait(timeout)
        for t in self._t:
            t.join(timeout)
        return rc

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        for f in (self.p.stdin, self.p.stdout, self.p.stderr):
            try:
                f.close()
            except OSError:
                pass


VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
NOID = object()          # "the id could not be read": null, or omitted under 2025-11-25
MODERN = "2026-07-28"
ENV = {"io.modelcontextprotocol/protocolVersion": MODERN,
       "io.modelcontextprotocol/clientCapabilities": {}}


def modern(mid, method, params=None, meta=None):
    """A 2026-07-28 request: its _meta carries the envelope (ENV unless told)."""
    p = dict(params or {})
    p["_meta"] = dict(ENV) if meta is None else meta
    return req(mid, method, p)


class ServerCase(unittest.TestCase):
    """A temp dir (`self.tmp`) and `instinct serve` processes in it, killed when the test ends;
    checks of JSON-RPC errors and tool errors."""

    def setUp(self):
        self.tmp = temp_dir(self)
        self.servers = []

    def tearDown(self):                 # before the temp dir goes (cleanups run after tearDown)
        for s in self.servers:
            s.kill()

    def server(self, version=NEWEST, tmp=None, **kw):
        s = Server(tmp or self.tmp, **kw)
        self.servers.append(s)
        if version:
            s.init(version)
        return s

    def modern(self, s, method, params=None, meta=ENV):
        """One 2026-07-28 request to server `s` -> its reply (to the same id)."""
        mid = s.next_id()
        s.send(req(mid, method, dict(params or {}, _meta=meta)))
        r = s.recv()
        self.assertEqual(r.get("id"), mid, r)
        return r

    def assertError(self, reply, code, mid=NOID, version=None):
        self.assertIn("error", reply, reply)
        self.assertEqual(reply["error"]["code"], code, reply)
        if mid is NOID:
            if version == "2025-11-25":         # id omitted; otherwise (and pre-init) id null
                self.assertNotIn("id", reply, reply)
            else:
                self.assertIsNone(reply.get("id"), reply)
        else:
            self.assertEqual(reply["id"], mid)
            self.assertIs(type(reply["id"]), type(mid))

    def assertToolError(self, res, *words):
        self.assertIs(res["isError"], True, res)
        self.assertNotIn("structuredContent", res)
        for w in words:
            self.assertIn(w, res["content"][0]["text"])
        return res["content"][0]["text"]
