"""Depth-bounded exchange forests (models.xhop): families against brute force, forests, certificates, bounds."""

import time
from types import SimpleNamespace

import numpy as np
import pytest
from synth.models.forest.brute import brute_force_labels
from synth.models.xhop.brute import (
    brute_force_xhop,
    enumerate_forests,
)
from synth.models.forest.cuts import CutLoop
from synth.models.xhop.search import (
    heuristic_forest,
    labels_to_parent,
    sample_partners,
    split_tree,
)
from synth.models.xhop.instance import (
    allowed_arcs,
    check_forest,
    distance_matrix,
    forest_depths,
    hop_arcs,
    pair_stabilizer,
    partner_orbits,
    root_distance,
    root_stabilizer,
)
from synth.models.xhop.model import (
    build_xhop_model,
    decode_forest,
    encode_forest,
    model_data,
)
from synth.models.xhop.pipeline import lp_bound, trivial_partner_bounds
from synth.models.xhop import XHopResult, exchange_depth_threshold, solve_xhop

from synth.check.claims import certify
from synth.symmetry.torus import torus_gamma
from synth.schedule import exchange_schedule
from synth.topology.torus import parse_torus

RINGS = ["4", "5", "6", "7", "8"]


def _brute(t, h):
    """Exact W* by the independent method that is tractable for t.

    From the threshold depth on the value is p - 1: no forest is lighter (every edge and the route
    are at least 1 long) and the BFS forest attains it; brute force confirms it at the threshold
    on the smaller tori (and on 4x4 in a slow test).
    """
    hstar = exchange_depth_threshold(t)[0]
    if h > hstar or (h == hstar and t.n_vertices > 12):   # the threshold itself: brute force where cheap
        return t.n_vertices - 1
    if t.n_vertices <= 8:
        return enumerate_forests(t, h, max_vertices=8)[0]
    return brute_force_xhop(t, h)[0]


# ----------------------------------------------------------------------------- instance
def test_partner_orbits_cover_every_vertex():
    for shape in ("4x4", "5x5", "3x4", "3x3x3"):
        t = parse_torus(shape)
        reps, sizes = partner_orbits(t)
        assert sizes.sum() == t.n_vertices - 1
        perms = root_stabilizer(t)
        D = distance_matrix(t)
        # every stabilizer element fixes 0 and preserves distances
        assert np.all(perms[:, 0] == 0)
        for g in perms:
            assert np.array_equal(D[np.ix_(g, g)], D)
        # every vertex other than 0 is the image of exactly one representative
        images = {int(g[r]): int(r) for r in reps for g in perms}
        assert set(images) == set(range(1, t.n_vertices))


def test_pair_stabilizer_maps_the_pair_to_itself():
    for shape, b in (("4x4", 5), ("6x6", 2), ("5x5", 7), ("3x4", 1)):
        t = parse_torus(shape)
        D = distance_matrix(t)
        perms = pair_stabilizer(t, b)
        assert perms.shape[0] >= 2                      # the swap u -> b - u is always there
        for g in perms:
            assert {int(g[0]), int(g[b])} == {0, b}
            assert np.array_equal(D[np.ix_(g, g)], D)


def test_arc_reduction_mask():
    t = parse_torus("5x5")
    D = distance_matrix(t)
    b = 7
    keep = allowed_arcs(D, b)
    dR = root_distance(D, b)
    assert not keep[[0, b], :].any() and not keep[:, [0, b]].any()
    i, j = np.nonzero(keep)
    assert np.all(D[i, j] < dR[j])
    assert not keep[:, dR == 1].any()                   # neighbours of a root always hang at depth 1


def test_hop_arcs_layer_one_is_the_nearer_root():
    t = parse_torus("6x6")
    D = distance_matrix(t)
    tail, head, layer = hop_arcs(D, 3, 3)
    top = layer == 1
    assert np.array_equal(np.sort(head[top]), np.setdiff1d(np.arange(36), [0, 3]))
    assert np.all(D[tail[top], head[top]] == root_distance(D, 3)[head[top]])


