"""Measure a schedule: volumes and per-round link loads (the round lower bound: :mod:`synth.check.eccentricity`).

Two modes:

* **explicit**: every transmission of every chunk is counted link by link
  (:func:`measure_explicit`);
* **symmetric**: the lifted loads follow from the base schedule's per-orbit
  incidences and the verified group (:mod:`synth.symmetry.group`: generators are
  automorphisms, the action on links is free) (:func:`measure_symmetric`).

Loads are int64 and proven not to wrap before they are counted; the ratios of
:class:`Metrics` are exact fractions.  Ψ and the weight are normalized to the collective's
minimum volume: ``2N(p-1)`` for allreduce, ``N(p-1)`` for reduce-scatter and allgather
(derived in :mod:`synth.schedule.data`).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.symmetry.torus import torus_gamma
>>> from synth.schedule.sp import sp_allreduce
>>> from synth.schedule.lift import lift, lifted_weights
>>> from synth.schedule import chunk_elements
>>> t = parse_torus("4x4"); g = torus_gamma(t); b = sp_allreduce(t)
>>> m = measure_explicit(lift(b, g), chunk_elements(lifted_weights(b, g), 64))
>>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
(8, '1', '1', '1')
>>> measure_symmetric(b, g, chunk_elements(lifted_weights(b, g), 64)) == m
True
>>> loads = link_loads_symmetric(b, g, chunk_elements(lifted_weights(b, g), 64))
>>> loads.shape, tuple(loads.max(axis=1).tolist()) == m.max_load
((8, 64), True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from synth.check.capacity import link_capacities, max_ratio
from synth.check.dropped import drop_of
from synth.errors import ScheduleError, check_instance
from synth.schedule import ALLREDUCE, BaseSchedule, Schedule, positive_chunks
from synth.schedule.data import phases
from synth.symmetry.group import Group

__all__ = ["Metrics", "measure_explicit", "measure_symmetric", "link_loads_explicit", "link_loads_symmetric"]

_INT64_LIMIT = 1 << 63


def _load_bound(sizes, incidences, what: str) -> None:
    """Prove that int64 link loads cannot wrap, or refuse.

    A link's load in a round, a round's total load and every partial sum of them are at most
    ``sum_c size_c * incidences_c <= N * max_c incidences_c`` (``incidences_c``: route links of
    chunk ``c`` over the whole schedule), computed here with Python integers.

    Raises
    ------
    ScheduleError
        If that bound reaches ``2**63``.
    """
    total = sum(int(x) for x in np.asarray(sizes).ravel().tolist())
    worst = total * (int(np.max(incidences)) if np.size(incidences) else 0)
    if worst >= _INT64_LIMIT:
        raise ScheduleError(f"{total} elements over routes of up to {int(np.max(incidences))} links per {what} "
                            "give link loads beyond the int64 range; use fewer elements")


def _check_sizes(sizes, n_chunks: int, compute_nodes: int, n_transmissions: int) -> np.ndarray:
    if compute_nodes < 2:
        raise ScheduleError(f"an allreduce needs at least two compute nodes, the topology has {compute_nodes}")
    if n_transmissions == 0:
        raise ScheduleError("the schedule has no transmission")
    try:
        arr = np.asarray(sizes)
        if arr.dtype.kind not in "iu":
            raise TypeError
        arr = arr.astype(np.int64).ravel()
    except (TypeError, ValueError, OverflowError):
        raise ScheduleError("chunk sizes must be integers") from None
    if arr.size != n_chunks:
        raise ScheduleError(f"{arr.size} chunk sizes given for {n_chunks} chunks")
    positive_chunks(arr)
    return arr


@dataclass(frozen=True)
class Metrics:
    """What the checker measures of a schedule for ``elements`` input elements per node.

    Fractions are exact.  ``max_load[s-1]`` and ``total_load[s-1]`` are the
    largest and the summed link load (elements) of round ``s``; the mean load
    is ``total_load / links``; ``round_hops[s-1]`` is the longest route of
    round ``s``.  ``weight`` is ``Vol_phys / (2N)`` (``Vol_phys / N`` for a reduce-scatter or
    allgather): the tree weight ``W(T)`` for a tree schedule.  ``collective`` names what was
    executed; Ψ is normalized to its minimum volume.  ``round_time[s-1]`` is round ``s``'s
    ``max_e load_s(e) / bandwidth(e)`` (elements per GB/s, exact); the bandwidth term is their sum.
    ``has_bandwidths`` says whether the topology's links carry bandwidths of their own (GB/s; the cost
    model then times rounds by ``round_time``); on one whose links carry latencies
    (``has_latencies``), ``round_latency[s-1]`` is the largest summed link latency (µs) of a route of
    round ``s``, empty otherwise.  ``capacity`` is the summed bandwidth of all links (GB/s, exact; None when
    the links carry no bandwidths of their own, every link then 1).

    Ω (``omega``) is how far the rounds are from spreading their load over the links in proportion to the
    links' bandwidths: the bandwidth term over ``Vol_phys / capacity``, the time the same traffic would take
    if every round loaded every link in proportion to its bandwidth.  So ``Q = Ω Θ Ψ V_min / capacity``
    (``V_min`` the collective's minimum volume), Ω >= 1, and Ω = 1 exactly when every round loads every link
    in proportion to its bandwidth; with every link alike it is ``links * sum_s max_load / sum_s total_load``.
    """

    rounds: int
    compute_nodes: int
    links: int
    chunks: int
    elements: int
    transmissions: int
    vol_abs: int
    vol_phys: int
    max_route: int
    max_load: tuple = field(repr=False)
    total_load: tuple = field(repr=False)
    round_hops: tuple = field(repr=False, default=())
    collective: str = ALLREDUCE
    round_time: tuple = field(repr=False, default=())
    round_latency: tuple = field(repr=False, default=())
    has_bandwidths: bool = False
    capacity: Fraction | None = None

    @property
    def psi(self) -> Fraction:
        return Fraction(self.vol_abs, phases(self.collective) * self.elements * (self.compute_nodes - 1))

    @property
    def theta(self) -> Fraction:
        return Fraction(self.vol_phys, self.vol_abs)

    @property
    def omega(self) -> Fraction:
        """The bandwidth term over the time of the same traffic spread in proportion to the bandwidths (above)."""
        if self.capacity is None:
            return Fraction(self.links * sum(self.max_load), sum(self.total_load))
        return self.bandwidth_term * self.capacity / sum(self.total_load)

    @property
    def weight(self) -> Fraction:
        return Fraction(self.vol_phys, phases(self.collective) * self.elements)

    @property
    def bandwidth_term(self) -> Fraction:
        """``Q = sum_s max_e load_s(e) / bandwidth(e)`` in elements per GB/s, exact (:mod:`synth.check.capacity`):
        ``sum_s max_e load_s(e)`` elements when every link is 1 GB/s."""
        if self.round_time:
            return sum(self.round_time, Fraction(0))
        return Fraction(sum(self.max_load))

    def to_json(self) -> dict:
        return {
            "rounds": self.rounds, "compute_nodes": self.compute_nodes, "links": self.links,
            "chunks": self.chunks, "elements": self.elements, "transmissions": self.transmissions,
            "vol_abs": self.vol_abs, "vol_phys": self.vol_phys, "max_route": self.max_route,
            "psi": _fr(self.psi), "theta": _fr(self.theta), "omega": _fr(self.omega), "weight": _fr(self.weight),
            "bandwidth_term": _exact(self.bandwidth_term),
        }


def _fr(x: Fraction) -> str:
    return str(x)


def _exact(x: Fraction):
    """An integer as an int (as every bandwidth term was before links had bandwidths), else ``'a/b'``."""
    return int(x) if x.denominator == 1 else str(x)


def _round_load(blocks, sizes, distinct, n_links: int) -> np.ndarray:
    """The int64 load of every link in one round of an explicit schedule (``distinct``: the sizes' values)."""
    load = np.zeros(n_links, dtype=np.int64)
    for b in blocks:
        if distinct.size == 1:
            load += np.bincount(b.links.ravel(), minlength=n_links) * int(distinct[0])
            continue
        s = sizes[b.chunk]
        for value in np.unique(s):      # the sizes present in this block only (a block often holds one chunk)
            sel = s == value
            load += np.bincount(b.links[sel].ravel(), minlength=n_links) * int(value)
    return load


def _explicit_sizes(schedule: Schedule, chunk_sizes) -> np.ndarray:
    """The checked chunk sizes of an explicit schedule, its loads proven to fit int64 (:func:`_load_bound`)."""
    t = schedule.topology
    sizes = _check_sizes(chunk_sizes, schedule.n_chunks, t.n_compute, schedule.n_transmissions)
    incidences = np.zeros(schedule.n_chunks, dtype=np.int64)
    for b in schedule.blocks:
        if b.chunk.size and (b.chunk.min() < 0 or b.chunk.max() >= schedule.n_chunks):
            raise ScheduleError(f"round {b.round}: a chunk id lies outside 0..{schedule.n_chunks - 1}")
        incidences += np.bincount(b.chunk, minlength=schedule.n_chunks) * b.links.shape[1]
    _load_bound(sizes, incidences, "chunk")
    return sizes


def measure_explicit(schedule: Schedule, chunk_sizes) -> Metrics:
    """Volumes and per-round link loads counted transmission by transmission."""
    check_instance(schedule, "schedule", Schedule)
    t = schedule.topology
    sizes = _explicit_sizes(schedule, chunk_sizes)
    distinct = np.unique(sizes)
    caps = link_capacities(t)
    max_load = [0] * schedule.n_rounds
    total_load = [0] * schedule.n_rounds
    times = [Fraction(0)] * schedule.n_rounds
    vol_abs = vol_phys = n_trans = max_route = 0
    hops = [0] * schedule.n_rounds
    latency = [0.0] * schedule.n_rounds if t.has_latencies else []
    for rnd, blocks in schedule.rounds():
        for b in blocks:
            L = b.links.shape[1]
            s = sizes[b.chunk]
            n_trans += b.chunk.size
            max_route = max(max_route, L)
            hops[rnd - 1] = max(hops[rnd - 1], L)
            vol_abs += int(s.sum())
            vol_phys += int(s.sum()) * L
            if latency and b.chunk.size:
                latency[rnd - 1] = max(latency[rnd - 1], float(t.link_latency[b.links].sum(axis=1).max()))
        load = _round_load(blocks, sizes, distinct, t.n_links)
        max_load[rnd - 1] = int(load.max())
        total_load[rnd - 1] = int(load.sum())
        times[rnd - 1] = caps.round_time(load)
    return Metrics(schedule.n_rounds, t.n_compute, t.n_links, schedule.n_chunks, sum(sizes.tolist()), n_trans,
                   vol_abs, vol_phys, max_route, tuple(max_load), tuple(total_load), tuple(hops), schedule.collective,
                   tuple(times), tuple(latency), t.has_bandwidths, _capacity(t, caps))


def _symmetric_sizes(base: BaseSchedule, group, chunk_sizes) -> np.ndarray:
    """The checked chunk sizes of ``lift(base, group)`` as a components x ``|G|`` array, loads proven to fit int64."""
    sizes = _check_sizes(chunk_sizes, base.n_components * group.order, base.topology.n_compute,
                         base.n_transmissions)
    _load_bound(sizes, np.bincount(base.component, weights=base.route_lengths,
                                   minlength=base.n_components).astype(np.int64), "component")
    return sizes.reshape(base.n_components, group.order)


def _orbit_loads(base: BaseSchedule, group, sizes) -> np.ndarray:
    """Equal chunks per component: the load of every link of each orbit, per round (rounds x orbits).

    The elements map a base link of orbit ``O`` onto every link of ``O`` exactly ``|G|/|O|``
    times (orbit-stabilizer).
    """
    if base.route_links.size == base.n_transmissions:   # one link per route: no repeat of millions of rows
        inc_comp, inc_round = base.component, base.round
    else:
        L = base.route_lengths
        inc_comp, inc_round = np.repeat(base.component, L), np.repeat(base.round, L)
    multiplicity = group.order // group.orbit_sizes.astype(np.int64)  # |stabilizer| of a link of each orbit
    orbit = group.link_orbit[base.route_links]
    index = (inc_round - 1).astype(np.int64) * group.n_link_orbits + orbit
    n_cells = base.n_rounds * group.n_link_orbits
    weight = sizes[:, 0][inc_comp] * multiplicity[orbit]
    if weight.size and float(sizes[:, 0].max()) * float(multiplicity.max()) * weight.size < 2.0 ** 53:
        # every partial sum is an integer below 2**53, so float64 adds it exactly (bincount: no ufunc.at)
        return np.bincount(index, weights=weight, minlength=n_cells).astype(np.int64).reshape(base.n_rounds, -1)
    per_orbit = np.zeros(n_cells, dtype=np.int64)
    np.add.at(per_orbit, index, weight)
    return per_orbit.reshape(base.n_rounds, group.n_link_orbits)


def _lifted_round_loads(base: BaseSchedule, group, sizes):
    """Unequal chunks: yield the load of every link in each round ``1..S``, lifted link by link.

    Every incidence (a base route link of component ``c``) is mapped by every element ``g`` and adds
    ``sizes[c, g]`` to its image's load, all of a round at once (exact int64 sums).
    """
    L = base.route_lengths
    inc_comp, inc_round = np.repeat(base.component, L), np.repeat(base.round, L)
    used, inv = np.unique(base.route_links, return_inverse=True)
    images = group.link_images(used)                       # (G, used)
    order = np.argsort(inc_round, kind="stable")
    bounds = np.searchsorted(inc_round[order], np.arange(1, base.n_rounds + 2))
    for s in range(base.n_rounds):
        sel = order[bounds[s]:bounds[s + 1]]
        load = np.zeros(base.topology.n_links, dtype=np.int64)
        np.add.at(load, images[:, inv.ravel()[sel]].ravel(), sizes[inc_comp[sel]].T.ravel())
        yield load


def measure_symmetric(base: BaseSchedule, group, chunk_sizes, dropped=()) -> Metrics:
    """Metrics of ``lift(base, group, dropped)`` derived from the base schedule and the verified group.

    The elements map a base link of orbit ``O`` onto every link of ``O`` exactly
    ``|G|/|O|`` times (orbit-stabilizer), so when all chunks of a component have
    the same size every link of ``O`` carries ``size * |G|/|O| * (base incidences
    on O)`` in each round.  With unequal sizes the loads are lifted link by link.  ``dropped`` chips
    (leaves of every tree, :mod:`synth.check.dropped`) take their links and sends out of the counts.
    """
    check_instance(base, "base", BaseSchedule)
    check_instance(group, "group", Group)
    t = base.topology
    G = group.order
    sizes = _symmetric_sizes(base, group, chunk_sizes)
    cut = drop_of(base, group, sizes, dropped)
    net = cut.network
    L = base.route_lengths
    comp_total = [sum(row) for row in sizes.tolist()]  # Python ints
    count = np.bincount(base.component, minlength=base.n_components).tolist()
    links = np.bincount(base.component, weights=L, minlength=base.n_components).astype(np.int64)   # exact: < 2**53
    vol_abs = sum(a * b for a, b in zip(comp_total, count)) - cut.lost
    vol_phys = sum(a * b for a, b in zip(comp_total, links.tolist())) - cut.lost
    max_load = [0] * base.n_rounds
    total_load = [0] * base.n_rounds
    times = [Fraction(0)] * base.n_rounds
    caps = link_capacities(t)
    net_caps = caps if net is t else link_capacities(net)
    orbit_units = _orbit_units(group, caps.units)
    if bool(np.all(sizes == sizes[:, :1])) and orbit_units is not None:
        per_orbit = _orbit_loads(base, group, sizes)
        kept = np.bincount(group.link_orbit[cut.keep], minlength=group.n_link_orbits).astype(np.int64)
        alive = kept > 0     # orbits with a link left (all of them when no chip is dropped)
        for s in range(base.n_rounds):
            max_load[s] = int(per_orbit[s][alive].max())
            total_load[s] = int((per_orbit[s] * kept).sum())
            times[s] = max_ratio(per_orbit[s][alive], orbit_units[alive]) / caps.unit
    else:
        for s, load in enumerate(_lifted_round_loads(base, group, sizes)):
            load = load[cut.keep]
            max_load[s] = int(load.max())
            total_load[s] = int(load.sum())
            times[s] = net_caps.round_time(load)
    hops = np.zeros(base.n_rounds, dtype=np.int64)
    np.maximum.at(hops, base.round - 1, L)
    return Metrics(base.n_rounds, net.n_compute, net.n_links, G * base.n_components, sum(comp_total),
                   base.n_transmissions * G - cut.sends, vol_abs, vol_phys, int(L.max()) if L.size else 0,
                   tuple(max_load), tuple(total_load), tuple(int(h) for h in hops), base.collective, tuple(times),
                   _base_latency(base), t.has_bandwidths, _capacity(net, net_caps))


def _capacity(t, caps):
    """The summed bandwidth of every link (GB/s, exact) of a topology whose links carry bandwidths, else None."""
    return caps.capacity(np.ones(t.n_links, dtype=bool)) if t.has_bandwidths else None


def _base_latency(base: BaseSchedule) -> tuple:
    """The largest summed link latency (µs) of a route in every round of ``base`` (and of its lift: automorphisms
    keep latencies); empty when the topology's links carry none."""
    t = base.topology
    if not t.has_latencies:
        return ()
    per_route = np.bincount(np.repeat(np.arange(base.n_transmissions), base.route_lengths),
                            weights=t.link_latency[base.route_links], minlength=base.n_transmissions)
    out = np.zeros(base.n_rounds)
    np.maximum.at(out, base.round - 1, per_route)
    return tuple(out.tolist())


def _orbit_units(group, units):
    """The bandwidth units of each link orbit, or None when an orbit mixes bandwidths (then loads are lifted
    link by link; a verified group never mixes them)."""
    first = np.unique(group.link_orbit, return_index=True)[1]
    per_orbit = units[first]
    return per_orbit if np.array_equal(per_orbit[group.link_orbit], units) else None


def _rows(n_rounds: int, rounds) -> dict:
    """Round -> row of the output, for ``rounds`` (default every round ``1..n_rounds``)."""
    rounds = range(1, n_rounds + 1) if rounds is None else [int(s) for s in rounds]
    if any(not 1 <= s <= n_rounds for s in rounds):
        raise ScheduleError(f"rounds must lie in 1..{n_rounds}")
    return {s: i for i, s in enumerate(rounds)}


def link_loads_explicit(schedule: Schedule, chunk_sizes, rounds=None) -> np.ndarray:
    """The load of every link in each of ``rounds`` (default all; ``len(rounds) x E`` int64), counted as
    :func:`measure_explicit` counts."""
    sizes = _explicit_sizes(schedule, chunk_sizes)
    distinct = np.unique(sizes)
    rows = _rows(schedule.n_rounds, rounds)
    out = np.zeros((len(rows), schedule.topology.n_links), dtype=np.int64)
    for rnd, blocks in schedule.rounds():
        if rnd in rows:
            out[rows[rnd]] = _round_load(blocks, sizes, distinct, schedule.topology.n_links)
    return out


def link_loads_symmetric(base: BaseSchedule, group, chunk_sizes, rounds=None, dropped=()) -> np.ndarray:
    """The load of every link of ``lift(base, group, dropped)`` in each of ``rounds`` (default all;
    ``len(rounds) x E`` int64, ``E`` that network's links), as :func:`measure_symmetric` derives it: per link orbit
    when a component's chunks are equal."""
    sizes = _symmetric_sizes(base, group, chunk_sizes)
    keep = drop_of(base, group, sizes, dropped).keep
    rows = _rows(base.n_rounds, rounds)
    if bool(np.all(sizes == sizes[:, :1])):
        loads = _orbit_loads(base, group, sizes)[np.asarray(list(rows), dtype=np.int64) - 1][:, group.link_orbit]
        return loads[:, keep]
    out = np.zeros((len(rows), int(keep.sum())), dtype=np.int64)
    for s, load in enumerate(_lifted_round_loads(base, group, sizes), start=1):
        if s in rows:
            out[rows[s]] = load[keep]
    return out
