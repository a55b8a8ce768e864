"""The cost model and the SimGrid replay on links of unequal bandwidth and latency."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from synth.analysis.cost import Network, goodput_bound, link_rates, model_time, rate_unit, round_times
from synth.analysis.simulate import INSTALL_HINT, SimOptions, simgrid_available, simulate_schedule
from synth.check import execute, measure_explicit, measure_symmetric
from synth.schedule import COPY, REDUCE, Block, Schedule
from synth.schedule.chunking import chunk_elements
from synth.schedule.lift import lift, lifted_weights
from synth.schedule.sp import sp_allreduce
from synth.schedule.user import shortest_path_tree
from synth.symmetry.search import user_group
from synth.symmetry.torus import torus_gamma
from synth.topology import Topology
from synth.topology.torus import parse_torus
from synth.topology.user import topology_from_json

needs_simgrid = pytest.mark.skipif(not simgrid_available(), reason=INSTALL_HINT)

MB = 1_000_000


def _pair(bandwidth, latency=None):
    """Two GPUs joined through a switch (vertex 2): GPU 1's uplink and downlink are slow."""
    links = [(0, 2), (2, 0), (1, 2), (2, 1)]
    return Topology.from_links("pair", {"kind": "links"}, 3, links, compute=[0, 1], bandwidth=bandwidth,
                               latency=latency)


def _pair_allreduce(t):
    """Chunk 0 reduced at GPU 1, chunk 1 at GPU 0, then copied back: every byte crosses each direction once."""
    up0, down0, up1, down1 = (int(t.link_ids([a], [b])[0]) for a, b in ((0, 2), (2, 0), (1, 2), (2, 1)))
    route = np.array([[up0, down1], [up1, down0]])
    s = Schedule(t, 2, 2, (Block(1, REDUCE, np.array([0, 1]), route[::-1].copy()),
                           Block(2, COPY, np.array([0, 1]), route.copy())))
    assert execute(s) == []
    return s


def test_a_round_lasts_as_long_as_its_slowest_link():
    t = _pair([300, 300, 25, 25])
    m = measure_explicit(_pair_allreduce(t), [MB // 8, MB // 8])   # 250,000 elements of 4 bytes
    assert m.has_bandwidths and m.round_time == (Fraction(MB // 8, 25), Fraction(MB // 8, 25))
    net = Network(alpha=0, hop_latency=0)
    assert model_time(m, net) == pytest.approx(2 * (MB / 2) / 25e9)   # 0.5 MB over 25 GB/s, twice
    faster = measure_explicit(_pair_allreduce(_pair([300, 300, 50, 50])), [MB // 8, MB // 8])
    assert model_time(faster, net) == pytest.approx(model_time(m, net) / 2)


def test_link_latencies_replace_the_hop_latency():
    t = _pair([300, 300, 25, 25], [1, 1, 3, 3])
    m = measure_explicit(_pair_allreduce(t), [MB // 8, MB // 8])
    assert m.round_latency == (4.0, 4.0)
    terms = round_times(m, Network(alpha=1e-6, hop_latency=1.0))   # the hop latency is not used
    assert terms[1].tolist() == pytest.approx([4e-6, 4e-6])
    assert model_time(m, Network(alpha=1e-6)) == pytest.approx(2 * (1e-6 + 4e-6 + 20e-6))


def test_equal_links_keep_the_networks_rate():
    t = parse_torus("4x4")
    assert rate_unit(t) == Network().bandwidth and link_rates(t, Network(bandwidth=7.0)).tolist() == [7.0] * t.n_links
    g, b = torus_gamma(t), sp_allreduce(t)
    m = measure_symmetric(b, g, chunk_elements(lifted_weights(b, g), 1 << 18))
    assert not m.has_bandwidths and m.round_latency == ()
    assert model_time(m) == pytest.approx(m.rounds * 1e-6 + 4e-7 * sum(m.round_hops)
                                          + sum(m.max_load) * 4 / Network().bandwidth)
    # a topology whose links say 1 GB/s each runs them at 1 GB/s, not at the network's rate
    weighted = dataclasses.replace(t, bandwidth=np.full(t.n_links, 2.0))
    assert rate_unit(weighted) == 1e9 and link_rates(weighted).tolist() == [2e9] * t.n_links
    assert goodput_bound(weighted) > 0


def test_symmetric_and_explicit_agree_on_weighted_links():
    # a ring of 6 whose clockwise links are twice as fast as the others, with latencies: two link orbits
    spec = {"vertices": 6, "directed": True, "links": [[v, (v + 1) % 6] for v in range(6)]
            + [[(v + 1) % 6, v] for v in range(6)], "bandwidth": [2.0] * 6 + [1.0] * 6, "latency": [0.5] * 6 + [2] * 6}
    t = topology_from_json(spec)
    g = user_group(t)
    assert g.n_link_orbits == 2
    b = shortest_path_tree(t)
    sizes = chunk_elements(lifted_weights(b, g), 1 << 12)
    sym = measure_symmetric(b, g, sizes)
    exp = measure_explicit(lift(b, g), sizes)
    assert len(sym.round_time) == sym.rounds == len(sym.round_latency) and sym.has_bandwidths
    assert sym.round_time == exp.round_time
    assert sym.round_latency == pytest.approx(exp.round_latency)
    assert max(sym.round_time) > 0 and max(sym.round_latency) > 0.5
    # unequal chunk sizes take the link-by-link path
    uneven = sizes.copy()
    uneven[0] += 3
    assert measure_symmetric(b, g, uneven).round_time == measure_explicit(lift(b, g), uneven).round_time


@needs_simgrid
def test_simgrid_gives_every_link_its_bandwidth_and_latency():
    t = _pair([300, 300, 25, 25], [1, 1, 3, 3])
    s = _pair_allreduce(t)
    net = Network(alpha=0)
    r, = simulate_schedule(s, np.ones(2, dtype=np.int64), [MB], net)
    # each round: 4 us of latency, then 0.5 MB through GPU 1's 25 GB/s link
    assert r.seconds == pytest.approx(2 * (4e-6 + 0.5 * MB / 25e9), rel=1e-9)
    assert r.model_seconds == pytest.approx(r.seconds, rel=1e-9)
    slow = simulate_schedule(_pair_allreduce(_pair([300, 300, 5, 5], [1, 1, 3, 3])), np.ones(2, dtype=np.int64),
                             [MB], net, options=SimOptions(model=False))[0]
    assert slow.seconds == pytest.approx(2 * (4e-6 + 0.5 * MB / 5e9), rel=1e-9)
