"""Links with bandwidths: the bandwidth term sum_s max_e load/bandwidth, the bounds with capacities against
brute force on tiny graphs, and the checker refusing a certificate or explicit file whose bandwidths changed."""

import itertools
import json
from fractions import Fraction

import numpy as np
import pytest

from synth.check.bounds.bandwidth import (BOUND_KEY, CUT_KEY, FRACTION_KEY, bandwidth_bound, best_cut,
                                          collective_bound, cut_capacity)
from synth.check.capacity import exact_bandwidth, link_capacities
from synth.check.certificate import certificate_to_json, read_certificate
from synth.check.claims import certify, check_certificate, check_file
from synth.check.explicit import write_explicit
from synth.check.metrics import link_loads_explicit, measure_explicit, measure_symmetric
from synth.errors import ScheduleError
from synth.schedule.collective import collective_half
from synth.schedule.data import COPY, REDUCE, BaseSchedule
from synth.schedule.lift import lift, lifted_chunk_elements
from synth.schedule.user import shortest_path_tree
from synth.symmetry.search import user_group
from synth.topology.user import topology_from_json

from conftest import direct_family, weighted_graph


def hand_capacity(t, side):
    """min(c(d+S), c(d-S)) counted link by link with exact fractions (no library code), or None when S
    has no compute vertex on one side."""
    inside = set(side)
    comp = set(t.compute.tolist())
    if not (comp & inside) or comp <= inside:
        return None
    bw = [Fraction(b) for b in t.link_bandwidth.tolist()]
    out = sum((b for a, c, b in zip(t.link_src.tolist(), t.link_dst.tolist(), bw) if a in inside and c not in inside),
              Fraction(0))
    inn = sum((b for a, c, b in zip(t.link_src.tolist(), t.link_dst.tolist(), bw) if a not in inside and c in inside),
              Fraction(0))
    return min(out, inn)


def brute_least_cut(t):
    """min over every vertex set S with compute vertices on both sides of min(c(d+S), c(d-S)), by enumeration."""
    values = [hand_capacity(t, side) for r in range(1, t.n_vertices)
              for side in itertools.combinations(range(t.n_vertices), r)]
    return min(v for v in values if v is not None)


def identity(t):
    return user_group(t, np.arange(t.n_vertices)[None, :])


def test_the_bandwidth_term_divides_each_rounds_loads_by_the_bandwidths_by_hand():
    """Two compute vertices, one each way: 0->1 at 4 GB/s, 1->0 at 0.5 GB/s.  Round 1 reduces to 1 (N over
    the fast link), round 2 copies back over the slow one: Q = N/4 + N/0.5."""
    t = topology_from_json({"vertices": 2, "directed": True, "links": [[0, 1], [1, 0]], "bandwidth": [4, 0.5]})
    rows = [(0, 1, 0, 1, REDUCE, [0]), (0, 2, 1, 0, COPY, [1])]
    base = BaseSchedule.from_rows(t, 2, rows, (1,), ("direct",))
    cert = certify(base, identity(t), 8)
    assert cert.claims["bandwidth_term"] == 8 // 4 + 8 * 2 == 18
    # the bound: N over the least cut capacity, 8 / 0.5, so 16/18
    assert cert.claims[BOUND_KEY] == "16" and cert.claims[FRACTION_KEY] == "8/9"
    assert check_certificate(cert).valid


def test_every_link_one_gives_the_unweighted_term_and_equal_bandwidths_scale_it():
    rng = np.random.default_rng(5)
    t = weighted_graph(rng, 6, 3)
    flat = topology_from_json({"vertices": 6, "links": t.spec["links"], "directed": True})
    fast = topology_from_json({"vertices": 6, "links": t.spec["links"], "directed": True,
                               "bandwidth": [2.5] * t.n_links})
    q = {}
    for name, g in (("flat", flat), ("fast", fast)):
        base = direct_family(g)
        q[name] = measure_explicit(lift(base, identity(g)), lifted_chunk_elements(base, identity(g), 60))
    assert q["flat"].bandwidth_term == sum(q["flat"].max_load)
    assert q["fast"].bandwidth_term == q["flat"].bandwidth_term / Fraction(5, 2)
    assert q["fast"].max_load == q["flat"].max_load      # loads are elements, whatever the bandwidths


