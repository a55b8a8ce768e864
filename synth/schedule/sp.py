"""SP-allreduce (paper section 3.1): one BFS tree, lifted by Γ.

The base tree is rooted at vertex 0; the parent of ``v`` is the next vertex on
the torus's dimension-order route from ``v`` to 0 (:meth:`synth.topology.torus.Torus.route`),
so the tree is a deterministic BFS tree of depth ``H`` (:func:`synth.schedule.forest.bfs_forest`).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("8x8")
>>> b = sp_allreduce(t)
>>> b.n_rounds, b.n_transmissions, int(b.route_lengths.max())
(16, 126, 1)
"""

from __future__ import annotations

import numpy as np

from synth.errors import TopologyError, check_instance, check_int
from synth.schedule.data import BaseSchedule
from synth.schedule.forest import bfs_forest, tree_schedule
from synth.topology.torus import Torus

__all__ = ["bfs_parents", "sp_allreduce"]


def bfs_parents(t: Torus, root: int = 0) -> np.ndarray:
    """Parent of every vertex in the dimension-order BFS tree rooted at ``root`` (``-1`` at the root)."""
    return bfs_forest(t, [root])


def sp_allreduce(t: Torus, root: int = 0) -> BaseSchedule:
    """The SP-allreduce base schedule: the BFS tree, ``2H`` rounds, one-hop routes."""
    check_instance(t, "t", Torus, " (e.g. synth.parse_torus('4x4'))")
    root = check_int(root, "root")
    if not isinstance(t, Torus):
        raise TopologyError("SP-allreduce's BFS tree is built on tori")
    parent = bfs_parents(t, root)
    return tree_schedule(t, parent, root, route=lambda u, w: t.link_ids([u], [w]),
                         label=f"SP BFS tree, root {root}, depth {t.diameter}")
