"""Parent arrays: forests hanging from a root set, and the schedules they define.

A forest is a parent array over the vertices: ``parent[v]`` is the vertex ``v`` sends
to, ``-1`` at the roots and off the forest.  A k-hop tree is the forest on the root set
``{0}``, the forest of a forest-plus-exchange schedule the one on ``{a, b}``.  This module
is the one home of what every construction and model needs of such an array: its depths
(:func:`forest_depths`, which also checks it; :func:`parent_depths` from the array alone),
its weight (:func:`forest_weight`), both at once against a depth bound (:func:`check_forest`),
the BFS forest of a torus (:func:`bfs_forest`), a two-level tree of hubs (:func:`hub_parents`), and its
reduce-then-broadcast schedules (:func:`tree_schedule`, :func:`exchange_schedule`).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("4x4")
>>> parent = bfs_forest(t, [0])
>>> int(forest_depths(t, parent, [0]).max()), forest_weight(t, parent)
(4, 15)
>>> pair = bfs_forest(t, [0, 4])
>>> int(forest_depths(t, pair, [0, 4]).max()), forest_weight(t, pair)
(3, 14)
"""

from __future__ import annotations

import numpy as np

from synth.errors import ScheduleError, check_instance, check_int
from synth.schedule.data import COPY, REDUCE, BaseSchedule
from synth.topology.base import Topology

__all__ = ["trees_base", "parent_depths", "forest_depths", "forest_weight", "check_forest", "bfs_forest", "hub_parents",
           "tree_schedule",
           "exchange_schedule"]


def parent_depths(parent, roots, members=None) -> np.ndarray:
    """Depth of every vertex in the forest ``parent`` hanging from ``roots``, from the array alone.

    ``members`` (a boolean mask, default every vertex) are the vertices that hang from a
    root; the others must have no parent and get depth ``-1``.  The models call this on
    plain parent arrays (no topology); :func:`forest_depths` on a topology's compute vertices.

    Raises
    ------
    ScheduleError
        Unless every member but the roots has a member parent (and nothing else has one)
        and every path ends at a root.

    Examples
    --------
    >>> parent_depths([-1, 0, 1, -1, 3], [0, 3]).tolist()
    [0, 1, 2, 0, 1]
    >>> parent_depths([-1, 2, 1], [0])
    Traceback (most recent call last):
    ...
    synth.errors.ScheduleError: the parent array has a cycle: not a forest hanging from the roots
    """
    parent = np.asarray(parent, dtype=np.int64)
    V = parent.size
    members = np.ones(V, dtype=bool) if members is None else np.asarray(members, dtype=bool)
    is_root = np.zeros(V, dtype=bool)
    is_root[np.asarray(roots, dtype=np.int64)] = True
    if not np.array_equal(parent >= 0, members & ~is_root):
        raise ScheduleError("every compute vertex but the roots needs a parent (and nothing else)")
    has = parent >= 0
    if np.any(parent[has] >= V) or not np.all(members[parent[has]]):
        raise ScheduleError("a parent is not a compute vertex")
    # pointer jumping: anc[v] is an ancestor of v at distance dist[v]; O(log depth) vectorized passes
    anc = np.where(has, parent, np.arange(V))
    dist = has.astype(np.int64)
    for _ in range(64):
        done = is_root[anc]
        if done[members].all():
            break
        dist = np.where(done, dist, dist + dist[anc])
        anc = np.where(done, anc, anc[anc])
    if not is_root[anc[members]].all():
        raise ScheduleError("the parent array has a cycle: not a forest hanging from the roots")
    depth = np.full(V, -1, dtype=np.int64)
    depth[members] = dist[members]
    return depth


def forest_depths(topology, parent, roots) -> np.ndarray:
    """Depth of every compute vertex in the forest ``parent`` with the given roots (``-1`` off the forest).

    Raises
    ------
    ScheduleError
        Unless every compute vertex but the roots has a compute parent and every path ends at a root.
    """
    parent = np.asarray(parent, dtype=np.int64)
    if parent.size != topology.n_vertices:
        raise ScheduleError(f"parent array must have {topology.n_vertices} entries")
    return parent_depths(parent, roots, topology.is_compute)


def forest_weight(t, parent) -> int:
    """``W = sum over forest edges of dist(v, parent[v])``: the hops one chunk's reduction takes.

    ``t`` needs a closed-form ``dist`` (tori, HyperX).  An exchange schedule adds the
    exchange's ``dist(a, b)`` on top.

    >>> from synth.topology.torus import parse_torus
    >>> forest_weight(parse_torus("5"), [-1, 0, 0, 0, 0])
    6
    """
    parent = np.asarray(parent, dtype=np.int64)
    kids = np.flatnonzero(parent >= 0)
    return int(t.dist(kids, parent[kids]).sum())


