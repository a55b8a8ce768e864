"""Plan an MSCCL export: where each chunk version lives, the runs of every message, the operations.

The payload of a round-``s`` message is the sender's value at the start of the round, so a
chunk that a GPU both sends and receives in one round is received into the *other* place
(scratch ``s`` or output ``o``); :func:`plan_operations` plans places backwards so that the
last value lands in ``o`` whenever possible, else a final local ``cpy`` moves it there.  It
then cuts every message into runs with equal ``cnt`` on both sides and builds the
operations (sends of a round, then its receives in chain order) with every
read-after-write, write-after-read and write-after-write dependency on (GPU, chunk, place).
Fitting them into threadblocks is :mod:`synth.runtime.msccl.threadblocks`' job.
"""

from __future__ import annotations

import numpy as np

from synth.errors import ScheduleError
from synth.schedule import COPY, REDUCE

__all__ = ["Op", "plan_operations", "O_PLACE", "S_PLACE"]

O_PLACE, S_PLACE = 0, 1  # place classes: the input/output buffer (one memory when in place) and scratch
_O, _S = O_PLACE, S_PLACE


class Op:
    """One step of the algorithm before it has a threadblock: a send, a receive or a local copy."""


    __slots__ = ("gpu", "stream", "msg", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "deps0", "deps", "tb",
                 "pos", "step", "hasdep")

    def __init__(self, gpu, stream, msg, type_, srcbuf, srcoff, dstbuf, dstoff, cnt, deps):
        self.gpu, self.stream, self.msg, self.type = gpu, stream, msg, type_
        self.srcbuf, self.srcoff, self.dstbuf, self.dstoff, self.cnt = srcbuf, srcoff, dstbuf, dstoff, cnt
        self.deps0 = tuple(deps)  # every dependency; ``deps`` is the minimal set for the current threadblocks
        self.deps = list(deps)
        self.tb = self.pos = self.step = -1
        self.hasdep = 0


def _plan_places(w_key, w_round, conflict):
    """Place class of every write round, per (gpu, chunk) group; backwards so the last lands in O.

    ``w_key`` sorted group keys of the write *rounds* (one entry per distinct write round),
    ``conflict`` whether the old value is read in that round.  Returns the class array and
    the keys of the groups that need a final copy out of scratch.
    """
    n = w_key.size
    cls = np.zeros(n, dtype=np.int8)
    final_copy = []
    starts = np.flatnonzero(np.r_[True, w_key[1:] != w_key[:-1]]) if n else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], n] if n else starts
    for a, b in zip(starts.tolist(), ends.tolist()):
        want = [0] * (b - a)
        t = _O
        for k in range(b - a - 1, -1, -1):
            want[k] = t
            t = (1 - t) if conflict[a + k] else _O
        if t == _O:  # the place before the first write must be O (the input): feasible
            cls[a:b] = want
            continue
        prev = _O  # infeasible backwards: go forwards and copy out at the end
        for k in range(b - a):
            prev = (1 - prev) if conflict[a + k] else _O
            cls[a + k] = prev
        if prev == _S:
            final_copy.append(int(w_key[a]))
    return cls, final_copy


