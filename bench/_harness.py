"""The bench scripts' one harness: instance sets, common arguments, timing and a ratio table.

A script names its instance sets, builds its parser with :func:`parser` (``--set``,
``--only``, ``--json`` and, when asked, ``--time-limit`` and ``--seed``), reads the
instances from ``args.instances`` and prints its rows through a :class:`Table`. A
:class:`Ratio` column divides a row's value by a baseline measured in the same process:
another value of the same row (``W / W_heuristic``) or a value of a baseline row of the
same group (each engine's seconds over CP-SAT's on the same instance).

``--json`` alone prints one JSON object per row on stdout in place of the table;
``--json FILE`` prints the table and keeps FILE rewritten (atomically) with one JSON
object per line for the rows so far, so a long run that stops leaves its rows behind.

The scripts mirror the packages (``bench/khop/*.py``, ``bench/xhop.py``, ``bench/balance.py``,
``bench/core.py``, ``bench/mpi.py``); what only the k-hop scripts share (the orbit LP run,
the common search start) is ``bench/khop/_common.py``, which also puts this module on the
path of the scripts in ``bench/khop/``.

Examples
--------
>>> import io
>>> sets = {"quick": [("8x8", 2), ("8x8", 3)]}
>>> args = parse_args(parser("A bench.", sets, time_limit=60.0), ["--only", "4x4:1,6x6:2"])
>>> args.instances, args.time_limit
([('4x4', 1), ('6x6', 2)], 60.0)
>>> out = io.StringIO()
>>> table = Table([Col("torus", "shape", ">6"), Col("engine", fmt=">6"), Col("s", fmt=">5.1f"),
...                Ratio("x a", "s")], baseline=lambda r: r["engine"] == "a", group=("shape",), out=out)
>>> for row in ({"shape": "4x4", "engine": "a", "s": 2.0}, {"shape": "4x4", "engine": "b", "s": 3.0}):
...     _ = table.add(row)
>>> print(out.getvalue(), end="")
 torus engine     s     x a
   4x4      a   2.0   1.000
   4x4      b   3.0   1.500
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

from synth.fileio import write_atomic

__all__ = ["Col", "Ratio", "Table", "log", "parse_args", "parse_only", "parser", "timed"]


def parse_only(text, fields=(str, int), required=None):
    """Instances from ``--only`` text: comma-separated, each ``FIELD:FIELD...``.

    Parameters
    ----------
    text : str
        For example ``"16x16:3,32x32:11"``.
    fields : tuple of callables
        One converter per field, in order (default shape and depth).
    required : int, optional
        How many leading fields each instance must give (default all); a missing
        optional field is ``None``.

    Returns
    -------
    list of tuple

    Raises
    ------
    ValueError
        An instance with too few or too many fields, or a field its converter refuses.

    Examples
    --------
    >>> parse_only("16x16:3, 32x32:11")
    [('16x16', 3), ('32x32', 11)]
    >>> parse_only("12x12:3:192,10x10:4", fields=(str, int, int), required=2)
    [('12x12', 3, 192), ('10x10', 4, None)]
    """
    required = len(fields) if required is None else required
    out = []
    for part in text.split(","):
        bits = [b.strip() for b in part.strip().split(":")]
        if not required <= len(bits) <= len(fields):
            count = str(required) if required == len(fields) else f"{required} to {len(fields)}"
            raise ValueError(f"instance {part.strip()!r} needs {count} fields separated by ':'")
        try:
            values = [conv(b) for conv, b in zip(fields, bits)]
        except ValueError:
            kinds = ":".join(f.__name__ for f in fields)
            raise ValueError(f"instance {part.strip()!r} does not read as {kinds}") from None
        out.append(tuple(values) + (None,) * (len(fields) - len(values)))
    return out


def parser(doc, sets=None, *, default_set="quick", fields=(str, int), required=None, spec="SHAPE:K",
           time_limit=None, seed=None, seconds=None):
    """An argument parser described by ``doc``'s first line, with the harness's arguments.

    Parameters
    ----------
    doc : str
        The script's docstring; its first line is the description.
    sets : dict of str to list of tuple, optional
        Named instance sets; with them come ``--set`` (default ``default_set``) and ``--only``.
    default_set : str
    fields, required
        The fields of an ``--only`` instance (see :func:`parse_only`).
    spec : str
        How ``--help`` spells one instance.
    time_limit, seed, seconds : optional
        Defaults of ``--time-limit`` (seconds), ``--seed`` and ``--seconds`` (the time of each
        search in a race of searches); ``None`` leaves the argument out.

    Returns
    -------
    argparse.ArgumentParser
        Parse with :func:`parse_args`, which fills ``args.instances``.

    Examples
    --------
    >>> parser("B.\\nmore", {"quick": [("8x8", 3)]}, seed=0).parse_args([]).set
    'quick'
    """
    ap = argparse.ArgumentParser(description=doc.splitlines()[0], allow_abbrev=False)
    ap.set_defaults(_sets=sets, _fields=fields, _required=required)
    if sets is not None:
        ap.add_argument("--set", choices=sorted(sets), default=default_set, help="instance set (default %(default)s)")
        ap.add_argument("--only", metavar=spec + ",...", help="these instances in place of --set's")
    if time_limit is not None:
        ap.add_argument("--time-limit", type=float, default=time_limit, help="seconds (default %(default)g)")
    if seconds is not None:
        ap.add_argument("--seconds", type=float, default=seconds, help="time of each search (default %(default)g)")
    if seed is not None:
        ap.add_argument("--seed", type=int, default=seed, help="random seed (default %(default)d)")
    ap.add_argument("--json", nargs="?", const="-", metavar="FILE",
                    help="one JSON object per row: on stdout in place of the table, or kept in FILE")
    return ap


def parse_args(ap, argv=None):
    """Parse ``argv`` with a :func:`parser`; ``args.instances`` is ``--only``'s list, else ``--set``'s.

    A malformed ``--only`` exits with the parser's usage message.
    """
    args = ap.parse_args(argv)
    args.instances = None
    if args._sets is not None:
        try:
            args.instances = (parse_only(args.only, args._fields, args._required) if args.only
                              else list(args._sets[args.set]))
        except ValueError as e:
            ap.error(f"--only: {e}")
    return args


def timed(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` and its wall seconds (``time.perf_counter``).

    Examples
    --------
    >>> value, seconds = timed(sum, [1, 2, 3])
    >>> value, seconds >= 0
    (6, True)
    """
    t0 = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - t0


