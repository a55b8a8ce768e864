"""The per-rank program of ``synth run``: executes one rank's part of a packed schedule.

Launched as ``mpiexec -n p python _worker.py DIR`` by :func:`synth.runtime.mpi.launch.run_schedule`.
It imports only numpy and mpi4py (not synth), so 64 ranks start as fast as the interpreter
allows.  ``DIR`` holds ``meta.json`` and one ``rank-<r>.npz`` per rank, written by
:func:`synth.runtime.mpi.launch.prepare_run`; rank 0 writes ``result.json`` there.

The engine is written as generators that *yield* the requests they wait on
(``("all", reqs)`` or ``("some", reqs)``); :func:`drive_mpi` performs those waits with
MPI, and :func:`synth.runtime.mpi.simulate.simulate_run` drives the same generators over an
in-process fake communicator, so the plans are testable without MPI.

Semantics (docs/spec.md §1): the payload of a round-``s`` message is the sender's value at
the start of round ``s``.

Collectives (``meta["collective"]``, :mod:`synth.schedule.data`): the vector is laid out by
owner rank, so rank ``r``'s block is elements ``[r*n/p, (r+1)*n/p)``.  A reduce-scatter starts
from the whole input and must end with the exact sum in the rank's own block, checked against
``MPI_Reduce_scatter_block``; an allgather starts from the rank's input block, every other
element set to :data:`UNDEFINED`, and must end with every rank's block, checked against
``MPI_Allgather`` (:func:`start_vector`, :func:`expected_part`).

* ``rounds``: per round, post every receive of the round (into private buffers, or straight
  into the vector for a copy that nothing else touches this round), every send (from the
  vector itself when the message is one contiguous run, else packed), wait for all of
  them, then apply the received payloads.  No global barrier: a rank only waits for its
  own messages.
* ``deps``: post every receive of the iteration at once; an operation runs as soon as
  what it needs is there: a send once the last writes to its chunks (before its round) are
  applied, a receive's apply once its message has arrived, the previous writes to its
  chunks are applied, and every send that reads the old values has captured them (a
  packed send captures at once; a zero-copy send when it completes).
"""

import json
import os
import sys
import time
from collections import deque

import numpy as np

REDUCE, COPY = 0, 1
PLAN_KEYS = ("s_round", "s_peer", "s_tag", "s_n", "s_rptr", "s_off", "s_len",
             "r_round", "r_peer", "r_tag", "r_n", "r_rptr", "r_off", "r_len", "r_op", "r_direct",
             "d_count", "d_ptr", "d_succ")


def input_vector(rank, n, dtype):
    """Rank ``rank``'s input: small integers, so every partial sum is exact in ``dtype``.

    ``x[j] = (1 + rank % 61) * (1 + j % 7) + j % 13``: a missing or doubled input changes the
    sum, and values depend on the position, so misplaced data shows too.
    """
    j = np.arange(n, dtype=np.int64)
    return ((1 + rank % 61) * (1 + j % 7) + j % 13).astype(dtype)


def expected_sum(p, n, dtype):
    """The exact elementwise sum of :func:`input_vector` over ranks ``0..p-1``."""
    a = sum(1 + r % 61 for r in range(p))
    j = np.arange(n, dtype=np.int64)
    return ((1 + j % 7) * a + p * (j % 13)).astype(dtype)


UNDEFINED = -7  # what an allgather's buffer holds outside the rank's block: no input value is negative
#: the MPI call each collective is checked against
MPI_CALLS = {"allreduce": "MPI_Allreduce", "reduce-scatter": "MPI_Reduce_scatter_block", "allgather": "MPI_Allgather"}


def start_vector(collective, rank, p, n, dtype):
    """What rank ``rank`` starts with: its input, or (allgather) its input block and :data:`UNDEFINED`."""
    x = input_vector(rank, n, dtype)
    if collective != "allgather":
        return x
    b = n // p
    out = np.full(n, UNDEFINED, dtype=dtype)
    out[rank * b:(rank + 1) * b] = x[rank * b:(rank + 1) * b]
    return out


