"""Every engine runs a packed schedule on a damaged 4x4 torus (one failed chip: 15 ranks or devices)."""

import json

import pytest

from synth.analysis.simulate import INSTALL_HINT, simgrid_available
from synth.cli import main
from synth.errors import SynthError
from synth.runtime import mpi as rmpi


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    path = tmp_path_factory.mktemp("damaged") / "d44.json"
    assert main(["solve", "--torus", "4x4", "--fail-node", "1.1", "--fail-link", "0.0-0.1", "--out", str(path)]) == 0
    return path


def test_explicit_export_checks(damaged, tmp_path, capsys):
    out = tmp_path / "d.jsonl"
    assert main(["export", str(damaged), "--format", "explicit", "--out", str(out)]) == 0
    assert main(["check", str(out)]) == 0
    header = json.loads(out.read_text().splitlines()[0])
    assert header["topology"]["failed"] == [[0, 1], 5] and 5 not in header["compute"]


@pytest.mark.skipif(not simgrid_available(), reason=INSTALL_HINT)
def test_simulate(damaged, capsys):
    assert main(["simulate", str(damaged), "--size", "1MiB", "--json"]) == 0


def test_mpi(damaged, capsys):
    pytest.importorskip("mpi4py")
    try:
        rmpi.find_mpiexec()
    except SynthError as exc:
        pytest.skip(str(exc))
    assert main(["run", str(damaged), "--engine", "mpi", "--size", "16KiB", "--iters", "2", "--warmup", "1"]) == 0
    assert "all equal" in capsys.readouterr().out


def test_jax(damaged, capsys):
    pytest.importorskip("jax")
    assert main(["run", str(damaged), "--engine", "jax", "--size", "16KiB", "--iters", "2", "--warmup", "1"]) == 0
    assert "all equal" in capsys.readouterr().out
