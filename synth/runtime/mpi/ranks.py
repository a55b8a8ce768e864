"""Every rank's part of a packed schedule, precomputed in the parent (numpy, vectorized).

:func:`rank_plans` turns a :class:`~synth.runtime.plan.Plan` and chunk sizes into one dict
of arrays per rank (keys :data:`synth.runtime.mpi._worker.PLAN_KEYS`): sends and receives
with unique tags per sender/receiver pair, their contiguous runs, and the dependencies
that ``deps`` mode follows.  :mod:`~synth.runtime.mpi.launch` writes them for ``mpiexec``;
:mod:`~synth.runtime.mpi.simulate` runs them in one process.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.baselines import build_baseline
>>> from synth.runtime.plan import build_plan, load_schedule
>>> from synth.runtime.mpi._worker import PLAN_KEYS
>>> schedule, weights, _ = load_schedule(build_baseline("ring", parse_torus("3")))
>>> from synth.schedule import chunk_elements
>>> plans = rank_plans(build_plan(schedule, "greedy"), chunk_elements(weights, 60))
>>> len(plans), sorted(plans[0]) == sorted(PLAN_KEYS)
(3, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.errors import ScheduleError, SynthError
from synth.runtime.plan import Plan
from synth.schedule import COPY

__all__ = ["rank_plans", "check_dtype", "DTYPES", "TAG_MOD"]

DTYPES = ("float32", "float64", "int64", "int32")
TAG_MOD = 32767  # the MPI standard guarantees tags up to 32767


def _cumcount(keys_sorted):
    """Position of each row inside its run of equal values (input sorted)."""
    n = keys_sorted.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.ones(n, dtype=bool)
    start[1:] = keys_sorted[1:] != keys_sorted[:-1]
    idx = np.arange(n)
    return idx - np.maximum.accumulate(np.where(start, idx, 0))


def _local_index(owner, n_messages):
    """Index of each message among the messages of its owner, in message order."""
    o = np.lexsort((np.arange(n_messages), owner))
    local = np.empty(n_messages, dtype=np.int64)
    local[o] = _cumcount(owner[o])
    return local


def _expand(dependent, lo, hi):
    """Pairs ``(dependent[i], k)`` for every ``k`` in ``lo[i]:hi[i]``."""
    n = np.maximum(hi - lo, 0)
    dep = np.repeat(dependent, n)
    start = np.repeat(lo - (np.cumsum(n) - n), n)
    return dep, start + np.arange(int(n.sum()), dtype=np.int64)


def _runs(off, length, first, split_extra=None):
    """Run starts: a run breaks at a message start, a gap, or where ``split_extra`` is set."""
    brk = first.copy()
    brk[1:] |= off[1:] != off[:-1] + length[:-1]
    if split_extra is not None:
        brk |= split_extra
    return np.flatnonzero(brk)


def rank_plans(plan: Plan, sizes) -> list:
    """Every rank's arrays for :class:`synth.runtime.mpi._worker.RankEngine` (vectorized).

    Parameters
    ----------
    plan : Plan
    sizes : array_like
        Elements of every chunk.

    Returns
    -------
    list of dict
        One dict of numpy arrays per rank (keys :data:`~synth.runtime.mpi._worker.PLAN_KEYS`): sends and
        receives in round order with their element runs, tags, the ``direct`` flag of
        receives that may land in place, and the dependency graph of ``deps`` mode.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    p, C = plan.n_ranks, plan.n_chunks
    K = plan.n_rounds + 2
    read_key = (plan.t_src * C + plan.t_chunk) * K + plan.t_round
    write_key = (plan.t_dst * C + plan.t_chunk) * K + plan.t_round
    runs = _message_runs(plan, sizes, read_key, write_key)
    tag = _tags(plan)
    base, n_send, n_recv, d_count, succ, succ_ptr = _op_graph(plan, read_key, write_key, K)
    # per-rank split (messages are sorted by round, so each rank's list is in round order)
    by_src = np.argsort(plan.m_src, kind="stable")
    by_dst = np.argsort(plan.m_dst, kind="stable")
    src_ptr = np.concatenate([[0], np.cumsum(n_send)])
    dst_ptr = np.concatenate([[0], np.cumsum(n_recv)])
    s_run_ptr = np.concatenate([[0], np.cumsum(runs.s_nruns)])
    r_run_ptr = np.concatenate([[0], np.cumsum(runs.r_nruns)])
    out = []
    for r in range(p):
        sm = by_src[src_ptr[r]:src_ptr[r + 1]]
        rm = by_dst[dst_ptr[r]:dst_ptr[r + 1]]
        s_idx = _gather_ranges(s_run_ptr[sm], s_run_ptr[sm + 1])
        r_idx = _gather_ranges(r_run_ptr[rm], r_run_ptr[rm + 1])
        ops = np.arange(base[r], base[r + 1])
        lo, hi = succ_ptr[ops], succ_ptr[ops + 1]
        out.append({
            "s_round": plan.m_round[sm].astype(np.int32), "s_peer": plan.m_dst[sm].astype(np.int32),
            "s_tag": tag[sm].astype(np.int32), "s_n": runs.m_n[sm],
            "s_rptr": np.concatenate([[0], np.cumsum(runs.s_nruns[sm])]).astype(np.int64),
            "s_off": runs.s_off[s_idx], "s_len": runs.s_len[s_idx],
            "r_round": plan.m_round[rm].astype(np.int32), "r_peer": plan.m_src[rm].astype(np.int32),
            "r_tag": tag[rm].astype(np.int32), "r_n": runs.m_n[rm],
            "r_rptr": np.concatenate([[0], np.cumsum(runs.r_nruns[rm])]).astype(np.int64),
            "r_off": runs.r_off[r_idx], "r_len": runs.r_len[r_idx], "r_op": runs.r_op[r_idx].astype(np.int8),
            "r_direct": runs.direct[rm],
            "d_count": d_count[ops].astype(np.int32),
            "d_ptr": np.concatenate([[0], np.cumsum(hi - lo)]).astype(np.int64),
            "d_succ": (succ[_gather_ranges(lo, hi)] - base[r]).astype(np.int32),
        })
    return out


