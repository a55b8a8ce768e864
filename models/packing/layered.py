"""The layered LP: shortest-path trees, one chunk per owner, chosen to minimize the bandwidth term.

Every compute vertex ``r`` may own a chunk (its share ``w_r``, free, ``sum = 1`` per node's vector).
The chunk is reduced to ``r`` and broadcast back along shortest paths, *layered by distance*: a vertex
at distance ``d`` from ``r`` sends its partial sum in round ``H - d + 1`` and receives the result in
round ``H + d`` (``H`` the largest eccentricity, ``2H`` rounds).  The fractional choice of a parent
among the shortest-path parents is ``y[r, v, u] >= 0`` with ``sum_u y[r, v, u] = w_r``: the part of
the chunk whose tree takes ``v -> u`` (and ``u -> v`` on the way back).  The load of link ``e`` in
round ``s`` is the sum of the ``y`` that use it then, and the LP minimizes ``sum_s M_s`` with every
load ``<= M_s``: the bandwidth term of the best layered schedule, per element of the vector
(:mod:`synth.models.packing.rounding` turns a solution into an integer schedule).

Symmetry shrinks it: with a group ``G`` (the residual group of a damaged torus), only owners that
represent the vertex orbits get variables, and each of their trees is lifted by every element, as
certificates lift base schedules, so the LP models exactly the lifted schedule.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.spec import default_group
>>> t = parse_torus("4x4"); d = damage(t, parse_failures(t, links=["0-1"]))
>>> data = layered_arcs(d, default_group(d))
>>> data.H, data.n_roots, data.n_arcs > 0
(4, 6, True)
>>> sol = solve_layered(data)
>>> sol.status, 0.75 < sol.fraction <= 1
('optimal', True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.check.bounds.layered_class import reverse_links
from synth.errors import SynthError
from synth.models.backends.solvers import solve_highs
from synth.models.packing.arcs import ArcSet, build_packing_lp, load_duals, no_solution, volume_bound
from synth.topology.base import Topology

__all__ = ["LayeredArcs", "LayeredSolution", "layered_arcs", "build_layered", "solve_layered", "root_reps",
           "SIMPLEX_ARCS", "IPM_CROSSOVER"]

#: parent choices up to which HiGHS's simplex solves the whole LP (an 8x8 torus has about 4,000); beyond,
#: its interior point with crossover: 28 CPU s on a 16x16 torus with one failed link (65,408 choices),
#: where the simplex took 200 s, and 30 s with 8 failed links (129,024)
SIMPLEX_ARCS = 20_000
IPM_CROSSOVER = {"solver": "ipm", "run_crossover": "on"}


@dataclass(frozen=True, eq=False)
class LayeredArcs:
    """The shortest-path parent choices of every owner: one entry per arc ``(root, child v, parent u)``."""

    topology: object
    group: object
    H: int
    roots: np.ndarray        # the owners that get variables (vertex-orbit representatives)
    root: np.ndarray         # per arc: index into ``roots``
    child: np.ndarray
    parent: np.ndarray
    depth: np.ndarray        # d_root(child)
    up: np.ndarray           # link child -> parent (reduce, round H - depth + 1)
    down: np.ndarray         # link parent -> child (copy, round H + depth)
    leaves: np.ndarray | None = None   # vertices that own nothing and are nobody's parent (sorted), or None

    @property
    def n_roots(self) -> int:
        return int(self.roots.size)

    @property
    def n_arcs(self) -> int:
        return int(self.child.size)


@dataclass(frozen=True, eq=False)
class LayeredSolution:
    """The LP's shares ``w`` (per root), parent fractions ``y`` (per arc) and bandwidth term per element."""

    data: LayeredArcs
    status: str
    objective: float         # sum_s M_s for a vector of one element (N = 1)
    volume_bound: float      # 2 (p - 1) d_min / sum_e b_e for N = 1 (arcs.volume_bound)
    w: np.ndarray
    y: np.ndarray
    seconds: float
    load_dual: np.ndarray | None = None   # (2H, |E|): minus the duals of the load rows (whole LP only)
    method: str = "simplex"               # how HiGHS solved it (the whole LP: simplex, or an interior point)
    free: np.ndarray | None = None        # the local LP: per arc, whether its pair was free (else fixed by a reference)

    @property
    def fraction(self) -> float:
        """Volume bound / LP value: the share of the bound that the best layered schedule reaches."""
        return self.volume_bound / self.objective


