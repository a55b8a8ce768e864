"""Parent arrays (synth.schedule.forest): depths, weight, checks and BFS forests against brute force.

The models still carry copies (models/forest/instance tree_depths / tree_weight / check_tree,
models/xhop/instance forest_depths / forest_weight / check_forest / bfs_forest); the tests
that compare them here pin that the one home computes the same, for the final dedup pass.
"""

import numpy as np
import pytest

from synth.errors import ScheduleError
from synth.models.forest.instance import check_tree, tree_depths, tree_weight
from synth.models.xhop.instance import bfs_forest as xhop_bfs_forest
from synth.models.xhop.instance import check_forest as xhop_check_forest
from synth.schedule.exchange import bfs_forest_parents
from synth.schedule.forest import bfs_forest, check_forest, forest_depths, forest_weight
from synth.schedule.sp import bfs_parents
from synth.topology.torus import parse_torus

SHAPES = ["5", "4x4", "3x5", "6x6", "4x4x4"]


def random_tree(t, rng, roots=(0,)):
    """A random spanning forest hanging from ``roots``: each vertex picks a parent among those before it."""
    order = list(roots) + [int(v) for v in rng.permutation(t.n_vertices) if v not in roots]
    parent = np.full(t.n_vertices, -1, dtype=np.int64)
    for i in range(len(roots), len(order)):
        parent[order[i]] = order[rng.integers(0, i)]
    return parent


def brute_depth(parent, v):
    d = 0
    while parent[v] >= 0:
        v, d = parent[v], d + 1
    return d


@pytest.mark.parametrize("shape", SHAPES)
def test_depths_and_weight_against_brute_force_and_the_models(shape):
    t = parse_torus(shape)
    rng = np.random.default_rng(len(shape))
    for _ in range(5):
        parent = random_tree(t, rng)
        depth = forest_depths(t, parent, [0])
        assert depth.tolist() == [brute_depth(parent, v) for v in range(t.n_vertices)]
        assert np.array_equal(depth, tree_depths(parent))
        weight = sum(int(t.dist(v, parent[v])) for v in range(1, t.n_vertices))
        assert forest_weight(t, parent) == weight == tree_weight(t, parent)
        assert check_forest(t, parent, [0]) == (int(depth.max()), weight) == check_tree(t, parent)
        b = int(rng.integers(1, t.n_vertices))
        pair = random_tree(t, rng, (0, b))
        assert forest_depths(t, pair, [0, b]).tolist() == [brute_depth(pair, v) for v in range(t.n_vertices)]
        d, w = xhop_check_forest(t, b, pair)                  # the models add the exchange's dist(0, b)
        assert check_forest(t, pair, [0, b]) == (d, w - int(t.dist(0, b)))


def test_checks_refuse_what_is_not_a_forest():
    t = parse_torus("5")
    with pytest.raises(ScheduleError, match="cycle"):
        forest_depths(t, [-1, 2, 1, 0, 0], [0])
    with pytest.raises(ScheduleError, match="needs a parent"):
        forest_depths(t, [-1, -1, 0, 0, 0], [0])
    with pytest.raises(ScheduleError, match="exceeds the bound 1"):
        check_forest(t, [-1, 0, 1, 0, 0], [0], depth=1)


@pytest.mark.parametrize("shape", SHAPES)
def test_bfs_forests_are_shortest_and_the_same_as_every_copy(shape):
    t = parse_torus(shape)
    V = np.arange(t.n_vertices)
    tree = bfs_forest(t, [0])
    assert np.array_equal(tree, bfs_parents(t, 0))
    assert np.array_equal(forest_depths(t, tree, [0]), t.dist(V, 0))
    even = [i for i, n in enumerate(t.shape) if n % 2 == 0]
    if even:
        b = int(t.link_dst[2 * even[0]])
        pair = bfs_forest(t, [0, b])
        assert np.array_equal(pair, bfs_forest_parents(t, 0, b))
        assert np.array_equal(pair, xhop_bfs_forest(t, b))
        assert np.array_equal(forest_depths(t, pair, [0, b]), np.minimum(t.dist(V, 0), t.dist(V, b)))
