"""The packing LP on graphs with switches or one-way links: trees whose arcs are routes between compute vertices.

Owners are compute vertices.  Two compute vertices are *adjacent* when a shortest path joins them
through switches only (a direct link, or host - leaf - spine - leaf - host); every such path, up to
:data:`MAX_ROUTES` per pair, is a *route* (:func:`hop_routes`).  A chunk owned by ``r`` is reduced
along a tree of adjacent pairs layered by the *compute distance* (the hops of that graph): a vertex at
``d`` hops from ``r`` sends its partial sum over one route to a vertex ``d - 1`` hops from ``r`` in
round ``H_up - d + 1``, every link of the route loaded in that round.  The fractional choice of the
(parent, route) pair is ``y``, as in the layered LP (:mod:`synth.models.packing.layered`), whose
LP and rounding this shares (:mod:`synth.models.packing.arcs`, :mod:`synth.models.packing.rounding`).

Links in pairs: the broadcast goes back over the reversed routes (rounds ``H + d``, ``2H`` rounds).
One-way links: the trees differ.  Reduction follows the distances *to* ``r``, the broadcast those
*from* ``r`` (a vertex ``d`` hops from ``r`` receives in round ``H_up + d`` over a route from a vertex
``d - 1`` hops from ``r``), each with its own fractions and the same shares; ``H_up + H_down`` rounds.

Examples
--------
>>> from synth.topology.spineleaf import spine_leaf
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.spec import default_group
>>> s = spine_leaf(2, 3, 2); d = damage(s, parse_failures(s, links=["6-9"]))
>>> needs_routes(d)
'switches'
>>> data = routed_arcs(d, default_group(d))
>>> data.H_up, data.H_down, data.up.links.shape[1], data.down is None
(1, 1, 4, True)
>>> sol = solve_routed(data)
>>> sol.status, 0 < sol.fraction <= 1
('optimal', True)
>>> base = round_routed(sol, units=8)
>>> base.n_rounds, int(base.route_lengths.max())
(2, 4)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from synth.errors import SynthError
from synth.models.packing.arcs import ArcSet, build_packing_lp, no_solution, volume_bound
from synth.models.packing.rounding import expand, packed_base, split_units, unit_cuts
from synth.models.packing.layered import LayeredSolution, root_reps
from synth.models.packing.result import Packed
from synth.schedule.data import COPY, REDUCE
from synth.schedule.weights import largest_remainder
from synth.symmetry.residual import trivial_group
from synth.topology.base import Topology

__all__ = ["MAX_ROUTES", "MAX_ROUTED_ARCS", "HopRoutes", "RoutedChoices", "RoutedArcs", "needs_routes", "hop_routes", "shortest_routes",
           "routed_arcs", "solve_routed", "round_routed", "pack_routed"]

#: routes kept per pair of adjacent compute vertices (a spine-leaf pair on two leaves has one per spine)
MAX_ROUTES = 8
#: (parent, route) choices beyond which :func:`pack_routed` refuses (spine-leaf 8,8,8 with a failed link:
#: 32,256 choices, 11 CPU seconds in all)
MAX_ROUTED_ARCS = 150_000


def needs_routes(t) -> str | None:
    """``'switches'`` or ``'one-way links'`` when the layered LP cannot take ``t``, else None."""
    linked = np.zeros(t.n_vertices, dtype=bool)
    linked[t.link_src] = True
    if np.any(linked & ~t.is_compute):
        return "switches"
    if np.any(t.link_ids(t.link_dst, t.link_src) < 0):
        return "one-way links"
    return None


@dataclass(frozen=True, eq=False)
class HopRoutes:
    """Routes between adjacent compute vertices: ``src``, ``dst`` and ``links`` (padded with ``-1``), sorted
    by ``(src, dst)`` and, within a pair, by link ids; ``index`` numbers the routes of each pair."""

    src: np.ndarray
    dst: np.ndarray
    links: np.ndarray
    index: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        return (self.links >= 0).sum(axis=1)


def hop_routes(t, max_routes: int = MAX_ROUTES) -> HopRoutes:
    """Every shortest path through switches only from a compute vertex to another (``max_routes`` per pair).

    :func:`shortest_routes` through the switches: a path stops at the first compute vertex it meets.
    """
    return shortest_routes(t, ~t.is_compute, None, max_routes)


def shortest_routes(t, through, max_len=None, max_routes: int = MAX_ROUTES) -> HopRoutes:
    """Shortest paths from every compute vertex to the compute vertices it reaches, inner vertices in ``through``.

    Level by level from each compute vertex: partial paths end at the vertices first reached at that
    level; every one ending at a compute vertex is a route, and those ending in ``through`` go on (up
    to ``max_len`` links).  At most ``max_routes`` partial paths per end vertex are kept (the smallest
    link sequences), so the work stays linear in the graph.
    """
    ptr, out = t.out_links
    is_c = t.is_compute
    parts = []
    for v in t.compute.tolist():
        dist = np.full(t.n_vertices, -1, dtype=np.int64)
        dist[v] = 0
        end, paths, level = np.array([v]), np.zeros((1, 0), dtype=np.int64), 0
        while end.size and (max_len is None or level < max_len):
            counts = ptr[end + 1] - ptr[end]
            rep = np.repeat(np.arange(end.size), counts)
            link = out[np.repeat(ptr[end] - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())]
            nxt = t.link_dst[link].astype(np.int64)
            fresh = dist[nxt] < 0
            dist[nxt[fresh]] = level + 1
            ok = dist[nxt] == level + 1
            rep, link, nxt = rep[ok], link[ok], nxt[ok]
            paths = np.concatenate([paths[rep], link[:, None]], axis=1)
            order = np.lexsort(tuple(paths.T[::-1]) + (nxt,))
            paths, nxt = paths[order], nxt[order]
            first = np.searchsorted(nxt, nxt, side="left")
            keep = np.arange(nxt.size) - first < max_routes
            paths, nxt = paths[keep], nxt[keep]
            done = is_c[nxt]
            if done.any():
                parts.append((np.full(int(done.sum()), v), nxt[done], paths[done]))
            go_on = through[nxt]
            end, paths, level = nxt[go_on], paths[go_on], level + 1
    width = max((p[2].shape[1] for p in parts), default=1)
    src = np.concatenate([p[0] for p in parts]).astype(np.int64)
    dst = np.concatenate([p[1] for p in parts]).astype(np.int64)
    links = np.concatenate([np.pad(p[2], ((0, 0), (0, width - p[2].shape[1])), constant_values=-1)
                            for p in parts]).astype(np.int64)
    order = np.lexsort(tuple(links.T[::-1]) + (dst, src))
    src, dst, links = src[order], dst[order], links[order]
    pair = src * t.n_vertices + dst
    index = np.arange(pair.size) - np.searchsorted(pair, pair, side="left")
    return HopRoutes(src, dst, links, index)


@dataclass(frozen=True, eq=False)
class RoutedChoices:
    """Per arc: ``root`` (index into the roots), ``child`` (whose parent it chooses), ``parent``, ``depth``
    (compute hops from the root), the route's ``links`` (padded with ``-1``, in the direction of travel)
    and the route's index within its pair."""

    root: np.ndarray
    child: np.ndarray
    parent: np.ndarray
    depth: np.ndarray
    links: np.ndarray
    route: np.ndarray

    @property
    def n_arcs(self) -> int:
        return int(self.child.size)

    def tiebreak(self) -> np.ndarray:
        """The order in which a pair's arcs take their units: by parent, then route."""
        return self.parent * (int(self.route.max(initial=0)) + 1) + self.route


