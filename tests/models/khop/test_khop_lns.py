"""Tests for the window LNS of the k-hop tree solver (:mod:`synth.models.khop.search.lns`).

The window model is checked against enumeration: with its trimming switched off it must
find the lightest tree that agrees with the current one outside the window; with the
default trimming it may find less, never something invalid or heavier.
"""

import itertools

import numpy as np
import pytest

from synth.models.backends.result import Best
from synth.models.forest.labels import labels_to_parent
from synth.models.forest.instance import check_tree, distance_matrix, translations, tree_depths, tree_weight
from synth.models.khop.search.lns import kick_search, lns_search, solve_window, window_arcs
from synth.models.khop.pipeline import run_pipeline
from synth.topology.torus import parse_torus


def _random_tree(D, k, rng):
    labels = rng.integers(1, k + 1, size=D.shape[0])
    labels[0] = 0
    return labels_to_parent(D, labels)


def _depths_or_none(parent):
    """Depths of a parent array, or ``None`` when it has a cycle."""
    try:
        return tree_depths(parent)
    except ValueError:
        return None


def _best_agreeing(D, k, parent, window):
    """Enumerate every tree that keeps the parents and depths outside ``window``; its least weight."""
    V = D.shape[0]
    depth = tree_depths(parent)
    outside = np.setdiff1d(np.arange(1, V), window)
    best = None
    for choice in itertools.product(range(V), repeat=len(window)):
        if any(c == w for c, w in zip(choice, window)):
            continue
        p = parent.copy()
        p[window] = choice
        d = _depths_or_none(p)
        if d is None or d.max() > k or np.any(d[outside] != depth[outside]):
            continue
        w = int(D[p[1:], np.arange(1, V)].sum())
        best = w if best is None else min(best, w)
    return best


@pytest.mark.parametrize("shape,k,seed", [("3x3", 2, 0), ("3x3", 3, 1), ("4x4", 2, 2), ("4x4", 3, 3),
                                          ("3x4", 2, 4), ("9", 3, 5)])
def test_window_model_is_the_exact_neighbourhood(shape, k, seed):
    t = parse_torus(shape)
    D = distance_matrix(t)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        parent = _random_tree(D, k, rng)
        depth = tree_depths(parent)
        window = rng.choice(np.arange(1, t.n_vertices), size=3, replace=False)
        res = solve_window(D, k, parent, depth, window, radius=None, hubs_only=False, reduce=False)
        want = _best_agreeing(D, k, parent, window)
        assert res is not None and res[2]
        new_parent, new_depth, _ = res
        assert tree_weight(t, new_parent) == want
        assert check_tree(t, new_parent, k)[0] <= k
        np.testing.assert_array_equal(new_depth, tree_depths(new_parent))


