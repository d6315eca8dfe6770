"""Tests for the shell-command reader: command shapes, never argument values (issue 11, item 2)."""
import random
import string
import time
import unittest

import instinct
from tests.helpers import call_summary, setUpModule  # noqa: E402,F401 (3.12 placeholder guard)

shapes = instinct._Shell.command_shapes

# (command, expected shapes in execution order)
CASES = [
    # lists, pipelines, redirections, prefixes
    ("cd app && FOO=1 sudo uv run pytest -q tests/ 2>&1 | tee log.txt", ["uv run pytest", "tee"]),
    ("mix test test/foo_test.exs:12 && mix credo --strict", ["mix test", "mix credo"]),
    ("a || b", ["a", "b"]),
    ("a; b & c |& d", ["a", "b", "c", "d"]),
    ("make build\nmake test\n", ["make build", "make test"]),
    ("make \\\n  test", ["make test"]),
    ("make build\r\nmake test\r\n", ["make build", "make test"]),
    ("cat <<EOF\r\nrm x\r\nEOF\r\nls", ["cat", "ls"]),
    ("pytest >out.txt 2>&1", ["pytest"]),
    (">out.txt 2>/dev/null pytest -q", ["pytest"]),
    ("pytest &> log; pytest &>> log", ["pytest", "pytest"]),
    ("grep x <in.txt >>out.txt", ["grep"]),
    ("sort <<< 'a b c'", ["sort"]),
    ("! grep -q x f && make", ["grep", "make"]),
    ("pytest  # run the tests && deploy", ["pytest"]),
    # quotes and substitutions are argument values
    ('git -C /x/y commit -m "fix: a && b; c | d"', ["git commit"]),
    ("git commit -m \"$(cat <<'EOF'\nmsg line\nEOF\n)\"", ["git commit"]),
    ("git commit -m \"$(cat <<'EOF'\nfix: a ) b && rm -rf /\nEOF\n)\" && git push", ["git commit", "git push"]),
    ("echo $(ls) | wc -l", ["wc"]),
    ("echo `date` && make", ["make"]),
    ("diff <(sort a) <(sort b)", ["diff"]),
    ("x=$(git rev-parse HEAD); make", ["make"]),
    ("echo $((1 + 2)) && make", ["make"]),
    ("echo ${HOME:-/x} && make", ["make"]),
    ("grep -E $'a\\'b' f", ["grep"]),
    ("$(which python) -m pytest", ["?"]),
    ("$EDITOR file", ["?"]),
    ("${TOOLS}", ["?"]),
    ("$ANDROID_HOME/emulator/emulator -avd x", ["emulator"]),
    ("\"$ROOT\"/scripts/check.sh --fast", ["check.sh"]),
    ("$(dirname \"$0\")/run $X", ["run"]),
    ("'git' status", ["git status"]),
    ('git "status"', ["git"]),
    # heredoc bodies are never commands
    ("cat > f.py <<'EOF'\nimport os\nSECRET=abc\nEOF\npython f.py", ["cat", "python"]),
    ("cat <<-EOF > x\n\tmake deploy\n\tEOF\nls", ["cat", "ls"]),
    ("cat <<A <<B\nrm a\nA\nrm b\nB\nmake", ["cat", "make"]),
    ("python - <<EOF\nimport sys\nEOF", ["python"]),
    # compound commands
    ("(cd x && make build)", ["make build"]),
    ("{ a; b; }", ["a", "b"]),
    ("for f in *.py; do ruff check $f; done", ["ruff check"]),
    ("for ((i=0; i<3; i++)); do make; done", ["make"]),
    ("if [ -f x ]; then make; elif test -d y; then cargo build; else go test; fi",
     ["make", "cargo build", "go test"]),
    ("if grep -q x f; then make; fi", ["grep", "make"]),
    ("while read -r l; do echo $l; done < file.txt", []),
    ("until pytest; do sleep 1; done", ["pytest"]),
    ("[[ -f x && -d y ]] && make", ["make"]),
    ("case $1 in a) make;; b|c) cargo build;; *) npm test;; esac", ["make", "cargo build", "npm test"]),
    ("case x in\n (a) make ;;\n b) go vet\nesac\npytest", ["make", "go vet", "pytest"]),
    ("f() { make; }; f", ["make", "f"]),
    ("function deploy { kubectl apply -f x; }", ["kubectl apply"]),
    ("(( n++ )); make", ["make"]),
    ("arr=(a b c); make", ["make"]),
    ("select x in a b; do make; done", ["make"]),
    # prefixes that are dropped
    ("timeout 60 mix test", ["mix test"]),
    ("timeout -s KILL 5m cargo test", ["cargo test"]),
    ("env A=1 B=2 pytest", ["pytest"]),
    ("env -i -u HOME PATH=/bin make", ["make"]),
    ("env -i PATH=/bin -u HOME make", ["?"]),      # env stops at its first non-option: runs `-u`
    ("nice -n 5 make", ["make"]),
    ("nice -5 make", ["make"]),
    ("nohup npm start &", ["npm start"]),
    ("time pytest", ["pytest"]),
    ("time -p pytest", ["pytest"]),
    ("exec make", ["make"]),
    ("exec >log 2>&1", []),
    ("command make", ["make"]),
    ("command -v make", []),
    ("builtin cd x", []),
    ("xargs -n1 grep", ["grep"]),
    ("find . -name '*.py' | xargs -I {} ruff check {}", ["find", "ruff check"]),
    ("stdbuf -oL make", ["make"]),
    ("sudo -u postgres psql", ["psql"]),
    ("sudo -E env FOO=1 timeout 9 nice make install", ["make install"]),
    ("PGPASSWORD=hunter2 psql -h db", ["psql"]),
    ("A=1 B+=2 C[0]=3 make", ["make"]),
    ("FOO=bar", []),
    # builtins and no-ops
    ("cd x && export A=1 && set -e && unset B && source .env && . venv/bin/activate", []),
    ("alias ll='ls -l'; true; false; :; shift; exit 0", []),
    ("test -f x || [ -d y ] && echo hi", []),
    ("export TOKEN=lettersonlysecretvalue && make deploy", ["make deploy"]),
    ("local x=1; declare -a y; read z; wait; return 0", []),
    ("which gt && type br; pwd; jobs", []),
    # program names
    ("/usr/bin/git status", ["git status"]),
    ("./scripts/deploy.sh prod", ["deploy.sh"]),
    ("C:\\x\\git.exe status", ["git status"]),
    ("C:\\Tools\\node.exe script.js", ["node"]),
    ("\\git status", ["git status"]),
    ("Get-ChildItem -Path src", ["Get-ChildItem"]),
    ("gradlew.bat build", ["gradlew build"]),
    ("ghp_0123456789abcdefghij --help", ["?"]),
    ("abcdef0123456789abcdef --x", ["?"]),
    ("a-program-name-that-is-far-too-long-to-be-real", ["?"]),
    ("/tmp/x/prög", ["?"]),
    ("/tmp/ü/prog", ["prog"]),
    # subcommands
    ("npm run build", ["npm run build"]),
    ("npm run-script lint -- --fix", ["npm run-script lint"]),
    ("npm --prefix web run build", ["npm run build"]),
    ("npm test", ["npm test"]),
    ("npm install", ["npm install"]),
    ("yarn build", ["yarn build"]),
    ("yarn run test:unit", ["yarn run test:unit"]),
    ("pnpm --filter web run build", ["pnpm run build"]),
    ("bun run index.ts", ["bun run"]),
    ("bun test", ["bun test"]),
    ("deno task dev", ["deno task dev"]),
    ("cargo clippy --all-targets -- -D warnings", ["cargo clippy"]),
    ("cargo +nightly fmt", ["cargo fmt"]),
    ("go test ./...", ["go test"]),
    ("go -C sub build", ["go build"]),
    ("make test", ["make test"]),
    ("make -C sub -j 4 test", ["make test"]),
    ("make -j8 CC=clang all", ["make all"]),
    ("make", ["make"]),
    ("just fmt", ["just fmt"]),
    ("git status && git diff && git log --oneline -5 && git add -A", ["git status", "git diff", "git log", "git add"]),
    ("git -c user.name=x -C /repo --no-pager log", ["git log"]),
    ("git stash pop", ["git stash pop"]),
    ("git 1234abcd", ["git"]),
    ("git -- file", ["git"]),
    ("git push https://example.com/x.git", ["git push"]),
    ("gh pr create --title x", ["gh pr create"]),
    ("gh issue close 12", ["gh issue close"]),
    ("gh -R o/r pr list", ["gh pr list"]),
    ("docker compose up -d", ["docker compose up"]),
    ("docker compose -f ci.yml -p proj up", ["docker compose up"]),
    ("adb -s emulator-5554 shell id", ["adb shell"]),
    ("pacman -S python-pip", ["pacman"]),
    ("docker run --rm -e TOKEN=x img", ["docker run"]),
    ("kubectl -n prod get pods", ["kubectl get"]),
    ("kubectl --token abcdefghijklmnop get pods", ["kubectl get"]),
    ("mix ecto.migrate", ["mix ecto.migrate"]),
    ("rake db:migrate", ["rake db:migrate"]),
    ("bundle exec rails db:migrate", ["bundle exec rails db:migrate"]),
    ("mvn -q -P prod clean install", ["mvn clean"]),
    ("./gradlew --no-daemon test", ["gradlew test"]),
    ("dotnet test", ["dotnet test"]),
    ("terraform plan -out plan.bin", ["terraform plan"]),
    ("systemctl --user restart app", ["systemctl restart"]),
    ("apt-get install -y curl", ["apt-get install"]),
    ("brew install jq", ["brew install"]),
    ("bd close 12", ["bd close"]),
    ("dolt sql -q 'SHOW TABLES'", ["dolt sql"]),
    ("mix test/foo_test.exs", ["mix"]),
    ("make README.md", ["make"]),
    ("make 'quoted target'", ["make"]),
    ("go Build", ["go"]),
    ("npm run $SCRIPT", ["npm run"]),
    ("npm run Build123456", ["npm run"]),
    ("cargo https://x.example", ["cargo"]),
    ("pytest -k test_x tests/", ["pytest"]),
    ("br sync && adb devices", ["br sync", "adb devices"]),
    ("rm -rf build && mkdir build && grep test f && tail -f logs && cp build dist", ["rm", "mkdir", "grep", "tail", "cp"]),
    ("node build && kill status", ["node", "kill"]),
    ("rtk git log -5 && strace -f make test", ["rtk git log", "strace make test"]),
    ("aws-vault exec prod -- terraform plan", ["aws-vault exec"]),
    ("tldr 'git' && man git", ["tldr", "man"]),
    ("ls -la | head -5", ["ls", "head"]),
    # runners that stay in the shape
    ("uv run pytest -q", ["uv run pytest"]),
    ("uv run --with pytest-cov -- pytest", ["uv run pytest"]),
    ("uv sync", ["uv sync"]),
    ("uv pip install -e .", ["uv pip install"]),
    ("uvx ruff check", ["uvx ruff check"]),
    ("poetry run pytest", ["poetry run pytest"]),
    ("poetry -C sub run python -m pytest", ["poetry run python -m pytest"]),
    ("pipenv run pytest", ["pipenv run pytest"]),
    ("pdm run test", ["pdm run test"]),
    ("hatch run test", ["hatch run test"]),
    ("hatch run test:cov", ["hatch run test:cov"]),
    ("poetry run echo hi", ["poetry run echo"]),
    ("bundle exec rspec spec/x_spec.rb", ["bundle exec rspec"]),
    ("npx vitest run", ["npx vitest run"]),
    ("npx -y prettier --write .", ["npx prettier"]),
    ("npx --package=@x/y@1 tool", ["npx tool"]),
    ("pnpm exec jest", ["pnpm exec jest"]),
    ("pnpm dlx create-vite app", ["pnpm dlx create-vite"]),
    ("bunx tsc --noEmit", ["bunx tsc"]),
    ("yarn dlx eslint .", ["yarn dlx eslint"]),
    ("npx", ["npx"]),
    ("uv run", ["uv run"]),
    ("uv run ./scripts/$X", ["uv run"]),
    ("python3 -m pytest -x", ["python -m pytest"]),
    ("python -m venv .venv", ["python -m venv"]),
    ("python3.12 -m mypy .", ["python -m mypy"]),
    ("python -u -W ignore -m http.server 8000", ["python -m http.server"]),
    ("python -mpytest", ["python -m pytest"]),
    ("python -m pip install -r req.txt", ["python -m pip install"]),
    ("python -m 'x y'", ["python -m"]),
    ("python -mpytest\\'", ["python -m"]),        # a module name is a plain word or nothing
    ("python -c 'import os; os.system(\"rm -rf /\")'", ["python"]),
    ("python2 manage.py migrate", ["python manage.py migrate"]),
    ("py -3 -m pytest", ["python -m pytest"]),
    ("python manage.py test app.tests", ["python manage.py test"]),
    ("python3 -u ./manage.py makemigrations", ["python manage.py makemigrations"]),
    ("./manage.py migrate", ["manage.py migrate"]),
    ("php artisan migrate --force", ["php artisan migrate"]),
    ("php -d memory_limit=-1 vendor/bin/phpunit", ["php"]),
    ("python - < script.py", ["python"]),
    # nested shells read their script
    ("bash -c 'cd x && make test'", ["make test"]),
    ("sh -ec \"pytest; ruff check\"", ["pytest", "ruff check"]),
    ("bash -o pipefail -c 'make | tee x'", ["make", "tee"]),
    ("bash scripts/ci.sh", ["bash"]),
    ("zsh", ["zsh"]),
    ("pwsh -NoProfile -ExecutionPolicy Bypass -Command \"npm test; dotnet build\"",
     ["npm test", "dotnet build"]),
    ("powershell.exe -File build.ps1", ["powershell"]),
    ("$env:CI = 'true'; $x += 1; & \"C:\\Tools\\dotnet.exe\" test", ["dotnet test"]),
    # empty input
    ("", []), ("   \n\t ", []), ("# just a comment", []), (";;", []),
]

