"""Where timed trees live: arcs between compute vertices, each taken over one of its routes, and their prices.

A timed tree (:mod:`synth.models.packing.tree_pricing`) gives each vertex a parent over an *arc*, a pair
``v -> u`` of compute vertices.  On a graph whose every linked vertex computes, the arcs are the links
(one route each: the link).  On a graph with switches (GPU servers: NVSwitch, NIC rails), switches only
forward: the arcs are the pairs joined by a shortest path through switches only, each with its routes
(:func:`synth.models.packing.routed.hop_routes`, at most ``MAX_ROUTES`` per pair), so a tree is any tree
of that graph of compute hops, at any send round, not only the layered ones of the routed LP.

The price of an arc ``a = v -> u`` at label ``t`` (:func:`arc_prices`) is its cheapest route up in round
``t`` plus the cheapest route of the reverse arc down in round ``2R + 1 - t``, each route's price the sum
of its links' prices summed over the lifted images; the routes that attain them are what a column of the
master LP records.  With bandwidths the master LP's load rows read ``load <= b_e M_s``, so a row's dual is
already a price per element on the link and the routes need no further weighting.

Examples
--------
>>> from synth.topology.user import topology_from_json
>>> star = topology_from_json({"vertices": 4, "compute": [0, 1, 2], "links": [[0, 3], [1, 3], [2, 3]]})
>>> sp = TreeSpace.build(star, None, R=1)
>>> sp.n_arcs, sp.route_links.shape, sp.hop.bfs([0])[:3].tolist()     # every pair adjacent through the switch
(6, (6, 2), [0, 1, 1])
>>> C, up, down = arc_prices(sp, np.ones((2, star.n_links)))
>>> C[:, 1].tolist()                                   # two links up in round 1, two down in round 2
[4.0, 4.0, 4.0, 4.0, 4.0, 4.0]
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from synth.errors import SynthError
from synth.models.packing.routed import hop_routes, needs_routes
from synth.topology.base import Topology

__all__ = ["TreeSpace", "arc_prices", "arc_costs", "tree_routes"]

INF = np.inf


@dataclass(frozen=True, eq=False)
class TreeSpace:
    """The arcs as padded neighbour lists, ``nbr[v, d]`` over arc ``lnk[v, d]`` (-1: none), and their routes.

    ``route_links`` (padded with ``-1``) are sorted by arc, ``route_ptr`` the arcs' offsets into them; on a
    graph without switches route ``q`` is link ``q`` and arc ``q`` too.
    """

    topology: object
    R: int
    live: np.ndarray         # vertices that take part (compute vertices with an arc)
    nbr: np.ndarray          # (V, D)
    lnk: np.ndarray          # (V, D): arc ids
    back: np.ndarray         # (V, D): the position of v in nbr[nbr[v, d]]
    images: np.ndarray       # (G, E): every group element's image of every link
    arc_dst: np.ndarray      # (A,)
    arc_rev: np.ndarray      # (A,): the reverse arc
    route_links: np.ndarray  # (Q, W)
    route_ptr: np.ndarray    # (A + 1,)
    hop: object              # the graph of arcs (a Topology): distances in compute hops
    leaf: np.ndarray | None = None   # (V,): vertices that are nobody's parent (their arcs in are priced inf)

    @property
    def n_arcs(self) -> int:
        return int(self.arc_dst.size)

    @cached_property
    def rev(self) -> np.ndarray:
        """The reverse link of every link (the topology's links come in pairs)."""
        t = self.topology
        return t.link_ids(t.link_dst, t.link_src).astype(np.int64)

    @cached_property
    def orbits(self) -> tuple:
        """``(order, starts, weight, orbit)``: the links sorted by their orbit under the group (``order``), each
        orbit's first position in it (``starts``), per link ``|G| / |O|`` for its orbit ``O`` (``weight``: a sum
        over the group's elements of any per-link array ``x`` at ``g(e)`` is ``weight[e]`` times ``x`` summed
        over ``e``'s orbit) and the orbit's index (``orbit``)."""
        rep = self.images.min(axis=0)                          # an orbit's least link names it
        order = np.argsort(rep, kind="stable")
        starts = np.flatnonzero(np.r_[True, rep[order][1:] != rep[order][:-1]])
        size = np.diff(np.r_[starts, rep.size])
        orbit = np.empty(rep.size, dtype=np.int64)
        orbit[order] = np.repeat(np.arange(starts.size), size)
        return order, starts, (self.images.shape[0] / size)[orbit], orbit

    @cached_property
    def sweep_classes(self) -> tuple:
        """The live vertices split into classes of vertices at least three arcs apart, in the order the label sweep
        takes them (:func:`~synth.models.packing.tree_pricing.sweep`): a vertex's label enters only its own
        parent choice and its neighbours', so no two vertices of a class share one and they move at once.
        Greedy in vertex order (a vertex takes the first class none of its vertices within two arcs is in): eight to
        ten classes on 2-D tori, 15 or 16 on 3-D ones, one vertex each where every vertex is within two arcs of
        every other (GPU servers through their switches).

        >>> from synth.topology.torus import parse_torus
        >>> [c.tolist() for c in TreeSpace.build(parse_torus("5x5"), None, R=4).sweep_classes][:2]
        [[0, 7, 14, 16, 23], [1, 8, 10, 17, 24]]
        """
        V, nbr = self.live.size, self.nbr
        # every vertex within two arcs (padding -1; v itself is among its neighbours' neighbours, and harmless)
        two = np.where(nbr[:, :, None] >= 0, nbr[np.maximum(nbr, 0)], -1).reshape(V, -1)
        ball = np.concatenate([nbr, two], axis=1)
        color = np.full(V + 1, -1, dtype=np.int64)          # index -1 (padding) stays uncoloured
        # greedy in vertex order is sequential by nature; it runs once per space (16x20x28: 0.04 CPU s)
        for v in np.flatnonzero(self.live).tolist():
            taken = np.zeros(ball.shape[1] + 1, dtype=bool)
            used = color[ball[v]]
            taken[used[(used >= 0) & (used < taken.size)]] = True
            color[v] = int(np.argmin(taken))
        color = color[:V]
        return tuple(np.flatnonzero(color == c) for c in range(int(color.max()) + 1))

    @classmethod
    def build(cls, t, group, R: int, leaves=None) -> "TreeSpace":
        """The arcs of ``t`` (its links, or the routes through its switches) for trees of ``R`` reduce rounds;
        ``leaves``: vertices no tree takes as a parent (:func:`arc_prices` prices the arcs into them inf).

        Raises
        ------
        SynthError
            On a link without its reverse (the broadcast goes back over the reversed arcs).
        """
        what = needs_routes(t)
        if what == "one-way links":
            raise SynthError(f"timed trees need every link of {t.name} to have its reverse")
        if what is None:
            src, dst = t.link_src.astype(np.int64), t.link_dst.astype(np.int64)
            links, ptr, hop = np.arange(t.n_links, dtype=np.int64)[:, None], np.arange(t.n_links + 1), t
        else:
            routes = hop_routes(t)
            pair = routes.src * t.n_vertices + routes.dst
            keys, first = np.unique(pair, return_index=True)
            src, dst = keys // t.n_vertices, keys % t.n_vertices
            links, ptr = routes.links, np.r_[first, pair.size]
            hop = Topology(f"compute hops of {t.name}", {}, t.n_vertices, src, dst, t.compute)
        space = cls._arrange(t, group, R, (src, dst), (links, ptr), hop)
        if leaves is None:
            return space
        leaf = np.zeros(t.n_vertices, dtype=bool)
        leaf[np.asarray(leaves, dtype=np.int64)] = True
        return replace(space, leaf=leaf)

    @classmethod
    def _arrange(cls, t, group, R, arcs, routes, hop) -> "TreeSpace":
        src, dst = arcs
        V, A = t.n_vertices, src.size
        order = np.lexsort((dst, src))
        deg = np.bincount(src, minlength=V)
        D = int(deg.max()) if A else 0
        pos = np.arange(A) - np.r_[0, np.cumsum(deg)][src[order]]
        nbr = np.full((V, D), -1, dtype=np.int64)
        lnk = np.full((V, D), -1, dtype=np.int64)
        nbr[src[order], pos] = dst[order]
        lnk[src[order], pos] = order
        slot = np.full(A, -1, dtype=np.int64)
        slot[order] = pos
        key = src * V + dst
        srt = np.argsort(key, kind="stable")
        at = np.searchsorted(key[srt], dst * V + src)
        arc_rev = srt[np.minimum(at, A - 1)]
        if np.any(key[arc_rev] != dst * V + src):
            raise SynthError(f"timed trees need every arc of {t.name} to have its reverse")
        back = np.where(lnk >= 0, slot[arc_rev[np.maximum(lnk, 0)]], -1)
        live = np.zeros(V, dtype=bool)
        live[src] = True
        live &= t.is_compute
        every = np.arange(t.n_links)
        images = every[None, :] if group is None else group.link_images(every).astype(np.int64)
        links, ptr = routes
        return cls(t, int(R), live, nbr, lnk, back, images, dst, arc_rev, np.asarray(links, dtype=np.int64),
                   np.asarray(ptr, dtype=np.int64), hop)


def _route_prices(space: TreeSpace, PT) -> np.ndarray:
    """``(Q, rounds)``: each route's price in every round, its links' prices ``PT`` (E, rounds) summed (rows
    gathered link by link: no ``(Q, W, rounds)`` temporary)."""
    padded = np.concatenate([PT, np.zeros((1, PT.shape[1]))], axis=0)         # row -1: padding
    links = space.route_links
    out = padded[links[:, 0]]
    for w in range(1, links.shape[1]):
        out += padded[links[:, w]]
    return out


def _cheapest(space: TreeSpace, prices):
    """Per arc and round: the least price over the arc's routes and the route attaining it."""
    n = np.diff(space.route_ptr)
    if np.all(n == 1):
        return prices, np.broadcast_to(np.arange(prices.shape[0])[:, None], prices.shape)
    best = np.minimum.reduceat(prices, space.route_ptr[:-1], axis=0)
    arc = np.repeat(np.arange(space.n_arcs), n)
    hit = prices == best[arc]
    q = np.arange(prices.shape[0])[:, None]
    first = np.full(best.shape, np.iinfo(np.int64).max)
    np.minimum.at(first, arc, np.where(hit, q, np.iinfo(np.int64).max))
    return best, first


def arc_prices(space: TreeSpace, pi):
    """``(C, up, down)``: ``C[a, t]`` (t in 0..R, column 0 unused) the price of arc ``a`` at label ``t``, and
    the routes that attain it: ``up[a, t]`` (a route of ``a``, round ``t``) and ``down[a, t]`` (a route of the
    reverse arc, round ``2R + 1 - t``); ``pi`` has shape ``(2R, E)``.

    Everything is laid out link (route, arc) by round, rows gathered whole: on sixteen MI250 nodes (65,280
    routes through the switch, 64 rounds) the round-by-link layout's column gathers took half the CPU of the
    timed LP; this takes a fifth of their time there, and summed by link orbits (:attr:`TreeSpace.orbits`)
    instead of over the group's elements a three-hundredth on the healthy 16x16 torus (group of order 1,024); the
    same to 1e-12 (relative: ``python bench/arc_prices.py --set full``)."""
    R = space.R
    piT = np.ascontiguousarray(np.asarray(pi, dtype=np.float64).T)              # (E, 2R)
    # summed over the group: element g takes link e to each link of e's orbit |G| / |O| times, so the sum is the
    # orbit's, weighted (a periodic 16x16x16, group of order 1,024: 1,024 gathers of (E, 2R) took 1.5 s a call)
    order, starts, weight, orbit = space.orbits
    PT = np.add.reduceat(piT[order], starts, axis=0)[orbit] * weight[:, None]
    best, route = _cheapest(space, _route_prices(space, PT))                    # (A, 2R), rounds 1..2R
    C = np.full((space.n_arcs, R + 1), INF)
    # label t: the arc up in round t, its reverse down in round 2R + 1 - t (column 2R - t)
    C[:, 1:] = best[:, :R] + best[space.arc_rev, R:][:, ::-1]
    if space.leaf is not None:                  # nobody's parent
        C[space.leaf[space.arc_dst]] = INF
    up = np.zeros((space.n_arcs, R + 1), dtype=np.int64)
    down = np.zeros((space.n_arcs, R + 1), dtype=np.int64)
    up[:, 1:] = route[:, :R]
    down[:, 1:] = route[space.arc_rev, R:][:, ::-1]
    return C, up, down


def tree_routes(up, down, L, plink) -> np.ndarray:
    """``(B, 2, V)``: the routes that price each tree's arcs (rows of labels ``L`` and parent arcs ``plink``),
    from :func:`arc_prices`'s ``up`` and ``down``; -1 where a vertex has no arc."""
    has = plink >= 0
    a, lab = np.maximum(plink, 0), np.clip(L, 0, up.shape[1] - 1)
    return np.stack([np.where(has, up[a, lab], -1), np.where(has, down[a, lab], -1)], axis=1)


def arc_costs(space: TreeSpace, pi) -> np.ndarray:
    """``C`` of :func:`arc_prices`: the price of every arc at every label."""
    return arc_prices(space, pi)[0]
