"""bench/machines.py and bench/failures.py: the Ring on a damaged torus, the row of one schedule, the tables."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from synth.analysis.cost import goodput
from synth.analysis.simulate import INSTALL_HINT, simgrid_available
from synth.check import execute, measure_explicit
from synth.schedule import chunk_elements
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus

_BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", _BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def scripts():
    sys.path.insert(0, str(_BENCH))  # the bench scripts import _harness and _evaluate from their own folder
    try:
        yield _load("failures"), _load("machines"), _load("_evaluate")
    finally:
        sys.path.remove(str(_BENCH))


def _damaged(links=(), nodes=()):
    t = parse_torus("4x4")
    return damage(t, parse_failures(t, list(links), list(nodes)))


def test_the_ring_avoids_a_failed_link_and_detours_around_a_failed_chip(scripts):
    failures, _, _ = scripts
    t = _damaged(links=["0.0-0.1", "2.2-2.3"])
    ring = failures.ring_on_cycle(t)
    assert execute(ring.schedule) == [] and ring.schedule.n_rounds == 2 * (16 - 1)
    assert "detour" not in ring.info  # a cycle of the snake's family avoids both links
    m = measure_explicit(ring.schedule, chunk_elements(ring.weights, 1 << 12))
    assert m.max_route == 1
    chip = failures.ring_on_cycle(_damaged(nodes=["1.1"]))
    assert execute(chip.schedule) == [] and chip.schedule.n_rounds == 2 * (15 - 1)
    assert chip.info["detour"].startswith("1 step(s)")  # 15 chips on a bipartite torus: no Hamiltonian cycle
    assert measure_explicit(chip.schedule, chunk_elements(chip.weights, 15 << 8)).max_route == 2


def test_a_row_measures_what_the_checker_and_the_model_say(scripts):
    _, _, ev = scripts
    t = parse_torus("4x4")
    cand = ev.solved(None, t)
    row = ev.evaluate(t, cand, [1 << 20], sim=False)
    m = measure_explicit(cand.schedule, chunk_elements(cand.weights, (1 << 20) // 4))
    assert row["algorithm"] == "sp-allreduce" and row["rounds"] == 8
    assert row["bw"] == pytest.approx(100) and row["q_per_n"] == pytest.approx(15 / 32)
    assert row["model 1MiB"] == pytest.approx(goodput(m) * 8 / 1e9)
    tiny = ev.evaluate(t, cand, [16], sim=False)  # 4 elements, 64 chunks: padded to one element per chunk
    assert "padded to 64 elements" in tiny["note"] and tiny["model 16B"] > 0
    refused = ev.baseline("bucket", _damaged(links=["0.0-0.1"]))
    assert ev.evaluate(t, refused, [1 << 20])["note"].startswith("bucket is defined on")


@pytest.mark.skipif(not simgrid_available(), reason=INSTALL_HINT)
def test_simgrid_equals_the_model_on_a_balanced_schedule(scripts):
    _, _, ev = scripts
    t = parse_torus("4x4")
    row = ev.evaluate(t, ev.solved(None, t), [1 << 20])
    assert row["sim 1MiB"] == pytest.approx(row["model 1MiB"], rel=1e-6)


def test_failures_table_has_the_healthy_reference_and_the_ring(scripts, capsys):
    failures, _, _ = scripts
    failures.main(["--only", "4x4:none,4x4:l0.0-0.1,mesh4x4:none", "--no-sim", "--json"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    packing = [r for r in rows if r["table"] == "packing"]
    packed = ("layered-packing", "timed-packing")   # timed trees are kept where they beat the layered LP
    assert [r["network"] for r in packing] == ["4x4", "4x4", "mesh4x4"]
    assert packing[0]["algorithm"] == "sp-allreduce" and {r["algorithm"] for r in packing[1:]} <= set(packed)
    good = [r for r in rows if r["table"] == "goodput"]
    assert [r["algorithm"] for r in good if r["reference"]] == ["sp-allreduce"]
    damaged = [r for r in good if r["failures"] == "l0.0-0.1"]
    assert damaged[0]["algorithm"] in packed and damaged[1]["algorithm"] == "ring (cycle)"
    assert damaged[2]["algorithm"].startswith("bucket, swing") and "rounds" not in damaged[2]
    assert damaged[0].get("sim_over_healthy 1MiB") is None  # --no-sim: nothing to divide
    mesh = [r for r in good if r["network"] == "mesh4x4"]
    assert mesh[0]["model 1MiB"] > mesh[1]["model 1MiB"]  # the packing schedule beats the Ring on the mesh


def test_machines_table_twisted_beside_plain(scripts, capsys):
    _, machines, _ = scripts
    machines.main(["--only", "pair:4x8", "--sizes", "1MiB", "--no-sim", "--json"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    rounds = {(r["net"], r["algorithm"]): r.get("rounds") for r in rows}
    assert rounds[("twisted 4x8", "sp-allreduce")] == 8 and rounds[("torus 4x8", "balanced-bfs-trees")] == 12
    refused = [r for r in rows if r["net"] == "twisted 4x8" and "rounds" not in r]
    assert len(refused) == 1 and "coordinate rings" in refused[0]["note"]


def test_timed_lp_bench_puts_both_methods_side_by_side(capsys):
    sys.path.insert(0, str(_BENCH))
    try:
        bench = _load("timed_lp")
    finally:
        sys.path.remove(str(_BENCH))
    bench.main(["--only", "4x4:0-1:5", "--time-limit", "20", "--json"])
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["method"] for r in rows] == ["simplex", "ipm"]
    assert rows[0]["x simplex"] == 1.0
    # the same class and pricing: both end at the same LP value on this small torus, within a percent
    assert rows[1]["lp"] == pytest.approx(rows[0]["lp"], abs=1.0) and 0 < rows[1]["lp_share"] <= 1
