"""Reduce-scatter and allgather as the two halves of a reduce-then-broadcast schedule.

A tree schedule (:func:`synth.schedule.forest.tree_schedule`) of depth ``h`` reduces towards
its root in rounds ``1..h`` and copies back down in rounds ``h+1..2h``.  After the first half
the root holds the exact sum of every input of its chunk: that half alone is a
*reduce-scatter* whose chunk is owned by the root.  The second half, run from the root's own
input instead of the sum, gives every node the root's value exactly once: an *allgather* of the
root's block.  Lifted through a group, chunk ``g(T)`` is owned by ``g(root)``
(:func:`synth.schedule.lift.lifted_owners`); with ``|G| > p`` several chunks share an owner
(Γ on a torus: ``2d`` chunks per node).  The layout of the blocks is in :mod:`synth.schedule.data`.

:func:`collective_half` takes the half of any base schedule whose reductions all come before
its copies and whose every component has exactly one root: SP (BFS trees), balanced tree
families, k-hop trees, HyperX windmills, spine-leaf stars and shortest-path trees of user
graphs.  A forest plus exchange has two roots that swap aggregates in the middle round: no
half of it is a reduce-scatter or an allgather by itself, and it is refused.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.schedule.sp import sp_allreduce
>>> t = parse_torus("4x4")
>>> rs = collective_half(sp_allreduce(t), "reduce-scatter")
>>> rs.collective, rs.n_rounds, rs.n_transmissions, rs.owner.tolist()
('reduce-scatter', 4, 15, [0])
>>> ag = collective_half(sp_allreduce(t), "allgather")
>>> ag.n_rounds, sorted(set(ag.op.tolist())), ag.owner.tolist()
(4, [1], [0])
"""

from __future__ import annotations

import numpy as np

from synth.errors import ScheduleError
from synth.schedule.data import ALLREDUCE, COLLECTIVES, COPY, REDUCE, REDUCE_SCATTER, BaseSchedule

__all__ = ["collective_half"]


def _split_round(base: BaseSchedule) -> int:
    """The last reduction round; every copy comes after it (else the schedule has no halves)."""
    red = base.round[base.op == REDUCE]
    cp = base.round[base.op == COPY]
    if red.size == 0 or cp.size == 0:
        raise ScheduleError("the schedule does not reduce and then copy: it has no reduce-scatter and allgather "
                            "halves")
    if int(red.max()) >= int(cp.min()):
        raise ScheduleError(f"the schedule copies in round {int(cp.min())} before its last reduction (round "
                            f"{int(red.max())}): its rounds do not split into a reduce-scatter and an allgather")
    return int(red.max())


def _roots(base: BaseSchedule, keep: np.ndarray, side: np.ndarray, what: str) -> np.ndarray:
    """The one compute vertex per component that never appears on ``side`` (senders or receivers) of ``keep``."""
    t = base.topology
    owners = []
    for c in range(base.n_components):
        sel = keep & (base.component == c)
        hit = np.zeros(t.n_vertices, dtype=bool)
        hit[side[sel]] = True
        free = np.flatnonzero(t.is_compute & ~hit)
        if free.size != 1:
            raise ScheduleError(f"component {c} ({base.labels[c]}): {free.size} compute vertices never {what}; "
                                "a reduce-scatter or allgather half needs exactly one root per component "
                                "(a forest plus exchange has two)")
        owners.append(int(free[0]))
    return np.asarray(owners, dtype=np.int64)


def collective_half(base: BaseSchedule, collective: str) -> BaseSchedule:
    """The reduce-scatter (reduction rounds) or allgather (copy rounds, renumbered from 1) of ``base``.

    ``collective`` ``"allreduce"`` returns ``base`` unchanged.  The owner of each component is
    its root: the one compute vertex that never sends in the reduction half (reduce-scatter)
    or never receives in the copy half (allgather).  The checker then executes the half as that
    collective, so a half that is not one is never certified.

    Raises
    ------
    ScheduleError
        If ``base`` is not an allreduce, copies before its last reduction, or a component does not
        have exactly one root.
    """
    if collective not in COLLECTIVES:
        raise ScheduleError(f"unknown collective {str(collective)[:40]!r}; valid: {', '.join(COLLECTIVES)}")
    if base.collective != ALLREDUCE:
        raise ScheduleError(f"the schedule is already a {base.collective}")
    if collective == ALLREDUCE:
        return base
    h = _split_round(base)
    if collective == REDUCE_SCATTER:
        keep = base.op == REDUCE
        owner = _roots(base, keep, base.src, "send in the reduction")
        shift, n_rounds = 0, h
    else:
        keep = base.op == COPY
        owner = _roots(base, keep, base.dst, "receive in the dissemination")
        shift, n_rounds = h, base.n_rounds - h
    idx = np.flatnonzero(keep)
    lengths = base.route_lengths[idx]
    ptr = np.concatenate([[0], np.cumsum(lengths)])
    links = base.route_links[np.repeat(keep, base.route_lengths)]  # the kept transmissions' routes, in order
    return BaseSchedule(base.topology, n_rounds, base.component[idx], base.round[idx] - shift, base.src[idx],
                        base.dst[idx], base.op[idx], ptr, links, base.weights, base.labels, collective,
                        owner).trimmed()
