"""A false schedule is INVALID (exit 1) wherever it is given: a route over a failure, a forged claim."""

import json

import pytest

from synth.check import check_file
from synth.cli import main


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    """A certified 6x6 torus with the link 0-1 and the chip 20 failed, and its explicit export."""
    d = tmp_path_factory.mktemp("damaged")
    cert = d / "c.json"
    assert main(["solve", "--torus", "6x6", "--fail-link", "0-1", "--fail-node", "20", "--time-limit", "2",
                 "--out", str(cert)]) == 0
    assert main(["export", str(cert), "--out", str(d / "e.jsonl")]) == 0
    return d


def _forged_certificate(damaged, tmp_path, route):
    data = json.loads((damaged / "c.json").read_text())
    rows = data["base_schedule"]["components"][0].setdefault("transmissions", [])   # beside the tree, if one
    rows.insert(0, [1, route[0], route[-1], "reduce", route])
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(data))
    return path


def _forged_explicit(damaged, tmp_path, route):
    lines = (damaged / "e.jsonl").read_text().splitlines()
    row = json.loads(lines[1])
    row.update(src=route[0], dst=route[-1], route=route)
    lines[1] = json.dumps(row)
    path = tmp_path / "forged.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("forge", [_forged_certificate, _forged_explicit])
@pytest.mark.parametrize("route,what", [([0, 1], "the failed link 0-1"), ([1, 0], "the failed link 0-1"),
                                        ([14, 20, 26], "the failed node 20"), ([21, 20], "the failed node 20")])
def test_a_route_over_a_failure_is_invalid(damaged, tmp_path, capsys, forge, route, what):
    path = forge(damaged, tmp_path, route)
    report = check_file(str(path))
    assert not report.valid and what in report.errors[0]
    assert main(["check", str(path)]) == 1
    assert "INVALID" in capsys.readouterr().out


@pytest.mark.parametrize("forge", [_forged_certificate, _forged_explicit])
def test_a_step_that_is_no_link_at_all_is_still_a_bad_file(damaged, tmp_path, capsys, forge):
    path = forge(damaged, tmp_path, [0, 14])
    assert main(["check", str(path)]) == 2
    assert capsys.readouterr().err.startswith("synth: error: ")


def _forged_claim(damaged, tmp_path):
    data = json.loads((damaged / "c.json").read_text())
    data["claims"]["rounds"] -= 1
    path = tmp_path / "claim.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("forge", ["claim", "route"])
@pytest.mark.parametrize("argv", [["export", "{f}", "--out", "{o}"], ["export", "{f}", "--format", "msccl-xml",
                                  "--out", "{o}"], ["draw", "{f}", "--out", "{o}.png"],
                                  ["repair", "{f}", "--fail-node", "9", "--out", "{o}"]])
def test_commands_refuse_what_check_finds_invalid(damaged, tmp_path, capsys, forge, argv):
    path = _forged_claim(damaged, tmp_path) if forge == "claim" else _forged_certificate(damaged, tmp_path, [0, 1])
    out = tmp_path / "out"
    code = main([a.format(f=path, o=out) for a in argv])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "synth: " in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_repair_of_an_explicit_file_says_it_needs_a_certificate(damaged, tmp_path, capsys):
    assert main(["repair", str(damaged / "e.jsonl"), "--fail-node", "9", "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "synth repair needs a certificate" in err and "JSON" not in err
    assert not (tmp_path / "r.json").exists()
