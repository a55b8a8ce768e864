"""Balanced families (models/balance/): rectangular tori, subgroups, fallbacks, the candidate hook."""

import doctest
import itertools

import numpy as np
import pytest

from synth.check.claims import certify
from synth.check import execute, measure_symmetric
from synth.errors import ScheduleError
from synth.symmetry.group import Group
from synth.symmetry.torus import torus_gamma, torus_translations, torus_translations_negation
from synth.models.balance import build as balance_build
from synth.models.balance import data as balance_data
from synth.models.balance import model as balance_model
from synth.models.balance import pipeline as balance_mod
from synth.models.balance import (FAMILIES, balance, balance_bfs_trees, balance_candidates,
                                  balance_exchange_forests)
from synth.models.balance.build import split_units
from synth.models.balance.data import exchange_pairs, tree_options
from synth.schedule import tree_schedule
from synth.schedule.sp import sp_allreduce
from synth.topology import Topology
from synth.topology.torus import parse_torus

SMALL = list(itertools.product(range(3, 11), repeat=2))


def _certified(result, group):
    claims = certify(result.base, group).claims
    assert claims["omega"] == str(result.omega)
    return claims


@pytest.mark.parametrize("m, n", SMALL)
def test_rectangular_two_tree_family(m, n):
    """Theorem 6.1 on every m x n, 3 <= m, n <= 10: Omega = Psi = Theta = 1 in 2H rounds, <= 4mn chunks."""
    t = parse_torus(f"{m}x{n}")
    g = torus_translations_negation(t)
    r = balance_bfs_trees(t, g)
    assert r.status == "optimal" and r.balanced and r.rounds == 2 * t.diameter
    # one tree suffices when both sides are odd (every level has an even size); else two
    assert r.weights == ((1,) if m % 2 and n % 2 else (1, 1))
    assert r.chunks == len(r.weights) * 2 * m * n <= 4 * m * n
    assert all(root == (0,) for root in r.roots)
    ms = measure_symmetric(r.base, g, np.repeat(r.base.weights, g.order))
    assert (ms.omega, ms.psi, ms.theta, ms.rounds, ms.max_route) == (1, 1, 1, 2 * t.diameter, 1)
    claims = _certified(r, g)  # executes the lift (explicitly at these sizes)
    assert (claims["psi"], claims["theta"], claims["omega"], claims["rounds"]) == ("1", "1", "1", 2 * t.diameter)


@pytest.mark.parametrize("shape, rounds", [("64x16", 80), ("128x8", 136), ("256x4", 260)])
def test_paper_rectangular_tori(shape, rounds):
    t = parse_torus(shape)
    g = torus_translations_negation(t)
    r = balance_bfs_trees(t, g, time_limit=60)
    assert (r.status, r.rounds, r.chunks, r.omega) == ("optimal", rounds, 4 * t.n_vertices, 1)
    assert r.seconds < 60
    assert r.metrics.psi == 1 and r.metrics.theta == 1
    assert execute(r.base.as_schedule()) == []


@pytest.mark.parametrize("shape", ["4x4x8", "4x8x6"])
def test_three_dimensional_trees_and_exchange(shape):
    t = parse_torus(shape)
    g = torus_translations_negation(t)
    trees = balance_bfs_trees(t, g)
    assert trees.status == "optimal" and trees.balanced and trees.rounds == 2 * t.diameter
    ex = balance_exchange_forests(t, g)
    assert ex.status == "optimal" and ex.balanced and ex.rounds == 2 * t.diameter - 1
    assert len(ex.roots) == 3  # one exchange per dimension balances the exchange round
    claims = _certified(ex, g)
    assert claims["round_optimal"] and claims["rounds"] == claims["round_lower_bound"]


@pytest.mark.parametrize("shape, builder, chunks", [
    ("8x8", torus_gamma, 256),
    ("8x8", torus_translations_negation, 256),
    ("8x8", torus_translations, 128),
    ("4x6", torus_translations, 48),
])
def test_exchange_under_subgroups(shape, builder, chunks):
    t = parse_torus(shape)
    g = builder(t)
    r = balance_exchange_forests(t, g)
    assert (r.status, r.rounds, r.chunks, r.omega) == ("optimal", 2 * t.diameter - 1, chunks, 1)
    assert r.chunks >= r.chunk_bound == t.n_links // 2
    claims = _certified(r, g)
    assert claims["round_optimal"]


