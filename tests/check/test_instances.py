"""CI re-checks every certificate shipped in instances/."""

from pathlib import Path

import pytest

from synth.cli import main

INSTANCES = sorted((Path(__file__).resolve().parents[2] / "instances").glob("**/*.json"))
#: the reduce-scatter / allgather halves of the 64x64 torus (seconds each) run with the slow tests
SLOW = {("reduce-scatter", "sp-64x64.json"), ("allgather", "sp-64x64.json")}
PARAMS = [pytest.param(p, marks=pytest.mark.slow) if (p.parent.name, p.name) in SLOW else p for p in INSTANCES]


def test_there_are_instances():
    assert len(INSTANCES) >= 7


@pytest.mark.parametrize("path", PARAMS, ids=[f"{p.parent.name}/{p.name}" for p in INSTANCES])
def test_instance_checks(path, capsys):
    code = main(["check", str(path)])
    out = capsys.readouterr().out
    assert code == 0, out