@pytest.mark.parametrize("seed", range(6))
def test_the_bandwidth_term_is_the_sum_of_each_rounds_largest_load_over_bandwidth(seed):
    """Against the per-link loads, divided by hand with exact fractions of the bandwidths."""
    rng = np.random.default_rng(seed)
    t = weighted_graph(rng, int(rng.integers(3, 7)), int(rng.integers(0, 4)), directed=bool(seed % 2))
    base = direct_family(t)
    g = identity(t)
    sizes = lifted_chunk_elements(base, g, t.n_compute * 7)
    m = measure_explicit(lift(base, g), sizes)
    loads = link_loads_explicit(lift(base, g), sizes)
    bw = [Fraction(b) for b in t.link_bandwidth.tolist()]
    by_hand = sum(max(Fraction(int(x)) / b for x, b in zip(row.tolist(), bw)) for row in loads)
    assert m.bandwidth_term == by_hand
    assert measure_symmetric(base, g, sizes).bandwidth_term == by_hand


def test_a_group_keeps_the_orbit_shortcut_exact_on_links_with_bandwidths():
    """A star of four hosts through a switch, two fast and two slow uplinks: the symmetric measure (per link
    orbit, or link by link with unequal chunks) equals the explicit one under nauty's group, which never
    swaps links of other bandwidths."""
    t = topology_from_json({"vertices": 5, "compute": [0, 1, 2, 3], "links": [[0, 4], [1, 4], [2, 4], [3, 4]],
                            "bandwidth": [4, 4, 1, 1]})
    g = user_group(t)
    base = shortest_path_tree(t)
    assert g.order > 1
    for elements in (2 * 6, 2 * 6 + 1):      # equal chunks, then unequal ones
        sizes = lifted_chunk_elements(base, g, elements)
        sym = measure_symmetric(base, g, sizes)
        assert sym == measure_explicit(lift(base, g), sizes)
        assert sym.bandwidth_term != sum(sym.max_load)
    cert = certify(base, g, 12, mode="symmetric")
    assert check_certificate(cert, "symmetric").valid and check_certificate(cert, "explicit").valid


def test_bandwidths_are_exact_binary_fractions_in_one_common_unit():
    assert exact_bandwidth(0.1) == Fraction(0.1) != Fraction(1, 10) and exact_bandwidth(300.0) == 300
    t = topology_from_json({"vertices": 3, "links": [[0, 1], [1, 2]], "bandwidth": [0.375, 12.5]})
    caps = link_capacities(t)
    assert caps.unit == Fraction(1, 8) and caps.units.tolist() == [3, 3, 100, 100]
    odd = topology_from_json({"vertices": 3, "links": [[0, 1], [1, 2]], "bandwidth": [0.1, 0.3]})
    caps = link_capacities(odd)
    assert [u * caps.unit for u in caps.units.tolist()] == [Fraction(0.1)] * 2 + [Fraction(0.3)] * 2


@pytest.mark.parametrize("seed", range(14))
def test_best_cut_is_the_least_capacity_cut_by_enumeration(seed):
    rng = np.random.default_rng(300 + seed)
    t = weighted_graph(rng, int(rng.integers(4, 9)), int(rng.integers(0, 6)), switches=int(rng.integers(0, 3)),
                       directed=bool(seed % 2))
    if t.n_compute < 2:
        pytest.skip("one compute vertex")
    cut = best_cut(t)
    assert cut_capacity(t, cut) == hand_capacity(t, cut) == brute_least_cut(t)


def test_best_cut_finds_a_cut_that_no_vertex_attains():
    """Two fat halves joined by one thin link: the least cut splits the halves, each vertex has more."""
    links = [[0, 1], [1, 2], [0, 2], [3, 4], [4, 5], [3, 5], [2, 3]]
    t = topology_from_json({"vertices": 6, "links": links, "bandwidth": [10] * 6 + [1]})
    cut = best_cut(t)
    assert sorted(cut) in ([0, 1, 2], [3, 4, 5]) and cut_capacity(t, cut) == 1
    assert bandwidth_bound(t, 12, cut).value == 12


def test_the_flow_capacities_round_when_the_bandwidths_share_no_short_unit_and_the_bound_stays_exact():
    """Bandwidths whose common unit needs more than 2**31 units in all: the max-flow runs on rounded
    capacities, the cut found is still evaluated exactly (here it is still the least one)."""
    links = [[0, 1], [1, 2], [0, 2], [3, 4], [4, 5], [3, 5], [2, 3]]
    t = topology_from_json({"vertices": 6, "links": links, "bandwidth": [1234.56789] * 6 + [0.987654321]})
    assert int(link_capacities(t).units.sum()) >= 1 << 31
    cut = best_cut(t)
    assert cut_capacity(t, cut) == brute_least_cut(t) == Fraction(0.987654321)


