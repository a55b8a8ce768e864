"""Lattice tori and grids with wrap per side: HNF against brute force, graphs against their definition."""

import itertools

import numpy as np
import pytest
from _lattice_brute import in_lattice as _in_lattice  # tests/_lattice_brute.py

from synth.errors import TopologyError
from synth.topology.lattice import (grid, hermite_normal_form, lattice_size, lattice_torus, parse_lattice,
                                    parse_wrap, torus_like, twisted, twisted_basis)
from synth.topology.spec import build_topology, spec_size
from synth.topology.torus import torus


def _random_basis(rng, d):
    while True:
        b = rng.integers(-6, 7, size=(d, d)).tolist()
        if round(abs(np.linalg.det(np.asarray(b, float)))) != 0:
            return b


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_hnf_against_brute_force(d):
    rng = np.random.default_rng(d)
    for _ in range(40):
        b = _random_basis(rng, d)
        h = hermite_normal_form(b)
        for i in range(d):
            assert h[i][i] > 0
            assert all(h[i][j] == 0 for j in range(i))
            assert all(0 <= h[k][i] < h[i][i] for k in range(i))
        assert all(_in_lattice(b, r) for r in h) and all(_in_lattice(h, r) for r in b)  # the same lattice
        det = round(abs(np.linalg.det(np.asarray(b, float))))
        assert int(np.prod([h[i][i] for i in range(d)])) == det
        u = np.eye(d, dtype=np.int64)  # a unimodular change of basis gives the same form
        for _ in range(3):
            i, j = rng.choice(d, 2, replace=False) if d > 1 else (0, 0)
            if i != j:
                u[i] += int(rng.integers(-2, 3)) * u[j]
        assert hermite_normal_form((u @ np.asarray(b)).tolist()) == h


@pytest.mark.parametrize("rows, match", [
    ([[1, 2], [2, 4]], "degenerate"), ([[0, 0], [0, 0]], "degenerate"), ([[1, 2, 3], [4, 5, 6], [7, 8, 9]], "degenerate"),
    ([[10 ** 12, 0], [0, 1]], "9 digits"), ([[1, 2]], "square"), ([], "square"), ([[True]], "integers"),
])
def test_hnf_refuses(rows, match):
    with pytest.raises(TopologyError, match=match):
        hermite_normal_form(rows)


@pytest.mark.parametrize("text, match", [
    ("0,0;0,0", "degenerate"), ("1000,0,0;0,1000,0;0,0,1000", "at most"), ("99999999,0;0,99999999", "at most"),
    ("4,4;0", "square"), ("a", "form"), ("1", "one node"), ("1,0;0,1", "one node"), (";" * 500, "form"),
])
def test_parse_lattice_refuses(text, match):
    with pytest.raises(TopologyError, match=match):
        parse_lattice(text)


def test_grid_refuses():
    with pytest.raises(TopologyError, match="positive"):
        grid((0, 4), (True, True))
    with pytest.raises(TopologyError, match="at most"):
        grid((1000, 1000, 1000), (False,) * 3)
    with pytest.raises(TopologyError, match="cannot be unwrapped"):
        lattice_torus([[4, 4], [0, 8]], (False, True))
    with pytest.raises(TopologyError, match="0..1"):
        parse_wrap("2", 2)


def _check_definition(t):
    """Every vertex is its own class of Z^d / L, and every link is a step ±e_i (brute force on the basis)."""
    c = t.coords(np.arange(t.n_vertices))
    for a, b in itertools.combinations(range(t.n_vertices), 2):
        assert not _in_lattice(t.basis, (c[b] - c[a]).tolist())
    for e in range(t.n_links):
        u, v = int(t.link_src[e]), int(t.link_dst[e])
        diff = c[v] - c[u]
        i, s = t.steps[t.link_step[e]]
        step = np.zeros(t.ndim, dtype=np.int64)
        step[i] = s
        if t.wrap[i]:
            assert _in_lattice(t.basis, (diff - step).tolist())
        else:
            assert diff.tolist() == step.tolist()
    # every vertex-step pair that stays inside has its link (the graph is the whole Cayley graph)
    for (i, s) in t.steps:
        inside = t.wrap[i] | ((c[:, i] + s >= 0) & (c[:, i] + s < t.shape[i]))
        assert int((t.link_dim[t.link_sign == s] == i).sum()) == int(inside.sum())