@dataclass(frozen=True, eq=False)
class RoutedArcs:
    """The routed LP's choices: ``up`` (reduction) and ``down`` (broadcast; None when links come in pairs
    and the broadcast takes the reversed routes of ``up``)."""

    topology: object
    group: object
    H_up: int
    H_down: int
    roots: np.ndarray
    up: RoutedChoices
    down: RoutedChoices | None
    kind: str = "routed"     # what the trees are, in labels and claims ("routed", "depth-bounded")

    @property
    def n_roots(self) -> int:
        return int(self.roots.size)

    @property
    def n_arcs(self) -> int:
        return self.up.n_arcs + (0 if self.down is None else self.down.n_arcs)

    @property
    def n_rounds(self) -> int:
        return self.H_up + self.H_down

    def down_links(self) -> np.ndarray:
        """The broadcast routes of the ``up`` arcs (links in pairs): each route reversed."""
        t, links = self.topology, self.up.links
        n = (links >= 0).sum(axis=1)
        col = np.arange(links.shape[1])[None, :]
        rows = np.arange(links.shape[0])[:, None]
        back = np.where(col < n[:, None], links[rows, np.maximum(n[:, None] - 1 - col, 0)], -1)
        rev = t.link_ids(t.link_dst[np.maximum(back, 0)], t.link_src[np.maximum(back, 0)]).astype(np.int64)
        return np.where(back >= 0, rev, -1)


