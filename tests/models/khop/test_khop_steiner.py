"""Choosing the Steiner bound's terminals (models.khop.steiner) and its place in the pipeline."""

import time

import numpy as np
import pytest

from synth.check.bounds import khop_dual_bound
from synth.models.backends.result import Best
from synth.models.khop.brute import brute_force_khop
from synth.models.forest.instance import distance_matrix, tree_weight
from synth.models.khop.steiner import axis_sets, jump_tree, relaxed_jumps, terminal_search
from synth.check.bounds.kinds import STEINER_KIND
from synth.check.bounds.steiner import excess_tables
from synth.topology.torus import parse_torus


@pytest.mark.parametrize("shape,k,S", [("6x6", 2, [21, 14, 35]), ("8x8", 5, [36, 28, 35, 37, 44]),
                                       ("3x3x3", 1, [13, 26])])
def test_relaxed_jumps_cost_the_table_value(shape, k, S):
    t = parse_torus(shape)
    D = distance_matrix(t)
    g = excess_tables(t, k, S)
    jumps = relaxed_jumps(D, k, S, g)
    assert sum(int(D[u, w]) - 1 for u, w in jumps) == int(g[-1, 0, 0])
    assert all(D[u, w] >= 2 for u, w in jumps)


def test_jump_tree_is_the_breadth_first_tree_of_the_torus_plus_the_jumps():
    t = parse_torus("8x8")
    D = distance_matrix(t)
    parent, depth = jump_tree(D, [(0, 36)])             # (0, 0) -> (4, 4) in one edge
    assert parent[0] == -1 and depth[36] == 1 and depth.max() == 4
    for v in range(1, 64):
        assert depth[v] == depth[parent[v]] + 1
        assert D[v, parent[v]] == 1 or {v, int(parent[v])} == {0, 36}
    assert np.array_equal(jump_tree(D, [])[1], D[0])


@pytest.mark.parametrize("shape", ["4x4", "3x5", "7"])
def test_search_bound_is_valid_and_a_closed_tree_is_optimal(shape):
    t = parse_torus(shape)
    for k in range(1, t.diameter + 1):
        opt = brute_force_khop(t, k)[0]
        res = terminal_search(t, k, deadline=time.monotonic() + 30)
        assert res.bound <= opt
        assert khop_dual_bound(t, k, res.dual).bound == res.bound
        if res.parent is not None:
            assert tree_weight(t, res.parent) == res.bound == opt


def test_search_closes_8x8_depth_6():
    t = parse_torus("8x8")
    res = terminal_search(t, 6, deadline=time.monotonic() + 30)
    assert res.parent is not None
    for v in range(1, 64):                       # depth <= 6: at most 6 steps up to the root
        u, steps = v, 0
        while u != 0:
            u, steps = int(res.parent[u]), steps + 1
        assert steps <= 6
    assert tree_weight(t, res.parent) == res.bound
    assert res.dual["kind"] == STEINER_KIND and res.dual["bound"] == res.bound


def test_pipeline_keeps_the_steiner_dual_when_it_proves_more():
    from synth.models.khop.pipeline import _steiner_bound

    t = parse_torus("16x16")
    best = Best(bound=263.0, method="lp")
    best.dual = {"bound": 263}
    _steiner_bound(t, 10, best, distance_matrix(t), time.monotonic() + 120, lambda _m: None)
    assert best.bound == 264 and best.dual["kind"] == STEINER_KIND
    assert khop_dual_bound(t, 10, best.dual).bound == 264


@pytest.mark.parametrize("shape,k", [("16x16", 9), ("5x7", 3), ("4x4x4", 4), ("9", 2)])
def test_axis_sets_are_the_farthest_vertex_and_its_rings(shape, k):
    t = parse_torus(shape)
    D = distance_matrix(t)
    far = np.flatnonzero(D[0] > k)
    sets = axis_sets(t, k, D[0])
    rmax = int(D[far[np.argmax(D[0, far])], far].max())
    assert len(sets) == rmax + rmax * (rmax - 1) // 2
    for S in sets:
        a = S[0]
        assert D[0, a] == D[0].max() and 0 not in S and len(set(S)) == len(S)
        assert 2 <= len(S) <= 1 + 4 * len(t.shape)          # one or two rings of 2 d vertices
        for v in S[1:]:                                    # on an axis through a
            diff = np.asarray(t.coords(np.asarray([v]))).reshape(-1) - np.asarray(t.coords(np.asarray([a]))).reshape(-1)
            assert np.count_nonzero(diff) == 1


@pytest.mark.slow
def test_solve_16x16_depth_10_ends_within_one_percent():
    from synth.models.khop import solve_khop

    t = parse_torus("16x16")
    r = solve_khop(t, 10, time_limit=120)
    assert r.lower_bound >= 264 and r.dual["kind"] == STEINER_KIND        # the LP alone: 263
    assert khop_dual_bound(t, 10, r.dual).bound == r.lower_bound
    assert (r.weight - r.lower_bound) / r.weight <= 0.01


@pytest.mark.slow  # about 25 s: the 16x16 terminal search, twice
def test_search_skips_work_that_cannot_beat_a_known_bound():
    t = parse_torus("16x16")
    # depth 3: the LP proves 361; 12 terminals add at most 13 each to the antipode's 268, so separation
    # stops early and no structured set is solved
    res = terminal_search(t, 3, deadline=time.monotonic() + 60, beat=361)
    assert res.bound < 361 and len(res.terminals) < 12
    full = terminal_search(t, 3, deadline=time.monotonic() + 60)
    assert len(full.terminals) > len(res.terminals) and full.bound < 361
    # where the Steiner bound wins, knowing the LP's changes nothing
    assert terminal_search(t, 10, deadline=time.monotonic() + 60, beat=263).bound == 264