ARGV_CASES = [
    (["bash", "-lc", "cd x && uv run pytest -q"], ["uv run pytest"]),
    (["/bin/zsh", "-lc", "git status && git diff"], ["git status", "git diff"]),
    (["bash", "-lc", "cat > f <<'EOF'\nrm -rf /\nEOF\nmake"], ["cat", "make"]),
    (["sh", "-c", "x"], ["x"]),
    (["ls", "-la"], ["ls"]),
    (["git", "commit", "-m", "a && rm -rf / ; b"], ["git commit"]),
    (["git", "-C", "/x", "status"], ["git status"]),
    (["env", "A=1", "npm", "test"], ["npm test"]),
    (["bash", "script.sh"], ["bash"]),
    (["powershell.exe", "-Command", "Get-ChildItem; git status"], ["Get-ChildItem", "git status"]),
    (["cargo test"], ["?"]),
    ([], []),
    ((("python3", "-m", "pytest")), ["python -m pytest"]),
    (["python", "-mpytest'"], ["python -m"]),
    (["python", "-m", "pytest\""], ["python -m"]),
]


def _allowed(shape):
    """Every output word is '?' or a plain token (program charset / lowercase subcommand)."""
    return all(w == "?" or (w.isascii() and 0 < len(w) <= 32
                            and all(c.isalnum() or c in "._+-:" for c in w))
               for w in shape.split(" "))



