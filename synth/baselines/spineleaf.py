"""The torus baselines on spine-leaf: on the ring of the hosts, every transmission routed through the switches.

The paper (section 7.6) runs Swing, Trivance and Bucket on its spine-leaf fabric beside Ring and
recursive doubling, without saying how the torus algorithms are laid out there; the reference
launcher (ajuerss/sst-trivance ``benchmarks/allreduce/launchAll.py``) knows only tori.  A host has
one link, so synth runs them as on a one-dimensional torus of the ``p`` hosts in id order (rank
``r`` is host ``r``; Swing and Trivance then have ``log2 p`` and ``ceil(log3 p)`` steps): the
algorithm keeps its partners, blocks and rounds, and each transmission goes straight from sender
to receiver along synth's spine-leaf route (``h -> L -> h`` on one leaf, else ``h -> L -> S -> L ->
h`` through the spine of the sender's index, :func:`synth.baselines._engine.spine_leaf_route`),
where on the torus it would have gone round the ring hop by hop.

Examples
--------
>>> from synth.topology.spineleaf import spine_leaf
>>> from synth.baselines.swing import swing_b
>>> b = on_spine_leaf(swing_b)(spine_leaf(2, 4, 2))
>>> b.topology.name, b.measure().rounds, b.notes.split("; ")[-1]
('spine-leaf 2,4,2', 6, 'on the ring of the 8 hosts, routed through the switches')
"""

from __future__ import annotations

import functools

import numpy as np

from synth.baselines._engine import _GraphRoutes
from synth.baselines.base import Baseline
from synth.schedule import Block, Schedule
from synth.topology.spineleaf import SpineLeaf
from synth.topology.torus import torus

__all__ = ["on_spine_leaf"]


def on_spine_leaf(build):
    """``build`` (a torus baseline) extended to spine-leaf (see the module docstring); others pass through."""

    @functools.wraps(build)
    def wrapped(topology):
        if not isinstance(topology, SpineLeaf):
            return build(topology)
        hosts = np.asarray(topology.compute, dtype=np.int64)
        ring = torus((hosts.size,))
        b = build(ring)
        routes = _GraphRoutes(topology)
        blocks = []
        for x in b.schedule.blocks:
            if not len(x):
                continue
            src = hosts[np.asarray(ring.link_src)[x.links[:, 0]]]
            dst = hosts[np.asarray(ring.link_dst)[x.links[:, -1]]]
            for L, (rows, links) in sorted(routes.links(src, dst).items()):
                blocks.append(Block(x.round, x.op, x.chunk[rows], links))
        schedule = Schedule(topology, b.schedule.n_chunks, b.schedule.n_rounds, tuple(blocks))
        notes = (f"{b.notes}; " if b.notes else "") + (
            f"on the ring of the {hosts.size} hosts, routed through the switches")
        return Baseline(schedule, b.weights, b.name, notes)

    return wrapped
