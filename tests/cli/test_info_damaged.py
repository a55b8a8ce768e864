"""synth info and synth bound on damaged pods: a few BFS, not one per vertex."""

import json

import pytest

from synth.cli import main
from synth.topology.base import Topology


@pytest.fixture
def few_bfs(monkeypatch):
    """Fail as soon as the pure-numpy BFS runs once per vertex orbit."""
    calls = []
    real = Topology.bfs

    def counted(self, sources, reverse=False):
        calls.append(1)
        assert len(calls) <= 64, "one BFS per vertex"
        return real(self, sources, reverse)

    monkeypatch.setattr(Topology, "bfs", counted)
    return calls


def test_info_on_a_damaged_torus_is_exact_within_budget(capsys, few_bfs):
    assert main(["info", "--torus", "64x64", "--fail-link", "0-1", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["diameter"] == 64 and "diameter_bounds" not in info and info["round_lower_bound"] == 127


def test_info_beyond_the_budget_gives_bounds(capsys, few_bfs):
    assert main(["info", "--torus", "128x128", "--fail-link", "0-1", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["diameter"] is None and info["diameter_bounds"] == [128, 130]
    assert info["round_lower_bound"] == 255
    assert main(["info", "--torus", "128x128", "--fail-link", "0-1"]) == 0
    assert "128..130 (bounds" in capsys.readouterr().out
