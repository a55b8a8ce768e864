"""CI re-checks every certificate shipped in instances/."""

from pathlib import Path

import pytest

from synth.cli import main

INSTANCES = sorted((Path(__file__).resolve().parents[2] / "instances").glob("**/*.json"))


def test_there_are_instances():
    assert len(INSTANCES) >= 7


@pytest.mark.parametrize("path", INSTANCES, ids=[p.name for p in INSTANCES])
def test_instance_checks(path, capsys):
    code = main(["check", str(path)])
    out = capsys.readouterr().out
    assert code == 0, out
