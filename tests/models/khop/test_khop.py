"""Tests for the minimum-weight k-hop tree models.

Every constraint family of :mod:`synth.models.khop.model` is checked against brute
force on tiny tori, every depth bound, with and without the exact arc reduction; the
bounds for validity; and :func:`solve_khop` end to end, including the certificate the
checker builds from its tree.  The forest core they share (instance data, labels, brute
force, cuts) is tested in ``tests/models/forest/``.
"""

from fractions import Fraction

import numpy as np
import pytest
from conftest import all_trees, count_trees, tiny_cases

from synth.check.claims import certify
from synth.symmetry.torus import torus_gamma
from synth.models.forest.labels import labels_cost, labels_to_parent
from synth.models.khop.search.construct import heuristic_tree
from synth.models.forest.instance import (allowed_pairs, check_tree, distance_matrix, hop_arcs, root_stabilizer)
from synth.models.backends.lagrangian import lagrangian_bound
from synth.models.khop.lp import LayeredLP
from synth.models.khop.model import (LinearModel, ModelData, add_arc_vars, add_depth_vars, add_layer_cuts,
                                      add_one_parent, add_parent_above, add_weight_objective, build_hop_model,
                                      decode_parent)
from synth.models.khop import KHopResult, solve_khop
from synth.schedule import tree_schedule
from synth.topology.torus import parse_torus

CASES = tiny_cases()


def _valid_tree(t, parent, k, weight=None):
    depth, w = check_tree(t, parent, k)
    if weight is not None:
        assert w == weight
    return depth, w


# ----------------------------------------------------------------- brute force
@pytest.mark.parametrize("shape,k", CASES)
def test_cone_count_bound_never_exceeds_brute_force(shape, k, brute):
    from synth.check.bounds import cone_count_bound

    t = parse_torus(shape)
    assert t.n_vertices - 1 <= cone_count_bound(t, k).bound <= brute(shape, k)[0]


# ------------------------------------------------------ constraint families
def _solve(model, backend):
    sol = {"highs": model.solve_highs, "cpsat": model.solve_cpsat, "scip": model.solve_scip}[backend](time_limit=30)
    assert sol.status == "optimal"
    return sol


@pytest.mark.parametrize("backend", ["highs", "cpsat", "scip"])
@pytest.mark.parametrize("reduce", [False, True])
@pytest.mark.parametrize("shape,k", [c for c in CASES if c[0] in ("3x3", "3x4", "9", "4x4")])
def test_hop_model_optimum_matches_brute_force(shape, k, reduce, backend, brute):
    t = parse_torus(shape)
    data = ModelData(distance_matrix(t), k, *hop_arcs(t, k, reduce=reduce))
    model, z, y = build_hop_model(data)
    sol = _solve(model, backend)
    assert round(sol.objective) == brute(shape, k)[0]
    parent = decode_parent(z, sol.values, t.n_vertices)
    _valid_tree(t, parent, k, round(sol.objective))


def _feasibility_model(t, k, reduce=False, families=("one_parent", "parent_above")):
    data = ModelData(distance_matrix(t), k, *hop_arcs(t, k, reduce=reduce))
    model = LinearModel()
    z = add_arc_vars(model, data)
    y = add_depth_vars(model, z, data)
    if "one_parent" in families:
        add_one_parent(model, y, data)
    if "parent_above" in families:
        add_parent_above(model, z, y, data)
    return model, z, y, data


def _count_solutions(model):
    from ortools.sat.python import cp_model

    m, _ = model.to_cpsat()
    m.clear_objective()
    solver = cp_model.CpSolver()
    solver.parameters.enumerate_all_solutions = True
    solver.parameters.num_workers = 1

    class Counter(cp_model.CpSolverSolutionCallback):
        n = 0

        def on_solution_callback(self):
            Counter.n += 1

    assert solver.solve(m, Counter()) == cp_model.OPTIMAL
    return Counter.n


@pytest.mark.parametrize("shape,k", [("5", 1), ("5", 2), ("5", 3), ("5", 4), ("6", 2), ("6", 3), ("6", 5),
                                     ("3x3", 2)])
def test_model_solutions_are_exactly_the_trees(shape, k):
    """Without the reduction, the integral solutions of the families are the depth-<=k trees of K_V."""
    t = parse_torus(shape)
    model, *_ = _feasibility_model(t, k)
    assert _count_solutions(model) == count_trees(t.n_vertices - 1, k)