@pytest.mark.parametrize("make", [
    lambda: twisted((2, 4)), lambda: twisted((3, 6)), lambda: twisted((2, 2, 4)), lambda: twisted((2, 4, 4)),
    lambda: parse_lattice("3,1;1,3"), lambda: parse_lattice("1,3;0,5"), lambda: grid((3, 2, 4), (False, True, True)),
    lambda: grid((2, 3, 2), (True, True, True)), lambda: grid((4, 3), (False, False)),
])
def test_graph_matches_definition_and_distances(make):
    t = make()
    _check_definition(t)
    dm = t.distance_matrix()
    u, v = np.divmod(np.arange(t.n_vertices ** 2), t.n_vertices)
    assert np.array_equal(t.dist(u, v).reshape(dm.shape), dm)
    assert t.diameter == dm.max()
    assert np.array_equal(t.eccentricity(), dm.max(axis=1))
    assert np.array_equal(t.distance_distribution(3 % t.n_vertices), np.bincount(dm[3 % t.n_vertices]))
    first = t.first_hop(u, v)
    assert np.all((first < 0) == (u == v))
    ok = first >= 0
    assert np.all(dm[t.link_dst[first[ok]], v[ok]] == dm[u[ok], v[ok]] - 1)
    assert lattice_size(t.basis, t.wrap) == (t.n_vertices, t.n_links)
    assert spec_size(t.spec)[:2] == (t.n_vertices, t.n_links)
    again = build_topology(t.spec)
    assert again.name == t.name and np.array_equal(again.link_dst, t.link_dst)


def test_twisted_diameters_against_plain():
    # twisted 4x4x8, 4x8x8, 4x8 (TPU slices) against the plain tori of the same shape
    assert [twisted(s).diameter for s in [(4, 4, 8), (4, 8, 8), (4, 8)]] == [6, 6, 4]
    assert [torus_like(s).diameter for s in [(4, 4, 8), (4, 8, 8), (4, 8)]] == [8, 10, 6]
    assert twisted((4, 4, 8)).basis == ((4, 0, 4), (0, 4, 4), (0, 0, 8))
    assert twisted_basis((4, 8, 8)) == ((4, 4, 4), (0, 8, 0), (0, 0, 8))
    with pytest.raises(TopologyError, match="kx2k"):
        twisted((4, 4, 4))


def test_plain_torus_is_the_diagonal_case():
    for shape in [(3, 5), (4, 4, 3)]:
        a, b = torus_like(shape), torus(shape)
        assert np.array_equal(a.link_src, b.link_src) and np.array_equal(a.link_dst, b.link_dst)
        assert a.diameter == b.diameter
        assert np.array_equal(a.distance_distribution(), b.distance_distribution())


def test_side_of_two_is_one_link_wrapped_or_not():
    wrapped, path = grid((2, 5), (True, True)), lattice_torus([[2, 0], [0, 5]], (False, True))
    assert np.array_equal(wrapped.link_dst, path.link_dst) and wrapped.n_links == 5 * 2 * 1 + 10 * 2
    assert wrapped.wrap == path.wrap == (True, True)
    assert grid((1, 5), (False, True)).n_links == 10   # a side of 1 has no links
    mesh = grid((5, 7), (False, False))
    assert mesh.n_links == 2 * (5 * 6 + 7 * 4) and mesh.name == "mesh 5x7" and mesh.diameter == 10
    assert grid((8, 16), (False, True)).name == "grid 8x16 wrap 1"
