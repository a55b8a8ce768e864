"""Run every rank's plan in one process over a fake communicator: the plans, tested without MPI.

The same generators as under MPI (:class:`synth.runtime.mpi._worker.RankEngine`) yield the
requests they wait on; here a fake world delivers them, so a plan that would deadlock
under MPI raises :class:`~synth.errors.ScheduleError`.

Examples
--------
>>> from synth import lift, parse_torus, sp_allreduce, torus_gamma  # the public names
>>> t = parse_torus("4x4")
>>> simulate_run(lift(sp_allreduce(t), torus_gamma(t)), elements=1000, dtype="float32", mode="deps")
True
"""

from __future__ import annotations

from collections import defaultdict, deque

import numpy as np

from synth.errors import ScheduleError
from synth.runtime.mpi import _worker as worker
from synth.runtime.mpi.ranks import check_dtype, rank_plans
from synth.runtime.plan import build_plan, load_schedule, run_chunk_sizes

__all__ = ["simulate_run"]


class _FakeWorld:
    """Message matching of MPI (per source, tag, in posting order) inside one process."""

    def __init__(self, seed=None):
        self.mail = defaultdict(deque)
        self.posted = defaultdict(deque)
        self.rng = None if seed is None else np.random.default_rng(seed)
        self.force = False

    def pump(self, key):
        if self.rng is not None and not self.force and self.rng.random() < 0.5:
            return  # delivery delayed: exercises other interleavings
        mail, posted = self.mail[key], self.posted[key]
        while mail and posted:
            data, req = mail.popleft(), posted.popleft()
            if data.size != req.buf.size:
                raise ScheduleError(f"message {key}: {data.size} elements sent, {req.buf.size} expected")
            req.buf[...] = data
            req.done = True


class _FakeRequest:
    def __init__(self, world=None, key=None, buf=None):
        self.world, self.key, self.buf = world, key, buf
        self.done = world is None

    def test(self):
        if not self.done:
            self.world.pump(self.key)
        return self.done


class _FakeComm:
    def __init__(self, world, rank):
        self.world, self.rank = world, rank

    def Isend(self, buf, dest, tag):
        self.world.mail[(self.rank, dest, tag)].append(np.array(buf, copy=True))
        self.world.pump((self.rank, dest, tag))
        return _FakeRequest()

    def Irecv(self, buf, source, tag):
        req = _FakeRequest(self.world, (source, self.rank, tag), buf)
        self.world.posted[req.key].append(req)
        self.world.pump(req.key)
        return req


def simulate_run(source, elements: int = 1024, dtype: str = "float64", mode: str = "rounds", *,
                 layout: str = "greedy", seed=None, return_outputs: bool = False):
    """Run every rank's plan in this process over a fake communicator; ``True`` if all end with the exact sum.

    The ranks advance in turns; a rank blocked on its messages yields to the others, so a
    plan that would deadlock under MPI raises :class:`~synth.errors.ScheduleError` here.
    With ``seed``, deliveries are randomly delayed and the turn order shuffled, which
    exercises other interleavings (what ``deps`` mode must be robust to).  With
    ``return_outputs`` the per-rank result vectors are returned instead.
    """
    schedule, weights, _ = load_schedule(source)
    check_dtype(dtype)
    plan = build_plan(schedule, layout)
    sizes = run_chunk_sizes(schedule, weights, int(elements))
    plans = rank_plans(plan, sizes)
    p = plan.n_ranks
    world = _FakeWorld(seed)
    rng = np.random.default_rng(seed) if seed is not None else None
    engines = [worker.RankEngine(plans[r], elements, dtype) for r in range(p)]
    progs = []
    for r in range(p):
        x = worker.start_vector(schedule.collective, r, p, elements, dtype)
        prog = (engines[r].rounds_program if mode == "rounds" else engines[r].deps_program)(_FakeComm(world, r), x)
        progs.append(prog)
    waits = [None] * p
    results = [None] * p
    for r in range(p):
        waits[r] = _advance(progs[r], None, results, r)
    while any(w is not None for w in waits):
        moved = False
        turn = rng.permutation(p) if rng is not None else range(p)
        for r in turn:
            if waits[r] is None:
                continue
            kind, reqs = waits[r]
            if kind == "all":
                if all(q.test() for q in reqs):
                    waits[r] = _advance(progs[r], None, results, r)
                    moved = True
            else:
                idx = [j for j, q in enumerate(reqs) if q.test()]
                if idx:
                    waits[r] = _advance(progs[r], idx, results, r)
                    moved = True
        if moved:
            world.force = False
        elif not world.force:
            world.force = True  # deliver everything deliverable before calling it a deadlock
        else:
            stuck = [r for r in range(p) if waits[r] is not None]
            raise ScheduleError(f"deadlock: ranks {stuck[:8]} wait for messages that never come")
    if return_outputs:
        return results
    checks = [worker.expected_part(schedule.collective, r, p, elements, dtype) for r in range(p)]
    return all(np.array_equal(out[lo:hi], want) for out, (lo, hi, want) in zip(results, checks))


def _advance(prog, value, results, r):
    try:
        return prog.send(value)  # send(None) also starts a fresh generator
    except StopIteration as stop:
        results[r] = np.array(stop.value, copy=True)
        return None