@dataclass(frozen=True)
class _Runs:
    """Per message its elements ``m_n``, send and receive run counts, and whether its receive may land in
    place (``direct``); per run its offset and length (and a receive run's op)."""

    m_n: np.ndarray
    s_nruns: np.ndarray
    s_off: np.ndarray
    s_len: np.ndarray
    r_nruns: np.ndarray
    r_off: np.ndarray
    r_len: np.ndarray
    r_op: np.ndarray
    direct: np.ndarray


def _message_runs(plan, sizes, read_key, write_key):
    """The element runs of every message (:class:`_Runs`)."""
    M, T = plan.n_messages, plan.n_transmissions
    offsets = plan.offsets(sizes)
    t_off, t_len, msg = offsets[plan.t_chunk], sizes[plan.t_chunk], plan.t_msg
    first = np.zeros(T, dtype=bool)
    first[plan.m_ptr[:-1][np.diff(plan.m_ptr) > 0]] = True
    m_n = np.add.reduceat(t_len, plan.m_ptr[:-1]) if M else np.zeros(0, dtype=np.int64)
    # send runs (the payload does not care about the op) and receive runs (split where the op changes)
    s_at = _runs(t_off, t_len, first)
    op_change = np.zeros(T, dtype=bool)
    op_change[1:] = plan.t_op[1:] != plan.t_op[:-1]
    r_at = _runs(t_off, t_len, first, op_change)
    s_run_len = np.add.reduceat(t_len, s_at) if T else np.zeros(0, dtype=np.int64)
    r_run_msg, r_run_op = msg[r_at], plan.t_op[r_at]
    r_run_len = np.add.reduceat(t_len, r_at) if T else np.zeros(0, dtype=np.int64)
    s_nruns = np.bincount(msg[s_at], minlength=M)
    r_nruns = np.bincount(r_run_msg, minlength=M)
    # direct receives: one copy run, nothing at the receiver reads those chunks in that round
    clash = np.isin(write_key, read_key)
    clash_msg = np.bincount(msg, weights=clash, minlength=M) > 0
    direct = (r_nruns == 1) & ~clash_msg & (np.bincount(r_run_msg, weights=r_run_op == COPY, minlength=M) == 1)
    return _Runs(m_n, s_nruns, t_off[s_at], s_run_len, r_nruns, t_off[r_at], r_run_len, r_run_op, direct)


