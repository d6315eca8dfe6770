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

# A CLI from npm, re-resolved when the cached copy is older than a day, linked as $dir/$name: the
# first executable matching the glob (the platform package's native binary, or the node script).
#   Codex: the platform package (an alias of @openai/codex@<version>-<platform>) holds the native
#   binary under vendor/<target triple>/bin. Copilot CLI: its platform package holds the binary
#   (run against the fake model in its own-provider mode: no GitHub login). Gemini CLI: a node
#   script (node >= 20 on PATH, or $NM/.bin/node).
install_npm_cli() {  # $1 = package, $2 = glob under node_modules, $3 = target dir, $4 = name
    local pkg=$1 pattern=$2 dir=$3 name=$4 bin
    if [ -x "$dir/$name" ] && [ -z "$(find "$dir/$name" -mmin +1440)" ]; then
        return 0
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$dir" && npm init -y >/dev/null && npm install -q --no-audit --no-fund "$pkg@latest" >/dev/null)
    for bin in "$dir"/node_modules/$pattern; do
        if [ -x "$bin" ]; then
            ln -sf "$bin" "$dir/$name"
            return 0
        fi
    done
    echo "no $name binary in $pkg" >&2
    return 1
}
install_npm_cli @openai/codex '@openai/codex-*/vendor/*/bin/codex' "$DIR/codex-latest" codex
install_npm_cli @google/gemini-cli '.bin/gemini' "$DIR/gemini-latest" gemini
install_npm_cli @github/copilot '@github/copilot-*/copilot' "$DIR/copilot-latest" copilot

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