def root_reps(t, group, leaves=None) -> np.ndarray:
    """The smallest compute vertex of each vertex orbit of ``group`` (every compute vertex without one), none of
    ``leaves``."""
    compute = t.compute if leaves is None else np.setdiff1d(t.compute, leaves)
    if group is None:
        return compute.astype(np.int64)
    orbit = group.vertex_orbit[compute]
    _, first = np.unique(orbit, return_index=True)
    return np.sort(compute[first]).astype(np.int64)


def layered_arcs(t, group=None, leaves=None) -> LayeredArcs:
    """The arcs of the layered LP on ``t`` (every vertex with a link computes; links come in pairs).

    ``leaves``: vertices that hold data but forward nothing (a set ``group`` fixes): they own no chunk and are
    nobody's parent, so distances run over paths that do not pass through them (the periodic copies of a failed
    chip, :mod:`synth.solving.periodic`).

    Raises
    ------
    SynthError
        On a graph with switches or a link without its reverse (the layered trees need neither).
    """
    rev = reverse_links(t, "the packing model")
    leaf = np.zeros(t.n_vertices, dtype=bool)
    if leaves is not None:
        leaves = np.unique(np.asarray(leaves, dtype=np.int64))
        leaf[leaves] = True
    roots = root_reps(t, group, leaves)
    # the graph whose paths the trees take: a leaf is reached, and goes no further
    paths = t if leaves is None else Topology(t.name, {}, t.n_vertices, t.link_src[~leaf[t.link_src]],
                                              t.link_dst[~leaf[t.link_src]], t.compute)
    parts, H = [], 0
    for i, r in enumerate(roots.tolist()):
        dist = paths.bfs([r])
        H = max(H, int(dist[t.compute].max()))
        e = np.flatnonzero((dist[t.link_dst] == dist[t.link_src] - 1) & ~leaf[t.link_dst])
        parts.append((np.full(e.size, i), t.link_src[e], t.link_dst[e], dist[t.link_src[e]], e))
    root, child, parent, depth, up = (np.concatenate([p[k] for p in parts]).astype(np.int64) for k in range(5))
    return LayeredArcs(t, group, H, roots, root, child, parent, depth, up, rev[up].astype(np.int64), leaves)


def build_layered(data: LayeredArcs, free_shares: bool = True):
    """The LP as a :class:`~synth.models.backends.linear.LinearModel`; returns ``(model, y, w, M)`` columns.

    ``free_shares=False`` gives every owner the same share once lifted.  The rows are those of
    :func:`synth.models.packing.arcs.build_packing_lp`: one arc set whose arcs load their link up in
    round ``H - depth + 1`` and its reverse in round ``H + depth``.
    """
    H = data.H
    arcs = ArcSet(data.root, data.child, ((data.up, H - data.depth + 1), (data.down, H + data.depth)))
    m, (y,), w, M = build_packing_lp("layered-packing", data.roots, data.group, 2 * H, data.topology, [arcs],
                                     free_shares)
    return m, y, w, M


def solve_layered(data: LayeredArcs, free_shares: bool = True, time_limit=None, threads: int = 1) -> LayeredSolution:
    """Solve the layered LP with HiGHS; ``status`` is ``'optimal'`` when the LP was solved.

    Beyond :data:`SIMPLEX_ARCS` parent choices by an interior point with crossover (:data:`IPM_CROSSOVER`):
    a basic solution, so few fractional parents and few components once rounded.
    """
    model, y, w, M = build_layered(data, free_shares)
    method = "simplex" if data.n_arcs <= SIMPLEX_ARCS else "interior point with crossover"
    sol = solve_highs(model, time_limit=time_limit, threads=threads, relax=True,
                      options=None if data.n_arcs <= SIMPLEX_ARCS else IPM_CROSSOVER)
    dual = None if sol.row_dual is None else load_duals(sol.row_dual, M.size, data.group, data.topology.n_links)
    if sol.values is None:
        raise no_solution("layered", data.topology, sol, time_limit)
    return LayeredSolution(data, str(sol.status), float(sol.objective), volume_bound(data.topology),
                           np.maximum(sol.values[w], 0.0),
                           np.maximum(sol.values[y], 0.0), sol.seconds, dual, method)
