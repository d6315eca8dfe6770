"""Does the session-start briefing predict what the session then does? Scored on real sessions.

    python bench/bench_predict.py [--data DIR] [--source NAME] [--instinct PATH] [--json FILE]
                                  [--show N] [--hints] [--pre-tool-use auto|on|off]
                                  [--join-worktrees] [--tmp DIR] [--min-sessions N]

Each source is replayed in-process as bench_realdata does it (its functions, one store per
source). Every hook answer is kept with its place in the replay. Then, per project (the git root
of a session's first SessionStart cwd, a worktree counted in its main repository), every
session after the project's first is compared with the briefing shown at its start. What the
session did is read from its own tool calls, without instinct's parser: each shell command is
split here into simple commands (program and subcommand), any other tool is its name;
subagent calls are left out.

* precision: of the distinct names the briefing puts in backticks, the share the session used;
* recall: of the habits a perfect learner could know - a command, tool or 2-3 step run of them
  seen in >= N earlier sessions of the project (--min-sessions, default 5: the contract's
  maturity; 3 for a cold start), before this one started - that the session used, the share
  the briefing named (a run counts when one briefing line names its steps in order).
  "all" counts every command and tool but Read/Edit/Write/Grep/Glob/TodoWrite/ToolSearch;
  "spec" also leaves out generic utilities (ls, cat, grep...), VCS reads, bare interpreters
  and client plumbing;
* test: in sessions that ran a test command, whether the briefing named the first one;
* empty&known: briefings that were empty although habits were known; empty&used: of those,
  the sessions that then used a known habit;
* top5: the same precision and one-step recall for a plain list of the project's 5 known
  commands used in the most earlier sessions (ties: the most recently used).

--hints lists every other hook answer (pre-tool-use, post-tool-use(-failure), user prompt) with
the next 5 shell commands the agent ran; PreToolUse calls are sent before each tool call when
the instinct under test registers that hook (auto) or when asked (on).

Worktrees are laid out as ../shared/bench/predict.py does (the worktrees of one folder share a
main repository beside them), so the figures are the same as its own; --join-worktrees joins
them to the repository their name starts with instead (spotter-gqc -> spotter), as
bench_realdata does. The replay's temporary tree is made in /dev/shm when there is one (a
store on a busy disk made the replay 7x slower; the figures are the same): --tmp DIR.
"""
import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_realdata import build_layout, checked, home_of, load, read_lines, replay  # noqa: E402

MIN_SESSIONS, TOP = 5, 5
SHELLS = {"Bash", "PowerShell", "shell", "local_shell", "exec_command", "run_shell_command",
          "shell_command", "container.exec"}

# --- what the agent ran: an independent reading of shell text --------------------------------
GENERIC = set("""cd ls cat head tail grep egrep fgrep rg ag ack find fd wc sort uniq tee echo printf
pwd which whereis type mkdir rmdir rm cp mv ln touch chmod chown chgrp sed awk gawk cut tr paste
xargs file stat du df date sleep kill pkill killall ps pgrep top htop clear basename dirname
realpath readlink less more tree open xdg-open seq nl column bat jq yq diff cmp comm md5sum
sha1sum sha256sum shasum base64 hexdump xxd od strings lsof whoami id hostname uname free nproc
unzip tar gzip gunzip zip wget curl man help history source . export set unset read true false
test [ [[ : exit return eval alias local declare wait trap let shift pushd popd env sudo timeout
nice time tput stty watch""".split())
INTERPRETERS = set("python python2 python3 node nodejs bash sh zsh dash fish ksh ruby perl php lua "
                   "Rscript osascript pwsh".split())
# programs whose first plain argument is an operand (a file, a pattern, a host), no subcommand
OPERANDS = GENERIC | INTERPRETERS | set("""pytest jest vitest mocha rspec eslint prettier black isort
flake8 pylint mypy pyright tsc shellcheck phpunit ava karma ping dig host nslookup nc telnet
traceroute ssh scp rsync code cursor vim vi nvim nano emacs claude codex sqlite3 psql mysql
redis-cli gcc g++ clang clang++ cc javac java strace ltrace gdb lldb valgrind hyperfine
entr""".split())
VCS_READS = {f"{v} {s}" for v in ("git", "hg", "jj", "svn") for s in (
    "status", "diff", "log", "show", "blame", "branch", "remote", "rev-parse", "reflog", "ls-files")}
LOOK_EDIT = set("Read Edit Write Grep Glob TodoWrite ToolSearch apply_patch".split())   # (Codex edits)
PLUMBING = LOOK_EDIT | set("""MultiEdit NotebookEdit NotebookRead LS TodoRead TaskCreate TaskUpdate
TaskList TaskGet TaskOutput TaskStop BashOutput KillShell KillBash AskUserQuestion EnterPlanMode
ExitPlanMode StructuredOutput SendMessage ListMcpResourcesTool ReadMcpResourceTool""".split())
TEST_TOOLS = set("jest vitest rspec mocha phpunit tox nox ava karma cypress playwright bats busted "
                 "prove spec specs".split())
