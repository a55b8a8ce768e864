"""Tests for the windowed label search (:mod:`models.khop.search.window`).

The window's claim is exactness: the cost change its label search sees equals the change
of the whole tree's weight, for any change of the movable labels.  That is checked here
against recomputing the whole tree, on random labellings of small tori.
"""

import time

import numpy as np
import pytest

from synth.models.backends.result import Best
import synth.models.khop.pipeline as pipeline
from synth.models.forest.labels import LabelSearch, labels_cost, labels_to_parent
from synth.models.forest.instance import check_tree, distance_matrix, translations, tree_weight
from synth.models.khop.search.window import own_costs, window_instance, window_search
from synth.topology.torus import parse_torus

SHAPES = [("8x8", 3), ("9x7", 4), ("10x10", 5), ("4x4x4", 3)]


def _random_labels(V, k, rng):
    lab = rng.integers(1, k + 1, size=V)
    lab[0] = 0
    return lab


@pytest.mark.parametrize("shape,k", SHAPES)
def test_own_costs_sum_to_the_weight(shape, k):
    D = distance_matrix(parse_torus(shape))
    rng = np.random.default_rng(0)
    for _ in range(5):
        lab = _random_labels(D.shape[0], k, rng)
        c = own_costs(D, lab, k)
        assert c[0] == 0 and c.sum() == labels_cost(D, lab)


@pytest.mark.parametrize("shape,k", SHAPES)
def test_window_cost_changes_are_exact(shape, k):
    """Any relabelling of the movable vertices changes the window's cost as much as the tree's."""
    D = distance_matrix(parse_torus(shape))
    V = D.shape[0]
    rng = np.random.default_rng(1)
    for _ in range(6):
        lab = _random_labels(V, k, rng)
        centre = int(rng.integers(1, V))
        movable = np.flatnonzero((D[centre] <= int(rng.integers(1, 4))) & (np.arange(V) > 0))
        win = window_instance(D, lab, own_costs(D, lab, k), k, movable)
        assert win.ids[0] == -1 and np.array_equal(win.ids[1:1 + win.n_movable], movable)
        assert not win.frozen[1:1 + win.n_movable].any() and win.frozen[0] and win.frozen[1 + win.n_movable:].all()
        ls = LabelSearch(win.D, k, win.labels, ext=win.ext, frozen=win.frozen)
        base, full = ls.cost, labels_cost(D, lab)
        for _ in range(4):
            trial = win.labels.copy()
            trial[1:1 + win.n_movable] = rng.integers(1, k + 1, size=win.n_movable)
            ls.set_labels(trial)
            new = lab.copy()
            new[movable] = trial[1:1 + win.n_movable]
            assert ls.cost - base == labels_cost(D, new) - full


@pytest.mark.parametrize("shape,k", SHAPES[:3])
def test_window_move_prices_are_exact_and_frozen_labels_stay(shape, k):
    """Every priced single-label move of the window matches recomputing the tree; frozen moves are never offered."""
    D = distance_matrix(parse_torus(shape))
    V = D.shape[0]
    rng = np.random.default_rng(2)
    lab = _random_labels(V, k, rng)
    movable = np.flatnonzero((D[int(rng.integers(1, V))] <= 2) & (np.arange(V) > 0))
    win = window_instance(D, lab, own_costs(D, lab, k), k, movable)
    ls = LabelSearch(win.D, k, win.labels, ext=win.ext, frozen=win.frozen)
    delta = ls.move_deltas()
    assert np.isinf(delta[win.frozen]).all()
    full = labels_cost(D, lab)
    for i in range(1, 1 + win.n_movable):
        for b in range(1, k + 1):
            if b == win.labels[i]:
                continue
            new = lab.copy()
            new[win.ids[i]] = b
            assert delta[i, b] == labels_cost(D, new) - full
    before = ls.cost
    ls.search()
    assert ls.cost <= before
    assert np.array_equal(ls.labels[win.frozen], win.labels[win.frozen])


