"""bench/simulate.py's ``--schedules``: one experiment split between processes, schedule by schedule."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from synth.analysis.simulate import INSTALL_HINT, simgrid_available

_BENCH = Path(__file__).resolve().parents[2] / "bench"
pytestmark = pytest.mark.skipif(not simgrid_available(), reason=INSTALL_HINT)


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(_BENCH))  # the bench scripts import _harness from their own folder
    try:
        spec = importlib.util.spec_from_file_location("bench_simulate", _BENCH / "simulate.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(_BENCH))


def test_schedules_that_name_nothing_in_the_experiment_are_refused(bench):
    with pytest.raises(SystemExit, match=r"square64 has none of nope, k=99 \(it has bucket, k=10, k=11, k=14, sp,"):
        bench.main(["--only", "square64", "--schedules", "nope,k=99"])


def test_schedules_runs_only_the_named_ones(bench, tmp_path):
    out = tmp_path / "rows.jsonl"
    # Trivance-L on 64x64 (24,230 messages): the cheapest schedule of the lazily built square64
    assert bench.main(["--only", "square64:64KiB", "--schedules", "trivance-l,nope", "--json", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["sched"], r["size"], r["messages"]) for r in rows] == [("trivance-l", 64 << 10, 24230)]
    assert 0 < rows[0]["sim_us"] < float("inf") and rows[0]["model_us"] > 0
