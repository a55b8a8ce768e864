"""Execute a schedule on exact integers: does every node end with the sum of every input?

What "correct" means depends on the schedule's collective (:mod:`synth.schedule.data`):
allreduce, every compute node ends with the total of every chunk; reduce-scatter, the owner of
every chunk does (the others may hold anything); allgather, every compute node ends with the
owner's input of every chunk, where every non-owner's value starts as independent random
garbage, so a reduce into a value no copy has replaced, or a second delivery, is caught.

Execution uses random 64-bit inputs (seeded, so deterministic) summed modulo
2^64: a node ends with the exact total only if every input reached it exactly
once, except with probability below 2^-60 per (node, chunk) for a wrong
schedule.  A malformed schedule (a route that is not a path, a chunk id out of
range) is refused before anything runs.

Examples
--------
>>> from synth import lift, parse_torus, sp_allreduce, torus_gamma  # the public names
>>> t = parse_torus("4x4")
>>> execute(lift(sp_allreduce(t), torus_gamma(t)))
[]
>>> from synth.schedule.collective import collective_half
>>> execute(lift(collective_half(sp_allreduce(t), "allgather"), torus_gamma(t)))
[]
"""

from __future__ import annotations

import numpy as np

from synth.errors import ScheduleError, check_instance, check_int
from synth.schedule import ALLGATHER, ALLREDUCE, COPY, REDUCE_SCATTER, Schedule

__all__ = ["execute"]

_MAX_ERRORS = 5


def _validate(schedule: Schedule):
    t = schedule.topology
    for b in schedule.blocks:
        if b.chunk.size == 0:
            continue
        if b.chunk.min() < 0 or b.chunk.max() >= schedule.n_chunks:
            raise ScheduleError(f"round {b.round}: a chunk id lies outside 0..{schedule.n_chunks - 1}")
        if b.links.min() < 0 or b.links.max() >= t.n_links:
            raise ScheduleError(f"round {b.round}: a route uses a link id outside the topology")
        if b.links.shape[1] > 1 and np.any(t.link_dst[b.links[:, :-1]] != t.link_src[b.links[:, 1:]]):
            raise ScheduleError(f"round {b.round}: a route is not a path (consecutive links do not meet)")
        if t.n_compute < t.n_vertices and not (t.is_compute[t.link_src[b.links[:, 0]]].all()
                                               and t.is_compute[t.link_dst[b.links[:, -1]]].all()):
            raise ScheduleError(f"round {b.round}: a transmission starts or ends at a vertex that holds no data")


def execute(schedule: Schedule, seed: int = 0, batch_entries: int = 1 << 21) -> list:
    """Run the schedule on random uint64 inputs; return a list of errors (empty if correct).

    Chunks never interact, so they are executed in batches of about
    ``batch_entries / V`` chunks: memory stays small and accesses stay local.

    Raises
    ------
    ScheduleError
        If the schedule is malformed (a route that is not a path, a bad chunk id, ...).
    """
    check_instance(schedule, "schedule", Schedule)
    seed, batch_entries = check_int(seed, "seed"), check_int(batch_entries, "batch_entries", 1)
    _validate(schedule)
    t = schedule.topology
    C, V = schedule.n_chunks, t.n_vertices
    step = max(1, batch_entries // V)
    edges = np.arange(0, C + step, step).clip(max=C)
    blocks = []  # per block: (round, op, chunk sorted, src, dst, batch boundaries)
    for b in schedule.blocks:
        chunk, links = b.chunk, b.links
        if chunk.size > 1 and np.any(chunk[1:] < chunk[:-1]):
            order = np.argsort(chunk, kind="stable")
            chunk, links = chunk[order], links[order]
        blocks.append((b.round, b.op, chunk, t.link_src[links[:, 0]], t.link_dst[links[:, -1]],
                       np.searchsorted(chunk, edges)))
    rounds = {}
    for i, blk in enumerate(blocks):
        rounds.setdefault(blk[0], []).append(i)
    errors = []
    collective, owner = schedule.collective, schedule.owner
    compute = t.compute
    all_compute = t.n_compute == V
    vals = np.zeros(step * V, dtype=np.uint64)
    stamp = np.zeros(step * V, dtype=np.int32)
    for k in range(edges.size - 1):
        c0, c1 = int(edges[k]), int(edges[k + 1])
        if c0 == c1:
            break
        n = (c1 - c0) * V
        cur = vals[:n]
        inputs = np.random.default_rng((seed, k)).bit_generator.random_raw((c1 - c0) * t.n_compute)
        inputs = inputs.reshape(c1 - c0, t.n_compute)
        if all_compute:
            cur[:] = inputs.ravel()
        else:
            cur[:] = 0
            cur.reshape(c1 - c0, V)[:, compute] = inputs
        rows = np.arange(c1 - c0)
        if collective == ALLGATHER:  # only the owner's input is defined; everyone else starts with garbage
            own = cur.reshape(c1 - c0, V)[rows, owner[c0:c1]].copy()
            cur[:] = np.random.default_rng((seed, k, 1)).bit_generator.random_raw(n)
            cur.reshape(c1 - c0, V)[rows, owner[c0:c1]] = own
            total = own
        else:
            with np.errstate(over="ignore"):
                total = inputs.sum(axis=1, dtype=np.uint64)
        for rnd in sorted(rounds):
            red, cp = [], []
            for i in rounds[rnd]:
                _, op, chunk, src, dst, bnd = blocks[i]
                a, z = bnd[k], bnd[k + 1]
                if a == z:
                    continue
                base = (chunk[a:z].astype(np.int64) - c0) * V
                didx = base + dst[a:z]
                pay = cur[base + src[a:z]]  # payload: the sender's value at the start of the round
                (cp if op == COPY else red).append((didx, pay))
            if cp:
                ci = np.concatenate([d for d, _ in cp])
                marks = np.arange(ci.size, dtype=np.int32)
                stamp[ci] = marks
                if not np.array_equal(stamp[ci], marks):
                    errors.append(f"round {rnd}: two copies reach the same (node, chunk)")
                for d, _ in red:
                    stamp[d] = -1
                if red and not np.array_equal(stamp[ci], marks):
                    errors.append(f"round {rnd}: a copy and a reduce reach the same (node, chunk)")
            for d, pay in red:
                np.add.at(cur, d, pay)  # uint64 wraps: sums are exact modulo 2^64
            if cp:
                cur[ci] = np.concatenate([p for _, p in cp])
            if len(errors) >= _MAX_ERRORS:
                return errors
        final = cur.reshape(c1 - c0, V)
        if collective == REDUCE_SCATTER:
            bad = np.flatnonzero(final[rows, owner[c0:c1]] != total)
            for chunk in bad[:_MAX_ERRORS - len(errors)]:
                errors.append(f"chunk {int(chunk) + c0}: its owner {int(owner[c0 + chunk])} does not end with the "
                              "sum of all inputs (an input is missing or counted twice)")
        else:
            if not all_compute:
                final = final[:, compute]
            bad = np.argwhere(final != total[:, None])
            what = ("the sum of all inputs (an input is missing or counted twice)" if collective == ALLREDUCE else
                    "its owner's input (missing, summed or delivered twice)")
            for chunk, node in bad[:_MAX_ERRORS - len(errors)]:
                errors.append(f"node {int(compute[node])}, chunk {int(chunk) + c0}: does not end with {what}")
        if len(errors) >= _MAX_ERRORS:
            errors.append("... stopped after the first errors")
            return errors
    return errors
