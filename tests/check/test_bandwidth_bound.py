"""The bandwidth bound (docs/bounds.md): the best cut against brute force, the bound against schedules that
exist, and the checker refusing an edited bound, cut or failure list."""

import itertools
import json
from fractions import Fraction

import numpy as np
import pytest

from synth.baselines import build_baseline
from synth.baselines.halves import baseline_half
from synth.check.bounds.bandwidth import (BOUND_KEY, CUT_KEY, FRACTION_KEY, bandwidth_bound, best_cut,
                                          collective_bound, cut_capacity, min_compute_distance)
from synth.check.certificate import certificate_to_json, read_certificate
from synth.check.claims import certify, check_certificate
from synth.check.metrics import measure_explicit
from synth.errors import ScheduleError
from synth.schedule.collective import collective_half
from synth.schedule.user import shortest_path_tree
from synth.symmetry.search import user_group
from synth.topology.failures import damage, parse_failures
from synth.topology.lattice import grid
from synth.topology.spineleaf import parse_spine_leaf
from synth.topology.torus import parse_torus
from synth.topology.user import topology_from_json

from conftest import direct_family


def random_graph(rng, n, extra, switches=0):
    """A connected undirected graph: a random spanning tree plus ``extra`` links; the last ``switches``
    vertices do not compute."""
    links = [[int(rng.integers(0, v)), v] for v in range(1, n)]
    for _ in range(extra):
        a, b = rng.choice(n, 2, replace=False)
        links.append([int(a), int(b)])
    links = sorted({tuple(sorted(x)) for x in links})
    data = {"format": "synth-topology", "version": 1, "vertices": n, "links": [list(x) for x in links]}
    if switches:
        data["compute"] = list(range(n - switches))
    return topology_from_json(data)


def brute_min_cut(t):
    best = None
    for r in range(1, t.n_vertices):
        for side in itertools.combinations(range(t.n_vertices), r):
            try:
                c = cut_capacity(t, side)
            except ScheduleError:
                continue
            best = c if best is None else min(best, c)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_best_cut_is_the_least_cut_by_enumeration(seed):
    rng = np.random.default_rng(seed)
    t = random_graph(rng, int(rng.integers(4, 9)), int(rng.integers(0, 6)), switches=int(rng.integers(0, 3)))
    if t.n_compute < 2:
        pytest.skip("one compute vertex")
    assert cut_capacity(t, best_cut(t)) == brute_min_cut(t)


def test_best_cut_on_a_directed_graph_counts_both_directions():
    # a directed 4-cycle plus one chord back: |d+({0})| = 1 but |d-({0})| = 2
    t = topology_from_json({"vertices": 4, "directed": True, "links": [[0, 1], [1, 2], [2, 3], [3, 0], [2, 0]]})
    assert cut_capacity(t, [0]) == 1 and cut_capacity(t, best_cut(t)) == brute_min_cut(t) == 1


def test_d_min_counts_switch_hops():
    s = parse_spine_leaf("2,3,2")
    assert min_compute_distance(s) == 2
    assert min_compute_distance(parse_torus("3x3")) == 1


@pytest.mark.parametrize("name,t", [("ring", parse_torus("4x4")), ("bucket", parse_torus("4x4")),
                                    ("swing-b", parse_torus("4x4")), ("recursive-doubling", parse_torus("4x4")),
                                    ("ring", parse_spine_leaf("2,2,2")), ("halving-doubling", parse_spine_leaf("2,2,2"))])
def test_the_bound_never_exceeds_a_baselines_bandwidth_term(name, t):
    b = build_baseline(name, t)
    sizes = b.chunk_sizes(b.n_chunks * 6)
    m = measure_explicit(b.schedule, sizes)
    bound = bandwidth_bound(t, m.elements, best_cut(t))
    assert 0 < bound.value <= m.bandwidth_term


def _torus_with_failed_link():
    t = parse_torus("4x4")
    return damage(t, parse_failures(t, ["0-1"], []))


@pytest.mark.parametrize("collective", ["allreduce", "reduce-scatter", "allgather"])
@pytest.mark.parametrize("name,make", [("ring", lambda: parse_torus("4x4")), ("bucket", lambda: parse_torus("4x3")),
                                       ("halving-doubling", lambda: parse_spine_leaf("2,2,2")),
                                       ("ring", lambda: parse_spine_leaf("2,3,2")),
                                       ("halving-doubling", lambda: grid((4, 4), (False, False))),
                                       ("halving-doubling", _torus_with_failed_link)])
def test_the_collective_bound_never_exceeds_a_baselines_bandwidth_term(name, make, collective):
    """docs/bounds.md section 6: every term (volume, endpoints, per-vertex, the least cut) against schedules
    that exist, for allreduce and its halves, on tori, spine-leaf (switches), a mesh and a damaged torus."""
    t = make()
    b = baseline_half(build_baseline(name, t), collective)
    p = t.n_compute
    n = p * b.n_chunks * 6
    m = measure_explicit(b.schedule, b.chunk_sizes(n))
    bound = collective_bound(t, m.elements, collective, best_cut(t))
    assert 0 < bound <= m.bandwidth_term
    if collective == "allreduce":    # never weaker than the certificates' bound
        assert bound >= bandwidth_bound(t, m.elements, best_cut(t)).value


