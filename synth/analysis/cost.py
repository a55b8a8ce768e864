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

**Links of unequal bandwidth and latency.**  A topology whose links carry bandwidths (GB/s,
``Topology.has_bandwidths``) runs link ``e`` at ``bandwidth[e] * 1e9`` bytes/s: a round lasts as
long as its slowest link, ``max_e load_s(e) / bandwidth[e]`` (the checker's
``Metrics.round_time``), and :attr:`Network.bandwidth` is not used.  A topology without
them (every link ``1``, the tori, HyperX, spine-leaf and unweighted files) runs every link at
:attr:`Network.bandwidth`: the topology's ``1`` stands for the network's link rate
(:func:`rate_unit`).  Likewise a topology whose links carry latencies (µs,
``has_latencies``) charges a round the largest summed link latency of its routes
(``Metrics.round_latency``) in place of ``lam * h_s``; without them the hop latency applies.

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

Two GPUs joined at 100 GB/s one way and 25 GB/s the other (with 2 µs of latency each): an
allreduce of 1 MB, each GPU sending its whole vector once, is limited by the slow direction:

>>> from synth.topology import Topology
>>> from synth.check import measure_explicit
>>> from synth.schedule import Block, Schedule, REDUCE, COPY
>>> pair = Topology.from_links("pair", {"kind": "links"}, 2, [(0, 1), (1, 0)], bandwidth=[100, 25],
...                           latency=[2, 2])
>>> s = Schedule(pair, 2, 2, (Block(1, REDUCE, np.array([0, 1]), np.array([[0], [1]])),
...                           Block(2, COPY, np.array([0, 1]), np.array([[1], [0]]))))
>>> m = measure_explicit(s, [125_000, 125_000])     # 250,000 elements of 4 bytes: 1 MB per GPU
>>> round(model_time(m, Network(alpha=0)) * 1e6, 3)  # 2 x (0.5 MB / 25 GB/s + 2 us)
44.0
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from synth.check.bounds.bandwidth import best_cut, collective_bound
from synth.check.metrics import Metrics, measure_explicit, measure_symmetric
from synth.errors import ScheduleError, check_instance
from synth.schedule.lift import lift, lifted_chunk_elements
from synth.schedule.weights import keep_chunks
from synth.topology.base import Topology
from synth.topology.link_classes import bandwidth_classes

__all__ = ["Network", "model_time", "round_times", "goodput", "goodput_bound", "rate_unit", "link_rates",
           "link_class_rates", "rates_json",
           "message_elements", "sized_metrics", "lifted_metrics",
           "PAPER_SIZES"]

PAPER_SIZES = tuple(2**k for k in range(16, 29))  # 64 KiB ... 256 MiB, the paper's sweep


#: bytes per second of a link of bandwidth 1 on a topology whose links carry bandwidths (they are in GB/s)
GB = 1e9


@dataclass(frozen=True)
class Network:
    """Link bandwidth (bytes/s), hop latency (s), per-round overhead alpha (s), bytes per element.

    ``bandwidth`` and ``hop_latency`` are the rates of a topology whose links carry no values of their
    own; links with bandwidths (GB/s) and latencies (µs) use those (the module docstring).
    """

    bandwidth: float = 400e9 / 8
    hop_latency: float = 400e-9
    alpha: float = 1e-6
    element_bytes: int = 4


def rate_unit(topology, net: Network = Network()) -> float:
    """Bytes per second that a link bandwidth of 1 stands for on ``topology``: 1 GB/s when its links
    carry bandwidths, else the network's link rate.

    >>> from synth.topology.torus import parse_torus
    >>> rate_unit(parse_torus("4")) == Network().bandwidth
    True
    """
    check_instance(topology, "topology", Topology, " (e.g. synth.parse_torus('4x4'))")
    check_instance(net, "net", Network)
    return GB if topology.has_bandwidths else float(net.bandwidth)


def link_rates(topology, net: Network = Network()) -> np.ndarray:
    """Bytes per second of every directed link of ``topology`` (float64, length ``E``; :func:`rate_unit`).

    >>> from synth.topology import Topology
    >>> pair = Topology.from_links("pair", {"kind": "links"}, 2, [(0, 1), (1, 0)], bandwidth=[300, 25])
    >>> link_rates(pair).tolist()
    [300000000000.0, 25000000000.0]
    """
    return topology.link_bandwidth * rate_unit(topology, net)


def link_class_rates(topology, net: Network = Network()) -> tuple:
    """``(class name or None, bytes/s, links)`` for every class of links of a topology whose links carry
    bandwidths (:func:`synth.topology.link_classes.bandwidth_classes`); empty when they carry none (every link
    then runs at the network's one rate).

    >>> from synth.topology.gpu import gpu_fabric
    >>> link_class_rates(gpu_fabric("dgx-a100", 2))
    (('nvswitch', 300000000000.0, 32), ('nic', 25000000000.0, 32), ('rail', 25000000000.0, 32))
    """
    if not topology.has_bandwidths:
        return ()
    unit = rate_unit(topology, net)
    return tuple((c.name, c.bandwidth * unit, c.links) for c in bandwidth_classes(topology))


