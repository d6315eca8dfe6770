"""Synthetic Claude Code sessions in the realdata format, for tests and benchmarks.

    python bench/sessions.py OUT_DIR [--scenario NAME ...] [--seed N] [--plain]

Writes <scenario>.payloads.jsonl.gz (--plain: .jsonl) and <scenario>.layout.json per scenario
(the format of ../shared/realdata/README.md), which bench_realdata and bench_predict read with
--data OUT_DIR; old_history writes Claude Code transcripts under OUT_DIR/old_history/home for
`instinct import-history`. Scenarios, each a function of a seed (random.Random(seed): the same
seed writes the same bytes):

  random_sessions    commands drawn evenly from ~40 shapes of several toolchains, some
                     failing, in several projects: no workflow, no fix, no dominant command
  plain_command      a command with no role word (`just verify`) in each of 6 sessions among
                     noise: mature by the 5th and briefed
  ritual             a 7-step ritual in each of 6 sessions, noise around it, sometimes one
                     extra step inside: at most 2 briefing lines should describe it
  automation_prompt  the same fixed prompt every session (an autonomous loop) with words like
                     "don't stop" and "instead": no correction
  old_history        transcripts 400 days old (~/.claude/projects/<dir>/<uuid>.jsonl)
"""
import argparse
import datetime
import gzip
import json
import os
import random
import sys

HOME = "/home/dev"
T0 = datetime.datetime(2025, 3, 3, 9, 0, tzinfo=datetime.timezone.utc)
MODEL = "claude-sonnet-4-5-20250929"
VERSION = "2.0.14"

# shape -> argument variants; {id} {n} {f} are filled in per call
POOL = {
    "cargo build": ["cargo build", "cargo build --release", "cargo build -p core"],
    "cargo test": ["cargo test", "cargo test -- --nocapture", "cargo test parser::tests"],
    "cargo clippy": ["cargo clippy --all-targets -- -D warnings", "cargo clippy"],
    "cargo fmt": ["cargo fmt", "cargo fmt --check"],
    "cargo run": ["cargo run -- --help", "cargo run --bin server"],
    "npm install": ["npm install", "npm install --save-dev vitest", "npm ci"],
    "npm test": ["npm test", "npm test -- --watch=false"],
    "npm run build": ["npm run build", "npm run build -- --mode production"],
    "npm run lint": ["npm run lint", "npm run lint -- --fix"],
    "pnpm install": ["pnpm install", "pnpm install --frozen-lockfile"],
    "pnpm test": ["pnpm test", "pnpm test src/api"],
    "pnpm run dev": ["pnpm run dev", "pnpm run dev --port 5174"],
    "npx tsc": ["npx tsc --noEmit", "npx tsc -p tsconfig.build.json"],
    "pytest": ["pytest -x -q", "pytest tests/test_{f}.py -k {f}", "pytest --lf"],
    "uv run pytest": ["uv run pytest -q", "uv run pytest tests/test_{f}.py"],
    "uv sync": ["uv sync", "uv sync --all-extras"],
    "uv run ruff": ["uv run ruff check .", "uv run ruff check --fix src"],
    "ruff check": ["ruff check .", "ruff check src/{f}.py"],
    "ruff format": ["ruff format .", "ruff format --check src"],
    "mypy": ["mypy src", "mypy --strict src/{f}.py"],
    "go build": ["go build ./...", "go build -o bin/app ./cmd/app"],
    "go test": ["go test ./...", "go test -run Test{F} ./internal/...", "go test -race ./..."],
    "go vet": ["go vet ./..."],
    "go mod": ["go mod tidy", "go mod download"],
    "mix test": ["mix test", "mix test test/{f}_test.exs", "mix test --failed"],
    "mix compile": ["mix compile", "mix compile --warnings-as-errors"],
    "mix format": ["mix format", "mix format --check-formatted"],
    "mix deps.get": ["mix deps.get"],
    "mix credo": ["mix credo --strict", "mix credo"],
    "make": ["make", "make -j4"],
    "make test": ["make test", "make test V=1"],
    "make build": ["make build", "make -C web build"],
    "docker compose": ["docker compose up -d db", "docker compose logs --tail 50 api"],
    "docker build": ["docker build -t app:dev .", "docker build -f Dockerfile.ci ."],
    "gh pr": ["gh pr view {n}", "gh pr checks", "gh pr create --fill"],
    "git add": ["git add -A", "git add src/{f}.py"],
    "git commit": ["git commit -m \"Fix {f} handling\"",
                   "git commit -m \"$(cat <<'EOF'\nRefactor {f}: don't panic | keep order\n\nEOF\n)\""],
    "git push": ["git push", "git push -u origin feature/{f}"],
    "git pull": ["git pull --rebase"],
    "npm run typecheck": ["npm run typecheck"],
}
NOISE_SHELL = ["ls -la", "git status", "git diff --stat", "git log --oneline -5", "cat README.md",
               "grep -rn TODO src | head -20", "find . -name '*.{ext}' | wc -l", "pwd"]
