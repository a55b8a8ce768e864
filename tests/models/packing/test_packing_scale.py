"""The whole layered LP by an interior point with crossover (what 16x16 tori get) on a small graph: the
simplex's value, a basic solution (few components once rounded) and its own dual as the class bound."""

import numpy as np
import pytest

import synth.models.packing.layered as layered
import synth.solving.rounds as rounds
from synth.models.packing.layered import layered_arcs
from synth.models.packing.pipeline import pack
from synth.models.packing.rounding import round_schedule
from synth.solving import solve
from synth.symmetry.spec import default_group
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus


def test_interior_point_with_crossover_matches_the_simplex(monkeypatch):
    t = parse_torus("6x6")
    d = damage(t, parse_failures(t, links=["0-1"]))
    data = layered.layered_arcs(d, default_group(d))
    simplex = layered.solve_layered(data)
    monkeypatch.setattr(layered, "SIMPLEX_ARCS", 0)
    ipm = layered.solve_layered(data)
    assert (simplex.method, ipm.method) == ("simplex", "interior point with crossover")
    assert ipm.status == "optimal" and abs(ipm.objective - simplex.objective) < 1e-7
    # a basic solution: at most a few components per owner, as many as the simplex's within a factor 2
    n_ipm, n_simplex = round_schedule(ipm, 64).n_components, round_schedule(simplex, 64).n_components
    assert n_ipm <= 2 * n_simplex, (n_ipm, n_simplex)
    assert ipm.load_dual is not None and np.isfinite(ipm.load_dual).all()


def test_the_interior_point_certificate_claims_its_own_class_bound(monkeypatch):
    monkeypatch.setattr(layered, "SIMPLEX_ARCS", 0)
    t = parse_torus("4x4")
    d = damage(t, parse_failures(t, links=["0-1"]))
    cert = _certified(pack(layered_arcs(d, default_group(d)), units=64))
    claim = cert.claims["class_bound"]
    assert cert.solver["class_dual"] == "the whole layered LP's dual (interior point with crossover)"
    assert 0.99 < claim["fraction"] <= 1 + 1e-9
    from synth.check.claims import check_certificate
    assert check_certificate(cert).valid


def test_a_whole_lp_out_of_time_falls_back_to_the_local_lp(monkeypatch):
    import synth.models.packing.pipeline as pipeline
    from synth.errors import SynthError
    def out_of_time(*_args, **_kwargs):
        raise SynthError("the layered LP found no solution (time limit)")

    monkeypatch.setattr(layered, "SIMPLEX_ARCS", 0)
    monkeypatch.setattr(pipeline, "solve_layered", out_of_time)
    monkeypatch.setattr(rounds, "TIMED_MAX_ROWS", 0)   # the layered path alone is under test
    monkeypatch.setattr("synth.solving.periodic.PLANE_ROWS", 0)
    t = parse_torus("6x6")
    res = solve(damage(t, parse_failures(t, links=["0-1"])))
    cert, notes = res.certificate, res.notes
    assert cert.solver["lp"].startswith("layered, local") and "class_bound" not in cert.claims
    assert any("out of time" in n for n in notes)


EIGHT = "0.0-0.1 2.3-2.4 4.6-4.7 6.9-6.10 8.12-8.13 10.15-10.0 12.2-13.2 14.8-15.8".split()


@pytest.mark.slow
@pytest.mark.parametrize("links, least", [(["0.0-0.1"], 0.759), (EIGHT, 0.7618)])
def test_16x16_takes_the_whole_lp_and_is_certified(links, least, tmp_path):
    """The scale target on 16x16 (about 40-60 CPU s each, bench/RESULTS.md: the layered packing on damaged tori)."""
    import time

    from synth.check.certificate import write_certificate
    from synth.check.claims import check_file
    start = time.process_time()
    t = parse_torus("16x16")
    cert = solve(damage(t, parse_failures(t, links=links)), time_limit=600).certificate
    write_certificate(cert, tmp_path / "c.json")
    report = check_file(tmp_path / "c.json")
    assert report.valid and cert.solver["lp"] == "layered"
    num, _, den = cert.claims["bandwidth_fraction"].partition("/")
    assert int(num) / int(den) >= least and cert.claims["class_bound"]["fraction"] > 0.999
    assert time.process_time() - start < 600


def _certified(packed):
    """The packing model's schedule certified as the solve stage does, with the layered class's bound."""
    from synth.models.packing.classdual import with_class_bound
    from synth.solving.packing import certify_packed

    return with_class_bound(certify_packed(packed), packed.solution)
