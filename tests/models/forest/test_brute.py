"""The exact subset DP (:mod:`synth.models.forest.brute`, through its k-hop face) against enumeration."""

from math import comb

import numpy as np
import pytest
from conftest import TINY_SHAPES, all_trees, count_trees

from synth.models.forest.instance import distance_matrix
from synth.models.khop.brute import brute_force_khop
from synth.topology.torus import parse_torus


def test_tree_count_formula():
    n = 8
    assert count_trees(n, 1) == 1
    assert count_trees(n, 2) == sum(comb(n, m) * m ** (n - m) for m in range(1, n + 1))
    assert count_trees(n, n) == (n + 1) ** (n - 1)                  # Cayley: all rooted trees


@pytest.mark.parametrize("shape", ["5", pytest.param("6", marks=pytest.mark.slow)])
def test_brute_force_matches_parent_enumeration(shape):
    """The subset DP against every parent array of K_V (weights from the torus distances)."""
    t = parse_torus(shape)
    V = t.n_vertices
    D = distance_matrix(t)
    for k in range(1, V):
        best = min(int(D[np.arange(1, V), parent[1:]].sum()) for parent, _depth in all_trees(V, k))
        assert brute_force_khop(t, k)[0] == best


def test_known_values(brute):
    # W >= p - 1, equality at k >= H; k = 1 is the star
    for shape in TINY_SHAPES:
        t = parse_torus(shape)
        V, H = t.n_vertices, t.diameter
        assert brute(shape, H)[0] == V - 1
        assert brute(shape, 1)[0] == int(t.dist(0, np.arange(V)).sum())
        ws = [brute(shape, k)[0] for k in range(1, H + 1)]
        assert all(a >= b for a, b in zip(ws, ws[1:]))