def test_exchange_impossible_reports_honest_omega():
    """4x5: only the even side saves a level, so every exchange is horizontal: never balanced."""
    t = parse_torus("4x5")
    g = torus_translations_negation(t)
    assert exchange_pairs(t, g) == ((0, 5),)
    r = balance_exchange_forests(t, g, max_weight=3)
    assert r.status == "infeasible" and not r.balanced and r.omega > 1
    assert r.rounds == 2 * t.diameter - 1
    assert any("no balanced" in note for note in r.notes)
    claims = _certified(r, g)  # the fallback is a correct allreduce, its Omega measured by the checker
    assert claims["omega"] == str(r.omega)


def test_weight_limit_gives_honest_fallback():
    t = parse_torus("4x5")
    g = torus_translations_negation(t)
    r = balance_bfs_trees(t, g, max_weight=1)
    assert r.status == "infeasible" and r.omega > 1 and r.weights == (1,)
    assert balance_bfs_trees(t, g, max_weight=2).omega == 1


@pytest.mark.parametrize("shape, units", [("3x3", 1), ("5x5", 1), ("3x5", 2), ("9x9", 1)])
def test_translations_only_odd_torus(shape, units):
    """With translations only (4 orbits) a level balances alone iff its size is a multiple of 4."""
    t = parse_torus(shape)
    g = torus_translations(t)
    r = balance_bfs_trees(t, g)
    assert r.status == "optimal" and r.balanced and sum(r.weights) == units
    assert r.chunk_bound == t.n_links // 4  # four vertices at distance H
    if units == 1:  # n^2 chunks: a quarter of Gamma's 4n^2, and no Omega = 1 tree family has fewer
        assert r.chunks == r.chunk_bound == t.n_vertices
        _certified(r, g)


def test_generic_topology_gives_the_same_family():
    """Nothing torus-specific: the torus as a plain link list with the same generators."""
    t = parse_torus("4x6")
    g = torus_translations(t)
    plain = Topology.from_links("plain 4x6", {"kind": "links"}, t.n_vertices,
                                list(zip(t.link_src.tolist(), t.link_dst.tolist())))
    g2 = Group.from_generators(plain, g.generators, "translations", {"kind": "generators"})
    for fam in (balance_bfs_trees, balance_exchange_forests):
        a, b = fam(t, g), fam(plain, g2)
        assert (a.status, a.chunks, a.rounds, a.omega) == (b.status, b.chunks, b.rounds, b.omega)
        assert b.balanced
        _certified(b, g2)


def test_deterministic_for_a_seed():
    t = parse_torus("6x5")
    g = torus_translations(t)
    a, b = balance_bfs_trees(t, g, seed=3), balance_bfs_trees(t, g, seed=3)
    assert a.weights == b.weights and a.roots == b.roots
    for name in ("component", "round", "src", "dst", "op", "route_links"):
        assert np.array_equal(getattr(a.base, name), getattr(b.base, name))


def test_level_sizes_match_the_closed_form():
    for shape in ("3x4", "6x7", "4x4x5"):
        t = parse_torus(shape)
        opt = tree_options(t, torus_translations_negation(t))[0]
        assert opt.depth == t.diameter
        assert np.array_equal(opt.level_sizes(), t.distance_distribution()[1:])


def test_tree_components_equal_tree_schedule():
    """A built tree component has exactly tree_schedule's rows for its parent array."""
    t = parse_torus("5x6")
    g = torus_translations_negation(t)
    r = balance_bfs_trees(t, g)
    base = r.base
    for c in range(base.n_components):
        sel = base.component == c
        up = sel & (base.op == 0)
        parent = np.full(t.n_vertices, -1)
        parent[base.src[up]] = base.dst[up]
        ref = tree_schedule(t, parent, 0)
        got = sorted(zip(base.round[sel], base.src[sel], base.dst[sel], base.op[sel]))
        want = sorted(zip(ref.round, ref.src, ref.dst, ref.op))
        assert got == want


