"""What every packing LP and its rounding share: parent choices, shares, loads per round; units, components.

A packing model (:mod:`~synth.models.packing.layered`: one-hop trees layered by distance;
:mod:`~synth.models.packing.routed`: trees whose arcs are routes through switches or one-way
links) is one or more :class:`ArcSet` s: per arc, the owner (an index into the represented roots),
the child vertex whose parent it chooses, and the links the arc loads, in which round.  Every arc
of a set has a variable ``y >= 0``; the arcs of one (owner, child) pair share the owner's share
``w_r`` (``sum y = w_r``), and the load of a link in a round, summed over every image under the
group, is at most ``M_s``; the LP minimizes ``sum_s M_s`` (:func:`build_packing_lp`).

The rounding (:func:`split_units`, :func:`unit_cuts`, :func:`expand`, :func:`packed_base`) cuts each
owner's chunk into units, gives each pair's units to its arcs in proportion to ``y`` (the arcs
taken in a fixed order), and merges consecutive units that take the same arcs in every set into one
component whose weight is their count.

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

from synth.models._solve.linear import LinearModel
from synth.schedule.data import BaseSchedule

__all__ = ["ArcSet", "UnitCuts", "build_packing_lp", "lifted_links", "split_units", "unit_cuts", "expand",
           "packed_base"]


@dataclass(frozen=True, eq=False)
class ArcSet:
    """Parent choices with one variable each: ``root`` (index into the roots), ``child``, and ``uses``:
    ``((links, rounds), ...)``, each arc loading the links of row ``links[i]`` (padded with ``-1``) in
    round ``rounds[i]``."""

    root: np.ndarray
    child: np.ndarray
    uses: tuple

    @property
    def n_arcs(self) -> int:
        return int(self.child.size)


@dataclass(frozen=True)
class UnitCuts:
    """Components of a rounded packing: owner (index into the roots), first unit and weight (unit count)."""

    keys: np.ndarray     # root * big + first unit, sorted
    big: int
    root: np.ndarray
    first: np.ndarray
    weight: np.ndarray


def lifted_links(group, links) -> np.ndarray:
    """``out[i, j]``: element ``i`` of ``group`` applied to link ``links[j]`` (one row when there is no group)."""
    if group is None:
        return np.asarray(links, dtype=np.int64)[None, :]
    return group.link_images(links).astype(np.int64)


def build_packing_lp(name, n_roots, group, n_rounds, n_links, n_vertices, arcsets, free_shares=True):
    """The packing LP as a :class:`~synth.models._solve.linear.LinearModel`; returns ``(model, ys, w, M)``.

    ``ys`` holds the columns of each arc set; ``free_shares=False`` fixes every owner's share to the
    same value.  Rows: ``shares`` (the lifted shares sum to one), ``equal_shares``, ``pass_share`` per
    set (each pair passes its owner's share to its arcs), then ``load`` (every link and round).
    """
    G = 1 if group is None else group.order
    E = n_links
    m = LinearModel(name=name)
    ys = [m.add_vars(a.n_arcs, 0.0, np.inf, integer=False) for a in arcsets]
    w = m.add_vars(n_roots, 0.0, np.inf, integer=False)
    M = m.add_vars(n_rounds, 0.0, np.inf, integer=False, cost=1.0)
    # every lifted chunk's shares sum to one vector: G * sum_r w_r = 1
    m.add_rows(np.zeros(n_roots), w, np.full(n_roots, float(G)), 1, 1.0, 1.0, "shares")
    if not free_shares:
        m.add_rows(np.arange(n_roots - 1).repeat(2), np.stack([w[:-1], w[1:]], 1).ravel(),
                   np.tile([1.0, -1.0], n_roots - 1), n_roots - 1, 0.0, 0.0, "equal_shares")
    # each non-root vertex passes its owner's whole share to its parents
    for a, y in zip(arcsets, ys):
        key = a.root * n_vertices + a.child
        uniq, pair = np.unique(key, return_inverse=True)
        rows = np.concatenate([pair, np.arange(uniq.size)])
        cols = np.concatenate([y, w[uniq // n_vertices]])
        vals = np.concatenate([np.ones(a.n_arcs), -np.ones(uniq.size)])
        m.add_rows(rows, cols, vals, uniq.size, 0.0, 0.0, "pass_share")
    # load of link e in round s, over every lifted image, is at most M_s
    rows, cols = [], []
    for a, y in zip(arcsets, ys):
        for links, rnd in a.uses:
            links = np.asarray(links).reshape(a.n_arcs, -1)
            for k in range(links.shape[1]):
                sel = np.flatnonzero(links[:, k] >= 0)
                img = lifted_links(group, links[sel, k])                 # (G, arcs)
                rows.append(((rnd[sel] - 1)[None, :] * E + img).ravel())
                cols.append(np.broadcast_to(y[sel][None, :], img.shape).ravel())
    rows.append(np.arange(n_rounds * E))
    cols.append(np.repeat(M, E))
    vals = np.concatenate([np.ones(sum(r.size for r in rows[:-1])), -np.ones(n_rounds * E)])
    m.add_rows(np.concatenate(rows), np.concatenate(cols), vals, n_rounds * E, -np.inf, 0.0, "load")
    return m, ys, w, M


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
    srt = np.lexsort((dst, src, comp, rnd))
    routes = links[srt]
    lengths = (routes >= 0).sum(axis=1)
    ptr = np.r_[0, np.cumsum(lengths)]
    return BaseSchedule(t, n_rounds, comp[srt], rnd[srt], src[srt], dst[srt], op[srt], ptr, routes[routes >= 0],
                        weights, labels)
