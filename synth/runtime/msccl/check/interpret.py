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
    rng = None if seed is None else np.random.default_rng(seed)
    run = _Machine(algo, np.asarray(inputs), in_place, capacity, int(elements_per_chunk), trace)
    try:
        run.run(rng)
    except _Mismatch as exc:
        run.errors.append(str(exc))
        return None, run.errors
    if run.errors:
        return None, run.errors
    return run.outputs(), run.errors


class _Machine:
    """The buffers, threadblocks and connections of one :func:`interpret` run."""

    def __init__(self, algo, inputs, in_place, capacity, E, trace):
        self.record = trace.append if trace is not None else (lambda ev: None)
        self.capacity, self.E, self.in_place, self.inputs = capacity, E, in_place, inputs
        self.gpus = sorted(algo.gpus, key=lambda g: g.id)
        coll = algo.attrs.get("coll", "allreduce")
        self.bufs = []
        for g in self.gpus:
            i, o = io_buffers(coll, g.id, len(self.gpus), algo.nchunksperloop, inputs[g.id], in_place, E)
            s = np.zeros(max(g.s_chunks, 0) * E, dtype=inputs.dtype)
            self.bufs.append({"i": i, "o": o, "s": s})
        # per threadblock state
        self.tbs = [(g.id, t) for g in self.gpus for t in sorted(g.tbs, key=lambda t: t.id)]
        self.pc = {(gid, t.id): 0 for gid, t in self.tbs}
        self.flag = {(gid, t.id): -1 for gid, t in self.tbs}
        self.phase = {}  # (gpu, tb) -> (data, item) for fused steps after their receive part / a posted send
        self.queues = {}  # (u, v, chan) -> list of [data, cnt, taken]
        self.errors = []

    def view(self, gid, buf, off, cnt):
        return self.bufs[gid][buf][off * self.E:(off + cnt) * self.E]

    def dep_ok(self, gid, st):
        return st.depid < 0 or self.flag[(gid, st.depid)] >= st.deps

    def post(self, gid, t, data, cnt):
        q = self.queues.setdefault((gid, t.send, t.chan), [])
        item = [data.copy(), cnt, False, (gid, t.id, self.pc[(gid, t.id)])]
        q.append(item)
        return item

    def send_done(self, gid, t, item):
        if self.capacity is None:
            return True
        if item[2]:
            return True
        if self.capacity == 0:
            return False
        q = self.queues[(gid, t.send, t.chan)]
        ahead = sum(1 for it in q if not it[2] and it is not item)
        return ahead < self.capacity

    def take(self, gid, t):
        q = self.queues.get((t.recv, gid, t.chan))
        if not q:
            return None
        for it in q:
            if not it[2]:
                return it
        return None

    def finish(self, gid, t, st, sender=None):
        state = self.phase.get((gid, t.id))
        if sender is None and state is not None and len(state) > 2:
            sender = state[2]
        self.record(("E", gid, t.id, self.pc[(gid, t.id)], sender))
        if state is not None and st.type == "s" and not np.array_equal(
                state[1][0], self.view(gid, st.srcbuf, st.srcoff, st.cnt)):
            raise _Mismatch(f"gpu {gid}, tb {t.id}, step {st.s}: the source changed while the send was in flight "
                            "(a missing dependency)")
        if st.hasdep:
            self.flag[(gid, t.id)] = st.s
        self.pc[(gid, t.id)] += 1
        self.phase.pop((gid, t.id), None)

    def local(self, gid, t, st):
        """A local copy ``cpy`` or reduce ``re``."""
        src = self.view(gid, st.srcbuf, st.srcoff, st.cnt)
        dst = self.view(gid, st.dstbuf, st.dstoff, st.cnt)
        if st.type == "cpy":
            dst[...] = src
        else:
            dst += src
        self.finish(gid, t, st)

    def receive(self, gid, t, st):
        """The receive part of a step: ``None`` if nothing has arrived, ``"done"`` for ``r``/``rrc``,
        else the state of its send part."""
        item = self.take(gid, t)
        if item is None:
            return None
        if item[1] != st.cnt:
            raise _Mismatch(f"gpu {gid}, tb {t.id}, step {st.s}: receives cnt {st.cnt} but the "
                            f"matching send has cnt {item[1]}")
        item[2] = True
        data = item[0]
        typ = st.type
        if typ in ("rrs", "rrc", "rrcs"):
            data = data + self.view(gid, st.srcbuf, st.srcoff, st.cnt)
        if typ in ("r", "rcs", "rrc", "rrcs"):
            self.view(gid, st.dstbuf, st.dstoff, st.cnt)[...] = data
        if typ in ("r", "rrc"):
            self.finish(gid, t, st, item[3])
            return "done"
        state = self.phase[(gid, t.id)] = ("sent", self.post(gid, t, data, st.cnt), item[3])
        return state

    def advance(self, gid, t):
        """Run tb ``t`` as far as it can go; True if it made any progress."""
        key = (gid, t.id)
        any_progress = False
        while self.pc[key] < len(t.steps):
            st = t.steps[self.pc[key]]
            state = self.phase.get(key)
            if state is None and not self.dep_ok(gid, st):
                return any_progress
            typ = st.type
            if state is None:
                if typ in RECVS and self.take(gid, t) is None:
                    return any_progress
                self.record(("S", gid, t.id, self.pc[key]))
            if typ == "nop":
                self.finish(gid, t, st)
                any_progress = True
                continue
            if typ in ("cpy", "re"):
                self.local(gid, t, st)
                any_progress = True
                continue
            if state is None:
                if typ == "s":
                    view = self.view(gid, st.srcbuf, st.srcoff, st.cnt)
                    state = self.phase[key] = ("sent", self.post(gid, t, view, st.cnt))
                else:
                    state = self.receive(gid, t, st)
                    if state is None:
                        return any_progress
                    if state == "done":
                        any_progress = True
                        continue
                any_progress = True
            if not self.send_done(gid, t, state[1]):
                return any_progress
            self.finish(gid, t, st)
            any_progress = True
        return any_progress

    def run(self, rng):
        """Advance the threadblocks in turns until all are done, or none can move (a deadlock: an error)."""
        active = list(self.tbs)
        lag = rng is not None
        while active:
            moved = False
            turn = [active[k] for k in rng.permutation(len(active))] if rng is not None else active
            for gid, t in turn:
                if lag and rng.random() < 0.3:
                    continue
                moved = self.advance(gid, t) or moved
            still = [(gid, t) for gid, t in active if self.pc[(gid, t.id)] < len(t.steps)]
            if not moved and lag:
                lag = False  # a pass without lagging decides whether this is a deadlock
                continue
            lag = rng is not None
            if not moved:
                self.errors.append(self.deadlock(still))
                return
            active = still

    def deadlock(self, still):
        stuck = []
        for gid, t in still[:6]:
            st = t.steps[self.pc[(gid, t.id)]]
            why = (f"waits for tb {st.depid} step {st.deps}" if (gid, t.id) not in self.phase
                   and not self.dep_ok(gid, st) else f"{st.type} blocked on its connection")
            stuck.append(f"gpu {gid} tb {t.id} step {st.s} ({why})")
        return "deadlock: " + "; ".join(stuck) + (" ..." if len(still) > 6 else "")

    def outputs(self):
        """The output buffers; errors for sends never received and an input modified out of place."""
        for key, q in self.queues.items():
            left = sum(1 for it in q if not it[2])
            if left:
                self.errors.append(f"connection {key[0]}->{key[1]} channel {key[2]}: {left} send(s) never received")
        outs = np.stack([b["o"] for b in self.bufs])
        if not self.in_place:
            for g, b in zip(self.gpus, self.bufs):
                if not np.array_equal(b["i"], self.inputs[g.id]):
                    self.errors.append(f"gpu {g.id}: the input buffer was modified in an out-of-place run")
                    break
        return outs
