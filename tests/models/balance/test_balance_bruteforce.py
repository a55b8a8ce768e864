"""The balance model against brute force: every BFS parent choice on tiny tori.

The brute force knows nothing of the model's level types: it enumerates every
BFS tree (forest) by its parent array, counts each round's incidences per link
orbit straight from the links, and forms every multiset of ``W`` units.  The
model must reach exactly the same set of balanced per-round orbit loads.
"""

import numpy as np
import pytest
from ortools.sat.python import cp_model

from synth.check import execute, measure_symmetric
from synth.symmetry.torus import torus_translations, torus_translations_negation
from synth.models.balance import balance_bfs_trees
from synth.models.balance.build import build_base, components_from_values
from synth.models.balance.data import balance_data, forest_options, tree_options
from synth.models.balance.model import (BalanceVars, add_balance, add_candidates, add_max_loads, add_options,
                                        add_round_loads, add_total)
from synth.schedule import tree_schedule
from synth.topology.torus import parse_torus


def all_units(t, group, roots):
    """Every BFS tree (one root) or forest plus exchange (two roots) as a rounds x orbits load matrix."""
    V, m = t.n_vertices, group.n_link_orbits
    dist = t.dist(np.arange(V)[:, None], np.asarray(roots)[None, :]).min(axis=1)
    h = int(dist.max())
    forest = len(roots) == 2
    S = 2 * h + (1 if forest else 0)
    choices = []
    for v in range(V):
        if dist[v] == 0:
            continue
        nbrs = [int(u) for u in t.link_dst[t.link_src == v]]
        choices.append([(v, u) for u in sorted(set(nbrs)) if dist[u] == dist[v] - 1])
    exchange = np.zeros((S, m), dtype=np.int64)
    if forest:
        a, b = roots
        for u, w in ((a, b), (b, a)):
            exchange[h, group.link_orbit[t.link_ids([u], [w])[0]]] += 1
    contrib = []  # per vertex: one S x m matrix per parent choice
    for options in choices:
        mats = []
        for v, u in options:
            mat = np.zeros((S, m), dtype=np.int64)
            lv = int(dist[v])
            mat[h - lv, group.link_orbit[t.link_ids([v], [u])[0]]] += 1  # reduce in round h - l + 1
            mat[h + lv - 1 + (1 if forest else 0), group.link_orbit[t.link_ids([u], [v])[0]]] += 1  # copy
            mats.append(mat)
        contrib.append(np.stack(mats))
    # every parent choice: the cartesian product of the vertices' options, summed
    pick = np.indices([c.shape[0] for c in contrib]).reshape(len(contrib), -1)
    loads = exchange + sum(c[pick[i]] for i, c in enumerate(contrib))
    return list(loads)


def _sums(distinct, W):
    sums = distinct[:1, :] * 0
    for _ in range(W):
        sums = np.unique((sums[:, None, :] + distinct[None, :, :]).reshape(-1, distinct.shape[1]), axis=0)
    return sums


