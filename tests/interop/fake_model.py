"""A scripted fake model on 127.0.0.1 for driving real coding-agent CLIs: the Anthropic Messages
API (Claude Code: POST /v1/messages) and the OpenAI Responses API (Codex: POST /v1/responses),
both streamed as server-sent events the way the real services stream them.

Test-only, standard library only. Every session's user prompt carries a marker line
`E2E-SESSION <name>`; the fake then plays that session's plan: one shell tool call per model
turn, in order, then a final text answer. The plan position is read from the conversation the
client sends back (how many of our tool calls it already holds), so the fake keeps no
per-session state and a retried request gets the same answer.

Requests that are not the agent loop (no shell tool offered: title/topic helpers, quota checks)
get a short text answer. Every request is recorded (path, body) for the test to inspect.

    fake = FakeModel({"s1": ["git status", "ruff check ."]}).start()
    env["ANTHROPIC_BASE_URL"] = fake.url          # Claude Code; Codex: base_url = fake.url + "/v1"
    ...
    fake.stop()
"""
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MARKER = "E2E-SESSION "
FINAL_TEXT = "All planned commands ran."
USAGE = {"input_tokens": 50, "output_tokens": 20}


def strings(node):
    """Every string inside a decoded JSON value, depth first (texts of system, messages, ...)."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)


def tool_id(session, step):
    return f"toolu_e2e_{session}_{step:03d}"


def _step_of(call_id, session):
    prefix = tool_id(session, 0)[:-3]
    call_id = str(call_id or "")
    return int(call_id[-3:]) if call_id.startswith(prefix) and call_id[-3:].isdigit() else None


def _sse(events):
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


class Messages:
    """Anthropic Messages API: `messages` of role/content blocks; tool_use / tool_result."""
    shell_tool = "Bash"

    @staticmethod
    def user_texts(body):
        for msg in body.get("messages") or []:
            if msg.get("role") == "user":
                yield from strings(msg.get("content"))

    @staticmethod
    def tools(body):
        return {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}

    @staticmethod
    def calls_made(body, session):
        """Steps of this session's planned calls the conversation already holds."""
        return [st for msg in body.get("messages") or [] if msg.get("role") == "assistant"
                and isinstance(msg.get("content"), list) for b in msg["content"]
                if isinstance(b, dict) and b.get("type") == "tool_use"
                and (st := _step_of(b.get("id"), session)) is not None]

    @staticmethod
    def results(body, session):
        """{step: is_error} of the tool results the client sent back."""
        out = {}
        for msg in body.get("messages") or []:
            if msg.get("role") == "user" and isinstance(msg.get("content"), list):
                for b in msg["content"]:
                    if isinstance(b, dict) and b.get("type") == "tool_result":
                        st = _step_of(b.get("tool_use_id"), session)
                        if st is not None:      # Copilot CLI: '<shellId: N completed with exit code 1>'
                            out[st] = bool(b.get("is_error") or re.search(
                                r"with exit code [1-9][0-9]*>", "\n".join(strings(b.get("content")))))
        return out

    @staticmethod
    def text(body):
        return "\n".join(strings({"system": body.get("system"), "messages": body.get("messages")}))

    @staticmethod
    def reply(msg_id, body, call, text, stream):
        model = str(body.get("model") or "claude-fake")
        if call:
            block = {"type": "tool_use", "id": call[0], "name": call[3],
                     "input": {"command": call[1], "description": call[2]}}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": text}
            stop = "end_turn"
        if not stream:
            return {"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [block],
                    "stop_reason": stop, "stop_sequence": None, "usage": USAGE}
        if call:
            raw = json.dumps(block["input"])
            cut = max(1, len(raw) // 2)   # two partial_json pieces, as the real API streams them
            first = dict(block, input={})
            deltas = [{"type": "input_json_delta", "partial_json": raw[:cut]},
                      {"type": "input_json_delta", "partial_json": raw[cut:]}]
        else:
            first = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": text}]
        return [{"type": "message_start", "message": {
                    "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
                    "stop_reason": None, "stop_sequence": None,
                    "usage": {"input_tokens": 50, "output_tokens": 1, "cache_creation_input_tokens": 0,
                              "cache_read_input_tokens": 0}}},
                {"type": "content_block_start", "index": 0, "content_block": first},
                {"type": "ping"}] \
            + [{"type": "content_block_delta", "index": 0, "delta": d} for d in deltas] \
            + [{"type": "content_block_stop", "index": 0},
               {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 20}},
               {"type": "message_stop"}]


