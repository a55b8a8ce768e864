"""Packed messages and the chunk layout shared by the MPI executor and the MSCCL export.

An explicit :class:`~synth.schedule.Schedule` lists transmissions one chunk at a time.
Engines move *messages*: the transmissions of one round with the same sender, receiver
and route pack into one message (docs/spec.md §1), so in SP-allreduce each directed link
carries one message per round, however many chunks it holds.

:func:`build_plan` flattens a schedule onto ranks (rank ``r`` is compute vertex ``r``),
packs the messages and chooses a *layout*: the order of the chunks in the vector.  An
allreduce is elementwise, so any order is correct, and a good one makes packed messages
contiguous: a message whose chunks sit next to each other is sent from (and received
into) one slice.  The number of pieces of a message is its number of *runs*; the layout
maximizes the number of neighbouring chunk pairs that travel together (greedy maximum
weight path cover of the co-occurrence graph), which minimizes the total number of runs.
A reduce-scatter or allgather is not free to choose: its vector is the runtimes' (rank ``r``'s
block is the ``r``-th ``p``-th), so its layout is always ``"owner"`` (by owner rank, then chunk id,
:func:`synth.schedule.chunking.chunk_offsets`), and its chunk sizes are equal blocks
(:func:`run_chunk_sizes`).

Examples
--------
>>> from synth import lift, parse_torus, sp_allreduce, torus_gamma  # the public names
>>> t = parse_torus("4x4")
>>> plan = build_plan(lift(sp_allreduce(t), torus_gamma(t)))
>>> plan.n_ranks, plan.n_messages, plan.n_transmissions
(16, 512, 1920)
>>> plan.total_runs() < plan.total_runs(layout="identity")
True
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from synth.check.certificate import read_certificate
from synth.check.claims import file_kind
from synth.check.explicit import read_explicit
from synth.errors import ScheduleError
from synth.schedule.lift import lift, lifted_weights
from synth.schedule import COPY, REDUCE, Schedule, block_chunk_elements, chunk_elements
from synth.topology.base import count_of

__all__ = ["Plan", "build_plan", "flatten", "transmission_links", "greedy_layout", "message_runs", "load_schedule",
           "LAYOUTS", "owner_layout", "run_chunk_sizes"]

LAYOUTS = ("greedy", "identity")
_NEIGHBOURS = 8  # candidate edges kept per chunk for the greedy path cover
_WINDOW = 24  # pairs per chunk considered inside a message (bounds the work on huge messages)


def load_schedule(source, max_transmissions: int | None = None):
    """``(schedule, weights, label)`` from anything that names a schedule.

    ``source`` may be a path to a certificate or an explicit file, a
    :class:`~synth.check.certificate.Certificate`, a :class:`~synth.baselines.Baseline`
    (anything with ``.schedule`` and ``.weights``), a :class:`~synth.schedule.Schedule`
    (equal chunks) or a ``(schedule, weights)`` pair.  ``weights`` are the relative chunk
    sizes (cut with :func:`synth.schedule.chunk_elements`); an explicit file's own chunk
    sizes serve as its weights.  ``max_transmissions``: a schedule with more is refused
    (:class:`~synth.errors.ScheduleError`, naming the parameter), a certificate's before it is lifted.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> from synth.baselines import build_baseline
    >>> s, w, label = load_schedule(build_baseline("swing-l", parse_torus("4x4")))
    >>> s.n_chunks, w.tolist(), label
    (4, [1, 1, 1, 1], 'baseline swing-l')
    """
    if isinstance(source, (str, os.PathLike)):
        return _load_path(source, max_transmissions)
    if isinstance(source, Schedule):
        _at_most(source.n_transmissions, max_transmissions)
        return source, np.ones(source.n_chunks, dtype=np.int64), "schedule"
    if isinstance(source, tuple) and len(source) == 2 and isinstance(source[0], Schedule):
        _at_most(source[0].n_transmissions, max_transmissions)
        return source[0], _weights(source[1], source[0].n_chunks), "schedule"
    if hasattr(source, "base") and hasattr(source, "group"):
        _at_most(source.base.n_transmissions * source.group.order, max_transmissions)   # before the lift
        label = str((getattr(source, "provenance", {}) or {}).get("algorithm") or "certificate")
        schedule = lift(source.base, source.group, getattr(source, "dropped", ()))
        if schedule.collective != "allreduce":  # the algorithm names the construction; say which half this is
            label = f"{schedule.collective} half of {label}"
        return schedule, lifted_weights(source.base, source.group), label
    if hasattr(source, "schedule") and hasattr(source, "weights"):
        _at_most(source.schedule.n_transmissions, max_transmissions)
        name = getattr(source, "name", "")
        return source.schedule, _weights(source.weights, source.schedule.n_chunks), f"baseline {name}".strip()
    raise ScheduleError(f"cannot take a schedule from a {type(source).__name__}")


def _weights(weights, n_chunks):
    w = np.asarray(weights, dtype=np.int64).ravel()
    if w.size != n_chunks or np.any(w < 0) or int(w.sum()) <= 0:
        raise ScheduleError(f"need {n_chunks} non-negative chunk weights with a positive sum")
    return w


def _at_most(n: int, max_transmissions: int | None) -> None:
    if max_transmissions is not None and n > max_transmissions:
        raise ScheduleError(f"the schedule has {n:,} transmissions, over `max_transmissions` {max_transmissions:,}")


def _load_path(path, max_transmissions=None):
    if file_kind(path) == "explicit":
        schedule, sizes, _ = read_explicit(path)
        _at_most(schedule.n_transmissions, max_transmissions)
        if int(sizes.sum()) <= 0:
            sizes = np.ones(schedule.n_chunks, dtype=np.int64)
        return schedule, _weights(sizes, schedule.n_chunks), f"explicit file {os.path.basename(str(path))}"
    cert = read_certificate(path)
    schedule, weights, label = load_schedule(cert, max_transmissions)
    return schedule, weights, f"{label} ({os.path.basename(str(path))})"


def transmission_links(schedule: Schedule):
    """Every transmission as ``(round, op, chunk, links)``: int arrays and its route as a row of link ids.

    ``links`` is padded with ``-1`` to the longest route; :func:`flatten` numbers its distinct rows
    (the routes) in the order of ``numpy.unique(links, axis=0)``, or by link id when every route is
    one link.
    """
    blocks = [b for b in schedule.blocks if len(b)]
    if not blocks:
        z = np.zeros(0, dtype=np.int64)
        return z, z.astype(np.int8), z, np.zeros((0, 1), dtype=np.int64)
    lmax = max(b.links.shape[1] for b in blocks)
    rnd = np.concatenate([np.full(len(b), b.round, dtype=np.int64) for b in blocks])
    op = np.concatenate([np.full(len(b), b.op, dtype=np.int8) for b in blocks])
    chunk = np.concatenate([b.chunk.astype(np.int64) for b in blocks])
    links = np.full((rnd.size, lmax), -1, dtype=np.int64)
    at = 0
    for b in blocks:
        links[at:at + len(b), :b.links.shape[1]] = b.links
        at += len(b)
    return rnd, op, chunk, links


def flatten(schedule: Schedule):
    """Every transmission as flat int arrays ``(round, op, chunk, src, dst, route)`` on ranks.

    ``src``/``dst`` are ranks (indices into ``topology.compute``); ``route`` numbers the
    distinct routes (link sequences), so two transmissions share a message exactly when
    they share ``(round, src, dst, route)``.

    Raises
    ------
    ScheduleError
        If a transmission starts or ends at a vertex that holds no data, or at its own sender.
    """
    t = schedule.topology
    rank_of = np.full(t.n_vertices, -1, dtype=np.int64)
    rank_of[t.compute] = np.arange(t.n_compute)
    rnd, op, chunk, links = transmission_links(schedule)
    if not rnd.size:
        z = np.zeros(0, dtype=np.int64)
        return z, z.astype(np.int8), z, z, z, z
    lmax = links.shape[1]
    if chunk.size and (chunk.min() < 0 or chunk.max() >= schedule.n_chunks):
        raise ScheduleError(f"a chunk id lies outside 0..{schedule.n_chunks - 1}")
    if links.max() >= t.n_links:
        raise ScheduleError("a route uses a link id outside the topology")
    src = rank_of[t.link_src[links[:, 0]]]
    last = links[np.arange(rnd.size), (links >= 0).sum(axis=1) - 1]
    dst = rank_of[t.link_dst[last]]
    if np.any(src < 0) or np.any(dst < 0):
        raise ScheduleError("a transmission starts or ends at a vertex that holds no data")
    if np.any(src == dst):
        raise ScheduleError("a transmission goes from a node to itself")
    if lmax == 1:
        route = links[:, 0]
    else:
        _, route = np.unique(links, axis=0, return_inverse=True)
        route = route.ravel()
    return rnd, op, chunk, src, dst, route.astype(np.int64)


def _group_starts(keys):
    """Boolean mask of the rows of a lexicographically sorted key matrix that start a new group."""
    if keys.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    new = np.ones(keys.shape[0], dtype=bool)
    new[1:] = np.any(keys[1:] != keys[:-1], axis=1)
    return new


def _pairs_within(ptr, window=None):
    """Index pairs ``(i, j)``, ``i < j <= i + window``, inside each CSR group ``ptr`` (vectorized)."""
    sizes = np.diff(ptr)
    if int(sizes.sum()) == 0 or int(sizes.max()) < 2:
        z = np.zeros(0, dtype=np.int64)
        return z, z
    # for each element i of a group, the partners j > i in the same group
    idx = np.arange(ptr[-1], dtype=np.int64)
    group = np.repeat(np.arange(sizes.size), sizes)
    after = ptr[group + 1] - idx - 1  # number of partners of element idx
    if window is not None:
        after = np.minimum(after, window)
    first = np.repeat(idx, after)
    offs = np.arange(int(after.sum()), dtype=np.int64) - np.repeat(np.cumsum(after) - after, after)
    return first, first + 1 + offs


def greedy_layout(n_chunks: int, members, ptr) -> np.ndarray:
    """A chunk order that keeps chunks travelling together next to each other.

    Parameters
    ----------
    n_chunks : int
    members : numpy.ndarray
        Chunk ids of every message, grouped by message (CSR with ``ptr``).
    ptr : numpy.ndarray
        ``members[ptr[m]:ptr[m+1]]`` are the chunks of message ``m``.

    Returns
    -------
    numpy.ndarray
        ``order[k]`` is the chunk placed ``k``-th.  Greedy maximum-weight path cover of the
        graph whose edge ``{a, b}`` weighs the number of messages carrying both chunks;
        each edge kept between neighbours saves one run in each of those messages.

    Examples
    --------
    >>> greedy_layout(4, np.array([0, 2, 0, 2, 1, 3]), np.array([0, 2, 4, 6])).tolist()
    [0, 2, 1, 3]
    """
    order_default = np.arange(n_chunks, dtype=np.int64)
    i, j = _pairs_within(np.asarray(ptr, dtype=np.int64), _WINDOW)
    if i.size == 0 or n_chunks < 3:
        return order_default
    adj, deg = _path_cover(n_chunks, *_heaviest_edges(n_chunks, members[i], members[j]))
    out, seen = [], np.zeros(n_chunks, dtype=bool)
    for c in range(n_chunks):  # walk every path from its lower-numbered end
        if seen[c] or deg[c] == 2:
            continue
        prev, cur = -1, c
        while cur != -1:
            out.append(cur)
            seen[cur] = True
            nxt = -1
            for w in adj[cur]:
                if w != prev:
                    nxt = w
            prev, cur = cur, nxt
    return np.asarray(out, dtype=np.int64) if len(out) == n_chunks else order_default


def _heaviest_edges(n_chunks, a, b):
    """``(lo, hi, weight)``: the edges between chunks ``a[k]`` and ``b[k]`` that travel together, weighted by
    how often, keeping the heaviest few per chunk (the greedy uses at most two per chunk)."""
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keep = lo != hi
    key, weight = np.unique(lo[keep] * n_chunks + hi[keep], return_counts=True)
    lo, hi = key // n_chunks, key % n_chunks
    ends = np.concatenate([lo, hi])
    w2 = np.concatenate([weight, weight])
    eid = np.concatenate([np.arange(key.size), np.arange(key.size)])
    o = np.lexsort((eid, -w2, ends))
    ends_s = ends[o]
    start = np.searchsorted(ends_s, ends_s, side="left")
    rank_in = np.arange(ends_s.size) - start
    chosen = np.unique(eid[o][rank_in < _NEIGHBOURS])
    return lo[chosen], hi[chosen], weight[chosen]


def _path_cover(n_chunks, lo, hi, weight):
    """Greedy maximum-weight path cover: ``(adj, deg)``, the neighbours and degree of every chunk."""
    order = np.lexsort((hi, lo, -weight))
    deg = np.zeros(n_chunks, dtype=np.int8)
    parent = list(range(n_chunks))
    adj = [[] for _ in range(n_chunks)]

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    used = 0
    for e in order.tolist():
        u, v = int(lo[e]), int(hi[e])
        if deg[u] >= 2 or deg[v] >= 2:
            continue
        ru, rv = find(u), find(v)
        if ru == rv:
            continue
        parent[ru] = rv
        deg[u] += 1
        deg[v] += 1
        adj[u].append(v)
        adj[v].append(u)
        used += 1
        if used == n_chunks - 1:
            break
    return adj, deg


def message_runs(position, ptr):
    """Number of runs of each message: maximal sets of chunks at consecutive positions.

    ``position`` holds the layout position of every member, sorted within each message.

    >>> message_runs(np.array([0, 1, 3, 5, 6]), np.array([0, 3, 5])).tolist()
    [2, 1]
    """
    position = np.asarray(position)
    if position.size == 0:
        return np.zeros(len(ptr) - 1, dtype=np.int64)
    brk = np.ones(position.size, dtype=np.int64)
    brk[1:] = position[1:] != position[:-1] + 1
    brk[np.asarray(ptr[:-1])[np.diff(ptr) > 0]] = 1
    csum = np.concatenate([[0], np.cumsum(brk)])
    return csum[ptr[1:]] - csum[ptr[:-1]]


@dataclass(frozen=True, eq=False)
class Plan:
    """A schedule packed into messages on ranks, with a chunk layout.

    Attributes
    ----------
    n_ranks, n_chunks, n_rounds : int
    t_round, t_op, t_chunk, t_src, t_dst : numpy.ndarray
        int64 (``t_op`` int8) per transmission, sorted by message and, inside a message,
        by layout position of the chunk.
    m_round, m_src, m_dst, m_route : numpy.ndarray
        int64 per message, sorted by ``(round, src, dst, route)``.
    m_ptr : numpy.ndarray
        CSR pointer: message ``m`` is transmissions ``m_ptr[m]:m_ptr[m+1]``.
    order : numpy.ndarray
        The layout: ``order[k]`` is the chunk at position ``k``.
    layout : str
        How ``order`` was chosen.
    """

    n_ranks: int
    n_chunks: int
    n_rounds: int
    t_round: np.ndarray
    t_op: np.ndarray
    t_chunk: np.ndarray
    t_src: np.ndarray
    t_dst: np.ndarray
    m_round: np.ndarray
    m_src: np.ndarray
    m_dst: np.ndarray
    m_route: np.ndarray
    m_ptr: np.ndarray
    order: np.ndarray
    layout: str

    n_messages = count_of("m_round", "Number of messages.")
    n_transmissions = count_of("t_round", "Number of transmissions (chunk moves) packed into the messages.")

    @cached_property
    def position(self) -> np.ndarray:
        """``position[c]``: where chunk ``c`` sits in the layout."""
        pos = np.empty(self.n_chunks, dtype=np.int64)
        pos[self.order] = np.arange(self.n_chunks)
        return pos

    @cached_property
    def t_msg(self) -> np.ndarray:
        """Message id of every transmission."""
        return np.repeat(np.arange(self.n_messages), np.diff(self.m_ptr))

    def offsets(self, sizes) -> np.ndarray:
        """Start of every chunk in a vector laid out by this plan, for chunk sizes ``sizes``.

        >>> from synth.topology.torus import parse_torus
        >>> from synth.baselines import build_baseline
        >>> p = build_plan(build_baseline("ring", parse_torus("3")).schedule, layout="identity")
        >>> p.offsets([2, 2, 2, 2, 2, 2]).tolist()
        [0, 2, 4, 6, 8, 10]
        """
        sizes = np.asarray(sizes, dtype=np.int64)
        if sizes.size != self.n_chunks:
            raise ScheduleError(f"{sizes.size} chunk sizes given for {self.n_chunks} chunks")
        start = np.zeros(self.n_chunks, dtype=np.int64)
        start[self.order] = np.concatenate([[0], np.cumsum(sizes[self.order])[:-1]]) if self.n_chunks else []
        return start

    def runs(self) -> np.ndarray:
        """Number of contiguous pieces of every message under this plan's layout."""
        return message_runs(self.position[self.t_chunk], self.m_ptr)

    def total_runs(self, layout: str | None = None) -> int:
        """Sum of :meth:`runs`; with ``layout``, of the same messages under another layout."""
        if layout is None or layout == self.layout:
            return int(self.runs().sum())
        order = _layout(layout, self.n_chunks, self.t_chunk, self.m_ptr)
        pos = np.empty(self.n_chunks, dtype=np.int64)
        pos[order] = np.arange(self.n_chunks)
        p = pos[self.t_chunk]
        srt = np.lexsort((p, self.t_msg))
        return int(message_runs(p[srt], self.m_ptr).sum())


