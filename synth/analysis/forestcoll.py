"""ForestColl's optimum: the least time of any allgather by spanning-tree packing, the yardstick of issue 51.

ForestColl (Zhao et al., "ForestColl: Throughput-Optimal Collective Communications on Heterogeneous
Network Fabrics") characterizes the best allgather on a fabric with switches: every compute vertex
holds a block of ``N / p`` elements, and the least time is

    T_AG = (N / p) * max_S |S ∩ C| / c(d+(S)),

over the vertex sets ``S`` holding some compute vertices but not all (``C`` the compute vertices,
``c(d+(S))`` the bandwidth leaving ``S``): the blocks born in ``S`` must all leave it, and packed
out-trees through forwarding switches attain the maximum (its Theorem on switch removal and Edmonds'
branching theorem).  Its reduce-scatter is the same on the reversed fabric, ``c(d-(S))``, and its
allreduce runs one after the other: ``T_AR = T_RS + T_AG`` (twice ``T_AG`` when every link's two
directions have one bandwidth).  Times are elements per GB/s, as synth's bandwidth term
(:mod:`synth.check.capacity`), so a schedule's ``Q`` divides by ``T_AR`` directly.

How it is computed.  ForestColl tests a candidate time with ``p`` maximum flows (a source feeding every
compute vertex, every link scaled by the candidate; each compute vertex must receive ``p`` units) and
binary-searches the candidate in floats.  Here the same flow test drives Dinkelbach's iteration for
the largest ratio, exactly: for a ratio ``q / w`` (compute vertices over bandwidth units of some cut),
the source gives each compute vertex ``w``, each link carries ``q`` times its units, and a minimum cut
to some compute ``t`` below ``w p`` is a set ``S`` of larger ratio; the next ratio is that set's.
The ratio rises strictly and there are finitely many, so it stops at the maximum, with the set that
attains it (integer flows throughout; scipy's when they fit in int32, networkx's beyond).

Examples
--------
A bidirectional ring of four at 1 GB/s: each vertex takes the other three blocks in over two links.

>>> from synth.topology.user import topology_from_json
>>> ring = topology_from_json({"vertices": 4, "links": [[0, 1], [1, 2], [2, 3], [3, 0]]})
>>> opt = forestcoll_optimum(ring, 4)
>>> str(opt.allgather), str(opt.reduce_scatter), str(opt.allreduce)
('3/2', '3/2', '3')

One switch, three hosts at 4, 4 and 1 GB/s: the slow host takes two blocks in over its 1 GB/s.

>>> star = topology_from_json({"vertices": 4, "compute": [0, 1, 2], "links": [[0, 3], [1, 3], [2, 3]],
...                            "bandwidth": [4, 4, 1]})
>>> opt = forestcoll_optimum(star, 3)
>>> str(opt.allgather), opt.allgather_cut
('2', [0, 1, 3])
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from synth.analysis.cost import Network, rate_unit
from synth.check.bounds.bandwidth import best_cut, collective_bound
from synth.check.capacity import link_capacities
from synth.errors import ScheduleError, check_instance
from synth.topology.base import Topology

__all__ = ["ForestCollOptimum", "forestcoll_optimum", "forestcoll_note", "allgather_ratio", "forestcoll_seconds",
           "tree_latency"]

_INT32 = (1 << 31) - 1


@dataclass(frozen=True)
class ForestCollOptimum:
    """ForestColl's least times (elements per GB/s) for ``elements`` per node, and the cuts that attain them.

    ``allgather_cut`` attains ``T_AG`` (its blocks all leave over its out-links); ``reduce_scatter_cut``
    attains ``T_RS`` (over its in-links).
    """

    elements: int
    allgather: Fraction
    reduce_scatter: Fraction
    allgather_cut: list
    reduce_scatter_cut: list

    @property
    def allreduce(self) -> Fraction:
        """Reduce-scatter then allgather: ``T_RS + T_AG``."""
        return self.allgather + self.reduce_scatter


def forestcoll_optimum(t, elements: int) -> ForestCollOptimum:
    """ForestColl's optimum on ``t`` for ``elements`` (``N``) per node (the module docstring).

    Raises
    ------
    ScheduleError
        With fewer than two compute vertices, or when some compute vertex cannot reach another.
    """
    check_instance(t, "topology", Topology)
    if t.n_compute < 2:
        raise ScheduleError("ForestColl's optimum needs two compute vertices")
    caps = link_capacities(t)
    block = Fraction(elements, t.n_compute)
    ag, ag_cut = allgather_ratio(t.n_vertices, t.link_src, t.link_dst, caps.units, t.compute)
    rs, rs_cut = allgather_ratio(t.n_vertices, t.link_dst, t.link_src, caps.units, t.compute)   # reversed
    return ForestCollOptimum(elements, block * ag / caps.unit, block * rs / caps.unit, ag_cut, rs_cut)


def forestcoll_note(t, collective: str = "allreduce") -> str:
    """One line for ``synth compare``: ForestColl's optimum and the certified bound as algorithm bandwidths.

    Algorithm bandwidth (nccl-tests' algbw) is message bytes over time: ``N / T`` GB/s with ``T`` in
    elements per GB/s, whatever the element size.

    >>> from synth.topology.user import topology_from_json
    >>> server = topology_from_json({"vertices": 9, "compute": list(range(8)),
    ...                              "links": [[g, 8] for g in range(8)], "bandwidth": [300] * 8})
    >>> forestcoll_note(server)
    'forestcoll optimum: allreduce at 171.43 GB/s algorithm bandwidth (its reduce-scatter then allgather); no allreduce exceeds 171.43 GB/s (the certified bound)'
    """
    p = t.n_compute
    opt = forestcoll_optimum(t, p)
    value = {"allreduce": opt.allreduce, "allgather": opt.allgather, "reduce-scatter": opt.reduce_scatter}[collective]
    bound = collective_bound(t, p, collective, best_cut(t))
    how = " (its reduce-scatter then allgather)" if collective == "allreduce" else ""
    return (f"forestcoll optimum: {collective} at {float(p / value):.2f} GB/s algorithm bandwidth{how}; "
            f"no {collective} exceeds {float(p / bound):.2f} GB/s (the certified bound)")


def tree_latency(t, net: Network = Network()) -> float:
    """Seconds that the deepest of ForestColl's trees adds to its time at least, under the cost model ``net``.

    A step of a tree is a send from one compute vertex to another through switches only; it pays the cost
    model's ``alpha`` and its route's latency (the links' own latencies, else ``hop_latency`` per link).
    Every compute vertex roots a tree that reaches every other, so some tree has a path at least as long
    as the farthest pair's least such sum; pipelined, that path's fill is paid once by the allgather and
    once by the reduce-scatter: twice the farthest pair's least sum.  No tree of ForestColl's is built, so
    this is a lower estimate of its latency (its trees may well be deeper).

    >>> from synth.topology.user import topology_from_json
    >>> star = topology_from_json({"vertices": 4, "compute": [0, 1, 2], "links": [[0, 3], [1, 3], [2, 3]]})
    >>> round(tree_latency(star, Network(alpha=1e-6, hop_latency=1e-7)) * 1e6, 6)   # 2 x (1 us + 2 hops)
    2.4
    """
    from scipy.sparse import csr_matrix   # loaded when a time is asked for, as the flows are
    from scipy.sparse.csgraph import dijkstra

    hop = t.link_latency * 1e-6 if t.has_latencies else np.full(t.n_links, float(net.hop_latency))
    weight = hop + np.where(t.is_compute[t.link_dst], float(net.alpha), 0.0)
    graph = csr_matrix((weight + 1e-300, (t.link_src, t.link_dst)), shape=(t.n_vertices, t.n_vertices))
    far = dijkstra(graph, directed=True, indices=np.asarray(t.compute))[:, np.asarray(t.compute)]
    return 2.0 * float(far[np.isfinite(far)].max())


def forestcoll_seconds(t, elements: int, net: Network = Network(), optimum=None) -> float:
    """ForestColl's allreduce time for ``elements`` per node: its bandwidth term (:func:`forestcoll_optimum`,
    elements per GB/s, at ``net.element_bytes`` per element) plus :func:`tree_latency`.

    ForestColl's own code pipelines its trees in many small chunks, so its time is its bandwidth term plus a
    fill latency per tree depth; the latency taken is the least its trees can have (:func:`tree_latency`), so
    the time is ForestColl's at its best.  ``optimum``: the :class:`ForestCollOptimum` of ``t`` for any
    number of elements (it scales), computed when not given.

    >>> from synth.topology.user import topology_from_json
    >>> ring = topology_from_json({"vertices": 4, "links": [[0, 1], [1, 2], [2, 3], [3, 0]], "bandwidth": [2] * 4})
    >>> round(forestcoll_seconds(ring, 250_000, Network(alpha=0, hop_latency=0)) * 1e3, 6)   # 3 x 1 MB / 4 at 2 GB/s
    0.375
    """
    opt = optimum if optimum is not None else forestcoll_optimum(t, t.n_compute)
    per_element = opt.allreduce / opt.elements
    return float(per_element * elements) * net.element_bytes / rate_unit(t, net) + tree_latency(t, net)


def allgather_ratio(n_vertices: int, src, dst, units, compute) -> tuple:
    """``max_S |S ∩ C| / u(d+(S))`` over ``S`` with compute vertices in and out, exactly, and an ``S`` attaining it.

    ``units`` are positive integer link capacities; the ratio is a :class:`~fractions.Fraction` of
    compute vertices per unit.
    """
    comp = np.asarray(compute, dtype=np.int64)
    units = np.asarray(units)
    out_units = np.zeros(n_vertices, dtype=object)
    np.add.at(out_units, np.asarray(src), units.astype(object))
    if any(int(out_units[v]) == 0 for v in comp.tolist()):
        raise ScheduleError("a compute vertex has no link out: its block never leaves")
    v0 = int(comp[np.argmin([int(out_units[v]) for v in comp.tolist()])])
    best, side = Fraction(1, int(out_units[v0])), [v0]         # the slowest single vertex to start from
    while True:
        better = _better_cut(n_vertices, src, dst, units, comp, best)
        if better is None:
            return best, sorted(side)
        side = better
        mask = np.zeros(n_vertices, dtype=bool)
        mask[side] = True
        leaving = mask[np.asarray(src)] & ~mask[np.asarray(dst)]
        out_cap = int(units[leaving].astype(object).sum())
        if out_cap == 0:
            raise ScheduleError("some compute vertices cannot reach the others: no allgather exists")
        ratio = Fraction(int(mask[comp].sum()), out_cap)
        if ratio <= best:
            raise ScheduleError("ForestColl's optimum: the cut found does not improve the ratio (a flow error)")
        best = ratio


def _better_cut(n_vertices, src, dst, units, comp, ratio: Fraction):
    """A set ``S`` (sorted vertex list, without the source) of larger ratio than ``ratio``, or None.

    The flow network: a source ``n_vertices`` with an arc of ``w`` to every compute vertex, every link
    ``q u(e)`` (``ratio = q / w``).  For a sink ``t``, a cut ``S + source`` costs ``q u(d+(S)) + w |C \\ S|``,
    below ``w p`` exactly when ``|S ∩ C| / u(d+(S)) > q / w``.
    """
    q, w = ratio.numerator, ratio.denominator
    p = comp.size
    s = n_vertices
    arc_src = np.concatenate([np.asarray(src, dtype=np.int64), np.full(p, s, dtype=np.int64)])
    arc_dst = np.concatenate([np.asarray(dst, dtype=np.int64), comp])
    cap = [q * int(u) for u in units.tolist()] + [w] * p
    flow = _scipy_flow if max(cap) * (p + len(cap)) < _INT32 else _networkx_flow
    best_value, best_side = w * p, None
    for t in comp.tolist():
        value, side = flow(n_vertices + 1, arc_src, arc_dst, cap, s, t)
        if value < best_value:
            best_value, best_side = value, side
    return None if best_side is None else [v for v in best_side if v != s]


def _scipy_flow(n, arc_src, arc_dst, cap, s, t):
    """Max-flow value and the source side of a minimum cut, on int32 capacities (scipy)."""
    from scipy.sparse import csr_matrix   # loaded when an optimum is asked for, not with the analysis package
    from scipy.sparse.csgraph import breadth_first_order, maximum_flow

    matrix = csr_matrix((np.asarray(cap, dtype=np.int32), (arc_src, arc_dst)), shape=(n, n))
    matrix.sum_duplicates()
    res = maximum_flow(matrix, s, t)
    residual = (matrix - res.flow).tocsr()
    residual.data = (residual.data > 0).astype(np.int8)
    residual.eliminate_zeros()
    side = breadth_first_order(residual, s, directed=True, return_predecessors=False)
    return int(res.flow_value), side.tolist()


def _networkx_flow(n, arc_src, arc_dst, cap, s, t):
    """The same with Python integers of any size (networkx), for capacities beyond int32."""
    import networkx as nx   # only for capacities beyond int32

    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for a, b, c in zip(arc_src.tolist(), arc_dst.tolist(), cap):
        if g.has_edge(a, b):
            g[a][b]["capacity"] += c
        else:
            g.add_edge(a, b, capacity=c)
    value, (side, _) = nx.minimum_cut(g, s, t)
    return int(value), sorted(side)
