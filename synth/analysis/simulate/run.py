"""Run the SimGrid driver in a subprocess of the system interpreter, and read its answer.

SimGrid's Python bindings (Debian's ``python3-simgrid``) import only under the system
``/usr/bin/python3``, so synth never imports them: :func:`write_inputs` writes the flows as
raw little-endian arrays (numpy ``tofile``; the driver reads them with the standard
library's ``array``) and :func:`run_driver` starts ``_driver.py`` once per message size
(a SimGrid engine lives once per process).  ``SYNTH_SIMGRID_PYTHON`` names another
interpreter that imports ``simgrid``.
"""

from __future__ import annotations

import collections
import functools
import json
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

import numpy as np

from synth.fileio import read_json
from synth.errors import OptionError, SynthError

__all__ = ["SimGridUnavailable", "INSTALL_HINT", "simgrid_python", "simgrid_available", "write_inputs", "run_driver",
           "wait_list_for", "Delays", "DRIVER", "DRIVERS", "failure_line"]

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_driver.py")
INSTALL_HINT = ("SimGrid's Python bindings are not installed: as root, run `apt-get install -y python3-simgrid` "
                "(Debian/Ubuntu, SimGrid 3.32; they import under /usr/bin/python3), or set SYNTH_SIMGRID_PYTHON "
                "to an interpreter that imports simgrid")
#: how the driver starts and waits for flows: ``mailboxes`` (the default) and ``short-lists``,
#: workers that each wait on a short list of comms (idle ones woken by a semaphore), starting
#: flows as puts to a mailbox per destination host, or as ``Comm.sendto_async``, whose detached
#: comms cost SimGrid 3.32 time linear in the flows in flight at every end (``_driver.py``);
#: ``lists``, the first driver, kept to measure against: :data:`CONTROLLERS` actors that each wait
#: on every flow they started, a cost linear in the list per finished flow (bench/simulate_driver.py)
DRIVERS = ("mailboxes", "short-lists", "lists")
#: the shortest wait list of a worker: lists grow to :func:`wait_list_for` so that
#: :data:`MAX_WORKERS` workers hold twice the busiest round's flows
WAIT_LIST = 8
#: the most workers (each an OS thread, whose stack takes two of the 65,530 memory maps
#: ``vm.max_map_count`` allows here: about 32,000 threads fail to start; fewer threads with
#: longer lists cost less, up to lists of a few hundred comms)
MAX_WORKERS = 2048
#: controllers of the ``lists`` driver
CONTROLLERS = 64
#: how often (wall seconds) the driver reports progress when :func:`run_driver` is given a callback
PROGRESS_SECONDS = 5.0
#: SimGrid's timing precision (seconds); its default 1e-9 is 0.1 % of a microsecond round
PRECISION_TIMING = 1e-15


@dataclass(frozen=True)
class Delays:
    """How the messages pay their latency: ``link_latency`` on every link, or ``m_delay[m]``, an index
    into the distinct ``delays`` (seconds) that message ``m`` waits before its flow (-1: none).

    Examples
    --------
    >>> Delays(0.0, [1e-6], np.array([0, -1])).m_delay.tolist()
    [0, -1]
    """

    link_latency: float
    delays: list
    m_delay: np.ndarray


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


