"""Timed trees of the healthy network as the damaged network's first columns.

On a fabric with switches the timed master of a damaged network starts from the routed LP's trees, which
are far from what it ends with (on two MI250 nodes with a failed NIC they reach 4 % of the volume bound),
and without symmetry (the failure leaves none) every iteration prices and solves for all owners: at 60 CPU
s its column generation stops at 72.8 % of the volume bound, where the optimum it is heading for is above
77 %.  The healthy network has the larger group (the servers' and GPUs' symmetries), so its timed LP
solves many times faster; most of its trees avoid the failure.  :func:`healthy_start` solves the
healthy LP for a share of the time, lifts every tree of positive weight by every element of the healthy
group and maps it onto the damaged network (:func:`lift_columns`): a tree whose routes all survive keeps
them; one that crossed a failed link or vertex keeps its send rounds and takes, at each vertex, the
cheapest surviving parent those rounds admit (:func:`~synth.models.packing.tree_pricing.best_parents` at
unit prices), and is left out when some vertex has none.  The damaged master then starts from these
columns (on the two MI250 nodes: 75.5 % of the volume bound at its first solve).  :func:`starts_from_healthy`
decides where: a damaged network with switches whose failure hardly moves the certified bound
(:data:`HEALTHY_BOUND_RATIO`); elsewhere :func:`healthy_start` returns None.

Examples
--------
>>> from synth.topology.machines import machine_spec
>>> from synth.topology.spec import build_topology
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.models.packing.routed import routed_arcs
>>> h = build_topology(machine_spec("dgx-a100:2"))
>>> d = damage(h, parse_failures(h, [], [str(int(h.nic_of(1)))]))
>>> start = healthy_start(d, None, routed_arcs(d, None).roots, R=6, time_limit=20)
>>> start.kept > 0, start.kept + start.dropped == start.lifted
(True, True)
>>> all(len(c) == 5 for c in start.columns)
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from synth.check.bounds.bandwidth import bandwidth_bound, best_cut
from synth.models.packing.routed import needs_routes
from synth.models.packing.timed import TimedOptions, TimedSolution, solve_timed
from synth.models.packing.tree_pricing import best_parents
from synth.models.packing.tree_space import TreeSpace, arc_prices, tree_routes
from synth.symmetry.spec import default_group
from synth.topology.failures import Damaged

__all__ = ["HealthyStart", "healthy_start", "starts_from_healthy", "lift_columns", "HEALTHY_SHARE",
           "HEALTHY_LARGE_SHARE", "HEALTHY_LARGE", "HEALTHY_PER_OWNER", "HEALTHY_BOUND_RATIO"]

#: the share of the timed trees' time limit the healthy LP takes (on two MI250 nodes with a failed NIC,
#: 15 of 60 CPU s: 79.2 % of its volume bound, and the damaged master then ends at 78.3 % against 72.8 %
#: started from the routed trees).  Half: the healthy LP's iterations are many times cheaper than the damaged
#: master's (four MI250 nodes with a failed NIC: 0.3 against 10 CPU s), so the time is better spent there
#: (60 CPU s, every lifted tree kept: 71.7 % of the volume bound against 68.3 % with a quarter and 32 trees
#: per owner; two nodes: 79.6 % against 79.1 %)
HEALTHY_SHARE = 0.5
#: the share on a fabric of more than :data:`HEALTHY_LARGE` compute vertices, whose damaged master at 32 rounds
#: takes 13-20 CPU s a solve where the healthy LP takes a fraction of one, so the time is better spent there
#: (60 CPU s, a failed NIC: four MI250 nodes 73.65 % of the volume bound against 72.67-73.0 % with half, eight
#: 64.04 against 63.4-63.8 %; eight DGX A100 or H100 servers, whose healthy LP stops early, as with half)
HEALTHY_LARGE_SHARE = 0.75
HEALTHY_LARGE = 32
#: the most the failure may move the certified bound (damaged over healthy) for the start to be used: one that
#: hardly moves it leaves the healthy optimum nearly feasible (two MI250 nodes with a failed NIC, 1.005 times:
#: 1.012 of ForestColl's optimum at 60 CPU s against 1.079 from the routed trees), one that moves it asks for
#: other trees (a failed four-lane xGMI link, 1.287 times: 0.801 with the start against 0.766 without).  Tori
#: do not take it (no switches): there the layered LP starts the master better (8x8 with a failed link,
#: 60 CPU s: 96.6 % of the volume bound from the healthy trees, 99.1 % from the layered ones)
HEALTHY_BOUND_RATIO = 1.2
#: lifted trees an owner of the damaged network starts with at most, the heaviest: all of them on the MI250 nodes
#: (about 70 per owner on two with a failed NIC, 90 on four).  Dropping all but 32 leaves the healthy optimum's
#: weight behind: on four nodes the damaged master's first solve then starts 7 points below the healthy LP
#: (65.3 % of the volume bound against 72.5 %), with all of them 3 (73.3 against 77.7)
HEALTHY_PER_OWNER = 256


@dataclass(frozen=True)
class HealthyStart:
    """The damaged master's first columns ``(k, L, plink, routes, window)`` (:meth:`MasterLP.add`'s
    arguments) and where they came from: the healthy LP's fraction of its volume bound, its group's
    order, the lifted trees of positive weight, how many were kept (``repaired`` of them with new parents)
    and left out (``dropped``: beyond :data:`HEALTHY_PER_OWNER`, or without a surviving parent)."""

    columns: list
    healthy: TimedSolution
    lifted: int
    kept: int
    repaired: int
    dropped: int

    def note(self) -> str:
        """One line for the solve's notes."""
        sol = self.healthy
        return (f"started from the healthy network's timed LP ({100 * sol.fraction:.2f} % of its volume bound, "
                f"group of order {1 if sol.group is None else sol.group.order}, {sol.iterations} iterations): "
                f"{self.kept:,} of its {self.lifted:,} lifted trees kept ({self.repaired:,} with new parents "
                f"where a route failed)")