def test_the_collective_bound_by_hand_on_a_directed_graph():
    """Every link leaves at 2 per vertex, but vertex 2 has one way in: an allgather brings the three other
    blocks in through it (3 elements of 4 per node), a reduce-scatter takes one block in (1) and sends three
    out over two links (1.5, as the volume 12 / 8), an allreduce takes all 4 in through it."""
    t = topology_from_json({"vertices": 4, "directed": True,
                            "links": [[0, 1], [0, 2], [1, 0], [1, 3], [2, 3], [2, 0], [3, 0], [3, 1]]})
    got = {c: collective_bound(t, 4, c) for c in ("allreduce", "reduce-scatter", "allgather")}
    assert got == {"allreduce": 4, "reduce-scatter": Fraction(3, 2), "allgather": 3}
    # the cut S = {2} alone: its way out carries the 3 blocks owned elsewhere of a reduce-scatter
    assert collective_bound(t, 4, "reduce-scatter", [0, 1, 3]) == Fraction(3, 2)
    assert collective_bound(t, 4, "allgather", [2]) == 3
    with pytest.raises(ScheduleError, match="multiple of 4"):
        collective_bound(t, 6, "allgather")


@pytest.mark.parametrize("seed", range(10))
def test_each_cut_of_the_collective_bound_holds_against_the_cuts_it_does_not_search(seed):
    """On random small graphs every vertex set is a cut: each one's term is a bound only if it stays below a
    schedule's, here a certified shortest-path tree's bandwidth term (allreduce and its halves)."""
    rng = np.random.default_rng(200 + seed)
    t = random_graph(rng, int(rng.integers(3, 7)), int(rng.integers(0, 4)), switches=int(rng.integers(0, 2)))
    if t.n_compute < 2:
        pytest.skip("one compute vertex")
    base = direct_family(t)
    grp = user_group(t, np.arange(t.n_vertices)[None, :])
    for collective in ("allreduce", "reduce-scatter", "allgather"):
        cert = certify(collective_half(base, collective), grp, t.n_compute * 12)
        assert check_certificate(cert).valid
        q = Fraction(cert.claims["bandwidth_term"])
        for r in range(1, t.n_vertices):
            for side in itertools.combinations(range(t.n_vertices), r):
                try:
                    bound = collective_bound(t, cert.elements, collective, list(side))
                except ScheduleError:
                    continue        # no compute vertex on one side: not a cut
                assert bound <= q, (collective, side)


@pytest.mark.parametrize("seed", range(8))
def test_the_bound_never_exceeds_a_certified_tree_schedule_on_random_graphs(seed):
    rng = np.random.default_rng(100 + seed)
    t = random_graph(rng, int(rng.integers(3, 8)), int(rng.integers(0, 5)), switches=int(rng.integers(0, 2)))
    if t.n_compute < 2:
        pytest.skip("one compute vertex")
    cert = certify(shortest_path_tree(t), user_group(t, np.arange(t.n_vertices)[None, :]))
    c = cert.claims
    assert c[BOUND_KEY] and 0 < float(eval(c[FRACTION_KEY])) <= 1   # exact fraction string, e.g. "3/5"
    assert check_certificate(cert).valid


def test_sp_allreduce_meets_the_volume_bound_and_the_torus_cut_is_a_vertex():
    t = parse_torus("4x4")
    b = bandwidth_bound(t, 64, best_cut(t))
    assert b.kind == "volume" and str(b.value) == "30" and b.cut_capacity == 4


def _edited(cert, **changes):
    data = json.loads(json.dumps(certificate_to_json(cert)))
    for key, value in changes.items():
        if key == "failed":
            data["topology"]["failed"] = value
        else:
            data["claims"][key] = value
    return check_certificate(read_certificate(data))


def test_an_edited_bound_cut_or_failure_list_is_invalid():
    t = parse_torus("4x4")
    d = damage(t, parse_failures(t, links=["0-1"]))
    cert = certify(shortest_path_tree(d), user_group(d, np.arange(16)[None, :]))
    assert check_certificate(cert).valid
    assert cert.claims[CUT_KEY] and cert.topology.spec["failed"] == [[0, 1]]
    assert not _edited(cert, **{BOUND_KEY: "1000"}).valid
    assert not _edited(cert, **{FRACTION_KEY: "1"}).valid
    # here the volume bound binds: another valid cut proves the same bound (a weaker proof, accepted)
    assert _edited(cert, **{CUT_KEY: list(range(8))}).valid
    assert not _edited(cert, **{CUT_KEY: list(range(16))}).valid      # no compute vertex outside: refused
    assert not _edited(cert, **{CUT_KEY: [99]}).valid
    # another failed link of the same size: the schedule still runs, but |E| is the same and the cut differs
    assert not _edited(cert, failed=[[0, 1], [5, 6]]).valid


def test_where_the_cut_binds_an_edited_cut_is_invalid():
    # two triangles joined by one bridge: the cut bound N / 1 beats the volume bound
    t = topology_from_json({"vertices": 6, "links": [[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 3], [2, 3]]})
    cert = certify(shortest_path_tree(t), user_group(t, np.arange(6)[None, :]), elements=12)
    assert cert.claims[CUT_KEY] == [0, 1, 2] and cert.claims[BOUND_KEY] == "12"
    assert check_certificate(cert).valid
    assert not _edited(cert, **{CUT_KEY: [0]}).valid       # a valid cut of two links: bound 6, not 12
