"""``synth campaign``: run many synth tasks on a Dask cluster, their results in one SQLite store.

Examples
--------
>>> from synth.cli import _parser
>>> a = _parser().parse_args(["campaign", "run", "c.json", "--cluster", "local:2"])
>>> a.file, a.cluster, a.store, a.func is cmd_campaign
('c.json', 'local:2', None, True)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from synth.campaign import CLUSTER_HELP, Store, parse_cluster, read_campaign, run_campaign
from synth.cli._common import EXIT_OK
from synth.fileio import printable

__all__ = ["add_parser", "cmd_campaign"]


def _default_store(file) -> str:
    return str(Path(file).with_suffix(".sqlite"))


def _open(path) -> Store:
    return Store(path, readonly=True)


def _run(args) -> int:
    parse_cluster(args.cluster)  # refused before anything is read or written
    tasks = read_campaign(args.file, vet=args.task_vetter())
    store = args.store or _default_store(args.file)
    tty = sys.stderr.isatty()

    def progress(text):
        if tty:
            print(f"\r[synth] {text}\033[K", end="", file=sys.stderr, flush=True)

    def notice(message):  # a line of its own, over the progress line on a terminal
        print(f"{chr(13) if tty else ''}[synth] {message}{chr(27) + '[K' if tty else ''}", file=sys.stderr,
              flush=True)

    summary = run_campaign(tasks, store, args.cluster, entry=args.main, retry_failed=args.retry_failed,
                           progress=progress, notice=notice)
    if tty:
        print(file=sys.stderr)
    print(f"{store}: {summary.total} tasks, {summary.skipped} finished before, {summary.ran} run now, "
          f"{summary.failed} of them failed")
    return EXIT_OK


def _report(args) -> int:
    """``status`` (the rows counted by status) or ``show`` (every row) of the store at ``args.path``."""
    with _open(args.path) as store:
        counts, rows = store.counts(), store.rows() if args.action == "show" else []
    if args.action == "status":
        print(json.dumps({"store": args.path, **counts}) if args.json else
              f"{args.path}: {counts['done']} done, {counts['failed']} failed, {counts['pending']} pending "
              f"of {counts['total']} tasks")
    elif args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            task = " ".join(map(str, row["task"])) if isinstance(row["task"], list) else row["task"]
            print(printable(f"{row['key'][:12]}  {row['status']:<7}  {task}  {row['error'] or ''}".rstrip()))
    return EXIT_OK


def cmd_campaign(args) -> int:
    """Run a campaign file on a Dask cluster, or report on its results store.

    ``run FILE``: every task of FILE (JSON or TOML: {"tasks": [["solve", "--torus", "8x8", "--depth", "3"],
    ...], "grids": [...]}) not yet finished in the store; each row is written as its task finishes, so a
    killed run restarts where it stopped.  ``status PATH`` counts the rows; ``show PATH --json`` prints
    every row.  The store is SQLite: pd.read_sql("select * from results", sqlite3.connect(PATH)).

    Example: ``synth campaign run sweep.json --cluster local:2 --store sweep.sqlite``
    """
    return _run(args) if args.action == "run" else _report(args)


def add_parser(sub) -> None:
    """Add ``synth campaign run|status|show`` to the subparsers ``sub``."""
    c = sub.add_parser("campaign", help="run many tasks on a Dask cluster; results in a SQLite store",
                       description=cmd_campaign.__doc__)
    actions = c.add_subparsers(dest="action", required=True, parser_class=type(c))
    r = actions.add_parser("run", help="run a campaign file's unfinished tasks")
    r.add_argument("file", help="the campaign: JSON, or TOML when it ends in .toml")
    r.add_argument("--cluster", default="local", help=CLUSTER_HELP + " (default local)")
    r.add_argument("--store", metavar="PATH", help="the SQLite results store (default: FILE with .sqlite)")
    r.add_argument("--retry-failed", action="store_true", help="run the tasks that failed before again")
    for name, text in (("status", "count the rows of a store by status"), ("show", "print every row of a store")):
        a = actions.add_parser(name, help=text)
        a.add_argument("path", help="the SQLite results store")
        a.add_argument("--json", action="store_true", help="print JSON")
    c.set_defaults(func=cmd_campaign)
