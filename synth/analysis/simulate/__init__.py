"""Replay a schedule on SimGrid, a flow-level network simulator, beside the cost model.

:func:`simulate` packs a certificate, an explicit file or a baseline into messages (one per
round, sender, receiver and route, as :mod:`synth.runtime.plan` does), turns each into a flow
along the schedule's own route, and runs SimGrid (CM02 with ``network/crosstraffic:0`` and
``network/TCP-gamma:0``, zero link latency so that links share by exact max-min) in a
subprocess of the system interpreter (:mod:`synth.analysis.simulate.run`).  Every message
pays ``alpha + hops * hop_latency`` before its flow starts; on a balanced round (every link
carries the same bytes, every route the same hops) that is the model's round cost
``alpha + lam * h + beta * max load``, so simulation and model agree to float precision there.

Modes (:mod:`synth.analysis.simulate.packing`): ``rounds``, a node starts round ``s + 1``
when its own round-``s`` messages (sent and received) are done; ``deps``, a message starts
as soon as the data it carries is complete at its sender.

Cost (``bench/simulate_driver.py``, bench/RESULTS.md): 40 to 140 us of CPU per simulated message
whatever the number of concurrent flows (the driver keeps every SimGrid wait list short), plus
0.1 s to start SimGrid per size; SimGrid's own re-solving of the sharing when concurrent flows end
at different times is the rest (the 16x16 depth-3 tree: 43,008 messages in 5.9 s of CPU).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.baselines import build_baseline
>>> b = build_baseline("ring", parse_torus("4"))
>>> r = simulate(b, [1 << 20])[0]  # doctest: +SKIP
>>> abs(r.seconds / r.model_seconds - 1) < 1e-9  # doctest: +SKIP
True
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass

import numpy as np

from synth.analysis.cost import Network, goodput_bound, model_time
from synth.analysis.simulate.packing import MODES, Flows, pack
from synth.analysis.simulate.run import (INSTALL_HINT, SimGridUnavailable, run_driver, simgrid_available,
                                         simgrid_python, write_inputs)
from synth.check.metrics import measure_explicit
from synth.errors import OptionError
from synth.runtime.plan import load_schedule
from synth.schedule.data import chunk_elements

__all__ = ["SimResult", "simulate", "simulate_schedule", "simulated_seconds", "pack", "Flows", "MODES",
           "SimGridUnavailable", "INSTALL_HINT", "simgrid_python", "simgrid_available", "ENGINES"]

#: how ``--engine`` times a schedule: the cost model, or a SimGrid replay in rounds mode
ENGINES = ("model", "simgrid")


@dataclass(frozen=True)
class SimResult:
    """One simulated run: the schedule at one message size."""

    label: str
    size: int
    mode: str
    seconds: float
    model_seconds: float
    goodput: float
    fraction_of_bound: float
    messages: int
    wall_seconds: float
    cpu_seconds: float = float("nan")  # the driver's CPU seconds in SimGrid's run (all its threads)

    def to_json(self) -> dict:
        return {"schedule": self.label, "size": self.size, "mode": self.mode, "simulated_seconds": self.seconds,
                "model_seconds": self.model_seconds, "simulated_over_model": self.seconds / self.model_seconds,
                "goodput_bytes_per_s": self.goodput, "fraction_of_bound": self.fraction_of_bound,
                "messages": self.messages, "wall_seconds": self.wall_seconds, "cpu_seconds": self.cpu_seconds}


def _delays(flows: Flows, net: Network):
    """``(link_latency, delays, m_delay)``: how each message pays ``alpha + hops * hop_latency``.

    When every route has the same number of hops ``h``, each link gets latency
    ``(alpha + h * hop_latency) / h`` (every flow then has the same CM02 sharing penalty, so shares
    stay max-min); otherwise links get none and each message waits for a timer: ``delays`` are the
    distinct delays, ``m_delay`` each message's index into them (-1: none).
    """
    hops = flows.m_hops
    if hops.size == 0 or (hops.min() == hops.max() and hops[0] > 0):
        h = int(hops[0]) if hops.size else 1
        return (net.alpha + h * net.hop_latency) / h, [], np.full(hops.size, -1, dtype=np.int64)
    delay = net.alpha + hops * net.hop_latency
    values, idx = np.unique(delay, return_inverse=True)
    idx = idx.ravel().astype(np.int64)
    keep = values > 0
    remap = np.where(keep, np.cumsum(keep) - 1, -1)
    return 0.0, values[keep].tolist(), remap[idx]


def simulate_schedule(schedule, weights, sizes, net: Network = Network(), mode: str = "rounds", label="schedule",
                      *, timeout=None, model=True, driver="short-lists") -> list:
    """Simulate ``schedule`` (chunk ``weights``) at every size in ``sizes`` (bytes): one :class:`SimResult` each.

    ``model=False`` skips the cost model's time (``model_seconds`` is then NaN); ``driver`` is one of
    :data:`synth.analysis.simulate.run.DRIVERS` (``lists``, the first driver, only to measure against).

    Raises
    ------
    SimGridUnavailable
        Without SimGrid (the message says how to install it).
    OptionError
        For an unknown ``mode`` or a size below one element.
    """
    if mode not in MODES:
        raise OptionError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    simgrid_python()  # refuse before packing a big schedule
    flows = pack(schedule, mode)
    link_latency, delays, m_delay = _delays(flows, net)
    bound = goodput_bound(schedule.topology, net)
    p = schedule.topology.n_compute
    out = []
    with tempfile.TemporaryDirectory(prefix="synth-simulate-") as directory:
        write_inputs(directory, flows, net.bandwidth, link_latency, delays, m_delay, driver)
        for i, size in enumerate(sizes):
            n = int(size) // net.element_bytes
            if n < 1:
                raise OptionError(f"size must be at least one element ({net.element_bytes} bytes), got {size}")
            chunks = chunk_elements(weights, n)
            message_bytes = flows.message_elements(chunks) * net.element_bytes
            result, _ = run_driver(directory, str(i), message_bytes, timeout)
            t = float(result["time"])
            mt = model_time(measure_explicit(schedule, chunks), net) if model else float("nan")
            g = n * net.element_bytes * (p - 1) / (p * t) if t > 0 else float("inf")
            out.append(SimResult(label, int(size), mode, t, mt, g, g / bound, flows.n_messages,
                                 float(result["wall_seconds"]), float(result["run_cpu_seconds"])))
    return out


def simulate(source, sizes, net: Network = Network(), mode: str = "rounds", *, timeout=None) -> list:
    """Simulate a certificate, an explicit file, a baseline or a schedule (see
    :func:`synth.runtime.plan.load_schedule`) at every size in ``sizes``: one :class:`SimResult` per size."""
    schedule, weights, label = load_schedule(source)
    return simulate_schedule(schedule, weights, sizes, net, mode, label, timeout=timeout)


def simulated_seconds(schedule, weights, sizes, net: Network = Network(), mode: str = "rounds") -> list:
    """Simulated seconds of ``schedule`` at every size in ``sizes`` (bytes per node): the ``simgrid``
    engine of :func:`synth.solve.sweep.sweep` and :func:`synth.analysis.compare.compare`."""
    return [r.seconds for r in simulate_schedule(schedule, weights, sizes, net, mode, model=False)]
