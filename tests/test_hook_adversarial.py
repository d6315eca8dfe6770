"""Issue 21: a hook never breaks the agent. Cut, oversized, deeply nested and non-UTF-8
payloads on every hook event: exit 0, at most one stderr line, never a traceback, nothing stored
half-written; a large valid payload is read whole (also from a non-blocking pipe, as a Node
client hands it) and stored; Ctrl-C is quiet; `_loads` answers exactly what json.loads does."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import unittest

import instinct
from tests.helpers import (INSTINCT_PY, ROOT, child_env, label, make_repo, run_instinct,  # noqa: F401
                           setUpModule, temp_dir)

EVENTS = ("session-start", "user-prompt-submit", "pre-tool-use", "post-tool-use",
          "post-tool-use-failure", "stop", "session-end")


class _Env(unittest.TestCase):
    def setUp(self):
        self.tmp = temp_dir(self)
        self.repo = make_repo(os.path.join(self.tmp, "repo"))
        self.db = os.path.join(self.tmp, "h.db")

    def payload(self, **extra):
        return {"session_id": "s1", "cwd": self.repo, "hook_event_name": "PostToolUse",
                "tool_name": "Bash", "tool_input": {"command": "pytest -q"}, "tool_response": {},
                "prompt": "no, use ruff instead", **extra}

    def hook(self, event, data):
        return run_instinct("hook", event, input=data, text=False, env=child_env(db=self.db),
                            cwd=self.repo, timeout=120)

    def assertQuiet(self, r, what, answer_ok=False):
        """Exit 0, at most one stderr line, no traceback; stdout empty, or (answer_ok) the hook's
        one answer line."""
        self.assertEqual(r.returncode, 0, what)
        if answer_ok and r.stdout:
            self.assertEqual(r.stdout.count(b"\n"), 1, what)
            self.assertIn("hookSpecificOutput", json.loads(r.stdout), what)
        else:
            self.assertEqual(r.stdout, b"", what)
        self.assertNotIn(b"Traceback", r.stderr, what)
        self.assertLessEqual(len(r.stderr.splitlines()), 1, (what, r.stderr[:500]))

    def stored(self):
        """(integrity_check, the tool events) of the store, or None when there is none."""
        if not os.path.exists(self.db):
            return None
        con = sqlite3.connect(self.db)
        try:
            return (con.execute("PRAGMA integrity_check").fetchone()[0],
                    [(k, label(d), s) for k, d, s in con.execute(
                        "SELECT kind, data, session FROM events WHERE kind IN ('tool', "
                        "'tool_fail') ORDER BY id")])
        finally:
            con.close()


class TestBadPayloads(_Env):
    def bad_payloads(self):
        text = json.dumps(self.payload()).encode()
        cuts = [text[:n] for n in (1, len(text) // 2, text.index(b"pytest") + 3, len(text) - 1)]
        big = json.dumps(self.payload(tool_response={"stdout": "x" * (4 * 1024 * 1024)})).encode()
        deep = b'{"tool_name": "Bash", "tool_input": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
        return [("cut", c) for c in cuts] + [("over 4 MiB", big), ("deep", deep),
                                              ("deep, cut", b"[" * 100_000),
                                              ("not UTF-8", b"\xff\xfe{\x00\x81"),
                                              ("not an object", b"[1, 2]")]

    def test_every_event_shrugs_off_every_bad_payload(self):
        for event in EVENTS:
            for what, data in self.bad_payloads():
                with self.subTest(event=event, payload=what):
                    r = self.hook(event, data)
                    self.assertQuiet(r, (event, what))
                    self.assertIn(b"nothing recorded", r.stderr)
        got = self.stored()
        self.assertIn(got, (None, ("ok", [])))      # nothing at all was stored

    def test_odd_but_whole_payloads_are_stored_whole_or_not_at_all(self):
        text = json.dumps(self.payload())
        odd = [("bytes that are not UTF-8 in strings", text.replace("pytest", "py\udcfftest")
                .encode("utf-8", "surrogateescape")),
               ("nested 500 deep", json.dumps(self.payload(tool_input={"command": "ls", "x": json.loads(
                   "[" * 500 + "]" * 500)})).encode()),
               ("a tool name of control bytes", json.dumps(self.payload(tool_name="\x00\x1b[31m")).encode())]
        for event in EVENTS:
            for what, data in odd:
                with self.subTest(event=event, payload=what):
                    self.assertQuiet(self.hook(event, data), (event, what), answer_ok=True)
        check, rows = self.stored()
        self.assertEqual(check, "ok")
        for kind, data, session in rows:
            self.assertTrue(data and session == "s1", rows)

    def test_large_valid_payload_is_read_whole_and_stored(self):
        data = json.dumps(self.payload(tool_response={"stdout": "y" * (3 * 1024 * 1024)})).encode()
        r = self.hook("post-tool-use", data)
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""))
        self.assertEqual(self.stored()[1], [("tool", "Bash(pytest)", "s1")])

    def test_non_blocking_pipe_is_read_to_the_end(self):
        """Node starts hooks with a non-blocking stdin: a single read stops at 64 KiB."""
        data = json.dumps(self.payload(tool_response={"stdout": "z" * (1024 * 1024)})).encode()
        rfd, wfd = os.pipe()
        os.set_blocking(rfd, False)
        p = subprocess.Popen([sys.executable, INSTINCT_PY, "hook", "post-tool-use"], stdin=rfd,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self.repo,
                             env=child_env(db=self.db))
        os.close(rfd)

        def feed():
            with os.fdopen(wfd, "wb") as w:
                for i in range(0, len(data), 16384):
                    w.write(data[i:i + 16384])
                    w.flush()
                    time.sleep(0.002)
        t = threading.Thread(target=feed)
        t.start()
        out, err = p.communicate(timeout=120)
        t.join()
        self.assertEqual((p.returncode, out, err), (0, b"", b""))
        self.assertEqual(self.stored()[1], [("tool", "Bash(pytest)", "s1")])

    def test_ctrl_c_while_waiting_for_input_is_quiet(self):
        argv = instinct._Setup.launch_args(sys.executable, ROOT, "hook", "session-start")
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             cwd=self.repo, env=child_env(db=self.db))
        time.sleep(2.0)                    # well into the read of stdin
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        self.assertEqual((p.returncode, out, err), (0, b"", b""))


class TestLoadsIsTotal(unittest.TestCase):
    """Every text json.loads refuses is a ValueError from _loads (cut text made the fast scanner
    raise SystemError); every text it reads gives the same value."""

    DOCS = ['{"a": [1, 2.5e3, -0, true, false, null], "b": {"c": "d\\u00e9\\n\\"x"}, "e": []}',
            '[{"k": "v"}, [[], {}], "\\ud83d\\ude00", 12345678901234567890, NaN]',
            '"plain string with \\\\ backslash"']

    def test_every_prefix_and_every_one_byte_change(self):
        for strict in (False, True):
            for doc in self.DOCS:
                texts = [doc[:n] for n in range(len(doc) + 1)]
                texts += [doc[:n] + c + doc[n + 1:] for n in range(len(doc)) for c in '"{[,:\\x']
                for text in texts:
                    try:
                        want = json.loads(text, parse_constant=None if not strict else
                                          instinct._StrictJSON.parse_constant)
                    except ValueError:
                        with self.assertRaises(ValueError, msg=repr(text)):
                            instinct._loads(text, strict=strict)
                        continue
                    self.assertEqual(json.dumps(instinct._loads(text, strict=strict)), json.dumps(want),
                                     text)


if __name__ == "__main__":
    unittest.main()
