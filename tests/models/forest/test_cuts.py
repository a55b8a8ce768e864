"""Cuts of the layered graph (:mod:`synth.models.forest.cuts`): valid for every tree, violated by the point."""

import numpy as np
import pytest
from conftest import all_trees, count_trees

from synth.models.forest.cuts import layered_separator
from synth.models.forest.instance import distance_matrix, hop_arcs
from synth.models.khop.model import ModelData, build_hop_model
from synth.topology.torus import parse_torus


@pytest.mark.parametrize("shape,k", [("5", 2), ("6", 2), ("6", 3), pytest.param("7", 2, marks=pytest.mark.slow)])
def test_separated_cuts_hold_for_every_tree_and_cut_off_the_point(shape, k):
    """Rows of the branch-and-cut separator: violated by the point, satisfied by every tree of the model."""
    t = parse_torus(shape)
    data = ModelData(distance_matrix(t), k, *hop_arcs(t, k, reduce=False))
    model, z, _y = build_hop_model(data)
    sep = layered_separator(data.D, k, z)
    trees = []
    for parent, depth in all_trees(t.n_vertices, k):
        x = np.zeros(model.n_cols)
        for v in range(1, t.n_vertices):
            x[z[int(parent[v]), v, int(depth[v])]] = 1.0
        trees.append(x)
    trees = np.array(trees)
    assert trees.shape[0] == count_trees(t.n_vertices - 1, k)
    assert all(sep(x) == [] for x in trees[:50])
    rng = np.random.default_rng(1)
    n_rows = 0
    for _ in range(20):
        # a fractional point: a mix of trees, scaled down, with noise on some arcs
        w = rng.dirichlet(np.ones(3))
        noise = rng.random(model.n_cols) * (rng.random(model.n_cols) < 0.1)
        x = 0.8 * (w @ trees[rng.choice(len(trees), 3)]) + 0.2 * noise
        for cols, coefs, lo in sep(x):
            n_rows += 1
            assert coefs @ x[cols] < lo - 1e-6
            assert (trees[:, cols] @ coefs >= lo - 1e-9).all()
    assert n_rows > 0
