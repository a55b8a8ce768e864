"""The packing models with unequal links: a round lasts as long as its slowest link's load over bandwidth.

Hand-derived optima on tiny graphs, a knocked-out weighting caught, and scaling every bandwidth scales the value.
"""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from synth.models.packing import layered_arcs, pack, solve_layered
from synth.models.packing.arcs import volume_bound
from synth.models.packing.routed import pack_routed, routed_arcs, solve_routed
from synth.models.packing.master import MasterLP
from synth.models.packing.timed import TimedOptions, solve_timed
from synth.models.packing.timed_schedule import pack_timed
from synth.models.packing.tree_space import TreeSpace
from synth.solving.packing import certify_packed
from synth.symmetry.residual import trivial_group
from synth.topology.user import topology_from_json


def weighted_term(cert):
    """``sum_s max_e load_s(e) / b_e`` per element of the certified schedule, as the checker re-derives it."""
    return float(Fraction(cert.claims["bandwidth_term"]) / cert.elements)


def triangle(beta):
    """Three compute vertices, the link 0-1 of bandwidth ``beta`` both ways, the others 1."""
    return topology_from_json({"vertices": 3, "links": [[0, 1], [1, 2], [2, 0]], "bandwidth": [beta, 1, 1]})


@pytest.mark.parametrize("beta", [0.25, 0.5, 2.0])
def test_layered_lp_on_a_triangle_with_a_slow_link_meets_the_hand_derived_optimum(beta):
    # every tree is a star (all at distance 1); round 1 loads v -> r with w_r, round 2 r -> v with w_r, so
    # M_1 = M_2 = max(w_0 / b, w_1 / b, w_0, w_1, w_2); with b < 1 the best shares are w_0 = w_1 = b w_2:
    # 2 / (1 + 2b); with b > 1 the slow links are the others: 2 max(w) = 2 / 3
    sol = solve_layered(layered_arcs(triangle(beta)))
    want = 2 / (1 + 2 * beta) if beta < 1 else 2 / 3
    assert sol.objective == pytest.approx(want, rel=1e-9)
    if beta < 1:
        assert sol.w[:2] == pytest.approx([beta * sol.w[2]] * 2, rel=1e-6)
    t = triangle(beta)
    cert = certify_packed(pack(layered_arcs(t, trivial_group(t)), units=1024), elements=3 * 1024)
    assert weighted_term(cert) == pytest.approx(want, rel=2e-3)


def test_the_layered_lp_ignoring_bandwidths_would_give_equal_shares():
    # the knock-out: with every link 1 the shares are equal and the value 2/3, far from 4/3 at b = 1/4
    plain = solve_layered(layered_arcs(topology_from_json({"vertices": 3, "links": [[0, 1], [1, 2], [2, 0]]})))
    assert plain.objective == pytest.approx(2 / 3)
    slow = solve_layered(layered_arcs(triangle(0.25)))
    assert slow.objective == pytest.approx(4 / 3)
    t = triangle(0.25)
    cert = certify_packed(pack(layered_arcs(t, trivial_group(t)), units=1024), elements=3 * 1024)
    equal = certify_packed(pack(layered_arcs(t, trivial_group(t)), units=1024, free_shares=False), elements=3 * 1024)
    assert weighted_term(cert) < 0.75 * weighted_term(equal)      # equal shares: 2 / (3 b) = 8/3


def test_scaling_every_bandwidth_scales_every_model():
    ring = {"vertices": 5, "links": [[i, (i + 1) % 5] for i in range(5)], "bandwidth": [1, 2, 3, 1, 0.5]}
    fast = {**ring, "bandwidth": [10 * b for b in ring["bandwidth"]]}
    t, f = topology_from_json(ring), topology_from_json(fast)
    a, b = solve_layered(layered_arcs(t)), solve_layered(layered_arcs(f))
    assert b.objective == pytest.approx(a.objective / 10, rel=1e-9)
    assert b.fraction == pytest.approx(a.fraction, rel=1e-9)
    assert volume_bound(f) == pytest.approx(volume_bound(t) / 10)
    opts = TimedOptions(exact=True)
    ta = solve_timed(t, None, R=3, time_limit=30, layered=a, options=opts)
    tb = solve_timed(f, None, R=3, time_limit=30, layered=b, options=opts)
    assert tb.objective == pytest.approx(ta.objective / 10, rel=1e-7)
    assert ta.objective <= a.objective * (1 + 1e-9)


def test_timed_trees_route_around_a_slow_link():
    # a 4-ring whose link 0-1 is 1/8 as fast: the layered trees must use it (0 and 1 are adjacent) for the
    # chunks of 0 and 1; timed trees may relay through 3 and 2 instead
    t = topology_from_json({"vertices": 4, "links": [[0, 1], [1, 2], [2, 3], [3, 0]],
                            "bandwidth": [0.125, 1, 1, 1]})
    lay = solve_layered(layered_arcs(t, trivial_group(t)))
    sol = solve_timed(t, trivial_group(t), R=4, time_limit=60, layered=lay, options=TimedOptions(exact=True))
    assert sol.status.startswith("optimal")
    assert sol.objective < 0.9 * lay.objective
    cert = certify_packed(pack_timed(sol, units=1024), elements=4 * 1024)
    assert weighted_term(cert) == pytest.approx(sol.objective, rel=5e-3)