def test_close_with_frozen_vertices_never_gets_heavier():
    D = distance_matrix(parse_torus("9x9"))
    V, k = D.shape[0], 4
    rng = np.random.default_rng(3)
    for _ in range(10):
        lab = _random_labels(V, k, rng)
        frozen = rng.random(V) < 0.3
        ls = LabelSearch(D, k, lab, frozen=frozen)
        before = ls.cost
        ls.close()
        assert ls.cost <= before
        assert np.array_equal(ls.labels[frozen], lab[frozen]) and ls.labels[0] == 0


def test_window_search_is_exact_deterministic_and_never_heavier():
    t = parse_torus("12x12")
    D = distance_matrix(t)
    k = 3
    start = np.minimum(D[0].astype(np.int64), k)
    runs = [window_search(D, k, start, seed=4, iterations=30, radius=5, shifts=translations(t, 2)) for _ in range(2)]
    a, b = runs
    assert a.weight == labels_cost(D, a.labels) <= labels_cost(D, start)
    assert a.weight < labels_cost(D, start) and a.improved >= 1
    assert np.array_equal(a.labels, b.labels) and a.windows == b.windows == 30
    assert a.labels[0] == 0 and a.labels[1:].min() >= 1 and a.labels.max() <= k


def test_window_search_needs_a_stop():
    D = distance_matrix(parse_torus("4x4"))
    with pytest.raises(ValueError, match="iterations or a deadline"):
        window_search(D, 2, np.minimum(D[0].astype(np.int64), 2))


@pytest.mark.parametrize("shape,k", SHAPES)
def test_sorted_refresh_agrees_with_the_label_loop(shape, k):
    """The refresh from presorted rows gives the same costs, runners-up and nearest hubs (ties included)."""
    D = distance_matrix(parse_torus(shape))
    V = D.shape[0]
    rng = np.random.default_rng(5)
    for _ in range(8):
        lab = _random_labels(V, k, rng)
        movable = np.flatnonzero((D[int(rng.integers(1, V))] <= 2) & (np.arange(V) > 0))
        win = window_instance(D, lab, own_costs(D, lab, k), k, movable)
        for ls in (LabelSearch(D, k, lab), LabelSearch(win.D, k, win.labels, ext=win.ext, frozen=win.frozen)):
            assert ls._order is not None
            sorted_state = (ls.c.copy(), ls.c2.copy(), ls.n1.copy(), ls.cost)
            ls._order = None
            ls._refresh()
            for a, b in zip(sorted_state, (ls.c, ls.c2, ls.n1, ls.cost)):
                assert np.array_equal(a, b)


@pytest.mark.parametrize("solver", ["heuristic", "cpsat"])
def test_pipeline_improves_big_tori_with_the_windowed_search(monkeypatch, solver):
    """From LNS_FIRST vertices on (lowered here to 64) the label arm of the improvement phase is the windowed search."""
    monkeypatch.setattr(pipeline, "LNS_FIRST", 64)
    monkeypatch.setattr(pipeline, "MIN_SLICE", 0.5)
    calls = []

    def spy(D, k, labels, **kw):
        res = window_search(D, k, labels, **kw)
        calls.append((labels_cost(D, labels), res.weight))
        return res

    monkeypatch.setattr(pipeline, "window_search", spy)
    t = parse_torus("12x12")
    D = distance_matrix(t)
    start = np.minimum(D[0].astype(np.int64), 3)
    best = Best(bound=t.n_vertices - 1)
    pipeline.run_pipeline(t, 3, best, deadline=time.monotonic() + 4, solver=solver,
                          start=labels_to_parent(D, start), bound=False)
    assert calls and all(after <= before for before, after in calls)
    assert check_tree(t, best.parent, 3)[1] == best.weight == tree_weight(t, best.parent)
    assert best.weight <= min(after for _, after in calls) and best.weight < labels_cost(D, start)
