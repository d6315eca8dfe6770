#!/usr/bin/env bash
# Install the dev-only clients used by the interop tests (tests/test_mcp_interop.py, tests/test_e2e_clients.py); idempotent.
# Sources: PyPI and the npm registry only.
#   $DIR/venv          a virtualenv with the official MCP Python SDK 2.x (`mcp`)
#   $DIR/node          node_modules with the MCP Inspector CLI (bin: mcp-inspector), the
#                      TypeScript SDK v2 client (@modelcontextprotocol/client), the official
#                      conformance suite (bin: conformance) and node 22 (npm package `node`,
#                      bin: node; the suite and the inspector need node >= 22)
#   $DIR/claude-latest/claude, $DIR/claude-2.1.138/claude
#                      the Claude Code CLI (latest, and the last release that ignores a hook's
#                      `args`) for tests/test_e2e_clients.py: the native binary its npm package ships
#   $DIR/codex-latest/codex   the Codex CLI (native binary of @openai/codex) for the same tests
#   $DIR/gemini-latest/gemini the Gemini CLI (@google/gemini-cli, a node script) for the same tests
#   $DIR/copilot-latest/copilot the Copilot CLI (native binary of @github/copilot) for the same tests
# DIR defaults to $HOME/.cache/instinct-interop; override with INSTINCT_INTEROP_DIR.
# instinct.py itself never needs any of this.
set -euo pipefail
DIR=${INSTINCT_INTEROP_DIR:-$HOME/.cache/instinct-interop}
PY=${PYTHON:-python3}
INSPECTOR_VERSION=${INSTINCT_INSPECTOR_VERSION:-2.12.0}
CLAUDE_OLD_VERSION=2.1.138
TS_CLIENT_VERSION=${INSTINCT_TS_CLIENT_VERSION:-2.4.0}
CONFORMANCE_VERSION=${INSTINCT_CONFORMANCE_VERSION:-0.2.0-alpha.12}
NODE_VERSION=${INSTINCT_NODE_VERSION:-22}
mkdir -p "$DIR/node"

if ! "$DIR/venv/bin/python" -c 'import mcp.client.stdio; from mcp import Client' >/dev/null 2>&1; then
    rm -rf "$DIR/venv"
    "$PY" -m venv "$DIR/venv"
    "$DIR/venv/bin/python" -m pip install -q --disable-pip-version-check 'mcp>=2.3,<3'
fi

NM="$DIR/node/node_modules"
if [ ! -x "$NM/.bin/mcp-inspector" ] || [ ! -x "$NM/.bin/conformance" ] || [ ! -x "$NM/.bin/node" ] \
        || [ ! -d "$NM/@modelcontextprotocol/client" ]; then
    (cd "$DIR/node" && { [ -f package.json ] || npm init -y >/dev/null; } \
        && npm install -q --no-audit --no-fund --foreground-scripts \
            "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
            "@modelcontextprotocol/client@$TS_CLIENT_VERSION" \
            "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" "node@$NODE_VERSION")
fi

# Claude Code from npm: the package's optional dependency for this platform holds the native
# binary (its postinstall only copies it over bin/claude.exe, and may be skipped); link it.
# "latest" is re-resolved when the cached copy is older than a day.
install_claude() {  # $1 = npm version spec, $2 = target dir
    local spec=$1 dir=$2 bin
    if [ -x "$dir/claude" ] && { [ "$spec" != latest ] || [ -z "$(find "$dir/claude" -mmin +1440)" ]; }; then
        return 0
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$dir" && npm init -y >/dev/null \
        && npm install -q --no-audit --no-fund "@anthropic-ai/claude-code@$spec" >/dev/null)
    for bin in "$dir"/node_modules/@anthropic-ai/claude-code-*/claude; do
        if [ -x "$bin" ]; then
            ln -sf "$bin" "$dir/claude"
            return 0
        fi
    done
    echo "no native claude binary in @anthropic-ai/claude-code@$spec" >&2
    return 1
}
install_claude latest "$DIR/claude-latest"
install_claude "$CLAUDE_OLD_VERSION" "$DIR/claude-$CLAUDE_OLD_VERSION"

# Codex from npm: the platform package (an alias of @openai/codex@<version>-<platform>) holds the
# native binary under vendor/<target triple>/bin.
install_codex() {  # $1 = target dir
    local dir=$1 bin
    if [ -x "$dir/codex" ] && [ -z "$(find "$dir/codex" -mmin +1440)" ]; then
        return 0
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$dir" && npm init -y >/dev/null && npm install -q --no-audit --no-fund @openai/codex@latest >/dev/null)
    for bin in "$dir"/node_modules/@openai/codex-*/vendor/*/bin/codex; do
        if [ -x "$bin" ]; then
            ln -sf "$bin" "$dir/codex"
            return 0
        fi
    done
    echo "no native codex binary in @openai/codex" >&2
    return 1
}
install_codex "$DIR/codex-latest"

# Gemini CLI from npm (a node script; node >= 20 on PATH, or $NM/.bin/node): linked as gemini.
install_gemini() {  # $1 = target dir
    local dir=$1
    if [ -x "$dir/gemini" ] && [ -z "$(find "$dir/gemini" -mmin +1440)" ]; then
        return 0
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$dir" && npm init -y >/dev/null && npm install -q --no-audit --no-fund @google/gemini-cli@latest >/dev/null)
    ln -sf "$dir/node_modules/.bin/gemini" "$dir/gemini"
}
install_gemini "$DIR/gemini-latest"

# Copilot CLI from npm: the platform package holds the native binary (run against the fake model
# in its own-provider mode: no GitHub login).
install_copilot() {  # $1 = target dir
    local dir=$1 bin
    if [ -x "$dir/copilot" ] && [ -z "$(find "$dir/copilot" -mmin +1440)" ]; then
        return 0
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$dir" && npm init -y >/dev/null && npm install -q --no-audit --no-fund @github/copilot@latest >/dev/null)
    for bin in "$dir"/node_modules/@github/copilot-*/copilot; do
        if [ -x "$bin" ]; then
            ln -sf "$bin" "$dir/copilot"
            return 0
        fi
    done
    echo "no native copilot binary in @github/copilot" >&2
    return 1
}
install_copilot "$DIR/copilot-latest"

"$DIR/venv/bin/python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))'
DIR="$DIR" node -p '"inspector " + require(process.env.DIR + "/node/node_modules/@modelcontextprotocol/inspector/package.json").version'
"$NM/.bin/node" -p '"node " + process.version'
echo "INSTINCT_MCP_PYTHON=$DIR/venv/bin/python"
echo "INSTINCT_INSPECTOR=$NM/.bin/mcp-inspector"
echo "INSTINCT_NODE=$NM/.bin/node"
echo "INSTINCT_CONFORMANCE=$NM/.bin/conformance"
echo "INSTINCT_CLAUDE=$DIR/claude-latest/claude ($("$DIR/claude-latest/claude" --version))"
echo "INSTINCT_CLAUDE_OLD=$DIR/claude-$CLAUDE_OLD_VERSION/claude ($("$DIR/claude-$CLAUDE_OLD_VERSION/claude" --version))"
echo "INSTINCT_CODEX=$DIR/codex-latest/codex ($("$DIR/codex-latest/codex" --version))"
echo "INSTINCT_COPILOT=$DIR/copilot-latest/copilot ($("$DIR/copilot-latest/copilot" --version | head -1))"
echo "INSTINCT_GEMINI=$DIR/gemini-latest/gemini ($(PATH="$NM/.bin:$PATH" "$DIR/gemini-latest/gemini" --version))"