def healthy_start(t, group, roots, R: int, time_limit: float, progress=lambda _m: None,
                  per_owner: int = HEALTHY_PER_OWNER, options: TimedOptions = TimedOptions()) -> HealthyStart | None:
    """The damaged master's first trees (``group`` and ``roots``: its group and owners, one per orbit) from
    the timed LP of ``t.healthy``, solved under its default group for :data:`HEALTHY_SHARE` of ``time_limit``
    CPU seconds (:data:`HEALTHY_LARGE_SHARE` past :data:`HEALTHY_LARGE` compute vertices; with ``options``) and
    lifted onto ``t`` (module docstring), where :func:`starts_from_healthy` says so; None elsewhere."""
    healthy_group = starts_from_healthy(t, group)
    if healthy_group is None:
        return None
    share = HEALTHY_LARGE_SHARE if t.n_compute > HEALTHY_LARGE else HEALTHY_SHARE
    sol = solve_timed(t.healthy, healthy_group, R, time_limit=share * time_limit,
                      progress=lambda m: progress(f"healthy network: {m}"), options=options)
    return lift_columns(sol, TreeSpace.build(t, group, R), roots, per_owner)


def starts_from_healthy(t, group):
    """The healthy network's group if the damaged fabric ``t`` (master group ``group``) starts from its timed
    LP: a damaged network with switches whose healthy network has a built-in group larger than ``group``,
    the failure moving the certified bound at most :data:`HEALTHY_BOUND_RATIO` times; else None."""
    if not isinstance(t, Damaged) or needs_routes(t) != "switches":
        return None
    healthy_group = default_group(t.healthy)
    if healthy_group is None or healthy_group.order <= (1 if group is None else group.order):
        return None
    n = 2 * t.n_compute                                 # the ratio of the bounds does not depend on it
    moved = bandwidth_bound(t, n, best_cut(t)).value / bandwidth_bound(t.healthy, n, best_cut(t.healthy)).value
    return healthy_group if moved <= HEALTHY_BOUND_RATIO else None


def lift_columns(sol: TimedSolution, space: TreeSpace, roots, per_owner: int = HEALTHY_PER_OWNER) -> HealthyStart:
    """The trees of ``sol`` (a healthy network's timed LP) lifted by its group and mapped onto ``space``, a
    network with the same vertex ids and some links or vertices gone; ``roots``: ``space``'s owners (a tree
    whose owner is not one is left out).  Module docstring."""
    hs = sol.space
    V = space.topology.n_vertices
    G = hs.images.shape[0]
    vimg = (np.arange(V)[None, :] if sol.group is None else
            sol.group.vertex_images(np.arange(V)).astype(np.int64))
    qmap = _route_map(hs, space)                                     # (G, Qh): the route's image, -1 if gone
    darc = np.repeat(np.arange(space.n_arcs), np.diff(space.route_ptr))
    used = np.flatnonzero(sol.x > 1e-12)
    used = used[np.argsort(-sol.x[used], kind="stable")]
    L0 = np.where(hs.live[None, :], sol.labels[used], 0)
    rts0 = sol.routes[used]
    owner0 = sol.roots[sol.root[used]]
    rows, bad, n_lifted = [], [], 0
    for g in range(G):
        vm = vimg[g]
        k = np.searchsorted(roots, vm[owner0])
        mine = (k < roots.size) & (roots[np.minimum(k, roots.size - 1)] == vm[owner0])
        L = np.zeros((used.size, V), dtype=np.int64)
        L[:, vm] = L0
        L = np.where(space.live[None, :], L, 0)
        mapped = np.where(rts0 >= 0, qmap[g][np.maximum(rts0, 0)], -1)
        lost = ((rts0 >= 0) & (mapped < 0)).any(axis=(1, 2))
        # a vertex of the healthy tree that is gone here (a failed chip) loses its arcs with it
        lost |= ((L0 > 0) & ~space.live[vm][None, :]).any(axis=1)
        rts = np.full((used.size, 2, V), -1, dtype=np.int64)
        rts[:, :, vm] = mapped
        plink = np.where(rts[:, 0] >= 0, darc[np.maximum(rts[:, 0], 0)], -1)
        n_lifted += int(mine.sum())
        for i in np.flatnonzero(mine).tolist():
            item = (int(k[i]), L[i], plink[i], rts[i], tuple(int(z) for z in sol.window[used[i]]))
            (bad if lost[i] else rows).append((i, g, item, False))
    repaired = _repair(space, roots, [b[2] for b in bad])
    rows += [(i, g, it, True) for (i, g, _old, _f), it in zip(bad, repaired) if it is not None]
    columns, per, fixed = [], {}, 0
    for _i, _g, item, new in sorted(rows, key=lambda r: (r[0], r[1])):     # heaviest first, then by element
        if per.get(item[0], 0) < per_owner:
            per[item[0]] = per.get(item[0], 0) + 1
            columns.append(item)
            fixed += new
    return HealthyStart(columns, sol, n_lifted, len(columns), fixed, n_lifted - len(columns))