WORDS = "parser config cache session user token router schema report worker queue".split()
PROMPTS = ["Fix the failing {f} tests", "Add pagination to the {f} endpoint",
           "Why is the {f} module slow? Profile it.", "Refactor {f} into smaller functions",
           "Update the docs for {f}", "Review the open PR about {f}"]
PROJECTS = {"api": "py", "web": "ts", "engine": "rs", "svc": "go", "portal": "ex"}


def _iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


class Source:
    """One user's sessions, collected as realdata lines and the folders they ran in."""

    def __init__(self, seed=0, home=HOME, t0=T0):
        self.rng, self.home, self.t = random.Random(seed), home, t0
        self.lines, self.repos, self.dirs = [], {}, set()

    def repo(self, name):
        """A git repository under ~/src -> its path."""
        path = f"{self.home}/src/{name}"
        self.repos[path] = "dir"
        self.dirs.add(path)
        return path

    def uid(self, n=32, chars="0123456789abcdef"):
        return "".join(self.rng.choice(chars) for _ in range(n))

    def session_id(self):
        h = self.uid()
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def emit(self, event, payload, session):
        self.t += datetime.timedelta(seconds=self.rng.randint(2, 40))
        self.lines.append({"seq": len(self.lines), "ts": _iso(self.t), "event": event,
                           "session": session, "payload": payload})

    def start(self, cwd, prompt=None, source="startup"):
        """A new session in `cwd` (SessionStart, then the first prompt) -> Session."""
        self.dirs.add(cwd)
        self.t += datetime.timedelta(hours=self.rng.randint(3, 30))
        s = Session(self, cwd, self.session_id())
        s.hook("session-start", "SessionStart", source=source, model=MODEL)
        s.prompt(prompt or self.fill(self.rng.choice(PROMPTS)))
        return s

    def fill(self, text):
        f = self.rng.choice(WORDS)
        return text.replace("{f}", f).replace("{F}", f.title()).replace(
            "{n}", str(self.rng.randint(10, 400))).replace("{ext}", self.rng.choice(["py", "ts", "go"]))

    def layout(self):
        return {"repos": [{"path": p, "git": g} for p, g in sorted(self.repos.items())],
                "dirs": sorted(self.dirs)}

    def write(self, folder, name, gz=True):
        """<name>.payloads.jsonl(.gz) and <name>.layout.json in `folder` -> their paths."""
        os.makedirs(folder, exist_ok=True)
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines).encode()
        path = os.path.join(folder, f"{name}.payloads.jsonl" + (".gz" if gz else ""))
        with open(path, "wb") as f:
            f.write(gzip.compress(data, mtime=0) if gz else data)
        layout = os.path.join(folder, f"{name}.layout.json")
        with open(layout, "w", encoding="utf-8") as f:
            json.dump(self.layout(), f, indent=1)
        return path, layout


