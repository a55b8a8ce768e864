"""The healthy trees the local LP keeps: what the healthy solve builds, unless its schedule would be too large."""

import numpy as np

import synth.solving.limits as limits
import synth.solving.reference as reference
import synth.solving.rounds as rounds
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus


def _damaged(shape):
    t = parse_torus(shape)
    return damage(t, parse_failures(t, links=["0-1"]))


def test_an_equal_sided_torus_keeps_sp_allreduce_by_gamma():
    ref = reference.healthy_reference(_damaged("4x4x4"))
    assert ref.what == "SP-allreduce lifted by Γ" and ref.table.shape == (6, 64) and np.all(ref.weight == 1)


def test_sides_that_differ_keep_the_balanced_family_unless_it_is_too_large(monkeypatch):
    ref = reference.healthy_reference(_damaged("4x6x8"))
    assert ref.what.startswith("the balanced family of the healthy solve, 3 tree(s)")
    assert ref.table.shape == (6, 192)      # three trees and their negations
    assert reference.family_sends(parse_torus("4x6x8"), 6) == 2 * 6 * 192 * 191
    monkeypatch.setattr(reference, "FAMILY_MAX_SENDS", reference.family_sends(parse_torus("4x6x8"), 6) - 1)
    ref = reference.healthy_reference(_damaged("4x6x8"))
    assert ref.what.startswith("SP-allreduce lifted by translations-negation") and "unbalanced here" in ref.what
    assert ref.table.shape == (2, 192)


def _local_solve(monkeypatch, tmp_path, limit):
    """``synth solve`` of 6x6 with a failed link on the local layered LP (as on a pod) with ``MAX_LOCAL_SENDS`` set."""
    import synth.solving.packing as packing
    from synth.cli import main

    monkeypatch.setattr(packing, "FULL_LP_ARCS", 10)
    monkeypatch.setattr(packing, "damaged_everywhere", lambda *_: False)
    monkeypatch.setattr(rounds, "TIMED_MAX_ROWS", 0)
    monkeypatch.setattr("synth.solving.periodic.PLANE_ROWS", 0)
    monkeypatch.setattr(limits, "MAX_LOCAL_SENDS", limit)
    out = tmp_path / "c.json"
    return main(["solve", "--torus", "6x6", "--fail-link", "0-1", "--out", str(out), "--time-limit", "10"]), out


def test_a_local_lp_past_the_sends_it_can_hold_is_refused_with_one_line(monkeypatch, tmp_path, capsys):
    # 6x6 with a failed link: a group of order 4, 10 represented owners, SP-allreduce's 4 trees each, 35 vertices
    t = _damaged("6x6")
    from synth.symmetry.spec import default_group
    from synth.models.packing.layered import root_reps

    owners = root_reps(t, default_group(t)).size
    sends = reference.family_sends(t, 4, owners)
    assert sends == 2 * 4 * owners * 35
    rc, out = _local_solve(monkeypatch, tmp_path, sends - 1)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and not out.exists() and len(err) == 1 and err[0].startswith("synth: error: torus 6x6")
    assert f"about {sends:,} sends before it is lifted ({owners:,} owners, 4 healthy tree(s) each)" in err[0]
    rc, out = _local_solve(monkeypatch, tmp_path, sends)        # at the limit: solved
    assert rc == 0 and out.exists()


def test_repair_refuses_a_network_past_the_sends_before_it_builds_anything(monkeypatch, tmp_path, capsys):
    from synth.cli import main

    healthy = tmp_path / "h.json"
    assert main(["solve", "--torus", "6x6", "--out", str(healthy)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(limits, "MAX_LOCAL_SENDS", 1000)
    assert main(["repair", str(healthy), "--fail-link", "0-1", "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "past the 1,000 synth rounds and checks" in err[0]
    assert not (tmp_path / "r.json").exists()


def test_repair_counts_the_trees_of_a_certificate_it_does_not_read_in_closed_form(monkeypatch, tmp_path, capsys):
    # a 4x6 torus's healthy schedule is not SP-allreduce by Γ: each owner keeps as many trees as the certificate
    # has lifted, per owner (rounded up), in the estimate that refuses it
    from synth.check.certificate import read_certificate
    from synth.cli import main

    healthy = tmp_path / "h.json"
    assert main(["solve", "--torus", "4x6", "--out", str(healthy)]) == 0
    capsys.readouterr()
    cert = read_certificate(healthy)
    trees = -(-cert.base.n_components * cert.group.order // 24)
    monkeypatch.setattr(limits, "MAX_LOCAL_SENDS", 1)
    assert main(["repair", str(healthy), "--fail-link", "0-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"owners, {trees} healthy tree(s) each)" in err and trees > 1
