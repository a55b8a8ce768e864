"""Reduce-scatter and allgather baselines: the two phases of the allreduce baselines.

The bandwidth-optimal baselines (``ring``, ``bucket``, ``swing-b``, ``trivance-b``,
``halving-doubling``: Rabenseifner's recursive halving then doubling) are a reduce-scatter
followed by an allgather (:mod:`synth.baselines._engine`): every reduction comes before every
copy.  :func:`baseline_half` keeps one phase of the explicit schedule; the owner of a chunk is
the one compute node that never sends it in the reduce-scatter (the root of its reduction tree),
or never receives it in the allgather.  The chunks keep their weights and are cut into the
runtimes' equal blocks (:func:`synth.schedule.data.block_chunk_elements`); the checker then
executes the phase as that collective, so a phase that is not one is refused.

The latency-optimal variants (``swing-l``, ``trivance-l``, ``recursive-doubling``) add whole
vectors in every step and have no such phases; where a side does not fit an algorithm's radix,
the folded nodes own nothing after the reduce-scatter: both are refused with the reason.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.baselines import build_baseline
>>> rs = baseline_half(build_baseline("bucket", parse_torus("4x4")), "reduce-scatter")
>>> m = rs.measure()
>>> rs.name, m.rounds, str(m.psi), str(m.theta), str(m.omega)
('bucket', 6, '1', '1', '1')
>>> from synth.check import execute
>>> execute(baseline_half(build_baseline("swing-b", parse_torus("4x4")), "allgather").schedule)
[]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.baselines.base import Baseline
from synth.errors import ScheduleError, TopologyError
from synth.schedule import ALLREDUCE, COLLECTIVES, COPY, REDUCE, REDUCE_SCATTER, Block, Schedule
from synth.schedule.chunking import block_chunk_elements

__all__ = ["CollectiveBaseline", "baseline_half", "collective_elements"]


def collective_elements(owner, weights, compute) -> int:
    """One element per unit of weight of the node that owns the most: ``p`` blocks of that total."""
    owned = np.bincount(owner, weights=weights, minlength=int(np.max(compute)) + 1)[compute]
    return int(len(compute) * max(1, int(owned.max())))


@dataclass(frozen=True, eq=False)
class CollectiveBaseline(Baseline):
    """A :class:`~synth.baselines.base.Baseline` whose schedule is a reduce-scatter or allgather.

    Its chunks are cut into equal blocks, one per owner (the runtimes' layout), instead of
    proportionally over the whole vector.
    """

    def chunk_sizes(self, elements: int | None = None) -> np.ndarray:
        """Elements per chunk for ``elements`` per node (default: ``p`` blocks of the largest owned weight)."""
        s = self.schedule
        compute = s.topology.compute
        n = collective_elements(s.owner, self.weights, compute) if elements is None else int(elements)
        return block_chunk_elements(s.owner, self.weights, compute, n)


def _owners(schedule: Schedule, blocks, side: str, name: str) -> np.ndarray:
    t = schedule.topology
    hit = np.zeros((schedule.n_chunks, t.n_vertices), dtype=bool)
    for b in blocks:
        ends = t.link_src[b.links[:, 0]] if side == "src" else t.link_dst[b.links[:, -1]]
        hit[b.chunk, ends] = True
    free = ~hit[:, t.compute]
    count = free.sum(axis=1)
    if np.any(count != 1):
        c = int(np.argmax(count != 1))
        raise TopologyError(f"baseline {name}: chunk {c} has {int(count[c])} candidate owners (nodes that never "
                            f"{'send' if side == 'src' else 'receive'} it in that phase) on {t.name}; it has no "
                            "reduce-scatter and allgather phases here")
    return t.compute[np.argmax(free, axis=1)].astype(np.int64)


def baseline_half(baseline: Baseline, collective: str) -> Baseline:
    """The reduce-scatter (its reductions) or allgather (its copies, rounds from 1) of an allreduce baseline.

    Raises
    ------
    TopologyError
        If the baseline has no such phases on this shape (latency-optimal variants, folded sides).
    """
    if collective not in COLLECTIVES:
        raise TopologyError(f"unknown collective {str(collective)[:40]!r}; valid: {', '.join(COLLECTIVES)}")
    if collective == ALLREDUCE:
        return baseline
    s, name = baseline.schedule, baseline.name
    red = [b for b in s.blocks if b.op == REDUCE]
    cp = [b for b in s.blocks if b.op == COPY]
    if not red or not cp or max(b.round for b in red) >= min(b.round for b in cp):
        raise TopologyError(f"baseline {name} has no reduce-scatter and allgather phases (its steps "
                            "reduce and copy whole vectors); use ring, bucket, swing-b, trivance-b or halving-doubling")
    h = max(b.round for b in red)
    if collective == REDUCE_SCATTER:
        keep, owner, shift, rounds = red, _owners(s, red, "src", name), 0, h
    else:
        keep, owner, shift, rounds = cp, _owners(s, cp, "dst", name), h, s.n_rounds - h
    blocks = tuple(Block(b.round - shift, b.op, b.chunk, b.links) for b in keep)
    try:
        half = Schedule(s.topology, s.n_chunks, rounds, blocks, collective, owner)
        made = CollectiveBaseline(half, baseline.weights, name, baseline.notes)
        made.chunk_sizes()  # every node must own a block
    except ScheduleError as exc:
        raise TopologyError(f"baseline {name} has no {collective} phase on {s.topology.name}: {exc}") from None
    return made