FILE_EXTS = set("""py js ts tsx jsx mjs cjs json md txt sh bash zsh exs ex eex heex yml yaml toml lock
log html htm css scss c h cc cpp hpp go rs rb java kt kts scala swift php lua pl r sql db sqlite gz
tgz zip tar xz bz2 cfg ini conf env csv tsv xml svg png jpg jpeg gif pdf so apk img bin iso out o a
dll exe jar war class ipynb vue svelte dart mod sum gradle bak tmp orig patch diff rst tex
properties plist service""".split())
SKIP_WORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time", "exec",
              "nohup", "command", "builtin", "coproc", "noglob"}
NO_COMMAND = {"for", "select", "case", "function", "fi", "done", "esac", "}", "in", "((", "))"}
# flags that take the next word as their value, per program
VALUED = {"git": "-C -c --git-dir --work-tree --namespace", "make": "-C -f --directory --file",
          "cargo": "-p --package --manifest-path -j --target --features -F", "go": "-C",
          "uv": "--with --python -p --extra --package --group --env-file --directory --project "
                "--index --from",
          "npm": "--prefix -w --workspace -C", "pnpm": "-C --dir --filter -F -w", "yarn": "--cwd",
          "npx": "-p --package -c --call", "poetry": "-C --directory -P --project",
          "docker": "-H --host --context -c --config", "kubectl": "-n --namespace --context -c",
          "adb": "-s -t -H -P", "sudo": "-u -g -h -p -C -D -r -t -U --user --group --chdir",
          "env": "-u -C -S --unset --chdir", "timeout": "-s -k --signal --kill-after"}
VALUED = {k: set(v.split()) for k, v in VALUED.items()}
RUNNERS = {"uv run", "poetry run", "pipenv run", "pdm run", "hatch run", "rye run", "bundle exec",
           "pnpm exec", "pnpm dlx", "yarn dlx", "npm exec", "conda run", "mise exec", "direnv exec"}
ASSIGNMENT = re.compile(r"[A-Za-z_]\w*(\[[^\]]*\])?\+?=")
DELIMITER = re.compile(r"-?[ \t]*(?:'([^'\n]*)'|\"([^\"\n]*)\"|\\?([\w.-]+))")


def _heredoc(text, i, pending):
    """At '<<' (not '<<<'): note the delimiter, return the index after it (or None)."""
    m = DELIMITER.match(text, i + 2)
    word = m and (m.group(1) or m.group(2) or m.group(3))
    if not word:
        return None
    pending.append((word, text[i + 2] == "-"))
    return m.end()


def _past_bodies(text, i, pending):
    """From the start of a line: past the heredoc bodies waiting for their delimiters."""
    for word, tabs in pending:
        while i < len(text):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            line = (text[i:end].lstrip("\t") if tabs else text[i:end]).strip()
            i = end + 1
            if line == word or line.rstrip(")\"'` ;") == word:
                break
    pending.clear()
    return min(i, len(text))


def _closing(text, i):
    """Index after the ')' closing the '(' at text[i] (quotes, $( ) and heredocs inside)."""
    depth, pending = 0, []
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
        elif c == "'":
            j = text.find("'", i + 1)
            i = len(text) if j < 0 else j + 1
        elif c == '"':
            i = _dquoted(text, i, [])
        elif text.startswith("<<", i) and not text.startswith("<<<", i):
            j = _heredoc(text, i, pending)
            i = i + 2 if j is None else j
        elif c == "\n" and pending:
            i = _past_bodies(text, i + 1, pending)
        else:
            depth += (c == "(") - (c == ")")
            i += 1
            if c == ")" and depth <= 0:
                return i
    return len(text)


def _dquoted(text, i, buf):
    """At '"': its text into buf; returns the index after the closing quote."""
    j = i + 1
    while j < len(text) and text[j] != '"':
        if text[j] == "\\" and j + 1 < len(text):
            buf.append(text[j + 1])
            j += 2
        elif text.startswith("$(", j):
            k = _closing(text, j + 1)
            buf.append(text[j:k])
            j = k
        else:
            buf.append(text[j])
            j += 1
    return j + 1