def wait_list_for(flows, max_workers: int = MAX_WORKERS) -> int:
    """The wait list of a worker for ``flows``: at least :data:`WAIT_LIST`, and long enough for
    ``max_workers`` workers to hold twice the messages of the busiest round.

    Past ``wait_list * max_workers`` flows in flight the lists of the workers that release them
    grow without bound, and every end costs time linear in its list: the spine-leaf 12,24,12 star
    (82,656 concurrent flows) took 38 s of CPU with lists of 32 (2,048 workers; mean list 609,
    longest 13,984) and 23 s with lists of 128 (1,024 workers; mean list 61).
    """
    peak = int(np.bincount(np.asarray(flows.m_round, dtype=np.int64)).max()) if flows.n_messages else 0
    return max(WAIT_LIST, -(-2 * peak // max(1, int(max_workers))))


def write_inputs(directory, flows, bandwidth, delays: Delays, driver: str = "mailboxes",
                 controllers: int | None = None, wait_list: int | None = None,
                 max_workers: int | None = None) -> None:
    """Write the platform and the event graph of ``flows`` for the driver (``meta.json`` and arrays).

    ``bandwidth`` is bytes/s, one number for every link or one per link (``flows.n_links``);
    ``delays`` says how messages pay their latency (:class:`Delays`); ``driver`` is one of :data:`DRIVERS`;
    ``wait_list`` (default :func:`wait_list_for`) bounds a worker's list while there are at most
    ``max_workers`` (:data:`MAX_WORKERS`), ``controllers`` (default :data:`CONTROLLERS`) counts the ``lists``
    driver's actors.
    """
    if driver not in DRIVERS:
        raise OptionError(f"driver must be one of {', '.join(DRIVERS)}, not {driver!r}")
    max_workers = int(max_workers or MAX_WORKERS)
    rates = np.broadcast_to(np.asarray(bandwidth, dtype=np.float64), (flows.n_links,))
    if not np.all(np.isfinite(rates) & (rates > 0)):
        raise OptionError("every link needs a finite bandwidth above 0")
    meta = {"n_messages": flows.n_messages, "n_events": flows.n_messages + flows.n_gates,
            "n_routes": int(flows.r_src.size), "n_hosts": flows.n_hosts, "n_links": flows.n_links,
            "link_latency": float(delays.link_latency),
            "delays": [float(d) for d in delays.delays], "driver": driver,
            "wait_list": int(wait_list or wait_list_for(flows, max_workers)), "max_workers": max_workers,
            "controllers": int(controllers or CONTROLLERS),
            "precision_timing": PRECISION_TIMING}
    with open(os.path.join(directory, "meta.json"), "w") as f:
        json.dump(meta, f)
    for name, arr in (("m_route", flows.m_route), ("m_delay", delays.m_delay), ("m_owner", flows.m_src),
                      ("r_src", flows.r_src), ("r_dst", flows.r_dst), ("r_ptr", flows.r_ptr),
                      ("r_links", flows.r_links), ("e_count", flows.e_count), ("e_ptr", flows.e_ptr),
                      ("e_succ", flows.e_succ)):
        _write(directory, f"{name}.q", arr, np.int64)
    _write(directory, "l_bandwidth.d", rates, np.float64)


def run_driver(directory, tag: str, message_bytes, timeout: float | None = None, progress=None) -> tuple:
    """Simulate once with ``message_bytes`` per message: ``(result dict, finish times)``.

    ``progress``, when given, is called with a line such as ``"1,310,720 of 2,097,152 flows ended,
    simulated 51.2 us"`` about every :data:`PROGRESS_SECONDS` of a long run.

    Raises
    ------
    SimGridUnavailable
        Without SimGrid.
    SynthError
        If the driver fails or leaves events unfinished (a schedule whose dependencies never resolve).
    """
    python = simgrid_python()
    _write(directory, f"bytes-{tag}.q", message_bytes, np.int64)
    n = int(np.count_nonzero(np.asarray(message_bytes) > 0))
    tail = collections.deque(maxlen=200)   # enough to reach above a backtrace to its reason (failure_line)

    def read(stream):  # the driver's stderr (and stdout): progress lines to ``progress``, the rest kept
        for line in stream:
            part = line.split()
            if len(part) == 3 and part[0] == "progress":
                if progress is not None:
                    progress(f"{int(part[1]):,} of {n:,} flows ended, simulated {float(part[2]) * 1e6:.6g} us")
            elif line.strip():
                tail.append(line.strip())

    start = time.perf_counter()
    env = dict(os.environ, SYNTH_PROGRESS_SECONDS=str(PROGRESS_SECONDS if progress is not None else 0))
    with subprocess.Popen([python, DRIVER, str(directory), tag], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, env=env) as proc:
        reader = threading.Thread(target=read, args=(proc.stdout,), daemon=True)
        reader.start()
        try:
            returncode = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise SynthError(f"the simulation did not finish within {timeout:g} s") from None
        except KeyboardInterrupt:   # Ctrl-C or SIGTERM: the driver stops with us (Popen would wait for it)
            proc.kill()
            proc.wait()
            raise
        finally:
            reader.join(5)
    path = os.path.join(directory, f"result-{tag}.json")
    if not os.path.exists(path):
        raise SynthError(failure_line(tail, returncode))
    result = read_json(path)
    if result["unfinished_events"]:
        raise SynthError(f"the simulation ended with {result['unfinished_events']} events never started "
                         "(the schedule's dependencies do not resolve)")
    result["wall_seconds"] = time.perf_counter() - start
    finish = np.fromfile(os.path.join(directory, f"finish-{tag}.d"), dtype="<f8")
    return result, finish


#: lines of a backtrace (Python's, SimGrid's xbt, gdb-like frames) and of Python's caret markers: never the reason
_FRAME = re.compile(r"^(Traceback|File \"|\d+# |#\d+ |-> |at |in |0x[0-9a-fA-F]+|\[0x|Backtrace|[~^ ]+$)")
#: a line that says what went wrong
_REASON = re.compile(r"(Error\b|Exception\b|error:|terminate called|what\(\)|bad_alloc|Aborted|Segmentation|"
                     r"xbt_die|Assertion|Cannot allocate|Killed|CRITICAL)")
#: what a driver that ran out of memory (or of room for its actors' stacks) says
_MEMORY = re.compile(r"(bad_alloc|MemoryError|Cannot allocate memory|Resource temporarily unavailable|out of memory|"
                     r"mmap|ENOMEM)", re.I)


def failure_line(tail, returncode) -> str:
    """The one line that says why the SimGrid driver failed, from its output ``tail`` (stripped lines) and exit
    code: its reason (an exception, an error, a C++ terminate message), never a backtrace frame; and when it
    ran out of memory, what to do.

    >>> failure_line(["Backtrace (displayed in actor maestro):", "0# xbt::Backtrace::Backtrace() at ./src/x.cpp:25",
    ...               "1# simgrid::kernel::context::SwappedContext::SwappedContext in libsimgrid.so"], -6)
    'the SimGrid driver failed (killed by SIGABRT)'
    >>> print(failure_line(["terminate called after throwing an instance of 'std::bad_alloc'",
    ...                     "what():  std::bad_alloc", "0# foo at bar.cpp:1"], -6))   # doctest: +ELLIPSIS
    the SimGrid driver ran out of memory (killed by SIGABRT: what(): std::bad_alloc); raise the address-space ...
    """
    lines = [" ".join(str(line).split()) for line in tail]
    said = [line for line in lines if line and not _FRAME.match(line)]
    reasons = [line for line in said if _REASON.search(line)]
    how = f"exit {returncode}" if returncode is None or returncode >= 0 else f"killed by {_signal_name(-returncode)}"
    last = (reasons or said or [""])[-1][:300]
    detail = f"{how}: {last}" if last else how
    if any(_MEMORY.search(line) for line in lines):
        return (f"the SimGrid driver ran out of memory ({detail}); raise the address-space limit (ulimit -v) or "
                "simulate a smaller schedule")
    return f"the SimGrid driver failed ({detail})"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
