"""The pruned least-eccentricity search against a BFS from every vertex, and its cost on a damaged pod."""

import numpy as np
import pytest

from synth.check import round_lower_bound
from synth.check.eccentricity import least_eccentricities
from synth.symmetry.spec import default_group
from synth.topology.failures import damage, parse_failures
from synth.topology.lattice import grid, twisted
from synth.topology.torus import parse_torus


def _brute(t, vert, links):
    """What a BFS from every vertex finds: least ecc (first attaining) and the first link at ``best - 1``."""
    to = {v: t.bfs([v], reverse=True)[t.compute] for v in range(t.n_vertices)}
    eccs = [int(to[v].max()) for v in vert]
    best = min(eccs)
    arg = vert[eccs.index(best)]
    for e in links:
        a, b = int(t.link_src[e]), int(t.link_dst[e])
        if not (t.is_compute[a] and t.is_compute[b]):
            continue
        d = np.minimum(to[a], to[b])
        if int(d.max()) == best - 1:
            return best, arg, best - 1, (a, b)
    return best, arg, None, None


CASES = [("torus", "6x6", ["0-1"], []), ("torus", "5x7", [], ["3"]), ("torus", "4x4x4", ["5-6"], ["0"]),
         ("torus", "3x3", [], ["4"]), ("torus", "4x4", [], ["0", "10"]), ("torus", "8", [], ["0"]),
         ("torus", "6x4", ["0-1", "0-4"], []), ("twisted", (4, 4, 8), [], ["0"]),
         ("grid", ((4, 5), (False, False)), [], ["0"]), ("grid", ((3, 6), (False, True)), ["0-1"], ["7"]),
         ("grid", ((2, 3, 2), (True, True, True)), [], ["0"]), ("torus", "7x7", ["0-1"], ["24"])]


def _build(kind, arg):
    return parse_torus(arg) if kind == "torus" else twisted(arg) if kind == "twisted" else grid(*arg)


@pytest.mark.parametrize("kind,arg,links,nodes", CASES)
def test_pruned_search_finds_what_every_bfs_finds(kind, arg, links, nodes):
    h = _build(kind, arg)
    t = damage(h, parse_failures(h, links=links, nodes=nodes))
    for topo in (h, t):
        vert = topo.compute.tolist()
        links_all = list(range(topo.n_links))
        assert least_eccentricities(topo, vert, links_all) == _brute(topo, vert, links_all), topo.name
        g = default_group(topo)
        if g is not None:
            comp = topo.compute
            reps = comp[np.unique(g.vertex_orbit[comp], return_index=True)[1]].tolist()
            lreps = np.unique(g.link_orbit, return_index=True)[1].tolist()
            assert least_eccentricities(topo, reps, lreps) == _brute(topo, reps, lreps), topo.name


def test_bound_on_a_damaged_pod_measures_a_few_vertices(monkeypatch):
    """A 96x96 torus with a failed link (residual group of order 4): a few BFS, not one per vertex orbit."""
    import scipy.sparse.csgraph as csgraph

    from synth.topology.base import Topology

    sources = []
    real_sp, real_bfs = csgraph.shortest_path, Topology.bfs

    def counted_sp(graph, *a, indices=None, **k):
        sources.extend(np.atleast_1d(indices).tolist())
        assert len(sources) <= 256, "one BFS per vertex orbit"
        return real_sp(graph, *a, indices=indices, **k)

    def counted_bfs(self, src, reverse=False):
        sources.append(src)
        assert len(sources) <= 256, "one BFS per vertex orbit"
        return real_bfs(self, src, reverse)

    monkeypatch.setattr(csgraph, "shortest_path", counted_sp)
    monkeypatch.setattr(Topology, "bfs", counted_bfs)
    h = parse_torus("96x96")
    t = damage(h, parse_failures(h, links=["0-1"]))
    sources.clear()
    assert round_lower_bound(t, default_group(t)) == (191, "adjacent pair (0, 96)")
    assert len(sources) <= 64


@pytest.mark.parametrize("kind,arg,links,nodes", CASES)
def test_diameter_bounds_hold_and_are_exact_within_budget(kind, arg, links, nodes):
    from synth.check.eccentricity import diameter_bounds

    h = _build(kind, arg)
    t = damage(h, parse_failures(h, links=links, nodes=nodes))
    truth = max(int(t.bfs([v])[t.compute].max()) for v in t.compute.tolist())
    assert diameter_bounds(t) == (truth, truth) == diameter_bounds(t, default_group(t))
    lo, hi = diameter_bounds(t, work=0)
    assert lo <= truth <= hi