def commands(text):
    """Shell text -> its simple commands at top level, each a list of words.

    Splits at && || ; | & ( ) and newlines. A quoted string is its text; $( ), backticks and
    heredoc bodies are no commands of their own; comments and redirections (with their
    targets) are no words."""
    out, words, buf, pending = [], [], [], []
    state = {"word": False, "target": False}

    def end_word():
        if state["word"]:
            if not state["target"]:
                words.append("".join(buf))
            state.update(word=False, target=False)
            buf.clear()

    def end_command():
        end_word()
        state["target"] = False
        if words:
            out.append(words[:])
            words.clear()

    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            if text[i + 1:i + 2] != "\n":
                buf.append(text[i + 1:i + 2])
                state["word"] = True
            i += 2
        elif c == "'":
            j = text.find("'", i + 1)
            j = n if j < 0 else j
            buf.append(text[i + 1:j])
            state["word"], i = True, j + 1
        elif c == '"':
            i = _dquoted(text, i, buf)
            state["word"] = True
        elif text.startswith("$(", i) or c == "`":
            j = _closing(text, i + 1) if c == "$" else (text.find("`", i + 1) + 1 or n)
            buf.append(text[i:j])
            state["word"], i = True, j
        elif c == "#" and not state["word"]:
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "\n":
            end_command()
            i = _past_bodies(text, i + 1, pending) if pending else i + 1
        elif c in " \t\r":
            end_word()
            i += 1
        elif c in "<>" or text.startswith("&>", i):
            if state["word"] and "".join(buf).isdigit():        # 2>file: the fd is no word
                buf.clear()
                state["word"] = False
            end_word()
            if text.startswith("<<", i) and not text.startswith("<<<", i):
                j = _heredoc(text, i, pending)
                if j is not None:
                    i = j
                    continue
            i += 1
            while i < n and text[i] in "<>&|":
                i += 1
            state["target"] = True
        elif c in ";&|()":
            end_command()
            i += 1
            while c not in "()" and i < n and text[i] in ";&|":
                i += 1
        else:
            buf.append(c)
            state["word"], i = True, i + 1
    end_command()
    return out


def _subcommand(word):
    """Does a word read as a subcommand (not an id, a number or a file name)?"""
    if not re.fullmatch(r"[A-Za-z][A-Za-z_:.-]{0,39}", word):
        return False
    return "." not in word or word.rsplit(".", 1)[1].lower() not in FILE_EXTS | {""}


def _unflagged(words, prog):
    """The words after the leading flags (and the values of the program's valued flags)."""
    valued, i = VALUED.get(prog, ()), 0
    while i < len(words) and words[i][:1] in "-+" and words[i] and words[i] != "--":
        i += 2 if words[i] in valued else 1
    return words[i + (words[i:i + 1] == ["--"]):]


def shape(words, depth=0):
    """The words of one simple command -> (shape, words from the program on) or None."""
    ws = list(words)
    while ws:
        w = ws[0]
        if w in NO_COMMAND:
            return None
        if w in SKIP_WORDS or ASSIGNMENT.match(w):
            ws.pop(0)
        elif w in ("sudo", "doas", "env", "timeout", "nice"):
            ws = _unflagged(ws[1:], "sudo" if w == "doas" else w)
            while w == "env" and ws and ASSIGNMENT.match(ws[0]):
                ws = _unflagged(ws[1:], "env")
            if w == "timeout" and ws and re.fullmatch(r"\d+(\.\d+)?[smhd]?", ws[0]):
                ws.pop(0)
            if w == "nice" and ws and re.fullmatch(r"-?\d+", ws[0]):
                ws.pop(0)
        else:
            break
    if not ws or not ws[0] or ws[0][0] in "()":
        return None
    prog = os.path.basename(ws[0].rstrip("/")) or ws[0]
    args = ws[1:]
    rest = _unflagged(args, prog)
    if prog == "git" or depth >= 4:
        sub = rest[:1] if prog == "git" and rest and _subcommand(rest[0]) else []
        return " ".join([prog] + sub), [prog] + (rest if prog == "git" else args)
    if args and f"{prog} {args[0]}" in RUNNERS or prog in ("npx", "bunx", "pnpx"):
        head = [prog, args[0]] if f"{prog} {args[0]}" in RUNNERS else [prog]
        inner = shape(_unflagged(args[len(head) - 1:], prog), depth + 1)
        return (" ".join(head + [inner[0]]), head + inner[1]) if inner else (" ".join(head), head)
    if re.fullmatch(r"python(\d+(\.\d+)?)?", prog):
        i = 0
        while i < len(args) and args[i].startswith("-") and args[i] not in ("-m", "-c"):
            i += 2 if args[i] in ("-X", "-W") else 1
        inner = shape(args[i + 1:], depth + 1) if args[i:i + 1] == ["-m"] else None
        if inner:
            return f"{prog} -m {inner[0]}", [prog, "-m"] + inner[1]
        return prog, [prog] + args
    if prog in ("npm", "yarn", "pnpm", "bun") and rest[:1] in (["run"], ["run-script"]):
        script = _unflagged(rest[1:], prog)[:1]
        return " ".join([prog, "run"] + script), [prog, "run"] + _unflagged(rest[1:], prog)
    script = "." in prog and prog.rsplit(".", 1)[1].lower() in FILE_EXTS and prog != "manage.py"
    if prog not in OPERANDS and not script and rest and _subcommand(rest[0]):
        return f"{prog} {rest[0]}", [prog] + rest
    return prog, [prog] + args


def is_test(shp, words):
    first = shp.split()[0]
    if first in ("test", "[", "[["):
        return False
    if any("test" in w.lower() or w.lower() in TEST_TOOLS for w in shp.split()):
        return True
    if first in INTERPRETERS or re.match(r"python\d", first):
        script = next((w for w in words[1:] if not w.startswith("-")), "")
        name = os.path.basename(script).lower()
        return ("test" in name or "spec" in name) and len(name) < 80
    return False