# ----------------------------------------------------------------------------- families
@pytest.mark.parametrize("shape,h", [("4", 1), ("4", 2), ("5", 1), ("5", 2), ("5", 3), ("6", 2), ("6", 3)])
def test_families_have_exactly_the_forests_as_integral_points(shape, h):
    """Without reductions, the integral points of the model are exactly the exchange forests of depth <= h."""
    t = parse_torus(shape)
    V = t.n_vertices
    D = distance_matrix(t)
    data = model_data(D, h, np.arange(1, V), reduce=False)
    model, v = build_xhop_model(data)
    points = model.solve_cpsat(enumerate_all=True)
    decoded = set()
    for x in points:
        b, parent = decode_forest(v, x, data)
        decoded.add((b, tuple(parent.tolist())))
    _w, _b, _p, forests = enumerate_forests(t, h, collect=True)
    assert len(points) == len(decoded) == len(forests)
    assert decoded == forests


@pytest.mark.parametrize("shape", RINGS + ["3x3", "3x4"])
def test_model_optimum_matches_brute_force(shape):
    t = parse_torus(shape)
    D = distance_matrix(t)
    for h in range(1, t.diameter + 1):
        want = _brute(t, h)
        for reduce in (True, False):
            partners = np.arange(1, t.n_vertices) if not reduce else partner_orbits(t)[0]
            data = model_data(D, h, partners, reduce=reduce)
            model, v = build_xhop_model(data)
            sol = model.solve_highs(time_limit=30)
            assert sol.status == "optimal"
            assert round(sol.objective) == want, (shape, h, reduce)
            b, parent = decode_forest(v, sol.values, data)
            assert check_forest(t, b, parent, h)[1] == want


def test_encode_is_feasible_and_decodes_back():
    t = parse_torus("7")
    D = distance_matrix(t)
    data = model_data(D, 2, np.arange(1, 7), reduce=False)
    model, v = build_xhop_model(data)
    _w, _b, _p, forests = enumerate_forests(t, 2, collect=True)
    for b, parent in sorted(forests)[:200]:
        x = encode_forest(v, data, model, b, np.array(parent))
        assert x is not None and model.is_feasible(x)
        assert decode_forest(v, x, data)[0] == b
        assert np.array_equal(decode_forest(v, x, data)[1], parent)
    bad = np.array([-1, 2, 1, 0, 0, 0, 0])             # cycle 1 <-> 2
    assert encode_forest(v, data, model, 3, bad) is None


def test_labelling_dp_agrees_with_enumeration():
    for shape in ("6", "7", "8"):
        t = parse_torus(shape)
        D = distance_matrix(t)
        for h in (1, 2, 3):
            for b in range(1, t.n_vertices):
                w, parent = brute_force_labels(D, [0, b], h)
                e = enumerate_forests(t, h, partners=[b])[0]
                assert w + D[0, b] == e
                assert check_forest(t, b, parent, h)[1] == e


def test_directed_cuts_hold_for_every_forest():
    """Every cut the separation finds is satisfied by every forest the reduced model can represent."""
    t = parse_torus("8")
    D = distance_matrix(t)
    h, b = 2, 1
    data = model_data(D, h, [b], arcs=hop_arcs(D, b, h))
    model, v = build_xhop_model(data)
    loop = CutLoop(model, v, data, perms=pair_stabilizer(t, b))     # with the cuts' symmetric images
    res = loop.run()
    _w, _b, _p, forests = enumerate_forests(t, h, partners=[b], collect=True)
    checked = 0
    for _b2, parent in forests:
        x = encode_forest(v, data, model, b, np.array(parent))
        if x is None:
            continue
        checked += 1
        assert model.is_feasible(x)                     # includes every added cut row
        assert x @ model.cost >= res.bound - 1e-6
    assert checked > 0


