"""Hierarchical starting trees on fabrics of servers (synth.models.packing.hierarchy)."""

import numpy as np
import pytest

from synth.models.packing.hierarchy import arc_bandwidth, clusters, hierarchical_columns
from synth.models.packing.master import MasterLP
from synth.models.packing.routed import routed_arcs, solve_routed
from synth.models.packing.timed import start_columns
from synth.models.packing.tree_space import TreeSpace
from synth.symmetry.spec import default_group
from synth.topology.failures import damage, parse_failures
from synth.topology.machines import machine_spec
from synth.topology.spec import build_topology
from synth.topology.torus import parse_torus

R = 8


def _fabric(name, nic=None):
    t = build_topology(machine_spec(name))
    return t if nic is None else damage(t, parse_failures(t, nodes=[str(int(t.nic_of(nic)))]))


def _walk_up(space, plink, v, root):
    """The vertices from ``v`` up to ``root`` (fails on a cycle)."""
    path = [v]
    while path[-1] != root:
        assert len(path) <= space.live.size
        path.append(int(space.arc_dst[plink[path[-1]]]))
    return path


@pytest.mark.parametrize("name,nic", [("dgx-a100:2", None), ("mi250:2", None), ("dgx-h100:4", None),
                                      ("mi250:2", 3)])
def test_each_tree_crosses_once_into_the_owners_server_from_every_other(name, nic):
    t = _fabric(name, nic)
    space = TreeSpace.build(t, None, R)
    label, fast = clusters(space)
    servers = t.healthy.server_of(np.arange(t.n_compute)) if nic is not None else t.server_of(np.arange(t.n_compute))
    assert np.array_equal(label[:t.n_compute][:, None] == label[None, :t.n_compute],
                          servers[:, None] == servers[None, :])          # the clusters are the servers
    roots = np.flatnonzero(space.live)
    cols = hierarchical_columns(space, roots, per_owner=6)
    owners = {k for k, *_ in cols}
    assert owners == set(range(roots.size))                              # every owner has its trees
    for k, L, plink, routes, (Rj, o) in cols:
        r = int(roots[k])
        assert (Rj, o) == (R, 0) and L[r] == R + 1
        live = np.flatnonzero(space.live)
        others = live[live != r]
        assert np.all(plink[others] >= 0) and plink[r] == -1
        parent = space.arc_dst[plink[others]]
        assert np.all(L[others] < L[parent]) and np.all(L[others] >= 1)   # a timed tree: sends before the parent
        slow = others[~fast[plink[others]]]
        # one slow arc per other server, from that server into the owner's
        assert sorted(label[slow].tolist()) == sorted(set(label[live].tolist()) - {label[r]})
        assert np.all(label[space.arc_dst[plink[slow]]] == label[r])
        for v in others.tolist():                                        # every path reaches the owner
            path = _walk_up(space, plink, v, r)
            assert len({int(label[u]) for u in path}) <= 2
        # the routes are routes of the arcs, up and down
        a = plink[others]
        assert np.all((space.route_ptr[a] <= routes[0, others]) & (routes[0, others] < space.route_ptr[a + 1]))
        back = space.arc_rev[a]
        assert np.all((space.route_ptr[back] <= routes[1, others]) & (routes[1, others] < space.route_ptr[back + 1]))


def test_gateways_keep_the_owners_rank():
    """On GPU servers an owner's gateways are the GPUs of its own index (rail-aligned), so the owners of
    different GPU indices cross over different NICs."""
    t = _fabric("mi250:2")
    space = TreeSpace.build(t, None, R)
    label, fast = clusters(space)
    roots = np.arange(t.n_compute)
    for k, L, plink, routes, _w in hierarchical_columns(space, roots, per_owner=1):
        gate = np.flatnonzero((plink >= 0) & ~fast[np.maximum(plink, 0)] & space.live)
        assert gate.tolist() == [(k + 16) % 32]
        assert space.arc_dst[plink[gate[0]]] == k


def test_labellings_are_staggered_by_depth_and_by_height():
    t = _fabric("dgx-a100:2")
    space = TreeSpace.build(t, None, R)
    cols = hierarchical_columns(space, np.array([0]), per_owner=100)
    # owner 0's server and the gateway (GPU 8, straight to 0) at depth 1, server 1's others at 2
    assert len(cols) == 2 * (R - 2 + 1)
    (_k, late, plink, *_), (_k2, early, *_) = cols[:2]
    assert late[:16].tolist() == [R + 1] + [R] * 8 + [R - 1] * 7
    assert early[:16].tolist() == [R + 1] + [1] * 7 + [2] + [1] * 7            # leaves first: height + 1
    assert [L[8] for _k, L, *_ in cols[::2]] == list(range(R, 1, -1))          # shifted earlier one by one


def test_no_columns_where_links_are_alike_or_fast_links_join_everything():
    torus = parse_torus("4x4")
    assert hierarchical_columns(TreeSpace.build(torus, None, 3), np.arange(16)) == []
    one = _fabric("dgx-a100:1")                    # one server: its links alike
    assert clusters(TreeSpace.build(one, None, 3)) is None
    bw = arc_bandwidth(TreeSpace.build(_fabric("dgx-a100:2"), None, 3))
    assert sorted(set(bw.tolist())) == [25.0, 300.0]


def test_the_master_starts_far_higher_from_them():
    """The routed trees' first solve against theirs with the hierarchical trees added (a group on the fabric)."""
    pytest.importorskip("highspy")
    t = _fabric("mi250:2")
    g = default_group(t)
    routed = solve_routed(routed_arcs(t, g))
    space = TreeSpace.build(t, g, 16)
    roots = routed.data.roots
    values = []
    for extra in ([], hierarchical_columns(space, roots)):
        lp = MasterLP(space, g.order, "simplex")
        for k, L, pl, routes in start_columns(space, routed, 16):
            lp.add(k, L, pl, routes)
        for k, L, pl, routes, window in extra:
            lp.add(k, L, pl, routes, window)
        values.append(lp.solve()[0])
    assert values[1] < 0.5 * values[0]