def specific(shp):
    prog = shp.split()[0]
    return not (prog in GENERIC or prog.startswith("$") or shp in VCS_READS or shp in INTERPRETERS
                or re.fullmatch(r"python\d(\.\d+)?", shp))


def shell_text(tool_input):
    cmd = tool_input.get("command", tool_input.get("cmd")) if isinstance(tool_input, dict) else None
    if isinstance(cmd, list):
        cmd = [str(x) for x in cmd]
        if len(cmd) >= 3 and os.path.basename(cmd[0]) in ("bash", "sh", "zsh") and cmd[1] in ("-c", "-lc"):
            return cmd[2]
        return " ".join(cmd)
    return cmd if isinstance(cmd, str) else ""


def steps_of(payload):
    """One tool call -> its steps: ('cmd', shape, words, is_test) per command, or ('tool', name)."""
    name = payload.get("tool_name")
    if not isinstance(name, str) or not name:
        return []
    if name not in SHELLS:
        return [("tool", name)]
    found = (shape(ws) for ws in commands(shell_text(payload.get("tool_input"))[:200000]))
    return [("cmd", s, ws, is_test(s, ws)) for s, ws in filter(None, found)]


def item(step, vocab):
    """A step -> the habit it counts for in a vocabulary ('all' or 'spec'), or None."""
    if step[0] == "tool":
        left_out = LOOK_EDIT if vocab == "all" else PLUMBING
        return None if step[1] in SHELLS or step[1] in left_out else ("tool", step[1])
    return ("cmd", step[1]) if vocab == "all" or specific(step[1]) else None


def habits(steps, vocab):
    """(single habits, 2-3 step runs) of a list of steps; a repeated step counts once in a run."""
    singles, run = set(), []
    for st in steps:
        it = item(st, vocab)
        if it:
            singles.add(it)
            if not run or run[-1] != it:
                run.append(it)
    return singles, {tuple(run[i:i + k]) for k in (2, 3) for i in range(len(run) - k + 1)}


# --- what the briefing names ------------------------------------------------------------------
def names_in(text, implied=False):
    """Backticked names of a briefing in reading order: [(line, kind, value, words)].

    `Tool(...)` is that tool (a shell tool's argument is read as a command); `mcp__...` and a
    capitalised word are tool names; anything else is the shape of its first command. With
    `implied`, "Before committing/pushing: ..." also names git commit/push where it falls in
    the ritual: at "(then", else after the steps."""
    out = []
    for ln, line in enumerate((text or "").splitlines()):
        found = []
        for m in re.finditer(r"`([^`\n]+)`", line):
            t = m.group(1).strip()
            call = re.fullmatch(r"([A-Za-z_][\w.-]*)\((.*)\)", t)
            if call and call.group(1) not in SHELLS or not call and re.fullmatch(r"mcp__\S+|[A-Z][A-Za-z]+", t):
                tool = call.group(1) if call else t
                found.append((m.start(), (ln, "tool", tool, [tool])))
                continue
            cmds = commands(call.group(2) if call else t)
            r = shape(cmds[0]) if cmds else None
            if r:
                found.append((m.start(), (ln, "cmd", r[0], r[0].split())))
        low = line.lower()
        for phrase, cmd in (("before committing", "git commit"), ("before pushing", "git push"),
                            ("before you commit", "git commit"), ("before you push", "git push")):
            at = low.find(phrase) if implied else -1
            if at >= 0:
                then = line.find(" (then ", at)
                after = any(o > at for o, _ in found)
                pos = then if then >= 0 else len(line) if after else at
                found.append((pos, (ln, "cmd", cmd, cmd.split())))
        out += [nm for _, nm in sorted(found, key=lambda x: x[0])]
    return out


def _same_start(a, b):
    k = min(len(a), len(b))
    return k > 0 and a[:k] == b[:k]


def names_step(nm, step):
    """Does a briefing name name this step the agent took?"""
    if nm[1] == "tool":
        return step[0] == "tool" and step[1] == nm[2]
    return step[0] == "cmd" and (_same_start(nm[3], step[1].split()) or step[2][:len(nm[3])] == nm[3])


def names_habit(habit, names):
    """Is a habit named: a single one by any name, a run by one line naming its steps in order?"""
    def one(nm, it):
        return nm[1] == it[0] and (nm[2] == it[1] if it[0] == "tool" else _same_start(nm[3], it[1].split()))
    if not isinstance(habit[0], tuple):
        return any(one(nm, habit) for nm in names)
    lines = defaultdict(list)
    for nm in names:
        lines[nm[0]].append(nm)
    for line in lines.values():
        k = 0
        for nm in line:
            k += k < len(habit) and one(nm, habit[k])
        if k == len(habit):
            return True
    return False


def text_of(habit):
    return " -> ".join(h[1] for h in habit) if isinstance(habit[0], tuple) else habit[1]


