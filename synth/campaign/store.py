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
belong to it; the last connection to close folds them back into the one file.

One ``synth campaign run`` at a time: :meth:`Store.lock` takes an exclusive ``flock`` on the file for
the run (released when the process ends, however it ends), and a second run on the same store is
refused with one line.  ``status`` and ``show`` open it read-only (``readonly=True``), so they work
while a run goes on and on a store the user may not write.  The file and its ``-wal``, ``-shm`` and
``-journal`` companions must not be symbolic links (SQLite would write through them).  Every SQLite
failure (a read-only file, a full disk) is a one-line :class:`~synth.errors.CampaignError`.
Read it with pandas::

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

import contextlib
import json
import os
import sqlite3
import urllib.parse
from datetime import datetime, timezone
from pathlib import Path

from synth._version import __version__
from synth.errors import CampaignError
from synth.fileio import printable

__all__ = ["Store", "FORMAT", "VERSION", "STATUSES", "TIMING_COLUMNS", "comparable"]

FORMAT, VERSION = "synth-campaign", 1
STATUSES = ("pending", "done", "failed")
#: the columns that differ between two runs of the same tasks
TIMING_COLUMNS = ("seconds", "worker", "finished_at")
#: the columns of ``results``, in order
COLUMNS = ("key", "position", "task", "status", "result", "error", "seconds", "worker", "finished_at")
#: what a store's schema holds besides the indexes SQLite makes for primary keys
_OBJECTS = {("table", "meta"), ("table", "results")}
#: the files SQLite keeps beside a store (with its own name in front)
COMPANIONS = ("", "-wal", "-shm", "-journal")

_SCHEMA = """
create table meta (name text primary key, value text not null);
create table results (key text primary key, position integer not null, task text not null,
                      status text not null check (status in ('pending', 'done', 'failed')),
                      result text, error text, seconds real, worker text, finished_at text);
"""


