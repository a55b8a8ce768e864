"""Schedules as arrays: base schedules (one chunk per component) and explicit ones.

Semantics (docs/spec.md §1).  A transmission in round ``s`` sends the sender's
value of a chunk *as it was at the start of round s* along a route of directed
links; ``reduce`` adds it into the receiver's value, ``copy`` replaces it.

* :class:`BaseSchedule`: one or more *components*, each an allreduce of a
  single chunk (a tree, a forest plus exchange, ...), with an integer weight.
  Routes are stored in CSR form (``route_ptr``, ``route_links``).
* :class:`Schedule`: the explicit schedule, as :class:`Block` s of
  transmissions that share a round, an op and a route length, so that the
  routes of a block form a dense ``T x L`` array of link ids.

The schedules of a tree or a forest (parent arrays) are built in :mod:`synth.schedule.forest`.

Collectives.  Every schedule carries its collective (:data:`COLLECTIVES`):

* ``allreduce`` (the default): every compute node ends with the sum of all inputs of every chunk;
* ``reduce-scatter``: every chunk has an *owner* (a compute vertex), which ends with the exact
  sum of every node's input of that chunk, each counted once; other nodes may hold anything;
* ``allgather``: every compute node ends with the owner's input of every chunk (copied, never
  summed); a non-owner's value of a chunk starts undefined, so a ``reduce`` into it is wrong
  unless a copy reached it first.

A base schedule stores the owner of each component (``owner``; lifted chunk ``t*|G| + i`` is
owned by element ``i``'s image of it, :func:`synth.schedule.lift.lifted_owners`), an explicit
schedule the owner of each chunk.  :mod:`synth.schedule.collective` takes the two halves of a
tree schedule: the reduction half (rounds ``1..h``) is a reduce-scatter, the dissemination half
(rounds ``h+1..2h``, renumbered ``1..h``) an allgather.

Layout of a reduce-scatter or allgather, and how ``N`` elements are cut into chunks:
:mod:`synth.schedule.chunking`.

Minimum volume (normalizes Ψ; docs/spec.md §1 derives ``2N(p-1)`` for allreduce the same way):
in a reduce-scatter every one of the ``N`` elements has an owner, and each of the other
``p - 1`` nodes' inputs of it can only leave its node by that node sending the element at least
once: ``Vol_abs >= N(p-1)``.  In an allgather each of the ``N`` elements must be received by
the ``p - 1`` nodes that do not own it, one transmission per reception: ``Vol_abs >= N(p-1)``.
Both are met by a spanning tree per chunk (``p - 1`` transmissions), so Ψ = Vol_abs / (N(p-1)),
Θ = Vol_phys / Vol_abs and Ω as for allreduce, and the weight is ``Vol_phys / N``.

"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from synth.errors import ScheduleError
from synth.topology.base import Topology, count_of

__all__ = ["REDUCE", "COPY", "OPS", "ALLREDUCE", "REDUCE_SCATTER", "ALLGATHER", "COLLECTIVES", "BaseSchedule",
           "Block", "Schedule", "check_owners", "phases"]

REDUCE, COPY = 0, 1
OPS = ("reduce", "copy")
ALLREDUCE, REDUCE_SCATTER, ALLGATHER = "allreduce", "reduce-scatter", "allgather"
COLLECTIVES = (ALLREDUCE, REDUCE_SCATTER, ALLGATHER)


def phases(collective: str) -> int:
    """How many times the minimum volume ``N(p-1)`` an optimal schedule moves: 2 for allreduce, else 1."""
    return 2 if collective == ALLREDUCE else 1


def check_owners(topology, collective, owner, n_owned: int, what: str = "chunk"):
    """Validate ``owner`` (one compute vertex per chunk or component) for ``collective``; return it as int64.

    An allreduce has no owners (``owner`` must be None); a reduce-scatter or allgather needs one
    compute vertex per item.

    Raises
    ------
    ScheduleError
        For an unknown collective or a bad owner array.
    """
    if collective not in COLLECTIVES:
        raise ScheduleError(f"unknown collective {str(collective)[:40]!r}; valid: {', '.join(COLLECTIVES)}")
    if collective == ALLREDUCE:
        if owner is not None:
            raise ScheduleError("an allreduce has no chunk owners")
        return None
    if owner is None:
        raise ScheduleError(f"a {collective} needs the owner of every {what}")
    arr = np.ascontiguousarray(owner, dtype=np.int64).ravel()
    if arr.size != n_owned:
        raise ScheduleError(f"{arr.size} owners given for {n_owned} {what}s")
    if arr.size and (arr.min() < 0 or arr.max() >= topology.n_vertices or not topology.is_compute[arr].all()):
        bad = int(np.flatnonzero((arr < 0) | (arr >= topology.n_vertices))[0]) if (
            arr.min() < 0 or arr.max() >= topology.n_vertices) else int(np.argmin(topology.is_compute[arr]))
        raise ScheduleError(f"{what} {bad}: its owner {int(arr[bad])} is not a compute vertex")
    return arr


def _check_routes(topology, src, dst, ptr, links):
    n = src.size
    lengths = np.diff(ptr)
    if links.size == n and n and links.min() >= 0 and links.max() < topology.n_links and np.all(lengths == 1):
        # one link per route (millions of rows): its ends are the sender and receiver, nothing else to check
        bad = np.flatnonzero((topology.link_src[links] != src) | (topology.link_dst[links] != dst))
        if bad.size:
            raise ScheduleError(f"transmission {int(bad[0])}: its route does not go from its sender to its receiver")
        return
    if np.any(lengths < 1):
        raise ScheduleError(f"transmission {int(np.argmax(lengths < 1))} has an empty route")
    if links.size and (links.min() < 0 or links.max() >= topology.n_links):
        raise ScheduleError("a route uses a link id outside the topology")
    first, last = links[ptr[:-1]], links[ptr[1:] - 1]
    bad = np.flatnonzero((topology.link_src[first] != src) | (topology.link_dst[last] != dst))
    if bad.size:
        raise ScheduleError(f"transmission {int(bad[0])}: its route does not go from its sender to its receiver")
    inner = np.ones(links.size, dtype=bool)
    inner[ptr[1:] - 1] = False
    if n and np.any(topology.link_dst[links[:-1][inner[:-1]]] != topology.link_src[links[1:][inner[:-1]]]):
        raise ScheduleError("a route is not a path: consecutive links do not meet")


@dataclass(frozen=True, eq=False)
class BaseSchedule:
    """Weighted components, each an allreduce schedule for one chunk.

    Attributes
    ----------
    topology : Topology
    n_rounds : int
        ``S``; rounds are numbered ``1..S``.
    component, round, src, dst : numpy.ndarray
        int32, one entry per transmission.
    op : numpy.ndarray
        int8, ``REDUCE`` or ``COPY``.
    route_ptr, route_links : numpy.ndarray
        Routes in CSR form: transmission ``i`` uses ``route_links[route_ptr[i]:route_ptr[i+1]]``.
    weights : numpy.ndarray
        int64 weight of each component (chunks per group element).
    labels : tuple of str
        A description of each component (e.g. ``"bfs tree, root 0"``).
    collective : str
        One of :data:`COLLECTIVES` (module docstring); ``"allreduce"`` by default.
    owner : numpy.ndarray or None
        For a reduce-scatter or allgather, the owner vertex of each component (int64); None for
        an allreduce.
    """

    topology: Topology
    n_rounds: int
    component: np.ndarray
    round: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    op: np.ndarray
    route_ptr: np.ndarray
    route_links: np.ndarray
    weights: np.ndarray
    labels: tuple = field(default=())
    collective: str = ALLREDUCE
    owner: np.ndarray | None = None

    def __post_init__(self):
        conv = dict(component=np.int32, round=np.int32, src=np.int32, dst=np.int32, op=np.int8,
                    route_ptr=np.int64, route_links=np.int32, weights=np.int64)
        for name, dtype in conv.items():
            object.__setattr__(self, name, np.ascontiguousarray(getattr(self, name), dtype=dtype).ravel())
        n = self.src.size
        if not all(getattr(self, k).size == n for k in ("component", "round", "dst", "op")):
            raise ScheduleError("base schedule arrays differ in length")
        if self.route_ptr.size != n + 1 or self.route_ptr[0] != 0 or self.route_ptr[-1] != self.route_links.size \
                or np.any(np.diff(self.route_ptr) < 0):
            raise ScheduleError("route_ptr is not a valid CSR pointer")
        if self.weights.size == 0 or np.any(self.weights < 1):
            raise ScheduleError("component weights must be positive integers")
        if n and (self.component.min() < 0 or self.component.max() >= self.weights.size):
            raise ScheduleError("a transmission names a component that has no weight")
        if n and (self.round.min() < 1 or self.round.max() > self.n_rounds):
            raise ScheduleError(f"rounds must lie in 1..{self.n_rounds}")
        if n and (self.op.min() < REDUCE or self.op.max() > COPY):   # not isin: millions of rows
            raise ScheduleError("op must be reduce (0) or copy (1)")
        V = self.topology.n_vertices
        if n and (min(self.src.min(), self.dst.min()) < 0 or max(self.src.max(), self.dst.max()) >= V):
            raise ScheduleError("a sender or receiver is not a vertex of the topology")
        _check_routes(self.topology, self.src, self.dst, self.route_ptr, self.route_links)
        object.__setattr__(self, "owner", check_owners(self.topology, self.collective, self.owner,
                                                       self.weights.size, "component"))
        if not self.labels:
            object.__setattr__(self, "labels", tuple(f"component {i}" for i in range(self.weights.size)))

    @classmethod
    def from_rows(cls, topology, n_rounds, rows, weights=(1,), labels=(), collective=ALLREDUCE, owner=None):
        """Build from rows ``(component, round, src, dst, op, route_links)``."""
        rows = list(rows)
        routes = [np.asarray(r[5], dtype=np.int64).ravel() for r in rows]
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([r.size for r in routes], out=ptr[1:])
        cols = np.array([r[:5] for r in rows], dtype=np.int64).reshape(-1, 5)
        links = np.concatenate(routes) if routes else np.zeros(0, dtype=np.int64)
        return cls(topology, int(n_rounds), cols[:, 0], cols[:, 1], cols[:, 2], cols[:, 3], cols[:, 4],
                   ptr, links, np.asarray(weights), tuple(labels), collective, owner)

    n_components = count_of("weights", "Number of components (chunks per group element).")
    n_transmissions = count_of("src", "Number of transmissions.")

    @property
    def route_lengths(self) -> np.ndarray:
        return np.diff(self.route_ptr)

    def route(self, i: int) -> np.ndarray:
        return self.route_links[self.route_ptr[i]:self.route_ptr[i + 1]]

    def component_alone(self, c: int) -> "BaseSchedule":
        """Component ``c`` as a base schedule of its own: its transmissions, weight 1, its label.

        >>> from synth.topology.torus import parse_torus
        >>> t = parse_torus("3")
        >>> e01, e02, e12 = t.link_ids([0, 0, 1], [1, 2, 2]).tolist()
        >>> two = BaseSchedule.from_rows(t, 2, [(0, 1, 0, 1, 0, [e01]), (1, 1, 0, 2, 0, [e02]),
        ...                                      (0, 2, 1, 2, 1, [e12])], weights=(2, 3), labels=("a", "b"))
        >>> one = two.component_alone(0)
        >>> one.n_components, one.labels, one.src.tolist(), one.route_links.tolist() == [e01, e12]
        (1, ('a',), [0, 1], True)
        """
        sel = np.flatnonzero(self.component == c)
        lengths = self.route_lengths[sel]
        starts = np.repeat(self.route_ptr[sel] - (np.cumsum(lengths) - lengths), lengths)
        links = self.route_links[starts + np.arange(int(lengths.sum()))]
        owner = None if self.owner is None else self.owner[c:c + 1]
        return BaseSchedule(self.topology, self.n_rounds, np.zeros(sel.size, dtype=np.int32), self.round[sel],
                            self.src[sel], self.dst[sel], self.op[sel], np.concatenate([[0], np.cumsum(lengths)]),
                            links, np.ones(1, dtype=np.int64), (self.labels[c],), self.collective, owner)

    def route_matrix(self, idx) -> np.ndarray:
        """Routes of transmissions ``idx`` (all of one length) as a dense ``len(idx) x L`` array."""
        idx = np.asarray(idx)
        L = int(self.route_ptr[idx[0] + 1] - self.route_ptr[idx[0]])   # not route_lengths: a diff of every route
        if L == 1:
            return self.route_links[self.route_ptr[idx]][:, None]
        return self.route_links[self.route_ptr[idx][:, None] + np.arange(L)]

    def as_schedule(self) -> "Schedule":
        """The base schedule run on its own: component ``t`` is chunk ``t``.

        One block per round, op and route length (its chunks in increasing order): a block holds any number
        of chunks, so a schedule of thousands of components gives a few blocks per round, not thousands.
        """
        lengths = self.route_lengths
        span = int(lengths.max()) + 1 if lengths.size else 1
        if (self.n_rounds * 2 + 2) * span < (1 << 15) and np.all(self.component[1:] >= self.component[:-1]):
            # rows component by component (synth.schedule.forest.trees_base): a stable radix sort of the head
            # (round, op, route length) alone gives the order of the whole key, without sorting 64-bit keys
            head = (self.round.astype(np.int16) * 2 + self.op) * span + lengths.astype(np.int16)
            order = np.argsort(head, kind="stable")
            head = head[order]
        else:
            key = ((self.round.astype(np.int64) * 2 + self.op) * span + lengths) * self.n_components + self.component
            order = np.argsort(key, kind="stable")
            head = key[order] // self.n_components
        cut = np.flatnonzero(np.diff(head) != 0) + 1
        blocks = []
        for part in np.split(order, cut):
            if part.size:
                blocks.append(Block(int(self.round[part[0]]), int(self.op[part[0]]),
                                    self.component[part], self.route_matrix(part)))
        return Schedule(self.topology, self.n_components, self.n_rounds, tuple(blocks), self.collective, self.owner)

    def trimmed(self) -> "BaseSchedule":
        """The same schedule with ``n_rounds`` the last round that has a transmission (empty tail rounds dropped).

        Certificates store exactly this count (see :func:`synth.check.base_json.base_from_json`).
        """
        last = int(self.round.max()) if self.round.size else self.n_rounds
        if last == self.n_rounds:
            return self
        return replace(self, n_rounds=last)

    def grouped(self):
        """Index arrays of transmissions sharing (round, component, op, route length), in that order."""
        lengths = self.route_lengths
        span = int(lengths.max()) + 1 if lengths.size else 1
        if float(self.n_rounds + 1) * self.n_components * 2 * span < 2.0 ** 62:
            # one int64 key sorted stably: the order of the lexsort below, several times faster on millions of rows
            key = ((self.round.astype(np.int64) * self.n_components + self.component) * 2 + self.op) * span + lengths
            order = np.argsort(key, kind="stable")
            cut = np.flatnonzero(np.diff(key[order]) != 0) + 1
            return [p for p in np.split(order, cut) if p.size]
        keys = np.stack([self.round, self.component, self.op, self.route_lengths], axis=1)
        order = np.lexsort(keys.T[::-1])
        sk = keys[order]
        cut = np.flatnonzero(np.any(np.diff(sk, axis=0) != 0, axis=1)) + 1
        return [p for p in np.split(order, cut) if p.size]


@dataclass(frozen=True, eq=False)
class Block:
    """Transmissions of one round with one op and one route length.

    ``links[i]`` is the route of transmission ``i`` (``L`` link ids); its sender
    is ``link_src[links[i, 0]]`` and its receiver ``link_dst[links[i, -1]]``.
    """

    round: int
    op: int
    chunk: np.ndarray
    links: np.ndarray

    def __len__(self):
        return int(self.chunk.size)


@dataclass(frozen=True, eq=False)
class Schedule:
    """An explicit schedule: every transmission of every chunk, in blocks sorted by round.

    ``collective`` and ``owner`` (one compute vertex per chunk, reduce-scatter and allgather
    only) as in :class:`BaseSchedule`.
    """

    topology: Topology
    n_chunks: int
    n_rounds: int
    blocks: tuple
    collective: str = ALLREDUCE
    owner: np.ndarray | None = None

    def __post_init__(self):
        object.__setattr__(self, "owner", check_owners(self.topology, self.collective, self.owner, self.n_chunks))
        rounds = [b.round for b in self.blocks]
        if rounds != sorted(rounds):
            raise ScheduleError("blocks must be sorted by round")
        for b in self.blocks:
            if not 1 <= b.round <= self.n_rounds:
                raise ScheduleError(f"round {b.round} lies outside 1..{self.n_rounds}")
            if b.op not in (REDUCE, COPY):
                raise ScheduleError("op must be reduce or copy")
            if b.links.ndim != 2 or b.links.shape[0] != b.chunk.size or b.links.shape[1] < 1:
                raise ScheduleError("a block's routes must form a non-empty T x L array")

    @property
    def n_transmissions(self) -> int:
        return sum(len(b) for b in self.blocks)

    def as_base(self, weights, labels=()) -> BaseSchedule:
        """The explicit schedule as a base schedule (chunk ``c`` is component ``c`` of weight ``weights[c]``), to lift
        by the trivial group: the inverse of :meth:`BaseSchedule.as_schedule`.

        >>> from synth.topology.torus import parse_torus
        >>> t = parse_torus("3")
        >>> e01, e12 = t.link_ids([0, 1], [1, 2]).tolist()
        >>> b = BaseSchedule.from_rows(t, 2, [(0, 1, 0, 1, 0, [e01]), (0, 2, 1, 2, 1, [e12])], weights=(3,))
        >>> back = b.as_schedule().as_base([3])
        >>> back.src.tolist(), back.dst.tolist(), back.round.tolist(), back.weights.tolist()
        ([0, 1], [1, 2], [1, 2], [3])
        """
        blocks = self.blocks
        empty = np.zeros(0, dtype=np.int64)
        links = [b.links for b in blocks]
        first = np.concatenate([x[:, 0] for x in links]) if links else empty
        last = np.concatenate([x[:, -1] for x in links]) if links else empty
        lengths = np.concatenate([np.full(len(b), b.links.shape[1]) for b in blocks]) if blocks else empty
        ptr = np.concatenate([[0], np.cumsum(lengths)])
        return BaseSchedule(self.topology, self.n_rounds,
                            np.concatenate([b.chunk for b in blocks]) if blocks else empty,
                            np.concatenate([np.full(len(b), b.round) for b in blocks]) if blocks else empty,
                            self.topology.link_src[first], self.topology.link_dst[last],
                            np.concatenate([np.full(len(b), b.op) for b in blocks]) if blocks else empty, ptr,
                            np.concatenate([x.ravel() for x in links]) if links else empty, np.asarray(weights),
                            tuple(labels), self.collective, self.owner)

    def rounds(self):
        """Yield ``(round, [blocks])`` for every round that has transmissions."""
        i, blocks = 0, self.blocks
        while i < len(blocks):
            j = i
            while j < len(blocks) and blocks[j].round == blocks[i].round:
                j += 1
            yield blocks[i].round, blocks[i:j]
            i = j
