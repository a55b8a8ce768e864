"""bench/failures.py --set pod: each case solved (or repaired) by the CLI in a subprocess, measured and costed."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(_BENCH))  # the bench scripts import _harness, _evaluate and _pod from their own folder
    try:
        spec = importlib.util.spec_from_file_location("bench_failures_pod", _BENCH / "failures.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module, sys.modules["_pod"]
    finally:
        sys.path.remove(str(_BENCH))


def test_the_pod_set_names_issue_50s_cases(bench):
    failures, pod = bench
    assert failures.SETS["pod"] == pod.POD
    assert ("16x16x16", "l2000-2016", "repair") in pod.POD
    assert ("16x16", "l0-1+l37-53+l100-101+l200-216", "solve") in pod.POD
    assert pod.pod_argv("16x16", "l0-1+n1.1") == ["--torus", "16x16", "--fail-link", "0-1", "--fail-node", "1.1"]


def test_a_solve_and_a_repair_row_on_a_small_torus(bench, tmp_path):
    failures, _ = bench
    out = tmp_path / "rows.jsonl"
    failures.main(["--only", "4x4:l0-1:solve,4x4:l0-1:repair", "--sizes", "1MiB,256MiB", "--workdir", str(tmp_path),
                   "--json", str(out), "--time-limit", "2"])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["how"], r["exit"], r["check_exit"]) for r in rows] == [("solve", 0, 0), ("repair", 0, 0)]
    for r in rows:
        assert r["cpu_s"] > 0 and r["peak_gb"] > 0.01 and r["check_cpu_s"] > 0
        assert 0 < r["gz_bytes"] < r["bytes"] == (tmp_path / f"case{rows.index(r)}" / "c.json").stat().st_size
        assert 75 < r["fraction"] <= 100 and r["rounds"] >= 8 and r["delta"] == 3
        # the model at both sizes, the healthy 4x4 faster, RS+AG's ceiling: 3 links x 400 Gb/s / 2
        assert r["healthy 256MiB"] > r["gbps 256MiB"] > r["gbps 1MiB"] > 0
        assert r["rsag 1MiB"] == pytest.approx(600.0) == r["rsag 256MiB"]
    repaired = rows[1]
    assert repaired["algorithm"] == "repair" and repaired["notes"][0].startswith("healthy trees")
    assert any(n.startswith("first valid schedule in") for n in repaired["notes"])
    # the repair certifies the layered class's bound: its schedule is within it at every size
    assert repaired["layered 256MiB"] >= repaired["gbps 256MiB"] * 0.999


def test_a_failed_command_is_a_row_with_its_reason(bench, tmp_path):
    _, pod = bench
    row = pod.pod_case("4x4", "l0-5", "solve", tmp_path, [1 << 20])   # 0 and 5 are no neighbours
    assert row["exit"] == 2 and "synth: error:" in row["note"] and "fraction" not in row


def test_a_commands_peak_is_its_own_not_its_parents(bench, tmp_path):
    # ru_maxrss of a child counts the peak of the parent it was started from (the goodput of the cases before):
    # a check of 1.7 GB was reported at 5.16 GB
    import numpy as np

    _, pod = bench
    held = np.ones(50_000_000)   # the parent's 400 MB
    code, _wall, _cpu, peak, _out, _err = pod.run_measured(["solve", "--torus", "4x4"], tmp_path)
    assert code == 0 and 10e6 < peak < 300e6 and held.sum() == 50_000_000