@pytest.mark.parametrize("shape,k", [("5", 2), ("6", 2), ("6", 3), pytest.param("7", 3, marks=pytest.mark.slow)])
def test_reduced_model_counts_the_reduced_trees(shape, k):
    t = parse_torus(shape)
    model, *_ = _feasibility_model(t, k, reduce=True)
    keep = allowed_pairs(t)
    V = t.n_vertices
    count = sum(keep[parent[1:], np.arange(1, V)].all() for parent, _depth in all_trees(t.n_vertices, k))
    assert _count_solutions(model) == count


@pytest.mark.parametrize("shape,k", [("4x4", 2), ("4x4", 3), ("9", 3)])
def test_each_family_is_needed(shape, k, brute):
    """Dropping "parent above" lets every vertex take its nearest neighbour (W = p - 1 < W*)."""
    t = parse_torus(shape)
    model, z, y, data = _feasibility_model(t, k, reduce=True, families=("one_parent",))
    add_weight_objective(model, z, data)
    assert round(model.solve_highs(time_limit=30).objective) == t.n_vertices - 1 < brute(shape, k)[0]
    model, z, y, data = _feasibility_model(t, k, reduce=True, families=("parent_above",))
    add_weight_objective(model, z, data)
    assert round(model.solve_highs(time_limit=30).objective) == 0          # nobody needs a parent


def test_helpers_return_what_they_create():
    t = parse_torus("4x4")
    data = ModelData(distance_matrix(t), 3, *hop_arcs(t, 3))
    model = LinearModel()
    z = add_arc_vars(model, data)
    assert len(z) == data.tail.size and model.col_names[z[0, 1, 1]] == "z_0_1_1"
    y = add_depth_vars(model, z, data)
    assert all(model.col_names[col] == f"y_{j}_{h}" for (j, h), (col, _) in y.items())
    one = add_one_parent(model, y, data)
    assert sorted(one) == list(range(1, 16))
    above = add_parent_above(model, z, y, data)
    assert set(above) == {key for key in z if key[2] >= 2}
    obj = add_weight_objective(model, z, data)
    assert obj[z[0, 5, 1]] == 2.0


@pytest.mark.parametrize("shape,k", [c for c in CASES if c[0] in ("3x3", "3x4", "4x4", "11") and c[1] > 1])
def test_branch_and_cut_without_root_cuts_matches_brute_force(shape, k, brute):
    """SCIP with only the separator's cuts (none given up front) reaches W*."""
    from synth.models.forest.cuts import layered_separator

    t = parse_torus(shape)
    data = ModelData(distance_matrix(t), k, *hop_arcs(t, k))
    model, z, _y = build_hop_model(data)
    sol = model.solve_scip(time_limit=30, separate=layered_separator(data.D, k, z))
    assert sol.status == "optimal" and round(sol.objective) == brute(shape, k)[0]
    _valid_tree(t, decode_parent(z, sol.values, t.n_vertices), k, brute(shape, k)[0])


def test_scip_reports_infeasible_and_stops_early():
    t = parse_torus("4x4")
    data = ModelData(distance_matrix(t), 2, *hop_arcs(t, 2))
    model, z, _y = build_hop_model(data)
    model.add_row(*model.objective_terms(), -np.inf, 17, "cutoff")      # W* = 18
    sol = model.solve_scip(time_limit=30)
    assert (sol.status, sol.values, sol.bound) == ("infeasible", None, np.inf)
    model.rows.pop()
    msgs = []
    sol = model.solve_scip(time_limit=30, stop_below=40, progress=msgs.append)
    assert sol.values is not None and sol.objective <= 40 and not sol.interrupted
    assert sol.status == "feasible" and sol.bound < 18         # stopped before proving anything
    assert any(m.startswith("scip: incumbent") and "none" not in m for m in msgs)
    best = model.solve_highs(time_limit=30)
    sol = model.solve_scip(time_limit=30, start=best.values, stop_below=18)     # the start is optimal
    assert sol.objective == 18 and sol.status in ("feasible", "optimal")


