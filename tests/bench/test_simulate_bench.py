"""bench/simulate.py runs its experiments as campaigns: one task per (case, schedule), built where it runs."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from synth.analysis.simulate import INSTALL_HINT, simgrid_available
from synth.campaign import Store

_BENCH = Path(__file__).resolve().parents[2] / "bench"
pytestmark = pytest.mark.skipif(not simgrid_available(), reason=INSTALL_HINT)


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(_BENCH))  # the bench scripts import _harness from their own folder; tasks call simulate
    try:
        spec = importlib.util.spec_from_file_location("bench_simulate", _BENCH / "simulate.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(_BENCH))


def test_listing_an_experiment_builds_nothing(bench):
    notes = []
    tasks = bench.tasks_of("square64", None, notes)  # 134 M transmissions per schedule, were any built
    names = [t.arguments()["schedule"] for t in tasks]
    assert names == ["sp", "swing-l", "trivance-l", "swing-b", "trivance-b", "bucket", "k=14", "k=11", "k=10"]
    assert len({t.key for t in tasks}) == len(tasks)


def test_a_campaign_of_the_smoke_experiment_and_its_restart(bench, tmp_path, capsys):
    out, store = tmp_path / "rows.jsonl", tmp_path / "s.sqlite"
    assert bench.main(["--only", "smoke", "--cluster", "serial", "--store", str(store), "--json", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((r["sched"], r["size"]) for r in rows) == [("bucket", 64 << 10), ("k=2", 64 << 10)]
    assert all(0 < r["sim_us"] < float("inf") and r["model_us"] > 0 for r in rows)
    with Store(store) as s:
        assert s.counts()["done"] == 2
    capsys.readouterr()
    again = tmp_path / "again.jsonl"
    assert bench.main(["--only", "smoke", "--cluster", "serial", "--store", str(store), "--json", str(again)]) == 0
    assert "2 tasks: 2 finished before, 0 run now" in capsys.readouterr().out
    def parsed(path):
        return sorted((json.loads(line) for line in path.read_text().splitlines()), key=lambda r: r["sched"])
    assert parsed(again) == parsed(out)


def test_a_baseline_that_does_not_apply_is_a_note(bench, monkeypatch):
    t = bench.parse_torus("4x4")
    monkeypatch.setattr(bench, "cases", lambda exp, notes, sizes: [("4x4", bench._baselines(t, ("trivance-l", "nope"),
                                                                                            notes), (1024,), [], ())])
    result = bench.simulate_case("smoke", 0, "nope")
    assert result["rows"] == [] and "4x4: nope left out: " in result["notes"][0]