# --- replay -------------------------------------------------------------------------------------
def with_pre_tool_use(lines):
    """The lines with a PreToolUse call before each tool call, as Claude Code sends it."""
    out = []
    for r in lines:
        if r["event"].startswith("post-tool-use"):
            p = {k: v for k, v in r["payload"].items() if k not in ("tool_response", "error", "is_interrupt")}
            p["hook_event_name"] = "PreToolUse"
            out.append(dict(r, event="pre-tool-use", payload=p))
        out.append(r)
    return out


def _main_repository(d):
    """A worktree's main checkout: its .git file names <common>/worktrees/<name>, whose
    commondir leads to <common> (the main checkout's .git)."""
    try:
        with open(os.path.join(d, ".git"), encoding="utf-8") as f:
            gitdir = os.path.join(d, f.read(4096).strip().partition("gitdir:")[2].strip())
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as f:
            common = os.path.realpath(os.path.join(gitdir, f.read(4096).strip()))
    except OSError:
        return d
    return os.path.dirname(common) if os.path.basename(common) == ".git" else common


def project_of(root, cwd):
    """The project of an original cwd: the nearest folder above it (below HOME) holding .git
    (a worktree: its main repository), .hg, .svn, .jj or .instinct-project; else the cwd."""
    top = os.path.realpath(root)
    path, home = os.path.realpath(root + cwd), os.path.realpath(root + home_of(cwd))
    d = path
    while True:
        for marker in (".instinct-project", ".git", ".hg", ".svn", ".jj"):
            if os.path.exists(os.path.join(d, marker)):
                found = _main_repository(d) if os.path.isfile(os.path.join(d, ".git")) else d
                return found[len(top):]
        parent = os.path.dirname(d)
        if parent in (d, home):
            return path[len(top):]
        d = parent


def run_source(mod, data, source, pre, beside, tmp):
    """Replay one source -> (sessions by id, hook answers, replay figures).

    An answer is every hook call's non-empty stdout (its additionalContext when it is JSON) or
    stderr, with its place: `at` (index in the replay, PreToolUse calls included) and `seq`."""
    lines = read_lines(data, source)
    if pre:
        lines = with_pre_tool_use(lines)
    answers = []

    def keep(i, r, out, err):
        text = out.strip()
        try:
            text = json.loads(text)["hookSpecificOutput"]["additionalContext"] if text else ""
        except (ValueError, KeyError, TypeError):
            pass
        answers.append({"at": i, "seq": r["seq"], "event": r["event"], "session": r["session"], "text": text,
                        "stderr": err.strip()[-300:]})
    with tempfile.TemporaryDirectory(dir=tmp) as root:
        with open(os.path.join(data, f"{source}.layout.json"), encoding="utf-8") as f:
            build_layout(root, json.load(f), beside=beside)
        if "holdout_percent" in getattr(mod, "SETTINGS", {}):     # every hint that would fire
            with mod.InstinctStore(os.path.join(root, "instinct.db")) as st:
                st.config("holdout_percent", "0")
        calls, secs = replay(mod, lines, root, os.path.join(root, "instinct.db"), keep)
        sessions = {}
        for i, r in enumerate(lines):
            p = r["payload"]
            s = sessions.setdefault(r["session"], {"id": r["session"], "start": None, "first": i,
                                                   "cwds": Counter(), "steps": [], "calls": 0})
            if r["event"] == "session-start" and s["start"] is None:
                s["start"], s["start_cwd"] = i, p["cwd"]
            if r["event"].startswith("post-tool-use") and not p.get("agent_id"):
                s["calls"] += 1
                s["cwds"][p["cwd"]] += 1
                s["steps"] += [(i,) + st for st in steps_of(p)]
        for s in sessions.values():
            cwd = s.get("start_cwd") or (s["cwds"].most_common(1)[0][0] if s["cwds"] else None)
            s["project"] = project_of(root, cwd) if cwd else "?"
            s["order"] = s["first"] if s["start"] is None else s["start"]
    said = {a["at"]: a["text"] for a in answers}
    for s in sessions.values():             # the answer to its first SessionStart, if any
        s["briefing"] = said.get(s["start"], "") if isinstance(said.get(s["start"]), str) else ""
    figures = {"hook_calls": len(lines), "tool_calls": calls, "seconds": round(secs, 2),
               "hook_stderr": sum(1 for a in answers if a["stderr"])}
    return sessions, answers, figures