def check_forest(t, parent, roots, depth=None) -> tuple:
    """Validate a forest hanging from ``roots`` (of depth at most ``depth``); return ``(depth, weight)``.

    Raises
    ------
    ScheduleError
        If it is not a spanning forest hanging from exactly ``roots`` (:func:`forest_depths`), or is
        deeper than ``depth``.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("5")
    >>> check_forest(t, [-1, 0, 1, 4, 0], [0])
    (2, 4)
    >>> check_forest(t, [-1, 0, 1, 4, 0], [0], depth=1)
    Traceback (most recent call last):
    ...
    synth.errors.ScheduleError: forest depth 2 exceeds the bound 1
    """
    reached = int(forest_depths(t, parent, roots).max())
    if depth is not None and reached > depth:
        raise ScheduleError(f"forest depth {reached} exceeds the bound {depth}")
    return reached, forest_weight(t, parent)


def bfs_forest(t, roots) -> np.ndarray:
    """The dimension-order BFS forest of a torus hanging from ``roots`` (``-1`` at the roots).

    Every vertex hangs from its nearest root (the first of ``roots`` on ties) through the
    first hop of its dimension-order route to it (:meth:`synth.topology.torus.Torus.route`),
    so every forest edge is one link and the depth is the eccentricity of the root set.
    """
    roots = [int(r) for r in roots]
    v = np.arange(t.n_vertices)
    if len(roots) == 1:
        root = np.full_like(v, roots[0])
    else:
        dist = np.stack([t.dist(v, r) for r in roots])
        root = np.asarray(roots)[np.argmin(dist, axis=0)]   # argmin: the first root on ties
    first = t.first_hop(v, root)
    parent = np.where(first >= 0, t.link_dst[np.maximum(first, 0)], -1).astype(np.int64)
    parent[roots] = -1
    return parent


