"""Torus invariants against closed forms and brute-force BFS."""

import numpy as np
import pytest

from synth.errors import TopologyError
from synth.topology.torus import parse_torus

SHAPES = ["3", "9", "4x4", "3x5", "5x5", "6x4", "3x3x3", "4x4x4", "3x4x5", "3x3x3x3"]


@pytest.mark.parametrize("shape", SHAPES)
def test_counts_and_degree(shape):
    t = parse_torus(shape)
    sides = [int(s) for s in shape.split("x")]
    p = int(np.prod(sides))
    assert t.n_vertices == p
    assert t.n_links == 2 * len(sides) * p
    assert np.array_equal(np.bincount(t.link_src, minlength=p), np.full(p, 2 * len(sides)))
    assert np.array_equal(np.bincount(t.link_dst, minlength=p), np.full(p, 2 * len(sides)))
    assert t.diameter == sum(s // 2 for s in sides)


@pytest.mark.parametrize("shape", SHAPES)
def test_link_numbering(shape):
    t = parse_torus(shape)
    d = t.ndim
    e = np.arange(t.n_links)
    assert np.array_equal(t.link_src, e // (2 * d))
    dim, sign = t.link_dim, t.link_sign
    moved = t.coords(t.link_src)
    moved[np.arange(e.size), dim] += sign
    assert np.array_equal(t.vertex(moved), t.link_dst)
    assert np.array_equal(t.link_ids(t.link_src, t.link_dst), e)


@pytest.mark.parametrize("shape", SHAPES)
def test_distances_match_bfs(shape):
    t = parse_torus(shape)
    D = t.distance_matrix()
    u, v = np.meshgrid(np.arange(t.n_vertices), np.arange(t.n_vertices), indexing="ij")
    assert np.array_equal(t.dist(u, v), D)
    assert D.max() == t.diameter
    assert np.array_equal(np.bincount(D[0]), t.distance_distribution())
    assert np.all(D.max(axis=1) == t.eccentricity())


@pytest.mark.parametrize("shape", ["4x4", "3x5", "6x4", "3x4x5", "9"])
def test_routes_are_dimension_order_shortest_paths(shape):
    t = parse_torus(shape)
    rng = np.random.default_rng(1)
    for u, v in rng.integers(0, t.n_vertices, size=(60, 2)):
        r = t.route(int(u), int(v))
        assert r.size == t.dist(u, v)
        if r.size:
            assert t.link_src[r[0]] == u and t.link_dst[r[-1]] == v
            assert np.array_equal(t.link_dst[r[:-1]], t.link_src[r[1:]])
            assert np.all(np.diff(t.link_dim[r]) >= 0)  # dimension order
            assert t.first_hop(u, v) == r[0]
        else:
            assert t.first_hop(u, v) == -1


def test_antipodal_tie_break_goes_plus():
    t = parse_torus("6x6")
    r = t.route(0, t.vertex((3, 3)))
    assert np.all(t.link_sign[r] == 1)


@pytest.mark.parametrize("bad", ["1x8", "16xx", "0", "-4x4", "axb", "", "x", "2", "4x2"])
def test_bad_shapes(bad):
    with pytest.raises(TopologyError):
        parse_torus(bad)


def test_big_tori_build_fast_enough_to_use():
    t = parse_torus("64x64")
    assert t.n_links == 16384
    t = parse_torus("16x16x16")
    assert t.n_links == 6 * 4096
