"""The layered class bound (docs/bounds.md section 5) against brute force on tiny graphs, and its knock-outs.

The brute force is independent of the models: every layered tree of every owner is enumerated in
plain Python, and the best layered schedule is the LP over mixtures of those trees (scipy's HiGHS):
``min sum_s M_s`` with ``sum_(r, T) x_(r, T) = 1`` and every link's load in round ``s`` at most ``M_s``.
"""

import itertools
from dataclasses import replace

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

import synth.solving.rounds as rounds
from synth.check.bounds.layered_class import (CLASS_KEY, ROUND_TOL, class_value, dual_from_json, dual_to_json,
                                              layered_distances, owner_costs)
from synth.check.claims import certify, check_certificate, check_explicit
from synth.check.explicit import write_explicit
from synth.errors import ScheduleError
from synth.models.packing import layered_arcs, pack, solve_layered
from synth.models.packing.classdual import class_dual
from synth.schedule.data import COPY, BaseSchedule
from synth.schedule.lift import lift, lifted_chunk_elements
from synth.schedule.sp import sp_allreduce
from synth.symmetry.spec import default_group
from synth.symmetry.torus import torus_gamma
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus


def tiny_graphs():
    """The graphs of the brute force; the 4x4 torus with a failed chip has 63,936 trees: slow."""
    yield parse_torus("4")
    t = parse_torus("3x3")
    yield damage(t, parse_failures(t, links=["0-1"]))
    t = parse_torus("4x4")
    yield pytest.param(damage(t, parse_failures(t, nodes=["5"])), marks=pytest.mark.slow, id="4x4 failed chip")


def small_graphs():
    """Graphs where the layered LP's primal (not an enumeration) is the reference."""
    t = parse_torus("4x4")
    yield damage(t, parse_failures(t, nodes=["5"]))
    yield damage(t, parse_failures(t, links=["0-1", "5-9"]))


def all_trees(t):
    """Every layered tree of every owner, as (owner, [(round, link), ...]) in plain Python."""
    comp = [int(v) for v in t.compute]
    links = {(int(a), int(b)): e for e, (a, b) in enumerate(zip(t.link_src.tolist(), t.link_dst.tolist()))}
    dist = {r: t.bfs([r]).tolist() for r in comp}
    H = max(max(dist[r][v] for v in comp) for r in comp)
    for r in comp:
        others = [v for v in comp if v != r]
        parents = [[u for (a, u) in links if a == v and dist[r][u] == dist[r][v] - 1] for v in others]
        for choice in itertools.product(*parents):
            uses = []
            for v, u in zip(others, choice):
                d = dist[r][v]
                uses += [(H - d + 1, links[(v, u)]), (H + d, links[(u, v)])]
            yield r, uses


_TREES = {}


def tree_matrix(t):
    """``(owner per tree, trees x (round, link) incidence)`` of every enumerated tree (cached per graph)."""
    if t.name not in _TREES:
        owners, rows, cols = [], [], []
        for j, (r, uses) in enumerate(all_trees(t)):
            owners.append(r)
            rows += [j] * len(uses)
            cols += [(s - 1) * t.n_links + e for s, e in uses]
        R = 2 * layered_distances(t).H
        A = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(owners), R * t.n_links)).tocsr()
        _TREES[t.name] = (np.array(owners), A)
    return _TREES[t.name]


