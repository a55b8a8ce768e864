"""The depth-bounded packing LP for small messages: trees of depth ``<= k`` whose arcs are multi-hop routes.

As k-hop trees do (:mod:`synth.models.khop`: a transmission from a vertex to its parent carries a
route of several links in one round), a depth bound ``k`` below ``H`` (the largest eccentricity)
makes every arc a shortest route of up to ``m = ceil(H / k)`` hops.  A vertex at distance ``d`` from
a chunk's owner sits on *level* ``ceil(d / m)``; its parent is any vertex ``u`` on a shortest path to
the owner, at most ``m`` hops away and on a lower level (``d(u) >= d - m`` and ``d(u) <= (level - 1) m``),
reached over one of up to :data:`DEPTH_ROUTES` shortest routes.  Level ``l`` sends in round
``L - l + 1`` and receives in ``L + l`` (``L = ceil(H / m) <= k`` levels, ``2L`` rounds), every link of
the route loaded in that round; the fractional choice of (parent, route) and the owners' shares are
the routed LP's (:mod:`synth.models.packing.routed`), which solves, rounds and certifies it.

Fewer rounds cost bandwidth: a route of ``h`` hops loads ``h`` links for one element, so the
bandwidth term grows as ``k`` falls, while the ``2L`` round startups shrink.  With ``k >= H``
(``m = 1``) the LP is the layered LP exactly.

Needs every linked vertex to compute and links in pairs (as the layered LP); the routed LP on
switches or one-way links has no depth bound.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.spec import default_group
>>> from synth.models.packing.routed import solve_routed, round_routed
>>> t = parse_torus("4x4"); d = damage(t, parse_failures(t, links=["0-1"]))
>>> data = depth_arcs(d, 2, default_group(d))
>>> data.H_up, data.n_rounds, int((data.up.links >= 0).sum(axis=1).max())
(2, 4, 2)
>>> sol = solve_routed(data)
>>> sol.status, 0.3 < sol.fraction < 0.8
('optimal', True)
>>> round_routed(sol, units=8).n_rounds
4
"""

from __future__ import annotations

import numpy as np

from synth.errors import SynthError
from synth.models.packing.layered import root_reps
from synth.models.packing.routed import RoutedArcs, RoutedChoices, needs_routes, shortest_routes

__all__ = ["DEPTH_ROUTES", "DEPTH_STEPS", "depth_arcs", "choose_depth_arcs", "hops_per_level"]

#: shortest routes kept per (vertex, parent) pair: enough for the two dimension orders of a 2-D detour
DEPTH_ROUTES = 4


#: the LP's size steps: ``(max_routes, boundary only, most parent choices)``, largest first (on an 8x8 torus
#: with one failed link, k = 2, HiGHS took 95 s for 26,207 choices with 4 routes: 39.32 % of the volume bound;
#: 56 s for 17,931 with 2: 39.30 %; 14 s for 11,051 with 1: 37.88 %)
DEPTH_STEPS = ((DEPTH_ROUTES, False, 12_000), (2, False, 20_000), (1, False, 30_000), (1, True, 60_000))


def choose_depth_arcs(t, k: int, group=None, steps=DEPTH_STEPS):
    """Yield ``(arcs, restriction)`` for every size step that fits, largest first: the depth-bounded arcs and a
    note saying what was restricted ('' for the full choice).  The caller takes the first whose LP solves.

    Raises
    ------
    SynthError
        When even the smallest step has too many choices (the message says how many).
    """
    data = None
    for i, (routes, boundary, most) in enumerate(steps):
        data = depth_arcs(t, k, group, routes, boundary)
        if data.n_arcs <= most:
            what = [] if i == 0 else [f"{routes} route{'s' * (routes > 1)} per (vertex, parent) pair"]
            if boundary:
                what.append("parents only on the lower level's outer boundary")
            yield data, "" if not what else (f"restricted to keep the LP small ({data.n_arcs:,} choices): "
                                             + ", ".join(what))
    if data is not None and data.n_arcs > steps[-1][2]:
        raise SynthError(f"the depth-bounded LP on {t.name} with depth {k} has {data.n_arcs:,} parent choices "
                         f"even restricted (at most {steps[-1][2]:,}); use a larger depth bound")


def hops_per_level(H: int, k: int) -> tuple:
    """``(m, L)``: hops per arc ``ceil(H / k)`` and levels ``ceil(H / m)`` (at most ``k``).

    >>> hops_per_level(8, 2), hops_per_level(8, 3), hops_per_level(8, 8), hops_per_level(8, 20)
    ((4, 2), (3, 3), (1, 8), (1, 8))
    """
    m = -(-H // max(1, k))
    return m, -(-H // m)


def depth_arcs(t, k: int, group=None, max_routes: int = DEPTH_ROUTES, boundary: bool = False) -> RoutedArcs:
    """The arcs of the depth-bounded LP on ``t`` for depth bound ``k`` (module docstring).

    ``boundary``: parents only on the lower level's outer boundary (distance ``(level - 1) m`` from the
    owner), which cuts the choices several times over (large networks, :func:`choose_depth_arcs`).

    Raises
    ------
    SynthError
        On a graph with switches or one-way links, or for ``k < 1``.
    """
    why = needs_routes(t)
    if why is not None:
        raise SynthError(f"the depth-bounded packing model needs every linked vertex to compute and links in "
                         f"pairs; {t.name} has {why}")
    if k < 1:
        raise SynthError(f"depth bound {k}: need at least 1")
    roots = root_reps(t, group)
    to_root = np.stack([t.bfs([r], reverse=True) for r in roots.tolist()])
    H = int(to_root[:, t.compute].max())
    m, L = hops_per_level(H, k)
    routes = shortest_routes(t, np.ones(t.n_vertices, dtype=bool), m, max_routes)
    h = routes.lengths
    parts = []
    for i, row in enumerate(to_root):
        d, du = row[routes.src], row[routes.dst]
        level = -(-d // m)
        lower = (du == (level - 1) * m) if boundary else (du <= (level - 1) * m)
        e = np.flatnonzero((d >= 1) & (du == d - h) & lower)
        parts.append((np.full(e.size, i), routes.src[e], routes.dst[e], level[e], e))
    root, child, parent, lev, e = (np.concatenate([p[k_] for p in parts]).astype(np.int64) for k_ in range(5))
    up = RoutedChoices(root, child, parent, lev, routes.links[e], routes.index[e])
    return RoutedArcs(t, group, L, L, roots, up, None, kind="depth-bounded")
