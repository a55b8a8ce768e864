"""From a packing LP's fractions to an integer schedule the checker executes.

Each owner ``r`` gets ``n_r`` units (its share ``w_r`` rounded, largest remainders, over ``K`` units
per owner on average); each vertex splits its owner's ``n_r`` units among its parents in proportion
to ``y`` (largest remainders again), taking the units in order: units ``0..c_1-1`` go to the first
parent, the next ``c_2`` to the second, and so on.  Unit ``j`` then has one parent per vertex: a
tree.  Consecutive units that take the same arcs form one component whose weight is their count, so
an owner has at most ``n_r`` components and usually far fewer.

The steps, shared by every packing model (:mod:`~synth.models.packing.routed` too):
:func:`split_units` (each arc's unit range), :func:`unit_cuts` (the components), :func:`expand` (each
arc once per component it serves) and :func:`packed_base` (the base schedule).  :func:`round_schedule`
applies them to the layered LP, whose rounds it keeps (a vertex at distance ``d`` reduces in round
``H - d + 1`` and receives in round ``H + d``).

Examples
--------
>>> import numpy as np
>>> n_root = np.array([4])
>>> lo, hi = split_units(n_root, np.zeros(3, int), np.array([1, 1, 2]), np.array([0, 1, 0]),
...                      np.array([0.5, 0.5, 1.0]), 3)
>>> lo.tolist(), hi.tolist()
([0, 2, 0], [2, 4, 4])
>>> cuts = unit_cuts(n_root, [(np.zeros(3, int), hi)])
>>> cuts.first.tolist(), cuts.weight.tolist()
([0, 2], [2, 2])
>>> arc, comp = expand(cuts, np.zeros(3, int), lo, hi)
>>> arc.tolist(), comp.tolist()
([0, 1, 2, 2], [0, 1, 0, 1])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.schedule.data import COPY, REDUCE, BaseSchedule
from synth.schedule.weights import largest_remainder
from synth.models.packing.layered import LayeredSolution

__all__ = ["UnitCuts", "split_units", "unit_cuts", "merge_slivers", "expand", "packed_base", "round_schedule"]


@dataclass(frozen=True)
class UnitCuts:
    """Components of a rounded packing: owner (index into the roots), first unit and weight (unit count)."""

    keys: np.ndarray     # root * big + first unit, sorted
    big: int
    root: np.ndarray
    first: np.ndarray
    weight: np.ndarray



def _split_counts(pair, y, n_pair) -> np.ndarray:
    """Per arc: its pair's ``n_pair`` units split in proportion to ``y`` by largest remainders (vectorized).

    A pair whose ``y`` are all zero gives every unit to its first arc.
    """
    total = np.bincount(pair, weights=y, minlength=n_pair.size)
    first = np.r_[True, pair[1:] != pair[:-1]]
    safe = np.where(total[pair] > 0, y / np.where(total[pair] > 0, total[pair], 1.0), first.astype(np.float64))
    exact = safe * n_pair[pair]
    out = np.floor(exact + 1e-9).astype(np.int64)
    rest = n_pair - np.bincount(pair, weights=out, minlength=n_pair.size).astype(np.int64)
    order = np.lexsort((np.arange(pair.size), -(exact - out), pair))
    starts = np.searchsorted(pair[order], pair[order], side="left")
    rank = np.arange(pair.size) - starts
    bump = rank < rest[pair[order]]
    out[order[bump]] += 1
    return out


def split_units(n_root, root, child, tiebreak, y, n_vertices):
    """``(lo, hi)`` per arc (input order): the units ``[lo, hi)`` of its owner's ``n_root`` that take it.

    The arcs of a pair ``(root, child)`` take consecutive units in the order of ``tiebreak``.
    """
    key = root * n_vertices + child
    order = np.lexsort((tiebreak, key))
    uniq, pair = np.unique(key[order], return_inverse=True)
    counts = _split_counts(pair, y[order], n_root[uniq // n_vertices])
    ends = np.cumsum(counts)
    pair_start = np.r_[0, np.cumsum(np.bincount(pair, weights=counts, minlength=uniq.size))[:-1]].astype(np.int64)
    lo, hi = np.empty_like(counts), np.empty_like(counts)
    hi[order] = ends - pair_start[pair]
    lo[order] = hi[order] - counts
    return lo, hi


def unit_cuts(n_root, his) -> UnitCuts:
    """The components: unit ranges of each owner not cut by any arc's ``hi`` in ``his`` (``[(root, hi), ...]``)."""
    big = int(n_root.max()) + 1
    keys = np.unique(np.concatenate([r * big + h for r, h in his] + [np.flatnonzero(n_root) * big]))
    keys = keys[(keys % big) < n_root[keys // big]]  # component starts: (owner, first unit)
    root = keys // big
    nxt = np.r_[keys[1:], -1]
    same = np.r_[root[1:] == root[:-1], False]
    weight = np.where(same, nxt % big, n_root[root]) - keys % big
    return UnitCuts(keys, big, root, keys % big, weight)


def merge_slivers(cuts: UnitCuts, n_root, min_units: int, movable) -> UnitCuts:
    """``cuts`` without the ``movable`` starts (a boolean per key) that bound a component of fewer than
    ``min_units`` units: the component joins its neighbour across that start, the one after it first.

    For starts that only say where a mixture changes its proportions (the tree rounding's blocks): moving one
    by fewer than ``min_units`` units moves those proportions that much, and no chunk is then so small that
    a message of a few MiB leaves it without an element.  Other starts stay, whatever they leave.

    >>> cuts = unit_cuts(np.array([20, 8]), [(np.array([0, 0, 0, 1]), np.array([9, 10, 18, 3]))])
    >>> cuts.weight.tolist(), merge_slivers(cuts, np.array([20, 8]), 4, cuts.keys % cuts.big == 10).weight.tolist()
    ([9, 1, 8, 2, 3, 5], [9, 9, 2, 3, 5])
    """
    keys, big, movable = cuts.keys, cuts.big, np.asarray(movable, dtype=bool)
    while True:
        root, first = keys // big, keys % big
        same = np.r_[root[1:] == root[:-1], False]               # a next start of the same owner
        weight = np.where(same, np.r_[first[1:], 0], n_root[root]) - first
        small = weight < min_units
        movable &= np.r_[False, root[1:] == root[:-1]]           # an owner's first unit always starts one
        nxt = small & same & np.r_[movable[1:], False]
        drop = small & ~nxt & movable
        drop[1:] |= nxt[:-1]
        if not drop.any():
            return UnitCuts(keys, big, root, first, weight)
        keys, movable = keys[~drop], movable[~drop]


def expand(cuts: UnitCuts, root, lo, hi):
    """``(arc, component)``: every arc repeated once per component whose units it takes."""
    a_lo = np.searchsorted(cuts.keys, root * cuts.big + lo)
    a_hi = np.searchsorted(cuts.keys, root * cuts.big + hi)
    reps = np.where(hi > lo, a_hi - a_lo, 0)
    arc = np.repeat(np.arange(root.size), reps)
    comp = np.repeat(a_lo, reps) + (np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps))
    return arc, comp


def packed_base(t, n_rounds, rows, weights, labels) -> BaseSchedule:
    """The base schedule of the transmissions ``rows = (comp, rnd, src, dst, op, links)`` (arrays; ``links``
    one route per row, padded with ``-1``), sorted by round, component, sender and receiver."""
    comp, rnd, src, dst, op, links = rows
    links = np.asarray(links).reshape(src.size, -1)
    srt = _row_order(t.n_vertices, (rnd, comp, src, dst), (n_rounds + 1, len(weights)))
    routes = links[srt]
    if routes.shape[1] == 1 and (routes.size == 0 or routes.min() >= 0):   # one-hop arcs: a pointer per row
        ptr, route_links = np.arange(src.size + 1, dtype=np.int64), routes.ravel()
    else:
        lengths = (routes >= 0).sum(axis=1)
        ptr, route_links = np.r_[0, np.cumsum(lengths)], routes[routes >= 0]
    return BaseSchedule(t, n_rounds, comp[srt], rnd[srt], src[srt], dst[srt], op[srt], ptr, route_links,
                        weights, labels)


def _row_order(V, keys, spans):
    """``np.lexsort`` of ``keys`` (most significant first: round, component, sender, receiver), as one argsort of
    an int64 key when it fits (several times faster on millions of rows; the same order, the keys unique)."""
    rnd, comp, src, dst = keys
    if float(spans[0]) * spans[1] * V * V >= 2.0 ** 62:
        return np.lexsort((dst, src, comp, rnd))
    key = ((rnd.astype(np.int64) * spans[1] + comp) * V + src) * V + dst
    return np.argsort(key, kind="stable")


def round_schedule(sol: LayeredSolution, units: int = 1024) -> BaseSchedule:
    """The integer schedule of ``sol`` with about ``units`` units per owner (module docstring)."""
    d = sol.data
    t, H, V = d.topology, d.H, d.topology.n_vertices
    n_root = largest_remainder(sol.w, units * d.n_roots)
    lo, hi = split_units(n_root, d.root, d.child, d.parent, sol.y, V)   # unit range [lo, hi) of each arc
    cuts = unit_cuts(n_root, [(d.root, hi)])
    arc, comp = expand(cuts, d.root, lo, hi)
    dep = d.depth[arc]
    labels = tuple(f"layered tree of owner {int(d.roots[r])}, units {int(u)}..{int(u + w - 1)} of {int(n_root[r])}"
                   for r, u, w in zip(cuts.root.tolist(), cuts.first.tolist(), cuts.weight.tolist()))
    i32 = lambda a, b: np.concatenate([a, b]).astype(np.int32)   # noqa: E731  (the schedule's own dtype)
    rows = (i32(comp, comp), i32(H - dep + 1, H + dep), i32(d.child[arc], d.parent[arc]),
            i32(d.parent[arc], d.child[arc]), np.repeat(np.array([REDUCE, COPY], dtype=np.int8), arc.size),
            i32(d.up[arc], d.down[arc]))
    return packed_base(t, 2 * H, rows, cuts.weight, labels)
