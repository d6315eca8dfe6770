"""Output edges the other tests leave open: an MCP tool's structuredContent holds no hidden
character of a stored name (issue 28 item 8), and `explain` never dates the next decay in the
past (issue 32 item 8)."""
import json
import os
import time
import unittest

import instinct
from tests.helpers import DAY, Clock, Server, child_env, cli_process, make_repo, temp_dir

HIDDEN = {"bidi override": "\u202e", "isolate": "\u2066", "zero width space": "\u200b",
          "zero width joiner": "\u200d", "word joiner": "\u2060", "BOM": "\ufeff",
          "Arabic letter mark": "\u061c", "line separator": "\u2028"}


class TestStructuredContentShown(unittest.TestCase):
    """The text of a tool result is its structuredContent's JSON: both show a hidden character
    as the visible escape, and they say the same."""

    def test_every_class_of_hidden_character(self):
        home = temp_dir(self)
        repo = make_repo(os.path.join(home, "shop"))
        db = os.path.join(home, "i.db")
        with instinct.InstinctStore(db, cwd=repo) as store:
            for ch in HIDDEN.values():
                for _ in range(12):
                    store.observe(f"pref:test=pytest{ch}x", project=repo)
            store.consolidate()
            store.remember("project", "Deploy \u202eship", "run \u200bmake ship first", project=repo)
        server = Server(repo, db=db)
        self.addCleanup(server.kill)
        server.init()
        for tool, args in (("suggest", {}), ("list_instincts", {}),
                           ("get_instinct", {"pattern": "pref:test=pytest\u202ex"}),
                           ("memory_recall", {"query": "deploy"}), ("memory_list", {})):
            with self.subTest(tool=tool):
                res = server.tool(tool, args)
                self.assertFalse(res["isError"], res)
                text = res["content"][0]["text"]
                self.assertEqual(json.loads(text), res["structuredContent"])
                shown = json.dumps(res, ensure_ascii=False)
                for what, ch in HIDDEN.items():
                    self.assertNotIn(ch, shown, what)
                if tool.startswith("memory_"):          # (observe keeps no such character)
                    self.assertIn("Deploy \\u202eship", res["structuredContent"]["memories"][0]
                                  ["title"])
        plain = server.tool("list_instincts", {"limit": 1})                 # no hidden character:
        self.assertEqual(json.loads(plain["content"][0]["text"]), plain["structuredContent"])


class TestExplainNextDecay(unittest.TestCase):
    def test_a_decay_already_due_says_due_now(self):
        tmp = temp_dir(self)
        db = os.path.join(tmp, "i.db")
        with instinct.InstinctStore(db, clock=Clock(time.time() - 200 * DAY)) as old:
            old.observe("seq:a->b", project="")
        with instinct.InstinctStore(db, clock=Clock(time.time())) as recent:
            recent.observe("seq:c->d", project="")
        env = child_env(tmp, db)
        r = cli_process("explain", "seq:a->b", "--project", "", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("  next decay: due now (to conf=0, deleted)\n", r.stdout)
        d = json.loads(cli_process("--json", "explain", "seq:a->b", "--project", "",
                                   env=env).stdout)["next_decay"]
        self.assertTrue(d["due"])
        self.assertGreaterEqual(instinct._parse_iso(d["date"]), time.time() - 60)
        r = cli_process("explain", "seq:c->d", "--project", "", env=env)
        day = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 90 * DAY))
        self.assertIn(f"  next decay: {day} if not observed (to conf=0, deleted)\n", r.stdout)
        # decay really charges the due one now, and explain then dates the next charge ahead
        self.assertEqual(cli_process("decay", env=env).returncode, 0)
        self.assertEqual(cli_process("--json", "list", env=env).stdout.count("seq:a->b"), 0)


if __name__ == "__main__":
    unittest.main()