class Store:
    """A campaign's SQLite results store at ``path``, created when missing (module docstring).

    A file that is not a store of this format (another SQLite database, any other file, a newer
    version) raises :class:`~synth.errors.CampaignError` and is left untouched.  ``readonly`` opens an
    existing store for reading only (never created, never written).
    """

    def __init__(self, path, readonly: bool = False, exclusive: bool = False):
        self.path = Path(path)
        self.name = printable(self.path)
        self.db, self._lock_fd = None, None
        for suffix in COMPANIONS:
            if os.path.islink(f"{self.path}{suffix}"):
                raise CampaignError(f"{printable(f'{self.path}{suffix}')}: a symbolic link; a campaign store and "
                                    f"its companions must be plain files (refusing to follow it)")
        fresh = False if readonly else self._make()  # an existing file, even an empty one, must prove it is ours
        if not fresh and not self.path.is_file():
            raise CampaignError(f"{self.name}: " + ("not a file, so not a campaign store" if self.path.exists()
                                                    else "no such campaign store"))
        try:
            if exclusive:
                self._lock()
            self._open(fresh, readonly)
        except BaseException:
            # a store we made and could not make whole is not left behind to be refused next time; unless
            # another run took it between our creating and locking it (then it is that run's store)
            owned = fresh and (not exclusive or self._lock_fd is not None)
            self.close()
            if owned:
                for suffix in COMPANIONS:
                    with contextlib.suppress(OSError):
                        os.unlink(f"{self.path}{suffix}")
            raise

    def _make(self) -> bool:
        """Create the store's file if there is none (``True``); never through a symbolic link."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            os.close(os.open(self.path, flags, 0o666))
        except FileExistsError:
            return False
        except OSError as exc:
            raise CampaignError(f"{self.name}: cannot create the store: {exc.strerror}") from None
        return True

    def _lock(self) -> None:
        """Hold the store for one run: an exclusive ``flock``, released by :meth:`close` or the process's end."""
        import fcntl  # POSIX only, like the runs that hold a store

        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise CampaignError(f"{self.name}: cannot open the store: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise CampaignError(f"{self.name}: another synth campaign run is using this store; wait for it to "
                                f"end, or use another store") from None
        self._lock_fd = fd

    def _open(self, fresh: bool, readonly: bool) -> None:
        try:
            self.db = (sqlite3.connect(f"file:{urllib.parse.quote(str(self.path.absolute()))}?mode=ro", uri=True,
                                       timeout=30, isolation_level=None) if readonly else
                       sqlite3.connect(self.path, timeout=30, isolation_level=None))
        except sqlite3.Error as exc:
            raise CampaignError(f"{self.name}: cannot open the store: {exc}") from None
        with self._sql():
            self.db.execute("pragma trusted_schema = off")  # a planted schema may not call functions
            self._create() if fresh else self._check()
            if not readonly:
                # write-ahead log, synced at checkpoints: a row's commit costs about 0.1 ms instead of two
                # fsyncs (8 ms), and stays whole through a killed process; a power cut may only lose the
                # last rows (pending again, so run again)
                self.db.execute("pragma journal_mode = wal")
                self.db.execute("pragma synchronous = normal")

    @contextlib.contextmanager
    def _sql(self):
        """SQLite's failures (a read-only file or folder, a full disk, a busy store) as one line."""
        try:
            yield
        except sqlite3.Error as exc:
            reason = " ".join(str(exc).split()) or exc.__class__.__name__
            raise CampaignError(f"{self.name}: the campaign store failed: {reason}") from None

    def _create(self):
        with self.db:
            self.db.execute("begin")
            for statement in _SCHEMA.strip().split(";"):
                if statement.strip():
                    self.db.execute(statement)
            self.db.executemany("insert into meta values (?, ?)",
                                [("format", FORMAT), ("version", str(VERSION)), ("synth", __version__)])

    def _check(self):
        """Refuse a file that is not a store this synth wrote: the two tables with their columns, and nothing
        else in its schema (a trigger or a view of a planted file would run inside our transactions)."""
        foreign = f"{self.name}: not a synth campaign store (refusing to touch it)"
        try:
            meta = dict(self.db.execute("select name, value from meta").fetchall())
            columns = tuple(row[1] for row in self.db.execute("pragma table_info(results)"))
            objects = self.db.execute("select type, name from sqlite_master").fetchall()
        except (sqlite3.Error, TypeError, ValueError):
            raise CampaignError(foreign) from None
        extra = [o for o in objects if o not in _OBJECTS and not (o[0] == "index" and
                                                                  str(o[1]).startswith("sqlite_autoindex_"))]
        if meta.get("format") != FORMAT or columns != COLUMNS or extra:
            raise CampaignError(foreign)
        if meta.get("version") != str(VERSION):
            raise CampaignError(f"{self.name}: a campaign store of format version {meta.get('version')}; this "
                                f"synth reads version {VERSION}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.db is not None:
            self.db.close()
        if self._lock_fd is not None:  # after SQLite's own descriptors: closing ours first would drop its locks
            os.close(self._lock_fd)
            self._lock_fd = None

    def add(self, tasks) -> None:
        """Add ``tasks`` as ``pending`` rows (those already in the store keep their rows), in one transaction."""
        with self._sql():
            start = self.db.execute("select coalesce(max(position) + 1, 0) from results").fetchone()[0]
            with self.db:
                self.db.execute("begin")
                self.db.executemany(
                    "insert or ignore into results (key, position, task, status) values (?, ?, ?, 'pending')",
                    [(t.key, start + i, json.dumps(t.to_json())) for i, t in enumerate(tasks)])

    def finished(self, retry_failed: bool = False) -> set:
        """The keys of the tasks whose rows are final (``done``, and ``failed`` unless ``retry_failed``).

        A row that failed with ``exit 130`` or ``exit 143`` is not final: it is a task that Ctrl-C or
        SIGTERM stopped, recorded so by an earlier synth that let a serial campaign go on after it.
        """
        with self._sql():
            failed = "" if retry_failed else (" or (status = 'failed' and coalesce(error, '') not like 'exit 130:%' "
                                              "and coalesce(error, '') not like 'exit 143:%')")
            return {k for (k,) in self.db.execute(f"select key from results where status = 'done'{failed}")}

    def record(self, key: str, outcome: dict) -> None:
        """Write one finished task's row (its own transaction)."""
        with self._sql():
            result = None if outcome.get("result") is None else json.dumps(outcome["result"], sort_keys=True)
            with self.db:
                self.db.execute("begin")
                self.db.execute("update results set status = ?, result = ?, error = ?, seconds = ?, worker = ?, "
                                "finished_at = ? where key = ?",
                                (outcome["status"], result, outcome.get("error"), outcome.get("seconds"),
                                 outcome.get("worker"), datetime.now(timezone.utc).isoformat(timespec="seconds"), key))

    def rows(self) -> list[dict]:
        """Every row in campaign order, ``task`` and ``result`` parsed."""
        with self._sql():
            cursor = self.db.execute("select key, task, status, result, error, seconds, worker, finished_at "
                                     "from results order by position")
            names = [d[0] for d in cursor.description]
            out = []
            for values in cursor:
                row = dict(zip(names, values))
                try:
                    row["task"] = json.loads(row["task"])
                    row["result"] = None if row["result"] is None else json.loads(row["result"])
                except (TypeError, ValueError):
                    raise CampaignError(f"{self.name}: row {printable(str(row['key'])[:40])} is not JSON; "
                                        f"not a store synth wrote") from None
                out.append(row)
            return out

    def counts(self) -> dict:
        """How many rows are in each status, and the total."""
        with self._sql():
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
