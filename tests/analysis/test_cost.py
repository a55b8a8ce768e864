"""The cost model against the closed form of docs/spec.md §1."""

import pytest

from synth.analysis.cost import Network, goodput, goodput_bound, model_time
from synth.check import measure_symmetric
from synth.errors import SynthError
from synth.symmetry.torus import torus_gamma
from synth.schedule.lift import lifted_weights
from synth.schedule import chunk_elements
from synth.schedule.sp import sp_allreduce
from synth.topology.torus import parse_torus
from synth.units import parse_bandwidth, parse_size, parse_time


@pytest.mark.parametrize("shape,size", [("8x8", "1MiB"), ("4x4x4", "64KiB"), ("16x16", "256MiB")])
def test_sp_time_matches_closed_form(shape, size):
    t = parse_torus(shape)
    g, b = torus_gamma(t), sp_allreduce(t)
    net = Network(alpha=1e-6)
    n = parse_size(size) // net.element_bytes
    m = measure_symmetric(b, g, chunk_elements(lifted_weights(b, g), n))
    p, D = t.n_vertices, t.degree
    n_bytes = n * net.element_bytes
    beta_term = 2 * n_bytes * (p - 1) / (p * D) * float(m.psi * m.theta * m.omega) / net.bandwidth
    expect = m.rounds * (net.alpha + net.hop_latency) + beta_term
    assert model_time(m, net) == pytest.approx(expect, rel=1e-12)
    if m.omega == 1:
        # fully bandwidth-optimal: only the latency terms separate goodput from the bound
        assert goodput(m, net) < goodput_bound(t, net)
        big = Network(alpha=0, hop_latency=0)
        assert goodput(m, big) == pytest.approx(goodput_bound(t, big), rel=1e-12)


def test_units():
    assert parse_size("64KiB") == 65536 and parse_size("1 MB") == 10**6
    assert parse_bandwidth("3.2Tbps") == pytest.approx(4e11)
    assert parse_time("1.6us") == pytest.approx(1.6e-6)
    for bad in ("1.5B", "64KiBs", "", "-1MiB", "0"):
        with pytest.raises(SynthError):
            parse_size(bad)