@pytest.mark.parametrize("seed", range(10))
def test_every_cut_and_term_with_capacities_stays_below_a_certified_schedule(seed):
    """On random graphs with random bandwidths every vertex set is a cut: each one's term of the collective
    bound (and the certificates' bound) is a bound only if it stays below a certified schedule's weighted
    bandwidth term, for allreduce and its halves."""
    rng = np.random.default_rng(400 + seed)
    t = weighted_graph(rng, int(rng.integers(3, 7)), int(rng.integers(0, 4)), switches=int(rng.integers(0, 2)),
                       directed=bool(seed % 2))
    if t.n_compute < 2:
        pytest.skip("one compute vertex")
    base = direct_family(t)
    for collective in ("allreduce", "reduce-scatter", "allgather"):
        cert = certify(collective_half(base, collective), identity(t), t.n_compute * 12)
        assert check_certificate(cert).valid
        q = Fraction(cert.claims["bandwidth_term"])
        for r in range(1, t.n_vertices):
            for side in itertools.combinations(range(t.n_vertices), r):
                try:
                    bound = collective_bound(t, cert.elements, collective, list(side))
                except ScheduleError:
                    continue
                assert bound <= q, (collective, side)
                if collective == "allreduce":
                    assert bandwidth_bound(t, cert.elements, list(side)).value <= q


def test_the_collective_bound_with_capacities_by_hand():
    """A switch 3 with hosts 0, 1, 2; host 2's uplink is 1 GB/s each way, the others 4.  Allreduce: N over
    host 2's 1 GB/s.  Allgather (N = 3 blocks of 1): host 2 takes 2 blocks in over 1 GB/s.  Reduce-scatter:
    host 2 sends 2 blocks out over 1 GB/s.  The endpoint volume: 2N(p-1) = 12 over 9 GB/s out of hosts."""
    t = topology_from_json({"vertices": 4, "compute": [0, 1, 2], "links": [[0, 3], [1, 3], [2, 3]],
                            "bandwidth": [4, 4, 1]})
    got = {c: collective_bound(t, 3, c) for c in ("allreduce", "reduce-scatter", "allgather")}
    assert got == {"allreduce": 3, "reduce-scatter": 2, "allgather": 2}
    fast = topology_from_json({"vertices": 4, "compute": [0, 1, 2], "links": [[0, 3], [1, 3], [2, 3]],
                               "bandwidth": [4, 4, 4]})
    assert collective_bound(fast, 3, "allreduce") == Fraction(2 * 3 * 2 * 2, 24)  # the volume, d_min = 2


def _rebuilt(cert, changes):
    data = json.loads(json.dumps(certificate_to_json(cert)))
    links = data["topology"]["links"]
    for link, value in changes.items():
        data["topology"]["bandwidth"][links.index(list(link))] = value
    return data


def _host_star():
    """Hosts 0, 1, 2 on switch 3, host 2's uplink 1 GB/s each way and the others 4: host 2 binds."""
    return topology_from_json({"vertices": 4, "compute": [0, 1, 2], "links": [[0, 3], [1, 3], [2, 3]],
                               "bandwidth": [4, 4, 1]})


def test_a_changed_bandwidth_in_a_certificate_changes_the_claims_and_fails():
    t = _host_star()
    cert = certify(direct_family(t), identity(t), 3 * 8)
    assert check_certificate(cert).valid and cert.claims[CUT_KEY] == [2]
    assert cert.claims["bandwidth_term"] == 32 and cert.claims[BOUND_KEY] == "24"
    # host 2's uplink at 2 GB/s both ways: the round times and the cut's capacity both halve
    report = check_certificate(read_certificate(_rebuilt(cert, {(2, 3): 2.0, (3, 2): 2.0})))
    assert not report.valid
    assert report.claims["bandwidth_term"][1:] == (16, False) and report.claims[BOUND_KEY][1:] == ("12", False)
    # a slower link elsewhere: round 1 waits for it (the stored cut still proves its bound, 24: the checker
    # evaluates the cut it is given and never searches, so the fraction claimed is what fails with Q)
    report = check_certificate(read_certificate(_rebuilt(cert, {(0, 3): 0.5})))
    assert not report.valid and not report.claims["bandwidth_term"][2] and not report.claims[FRACTION_KEY][2]
    assert report.claims[BOUND_KEY][1:] == ("24", True)
    # a faster link that binds nothing (host 0's way up at 8) changes no bandwidth claim: the term, the bound and
    # the fraction check; only Omega, which weighs every link's bandwidth (the load is now further from
    # proportional to the bandwidths), is no longer what the certificate says
    report = check_certificate(read_certificate(_rebuilt(cert, {(0, 3): 8.0})))
    assert all(report.claims[k][2] for k in ("bandwidth_term", BOUND_KEY, FRACTION_KEY))
    assert [k for k, (_, _, ok) in report.claims.items() if not ok] == ["omega"]
    assert report.metrics.omega > Fraction(report.claims["omega"][0])