def expected_part(collective, rank, p, n, dtype):
    """``(lo, hi, values)``: the slice of rank ``rank``'s vector that must end as ``values``."""
    if collective == "allreduce":
        return 0, n, expected_sum(p, n, dtype)
    b = n // p
    if collective == "reduce-scatter":
        return rank * b, (rank + 1) * b, expected_sum(p, n, dtype)[rank * b:(rank + 1) * b]
    j = np.arange(n, dtype=np.int64)
    owner = j // b  # element j comes from the input of the rank that owns its block
    return 0, n, ((1 + owner % 61) * (1 + j % 7) + j % 13).astype(dtype)


def mpi_reference(comm, MPI, collective, x, rank, p):
    """The MPI library's own result of the collective on ``x``, as the slice :func:`expected_part` checks."""
    n = x.size
    if collective == "allreduce":
        y = np.zeros(n, dtype=x.dtype)
        comm.Allreduce(x, y, op=MPI.SUM)
        return y
    b = n // p
    if collective == "reduce-scatter":
        y = np.zeros(b, dtype=x.dtype)
        comm.Reduce_scatter_block(x, y, op=MPI.SUM)
        return y
    y = np.zeros(n, dtype=x.dtype)
    comm.Allgather(np.ascontiguousarray(x[rank * b:(rank + 1) * b]), y)
    return y


