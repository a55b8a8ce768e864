"""A schedule as flows for the simulator: packed messages, their routes, hosts and dependencies (numpy).

Messages are packed as in :mod:`synth.runtime.plan` (one per round, sender, receiver and route).
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
>>> f.n_messages, f.n_gates, f.n_hosts
(12, 12, 3)
>>> pack(b.schedule, "deps").e_count[:f.n_messages].tolist()
[0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.errors import OptionError
from synth.runtime.plan import build_plan, transmission_links

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


def _route_rows(schedule):
    """Link rows (``-1`` padded) of the route ids of :func:`synth.runtime.plan.flatten`; None: id = link id."""
    _, _, _, links = transmission_links(schedule)
    return None if links.shape[1] == 1 else np.unique(links, axis=0)


def pack(schedule, mode: str = "rounds") -> Flows:
    """Pack ``schedule`` into flows with the event graph of ``mode`` (see the module docstring).

    Raises
    ------
    OptionError
        For an unknown ``mode``.
    ScheduleError
        For a malformed schedule (from :func:`synth.runtime.plan.build_plan`).
    """
    if mode not in MODES:
        raise OptionError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    t = schedule.topology
    plan = build_plan(schedule, layout="identity")
    M = plan.n_messages
    rows = _route_rows(schedule)
    compute = np.asarray(t.compute, dtype=np.int64)
    src_v, dst_v = compute[plan.m_src], compute[plan.m_dst]
    if rows is None:
        route_rows = plan.m_route.reshape(-1, 1)
    else:
        route_rows = rows[plan.m_route]
    hops = (route_rows >= 0).sum(axis=1).astype(np.int64)
    # one SimGrid route per distinct (sender, receiver, route); the k-th route from u to v leaves alias k of u
    trip = np.stack([src_v, dst_v, plan.m_route], axis=1)
    uniq, m_route = np.unique(trip, axis=0, return_inverse=True)
    m_route = m_route.ravel().astype(np.int64)
    R = uniq.shape[0]
    pair_new = np.ones(R, dtype=bool)
    pair_new[1:] = np.any(uniq[1:, :2] != uniq[:-1, :2], axis=1)
    idx = np.arange(R)
    variant = idx - np.maximum.accumulate(np.where(pair_new, idx, 0))
    n_alias = np.zeros(t.n_vertices, dtype=np.int64)
    np.maximum.at(n_alias, uniq[:, 0], variant)
    alias_base = t.n_vertices + np.concatenate([[0], np.cumsum(n_alias)[:-1]])
    r_src = np.where(variant == 0, uniq[:, 0], alias_base[uniq[:, 0]] + variant - 1)
    r_dst = uniq[:, 1].copy()
    first_msg = np.zeros(R, dtype=np.int64)
    first_msg[m_route[::-1]] = np.arange(M)[::-1]
    r_rows = route_rows[first_msg]
    r_len = (r_rows >= 0).sum(axis=1)
    r_ptr = np.concatenate([[0], np.cumsum(r_len)]).astype(np.int64)
    r_links = r_rows[r_rows >= 0].astype(np.int64)  # row-major: each route's links in order
    t_msg = plan.t_msg.astype(np.int64)
    if mode == "rounds":
        pre, dep, n_gates = _round_edges(plan)
    else:
        pre, dep, n_gates = _data_edges(plan, t_msg)
    E = M + n_gates
    e_count = np.bincount(dep, minlength=E).astype(np.int64)
    o = np.lexsort((dep, pre))
    e_succ = dep[o].astype(np.int64)
    e_ptr = np.concatenate([[0], np.cumsum(np.bincount(pre, minlength=E))]).astype(np.int64)
    return Flows(M, n_gates, int(t.n_vertices + n_alias.sum()), int(t.n_links), m_route, hops, src_v, dst_v,
                 plan.m_round.astype(np.int64), t_msg, plan.t_chunk.astype(np.int64), r_src.astype(np.int64), r_dst,
                 r_ptr, r_links, e_count, e_ptr, e_succ, mode)


def _round_edges(plan):
    """Edges ``(prerequisite, dependent)`` of rounds mode: messages, then gates ``(node, round)``."""
    M = plan.n_messages
    K = int(plan.n_rounds) + 2
    node = np.concatenate([plan.m_src, plan.m_dst]).astype(np.int64)
    key = node * K + np.concatenate([plan.m_round, plan.m_round]).astype(np.int64)
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


def _data_edges(plan, t_msg):
    """Edges of deps mode: the writes of a message's chunks at its sender in earlier rounds."""
    C = plan.n_chunks
    K = int(plan.n_rounds) + 2
    write_key = (plan.t_dst * C + plan.t_chunk) * K + plan.t_round
    wo = np.argsort(write_key, kind="stable")
    wk, wmsg = write_key[wo], t_msg[wo]
    read_base = (plan.t_src * C + plan.t_chunk) * K
    lo = np.searchsorted(wk, read_base, side="left")
    hi = np.searchsorted(wk, read_base + plan.t_round, side="left")
    n = np.maximum(hi - lo, 0)
    dep = np.repeat(t_msg, n)
    start = np.repeat(lo - (np.cumsum(n) - n), n)
    pre = wmsg[start + np.arange(int(n.sum()), dtype=np.int64)]
    M = plan.n_messages
    key = np.unique(pre * M + dep)
    return key // M, key % M, 0