# --------------------------------------------------------------- LP bounds
@pytest.mark.parametrize("shape,k", [c for c in CASES if 1 < c[1] < parse_torus(c[0]).diameter])
def test_lp_bound_is_valid_and_cuts_keep_the_optimum(shape, k, brute):
    t = parse_torus(shape)
    D = distance_matrix(t)
    G = root_stabilizer(t)
    arcs = hop_arcs(t, k, dist=D)
    lp = LayeredLP(D, k, G)
    res = lp.solve()
    w_star = brute(shape, k)[0]
    assert res.converged and res.bound <= w_star + 1e-6
    full = LayeredLP(D, k, G, *arcs)                        # every arc a column from the start
    assert full.solve().bound == pytest.approx(res.bound, abs=1e-6)
    # every cut found (and its images) keeps the optimum
    from synth.models.forest.cuts import cut_images

    data = ModelData(D, k, *arcs)
    model, z, y = build_hop_model(data)
    add_layer_cuts(model, z, cut_images(lp.cuts, G, t.n_vertices), data)
    assert round(model.solve_highs(time_limit=30).objective) == w_star


def test_lagrangian_bound_holds_for_any_duals():
    t = parse_torus("5x5")
    D = distance_matrix(t)
    lp = LayeredLP(D, 3, root_stabilizer(t), *hop_arcs(t, 3, dist=D))   # every arc is a column
    res = lp.solve()
    assert res.converged
    A = lp.matrix()
    cost = np.concatenate([np.zeros(lp.n_y), lp.col_size * lp.col_dist])
    lo, hi = np.zeros(cost.size), np.ones(cost.size)
    rng = np.random.default_rng(0)
    for scale in (0.0, 0.5, 1.0, 3.0):
        u = lp.duals * (1 + scale * rng.standard_normal(lp.duals.size))
        b, _ = lagrangian_bound(A, lp.row_lo, lp.row_hi, cost, lo, hi, u)
        assert b <= res.objective + 1e-6
        if scale == 0.0:
            assert b == pytest.approx(res.objective, abs=1e-6)


def test_reduced_cost_fixing_keeps_every_optimum(brute):
    """Arcs fixed against UB = W* + 1 are in no optimal tree: the restricted model still reaches W*."""
    for shape, k in [("4x4", 2), ("4x4", 3), ("3x5", 2), ("11", 3)]:
        t = parse_torus(shape)
        D = distance_matrix(t)
        lp = LayeredLP(D, k, root_stabilizer(t))            # column generation from short arcs
        res = lp.solve()
        w_star = brute(shape, k)[0]
        tail, head, layer = lp.arcs_below(w_star - res.bound + 1e-6)
        assert tail.size < hop_arcs(t, k, dist=D)[0].size
        model, z, y = build_hop_model(ModelData(D, k, tail, head, layer))
        assert round(model.solve_highs(time_limit=30).objective) == w_star


# --------------------------------------------------------------- heuristic
@pytest.mark.parametrize("shape,k", [c for c in CASES if c[0] in ("4x4", "3x5", "11")])
def test_heuristic_trees_are_valid(shape, k, brute):
    t = parse_torus(shape)
    D = distance_matrix(t)
    res = heuristic_tree(D, k, seed=3, iterations=10)
    _valid_tree(t, res.parent, k, res.weight)
    assert res.weight == labels_cost(D, res.labels) >= brute(shape, k)[0]
    assert np.array_equal(labels_to_parent(D, res.labels), res.parent)


def test_heuristic_is_deterministic():
    D = distance_matrix(parse_torus("8x8"))
    a = heuristic_tree(D, 3, seed=5, iterations=20)
    b = heuristic_tree(D, 3, seed=5, iterations=20)
    assert np.array_equal(a.parent, b.parent)


# ---------------------------------------------------------------- solve_khop
def _check_result(t, k, r: KHopResult):
    assert isinstance(r, KHopResult)
    assert r.parent.dtype == np.int64 and r.parent[0] == -1
    depth, w = _valid_tree(t, r.parent, k, r.weight)
    assert r.depth == depth <= k
    assert r.lower_bound <= r.weight
    assert r.weight >= t.n_vertices - 1
    assert r.gap == pytest.approx((r.weight - r.lower_bound) / r.weight)
    if r.status == "optimal":
        assert r.lower_bound == r.weight and r.gap == 0
    else:
        assert r.status == "feasible"
    # the checker re-derives the weight from the schedule of this tree
    base = tree_schedule(t, r.parent, 0)
    cert = certify(base, torus_gamma(t), None) if t.is_equal_sided else None
    if cert is not None:
        assert Fraction(cert.claims["weight"]) == r.weight
        assert cert.claims["rounds"] == 2 * r.depth