def stored(cmd):
    """What capture stores for a shell call (the event's data), combos mined from it included."""
    summary = call_summary({"tool_name": "Bash", "tool_input": {"command": cmd}})[0]
    return summary + " " + " ".join(instinct._Corpus._combos([("tool", summary)]))

class TestShapes(unittest.TestCase):
    def test_table(self):
        for cmd, want in CASES:
            with self.subTest(cmd=cmd):
                self.assertEqual(shapes(cmd), want)

    def test_argv_lists_and_codex_form(self):
        for argv, want in ARGV_CASES:
            with self.subTest(argv=argv):
                self.assertEqual(shapes(argv), want)

    def test_summary_and_combo_sit_on_the_reader(self):
        def summary(cmd):
            return call_summary({"tool_name": "Bash", "tool_input": {"command": cmd}})[0]
        self.assertEqual(summary("cd x && FOO=1 npm run build | tee l"), "Bash(npm run build;tee)")
        self.assertEqual(summary("cd x"), "Bash(?)")
        self.assertEqual(summary(None), "Bash(?)")

        def combos(cmd):
            call = instinct._Call.of({"tool_name": "Bash", "tool_input": {"command": cmd}})[0]
            return instinct._Corpus._combos([("tool", call.encode())])
        self.assertEqual(combos("pytest --cov && coverage html"), {"combo:coverage+pytest"})
        self.assertEqual(combos("git add -A && git commit -m 'x && y'"), {"combo:git add+git commit"})
        self.assertEqual(combos("cat > f <<'EOF'\nSHOW x\nEOF\ngit add f"), set())  # cat: generic
        self.assertEqual(combos("dolt sql -q 'SHOW TABLES; SELECT 1'"), set())
        self.assertEqual(combos("a; b; c; d; e"), set())                        # a script, not a combo

    def test_other_programs_keep_only_a_common_subcommand_verb(self):
        table = [("br sync --flush-only", ["br sync"]), ("adb devices", ["adb devices"]),
                 ("mytool status -v", ["mytool status"]), ("mytool prod-db-2", ["mytool"]),
                 ("./deploy.sh production", ["deploy.sh"]), ("mytool 'update'", ["mytool"]),
                 ("mytool s3cr3tvalue", ["mytool"]), ("mytool --token update", ["mytool"])]
        for cmd, want in table:
            with self.subTest(cmd=cmd):
                self.assertEqual(shapes(cmd), want)

    def test_tool_summary_uses_the_reader(self):
        summary, combo = call_summary(
            {"tool_name": "Bash", "tool_input": {"command": "git commit -m \"$(cat <<'EOF'\nx\nEOF\n)\""}})
        self.assertEqual((summary, combo), ("Bash(git commit)", ""))
        summary, combo = call_summary(
            {"tool_name": "shell", "tool_input": {"command": ["bash", "-lc", "mix test && mix credo"]}})
        self.assertEqual((summary, combo), ("Bash(mix test;mix credo)", ""))


