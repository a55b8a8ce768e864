"""``synth run`` of reduce-scatter and allgather: simulated ranks, and real MPI against
MPI_Reduce_scatter_block / MPI_Allgather."""

from dataclasses import replace

import numpy as np
import pytest

from synth.baselines import build_baseline
from synth.baselines.halves import baseline_half
from synth.errors import SynthError
from synth.runtime.mpi import launch as rmpi
from synth.runtime.mpi import _worker as worker
from synth.runtime.mpi.launch import run_schedule
from synth.runtime.mpi.simulate import simulate_run
from synth.runtime.plan import build_plan
from synth.schedule.collective import collective_half
from synth.schedule.lift import lift
from synth.schedule.sp import sp_allreduce
from synth.symmetry.torus import torus_gamma
from synth.topology.torus import parse_torus

HALVES = ("reduce-scatter", "allgather")


@pytest.fixture(scope="module")
def halves44():
    t = parse_torus("4x4")
    return {c: lift(collective_half(sp_allreduce(t), c), torus_gamma(t)) for c in HALVES}


@pytest.mark.parametrize("collective", HALVES)
@pytest.mark.parametrize("mode", ["rounds", "deps"])
def test_simulated_ranks(halves44, collective, mode):
    s = halves44[collective]
    assert simulate_run(s, elements=16 * 64 * 3, dtype="float64", mode=mode, seed=7)
    plan = build_plan(s)
    assert plan.layout == "owner"  # the runtimes' vector: rank r's block is the r-th p-th
    out = simulate_run(s, elements=16 * 64, mode=mode, return_outputs=True)
    lo, hi, want = worker.expected_part(collective, 5, 16, 16 * 64, "float64")
    assert np.array_equal(out[5][lo:hi], want) and (hi - lo == 64 if collective == "reduce-scatter" else True)
    assert not simulate_run(replace(s, blocks=s.blocks[:-1]), elements=16 * 64, mode=mode)
    assert simulate_run(baseline_half(build_baseline("bucket", parse_torus("4x4")), collective), elements=512,
                        mode=mode)


def test_allgather_start_is_undefined_outside_the_block():
    x = worker.start_vector("allgather", 2, 4, 8, "float32")
    assert x.tolist() == [worker.UNDEFINED] * 4 + worker.input_vector(2, 8, "float32")[4:6].tolist() + \
        [worker.UNDEFINED] * 2


@pytest.mark.parametrize("collective,mode,dtype", [("reduce-scatter", "rounds", "float32"),
                                                   pytest.param("allgather", "deps", "int64", marks=pytest.mark.slow)])
def test_mpi_16_ranks(halves44, collective, mode, dtype):
    pytest.importorskip("mpi4py")
    try:
        rmpi.find_mpiexec()
    except SynthError as exc:
        pytest.skip(str(exc))
    rep = run_schedule(halves44[collective], size="64KiB", iters=2, dtype=dtype, mode=mode, timeout=300)
    assert rep.ok, rep.errors
    text = rep.summary()
    assert worker.MPI_CALLS[collective] in text and "all equal" in text
    bad = run_schedule(replace(halves44[collective], blocks=halves44[collective].blocks[:-1]), size="16KiB",
                       iters=1, dtype=dtype, mode=mode, timeout=300)
    assert not bad.ok
