"""Depth-bounded (k-hop) families under groups smaller than Γ (models/balance/family/, solve --depth on rectangles)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from synth.check.claims import check_certificate
from synth.check import execute, measure_symmetric
from synth.cli import main
from synth.errors import SynthError
from synth.symmetry.torus import torus_gamma, torus_translations, torus_translations_negation
from synth.models.balance import balance_candidates
from synth.models.balance.family import (compact_rounds, dimension_metric, khop_family, labelled_tree_schedule,
                                         orbit_profiles)
from synth.models.balance.family.labels import mirror_tree as _mirror
from synth.schedule import BaseSchedule, tree_schedule
from synth.solving import SolveRequest, solve
from synth.solving.torus import _plan_khop
from synth.topology.torus import parse_torus

ROOT = Path(__file__).resolve().parents[4]
FAST = 6.0  # seconds per solve: the skeletons of these small tori finish well within it

CASES = [("3x4", 2), ("3x5", 2), ("4x6", 2), ("4x6", 3), ("4x8", 3), ("4x8", 4), ("3x3x4", 2), ("3x3x4", 3)]


@pytest.mark.parametrize("shape, k", CASES)
def test_certified_family(shape, k):
    t = parse_torus(shape)
    r = solve(t, depth=k, time_limit=FAST)
    cert = r.certificate
    c, s = cert.claims, cert.solver
    assert cert.provenance["algorithm"] == "k-sp-family"
    assert r.depth <= k and c["rounds"] == 2 * r.depth
    assert c["psi"] == "1"
    rep = check_certificate(cert, mode="explicit")  # executes every lifted transmission
    assert rep.valid, rep.errors
    g = torus_translations_negation(t)
    measured = measure_symmetric(cert.base, g, np.repeat(cert.base.weights, g.order))
    assert c["omega"] == str(measured.omega) == s["omega"]
    assert c["chunks"] == s["chunks"] == g.order * sum(s["weights"])
    # the weight claim is the chunk-weighted mean of the trees' W
    mean = sum(w * x for w, x in zip(s["weights"], s["tree_weights"])) / sum(s["weights"])
    assert abs(float(measured.weight) - mean) < 1e-9
    if s["family"]["assignment_balanced"] or s["balance_status"] in ("optimal", "feasible"):
        assert c["omega"] == "1"
    assert any("omega" in n for n in r.notes)


@pytest.mark.parametrize("shape, k", [("4x6", 2), ("3x3x4", 2)])
def test_small_families_balance(shape, k):
    """These small rectangles have a balanced k-hop family (one tree, 2p chunks)."""
    t = parse_torus(shape)
    g = torus_translations_negation(t)
    fam = khop_family(t, k, g, time_limit=FAST)
    assert fam.balanced and fam.depth <= k
    assert all(b.n_rounds == 2 * fam.depth for b in fam.candidates)
    for b in fam.candidates:
        assert execute(b.as_schedule()) == []
    r = balance_candidates(t, g, fam.candidates, time_limit=10)
    assert r.status == "optimal" and r.omega == 1 and r.chunks == g.order * fam.units


@pytest.mark.parametrize("shape, k, make", [("3x4", 2, torus_translations), ("4x6", 3, torus_translations),
                                             ("3x3x4", 2, torus_translations)])
def test_model_claims_match_checker_under_translations(shape, k, make):
    """Under translations (orbits split by direction) a balance claimed by the model is Omega = 1 measured."""
    t = parse_torus(shape)
    g = make(t)
    fam = khop_family(t, k, g, time_limit=4)
    r = balance_candidates(t, g, fam.candidates, time_limit=10)
    assert r.omega == measure_symmetric(r.base, g, np.repeat(r.base.weights, g.order)).omega
    if fam.balanced:
        assert r.omega == 1 and r.chunks <= g.order * fam.units
    else:
        assert r.status == "infeasible" and r.omega > 1   # reported honestly


def test_mirror_pair_balances_directions():
    """A tree balanced per dimension plus its mirror image balances every (dimension, direction) orbit."""
    t = parse_torus("3x5")  # odd sides: no antipodal steps, so the mirror reverses every hop
    fam = khop_family(t, 2, torus_translations_negation(t), time_limit=4)
    assert fam.balanced
    b = fam.candidates[0]
    red = b.op == 0
    parent = np.full(t.n_vertices, -1)
    labels = np.zeros(t.n_vertices, dtype=np.int64)
    parent[b.src[red]] = b.dst[red]
    labels[b.src[red]] = fam.depth - b.round[red] + 1
    mp, ml = _mirror(t, parent, labels, t.vertex(-t.coords(np.arange(t.n_vertices))))
    m = labelled_tree_schedule(t, mp, ml, fam.depth)
    g = torus_translations(t)
    pair = measure_symmetric(BaseSchedule(t, b.n_rounds, np.concatenate([b.component, m.component + 1]),
                                          np.concatenate([b.round, m.round]), np.concatenate([b.src, m.src]),
                                          np.concatenate([b.dst, m.dst]), np.concatenate([b.op, m.op]),
                                          np.concatenate([b.route_ptr[:-1], m.route_ptr + b.route_links.size]),
                                          np.concatenate([b.route_links, m.route_links]), [1, 1]),
                             g, np.ones(2 * g.order, dtype=np.int64))
    assert pair.omega == 1
    assert execute(m.as_schedule()) == []


def test_translations_group_on_square():
    """solve() takes the family path for a non-Γ group on an equal-sided torus."""
    t = parse_torus("4x4")
    r = solve(t, depth=3, group="translations", time_limit=FAST)
    c = r.certificate.claims
    assert r.certificate.group.order == 16 and r.certificate.group.n_link_orbits == 4
    assert r.certificate.provenance["algorithm"] == "k-sp-family"
    assert check_certificate(r.certificate).valid
    assert c["rounds"] == 2 * r.depth <= 6 and c["omega"] == "1"


def test_equal_sided_default_still_gamma():
    r = solve(parse_torus("4x4"), depth=2, time_limit=FAST)
    assert r.certificate.provenance["algorithm"] == "k-sp-allreduce"


def test_labelled_tree_schedule_is_allreduce():
    t = parse_torus("3x4")
    parent = np.zeros(t.n_vertices, dtype=np.int64)
    parent[0] = -1
    parent[t.vertex((1, 1))] = t.vertex((0, 1))
    labels = np.ones(t.n_vertices, dtype=np.int64)
    labels[0] = 0
    labels[t.vertex((1, 1))] = 3   # a leaf may sit lower than its depth: it just reduces earlier
    b = labelled_tree_schedule(t, parent, labels, 3)
    assert b.n_rounds == 6 and execute(b.as_schedule()) == []
    # with the depths as labels it is tree_schedule's schedule
    depths = np.where(parent >= 0, 1, 0)
    depths[t.vertex((1, 1))] = 2
    a = labelled_tree_schedule(t, parent, depths, 2)
    ref = tree_schedule(t, parent, 0, route=t.route)

    def key(s):
        return sorted(zip(s.round.tolist(), s.src.tolist(), s.dst.tolist(), s.op.tolist()))

    assert key(a) == key(ref)
    with pytest.raises(SynthError):
        labelled_tree_schedule(t, parent, np.zeros(t.n_vertices, dtype=np.int64), 3)


def test_compact_rounds_drops_unused_levels():
    t = parse_torus("3x4")
    parent = np.where(np.arange(t.n_vertices) == 0, -1, 0)
    labels = np.where(np.arange(t.n_vertices) == 0, 0, 4)
    b = labelled_tree_schedule(t, parent, labels, 4)
    c = compact_rounds(b)
    assert (b.n_rounds, c.n_rounds) == (8, 2)
    assert execute(c.as_schedule()) == []


def test_profiles_and_metric():
    t = parse_torus("4x6")
    g = torus_translations_negation(t)
    v = np.arange(t.n_vertices)
    P = orbit_profiles(t, g, np.zeros_like(v), v)
    assert np.array_equal(P.sum(axis=1), t.dist(0, v))
    assert np.array_equal(dimension_metric(t, (1, 1))[0], t.dist(0, v))
    assert orbit_profiles(t, torus_translations(t), [0], [t.vertex((1, 5))]).tolist() == [[1, 0, 0, 1]]


def test_bad_input():
    t = parse_torus("3x4")
    g = torus_translations_negation(t)
    with pytest.raises(SynthError, match="at least 1"):
        khop_family(t, 0, g)
    with pytest.raises(SynthError, match="max_units"):
        khop_family(t, 2, g, max_units=0)
    with pytest.raises(SynthError, match="positive"):
        dimension_metric(t, (0, 1))
    with pytest.raises(SynthError, match="different topology"):
        khop_family(t, 2, torus_translations_negation(parse_torus("3x5")))
    with pytest.raises(SynthError, match="unknown group"):
        solve(t, depth=2, group="bogus")
    with pytest.raises(SynthError, match="exchange"):
        solve(t, depth=2, exchange=True)
    with pytest.raises(SynthError):
        solve(t, depth=2, group="gamma")        # Γ needs an equal-sided torus
    with pytest.raises(SynthError, match="regular"):
        _plan_khop(SolveRequest(parse_torus("4x4"), depth=2, group="gamma", time_limit=FAST), gamma=False)
    assert torus_gamma(parse_torus("4x4")).is_regular


def test_cli_rectangle_json(tmp_path, capsys):
    cert = tmp_path / "c.json"
    code = main(["solve", "--torus", "4x8", "--depth", "3", "--json", "--time-limit", str(FAST),
                 "--out", str(cert)])
    out, err = capsys.readouterr()
    assert code == 0
    res = json.loads(out)
    assert res["valid"] and res["rounds"] == 2 * res["depth"] and res["depth"] <= 3
    assert res["algorithm"] == "k-sp-family"
    assert main(["check", str(cert), "--json"]) == 0
    rep = json.loads(capsys.readouterr()[0])
    assert rep["valid"] and rep["exact"]["omega"] == res["omega"]
    # the explicit export passes the independent verifier (no synth code)
    ex = tmp_path / "e.jsonl"
    assert main(["export", str(cert), "--format", "explicit", "--out", str(ex)]) == 0
    capsys.readouterr()
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "verify_explicit.py"), str(ex)],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "VALID" in out.stdout and f"omega {res['omega']}" in out.stdout


def test_cli_rectangle_error(capsys):
    code = main(["solve", "--torus", "4x8", "--depth", "3", "--exchange"])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "error" in err
