"""The transmissions form of a certificate component: rows ``[round, src, dst, op, route]``, read strictly.

:func:`fast_rows` reads a component's rows column by column; :func:`slow_rows` row by row, naming the
first bad transmission (used when the fast reader finds anything not plainly well formed).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("4")
>>> rnd, src, dst, op, lengths, links = fast_rows(t, [[1, 0, 1, "reduce", [0, 1]], [2, 1, 0, "copy", [1, 0]]])
>>> rnd.tolist(), op.tolist(), lengths.tolist()
([1, 2], [0, 1], [1, 1])
>>> slow_rows(t, 0, [[1, 0, 2, "reduce", [0, 2]]])
Traceback (most recent call last):
...
synth.errors.FileFormatError: component 0, transmission 0: route step 0->2 is not a link
"""

from __future__ import annotations

import numpy as np

from synth.check.tree_form import route_links
from synth.errors import FileFormatError, InvalidScheduleError
from synth.schedule import OPS

__all__ = ["fast_rows", "slow_rows"]


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _row(topology, tr):
    """One transmission ``[round, src, dst, op, route]``, strictly typed; returns (round, src, dst, op, links)."""
    if not isinstance(tr, list) or len(tr) != 5:
        raise ValueError("a transmission is [round, src, dst, op, route]")
    rnd, src, dst, op, route = tr
    if not (_is_int(rnd) and _is_int(src) and _is_int(dst)):
        raise ValueError("round, src and dst must be integers")
    if op not in OPS:
        raise ValueError(f"op must be one of {', '.join(OPS)}")
    if not isinstance(route, list) or len(route) < 2 or not all(_is_int(v) for v in route):
        raise ValueError("route must be a list of at least two integer vertex ids")
    if route[0] != src or route[-1] != dst:
        raise ValueError("route does not start at src and end at dst")
    links = route_links(topology, np.asarray(route, dtype=np.int64))
    return rnd, src, dst, OPS.index(op), links


def slow_rows(topology, c, transmissions) -> tuple:
    """One component's ``(round, src, dst, op, route lengths, links)`` arrays, row by row, naming the first error."""
    rows = []
    for j, tr in enumerate(transmissions):
        try:
            rows.append(_row(topology, tr))
        except InvalidScheduleError as exc:
            raise InvalidScheduleError(f"component {c}, transmission {j}: {exc}") from None
        except (TypeError, ValueError) as exc:
            raise FileFormatError(f"component {c}, transmission {j}: {exc}") from None
    cols = np.array([r[:4] for r in rows], dtype=np.int64).reshape(-1, 4)
    links = [np.asarray(r[4], dtype=np.int64) for r in rows]
    return (*cols.T, np.array([x.size for x in links], dtype=np.int64),
            np.concatenate(links) if links else np.zeros(0, dtype=np.int64))


def _ints(values) -> bool:
    return all(type(v) is int for v in values)   # JSON integers only: no bool, no float


def fast_rows(topology, transmissions):
    """:func:`slow_rows` by columns, or None when anything is off (the row-by-row reader then says what)."""
    import itertools

    if not all(type(tr) is list and len(tr) == 5 for tr in transmissions):
        return None
    if not transmissions:
        return (*(np.zeros(0, dtype=np.int64) for _ in range(6)),)
    rnd, src, dst, op, route = zip(*transmissions)
    if not (_ints(rnd) and _ints(src) and _ints(dst) and all(type(o) is str and o in OPS for o in op)
            and all(type(r) is list and len(r) >= 2 for r in route)):
        return None
    verts = list(itertools.chain.from_iterable(route))
    if not _ints(verts):
        return None
    lengths = np.fromiter(map(len, route), dtype=np.int64, count=len(route))
    try:   # a file's integers are below 2**53 (synth.fileio); a dict built in Python may hold any
        v, rnd = np.array(verts, dtype=np.int64), np.array(rnd, dtype=np.int64)
        src, dst = np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)
    except OverflowError:
        return None
    ends = np.cumsum(lengths)
    if np.any(v[ends - lengths] != src) or np.any(v[ends - 1] != dst):
        return None
    step = np.ones(v.size, dtype=bool)
    step[ends - 1] = False
    a = np.flatnonzero(step)
    links = topology.link_ids(v[a], v[a + 1]).astype(np.int64)
    if np.any(links < 0):
        return None
    code = {name: i for i, name in enumerate(OPS)}
    return rnd, src, dst, np.array([code[o] for o in op], dtype=np.int64), lengths - 1, links
