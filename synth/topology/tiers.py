"""The tiers of a fabric of servers: its scale-out links, and the servers they join.

A GPU cluster has two tiers of links: fast ones inside a server (NVLink to an NVSwitch, xGMI, a TPU
slice's ICI torus) and slower ones between servers (NICs on rail switches, the data-centre network).
Here the *scale-out links* are the links of the least bandwidth when every one of them touches a
vertex that does not compute (a NIC, a rail or DCN switch), and the fabric has faster links too; the
*servers* are the groups of compute vertices that the other links join (through switches).  A
topology whose links carry no bandwidths (a torus) has no tiers; a fabric whose slowest links join
two GPUs directly (one MI250 node's single xGMI lanes) or that has one bandwidth is one server.
This is read from the links alone, so a preset and a ``--topology`` file of the same shape are alike.

GPU ``k`` of a server is its ``k``-th compute vertex by id, its *local index*: the NCCL baselines
(:mod:`synth.baselines.gpu`) pick rings and trees by it, and the MSCCL export
(:mod:`synth.runtime.msccl.rails`) puts a connection that leaves a server through GPU ``k``'s NIC on
channel ``k``.

Examples
--------
>>> from synth.topology import Topology
>>> links = [(0, 4), (1, 4), (2, 5), (3, 5), (0, 6), (2, 6)]   # 2 servers of 2 GPUs; GPUs 0 and 2 on a rail
>>> t = Topology.from_links("two", {"kind": "links"}, 7, links + [(b, a) for a, b in links], compute=[0, 1, 2, 3],
...                         bandwidth=[300] * 4 + [25] * 2 + [300] * 4 + [25] * 2)
>>> fabric_servers(t).tolist(), int(scale_out_links(t).sum())
([[0, 1], [2, 3]], 4)
>>> local_index(t).tolist()
[0, 1, 0, 1, -1, -1, -1]
>>> route = FastestRoutes(t)(1, 3)          # through both fast switches and the rail, not round a slow detour
>>> [(int(t.link_src[e]), int(t.link_dst[e])) for e in route]
[(1, 4), (4, 0), (0, 6), (6, 2), (2, 5), (5, 3)]
"""

from __future__ import annotations

import numpy as np

from synth.errors import TopologyError
from synth.topology.base import Topology

__all__ = ["scale_out_links", "fabric_servers", "local_index", "FastestRoutes"]


def scale_out_links(t: Topology) -> np.ndarray:
    """Boolean mask over the links: the scale-out tier (module docstring); all False when there is none."""
    if not isinstance(t, Topology):
        raise TopologyError(f"expected a topology, not {type(t).__name__}")
    bw = t.link_bandwidth
    if not t.has_bandwidths or t.n_links == 0:
        return np.zeros(t.n_links, dtype=bool)
    slow = bw == bw.min()
    if slow.all() or np.any(t.is_compute[t.link_src[slow]] & t.is_compute[t.link_dst[slow]]):
        return np.zeros(t.n_links, dtype=bool)
    return slow


def fabric_servers(t: Topology) -> np.ndarray:
    """The servers of a fabric: a ``servers x GPUs`` int64 array of compute vertices, a row per server (ordered
    by their first GPU), each in id order; one row when the fabric has no scale-out tier.

    Raises
    ------
    TopologyError
        If the servers hold different numbers of GPUs (a failed GPU, or a GPU cut off from its server).
    """
    compute = t.compute.astype(np.int64)
    slow = scale_out_links(t)
    if not slow.any():
        return compute.reshape(1, -1)
    label = _components(t, ~slow)
    first = np.unique(label[compute], return_index=True)[1]
    groups = [compute[label[compute] == label[compute[i]]] for i in np.sort(first)]
    sizes = sorted({g.size for g in groups})
    if len(sizes) > 1:
        raise TopologyError(f"{t.name}: servers of equal GPU counts are needed; its servers hold "
                            f"{', '.join(map(str, sizes))} GPUs")
    return np.stack(groups)


def local_index(t: Topology) -> np.ndarray:
    """The local index of every compute vertex within its server (-1 for the others), servers as in
    :func:`fabric_servers` but of any sizes."""
    out = np.full(t.n_vertices, -1, dtype=np.int64)
    compute = t.compute.astype(np.int64)
    slow = scale_out_links(t)
    label = _components(t, ~slow) if slow.any() else np.zeros(t.n_vertices, dtype=np.int64)
    for value in np.unique(label[compute]).tolist():
        members = compute[label[compute] == value]
        out[members] = np.arange(members.size)
    return out


def _components(t: Topology, keep) -> np.ndarray:
    """Weakly connected component label of every vertex over the links ``keep``."""
    from scipy.sparse import coo_matrix      # scipy loads only where fabrics are split (the CLI stays light)
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(int(keep.sum())), (t.link_src[keep], t.link_dst[keep])),
                       shape=(t.n_vertices, t.n_vertices))
    return connected_components(graph, directed=True, connection="weak")[1]


class FastestRoutes:
    """Routes of least ``sum 1 / bandwidth`` over their links (the time an element takes through them one after
    the other), fewer hops among equals, the lowest-numbered link among ties: what a fabric's own routing
    picks (a slice's ICI links before the data-centre switch, NVLink before a NIC).  ``routes(u, v)`` is the
    int32 link ids of the route ``u -> v``; one Dijkstra per destination, cached.
    """

    def __init__(self, t: Topology):
        from scipy.sparse import csr_matrix     # scipy loads only where routes are searched (the CLI stays light)

        self.t = t
        self.weight = 1.0 / t.link_bandwidth + 1e-9 / float(t.link_bandwidth.max())   # a hop breaks ties
        self.reverse = csr_matrix((self.weight, (t.link_dst, t.link_src)), shape=(t.n_vertices, t.n_vertices))
        self.to = {}

    def __call__(self, u: int, v: int) -> np.ndarray:
        t = self.t
        if v not in self.to:
            from scipy.sparse.csgraph import dijkstra

            self.to[v] = dijkstra(self.reverse, indices=int(v))
        dist = self.to[v]
        if not np.isfinite(dist[u]):
            raise TopologyError(f"vertex {v} cannot be reached from {u}")
        ptr, links = t.out_links
        route, x = [], int(u)
        while x != v:
            out = np.sort(links[ptr[x]:ptr[x + 1]])
            slack = dist[x] - (self.weight[out] + dist[t.link_dst[out]])
            nxt = int(out[np.argmax(slack >= -1e-12 * max(dist[x], 1e-300))])
            route.append(nxt)
            x = int(t.link_dst[nxt])
        return np.asarray(route, dtype=np.int32)
