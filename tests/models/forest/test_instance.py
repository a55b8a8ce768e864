"""Instance data of depth-bounded forests (:mod:`synth.models.forest.instance`): the exact arc
reduction against brute force, and the symmetries the models use are distance-preserving."""

import numpy as np
import pytest
from conftest import tiny_cases

from synth.models.forest.instance import allowed_pairs, check_tree, distance_matrix, root_stabilizer, translations
from synth.topology.torus import parse_torus


def _valid_tree(t, parent, k, weight):
    depth, w = check_tree(t, parent, k)
    assert w == weight
    return depth


@pytest.mark.parametrize("shape,k", tiny_cases())
def test_arc_reduction_keeps_an_optimum(shape, k, brute):
    w_all, _ = brute(shape, k)
    w_red, parent = brute(shape, k, reduce=True)
    assert w_all == w_red
    t = parse_torus(shape)
    _valid_tree(t, parent, k, w_red)
    keep = allowed_pairs(t)
    v = np.arange(1, t.n_vertices)
    assert keep[parent[1:], v].all()


def test_stabilizer_is_distance_preserving():
    for shape in ["4x4", "3x5", "3x3x3", "4x4x6"]:
        t = parse_torus(shape)
        D = distance_matrix(t)
        G = root_stabilizer(t)
        assert np.all(G[:, 0] == 0) and np.array_equal(G[0], np.arange(t.n_vertices))
        for g in G:
            assert np.array_equal(D[np.ix_(g, g)], D)
        assert len({g.tobytes() for g in G}) == G.shape[0]


@pytest.mark.parametrize("shape", ["4x4", "3x5", "5x6", "3x3x4"])
def test_translations_are_distance_preserving_shifts(shape):
    t = parse_torus(shape)
    g = translations(t, 2)
    V = t.n_vertices
    D = distance_matrix(t)
    coords = t.coords(np.arange(V))
    for row in g:
        assert np.array_equal(np.sort(row), np.arange(V))                 # a permutation
        assert np.array_equal(D[np.ix_(row, row)], D)                      # an automorphism
        delta = (coords[row] - coords) % np.asarray(t.shape)
        assert np.all(delta == delta[0])                                   # the same offset everywhere
        assert np.count_nonzero(delta[0]) == 1                             # along one axis
        assert any(np.array_equal(row[other], np.arange(V)) for other in g)   # its inverse is in the set
