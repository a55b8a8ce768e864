"""Failures on every topology kind: what is removed, the spec round trip, the cut named, the residual group."""

import numpy as np
import pytest

from synth.errors import TopologyError
from synth.symmetry.residual import residual_elements, residual_group
from synth.symmetry.spec import default_group
from synth.symmetry.torus import torus_gamma
from synth.topology.failures import Damaged, Failures, damage, parse_failures
from synth.topology.spec import build_topology
from synth.topology.torus import parse_torus
from synth.topology.hyperx import parse_hyperx
from synth.topology.spineleaf import parse_spine_leaf
from synth.topology.user import topology_from_json


def mesh_file(n):
    """An n x n mesh as a synth-topology object (no wrap-around)."""
    links = [[i * n + j, i * n + j + 1] for i in range(n) for j in range(n - 1)]
    links += [[i * n + j, (i + 1) * n + j] for i in range(n - 1) for j in range(n)]
    return {"format": "synth-topology", "version": 1, "name": f"mesh {n}x{n}", "vertices": n * n, "links": links}


def first_redundant_link(t):
    """The first link whose endpoints both have another link (on spine-leaf: a leaf-spine link)."""
    deg = np.bincount(t.link_src, minlength=t.n_vertices)
    e = int(np.flatnonzero((deg[t.link_src] > 1) & (deg[t.link_dst] > 1))[0])
    return int(t.link_src[e]), int(t.link_dst[e])


@pytest.mark.parametrize("t", [parse_torus("4x4"), parse_hyperx("3x3"), parse_spine_leaf("2,3,2"),
                               topology_from_json(mesh_file(3))], ids=lambda t: t.name)
def test_one_failed_link_removes_two_directed_links_on_every_kind(t):
    u, v = first_redundant_link(t)
    d = damage(t, Failures(((u, v),)))
    assert isinstance(d, Damaged) and d.n_links == t.n_links - 2
    assert d.link_ids([u, v], [v, u]).tolist() == [-1, -1]
    rebuilt = build_topology(d.spec)          # the checker's path: spec + failed list
    assert np.array_equal(rebuilt.link_src, d.link_src) and np.array_equal(rebuilt.link_dst, d.link_dst)
    assert np.array_equal(rebuilt.compute, d.compute)


def test_a_failed_node_neither_computes_nor_forwards():
    t = parse_torus("4x4")
    d = damage(t, parse_failures(t, nodes=["1.1"]))
    assert 5 not in d.compute.tolist() and d.n_compute == 15
    assert not np.any(d.link_src == 5) and not np.any(d.link_dst == 5)
    assert d.n_links == t.n_links - 8
    assert d.spec["failed"] == [5]


def test_coordinates_and_ids_name_the_same_link():
    t = parse_torus("8x8")
    assert parse_failures(t, links=["0.1-0.2"]) == parse_failures(t, links=["2-1"])
    with pytest.raises(TopologyError, match="not a link"):
        damage(t, parse_failures(t, links=["0-9"]))
    with pytest.raises(TopologyError, match="cannot read"):
        parse_failures(t, links=["0.1"])


def test_a_disconnecting_failure_set_names_a_cut():
    t = parse_torus("4x4")
    with pytest.raises(TopologyError, match=r"disconnect.*\[0\].*the cut: 0-1, 0-3, 0-4, 0-12"):
        damage(t, parse_failures(t, links=["0-1", "0-3", "0-4", "0-12"]))
    # three of the four cut off nothing
    assert damage(t, parse_failures(t, links=["0-1", "0-3", "0-4"])).n_links == 58


def test_residual_group_is_exactly_the_stabilizer_of_the_failure_set():
    t = parse_torus("4x4")
    g = torus_gamma(t)
    f = parse_failures(t, links=["0-1"], nodes=["10"])
    d = damage(t, f)
    # brute force: every element of Γ, kept iff it maps the failed sets onto themselves
    perms = g.vertex_images(np.arange(16))
    want = [p for p in perms if sorted(p[[10]].tolist()) == [10]
            and {tuple(sorted((int(p[0]), int(p[1]))))} == {(0, 1)}]
    got = residual_elements(g, f)
    assert sorted(map(tuple, got.tolist())) == sorted(map(tuple, np.asarray(want).tolist()))
    r = residual_group(d, g)
    assert r.order == len(want)
    # the default filters every closed-form automorphism of the torus, not Γ alone: a larger group
    assert default_group(d).order % r.order == 0 and default_group(d).order >= r.order


