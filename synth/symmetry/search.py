"""The symmetry group of a user topology: the given generators, or a group searched for.

Without generators the automorphisms are searched (networkx VF2, capped) and a group
is built greedily from them, keeping one link orbit with a trivial stabilizer (needed
to number chunks, :mod:`synth.symmetry.group`) and preferring groups with few link orbits.

Examples
--------
>>> from synth.topology.user import topology_from_json
>>> t = topology_from_json({"format": "synth-topology", "version": 1, "vertices": 4,
...                         "links": [[0, 1], [1, 2], [2, 3], [3, 0]]})
>>> g = search_group(t)
>>> g.order, g.is_regular
(8, True)
"""

from __future__ import annotations

import time

import numpy as np

from synth.errors import GroupError
from synth.symmetry.group import Group
from synth.topology.base import Topology

__all__ = ["search_group", "user_group"]


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
    # networkx only here: it costs start-up time that no other command needs
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