def hub_parents(t, step: int) -> np.ndarray:
    """A tree of two levels rooted at vertex 0 of torus ``t``: hubs on a grid of pitch ``step``.

    The hubs are the vertices whose coordinates are all multiples of ``step``; every other vertex
    hangs from the hub its coordinates round down to, every hub but 0 from 0.  Its edges are not
    links: :func:`tree_schedule` routes them.  A small k-hop tree for tests and benchmarks.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> hub_parents(parse_torus("4x4"), 2).reshape(4, 4).tolist()
    [[-1, 0, 0, 2], [0, 0, 2, 2], [0, 8, 0, 10], [8, 8, 10, 10]]
    """
    v = np.arange(t.n_vertices)
    coords = np.unravel_index(v, t.shape)
    hub = np.ravel_multi_index(tuple((x // step) * step for x in coords), t.shape).astype(np.int64)
    parent = np.where(hub == v, 0, hub)
    parent[0] = -1
    return parent


def tree_schedule(topology: Topology, parent, root: int, route=None, label: str = "") -> BaseSchedule:
    """The reduce-then-broadcast schedule of one rooted spanning tree.

    Parameters
    ----------
    topology : Topology
    parent : array_like
        ``parent[v]`` for every compute vertex ``v`` other than ``root``; ``-1`` elsewhere.
    root : int
    route : callable, optional
        ``route(u, v) -> link ids``; defaults to ``topology.shortest_route``.

    Returns
    -------
    BaseSchedule
        ``2h`` rounds for a tree of depth ``h``: in round ``i <= h`` the vertices at depth
        ``h-i+1`` reduce into their parents; in round ``h+i`` the vertices at depth ``i``
        receive a copy from their parents.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("3")
    >>> b = tree_schedule(t, [-1, 0, 0], 0)
    >>> b.n_rounds, b.round.tolist(), b.op.tolist()
    (2, [1, 1, 2, 2], [0, 0, 1, 1])
    """
    check_instance(topology, "topology", Topology, " (e.g. synth.parse_torus('4x4'))")
    root = check_int(root, "root")
    parent = np.asarray(parent, dtype=np.int64)
    route = route or topology.shortest_route
    depth = forest_depths(topology, parent, [root])
    h = int(depth.max())
    kids = np.flatnonzero(parent >= 0)
    kids = kids[np.argsort(-depth[kids], kind="stable")]
    rows = []
    for v in kids:
        rows.append((0, h - depth[v] + 1, v, parent[v], REDUCE, route(int(v), int(parent[v]))))
    for v in kids[::-1]:
        rows.append((0, h + depth[v], parent[v], v, COPY, route(int(parent[v]), int(v))))
    rows.sort(key=lambda r: (r[1], r[2], r[3]))
    return BaseSchedule.from_rows(topology, 2 * h, rows, (1,), (label or f"tree, root {root}, depth {h}",))


def exchange_schedule(topology: Topology, parent, a: int, b: int, route=None, label: str = "") -> BaseSchedule:
    """Forest plus exchange (docs/spec.md §4): reduce to roots ``a`` and ``b``, swap, disseminate.

    ``parent`` describes a forest whose two trees hang from ``a`` and ``b``.  With forest depth
    ``h``: rounds ``1..h`` reduce towards the roots, round ``h+1`` has ``a`` and ``b`` reduce
    into each other along ``route(a, b)`` and ``route(b, a)`` (both payloads are start-of-round
    aggregates, so both roots end with the total), rounds ``h+2..2h+1`` copy back down.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("4")
    >>> s = exchange_schedule(t, [-1, -1, 1, 0], 0, 1)
    >>> s.n_rounds, s.round.tolist(), s.op.tolist()
    (3, [1, 1, 2, 2, 3, 3], [0, 0, 0, 0, 1, 1])
    """
    check_instance(topology, "topology", Topology, " (e.g. synth.parse_torus('4x4'))")
    a, b = check_int(a, "a"), check_int(b, "b")
    parent = np.asarray(parent, dtype=np.int64)
    route = route or topology.shortest_route
    if a == b:
        raise ScheduleError("the two exchange roots must differ")
    depth = forest_depths(topology, parent, [a, b])
    h = int(depth.max())
    kids = np.flatnonzero(parent >= 0)
    rows = []
    for v in kids:
        rows.append((0, h - depth[v] + 1, v, parent[v], REDUCE, route(int(v), int(parent[v]))))
        rows.append((0, h + 1 + depth[v], parent[v], v, COPY, route(int(parent[v]), int(v))))
    rows.append((0, h + 1, a, b, REDUCE, route(int(a), int(b))))
    rows.append((0, h + 1, b, a, REDUCE, route(int(b), int(a))))
    rows.sort(key=lambda r: (r[1], r[2], r[3]))
    return BaseSchedule.from_rows(topology, 2 * h + 1, rows, (1,),
                                  (label or f"forest + exchange, roots {a} and {b}, depth {h}",))


def trees_base(topology: Topology, n_rounds: int, parent, up, down, weights, labels=()) -> BaseSchedule:
    """The base schedule of ``C`` one-hop trees given as ``C x V`` arrays in the tree form
    (:mod:`synth.check.tree_form`): component ``c`` sends ``v -> parent[c, v]`` (reduce) in round ``up[c, v]`` and
    ``parent[c, v] -> v`` (copy) in round ``down[c, v]`` where those are positive.

    Rows come component by component, vertex by vertex, the reduce first: built in place, without sorting
    millions of rows (the checker's execution and the certificate writer take this order as it is).  Nothing
    is checked beyond the links: the checker executes it.

    Raises
    ------
    ScheduleError
        If a tree edge with a send is not a link of ``topology``.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> b = trees_base(parse_torus("4"), 4, [[-1, 0, 1, 0]], [[0, 2, 1, 2]], [[0, 3, 4, 3]], [1])
    >>> b.n_transmissions, b.round.tolist(), b.src.tolist(), b.dst.tolist()
    (6, [2, 3, 1, 4, 2, 3], [1, 0, 2, 1, 3, 0], [0, 1, 1, 2, 0, 3])
    """
    parent, up, down = (np.asarray(a) for a in (parent, up, down))
    C, V = parent.shape
    flat = np.flatnonzero(((up > 0) | (down > 0)).ravel())
    comp, v = (flat // V).astype(np.int32), (flat % V).astype(np.int32)
    p = parent.ravel()[flat]
    if np.any(p < 0):
        raise ScheduleError(f"component {int(comp[np.argmax(p < 0)])}: a send of a vertex without a parent")
    p = p.astype(np.int32)
    rnd = np.stack([up.ravel()[flat], down.ravel()[flat]], axis=1).astype(np.int32).ravel()   # (c, v, op) order
    src, dst = np.stack([v, p], axis=1).ravel(), np.stack([p, v], axis=1).ravel()
    links = _out_link(topology, src, dst)
    op = np.tile(np.array([REDUCE, COPY], dtype=np.int8), flat.size)
    comp = np.repeat(comp, 2)
    if not np.all(rnd > 0):   # a vertex with one send only
        keep = rnd > 0
        comp, rnd, src, dst, op, links = (a[keep] for a in (comp, rnd, src, dst, op, links))
    if np.any(links < 0):
        k = int(np.argmax(links < 0))
        raise ScheduleError(f"component {int(comp[k])}: {int(src[k])} -> {int(dst[k])} is not a link")
    return BaseSchedule(topology, int(n_rounds), comp, rnd, src, dst, op, np.arange(src.size + 1), links,
                        np.asarray(weights), tuple(labels))


def _out_link(topology, a, b) -> np.ndarray:
    """The link ``a[i] -> b[i]`` of every pair (``-1``: none): one gather from a ``V x V`` table where it is small
    (a 16x16x16 torus: 64 MB), else :meth:`~synth.topology.base.Topology.link_ids`."""
    V = topology.n_vertices
    if V * V > _DENSE_PAIRS:
        return topology.link_ids(a, b)
    table = np.full(V * V, -1, dtype=np.int32)
    table[topology.link_src.astype(np.int64) * V + topology.link_dst] = np.arange(topology.n_links, dtype=np.int32)
    return table[a.astype(np.int64) * V + b]


_DENSE_PAIRS = 1 << 25   # vertex pairs up to which _out_link looks links up in a dense table