def test_residual_group_on_hyperx_and_spine_leaf_is_verified():
    for t in (parse_hyperx("4x4"), parse_spine_leaf("2,4,2")):
        u, v = first_redundant_link(t)
        d = damage(t, Failures(((u, v),)))
        r = default_group(d)
        assert r.order >= 1 and r.topology is d


@pytest.mark.parametrize("shape,links,nodes", [("4x4", ["0-1"], ["10"]), ("8x8", ["0-1", "5-13", "20-28"], []),
                                               ("6x5", [], ["3", "7"]), ("3x3x4", ["0-1"], ["20"])])
def test_the_diameter_is_the_largest_bfs_distance_between_compute_vertices(shape, links, nodes):
    t = parse_torus(shape)
    d = damage(t, parse_failures(t, links, nodes))
    brute = max(int(d.bfs([int(v)])[d.compute].max()) for v in d.compute)
    assert d.diameter == brute


def test_idle_links_are_gone_from_the_network_a_schedule_runs_on_and_back_for_its_bounds():
    from synth.topology.failures import failed_step, whole_network

    t = parse_torus("4x4")
    p = damage(t, Failures(((0, 1), (2, 3)), (), ((2, 3),)))
    assert p.n_links == t.n_links - 4 and p.name == "torus 4x4 with 1 failed link (1 link left idle)"
    assert p.spec["failed"] == [[0, 1]] and p.spec["idle"] == [[2, 3]]
    rebuilt = build_topology(p.spec)           # the checker's path: spec, failed and idle lists
    assert np.array_equal(rebuilt.link_src, p.link_src) and rebuilt.failures == p.failures
    d = whole_network(p)
    assert d.n_links == t.n_links - 2 and d.spec == {"kind": "torus", "shape": [4, 4], "failed": [[0, 1]]}
    assert whole_network(d) is d and whole_network(t) is t
    assert failed_step(p, 3, 2) == "the idle link 2-3" and failed_step(p, 1, 0) == "the failed link 0-1"
    # the idle copy of the failure gives back the translation that maps one onto the other
    assert default_group(p).order == 2 * default_group(d).order


@pytest.mark.parametrize("spec, words", [
    ({"kind": "torus", "shape": [4, 4], "failed": [[0, 1]], "idle": [[0, 5]]}, "idle link 0-5 is not a link"),
    ({"kind": "torus", "shape": [4, 4], "failed": [[0, 1]], "idle": [[0, 1]]}, "both failed and idle"),
    ({"kind": "torus", "shape": [4, 4], "failed": [[0, 1]], "idle": [3]}, "'idle' must be a list"),
    ({"kind": "torus", "shape": [4, 4], "idle": [[2, 3]]}, "idle"),
])
def test_a_bad_idle_list_is_a_clear_error(spec, words):
    with pytest.raises(TopologyError, match=words):
        build_topology(spec)


def test_the_bounds_of_a_network_with_idle_links_are_those_of_the_network():
    # 6x6 with one wrap-around link failed and the other five of its ring of them idle: the schedule's network
    # is a cylinder, whose least eccentric pair differs; the bounds are the damaged torus's
    from synth.check.bounds.bandwidth import bandwidth_bound, best_cut, collective_bound
    from synth.check.eccentricity import round_lower_bound
    from synth.topology.failures import whole_network

    t = parse_torus("6x6")
    wrap = tuple((int(t.vertex((i, 0))), int(t.vertex((i, 5)))) for i in range(6))
    p, d, cylinder = (damage(t, Failures(wrap, (), wrap[1:])), damage(t, Failures(wrap[:1])),
                      damage(t, Failures(wrap)))
    assert whole_network(p).spec == d.spec
    assert round_lower_bound(p, default_group(p)) == round_lower_bound(d, default_group(d))
    assert round_lower_bound(cylinder, default_group(cylinder)) != round_lower_bound(d, default_group(d))
    assert best_cut(p) == best_cut(d) and collective_bound(p, 36) == collective_bound(d, 36)
    assert bandwidth_bound(p, 36).value == bandwidth_bound(d, 36).value < bandwidth_bound(cylinder, 36).value