def test_a_changed_bandwidth_in_an_explicit_file_fails(tmp_path):
    t = _host_star()
    cert = certify(direct_family(t), identity(t), 3 * 8)
    path = tmp_path / "e.jsonl"
    sizes = lifted_chunk_elements(cert.base, cert.group, cert.elements)
    write_explicit(lift(cert.base, cert.group), sizes, path, claims=cert.claims)
    assert check_file(path).valid
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    for link in ([2, 3], [3, 2]):         # host 2's uplink at 3 GB/s, in the header and in its topology
        header["bandwidth"][header["links"].index(link)] = 3.0
        header["topology"]["bandwidth"][header["topology"]["links"].index(link)] = 3.0
    path.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    report = check_file(path)
    assert not report.valid
    assert not report.claims["bandwidth_term"][2] and not report.claims[BOUND_KEY][2]


def test_the_independent_verifier_recomputes_the_same_weighted_bandwidth_term(tmp_path):
    """tools/verify_explicit.py shares no code with synth: on bandwidths with no short unit (0.1, 0.3, 12.5)
    it accepts the claims the checker wrote, the bandwidth term included."""
    import subprocess
    import sys
    from pathlib import Path

    t = topology_from_json({"vertices": 4, "compute": [0, 1, 2], "links": [[0, 3], [1, 3], [2, 3]],
                            "bandwidth": [0.1, 0.3, 12.5]})
    cert = certify(direct_family(t), identity(t), 3 * 8)
    path = tmp_path / "e.jsonl"
    write_explicit(lift(cert.base, cert.group), lifted_chunk_elements(cert.base, cert.group, 24), path,
                   claims=cert.claims)
    verifier = Path(__file__).resolve().parents[2] / "tools" / "verify_explicit.py"
    out = subprocess.run([sys.executable, str(verifier), str(path), "--json"], capture_output=True, text=True)
    rep = json.loads(out.stdout)
    assert out.returncode == 0 and rep["valid"], rep
    assert Fraction(rep["bandwidth_term"]) == Fraction(cert.claims["bandwidth_term"]) != sum(
        measure_explicit(lift(cert.base, cert.group), lifted_chunk_elements(cert.base, cert.group, 24)).max_load)
    assert check_file(path).valid


def test_a_claim_too_long_for_a_file_is_refused_when_certifying():
    """A path of 48 links, each of its own bandwidth that is no short binary fraction: each round's time has
    another denominator and the bandwidth term's grows past 300 digits.  The same path with bandwidths in
    quarters of GB/s certifies."""
    n = 48
    path = {"vertices": n, "links": [[i, i + 1] for i in range(n - 1)]}
    odd = topology_from_json({**path, "bandwidth": [0.101 + 0.01 * i for i in range(n - 1)]})
    with pytest.raises(ScheduleError, match="more than 300 digits"):
        certify(shortest_path_tree(odd), identity(odd))
    quarters = topology_from_json({**path, "bandwidth": [0.25 * (1 + i % 7) for i in range(n - 1)]})
    assert check_certificate(certify(shortest_path_tree(quarters), identity(quarters))).valid


def test_omega_weighs_every_link_by_its_bandwidth():
    """Two GPUs joined at 100 GB/s one way and 25 GB/s the other, each sending its whole vector once: a load
    spread over the links as 1:1 while their bandwidths are 4:1.  Omega is the bandwidth term (n/25 per round)
    over the time of the same traffic spread in proportion to the bandwidths (2n / 125 per round): 5/2, not
    the 1 that counting the links alike would say; with equal bandwidths it stays 1."""
    from synth.schedule import Block, Schedule
    from synth.topology import Topology

    def pair(bandwidth):
        t = Topology.from_links("pair", {"kind": "links"}, 2, [(0, 1), (1, 0)], bandwidth=bandwidth)
        s = Schedule(t, 2, 2, (Block(1, REDUCE, np.array([0, 1]), np.array([[0], [1]])),
                               Block(2, COPY, np.array([0, 1]), np.array([[1], [0]]))))
        return measure_explicit(s, [50, 50])

    m = pair([100, 25])
    assert m.omega == Fraction(5, 2)
    assert m.omega == m.bandwidth_term / (Fraction(m.vol_phys) / 125)
    assert pair([25, 25]).omega == 1 and pair([100, 100]).omega == 1