def test_lp_and_cut_bounds_are_below_the_optimum():
    t = parse_torus("4x4")
    D = distance_matrix(t)
    for h in (2,):
        for b in partner_orbits(t)[0].tolist():
            opt = brute_force_labels(D, [0, b], h)[0] + int(D[0, b])
            data = model_data(D, h, [b], arcs=hop_arcs(D, b, h))
            model, v = build_xhop_model(data)
            assert lp_bound(model)[0] <= opt + 1e-6
            assert CutLoop(model, v, data).run().bound <= opt + 1e-6
            assert trivial_partner_bounds(D, h, [b])[0] <= opt


# ----------------------------------------------------------------------------- heuristic
def test_labels_give_forests_within_depth():
    t = parse_torus("6x6")
    D = distance_matrix(t)
    rng = np.random.default_rng(0)
    for _ in range(20):
        b = int(rng.integers(1, 36))
        lab = rng.integers(1, 4, size=36)
        lab[[0, b]] = 0
        parent = labels_to_parent(D, lab)
        assert forest_depths(parent, [0, b]).max() <= 3


def test_partner_sample():
    reps = partner_orbits(parse_torus("16x16"))[0]
    assert np.array_equal(sample_partners(reps, 256), reps)        # every orbit up to 16x16
    few = sample_partners(np.arange(1, 500), 4096)
    assert 8 <= few.size < 499 and few[0] == 1


def test_split_tree_keeps_the_weight():
    t = parse_torus("5x5")
    D = distance_matrix(t)
    V = t.n_vertices
    parent = np.zeros(V, dtype=np.int64)             # the star
    parent[0] = -1
    w_tree = int(D[0].sum())
    for c, p in split_tree(parent):
        _depth, w = check_forest(t, c, p, 1)
        assert w == w_tree


def test_heuristic_is_deterministic():
    t = parse_torus("6x6")
    D = distance_matrix(t)
    r1 = heuristic_forest(t, D, 3, seed=3, time_limit=60)
    r2 = heuristic_forest(t, D, 3, seed=3, time_limit=60)
    assert r1.b == r2.b and r1.weight == r2.weight and np.array_equal(r1.parent, r2.parent)


# ----------------------------------------------------------------------------- solve_xhop
@pytest.mark.parametrize("shape", RINGS + ["3x3", "3x4", "4x4"])
def test_solve_xhop_is_optimal_on_tiny_tori(shape):
    t = parse_torus(shape)
    for h in range(1, t.diameter + 1):
        r = solve_xhop(t, h, time_limit=30, use_trees=False)
        want = _brute(t, h)
        assert r.status == "optimal" and r.weight == want == r.lower_bound, (shape, h)
        assert r.a == 0 and r.parent[0] == -1 and r.parent[r.b] == -1
        assert check_forest(t, r.b, r.parent, h) == (r.depth, r.weight)


def test_closed_forms():
    t = parse_torus("8x8")
    hstar, b = exchange_depth_threshold(t)
    assert hstar == t.diameter - 1 and t.dist(0, b) == 1
    r = solve_xhop(t, hstar)
    assert (r.status, r.weight, r.depth) == ("optimal", 63, hstar)
    r = solve_xhop(t, 20)
    assert r.weight == 63
    t5 = parse_torus("5x5")
    assert exchange_depth_threshold(t5)[0] == t5.diameter   # odd sides: a pair saves nothing
    r1 = solve_xhop(t, 1)
    D = distance_matrix(t)
    want = min(int(D[0, b] + np.minimum(D[0], D[b]).sum()) for b in range(1, 64))
    assert (r1.status, r1.weight, r1.depth) == ("optimal", want, 1)
    with pytest.raises(ValueError):
        solve_xhop(t, 0)