def test_routed_lp_weighs_the_links_through_a_switch():
    # two compute vertices through a switch: 0 -> 2 -> 1 at bandwidth 4 and 1 -> 2 -> 0 at 1 (directed file);
    # each round carries the share of one owner each way: max(w_1 / 4, w_0 / 1) + max(w_1 / 1, w_0 / 4),
    # least (1) for every w_1 in [1/5, 4/5]; the unweighted value is also 1, so compare the loads instead
    spec = {"vertices": 3, "compute": [0, 1], "directed": True, "links": [[0, 2], [2, 1], [1, 2], [2, 0]],
            "bandwidth": [4, 4, 1, 1]}
    t = topology_from_json(spec)
    sol = solve_routed(routed_arcs(t))
    assert sol.objective == pytest.approx(1.0)
    both = topology_from_json({**spec, "bandwidth": [4, 4, 4, 4]})
    assert solve_routed(routed_arcs(both)).objective == pytest.approx(0.25)
    cert = certify_packed(pack_routed(routed_arcs(t), units=1024), elements=2 * 1024)
    assert weighted_term(cert) == pytest.approx(1.0, rel=2e-3)


#: two servers of two GPUs: each server's switch (vertices 4, 5) at 12 both ways, each GPU's NIC (6-9) and
#: the rail switch (10) at 1
MINI_DGX = {"vertices": 11, "compute": [0, 1, 2, 3],
            "links": [[0, 4], [1, 4], [2, 5], [3, 5], [0, 6], [1, 7], [2, 8], [3, 9], [6, 10], [7, 10], [8, 10],
                      [9, 10]],
            "bandwidth": [12] * 4 + [1] * 8}


def forestcoll_optimum(t):
    """ForestColl's allreduce per element, by brute force over every vertex set ``S``: twice its allgather,
    ``(N / p) max_S |compute outside S| / (bandwidth into S)`` (tiny graphs only)."""
    p, bw, best = t.n_compute, t.link_bandwidth, 0.0
    for mask in range(1, 1 << t.n_vertices):
        inside = (mask >> np.arange(t.n_vertices)) & 1 == 1
        k = int(inside[t.compute].sum())
        if 0 < k < p:
            best = max(best, (p - k) / bw[~inside[t.link_src] & inside[t.link_dst]].sum())
    return 2 * best / p


def arc_trees(space, root):
    """Every timed tree of ``root`` over the arcs of ``space`` (every labelling, every admissible arc)."""
    V = space.live.size
    others = np.flatnonzero(space.live & (np.arange(V) != root))
    for labels in itertools.product(range(1, space.R + 1), repeat=others.size):
        L = np.zeros(V, dtype=np.int64)
        L[others] = labels
        L[root] = space.R + 1
        choices = [[a for a in space.lnk[v][space.lnk[v] >= 0].tolist() if L[space.arc_dst[a]] > L[v]]
                   for v in others.tolist()]
        for pick in itertools.product(*choices):
            pl = np.full(V, -1, dtype=np.int64)
            pl[others] = pick
            yield L, pl


def test_timed_trees_through_switches_against_every_tree_and_forestcoll():
    t = topology_from_json(MINI_DGX)
    g = trivial_group(t)
    assert forestcoll_optimum(t) == pytest.approx(0.5)           # the cut between the servers: 2 NICs at 1
    routed = solve_routed(routed_arcs(t, g))
    assert routed.objective == pytest.approx(1.0)                 # one hop each: every chunk crosses alone
    exact = solve_timed(t, g, R=2, layered=routed, options=TimedOptions(exact=True))
    assert exact.status.startswith("optimal") and exact.objective == pytest.approx(0.52)
    lp = MasterLP(TreeSpace.build(t, g, 2), g.order)
    assert lp.space.n_arcs == 12 and np.all(np.diff(lp.space.route_ptr) == 1)
    for k, r in enumerate(exact.roots.tolist()):
        for L, pl in arc_trees(lp.space, r):
            lp.add(k, L, pl)
    assert lp.solve(vertex=True)[0] == pytest.approx(exact.objective, abs=1e-9)
    heur = solve_timed(t, g, R=3, layered=routed)
    assert heur.objective <= 1.01 * forestcoll_optimum(t)        # 0.5016: staggered trees keep the NICs busy
    cert = certify_packed(pack_timed(heur, units=8192))
    assert weighted_term(cert) == pytest.approx(heur.objective, rel=2e-3)
    assert np.all(cert.base.route_lengths[cert.base.src // 2 != cert.base.dst // 2] == 4)   # GPU-NIC-rail-NIC-GPU


def test_routed_trees_over_routes_the_space_drops_leave_every_owner_a_priced_start(monkeypatch):
    # the tree space keeps one route per pair here, the routed LP four (one per spine): the routed trees over
    # other routes are left out and every owner starts from a tree priced at equal prices instead
    import synth.models.packing.tree_space as tree_space
    from synth.models.packing.routed import hop_routes
    from synth.models.packing.timed import layered_columns
    from synth.topology.spineleaf import spine_leaf

    monkeypatch.setattr(tree_space, "hop_routes", lambda t: hop_routes(t, 1))
    s = spine_leaf(4, 2, 4)
    g = trivial_group(s)
    routed = solve_routed(routed_arcs(s, g))
    assert len(layered_columns(TreeSpace.build(s, g, 2), routed, 2)) < 3 * routed.data.n_roots
    sol = solve_timed(s, g, R=2, layered=routed, time_limit=20)
    assert set(sol.root.tolist()) == set(range(routed.data.n_roots))
    cert = certify_packed(pack_timed(sol, units=64))
    assert np.all(cert.base.route_lengths > 0)