def _transposed_sp(t):
    """The BFS tree that walks dimension 1 first (the mirror image of SP-allreduce's tree)."""
    c = t.coords(np.arange(t.n_vertices))
    parent = np.full(t.n_vertices, -1)
    for v in range(1, t.n_vertices):
        x, y = c[v]
        if y:
            step = (x, y - 1) if 2 * y <= t.shape[1] else (x, y + 1)
        else:
            step = (x - 1, y) if 2 * x <= t.shape[0] else (x + 1, y)
        parent[v] = t.vertex(step)
    return tree_schedule(t, parent, 0, route=lambda u, w: t.link_ids([u], [w]))


def test_candidate_hook_weights_fixed_trees():
    t = parse_torus("3x3")
    g = torus_translations_negation(t)
    alone = balance_candidates(t, g, [sp_allreduce(t)])
    assert alone.status == "infeasible" and alone.omega > 1
    both = balance_candidates(t, g, [sp_allreduce(t), _transposed_sp(t)])
    assert both.status == "optimal" and both.weights == (1, 1) and both.omega == 1
    _certified(both, g)
    # candidates mix with a family when the rounds agree
    mixed = balance_bfs_trees(t, g, candidates=[sp_allreduce(t)])
    assert mixed.balanced and mixed.chunks == g.order


def test_dispatch_and_errors():
    t = parse_torus("3x4")
    g = torus_translations_negation(t)
    assert set(FAMILIES) == {"trees", "exchange", "candidates"}
    assert balance(t, g, "trees").chunks == 48
    assert balance(t, g, "candidates", candidates=[sp_allreduce(t)]).family == "candidates"
    with pytest.raises(ScheduleError):
        balance(t, g, "nope")
    with pytest.raises(ScheduleError):
        balance_candidates(t, g, [])
    with pytest.raises(ScheduleError):  # 2H rounds of a tree vs 2H - 1 of an even exchange
        balance_exchange_forests(parse_torus("4x4"), torus_translations(parse_torus("4x4")),
                                 candidates=[sp_allreduce(parse_torus("4x4"))])


@pytest.mark.parametrize("units, size", [(1, 5), (3, 4), (4, 2), (7, 3)])
def test_split_units(units, size):
    rng = np.random.default_rng(units * 10 + size)
    for _ in range(20):
        cut = np.sort(rng.integers(0, units * size + 1, size=2))
        counts = {0: int(cut[0]), 1: int(cut[1] - cut[0]), 2: int(units * size - cut[1])}
        parts = split_units(counts, units, size)
        assert len(parts) == units and all(sum(p.values()) == size for p in parts)
        for o, c in counts.items():
            got = [p.get(o, 0) for p in parts]
            assert sum(got) == c and max(got) - min(got) <= 1


@pytest.mark.parametrize("module", [balance_mod, balance_data, balance_model, balance_build])
def test_docstring_examples(module):
    """The models/ package is outside pytest's testpaths, so its doctests run here."""
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.slow
@pytest.mark.parametrize("m, n", [(m, n) for m, n in itertools.product(range(3, 25), repeat=2)
                                  if max(m, n) > 10])
def test_rectangular_two_tree_family_large(m, n):
    t = parse_torus(f"{m}x{n}")
    g = torus_translations_negation(t)
    r = balance_bfs_trees(t, g)
    assert r.status == "optimal" and r.balanced and r.rounds == 2 * t.diameter
    assert r.metrics.psi == 1 and r.metrics.theta == 1
    assert execute(r.base.as_schedule()) == []


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["8x8x16", "4x8x16", "64x16", "128x8", "256x4"])
def test_exchange_large(shape):
    t = parse_torus(shape)
    for g in (torus_translations_negation(t), torus_translations(t)):
        r = balance_exchange_forests(t, g)
        assert r.status == "optimal" and r.balanced and r.rounds == 2 * t.diameter - 1
        claims = certify(r.base, g, mode="symmetric").claims
        assert claims["round_optimal"]
