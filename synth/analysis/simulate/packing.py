"""A schedule as flows for the simulator: packed messages, their routes, hosts and dependencies (numpy).

Messages are packed as in :mod:`synth.runtime.plan` (one per round, sender, receiver and route;
routes told apart by a verified 64-bit hash of their links, as ``numpy.unique`` over rows is slow).
Every message is one flow along its own route; SimGrid routes by host pair, so a sender whose
messages to one receiver take different routes gets one *alias* host per route (host ``v`` is
vertex ``v``; aliases are numbered from ``n_vertices``).

The dependencies are events with a count of prerequisites (:class:`Flows`):

* ``rounds``: a node starts round ``s`` once every message it sent or received in its
  previous active round is done.  Gate ``(u, s)`` fires when all of ``u``'s round-``s``
  messages are done and gate ``(u, s')`` of ``u``'s previous active round has fired; a
  message of round ``s`` from ``u`` waits for that previous gate.  A message starts when its
  sender enters its round (the receiver is assumed to have posted its buffers).
* ``deps``: a message starts once the data it carries is complete at its sender: every
  message that wrote one of its chunks at the sender in an earlier round is done.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.baselines import build_baseline
>>> b = build_baseline("ring", parse_torus("3"))
>>> f = pack(b.schedule, "rounds")
>>> f.n_messages, f.n_gates, f.n_hosts  # a ring both ways: 6 messages in each of 4 rounds
(24, 12, 3)
>>> pack(b.schedule, "deps").e_count.reshape(4, 6).tolist()  # prerequisites per round
[[0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2]]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.errors import OptionError, ScheduleError

__all__ = ["Flows", "pack", "MODES"]

MODES = ("rounds", "deps")


@dataclass(frozen=True, eq=False)
class Flows:
    """Messages as flows on hosts, and the event graph that starts them.

    Attributes
    ----------
    n_messages, n_gates, n_hosts, n_links : int
    m_route, m_hops, m_src, m_dst, m_round : numpy.ndarray
        Per message: SimGrid route id, its number of links, sender and receiver vertex, round.
    t_msg, t_chunk : numpy.ndarray
        Per transmission: its message and chunk (to sum the bytes of a message).
    r_src, r_dst, r_ptr, r_links : numpy.ndarray
        Per route: source and destination host, and its links (CSR ``r_ptr``).
    e_count, e_ptr, e_succ : numpy.ndarray
        Per event (messages ``0..M-1``, then gates): prerequisites, and successors (CSR).
    mode : str
    """

    n_messages: int
    n_gates: int
    n_hosts: int
    n_links: int
    m_route: np.ndarray
    m_hops: np.ndarray
    m_src: np.ndarray
    m_dst: np.ndarray
    m_round: np.ndarray
    t_msg: np.ndarray
    t_chunk: np.ndarray
    r_src: np.ndarray
    r_dst: np.ndarray
    r_ptr: np.ndarray
    r_links: np.ndarray
    e_count: np.ndarray
    e_ptr: np.ndarray
    e_succ: np.ndarray
    mode: str

    def message_elements(self, sizes) -> np.ndarray:
        """Elements of every message for chunk sizes ``sizes`` (int64; exact below 2^53 per message)."""
        sizes = np.asarray(sizes, dtype=np.int64)
        w = np.bincount(self.t_msg, weights=sizes[self.t_chunk], minlength=self.n_messages)
        return np.rint(w).astype(np.int64)


def _index_dtype(n):
    """The narrower of int32 and int64 that holds ``0..n``."""
    return np.int32 if n < 2**31 - 1 else np.int64


def _row_ids(rows):
    """Distinct rows of an int matrix: ``(ids, first)``, ids numbered by the ascending hash (or value)
    of their row, and the index of each id's first row.  Rows are told apart by a 64-bit hash,
    verified exactly column by column (a collision falls back to a lexsort); one-column rows by value."""
    n, width = rows.shape
    if width == 1:
        _, first, inv = np.unique(rows[:, 0], return_index=True, return_inverse=True)
        return inv.ravel(), first
    mult = np.random.default_rng(20261202).integers(1, 2**63, size=width, dtype=np.uint64) | np.uint64(1)
    with np.errstate(over="ignore"):
        h = np.zeros(n, dtype=np.uint64)
        for j in range(width):
            h ^= rows[:, j].astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
            h *= mult[j]
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    del h
    inv = inv.ravel()
    back = first[inv]
    if all(np.array_equal(rows[back, j], rows[:, j]) for j in range(width)):
        return inv, first
    del back  # a hash collision: exact, slower
    o = np.lexsort(rows.T[::-1])
    new = np.ones(n, dtype=bool)
    new[1:] = np.any(rows[o][1:] != rows[o][:-1], axis=1)
    inv = np.empty(n, dtype=np.int64)
    inv[o] = np.cumsum(new) - 1
    first = np.zeros(int(inv.max()) + 1, dtype=np.int64)
    first[inv[::-1]] = np.arange(n)[::-1]
    return inv, first


def _transmissions(schedule):
    """Every transmission of ``schedule`` as compact arrays, and every distinct route once.

    Returns ``(rnd, chunk, src, dst, hops, route, route_rows)``: per transmission its round, chunk,
    sender and receiver vertex, hops and route id; routes are numbered in order of first appearance
    (blocks in order) and ``route_rows[r]`` is route ``r``'s links padded with ``-1``.  Blocks are
    read one route length at a time, so no array is padded to the longest route (SP-allreduce on
    64x64 has 134 M transmissions: one int64 column of them is 1.07 GB).
    """
    t = schedule.topology
    blocks = [b for b in schedule.blocks if len(b)]
    T = sum(len(b) for b in blocks)
    offsets = np.cumsum([0] + [len(b) for b in blocks])
    small = _index_dtype(max(T, schedule.n_chunks, t.n_vertices, t.n_links, schedule.n_rounds + 2))
    rnd, chunk = np.empty(T, dtype=small), np.empty(T, dtype=small)
    src, dst, hops = np.empty(T, dtype=small), np.empty(T, dtype=small), np.empty(T, dtype=small)
    link_src, link_dst = np.asarray(t.link_src, dtype=small), np.asarray(t.link_dst, dtype=small)
    route = np.empty(T, dtype=np.int64)
    firsts, rows = [], []  # per route length: the global index of each distinct route's first use, its links
    lmax = max((b.links.shape[1] for b in blocks), default=1)
    for width in sorted({b.links.shape[1] for b in blocks}):
        members = [i for i, b in enumerate(blocks) if b.links.shape[1] == width]
        links = np.concatenate([blocks[i].links for i in members]) if len(members) > 1 else blocks[members[0]].links
        if links.size and (links.min() < 0 or links.max() >= t.n_links):
            raise ScheduleError("a transmission uses a link or chunk id outside the schedule's ranges")
        ids, first = _row_ids(links)
        at = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in members])  # global index of each row
        firsts.append(at[first])
        padded = np.full((first.size, lmax), -1, dtype=np.int64)
        padded[:, :width] = links[first]
        rows.append(padded)
        base = sum(f.size for f in firsts[:-1])
        for i in members:  # the block's slice of ``links`` starts at the running count of its width
            b, lo, hi = blocks[i], offsets[i], offsets[i + 1]
            k = int(np.searchsorted(at, lo))
            route[lo:hi] = ids[k:k + hi - lo] + base
            rnd[lo:hi] = b.round
            chunk[lo:hi] = b.chunk
            src[lo:hi] = link_src[b.links[:, 0]]
            dst[lo:hi] = link_dst[b.links[:, -1]]
            hops[lo:hi] = width
        del links, ids, at
    if T and (chunk.min() < 0 or chunk.max() >= schedule.n_chunks):
        raise ScheduleError("a transmission uses a link or chunk id outside the schedule's ranges")
    first_use = np.concatenate(firsts) if firsts else np.zeros(0, dtype=np.int64)
    order = np.argsort(first_use, kind="stable")  # renumber by first appearance: deterministic, hash-free
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    route = rank[route]
    route_rows = np.concatenate(rows)[order] if rows else np.zeros((0, 1), dtype=np.int64)
    return rnd, chunk, src, dst, hops, route, route_rows


def _group(*columns):
    """Sort order of the rows of ``columns`` (equal-length non-negative int arrays, lexicographic),
    where each group starts, and the group id of every row.  One int64 key when the columns' ranges
    fit, else a lexsort."""
    span = [int(c.max(initial=0)) + 1 for c in columns]
    n = columns[0].size
    if np.prod([float(x) for x in span]) < 2.0**62:
        key = np.zeros(n, dtype=np.int64)
        for j, c in enumerate(columns):
            key *= span[j]
            key += c
        o = np.argsort(key, kind="stable")
        k = key[o]
        del key
        new = np.ones(n, dtype=bool)
        new[1:] = k[1:] != k[:-1]
        del k
    else:
        o = np.lexsort(columns[::-1])
        new = np.ones(n, dtype=bool)
        new[1:] = np.any([c[o][1:] != c[o][:-1] for c in columns], axis=0)
    gid = np.empty(n, dtype=_index_dtype(n))
    gid[o] = np.cumsum(new) - 1
    return o, new, gid


def pack(schedule, mode: str = "rounds") -> Flows:
    """Pack ``schedule`` into flows with the event graph of ``mode`` (see the module docstring).

    Raises
    ------
    OptionError
        For an unknown ``mode``.
    ScheduleError
        For a transmission that leaves or ends at a vertex holding no data, or uses an unknown link.
    """
    if mode not in MODES:
        raise OptionError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    t = schedule.topology
    rnd, chunk, src, dst, hops, route, route_rows = _transmissions(schedule)
    T = rnd.size
    holds = np.zeros(t.n_vertices, dtype=bool)
    holds[np.asarray(t.compute, dtype=np.int64)] = True
    if T and not (holds[src].all() and holds[dst].all() and (src != dst).all()):
        raise ScheduleError("a transmission starts or ends at a vertex that holds no data, or at its sender")
    # messages: one per (round, sender, receiver, route)
    o, new, t_msg = _group(rnd, src, dst, route)
    first = o[new]
    del o, new
    M = first.size
    m_round, m_src, m_dst, m_path = (rnd[first].astype(np.int64), src[first].astype(np.int64),
                                     dst[first].astype(np.int64), route[first])
    m_hops = hops[first].astype(np.int64)
    del route, first
    if mode == "rounds":
        del rnd, src, dst
    # SimGrid routes: one per distinct (sender, receiver, route); the k-th from u to v leaves alias k of u
    o2, new2, m_route = _group(m_src, m_dst, m_path)
    rfirst = o2[new2]
    R = rfirst.size
    r_u, r_v = m_src[rfirst], m_dst[rfirst]
    pair_new = np.ones(R, dtype=bool)
    pair_new[1:] = (r_u[1:] != r_u[:-1]) | (r_v[1:] != r_v[:-1])
    idx = np.arange(R)
    variant = idx - np.maximum.accumulate(np.where(pair_new, idx, 0))
    n_alias = np.zeros(t.n_vertices, dtype=np.int64)
    np.maximum.at(n_alias, r_u, variant)
    alias_base = t.n_vertices + np.concatenate([[0], np.cumsum(n_alias)[:-1]])
    r_src = np.where(variant == 0, r_u, alias_base[r_u] + variant - 1).astype(np.int64)
    r_rows = route_rows[m_path[rfirst]]
    r_ptr = np.concatenate([[0], np.cumsum((r_rows >= 0).sum(axis=1))]).astype(np.int64)
    r_links = r_rows[r_rows >= 0].astype(np.int64)  # row-major: each route's links in order
    K = int(schedule.n_rounds) + 2
    if mode == "rounds":
        pre, dep, n_gates = _round_edges(m_round, m_src, m_dst, K)
    else:
        pre, dep, n_gates = _data_edges(rnd, chunk, src, dst, t_msg, M, schedule.n_chunks, K)
        del rnd, src, dst
    E = M + n_gates
    e_count = np.bincount(dep, minlength=E).astype(np.int64)
    order = np.lexsort((dep, pre))
    e_succ = dep[order].astype(np.int64)
    e_ptr = np.concatenate([[0], np.cumsum(np.bincount(pre, minlength=E))]).astype(np.int64)
    return Flows(M, n_gates, int(t.n_vertices + n_alias.sum()), int(t.n_links), m_route.astype(np.int64), m_hops,
                 m_src, m_dst, m_round, t_msg, chunk, r_src, r_v.astype(np.int64), r_ptr, r_links, e_count, e_ptr,
                 e_succ, mode)


def _round_edges(m_round, m_src, m_dst, K):
    """Edges ``(prerequisite, dependent)`` of rounds mode: messages, then gates ``(node, round)``."""
    M = m_round.size
    key = np.concatenate([m_src, m_dst]) * K + np.concatenate([m_round, m_round])
    gates, inv = np.unique(key, return_inverse=True)
    inv = inv.ravel()
    G = gates.size
    gate_of_send = inv[:M]
    chain = np.flatnonzero(gates[1:] // K == gates[:-1] // K)  # gate i -> gate i+1 of the same node
    has_prev = np.zeros(G, dtype=bool)
    has_prev[chain + 1] = True
    sends = np.flatnonzero(has_prev[gate_of_send])
    pre = np.concatenate([np.tile(np.arange(M), 2), M + chain, M + gate_of_send[sends] - 1])
    dep = np.concatenate([M + inv, M + chain + 1, sends])
    return pre.astype(np.int64), dep.astype(np.int64), int(G)


def _data_edges(rnd, chunk, src, dst, t_msg, M, C, K):
    """Edges of deps mode: the writes of a message's chunks at its sender in earlier rounds."""
    i64 = np.int64
    write_key = (dst.astype(i64) * C + chunk) * K + rnd
    wo = np.argsort(write_key, kind="stable")
    wk, wmsg = write_key[wo], t_msg[wo]
    del write_key, wo
    read_base = (src.astype(i64) * C + chunk) * K
    lo = np.searchsorted(wk, read_base, side="left")
    hi = np.searchsorted(wk, read_base + rnd, side="left")
    del read_base, wk
    n = np.maximum(hi - lo, 0)
    dep = np.repeat(t_msg.astype(i64), n)
    start = np.repeat(lo - (np.cumsum(n) - n), n)
    pre = wmsg[start + np.arange(int(n.sum()), dtype=i64)].astype(i64)
    key = np.unique(pre * M + dep)
    return key // M, key % M, 0