class TestNeverRaises(unittest.TestCase):
    MALFORMED = [
        "git commit -m 'unterminated", 'echo "unterminated $(ls', "make $(", "make $((", "make ${",
        "make `", "cat <<EOF", "cat <<", "cat <<'EOF\nbody", "((((((", "))))) make", "\\", "a\\",
        "$'", '$"', "<(", ">(", "a=(", "for", "for x in", "case", "case x in", "case x in a)",
        "[[", "[[ x", "function", "f()", "|| && ;;", "& & &", "> < >>", "2>&", "<<<", "x=$(",
        "\x00\x01 make", "make\r\ntest", "\u202e evil", "\ud800", "'" * 1001, '"' * 1001, "$(" * 5000,
        "`" * 999, "(" * 5000 + "make" + ")" * 5000, "${" * 3000, "<<EOF " * 2000, "bash -c " * 3000,
        "uv run " * 3000 + "pytest", "sudo " * 5000 + "make", "$( " * 200 + "case x in a) make;; esac",
        "x" * 200000,
    ]

    def test_malformed_input_never_raises_and_yields_only_plain_words(self):
        for cmd in self.MALFORMED:
            with self.subTest(cmd=cmd[:40]):
                got = shapes(cmd)
                self.assertIsInstance(got, list)
                self.assertLessEqual(len(got), 64)
                self.assertTrue(all(isinstance(s, str) and _allowed(s) for s in got), got)

    def test_garbage_in_any_type_never_raises(self):
        for cmd in (None, 42, 3.5, b"make", {"command": "make"}, ["git", None, 3], [b"x"], [[]], object()):
            with self.subTest(cmd=type(cmd).__name__):
                got = shapes(cmd)
                self.assertIsInstance(got, list)
                self.assertTrue(all(_allowed(s) for s in got))

    def test_random_fuzz(self):
        rng = random.Random(11)
        alphabet = "ab =;|&()<>{}[]'\"$`\\#\n\t!-*?~EOF" + "git make "
        for _ in range(3000):
            cmd = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
            got = shapes(cmd)
            self.assertTrue(all(_allowed(s) for s in got), (cmd, got))


