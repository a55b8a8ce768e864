"""Hierarchical trees: the timed master's first columns on fabrics whose links differ.

On a fabric of servers (GPU servers joined by NIC rails, TPU slices joined by the data-centre network) the
slow links bind, and the allreduce that crosses them least sends one partial sum per server and owner each
way: each server reduces its part of an owner's data over its fast links onto one *gateway*, the gateway sends
it over the slow network to the owner's server, and there it is reduced onto the owner (the copy goes back
the same way).  The timed master (:mod:`synth.models.packing.timed`) starts from the routed LP's trees,
which on such fabrics are stars through the switches (4 % of the volume bound on four MI250 nodes), and its
pricing needs many iterations to find trees of this shape.  :func:`hierarchical_columns` gives it them at
the start:

* the *clusters* are the groups of compute vertices joined by fast arcs, an arc being fast when its best
  route's narrowest link is faster than the slowest arc's (the servers of a GPU fabric, the slices of a
  multislice); one cluster, or no arc slower than another, gives no columns;
* owner ``r`` of cluster ``A`` has in every other cluster ``X`` the gateway of ``r``'s rank in ``A`` (the next
  in rank order that has an arc into ``A``), so the owners of one rank share no gateway's slow link and every
  rank's owners spread over the ranks' slow links (on GPU servers: each GPU's own NIC, rail-aligned); the
  gateway's parent is ``r`` where an arc joins them, else the vertex of ``A`` of the gateway's rank, else the
  nearest to ``r``;
* inside a cluster each vertex's parent is its fastest fast arc one hop nearer the cluster's root (the
  gateway, or ``r`` in ``A``);
* send rounds by depth (a depth's vertices in one round, as late as the tree allows and shifted earlier by
  ``0 .. R - D``) and by height (leaves first, shifted later), so the master can stagger the trees' slow hops.

Examples
--------
>>> from synth.topology.machines import machine_spec
>>> from synth.topology.spec import build_topology
>>> from synth.models.packing.tree_space import TreeSpace
>>> t = build_topology(machine_spec("dgx-a100:2"))
>>> space = TreeSpace.build(t, None, R=6)
>>> cols = hierarchical_columns(space, np.arange(16), per_owner=4)
>>> len(cols), {len(c) for c in cols}
(64, {5})
>>> k, L, plink, routes, window = cols[0]          # owner 0: GPU 8 (its rank's gateway) crosses to it
>>> int(space.arc_dst[plink[8]]), sorted({int(space.arc_dst[a]) for a in plink[9:16]})
(0, [8])
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, shortest_path

from synth.models.packing.tree_space import TreeSpace, arc_prices, tree_routes

__all__ = ["hierarchical_columns", "clusters", "arc_bandwidth", "HIERARCHY_PER_OWNER"]

#: labellings per owner at most (evenly spread over the shifts of both kinds)
HIERARCHY_PER_OWNER = 64


def arc_bandwidth(space: TreeSpace) -> np.ndarray:
    """Per arc: the bandwidth of its best route, the narrowest link's."""
    bw = np.r_[space.topology.link_bandwidth, np.inf][space.route_links]       # padding (-1): no limit
    return np.maximum.reduceat(bw.min(axis=1), space.route_ptr[:-1])


def clusters(space: TreeSpace):
    """``(label, fast)``: each live vertex's cluster (-1 elsewhere) and which arcs are fast (module docstring);
    None where every arc is as fast as every other or the fast arcs join every live vertex."""
    bw = arc_bandwidth(space)
    fast = bw > bw.min() * (1 + 1e-9)
    if not fast.any():
        return None
    V, src = space.live.size, space.hop.link_src.astype(np.int64)
    g = csr_matrix((np.ones(int(fast.sum())), (src[fast], space.arc_dst[fast])), shape=(V, V))
    label = connected_components(g, directed=True, connection="strong")[1]
    label = np.where(space.live, label, -1)
    return None if np.unique(label[space.live]).size < 2 else (label, fast)


def _parents(src, dst, bw, fast, hops, V):
    """Per vertex: its fastest fast arc to a vertex one hop nearer (``hops``: fast hops to the root), -1 if none."""
    a = np.flatnonzero(fast & np.isfinite(hops[src]) & (hops[dst] == hops[src] - 1))
    a = a[np.lexsort((a, -bw[a], src[a]))]
    first = np.ones(a.size, dtype=bool)
    first[1:] = src[a][1:] != src[a][:-1]
    par = np.full(V, -1, dtype=np.int64)
    par[src[a][first]] = a[first]
    return par


