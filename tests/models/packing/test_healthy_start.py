"""The healthy network's timed trees lifted onto a damaged fabric (synth.models.packing.healthy_start)."""

import numpy as np
import pytest

from synth.models.packing.healthy_start import healthy_start, lift_columns
from synth.models.packing.master import MasterLP
from synth.models.packing.routed import routed_arcs
from synth.models.packing.timed import TimedOptions, solve_timed
from synth.models.packing.tree_space import TreeSpace
from synth.symmetry.spec import default_group
from synth.topology.failures import damage, parse_failures
from synth.topology.machines import machine_spec
from synth.topology.spec import build_topology

pytest.importorskip("highspy")

R = 6


@pytest.fixture(scope="module")
def fabric():
    """Two DGX A100 servers, their group, and the healthy timed LP (converged, so deterministic)."""
    h = build_topology(machine_spec("dgx-a100:2"))
    g = default_group(h)
    sol = solve_timed(h, g, R, time_limit=30, options=TimedOptions(max_iterations=40))
    return h, g, sol


def _assert_timed_trees(space, roots, columns):
    """Every column is a timed tree of ``space``: each live vertex but the root sends over a route of
    ``space`` to a parent with a larger label, and the parent's copy comes back over a route of the reverse
    arc; no route uses a link ``space`` lacks."""
    t = space.topology
    for k, L, plink, routes, (Rj, _o) in columns:
        root = int(roots[k])
        assert L[root] == Rj + 1
        for v in np.flatnonzero(space.live).tolist():
            if v == root:
                assert plink[v] == -1
                continue
            a = int(plink[v])
            assert a >= 0 and 1 <= L[v] <= Rj
            parent = int(space.arc_dst[a])
            assert L[parent] > L[v]
            for side, (src, dst) in enumerate([(v, parent), (parent, v)]):
                q = int(routes[side, v])
                arc = a if side == 0 else int(space.arc_rev[a])
                assert space.route_ptr[arc] <= q < space.route_ptr[arc + 1]
                links = space.route_links[q][space.route_links[q] >= 0]
                assert t.link_src[links[0]] == src and t.link_dst[links[-1]] == dst
                assert np.all(t.link_dst[links[:-1]] == t.link_src[links[1:]])


def test_lifting_onto_the_healthy_network_keeps_every_tree_and_the_lp_value(fabric):
    # the healthy LP's trees lifted by its group are columns of the same network without a group; with them
    # the master has the healthy LP's value (a symmetric optimum over a symmetric set of columns), so a
    # wrong vertex or route image shows as a lower value or an invalid tree
    h, g, sol = fabric
    space = TreeSpace.build(h, None, R)
    roots = routed_arcs(h, None).roots
    start = lift_columns(sol, space, roots, per_owner=10 ** 6)
    assert start.lifted == int((sol.x > 1e-12).sum()) * g.order == start.kept
    assert start.repaired == start.dropped == 0
    _assert_timed_trees(space, roots, start.columns)
    lp = MasterLP(space, 1, "simplex")
    for k, L, plink, routes, window in start.columns:
        lp.add(k, L, plink, routes, window)
    obj = lp.solve()[0]
    assert obj == pytest.approx(sol.objective, rel=1e-6)


@pytest.mark.parametrize("failure", ["nic", "link"])
def test_lifted_trees_avoid_the_failure(fabric, failure):
    # a failed NIC (a vertex) or a failed GPU-switch link: every kept tree is a timed tree of the damaged
    # network, the trees that crossed the failure are repaired (labels kept) or left out
    h, g, sol = fabric
    if failure == "nic":
        f = parse_failures(h, [], [str(int(h.nic_of(1)))])
    else:
        f = parse_failures(h, [f"1-{int(h.link_dst[h.link_src == 1].min())}"], [])
    d = damage(h, f)
    group = default_group(d)
    space = TreeSpace.build(d, group, R)
    roots = routed_arcs(d, group).roots
    start = lift_columns(sol, space, roots, per_owner=10 ** 6)
    assert 0 < start.kept < start.lifted
    assert start.repaired > 0
    _assert_timed_trees(space, roots, start.columns)
    lp = MasterLP(space, 1 if group is None else group.order, "simplex")
    for k, L, plink, routes, window in start.columns:
        lp.add(k, L, plink, routes, window)
    assert np.isfinite(lp.solve()[0])


def test_healthy_start_caps_the_trees_per_owner(fabric):
    h, _g, _sol = fabric
    d = damage(h, parse_failures(h, [], [str(int(h.nic_of(1)))]))
    group = default_group(d)
    start = healthy_start(d, group, routed_arcs(d, group).roots, R, time_limit=10, per_owner=3)
    owners = np.bincount([c[0] for c in start.columns])
    assert owners.max() <= 3 and start.kept == len(start.columns)
    assert "of its" in start.note() and "lifted trees kept" in start.note()


@pytest.mark.parametrize("name, share", [("dgx-a100:2", 0.5), ("dgx-a100:8", 0.75)])
def test_a_larger_fabric_gives_the_healthy_lp_more_of_the_time(monkeypatch, name, share):
    import synth.models.packing.healthy_start as hs

    seen = []

    def record(t, group, R, time_limit, **_kw):
        seen.append(time_limit)
        raise LookupError("recorded")

    monkeypatch.setattr(hs, "solve_timed", record)
    h = build_topology(machine_spec(name))
    d = damage(h, parse_failures(h, [], [str(int(h.nic_of(1)))]))
    with pytest.raises(LookupError):
        healthy_start(d, default_group(d), routed_arcs(d, default_group(d)).roots, R=6, time_limit=40)
    assert seen == [pytest.approx(share * 40)]


@pytest.mark.parametrize("name", ["dgx-a100:2", "mi250:2"])
def test_each_healthy_route_maps_to_the_damaged_route_over_its_image_links(monkeypatch, name):
    # brute force, route by route and element by element: the damaged route whose links are the image's, -1
    # where the image crosses the failed NIC; the fallback that compares rows whole (routes too long for one
    # integer key) gives the same map
    import synth.models.packing.healthy_start as module

    h = build_topology(machine_spec(name))
    d = damage(h, parse_failures(h, nodes=[str(int(h.nic_of(1)))]))
    hs, ds = TreeSpace.build(h, default_group(h), R), TreeSpace.build(d, default_group(d), R)
    got = module._route_map(hs, ds)
    to_d = np.asarray(d.link_ids(h.link_src, h.link_dst))
    by_links = {tuple(r[r >= 0].tolist()): q for q, r in enumerate(ds.route_links)}
    for g in range(hs.images.shape[0]):
        for q, r in enumerate(hs.route_links):
            image = tuple(int(to_d[hs.images[g][e]]) for e in r[r >= 0])
            assert got[g, q] == (-1 if min(image) < 0 else by_links.get(image, -1))
    assert (got == -1).any() and (got >= 0).mean() > 0.9
    monkeypatch.setattr(module, "_route_keys", lambda links, n_links: None)
    assert np.array_equal(module._route_map(hs, ds), got)
