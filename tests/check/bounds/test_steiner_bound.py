"""The excess Steiner bound (synth.check.bounds.steiner) against brute force and a DP written out here."""

import itertools

import numpy as np
import pytest

from synth.check.bounds import STEINER_KIND, excess_tables, khop_dual_bound, steiner_dual, terminal_bound
from synth.check.bounds.steiner import _extend
from synth.errors import SynthError
from synth.topology.torus import parse_torus


def _dist(t):
    v = np.arange(t.n_vertices)
    return t.dist(v[:, None], v[None, :]).astype(np.int64)


def _naive_excess(t, k, terminals):
    """The Dreyfus-Wagner recursion of the module docstring, no stays, dense min-plus extensions."""
    D = _dist(t)
    V, s = t.n_vertices, len(terminals)
    big = 10**9
    C = D - 1
    np.fill_diagonal(C, big)
    g = {}
    for X in range(1, 1 << s):
        G = np.full((k + 1, V), big, dtype=np.int64)
        members = [i for i in range(s) if X >> i & 1]
        if len(members) == 1:
            G[1:, terminals[members[0]]] = 0
        for r in range(1, len(members)):
            for part in itertools.combinations(members, r):
                Y = sum(1 << i for i in part)
                G = np.minimum(G, g[Y] + g[X ^ Y])
        for d in range(k - 1, -1, -1):
            G[d] = np.minimum(G[d], (C + G[d + 1][None, :]).min(axis=1))
        G[1:, 0] = big
        g[X] = np.minimum(G, big)
    return int(g[(1 << s) - 1][0, 0])


def _random_tree(D, k, rng):
    V = D.shape[0]
    parent, depth = np.full(V, -1), np.zeros(V, dtype=int)
    placed = [0]
    for v in rng.permutation(np.arange(1, V)):
        options = [u for u in placed if depth[u] < k]
        near = min(D[u, v] for u in options)
        u = rng.choice([u for u in options if D[u, v] <= near + 1])
        parent[v], depth[v] = u, depth[u] + 1
        placed.append(v)
    return int(sum(D[v, parent[v]] for v in range(1, V)))


@pytest.mark.parametrize("shape", ["3x3", "4x5", "3x3x3", "7", "6x6"])
def test_extension_is_the_min_over_other_vertices_or_a_stay(shape):
    t = parse_torus(shape)
    D = _dist(t)
    rng = np.random.default_rng(3)
    h = rng.integers(0, 9, size=(4, t.n_vertices)).astype(np.int32)
    C = D - 1
    np.fill_diagonal(C, 10**6)
    want = np.minimum(h, (C[None, :, :] + h[:, None, :]).min(axis=2))
    assert np.array_equal(_extend(h, t.shape), want)


@pytest.mark.parametrize("shape", ["3x4", "5x5", "3x3x3", "8"])
def test_tables_match_the_recursion_written_out(shape):
    t = parse_torus(shape)
    rng = np.random.default_rng(5)
    for k in range(1, t.diameter + 1):
        for size in (1, 2, 4):
            S = [int(x) for x in rng.choice(np.arange(1, t.n_vertices), size=size, replace=False)]
            assert int(excess_tables(t, k, S)[-1, 0, 0]) == _naive_excess(t, k, S), (k, S)


def test_merges_in_small_batches_give_the_same_tables(monkeypatch):
    import synth.check.bounds.steiner as sb

    t = parse_torus("5x5")
    S = [12, 7, 17, 11, 13, 6]
    want = excess_tables(t, 3, S)
    monkeypatch.setattr(sb, "_MERGE_BYTES", 3 * 4 * 4 * 25)        # 3 sums per batch: splits cut apart
    assert np.array_equal(excess_tables(t, 3, S), want)
    assert int(want[-1, 0, 0]) == _naive_excess(t, 3, S)


@pytest.mark.parametrize("shape", ["3x3", "4x4", "3x5", "7", "3x4"])
def test_bound_never_exceeds_the_brute_force_optimum(shape):
    from synth.models.khop.brute import brute_force_khop

    t = parse_torus(shape)
    V = t.n_vertices
    D = _dist(t)
    rng = np.random.default_rng(7)
    for k in range(1, t.diameter + 1):
        opt = brute_force_khop(t, k)[0]
        far = [int(v) for v in np.flatnonzero(D[0] > k)]
        sets = [far[:12]] if far else []
        sets += [[int(x) for x in rng.choice(np.arange(1, V), size=min(s, V - 1), replace=False)] for s in (1, 3, 6)]
        for S in sets:
            assert terminal_bound(t, k, S).bound <= opt, (k, S)
        if k == 1 and V - 1 <= 12:
            assert terminal_bound(t, 1, list(range(1, V))).bound == opt     # depth 1: the star, exactly