class Session:
    """Tool calls of one session, each a PostToolUse (or PostToolUseFailure) payload."""

    def __init__(self, src, cwd, sid):
        self.src, self.cwd, self.id, self.rng = src, cwd, sid, src.rng
        slug = cwd.replace("/", "-").replace(".", "-")
        self.transcript = f"{src.home}/.claude/projects/{slug}/{sid}.jsonl"

    def hook(self, event, name, agent=None, **fields):
        p = {"session_id": self.id, "transcript_path": self.transcript, "cwd": self.cwd,
             "permission_mode": "default", "hook_event_name": name}
        if agent:
            p.update(agent_id=agent[0], agent_type=agent[1])
        p.update(fields)
        self.src.emit(event, p, self.id)

    def prompt(self, text):
        self.hook("user-prompt-submit", "UserPromptSubmit", prompt=text)

    def tool(self, name, tool_input, response, failed=None, agent=None):
        use = "toolu_01" + self.src.uid(22, "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789")
        if failed is None:
            self.hook("post-tool-use", "PostToolUse", agent, tool_name=name, tool_input=tool_input,
                      tool_response=response, tool_use_id=use)
        else:
            self.hook("post-tool-use-failure", "PostToolUseFailure", agent, tool_name=name,
                      tool_input=tool_input, tool_use_id=use, error=failed, is_interrupt=False)

    def bash(self, command, fail=False, out="", agent=None):
        command = self.src.fill(command)
        desc = "Run " + command.split("\n")[0][:40]
        if fail:
            code = self.rng.choice([1, 1, 2, 101])
            err = f"Exit code {code}\nerror: {self.src.fill('{f}')} failed"
            return self.tool("Bash", {"command": command, "description": desc}, None, err, agent)
        self.tool("Bash", {"command": command, "description": desc},
                  {"stdout": out or "ok", "stderr": "", "interrupted": False, "isImage": False}, agent=agent)

    def _file(self):
        ext = self.rng.choice(["py", "ts", "rs", "go", "ex", "md"])
        return f"{self.cwd}/src/{self.rng.choice(WORDS)}.{ext}"

    def read(self, agent=None):
        path = self._file()
        self.tool("Read", {"file_path": path}, {"type": "text", "file": {
            "filePath": path, "content": "def main():\n    pass\n", "numLines": 2, "startLine": 1,
            "totalLines": 2}}, agent=agent)

    def edit(self):
        path = self._file()
        old, new = "return None", "return result"
        self.tool("Edit", {"file_path": path, "old_string": old, "new_string": new, "replace_all": False},
                  {"filePath": path, "oldString": old, "newString": new, "originalFile": "x\n",
                   "structuredPatch": [{"oldStart": 3, "oldLines": 1, "newStart": 3, "newLines": 1,
                                        "lines": [f"-    {old}", f"+    {new}"]}],
                   "userModified": False, "replaceAll": False})

    def grep(self, agent=None):
        pattern = self.rng.choice(WORDS)
        files = [f"src/{pattern}.py"]
        self.tool("Grep", {"pattern": pattern, "path": self.cwd, "output_mode": "files_with_matches"},
                  {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)}, agent=agent)

    def skill(self, name):
        self.tool("Skill", {"skill": name}, {"success": True, "commandName": name})

    def task(self, subagent_type, description):
        """A Task call; the subagent's own calls (agent_id set) come first, as Claude Code sends them."""
        agent = (self.src.uid(8), subagent_type)
        for _ in range(self.rng.randint(1, 3)):
            self.rng.choice([self.read, self.grep])(agent=agent)
        self.tool("Task", {"subagent_type": subagent_type, "description": description,
                           "prompt": f"{description}. Report what you find in under 200 words."},
                  {"status": "completed", "content": [{"type": "text", "text": "Found 3 places."}],
                   "totalDurationMs": 41200, "totalTokens": 18211, "totalToolUseCount": 5})

    def mcp(self, server, name, args):
        self.tool(f"mcp__{server}__{name}", args, [{"type": "text", "text": '{"results": []}'}])

    def noise(self, k):
        """k calls a session makes around its work: reads, edits, searches, looking around."""
        for _ in range(k):
            r = self.rng.random()
            if r < 0.35:
                self.read()
            elif r < 0.6:
                self.edit()
            elif r < 0.75:
                self.grep()
            elif r < 0.95:
                self.bash(self.rng.choice(NOISE_SHELL))
            else:
                self.mcp("context7", "get-library-docs", {"context7CompatibleLibraryID": "/org/lib"})

    def end(self, reason="prompt_input_exit"):
        self.hook("stop", "Stop", stop_hook_active=False)
        self.hook("session-end", "SessionEnd", reason=reason)


