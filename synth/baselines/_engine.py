"""Shared machinery of the baselines: routes, round collection and the two schedule engines.

Every baseline is one or more chunk *families* that run side by side (the
multiport split of the vector).  Two engines turn per-step partner maps into
explicit transmissions:

* :func:`allgather_plan` (bandwidth-optimal variants): each family's vector is
  cut into one block per owner node.  The allgather is run greedily: in every
  step a node sends along each of the step's maps exactly the blocks its
  partner does not hold yet (and gets from no earlier map of the same step).
  For the partner rules of Swing, Trivance, halving-doubling, Bucket and Ring
  this *is* the published allgather.  The reduce-scatter is its exact time
  reversal (every copy ``u -> v`` of round ``k`` becomes a reduce ``v -> u`` of
  round ``K+1-k``), which turns each block's broadcast tree into a reduction
  tree: each node forwards a block once, after all its children did.
* latency-optimal variants add their whole chunk into each partner's in every
  step (:meth:`Rounds.add`), the partners' reach sets being disjoint.

Where a side does not fit an algorithm's radix, :func:`shrink_plan` folds the
extra nodes onto a virtual torus whose sides are powers of the radix, one
dimension per round, before the algorithm, and copies the result back after it
(the reduction to a power of two of Swing's implementation and of Rabenseifner).

A *map* is ``(to, disp)``: ``to[v]`` the partner of vertex ``v`` (``-1`` if it
sends nothing) and, on tori, ``disp[v]`` the signed steps per dimension of its
route (dimension order, each dimension the way the sign says).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("4")
>>> to = (np.arange(4) + 1) % 4                      # ring successor
>>> disp = np.ones((4, 1), dtype=np.int64)
>>> plan = allgather_plan(4, np.arange(4), [[(to, disp)]] * 3)
>>> [len(step[0]) for step in plan]                 # one block per node per step
[4, 4, 4]
>>> r = Rounds(t)
>>> add_allreduce(r, plan, chunk_base=0, first_round=1)
6
>>> from synth.check import execute
>>> execute(r.schedule(4))
[]
"""

from __future__ import annotations

import numpy as np

from synth.errors import ScheduleError, TopologyError
from synth.schedule import COPY, REDUCE, Block, Schedule
from synth.topology.spineleaf import SpineLeaf
from synth.topology.torus import Torus

__all__ = ["Rounds", "allgather_plan", "add_allreduce", "shrink_plan", "add_shrink", "add_enlarge",
           "ring_disp", "torus_disp", "spine_leaf_route", "spine_leaf_links", "is_power", "floor_power", "ceil_log"]


# ------------------------------------------------------------------ integers
def is_power(n: int, k: int) -> bool:
    """``n`` is a power of ``k`` (``k**0 = 1`` included).

    >>> is_power(27, 3), is_power(12, 2), is_power(1, 2)
    (True, False, True)
    """
    while n > 1 and n % k == 0:
        n //= k
    return n == 1


def floor_power(n: int, k: int) -> int:
    """The largest power of ``k`` not above ``n``.

    >>> floor_power(9, 2), floor_power(8, 3), floor_power(9, 3)
    (8, 3, 9)
    """
    v = 1
    while v * k <= n:
        v *= k
    return v


def ceil_log(n: int, k: int) -> int:
    """The least ``s`` with ``k**s >= n``.

    >>> ceil_log(6, 2), ceil_log(9, 3), ceil_log(10, 3)
    (3, 2, 3)
    """
    s, v = 0, 1
    while v < n:
        v *= k
        s += 1
    return s


# -------------------------------------------------------------------- routes
def ring_disp(delta, n: int, prefer) -> np.ndarray:
    """Signed shortest step counts for coordinate differences ``delta`` on a ring of ``n``.

    A difference of exactly ``n/2`` goes the way ``prefer`` (an array of signs) says.

    >>> ring_disp([3, 5, 4, 4], 8, [1, 1, 1, -1]).tolist()
    [3, -3, 4, -4]
    """
    r = np.mod(np.asarray(delta, dtype=np.int64), n)
    short = np.where(2 * r < n, r, r - n)
    tie = 2 * r == n
    return np.where(tie, np.where(np.asarray(prefer) < 0, r - n, r), short)


