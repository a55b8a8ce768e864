"""A CP-SAT search (C code, minutes long) stops at once on Ctrl-C and SIGTERM, and raises.

Before, CP-SAT caught Ctrl-C itself and ended as if its time limit had come (the balance model
then went on to certify and write), and SIGTERM waited for the search's own limit.
"""

import os
import signal
import threading
import time

import pytest
from ortools.sat.python import cp_model

from synth.models.backends.interrupt import cpsat_solve, stop_on_signal


class Stop(KeyboardInterrupt):
    """What the CLI's SIGTERM handler raises (synth.cli.Terminated)."""


def _golomb(marks=12):
    """A Golomb ruler of 12 marks: CP-SAT needs far more than a minute to prove the optimum."""
    m = cp_model.CpModel()
    x = [m.new_int_var(0, marks * marks, f"x{i}") for i in range(marks)]
    m.add(x[0] == 0)
    diffs = []
    for i in range(marks):
        for j in range(i + 1, marks):
            d = m.new_int_var(1, marks * marks, f"d{i}_{j}")
            m.add(d == x[j] - x[i])
            diffs.append(d)
    m.add_all_different(diffs)
    for i in range(marks - 1):
        m.add(x[i] < x[i + 1])
    m.minimize(x[-1])
    return m


@pytest.fixture
def sigterm_raises(python_sigint):
    """SIGTERM raises as under the CLI (and SIGINT as in Python: the ``python_sigint`` fixture)."""
    previous = signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(Stop()))
    yield
    signal.signal(signal.SIGTERM, previous)


@pytest.mark.parametrize("sig, kind", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, Stop)])
def test_a_signal_stops_cpsat_at_once_and_propagates(sig, kind, sigterm_raises):
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = 60.0
    solver.parameters.num_workers = 1
    timer = threading.Timer(0.5, os.kill, (os.getpid(), sig))
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(kind):
        cpsat_solve(solver, _golomb())
    assert time.monotonic() - t0 < 5.0
    timer.join()


def test_without_a_signal_the_block_runs_and_leaves_no_wakeup_fd():
    before = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(before)
    with stop_on_signal(lambda: None):
        pass
    assert signal.set_wakeup_fd(before) == before
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = 0.5
    assert cpsat_solve(solver, _golomb(5)) == cp_model.OPTIMAL


def test_another_signal_does_not_stop_the_search():
    """Only SIGINT and SIGTERM stop it: a SIGUSR1 with a Python handler (which also wakes the watcher) does not."""
    seen = []
    previous = signal.signal(signal.SIGUSR1, lambda *_: seen.append(1))
    try:
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = 2.0
        solver.parameters.num_workers = 1
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGUSR1))
        t0 = time.monotonic()
        timer.start()
        status = cpsat_solve(solver, _golomb())
        timer.join()
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert seen and status == cp_model.FEASIBLE and time.monotonic() - t0 >= 1.5
