"""Plan an MSCCL export: where each chunk version lives, the runs of every message, the operations.

The payload of a round-``s`` message is the sender's value at the start of the round, so a
chunk that a GPU both sends and receives in one round is received into the *other* place
(scratch ``s`` or output ``o``); :func:`plan_operations` plans places backwards so that the
last value lands in ``o`` whenever possible, else a final local ``cpy`` moves it there.  It
then cuts every message into runs with equal ``cnt`` on both sides and builds the
operations (sends of a round, then its receives in chain order) with every
read-after-write, write-after-read and write-after-write dependency on (GPU, chunk, place).
Fitting them into threadblocks is :mod:`synth.runtime.msccl.threadblocks`' job.

Scratch places.  By default each (GPU, chunk) that ever uses scratch keeps one place there for
the whole run, compacted in layout order.  With ``reuse_scratch`` (a reduce-scatter's default)
a place passes to another chunk once its value is dead: its last read (a send, a reduce adding
it into the output, a final copy) is in an earlier round than the new write, and the new write
depends on it, because the dependencies of a scratch write are then tracked per scratch unit
(its last writer and its readers since), whichever chunk they belonged to.

Buffers (:class:`BufferMap`).  An allreduce keeps every chunk at one offset in ``i`` and ``o``.
A reduce-scatter reads the whole vector from ``i`` but its ``o`` holds only the GPU's own
block, so a chunk of another block has no place in ``o``: its partial sums live in scratch.
An allgather's ``i`` holds only the GPU's own block and its ``o`` the whole vector.  In place,
the runtimes alias the smaller buffer into the larger one at offset ``r * block``, so the
planner treats ``i[x]`` and ``o[x - r*block]`` (reduce-scatter) or ``i[x - r*block]`` and
``o[x]`` (allgather) as one memory, as it treats ``i`` and ``o`` of an allreduce.

Examples
--------
>>> bm = BufferMap("allgather", 2, np.array([0, 0, 1, 1]))
>>> bm.i_off(np.array([1, 1]), np.array([2, 3]), np.array([2, 3])).tolist()  # GPU 1's block is i[0:2]
[0, 1]
>>> bm.has_o(np.array([0]), np.array([3])).tolist(), bm.has_v0(np.array([0]), np.array([3])).tolist()
([True], [False])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.errors import ScheduleError
from synth.schedule import COPY, REDUCE

__all__ = ["Op", "BufferMap", "plan_operations", "O_PLACE", "S_PLACE"]

O_PLACE, S_PLACE = 0, 1  # place classes: the input/output buffer (one memory when in place) and scratch
_O, _S = O_PLACE, S_PLACE


@dataclass(frozen=True)
class BufferMap:
    """Where a chunk lives in ``i`` and ``o`` on each GPU, for the XML's ``coll`` (module docstring).

    ``block`` is the MSCCL chunks of one GPU's block (reduce-scatter and allgather), ``owner_rank``
    the GPU whose block holds each schedule chunk; both unused for an allreduce.  Offsets are
    in MSCCL chunks, from ``unit_offset`` (where a chunk starts in the whole vector).
    """

    coll: str = "allreduce"
    block: int = 0
    owner_rank: np.ndarray | None = None

    def i_off(self, gpu, chunk, unit_offset):
        """Offset of ``chunk`` in GPU ``gpu``'s input (meaningful where it is there)."""
        return unit_offset - gpu * self.block if self.coll == "allgather" else unit_offset

    def o_off(self, gpu, chunk, unit_offset):
        """Offset of ``chunk`` in GPU ``gpu``'s output (meaningful where :meth:`has_o`)."""
        return unit_offset - gpu * self.block if self.coll == "reducescatter" else unit_offset

    def has_o(self, gpu, chunk):
        """Whether the output has a place for ``chunk`` (a reduce-scatter's holds only the own block)."""
        if self.coll != "reducescatter":
            return np.ones(np.shape(chunk), dtype=bool)
        return self.owner_rank[chunk] == gpu

    def has_v0(self, gpu, chunk):
        """Whether the GPU starts with a value of ``chunk`` (an allgather's input is its own block)."""
        if self.coll != "allgather":
            return np.ones(np.shape(chunk), dtype=bool)
        return self.owner_rank[chunk] == gpu


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


