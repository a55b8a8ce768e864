"""Build an MSCCL export's operations: the runs of every message, and every dependency between them.

Given the places of :mod:`synth.runtime.msccl.layout`, :func:`plan_operations` cuts every message
into runs with equal ``cnt`` on both sides and builds the operations (sends of a round, then its
receives in chain order) with every read-after-write, write-after-read and write-after-write
dependency on (GPU, chunk, place); with reused scratch the dependencies of a scratch write are
tracked per scratch unit (its last writer and its readers since), whichever chunk they belonged to.
Fitting them into threadblocks is :mod:`synth.runtime.msccl.threadblocks`' job.

Examples
--------
>>> op = Op(0, ("send", 1), 0, "s", ("i", 0), ("o", 4), 2, {3})
>>> op.srcbuf, op.dstoff, op.deps0, op.tb
('i', 4, (3,), -1)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.errors import ScheduleError
from synth.runtime.msccl.layout import O_PLACE, S_PLACE, ChunkLayout, plan_places
from synth.schedule import COPY, REDUCE

__all__ = ["Op", "plan_operations"]

_O, _S = O_PLACE, S_PLACE


class Op:
    """One step of the algorithm before it has a threadblock: a send, a receive or a local copy.

    ``src`` and ``dst`` are places ``(buffer, offset)``; ``deps0`` is every dependency, ``deps``
    the minimal set for the current threadblocks, and ``tb``, ``pos``, ``step``, ``hasdep`` are
    set when the op is placed in one.
    """

    __slots__ = ("gpu", "stream", "msg", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "deps0", "deps", "tb",
                 "pos", "step", "hasdep")

    def __init__(self, gpu, stream, msg, type_, src, dst, cnt, deps):
        self.gpu, self.stream, self.msg, self.type, self.cnt = gpu, stream, msg, type_, cnt
        (self.srcbuf, self.srcoff), (self.dstbuf, self.dstoff) = src, dst
        self.deps0 = tuple(deps)
        self.deps = list(deps)
        self.tb = self.pos = self.step = -1
        self.hasdep = 0


@dataclass(frozen=True)
class _Rows:
    """Per transmission, as lists: what the operations of its run read and write, and where."""

    chunk: list
    src: list
    dst: list
    msg: list
    op: list
    read_cls: list
    write_cls: list
    a_cls: list
    r_buf: np.ndarray
    s_off: np.ndarray
    d_off: np.ndarray
    a_buf: np.ndarray
    a_off: np.ndarray
    cnt: np.ndarray


def _rows(arrays, layout, v, s_units, initial_copy):
    """The buffers and offsets every transmission reads, writes and adds to (:class:`_Rows`)."""
    rnd, op, chunk, src, dst, msg = arrays
    bm = layout.bufmap
    # where version 0 is read from: the input, or the output after a first copy (of what the output holds)
    v0_r = (bm.has_o(src, chunk) & bm.has_v0(src, chunk)).astype(np.int64) if initial_copy else 0
    v0_a = (bm.has_o(dst, chunk) & bm.has_v0(dst, chunk)).astype(np.int64) if initial_copy else 0
    r_buf = np.where(v.read_cls == _S, 2, np.where(v.read_ver == 0, v0_r, 1))
    uo = layout.unit_offset[chunk]
    s_off = np.where(v.read_cls == _S, s_units[src, chunk],
                     np.where(r_buf == 0, bm.i_off(src, chunk, uo), bm.o_off(src, chunk, uo)))
    d_off = np.where(v.write_cls == _S, s_units[dst, chunk], bm.o_off(dst, chunk, uo))
    a_buf = np.where(v.a_cls == _S, 2, np.where(v.a_ver == 0, v0_a, 1))
    a_off = np.where(v.a_cls == _S, s_units[dst, chunk],
                     np.where(a_buf == 0, bm.i_off(dst, chunk, uo), bm.o_off(dst, chunk, uo)))
    return _Rows(chunk.tolist(), src.tolist(), dst.tolist(), msg.tolist(), op.tolist(), v.read_cls.tolist(),
                 v.write_cls.tolist(), v.a_cls.tolist(), r_buf, s_off, d_off, a_buf, a_off, layout.w[chunk])


def _run_starts(arrays, layout, rows, v, caps):
    """Where the runs of equal ``cnt`` on both sides start: a message cut where a buffer, an offset or
    the operation changes, and where the run would exceed ``caps`` (``max_count - 1``) chunks."""
    rnd, op = arrays[0], arrays[1]
    t_cnt, s_off, d_off, a_off = rows.cnt, rows.s_off, rows.d_off, rows.a_off
    r_buf, a_buf, write_cls = rows.r_buf, rows.a_buf, v.write_cls
    brk = np.zeros(rnd.size, dtype=bool)
    brk[layout.mptr[:-1]] = True
    contig_s = np.r_[False, s_off[1:] == s_off[:-1] + t_cnt[:-1]]
    contig_d = np.r_[False, d_off[1:] == d_off[:-1] + t_cnt[:-1]]
    contig_a = np.r_[False, a_off[1:] == a_off[:-1] + t_cnt[:-1]]
    same = np.r_[False, (r_buf[1:] == r_buf[:-1]) & (write_cls[1:] == write_cls[:-1]) & (op[1:] == op[:-1])]
    same_a = np.r_[False, (a_buf[1:] == a_buf[:-1])]
    ok = contig_s & contig_d & same & ((op == COPY) | (contig_a & same_a))
    brk |= ~ok
    # cap cnt at max_count - 1 (a single chunk heavier than that cannot be sent)
    if int(t_cnt.max(initial=0)) > caps:
        raise ScheduleError(f"a chunk of weight {int(t_cnt.max())} needs cnt over {caps} "
                            f"(MSCCL_MAX_COUNT {caps + 1}); reduce the chunk weights")
    run_start = np.flatnonzero(brk)
    # split runs whose total count exceeds the cap (sequential, rare)
    run_cnt = np.add.reduceat(t_cnt, run_start) if rnd.size else np.zeros(0, dtype=np.int64)
    if rnd.size and run_cnt.max() > caps:
        brk_list = brk.tolist()
        acc = 0
        for i, c_ in enumerate(t_cnt.tolist()):
            if brk_list[i] or acc + c_ > caps:
                brk_list[i] = True
                acc = 0
            acc += c_
        run_start = np.flatnonzero(np.asarray(brk_list, dtype=bool))
    return run_start


class _Places:
    """The last writer and the readers since of every place, and the operations built so far.

    A place is ``(gpu, chunk, class)``, or ``(gpu, -1, unit)`` for every unit of a reused
    scratch place, whose dependencies are then tracked per unit, whichever chunk it held.
    """

    def __init__(self, s_units, w, reuse):
        self.ops: list[Op] = []
        self.last_write = {}  # (gpu, chunk) -> op id
        self.last_write_at = {}  # place -> op id
        self.readers = {}  # place -> [op ids]
        self.reuse = reuse
        self._s_units, self._w = s_units.tolist(), w.tolist()

    def places(self, gpu, c, cl):
        """The places a (gpu, chunk) value of class ``cl`` occupies: one, or every scratch unit when reused."""
        if cl == _S and self.reuse:
            u0 = self._s_units[gpu][c]
            return [(gpu, -1, x) for x in range(u0, u0 + self._w[c])]
        return [(gpu, c, cl)]

    def add(self, op) -> int:
        """Append ``op``; its id."""
        self.ops.append(op)
        return len(self.ops) - 1

    def read(self, k, gpu, cs, cl):
        """Operation ``k`` reads the (gpu, chunk) values of class ``cl`` for chunks ``cs``."""
        for c in cs:
            for pl in self.places(gpu, c, cl):
                self.readers.setdefault(pl, []).append(k)

    def o_deps(self, gpu, cs, after_value=False):
        """What a write into the output places of ``cs`` waits for: their readers and last writers (and,
        ``after_value``, the last write of each (gpu, chunk) value, wherever it went)."""
        deps = set()
        for c in cs:
            if after_value:
                deps.add(self.last_write[(gpu, c)])
            deps.update(self.readers.get((gpu, c, _O), ()))
            if (gpu, c, _O) in self.last_write_at:
                deps.add(self.last_write_at[(gpu, c, _O)])
        return deps


_BUF = "ios"


def _send(pl, rows, a, b):
    """The send of run ``[a, b)``: it reads the start-of-round values."""
    u, v = rows.src[a], rows.dst[a]
    cs = rows.chunk[a:b]
    deps = {pl.last_write[(u, c)] for c in cs if (u, c) in pl.last_write}
    cnt = int(rows.cnt[a:b].sum())
    k = pl.add(Op(u, ("send", v), rows.msg[a], "s", (_BUF[rows.r_buf[a]], int(rows.s_off[a])),
                  (_BUF[[1, 2][rows.write_cls[a]]], int(rows.d_off[a])), cnt, deps))
    pl.read(k, u, cs, rows.read_cls[a])


def _receive(pl, rows, a, b):
    """The receive (copy ``r`` or reduce ``rrc``) of run ``[a, b)``, after what its places wait for."""
    u, v = rows.src[a], rows.dst[a]
    cs = rows.chunk[a:b]
    cl = rows.write_cls[a]
    reduce_ = rows.op[a] == REDUCE
    deps = set()
    for c in cs:
        if reduce_ and (v, c) in pl.last_write:
            deps.add(pl.last_write[(v, c)])
        for place in pl.places(v, c, cl):
            deps.update(pl.readers.get(place, ()))
            if place in pl.last_write_at:
                deps.add(pl.last_write_at[place])
    cnt = int(rows.cnt[a:b].sum())
    if reduce_:
        srcbuf, srcoff, type_ = _BUF[rows.a_buf[a]], int(rows.a_off[a]), "rrc"
    else:
        srcbuf, srcoff, type_ = _BUF[rows.r_buf[a]], int(rows.s_off[a]), "r"
    k = pl.add(Op(v, ("recv", u), rows.msg[a], type_, (srcbuf, srcoff), (_BUF[[1, 2][cl]], int(rows.d_off[a])), cnt,
                  deps))
    for c in cs:
        pl.last_write[(v, c)] = k
        for place in pl.places(v, c, cl):
            pl.last_write_at[place] = k
            pl.readers[place] = []
        if pl.reuse and reduce_ and rows.a_cls[a] == _S and cl != _S:  # it reads the scratch place too
            pl.read(k, v, [c], _S)


def _initial_copies(pl, layout, caps):
    """Copy the input into the output first, so version 0 reads come from ``o`` like the rest."""
    bm, w, order, unit_offset = layout.bufmap, layout.w, layout.order, layout.unit_offset
    live_all = order[w[order] > 0]
    for gpu in range(layout.p):
        live = live_all[bm.has_v0(gpu, live_all) & bm.has_o(gpu, live_all)].tolist()
        i = 0
        while i < len(live):
            j, tot = i, 0
            while j < len(live) and tot + int(w[live[j]]) <= caps:
                tot += int(w[live[j]])
                j += 1
            u0 = unit_offset[live[i]]
            k = pl.add(Op(gpu, ("local", -1), -1, "cpy", ("i", int(bm.i_off(gpu, live[i], u0))),
                          ("o", int(bm.o_off(gpu, live[i], u0))), tot, ()))
            for c in live[i:j]:
                pl.last_write[(gpu, c)] = k
                pl.last_write_at[(gpu, c, _O)] = k
            i = j


def _final_copies(pl, layout, s_units, final_copy, caps):
    """Copies out of scratch of the last values that could not land in ``o``; their number."""
    w, pos, C = layout.w, layout.pos, layout.n_chunks
    fc = np.asarray(sorted(final_copy, key=lambda key: (key // C, pos[key % C])), dtype=np.int64)
    gpus, cs = fc // C, fc % C
    n, i = 0, 0
    while i < fc.size:
        gpu = int(gpus[i])
        j = i + 1
        tot = int(w[cs[i]])
        while (j < fc.size and gpus[j] == gpu and pos[cs[j]] == pos[cs[j - 1]] + 1
               and s_units[gpu, cs[j]] == s_units[gpu, cs[j - 1]] + w[cs[j - 1]] and tot + w[cs[j]] <= caps):
            tot += int(w[cs[j]])
            j += 1
        deps = pl.o_deps(gpu, cs[i:j].tolist(), after_value=True)
        pl.add(Op(gpu, ("local", -1), -1, "cpy", ("s", int(s_units[gpu, cs[i]])),
                  ("o", int(layout.bufmap.o_off(gpu, cs[i], layout.unit_offset[cs[i]]))), tot, deps))
        n += 1
        i = j
    return n


def _input_copies(pl, layout, written, caps):
    """Local copies ``i -> o`` of the output chunks no reception writes (out of place they would stay unset).

    An allgather's own block, and a reduce-scatter's own chunk that receives nothing.  In place
    the copy is the identity on one memory; it waits for every read of the chunk (``readers``),
    so that it races with none.  Returns the number of copies added.
    """
    bm, w, order, unit_offset, C = layout.bufmap, layout.w, layout.order, layout.unit_offset, layout.n_chunks
    live = order[w[order] > 0]
    n = 0
    for gpu in range(layout.p):
        mine = live[bm.has_v0(gpu, live) & bm.has_o(gpu, live)]
        mine = mine[~np.isin(gpu * C + mine, written)].tolist()
        i = 0
        while i < len(mine):
            j, tot = i + 1, int(w[mine[i]])
            while (j < len(mine) and unit_offset[mine[j]] == unit_offset[mine[j - 1]] + w[mine[j - 1]]
                   and tot + int(w[mine[j]]) <= caps):
                tot += int(w[mine[j]])
                j += 1
            u0 = unit_offset[mine[i]]
            pl.add(Op(gpu, ("local", -1), -1, "cpy", ("i", int(bm.i_off(gpu, mine[i], u0))),
                      ("o", int(bm.o_off(gpu, mine[i], u0))), tot, pl.o_deps(gpu, mine[i:j])))
            n += 1
            i = j
    return n


def plan_operations(arrays, layout: ChunkLayout, limits, *, initial_copy, outofplace=True, reuse_scratch=False):
    """The operations of the algorithm, with their dependencies (module docstring).

    ``arrays`` are the transmissions ``(round, op, chunk, src, dst, message)`` sorted by message,
    then by chunk position in the ``layout`` order, whose ``bufmap`` says where chunks live in ``i``
    and ``o``; for a reduce-scatter or allgather, ``outofplace`` adds the local copies that fill
    output chunks no reception writes (an allgather's own block).  ``reuse_scratch`` gives scratch
    places to several chunks in turn (:func:`_reuse_places`), where that needs fewer scratch
    chunks; the dependencies are then kept per scratch unit.  Returns ``(ops, s_chunks, n_final)``:
    the operations in a topological order, the scratch chunks of every GPU and the number of
    final copies (out of scratch, or out of the input).
    """
    rnd = arrays[0]
    v, s_units, s_chunks, reuse = plan_places(arrays, layout, reuse_scratch)
    rows = _rows(arrays, layout, v, s_units, initial_copy)
    caps = limits.max_count - 1
    run_start = _run_starts(arrays, layout, rows, v, caps)
    # -------- operations with dependencies (rounds in order: sends of the round, then receives)
    pl = _Places(s_units, layout.w, reuse)
    runs_by_round = {}
    for a, b in zip(run_start.tolist(), np.r_[run_start[1:], rnd.size].tolist()):
        runs_by_round.setdefault(int(rnd[a]), []).append((a, b))
    if initial_copy:
        _initial_copies(pl, layout, caps)
    for r_ in sorted(runs_by_round):
        runs = runs_by_round[r_]
        for a, b in runs:
            _send(pl, rows, a, b)
        for a, b in sorted(runs, key=lambda ab: (rows.dst[ab[0]], rows.src[ab[0]], ab[0])):  # in chain order
            _receive(pl, rows, a, b)
    n_final = _final_copies(pl, layout, s_units, v.final_copy, caps) if v.final_copy else 0
    if layout.bufmap.coll != "allreduce" and outofplace and not initial_copy:
        n_final += _input_copies(pl, layout, np.unique(v.grp), caps)
    return pl.ops, s_chunks, n_final
