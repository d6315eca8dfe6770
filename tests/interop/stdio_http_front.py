"""A dev-only HTTP front for `instinct serve` (stdlib): lets HTTP-only MCP tools, such as the
official conformance suite, talk to the stdio server. Not part of instinct.

    python3 tests/interop/stdio_http_front.py --port 0 -- python3 instinct.py serve

prints `listening on http://127.0.0.1:PORT/mcp` on stderr when ready. One child process
serves every request in arrival order: each POSTed JSON-RPC message becomes one stdin line;
a request's answer is the stdout line with its id (progress lines before it are sent as
server-sent events when the client accepts them); a notification or response gets 202.
The child's stderr passes through. GET (no server-initiated stream) and DELETE get 405.
Requests from another origin or host name (DNS rebinding) get 403. The front keeps no
protocol state of its own: whatever the child answers is the answer.
"""
import argparse
import http.server
import json
import os
import subprocess
import sys
import threading

LOCAL = ("127.0.0.1", "localhost", "[::1]")
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


class Child:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.lock = threading.Lock()

    def exchange(self, line, mid, want_reply):
        """Send one line; -> (notifications before the reply, reply line or None)."""
        with self.lock:
            self.p.stdin.write(line.rstrip(b"\n") + b"\n")
            self.p.stdin.flush()
            if not want_reply:
                return [], None
            before = []
            while True:
                out = self.p.stdout.readline()
                if not out:
                    raise RuntimeError("instinct serve closed its stdout")
                try:
                    msg = json.loads(out)
                except ValueError:
                    continue
                if isinstance(msg, dict) and "method" in msg and "id" not in msg:
                    before.append(out)            # a notification (e.g. progress)
                    continue
                if isinstance(msg, dict) and ("id" not in msg or msg.get("id") == mid
                                              or msg.get("id") is None):
                    return before, out


def handler(child):
    class Front(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):       # quiet unless FRONT_DEBUG is set
            if os.environ.get("FRONT_DEBUG"):
                sys.stderr.write("front: " + fmt % args + "\n")

        def _plain(self, code, body=b""):
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            if body:
                self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def _local(self):
            host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
            origin = self.headers.get("Origin")
            if host and host not in LOCAL:
                return False
            if origin and not any(origin.startswith(f"http://{h}") or origin.startswith(f"https://{h}")
                                  for h in LOCAL):
                return False
            return True

        def _body(self):
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def do_GET(self):
            self._body()
            self._plain(405)

        def do_DELETE(self):
            self._body()
            self._plain(405)

        def _error(self, status, mid, code, message):
            body = {"jsonrpc": "2.0", "error": {"code": code, "message": message}}
            if mid is not None:
                body["id"] = mid
            self._plain(status, json.dumps(body).encode())

        def do_POST(self):
            body = self._body()                   # always read: the connection is kept alive
            if not self._local():
                return self._error(403, None, -32600, "Forbidden origin or host")
            try:
                msg = json.loads(body)
            except ValueError:
                msg = None
            is_request = not isinstance(msg, dict) or ("method" in msg and "id" in msg)
            mid = msg.get("id") if isinstance(msg, dict) else None
            method = msg.get("method") if isinstance(msg, dict) else None
            params = msg.get("params") if isinstance(msg, dict) else None
            meta = params.get("_meta") if isinstance(params, dict) else None
            body_version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
            header_version = self.headers.get("MCP-Protocol-Version")
            # HTTP-binding rules of the stateless revision (not stdio's): the routing headers
            # must agree with the body, and a modern request's errors carry an HTTP status
            if is_request and header_version and isinstance(body_version, str) \
                    and header_version != body_version:
                return self._error(400, mid, -32020, "Header mismatch: MCP-Protocol-Version")
            if is_request and self.headers.get("Mcp-Method") not in (None, method):
                return self._error(400, mid, -32020, "Header mismatch: Mcp-Method")
            modern = body_version is not None or (header_version or "") >= "2026" \
                or method == "server/discover"
            if is_request and method == "initialize" and (header_version or "") >= "2026":
                return self._error(404, mid, -32601, "Method not found: initialize")
            before, reply = child.exchange(body.replace(b"\n", b" "), mid, is_request)
            if reply is None:
                return self._plain(202)
            status = 200
            if modern:
                try:
                    code = json.loads(reply).get("error", {}).get("code")
                except (ValueError, AttributeError):
                    code = None
                status = 404 if code == -32601 else 400 if code in (
                    -32700, -32600, -32602, -32021, -32022) else 200
            if before and "text/event-stream" in (self.headers.get("Accept") or ""):
                data = b"".join(b"event: message\ndata: " + x.rstrip(b"\n") + b"\n\n"
                                for x in before + [reply])
                self.send_response(status)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self._plain(status, reply.rstrip(b"\n"))

    return Front


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("argv", nargs="+", help="the stdio server command (after --)")
    a = ap.parse_args()
    child = Child(a.argv)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), handler(child))
    print(f"listening on http://127.0.0.1:{httpd.server_address[1]}/mcp", file=sys.stderr, flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        child.p.stdin.close()
        child.p.wait(5)


if __name__ == "__main__":
    main()