def log(msg):
    """Print a progress line on stderr (the table stays on stdout)."""
    print(msg, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Col:
    """A table column.

    Parameters
    ----------
    head : str
        The header, aligned like the cells.
    key : str, optional
        The row's key (default ``head``).
    fmt : str
        A format spec such as ``">9.2f"``; its width and alignment also place the header.
        A value ``None`` prints ``-``, a missing key a blank cell.
    text : callable, optional
        ``text(row) -> str`` in place of the formatted value (aligned to the width).
    """

    head: str
    key: str | None = None
    fmt: str = ""
    text: Callable[[dict], str] | None = None

    def _place(self):
        m = re.match(r"(.?[<>^=])?[-+ ]?z?#?0?(\d+)?", self.fmt)
        return (m.group(1) or ">"), (m.group(2) or "")

    def header(self):
        align, width = self._place()
        return f"{self.head:{align}{width}}"

    def cell(self, row, table):
        align, width = self._place()
        if self.text is not None:
            return f"{self.text(row):{align}{width}}"
        key = self.head if self.key is None else self.key
        if key not in row:
            return f"{'':{width}}"
        v = row[key]
        if isinstance(v, bool) or type(v).__name__ == "bool_":
            v = str(bool(v))
        return f"{'-':{align}{width}}" if v is None else f"{v:{self.fmt}}"


@dataclass(frozen=True)
class Ratio:
    """A column ``(num - minus) / (den - minus)``: a row's value over a baseline measured in the same process.

    ``num`` is read from the row; ``den`` (default ``num``) from the table's baseline row of
    the row's group, or from the row itself when the table has no baseline; ``minus`` (a key
    of the row, or a number) is taken off both, as the excess over ``p - 1`` is. A missing
    value, or a denominator that is not finite and above zero, prints ``-``. The row's JSON object holds the ratio under
    ``key`` (default ``head``).
    """

    head: str
    num: str
    den: str | None = None
    minus: Any = None
    fmt: str = ">7.3f"
    key: str | None = None

    def header(self):
        return Col(self.head, fmt=self.fmt).header()

    def cell(self, row, table):
        return Col(self.head, self.key, fmt=self.fmt).cell(row, table)

    def value(self, row, table):
        base = table.baseline_of(row)
        off = row.get(self.minus) if isinstance(self.minus, str) else (self.minus or 0)
        num, den = row.get(self.num), None if base is None else base.get(self.den or self.num)
        if num is None or den is None or off is None or not (math.isfinite(den) and den - off > 1e-9):
            return None
        return (num - off) / (den - off)


_KEPT = {}  # path -> the JSON lines of every table of this process that keeps that file


class Table:
    """Rows printed as they come, under one header, with :class:`Ratio` columns against a baseline.

    Parameters
    ----------
    columns : list of Col
    baseline : callable, optional
        ``baseline(row) -> bool`` marks the baseline rows; a row's ratios divide by the
        latest baseline row of its group. Without it each row is its own baseline.
    group : tuple of str
        The keys whose values make a group (for example ``("shape", "k")``).
    rule : bool
        Print a line of dashes under the header.
    json : str, optional
        ``"-"``: print each row as one JSON object in place of the table; a path: also keep
        that file rewritten with one JSON object per line, the rows of every table given the
        same path (usually ``args.json``).
    out : file, optional
        Where the table goes (default ``sys.stdout``).
    title : str, optional
        A line printed above the header.
    """

    def __init__(self, columns, *, baseline=None, group=(), rule=False, json=None, out=None, title=None):
        self.columns, self.is_baseline, self.group = list(columns), baseline, tuple(group)
        self.json, self.out, self.rule = json, sys.stdout if out is None else out, rule
        self.rows, self._bases = [], {}
        keys = [c.head if c.key is None else c.key for c in self.columns if isinstance(c, Ratio)]
        if len(set(keys)) < len(keys):
            raise ValueError(f"ratio columns share a key: {keys}; give each its own key=")
        self.section(title)

    def section(self, title=None):
        """Print ``title`` (if any) and the header again: a new section of the same table."""
        if self.json != "-":
            if title is not None:
                self._print(title)
            head = " ".join(c.header() for c in self.columns).rstrip()
            self._print(head)
            if self.rule:
                self._print("-" * len(head))

    def _print(self, line):
        print(line, file=self.out, flush=True)

    def baseline_of(self, row):
        """The baseline row for ``row``: the latest of its group, itself without a baseline, else ``None``."""
        if self.is_baseline is None:
            return row
        return self._bases.get(tuple(row.get(k) for k in self.group))

    def add(self, row):
        """Print ``row`` (a dict); return it with its ratios added under their keys."""
        if self.is_baseline is not None and self.is_baseline(row):
            self._bases[tuple(row.get(k) for k in self.group)] = row
        row = dict(row)
        for c in self.columns:
            if isinstance(c, Ratio) and c.num in row:
                row[c.head if c.key is None else c.key] = c.value(row, self)
        self.rows.append(row)
        if self.json == "-":
            self._print(json.dumps(row, default=_plain))
        else:
            self._print(" ".join(c.cell(row, self) for c in self.columns).rstrip())
            if self.json:
                kept = _KEPT.setdefault(self.json, [])
                kept.append(json.dumps(row, default=_plain) + "\n")
                write_atomic(self.json, kept)
        return row

    def note(self, line):
        """Print a line of text under the table (not in ``--json`` output)."""
        if self.json != "-":
            self._print(line)


def _plain(value):
    """numpy scalars and arrays (and fractions) as JSON values."""
    if hasattr(value, "tolist"):
        return value.tolist()
    f = float(value)
    return f if math.isfinite(f) else str(value)
