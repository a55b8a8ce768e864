"""The lattice kinds on the command line: in info, bound, solve, check; hostile shapes get one line."""

import json

import pytest

from synth.cli import main


@pytest.mark.parametrize("args, match", [
    (["--lattice", "0,0;0,0"], "degenerate"), (["--lattice", "1000,0,0;0,1000,0;0,0,1000"], "at most"),
    (["--mesh", "0x4"], "positive"), (["--twisted", "4x4x4"], "kx2k"), (["--lattice", "9" * 12 + ",0;0,1"], "form"),
    (["--mesh", "1000x1000x1000"], "at most"), (["--machine", "tpu-v4:3x3x3"], "valid: 2x2x1"),
    (["--machine", "nope:4x4"], "valid: dgx-a100, dgx-h100, ipu-pod"), (["--mesh", "8x8", "--no-wrap", "0"], "--no-wrap goes"),
    (["--torus", "4x4", "--no-wrap", "5"], "0..1"), (["--twisted", "4x4x8", "--mesh", "4x4"], "exactly one"),
])
def test_hostile_one_line(args, match, capsys):
    assert main(["info", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("synth: error:") and "\n" not in err and match in err


@pytest.mark.parametrize("args, name, diameter", [
    (["--twisted", "4x4x8"], "twisted torus 4x4x8", 6), (["--lattice", "4,4;0,8"], "lattice torus 4,4;0,8", 4),
    (["--mesh", "4x5"], "mesh 4x5", 7), (["--torus", "8x16", "--no-wrap", "0"], "grid 8x16 wrap 1", 15),
    (["--machine", "trn2:4x4x4"], "torus 4x4x4", 6), (["--machine", "tofu-d:2x3x2"], "torus 2x3x2x2x3x2", 6),
    (["--machine", "tpu-v5e:8x16"], "grid 8x16 wrap 1", 15), (["--machine", "tpu-v4:2x2x4"], "mesh 2x2x4", 5),
])
def test_info(args, name, diameter, capsys):
    assert main(["info", *args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["topology"] == name and out["diameter"] == diameter


def test_solve_check_twisted(tmp_path, capsys):
    cert = tmp_path / "c.json"
    assert main(["solve", "--twisted", "2x4", "--out", str(cert)]) == 0
    assert main(["check", str(cert)]) == 0
    assert main(["bound", "--twisted", "2x4"]) == 0
    assert "at least" in capsys.readouterr().out
    spec = json.loads(cert.read_text())["topology"]
    assert spec == {"kind": "twisted", "shape": [2, 4]}


def test_solve_mesh_reports_omega(capsys):
    assert main(["solve", "--mesh", "3x4", "--time-limit", "5"]) == 0
    err = capsys.readouterr().err
    assert "not vertex-transitive" in err and "packing model" in err
