"""``synth draw``: the picture and its JSON summary, one-line refusals (exit 2), and a --help without matplotlib."""

import json
import subprocess
import sys

import pytest

from synth.cli import main


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    path = tmp_path_factory.mktemp("drawcli") / "sp.json"
    assert main(["solve", "--torus", "4x4", "--out", str(path)]) == 0
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_draw_writes_the_picture_and_says_what_it_shows(cert, tmp_path, capsys):
    out = tmp_path / "sp.svg"
    code, text, err = run(capsys, "draw", cert, "--out", out, "--json", "--size", "64KiB", "--alpha", "0")
    assert code == 0 and err == ""
    d = json.loads(text)
    assert d["rounds"] == list(range(1, 9)) and d["size"] == 65536 and d["layout"] == "grid"
    # 4x4 SP: 64 chunks of 1 KiB; a round moves one depth of the tree (4, 6, 4, 1 edges), each link carries 1 to 6
    assert d["load_min_bytes"] == 1024 and d["load_max_bytes"] == 6144
    assert out.read_text().startswith("<?xml") and d["width_px"] == 1400
    code, text, _ = run(capsys, "draw", cert, "--out", tmp_path / "r.png", "--round", "2")
    assert code == 0 and "round 2" in text and (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("argv, message", [
    (["--out", "{tmp}/x.gif"], "name it .png or .svg"),
    (["--out", "{tmp}/x.png", "--round", "9"], "1 to 8"),
    (["--out", "{tmp}/x.png", "--round", "0"], "out of range"),
    (["--out", "{tmp}/x.png", "--size", "2"], "at least one element"),
    (["--out", "{tmp}/no/such/x.png"], "does not exist"),
])
def test_bad_input_is_one_line_and_exit_2(cert, tmp_path, capsys, argv, message):
    code, out, err = run(capsys, "draw", cert, *[a.format(tmp=tmp_path) for a in argv])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("synth: error:") and message in err
    assert not (tmp_path / "x.png").exists()


def test_unreadable_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for path in (bad, tmp_path / "missing.json"):
        code, _, err = run(capsys, "draw", path, "--out", tmp_path / "x.png")
        assert code == 2 and err.count("\n") == 1 and err.startswith("synth: error:")


def test_help_does_not_load_matplotlib():
    code = ("import sys\nfrom synth.cli import main\ntry:\n    main(['draw', '--help'])\nexcept SystemExit:\n    pass\n"
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("False") and "--round" in out
