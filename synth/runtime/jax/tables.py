"""The static index tables of the JAX executor: rounds split into permutations, rows to send and to receive.

Everything here is numpy and runs once per schedule; :mod:`synth.runtime.jax.executor` turns the
tables into one traced program that every device runs (device ``r`` is compute vertex ``r``).

* **Rows.** The vector of every device is cut into ``W`` rows of equal length, ``W`` the sum of
  the chunk weights, plus one *trash* row (index ``W``): chunk ``c`` owns ``w_c`` consecutive rows,
  the chunks in the order of the layout of :func:`synth.runtime.plan.build_plan`.  So chunk sizes
  are exactly proportional to the weights (the vector is padded with zeros up to a multiple of
  ``W``) and the tables count rows, not elements: they do not depend on the vector's length.
* **Blocks.** A reduce-scatter or allgather has the runtimes' vector (:mod:`synth.schedule.data`):
  device ``r``'s block is the contiguous ``r``-th ``p``-th, its chunks laid out by owner rank.
  Every block gets the same ``R`` rows (``block_rows``), ``R`` the largest weight one device
  owns, cut over the device's chunks in proportion to their weights (:func:`chunk_rows`; when
  every device owns the same weight, as under a torus's group, chunk ``c`` has ``w_c`` rows as
  above); ``W = pR``, and each block is padded with zeros to ``R`` rows on its own, so block
  ``r`` is rows ``rR .. rR + R - 1``.  How the rows of one block split over its chunks does not
  change the result, only the balance of the messages.
* **Pairs.** The packed messages of :mod:`synth.runtime.plan` that share a round, a sender and a
  receiver travel as one buffer (only the endpoints matter for the data: routes through switches,
  or two routes between the same pair, merge).
* **Permutations.** A round's pairs form a bipartite graph, senders against receivers; a set of
  pairs in which every device sends at most once and receives at most once is one
  ``jax.lax.ppermute``.  :func:`split_permutations` colours the pairs with exactly as many
  colours as the largest number of pairs at one device (König's edge-colouring theorem), so a
  round needs no more ppermutes than its busiest device has partners.  All buffers of one
  permutation have one shape: a shorter message is padded with the trash row.
* **Tables.** Per round, ``send[r]`` lists the rows device ``r`` reads (at the start of the round)
  into the round's concatenated send buffer, and ``add[r]`` / ``put[r]`` the rows into which it
  adds (reduce) or writes (copy) what it receives at the same positions; unused positions point
  to the trash row.

Examples
--------
>>> from synth import lift, parse_torus, sp_allreduce, torus_gamma  # the public names
>>> t = parse_torus("4x4")
>>> tab = build_tables(lift(sp_allreduce(t), torus_gamma(t)))
>>> tab.n_devices, tab.n_rounds, tab.n_rows, tab.n_permutations
(16, 8, 64, 32)
>>> tab.n_permutations == tab.permutation_lower_bound, tab.padding
(True, 1.0)

The reduce-scatter half of the same construction: 4 rounds, each device owns 4 rows.

>>> from synth.schedule.collective import collective_half
>>> rs = build_tables(lift(collective_half(sp_allreduce(t), "reduce-scatter"), torus_gamma(t)))
>>> rs.collective, rs.n_rounds, rs.n_rows, rs.block_rows, rs.n_permutations
('reduce-scatter', 4, 64, 4, 16)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.errors import ScheduleError
from synth.runtime.plan import build_plan, load_schedule
from synth.schedule import COPY, REDUCE, block_chunk_elements

__all__ = ["RoundTables", "JaxTables", "build_tables", "split_permutations", "chunk_rows"]


def split_permutations(src, dst, lengths=None) -> np.ndarray:
    """A colour for every pair ``src[i] -> dst[i]`` such that pairs of one colour form a permutation.

    Within a colour no device sends twice and none receives twice.  The number of colours is the
    largest number of pairs that leave or enter one device, the least possible (König's theorem:
    colour the pairs one by one; when the sender's and the receiver's free colours differ, swap
    the two colours along the alternating path from the receiver, which never reaches the sender).
    Pairs are coloured longest first, each into a colour already holding pairs of its length when
    one is free, so that a colour's buffers tend to have one length (less padding).

    Parameters
    ----------
    src, dst : array_like of int
        Sender and receiver of every pair; no pair may repeat.
    lengths : array_like of int, optional
        Buffer length of every pair (default all equal).

    Returns
    -------
    numpy.ndarray
        int64 colour of every pair, ``0 .. max_degree - 1``.

    Examples
    --------
    >>> split_permutations([0, 0, 1, 2], [1, 2, 2, 0]).tolist()
    [0, 1, 0, 0]
    """
    src = np.asarray(src, dtype=np.int64).ravel()
    dst = np.asarray(dst, dtype=np.int64).ravel()
    if src.size == 0:
        return np.zeros(0, dtype=np.int64)
    if np.unique(src * (int(dst.max()) + 1) + dst).size != src.size:
        raise ScheduleError("split_permutations: a pair repeats")
    lengths = np.zeros(src.size, dtype=np.int64) if lengths is None else np.asarray(lengths, dtype=np.int64)
    n = int(max(src.max(), dst.max())) + 1
    degree = int(max(np.bincount(src, minlength=n).max(), np.bincount(dst, minlength=n).max()))
    # plain lists: the loop looks at a few entries per pair, where numpy's per-call cost would dominate
    out_at = [[-1] * degree for _ in range(n)]  # out_at[u][c]: the pair of colour c leaving u
    in_at = [[-1] * degree for _ in range(n)]  # in_at[v][c]: the pair of colour c entering v
    s_, d_, ln = src.tolist(), dst.tolist(), lengths.tolist()
    colour = [-1] * len(s_)
    colour_length = [-1] * degree
    for e in np.lexsort((np.arange(src.size), -lengths)).tolist():
        u, v = s_[e], d_[e]
        out_u, in_v = out_at[u], in_at[v]
        common = [c for c in range(degree) if out_u[c] < 0 and in_v[c] < 0]
        if common:
            same = [c for c in common if colour_length[c] == ln[e]]
            fresh = [c for c in common if colour_length[c] < 0]
            c = (same or fresh or common)[0]
        else:
            a = out_u.index(-1)  # free at u, taken at v
            b = in_v.index(-1)  # free at v, taken at u
            path, node, at_receiver, want = [], v, True, a
            while True:
                f = in_at[node][want] if at_receiver else out_at[node][want]
                if f < 0:
                    break
                path.append(f)
                node = s_[f] if at_receiver else d_[f]
                at_receiver, want = not at_receiver, (b if want == a else a)
            for f in path:
                out_at[s_[f]][colour[f]] = -1
                in_at[d_[f]][colour[f]] = -1
            for f in path:
                colour[f] = b if colour[f] == a else a
                out_at[s_[f]][colour[f]] = f
                in_at[d_[f]][colour[f]] = f
            c = a
        colour[e] = c
        out_u[c] = e
        in_v[c] = e
        colour_length[c] = max(colour_length[c], ln[e])
    colour = np.asarray(colour, dtype=np.int64)
    return colour


@dataclass(frozen=True, eq=False)
class RoundTables:
    """One round: its permutations and the rows every device sends and receives.

    Attributes
    ----------
    round : int
        The schedule's round number.
    perms : tuple of (tuple of (int, int), int, int)
        ``(pairs, offset, length)`` of every ppermute: ``pairs`` its ``(sender, receiver)``
        devices, its buffer the rows ``offset : offset + length`` of the round's send buffer.
    send : numpy.ndarray
        int32 ``(p, L)``: the rows device ``r`` gathers into the round's send buffer.
    add, put : numpy.ndarray or None
        int32 ``(p, L)``: the rows device ``r`` adds the received buffer into (reduce) or writes
        it to (copy); None when the round has no transmission of that kind.
    """

    round: int
    perms: tuple
    send: np.ndarray
    add: np.ndarray | None
    put: np.ndarray | None

    @property
    def length(self) -> int:
        return int(self.send.shape[1])


@dataclass(frozen=True, eq=False)
class JaxTables:
    """A schedule as the JAX executor runs it (see the module docstring).

    Attributes
    ----------
    label : str
    n_devices, n_chunks, n_rounds, n_messages : int
        From the packed plan; ``n_rounds`` counts the schedule's rounds, empty ones included.
    n_rows : int
        ``W``, the sum of the chunk weights; row ``W`` is the trash row.
    rounds : tuple of RoundTables
        The rounds that move data, in order.
    sent_rows, padded_rows : int
        Rows the schedule moves between devices, and rows the ppermutes carry (with padding).
    permutation_lower_bound : int
        Sum over rounds of the largest number of partners of one device: no split into
        permutations has fewer (``n_permutations`` meets it).
    collective : str
        ``"allreduce"``, ``"reduce-scatter"`` or ``"allgather"`` (:mod:`synth.schedule.data`).
    block_rows : int
        ``R``, the rows of every device's block (``n_rows == n_devices * R``); 0 for an allreduce.
    """

    label: str
    n_devices: int
    n_chunks: int
    n_rounds: int
    n_messages: int
    n_rows: int
    rounds: tuple
    sent_rows: int
    padded_rows: int
    permutation_lower_bound: int
    collective: str = "allreduce"
    block_rows: int = 0

    @property
    def n_permutations(self) -> int:
        """Number of ``ppermute`` calls in one run of the collective."""
        return sum(len(r.perms) for r in self.rounds)

    @property
    def padding(self) -> float:
        """Rows carried over rows needed (1.0: no padding)."""
        return self.padded_rows / self.sent_rows if self.sent_rows else 1.0

    @property
    def table_entries(self) -> int:
        """int32 entries of all tables (the traced program's constants)."""
        return sum(r.send.size + (r.add.size if r.add is not None else 0) + (r.put.size if r.put is not None else 0)
                   for r in self.rounds)

    def row_length(self, n_elements: int) -> int:
        """Elements per row for a vector of ``n_elements``: ``ceil(n_elements / W)``, at least 1.

        For a reduce-scatter or allgather ``n_elements`` is the whole vector (``p`` blocks), so a
        block of ``n_elements / p`` fills its ``R`` rows: ``ceil(n_elements / (pR))`` again.
        """
        return max(1, -(-int(n_elements) // self.n_rows))


def chunk_rows(schedule, weights) -> tuple:
    """``(rows, R)``: the rows of every chunk, and of every device's block (0 for an allreduce).

    An allreduce's chunk ``c`` has ``w_c`` rows.  A reduce-scatter's or allgather's blocks all
    have ``R`` rows, ``R`` the largest weight one device owns, cut over each device's chunks in
    proportion to their weights by :func:`synth.schedule.block_chunk_elements` (every chunk gets
    at least one row, since ``R`` is at least the device's weight).

    Raises
    ------
    ScheduleError
        If a compute node owns no chunk (its block would have nowhere to go).

    Examples
    --------
    >>> from synth.baselines import build_baseline
    >>> from synth.baselines.halves import baseline_half
    >>> from synth.topology.torus import parse_torus
    >>> rs = baseline_half(build_baseline("ring", parse_torus("3")), "reduce-scatter").schedule
    >>> rs.owner.tolist()
    [0, 1, 2, 0, 1, 2]
    >>> rows, R = chunk_rows(rs, [1, 1, 1, 3, 1, 1])
    >>> rows.tolist(), R
    ([1, 2, 2, 3, 2, 2], 4)
    """
    weights = np.asarray(weights, dtype=np.int64)
    if schedule.owner is None:
        return weights, 0
    t = schedule.topology
    owner = np.asarray(schedule.owner, dtype=np.int64)
    owned = np.bincount(owner, weights=weights, minlength=t.n_vertices).astype(np.int64)[t.compute]
    R = int(owned.max())
    if np.all(owned == R):  # every device owns the same weight: a row per unit of weight
        return weights, R
    return block_chunk_elements(owner, weights, t.compute, t.n_compute * R), R


def _pair_rows(plan, weights, row0):
    """Per unit row moved: its row, op, pair id; and per pair: round, sender, receiver, length."""
    t_w = weights[plan.t_chunk]
    n = int(t_w.sum())
    t_start = np.repeat(np.cumsum(t_w) - t_w, t_w)
    rows = np.repeat(row0[plan.t_chunk], t_w) + (np.arange(n, dtype=np.int64) - t_start)
    ops = np.repeat(plan.t_op, t_w)
    keys = np.stack([plan.m_round, plan.m_src, plan.m_dst], axis=1)
    new = np.ones(plan.n_messages, dtype=bool)
    new[1:] = np.any(keys[1:] != keys[:-1], axis=1)  # messages are sorted by (round, src, dst, route)
    m_pair = np.cumsum(new) - 1
    pair = np.repeat(np.repeat(m_pair, np.diff(plan.m_ptr)), t_w)
    first = np.flatnonzero(new)
    length = np.bincount(pair, minlength=first.size).astype(np.int64)
    return rows, ops, pair, keys[first], length


def build_tables(source, layout: str = "greedy") -> JaxTables:
    """The executor's tables for a schedule (anything :func:`~synth.runtime.plan.load_schedule` takes).

    Raises
    ------
    ScheduleError
        For a malformed schedule (see :func:`~synth.runtime.plan.build_plan`).
    """
    if isinstance(source, JaxTables):
        return source
    schedule, weights, label = load_schedule(source)
    plan = build_plan(schedule, layout)  # a reduce-scatter's or allgather's layout is by owner (the blocks)
    weights = np.asarray(weights, dtype=np.int64)
    if np.any(weights < 1):
        raise ScheduleError("the JAX executor needs positive chunk weights (every chunk at least one row)")
    weights, block = chunk_rows(schedule, weights)
    W = int(weights.sum())
    if W >= 2**31 - 1:
        raise ScheduleError(f"the chunk weights sum to {W}, beyond the executor's int32 row tables")
    p = plan.n_ranks
    row0 = np.empty(plan.n_chunks, dtype=np.int64)
    w_in_order = weights[plan.order]
    row0[plan.order] = np.cumsum(w_in_order) - w_in_order
    rows, ops, pair, pairs, length = _pair_rows(plan, weights, row0)
    pos = np.arange(rows.size, dtype=np.int64) - np.repeat(np.cumsum(length) - length, length)
    rounds, sent, padded, bound = [], 0, 0, 0
    pair_lo = np.searchsorted(pairs[:, 0], np.arange(1, plan.n_rounds + 2))
    row_lo = np.concatenate([[0], np.cumsum(length)])
    for r in range(1, plan.n_rounds + 1):
        lo, hi = int(pair_lo[r - 1]), int(pair_lo[r])
        if lo == hi:
            continue
        src, dst, ln = pairs[lo:hi, 1], pairs[lo:hi, 2], length[lo:hi]
        colour = split_permutations(src, dst, ln)
        n_col = int(colour.max()) + 1
        col_len = np.zeros(n_col, dtype=np.int64)
        np.maximum.at(col_len, colour, ln)
        offset = np.concatenate([[0], np.cumsum(col_len)])
        total = int(offset[-1])
        a, b = int(row_lo[lo]), int(row_lo[hi])
        local = pair[a:b] - lo
        column = offset[colour[local]] + pos[a:b]
        send = np.full((p, total), W, dtype=np.int32)
        send[src[local], column] = rows[a:b]
        tables = {}
        for name, op in (("add", REDUCE), ("put", COPY)):
            mine = ops[a:b] == op
            if mine.any():
                t = np.full((p, total), W, dtype=np.int32)
                t[dst[local[mine]], column[mine]] = rows[a:b][mine]
                tables[name] = t
        perms = tuple((tuple((int(s), int(d)) for s, d in zip(src[colour == c], dst[colour == c])),
                       int(offset[c]), int(col_len[c])) for c in range(n_col))
        rounds.append(RoundTables(r, perms, send, tables.get("add"), tables.get("put")))
        sent += int(ln.sum())
        padded += int(np.bincount(colour, minlength=n_col) @ col_len)
        bound += int(max(np.bincount(src).max(), np.bincount(dst).max()))
    return JaxTables(label, p, plan.n_chunks, plan.n_rounds, plan.n_messages, W, tuple(rounds), sent, padded, bound,
                     str(schedule.collective), block)
