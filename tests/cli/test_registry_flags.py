"""Flags built from the library's registries and limits of their own: the baseline names in
``synth baseline --help`` come from :data:`synth.baselines.BASELINES`, and ``--depth`` has its own
upper limit (a tree's depth is below its vertex count), not the seed's."""

import pytest

import synth.baselines
from synth.cli import main
from synth.cli._common import MAX_DEPTH, MAX_SEED
from synth.topology.base import MAX_VERTICES


def test_baseline_help_lists_the_registry(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "1000")  # one line: argparse would wrap the list at its hyphens
    monkeypatch.setitem(synth.baselines.BASELINES, "fake-baseline", lambda t: None)
    with pytest.raises(SystemExit):
        main(["baseline", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert ", ".join(synth.baselines.BASELINES) in text and "fake-baseline" in text


def test_depth_has_its_own_limit(capsys):
    assert MAX_DEPTH == MAX_VERTICES < MAX_SEED
    assert main(["solve", "--torus", "4x4", "--depth", str(MAX_DEPTH + 1)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("synth: error: ") and f"out of range (1 to {MAX_DEPTH:,})" in err
    assert main(["solve", "--torus", "3x3", "--depth", str(MAX_DEPTH), "--json"]) == 0
