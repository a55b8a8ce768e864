"""Execute an MSCCL algorithm on numpy buffers, as the runtimes would, and record what happened.

:func:`interpret` executes every GPU's threadblocks: steps in order, waiting for their
dependency (the runtime's flag: the last finished ``hasdep`` step of the other threadblock),
and sends matched first-in first-out per connection.  By default a send completes only when
its receive has taken the data (``capacity=0``): a program that finishes like that finishes
with any amount of buffering, so the check covers large messages, where NCCL's connection
buffers fill up.

Examples
--------
An algorithm without a step leaves every output buffer zero (out of place):

>>> from synth.runtime.msccl.check.parse import parse_xml
>>> algo = parse_xml('<algo ngpus="1" nchunksperloop="1"><gpu id="0" i_chunks="1" o_chunks="1" '
...                  's_chunks="0"></gpu></algo>')
>>> out, errors = interpret(algo, np.ones((1, 1), dtype=np.uint64))
>>> out.tolist(), errors
([[0]], [])
"""

from __future__ import annotations

import numpy as np

from synth.runtime.msccl.check.parse import RECVS, Algo

__all__ = ["interpret", "io_buffers", "COLLS"]

COLLS = ("allreduce", "reducescatter", "allgather")


def io_buffers(coll: str, rank: int, ngpus: int, nchunks: int, inp, in_place: bool, E: int = 1):
    """GPU ``rank``'s ``(i, o)`` buffers for ``coll``, given its input ``inp`` (a copy is made).

    allreduce: ``i`` and ``o`` of ``nchunks`` chunks (one array in place).  reducescatter: ``i``
    the vector, ``o`` the GPU's block ``B = nchunks / ngpus``, in place the view ``i[r*B:(r+1)*B]``.
    allgather: ``i`` the block, ``o`` the vector, in place ``i`` is the view ``o[r*B:(r+1)*B]``
    (the runtimes' in-place calls: ``recvbuff = sendbuff + r * count`` and the converse).

    Examples
    --------
    >>> i, o = io_buffers("allgather", 1, 2, 4, np.array([7, 8]), in_place=True)
    >>> o.tolist(), np.shares_memory(i, o)
    ([0, 0, 7, 8], True)
    """
    inp = np.array(inp, copy=True)
    if coll == "allreduce" or coll not in COLLS:
        return inp, (inp if in_place else np.zeros_like(inp))
    B = nchunks // ngpus * E
    if coll == "reducescatter":
        return inp, (inp[rank * B:(rank + 1) * B] if in_place else np.zeros(B, dtype=inp.dtype))
    o = np.zeros(nchunks * E, dtype=inp.dtype)
    if in_place:
        o[rank * B:(rank + 1) * B] = inp
        return o[rank * B:(rank + 1) * B], o
    return inp, o


class _Mismatch(Exception):
    pass



