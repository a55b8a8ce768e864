"""Tests for the jump search (:mod:`models.khop.search.jump`).

Its claims: the weight of a jump set is its min-plus closure's tree weight (checked
against :func:`labels_cost`), every priced move and insertion equals a recomputation,
the best jump set is the best labelling (checked by enumerating every jump set of tiny
tori against the exhaustive DP of :mod:`models.khop.brute`), and the closure of a
labelling's jumps is never heavier than the labelling.
"""

import itertools
import time

import numpy as np
import pytest

from synth.models.backends.result import Best
import synth.models.khop.pipeline as pipeline
from synth.models.khop.brute import brute_force_khop
from synth.models.forest.labels import labels_cost, labels_to_parent
from synth.models.forest.instance import distance_matrix, tree_weight
from synth.models.khop.search.jump import JumpSearch, jump_search, jumps_of_labels, unit_metric
from synth.models.khop import solve_khop
from synth.models.balance.family import dimension_metric
from synth.topology.torus import parse_torus

SHAPES = [("3x3", 2), ("4x4", 3), ("5x4", 2), ("8x8", 3), ("9x7", 4), ("10x10", 5), ("3x3x3", 2), ("4x4x4", 3),
          ("12", 3)]


def _random_jumps(V, k, rng, n):
    pos = np.concatenate([[0], rng.choice(np.arange(1, V), size=min(n, V - 1), replace=False)])
    lv = np.concatenate([[0], rng.integers(1, k, size=pos.size - 1)])
    return pos, lv


def _weight(D, k, pos, lv):
    return D.shape[0] - 1 + JumpSearch(D, k, pos, lv).excess