# --- scoring ------------------------------------------------------------------------------------
def score_project(sessions):
    """One record per session after the project's first, scored against its briefing."""
    sessions = sorted(sessions, key=lambda s: s["order"])
    records = []
    for k, t in enumerate(sessions[1:], 1):
        count = {"all": Counter(), "spec": Counter()}
        last = {}
        for s in sessions:
            before = [x for x in s["steps"] if x[0] < t["order"]] if s is not t else []
            for v in count:
                singles, runs = habits([x[1:] for x in before], v)
                count[v].update(singles | runs)
            for x in before:
                it = item(x[1:], "spec")
                if it:
                    last[it] = max(last.get(it, -1), x[0])
        steps = [x[1:] for x in t["steps"]]
        names = list({(nm[1], nm[2]): nm for nm in names_in(t["briefing"])}.values())
        told = names_in(t["briefing"], implied=True)
        used = [nm for nm in names if any(names_step(nm, st) for st in steps)]
        rec = {"session": t["id"], "index": k + 1, "project": t["project"], "tool_calls": t["calls"],
               "scored": t["calls"] > 0 and t["start"] is not None, "briefing": t["briefing"],
               "names": [nm[2] for nm in names], "used": [nm[2] for nm in used],
               "unused": [nm[2] for nm in names if nm not in used],
               "did": [f"{n} x{c}" for n, c in Counter(st[1] for st in steps).most_common(20)]}
        for v in count:
            known = {h for h, c in count[v].items() if c >= MIN_SESSIONS}
            singles, runs = habits(steps, v)
            hit = sorted(known & (singles | runs), key=lambda h: (isinstance(h[0], tuple), text_of(h)))
            rec[f"known_{v}"] = len(known)
            rec[f"used_known_{v}"] = [text_of(h) for h in hit]
            rec[f"named_{v}"] = [text_of(h) for h in hit if names_habit(h, told)]
            rec[f"missed_{v}"] = [text_of(h) for h in hit if not names_habit(h, told)]
        first = next((st for st in steps if st[0] == "cmd" and st[3]), None)
        rec["test"] = first and {"shape": first[1], "named": any(names_step(nm, first) for nm in names)}
        top = sorted((h for h, c in count["spec"].items() if c >= MIN_SESSIONS and not isinstance(h[0], tuple)),
                     key=lambda h: (-count["spec"][h], -last.get(h, -1), h[1]))[:TOP]
        listed = [(0, h[0], h[1], h[1].split()) for h in top]
        singles = {h for h in habits(steps, "spec")[0] if count["spec"][h] >= MIN_SESSIONS}
        rec["top5"] = {"names": [h[1] for h in top],
                       "used": sum(any(names_step(nm, st) for st in steps) for nm in listed),
                       "hits": sum(names_habit(h, listed) for h in singles), "of": len(singles)}
        records.append(rec)
    return records


def ratio(hits, of):
    return {"hits": hits, "of": of, "value": round(hits / of, 3) if of else None}


def summary(records):
    rs = [r for r in records if r["scored"]]
    out = {"scored": len(rs), "briefed": sum(1 for r in rs if r["briefing"]),
           "names": sum(len(r["names"]) for r in rs),
           "precision": ratio(sum(len(r["used"]) for r in rs), sum(len(r["names"]) for r in rs))}
    for v in ("all", "spec"):
        out[f"recall_{v}"] = ratio(sum(len(r[f"named_{v}"]) for r in rs),
                                   sum(len(r[f"used_known_{v}"]) for r in rs))
        out[f"empty_though_known_{v}"] = sum(1 for r in rs if not r["briefing"] and r[f"known_{v}"])
        out[f"empty_though_used_known_{v}"] = sum(1 for r in rs if not r["briefing"] and r[f"used_known_{v}"])
    one = [(h, h in r["named_spec"]) for r in rs for h in r["used_known_spec"] if " -> " not in h]
    out["recall_spec_single"] = ratio(sum(ok for _, ok in one), len(one))
    runs = [(h, h in r["named_spec"]) for r in rs for h in r["used_known_spec"] if " -> " in h]
    out["recall_spec_runs"] = ratio(sum(ok for _, ok in runs), len(runs))
    tests = [r["test"] for r in rs if r["test"]]
    out["test_named_first"] = ratio(sum(t["named"] for t in tests), len(tests))
    out["top5_precision"] = ratio(sum(r["top5"]["used"] for r in rs), sum(len(r["top5"]["names"]) for r in rs))
    out["top5_recall_single"] = ratio(sum(r["top5"]["hits"] for r in rs), sum(r["top5"]["of"] for r in rs))
    out["most_missed_spec"] = Counter(m for r in rs for m in r["missed_spec"]).most_common(8)
    out["never_used_names"] = Counter(n for r in rs for n in r["unused"]).most_common(8)
    return out


def judge(a, after):
    """Was a hint right, by what the agent did next (the sessions were recorded without hints)?
    A command hint ("...: `X` (n sessions), not `Y`"): the next command the agent ran of either
    shape (after the call the hint came before) is X's. A fix hint ("When `A` failed here, `B`
    then a re-run fixed it"): B (an edit for "fixing the code") ran before A's next run.
    -> True / False, or None when the session never told (no such command followed)."""
    ticks = re.findall(r"`([^`]+)`", a["text"])
    if a["text"].startswith("instinct: When ") and ticks:
        failed, fix = ticks[0], (ticks[1] if "fixing the code" not in a["text"] else None)
        for x in after:
            if x[1] == "cmd" and " ".join(x[3]).startswith(failed):
                return False
            if x[1] == "cmd" and fix and " ".join(x[3]).startswith(fix) or \
                    not fix and x[1] == "tool" and x[2] in ("Edit", "Write", "MultiEdit"):
                return True
        return None
    if len(ticks) < 2 or " not `" not in a["text"]:
        return None
    want, other = ticks[0], ticks[-1]
    first = next((x[0] for x in after), None)
    for x in after:
        if x[0] == first and a["event"] == "pre-tool-use" or x[1] != "cmd":
            continue                  # the call the hint came before ran as planned
        cmd = " ".join(x[3])
        if cmd.startswith(want):
            return True
        if cmd.startswith(other):
            return False
    return None


