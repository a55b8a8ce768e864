"""The torus baselines on HyperX, as the paper ran them: on the torus of the same shape embedded in it.

The paper (section 7.6) follows Swing (De Sensi et al., NSDI 2024, section 6,
whose SST runs on HyperX use the torus algorithm unchanged): a HyperX
``n_1 x ... x n_d`` contains the torus of the same shape, each node's ``+-1``
ring neighbours in every dimension being HyperX links, and Swing, Trivance
and Bucket run on that torus.  Every transmission keeps its torus route, hop by
hop along those ring links, so a node uses ``2d`` of its ``sum_i (n_i - 1)``
links (4 of 62 on 32x32), and the schedule's ``Psi``, ``Theta`` and per-round
loads are the torus schedule's.  The longer HyperX links are never used; a
transmission between nodes of one line still goes round the ring.

Examples
--------
>>> from synth.topology.hyperx import parse_hyperx
>>> from synth.baselines.bucket import bucket
>>> b = on_hyperx(bucket)(parse_hyperx("4x4"))
>>> b.topology.name, b.measure().rounds, b.notes.split("; ")[-1]
('hyperx 4x4', 12, 'on the 4x4 torus embedded in the HyperX (4 of 6 links per node)')
"""

from __future__ import annotations

import functools

import numpy as np

from synth.baselines.base import Baseline
from synth.errors import TopologyError
from synth.schedule import Block, Schedule
from synth.topology.hyperx import HyperX
from synth.topology.torus import torus

__all__ = ["embedded_torus", "on_hyperx"]


def embedded_torus(h: HyperX):
    """The torus of ``h``'s shape and ``link[e]``: the HyperX link that torus link ``e`` is.

    Vertex ids agree (row-major on both); torus link ``v*2d + 2i + s`` is the
    HyperX link from ``v`` to ``v +- e_i`` (``s = 0``: ``+1``, ``s = 1``: ``-1``).

    >>> from synth.topology.hyperx import parse_hyperx
    >>> h = parse_hyperx("3x4")
    >>> t, link = embedded_torus(h)
    >>> bool(np.array_equal(h.link_src[link], t.link_src) and np.array_equal(h.link_dst[link], t.link_dst))
    True
    """
    if any(n < 3 for n in h.shape):
        raise TopologyError(f"the torus baselines run on HyperX as the embedded torus, which needs sides of at "
                            f"least 3, not {'x'.join(map(str, h.shape))}")
    t = torus(h.shape)
    link = h.link_ids(t.link_src, t.link_dst)
    return t, np.asarray(link, dtype=np.int32)


def on_hyperx(build):
    """``build`` (a torus baseline) extended to HyperX by :func:`embedded_torus`; tori pass through."""

    @functools.wraps(build)
    def wrapped(topology):
        if not isinstance(topology, HyperX):
            return build(topology)
        t, link = embedded_torus(topology)
        b = build(t)
        blocks = tuple(Block(x.round, x.op, x.chunk, link[x.links]) for x in b.schedule.blocks)
        schedule = Schedule(topology, b.schedule.n_chunks, b.schedule.n_rounds, blocks)
        shape = "x".join(map(str, topology.shape))
        notes = (f"{b.notes}; " if b.notes else "") + (
            f"on the {shape} torus embedded in the HyperX ({t.degree} of {topology.degree} links per node)")
        return Baseline(schedule, b.weights, b.name, notes)

    return wrapped
