"""The plan says what the solve runs: for every network family, ``plan(request)`` against the certificate."""

from __future__ import annotations

import json
import time

import pytest

from synth.cli import main
from synth.solving import SolveRequest, plan, run
from synth.topology.failures import damage, parse_failures
from synth.topology.hyperx import parse_hyperx
from synth.topology.lattice import twisted
from synth.topology.spec import build_topology
from synth.topology.spineleaf import parse_spine_leaf, spine_leaf
from synth.topology.torus import parse_torus
from synth.topology.user import topology_from_json

FAST = 20.0


def _ring(n):
    links = [[i, (i + 1) % n] for i in range(n)] + [[(i + 1) % n, i] for i in range(n)]
    return topology_from_json({"format": "synth-topology", "version": 1, "name": f"ring {n}", "vertices": n,
                               "links": links})


def _lollipop():
    """A triangle with a tail: no symmetry balances a shortest-path tree."""
    pairs = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4)]
    links = [list(p) for p in pairs] + [[b, a] for a, b in pairs]
    return topology_from_json({"format": "synth-topology", "version": 1, "name": "lollipop", "vertices": 5,
                               "links": links})


def _damaged(shape, links):
    t = parse_torus(shape)
    return damage(t, parse_failures(t, links=links))


CASES = {
    "sp": (lambda: parse_torus("4x4"), {}),
    "exchange": (lambda: parse_torus("4x4"), {"exchange": True}),
    "odd exchange": (lambda: parse_torus("3x3"), {"exchange": True}),
    "balanced": (lambda: parse_torus("3x4"), {}),
    "khop tree": (lambda: parse_torus("4x4"), {"depth": 2}),
    "khop exchange": (lambda: parse_torus("4x4"), {"depth": 2, "exchange": True}),
    "khop family": (lambda: parse_torus("3x4"), {"depth": 2}),
    "hyperx": (lambda: parse_hyperx("3x3"), {}),
    "spine-leaf": (lambda: parse_spine_leaf("2,4,2"), {}),
    "lattice sp": (lambda: twisted((2, 4)), {}),
    "lattice khop": (lambda: twisted((4, 8)), {"depth": 2}),
    "grid": (lambda: build_topology({"kind": "grid", "shape": [3, 3], "wrap": [False, False]}), {}),
    "grid depth": (lambda: build_topology({"kind": "grid", "shape": [4, 4], "wrap": [False, False]}), {"depth": 2}),
    "user balanced": (lambda: _ring(6), {}),
    "user packed": (_lollipop, {}),
    "damaged timed": (lambda: _damaged("4x4", ["0-1"]), {}),
    "damaged layered": (lambda: _damaged("4x4", ["0-1"]), {"collective": "reduce-scatter"}),
    "damaged depth": (lambda: _damaged("4x4", ["0-1"]), {"depth": 2}),
    "damaged routed": (lambda: damage(spine_leaf(2, 3, 2), parse_failures(spine_leaf(2, 3, 2), links=["6-9"])), {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_plan_names_the_construction_that_runs(case, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path))
    make, options = CASES[case]
    request = SolveRequest(make(), time_limit=FAST, **options)
    chosen = plan(request)
    result = run(request)
    assert result.certificate.provenance["algorithm"] in chosen.algorithms, (case, chosen)
    if len(chosen.algorithms) == 1:
        assert chosen.group_name in (result.certificate.provenance.get("group") or chosen.group_name)
    assert chosen.solves == (result.certificate.solver != {}), case


def test_the_plan_says_the_cache_answers(tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path))
    request = SolveRequest(parse_torus("4x4"), depth=2, time_limit=FAST)
    first = plan(request)
    assert first.construction == "khop-tree" and not first.cached and first.solves
    run(request)
    again = plan(request)
    assert again.cached and not again.solves and again.time_limit is None


def test_an_unknown_option_is_named():
    from synth.errors import OptionError

    with pytest.raises(OptionError, match="unknown option 'dpeth'"):
        SolveRequest(parse_torus("4x4"), dpeth=2)


def test_plan_prints_and_solves_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "c.json"
    start = time.perf_counter()
    code = main(["solve", "--torus", "8x8", "--depth", "3", "--plan", "--out", str(out)])
    assert code == 0 and time.perf_counter() - start < 10
    text = capsys.readouterr()
    assert "construction  khop-tree" in text.out and "cached        False" in text.out
    assert "note:" not in text.err
    assert not out.exists() and not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_plan_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path))
    assert main(["solve", "--torus", "6x4", "--plan", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["construction"] == "balanced-family" and data["solves"] is True and data["time_limit"] == 60.0
    assert data["group"] == "translations-negation" and data["algorithms"] == ["balanced-bfs-trees"]


def test_the_note_follows_the_plan(tmp_path, monkeypatch, capsys):
    """An all-odd torus with --exchange builds BFS trees: the note says so (it used to say exchange forests)."""
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path))
    assert main(["solve", "--torus", "3x5", "--exchange", "--time-limit", str(FAST)]) == 0
    err = capsys.readouterr().err
    assert "note: solving balanced BFS trees (CP-SAT) on torus 3x5" in err


def test_every_kind_of_network_has_a_planner():
    """The dispatch derives from the table of network kinds: every row's solve path has its planner."""
    from synth.solving.planning import PLANNERS
    from synth.topology.kinds import KINDS

    assert {row.solve_path for row in KINDS} == set(PLANNERS)