def _choices(routes: HopRoutes, hops: np.ndarray, towards: bool) -> RoutedChoices:
    """Arcs of every root: routes one compute hop closer to it (``towards``: child = route source)."""
    parts = []
    child_of, parent_of = (routes.src, routes.dst) if towards else (routes.dst, routes.src)
    for i, row in enumerate(hops):
        e = np.flatnonzero((row[child_of] >= 1) & (row[parent_of] == row[child_of] - 1))
        parts.append((np.full(e.size, i), child_of[e], parent_of[e], row[child_of[e]], e))
    root, child, parent, depth, e = (np.concatenate([p[k] for p in parts]).astype(np.int64) for k in range(5))
    return RoutedChoices(root, child, parent, depth, routes.links[e], routes.index[e])


def routed_arcs(t, group=None, max_routes: int = MAX_ROUTES) -> RoutedArcs:
    """The arcs of the routed LP on ``t`` (lifted by ``group``: owners that represent the vertex orbits)."""
    routes = hop_routes(t, max_routes)
    pairs = np.unique(routes.src * t.n_vertices + routes.dst)
    hop_graph = Topology(f"compute hops of {t.name}", {}, t.n_vertices, pairs // t.n_vertices, pairs % t.n_vertices,
                         t.compute)
    roots = root_reps(t, group)
    to_root = np.stack([hop_graph.bfs([r], reverse=True) for r in roots.tolist()])
    if np.any(to_root[:, t.compute] < 0):
        raise SynthError(f"the routed packing model needs every compute vertex to reach every other on {t.name}")
    one_way = bool(np.any(t.link_ids(t.link_dst, t.link_src) < 0))
    up = _choices(routes, to_root, True)
    H_up = int(to_root[:, t.compute].max())
    if not one_way:
        return RoutedArcs(t, group, H_up, H_up, roots, up, None)
    from_root = np.stack([hop_graph.bfs([r]) for r in roots.tolist()])
    if np.any(from_root[:, t.compute] < 0):
        raise SynthError(f"the routed packing model needs every compute vertex to reach every other on {t.name}")
    down = _choices(routes, from_root, False)
    return RoutedArcs(t, group, H_up, int(from_root[:, t.compute].max()), roots, up, down)


def _arcsets(data: RoutedArcs):
    up, H = data.up, data.H_up
    if data.down is None:
        return [ArcSet(up.root, up.child, ((up.links, H - up.depth + 1), (data.down_links(), H + up.depth)))]
    down = data.down
    return [ArcSet(up.root, up.child, ((up.links, H - up.depth + 1),)),
            ArcSet(down.root, down.child, ((down.links, H + down.depth),))]


def solve_routed(data: RoutedArcs, free_shares: bool = True, time_limit=None, threads: int = 1) -> LayeredSolution:
    """Solve the routed LP with HiGHS: a :class:`~synth.models.packing.layered.LayeredSolution` whose ``y``
    holds the ``up`` arcs' fractions, then the ``down`` arcs' (one-way links)."""
    t0 = time.monotonic()
    t = data.topology
    model, ys, w, _ = build_packing_lp("routed-packing", data.roots, data.group, data.n_rounds, t, _arcsets(data),
                                       free_shares)
    sol = model.solve_highs(time_limit=time_limit, threads=threads, relax=True)
    if sol.values is None:
        raise no_solution(data.kind, t, sol, time_limit)
    y = np.maximum(np.concatenate([sol.values[c] for c in ys]), 0.0)
    return LayeredSolution(data, str(sol.status), float(sol.objective), volume_bound(t),
                           np.maximum(sol.values[w], 0.0), y,
                           time.monotonic() - t0)


