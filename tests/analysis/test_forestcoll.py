"""ForestColl's optimum (synth/analysis/forestcoll.py) against enumeration of every cut on tiny fabrics, and
against values derived by hand on a ring, a star through one switch and one DGX-A100-like server."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from synth.analysis.forestcoll import forestcoll_optimum
from synth.errors import ScheduleError
from synth.topology.user import topology_from_json

from conftest import weighted_graph



def brute(t, elements, reverse=False):
    """(N/p) max over S holding some compute vertices but not all of |S ∩ C| / c(S -> outside), enumerated
    with exact fractions (``reverse``: the links into S, the reduce-scatter's)."""
    comp = set(t.compute.tolist())
    bw = [Fraction(b) for b in t.link_bandwidth.tolist()]
    links = list(zip(t.link_src.tolist(), t.link_dst.tolist(), bw))
    best = Fraction(0)
    for r in range(1, t.n_vertices):
        for side in map(set, itertools.combinations(range(t.n_vertices), r)):
            if not (side & comp) or comp <= side:
                continue
            if reverse:
                cap = sum((b for a, c, b in links if c in side and a not in side), Fraction(0))
            else:
                cap = sum((b for a, c, b in links if a in side and c not in side), Fraction(0))
            best = max(best, Fraction(len(side & comp)) / cap)
    return Fraction(elements, t.n_compute) * best


@pytest.mark.parametrize("seed", range(16))
def test_the_optimum_is_the_largest_ratio_by_enumeration(seed):
    rng = np.random.default_rng(700 + seed)
    t = weighted_graph(rng, int(rng.integers(3, 9)), int(rng.integers(0, 6)), switches=int(rng.integers(0, 3)),
                       directed=bool(seed % 2))
    if t.n_compute < 2:
        pytest.skip("one compute vertex")
    n = t.n_compute * 5
    opt = forestcoll_optimum(t, n)
    assert opt.allgather == brute(t, n)
    assert opt.reduce_scatter == brute(t, n, reverse=True)
    assert opt.allreduce == opt.allgather + opt.reduce_scatter
    # the cuts returned attain the values
    for cut, value, reverse in ((opt.allgather_cut, opt.allgather, False),
                                (opt.reduce_scatter_cut, opt.reduce_scatter, True)):
        side, comp = set(cut), set(t.compute.tolist())
        bw = [Fraction(b) for b in t.link_bandwidth.tolist()]
        cap = sum((b for a, c, b in zip(t.link_src.tolist(), t.link_dst.tolist(), bw)
                   if ((c in side and a not in side) if reverse else (a in side and c not in side))), Fraction(0))
        assert Fraction(n, t.n_compute) * len(side & comp) / cap == value


def test_a_ring_a_star_and_one_gpu_server_by_hand():
    ring = topology_from_json({"vertices": 6, "links": [[i, (i + 1) % 6] for i in range(6)]})
    opt = forestcoll_optimum(ring, 6)
    assert opt.allgather == Fraction(5, 2) and opt.allreduce == 5       # (p-1) blocks in over two links
    # eight GPUs on one switch at 300 GB/s each way: every GPU takes 7 blocks in at 300
    server = topology_from_json({"vertices": 9, "compute": list(range(8)), "links": [[g, 8] for g in range(8)],
                                 "bandwidth": [300] * 8})
    opt = forestcoll_optimum(server, 8 * 100)
    assert opt.allgather == Fraction(7 * 100, 300) and opt.allreduce == Fraction(1400, 300)


def test_two_servers_joined_by_nic_rails_by_hand():
    """Two servers of four GPUs on an NVSwitch (300 GB/s), each GPU with a 25 GB/s NIC on rail switch
    (GPU index mod 2).  The cut of all but one GPU (7 blocks in at 300 + 25) binds, not a server's NICs
    (4 blocks out at 4 x 25)."""
    links, bw = [], []
    gpus, nvs, rails = 8, (8, 9), (10, 11)
    for g in range(gpus):
        links.append([g, nvs[g // 4]]); bw.append(300)
        links.append([g, rails[g % 2]]); bw.append(25)
    t = topology_from_json({"vertices": 12, "compute": list(range(8)), "links": links, "bandwidth": bw})
    opt = forestcoll_optimum(t, 8 * 13)
    assert opt.allgather == 13 * max(Fraction(7, 325), Fraction(4, 100)) == Fraction(13 * 4, 100)
    assert opt.allgather == brute(t, 8 * 13)


def test_a_fabric_whose_compute_vertices_cannot_all_be_reached_is_refused():
    t = topology_from_json({"vertices": 3, "directed": True, "links": [[0, 1], [1, 2], [2, 1]]})
    with pytest.raises(ScheduleError):
        forestcoll_optimum(t, 3)


def test_compare_notes_the_optimum_on_links_with_bandwidths_only():
    from synth.analysis.compare import compare
    from synth.topology.torus import parse_torus

    star = topology_from_json({"vertices": 5, "compute": [0, 1, 2, 3], "links": [[g, 4] for g in range(4)],
                               "bandwidth": [4, 4, 4, 1]})
    notes = []
    compare(star, [4096], algorithms=["ring"], notes=notes)
    # the slow host takes 3 blocks of N/4 in at 1 GB/s, twice: 3N/2 per GB/s, an algbw of 2/3 GB/s
    assert any(n.startswith("forestcoll optimum: allreduce at 0.67 GB/s") for n in notes), notes
    notes = []
    compare(parse_torus("3x3"), [4096], algorithms=["ring"], notes=notes)
    assert not any("forestcoll" in n for n in notes)
