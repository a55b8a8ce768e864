"""Run the SimGrid driver in a subprocess of the system interpreter, and read its answer.

SimGrid's Python bindings (Debian's ``python3-simgrid``) import only under the system
``/usr/bin/python3``, so synth never imports them: :func:`write_inputs` writes the flows as
raw little-endian arrays (numpy ``tofile``; the driver reads them with the standard
library's ``array``) and :func:`run_driver` starts ``_driver.py`` once per message size
(a SimGrid engine lives once per process).  ``SYNTH_SIMGRID_PYTHON`` names another
interpreter that imports ``simgrid``.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import time

import numpy as np

from synth.errors import OptionError, SynthError

__all__ = ["SimGridUnavailable", "INSTALL_HINT", "simgrid_python", "simgrid_available", "write_inputs", "run_driver",
           "DRIVER", "DRIVERS"]

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_driver.py")
INSTALL_HINT = ("SimGrid's Python bindings are not installed: as root, run `apt-get install -y python3-simgrid` "
                "(Debian/Ubuntu, SimGrid 3.32; they import under /usr/bin/python3), or set SYNTH_SIMGRID_PYTHON "
                "to an interpreter that imports simgrid")
#: how the driver starts and waits for flows: ``short-lists``, workers that each wait on at most
#: :data:`WAIT_LIST` comms (idle ones woken by a semaphore); ``lists``, the first driver, kept to
#: measure against: :data:`CONTROLLERS` actors that each wait on every flow they started, a cost
#: linear in the list per finished flow (bench/simulate_driver.py)
DRIVERS = ("short-lists", "lists")
#: the longest wait list of a ``short-lists`` worker
WAIT_LIST = 8
#: the most ``short-lists`` workers (each an OS thread, whose stack takes two of the 65,530 memory
#: maps ``vm.max_map_count`` allows here: about 32,000 threads fail to start)
MAX_WORKERS = 2048
#: controllers of the ``lists`` driver
CONTROLLERS = 64
#: SimGrid's timing precision (seconds); its default 1e-9 is 0.1 % of a microsecond round
PRECISION_TIMING = 1e-15


class SimGridUnavailable(SynthError):
    """No interpreter that imports ``simgrid`` was found (the message says how to install it)."""


@functools.lru_cache(maxsize=4)
def _probe(python: str) -> bool:
    try:
        done = subprocess.run([python, "-c", "import simgrid"], capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def simgrid_python() -> str:
    """The interpreter that imports ``simgrid``: ``$SYNTH_SIMGRID_PYTHON``, else ``/usr/bin/python3``.

    Raises
    ------
    SimGridUnavailable
        If it does not import ``simgrid`` (:data:`INSTALL_HINT`).
    """
    python = os.environ.get("SYNTH_SIMGRID_PYTHON") or "/usr/bin/python3"
    if not _probe(python):
        raise SimGridUnavailable(INSTALL_HINT)
    return python


def simgrid_available() -> bool:
    """Whether :func:`simgrid_python` finds an interpreter that imports ``simgrid``."""
    try:
        simgrid_python()
    except SimGridUnavailable:
        return False
    return True


def _write(directory, name, array, dtype):
    np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("<")).tofile(os.path.join(directory, name))


def write_inputs(directory, flows, bandwidth: float, link_latency: float, delays, m_delay, driver: str = "short-lists",
                 controllers: int | None = None, wait_list: int | None = None,
                 max_workers: int | None = None) -> None:
    """Write the platform and the event graph of ``flows`` for the driver (``meta.json`` and arrays).

    ``driver`` is one of :data:`DRIVERS`; ``wait_list`` (default :data:`WAIT_LIST`) bounds a
    ``short-lists`` worker's list while there are at most ``max_workers`` (:data:`MAX_WORKERS`),
    ``controllers`` (default :data:`CONTROLLERS`) counts the ``lists`` driver's actors.
    """
    if driver not in DRIVERS:
        raise OptionError(f"driver must be one of {', '.join(DRIVERS)}, not {driver!r}")
    meta = {"n_messages": flows.n_messages, "n_events": flows.n_messages + flows.n_gates,
            "n_routes": int(flows.r_src.size), "n_hosts": flows.n_hosts, "n_links": flows.n_links,
            "bandwidth": float(bandwidth), "link_latency": float(link_latency),
            "delays": [float(d) for d in delays], "driver": driver, "wait_list": int(wait_list or WAIT_LIST),
            "max_workers": int(max_workers or MAX_WORKERS),
            "controllers": int(controllers or CONTROLLERS),
            "precision_timing": PRECISION_TIMING}
    with open(os.path.join(directory, "meta.json"), "w") as f:
        json.dump(meta, f)
    for name, arr in (("m_route", flows.m_route), ("m_delay", m_delay), ("m_owner", flows.m_src),
                      ("r_src", flows.r_src), ("r_dst", flows.r_dst), ("r_ptr", flows.r_ptr),
                      ("r_links", flows.r_links), ("e_count", flows.e_count), ("e_ptr", flows.e_ptr),
                      ("e_succ", flows.e_succ)):
        _write(directory, f"{name}.q", arr, np.int64)


def run_driver(directory, tag: str, message_bytes, timeout: float | None = None) -> tuple:
    """Simulate once with ``message_bytes`` per message: ``(result dict, finish times)``.

    Raises
    ------
    SimGridUnavailable
        Without SimGrid.
    SynthError
        If the driver fails or leaves events unfinished (a schedule whose dependencies never resolve).
    """
    python = simgrid_python()
    _write(directory, f"bytes-{tag}.q", message_bytes, np.int64)
    start = time.perf_counter()
    try:
        done = subprocess.run([python, DRIVER, str(directory), tag], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SynthError(f"the simulation did not finish within {timeout:g} s") from None
    path = os.path.join(directory, f"result-{tag}.json")
    if not os.path.exists(path):
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-1:] or ["no output"]
        raise SynthError(f"the SimGrid driver failed (exit {done.returncode}): {tail[0][:300]}")
    with open(path) as f:
        result = json.load(f)
    if result["unfinished_events"]:
        raise SynthError(f"the simulation ended with {result['unfinished_events']} events never started "
                         "(the schedule's dependencies do not resolve)")
    result["wall_seconds"] = time.perf_counter() - start
    finish = np.fromfile(os.path.join(directory, f"finish-{tag}.d"), dtype="<f8")
    return result, finish
