"""synth run: per-rank plans (in process) and real MPI executions (16 ranks; 64 ranks marked slow)."""

import argparse
import json
import os

import numpy as np
import pytest

from synth.baselines import build_baseline
from synth.errors import ScheduleError, SynthError
from synth.schedule.exchange import exchange_allreduce
from synth.schedule.forest import hub_parents
from synth.symmetry.torus import torus_gamma
from synth.schedule.lift import lift
from synth.runtime.mpi import launch as rmpi
from synth.runtime.mpi import parse_size, prepare_run, rank_plans, run_schedule, simulate_run
from synth.runtime.plan import build_plan, load_schedule
from synth.schedule import Block, Schedule, chunk_elements, tree_schedule
from synth.schedule.sp import sp_allreduce
from synth.topology.torus import parse_torus


@pytest.fixture(scope="module")
def cases44():
    t = parse_torus("4x4")
    g = torus_gamma(t)
    return {
        "sp": lift(sp_allreduce(t), g),
        "exchange": lift(exchange_allreduce(t), g),
        "k-hop": lift(tree_schedule(t, hub_parents(t, 2), 0), g),
        "bucket": build_baseline("bucket", t),
    }


# ------------------------------------------------------------------ without MPI
def test_hub_tree_is_a_depth_two_multi_hop_tree(cases44):
    from synth.check import execute

    s = cases44["k-hop"]
    assert s.n_rounds == 4 and execute(s) == []
    assert max(b.links.shape[1] for b in s.blocks) > 1  # routes of several hops


@pytest.mark.parametrize("name", ["sp", "exchange", "k-hop", "bucket"])
@pytest.mark.parametrize("mode", ["rounds", "deps"])
def test_simulated_ranks_compute_the_exact_sum(cases44, name, mode):
    for dtype in ("float32", "int64"):
        assert simulate_run(cases44[name], elements=1001, dtype=dtype, mode=mode)
    for seed in range(3):  # delayed deliveries, shuffled turns
        assert simulate_run(cases44[name], elements=257, dtype="float64", mode=mode, seed=seed)


@pytest.mark.parametrize("name", ["ring", "swing-b", "swing-l", "trivance-l", "recursive-doubling",
                                  "halving-doubling"])
def test_simulated_baselines(name):
    b = build_baseline(name, parse_torus("4x4"))
    assert simulate_run(b, elements=300, mode="rounds")
    assert simulate_run(b, elements=300, mode="deps", seed=1)


def test_simulation_detects_a_wrong_schedule(cases44):
    s = cases44["sp"]
    b = s.blocks[3]
    blocks = list(s.blocks)
    blocks[3] = Block(b.round, b.op, b.chunk[1:], b.links[1:])  # one transmission lost
    bad = Schedule(s.topology, s.n_chunks, s.n_rounds, tuple(blocks))
    assert not simulate_run(bad, elements=500, mode="rounds")
    assert not simulate_run(bad, elements=500, mode="deps")


def test_messages_are_packed_one_per_link_and_round(cases44):
    plan = build_plan(cases44["sp"])
    # SP on 4x4: 8 rounds x 64 directed links, each carrying exactly one message per round
    assert plan.n_messages == 8 * 64
    sizes = np.diff(plan.m_ptr)
    assert sizes.sum() == plan.n_transmissions and sizes.max() == 6
    assert plan.total_runs() < plan.total_runs("identity")


def test_rank_plans_are_consistent(cases44):
    s = cases44["exchange"]
    plan = build_plan(s)
    sizes = chunk_elements(np.ones(s.n_chunks, dtype=np.int64), 6400)
    plans = rank_plans(plan, sizes)
    assert len(plans) == 16
    # every send has a receive with the same tag and size at its peer, in the same order
    for r, pr in enumerate(plans):
        for peer in range(16):
            sent = [(t, n) for t, n, q in zip(pr["s_tag"], pr["s_n"], pr["s_peer"]) if q == peer]
            got = [(t, n) for t, n, q in zip(plans[peer]["r_tag"], plans[peer]["r_n"], plans[peer]["r_peer"]) if q == r]
            assert sent == got
        assert np.all(np.diff(pr["s_round"]) >= 0) and np.all(np.diff(pr["r_round"]) >= 0)
        # send runs cover exactly the message sizes
        assert np.array_equal(np.add.reduceat(pr["s_len"], pr["s_rptr"][:-1]), pr["s_n"])
        assert int(pr["d_count"].sum()) == int(pr["d_ptr"][-1])
    # the exchange round: the roots send and receive the same chunk, so those receives are not direct
    assert any((~p["r_direct"]).any() for p in plans)