def _tags(plan):
    """The tag of every message: its sequence number between its sender and receiver."""
    M = plan.n_messages
    o = np.lexsort((np.arange(M), plan.m_dst, plan.m_src))
    pair = plan.m_src[o] * plan.n_ranks + plan.m_dst[o]
    tag = np.empty(M, dtype=np.int64)
    tag[o] = _cumcount(pair) % TAG_MOD
    return tag


def _op_graph(plan, read_key, write_key, K):
    """Local op numbering (sends first, then receives) and the dependency graph of ``deps`` mode:
    ``(base, n_send, n_recv, d_count, succ, succ_ptr)``, ``base[r]`` rank ``r``'s first op."""
    M, p, msg = plan.n_messages, plan.n_ranks, plan.t_msg
    s_local = _local_index(plan.m_src, M)
    r_local = _local_index(plan.m_dst, M)
    n_send = np.bincount(plan.m_src, minlength=p)
    n_recv = np.bincount(plan.m_dst, minlength=p)
    base = np.concatenate([[0], np.cumsum(n_send + n_recv)])
    read_op = base[plan.t_src] + s_local[msg]
    write_op = base[plan.t_dst] + n_send[plan.t_dst] + r_local[msg]
    deps = _dependencies(plan, read_op, write_op, read_key, write_key, K)
    n_total = int(base[-1])
    d_count = np.bincount(deps[0], minlength=n_total)
    srt = np.lexsort((deps[0], deps[1]))
    succ, pre = deps[0][srt], deps[1][srt]
    succ_ptr = np.searchsorted(pre, np.arange(n_total + 1))
    return base, n_send, n_recv, d_count, succ, succ_ptr


def _gather_ranges(lo, hi):
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    n = np.maximum(hi - lo, 0)
    start = np.repeat(lo - (np.cumsum(n) - n), n)
    return start + np.arange(int(n.sum()), dtype=np.int64)


def _dependencies(plan, read_op, write_op, read_key, write_key, K):
    """Edges ``(dependent op, prerequisite op)`` of deps mode (global op ids), deduplicated.

    Per (rank, chunk), with ``prev`` the last round before ``s`` in which the chunk was written:
    a send of round ``s`` needs the writes of round ``prev`` (RAW); a write of round ``s``
    needs the writes of round ``prev`` (WAW) and the sends of rounds ``prev+1..s`` (WAR:
    they read the old value).  Everything earlier follows transitively.
    """
    wo = np.argsort(write_key, kind="stable")
    wk, wop = write_key[wo], write_op[wo]
    ro = np.argsort(read_key, kind="stable")
    rk, rop = read_key[ro], read_op[ro]

    def prev_writes(key):
        pos = np.searchsorted(wk, key, side="left")
        prev = pos - 1
        ok = prev >= 0
        ok[ok] = wk[prev[ok]] // K == key[ok] // K
        prev_round = np.where(ok, wk[np.maximum(prev, 0)] % K, 0)
        lo = np.where(ok, np.searchsorted(wk, key - key % K + prev_round, side="left"), 0)
        hi = np.where(ok, pos, 0)
        return lo, hi, prev_round

    dep, pre = [], []
    lo, hi, _ = prev_writes(read_key)  # RAW
    d, k = _expand(read_op, lo, hi)
    dep.append(d)
    pre.append(wop[k])
    lo, hi, prev_round = prev_writes(write_key)  # WAW
    d, k = _expand(write_op, lo, hi)
    dep.append(d)
    pre.append(wop[k])
    g0 = write_key - write_key % K  # WAR: reads in rounds prev+1 .. s
    lo = np.searchsorted(rk, g0 + prev_round + 1, side="left")
    hi = np.searchsorted(rk, write_key, side="right")
    d, k = _expand(write_op, lo, hi)
    dep.append(d)
    pre.append(rop[k])
    dep, pre = np.concatenate(dep), np.concatenate(pre)
    keep = dep != pre
    if not keep.all():
        raise ScheduleError("a message reads and writes the same chunk at one rank")
    n = int(max(dep.max(initial=0), pre.max(initial=0))) + 1
    key = np.unique(dep * n + pre)
    return key // n, key % n


def check_dtype(dtype):
    """Refuse a dtype the worker does not run (:data:`DTYPES`)."""
    if str(dtype) not in DTYPES:
        raise SynthError(f"unknown dtype {dtype!r}; valid: {', '.join(DTYPES)}")