class TestBounds(unittest.TestCase):
    def test_at_most_64_shapes(self):
        self.assertEqual(shapes("make test; " * 10000), ["make test"] * 64)

    def test_input_past_64_kib_is_not_read(self):
        got = shapes("make; " + "x" * 70000 + "; lateprogram")
        self.assertEqual(got, ["make", "?"][:len(got)])
        self.assertNotIn("lateprogram", " ".join(got))

    def test_long_and_deep_inputs_are_linear(self):
        # Generous bounds: these guard against quadratic or exponential blow-ups, not speed.
        for cmd in ("a " * 500000, "$(" * 30000, "'" * 300000, "cat <<E\n" + "line\n" * 100000,
                    "x=1 " * 100000 + "make", "(" * 60000, "a | " * 50000):
            with self.subTest(cmd=cmd[:12]):
                t0 = time.perf_counter()
                shapes(cmd)
                self.assertLess(time.perf_counter() - t0, 3.0)

    def test_typical_command_is_fast(self):
        cmd = ("cd /home/user/project/app && FOO=1 BAR=baz uv run --with pytest-cov pytest -q "
               "tests/unit tests/integration -k 'not slow and not network' --cov=app --cov-report=term "
               "2>&1 | tee /tmp/test-output.log && git add -A && git commit -m \"fix: handle the "
               "empty input case (closes #12)\" && git push origin HEAD")
        times = []
        for _ in range(201):
            t0 = time.perf_counter()
            got = shapes(cmd)
            times.append(time.perf_counter() - t0)
        self.assertEqual(got, ["uv run pytest", "tee", "git add", "git commit", "git push"])
        times.sort()
        self.assertLess(times[100], 0.01)          # measured ~0.1 ms; 10 ms only catches blow-ups