@pytest.mark.parametrize("shape,k", [("4x4", 2), ("5x5", 3), ("3x3x3", 2)])
def test_trimmed_window_is_valid_and_never_heavier(shape, k):
    t = parse_torus(shape)
    D = distance_matrix(t)
    rng = np.random.default_rng(11)
    for _ in range(5):
        parent = _random_tree(D, k, rng)
        depth = tree_depths(parent)
        window = rng.choice(np.arange(1, t.n_vertices), size=6, replace=False)
        res = solve_window(D, k, parent, depth, window, radius=int(D.max()) // 2, depth_slack=1)
        assert res is not None                       # the current tree is always a solution
        new_parent = res[0]
        assert check_tree(t, new_parent, k)[1] <= tree_weight(t, parent)
        outside = np.setdiff1d(np.arange(1, t.n_vertices), window)
        np.testing.assert_array_equal(new_parent[outside], parent[outside])
        np.testing.assert_array_equal(tree_depths(new_parent)[outside], depth[outside])


def test_window_arcs_respect_pins_and_keep_the_current_parent():
    t = parse_torus("6x6")
    D = distance_matrix(t)
    parent = _random_tree(D, 3, np.random.default_rng(3))
    depth = tree_depths(parent)
    hubs = np.unique(parent[parent > 0])
    window = hubs[:4]
    tail, head, layer, pins = window_arcs(D, 3, parent, depth, window, radius=1)
    for v in window.tolist():
        outside_kids = [c for c in np.flatnonzero(parent == v) if c not in window]
        if outside_kids:
            assert pins[v] == depth[v]
            assert set(layer[head == v].tolist()) == {depth[v]}
        mine = (head == v)
        assert np.any(mine & (tail == parent[v]) & (layer == depth[v]))   # the current arc survives radius 1


def test_lns_improves_and_is_deterministic():
    t = parse_torus("8x8")
    D = distance_matrix(t)
    star = np.zeros(t.n_vertices, dtype=np.int64)
    star[0] = -1
    a = lns_search(D, 3, star, seed=4, iterations=6, size=10)
    b = lns_search(D, 3, star, seed=4, iterations=6, size=10)
    np.testing.assert_array_equal(a.parent, b.parent)
    assert a.windows == 6 and a.improved >= 1
    assert check_tree(t, a.parent, 3) == (tree_depths(a.parent).max(), a.weight)
    assert a.weight < tree_weight(t, star)


@pytest.mark.parametrize("shape,k", [("6x6", 2), ("7x7", 3), ("3x4x4", 3)])
def test_kicks_give_valid_trees_never_heavier_and_deterministic(shape, k):
    t = parse_torus(shape)
    D = distance_matrix(t)
    start = _random_tree(D, k, np.random.default_rng(11))
    runs = [kick_search(D, k, start, translations(t, 2), seed=2, iterations=8, sizes=(6, 9)) for _ in range(2)]
    np.testing.assert_array_equal(runs[0].parent, runs[1].parent)
    res = runs[0]
    assert res.windows == 8
    depth, weight = check_tree(t, res.parent, k)
    assert weight == res.weight <= tree_weight(t, start)
    assert res.improved >= 1          # a random labelling is far from a local optimum


def test_pipeline_uses_the_lns_when_the_lp_is_out_of_reach(monkeypatch):
    """With the LP ruled out, the pipeline's improvement phase runs the window LNS on the incumbent."""
    import time

    import synth.models.khop.pipeline as pipeline

    calls = []

    def spy(D, k, parent, **kw):
        res = lns_search(D, k, parent, **kw)
        calls.append((tree_weight(t, parent), res.weight))
        return res

    monkeypatch.setattr(pipeline, "lp_affordable", lambda V, seconds: False)
    monkeypatch.setattr(pipeline, "LNS_FIRST", 1)
    monkeypatch.setattr(pipeline, "MIN_SLICE", 0.5)         # every arm gets a turn in 6 s
    monkeypatch.setattr(pipeline, "lns_search", spy)
    t = parse_torus("10x10")
    best = Best(bound=t.n_vertices - 1)
    run_pipeline(t, 3, best, deadline=time.monotonic() + 6)
    assert calls and all(after <= before for before, after in calls)
    assert best.weight <= min(after for _, after in calls)
    assert check_tree(t, best.parent, 3)[1] == best.weight


def test_pipeline_kicks_after_the_lns(monkeypatch):
    """The improvement phase kicks from the incumbent too, and kicks never make it heavier."""
    import time

    import synth.models.khop.pipeline as pipeline
    from synth.models.khop.search.lns import LNSResult

    kicks = []

    def no_lns(D, k, parent, **kw):                    # an LNS that stalls at once
        return LNSResult(parent, int(D[parent[1:], np.arange(1, D.shape[0])].sum()), 0, 0)

    def spy(D, k, parent, shifts, **kw):
        res = kick_search(D, k, parent, shifts, **kw)
        kicks.append((tree_weight(t, parent), res.weight, shifts.shape))
        return res

    monkeypatch.setattr(pipeline, "lp_affordable", lambda V, seconds: False)
    monkeypatch.setattr(pipeline, "lns_search", no_lns)
    monkeypatch.setattr(pipeline, "kick_search", spy)
    monkeypatch.setattr(pipeline, "MIN_SLICE", 0.5)
    t = parse_torus("9x9")
    best = Best(bound=t.n_vertices - 1)
    run_pipeline(t, 3, best, deadline=time.monotonic() + 4)
    assert kicks
    for before, after, shape in kicks:
        assert after <= before and shape == (8, t.n_vertices)      # +-1, +-2 steps along each axis
    assert check_tree(t, best.parent, 3)[1] == best.weight <= min(after for _, after, _ in kicks)