def random_sessions(n=300, seed=0):
    """Sessions of commands drawn evenly from the pool (15% fail) in 5 projects."""
    src = Source(seed)
    repos = [src.repo(p) for p in PROJECTS]
    shapes = sorted(POOL)
    for _ in range(n):
        s = src.start(src.rng.choice(repos))
        for _ in range(src.rng.randint(6, 18)):
            s.noise(src.rng.randint(0, 2))
            s.bash(src.rng.choice(POOL[src.rng.choice(shapes)]), fail=src.rng.random() < 0.15)
        if src.rng.random() < 0.1:
            s.task("Explore", "Find where " + src.fill("{f}") + " is parsed")
        s.end()
    return src


def _other_command(src):
    return src.rng.choice(POOL[src.rng.choice(sorted(POOL))])


def plain_command(n=6, seed=0, command="just verify"):
    """`command` (no role word in it) once or twice in each session, among noise."""
    src = Source(seed)
    repo = src.repo("shop")
    for _ in range(n):
        s = src.start(repo)
        s.noise(src.rng.randint(4, 10))
        for _ in range(src.rng.randint(1, 2)):
            s.bash(command, fail=src.rng.random() < 0.2)
            s.noise(src.rng.randint(1, 4))
            if src.rng.random() < 0.5:
                s.bash(_other_command(src))
        s.end()
    return src


RITUAL = ["mix format", "mix compile --warnings-as-errors", "mix credo --strict", "mix test",
          "bd close spot-{n}", "git commit -m \"Close issue {n}\"", "git push", "bd sync",
          "gh pr create --fill"]


def ritual(n=6, steps=7, seed=0):
    """The first `steps` of RITUAL at the end of each session's work; a third of the time with
    one extra command inside; noise around it (and once a second round)."""
    if not 2 <= steps <= len(RITUAL):
        raise ValueError(f"steps must be 2..{len(RITUAL)}")
    src = Source(seed)
    repo = src.repo("spotter")
    for _ in range(n):
        s = src.start(repo)
        for _ in range(src.rng.choice([1, 1, 2])):
            s.noise(src.rng.randint(5, 12))
            cmds = RITUAL[:steps]
            if src.rng.random() < 0.34:
                cmds = list(cmds)
                cmds.insert(src.rng.randint(1, steps - 1), "mix deps.get")
            for c in cmds:
                s.bash(c)
        s.noise(src.rng.randint(0, 3))
        s.end()
    return src


LOOP_PROMPT = ("Continue with the next ready issue from `bd ready`. Don't stop to ask me "
               "questions: if a command fails, try another approach instead, and commit when "
               "the tests pass. Keep going until no issue is left.")


def automation_prompt(n=6, seed=0):
    """An autonomous loop: every session (and every turn) is prompted with LOOP_PROMPT."""
    src = Source(seed)
    repo = src.repo("loop")
    for _ in range(n):
        s = src.start(repo, prompt=LOOP_PROMPT)
        for turn in range(src.rng.randint(1, 3)):
            if turn:
                s.hook("stop", "Stop", stop_hook_active=False)
                s.prompt(LOOP_PROMPT)
            s.bash("bd ready")
            s.noise(src.rng.randint(3, 8))
            s.bash("uv run pytest -q", fail=src.rng.random() < 0.3)
            if src.rng.random() < 0.5:
                s.skill("commit")
        s.end()
    return src