def hints(sessions, answers, tool_calls):
    """Every hook answer but the briefing, with the next 5 shell shapes its session ran and,
    for a hint (an answer starting 'instinct: '), whether it was right (`judge`)."""
    out = []
    for a in answers:
        if a["event"] == "session-start" or not a["text"]:
            continue
        s = sessions.get(a["session"])
        after = [x for x in (s["steps"] if s else []) if x[0] > a["at"]]
        nxt = [x[2] for x in after if x[1] == "cmd"][:5]
        hint = a["event"] != "user-prompt-submit" and a["text"].startswith("instinct: ")
        right = judge(a, after) if hint else None
        a = dict(a, hint=hint)
        out.append(dict(a, next_shell=nxt, right=right))
    per_event = Counter(h["event"] for h in out)
    decided = [h["right"] for h in out if h["right"] is not None]
    return {"answers": out, "per_event": dict(per_event),
            "per_100_tool_calls": {e: round(100 * c / tool_calls, 2) if tool_calls else None
                                   for e, c in per_event.items()},
            "hints": sum(h["hint"] for h in out),
            "right": sum(decided), "decided": len(decided),
            "precision": round(sum(decided) / len(decided), 3) if decided else None}


# --- printing -----------------------------------------------------------------------------------
def cell(d):
    return "-" if d["value"] is None else f"{d['value']:.2f} ({d['hits']}/{d['of']})"


COLUMNS = ("", "scored", "briefed", "names", "P", "R all", "R spec", "R spec 1-step",
           "R spec 2-3-step", "test named", "empty&known", "empty&used", "top5 P", "top5 R 1-step")


def row(name, s):
    return [name, str(s["scored"]), str(s["briefed"]), str(s["names"]), cell(s["precision"]),
            cell(s["recall_all"]), cell(s["recall_spec"]), cell(s["recall_spec_single"]),
            cell(s["recall_spec_runs"]), cell(s["test_named_first"]), str(s["empty_though_known_spec"]),
            str(s["empty_though_used_known_spec"]),
            cell(s["top5_precision"]), cell(s["top5_recall_single"])]


def table(rows):
    rows = [list(COLUMNS)] + rows
    width = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    for n, r in enumerate(rows):
        print("  ".join(c.ljust(width[i]) if i == 0 else c.rjust(width[i]) for i, c in enumerate(r)))
        if n == 0:
            print("  ".join("-" * w for w in width))


def badness(r):
    """Worst first: the lower F1 of precision and specific recall, then more names and misses."""
    p = len(r["used"]) / len(r["names"]) if r["names"] else None
    rc = len(r["named_spec"]) / len(r["used_known_spec"]) if r["used_known_spec"] else None
    vals = [x for x in (p, rc) if x is not None]
    f1 = 2 * p * rc / (p + rc) if len(vals) == 2 and p + rc else vals[0] if len(vals) == 1 else 0.0
    return (f1, -(len(r["unused"]) + len(r["missed_spec"])))


