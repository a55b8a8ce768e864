"""User-supplied topologies: a JSON graph, its symmetry group given or searched, a lifted BFS tree.

File format ``synth-topology``, version 1::

    {"format": "synth-topology", "version": 1, "name": "my fabric",
     "vertices": 8,
     "links": [[0, 1], [1, 2], ...],      # connections (u, v)
     "directed": false,                   # false: each connection is two directed links
     "compute": [0, 1, ...],              # optional, default every vertex
     "generators": [[...], ...]}          # optional vertex permutations of a symmetry group

Without ``generators`` the automorphisms are searched (networkx VF2, capped)
and a group is built greedily from them, keeping one link orbit with a trivial
stabilizer (needed to number chunks, :mod:`synth.group`) and preferring groups
with few link orbits.  The base schedule is a shortest-path tree on the compute
vertices rooted at a central one: a BFS tree when every vertex computes, the
star of shortest routes otherwise.

Examples
--------
>>> spec = {"format": "synth-topology", "version": 1, "vertices": 4,
...         "links": [[0, 1], [1, 2], [2, 3], [3, 0]]}
>>> t = topology_from_json(spec)
>>> t.n_links
8
>>> g = search_group(t)
>>> g.order, g.is_regular
(8, True)
"""

from __future__ import annotations

import time

import numpy as np

from synth.errors import FileFormatError, GroupError, TopologyError
from synth.fileio import read_json
from synth.group import Group
from synth.schedule import COPY, REDUCE, BaseSchedule, tree_schedule
from synth.topology import Topology, check_size

__all__ = ["topology_from_json", "read_topology", "search_group", "user_group", "shortest_path_tree"]

FORMAT = "synth-topology"


def topology_from_json(data: dict) -> Topology:
    """Build the topology a ``synth-topology`` object describes."""
    if not isinstance(data, dict) or data.get("format", FORMAT) != FORMAT or data.get("version", 1) != 1:
        raise FileFormatError("not a synth-topology version 1 object")
    n, links, compute = data.get("vertices"), data.get("links"), data.get("compute", [])
    if not _is_int(n) or not isinstance(links, list) or not all(
            isinstance(pair, list) and len(pair) == 2 and _is_int(pair[0]) and _is_int(pair[1]) for pair in links):
        raise FileFormatError("a topology needs 'vertices' (an integer count) and 'links' ([[u, v], ...] of "
                              "integer vertex ids)")
    if not isinstance(compute, list) or not all(_is_int(c) for c in compute):
        raise FileFormatError("a topology's 'compute' must be a list of integer vertex ids")
    if not isinstance(data.get("directed", False), bool):
        raise FileFormatError("a topology's 'directed' must be true or false")
    try:
        check_size(str(data.get("name", "user topology"))[:200], n, len(links) * (1 if data.get("directed") else 2))
    except TopologyError as exc:
        raise FileFormatError(f"topology: {exc}") from None
    pairs = np.asarray(links, dtype=np.int64).reshape(-1, 2)
    if not data.get("directed", False):
        pairs = np.unique(np.concatenate([pairs, pairs[:, ::-1]]), axis=0)
    spec = {"kind": "links", "name": str(data.get("name", "user topology"))[:200], "vertices": n,
            "links": pairs.tolist()}
    if "compute" in data:
        spec["compute"] = [int(c) for c in data["compute"]]
    try:
        t = Topology.from_links(spec["name"], spec, n, pairs, spec.get("compute"))
    except TopologyError as exc:
        raise FileFormatError(f"topology: {exc}") from None
    for v in t.compute[:1]:
        if np.any(t.bfs([int(v)])[t.compute] < 0):
            raise TopologyError(f"{t.name}: some compute vertex cannot be reached from vertex {int(v)}")
    return t


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def read_topology(path):
    """Read a topology file: returns ``(topology, generators or None)``.

    The file is read bounded and strictly (:func:`synth.fileio.read_json`); its size is checked
    against :func:`synth.topology.check_size` before any array of the graph's size is made.
    """
    data = read_json(path)
    gens = data.get("generators")
    if gens is not None and not (isinstance(gens, list) and all(
            isinstance(g, list) and all(_is_int(v) for v in g) for g in gens)):
        raise FileFormatError(f"{path}: 'generators' must be lists of integer vertex ids")
    return topology_from_json(data), gens


def user_group(t: Topology, generators=None, *, max_automorphisms=200_000, seconds=30.0) -> Group:
    """The given generators (verified), or a searched group (see :func:`search_group`)."""
    if generators is not None:
        return Group.from_generators(t, generators, f"given({t.name})",
                                     {"kind": "generators", "generators": np.asarray(generators).tolist()})
    return search_group(t, max_automorphisms=max_automorphisms, seconds=seconds)


def search_group(t: Topology, *, max_automorphisms=20_000, seconds=30.0, restarts=16, seed=0) -> Group:
    """Search automorphisms and grow a group that keeps a link of trivial stabilizer.

    The automorphisms (up to ``max_automorphisms``, found by VF2 preserving
    which vertices compute) are tried in ``restarts`` seeded random orders;
    each pass adds an automorphism whenever the group it generates still has
    a link of trivial stabilizer and is larger.  The best group has the fewest
    link orbits, then the largest order.

    Raises
    ------
    GroupError
        If the graph has no non-trivial automorphism usable for lifting.
    """
    import networkx as nx
    from networkx.algorithms.isomorphism import DiGraphMatcher

    g = nx.DiGraph()
    g.add_nodes_from((v, {"c": bool(c)}) for v, c in enumerate(t.is_compute))
    g.add_edges_from(zip(t.link_src.tolist(), t.link_dst.tolist()))
    matcher = DiGraphMatcher(g, g, node_match=lambda a, b: a["c"] == b["c"])
    identity = list(range(t.n_vertices))
    deadline = time.monotonic() + seconds
    autos = []
    for mapping in matcher.isomorphisms_iter():
        if len(autos) >= max_automorphisms or time.monotonic() > deadline:
            break
        perm = [mapping[v] for v in identity]
        if perm != identity:
            autos.append(perm)
    rng = np.random.default_rng(seed)
    best, best_gens = None, None
    for trial in range(restarts):
        order = range(len(autos)) if trial == 0 else rng.permutation(len(autos))
        gens, group = [], None
        for i in order:
            if time.monotonic() > deadline:
                break
            if group is not None and group.order * 2 > len(autos) + 1:
                break  # no proper supergroup can be larger than the whole automorphism group
            try:
                candidate = Group.from_generators(t, gens + [autos[i]], f"searched({t.name})", {})
            except GroupError:
                continue
            if group is None or candidate.order > group.order:
                gens, group = gens + [autos[i]], candidate
        if group is not None and (best is None or (group.n_link_orbits, -group.order)
                                  < (best.n_link_orbits, -best.order)):
            best, best_gens = group, gens
    if best is None:
        raise GroupError(f"{t.name}: no symmetry found that can number chunks (no non-trivial automorphism "
                         "with a link of trivial stabilizer)")
    return Group.from_generators(t, best_gens, f"searched({t.name})",
                                 {"kind": "generators", "generators": best_gens})


def shortest_path_tree(t: Topology) -> BaseSchedule:
    """BFS tree (all vertices compute) or the star of shortest routes, rooted at a central compute vertex.

    The root is the compute vertex of least eccentricity (the smallest id on ties), so the tree is
    as shallow as a shortest-path tree can be.
    """
    ecc = [int(t.bfs([int(v)], reverse=True)[t.compute].max()) for v in t.compute]
    root = int(t.compute[int(np.argmin(ecc))])
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

