"""A lower bound on the bandwidth term of any allreduce on any graph, re-derived from the topology and a cut.

``Q = sum_s max_e load_s(e)`` (elements) of every correct allreduce of ``N`` elements per node on a
topology with ``p >= 2`` compute vertices and ``|E|`` directed links is at least each of
(proofs: docs/bounds.md, sections 2-4):

* **volume**: ``2 N (p - 1) d_min / |E|``, ``d_min`` the least hop distance from one compute
  vertex to another (switches forward only, so every route joins two compute vertices);
* **cut**: ``N / min(|d+(S)|, |d-(S)|)`` for every vertex set ``S`` with compute vertices on both
  sides, ``d+(S)`` the links leaving ``S`` and ``d-(S)`` those entering it.  ``S = {v}`` is the
  per-vertex bound: ``N / min(outdeg v, indeg v)``.

:func:`bandwidth_bound` evaluates both for a given cut; :func:`best_cut` finds the cut of least
``min(|d+|, |d-|)`` (exact by max-flow up to :data:`MAX_FLOW_VERTICES` vertices, the best singleton
beyond), which certificates store so that ``synth check`` re-derives the value from the cut alone.
:func:`collective_bound` is the bound on ``Q`` that ``synth compare`` divides goodput by (docs/bounds.md,
section 6): those two, every per-vertex cut, and the endpoint volume (every route starts on a link out of a
compute vertex and ends on one into a compute vertex), for allreduce and for its two halves.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("4x4")
>>> b = bandwidth_bound(t, 64, best_cut(t))
>>> str(b.volume), str(b.cut), str(b.value), b.kind
('30', '16', '30', 'volume')
>>> from synth.topology.user import topology_from_json
>>> path = topology_from_json({"vertices": 3, "links": [[0, 1], [1, 2]]})
>>> best_cut(path), str(bandwidth_bound(path, 6, best_cut(path)).value)
([0], '6')
>>> [str(collective_bound(t, 64, c, best_cut(t))) for c in ("allreduce", "reduce-scatter", "allgather")]
['30', '15', '15']
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from synth.errors import ScheduleError
from synth.schedule.data import ALLREDUCE, ALLGATHER, COLLECTIVES

__all__ = ["BandwidthBound", "bandwidth_bound", "best_cut", "cut_size", "min_compute_distance", "bandwidth_claims",
           "collective_bound", "MAX_FLOW_VERTICES", "BOUND_KEY", "CUT_KEY", "FRACTION_KEY"]

MAX_FLOW_VERTICES = 1100   # 2(p-1) max-flows: about 3 s on a 32x32 torus; beyond, singleton cuts only
BOUND_KEY, CUT_KEY, FRACTION_KEY = "bandwidth_lower_bound", "bandwidth_bound_cut", "bandwidth_fraction"


@dataclass(frozen=True)
class BandwidthBound:
    """The bound on ``Q`` (elements) for ``N`` elements per node: ``max(volume, cut)``."""

    value: Fraction
    volume: Fraction
    cut: Fraction
    d_min: int
    cut_links: int        # min(|d+(S)|, |d-(S)|) of the cut evaluated

    @property
    def kind(self) -> str:
        return "volume" if self.volume >= self.cut else "cut"


def min_compute_distance(t) -> int:
    """``d_min``: the least hop distance from a compute vertex to another (1 when two are adjacent)."""
    comp = t.is_compute
    if np.any(comp[t.link_src] & comp[t.link_dst]):
        return 1
    best = None
    for v in t.compute.tolist():   # switches between every pair: one BFS per compute vertex
        d = t.bfs([v])
        d[v] = -1
        d = d[t.compute]
        d = d[d > 0]
        if d.size and (best is None or int(d.min()) < best):
            best = int(d.min())
    if best is None:
        raise ScheduleError(f"no compute vertex of {t.name} reaches another")
    return best


def cut_size(t, side) -> int:
    """``min(|d+(S)|, |d-(S)|)`` of ``S = side``, refusing an ``S`` without compute vertices on both sides."""
    try:
        ids = np.asarray(side, dtype=np.int64).ravel()
    except (TypeError, ValueError, OverflowError):
        raise ScheduleError("a bound's cut must be a list of vertex ids") from None
    if ids.size == 0 or ids.min() < 0 or ids.max() >= t.n_vertices or np.unique(ids).size != ids.size:
        raise ScheduleError(f"a bound's cut must list distinct vertex ids in 0..{t.n_vertices - 1}")
    inside = np.zeros(t.n_vertices, dtype=bool)
    inside[ids] = True
    n_in = int(inside[t.compute].sum())
    if n_in == 0 or n_in == t.n_compute:
        raise ScheduleError("a bound's cut must have compute vertices on both sides")
    out_links = int(np.count_nonzero(inside[t.link_src] & ~inside[t.link_dst]))
    in_links = int(np.count_nonzero(~inside[t.link_src] & inside[t.link_dst]))
    return min(out_links, in_links)


def bandwidth_bound(t, elements: int, cut=None) -> BandwidthBound:
    """The bound for ``elements`` (``N``) per node, with the cut ``cut`` (a vertex list; None: volume only).

    A cut crossed by no link (``min(|d+|, |d-|) = 0``) means no allreduce exists: refused.
    """
    p, E = t.n_compute, t.n_links
    if p < 2 or E == 0:
        raise ScheduleError("a bandwidth bound needs two compute vertices and a link")
    d_min = min_compute_distance(t)
    volume = Fraction(2 * elements * (p - 1) * d_min, E)
    links, cut_value = 0, Fraction(0)
    if cut is not None:
        links = cut_size(t, cut)
        if links == 0:
            raise ScheduleError("the bound's cut is crossed by no link: the compute vertices are disconnected")
        cut_value = Fraction(elements, links)
    return BandwidthBound(max(volume, cut_value), volume, cut_value, d_min, links)


def best_cut(t) -> list:
    """A cut ``S`` of least ``min(|d+(S)|, |d-(S)|)`` with compute vertices on both sides (the smaller side).

    Exact up to :data:`MAX_FLOW_VERTICES` vertices: every such ``S`` separates the first compute
    vertex ``s`` from some compute ``t``, so the least cut is a minimum ``s-t`` or ``t-s`` cut
    (``2(p-1)`` max-flows).  On larger graphs: the best singleton (the per-vertex bound).
    """
    comp = t.compute
    outdeg = np.bincount(t.link_src, minlength=t.n_vertices)[comp]
    indeg = np.bincount(t.link_dst, minlength=t.n_vertices)[comp]
    k = int(np.argmin(np.minimum(outdeg, indeg)))
    best_value, best_side = int(min(outdeg[k], indeg[k])), [int(comp[k])]
    if t.n_vertices > MAX_FLOW_VERTICES:
        return best_side
    # the checker stage may use scipy's graph algorithms (not a solver); loaded only for the search
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order, maximum_flow

    V = t.n_vertices
    cap = csr_matrix((np.ones(t.n_links, dtype=np.int32), (t.link_src, t.link_dst)), shape=(V, V))
    s = int(comp[0])
    for u in comp[1:].tolist():
        for a, b in ((s, u), (u, s)):
            res = maximum_flow(cap, a, b)
            if res.flow_value >= best_value:
                continue
            residual = (cap - res.flow).tocsr()   # flow is antisymmetric: reverse arcs gain capacity
            residual.data = (residual.data > 0).astype(np.int8)
            residual.eliminate_zeros()
            side = np.sort(breadth_first_order(residual, a, directed=True, return_predecessors=False))
            best_value, best_side = int(res.flow_value), side.tolist()
    inside = np.zeros(V, dtype=bool)
    inside[best_side] = True
    if inside[comp].sum() * 2 > comp.size:   # store the side with fewer compute vertices
        best_side = np.flatnonzero(~inside).tolist()
    return [int(v) for v in best_side]


def bandwidth_claims(t, metrics, cut) -> dict:
    """The claims ``bandwidth_lower_bound``, ``bandwidth_bound_cut`` and ``bandwidth_fraction`` (bound / Q).

    ``cut`` is the stored cut (None: the volume bound alone, no cut claim).
    """
    b = bandwidth_bound(t, metrics.elements, cut)
    out = {BOUND_KEY: str(b.value), FRACTION_KEY: str(b.value / metrics.bandwidth_term)}
    if cut is not None:
        out[CUT_KEY] = [int(v) for v in np.asarray(cut).ravel().tolist()]
    return out


def collective_bound(t, elements, collective: str = ALLREDUCE, cut=None) -> Fraction:
    """The least bandwidth term ``Q`` (elements) of any correct ``collective`` of ``elements`` per node on ``t``.

    The best of the volume bound (2N(p - 1) d_min / |E|, half that for reduce-scatter and allgather),
    the endpoint volume (the same count over the links out of, or into, compute vertices), every
    per-vertex cut and the cut ``cut`` (a vertex list, or None); docs/bounds.md, section 6.  For the
    halves ``elements`` is a multiple of ``p`` (equal blocks, one per compute vertex).

    Raises
    ------
    ScheduleError
        On an unknown collective, a half whose elements are not a multiple of ``p``, or a topology
        whose compute vertices are disconnected.
    """
    if collective not in COLLECTIVES:
        raise ScheduleError(f"collective must be one of {', '.join(COLLECTIVES)}, not {collective!r}")
    p, E, n = t.n_compute, t.n_links, Fraction(elements)
    if p < 2 or E == 0:
        raise ScheduleError("a bandwidth bound needs two compute vertices and a link")
    if collective != ALLREDUCE and elements % p:
        raise ScheduleError(f"a {collective} bound needs a multiple of {p} elements (equal blocks)")
    comp = t.is_compute
    out_c, in_c = int(comp[t.link_src].sum()), int(comp[t.link_dst].sum())
    moves = n * (p - 1) * (2 if collective == ALLREDUCE else 1)     # least element-transmissions
    best = max(moves * min_compute_distance(t) / E, moves / min(out_c, in_c))
    outdeg = np.bincount(t.link_src, minlength=t.n_vertices)[t.compute]
    indeg = np.bincount(t.link_dst, minlength=t.n_vertices)[t.compute]
    for side in ([] if cut is None else [cut]):
        links_out, links_in, inside = _directed_cut(t, side)
        best = max(best, _cut_term(n, p, inside, links_out, links_in, collective))
    # each compute vertex v alone: one cut per vertex, the largest of their terms
    degs = (outdeg, indeg) if collective != ALLGATHER else (indeg, outdeg)
    if np.any(degs[0] == 0) or np.any(degs[1] == 0):
        raise ScheduleError(f"a compute vertex of {t.name} has no link out or no link in")
    if collective == ALLREDUCE:
        best = max(best, n / int(np.minimum(outdeg, indeg).min()))
    else:   # its own block comes in (reduce-scatter) or goes out (allgather); the p - 1 others the other way
        best = max(best, n * (p - 1) / p / int(degs[0].min()), n / p / int(degs[1].min()))
    return best


def _directed_cut(t, side):
    """``(|d+(S)|, |d-(S)|, compute vertices in S)`` of ``S = side`` (checked as :func:`cut_size` does)."""
    cut_size(t, side)
    inside = np.zeros(t.n_vertices, dtype=bool)
    inside[np.asarray(side, dtype=np.int64).ravel()] = True
    out_links = int(np.count_nonzero(inside[t.link_src] & ~inside[t.link_dst]))
    in_links = int(np.count_nonzero(~inside[t.link_src] & inside[t.link_dst]))
    return out_links, in_links, int(inside[t.compute].sum())


def _cut_term(n, p, p_in, links_out, links_in, collective) -> Fraction:
    """The bound of one cut: N over its narrower side (allreduce); for a half, the blocks that must cross
    each way over that way's links (docs/bounds.md, section 6)."""
    if links_out == 0 or links_in == 0:
        raise ScheduleError("the bound's cut is crossed by no link: the compute vertices are disconnected")
    if collective == ALLREDUCE:
        return n / min(links_out, links_in)
    leave, enter = (p - p_in, p_in) if collective != ALLGATHER else (p_in, p - p_in)
    return max(n * leave / p / links_out, n * enter / p / links_in)