def best_layered(t) -> float:
    """The least bandwidth term per element of a layered schedule: an LP over mixtures of enumerated trees."""
    _, A = tree_matrix(t)
    n, RE = A.shape
    R = RE // t.n_links
    # columns: x_T (n), M_s (R); rows: load (R * E) <= 0, one equality sum x = 1
    M = coo_matrix((-np.ones(RE), (np.arange(RE), np.arange(RE) // t.n_links)), shape=(RE, R))
    from scipy.sparse import hstack
    A_ub = hstack([A.T, M]).tocsr()
    A_eq = np.r_[np.ones(n), np.zeros(R)][None, :]
    c = np.r_[np.zeros(n), np.ones(R)]
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(RE), A_eq=A_eq, b_eq=[1.0], bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


def brute_cost(t, pi) -> float:
    """``min_r`` of the cheapest enumerated tree under ``pi``: the formula by enumeration."""
    owners, A = tree_matrix(t)
    cost = A @ pi.ravel()
    best = min(cost[owners == r].min() for r in np.unique(owners))
    return best / max(1.0, float(pi.sum(axis=1).max()))


@pytest.mark.parametrize("t", list(tiny_graphs()), ids=lambda t: getattr(t, "name", ""))
def test_the_dual_of_the_layered_lp_bounds_every_layered_schedule_and_meets_the_best(t):
    optimum = best_layered(t)
    for g in (None, default_group(t)):
        sol = solve_layered(layered_arcs(t, g))
        assert sol.objective == pytest.approx(optimum, abs=1e-7)     # the (lifted) LP is the class optimum
        pi = class_dual(sol)
        D = layered_distances(t)
        value = class_value(t, pi, D)
        assert value <= optimum + 1e-9
        assert value == pytest.approx(optimum, abs=1e-6)              # the dual is tight
        assert value == pytest.approx(brute_cost(t, pi), abs=1e-12)   # the vectorized formula is the enumeration


@pytest.mark.parametrize("t", list(small_graphs()), ids=lambda t: t.name)
def test_the_dual_meets_the_lp_primal_with_and_without_the_group(t):
    D = layered_distances(t)
    values = []
    for g in (None, default_group(t)):
        sol = solve_layered(layered_arcs(t, g))
        values.append(sol.objective)
        pi = class_dual(sol)
        assert class_value(t, pi, D) <= sol.objective + 1e-9
        assert class_value(t, pi, D) == pytest.approx(sol.objective, abs=1e-6)
        rng = np.random.default_rng(3)
        for _ in range(20):   # any dual: a bound below the best layered schedule
            q = rng.random(pi.shape) ** 4
            q /= q.sum(axis=1, keepdims=True) * rng.uniform(1.0, 1.5)
            assert class_value(t, q, D) <= sol.objective + 1e-12
    assert values[0] == pytest.approx(values[1], abs=1e-7)


@pytest.mark.parametrize("t", list(tiny_graphs()), ids=lambda t: getattr(t, "name", ""))
def test_any_dual_gives_a_bound_below_the_best_layered_schedule(t):
    rng = np.random.default_rng(7)
    optimum = best_layered(t)
    D = layered_distances(t)
    for _ in range(20):
        pi = rng.random((2 * D.H, t.n_links)) ** 4
        pi /= pi.sum(axis=1, keepdims=True) * rng.uniform(1.0, 1.5)
        value = class_value(t, pi, D)
        assert value <= optimum + 1e-12
        assert value == pytest.approx(brute_cost(t, pi), abs=1e-12)


def test_the_per_owner_costs_use_one_parent_for_both_phases():
    # on a 4-cycle owner 0's opposite vertex 2 has two parents; a dual that makes reduce-to-1 and copy-from-3
    # cheap (but neither parent cheap in both phases) costs the cheaper full parent, not the two cheap halves
    t = parse_torus("4")
    D = layered_distances(t)
    pi = np.zeros((2 * D.H, t.n_links))
    e21, e32 = int(t.link_ids([2], [1])[0]), int(t.link_ids([3], [2])[0])
    e23, e12 = int(t.link_ids([2], [3])[0]), int(t.link_ids([1], [2])[0])
    pi[D.H - 2, e23] = 1.0          # reduce 2 -> 3 (round H - 1) expensive
    pi[D.H + 1, e12] = 1.0          # copy 1 -> 2 (round H + 2) expensive
    assert owner_costs(t, pi, D)[0] == pytest.approx(1.0)
    assert pi[D.H - 2, e21] + pi[D.H + 1, e32] == 0.0


@pytest.fixture(scope="module")
def packed():
    t = parse_torus("4x4")
    d = damage(t, parse_failures(t, links=["0-1"]))
    return _certified(pack(layered_arcs(d, default_group(d)), units=8))


def test_a_packed_certificate_claims_and_checks_its_class_bound(packed):
    claim = packed.claims[CLASS_KEY]
    assert claim["class"].startswith("layered")
    assert 0 < claim["fraction"] <= 1
    # the general bound is never above the class bound (the class bound bounds fewer schedules)
    assert float(eval(packed.claims["bandwidth_lower_bound"])) <= claim["value"] + 1e-9
    report = check_certificate(packed)
    assert report.valid, report.errors
    assert report.claims[CLASS_KEY][2]
    assert "dual" not in report.claims[CLASS_KEY][0]


def edited(cert, **changes):
    claim = {**cert.claims[CLASS_KEY], **changes}
    return replace(cert, claims={**cert.claims, CLASS_KEY: claim})


def test_an_edited_value_fraction_or_dual_is_invalid(packed):
    claim = packed.claims[CLASS_KEY]
    assert not check_certificate(edited(packed, value=claim["value"] * 1.01)).valid
    assert not check_certificate(edited(packed, fraction=claim["fraction"] * 0.99)).valid
    dual = dict(claim["dual"])
    dual["value"] = [v * 0.9 for v in dual["value"]]                   # feasible, but another bound
    assert not check_certificate(edited(packed, dual=dual)).valid
    assert not check_certificate(edited(packed, **{"class": "timed"})).valid


def test_a_round_summing_above_one_is_rejected(packed):
    t = packed.topology
    D = layered_distances(t)
    pi = np.zeros((2 * D.H, t.n_links))
    pi[0, :] = 1.1 / t.n_links
    with pytest.raises(ScheduleError, match="sums to 1.1"):
        dual_from_json(t, D, dual_to_json(pi))
    pi[0, :] = (1 + ROUND_TOL / 2) / t.n_links
    assert dual_from_json(t, D, dual_to_json(pi)).shape == pi.shape
    bad = dict(packed.claims[CLASS_KEY]["dual"])
    bad["value"] = [-v for v in bad["value"]]
    report = check_certificate(edited(packed, dual=bad))
    assert not report.valid and any("nonnegative" in e for e in report.errors)


def test_an_edited_failure_list_is_invalid(packed):
    spec_t = parse_torus("4x4")
    other = damage(spec_t, parse_failures(spec_t, links=["0-4"]))
    report = check_certificate(replace(packed, topology=other))
    assert not report.valid


def test_the_claim_does_not_apply_to_a_schedule_that_is_not_layered(packed):
    b = packed.base
    later = BaseSchedule(b.topology, b.n_rounds + 1, b.component, b.round + (b.op == COPY), b.src, b.dst, b.op,
                         b.route_ptr, b.route_links, b.weights, b.labels)
    shifted = certify(later, packed.group, packed.elements)          # a correct allreduce, copies one round later
    report = check_certificate(replace(shifted, claims={**shifted.claims, CLASS_KEY: packed.claims[CLASS_KEY]}))
    assert not report.valid
    assert any("not layered" in e for e in report.errors)


def test_sp_allreduce_on_a_healthy_torus_is_layered_and_the_class_bound_is_the_volume_bound():
    t = parse_torus("4x4")
    g = torus_gamma(t)
    cert = certify(sp_allreduce(t), g)
    D = layered_distances(t)
    pi = np.full((2 * D.H, t.n_links), 1.0 / t.n_links)
    from synth.check.bounds.layered_class import class_claim
    claim = class_claim(t, pi, D, cert.elements, cert.claims["bandwidth_term"])
    assert claim["fraction"] == pytest.approx(1.0)
    assert check_certificate(replace(cert, claims={**cert.claims, CLASS_KEY: claim})).valid


def test_an_explicit_file_keeps_and_checks_the_claim(packed, tmp_path):
    path = tmp_path / "x.explicit"
    sizes = lifted_chunk_elements(packed.base, packed.group, packed.elements)
    write_explicit(lift(packed.base, packed.group), sizes, path, packed.claims)
    report = check_explicit(path)
    assert report.valid and report.claims[CLASS_KEY][2], report.errors
    write_explicit(lift(packed.base, packed.group), sizes, path,
                   edited(packed, value=packed.claims[CLASS_KEY]["value"] + 1).claims)
    assert not check_explicit(path).valid


def test_a_local_lp_schedule_gets_the_whole_lps_dual_by_interior_point_or_no_claim(monkeypatch):
    from synth.models.packing import classdual, reference_fractions

    t = parse_torus("6x6")
    d = damage(t, parse_failures(t, links=["0-1"]))
    g = default_group(d)
    ref = reference_fractions(sp_allreduce(t), torus_gamma(t))
    cert = _certified(pack(layered_arcs(d, g), units=4, reference=ref, radius=1))
    claim = cert.claims[CLASS_KEY]
    assert "interior point" in cert.solver["class_dual"]
    best = solve_layered(layered_arcs(d, g)).objective * cert.elements       # simplex: the class optimum
    assert best * (1 - 1e-4) <= claim["value"] <= best * (1 + 1e-9)
    assert check_certificate(cert).valid
    monkeypatch.setattr(classdual, "CLASS_LP_ARCS", 0)
    cert = _certified(pack(layered_arcs(d, g), units=4, reference=ref, radius=1))
    assert CLASS_KEY not in cert.claims
    from synth.solving.packing_notes import class_bound_note
    assert class_bound_note(cert).startswith("no class bound")


def test_the_producer_claims_nothing_for_a_schedule_that_is_not_layered(packed):
    from synth.models.packing import with_class_bound

    b = packed.base
    later = BaseSchedule(b.topology, b.n_rounds + 1, b.component, b.round + (b.op == COPY), b.src, b.dst, b.op,
                         b.route_ptr, b.route_links, b.weights, b.labels)
    t = packed.topology
    sol = solve_layered(layered_arcs(t, packed.group))
    shifted = certify(later, packed.group, packed.elements)
    assert CLASS_KEY not in with_class_bound(shifted, sol).claims
    assert CLASS_KEY in with_class_bound(replace(packed, claims={k: v for k, v in packed.claims.items()
                                                                 if k != CLASS_KEY}), sol).claims


def test_solve_and_check_print_both_fractions_and_an_edited_file_fails(tmp_path, capsys, monkeypatch):
    import json

    from synth.cli import main

    monkeypatch.setattr(rounds, "TIMED_MAX_ROWS", 0)   # the layered schedule, as on networks beyond it
    monkeypatch.setattr("synth.solving.periodic.PLANE_ROWS", 0)
    cert = tmp_path / "c.json"
    assert main(["solve", "--torus", "4x4", "--fail-link", "0-1", "--out", str(cert), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert 0 < float(summary["class_fraction"]) <= 1 and "/" in summary["bandwidth_fraction"]
    assert summary["class_bound_scope"].startswith("layered")
    assert main(["check", str(cert)]) == 0
    out = capsys.readouterr().out
    assert "ok   class_bound (layered" in out and "ok   bandwidth_fraction" in out
    data = json.loads(cert.read_text())
    data["claims"][CLASS_KEY]["value"] *= 1.001
    cert.write_text(json.dumps(data))
    assert main(["check", str(cert)]) == 1
    assert "FAIL class_bound" in capsys.readouterr().out
    data["claims"][CLASS_KEY]["value"] /= 1.001
    data["topology"]["failed"] = [[0, 4]]
    cert.write_text(json.dumps(data))
    assert main(["check", str(cert)]) != 0


def test_a_timed_schedule_claims_no_layered_class_bound(tmp_path, capsys):
    import json

    from synth.cli import main

    cert = tmp_path / "c.json"
    assert main(["solve", "--torus", "4x4", "--fail-link", "0-1", "--out", str(cert), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    data = json.loads(cert.read_text())
    assert data["provenance"]["algorithm"] == "timed-packing"
    assert CLASS_KEY not in data["claims"] and "class_fraction" not in summary


def _certified(packed):
    """The packing model's schedule certified as the solve stage does, with the layered class's bound."""
    from synth.models.packing.classdual import with_class_bound
    from synth.solving.packing import certify_packed

    return with_class_bound(certify_packed(packed), packed.solution)