def rates_json(classes, net: Network = Network()) -> dict:
    """The link rates a JSON report states: the network's one rate, or, on links with bandwidths of their own
    (``classes`` from :func:`link_class_rates`), none (``bandwidth_bytes_per_s`` null) and each class's.

    >>> rates_json(())
    {'bandwidth_bytes_per_s': 50000000000.0}
    >>> rates_json((("nic", 25e9, 32),))
    {'bandwidth_bytes_per_s': None, 'link_classes': [{'class': 'nic', 'bandwidth_bytes_per_s': 25000000000.0, 'links': 32}]}
    """
    if not classes:
        return {"bandwidth_bytes_per_s": net.bandwidth}
    return {"bandwidth_bytes_per_s": None,
            "link_classes": [{"class": name, "bandwidth_bytes_per_s": rate, "links": links}
                             for name, rate, links in classes]}


def _bandwidth_and_latency(metrics, net: Network):
    """Seconds of the slowest link and of the longest route of every round, as float64 arrays."""
    check_instance(metrics, "metrics", Metrics, " (e.g. synth.measure_symmetric(...))")
    check_instance(net, "net", Network)
    if metrics.has_bandwidths:   # links with bandwidths (GB/s): each round as long as its slowest link
        beta = np.array([float(x) for x in metrics.round_time], dtype=np.float64) * (net.element_bytes / GB)
    else:
        beta = np.asarray(metrics.max_load, dtype=np.float64) * (net.element_bytes / net.bandwidth)
    if metrics.round_latency:    # links with latencies (µs): the slowest route's sum
        lam = np.asarray(metrics.round_latency, dtype=np.float64) * 1e-6
    else:
        lam = net.hop_latency * np.asarray(metrics.round_hops or [metrics.max_route] * metrics.rounds,
                                           dtype=np.float64)
    return beta, lam


def round_times(metrics, net: Network = Network()) -> np.ndarray:
    """The three terms of every round's modeled time: a ``3 x S`` array of seconds whose rows are
    ``alpha``, the latency term (``lam * h_s``, or the longest route's link latencies) and the
    bandwidth term (``beta * max_e load_s(e)``, or the slowest link's ``load / bandwidth``); their sum
    is :func:`model_time`."""
    beta, lam = _bandwidth_and_latency(metrics, net)
    return np.stack([np.full(metrics.rounds, float(net.alpha)), lam, beta])


def model_time(metrics, net: Network = Network()) -> float:
    """Modeled seconds of a measured schedule (docs/spec.md §1 with hop latency; the module docstring
    says how links with their own bandwidths and latencies count)."""
    beta, lam = _bandwidth_and_latency(metrics, net)
    return float(metrics.rounds * net.alpha + lam.sum() + beta.sum())


def goodput(metrics, net: Network = Network()) -> float:
    """Bytes per second ``N (p-1) / (p T)``, ``N`` the input bytes per node."""
    check_instance(metrics, "metrics", Metrics, " (e.g. synth.measure_symmetric(...))")
    check_instance(net, "net", Network)
    n_bytes = metrics.elements * net.element_bytes
    p = metrics.compute_nodes
    return n_bytes * (p - 1) / (p * model_time(metrics, net))


def goodput_bound(topology, net: Network = Network(), collective: str = "allreduce") -> float:
    """Bytes per second no correct schedule of ``collective`` on ``topology`` exceeds under the cost model.

    ``N (p-1) bandwidth / (p Q)``, ``bandwidth`` the :func:`rate_unit`, ``Q`` the least bandwidth term
    of any such schedule of ``N`` elements per node (:func:`~synth.check.bounds.bandwidth.collective_bound` at the least cut, linear in ``N``, so
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
    unit = rate_unit(topology, net)
    p = topology.n_compute
    q = collective_bound(topology, p, collective, best_cut(topology))   # p elements: equal blocks for the halves
    return float(p * (p - 1) * unit / (p * q))


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


#: lifted transmissions up to which a size that leaves chunks empty is measured explicitly: 32x32's periodic timed
#: schedule 30 M; 16x16x16's (a group of order 1,024) 755 M, which took 15 GB
EXPLICIT_MAX = 50_000_000


def lifted_metrics(base, group, n_elements: int, dropped=()) -> Metrics:
    """The metrics of ``lift(base, group, dropped)`` with ``n_elements`` per node, what a size costs it.

    A packed schedule's chunks have very unequal weights, so at a small size some get no element: they move
    nothing (:func:`synth.schedule.weights.keep_chunks`, as a replay and a drawing count them), and the
    schedule of the chunks that have elements is measured explicitly; otherwise by the group
    (:func:`~synth.check.metrics.measure_symmetric`).  Raises ``ScheduleError`` where that explicit schedule would
    pass :data:`EXPLICIT_MAX` transmissions (a size it is not measured at, as one whose chunks need more elements).

    >>> from synth.schedule.sp import sp_allreduce
    >>> from synth.symmetry.torus import torus_gamma
    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("3"); b, g = sp_allreduce(t), torus_gamma(t)
    >>> lifted_metrics(b, g, 6).max_load, lifted_metrics(b, g, 2).max_load   # 6 chunks of 1, or 2 of them
    ((2, 2), (1, 1))
    """
    sizes = lifted_chunk_elements(base, group, n_elements)
    if sizes.min(initial=1) > 0:
        return measure_symmetric(base, group, sizes, dropped)
    lifted = base.n_transmissions * (1 if group is None else group.order)
    if lifted > EXPLICIT_MAX:
        raise ScheduleError(f"{int((sizes == 0).sum()):,} of its {sizes.size:,} chunks get no element, and measuring it "
                            f"without them lifts {lifted:,} transmissions (past {EXPLICIT_MAX:,})")
    return measure_explicit(*keep_chunks(lift(base, group, dropped), sizes))