class Responses:
    """OpenAI Responses API: `input` items; function_call / function_call_output (Codex's
    shell tool is `exec_command` with `cmd`, and its output says "Process exited with code N")."""
    shell_tool = "exec_command"
    _EXIT = re.compile(r"exited with code (-?\d+)")

    @staticmethod
    def user_texts(body):
        items = body.get("input")
        if isinstance(items, str):
            yield items
            return
        for it in items or []:
            if isinstance(it, dict) and it.get("role") == "user":
                yield from strings(it.get("content"))

    @staticmethod
    def tools(body):
        return {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}

    @staticmethod
    def calls_made(body, session):
        return [st for it in body.get("input") or [] if isinstance(it, dict)
                and it.get("type") == "function_call"
                and (st := _step_of(it.get("call_id"), session)) is not None]

    @classmethod
    def results(cls, body, session):
        out = {}
        for it in body.get("input") or []:
            if isinstance(it, dict) and it.get("type") == "function_call_output":
                st = _step_of(it.get("call_id"), session)
                if st is not None:
                    m = cls._EXIT.search("\n".join(strings(it.get("output"))))
                    out[st] = m is None or int(m.group(1)) != 0
        return out

    @staticmethod
    def text(body):
        return "\n".join(strings({"instructions": body.get("instructions"), "input": body.get("input")}))

    @staticmethod
    def reply(msg_id, body, call, text, stream):
        model = str(body.get("model") or "gpt-fake")
        if call:
            item = {"type": "function_call", "id": "fc_" + call[0], "call_id": call[0], "status": "completed",
                    "name": "exec_command", "arguments": json.dumps({"cmd": call[1], "login": False})}
        else:
            item = {"type": "message", "id": "msg_" + msg_id, "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}
        usage = dict(USAGE, total_tokens=70, input_tokens_details={"cached_tokens": 0},
                     output_tokens_details={"reasoning_tokens": 0})
        resp = {"id": "resp_" + msg_id, "object": "response", "model": model, "status": "completed",
                "output": [item], "usage": usage}
        if not stream:
            return resp
        events = [{"type": "response.created", "response": dict(resp, status="in_progress", output=[])},
                  {"type": "response.output_item.added", "output_index": 0,
                   "item": dict(item, status="in_progress")}]
        if not call:
            events.append({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
                           "item_id": item["id"], "delta": text})
        return events + [{"type": "response.output_item.done", "output_index": 0, "item": item},
                         {"type": "response.completed", "response": resp}]


class Gemini:
    """Gemini API (Gemini CLI: POST /v1beta/models/M:streamGenerateContent?alt=sse): `contents`
    of role/parts; functionCall / functionResponse (its shell tool is `run_shell_command`, whose
    output says "Exit Code: N"). A call's id is the plan step, kept in the call's description."""
    shell_tool = "run_shell_command"
    _EXIT = re.compile(r"Exit Code: (-?\d+)")

    @staticmethod
    def user_texts(body):
        for c in body.get("contents") or []:
            if isinstance(c, dict) and c.get("role") == "user":
                yield from (p["text"] for p in c.get("parts") or []
                            if isinstance(p, dict) and isinstance(p.get("text"), str))

    @staticmethod
    def tools(body):
        return {f.get("name") for t in body.get("tools") or [] if isinstance(t, dict)
                for f in t.get("functionDeclarations") or [] if isinstance(f, dict)}

    @staticmethod
    def _parts(body, role, key):
        return [p[key] for c in body.get("contents") or [] if isinstance(c, dict)
                and c.get("role") == role for p in c.get("parts") or []
                if isinstance(p, dict) and isinstance(p.get(key), dict)]

    @classmethod
    def calls_made(cls, body, session):
        return [st for fc in cls._parts(body, "model", "functionCall")
                if (st := _step_of(fc.get("id"), session)) is not None]

    @classmethod
    def results(cls, body, session):
        out = {}
        for fr in cls._parts(body, "user", "functionResponse"):
            st = _step_of(fr.get("id"), session)
            if st is not None:
                m = cls._EXIT.search("\n".join(strings(fr.get("response"))))
                out[st] = m is not None and int(m.group(1)) != 0
        return out

    @staticmethod
    def text(body):
        return "\n".join(strings({"system": body.get("systemInstruction"),
                                  "contents": body.get("contents")}))

    @staticmethod
    def reply(msg_id, body, call, text, stream):
        cfg = body.get("generationConfig") or {}
        if not call and cfg.get("responseMimeType") == "application/json":     # a side question
            text = json.dumps({"reasoning": "done", "next_speaker": "user"})
        part = ({"functionCall": {"id": call[0], "name": "run_shell_command",
                                  "args": {"command": call[1], "description": call[2]}}}
                if call else {"text": text})
        resp = {"candidates": [{"content": {"role": "model", "parts": [part]},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 20,
                                  "totalTokenCount": 70},
                "modelVersion": "gemini-2.5-flash", "responseId": msg_id}
        return [resp] if stream else resp


class FakeModel:
    """plans: {session name: [shell command, ...]}; answers on http://127.0.0.1:<port>."""

    def __init__(self, plans):
        self.plans = dict(plans)
        self.requests = []                # [{"path", "api", "session", "agent", "body"}] in arrival order
        self.served = []                  # [(session, step)] tool calls handed out, in order
        self.lock = threading.Lock()
        self.httpd = None
        self.counter = 0

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _send(self, code, body, ctype="application/json"):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                if ctype == "text/event-stream":
                    self.send_header("Cache-Control", "no-cache")
                self.send_header("request-id", "req_e2e")
                self.end_headers()
                self.wfile.write(body)

            def do_HEAD(self):
                self._send(200, b"")

            def do_GET(self):
                with fake.lock:
                    fake.requests.append({"path": self.path, "api": None, "session": None,
                                          "agent": False, "body": None})
                self._send(404, json.dumps({"type": "error", "error": {
                    "type": "not_found_error", "message": "fake: no such endpoint"}}).encode())

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                code, payload, ctype = fake.answer(self.path, body if isinstance(body, dict) else {})
                self._send(code, payload, ctype)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()

    def _session(self, api, body):
        for s in api.user_texts(body):
            i = s.find(MARKER)
            if i >= 0:
                return s[i + len(MARKER):].split()[0]
        return None

    def answer(self, path, body):
        """(status, bytes, content type) for one POST."""
        route = path.split("?", 1)[0]
        api = (Messages if route.endswith("/messages") else Responses if route.endswith("/responses")
               else Gemini if route.lower().endswith("generatecontent") else None)
        session = self._session(api, body) if api else None
        offered = api.tools(body) if api else set()        # Copilot CLI names its shell `bash`
        shell = next((t for t in (getattr(api, "shell_tool", ""), "bash") if t in offered), None)
        agent = api is not None and session in self.plans and shell is not None
        with self.lock:
            self.requests.append({"path": path, "api": api, "session": session, "agent": agent, "body": body})
            self.counter += 1
            msg_id = f"e2e_{self.counter:05d}"
        if route.endswith("/count_tokens") or route.endswith(":countTokens"):
            return 200, json.dumps({"input_tokens": 100, "totalTokens": 100}).encode(), "application/json"
        if api is None:
            return 404, json.dumps({"type": "error", "error": {
                "type": "not_found_error", "message": "fake: no such endpoint"}}).encode(), "application/json"
        call, text = None, "ok"
        if agent:
            step = len(api.calls_made(body, session))
            plan = self.plans[session]
            if step < len(plan):
                call = (tool_id(session, step), plan[step], f"planned step {step + 1}", shell)
                with self.lock:
                    self.served.append((session, step))
            else:
                text = FINAL_TEXT
        out = api.reply(msg_id, body, call, text, bool(body.get("stream")) or "alt=sse" in path)
        if isinstance(out, list) and api is Gemini:      # SSE without event names
            return 200, "".join(f"data: {json.dumps(e)}\n\n" for e in out).encode(), "text/event-stream"
        if isinstance(out, list):
            return 200, _sse(out), "text/event-stream"
        return 200, json.dumps(out).encode(), "application/json"

    def agent_requests(self, session):
        return [r for r in self.requests if r["agent"] and r["session"] == session]

    def tool_results(self, session):
        """{step: is_error} from the tool results the client sent back for plan `session`."""
        out = {}
        for r in self.agent_requests(session):
            out.update(r["api"].results(r["body"], session))
        return out

    def request_text(self, request):
        """All text one recorded request carried to the model (instructions, messages, tool output)."""
        return request["api"].text(request["body"])