def torus_disp(t: Torus, src, dst) -> np.ndarray:
    """Signed steps per dimension of the torus's own dimension-order route (ties go ``+``).

    >>> from synth.topology.torus import parse_torus
    >>> torus_disp(parse_torus("4x5"), [0], [14]).tolist()   # (0,0) -> (2,4)
    [[2, -1]]
    """
    return t.steps(np.asarray(src), np.asarray(dst)).astype(np.int64).reshape(-1, t.ndim)


def _torus_links(t: Torus, src, disp):
    """Link matrices of dimension-order routes: ``{L: (rows, links[len(rows), L])}``."""
    src = np.asarray(src, dtype=np.int64)
    disp = np.asarray(disp, dtype=np.int64).reshape(src.size, t.ndim)
    lengths = np.abs(disp).sum(axis=1)
    if np.any(lengths == 0):
        raise ScheduleError("a baseline transmission goes from a node to itself")
    out = {}
    D = t.degree
    for L in np.unique(lengths).tolist():
        rows = np.flatnonzero(lengths == L)
        d = disp[rows]
        cum = np.cumsum(np.abs(d), axis=1)
        cur = t.coords(src[rows]).astype(np.int64)
        links = np.empty((rows.size, L), dtype=np.int32)
        for h in range(L):
            dim = np.argmax(cum > h, axis=1)
            sign = np.sign(d[np.arange(rows.size), dim])
            links[:, h] = t.vertex(cur) * D + 2 * dim + (sign < 0)
            cur[np.arange(rows.size), dim] += sign
        out[int(L)] = (rows, links)
    return out


def spine_leaf_route(s: SpineLeaf, u: int, v: int) -> np.ndarray:
    """Links of the route from host ``u`` to host ``v`` through the switches.

    ``h_{i,j} -> L_j -> h`` on one leaf, else ``h_{i,j} -> L_j -> S_i -> L_j' -> h``:
    up through the spine of the sender's index, the routing of synth's own
    spine-leaf schedule (:mod:`synth.schedule.spineleaf`), which spreads the
    traffic of a leaf's hosts over all spines.

    >>> from synth.topology.spineleaf import spine_leaf
    >>> s = spine_leaf(2, 3, 2)
    >>> [int(s.link_dst[e]) for e in spine_leaf_route(s, 1, 4)]   # h(1,0) -> L0 -> S1 -> L2 -> h(0,2)
    [6, 10, 8, 4]
    """
    ((_, links),) = spine_leaf_links(s, [u], [v]).values()
    return links[0]