@pytest.mark.parametrize("shape,h", [("4x4", 2), ("6x6", 2), ("5x5", 2), ("6x6", 3), ("3x3x3", 2), ("4x4x4", 2)])
def test_certified_schedule(shape, h):
    t = parse_torus(shape)
    r = solve_xhop(t, h, time_limit=20, use_trees=False)
    assert isinstance(r, XHopResult)
    assert r.lower_bound <= r.weight and 0 <= r.gap < 1 and r.bound_method
    assert r.depth <= h and r.parent.dtype == np.int64
    base = exchange_schedule(t, r.parent, r.a, r.b, route=t.route)
    cert = certify(base, torus_gamma(t))
    c = cert.claims
    assert c["rounds"] == 2 * r.depth + 1
    assert c["psi"] == "1" and c["omega"] == "1"
    assert c["weight"] == str(r.weight)


def test_solve_xhop_is_deterministic():
    t = parse_torus("6x6")
    a = solve_xhop(t, 3, seed=1, time_limit=30, use_trees=False)
    b = solve_xhop(t, 3, seed=1, time_limit=30, use_trees=False)
    assert (a.b, a.weight, a.lower_bound, a.status) == (b.b, b.weight, b.lower_bound, b.status)
    assert np.array_equal(a.parent, b.parent)


def test_tree_results_are_used():
    t = parse_torus("6x6")
    V = t.n_vertices
    star = np.zeros(V, dtype=np.int64)
    star[0] = -1
    fake = SimpleNamespace(k=4, parent=star, depth=1, lower_bound=37, weight=int(distance_matrix(t)[0].sum()))
    r = solve_xhop(t, 3, time_limit=20, trees=[fake])
    assert r.status == "optimal" and r.weight == 39 and r.lower_bound == 39
    # a bound from a tree of depth k <= h is not valid for the exchange, and is ignored
    shallow = SimpleNamespace(k=3, parent=star, depth=1, lower_bound=10**6, weight=0)
    r = solve_xhop(t, 3, time_limit=20, trees=[shallow])
    assert r.lower_bound <= r.weight == 39


def test_progress_messages():
    msgs = []
    solve_xhop(parse_torus("6x6"), 2, time_limit=20, use_trees=False, progress=msgs.append)
    assert any("incumbent" in m for m in msgs) and any("bound" in m for m in msgs)


# ----------------------------------------------------------------------------- slow
@pytest.mark.slow
def test_enumeration_on_3x3_matches_the_model():
    t = parse_torus("3x3")
    reps = partner_orbits(t)[0]
    for h in (1, 2):
        want = enumerate_forests(t, h, partners=reps)[0]
        assert brute_force_xhop(t, h)[0] == want
        assert solve_xhop(t, h, use_trees=False).weight == want


@pytest.mark.slow
def test_4x4_every_partner_against_the_labelling_dp():
    t = parse_torus("4x4")
    D = distance_matrix(t)
    for h in (2, 3):
        want = min(brute_force_labels(D, [0, b], h)[0] + int(D[0, b]) for b in range(1, 16))
        assert solve_xhop(t, h, use_trees=False).weight == want
        data = model_data(D, h, np.arange(1, 16), reduce=True)
        model, _v = build_xhop_model(data)
        assert round(model.solve_highs(time_limit=60).objective) == want


@pytest.mark.slow
def test_8x8_depth_3_is_proven():
    t = parse_torus("8x8")
    t0 = time.monotonic()
    r = solve_xhop(t, 3, time_limit=300, use_trees=False)       # ~15-60 s on a quiet machine
    assert (r.status, r.weight, r.lower_bound) == ("optimal", 73, 73)
    assert time.monotonic() - t0 < 330


@pytest.mark.slow
def test_relation_to_khop_trees():
    from synth.models.khop import solve_khop

    t = parse_torus("5x5")
    for h in (2, 3):
        x = solve_xhop(t, h, time_limit=60, use_trees=False)
        tree_h = solve_khop(t, h, time_limit=60)
        tree_h1 = solve_khop(t, h + 1, time_limit=60)
        assert x.weight <= tree_h.weight                    # split a tree: same weight, depth <= h
        assert x.weight >= tree_h1.lower_bound              # add the edge 0-b: a tree of depth h + 1