def plan_operations(arrays, *, schedule, w, p, C, pos, order, unit_offset, mptr, limits, initial_copy):
    """The operations of the algorithm, with their dependencies (module docstring).

    ``arrays`` are the transmissions ``(round, op, chunk, src, dst, message)`` sorted by message,
    then by chunk position in the layout ``order``.  Returns ``(ops, s_chunks, n_final)``: the
    operations in a topological order, the scratch chunks of every GPU and the number of final
    copies out of scratch.
    """
    rnd, op, chunk, src, dst, msg = arrays

    # -------- places: class of every write round at (gpu, chunk), class of what each read sees
    K = int(schedule.n_rounds) + 2
    read_key = (src * C + chunk) * K + rnd
    write_key = (dst * C + chunk) * K + rnd
    wr = np.unique(write_key)  # distinct (gpu, chunk, write round)
    conflict = np.isin(wr, read_key)
    w_cls, final_copy = _plan_places(wr // K, wr % K, conflict)
    # version of each write round = its index in its group (1-based)
    grp = wr // K
    gstart = np.r_[True, grp[1:] != grp[:-1]] if wr.size else np.zeros(0, dtype=bool)
    idx = np.arange(wr.size)
    version = idx - np.maximum.accumulate(np.where(gstart, idx, 0)) + 1 if wr.size else idx
    # what a read at round s sees: the last write round < s
    rpos = np.searchsorted(wr, read_key, side="left") - 1
    r_ok = rpos >= 0
    r_ok[r_ok] = grp[rpos[r_ok]] == read_key[r_ok] // K
    read_cls = np.where(r_ok, w_cls[np.maximum(rpos, 0)], _O)
    read_ver = np.where(r_ok, version[np.maximum(rpos, 0)], 0)
    # a write: its class, and for a reduce the value it adds to (the previous version)
    wpos = np.searchsorted(wr, write_key)
    write_cls = w_cls[wpos]
    write_ver = version[wpos]
    prev_ok = (wpos > 0) & (write_ver > 1)
    prev_cls = np.where(prev_ok, w_cls[np.maximum(wpos - 1, 0)], _O)
    prev_ver = write_ver - 1
    # scratch offsets per GPU: the chunks that ever use scratch there, compacted in layout order
    s_mask = np.zeros((p, C), dtype=bool)
    sw = w_cls == _S
    s_mask[(grp[sw] // C), (grp[sw] % C)] = True
    s_units = np.zeros((p, C), dtype=np.int64)
    s_chunks = np.zeros(p, dtype=np.int64)
    wo = w[order]
    for gpu in np.flatnonzero(s_mask.any(axis=1)).tolist():
        m = s_mask[gpu, order]
        cum = np.cumsum(np.where(m, wo, 0))
        s_units[gpu, order] = cum - np.where(m, wo, 0)
        s_chunks[gpu] = cum[-1]

    def off(cls, gpu, c):
        return int(s_units[gpu, c]) if cls == _S else int(unit_offset[c])

    # -------- common run partition of every message (same cnt on both sides)
    t_cnt = w[chunk]
    s_off = np.where(read_cls == _S, s_units[src, chunk], unit_offset[chunk])
    d_off = np.where(write_cls == _S, s_units[dst, chunk], unit_offset[chunk])
    first_in_chain = np.ones(rnd.size, dtype=bool)
    # chain: several reduces into one (gpu, chunk) in one round, ordered by sender (rows sorted by msg)
    ck = write_key
    o2 = np.lexsort((src, ck))
    dup = np.zeros(rnd.size, dtype=bool)
    dup[o2[1:]] = ck[o2[1:]] == ck[o2[:-1]]
    first_in_chain[dup] = False
    a_cls = np.where(first_in_chain, prev_cls, write_cls)  # the value an rrc adds to
    a_ver = np.where(first_in_chain, prev_ver, write_ver)
    a_off = np.where(a_cls == _S, s_units[dst, chunk], unit_offset[chunk])
    v0 = 1 if initial_copy else 0  # where version 0 is read from: the input, or the output after a first copy
    a_buf = np.where(a_cls == _S, 2, np.where(a_ver == 0, v0, 1))
    r_buf = np.where(read_cls == _S, 2, np.where(read_ver == 0, v0, 1))
    brk = np.zeros(rnd.size, dtype=bool)
    brk[mptr[:-1]] = True
    contig_s = np.r_[False, s_off[1:] == s_off[:-1] + t_cnt[:-1]]
    contig_d = np.r_[False, d_off[1:] == d_off[:-1] + t_cnt[:-1]]
    contig_a = np.r_[False, a_off[1:] == a_off[:-1] + t_cnt[:-1]]
    same = np.r_[False, (r_buf[1:] == r_buf[:-1]) & (write_cls[1:] == write_cls[:-1]) & (op[1:] == op[:-1])]
    same_a = np.r_[False, (a_buf[1:] == a_buf[:-1])]
    ok = contig_s & contig_d & same & ((op == COPY) | (contig_a & same_a))
    brk |= ~ok
    # cap cnt at max_count - 1 (a single chunk heavier than that cannot be sent)
    if int(t_cnt.max(initial=0)) > limits.max_count - 1:
        raise ScheduleError(f"a chunk of weight {int(t_cnt.max())} needs cnt over {limits.max_count - 1} "
                            f"(MSCCL_MAX_COUNT {limits.max_count}); reduce the chunk weights")
    run_start = np.flatnonzero(brk)
    # split runs whose total count exceeds the cap (sequential, rare)
    caps = limits.max_count - 1
    run_cnt = np.add.reduceat(t_cnt, run_start) if rnd.size else np.zeros(0, dtype=np.int64)
    if rnd.size and run_cnt.max() > caps:
        brk_list = brk.tolist()
        acc = 0
        for i, c_ in enumerate(t_cnt.tolist()):
            if brk_list[i] or acc + c_ > caps:
                brk_list[i] = True
                acc = 0
            acc += c_
        brk = np.asarray(brk_list, dtype=bool)
        run_start = np.flatnonzero(brk)

    # -------- operations with dependencies (rounds in order: sends of the round, then receives)
    ops: list[Op] = []
    last_write = {}  # (gpu, chunk) -> op id
    last_write_at = {}  # (gpu, chunk, class) -> op id
    readers = {}  # (gpu, chunk, class) -> [op ids]
    run_end = np.r_[run_start[1:], rnd.size]
    runs_by_round = {}
    for a, b in zip(run_start.tolist(), run_end.tolist()):
        runs_by_round.setdefault(int(rnd[a]), []).append((a, b))
    BUF = "ios"
    if initial_copy:  # copy the input into the output first, so version 0 reads come from o like the rest
        live = order[w[order] > 0].tolist()
        for gpu in range(p):
            i = 0
            while i < len(live):
                j, tot = i, 0
                while j < len(live) and tot + int(w[live[j]]) <= caps:
                    tot += int(w[live[j]])
                    j += 1
                ops.append(Op(gpu, ("local", -1), -1, "cpy", "i", int(unit_offset[live[i]]), "o",
                               int(unit_offset[live[i]]), tot, ()))
                k = len(ops) - 1
                for c in live[i:j]:
                    last_write[(gpu, c)] = k
                    last_write_at[(gpu, c, _O)] = k
                i = j
    chunk_l, src_l, dst_l, msg_l, op_l = chunk.tolist(), src.tolist(), dst.tolist(), msg.tolist(), op.tolist()
    rcls_l, wcls_l = read_cls.tolist(), write_cls.tolist()
    for r_ in sorted(runs_by_round):
        runs = runs_by_round[r_]
        send_ids = []
        for a, b in runs:  # sends: read the start-of-round values
            u, v = src_l[a], dst_l[a]
            cs = chunk_l[a:b]
            deps = {last_write[(u, c)] for c in cs if (u, c) in last_write}
            cnt = int(t_cnt[a:b].sum())
            o_ = Op(u, ("send", v), msg_l[a], "s", BUF[r_buf[a]], int(s_off[a]), BUF[[1, 2][wcls_l[a]]],
                     int(d_off[a]), cnt, deps)
            ops.append(o_)
            k = len(ops) - 1
            cl = rcls_l[a]
            for c in cs:
                readers.setdefault((u, c, cl), []).append(k)
            send_ids.append(k)
        recv_runs = sorted(runs, key=lambda ab: (dst_l[ab[0]], src_l[ab[0]], ab[0]))
        for a, b in recv_runs:  # receives, in chain order (by receiver, then sender)
            u, v = src_l[a], dst_l[a]
            cs = chunk_l[a:b]
            cl = wcls_l[a]
            reduce_ = op_l[a] == REDUCE
            deps = set()
            for c in cs:
                if reduce_ and (v, c) in last_write:
                    deps.add(last_write[(v, c)])
                deps.update(readers.get((v, c, cl), ()))
                if (v, c, cl) in last_write_at:
                    deps.add(last_write_at[(v, c, cl)])
            cnt = int(t_cnt[a:b].sum())
            if reduce_:
                o_ = Op(v, ("recv", u), msg_l[a], "rrc", BUF[a_buf[a]], int(a_off[a]), BUF[[1, 2][cl]], int(d_off[a]),
                         cnt, deps)
            else:
                o_ = Op(v, ("recv", u), msg_l[a], "r", BUF[r_buf[a]], int(s_off[a]), BUF[[1, 2][cl]], int(d_off[a]),
                         cnt, deps)
            ops.append(o_)
            k = len(ops) - 1
            for c in cs:
                last_write[(v, c)] = k
                last_write_at[(v, c, cl)] = k
                readers[(v, c, cl)] = []
    # final copies out of scratch
    n_final = 0
    if final_copy:
        fc = np.asarray(sorted(final_copy, key=lambda key: (key // C, pos[key % C])), dtype=np.int64)
        gpus, cs = fc // C, fc % C
        i = 0
        while i < fc.size:
            gpu = int(gpus[i])
            j = i + 1
            tot = int(w[cs[i]])
            while (j < fc.size and gpus[j] == gpu and pos[cs[j]] == pos[cs[j - 1]] + 1
                   and s_units[gpu, cs[j]] == s_units[gpu, cs[j - 1]] + w[cs[j - 1]] and tot + w[cs[j]] <= caps):
                tot += int(w[cs[j]])
                j += 1
            deps = set()
            for c in cs[i:j].tolist():
                deps.add(last_write[(gpu, c)])
                deps.update(readers.get((gpu, c, _O), ()))
                if (gpu, c, _O) in last_write_at:
                    deps.add(last_write_at[(gpu, c, _O)])
            ops.append(Op(gpu, ("local", -1), -1, "cpy", "s", int(s_units[gpu, cs[i]]), "o",
                           int(unit_offset[cs[i]]), tot, deps))
            n_final += 1
            i = j
    return ops, s_chunks, n_final
