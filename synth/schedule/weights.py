"""Integer chunk weights: proportional rounding, and the part of a schedule that moves some chunks only.

:func:`largest_remainder` rounds shares to integers with a given sum (the packing model's units,
an MSCCL export's chunks per loop).

A schedule's chunks are independent: each is an allreduce (or reduce-scatter, allgather) of its
own elements, so dropping chunks leaves a schedule of the same collective over the elements of
the chunks kept.  A packed schedule (:mod:`synth.models.packing`) has chunks of very unequal
weights; at a small message size some get no element at all (:func:`synth.schedule.chunking.chunk_elements`),
and the checker refuses a chunk of zero elements (it moves nothing and its loads prove nothing),
so whatever measures such a size measures the chunks that have elements (:func:`keep_chunks`).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.schedule.sp import sp_allreduce
>>> s = sp_allreduce(parse_torus("3")).as_schedule()
>>> s.n_chunks, s.n_transmissions
(1, 4)
>>> from synth.schedule.lift import lift
>>> from synth.symmetry.torus import torus_gamma
>>> full = lift(sp_allreduce(parse_torus("3")), torus_gamma(parse_torus("3")))
>>> part, sizes = keep_chunks(full, [0, 5, 1, 0, 0, 2])
>>> part.n_chunks, part.n_transmissions, sizes.tolist()
(3, 12, [5, 1, 2])
"""

from __future__ import annotations

import numpy as np

from synth.errors import ScheduleError
from synth.schedule.data import Block, Schedule

__all__ = ["keep_chunks", "largest_remainder"]


def keep_chunks(schedule: Schedule, sizes):
    """``(part, kept_sizes)``: ``schedule`` without the chunks whose size is zero, chunks renumbered in order.

    Raises
    ------
    ScheduleError
        If ``sizes`` has the wrong length, a negative entry, or no positive one.
    """
    sizes = np.asarray(sizes, dtype=np.int64).ravel()
    if sizes.size != schedule.n_chunks or np.any(sizes < 0) or not np.any(sizes > 0):
        raise ScheduleError(f"need {schedule.n_chunks} non-negative chunk sizes with a positive sum")
    keep = sizes > 0
    if keep.all():
        return schedule, sizes
    new_id = np.cumsum(keep) - 1
    blocks = []
    for b in schedule.blocks:
        sel = keep[b.chunk]
        if sel.any():
            blocks.append(Block(b.round, b.op, new_id[b.chunk[sel]], b.links[sel]))
    owner = None if schedule.owner is None else schedule.owner[keep]
    return (Schedule(schedule.topology, int(keep.sum()), schedule.n_rounds, tuple(blocks), schedule.collective,
                     owner), sizes[keep])


def largest_remainder(values, total: int) -> np.ndarray:
    """Nonnegative integers summing to ``total``, each within 1 of ``values * total / sum(values)``.

    >>> largest_remainder([0.5, 0.3, 0.2], 4).tolist()
    [2, 1, 1]
    """
    v = np.maximum(np.asarray(values, dtype=np.float64), 0.0)
    s = v.sum()
    if total == 0 or s <= 0:
        out = np.zeros(v.size, dtype=np.int64)
        if total:
            out[0] = total
        return out
    exact = v * (total / s)
    out = np.floor(exact + 1e-9).astype(np.int64)
    rest = total - int(out.sum())
    if rest > 0:
        order = np.lexsort((np.arange(v.size), -(exact - out)))
        out[order[:rest]] += 1
    elif rest < 0:
        order = np.lexsort((np.arange(v.size), exact - out))
        for i in order:
            if rest == 0:
                break
            take = min(int(out[i]), -rest)
            out[i] -= take
            rest += take
    return out