def _route_map(hs: TreeSpace, space: TreeSpace) -> np.ndarray:
    """``(G, Qh)``: for every element of ``hs``'s group and route of ``hs``, the route of ``space`` over the
    image links (the same path), -1 where a link failed or ``space`` keeps no such route.  A route is found by
    its links read as one integer (base ``E + 1``), searched among ``space``'s sorted once: on sixteen MI250
    nodes (65,280 routes, 64 group elements) a row-wise ``np.unique`` per element took 8 s."""
    h, t = hs.topology, space.topology
    to_t = np.asarray(t.link_ids(h.link_src, h.link_dst), dtype=np.int64)       # healthy link -> link of t
    W = max(hs.route_links.shape[1], space.route_links.shape[1])
    mine = _pad(space.route_links, W)
    out = np.full((hs.images.shape[0], hs.route_links.shape[0]), -1, dtype=np.int64)
    if mine.shape[0] == 0:
        return out
    keys = _route_keys(mine, t.n_links)
    if keys is not None:
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
    for g in range(hs.images.shape[0]):
        img = np.where(hs.route_links >= 0, to_t[hs.images[g][np.maximum(hs.route_links, 0)]], -1)
        gone = ((hs.route_links >= 0) & (img < 0)).any(axis=1)
        img = _pad(np.where(hs.route_links >= 0, img, -1), W)
        if keys is None:            # too many links and hops for one integer: rows compared whole
            both, inv = np.unique(np.concatenate([mine, img]), axis=0, return_inverse=True)
            inv = inv.ravel()
            where = np.full(both.shape[0], -1, dtype=np.int64)
            where[inv[:mine.shape[0]]] = np.arange(mine.shape[0])
            out[g] = np.where(gone, -1, where[inv[mine.shape[0]:]])
            continue
        k = _route_keys(img, t.n_links)
        pos = np.minimum(np.searchsorted(sorted_keys, k), keys.size - 1)
        out[g] = np.where(gone | (sorted_keys[pos] != k), -1, order[pos])
    return out


def _route_keys(links, n_links):
    """Each row of ``links`` (link ids, -1 padding) as one int64 in base ``n_links + 1``; None if it may not fit."""
    base = n_links + 1
    if links.shape[1] * np.log2(base) >= 62:
        return None
    keys = np.zeros(links.shape[0], dtype=np.int64)
    for w in range(links.shape[1]):
        keys = keys * base + (links[:, w] + 1)
    return keys


def _pad(a, W) -> np.ndarray:
    return np.concatenate([a, np.full((a.shape[0], W - a.shape[1]), -1, dtype=a.dtype)], axis=1)


def _repair(space: TreeSpace, roots, items) -> list:
    """Each tree of ``items`` with its labels kept and every vertex's parent the cheapest one they admit at
    unit prices (None where some vertex has none), by window."""
    out = [None] * len(items)
    for w in sorted({it[4] for it in items}):
        idx = [j for j, it in enumerate(items) if it[4] == w]
        sp = space if w[0] == space.R else replace(space, R=w[0])
        C, up, down = arc_prices(sp, np.ones((2 * w[0], space.topology.n_links)))
        L = np.array([items[j][1] for j in idx])
        plink, cost = best_parents(sp, C, L, roots[[items[j][0] for j in idx]])
        routes = tree_routes(up, down, L, plink)
        for n, j in enumerate(idx):
            if np.isfinite(cost[n]):
                out[j] = (items[j][0], L[n], plink[n], routes[n], w)
    return out