def old_history(home, n=5, days=400, seed=0, now=None):
    """Claude Code transcripts of n sessions, `days` old, under home/.claude/projects -> paths.

    One line per message as Claude Code writes them: the user's prompt, each assistant
    tool_use, each tool_result (with toolUseResult), file times set to the session's end."""
    src = Source(seed, home=HOME)
    repo = src.repo("legacy")
    now = now or datetime.datetime.now(datetime.timezone.utc)
    src.t = now - datetime.timedelta(days=days + 7)     # n <= 5 sessions: 30 h apart at most
    for _ in range(n):
        s = src.start(repo)
        for _ in range(src.rng.randint(3, 8)):
            s.noise(1)
            s.bash("make test", fail=src.rng.random() < 0.25)
        s.bash("make lint")
        s.end()
    return transcripts(src, home)


def transcripts(src, home):
    """The sessions of `src` as Claude Code transcripts under home/.claude/projects -> paths."""
    paths = []
    for sid in dict.fromkeys(line["session"] for line in src.lines):
        lines = [line for line in src.lines if line["session"] == sid]
        slug = lines[0]["payload"]["cwd"].replace("/", "-").replace(".", "-")
        path = os.path.join(home, ".claude", "projects", slug, f"{sid}.jsonl")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            for rec in _transcript(src, lines):
                f.write(json.dumps(rec) + "\n")
        end = datetime.datetime.strptime(lines[-1]["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")
        stamp = end.replace(tzinfo=datetime.timezone.utc).timestamp()
        os.utime(path, (stamp, stamp))
        paths.append(path)
    return paths


def _transcript(src, lines):
    """Hook lines of one session -> its transcript records."""
    parent = None
    for line in lines:
        p, ts = line["payload"], line["ts"]
        base = {"parentUuid": parent, "isSidechain": bool(p.get("agent_id")), "userType": "external",
                "cwd": p["cwd"], "sessionId": p["session_id"], "version": VERSION, "gitBranch": "main",
                "timestamp": ts}
        if line["event"] == "user-prompt-submit":
            parent = src.uid()
            yield dict(base, type="user", uuid=parent, message={"role": "user", "content": p["prompt"]})
        elif line["event"].startswith("post-tool-use"):
            failed = line["event"].endswith("failure")
            use, result = src.uid(), src.uid()
            yield dict(base, type="assistant", uuid=use, requestId="req_" + src.uid(24), message={
                "id": "msg_" + src.uid(24), "type": "message", "role": "assistant", "model": MODEL,
                "content": [{"type": "tool_use", "id": p["tool_use_id"], "name": p["tool_name"],
                             "input": p["tool_input"]}], "stop_reason": "tool_use"})
            text = p["error"] if failed else json.dumps(p.get("tool_response"))[:400]
            rec = dict(base, type="user", uuid=result, parentUuid=use, message={"role": "user", "content": [
                {"tool_use_id": p["tool_use_id"], "type": "tool_result", "content": text, "is_error": failed}]})
            if not failed:
                rec["toolUseResult"] = p.get("tool_response")
            yield rec
            parent = result


SCENARIOS = {"random_sessions": random_sessions, "plain_command": plain_command, "ritual": ritual,
             "automation_prompt": automation_prompt, "old_history": old_history}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS),
                    help="write only this scenario (repeatable; default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plain", action="store_true", help="write .payloads.jsonl, not .jsonl.gz")
    a = ap.parse_args(argv)
    for name in a.scenario or sorted(SCENARIOS):
        if name == "old_history":
            paths = old_history(os.path.join(a.out, "old_history", "home"), seed=a.seed)
            print(f"{name}: {len(paths)} transcripts under {os.path.join(a.out, 'old_history', 'home')}")
            continue
        src = SCENARIOS[name](seed=a.seed)
        path, _ = src.write(a.out, name, gz=not a.plain)
        print(f"{name}: {len(src.lines)} hook calls, "
              f"{len({line['session'] for line in src.lines})} sessions -> {path}")


if __name__ == "__main__":
    sys.exit(main())
