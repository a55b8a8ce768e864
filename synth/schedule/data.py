"""Schedules as arrays: base schedules (one chunk per component) and explicit ones.

Semantics (SPEC section 1).  A transmission in round ``s`` sends the sender's
value of a chunk *as it was at the start of round s* along a route of directed
links; ``reduce`` adds it into the receiver's value, ``copy`` replaces it.

* :class:`BaseSchedule`: one or more *components*, each an allreduce of a
  single chunk (a tree, a forest plus exchange, ...), with an integer weight.
  Routes are stored in CSR form (``route_ptr``, ``route_links``).
* :class:`Schedule`: the explicit schedule, as :class:`Block` s of
  transmissions that share a round, an op and a route length, so that the
  routes of a block form a dense ``T x L`` array of link ids.

The schedules of a tree or a forest (parent arrays) are built in :mod:`synth.schedule.forest`.

Chunking: :func:`chunk_elements` cuts ``N`` elements into chunks proportional
to their weights; chunk ``c`` gets ``floor(N*U_{c+1}/U) - floor(N*U_c/U)``
elements, ``U_c`` the cumulative weight of the chunks before ``c``, so any
remainder is spread evenly over the chunk order and sizes differ from the
exact proportion by less than one element.

Examples
--------
>>> chunk_elements([1, 1, 1], 10).tolist()
[3, 3, 4]
>>> chunk_elements([2, 1], 6).tolist()
[4, 2]
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from synth.errors import ScheduleError
from synth.topology.base import Topology

__all__ = ["REDUCE", "COPY", "OPS", "BaseSchedule", "Block", "Schedule", "chunk_elements", "positive_chunks"]

REDUCE, COPY = 0, 1
OPS = ("reduce", "copy")


def chunk_elements(weights, n_elements: int) -> np.ndarray:
    """Integer elements per chunk for ``n_elements`` split proportionally to ``weights``.

    The arithmetic is exact: int64 when ``n_elements * sum(weights)`` provably fits, Python
    integers otherwise.  Sizes can be zero (fewer elements than weight); the checker refuses
    such chunks (:func:`positive_chunks`).

    Raises
    ------
    ScheduleError
        If a weight is not a positive integer or ``n_elements`` is negative.

    Examples
    --------
    >>> chunk_elements([2**57 + 1], 64).tolist()
    [64]
    >>> chunk_elements([1, 2**52], 2**52 + 1).tolist()
    [1, 4503599627370496]
    """
    if isinstance(n_elements, bool) or not isinstance(n_elements, (int, np.integer)):
        raise ScheduleError(f"the number of elements must be an integer, got {n_elements!r}")
    n = int(n_elements)
    w = [int(x) for x in np.asarray(weights).ravel().tolist()]
    if not w or min(w) < 1:
        raise ScheduleError("chunk weights must be positive")
    if n < 0:
        raise ScheduleError("the number of elements must be non-negative")
    total = sum(w)
    if n >= 1 << 62:
        raise ScheduleError(f"{n} elements is beyond the int64 range of chunk sizes")
    if n * total < 1 << 62:  # then every cumulative weight times n fits int64: no wrap is possible
        cum = np.concatenate([[0], np.cumsum(np.asarray(w, dtype=np.int64))])
        return np.diff(n * cum // total)
    cum, bounds = 0, [0]
    for x in w:
        cum += x
        bounds.append(n * cum // total)
    return np.diff(np.asarray(bounds, dtype=np.int64))  # each bound is at most n < 2**62


def positive_chunks(sizes, what: str = "chunk") -> None:
    """Refuse a chunk of zero or negative elements: it moves nothing and its loads prove nothing.

    Raises
    ------
    ScheduleError
        Naming the first such chunk.

    Examples
    --------
    >>> positive_chunks(chunk_elements([1, 1, 1], 2))
    Traceback (most recent call last):
    ...
    synth.errors.ScheduleError: chunk 0 gets 0 elements; every chunk needs at least one (use more elements)
    """
    sizes = np.asarray(sizes)
    if sizes.size and sizes.min() < 1:
        c = int(np.argmax(sizes < 1))
        raise ScheduleError(f"{what} {c} gets {int(sizes[c])} elements; every chunk needs at least one "
                            "(use more elements)")


def _check_routes(topology, src, dst, ptr, links):
    n = src.size
    lengths = np.diff(ptr)
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
        if n and not np.isin(self.op, (REDUCE, COPY)).all():
            raise ScheduleError("op must be reduce (0) or copy (1)")
        V = self.topology.n_vertices
        if n and (min(self.src.min(), self.dst.min()) < 0 or max(self.src.max(), self.dst.max()) >= V):
            raise ScheduleError("a sender or receiver is not a vertex of the topology")
        _check_routes(self.topology, self.src, self.dst, self.route_ptr, self.route_links)
        if not self.labels:
            object.__setattr__(self, "labels", tuple(f"component {i}" for i in range(self.weights.size)))

    @classmethod
    def from_rows(cls, topology, n_rounds, rows, weights=(1,), labels=()):
        """Build from rows ``(component, round, src, dst, op, route_links)``."""
        rows = list(rows)
        routes = [np.asarray(r[5], dtype=np.int64).ravel() for r in rows]
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([r.size for r in routes], out=ptr[1:])
        cols = np.array([r[:5] for r in rows], dtype=np.int64).reshape(-1, 5)
        links = np.concatenate(routes) if routes else np.zeros(0, dtype=np.int64)
        return cls(topology, int(n_rounds), cols[:, 0], cols[:, 1], cols[:, 2], cols[:, 3], cols[:, 4],
                   ptr, links, np.asarray(weights), tuple(labels))

    @property
    def n_components(self) -> int:
        return int(self.weights.size)

    @property
    def n_transmissions(self) -> int:
        return int(self.src.size)

    @property
    def route_lengths(self) -> np.ndarray:
        return np.diff(self.route_ptr)

    def route(self, i: int) -> np.ndarray:
        return self.route_links[self.route_ptr[i]:self.route_ptr[i + 1]]

    def route_matrix(self, idx) -> np.ndarray:
        """Routes of transmissions ``idx`` (all of one length) as a dense ``len(idx) x L`` array."""
        idx = np.asarray(idx)
        L = int(self.route_lengths[idx[0]])
        return self.route_links[self.route_ptr[idx][:, None] + np.arange(L)]

    def as_schedule(self) -> "Schedule":
        """The base schedule run on its own: component ``t`` is chunk ``t``."""
        blocks = []
        for part in self.grouped():
            blocks.append(Block(int(self.round[part[0]]), int(self.op[part[0]]),
                                self.component[part], self.route_matrix(part)))
        return Schedule(self.topology, self.n_components, self.n_rounds, tuple(blocks))

    def trimmed(self) -> "BaseSchedule":
        """The same schedule with ``n_rounds`` the last round that has a transmission (empty tail rounds dropped).

        Certificates store exactly this count (see :func:`synth.certificate.base_from_json`).
        """
        last = int(self.round.max()) if self.round.size else self.n_rounds
        if last == self.n_rounds:
            return self
        return replace(self, n_rounds=last)

    def grouped(self):
        """Index arrays of transmissions sharing (round, component, op, route length), in that order."""
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
    """An explicit schedule: every transmission of every chunk, in blocks sorted by round."""

    topology: Topology
    n_chunks: int
    n_rounds: int
    blocks: tuple

    def __post_init__(self):
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

    def rounds(self):
        """Yield ``(round, [blocks])`` for every round that has transmissions."""
        i, blocks = 0, self.blocks
        while i < len(blocks):
            j = i
            while j < len(blocks) and blocks[j].round == blocks[i].round:
                j += 1
            yield blocks[i].round, blocks[i:j]
            i = j