def spine_leaf_links(s: SpineLeaf, src, dst) -> dict:
    """:func:`spine_leaf_route` of every pair ``(src[i], dst[i])`` at once: ``{L: (rows, links[len(rows), L])}``.

    >>> from synth.topology.spineleaf import spine_leaf
    >>> s = spine_leaf(2, 3, 2)
    >>> out = spine_leaf_links(s, [1, 0], [4, 1])
    >>> out[4][0].tolist(), out[2][0].tolist(), bool((out[4][1][0] == spine_leaf_route(s, 1, 4)).all())
    ([0], [1], True)
    """
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    if np.any(src == dst):
        raise ScheduleError("a baseline transmission goes from a node to itself")
    q = s.spines
    lu, lv = s.leaf(src // q).astype(np.int64), s.leaf(dst // q).astype(np.int64)
    out = {}
    for L, rows in ((2, np.flatnonzero(lu == lv)), (4, np.flatnonzero(lu != lv))):
        if not rows.size:
            continue
        u, v, a, b = src[rows], dst[rows], lu[rows], lv[rows]
        path = [u, a, v] if L == 2 else [u, a, s.spine(u % q).astype(np.int64), b, v]
        links = np.stack([s.link_ids(x, y) for x, y in zip(path[:-1], path[1:])], axis=1)
        if np.any(links < 0):
            raise ScheduleError("internal error: a spine-leaf route leaves the links")
        out[L] = (rows, links.astype(np.int32))
    return out


class _GraphRoutes:
    """Routes on a generic topology: shortest (one BFS per destination), or through the spines; cached."""

    def __init__(self, topology, route=None):
        self.t = topology
        self.cache = {}
        self.route = route or topology.shortest_route

    def links(self, src, dst):
        if isinstance(self.t, SpineLeaf):  # a rule, not a search: all at once
            return spine_leaf_links(self.t, src, dst)
        out = {}
        rows_by_len = {}
        routes = []
        for i, (u, v) in enumerate(zip(np.asarray(src).tolist(), np.asarray(dst).tolist())):
            key = (u, v)
            if key not in self.cache:
                if u == v:
                    raise ScheduleError("a baseline transmission goes from a node to itself")
                self.cache[key] = self.route(u, v)
            r = self.cache[key]
            routes.append(r)
            rows_by_len.setdefault(r.size, []).append(i)
        for L, rows in rows_by_len.items():
            out[L] = (np.asarray(rows), np.stack([routes[i] for i in rows]).astype(np.int32))
        return out


# -------------------------------------------------------------------- rounds
class Rounds:
    """Collects transmissions round by round and turns them into a :class:`Schedule`.

    Parameters
    ----------
    topology : Topology
        A :class:`~synth.topology.torus.Torus` (routes from signed steps), a spine-leaf
        (:func:`spine_leaf_route`) or any topology
        (shortest routes, ``disp`` ignored).
    route : callable, optional
        ``route(u, v)`` -> link ids, in place of the topology's shortest route (not on tori).
    """

    def __init__(self, topology, route=None):
        self.topology = topology
        self.is_torus = isinstance(topology, Torus)
        self._graph = None if self.is_torus else _GraphRoutes(topology, route)
        self.parts = {}  # (round, op, L) -> list of (chunk, links)
        self.n_rounds = 0

    def add(self, rnd: int, op: int, chunk, src, dst, disp=None) -> None:
        """Add transmissions ``src[i] -> dst[i]`` of ``chunk[i]`` in round ``rnd``.

        ``disp`` (tori only) gives each route's signed steps per dimension; by
        default the torus's dimension-order shortest route.
        """
        src = np.asarray(src, dtype=np.int64).ravel()
        dst = np.asarray(dst, dtype=np.int64).ravel()
        chunk = np.broadcast_to(np.asarray(chunk, dtype=np.int32), src.shape)
        if src.size == 0:
            return
        if self.is_torus:
            if disp is None:
                disp = torus_disp(self.topology, src, dst)
            groups = _torus_links(self.topology, src, disp)
        else:
            groups = self._graph.links(src, dst)
        for L, (rows, links) in groups.items():
            if self.is_torus and not np.array_equal(self.topology.link_dst[links[:, -1]], dst[rows]):
                raise ScheduleError("internal error: a baseline route misses its receiver")
            self.parts.setdefault((int(rnd), int(op), int(L)), []).append((chunk[rows].copy(), links))
        self.n_rounds = max(self.n_rounds, int(rnd))

    def schedule(self, n_chunks: int, n_rounds: int | None = None) -> Schedule:
        """The collected transmissions as a :class:`Schedule` (blocks sorted by round)."""
        blocks = []
        for (rnd, op, L) in sorted(self.parts):
            items = self.parts[(rnd, op, L)]
            chunk = np.concatenate([c for c, _ in items]).astype(np.int32)
            links = np.concatenate([lk for _, lk in items]).astype(np.int32)
            order = np.argsort(chunk, kind="stable")
            blocks.append(Block(rnd, op, chunk[order], links[order]))
        return Schedule(self.topology, int(n_chunks), int(n_rounds or self.n_rounds), tuple(blocks))


# ------------------------------------------------------- bandwidth-optimal
def allgather_plan(n_vertices: int, owners, steps):
    """Run a greedy allgather; return its transmissions step by step.

    Parameters
    ----------
    n_vertices : int
    owners : array_like
        ``owners[b]`` is the node that holds block ``b`` at the start (after the
        reduce-scatter).  Only these nodes take part.
    steps : list of list of (to, disp)
        The maps of each allgather step, in allgather order.  Within a step a
        block offered by two maps to the same node comes from the first one.

    Returns
    -------
    list of list of (src, dst, disp, block)
        Per step, per map, the transmissions (``disp`` is ``None`` when the map's is).

    Raises
    ------
    TopologyError
        If some owner does not hold every block at the end (the partner rule
        does not reach everyone on this shape).

    Examples
    --------
    >>> to = np.array([1, 0, 3, 2])           # pairs at distance 1, then 2
    >>> plan = allgather_plan(4, np.arange(4), [[(np.array([2, 3, 0, 1]), None)], [(to, None)]])
    >>> src, dst, _, block = plan[1][0]          # second step: both blocks the partner lacks
    >>> list(zip(src.tolist(), dst.tolist(), block.tolist()))[:4]
    [(0, 1, 0), (0, 1, 2), (1, 0, 1), (1, 0, 3)]
    """
    owners = np.asarray(owners, dtype=np.int64)
    B = owners.size
    have = np.zeros((n_vertices, B), dtype=bool)
    have[owners, np.arange(B)] = True
    plan = []
    for maps in steps:
        gained = np.zeros_like(have)
        out = []
        for to, disp in maps:
            to = np.asarray(to, dtype=np.int64)
            r = np.flatnonzero(to >= 0)
            q = to[r]
            if np.unique(q).size != q.size:
                raise ScheduleError("internal error: a partner map sends two nodes to one")
            new = have[r] & ~have[q] & ~gained[q]
            gained[q] |= new
            i, b = np.nonzero(new)
            out.append((r[i], q[i], None if disp is None else np.asarray(disp)[r[i]], b))
        have |= gained
        plan.append(out)
    if not have[owners].all():
        raise TopologyError("the partner rule does not reach every node on this shape")
    return plan


def add_allreduce(rounds: Rounds, plan, chunk_base: int, first_round: int, places=None) -> int:
    """Reduce-scatter (the allgather reversed) then the allgather; returns the number of rounds (``2K``).

    Allgather step ``k`` (0-based) becomes round ``first_round + K + k``; its
    reversal is round ``first_round + K - 1 - k``.  Chunk = ``chunk_base + block``.
    ``places = (K, rs, ag)`` puts them in rounds ``first_round + rs[k]`` and
    ``first_round + K + ag[k]`` instead (rounds left idle, as between the
    stages of Bucket; ``rs`` must run backwards and ``ag`` forwards in ``k``).
    See the module example.
    """
    K = len(plan)
    if places is None:
        places = (K, [K - 1 - k for k in range(K)], list(range(K)))
    K, rs, ag = places
    for k, maps in enumerate(plan):
        for src, dst, disp, block in maps:
            chunk = chunk_base + block
            rounds.add(first_round + rs[k], REDUCE, chunk, dst, src, None if disp is None else -disp)
            rounds.add(first_round + K + ag[k], COPY, chunk, src, dst, disp)
    return 2 * K


# ------------------------------------------------------------ shrink/enlarge
def shrink_plan(t: Torus, virtual):
    """Fold every dimension onto its first ``virtual[i]`` coordinates, one dimension per round.

    Node ``x`` with ``x_i >= virtual[i]`` (still active) sends to ``x_i mod virtual[i]``
    and goes idle.  Returns ``(rounds, active)``: per round ``(src, dst, disp)``, and
    the mask of the nodes that remain.

    >>> from synth.topology.torus import parse_torus
    >>> rounds, active = shrink_plan(parse_torus("5"), [4])
    >>> [(s.tolist(), d.tolist(), disp.tolist()) for s, d, disp in rounds], int(active.sum())
    ([([4], [0], [[1]])], 4)
    """
    coords = t.coords(np.arange(t.n_vertices)).astype(np.int64)
    active = np.ones(t.n_vertices, dtype=bool)
    out = []
    for i, (n, v) in enumerate(zip(t.shape, virtual)):
        if v == n:
            continue
        src = np.flatnonzero(active & (coords[:, i] >= v))
        target = coords[src].copy()
        target[:, i] %= v
        dst = t.vertex(target)
        disp = np.zeros((src.size, t.ndim), dtype=np.int64)
        disp[:, i] = ring_disp(target[:, i] - coords[src, i], n, -1)
        out.append((src, dst, disp))
        active[src] = False
    return out, active


def add_shrink(rounds: Rounds, plan, n_chunks: int, first_round: int) -> int:
    """Every chunk of the idle-to-be nodes reduced into their partners; returns the rounds used."""
    for k, (src, dst, disp) in enumerate(plan):
        C = np.arange(n_chunks, dtype=np.int32)
        rounds.add(first_round + k, REDUCE, np.tile(C, src.size), np.repeat(src, n_chunks),
                   np.repeat(dst, n_chunks), None if disp is None else np.repeat(disp, n_chunks, axis=0))
    return len(plan)


def add_enlarge(rounds: Rounds, plan, n_chunks: int, first_round: int) -> int:
    """The shrink reversed: results copied back to the idle nodes; returns the rounds used."""
    for k, (src, dst, disp) in enumerate(reversed(plan)):
        C = np.arange(n_chunks, dtype=np.int32)
        rounds.add(first_round + k, COPY, np.tile(C, src.size), np.repeat(dst, n_chunks),
                   np.repeat(src, n_chunks), None if disp is None else -np.repeat(disp, n_chunks, axis=0))
    return len(plan)


# ---------------------------------------------------------------- families
def dimension_order(start: int, steps_per_dim) -> list:
    """``(dim, k)`` for every step of a family that starts on dimension ``start``.

    Dimensions take turns cyclically; ``k`` counts the steps already made in
    ``dim``; a dimension whose steps are used up is skipped (Swing's rule for
    sides of different lengths).

    >>> dimension_order(1, [2, 1, 3])
    [(1, 0), (2, 0), (0, 0), (2, 1), (0, 1), (2, 2)]
    """
    d = len(steps_per_dim)
    done = [0] * d
    out, dim = [], start % d if d else 0
    while sum(done) < sum(steps_per_dim):
        if done[dim] < steps_per_dim[dim]:
            out.append((dim, done[dim]))
            done[dim] += 1
        dim = (dim + 1) % d
    return out


def offset_map(t: Torus, active, virtual, dim: int, offset, prefer=None):
    """The map ``x -> x + offset[x] e_dim`` on the virtual torus (coordinates mod ``virtual[dim]``).

    ``offset`` is a scalar or one entry per vertex; only ``active`` vertices send.
    Routes go the short way round the real ring; an antipodal partner is
    reached in the direction of ``prefer`` (default: the sign of the offset).

    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("8")
    >>> to, disp = offset_map(t, np.ones(8, bool), [8], 0, 3)
    >>> to.tolist(), disp[:, 0].tolist()
    ([3, 4, 5, 6, 7, 0, 1, 2], [3, 3, 3, 3, 3, 3, 3, 3])
    """
    V = t.n_vertices
    coords = t.coords(np.arange(V)).astype(np.int64)
    off = np.broadcast_to(np.asarray(offset, dtype=np.int64), (V,))
    x = coords[:, dim]
    target = coords.copy()
    target[:, dim] = np.mod(x + off, virtual[dim])
    to = np.where(active, t.vertex(target), -1)
    disp = np.zeros((V, t.ndim), dtype=np.int64)
    disp[:, dim] = ring_disp(target[:, dim] - x, t.shape[dim], np.sign(off) if prefer is None else prefer)
    if np.any(to[active] == np.flatnonzero(active)):
        raise TopologyError("the partner rule pairs a node with itself on this shape")
    return to, disp