def round_routed(sol: LayeredSolution, units: int = 1024):
    """The integer schedule of a routed LP solution, about ``units`` units per owner (as
    :func:`synth.models.packing.rounding.round_schedule`: a component is a run of units taking the same
    reduction and broadcast arcs)."""
    d = sol.data
    t, H, V = d.topology, d.H_up, d.topology.n_vertices
    n_root = largest_remainder(sol.w, units * d.n_roots)
    up, down = d.up, d.down
    y_up, y_down = sol.y[:up.n_arcs], sol.y[up.n_arcs:]
    lo, hi = split_units(n_root, up.root, up.child, up.tiebreak(), y_up, V)
    spans = [(up.root, hi)]
    if down is not None:
        lo_d, hi_d = split_units(n_root, down.root, down.child, down.tiebreak(), y_down, V)
        spans.append((down.root, hi_d))
    cuts = unit_cuts(n_root, spans)
    arc, comp = expand(cuts, up.root, lo, hi)
    cols = [(comp, H - up.depth[arc] + 1, up.child[arc], up.parent[arc], REDUCE, up.links[arc])]
    if down is None:
        cols.append((comp, H + up.depth[arc], up.parent[arc], up.child[arc], COPY, d.down_links()[arc]))
    else:
        arc_d, comp_d = expand(cuts, down.root, lo_d, hi_d)
        cols.append((comp_d, H + down.depth[arc_d], down.parent[arc_d], down.child[arc_d], COPY, down.links[arc_d]))
    width = max(c[5].shape[1] for c in cols)
    links = np.concatenate([np.pad(c[5], ((0, 0), (0, width - c[5].shape[1])), constant_values=-1) for c in cols])
    comp_all, rnd, src, dst = (np.concatenate([c[k] for c in cols]) for k in range(4))
    op = np.concatenate([np.full(c[0].size, c[4]) for c in cols])
    labels = tuple(f"{d.kind} tree of owner {int(d.roots[r])}, units {int(u)}..{int(u + w - 1)} of {int(n_root[r])}"
                   for r, u, w in zip(cuts.root.tolist(), cuts.first.tolist(), cuts.weight.tolist()))
    return packed_base(t, d.n_rounds, (comp_all, rnd, src, dst, op, links), cuts.weight, labels)


def pack_routed(data: RoutedArcs, units: int = 1024, free_shares: bool = True, time_limit=None,
                progress=lambda _m: None, claims=None) -> Packed:
    """Solve the routed LP over the arcs ``data`` and round it: the schedule, uncertified
    (:class:`~synth.models.packing.result.Packed`, lifted by ``data.group`` or the trivial group).

    ``data``: :func:`routed_arcs`, or :func:`synth.models.packing.depth.depth_arcs` for depth-bounded
    trees; ``claims``: more solver claims for the certificate.
    """
    t0 = time.monotonic()
    t = data.topology
    group = trivial_group(t) if data.group is None else data.group
    if data.n_arcs > MAX_ROUTED_ARCS:
        raise SynthError(f"the {data.kind} LP on {t.name} has {data.n_arcs:,} (parent, route) choices, over the "
                         f"{MAX_ROUTED_ARCS:,} it is built for")
    progress(f"{data.kind} LP: {data.n_arcs:,} (parent, route) choices of {data.n_roots} owner(s), "
             f"{data.n_rounds} rounds")
    sol = solve_routed(data, free_shares, time_limit=time_limit)
    progress(f"{data.kind} LP {sol.status}: {100 * sol.fraction:.1f} % of the volume bound; rounding to {units} units "
             "per owner")
    base = round_routed(sol, units)
    solver = {"model": "synth.models.packing.routed", "lp_status": sol.status, "lp_objective": round(sol.objective, 9),
              "lp_fraction_of_volume_bound": round(sol.fraction, 6), "units_per_owner": units,
              "free_shares": free_shares, "lp": data.kind, **(claims or {}),
              "seconds": round(time.monotonic() - t0, 3),
              "meaning": f"solver claims, not re-derived: the {data.kind} LP's value per element (the least "
                         "bandwidth term of trees whose arcs are routes, layered by compute hops or levels, "
                         f"{data.n_rounds} rounds) and its share of the volume bound; the schedule's own bandwidth "
                         "term and bound are claims that synth check re-derives"}
    return Packed(base, group, solver, f"{data.kind}-packing", sol.status, sol.fraction, sol, units,
                  time.monotonic() - t0)
