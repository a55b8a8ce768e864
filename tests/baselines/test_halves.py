"""The reduce-scatter and allgather phases of the allreduce baselines (synth.baselines.halves)."""

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from synth.baselines import build_baseline
from synth.baselines.halves import baseline_half
from synth.check import execute
from synth.check.claims import check_file
from synth.cli import main
from synth.errors import TopologyError
from synth.topology.torus import parse_torus

VERIFIER = Path(__file__).resolve().parents[2] / "tools" / "verify_explicit.py"
PHASED = [("ring", "4x4"), ("bucket", "4x4"), ("swing-b", "4x4"), ("trivance-b", "3x3"),
          ("halving-doubling", "4x4"), ("bucket", "3x5")]


@pytest.mark.parametrize("collective", ["reduce-scatter", "allgather"])
@pytest.mark.parametrize("name,shape", PHASED, ids=[f"{n}-{s}" for n, s in PHASED])
def test_phases_execute_and_verify(tmp_path, name, shape, collective):
    full = build_baseline(name, parse_torus(shape))
    half = baseline_half(full, collective)
    assert execute(half.schedule) == []
    m, whole = half.measure(), full.measure()
    assert m.psi == 1 and m.rounds * 2 == whole.rounds and m.theta == whole.theta
    path = tmp_path / "b.jsonl"
    half.write(path)
    assert check_file(str(path)).valid
    out = subprocess.run([sys.executable, str(VERIFIER), str(path), "--json"], capture_output=True, text=True)
    assert out.returncode == 0 and json.loads(out.stdout)["valid"], out.stdout
    moved = half.schedule.owner.copy()
    j = int((moved != moved[0]).argmax())
    moved[0], moved[j] = moved[j], moved[0]  # two chunks swap owners: blocks stay equal, the data does not follow
    assert execute(replace(half.schedule, owner=moved))


@pytest.mark.parametrize("name", ["swing-l", "trivance-l", "recursive-doubling"])
def test_latency_variants_have_no_phases(name):
    with pytest.raises(TopologyError, match="no reduce-scatter and allgather phases"):
        baseline_half(build_baseline(name, parse_torus("4x4") if name != "trivance-l" else parse_torus("3x3")),
                      "reduce-scatter")


def test_folded_sides_are_refused():
    with pytest.raises(TopologyError, match="owns no chunk"):
        baseline_half(build_baseline("swing-b", parse_torus("3x3")), "allgather")


def test_cli_baseline_and_compare(capsys):
    assert main(["baseline", "ring", "--torus", "3x3", "--collective", "reduce-scatter", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["collective"], out["rounds"], out["psi"]) == ("reduce-scatter", 8, "1")
    assert main(["baseline", "swing-l", "--torus", "4x4", "--collective", "allgather"]) == 2
    assert capsys.readouterr().err.startswith("synth: error: baseline swing-l has no")
    assert main(["compare", "--torus", "4x4", "--collective", "allgather", "--sizes", "1MiB", "--json",
                 "--algorithms", "sp,bucket,swing-b"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["algorithm"], r["rounds"]) for r in rows] == [("sp", 4), ("bucket", 6), ("swing-b", 4)]
    assert all(0 < r["fraction_of_bound"] <= 1 for r in rows)