class RankEngine:
    """One rank's buffers and precomputed plan (lists, for fast Python loops)."""

    def __init__(self, plan, n_elements, dtype):
        self.n = int(n_elements)
        self.dtype = np.dtype(dtype)
        g = {k: np.asarray(plan[k]) for k in PLAN_KEYS}
        self.S, self.R = int(g["s_round"].size), int(g["r_round"].size)
        self.buf = np.zeros(self.n, dtype=self.dtype)
        self.sends = self._sends(g)
        self.recvs = self._recvs(g)
        self.d_count = g["d_count"].astype(np.int64).tolist()
        ptr = g["d_ptr"].tolist()
        succ = g["d_succ"].tolist()
        self.d_succ = [succ[ptr[k]:ptr[k + 1]] for k in range(self.S + self.R)]
        self.rounds = sorted({s[0] for s in self.sends} | {r[0] for r in self.recvs})

    def _staging(self, g, side):
        """``(views, runs)`` of every message of ``side`` (``"s"`` or ``"r"``): its slice of one staging
        buffer, and the ``(offset, length)`` runs of the vector it carries (with a receive's ops)."""
        n = g[f"{side}_n"].astype(np.int64)
        start = np.concatenate([[0], np.cumsum(n)])
        staging = np.zeros(int(start[-1]), dtype=self.dtype)
        ptr, off, length = g[f"{side}_rptr"], g[f"{side}_off"].tolist(), g[f"{side}_len"].tolist()
        ops = g["r_op"].tolist() if side == "r" else [None] * len(off)
        views, runs = [], []
        for i in range(n.size):
            a, b = int(ptr[i]), int(ptr[i + 1])
            views.append(staging[start[i]:start[i + 1]])
            runs.append(list(zip(off[a:b], length[a:b], ops[a:b])))
        return views, runs

    def _sends(self, g):
        """Single-run messages go zero-copy from the vector, others are packed into their staging slice."""
        sends = []
        for i, (view, runs) in enumerate(zip(*self._staging(g, "s"))):
            if len(runs) == 1:
                o, L, _ = runs[0]
                view, packs = self.buf[o:o + L], None
            else:
                packs, at = [], 0
                for o, L, _ in runs:
                    packs.append((view[at:at + L], self.buf[o:o + L]))
                    at += L
            sends.append((int(g["s_round"][i]), int(g["s_peer"][i]), int(g["s_tag"][i]), view, packs))
        return sends

    def _recvs(self, g):
        """A private slice each; 'direct' ones land in the vector (rounds mode only)."""
        recvs = []
        for i, (view, runs) in enumerate(zip(*self._staging(g, "r"))):
            applies, at = [], 0
            for o, L, op in runs:
                applies.append((op, self.buf[o:o + L], view[at:at + L]))
                at += L
            direct = None
            if bool(g["r_direct"][i]) and len(applies) == 1 and applies[0][0] == COPY:
                direct = applies[0][1]
            recvs.append((int(g["r_round"][i]), int(g["r_peer"][i]), int(g["r_tag"][i]), view, applies, direct))
        return recvs

    # ------------------------------------------------------------- helpers
    def _apply(self, i):
        for op, dst, src in self.recvs[i][4]:
            if op == REDUCE:
                np.add(dst, src, out=dst)
            else:
                dst[...] = src

    def _isend(self, comm, i):
        _, peer, tag, view, packs = self.sends[i]
        if packs is not None:
            for d, s in packs:
                d[...] = s
        return comm.Isend(view, dest=peer, tag=tag), packs is not None

    # ------------------------------------------------------------- programs
    def rounds_program(self, comm, x):
        """Round-synchronous execution of one allreduce of ``x`` (a generator, see the module doc)."""
        self.buf[...] = x
        si = ri = 0
        for rnd in self.rounds:
            reqs, applies = [], []
            while ri < self.R and self.recvs[ri][0] == rnd:
                _, peer, tag, view, _, direct = self.recvs[ri]
                if direct is not None:
                    reqs.append(comm.Irecv(direct, source=peer, tag=tag))
                else:
                    reqs.append(comm.Irecv(view, source=peer, tag=tag))
                    applies.append(ri)
                ri += 1
            while si < self.S and self.sends[si][0] == rnd:
                reqs.append(self._isend(comm, si)[0])
                si += 1
            if reqs:
                yield ("all", reqs)
            for i in applies:
                self._apply(i)
        return self.buf

    def deps_program(self, comm, x):
        """Dependency-driven execution of one allreduce of ``x`` (a generator)."""
        self.buf[...] = x
        S, R = self.S, self.R
        count = list(self.d_count)
        pending, kinds = [], []  # requests we wait on, and (is_recv, op) for each
        for i in range(R):
            _, peer, tag, view, _, _ = self.recvs[i]
            pending.append(comm.Irecv(view, source=peer, tag=tag))
            kinds.append((True, S + i))
            count[S + i] += 1  # the message itself
        ready = deque(k for k in range(S + R) if count[k] == 0)
        captured = []  # packed sends: wait for them at the end only
        done = 0

        def finish(k):
            for s in self.d_succ[k]:
                count[s] -= 1
                if count[s] == 0:
                    ready.append(s)

        while done < S + R:
            while ready:
                k = ready.popleft()
                done += 1
                if k < S:
                    req, packed = self._isend(comm, k)
                    if packed:
                        captured.append(req)
                        finish(k)
                    else:
                        pending.append(req)
                        kinds.append((False, k))
                else:
                    self._apply(k - S)
                    finish(k)
            if done == S + R:
                break
            if not pending:
                raise RuntimeError("deadlock: nothing ready and nothing in flight (corrupt plan)")
            idx = yield ("some", pending)
            if not idx:
                raise RuntimeError("Waitsome returned nothing")
            gone = set(idx)
            for j in idx:
                is_recv, k = kinds[j]
                if is_recv:
                    count[k] -= 1
                    if count[k] == 0:
                        ready.append(k)
                else:
                    finish(k)
            pending = [r for j, r in enumerate(pending) if j not in gone]
            kinds = [q for j, q in enumerate(kinds) if j not in gone]
        rest = pending + captured
        if rest:
            yield ("all", rest)
        return self.buf


def drive_mpi(program):
    """Run an engine generator, performing its waits with MPI; returns its result.

    ``("some", reqs)`` is served by ``Testsome`` plus ``sched_yield`` rather than
    ``Waitsome``: MPICH's ``Waitsome`` polls without yielding the core, which with more
    ranks than cores costs milliseconds per wait (measured: 16 ranks on 2 cores, a
    round trip of 8 tiny messages took 65-215 ms with ``Waitsome`` and 8-34 ms with
    this loop).  On dedicated cores the yield returns at once.
    """
    from mpi4py import MPI

    yield_ = getattr(os, "sched_yield", lambda: None)
    try:
        want = next(program)
        while True:
            kind, reqs = want
            if kind == "all":
                MPI.Request.Waitall(reqs)
                want = program.send(None)
            else:
                while True:
                    idx = MPI.Request.Testsome(reqs)
                    if idx:
                        break
                    yield_()
                want = program.send(idx)
    except StopIteration as stop:
        return stop.value