def test_prepare_writes_one_file_per_rank(tmp_path, cases44):
    info = prepare_run(cases44["bucket"], 4096, "float64", tmp_path, mode="deps", iters=2)
    files = sorted(os.listdir(tmp_path))
    assert files[0] == "meta.json" and len(files) == 17
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta == {"ranks": 16, "elements": 4096, "dtype": "float64", "mode": "deps", "iters": 2, "warmup": 1}
    assert info.sizes.sum() == 4096 and info.rounds == 12


def test_parse_size():
    assert parse_size("1MiB") == 1 << 20
    assert parse_size("64KiB") == parse_size("64k") == 65536
    assert parse_size("1MB") == 10**6
    assert parse_size(4096) == 4096
    with pytest.raises(SynthError, match="cannot read the size"):
        parse_size("12 parsecs")


def test_bad_arguments(cases44):
    with pytest.raises(SynthError, match="unknown dtype"):
        simulate_run(cases44["sp"], dtype="float16")
    with pytest.raises(SynthError, match="unknown mode"):
        prepare_run(cases44["sp"], 10, "float32", ".", mode="fast")
    with pytest.raises(ScheduleError):
        load_schedule(42)


def test_missing_mpi4py_says_how_to_install(monkeypatch, cases44):
    real = rmpi.importlib.util.find_spec
    monkeypatch.setattr(rmpi.importlib.util, "find_spec", lambda name: None if name == "mpi4py" else real(name))
    with pytest.raises(SynthError, match=r"pip install -e '\.\[mpi\]'"):
        run_schedule(cases44["sp"])


def test_missing_launcher_says_how_to_install(cases44):
    pytest.importorskip("mpi4py")
    with pytest.raises(SynthError, match=r"not found; install the MPI extra: pip install -e '\.\[mpi\]'"):
        run_schedule(cases44["sp"], mpiexec="/nonexistent/mpiexec")


def test_report_text_and_json():
    rep = rmpi.RunReport(label="sp", ranks=16, elements=1024, dtype="float32", mode="rounds", iters=3, warmup=1,
                         rounds=8, chunks=64, messages=512, runs=944, schedule_s=[0.01, 0.02, 0.03],
                         allreduce_s=[0.01, 0.01, 0.01])
    assert rep.ok and rep.median_s == 0.02 and rep.bytes == 4096
    assert "schedule / MPI = 2.00" in rep.summary()
    assert json.loads(json.dumps(rep.to_json()))["schedule_median_s"] == 0.02


# ------------------------------------------------------------------ with MPI
def _mpi():
    pytest.importorskip("mpi4py")
    try:
        return rmpi.find_mpiexec()
    except SynthError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("name,mode,dtype", [
    ("sp", "rounds", "float32"),
    ("exchange", "deps", "float64"),
    ("k-hop", "deps", "int64"),
    ("bucket", "rounds", "float32"),
])
def test_mpi_16_ranks(cases44, name, mode, dtype):
    _mpi()
    rep = run_schedule(cases44[name], size="64KiB", iters=2, dtype=dtype, mode=mode, timeout=300)
    assert rep.ok, rep.errors
    assert rep.ranks == 16 and len(rep.schedule_s) == 2 and len(rep.allreduce_s) == 2
    assert all(x > 0 for x in rep.schedule_s + rep.allreduce_s)