def owner_layout(schedule: Schedule) -> np.ndarray:
    """The runtimes' layout of a reduce-scatter or allgather: chunks by owner rank, then chunk id."""
    t = schedule.topology
    rank = np.full(t.n_vertices, -1, dtype=np.int64)
    rank[t.compute] = np.arange(t.n_compute)
    return np.lexsort((np.arange(schedule.n_chunks), rank[schedule.owner])).astype(np.int64)


def run_chunk_sizes(schedule: Schedule, weights, elements: int) -> np.ndarray:
    """Chunk sizes for ``elements`` per rank: proportional to ``weights``, or equal blocks per owner."""
    if schedule.owner is None:
        return chunk_elements(weights, int(elements))
    return block_chunk_elements(schedule.owner, weights, schedule.topology.compute, int(elements))


def _layout(layout, n_chunks, members, ptr):
    if layout == "identity":
        return np.arange(n_chunks, dtype=np.int64)
    if layout == "greedy":
        return greedy_layout(n_chunks, members, ptr)
    raise ScheduleError(f"unknown layout {layout!r}; valid: {', '.join(LAYOUTS)}")


def build_plan(schedule: Schedule, layout: str = "greedy") -> Plan:
    """Pack ``schedule`` into messages and choose the chunk layout (see the module docstring).

    Raises
    ------
    ScheduleError
        For a malformed schedule or an unknown ``layout``.
    """
    if layout not in LAYOUTS:
        raise ScheduleError(f"unknown layout {layout!r}; valid: {', '.join(LAYOUTS)}")
    rnd, op, chunk, src, dst, route = flatten(schedule)
    if not np.isin(op, (REDUCE, COPY)).all():
        raise ScheduleError("op must be reduce or copy")
    keys = np.stack([rnd, src, dst, route], axis=1)
    srt = np.lexsort((chunk, route, dst, src, rnd))
    keys = keys[srt]
    new = _group_starts(keys)
    ptr = np.append(np.flatnonzero(new), keys.shape[0]).astype(np.int64)
    if schedule.owner is not None:  # the vector of a reduce-scatter or allgather is the runtimes' (docstring)
        order, layout = owner_layout(schedule), "owner"
    else:
        order = _layout(layout, schedule.n_chunks, chunk[srt], ptr)
    pos = np.empty(schedule.n_chunks, dtype=np.int64)
    pos[order] = np.arange(schedule.n_chunks)
    msg = np.cumsum(new) - 1
    srt2 = np.lexsort((pos[chunk[srt]], msg))
    srt = srt[srt2]
    mk = keys[ptr[:-1]] if ptr.size > 1 else np.zeros((0, 4), dtype=np.int64)
    return Plan(int(schedule.topology.n_compute), int(schedule.n_chunks), int(schedule.n_rounds),
                rnd[srt], op[srt], chunk[srt], src[srt], dst[srt],
                mk[:, 0].copy(), mk[:, 1].copy(), mk[:, 2].copy(), mk[:, 3].copy(), ptr, order, layout)
