"""The routed packing LP (switches, one-way links): routes against brute force, loads recomputed, certificates."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from synth.check.bounds.bandwidth import bandwidth_bound, best_cut
from synth.check.claims import certify, check_certificate
from synth.models.packing import layered_arcs, solve_layered
from synth.models.packing.depth import depth_arcs
from synth.models.packing.routed import hop_routes, needs_routes, round_routed, routed_arcs, solve_routed
from synth.schedule.spineleaf import spine_leaf_star
from synth.solving import solve
from synth.symmetry.spec import default_group
from synth.symmetry.residual import trivial_group
from synth.symmetry.spineleaf import spine_leaf_group
from synth.topology.failures import damage, parse_failures
from synth.topology.spineleaf import spine_leaf
from synth.topology.torus import parse_torus
from synth.topology.user import topology_from_json

ONE_WAY = {"vertices": 6, "directed": True,
           "links": [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 0], [0, 3], [3, 0], [1, 4]]}


def damaged_spine_leaf():
    s = spine_leaf(2, 3, 2)             # hosts 0-5, leaves 6-8, spines 9-10
    return damage(s, parse_failures(s, links=["6-9"]))


def brute_routes(t, v, u):
    """Every shortest path v -> u whose inner vertices are switches, by depth-first search over simple paths."""
    out = {}
    for e in range(t.n_links):
        out.setdefault(int(t.link_src[e]), []).append(e)
    found = []

    def walk(x, path, seen):
        if x == u and path:
            found.append(tuple(path))
            return
        if path and t.is_compute[x]:
            return
        for e in out.get(x, []):
            y = int(t.link_dst[e])
            if y not in seen:
                walk(y, path + [e], seen | {y})
    walk(v, [], {v})
    if not found:
        return set()
    short = min(len(p) for p in found)
    return {p for p in found if len(p) == short}


@pytest.mark.parametrize("t", [damaged_spine_leaf(), topology_from_json(ONE_WAY)], ids=lambda t: t.name)
def test_routes_are_every_shortest_path_through_switches(t):
    r = hop_routes(t, max_routes=64)
    got = {}
    for s, d, links in zip(r.src.tolist(), r.dst.tolist(), r.links.tolist()):
        got.setdefault((s, d), set()).add(tuple(x for x in links if x >= 0))
    want = {(v, u): brute_routes(t, v, u) for v, u in itertools.permutations(t.compute.tolist(), 2)}
    want = {k: p for k, p in want.items() if p}
    assert got == want
    # capped: at most max_routes per pair, always at least one where there is any
    capped = hop_routes(t, max_routes=1)
    pairs = capped.src * t.n_vertices + capped.dst
    assert np.unique(pairs).size == pairs.size == len(want)


def recomputed_term(data, y):
    """Σ_s max_e load, every link of every route, lifted by the group, in plain Python."""
    t, H = data.topology, data.H_up
    perms = [list(range(t.n_links))] if data.group is None else data.group.link_images(np.arange(t.n_links)).tolist()
    load = [[0.0] * t.n_links for _ in range(data.n_rounds)]
    up, n_up = data.up, data.up.n_arcs
    down = data.down_links() if data.down is None else None
    for a in range(n_up):
        for img in perms:
            for e in up.links[a]:
                if e >= 0:
                    load[H - int(up.depth[a])][img[int(e)]] += y[a]
            if down is not None:
                for e in down[a]:
                    if e >= 0:
                        load[H + int(up.depth[a]) - 1][img[int(e)]] += y[a]
    if data.down is not None:
        for a in range(data.down.n_arcs):
            for img in perms:
                for e in data.down.links[a]:
                    if e >= 0:
                        load[H + int(data.down.depth[a]) - 1][img[int(e)]] += y[n_up + a]
    return sum(max(row) for row in load)


@pytest.mark.parametrize("t", [damaged_spine_leaf(), topology_from_json(ONE_WAY)], ids=lambda t: t.name)
def test_the_lp_value_is_the_recomputed_term_and_at_least_the_certified_bound(t):
    data = routed_arcs(t, default_group(t))
    sol = solve_routed(data)
    assert sol.status == "optimal"
    assert recomputed_term(data, sol.y) == pytest.approx(sol.objective, abs=1e-7)
    assert sol.objective >= float(bandwidth_bound(t, 1, best_cut(t)).value) - 1e-9


def test_without_switches_the_routed_lp_is_the_layered_lp():
    t = parse_torus("4x4")
    d = damage(t, parse_failures(t, links=["0-1"]))
    routed = solve_routed(routed_arcs(d, default_group(d)))
    layered = solve_layered(layered_arcs(d, default_group(d)))
    assert routed.objective == pytest.approx(layered.objective, rel=1e-7)


def test_the_spine_leaf_star_is_in_the_class():
    # the star rooted at h(0,0) is one owner with every share: the LP is at most its bandwidth term per element
    s = spine_leaf(2, 3, 2)
    star = certify(spine_leaf_star(s), spine_leaf_group(s))
    per_element = Fraction(star.claims["bandwidth_term"]) / star.elements
    sol = solve_routed(routed_arcs(s, spine_leaf_group(s)))
    assert sol.objective <= float(per_element) + 1e-9
    assert sol.objective == pytest.approx(solve_routed(routed_arcs(s, None)).objective, rel=1e-7)   # group: same LP


def test_one_way_links_reduce_and_broadcast_over_different_trees():
    t = topology_from_json(ONE_WAY)
    assert needs_routes(t) == "one-way links"
    data = routed_arcs(t, None)
    assert data.down is not None and data.n_rounds == data.H_up + data.H_down
    base = round_routed(solve_routed(data), units=16)
    assert base.n_rounds == data.n_rounds
    assert check_certificate(certify(base, trivial_group(t))).valid


@pytest.mark.parametrize("t", [damaged_spine_leaf(), topology_from_json(ONE_WAY)], ids=lambda t: t.name)
def test_solve_certifies_a_routed_schedule_with_its_fraction(t):
    res = solve(t)
    cert = res.certificate
    # switches (links in pairs): timed trees over the routes follow the routed LP, and 2,3,2 with a failed link
    # gains by them (37.5 % of the certified bound routed, 59.9 % timed); one-way links: the routed LP alone
    assert cert.provenance["algorithm"] == ("timed-packing" if needs_routes(t) == "switches" else "routed-packing")
    assert check_certificate(cert, "symmetric").valid
    frac = Fraction(cert.claims["bandwidth_fraction"])
    assert 0 < frac <= 1
    # the certified term per element lies within rounding of the LP's
    per_element = Fraction(cert.claims["bandwidth_term"]) / cert.elements
    assert float(per_element) == pytest.approx(cert.solver["lp_objective"], rel=0.02)
    assert any("% of the certified bound" in n for n in res.notes)


def test_cli_spine_leaf_with_a_failed_link(tmp_path, capsys):
    from synth.cli import main

    out = tmp_path / "sl.json"
    assert main(["solve", "--spine-leaf", "2,3,2", "--fail-link", "6-9", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "routed LP over switches" in captured.err and "bandwidth_fraction" in captured.out
    assert main(["check", str(out)]) == 0
    assert main(["export", str(out), "--format", "explicit", "--out", str(tmp_path / "sl.jsonl")]) == 0
    assert main(["check", str(tmp_path / "sl.jsonl")]) == 0


# ---------------------------------------------------------------- the depth-bounded variant (models/packing/depth.py)

def damaged_4x4():
    t = parse_torus("4x4")
    return damage(t, parse_failures(t, links=["0-1"]))


def test_depth_at_h_is_the_layered_lp_and_below_it_arcs_span_levels():
    d = damaged_4x4()
    g = default_group(d)
    layered = solve_layered(layered_arcs(d, g))
    assert solve_routed(depth_arcs(d, 4, g)).objective == pytest.approx(layered.objective, rel=1e-7)
    for k, m in ((1, 4), (2, 2), (3, 2)):
        data = depth_arcs(d, k, g)
        assert data.n_rounds <= 2 * k and (data.up.links >= 0).sum(axis=1).max() == m
        sol = solve_routed(data)
        assert recomputed_term(data, sol.y) == pytest.approx(sol.objective, abs=1e-7)
        assert sol.objective >= float(bandwidth_bound(d, 1, best_cut(d)).value) - 1e-9


def test_depth_parents_lie_on_shortest_paths_one_level_closer():
    d = damaged_4x4()
    data = depth_arcs(d, 2, None)
    m = 2
    dist = d.distance_matrix()
    up = data.up
    r = data.roots[up.root]
    h = (up.links >= 0).sum(axis=1)
    assert np.all(dist[up.child, up.parent] == h) and np.all(h <= m)
    assert np.all(dist[up.parent, r] == dist[up.child, r] - h)                          # on a shortest path
    assert np.all(-(-dist[up.parent, r] // m) == up.depth - 1)                           # one level closer
    # every (owner, vertex) has a parent
    assert np.unique(up.root * d.n_vertices + up.child).size == data.n_roots * (d.n_compute - 1)


def test_cli_depth_bounded_packing(tmp_path, capsys):
    from synth.cli import main

    out = tmp_path / "d2.json"
    assert main(["solve", "--torus", "4x4", "--fail-link", "0-1", "--depth", "2", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "depth-bounded LP, arcs of up to 2 hops" in captured.err
    assert main(["check", str(out)]) == 0
    import json

    cert = json.loads(out.read_text())
    assert cert["claims"]["rounds"] == 4 and cert["solver"]["depth_bound"] == 2
    assert main(["solve", "--spine-leaf", "2,3,2", "--fail-link", "6-9", "--depth", "1"]) == 0   # H = 1 there


def test_depth_lp_size_steps_restrict_then_refuse():
    from synth.errors import SynthError
    from synth.models.packing.depth import choose_depth_arcs

    d = damaged_4x4()
    full = depth_arcs(d, 2, None)
    first, note = next(choose_depth_arcs(d, 2, None, steps=((4, False, 10), (1, True, 10 ** 6))))
    assert first.n_arcs < full.n_arcs and "1 route per (vertex, parent) pair" in note and "boundary" in note
    assert np.all(first.up.depth - 1 == -(-d.distance_matrix()[first.up.parent, first.roots[first.up.root]] // 2))
    with pytest.raises(SynthError, match="even restricted"):
        list(choose_depth_arcs(d, 2, None, steps=((1, True, 10),)))


def test_too_many_routed_choices_is_one_line(monkeypatch):
    from synth.errors import SynthError
    from synth.models.packing import routed

    monkeypatch.setattr(routed, "MAX_ROUTED_ARCS", 10)
    with pytest.raises(SynthError, match=r"has [\d,]+ \(parent, route\) choices, over the 10 it is built for"):
        d = damaged_spine_leaf()
        routed.pack_routed(routed.routed_arcs(d, default_group(d)))


@pytest.mark.parametrize("collective", ["reduce-scatter", "allgather"])
def test_halves_give_every_node_a_chunk(collective):
    # free shares may leave an owner without a chunk, and a half gives every node an equal block: equal shares
    t = parse_torus("4x4")
    for topo in (damage(t, parse_failures(t, nodes=["5"])), damaged_spine_leaf()):
        cert = solve(topo, collective=collective).certificate
        assert check_certificate(cert, "symmetric").valid and cert.solver["free_shares"] is False
