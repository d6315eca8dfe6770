"""Tests for the core (issue 12): one busy timeout, transactions that always end, validation
from the Params for API, CLI and MCP alike, single-pattern lookup by the working directory,
schema v9, and the command line's exit codes.

Run: python3 -m unittest -v test_core
"""
import contextlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import time
import unittest

import instinct
from instinct import InstinctStore, NotFoundError, StoreError, ValidationError
from test_instinct import setUpModule, _TempDB, _child_env, INSTINCT_PY  # noqa: F401


class TestBusyWait(_TempDB):
    """A busy wait lasts one timeout, not two (issue 12)."""

    def locked(self):
        self.store.stats()
        holder = sqlite3.connect(str(self.db), isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        self.addCleanup(holder.close)
        self.addCleanup(holder.execute, "ROLLBACK")

    def test_write_on_locked_store_gives_up_after_its_timeout(self):
        self.locked()
        s = self.open(timeout=1)
        t = time.monotonic()
        with self.assertRaises(StoreError) as cm:
            s.observe("seq:a->b")
        elapsed = time.monotonic() - t
        self.assertIn("locked", str(cm.exception))
        self.assertGreaterEqual(elapsed, 0.9)
        self.assertLess(elapsed, 1.5)
        # the connection's own busy timeout is back to the full setting after the retry loop
        self.assertEqual(s._db.conn.execute("PRAGMA busy_timeout").fetchone()[0], 1000)

    def test_a_fast_busy_error_is_retried_within_the_same_timeout(self):
        db = instinct._DB(str(self.db), False, timeout=0.5)
        calls = []

        def flaky():
            calls.append(time.monotonic())
            if len(calls) < 3:
                raise sqlite3.OperationalError("database is locked")
            return "ok"
        self.assertEqual(db.retry(flaky), "ok")
        self.assertEqual(len(calls), 3)

        def always():
            raise sqlite3.OperationalError("database is locked")
        t = time.monotonic()
        with self.assertRaises(sqlite3.OperationalError):
            db.retry(always, start=t - 0.4)        # 0.4 s of the 0.5 s already spent
        self.assertLess(time.monotonic() - t, 0.4)


class TestWriteEnds(_TempDB):
    """_Write never leaves a transaction open and never hides the block's own error."""

    def test_failed_commit_is_rolled_back(self):
        conn = self.store._db.conn
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("CREATE TEMP TABLE parent (id INTEGER PRIMARY KEY)")
        conn.execute("CREATE TEMP TABLE child (pid INTEGER REFERENCES parent(id)"
                     " DEFERRABLE INITIALLY DEFERRED)")
        with self.assertRaises(sqlite3.IntegrityError):          # the COMMIT fails
            with self.store._db.write() as c:
                c.execute("INSERT INTO child (pid) VALUES (42)")
        self.assertFalse(conn.in_transaction)
        self.assertEqual(conn.execute("SELECT count(*) FROM temp.child").fetchone()[0], 0)
        self.store.observe("seq:after")                          # the store still writes
        self.assertEqual(self.conf("seq:after"), 1)

    def test_nested_block_whose_transaction_is_gone_reports_its_own_error(self):
        with self.assertRaises(KeyError):
            with self.store._db.write() as c:
                c.execute("INSERT INTO settings (key, value) VALUES ('x', '1')")
                with self.store._db.write() as inner:
                    inner.execute("ROLLBACK")
                    raise KeyError("mine")
        self.assertFalse(self.store._db.conn.in_transaction)
        self.assertEqual(self.sql("SELECT count(*) FROM settings WHERE key = 'x'")[0][0], 0)

    def test_nested_block_error_rolls_back_only_the_savepoint(self):
        with self.store._db.write() as c:
            c.execute("INSERT INTO settings (key, value) VALUES ('outer', '1')")
            with self.assertRaises(KeyError):
                with self.store._db.write() as inner:
                    inner.execute("INSERT INTO settings (key, value) VALUES ('inner', '1')")
                    raise KeyError("inner")
        self.assertEqual(self.sql("SELECT key FROM settings ORDER BY key"), [("outer",)])


if __name__ == "__main__":
    unittest.main()