def interpret(algo: Algo, inputs, in_place: bool = False, capacity: int | None = 0, elements_per_chunk: int = 1,
              seed: int | None = None, trace: list | None = None):
    """Execute ``algo`` on ``inputs`` (``ngpus x (i_chunks * elements_per_chunk)`` array).

    The buffers follow the algorithm's ``coll`` (:func:`io_buffers`): an allreduce's input and
    output are the vector, a reducescatter's output and an allgather's input the GPU's block, the
    smaller one aliased into the larger at ``r * block`` when ``in_place``.
    Returns ``(outputs, errors)``: the output buffers after the run (in place, the memory the
    input shares) and a list of errors (deadlock, data left in a
    connection, a receive whose ``cnt`` differs from its send, a send whose source changed
    before the send completed).  ``capacity`` is how many unreceived sends a connection
    holds before a send blocks; ``0`` (default) means a send completes only when its
    receive takes the data; ``None`` means unbounded.  Threadblocks advance in turns; with
    ``seed`` the turn order is shuffled and some threadblocks lag behind, which exposes
    missing dependencies as wrong sums.  With a ``trace`` list, the start and end of every
    step are appended to it in execution order (for :func:`race_check`).
    """
    record = trace.append if trace is not None else (lambda ev: None)
    rng = None if seed is None else np.random.default_rng(seed)
    E = int(elements_per_chunk)
    gpus = sorted(algo.gpus, key=lambda g: g.id)
    inputs = np.asarray(inputs)
    bufs = []
    coll = algo.attrs.get("coll", "allreduce")
    for g in gpus:
        i, o = io_buffers(coll, g.id, len(gpus), algo.nchunksperloop, inputs[g.id], in_place, E)
        s = np.zeros(max(g.s_chunks, 0) * E, dtype=inputs.dtype)
        bufs.append({"i": i, "o": o, "s": s})
    # per threadblock state
    tbs = [(g.id, t) for g in gpus for t in sorted(g.tbs, key=lambda t: t.id)]
    pc = {(gid, t.id): 0 for gid, t in tbs}
    flag = {(gid, t.id): -1 for gid, t in tbs}
    phase = {}  # (gpu, tb) -> (data, item) for fused steps after their receive part / a posted send
    queues = {}  # (u, v, chan) -> list of [data, cnt, taken]
    errors = []

    def view(gid, buf, off, cnt):
        return bufs[gid][buf][off * E:(off + cnt) * E]

    def dep_ok(gid, st):
        return st.depid < 0 or flag[(gid, st.depid)] >= st.deps

    def post(gid, t, data, cnt):
        q = queues.setdefault((gid, t.send, t.chan), [])
        item = [data.copy(), cnt, False, (gid, t.id, pc[(gid, t.id)])]
        q.append(item)
        return item

    def send_done(gid, t, item):
        if capacity is None:
            return True
        if item[2]:
            return True
        if capacity == 0:
            return False
        q = queues[(gid, t.send, t.chan)]
        ahead = sum(1 for it in q if not it[2] and it is not item)
        return ahead < capacity

    def take(gid, t):
        q = queues.get((t.recv, gid, t.chan))
        if not q:
            return None
        for it in q:
            if not it[2]:
                return it
        return None

    def finish(gid, t, st, sender=None):
        state = phase.get((gid, t.id))
        if sender is None and state is not None and len(state) > 2:
            sender = state[2]
        record(("E", gid, t.id, pc[(gid, t.id)], sender))
        if state is not None and st.type == "s" and not np.array_equal(
                state[1][0], view(gid, st.srcbuf, st.srcoff, st.cnt)):
            raise _Mismatch(f"gpu {gid}, tb {t.id}, step {st.s}: the source changed while the send was in flight "
                            "(a missing dependency)")
        if st.hasdep:
            flag[(gid, t.id)] = st.s
        pc[(gid, t.id)] += 1
        phase.pop((gid, t.id), None)

    def advance(gid, t):
        """Run tb ``t`` as far as it can go; True if it made any progress."""
        key = (gid, t.id)
        any_progress = False
        while pc[key] < len(t.steps):
            st = t.steps[pc[key]]
            state = phase.get(key)
            if state is None and not dep_ok(gid, st):
                return any_progress
            typ = st.type
            if state is None:
                if typ in RECVS and take(gid, t) is None:
                    return any_progress
                record(("S", gid, t.id, pc[key]))
            if typ == "nop":
                finish(gid, t, st)
                any_progress = True
                continue
            if typ in ("cpy", "re"):
                src = view(gid, st.srcbuf, st.srcoff, st.cnt)
                dst = view(gid, st.dstbuf, st.dstoff, st.cnt)
                if typ == "cpy":
                    dst[...] = src
                else:
                    dst += src
                finish(gid, t, st)
                any_progress = True
                continue
            if state is None:
                if typ == "s":
                    state = phase[key] = ("sent", post(gid, t, view(gid, st.srcbuf, st.srcoff, st.cnt), st.cnt))
                else:  # the receive part
                    item = take(gid, t)
                    if item is None:
                        return any_progress
                    if item[1] != st.cnt:
                        raise _Mismatch(f"gpu {gid}, tb {t.id}, step {st.s}: receives cnt {st.cnt} but the "
                                        f"matching send has cnt {item[1]}")
                    item[2] = True
                    data = item[0]
                    if typ in ("rrs", "rrc", "rrcs"):
                        data = data + view(gid, st.srcbuf, st.srcoff, st.cnt)
                    if typ in ("r", "rcs", "rrc", "rrcs"):
                        view(gid, st.dstbuf, st.dstoff, st.cnt)[...] = data
                    if typ in ("r", "rrc"):
                        finish(gid, t, st, item[3])
                        any_progress = True
                        continue
                    state = phase[key] = ("sent", post(gid, t, data, st.cnt), item[3])
                any_progress = True
            if not send_done(gid, t, state[1]):
                return any_progress
            finish(gid, t, st)
            any_progress = True
        return any_progress

    active = list(tbs)
    lag = rng is not None
    while active:
        moved = False
        turn = [active[k] for k in rng.permutation(len(active))] if rng is not None else active
        try:
            for gid, t in turn:
                if lag and rng.random() < 0.3:
                    continue
                moved = advance(gid, t) or moved
        except _Mismatch as exc:
            errors.append(str(exc))
            return None, errors
        still = [(gid, t) for gid, t in active if pc[(gid, t.id)] < len(t.steps)]
        if not moved and lag:
            lag = False  # a pass without lagging decides whether this is a deadlock
            continue
        lag = rng is not None
        if not moved:
            stuck = []
            for gid, t in still[:6]:
                st = t.steps[pc[(gid, t.id)]]
                why = (f"waits for tb {st.depid} step {st.deps}" if (gid, t.id) not in phase and not dep_ok(gid, st)
                       else f"{st.type} blocked on its connection")
                stuck.append(f"gpu {gid} tb {t.id} step {st.s} ({why})")
            errors.append("deadlock: " + "; ".join(stuck) + (" ..." if len(still) > 6 else ""))
            return None, errors
        active = still
    for key, q in queues.items():
        left = sum(1 for it in q if not it[2])
        if left:
            errors.append(f"connection {key[0]}->{key[1]} channel {key[2]}: {left} send(s) never received")
    outs = np.stack([b["o"] for b in bufs])
    if not in_place:
        for g, b in zip(gpus, bufs):
            if not np.array_equal(b["i"], inputs[g.id]):
                errors.append(f"gpu {g.id}: the input buffer was modified in an out-of-place run")
                break
    return outs, errors
