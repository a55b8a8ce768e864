"""The results store: one SQLite file, one row per task, written as each task finishes.

Schema (format version 1)::

    meta(name TEXT PRIMARY KEY, value TEXT)   -- ('format', 'synth-campaign'), ('version', '1'), ('synth', ...)
    results(key TEXT PRIMARY KEY,   -- the task's content key (synth.campaign.spec.content_key)
            position INTEGER,       -- its place in the campaign file (first seen)
            task TEXT,              -- the task as JSON (argument list or call object)
            status TEXT,            -- 'pending', 'done' or 'failed'
            result TEXT,            -- the task's JSON result (done), else NULL
            error TEXT,             -- its one-line error (failed), else NULL
            seconds REAL, worker TEXT, finished_at TEXT)   -- timing: differ between runs

Each finished task is one transaction (an ``UPDATE`` of its row), so a campaign killed at any
moment leaves every finished row whole and the others ``pending``.  The store runs in SQLite's WAL
mode: while a campaign runs (or after one was killed) ``PATH-wal`` and ``PATH-shm`` stand beside it and
belong to it; the last connection to close folds them back into the one file.  Read it with pandas::

    pd.read_sql("select * from results", sqlite3.connect(path))

Examples
--------
>>> import tempfile, os
>>> from synth.campaign.spec import task_from_json
>>> path = os.path.join(tempfile.mkdtemp(), "c.sqlite")
>>> task = task_from_json(["info", "--torus", "4x4"])
>>> with Store(path) as store:
...     store.add([task])
...     store.record(task.key, {"status": "done", "result": {"vertices": 16}, "error": None, "seconds": 0.1,
...                             "worker": "serial"})
...     [(r["status"], r["result"]) for r in store.rows()], store.counts()
([('done', {'vertices': 16})], {'pending': 0, 'done': 1, 'failed': 0, 'total': 1})
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from synth._version import __version__
from synth.errors import CampaignError

__all__ = ["Store", "FORMAT", "VERSION", "STATUSES", "TIMING_COLUMNS", "comparable"]

FORMAT, VERSION = "synth-campaign", 1
STATUSES = ("pending", "done", "failed")
#: the columns that differ between two runs of the same tasks
TIMING_COLUMNS = ("seconds", "worker", "finished_at")

_SCHEMA = """
create table meta (name text primary key, value text not null);
create table results (key text primary key, position integer not null, task text not null,
                      status text not null check (status in ('pending', 'done', 'failed')),
                      result text, error text, seconds real, worker text, finished_at text);
"""


class Store:
    """A campaign's SQLite results store at ``path``, created when missing (module docstring).

    A file that is not a store of this format (another SQLite database, any other file, a newer
    version) raises :class:`~synth.errors.CampaignError` and is left untouched.
    """

    def __init__(self, path):
        self.path = Path(path)
        fresh = not self.path.exists()  # an existing file, even an empty one, must prove it is ours
        if self.path.exists() and not self.path.is_file():
            raise CampaignError(f"{self.path}: not a file, so not a campaign store")
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        except sqlite3.Error as exc:
            raise CampaignError(f"{self.path}: cannot open the store: {exc}") from None
        try:
            if fresh:
                self._create()
            else:
                self._check()
            # write-ahead log, synced at checkpoints: a row's commit costs about 0.1 ms instead of two fsyncs
            # (8 ms), and stays whole through a killed process; a power cut may only lose the last rows
            # (pending again, so run again)
            self.db.execute("pragma journal_mode = wal")
            self.db.execute("pragma synchronous = normal")
        except BaseException:
            self.db.close()
            raise

    def _create(self):
        with self.db:
            self.db.execute("begin")
            for statement in _SCHEMA.strip().split(";"):
                if statement.strip():
                    self.db.execute(statement)
            self.db.executemany("insert into meta values (?, ?)",
                                [("format", FORMAT), ("version", str(VERSION)), ("synth", __version__)])

    def _check(self):
        foreign = f"{self.path}: not a synth campaign store (refusing to touch it)"
        try:
            meta = dict(self.db.execute("select name, value from meta").fetchall())
            columns = [row[1] for row in self.db.execute("pragma table_info(results)")]
        except sqlite3.Error:
            raise CampaignError(foreign) from None
        if meta.get("format") != FORMAT or "key" not in columns:
            raise CampaignError(foreign)
        if meta.get("version") != str(VERSION):
            raise CampaignError(f"{self.path}: a campaign store of format version {meta.get('version')}; this "
                                f"synth reads version {VERSION}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.db.close()

    def add(self, tasks) -> None:
        """Add ``tasks`` as ``pending`` rows (those already in the store keep their rows), in one transaction."""
        start = self.db.execute("select coalesce(max(position) + 1, 0) from results").fetchone()[0]
        with self.db:
            self.db.execute("begin")
            self.db.executemany(
                "insert or ignore into results (key, position, task, status) values (?, ?, ?, 'pending')",
                [(t.key, start + i, json.dumps(t.to_json())) for i, t in enumerate(tasks)])

    def finished(self, retry_failed: bool = False) -> set:
        """The keys of the tasks whose rows are final (``done``, and ``failed`` unless ``retry_failed``)."""
        wanted = ("done",) if retry_failed else ("done", "failed")
        marks = ",".join("?" * len(wanted))
        return {k for (k,) in self.db.execute(f"select key from results where status in ({marks})", wanted)}

    def record(self, key: str, outcome: dict) -> None:
        """Write one finished task's row (its own transaction)."""
        result = None if outcome.get("result") is None else json.dumps(outcome["result"], sort_keys=True)
        with self.db:
            self.db.execute("begin")
            self.db.execute("update results set status = ?, result = ?, error = ?, seconds = ?, worker = ?, "
                            "finished_at = ? where key = ?",
                            (outcome["status"], result, outcome.get("error"), outcome.get("seconds"),
                             outcome.get("worker"), datetime.now(timezone.utc).isoformat(timespec="seconds"), key))

    def rows(self) -> list[dict]:
        """Every row in campaign order, ``task`` and ``result`` parsed."""
        cursor = self.db.execute("select key, task, status, result, error, seconds, worker, finished_at "
                                 "from results order by position")
        names = [d[0] for d in cursor.description]
        out = []
        for values in cursor:
            row = dict(zip(names, values))
            row["task"] = json.loads(row["task"])
            row["result"] = None if row["result"] is None else json.loads(row["result"])
            out.append(row)
        return out

    def counts(self) -> dict:
        """How many rows are in each status, and the total."""
        found = dict(self.db.execute("select status, count(*) from results group by status").fetchall())
        out = {s: found.get(s, 0) for s in STATUSES}
        out["total"] = sum(out.values())
        return out


def comparable(rows) -> list:
    """``rows`` without their timing columns, sorted by key: what two runs of the same tasks share.

    >>> comparable([{"key": "b", "seconds": 1.0, "worker": "w"}, {"key": "a", "seconds": 2.0}])
    [{'key': 'a'}, {'key': 'b'}]
    """
    return sorted(({k: v for k, v in row.items() if k not in TIMING_COLUMNS} for row in rows),
                  key=lambda r: r["key"])
