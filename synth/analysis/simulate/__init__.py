"""Replay a schedule on SimGrid, a flow-level network simulator, beside the cost model.

:func:`simulate` packs a certificate, an explicit file or a baseline into messages (one per
round, sender, receiver and route, as :mod:`synth.runtime.plan` does), turns each into a flow
along the schedule's own route, and runs SimGrid (CM02 with ``network/crosstraffic:0`` and
``network/TCP-gamma:0``, zero link latency so that links share by exact max-min) in a
subprocess of the system interpreter (:mod:`synth.analysis.simulate.run`).  Every message
pays ``alpha + hops * hop_latency`` before its flow starts; on a balanced round (every link
carries the same bytes, every route the same hops) that is the model's round cost
``alpha + lam * h + beta * max load``, so simulation and model agree to float precision there.

Links of their own bandwidth and latency (a topology that ``has_bandwidths`` / ``has_latencies``):
every SimGrid link runs at its link's bandwidth (GB/s; :func:`synth.analysis.cost.link_rates`,
else the network's rate), a switch is only a point where a route changes links (the routes are
the schedule's own), and a message pays its route's summed link latency as a delay instead of
``hops * hop_latency`` (a delay, then the bandwidth phase, as CM02 pays latency; setting it on the
links would weight CM02's sharing by route latency and break max-min sharing).  So a round whose
slowest link carries ``load`` at ``b`` GB/s takes ``load / b`` there, as the cost model says.

Where a message pays its hop latency (``hop_latency_at``): ``start`` (default), all of
``alpha + hops * hop_latency`` before its flow starts; ``end``, ``alpha`` before and
``hops * hop_latency`` after its last byte (its flow takes link bandwidth from ``alpha`` on).  A
packet network lies between the two: its first link is busy from the start, its last one only
after the head has crossed the route.  On balanced rounds both give the model's time.

Modes (:mod:`synth.analysis.simulate.packing`): ``rounds``, a node starts round ``s + 1``
when its own round-``s`` messages (sent and received) are done; ``deps``, a message starts
as soon as the data it carries is complete at its sender.

Cost (``bench/simulate_driver.py``, bench/RESULTS.md): 40 to 240 us of CPU per simulated message
whatever the number of concurrent flows (the driver keeps every SimGrid wait list short and starts
flows as mailbox puts, which SimGrid does not keep in a global list), plus 0.1 s to start SimGrid
per size; SimGrid's own re-solving of the sharing when concurrent flows end at different times is
the rest (the 16x16 depth-3 tree: 43,008 messages in 5.9 s of CPU; the spine-leaf 16,32,16 star:
523,264 messages, 261,632 of them at once, in 109 s).

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

import functools
import os
import tempfile
from dataclasses import dataclass, replace

import numpy as np

from synth.analysis.cost import Network, goodput_bound, link_class_rates, link_rates, model_time
from synth.analysis.simulate.packing import MODES, Flows, pack
from synth.analysis.simulate.run import (INSTALL_HINT, Delays, SimGridUnavailable, run_driver, simgrid_available,
                                         simgrid_python, write_inputs)
from synth.check.claims import require_valid
from synth.check.metrics import measure_explicit
from synth.errors import OptionError
from synth.runtime.plan import load_schedule
from synth.schedule.chunking import chunk_elements
from synth.schedule.weights import keep_chunks
from synth.units import format_size

__all__ = ["SimResult", "SimOptions", "simulate", "simulate_schedule", "simulated_seconds", "pack", "route_latency",
           "Flows", "MODES",
           "SimGridUnavailable", "INSTALL_HINT", "simgrid_python", "simgrid_available", "ENGINES", "LATENCY_AT"]

#: how ``--engine`` times a schedule: the cost model, or a SimGrid replay in rounds mode
ENGINES = ("model", "simgrid")
#: where a message pays ``hops * hop_latency``: before its flow starts, or after its last byte
LATENCY_AT = ("start", "end")


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
    hop_latency_at: str = "start"
    #: on a topology whose links carry bandwidths, its links by class (:func:`synth.analysis.cost.link_class_rates`;
    #: the network's one rate is then not used); empty otherwise
    link_classes: tuple = ()

    def to_json(self) -> dict:
        return {"schedule": self.label, "size": self.size, "mode": self.mode, "simulated_seconds": self.seconds,
                "model_seconds": self.model_seconds, "simulated_over_model": self.seconds / self.model_seconds,
                "goodput_bytes_per_s": self.goodput, "fraction_of_bound": self.fraction_of_bound,
                "messages": self.messages, "wall_seconds": self.wall_seconds, "cpu_seconds": self.cpu_seconds,
                "hop_latency_at": self.hop_latency_at}


@dataclass(frozen=True)
class SimOptions:
    """How :func:`simulate_schedule` runs.

    ``hop_latency_at`` (:data:`LATENCY_AT`) says whether a message pays its hop latency before its
    flow or after its last byte (the module docstring); ``driver`` is one of
    :data:`synth.analysis.simulate.run.DRIVERS` (``lists``, the first driver, only to measure
    against); ``model=False`` skips the cost model's time (``model_seconds`` is then NaN);
    ``timeout`` bounds the wall seconds of one driver run (None: no bound).

    Examples
    --------
    >>> SimOptions(hop_latency_at="end").driver
    'mailboxes'
    """

    hop_latency_at: str = "start"
    driver: str = "mailboxes"
    model: bool = True
    timeout: float | None = None


def route_latency(flows: Flows, topology, net: Network) -> np.ndarray:
    """Seconds of latency of every message's route: the sum of its links' latencies (µs) when the
    topology's links carry them, else ``hops * hop_latency`` (as the cost model counts).

    >>> from synth.topology import Topology
    >>> from synth.schedule import Block, Schedule, REDUCE, COPY
    >>> pair = Topology.from_links("pair", {"kind": "links"}, 2, [(0, 1), (1, 0)], latency=[2, 5])
    >>> s = Schedule(pair, 2, 2, (Block(1, REDUCE, np.array([0, 1]), np.array([[0], [1]])),
    ...                           Block(2, COPY, np.array([0, 1]), np.array([[1], [0]]))))
    >>> sorted((route_latency(pack(s, "rounds"), pair, Network()) * 1e6).round(6).tolist())
    [2.0, 2.0, 5.0, 5.0]
    """
    if not topology.has_latencies:
        return flows.m_hops * net.hop_latency
    per_route = np.bincount(np.repeat(np.arange(flows.r_src.size), np.diff(flows.r_ptr)),
                            weights=topology.link_latency[flows.r_links], minlength=flows.r_src.size)
    return per_route[flows.m_route] * 1e-6


def _delays(flows: Flows, latency, uniform: bool, net: Network) -> Delays:
    """How each message pays ``alpha`` and its route's ``latency`` (:class:`~synth.analysis.simulate.run.Delays`).

    When the latencies are ``uniform`` (``hops * hop_latency``) and every route has the same number of
    hops ``h``, each link gets latency ``(alpha + h * hop_latency) / h`` (every flow then has the same
    CM02 sharing penalty, so shares stay max-min); otherwise links get none and each message waits for a
    timer: ``delays`` are the distinct delays, ``m_delay`` each message's index into them (-1: none).
    """
    hops = flows.m_hops
    if uniform and (hops.size == 0 or (hops.min() == hops.max() and hops[0] > 0)):
        h = int(hops[0]) if hops.size else 1
        return Delays((net.alpha + h * net.hop_latency) / h, [], np.full(hops.size, -1, dtype=np.int64))
    return Delays(0.0, *_delay_index(net.alpha + latency))


def _delay_index(delay):
    """``(delays, m_delay)``: the distinct positive delays, and each event's index into them (-1: none)."""
    values, idx = np.unique(delay, return_inverse=True)
    keep = values > 0
    remap = np.where(keep, np.cumsum(keep) - 1, -1)
    return values[keep].tolist(), remap[idx.ravel()].astype(np.int64)