@pytest.mark.parametrize("shape,k", [c for c in CASES if c[0] in ("3x3", "3x4", "4x4", "9", "11")])
def test_solve_khop_is_optimal_on_tiny_tori(shape, k, brute):
    t = parse_torus(shape)
    r = solve_khop(t, k, time_limit=30)
    _check_result(t, k, r)
    assert r.status == "optimal" and r.weight == brute(shape, k)[0]


@pytest.mark.parametrize("shape", ["5x5", "3x3x3", "6x6"])
def test_solve_khop_small_tori_every_k(shape):
    t = parse_torus(shape)
    for k in range(1, t.diameter + 2):
        r = solve_khop(t, k, time_limit=30, solver=("cpsat", "highs", "scip")[k % 3])
        _check_result(t, k, r)
        assert r.status == "optimal"


def test_trivial_depths_return_at_once():
    t = parse_torus("64x64")
    r = solve_khop(t, 64)
    assert (r.status, r.weight, r.lower_bound, r.depth) == ("optimal", 4095, 4095, 64)
    assert r.seconds < 5
    r = solve_khop(parse_torus("8x8"), 1)
    assert (r.status, r.weight, r.depth) == ("optimal", int(parse_torus("8x8").dist(0, np.arange(64)).sum()), 1)


def test_time_limited_solve_is_honest():
    t = parse_torus("12x12")
    r = solve_khop(t, 4, time_limit=3)
    _check_result(t, 4, r)
    assert r.time_limit == 3
    assert r.seconds < 15


def test_interrupt_propagates_with_the_best_tree():
    t = parse_torus("10x10")
    seen = []

    def progress(msg):
        seen.append(msg)
        if msg.startswith("incumbent"):
            raise KeyboardInterrupt            # as if Ctrl-C arrived right after the first incumbent

    with pytest.raises(KeyboardInterrupt) as info:
        solve_khop(t, 3, time_limit=60, progress=progress)
    r = info.value.partial
    _check_result(t, 3, r)
    assert r.status in ("feasible", "optimal") and r.interrupted


def test_interrupt_in_the_jump_search_keeps_its_best_tree():
    """Ctrl-C while the jump search runs: its best tree so far is the partial result, not nothing."""
    t = parse_torus("10x10")

    def progress(msg):
        if msg.startswith("jump search: W ="):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as info:
        solve_khop(t, 3, time_limit=60, progress=progress)
    r = info.value.partial
    _check_result(t, 3, r)
    assert r.interrupted and r.weight < t.n_vertices * 3


def _interrupt_in_scip(shape, k):
    """Solve with ``solver="scip"`` and raise Ctrl-C at SCIP's first progress report; ``(torus, result, messages
    from that report on)``."""
    t = parse_torus(shape)
    seen = []

    def progress(msg):
        seen.append(msg)
        if msg.startswith("scip:"):
            raise KeyboardInterrupt            # as if Ctrl-C arrived during SCIP's search

    with pytest.raises(KeyboardInterrupt) as info:
        solve_khop(t, k, time_limit=300, solver="scip", progress=progress)
    r = info.value.partial
    _check_result(t, k, r)
    first = next(i for i, m in enumerate(seen) if m.startswith("scip:"))
    return t, r, seen, seen[first:]


def _assert_interrupt_honoured(r, seen, after):
    """Nothing ran after SCIP stopped: only what SCIP itself found is offered, then the solve returns."""
    assert r.interrupted
    for m in after[1:]:
        assert m.startswith("bound ") and "scip" in m or m.startswith("incumbent") and m.endswith("(scip)"), m
    announced = [int(m.split()[3]) for m in seen if m.startswith("incumbent W = ")]
    assert r.weight == min(announced)                  # the best tree found so far is the one returned
    assert r.lower_bound <= r.weight and (r.status == "optimal") == (r.lower_bound == r.weight)


def test_interrupt_inside_branch_and_cut_returns_the_best_tree_fast():
    """7x7, k = 3: the LP leaves a gap, so SCIP runs (its root bound may then close it: the status says so)."""
    _t, r, seen, after = _interrupt_in_scip("7x7", 3)
    _assert_interrupt_honoured(r, seen, after)


@pytest.mark.slow
def test_interrupt_inside_branch_and_cut_returns_the_best_tree():
    """10x10, k = 3: SCIP's root does not close the gap, so the interrupted solve ends feasible."""
    _t, r, seen, after = _interrupt_in_scip("10x10", 3)
    _assert_interrupt_honoured(r, seen, after)
    assert r.status == "feasible" and r.lower_bound < r.weight


