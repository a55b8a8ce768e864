"""LinearModel and its three back-ends (HiGHS, CP-SAT, SCIP) against brute force on tiny models.

Every engine must return the enumerated optimum with a proof (status optimal, bound equal to the
objective), call an empty feasible set infeasible, and, stopped by a time limit or by ``stop_below``,
report "feasible" with an incumbent and a bound that lies at or below the true optimum, never
"optimal".  Knocking out a constraint family changes the enumerated answer and the solvers follow.
"""

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from synth.models.backends.linear import LinearModel
from synth.models.backends.result import Status

ENGINES = ("highs", "cpsat", "scip")
TOL = 1e-6


def solve(model, engine, **kw):
    return getattr(model, f"solve_{engine}")(**kw)


def brute_force(model):
    """``(optimum, argmins)`` over every integral point of the columns' boxes; ``(inf, [])`` if none."""
    A, lo, hi = model.matrix()
    A = A.toarray()
    grid = [range(int(a), int(b) + 1) for a, b in zip(model.lo, model.hi)]
    best, arg = np.inf, []
    for x in itertools.product(*grid):
        x = np.asarray(x, dtype=np.float64)
        ax = A @ x
        if np.all(ax >= lo - TOL) and np.all(ax <= hi + TOL):
            v = float(model.cost @ x)
            if v < best - TOL:
                best, arg = v, [x]
            elif abs(v - best) <= TOL:
                arg.append(x)
    return best, arg


def random_mip(seed, n=4, rows=3):
    """Integer columns in [0, 2], integer costs of either sign, ``rows`` random <= / >= rows."""
    rng = np.random.default_rng(seed)
    m = LinearModel(name=f"mip{seed}")
    x = m.add_vars(n, 0, 2, True, cost=rng.integers(-5, 6, n).astype(float))
    r = np.repeat(np.arange(rows), n)
    c = np.tile(x, rows)
    v = rng.integers(-3, 4, rows * n)
    lo = np.where(rng.random(rows) < 0.5, rng.integers(-2, 3, rows), -np.inf)
    hi = np.where(np.isfinite(lo), np.inf, rng.integers(0, 6, rows))
    m.add_rows(r, c, v, rows, lo, hi, "random")
    return m


@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_finds_the_enumerated_optimum_of_tiny_mips(engine):
    feasible = infeasible = 0
    for seed in range(25):
        m = random_mip(seed)
        best, args = brute_force(m)
        sol = solve(m, engine, time_limit=20)
        if not np.isfinite(best):
            infeasible += 1
            assert sol.status == Status.INFEASIBLE and sol.objective is None and sol.bound == np.inf, seed
            continue
        feasible += 1
        assert sol.status == Status.OPTIMAL, (seed, sol.status)
        assert sol.objective == pytest.approx(best, abs=TOL) and sol.bound == pytest.approx(best, abs=1e-4)
        x = np.round(sol.values)
        assert m.is_feasible(sol.values, tol=1e-6) and float(m.cost @ x) == pytest.approx(best, abs=TOL)
        assert any(np.array_equal(x, a) for a in args)
        assert not sol.interrupted
    assert feasible >= 5 and infeasible >= 1  # the seeds exercise both answers


@pytest.mark.parametrize("engine", ENGINES)
def test_an_empty_feasible_set_is_infeasible(engine):
    m = LinearModel(name="empty")
    x = m.add_vars(3, 0, 1, True, cost=1.0)
    m.add_row(x, [1, 1, 1], 2.0, np.inf, "at_least_two")
    m.add_row(x, [1, 1, 1], -np.inf, 1.0, "at_most_one")
    assert brute_force(m)[0] == np.inf
    sol = solve(m, engine, time_limit=20)
    assert sol.status == Status.INFEASIBLE and sol.values is None and sol.bound == np.inf


def test_cpsat_enumerates_exactly_the_feasible_points():
    for seed in range(8):
        m = random_mip(seed, n=3, rows=2)
        A, lo, hi = m.matrix()
        grid = itertools.product(*[range(3)] * 3)
        want = {x for x in grid if np.all(A @ np.asarray(x) >= lo - TOL) and np.all(A @ np.asarray(x) <= hi + TOL)}
        got = {tuple(int(v) for v in x) for x in m.solve_cpsat(enumerate_all=True)}
        assert got == want, seed


def test_the_lp_relaxation_matches_an_independent_lp_solver():
    for seed in range(10):
        m = random_mip(seed)
        A, lo, hi = m.matrix()
        A = A.toarray()
        up, bu = [], []
        for r in range(A.shape[0]):  # linprog takes A_ub x <= b_ub only
            if np.isfinite(hi[r]):
                up.append(A[r])
                bu.append(hi[r])
            if np.isfinite(lo[r]):
                up.append(-A[r])
                bu.append(-lo[r])
        ref = linprog(m.cost, A_ub=np.array(up), b_ub=np.array(bu), bounds=list(zip(m.lo, m.hi)), method="highs-ds")
        sol = m.solve_highs(time_limit=20, relax=True)
        if ref.status == 2:
            assert sol.status == Status.INFEASIBLE
            continue
        assert sol.status == Status.OPTIMAL and sol.objective == pytest.approx(ref.fun, abs=1e-7)
        best = brute_force(m)[0]
        assert sol.objective <= best + TOL  # the relaxation bounds the integer optimum


