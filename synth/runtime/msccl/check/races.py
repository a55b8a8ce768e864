"""Data races of an MSCCL algorithm: conflicting accesses that no happens-before relation orders.

A race-free program computes the same result in every execution, so one correct
interpretation (:func:`~synth.runtime.msccl.check.interpret.interpret`, whose trace
:func:`race_check` reads) proves them all.
"""

from __future__ import annotations

import numpy as np

from synth.runtime.msccl.check.parse import Algo, READS_SRC, WRITES_DST

__all__ = ["race_check"]


def _accesses(st):
    """(buffer, offset, count, writes) of the local memory a step touches."""
    t = st.type
    out = []
    if t in READS_SRC:
        out.append((st.srcbuf, st.srcoff, st.cnt, False))
    if t in WRITES_DST:
        out.append((st.dstbuf, st.dstoff, st.cnt, True))
    return out


def race_check(algo: Algo, trace, alias_io: bool, max_bytes: int = 1 << 29) -> list:
    """Errors for every pair of conflicting accesses that no happens-before relation orders.

    Happens-before is the weakest the runtimes guarantee, whatever their buffering: the
    order of steps in a threadblock, a dependency (the step waited for ends before the
    waiting step starts) and a message (its send starts before its receive ends).  Two
    steps of one GPU conflict when they touch a common chunk of one buffer and one of them
    writes it (``i`` and ``o`` are one buffer when ``alias_io``: at equal offsets for an
    allreduce, with a reducescatter's ``o[x]`` at ``i[r*B + x]`` and an allgather's ``i[x]`` at
    ``o[r*B + x]``, ``B`` the block, as the runtimes call them in place).  A race-free program
    computes the same result in every execution, so one correct interpretation proves
    them all.  Vector clocks over all threadblocks, computed along ``trace`` (a complete
    execution from :func:`interpret`); returns ``["race check skipped ..."]`` when they
    would take more than ``max_bytes``.
    """
    tbs = [(g.id, t) for g in sorted(algo.gpus, key=lambda g: g.id) for t in sorted(g.tbs, key=lambda t: t.id)]
    tb_index = {(gid, t.id): i for i, (gid, t) in enumerate(tbs)}
    base, n_steps = {}, 0
    for gid, t in tbs:
        base[(gid, t.id)] = n_steps
        n_steps += len(t.steps)
    n_tbs = len(tbs)
    longest = max((len(t.steps) for _, t in tbs), default=0)
    dtype = np.uint8 if 2 * longest + 2 < 255 else np.uint16
    if 2 * n_steps * n_tbs * np.dtype(dtype).itemsize > max_bytes:
        return [f"race check skipped: {n_steps} steps x {n_tbs} threadblocks of vector clocks exceed "
                f"{max_bytes >> 20} MiB"]
    vs = _start_clocks(tbs, trace, base, tb_index, dtype)
    x, y = _conflicts(algo, tbs, base, tb_index, alias_io)
    if x.shape[0] == 0:
        return []
    # ordered: end(x) before start(y), or end(y) before start(x)
    x_then_y = vs[y[:, 3], x[:, 4]] >= 2 * x[:, 5] + 2
    y_then_x = vs[x[:, 3], y[:, 4]] >= 2 * y[:, 5] + 2
    bad = np.flatnonzero(~(x_then_y | y_then_x))
    errors = []
    for j in bad[:5]:
        errors.append(f"race on gpu {int(x[j, 0])}, buffer {'ios'[int(x[j, 1])]} chunk {int(x[j, 2])}: tb "
                      f"{_tb_of(tbs, x[j, 4])} step {int(x[j, 5])} and tb {_tb_of(tbs, y[j, 4])} step {int(y[j, 5])} "
                      "are not ordered (a missing dependency)")
    if bad.size > 5:
        errors.append(f"... {bad.size} unordered pairs in all")
    return errors


def _start_clocks(tbs, trace, base, tb_index, dtype):
    """The vector clock at the start of every step, along ``trace``: entry t = 1 + (2k or 2k+1) for the last
    start/end of step k of threadblock t known to happen before."""
    n_steps, n_tbs = sum(len(t.steps) for _, t in tbs), len(tbs)
    vs = np.zeros((n_steps, n_tbs), dtype=dtype)
    ve = np.zeros((n_steps, n_tbs), dtype=dtype)
    steps = {(gid, t.id): t.steps for gid, t in tbs}
    for ev in trace:
        gid, tid, k = ev[1], ev[2], ev[3]
        key = (gid, tid)
        sid, ti = base[key] + k, tb_index[key]
        if ev[0] == "S":
            row = ve[sid - 1].copy() if k > 0 else np.zeros(n_tbs, dtype=dtype)
            st = steps[key][k]
            if st.depid >= 0:
                np.maximum(row, ve[base[(gid, st.depid)] + st.deps], out=row)
            row[ti] = 2 * k + 1
            vs[sid] = row
        else:
            row = vs[sid].copy()
            if ev[4] is not None:
                sg, stb, sk = ev[4]
                np.maximum(row, vs[base[(sg, stb)] + sk], out=row)
            row[ti] = 2 * k + 2
            ve[sid] = row
    return vs


def _conflicts(algo, tbs, base, tb_index, alias_io):
    """``(x, y)``: the pairs of accesses of two threadblocks of one GPU to one chunk of one buffer, one
    of them a write, each row ``(gpu, buffer, chunk, step id, tb index, step, writes)``."""
    coll = algo.attrs.get("coll", "allreduce")
    block = algo.nchunksperloop // max(len(algo.gpus), 1) if coll != "allreduce" else 0
    recs = []
    for gid, t in tbs:
        b0, ti = base[(gid, t.id)], tb_index[(gid, t.id)]
        for k, st in enumerate(t.steps):
            for buf, off, cnt, wr in _accesses(st):
                if alias_io and coll == "reducescatter" and buf == "o":
                    buf, off = "i", off + gid * block
                elif alias_io and buf == "i":
                    buf, off = "o", off + (gid * block if coll == "allgather" else 0)
                bi = "ios".index(buf)
                for u in range(off, off + cnt):
                    recs.append((gid, bi, u, b0 + k, ti, k, wr))
    if not recs:
        return np.zeros((0, 7), dtype=np.int64), np.zeros((0, 7), dtype=np.int64)
    a = np.asarray(recs, dtype=np.int64)
    a = a[np.lexsort((a[:, 3], a[:, 2], a[:, 1], a[:, 0]))]
    key = (a[:, 0] * 3 + a[:, 1]) * (1 << 32) + a[:, 2]
    cut = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ptr = np.r_[cut, key.size]
    sizes = np.diff(ptr)
    grp = np.repeat(np.arange(sizes.size), sizes)
    idx = np.arange(key.size)
    after = ptr[grp + 1] - idx - 1
    first = np.repeat(idx, after)
    second = first + 1 + (np.arange(int(after.sum())) - np.repeat(np.cumsum(after) - after, after))
    x, y = a[first], a[second]
    keep = (x[:, 6] | y[:, 6]).astype(bool) & (x[:, 4] != y[:, 4])
    x, y = x[keep], y[keep]
    if x.shape[0] == 0:
        return x, y
    pair = np.unique(np.stack([x[:, 3], y[:, 3]], axis=1), axis=0, return_index=True)[1]
    return x[pair], y[pair]


def _tb_of(tbs, ti):
    return tbs[int(ti)][1].id
