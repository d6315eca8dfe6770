#!/usr/bin/env bash
# Install the dev-only MCP clients used by test_mcp.py's interop tests (idempotent).
#   $DIR/venv          a virtualenv with the official MCP Python SDK (`mcp`)
#   $DIR/node          node_modules with the MCP Inspector CLI (bin: mcp-inspector)
# DIR defaults to $HOME/.cache/instinct-interop; override with INSTINCT_INTEROP_DIR.
# instinct.py itself never needs any of this.
set -euo pipefail
DIR=${INSTINCT_INTEROP_DIR:-$HOME/.cache/instinct-interop}
PY=${PYTHON:-python3}
INSPECTOR_VERSION=${INSTINCT_INSPECTOR_VERSION:-2.12.0}
mkdir -p "$DIR/node"

if ! "$DIR/venv/bin/python" -c 'import mcp.client.stdio' >/dev/null 2>&1; then
    rm -rf "$DIR/venv"
    "$PY" -m venv "$DIR/venv"
    "$DIR/venv/bin/python" -m pip install -q --disable-pip-version-check mcp
fi

if [ ! -x "$DIR/node/node_modules/.bin/mcp-inspector" ]; then
    (cd "$DIR/node" && { [ -f package.json ] || npm init -y >/dev/null; } \
        && npm install -q --no-audit --no-fund "@modelcontextprotocol/inspector@$INSPECTOR_VERSION")
fi

"$DIR/venv/bin/python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))'
DIR="$DIR" node -p '"inspector " + require(process.env.DIR + "/node/node_modules/@modelcontextprotocol/inspector/package.json").version'
echo "INSTINCT_MCP_PYTHON=$DIR/venv/bin/python"
echo "INSTINCT_INSPECTOR=$DIR/node/node_modules/.bin/mcp-inspector"
