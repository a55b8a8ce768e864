"""synth repair: a healthy certificate and failures give a certified schedule of the damaged network."""

import json

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