def _cover_model():
    """Pick items at least cost; family "cover": every element covered; family "budget": at most 3 items."""
    sets = [[0, 1], [1, 2], [2, 3], [3, 0], [0, 2], [1, 3]]
    cost = [3.0, 2.0, 4.0, 2.0, 5.0, 5.0]
    m = LinearModel(name="cover")
    x = m.add_vars(len(sets), 0, 1, True, cost=cost)
    rows = [e for s in sets for e in s]
    cols = [x[i] for i, s in enumerate(sets) for _ in s]
    m.add_rows(rows, cols, np.ones(len(rows)), 4, 1.0, np.inf, "cover")
    return m


@pytest.mark.parametrize("engine", ENGINES)
def test_a_knocked_out_constraint_family_changes_the_answer(engine):
    m = _cover_model()
    assert m.family_rows("cover") == 4
    with_cover, _ = brute_force(m)
    sol = solve(m, engine, time_limit=20)
    assert sol.status == Status.OPTIMAL and sol.objective == pytest.approx(with_cover) and with_cover == 4.0
    m.rows.pop()  # the family goes
    assert m.n_rows == 0 and m.family_rows("cover") == 0
    without, _ = brute_force(m)
    sol = solve(m, engine, time_limit=20)
    assert without == 0.0 != with_cover
    assert sol.status == Status.OPTIMAL and sol.objective == pytest.approx(without)


def market_split(seed, m_rows=4, n=30):
    """Cornuejols-Dawande market split, with slacks: minimize the total deviation.  Hard for every
    branch-and-bound (its LP bound is 0 and, at this size, it almost never has a solution of 0)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 100, (m_rows, n))
    d = a.sum(axis=1) // 2
    m = LinearModel(name=f"split{seed}")
    x = m.add_vars(n, 0, 1, True)
    sp = m.add_vars(m_rows, 0, float(a.sum()), True, cost=1.0)
    sm = m.add_vars(m_rows, 0, float(a.sum()), True, cost=1.0)
    r = np.concatenate([np.repeat(np.arange(m_rows), n), np.arange(m_rows), np.arange(m_rows)])
    c = np.concatenate([np.tile(x, m_rows), sp, sm])
    v = np.concatenate([a.ravel(), np.ones(m_rows), -np.ones(m_rows)])
    m.add_rows(r, c, v, m_rows, d, d, "split")
    start = np.concatenate([np.zeros(n), d, np.zeros(m_rows)])  # nothing picked: the slack takes d
    return m, start


@pytest.mark.parametrize("engine", ENGINES)
def test_a_time_limit_gives_feasible_with_an_honest_gap_never_optimal(engine):
    m, start = market_split(3)
    assert m.is_feasible(start)
    sol = solve(m, engine, time_limit=0.3, start=start)
    assert sol.status != Status.OPTIMAL, "a 0.3 s solve of a market split proved nothing"
    assert sol.status == Status.FEASIBLE and sol.objective is not None
    assert m.is_feasible(sol.values, tol=1e-6)
    assert float(m.cost @ np.round(sol.values)) == pytest.approx(sol.objective)
    assert sol.objective <= float(m.cost @ start) + TOL  # no worse than the start it was given
    assert sol.bound <= sol.objective and sol.objective - sol.bound > 0.5  # an open gap, stated
    assert sol.bound >= 0 - TOL or sol.bound == -np.inf  # the slacks are non-negative: a bound below 0 is no lie
    assert sol.seconds < 10 and not sol.interrupted


@pytest.mark.parametrize("engine", ENGINES)
def test_stop_below_ends_at_an_incumbent_reported_as_feasible(engine):
    m, start = market_split(5)
    sol = solve(m, engine, time_limit=20, start=start, stop_below=1e9)  # the first incumbent will do
    assert sol.status == Status.FEASIBLE and sol.objective is not None and sol.bound < sol.objective
    assert not sol.interrupted


def test_scip_keeps_the_optimum_with_valid_cuts_at_every_node():
    m = _cover_model()
    calls = []

    def separate(x):  # element 0 is covered: sets 0, 3, 4 (valid for every integral solution)
        calls.append(x.copy())
        return [([0, 3, 4], [1.0, 1.0, 1.0], 1.0)]

    sol = m.solve_scip(time_limit=20, separate=separate)
    assert sol.status == Status.OPTIMAL and sol.objective == pytest.approx(brute_force(m)[0])


def test_cpsat_refuses_fractional_coefficients():
    m = LinearModel()
    x = m.add_vars(2, 0, 1, True)
    m.add_row(x, [0.5, 1.0], 0.0, 1.0, "half")
    with pytest.raises(ValueError, match="non-integer coefficients"):
        m.solve_cpsat(time_limit=5)
    assert m.solve_highs(time_limit=5).status == Status.OPTIMAL


def test_a_highs_solve_leaves_no_cycle_for_the_collector():
    # highspy's interrupt handler is a bound method of the solver kept in the solver's own callbacks: a cycle that
    # held HiGHS's model and factors (3 GB on 16x16x16's local LP) until the collector ran
    import gc

    m = _cover_model()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        assert m.solve_highs(time_limit=10).status == Status.OPTIMAL
        gc.collect()
        assert not [o for o in gc.garbage if type(o).__name__ == "Highs"]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