@pytest.mark.parametrize("shape,k", [("8x8", 3), ("8x8", 6), ("9x7", 4), ("4x4x4", 2)])
def test_bound_is_below_random_trees(shape, k):
    t = parse_torus(shape)
    D = _dist(t)
    rng = np.random.default_rng(11)
    far = np.flatnonzero(D[0] > k)
    S = [int(x) for x in rng.choice(far, size=min(6, far.size), replace=False)]
    b = terminal_bound(t, k, S).bound
    assert b > t.n_vertices - 1          # far vertices exist: something beyond p - 1 is proven
    for _ in range(10):
        assert _random_tree(D, k, rng) >= b


def test_16x16_depth_9_and_10_bounds_beat_the_lp():
    # the antipode (8, 8) and the four vertices 3 from it along the axes; the layered LP proves 263
    t = parse_torus("16x16")
    S = [8 * 16 + 8, 5 * 16 + 8, 11 * 16 + 8, 8 * 16 + 5, 8 * 16 + 11]
    assert terminal_bound(t, 10, S).bound == 264
    assert khop_dual_bound(t, 10, steiner_dual(t, 10, S)).bound == 264
    assert khop_dual_bound(t, 9, steiner_dual(t, 10, S)).bound == 264      # W*(9) >= W*(10)
    # two rings: 3 and 4 from the antipode (the LP proves 265 for depth 9)
    S9 = S + [4 * 16 + 8, 12 * 16 + 8, 8 * 16 + 4, 8 * 16 + 12]
    assert terminal_bound(t, 9, S9).bound == 266


@pytest.mark.parametrize("terminals,needle", [
    ([0], "not a vertex id"), ([5, 5], "twice"), ([99], "not a vertex id"), ([True], "not a vertex id"),
    ("12", "list"), (list(range(1, 18)), "at most"), ([1.0], "not a vertex id"),
])
def test_bad_terminals_are_rejected(terminals, needle):
    with pytest.raises(SynthError, match=needle):
        terminal_bound(parse_torus("5x5"), 2, terminals)
    with pytest.raises(SynthError, match=needle):
        khop_dual_bound(parse_torus("5x5"), 2, {"kind": STEINER_KIND, "k": 2, "terminals": terminals})


def test_bad_depth_and_missing_terminals():
    t = parse_torus("5x5")
    with pytest.raises(SynthError, match="depth"):
        terminal_bound(t, 0, [12])
    with pytest.raises(SynthError, match="depth"):
        khop_dual_bound(t, 3, {"kind": STEINER_KIND, "k": 2, "terminals": [12]})
    with pytest.raises(SynthError, match="list"):
        khop_dual_bound(t, 2, {"kind": STEINER_KIND, "k": 2})
    assert terminal_bound(t, 2, []).bound == 24


def _certified(terminals, claimed):
    from synth.check.claims import certify
    from synth.symmetry.torus import torus_gamma
    from synth.models.khop import solve_khop
    from synth.schedule import tree_schedule

    t = parse_torus("8x8")
    r = solve_khop(t, 6, time_limit=5, solver="heuristic")
    dual = {"kind": STEINER_KIND, "k": 6, "terminals": terminals, "bound": claimed}
    solver = {"depth_bound": 6, "lower_bound": claimed, "dual_bound": dual}
    return certify(tree_schedule(t, r.parent, 0, route=t.route), torus_gamma(t), solver=solver)


def test_certificate_rederives_the_steiner_bound_and_catches_an_overclaim():
    from synth.check.claims import check_certificate

    S = [36, 28, 35, 37, 44]                 # (4, 4) and its four neighbours on 8x8: W*(6) >= 66
    rep = check_certificate(_certified(S, 66))
    assert rep.valid and rep.claims["weight_lower_bound"] == (66, 66, True)
    assert not check_certificate(_certified(S[:1], 66)).valid         # one terminal proves only 65


def test_tables_too_big_for_memory_are_refused():
    with pytest.raises(SynthError, match="GiB"):
        terminal_bound(parse_torus("64x64"), 14, list(range(1, 17)))
