"""The base schedule of a user topology: a shortest-path tree rooted at a central compute vertex.

A BFS tree when every vertex computes, the star of shortest routes otherwise.

Examples
--------
>>> from synth.topology.user import topology_from_json
>>> t = topology_from_json({"format": "synth-topology", "version": 1, "vertices": 4,
...                         "links": [[0, 1], [1, 2], [2, 3], [3, 0]]})
>>> b = shortest_path_tree(t)
>>> b.n_rounds, b.labels
(4, ('BFS tree, root 0',))
>>> [links.tolist() for links, _ in round_incidences(b)]
[[4], [2, 6], [0, 1], [3]]
"""

from __future__ import annotations

import numpy as np

from synth.schedule.data import COPY, REDUCE, BaseSchedule
from synth.schedule.forest import tree_schedule
from synth.topology.base import Topology

__all__ = ["shortest_path_tree", "round_incidences"]


def shortest_path_tree(t: Topology) -> BaseSchedule:
    """BFS tree (all vertices compute) or the star of shortest routes, rooted at a central compute vertex.

    The root is the compute vertex of least eccentricity (the smallest id on ties), so the tree is
    as shallow as a shortest-path tree can be.
    """
    root = int(t.compute[int(np.argmin(_eccentricities(t)))])
    if t.n_compute == t.n_vertices:
        # parent: the lowest-numbered out-neighbour one hop closer to the root
        dist = t.bfs([root], reverse=True)
        closer = dist[t.link_dst] == dist[t.link_src] - 1
        parent = np.full(t.n_vertices, -1, dtype=np.int64)
        links = np.flatnonzero(closer)[::-1]  # reversed, so the lowest link id is written last
        parent[t.link_src[links]] = t.link_dst[links]
        parent[root] = -1
        return tree_schedule(t, parent, root, label=f"BFS tree, root {root}")
    rows = []
    for v in t.compute.tolist():
        if v != root:
            rows.append((0, 1, v, root, REDUCE, t.shortest_route(v, root)))
            rows.append((0, 2, root, v, COPY, t.shortest_route(root, v)))
    rows.sort(key=lambda r: (r[1], r[2], r[3]))
    return BaseSchedule.from_rows(t, 2, rows, (1,), (f"shortest-path star, root {root}",))


def _eccentricities(t: Topology, block_entries=1 << 23) -> np.ndarray:
    """Largest hop distance from every compute vertex to a compute vertex (BFS in C, sources in blocks)."""
    from scipy.sparse import coo_matrix          # scipy loads when a user graph needs it: synth's start-up is shorter
    from scipy.sparse.csgraph import shortest_path

    graph = coo_matrix((np.ones(t.n_links), (t.link_dst, t.link_src)), shape=(t.n_vertices,) * 2).tocsr()
    step = max(1, block_entries // max(1, t.n_vertices))
    ecc = []
    for a in range(0, t.n_compute, step):
        dist = shortest_path(graph, unweighted=True, indices=t.compute[a:a + step])  # reversed links: to v
        ecc.append(dist[:, t.compute].max(axis=1))
    return np.concatenate(ecc)


def round_incidences(base: BaseSchedule) -> list:
    """``(links, weights)`` per round of ``base``: every (transmission, route link) incidence and the weight of
    its component, the data :func:`synth.symmetry.search.search_group` ranks groups by."""
    lengths = np.diff(base.route_ptr)
    rounds = np.repeat(base.round, lengths)
    weights = np.repeat(np.asarray(base.weights, dtype=np.int64)[base.component], lengths)
    return [(base.route_links[rounds == s], weights[rounds == s]) for s in np.unique(base.round).tolist()]