@pytest.mark.parametrize("shape,k", SHAPES)
def test_excess_is_the_weight_of_the_closure(shape, k):
    D = distance_matrix(parse_torus(shape))
    V = D.shape[0]
    rng = np.random.default_rng(1)
    for n in (0, 1, 2, 4, V // 3, V - 1):
        pos, lv = _random_jumps(V, k, rng, n)
        js = JumpSearch(D, k, pos, lv)
        lab = js.labels()
        assert lab[0] == 0 and lab[1:].min() >= 1 and lab.max() <= k
        assert V - 1 + js.excess == labels_cost(D, lab)


@pytest.mark.parametrize("shape,k", SHAPES)
def test_priced_moves_and_insertions_match_a_recomputation(shape, k):
    D = distance_matrix(parse_torus(shape))
    V = D.shape[0]
    rng = np.random.default_rng(2)
    for _ in range(6):
        pos, lv = _random_jumps(V, k, rng, int(rng.integers(1, max(2, V // 4))))
        js = JumpSearch(D, k, pos, lv)
        i = int(rng.integers(1, pos.size))
        cp = rng.integers(0, V, size=12)
        cl = rng.integers(1, k, size=12)
        cl[:2] = -1                                              # removals
        got = js.move_values(i, cp, cl)
        for c in range(cp.size):
            p2, l2 = pos.copy(), lv.copy()
            if cl[c] < 0:
                p2, l2 = np.delete(p2, i), np.delete(l2, i)
            else:
                p2[i], l2[i] = cp[c], cl[c]
            assert got[c] == JumpSearch(D, k, p2, l2).excess
        for level in range(1, k):
            got = js.add_values(level)
            for x in rng.integers(0, V, size=8):
                assert got[x] == JumpSearch(D, k, np.append(pos, x), np.append(lv, level)).excess


@pytest.mark.parametrize("shape,k", [("3x3", 2), ("3x3", 3), ("4x4", 2), ("5", 2), ("6", 3), ("7", 2), ("7", 3)])
def test_the_best_jump_set_is_the_optimum(shape, k):
    """Enumerate every jump set (each vertex: no jump or a level in 1..k-1) against the exhaustive DP."""
    t = parse_torus(shape)
    D = distance_matrix(t)
    V = D.shape[0]
    best = min(_weight(D, k, np.array([0] + [v for v in range(1, V) if c[v - 1]]),
                       np.array([0] + [c[v - 1] for v in range(1, V) if c[v - 1]]))
               for c in itertools.product(range(k), repeat=V - 1))
    assert best == brute_force_khop(t, k)[0]


@pytest.mark.parametrize("shape,k", SHAPES)
def test_the_closure_of_a_labelling_is_never_heavier(shape, k):
    D = distance_matrix(parse_torus(shape))
    V = D.shape[0]
    rng = np.random.default_rng(3)
    for _ in range(5):
        lab = rng.integers(1, k + 1, size=V)
        lab[0] = 0
        pos, lv = jumps_of_labels(D, lab, k)
        assert _weight(D, k, pos, lv) <= labels_cost(D, lab)
        closed = JumpSearch(D, k, pos, lv).labels()            # a closed labelling keeps its weight
        assert _weight(D, k, *jumps_of_labels(D, closed, k)) == labels_cost(D, closed)


def test_prune_keeps_the_weight_and_drops_idle_jumps():
    D = distance_matrix(parse_torus("10x10"))
    rng = np.random.default_rng(4)
    for _ in range(10):
        js = JumpSearch(D, 4, *_random_jumps(100, 4, rng, 30))
        before = js.excess
        js.prune()
        assert js.excess == before
        ex = js.P.min(axis=1) - js.lv
        assert np.all(ex[1:] > 0)


@pytest.mark.parametrize("shape,k", [("3x3", 2), ("4x4", 2), ("4x4", 3), ("3x5", 3), ("3x4", 2), ("12", 3), ("13", 2)])
def test_search_reaches_the_brute_force_optimum(shape, k):
    t = parse_torus(shape)
    D = distance_matrix(t)
    res = jump_search(D, k, seed=0, iterations=60)
    assert res.weight == labels_cost(D, res.labels) == brute_force_khop(t, k)[0]


def test_search_is_deterministic_and_never_heavier_than_its_start():
    D = distance_matrix(parse_torus("12x12"))
    start = np.minimum(D[0].astype(np.int64), 4)
    a = jump_search(D, 4, start, seed=5, iterations=30)
    b = jump_search(D, 4, start, seed=5, iterations=30)
    assert np.array_equal(a.labels, b.labels) and a.weight == b.weight
    assert a.weight <= labels_cost(D, start) and a.weight == labels_cost(D, a.labels)
    with pytest.raises(ValueError, match="iterations or a deadline"):
        jump_search(D, 4)


def test_unit_metric():
    t = parse_torus("6x5")
    D = distance_matrix(t)
    assert unit_metric(D) and unit_metric(distance_matrix(parse_torus("3x3x4")))
    assert not unit_metric(2 * D)
    assert not unit_metric(dimension_metric(t, (1, 2)))


def test_bad_jump_sets_are_refused():
    D = distance_matrix(parse_torus("4x4"))
    with pytest.raises(ValueError, match="root first"):
        JumpSearch(D, 3, [1, 2], [0, 1])
    with pytest.raises(ValueError, match="root first"):
        JumpSearch(D, 3, [0, 2], [0, 3])


@pytest.mark.parametrize("solver", ["auto", "heuristic"])
def test_the_pipeline_starts_with_the_jump_search(solver):
    seen = []
    r = solve_khop(parse_torus("12x12"), 4, time_limit=6, solver=solver, progress=seen.append)
    first = next(m for m in seen if m.startswith("incumbent"))
    assert first.endswith("(jump search)")
    assert r.depth <= 4 and r.weight == tree_weight(parse_torus("12x12"), r.parent)


def test_jump_rounds_are_bounded():
    assert pipeline.jump_rounds(256) == 500 and pipeline.jump_rounds(4096) == 50


def test_a_start_tree_is_continued():
    """A given start is the first incumbent and the jump search's starting point: never heavier."""
    t = parse_torus("16x16")
    D = distance_matrix(t)
    start = labels_to_parent(D, np.minimum(D[0].astype(np.int64), 6))      # truncated BFS, depth 6
    seen = []
    best = Best(bound=t.n_vertices - 1)
    pipeline.run_pipeline(t, 6, best, deadline=time.monotonic() + 6, say=seen.append, start=start, bound=False)
    assert seen[0].endswith("(start)")
    assert best.weight <= tree_weight(t, start)
