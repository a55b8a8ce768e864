"""synth repair: a healthy certificate and failures give a certified schedule of the damaged network."""

import json
import re

import pytest

from synth.check.certificate import read_certificate, write_certificate
from synth.check.claims import check_certificate
from synth.cli import main
from synth.solving import solve
from synth.solving.repair import repair
from synth.topology.failures import parse_failures
from synth.topology.torus import parse_torus


def test_repair_keeps_the_best_certified_step():
    t = parse_torus("4x4")
    r = repair(solve(t).certificate, parse_failures(t, links=["0-1"], nodes=["10"]), time_limit=60)
    assert check_certificate(r.certificate).valid
    assert r.certificate.topology.spec["failed"] == [[0, 1], 10]
    fractions = [n for n in r.notes if "% of the certified bound" in n]
    assert fractions[0].startswith("first valid schedule") and len(fractions) >= 3
    assert r.notes[0].startswith("healthy trees: SP-allreduce lifted by Γ")


def test_repair_cli(tmp_path, capsys):
    healthy, out = tmp_path / "h.json", tmp_path / "r.json"
    assert main(["solve", "--torus", "4x4", "--out", str(healthy)]) == 0
    capsys.readouterr()
    assert main(["repair", str(healthy), "--fail-link", "0.0-0.1", "--time-limit", "5", "--out", str(out),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["valid"] and summary["algorithm"] == "repair"
    assert main(["check", str(out)]) == 0
    capsys.readouterr()
    # a damaged certificate, or no failure named: one line each
    assert main(["repair", str(out), "--fail-link", "1-2"]) == 2
    assert main(["repair", str(healthy)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("synth: error:") for line in err)
    assert "--fail-link" in err[1]


def test_repair_of_a_certificate_read_back_uses_the_closed_form_and_notes_every_step(tmp_path):
    """The file's SP certificate (tree form: rows in another order) is still recognised, so its parents come
    in closed form; every step says what it reached, and the kept schedule checks from its file."""
    t = parse_torus("6x6")
    write_certificate(solve(t).certificate, tmp_path / "h.json")
    healthy = read_certificate(tmp_path / "h.json")
    r = repair(healthy, parse_failures(t, links=["0-1"]), time_limit=120)
    assert r.notes[0].startswith("healthy trees: SP-allreduce lifted by Γ, read in closed form")
    steps = [n for n in r.notes if "% of the certified bound" in n and not n.startswith("kept")]
    assert steps[0].startswith("first valid schedule in") and len(steps) == 4   # radii 1, 3, 6 and the whole LP
    assert all(re.search(r"\d+\.\d\d % of the certified bound", n) for n in steps)
    assert all(" at " in n for n in steps[1:])
    write_certificate(r.certificate, tmp_path / "r.json")
    assert check_certificate(read_certificate(tmp_path / "r.json")).valid
    kept = float(re.search(r"kept (\d+\.\d+) %", r.notes[-2]).group(1))
    assert kept == max(float(re.search(r"(\d+\.\d\d) %", n).group(1)) for n in steps)


@pytest.mark.slow
def test_repair_ends_with_the_whole_layered_lp_where_solve_solves_it():
    """14x14 with a failed link has 21,896 parent choices: given the time, repair reaches the layered class's best,
    as synth solve does (the whole LP, its dual the class bound)."""
    t = parse_torus("14x14")
    failures = parse_failures(t, links=["0-1"])
    r = repair(solve(t).certificate, failures, time_limit=900)
    assert any(n.startswith("full LP: ") for n in r.notes)
    assert r.certificate.claims["class_bound"]["fraction"] > 0.999     # within the rounding of the class's best
    assert check_certificate(r.certificate).valid
