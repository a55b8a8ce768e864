"""Plan an MSCCL export's places: where each chunk version lives, in ``i``/``o`` or in scratch.

The payload of a round-``s`` message is the sender's value at the start of the round, so a
chunk that a GPU both sends and receives in one round is received into the *other* place
(scratch ``s`` or output ``o``); :func:`plan_places` plans places backwards so that the
last value lands in ``o`` whenever possible, else a final local ``cpy`` moves it there.
Cutting messages into runs and building the operations with their dependencies is
:mod:`synth.runtime.msccl.operations`' job; fitting them into threadblocks
:mod:`synth.runtime.msccl.threadblocks`'.

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

from dataclasses import dataclass, field

import numpy as np

from synth.errors import ScheduleError
from synth.schedule import REDUCE

__all__ = ["BufferMap", "ChunkLayout", "plan_places", "O_PLACE", "S_PLACE"]

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


@dataclass(frozen=True)
class ChunkLayout:
    """Where the schedule's chunks lie in the MSCCL buffers, and which transmissions form one message.

    ``w[c]`` is the MSCCL chunks of schedule chunk ``c``, ``order`` the chunks in layout order,
    ``pos[c]`` the position of ``c`` in it and ``unit_offset[c]`` where ``c`` starts (in MSCCL
    chunks); ``mptr`` the boundaries of the messages in the transmissions sorted by message;
    ``p`` the GPUs, ``n_rounds`` the schedule's rounds, ``bufmap`` where chunks live in ``i`` and ``o``.

    Examples
    --------
    >>> lay = ChunkLayout(np.array([2, 1]), np.array([1, 0]), np.array([1, 0]), np.array([1, 0]),
    ...                   np.array([0, 2]), p=2, n_rounds=1)
    >>> lay.n_chunks, lay.units, lay.bufmap.coll
    (2, 3, 'allreduce')
    """

    w: np.ndarray
    order: np.ndarray
    pos: np.ndarray
    unit_offset: np.ndarray
    mptr: np.ndarray
    p: int
    n_rounds: int
    bufmap: BufferMap = field(default_factory=BufferMap)

    @property
    def n_chunks(self) -> int:
        """Chunks of the schedule (``C``)."""
        return int(self.w.size)

    @property
    def units(self) -> int:
        """MSCCL chunks of the whole vector (``nchunksperloop``)."""
        return int(self.w.sum())


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


def _reuse_places(arrays, v, layout):
    """Scratch offsets that a (gpu, chunk) holds only while its scratch value is live (module docstring).

    A (gpu, chunk) occupies its place from the round of its first write into scratch to the
    round of its last access there (a send, or a reduce adding to it; forever if a final copy
    reads it), and a place is given to another (gpu, chunk) only from a *later* round on, so
    the write that reuses it never waits for a step of its own round.  The chunks a message
    first writes into scratch get one contiguous segment, in the message's chunk order (rows
    sorted by message), at the lowest offset free from that round on.  Returns ``(s_units,
    s_chunks)`` as :func:`_compact_places` does.
    """
    rnd, op, chunk, src, dst, _ = arrays
    w, p, C = layout.w, layout.p, layout.n_chunks
    s_units = np.zeros((p, C), dtype=np.int64)
    s_chunks = np.zeros(p, dtype=np.int64)
    ws = v.write_cls == _S
    if not ws.any():
        return s_units, s_chunks
    adds = (v.a_cls == _S) & (op == REDUCE)
    keys = np.concatenate([(dst * C + chunk)[ws], (src * C + chunk)[v.read_cls == _S], (dst * C + chunk)[adds]])
    rounds = np.concatenate([rnd[ws], rnd[v.read_cls == _S], rnd[adds]])
    occ, first_row = np.unique((dst * C + chunk)[ws], return_index=True)  # (gpu, chunk) in scratch; first write
    end = np.full(occ.size, -1, dtype=np.int64)
    np.maximum.at(end, np.searchsorted(occ, keys), rounds)
    if v.final_copy:
        end[np.isin(occ, np.asarray(v.final_copy, dtype=np.int64))] = v.K  # read by the final copy: never freed
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


@dataclass(frozen=True)
class Versions:
    """Per transmission: the place class and version of what it reads, writes and (a reduce) adds to.

    ``grp``/``w_cls`` are the (gpu, chunk) key and place class of every distinct write round;
    ``final_copy`` the keys that need a final copy out of scratch; ``K`` the round key stride.
    """

    read_cls: np.ndarray
    read_ver: np.ndarray
    write_cls: np.ndarray
    a_cls: np.ndarray
    a_ver: np.ndarray
    grp: np.ndarray
    w_cls: np.ndarray
    final_copy: list
    K: int


def _versions(arrays, layout):
    """Places and versions of every transmission's read, write and reduce operand (module docstring)."""
    rnd, op, chunk, src, dst, _ = arrays
    bm, C = layout.bufmap, layout.n_chunks
    K = int(layout.n_rounds) + 2
    read_key = (src * C + chunk) * K + rnd
    write_key = (dst * C + chunk) * K + rnd
    wr = np.unique(write_key)  # distinct (gpu, chunk, write round)
    conflict = np.isin(wr, read_key)
    no_o = None if bm.coll == "allreduce" else ~bm.has_o(wr // K // C, wr // K % C)
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
    if bm.coll == "allgather":  # a GPU holds no value of another block before receiving it
        _check_allgather(arrays, bm, read_ver, prev_ver)
    # chain: several reduces into one (gpu, chunk) in one round, ordered by sender (rows sorted by msg)
    o2 = np.lexsort((src, write_key))
    first_in_chain = np.ones(rnd.size, dtype=bool)
    first_in_chain[o2[1:]] = write_key[o2[1:]] != write_key[o2[:-1]]
    a_cls = np.where(first_in_chain, prev_cls, write_cls)  # the value an rrc adds to
    a_ver = np.where(first_in_chain, prev_ver, write_ver)
    return Versions(read_cls, read_ver, write_cls, a_cls, a_ver, grp, w_cls, final_copy, K)


def _check_allgather(arrays, bm, read_ver, prev_ver):
    """Refuse an allgather that uses a GPU's value of another block before the GPU has received one."""
    rnd, op, chunk, src, dst, _ = arrays
    bad = (read_ver == 0) & ~bm.has_v0(src, chunk)
    bad |= (op == REDUCE) & (prev_ver == 0) & ~bm.has_v0(dst, chunk)
    if bad.any():
        k = int(np.argmax(bad))
        gpu = int(src[k]) if read_ver[k] == 0 else int(dst[k])
        raise ScheduleError(f"not an allgather: round {int(rnd[k])} uses GPU {gpu}'s value of chunk "
                            f"{int(chunk[k])} before it has received one")


def plan_places(arrays, layout, reuse_scratch):
    """``(v, s_units, s_chunks, reuse)``: the places and versions of every transmission (:class:`Versions`),
    and the scratch offset of every (gpu, chunk): one place each for the whole run, or places reused
    once dead where that needs fewer scratch chunks (``reuse`` says which was kept)."""
    v = _versions(arrays, layout)
    s_units, s_chunks = _compact_places(v.grp[v.w_cls == _S], layout.w, layout.p, layout.n_chunks, layout.order)
    if reuse_scratch:  # kept only where it saves scratch
        r_units, r_chunks = _reuse_places(arrays, v, layout)
        if int(r_chunks.max(initial=0)) < int(s_chunks.max(initial=0)):
            return v, r_units, r_chunks, True
    return v, s_units, s_chunks, False