# Command templates with {S} in every argument position; each carries the secret alphabet that
# its quoting context allows (a quote inside a quoted secret would end the quote for real).
UNQUOTED, SQUOTED, DQUOTED, ANY, COMMENT = "u", "s", "d", "a", "c"
TEMPLATES = [
    ("mysql -u root -p{S} -e 'select 1'", UNQUOTED),
    ("mysql -p'{S}' -e \"select 1\"", SQUOTED),
    ("curl -u 'admin:{S}' https://user:pass@host/x", SQUOTED),
    ("curl -H \"Authorization: Bearer {S}\" https://api.example.com", DQUOTED),
    ("curl https://user:{S}@host/x | jq .", UNQUOTED),
    ("PGPASSWORD={S} psql -h db", UNQUOTED),
    ("PGPASSWORD='{S}' psql", SQUOTED),
    ("export TOKEN={S} && make deploy", UNQUOTED),
    ("export TOKEN=\"{S}\"; make deploy", DQUOTED),
    ("env API_KEY={S} npm test", UNQUOTED),
    ("sudo -u root env PASS={S} make install", UNQUOTED),
    ("docker run -e TOKEN={S} img", UNQUOTED),
    ("docker login -u me -p {S} registry", UNQUOTED),
    ("kubectl --token {S} get pods", UNQUOTED),
    ("kubectl -n {S} get pods", UNQUOTED),
    ("git -C {S} status", UNQUOTED),
    ("git -c http.extraheader='Authorization: {S}' push", SQUOTED),
    ("git clone https://x:{S}@github.com/o/r.git", UNQUOTED),
    ("git commit -m \"{S}\"", DQUOTED),
    ("git commit -m '{S}' && git push", SQUOTED),
    ("git commit -m \"$(cat <<'EOF'\n{S}\nEOF\n)\"", ANY),
    ("cat > .env <<'EOF'\nKEY={S}\nEOF\nmake", ANY),
    ("cat <<EOF > key.pem\n-----BEGIN PRIVATE KEY-----\n{S}\n-----END PRIVATE KEY-----\nEOF", ANY),
    ("python - <<'PY'\nprint('{S}')\nPY", ANY),
    ("python -c \"print('{S}')\"", DQUOTED),
    ("make -C {S} test", UNQUOTED),
    ("make deploy TOKEN={S}", UNQUOTED),
    ("timeout {S} make", UNQUOTED),
    ("nice -n {S} make", UNQUOTED),
    ("npm run build -- --token {S}", UNQUOTED),
    ("npm config set //registry.npmjs.org/:_authToken={S}", UNQUOTED),
    ("uv run pytest -k {S}", UNQUOTED),
    ("uv run --with {S} pytest", UNQUOTED),
    ("npx -p {S} tool", UNQUOTED),
    ("python3 -W {S} -m pytest", UNQUOTED),
    ("cargo run -- --key {S}", UNQUOTED),
    ("aws configure set aws_secret_access_key {S}", UNQUOTED),
    ("gh auth login --with-token {S}", UNQUOTED),
    ("echo {S} | docker login --password-stdin", UNQUOTED),
    ("printf '%s' '{S}' | gh secret set X", SQUOTED),
    ("for t in {S}; do echo $t; done && make", UNQUOTED),
    ("case {S} in x) make;; esac", UNQUOTED),
    ("[[ \"$T\" == \"{S}\" ]] && make", DQUOTED),
    ("x=$(printf {S}) && make", UNQUOTED),
    ("echo `printf {S}` && make", UNQUOTED),
    ("diff <(echo {S}) f", UNQUOTED),
    ("make > {S}.log 2> {S}.err", UNQUOTED),
    ("cat < {S}", UNQUOTED),
    ("grep -q {S} f || make", UNQUOTED),
    ("ssh -i key user@host 'export T={S}; ls'", SQUOTED),
    ("bash -c 'export T={S}; make'", UNQUOTED),    # the quoted script is itself shell text
    ("mysql -e \"select '{S}'\" && mysql -e 'select 1'", DQUOTED),
    ("echo $'{S}' && make", SQUOTED),
    ("xargs -I {S} make", UNQUOTED),
    ("psql postgresql://u:{S}@h/db -c 'select 1'", UNQUOTED),
    ("openssl enc -k {S} -in f", UNQUOTED),
    ("make # {S}", COMMENT),
]
ARGV_TEMPLATES = [
    ["curl", "-H", "Authorization: {S}", "https://x"],
    ["bash", "-lc", "export T='{S}' && make deploy"],
    ["bash", "-lc", "cat > f <<'EOF'\n{S}\nEOF\npython f"],
    ["git", "commit", "-m", "{S}"],
    ["env", "TOKEN={S}", "make"],
    ["mysql", "-p{S}"],
]
SAFE_UNQUOTED = string.ascii_letters + string.digits + "._-:/@%+=,"
ALPHABETS = {
    UNQUOTED: SAFE_UNQUOTED,
    SQUOTED: SAFE_UNQUOTED + " ;|&()<>$`\"\\!*?#{}[]~",
    DQUOTED: SAFE_UNQUOTED + " ;|&()<>'!*?#{}[]~",
    ANY: SAFE_UNQUOTED + " ;|&()<>$`'\"\\!*?#{}[]~",
    COMMENT: SAFE_UNQUOTED + " ;|&()<>$`'\"\\!*?{}[]~",       # a comment: anything but a newline
}