def test_mpi_run_from_certificate_file_via_cli_glue(tmp_path, capsys):
    _mpi()
    from synth.check.claims import certify
    from synth.check.certificate import write_certificate
    from synth.cli.run import add_parser as add_run_command

    t = parse_torus("4x4")
    path = tmp_path / "sp.json"
    write_certificate(certify(sp_allreduce(t), torus_gamma(t)), path)
    p = argparse.ArgumentParser()
    add_run_command(p.add_subparsers(dest="command"))
    args = p.parse_args(["run", str(path), "--size", "16KiB", "--iters", "2", "--mode", "deps", "--json"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["ranks"] == 16 and out["mode"] == "deps" and out["bytes"] == 16384


def test_mpi_wrong_world_size_is_reported(tmp_path, cases44):
    mpiexec = _mpi()
    import subprocess
    import sys

    prepare_run(cases44["sp"], 64, "float32", tmp_path)
    proc = subprocess.run([*mpiexec, "-n", "2", sys.executable, rmpi.WORKER, str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    errors = [f for f in os.listdir(tmp_path) if f.startswith("error-")]
    assert errors and not (tmp_path / "result.json").exists(), proc.stderr
    assert "MPI world size is 2, expected 16" in (tmp_path / errors[0]).read_text()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["rounds", "deps"])
def test_mpi_64_ranks(mode):
    _mpi()
    t = parse_torus("8x8")
    rep = run_schedule(lift(sp_allreduce(t), torus_gamma(t)), size="256KiB", iters=2, mode=mode, timeout=900)
    assert rep.ok, rep.errors
    assert rep.ranks == 64


@pytest.mark.slow
def test_mpi_64_ranks_exchange_and_baseline():
    _mpi()
    t = parse_torus("8x8")
    rep = run_schedule(lift(exchange_allreduce(t), torus_gamma(t)), size="64KiB", iters=1, mode="deps", timeout=900)
    assert rep.ok, rep.errors
    rep = run_schedule(build_baseline("swing-b", t), size="64KiB", iters=1, mode="rounds", timeout=900)
    assert rep.ok, rep.errors


# ---------------------------------------------------------------- memory limits before launch
def test_a_size_beyond_memory_is_refused_before_any_rank_starts(tmp_path, monkeypatch):
    """--size 64GiB on 16 ranks used to start 16 ranks of 64 GiB each: one line now, nothing launched."""
    from synth.check.certificate import write_certificate
    from synth.solving import solve

    cert = tmp_path / "c.json"
    write_certificate(solve(parse_torus("4x4")).certificate, cert)
    monkeypatch.setattr(rmpi, "_launch", lambda *a: pytest.fail("a rank was started"))
    monkeypatch.setattr(rmpi, "find_mpiexec", lambda m=None: ["mpiexec"])
    with pytest.raises(SynthError, match=r"size .* needs about .* GiB for 16 ranks' .* available"):
        run_schedule(str(cert), size="64GiB")


def test_the_memory_check_is_the_jax_engines_too():
    from synth.runtime.memory import check_host_memory, jax_bytes, mpi_bytes

    check_host_memory(16, 1 << 10, 4, mpi_bytes, "ranks", have=1 << 30)
    for per in (mpi_bytes, jax_bytes):
        with pytest.raises(SynthError, match="this host has 1.0 GiB available"):
            check_host_memory(16, 1 << 30, 4, per, "ranks", have=1 << 30)


def test_a_worker_failure_is_one_line_without_its_traceback(tmp_path):
    """The error line names the rank and the exception; the traceback stays in the rank's file."""
    path = tmp_path / "error-1.txt"
    path.write_text("rank 3: MemoryError: Unable to allocate 64.0 GiB\nTraceback (most recent call last):\n"
                    '  File "_worker.py", line 1, in <module>\nMemoryError\n')
    assert rmpi._first_line(path) == "rank 3: MemoryError: Unable to allocate 64.0 GiB"
    tail = rmpi._last_line('Traceback (most recent call last):\n  File "x.py", line 2, in f\n    y()\n'
                           "    ^^^\nValueError: bad plan\n")
    assert tail == "ValueError: bad plan"


def test_an_interrupt_stops_the_mpi_job_too(tmp_path, python_sigint):
    """The job runs in its own session (Ctrl-C at the terminal never reaches it): an interrupt kills it."""
    import signal
    import sys
    import threading
    import time

    pid_file = tmp_path / "pid"
    child = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    timer = threading.Timer(3.0, os.kill, (os.getpid(), signal.SIGINT))   # the child has written its pid by then
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        rmpi._launch([sys.executable, "-c", child], dict(os.environ), 120)
    timer.join()
    assert time.monotonic() - t0 < 15
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_a_rank_failure_reaches_the_caller_as_one_line(tmp_path, monkeypatch):
    """A rank's error file becomes the run's one-line error (no MPI needed: the launch is stood in for)."""
    from synth.check.certificate import write_certificate
    from synth.solving import solve

    cert = tmp_path / "c.json"
    write_certificate(solve(parse_torus("4x4")).certificate, cert)

    def failing_launch(cmd, env, timeout):
        with open(os.path.join(cmd[-1], "error-3"), "w") as f:   # what _worker.py writes for a failing rank
            f.write("rank 3: ValueError: bad plan\nTraceback (most recent call last):\n")
        return 1, "", ""

    monkeypatch.setattr(rmpi, "find_mpiexec", lambda m=None: ["mpiexec"])
    monkeypatch.setattr(rmpi, "_launch", failing_launch)
    with pytest.raises(SynthError, match=r"^MPI run failed: rank 3: ValueError: bad plan \(`keep_dir` keeps"):
        run_schedule(str(cert), size="1KiB")
    with pytest.raises(SynthError, match=r"bad plan$"):
        run_schedule(str(cert), size="1KiB", keep_dir=str(tmp_path / "kept"))
