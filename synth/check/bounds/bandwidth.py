"""A lower bound on the bandwidth term of any allreduce on any graph, re-derived from the topology and a cut.

``Q = sum_s max_e load_s(e) / c(e)`` (elements per GB/s, ``c(e)`` the link's bandwidth,
:mod:`synth.check.capacity`) of every correct allreduce of ``N`` elements per node on a topology with
``p >= 2`` compute vertices is at least each of (proofs: docs/bounds.md, sections 2-4; ``c(F)`` is the
summed bandwidth of a set of links ``F``, its number of links when every link is 1):

* **volume**: ``2 N (p - 1) d_min / c(E)``, ``d_min`` the least hop distance from one compute
  vertex to another (switches forward only, so every route joins two compute vertices);
* **cut**: ``N / min(c(d+(S)), c(d-(S)))`` for every vertex set ``S`` with compute vertices on both
  sides, ``d+(S)`` the links leaving ``S`` and ``d-(S)`` those entering it.  ``S = {v}`` is the
  per-vertex bound: ``N`` over the smaller of ``v``'s out- and in-capacity.

:func:`bandwidth_bound` evaluates both for a given cut; :func:`best_cut` finds the cut of least
``min(c(d+), c(d-))`` (exact by max-flow up to :data:`MAX_FLOW_VERTICES` vertices, the best singleton
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

A fat pair: vertex 0 reaches the switch 2 at 4 GB/s, vertex 1 at 1 GB/s each way; the cut is vertex 1:

>>> star = topology_from_json({"vertices": 3, "compute": [0, 1], "links": [[0, 2], [1, 2]],
...                            "bandwidth": [4, 1]})
>>> best_cut(star), str(bandwidth_bound(star, 6, best_cut(star)).value), str(cut_capacity(star, [0]))
([1], '6', '4')
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from synth.check.capacity import link_capacities
from synth.errors import ScheduleError
from synth.schedule.data import ALLREDUCE, ALLGATHER, COLLECTIVES
from synth.topology.failures import whole_network

__all__ = ["BandwidthBound", "bandwidth_bound", "best_cut", "cut_capacity", "min_compute_distance", "bandwidth_claims",
           "collective_bound", "MAX_FLOW_VERTICES", "BOUND_KEY", "CUT_KEY", "FRACTION_KEY"]

MAX_FLOW_VERTICES = 1100   # 2(p-1) max-flows: about 3 s on a 32x32 torus; beyond, singleton cuts only
BOUND_KEY, CUT_KEY, FRACTION_KEY = "bandwidth_lower_bound", "bandwidth_bound_cut", "bandwidth_fraction"


@dataclass(frozen=True)
class BandwidthBound:
    """The bound on ``Q`` (elements per GB/s) for ``N`` elements per node: ``max(volume, cut)``."""

    value: Fraction
    volume: Fraction
    cut: Fraction
    d_min: int
    cut_capacity: Fraction   # min(c(d+(S)), c(d-(S))) of the cut evaluated, GB/s (0: no cut)

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


def _side_mask(t, side) -> np.ndarray:
    """The vertex set ``side`` as a mask, refusing one without compute vertices on both sides."""
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
    return inside


def _directed_cut(t, side, caps=None):
    """``(c(d+(S)), c(d-(S)), compute vertices in S)`` of ``S = side``: exact capacities in GB/s."""
    caps = link_capacities(t) if caps is None else caps
    inside = _side_mask(t, side)
    out_cap = caps.capacity(inside[t.link_src] & ~inside[t.link_dst])
    in_cap = caps.capacity(~inside[t.link_src] & inside[t.link_dst])
    return out_cap, in_cap, int(inside[t.compute].sum())


def cut_capacity(t, side, caps=None) -> Fraction:
    """``min(c(d+(S)), c(d-(S)))`` of ``S = side`` in GB/s (the number of links when every link is 1),
    refusing an ``S`` without compute vertices on both sides."""
    out_cap, in_cap, _ = _directed_cut(t, side, caps)
    return min(out_cap, in_cap)


def bandwidth_bound(t, elements: int, cut=None) -> BandwidthBound:
    """The bound for ``elements`` (``N``) per node, with the cut ``cut`` (a vertex list; None: volume only).

    A cut crossed by no link (capacity 0) means no allreduce exists: refused.  Links a schedule leaves idle
    count (:func:`~synth.topology.failures.whole_network`): the bound is the network's.
    """
    t = whole_network(t)
    p, E = t.n_compute, t.n_links
    if p < 2 or E == 0:
        raise ScheduleError("a bandwidth bound needs two compute vertices and a link")
    caps = link_capacities(t)
    d_min = min_compute_distance(t)
    volume = Fraction(2 * elements * (p - 1) * d_min) / caps.capacity(slice(None))
    capacity, cut_value = Fraction(0), Fraction(0)
    if cut is not None:
        capacity = cut_capacity(t, cut, caps)
        if capacity == 0:
            raise ScheduleError("the bound's cut is crossed by no link: the compute vertices are disconnected")
        cut_value = elements / capacity
    return BandwidthBound(max(volume, cut_value), volume, cut_value, d_min, capacity)


def _flow_capacities(caps) -> tuple:
    """Integer capacities for scipy's max-flow and whether they are exact (proportional to the bandwidths).

    scipy counts flow in int32: the bandwidth units are used as they are when all of them sum below
    2**31 (every fabric whose bandwidths share a unit, e.g. whole or decimal GB/s), else rounded to a
    2**30 budget; the cut then found may miss the least by the rounding, and its bound is still evaluated
    exactly (a weaker cut is a weaker bound, never a false one).
    """
    units = caps.units
    total = int(units.sum())
    if total < 1 << 31:
        return units.astype(np.int32), True
    scaled = np.floor(units.astype(np.float64) * ((1 << 30) / float(total)))
    return np.maximum(scaled, 1).astype(np.int32), False


def best_cut(t) -> list:
    """A cut ``S`` of least ``min(c(d+(S)), c(d-(S)))`` with compute vertices on both sides (the smaller side).

    Exact up to :data:`MAX_FLOW_VERTICES` vertices (and when the bandwidths share a unit, see
    :func:`_flow_capacities`): every such ``S`` separates the first compute vertex ``s`` from some compute
    ``t``, so the least cut is a minimum ``s-t`` or ``t-s`` cut (``2(p-1)`` max-flows, capacities the
    bandwidths).  On larger graphs: the best singleton (the per-vertex bound).  Links a schedule leaves idle
    count (:func:`~synth.topology.failures.whole_network`).
    """
    t = whole_network(t)
    caps = link_capacities(t)
    comp = t.compute
    out_u, in_u = caps.vertex_capacities(t)
    per_vertex = np.minimum(out_u[comp], in_u[comp])
    k = int(np.argmin(per_vertex))
    best_value, best_side = int(per_vertex[k]) * caps.unit, [int(comp[k])]
    if t.n_vertices > MAX_FLOW_VERTICES:
        return best_side
    # the checker stage may use scipy's graph algorithms (not a solver); loaded only for the search
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order, maximum_flow

    V = t.n_vertices
    flow_caps, exact = _flow_capacities(caps)
    cap = csr_matrix((flow_caps, (t.link_src, t.link_dst)), shape=(V, V))
    unit = caps.unit if exact else None
    s = int(comp[0])
    for u in comp[1:].tolist():
        for a, b in ((s, u), (u, s)):
            res = maximum_flow(cap, a, b)
            if unit is not None and res.flow_value * unit >= best_value:
                continue
            residual = (cap - res.flow).tocsr()   # flow is antisymmetric: reverse arcs gain capacity
            residual.data = (residual.data > 0).astype(np.int8)
            residual.eliminate_zeros()
            side = np.sort(breadth_first_order(residual, a, directed=True, return_predecessors=False))
            value = cut_capacity(t, side, caps)    # exact, whether or not the flow's capacities were
            if value < best_value:
                best_value, best_side = value, side.tolist()
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
    """The least bandwidth term ``Q`` (elements per GB/s) of any correct ``collective`` of ``elements`` per
    node on ``t``.

    The best of the volume bound (2N(p - 1) d_min / c(E), half that for reduce-scatter and allgather),
    the endpoint volume (the same count over the capacity of the links out of, or into, compute vertices),
    every per-vertex cut and the cut ``cut`` (a vertex list, or None); docs/bounds.md, section 6.  For the
    halves ``elements`` is a multiple of ``p`` (equal blocks, one per compute vertex).  Capacities are the
    links' bandwidths (:mod:`synth.check.capacity`): with every link 1 GB/s, counts of links.

    Raises
    ------
    ScheduleError
        On an unknown collective, a half whose elements are not a multiple of ``p``, or a topology
        whose compute vertices are disconnected.
    """
    if collective not in COLLECTIVES:
        raise ScheduleError(f"collective must be one of {', '.join(COLLECTIVES)}, not {collective!r}")
    t = whole_network(t)      # links a schedule leaves idle count
    p, E, n = t.n_compute, t.n_links, Fraction(elements)
    if p < 2 or E == 0:
        raise ScheduleError("a bandwidth bound needs two compute vertices and a link")
    if collective != ALLREDUCE and elements % p:
        raise ScheduleError(f"a {collective} bound needs a multiple of {p} elements (equal blocks)")
    caps = link_capacities(t)
    comp = t.is_compute
    out_c, in_c = caps.capacity(comp[t.link_src]), caps.capacity(comp[t.link_dst])
    if out_c == 0 or in_c == 0:
        raise ScheduleError(f"the compute vertices of {t.name} have no link out or no link in")
    moves = n * (p - 1) * (2 if collective == ALLREDUCE else 1)     # least element-transmissions
    best = max(moves * min_compute_distance(t) / caps.capacity(slice(None)), moves / min(out_c, in_c))
    for side in ([] if cut is None else [cut]):
        cap_out, cap_in, inside = _directed_cut(t, side, caps)
        best = max(best, _cut_term(n, p, inside, cap_out, cap_in, collective))
    # each compute vertex v alone: one cut per vertex, the largest of their terms
    out_u, in_u = caps.vertex_capacities(t)
    outdeg, indeg = out_u[t.compute], in_u[t.compute]
    degs = (outdeg, indeg) if collective != ALLGATHER else (indeg, outdeg)
    if np.any(degs[0] == 0) or np.any(degs[1] == 0):
        raise ScheduleError(f"a compute vertex of {t.name} has no link out or no link in")
    if collective == ALLREDUCE:
        best = max(best, n / (int(np.minimum(outdeg, indeg).min()) * caps.unit))
    else:   # its own block comes in (reduce-scatter) or goes out (allgather); the p - 1 others the other way
        best = max(best, n * (p - 1) / p / (int(degs[0].min()) * caps.unit),
                   n / p / (int(degs[1].min()) * caps.unit))
    return best


def _cut_term(n, p, p_in, links_out, links_in, collective) -> Fraction:
    """The bound of one cut: N over its narrower side's capacity (allreduce); for a half, the blocks that
    must cross each way over that way's capacity (docs/bounds.md, section 6)."""
    if links_out == 0 or links_in == 0:
        raise ScheduleError("the bound's cut is crossed by no link: the compute vertices are disconnected")
    if collective == ALLREDUCE:
        return n / min(links_out, links_in)
    leave, enter = (p - p_in, p_in) if collective != ALLGATHER else (p_in, p - p_in)
    return max(n * leave / p / links_out, n * enter / p / links_in)