@dataclass(eq=False)
class _Fabric:
    """What the trees are built from: the clusters' members (sorted), each arc's source, bandwidth and speed, the
    arc of every pair, the fast arcs reversed (``graph``) and the fast hops to a vertex (cached)."""

    space: TreeSpace
    label: np.ndarray
    fast: np.ndarray
    src: np.ndarray
    bw: np.ndarray
    members: dict
    arc_of: dict
    graph: csr_matrix
    cache: dict = field(default_factory=dict)

    def hops_to(self, v: int) -> np.ndarray:
        """Fast hops from every vertex to ``v`` (from ``v`` over the reversed arcs)."""
        if v not in self.cache:
            self.cache[v] = shortest_path(self.graph, directed=True, unweighted=True, indices=[v])[0]
        return self.cache[v]

    def parents(self, v: int) -> np.ndarray:
        """Per vertex: its fastest fast arc one hop nearer ``v``."""
        return _parents(self.src, self.space.arc_dst, self.bw, self.fast, self.hops_to(v), self.space.live.size)


def _tree(f: _Fabric, r: int):
    """Owner ``r``'s hierarchical tree: ``(depth, plink)``, or None where some cluster cannot reach ``r``'s."""
    V = f.space.live.size
    A = f.members[f.label[r]]
    rank = int(np.searchsorted(A, r))
    depth = np.full(V, -1, dtype=np.int64)
    plink = np.full(V, -1, dtype=np.int64)
    hops = f.hops_to(r)
    depth[A] = hops[A]
    plink[A] = f.parents(r)[A]
    plink[r] = -1
    near = A[np.argsort(hops[A], kind="stable")]
    for c, X in f.members.items():
        if c == f.label[r]:
            continue
        gate = None
        for j in range(X.size):
            g = int(X[(rank + j) % X.size])
            for u in (r, int(A[int(np.searchsorted(X, g)) % A.size]), *near.tolist()):
                if (g, u) in f.arc_of:
                    gate = (g, u)
                    break
            if gate is not None:
                break
        if gate is None:
            return None
        g, u = gate
        depth[X] = depth[u] + 1 + f.hops_to(g)[X]
        plink[X] = f.parents(g)[X]
        plink[g] = f.arc_of[gate]
    live = f.space.live
    if np.any(depth[live] < 0) or np.any((plink[live] < 0) != (np.arange(V)[live] == r)):
        return None
    return depth, plink


def _heights(depth, plink, dst):
    """Each vertex's height in its tree (leaves 0), children before parents by decreasing depth."""
    height = np.zeros(depth.size, dtype=np.int64)
    order = np.argsort(-depth, kind="stable")
    for level in np.unique(depth[depth > 0])[::-1]:
        v = order[depth[order] == level]
        v = v[plink[v] >= 0]
        np.maximum.at(height, dst[plink[v]], height[v] + 1)
    return height


def hierarchical_columns(space: TreeSpace, roots, per_owner: int = HIERARCHY_PER_OWNER) -> list:
    """Columns ``(k, L, plink, routes, window)`` of the timed master, each owner's hierarchical tree under
    at most ``per_owner`` labellings (module docstring); empty where :func:`clusters` finds none, and an owner
    whose tree needs more than ``space.R`` rounds, or some cluster without an arc into the owner's, gets none."""
    found = clusters(space)
    if found is None:
        return []
    label, fast = found
    space_live = np.flatnonzero(space.live)
    R, src, dst = space.R, space.hop.link_src.astype(np.int64), space.arc_dst
    # the fast arcs reversed: hops from v in it are hops to v
    graph = csr_matrix((np.ones(int(fast.sum())), (dst[fast], src[fast])), shape=(space.live.size,) * 2)
    f = _Fabric(space, label, fast, src, arc_bandwidth(space),
                {int(c): space_live[label[space_live] == c] for c in np.unique(label[space_live])},
                {(int(a), int(b)): i for i, (a, b) in enumerate(zip(src.tolist(), dst.tolist()))}, graph)
    _C, up, down = arc_prices(space, np.ones((2 * R, space.topology.n_links)))
    out = []
    for k, r in enumerate(np.asarray(roots, dtype=np.int64).tolist()):
        tree = _tree(f, r)
        if tree is None or tree[0].max() > R:
            continue
        depth, plink = tree
        D, height = int(depth.max()), _heights(depth, plink, dst)
        rows = []
        for shift in range(R - D + 1):
            for lab in (R + 1 - depth - shift, 1 + height + shift):
                L = np.where(space.live, lab, 0)
                L[r] = R + 1
                rows.append(L)
        pick = np.unique(np.linspace(0, len(rows) - 1, min(per_owner, len(rows))).round().astype(np.int64))
        L = np.stack([rows[i] for i in pick.tolist()])
        routes = tree_routes(up, down, L, np.broadcast_to(plink, L.shape))
        out += [(k, L[i], plink.copy(), routes[i], (R, 0)) for i in range(L.shape[0])]
    return out
