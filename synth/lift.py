"""Lift a base schedule through a group into the explicit schedule.

Chunk ``t*|G| + i`` is component ``t`` moved by group element ``i``: every
transmission of the component keeps its round and op, and its route is the
image of the base route link by link.  Chunk ``t*|G| + i`` has weight
``weights[t]`` (see :func:`synth.schedule.chunk_elements`).

Examples
--------
>>> from synth.torus import parse_torus
>>> from synth.group import torus_gamma
>>> from synth.sp import sp_allreduce
>>> t = parse_torus("4x4")
>>> s = lift(sp_allreduce(t), torus_gamma(t))
>>> s.n_chunks, s.n_rounds, s.n_transmissions
(64, 8, 1920)
"""

from __future__ import annotations

import numpy as np

from synth.errors import ScheduleError
from synth.group import Group
from synth.schedule import BaseSchedule, Block, Schedule

__all__ = ["lift", "lifted_weights"]


def lifted_weights(base: BaseSchedule, group: Group) -> np.ndarray:
    """Weight of every lifted chunk: component weights, each repeated ``|G|`` times."""
    return np.repeat(base.weights, group.order)


def lift(base: BaseSchedule, group: Group) -> Schedule:
    """The explicit schedule of ``base`` lifted through ``group``."""
    if group.topology is not base.topology and group.topology.n_links != base.topology.n_links:
        raise ScheduleError("the group and the base schedule live on different topologies")
    G = group.order
    blocks = []
    for part in base.grouped():
        t = int(base.component[part[0]])
        L = int(base.route_lengths[part[0]])
        # images of this block's k x L route links under all G elements: G x (k*L), so rows are chunks
        links = group.link_images(base.route_matrix(part)).reshape(G * part.size, L)
        chunk = np.repeat(np.arange(t * G, (t + 1) * G, dtype=np.int32), part.size)
        blocks.append(Block(int(base.round[part[0]]), int(base.op[part[0]]), chunk, links))
    return Schedule(base.topology, G * base.n_components, base.n_rounds, tuple(blocks))
