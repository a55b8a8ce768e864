"""The label search of :mod:`synth.models.forest.labels`: exact move and swap prices, the shift perturbation."""

import numpy as np

from synth.models.forest.instance import check_tree, distance_matrix, translations
from synth.models.forest.labels import LabelSearch, _shift_perturb, labels_cost
from synth.models.khop.search.construct import heuristic_tree
from synth.topology.torus import parse_torus


def _valid_tree(t, parent, k, weight):
    depth, w = check_tree(t, parent, k)
    assert w == weight
    return depth


def test_label_moves_and_swaps_are_priced_exactly():
    rng = np.random.default_rng(1)
    for shape, k in [("6x6", 3), ("5x7", 4), ("3x3x3", 2)]:
        t = parse_torus(shape)
        D = distance_matrix(t)
        V = t.n_vertices
        for _ in range(3):
            lab = rng.integers(1, k + 1, size=V)
            lab[0] = 0
            ls = LabelSearch(D, k, lab)
            assert ls.cost == labels_cost(D, lab)
            delta = ls.move_deltas()
            for v in rng.integers(1, V, size=8):
                for b in range(1, k + 1):
                    if b != lab[v]:
                        new = lab.copy()
                        new[v] = b
                        assert labels_cost(D, new) - ls.cost == delta[v, b]
            u, v, d = ls.swap_deltas()
            for i in range(min(u.size, 20)):
                new = lab.copy()
                new[u[i]], new[v[i]] = lab[v[i]], lab[u[i]]
                assert labels_cost(D, new) - ls.cost == d[i]


def test_shift_perturbation_keeps_trees_valid_and_deterministic(brute):
    t = parse_torus("4x4")
    D = distance_matrix(t)
    g = translations(t, 2)
    runs = [heuristic_tree(D, 3, seed=7, iterations=30, shifts=g) for _ in range(2)]
    _valid_tree(t, runs[0].parent, 3, runs[0].weight)
    assert runs[0].weight >= brute("4x4", 3)[0]
    assert np.array_equal(runs[0].parent, runs[1].parent)
    # the shift moves a ball's labels: the perturbed labelling is a translate inside the ball
    rng = np.random.default_rng(0)
    lab = np.random.default_rng(1).integers(1, 4, size=t.n_vertices)
    lab[0] = 0
    changed = 0
    for _ in range(20):
        new = _shift_perturb(lab, D, rng, g, 3)
        changed += bool(np.any(new != lab))
        assert new[0] == 0 and new[1:].min() >= 1
        # every vertex keeps its label or takes its translate's, for one translation
        assert any(np.all((new == lab) | (new == np.maximum(lab[row], 1))) for row in g)
    assert changed >= 10