def test_bad_arguments():
    t = parse_torus("4x4")
    with pytest.raises(ValueError, match="solver"):
        solve_khop(t, 2, solver="gurobi")
    with pytest.raises(ValueError, match="depth"):
        solve_khop(t, 0)


def test_without_the_lp_the_bound_is_the_cone_count():
    """32x32 with 4 s: the LP is skipped, and the bound is the cone count, not p - 1 (synth check re-derives it)."""
    from synth.check.bounds import CONE_KIND, cone_count_bound, khop_dual_bound

    t = parse_torus("32x32")
    r = solve_khop(t, 6, time_limit=4)
    _check_result(t, 6, r)
    cone = cone_count_bound(t, 6).bound
    assert r.lower_bound == cone > t.n_vertices - 1
    assert r.dual == {"kind": CONE_KIND, "k": 6, "bound": cone}
    assert khop_dual_bound(t, 6, r.dual).bound == cone


def test_without_pyscipopt_auto_falls_back_and_scip_is_a_clear_error(monkeypatch):
    import sys

    from synth.errors import SynthError
    from synth.models.khop.pipeline import mip_engines

    monkeypatch.setitem(sys.modules, "pyscipopt", None)        # import pyscipopt now raises ImportError
    assert mip_engines("auto", 100) == [("cpsat", None)]
    with pytest.raises(SynthError, match="pyscipopt"):
        solve_khop(parse_torus("5x5"), 2, solver="scip")
    r = solve_khop(parse_torus("8x8"), 3, time_limit=60)
    assert (r.status, r.weight) == ("optimal", 77)


def _fixed_optimum(t, k, v, h, value, group):
    """Exact W* over the reduced trees with ``v`` at depth ``h`` (value 1) or no vertex of its orbit there (0)."""
    D = distance_matrix(t)
    model, z, y = build_hop_model(ModelData(D, k, *hop_arcs(t, k, dist=D)))
    members = [int(v)] if value == 1 else np.unique(group[:, v]).tolist()
    cols = [y[u, h][0] for u in members if (u, h) in y]
    if value == 1 and not cols:
        return None                                  # no reduced tree puts v at depth h
    if cols:
        model.add_row(cols, [1.0] * len(cols), float(value), float(value))
    res = model.solve_highs(time_limit=30)
    return None if res.objective is None or not np.isfinite(res.objective) else round(res.objective)


@pytest.mark.parametrize("shape,k", [("3x3", 2), ("3x4", 2), ("4x4", 2), ("4x4", 3), ("7", 3)])
def test_depth_fixings_bound_exactly_the_trees_they_keep(shape, k):
    """Each side of a split on a depth: root LP <= its LP bound <= the best tree it keeps (exact MIP)."""
    t = parse_torus(shape)
    D = distance_matrix(t)
    G = root_stabilizer(t)
    root = LayeredLP(D, k, G).solve().bound
    raised = 0
    for v in np.unique(G.min(axis=0)[1:]):              # one vertex per orbit
        stab = G[G[:, v] == v]
        for h in range(1, k + 1):
            for value, group in ((1, stab), (0, G)):
                lp = LayeredLP(D, k, group)
                lp.fix_depth(v, h, value)
                res = lp.solve()
                best = _fixed_optimum(t, k, v, h, value, G)
                if best is None:
                    continue
                assert res.converged and root - 1e-6 <= res.bound <= best + 1e-6, (v, h, value)
                if value == 1 and h == 1:                # the arc 0 -> v is paid in full, every other vertex >= 1
                    assert res.bound >= t.n_vertices - 2 + D[0, v] - 1e-6
                raised += res.bound > root + 1e-3
    assert raised > 0


def test_fix_depth_rejects_what_it_cannot_fix():
    t = parse_torus("5x5")
    lp = LayeredLP(distance_matrix(t), 2, root_stabilizer(t))
    with pytest.raises(ValueError, match="orbit"):
        lp.fix_depth(1, 1, 1)                            # (0, 1) shares its orbit with (1, 0), (0, 4), (4, 0)
    for args, word in [((0, 1, 1), "non-root"), ((1, 3, 0), "depth"), ((1, 1, 2), "value")]:
        with pytest.raises(ValueError, match=word):
            lp.fix_depth(*args)
