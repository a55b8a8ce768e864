"""The cost model of docs/spec.md §1, with hop latency: modeled time and goodput of a measured schedule.

``T = sum_s (alpha + lam * h_s + beta * max_e load_s(e))``: per round a fixed
overhead ``alpha``, the hop latency ``lam`` times the longest route ``h_s`` of
the round, and the busiest link's bytes at ``beta = 1 / bandwidth`` seconds per
byte.  Goodput ``G = N (p-1) / (p T)`` (``N`` in bytes) is at most :func:`goodput_bound`: ``T`` is at
least its bandwidth term, ``beta`` times the least ``Q`` any correct schedule of the collective has on the
network (:func:`synth.check.bounds.bandwidth.collective_bound`: volume, endpoint volume, per-vertex and
least cuts; docs/bounds.md, section 6).  On a torus that is ``D B / 2`` for allreduce, ``D`` links per
node (docs/spec.md §1), and ``D B`` for reduce-scatter and allgather, which move half the minimum
volume (``N(p-1)``, :mod:`synth.schedule.data`); on meshes, damaged and irregular networks it is what
their cuts and volume allow, never the least degree's ``D B / 2``.

Defaults follow the paper's simulations for the network: 400 Gb/s links and
400 ns per hop (100 ns of link latency, 300 ns of router processing).  The
paper gives no per-round constant; ``alpha`` defaults to 1 us, a typical
per-message start-up of a NIC and its software stack (our assumption, set it
with ``--alpha``).  With ``alpha = 0`` a depth-k tree saves no latency at all:
its few rounds carry routes of up to ``H`` hops, so the hop term alone equals
SP-allreduce's.

The sizes, rates and times it needs are read by :mod:`synth.units`.

Examples
--------
>>> from synth.check import measure_symmetric
>>> from synth.symmetry.torus import torus_gamma
>>> from synth.schedule.lift import lifted_weights
>>> from synth.schedule import chunk_elements
>>> from synth.schedule.sp import sp_allreduce
>>> from synth.topology.torus import parse_torus
>>> from synth.units import parse_size
>>> t = parse_torus("4x4"); g, b = torus_gamma(t), sp_allreduce(t)
>>> m = measure_symmetric(b, g, chunk_elements(lifted_weights(b, g), parse_size("1MiB") // 4))
>>> round(model_time(m) * 1e6, 2), round(goodput(m) / goodput_bound(t), 3)
(21.03, 0.467)
>>> terms = round_times(m); terms.shape, bool(abs(terms.sum() - model_time(m)) < 1e-15)
((3, 8), True)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from synth.check.bounds.bandwidth import best_cut, collective_bound
from synth.check.metrics import Metrics
from synth.errors import ScheduleError, check_instance
from synth.topology.base import Topology

__all__ = ["Network", "model_time", "round_times", "goodput", "goodput_bound", "message_elements", "sized_metrics",
           "PAPER_SIZES"]

PAPER_SIZES = tuple(2**k for k in range(16, 29))  # 64 KiB ... 256 MiB, the paper's sweep


@dataclass(frozen=True)
class Network:
    """Link bandwidth (bytes/s), hop latency (s), per-round overhead alpha (s), bytes per element."""

    bandwidth: float = 400e9 / 8
    hop_latency: float = 400e-9
    alpha: float = 1e-6
    element_bytes: int = 4


def _loads_and_hops(metrics, net: Network):
    """The busiest link's bytes and the longest route of every round, as float64 arrays."""
    check_instance(metrics, "metrics", Metrics, " (e.g. synth.measure_symmetric(...))")
    check_instance(net, "net", Network)
    loads = np.asarray(metrics.max_load, dtype=np.float64) * net.element_bytes
    hops = np.asarray(metrics.round_hops or [metrics.max_route] * metrics.rounds, dtype=np.float64)
    return loads, hops


def round_times(metrics, net: Network = Network()) -> np.ndarray:
    """The three terms of every round's modeled time: a ``3 x S`` array of seconds whose rows are
    ``alpha``, ``lam * h_s`` and ``beta * max_e load_s(e)`` (their sum is :func:`model_time`)."""
    loads, hops = _loads_and_hops(metrics, net)
    return np.stack([np.full(metrics.rounds, float(net.alpha)), net.hop_latency * hops, loads / net.bandwidth])


def model_time(metrics, net: Network = Network()) -> float:
    """Modeled seconds of a measured schedule (docs/spec.md §1 with hop latency)."""
    loads, hops = _loads_and_hops(metrics, net)
    return float(metrics.rounds * net.alpha + net.hop_latency * hops.sum() + loads.sum() / net.bandwidth)


def goodput(metrics, net: Network = Network()) -> float:
    """Bytes per second ``N (p-1) / (p T)``, ``N`` the input bytes per node."""
    check_instance(metrics, "metrics", Metrics, " (e.g. synth.measure_symmetric(...))")
    check_instance(net, "net", Network)
    n_bytes = metrics.elements * net.element_bytes
    p = metrics.compute_nodes
    return n_bytes * (p - 1) / (p * model_time(metrics, net))


def goodput_bound(topology, net: Network = Network(), collective: str = "allreduce") -> float:
    """Bytes per second no correct schedule of ``collective`` on ``topology`` exceeds under the cost model.

    ``N (p-1) bandwidth / (p Q)``, ``Q`` the least bandwidth term of any such schedule of ``N`` elements
    per node (:func:`~synth.check.bounds.bandwidth.collective_bound` at the least cut, linear in ``N``, so
    the bound is the same for every size): ``T >= beta Q`` bytes.

    Examples
    --------
    >>> from synth.topology.lattice import grid
    >>> from synth.topology.torus import parse_torus
    >>> net = Network(bandwidth=1.0)
    >>> goodput_bound(parse_torus("4x4"), net), goodput_bound(parse_torus("4x4"), net, "allgather")
    (2.0, 4.0)
    >>> goodput_bound(grid((4, 4), (False, False)), net)   # a mesh: its volume, not its corners' 2 x 1 / 2
    1.5
    """
    check_instance(topology, "topology", Topology, " (e.g. synth.parse_torus('4x4'))")
    check_instance(net, "net", Network)
    p = topology.n_compute
    q = collective_bound(topology, p, collective, best_cut(topology))   # p elements: equal blocks for the halves
    return float(p * (p - 1) * net.bandwidth / (p * q))


def message_elements(size, element_bytes, p, collective):
    """The elements of a message of ``size`` bytes: whole elements, a multiple of ``p`` for a half (equal blocks).

    >>> message_elements(1 << 20, 4, 63, "allreduce"), message_elements(1 << 20, 4, 63, "allgather")
    (262144, 262143)
    """
    n = size // element_bytes
    return n if collective == "allreduce" else n - n % p


def sized_metrics(measure, size, n, net, p, collective):
    """``(metrics, network)`` of a candidate at ``n`` elements (``measure(n)``, a message of ``size`` bytes on ``p``
    compute nodes), or in 1-byte elements when its chunks need more than ``n`` (the network then says so);
    ``(None, net)`` when even those are too few."""
    try:
        return measure(n), net
    except ScheduleError:           # a chunk would get no element
        fine = message_elements(size, 1, p, collective)
        if fine <= n:
            return None, net
    try:
        return measure(fine), replace(net, element_bytes=1)
    except ScheduleError:
        return None, net
