"""The base schedule of a spine-leaf network: the shortest-path star rooted at ``h_{0,0}``.

Every host sends to the root in one round (``h_{i,0}`` through ``L_0``; ``h_{i,j}``,
``j > 0``, through ``L_j``, ``S_i`` and ``L_0``) and receives the result back the same
way in the next.  Host links, the bottleneck, are balanced exactly; the idle share
of spine links in each round shows up honestly as Ω slightly above 1.

Examples
--------
>>> from synth.topology.spineleaf import spine_leaf
>>> b = spine_leaf_star(spine_leaf(2, 3, 2))
>>> b.n_rounds, int(b.route_lengths.max())
(2, 4)
"""

from __future__ import annotations

from synth.schedule.data import COPY, REDUCE, BaseSchedule
from synth.topology.spineleaf import SpineLeaf

__all__ = ["spine_leaf_star"]


def spine_leaf_star(s: SpineLeaf) -> BaseSchedule:
    """The shortest-path star rooted at ``h_{0,0}`` (see the module docstring)."""
    q, l = s.spines, s.leaves
    root = 0
    rows = []
    for j in range(l):
        for i in range(q):
            h = int(s.host(i, j))
            if h == root:
                continue
            path = [h, int(s.leaf(j)), root] if j == 0 else [h, int(s.leaf(j)), int(s.spine(i)), int(s.leaf(0)), root]
            up = s.link_ids(path[:-1], path[1:])
            down = s.link_ids(path[::-1][:-1], path[::-1][1:])
            rows.append((0, 1, h, root, REDUCE, up))
            rows.append((0, 2, root, h, COPY, down))
    rows.sort(key=lambda r: (r[1], r[2], r[3]))
    return BaseSchedule.from_rows(s, 2, rows, (1,), ("shortest-path star, root h(0,0), depth 1",))