def load_plan(directory, rank):
    with np.load(os.path.join(directory, f"rank-{rank}.npz")) as z:
        return {k: z[k] for k in PLAN_KEYS}


def _fail(directory, text):
    path = os.path.join(directory, f"error-{os.getpid()}.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(directory):
    with open(os.path.join(directory, "meta.json"), encoding="utf-8") as f:
        meta = json.load(f)
    try:
        from mpi4py import MPI
    except ImportError as exc:  # pragma: no cover - the parent checks first
        _fail(directory, f"cannot import mpi4py in the MPI ranks ({exc}); install it: pip install -e '.[mpi]'")
        return 3
    comm = MPI.COMM_WORLD
    p, rank = comm.Get_size(), comm.Get_rank()
    if p != meta["ranks"]:
        _fail(directory, f"MPI world size is {p}, expected {meta['ranks']} (is mpi4py built for this mpiexec? "
                         f"MPI library: {MPI.Get_library_version().splitlines()[0].strip()})")
        return 3
    try:
        return _run(directory, meta, comm, MPI)
    except Exception as exc:  # a bug or a corrupt plan: report it and stop every rank instead of hanging
        import traceback

        # the first line is the message the user sees (one line); the traceback follows for --workdir readers
        message = " ".join(str(exc).split())[:300]
        _fail(directory, f"rank {rank}: {exc.__class__.__name__}: {message}\n{traceback.format_exc()}")
        comm.Abort(4)
        return 4


def _run(directory, meta, comm, MPI):
    p, rank = comm.Get_size(), comm.Get_rank()
    n, dtype, mode = int(meta["elements"]), np.dtype(meta["dtype"]), meta["mode"]
    t0 = time.perf_counter()
    engine = RankEngine(load_plan(directory, rank), n, dtype)
    setup = time.perf_counter() - t0
    collective = meta.get("collective", "allreduce")
    x = start_vector(collective, rank, p, n, dtype)
    source = input_vector(rank, n, dtype)  # what MPI's call gets (an allgather sends only the own block of it)
    lo, hi, want = expected_part(collective, rank, p, n, dtype)
    program = engine.rounds_program if mode == "rounds" else engine.deps_program
    warmup, iters = int(meta["warmup"]), int(meta["iters"])
    t_sched = np.zeros(iters)
    t_mpi = np.zeros(iters)
    bad_exact = bad_mpi = 0
    first_bad = -1
    mpi_bad = 0
    for it in range(warmup + iters):
        comm.Barrier()
        a = MPI.Wtime()
        out = drive_mpi(program(comm, x))
        b = MPI.Wtime()
        comm.Barrier()
        c = MPI.Wtime()
        y = mpi_reference(comm, MPI, collective, source, rank, p)
        d = MPI.Wtime()
        if it >= warmup:
            t_sched[it - warmup] = b - a
            t_mpi[it - warmup] = d - c
        got = out[lo:hi]
        diff = np.flatnonzero(got != want)
        if diff.size:
            bad_exact += int(diff.size)
            if first_bad < 0:
                first_bad = int(diff[0]) + lo
        bad_mpi += int(np.count_nonzero(got != y))
        mpi_bad += int(np.count_nonzero(y != want))
    max_sched = np.zeros(iters)
    max_mpi = np.zeros(iters)
    comm.Reduce(t_sched, max_sched, op=MPI.MAX, root=0)
    comm.Reduce(t_mpi, max_mpi, op=MPI.MAX, root=0)
    checks = comm.gather((rank, bad_exact, first_bad, bad_mpi, mpi_bad, setup), root=0)
    if rank == 0:
        result = {
            "ranks": p, "elements": n, "dtype": dtype.name, "mode": mode, "iters": iters, "warmup": warmup,
            "schedule_s": max_sched.tolist(), "allreduce_s": max_mpi.tolist(),
            "bad": [[r, be, fb, bm, mb] for r, be, fb, bm, mb, _ in checks if be or bm or mb],
            "setup_s": max(c[5] for c in checks),
            "mpi_library": MPI.Get_library_version().splitlines()[0].strip(),
            "mpi_call": MPI_CALLS[collective],
        }
        tmp = os.path.join(directory, "result.json.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f)
        os.replace(tmp, os.path.join(directory, "result.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
