"""The layered LP against brute force on tiny graphs, its rounding, and its place under the certified bound."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from synth.check.bounds.bandwidth import bandwidth_bound, best_cut
from synth.check.claims import check_certificate
from synth.models.packing import (build_layered, layered_arcs, pack, reference_fractions, round_schedule,
                                  solve_layered, solve_local)
from synth.schedule.sp import sp_allreduce
from synth.symmetry.torus import torus_gamma
from synth.symmetry.spec import default_group
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus
from synth.topology.user import topology_from_json


def recomputed_term(data, y):
    """Σ_s max_e load, lifted by the group, arc by arc in plain Python (no arrays shared with the model)."""
    E, H = data.topology.n_links, data.H
    perms = [list(range(E))] if data.group is None else data.group.link_images(np.arange(E)).tolist()
    load = [[0.0] * E for _ in range(2 * H)]
    for a in range(data.n_arcs):
        for img in perms:
            load[H - int(data.depth[a])][img[int(data.up[a])]] += y[a]
            load[H + int(data.depth[a]) - 1][img[int(data.down[a])]] += y[a]
    return sum(max(row) for row in load)


def small_graphs():
    t = parse_torus("4x4")
    yield damage(t, parse_failures(t, links=["0-1"]))
    yield damage(t, parse_failures(t, nodes=["5"]))
    yield topology_from_json({"vertices": 6, "links": [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 0], [0, 3]]})


@pytest.mark.parametrize("t", list(small_graphs()), ids=lambda t: t.name)
def test_the_lp_value_is_the_recomputed_bandwidth_term_and_at_least_the_certified_bound(t):
    g = default_group(t)
    data = layered_arcs(t, g)
    sol = solve_layered(data)
    assert sol.status == "optimal"
    assert recomputed_term(data, sol.y) == pytest.approx(sol.objective, abs=1e-7)
    # N = 1: no schedule beats the bound, the layered LP included
    assert sol.objective >= float(bandwidth_bound(t, 1, best_cut(t)).value) - 1e-9
    fixed = solve_layered(data, free_shares=False)
    assert fixed.objective >= sol.objective - 1e-9


def test_the_lp_is_the_best_single_tree_per_owner_on_a_tiny_graph_or_better():
    # a 6-cycle with a chord: enumerate every choice of one shortest-path parent per (owner, vertex), equal shares
    t = topology_from_json({"vertices": 6, "links": [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 0], [0, 3]]})
    data = layered_arcs(t, None)
    key = data.root * t.n_vertices + data.child
    groups = [np.flatnonzero(key == k) for k in np.unique(key)]
    best = None
    for choice in itertools.product(*groups):
        y = np.zeros(data.n_arcs)
        y[list(choice)] = 1 / 6
        term = recomputed_term(data, y)
        best = term if best is None else min(best, term)
    sol = solve_layered(data)
    assert sol.objective <= best + 1e-9
    # knock-out: a model without its load rows would not price the loads at all
    model, y, w, M = build_layered(data)
    model.rows.pop()
    assert model.solve_highs(relax=True).objective == pytest.approx(0.0)


def test_rounding_is_exact_in_shares_and_close_to_the_lp():
    t = parse_torus("4x4")
    d = damage(t, parse_failures(t, links=["0-1"]))
    g = default_group(d)
    sol = solve_layered(layered_arcs(d, g))
    base = round_schedule(sol, 1024)
    assert int(base.weights.sum()) == 1024 * sol.data.n_roots
    r = pack(layered_arcs(d, g), units=1024)
    report = check_certificate(_certified(r))
    assert report.valid
    per_element = Fraction(report.metrics.bandwidth_term, report.metrics.elements)
    assert float(per_element) == pytest.approx(sol.objective, rel=5e-3)
    assert float(per_element) >= sol.objective - 1e-9      # an integer schedule of the class: never below the LP


@pytest.mark.parametrize("links", [["0-1", "14-20"], ["0-1"]])   # a group of order 1; of order 4 (orbits of links)
def test_the_local_lp_lies_between_the_full_lp_and_the_healthy_trees(links):
    t = parse_torus("6x6")
    d = damage(t, parse_failures(t, links=links))
    data = layered_arcs(d, default_group(d))
    ref = reference_fractions(sp_allreduce(t), torus_gamma(t))
    full = solve_layered(data).objective
    free = solve_local(data, ref, radius=1, free_shares=True)
    equal = solve_local(data, ref, radius=1)
    assert full - 1e-9 <= free.objective <= equal.objective + 1e-9
    for sol in (free, equal):   # the solution is the lifted schedule's: recomputed arc by arc
        assert recomputed_term(data, sol.y) == pytest.approx(sol.objective, abs=1e-7)
    # a radius covering the whole torus frees every pair: the full LP (equal shares) again
    whole = solve_local(data, ref, radius=6)
    assert whole.objective == pytest.approx(solve_layered(data, free_shares=False).objective, abs=1e-7)


def _certified(packed):
    """The packing model's schedule certified as the solve stage does, with the layered class's bound."""
    from synth.models.packing.classdual import with_class_bound
    from synth.solving.packing import certify_packed

    return with_class_bound(certify_packed(packed), packed.solution)