def _with_tails(flows: Flows, latency, net: Network):
    """``(flows', delays)`` where every message pays its route's ``latency`` after its flow.

    Message ``m`` waits ``alpha``, then streams; a zero-byte *tail* event ``M + m`` waits
    ``latency[m]`` after it, and whatever waited for ``m`` waits for its tail instead.
    Events of ``flows'``: messages ``0..M-1``, tails ``M..2M-1``, then the gates.
    """
    M = flows.n_messages
    pre_event = np.repeat(np.arange(M + flows.n_gates, dtype=np.int64), np.diff(flows.e_ptr))
    pre = pre_event + M  # an edge out of message m leaves from its tail; gates move up by M
    dep = np.where(flows.e_succ < M, flows.e_succ, flows.e_succ + M)
    pre = np.concatenate([np.arange(M, dtype=np.int64), pre])  # m -> tail m
    dep = np.concatenate([np.arange(M, 2 * M, dtype=np.int64), dep])
    E = 2 * M + flows.n_gates
    order = np.lexsort((dep, pre))
    twice = lambda a: np.concatenate([a, a])  # noqa: E731
    tails = replace(flows, n_messages=2 * M, m_route=twice(flows.m_route), m_hops=twice(flows.m_hops),
                    m_src=twice(flows.m_src), m_dst=twice(flows.m_dst), m_round=twice(flows.m_round),
                    e_count=np.bincount(dep, minlength=E).astype(np.int64), e_succ=dep[order],
                    e_ptr=np.concatenate([[0], np.cumsum(np.bincount(pre, minlength=E))]).astype(np.int64))
    return tails, Delays(0.0, *_delay_index(np.concatenate([np.full(M, net.alpha), latency])))