def brute_balanced(units, W):
    """Balanced load matrices reachable as sums of W units (a set of byte strings).

    Meet in the middle: a sum ``a + b`` of ``W1`` and ``W - W1`` units is balanced iff the
    within-round differences of ``b`` are minus those of ``a``.
    """
    S, m = units[0].shape
    distinct = np.unique(np.asarray(units).reshape(len(units), -1), axis=0)
    left, right = _sums(distinct, (W + 1) // 2), _sums(distinct, W // 2)

    def diff(rows):
        r = rows.reshape(-1, S, m)
        return (r[:, :, 1:] - r[:, :, :1]).reshape(rows.shape[0], -1)

    buckets = {}
    for row, d in zip(right, diff(right)):
        buckets.setdefault(d.tobytes(), []).append(row)
    out = set()
    for row, d in zip(left, diff(left)):
        for other in buckets.get((-d).tobytes(), ()):
            out.add((row + other).astype(np.int64).tobytes())
    return out


class _Collect(cp_model.CpSolverSolutionCallback):
    def __init__(self, v, data):
        super().__init__()
        self.v, self.data, self.loads, self.solutions = v, data, set(), []

    def on_solution_callback(self):
        load = np.zeros((self.data.n_rounds, self.data.n_orbits), dtype=np.int64)
        for (s, o), var in self.v.load.items():
            load[s - 1, o] = self.value(var)
        self.loads.add(load.tobytes())
        if len(self.solutions) < 20:
            self.solutions.append({name: {k: self.value(x) for k, x in getattr(self.v, name).items()}
                                   for name in ("w", "y", "k")})


def model_balanced(t, group, options, W):
    data = balance_data(t, group, options, max_weight=W)
    model, v = cp_model.CpModel(), BalanceVars()
    add_options(model, v, data)
    add_candidates(model, v, data)
    add_round_loads(model, v, data)
    add_balance(model, v, data)
    add_total(model, v, data, W, W)
    solver = cp_model.CpSolver()
    solver.parameters.enumerate_all_solutions = True
    solver.parameters.num_workers = 1
    cb = _Collect(v, data)
    status = solver.solve(model, cb)
    assert status in (cp_model.OPTIMAL, cp_model.INFEASIBLE)
    return cb.loads, cb.solutions, data


CASES = [
    ("3x4", torus_translations_negation, [(0,)], (1, 2, 3)),
    ("3x4", torus_translations, [(0,)], (1, 2, 4)),
    ("3x5", torus_translations_negation, [(0,)], (1, 2)),
    ("4x4", torus_translations, [(0, 4), (0, 1)], (1, 2)),
    ("4x4", torus_translations_negation, [(0, 4), (0, 1)], (1, 2)),
]


@pytest.mark.parametrize("shape, builder, root_sets, weights", CASES)
def test_model_reaches_exactly_the_balanced_loads(shape, builder, root_sets, weights):
    t = parse_torus(shape)
    g = builder(t)
    units = [u for roots in root_sets for u in all_units(t, g, roots)]
    if len(root_sets[0]) == 1:
        options = tree_options(t, g, [r[0] for r in root_sets])
    else:
        options = forest_options(t, g, root_sets)
    for W in weights:
        brute = brute_balanced(units, W)
        loads, solutions, data = model_balanced(t, g, options, W)
        assert loads == brute, (shape, g.name, W)
        for values in solutions:  # every solution the model gives builds a correct, balanced schedule
            base = build_base(t, data, components_from_values(data, values))
            assert execute(base.as_schedule()) == []
            assert measure_symmetric(base, g, np.repeat(base.weights, g.order)).omega == 1


def test_three_by_four_needs_two_trees():
    t = parse_torus("3x4")
    g = torus_translations_negation(t)
    units = all_units(t, g, (0,))
    assert len(units) == 288
    assert not brute_balanced(units, 1) and brute_balanced(units, 2)
    r = balance_bfs_trees(t, g)
    assert (r.status, sum(r.weights), r.chunks) == ("optimal", 2, 2 * g.order)


def test_fallback_finds_the_smallest_omega_of_one_tree():
    t = parse_torus("3x4")
    g = torus_translations_negation(t)
    units = all_units(t, g, (0,))
    m = g.n_link_orbits
    best = min(m * u.max(axis=1).sum() / u.sum() for u in units)
    r = balance_bfs_trees(t, g, max_weight=1)
    assert r.status == "infeasible" and r.omega > 1
    assert float(r.omega) == pytest.approx(best)
    # the model's objective: the sum of round maxima, minimal over all 288 trees
    data = balance_data(t, g, tree_options(t, g), max_weight=1)
    model, v = cp_model.CpModel(), BalanceVars()
    add_options(model, v, data)
    add_round_loads(model, v, data)
    add_total(model, v, data, 1, 1)
    add_max_loads(model, v, data)
    model.minimize(sum(v.z.values()))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.solve(model) == cp_model.OPTIMAL
    assert solver.objective_value == min(u.max(axis=1).sum() for u in units)


def test_brute_force_units_are_trees():
    """The enumeration's parent choices are real BFS trees (spot check against tree_schedule)."""
    t = parse_torus("3x4")
    dist = t.dist(np.arange(t.n_vertices), 0)
    parent = np.full(t.n_vertices, -1)
    for v in range(1, t.n_vertices):
        nb = [int(u) for u in t.link_dst[t.link_src == v] if dist[u] == dist[v] - 1]
        parent[v] = nb[-1]
    b = tree_schedule(t, parent, 0)
    assert b.n_rounds == 2 * t.diameter and execute(b.as_schedule()) == []


def test_four_by_five_trees_bruteforce():
    t = parse_torus("4x5")
    g = torus_translations_negation(t)
    units = all_units(t, g, (0,))
    assert len(units) == 41472
    for W in (1, 2):
        loads, _, _ = model_balanced(t, g, tree_options(t, g), W)
        assert loads == brute_balanced(units, W)


@pytest.mark.slow
@pytest.mark.parametrize("builder", [torus_translations_negation, torus_translations])
def test_four_by_six_forests_bruteforce(builder):
    t = parse_torus("4x6")
    g = builder(t)
    pairs = [(0, 6), (0, 1)]
    units = [u for p in pairs for u in all_units(t, g, p)]
    for W in (1, 2):
        loads, _, _ = model_balanced(t, g, forest_options(t, g, pairs), W)
        assert loads == brute_balanced(units, W)