def _secret(rng, alphabet):
    kind = rng.randrange(4)
    if kind == 0:                                  # letters only: no digit to give it away
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(16, 28)))
    if kind == 1:                                  # a known token format
        letters = string.ascii_letters + string.digits
        return rng.choice(("ghp_", "sk-", "xoxb-", "AKIA", "glpat-")) + \
            "".join(rng.choice(letters) for _ in range(rng.randint(16, 36)))
    core = "".join(rng.choice(alphabet) for _ in range(rng.randint(10, 40)))
    if kind == 2:                                  # starts like a plain word, then anything
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(6)) + core
    return core.lstrip("-") or "x"             # a leading '-' would make it an option for real


class TestSecretsNeverLeak(unittest.TestCase):
    def assertNoSecret(self, secret, got, cmd):
        joined = "\n".join(got)
        windows = {secret[k:k + 6] for k in range(len(secret) - 5)}
        leaked = [w for w in windows if w.strip() and w in joined]
        self.assertFalse(leaked, (cmd, got))

    def test_planted_secrets_never_reach_a_shape(self):
        rng = random.Random(1111)
        for template, context in TEMPLATES:
            for _ in range(60):
                secret = _secret(rng, ALPHABETS[context])
                if context in (UNQUOTED,) and rng.random() < 0.5:
                    secret = "".join(c for c in secret if c in SAFE_UNQUOTED)
                cmd = template.replace("{S}", secret)
                got = shapes(cmd)
                self.assertTrue(got or template.startswith("cat <<"), (cmd, got))
                self.assertNoSecret(secret, got, cmd)
                self.assertNoSecret(secret, [stored(cmd)], cmd)

    def test_planted_secrets_in_argv_lists(self):
        rng = random.Random(2222)
        for template in ARGV_TEMPLATES:
            for _ in range(60):
                secret = _secret(rng, ALPHABETS[SQUOTED if "'{S}'" in str(template) else UNQUOTED])
                argv = [a.replace("{S}", secret) for a in template]
                got = shapes(argv)
                self.assertTrue(got, argv)
                self.assertNoSecret(secret, got, argv)

    def test_named_secrets_from_the_issue(self):
        pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx9Zk3mQ7\nvT2pL8aZQ==\n-----END RSA PRIVATE KEY-----"
        table = [
            ("mysql -p'Winter;Xy9!kq' -e \"select 1\"", ["mysql"], "Winter;Xy9!kq"),
            ("curl -u 'admin:Tok|Pipe&9zz' https://user:pass@host/x", ["curl"], "Tok|Pipe&9zz"),
            ("PGPASSWORD=hunter2 psql", ["psql"], "hunter2"),
            (f"cat > id_rsa <<'EOF'\n{pem}\nEOF\nchmod 600 id_rsa", ["cat", "chmod"], "MIIEowIBAAKCAQEAx9Zk3mQ7"),
            ("export TOKEN=lettersonlysecretvalue && make deploy", ["make deploy"], "lettersonlysecretvalue"),
        ]
        for cmd, want, secret in table:
            with self.subTest(cmd=cmd[:30]):
                self.assertEqual(shapes(cmd), want)
                self.assertNoSecret(secret, shapes(cmd) + [stored(cmd)], cmd)


if __name__ == "__main__":
    unittest.main()