def simulate_schedule(schedule, weights, sizes, net: Network = Network(), mode: str = "rounds", label="schedule",
                      *, options: SimOptions | None = None, progress=None) -> list:
    """Simulate ``schedule`` (chunk ``weights``) at every size in ``sizes`` (bytes): one :class:`SimResult` each.

    ``options`` (:class:`SimOptions`) says where messages pay their hop latency, which driver runs,
    whether the cost model's time is computed and the timeout; ``progress``, when given, is called
    with a line of news every few seconds of a long run (:func:`synth.analysis.simulate.run.run_driver`).

    Raises
    ------
    SimGridUnavailable
        Without SimGrid (the message says how to install it).
    OptionError
        For an unknown ``mode`` or ``hop_latency_at``, or a size below one element.
    """
    opts = options or SimOptions()
    if mode not in MODES:
        raise OptionError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if opts.hop_latency_at not in LATENCY_AT:
        raise OptionError(f"`hop_latency_at` must be one of {', '.join(LATENCY_AT)}, not {opts.hop_latency_at!r}")
    simgrid_python()  # refuse before packing a big schedule
    flows = pack(schedule, mode)
    t = schedule.topology
    latency = route_latency(flows, t, net)
    driven, delays = (_with_tails(flows, latency, net) if opts.hop_latency_at == "end"
                      else (flows, _delays(flows, latency, not t.has_latencies, net)))
    bound = goodput_bound(t, net)
    p = t.n_compute
    classes = link_class_rates(t, net)
    out = []
    with tempfile.TemporaryDirectory(prefix="synth-simulate-") as directory:
        write_inputs(directory, driven, link_rates(t, net), delays, opts.driver)
        for i, size in enumerate(sizes):
            n = int(size) // net.element_bytes
            if n < 1:
                raise OptionError(f"size must be at least one element ({net.element_bytes} bytes), got {size}")
            chunks = chunk_elements(weights, n)
            message_bytes = flows.message_elements(chunks) * net.element_bytes
            if driven is not flows:  # the tails carry nothing
                message_bytes = np.concatenate([message_bytes, np.zeros_like(message_bytes)])
            news = None if progress is None else functools.partial(_news, progress, f"{label} at {format_size(size)}")
            result, _ = run_driver(directory, str(i), message_bytes, opts.timeout, news)
            t = float(result["time"])
            # a chunk without elements at this size (packed schedules: very unequal weights) moves nothing
            mt = model_time(measure_explicit(*keep_chunks(schedule, chunks)), net) if opts.model else float("nan")
            g = n * net.element_bytes * (p - 1) / (p * t) if t > 0 else float("inf")
            out.append(SimResult(label, int(size), mode, t, mt, g, g / bound, flows.n_messages,
                                 float(result["wall_seconds"]), float(result["run_cpu_seconds"]), opts.hop_latency_at,
                                 classes))
    return out


def _news(progress, what, line):
    progress(f"{what}: {line}")


def simulate(source, sizes, net: Network = Network(), mode: str = "rounds", *, timeout=None,
             hop_latency_at: str = "start", progress=None) -> list:
    """Simulate a certificate, an explicit file, a baseline or a schedule (see
    :func:`synth.runtime.plan.load_schedule`) at every size in ``sizes``: one :class:`SimResult` per size.

    A file is checked first (:func:`synth.check.claims.check_file`, as ``synth check`` does): a
    schedule that is not the collective it claims (dropped, duplicated or forged transmissions)
    or whose claims fail is never timed.

    Raises
    ------
    InvalidScheduleError
        When the checker finds the file INVALID; the message names the first problem.
    """
    if isinstance(source, (str, os.PathLike)):
        require_valid(source, "not simulated")
    schedule, weights, label = load_schedule(source)
    return simulate_schedule(schedule, weights, sizes, net, mode, label, progress=progress,
                             options=SimOptions(hop_latency_at=hop_latency_at, timeout=timeout))


def simulated_seconds(schedule, weights, sizes, net: Network = Network(), mode: str = "rounds") -> list:
    """Simulated seconds of ``schedule`` at every size in ``sizes`` (bytes per node): the ``simgrid``
    engine of :func:`synth.solving.sweep.sweep` and :func:`synth.analysis.compare.compare`."""
    return [r.seconds for r in simulate_schedule(schedule, weights, sizes, net, mode, options=SimOptions(model=False))]