def _plan_places(w_key, w_round, conflict, no_o=None, n_chunks=1):
    """Place class of every write round, per (gpu, chunk) group; backwards so the last lands in O.

    ``w_key`` sorted group keys of the write *rounds* (one entry per distinct write round),
    ``conflict`` whether the old value is read in that round, ``no_o`` whether the group has
    no place in the output (a reduce-scatter's chunk of another block: every write goes to
    scratch, the value before it being the read-only input).  Returns the class array and
    the keys of the groups that need a final copy out of scratch.
    """
    n = w_key.size
    cls = np.zeros(n, dtype=np.int8)
    final_copy = []
    starts = np.flatnonzero(np.r_[True, w_key[1:] != w_key[:-1]]) if n else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], n] if n else starts
    for a, b in zip(starts.tolist(), ends.tolist()):
        if no_o is not None and no_o[a]:
            if np.any(conflict[a + 1:b]):
                raise ScheduleError(f"GPU {int(w_key[a]) // n_chunks} sends and receives a partial sum of chunk "
                                    f"{int(w_key[a]) % n_chunks} in one round after its first reception; a "
                                    "reduce-scatter export keeps one scratch place per chunk outside the GPU's block")
            cls[a:b] = _S
            continue
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


def _compact_places(s_groups, w, p, C, order):
    """Scratch offsets, one place per (gpu, chunk) for the whole run, compacted in layout order.

    ``s_groups`` are the keys ``gpu * C + chunk`` of the writes that go to scratch.  Returns
    ``(s_units, s_chunks)``: the offset of every (gpu, chunk) and the scratch chunks of every GPU.
    """
    s_mask = np.zeros((p, C), dtype=bool)
    s_mask[s_groups // C, s_groups % C] = True
    s_units = np.zeros((p, C), dtype=np.int64)
    s_chunks = np.zeros(p, dtype=np.int64)
    wo = w[order]
    for gpu in np.flatnonzero(s_mask.any(axis=1)).tolist():
        m = s_mask[gpu, order]
        cum = np.cumsum(np.where(m, wo, 0))
        s_units[gpu, order] = cum - np.where(m, wo, 0)
        s_chunks[gpu] = cum[-1]
    return s_units, s_chunks


def _first_fit(free_at, start, n):
    """Lowest offset ``x`` with ``free_at[x:x + n] < start`` (``free_at`` long enough that one exists)."""
    ok = np.r_[0, np.cumsum(free_at < start)]
    x = int(np.flatnonzero(ok[n:] - ok[:-n] == n)[0])
    return x


def _reuse_places(rnd, chunk, src, dst, read_cls, write_cls, a_cls, op, w, p, C, K, final_copy):
    """Scratch offsets that a (gpu, chunk) holds only while its scratch value is live (module docstring).

    A (gpu, chunk) occupies its place from the round of its first write into scratch to the
    round of its last access there (a send, or a reduce adding to it; forever if a final copy
    reads it), and a place is given to another (gpu, chunk) only from a *later* round on, so
    the write that reuses it never waits for a step of its own round.  The chunks a message
    first writes into scratch get one contiguous segment, in the message's chunk order (rows
    sorted by message), at the lowest offset free from that round on.  Returns ``(s_units,
    s_chunks)`` as :func:`_compact_places` does.
    """
    s_units = np.zeros((p, C), dtype=np.int64)
    s_chunks = np.zeros(p, dtype=np.int64)
    ws = write_cls == _S
    if not ws.any():
        return s_units, s_chunks
    keys = np.concatenate([(dst * C + chunk)[ws], (src * C + chunk)[read_cls == _S],
                           (dst * C + chunk)[(a_cls == _S) & (op == REDUCE)]])
    rounds = np.concatenate([rnd[ws], rnd[read_cls == _S], rnd[(a_cls == _S) & (op == REDUCE)]])
    occ, first_row = np.unique((dst * C + chunk)[ws], return_index=True)  # (gpu, chunk) in scratch; first write
    end = np.full(occ.size, -1, dtype=np.int64)
    np.maximum.at(end, np.searchsorted(occ, keys), rounds)
    if final_copy:
        end[np.isin(occ, np.asarray(final_copy, dtype=np.int64))] = K  # read by the final copy: never freed
    rows = np.flatnonzero(ws)[first_row]
    by_row = np.argsort(rows, kind="stable")
    occ, rows, end = occ[by_row], rows[by_row], end[by_row]
    gpu_of = occ // C
    for gpu in np.unique(gpu_of).tolist():
        sel = np.flatnonzero(gpu_of == gpu)
        cs, rs, es = occ[sel] % C, rows[sel], end[sel]
        free_at = np.full(int(w[cs].sum()), -1, dtype=np.int64)  # enough for one place per chunk
        seg = np.flatnonzero(np.r_[True, (rnd[rs[1:]] != rnd[rs[:-1]]) | (src[rs[1:]] != src[rs[:-1]])])
        for a, b in zip(seg.tolist(), np.r_[seg[1:], sel.size].tolist()):
            width = w[cs[a:b]]
            x = _first_fit(free_at, int(rnd[rs[a]]), int(width.sum()))
            offs = x + np.r_[0, np.cumsum(width)[:-1]]
            s_units[gpu, cs[a:b]] = offs
            for o_, n_, e_ in zip(offs.tolist(), width.tolist(), es[a:b].tolist()):
                free_at[o_:o_ + n_] = e_
        s_chunks[gpu] = int(np.flatnonzero(free_at >= 0)[-1]) + 1 if (free_at >= 0).any() else 0
    return s_units, s_chunks


def plan_operations(arrays, *, schedule, w, p, C, pos, order, unit_offset, mptr, limits, initial_copy,
                    bufmap=None, outofplace=True, reuse_scratch=False):
    """The operations of the algorithm, with their dependencies (module docstring).

    ``arrays`` are the transmissions ``(round, op, chunk, src, dst, message)`` sorted by message,
    then by chunk position in the layout ``order``.  ``bufmap`` (default: an allreduce's) says
    where chunks live in ``i`` and ``o``; for a reduce-scatter or allgather, ``outofplace`` adds
    the local copies that fill output chunks no reception writes (an allgather's own block).
    ``reuse_scratch`` gives scratch places to several chunks in turn (:func:`_reuse_places`),
    where that needs fewer scratch chunks; the dependencies are then kept per scratch unit.
    Returns ``(ops, s_chunks, n_final)``: the operations in a topological order, the scratch
    chunks of every GPU and the number of final copies (out of scratch, or out of the input).
    """
    rnd, op, chunk, src, dst, msg = arrays
    bm = bufmap or BufferMap()
    allreduce = bm.coll == "allreduce"

    # -------- places: class of every write round at (gpu, chunk), class of what each read sees
    K = int(schedule.n_rounds) + 2
    read_key = (src * C + chunk) * K + rnd
    write_key = (dst * C + chunk) * K + rnd
    wr = np.unique(write_key)  # distinct (gpu, chunk, write round)
    conflict = np.isin(wr, read_key)
    no_o = None if allreduce else ~bm.has_o(wr // K // C, wr // K % C)
    w_cls, final_copy = _plan_places(wr // K, wr % K, conflict, no_o, C)
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
    if not allreduce and bm.coll == "allgather":  # a GPU holds no value of another block before receiving it
        bad = (read_ver == 0) & ~bm.has_v0(src, chunk)
        bad |= (op == REDUCE) & (prev_ver == 0) & ~bm.has_v0(dst, chunk)
        if bad.any():
            k = int(np.argmax(bad))
            gpu = int(src[k]) if read_ver[k] == 0 else int(dst[k])
            raise ScheduleError(f"not an allgather: round {int(rnd[k])} uses GPU {gpu}'s value of chunk "
                                f"{int(chunk[k])} before it has received one")

    # -------- common run partition of every message (same cnt on both sides)
    t_cnt = w[chunk]
    # where version 0 is read from: the input, or the output after a first copy (of what the output holds)
    v0_r = (bm.has_o(src, chunk) & bm.has_v0(src, chunk)).astype(np.int64) if initial_copy else 0
    v0_a = (bm.has_o(dst, chunk) & bm.has_v0(dst, chunk)).astype(np.int64) if initial_copy else 0
    r_buf = np.where(read_cls == _S, 2, np.where(read_ver == 0, v0_r, 1))
    uo = unit_offset[chunk]
    first_in_chain = np.ones(rnd.size, dtype=bool)
    # chain: several reduces into one (gpu, chunk) in one round, ordered by sender (rows sorted by msg)
    ck = write_key
    o2 = np.lexsort((src, ck))
    dup = np.zeros(rnd.size, dtype=bool)
    dup[o2[1:]] = ck[o2[1:]] == ck[o2[:-1]]
    first_in_chain[dup] = False
    a_cls = np.where(first_in_chain, prev_cls, write_cls)  # the value an rrc adds to
    a_ver = np.where(first_in_chain, prev_ver, write_ver)
    s_units, s_chunks = _compact_places(grp[w_cls == _S], w, p, C, order)
    if reuse_scratch:  # kept only where it saves scratch
        r_units, r_chunks = _reuse_places(rnd, chunk, src, dst, read_cls, write_cls, a_cls, op, w, p, C, K,
                                          final_copy)
        reuse_scratch = int(r_chunks.max(initial=0)) < int(s_chunks.max(initial=0))
        if reuse_scratch:
            s_units, s_chunks = r_units, r_chunks
    s_off = np.where(read_cls == _S, s_units[src, chunk],
                     np.where(r_buf == 0, bm.i_off(src, chunk, uo), bm.o_off(src, chunk, uo)))
    d_off = np.where(write_cls == _S, s_units[dst, chunk], bm.o_off(dst, chunk, uo))
    a_buf = np.where(a_cls == _S, 2, np.where(a_ver == 0, v0_a, 1))
    a_off = np.where(a_cls == _S, s_units[dst, chunk],
                     np.where(a_buf == 0, bm.i_off(dst, chunk, uo), bm.o_off(dst, chunk, uo)))
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
    last_write_at = {}  # place -> op id; a place is (gpu, chunk, class), or (gpu, -1, unit) of reused scratch
    readers = {}  # place -> [op ids]
    s_units_l, w_l = s_units.tolist(), w.tolist()

    def places(gpu, c, cl):
        """The places a (gpu, chunk) value of class ``cl`` occupies: one, or every scratch unit when reused."""
        if cl == _S and reuse_scratch:
            u0 = s_units_l[gpu][c]
            return [(gpu, -1, x) for x in range(u0, u0 + w_l[c])]
        return [(gpu, c, cl)]
    run_end = np.r_[run_start[1:], rnd.size]
    runs_by_round = {}
    for a, b in zip(run_start.tolist(), run_end.tolist()):
        runs_by_round.setdefault(int(rnd[a]), []).append((a, b))
    BUF = "ios"
    if initial_copy:  # copy the input into the output first, so version 0 reads come from o like the rest
        live_all = order[w[order] > 0]
        for gpu in range(p):
            live = live_all[bm.has_v0(gpu, live_all) & bm.has_o(gpu, live_all)].tolist()
            i = 0
            while i < len(live):
                j, tot = i, 0
                while j < len(live) and tot + int(w[live[j]]) <= caps:
                    tot += int(w[live[j]])
                    j += 1
                u0 = unit_offset[live[i]]
                ops.append(Op(gpu, ("local", -1), -1, "cpy", "i", int(bm.i_off(gpu, live[i], u0)), "o",
                               int(bm.o_off(gpu, live[i], u0)), tot, ()))
                k = len(ops) - 1
                for c in live[i:j]:
                    last_write[(gpu, c)] = k
                    last_write_at[(gpu, c, _O)] = k
                i = j
    chunk_l, src_l, dst_l, msg_l, op_l = chunk.tolist(), src.tolist(), dst.tolist(), msg.tolist(), op.tolist()
    rcls_l, wcls_l, acls_l = read_cls.tolist(), write_cls.tolist(), a_cls.tolist()
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
                for pl in places(u, c, cl):
                    readers.setdefault(pl, []).append(k)
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
                for pl in places(v, c, cl):
                    deps.update(readers.get(pl, ()))
                    if pl in last_write_at:
                        deps.add(last_write_at[pl])
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
                for pl in places(v, c, cl):
                    last_write_at[pl] = k
                    readers[pl] = []
                if reuse_scratch and reduce_ and acls_l[a] == _S and cl != _S:  # it reads the scratch place too
                    for pl in places(v, c, _S):
                        readers.setdefault(pl, []).append(k)
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
                           int(bm.o_off(gpu, cs[i], unit_offset[cs[i]])), tot, deps))
            n_final += 1
            i = j
    if not allreduce and outofplace and not initial_copy:
        n_final += _input_copies(ops, bm, p, C, w, order, unit_offset, np.unique(grp), last_write_at, readers, caps)
    return ops, s_chunks, n_final


def _input_copies(ops, bm, p, C, w, order, unit_offset, written, last_write_at, readers, caps):
    """Local copies ``i -> o`` of the output chunks no reception writes (out of place they would stay unset).

    An allgather's own block, and a reduce-scatter's own chunk that receives nothing.  In place
    the copy is the identity on one memory; it waits for every read of the chunk (``readers``),
    so that it races with none.  Returns the number of copies added.
    """
    live = order[w[order] > 0]
    n = 0
    for gpu in range(p):
        mine = live[bm.has_v0(gpu, live) & bm.has_o(gpu, live)]
        mine = mine[~np.isin(gpu * C + mine, written)].tolist()
        i = 0
        while i < len(mine):
            j, tot = i + 1, int(w[mine[i]])
            while (j < len(mine) and unit_offset[mine[j]] == unit_offset[mine[j - 1]] + w[mine[j - 1]]
                   and tot + int(w[mine[j]]) <= caps):
                tot += int(w[mine[j]])
                j += 1
            deps = set()
            for c in mine[i:j]:
                deps.update(readers.get((gpu, c, _O), ()))
                if (gpu, c, _O) in last_write_at:
                    deps.add(last_write_at[(gpu, c, _O)])
            u0 = unit_offset[mine[i]]
            ops.append(Op(gpu, ("local", -1), -1, "cpy", "i", int(bm.i_off(gpu, mine[i], u0)), "o",
                          int(bm.o_off(gpu, mine[i], u0)), tot, deps))
            n += 1
            i = j
    return n
