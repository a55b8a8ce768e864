"""Base trees of HyperX: the windmill on 2-D, a coordinate BFS tree otherwise.

The windmill (the paper's, depth 2): the root joins the cross (its row and
column); a node in the quadrant where both centred offsets have the same sign
attaches to the cross node of its column (same ``x``), the others to the cross
node of its row (same ``y``); the centred offset of ``n/2`` counts as positive.

Examples
--------
>>> from synth.topology.hyperx import parse_hyperx
>>> b = hyperx_tree(parse_hyperx("4x4"))
>>> b.n_rounds, b.n_transmissions, b.labels
(4, 30, ('windmill tree, root 0, depth 2',))
"""

from __future__ import annotations

import numpy as np

from synth.errors import TopologyError
from synth.schedule.data import BaseSchedule
from synth.schedule.forest import tree_schedule
from synth.topology.hyperx import HyperX

__all__ = ["windmill_parents", "coordinate_tree_parents", "hyperx_tree"]


def _centred(c, n):
    """Offsets in ``(-n/2, n/2]``: ``n/2`` itself counts as positive."""
    return np.where(2 * c <= n, c, c - n)


def windmill_parents(h: HyperX) -> np.ndarray:
    """Parents of the windmill tree rooted at vertex 0 on a 2-D HyperX."""
    if h.ndim != 2:
        raise TopologyError("the windmill tree is defined on 2-D HyperX")
    c = h.coords(np.arange(h.n_vertices))
    x, y = _centred(c[:, 0], h.shape[0]), _centred(c[:, 1], h.shape[1])
    same_sign = (x > 0) == (y > 0)
    column_node = h.vertex(np.stack([c[:, 0], np.zeros_like(c[:, 0])], axis=1))
    row_node = h.vertex(np.stack([np.zeros_like(c[:, 1]), c[:, 1]], axis=1))
    parent = np.where(same_sign, column_node, row_node)
    parent[(x == 0) | (y == 0)] = 0
    parent[0] = -1
    return parent.astype(np.int64)


def coordinate_tree_parents(h: HyperX) -> np.ndarray:
    """A BFS tree of depth ``d``: a node's parent clears its last nonzero coordinate."""
    c = h.coords(np.arange(h.n_vertices))
    nz = c != 0
    last = h.ndim - 1 - np.argmax(nz[:, ::-1], axis=1)
    cleared = c.copy()
    cleared[np.arange(h.n_vertices), last] = 0
    parent = h.vertex(cleared).astype(np.int64)
    parent[0] = -1
    return parent


def hyperx_tree(h: HyperX) -> BaseSchedule:
    """The windmill (2-D) or coordinate BFS tree (other dimensions) as a base schedule."""
    if h.ndim == 2:
        parent, label = windmill_parents(h), "windmill tree, root 0, depth 2"
    else:
        parent, label = coordinate_tree_parents(h), f"coordinate BFS tree, root 0, depth {h.ndim}"
    return tree_schedule(h, parent, 0, route=lambda u, w: h.link_ids([u], [w]), label=label)