def show(records, n):
    print(f"\n## the {n} worst briefings beside what the session did")
    ranked = sorted((r for r in records if r["scored"] and (r["names"] or r["used_known_spec"])), key=badness)
    for r in ranked[:n]:
        print(f"- {r['source']} {r['project']} session {r['session'][:8]} (#{r['index']}, "
              f"{r['tool_calls']} tool calls)")
        for line in (r["briefing"] or "(empty briefing)").splitlines():
            print(f"    | {line}")
        print(f"    named, unused: {', '.join(r['unused']) or '-'}")
        print(f"    known habits used, not named: {', '.join(r['missed_spec'][:12]) or '-'}")
        print(f"    did: {', '.join(r['did'][:12]) or '-'}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.environ.get("INSTINCT_REALDATA")
                    or os.path.join(HERE, "..", "..", "shared", "realdata"))
    ap.add_argument("--source", action="append", help="score only this source (repeatable)")
    ap.add_argument("--instinct", default=os.path.join(HERE, "..", "instinct.py"))
    ap.add_argument("--json", metavar="FILE", help="write every number (and every record) there")
    ap.add_argument("--show", type=int, default=0, metavar="N", help="print the N worst briefings")
    ap.add_argument("--hints", action="store_true", help="list the hook answers other than briefings")
    ap.add_argument("--pre-tool-use", choices=("auto", "on", "off"), default="auto")
    ap.add_argument("--join-worktrees", action="store_true",
                    help="a worktree's main repository is the one its name starts with")
    ap.add_argument("--tmp", default="/dev/shm" if os.access("/dev/shm", os.W_OK) else None,
                    help="where the replay's temporary tree goes (default: %(default)s)")
    ap.add_argument("--min-sessions", type=int, default=5, metavar="N",
                    help="earlier sessions of the project that must hold a habit for it to count as "
                         "known (default 5: the contract's maturity; 3: a cold start)")
    a = ap.parse_args(argv)
    global MIN_SESSIONS
    MIN_SESSIONS = a.min_sessions
    found = checked(a, "bench_predict")
    saved = {k: os.environ.get(k) for k in ("HOME", "INSTINCT_DB")}
    for k in ("INSTINCT_DISABLE", "INSTINCT_DEBUG", "INSTINCT_SOURCE", "INSTINCT_SESSION", "CLAUDE_CONFIG_DIR"):
        os.environ.pop(k, None)
    t0 = time.perf_counter()
    mod = load(a.instinct)
    events = (mod.CLIENTS["claude-code"].events if hasattr(mod, "CLIENTS")   # the client table
              else mod._Setup.HOOK_EVENTS_CLAUDE)                           # an older copy
    registered = any(e[1] == "pre-tool-use" for e in events)
    pre = a.pre_tool_use == "on" or a.pre_tool_use == "auto" and registered
    report, everything = {"instinct": os.path.abspath(a.instinct), "data": os.path.abspath(a.data),
                          "pre_tool_use": pre, "join_worktrees": a.join_worktrees,
                          "min_sessions": MIN_SESSIONS, "sources": {}}, []
    try:
        for source in a.source or found:
            sessions, answers, figures = run_source(mod, a.data, source, pre, not a.join_worktrees, a.tmp)
            by_project = defaultdict(list)
            for s in sessions.values():
                by_project[s["project"]].append(s)
            records, projects = [], {}
            for p in sorted(by_project, key=lambda p: (-len(by_project[p]), p)):
                recs = score_project(by_project[p])
                projects[p] = dict(summary(recs), sessions=len(by_project[p]))
                records += [dict(r, source=source) for r in recs]
            everything += records
            report["sources"][source] = {"replay": figures, "sessions": len(sessions), "projects": projects,
                                         "total": summary(records), "records": records,
                                         "answers": answers,
                                         "hints": hints(sessions, answers, figures["tool_calls"])}
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    report["overall"] = summary(everything)
    report["seconds"] = round(time.perf_counter() - t0, 1)
    for source, r in report["sources"].items():
        f = r["replay"]
        print(f"\n## {source}: {r['sessions']} sessions, {f['hook_calls']} hook calls replayed in "
              f"{f['seconds']} s ({f['hook_stderr']} wrote to stderr)")
        table([row(p, s) for p, s in r["projects"].items()] + [row("TOTAL " + source, r["total"])])
    print(f"\n## overall (a habit is known once {MIN_SESSIONS} earlier sessions held it)")
    table([row("ALL", report["overall"])])
    o = report["overall"]
    print("most missed known habits (spec):", ", ".join(f"{k} x{v}" for k, v in o["most_missed_spec"]) or "-")
    print("names never used in their session:", ", ".join(f"{k} x{v}" for k, v in o["never_used_names"]) or "-")
    if a.hints:
        print(f"\n## hints: hook answers other than the briefing (PreToolUse sent: {'yes' if pre else 'no'})")
        for source, r in report["sources"].items():
            h = r["hints"]
            per = ", ".join(f"{e} {n} ({h['per_100_tool_calls'][e]} per 100 tool calls)"
                            for e, n in sorted(h["per_event"].items())) or "none"
            print(f"{source}: {per}; hints {h['hints']}, right {h['right']} of {h['decided']}"
                  f" decided (precision {h['precision']})")
            for x in h["answers"]:
                nxt = ", ".join(x["next_shell"]) or "-"
                verdict = {True: "RIGHT", False: "WRONG", None: "undecided"}[x["right"]]
                print(f"    at {x['at']} {x['event']} {verdict}: {x['text'][:150]!r} -> next: {nxt}")
        calls = sum(r["replay"]["tool_calls"] for r in report["sources"].values())
        n = sum(r["hints"]["hints"] for r in report["sources"].values())
        right = sum(r["hints"]["right"] for r in report["sources"].values())
        decided = sum(r["hints"]["decided"] for r in report["sources"].values())
        print(f"all sources: {n} hints in {calls} tool calls ({100 * n / max(1, calls):.2f} per 100);"
              f" right {right} of {decided} decided"
              f" (precision {right / decided if decided else float('nan'):.2f})")
    if a.show:
        show(everything, a.show)
    print(f"\nbench_predict: {report['seconds']} s in all")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, ensure_ascii=False, default=list)
        print(f"written: {a.json}")


if __name__ == "__main__":
    main()
