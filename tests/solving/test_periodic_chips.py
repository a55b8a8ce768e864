"""A failed chip on a pod: its copies on a lattice forward nothing, the schedule drops it (synth.solving.periodic)."""

from collections import Counter, deque
from fractions import Fraction

import numpy as np
import pytest

from synth.cli import main
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus


def _leaf_distances(t, r, leaves):
    """Hop distances from ``r`` over paths that pass through no leaf (a leaf is reached, never left): plain BFS."""
    adj = {v: [] for v in range(t.n_vertices)}
    for u, v in zip(t.link_src.tolist(), t.link_dst.tolist()):
        adj[u].append(v)
    dist, todo = {r: 0}, deque([r])
    while todo:
        u = todo.popleft()
        if u in leaves and u != r:
            continue
        for v in adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                todo.append(v)
    return dist


@pytest.mark.parametrize("leaves", [None, (0, 4, 32, 36)])
def test_the_layered_arcs_take_no_leaf_as_owner_or_parent_and_go_around_them(leaves):
    from synth.models.packing.layered import layered_arcs

    t = parse_torus("8x8")
    data = layered_arcs(t, None, leaves)
    leaf = set(leaves or ())
    assert not leaf & set(data.roots.tolist()) and not leaf & set(data.parent.tolist())
    for i, r in enumerate(data.roots.tolist()):
        dist = _leaf_distances(t, r, leaf)
        mine = data.root == i
        # every vertex but the owner has its parents: exactly the non-leaf neighbours one hop nearer
        expect = {(v, u) for u, v in zip(t.link_dst.tolist(), t.link_src.tolist())
                  if u not in leaf and dist[u] == dist[v] - 1}
        assert set(zip(data.child[mine].tolist(), data.parent[mine].tolist())) == expect
        assert (data.depth[mine] == np.array([dist[v] for v in data.child[mine].tolist()])).all()
    assert data.H == max(max(_leaf_distances(t, int(r), leaf).values()) for r in data.roots)
    if leaves:
        # (0, 5) to (0, 3): the two hops through the leaf (0, 4) become four around it
        assert set(data.depth[(data.root == data.roots.tolist().index(5)) & (data.child == 3)].tolist()) == {4}


def test_the_timed_trees_never_take_a_leaf_as_parent():
    from synth.models.packing.layered import layered_arcs, solve_layered
    from synth.models.packing.timed import TimedOptions, solve_timed
    from synth.models.packing.tree_space import TreeSpace, arc_prices
    from synth.symmetry.spec import fixing_group
    from synth.topology.failures import Failures

    t = parse_torus("8x8")
    leaves = (0, 36)
    g = fixing_group(t, Failures(nodes=leaves), t)
    space = TreeSpace.build(t, g, 10, leaves)
    C = arc_prices(space, np.ones((20, t.n_links)))[0]
    into = np.isin(space.arc_dst, leaves)
    assert np.isinf(C[into]).all() and np.isfinite(C[~into, 1:]).all()
    layered = solve_layered(layered_arcs(t, g, leaves))
    sol = solve_timed(t, g, 10, time_limit=10, layered=layered, options=TimedOptions(max_iterations=15))
    used = sol.plink[sol.plink >= 0]
    assert sol.iterations > 1 and not np.isin(sol.space.arc_dst[used], leaves).any()
    assert not np.isin(sol.roots, leaves).any()


def test_a_failed_chip_repeats_on_cells_with_its_copies_as_leaves(monkeypatch):
    from synth.solving.periodic import periodic_network

    t = parse_torus("16x16")
    d = damage(t, parse_failures(t, nodes=["1.2"]))
    p = periodic_network(d, R=22, max_rows=2_000)
    assert p.cell == (8, 8) and p.topology is t and p.damaged.name == d.name
    assert p.leaves == (18, 26, 146, 154)                  # (1, 2) moved by (0 or 8, 0 or 8)
    images = p.group.vertex_images(np.array(p.leaves))
    assert (np.sort(images, axis=1) == np.array(p.leaves)).all() and p.group.order == 32
    assert "3 working chips that forward nothing" in p.note()
    monkeypatch.setattr("synth.solving.periodic.MAX_DROPPED", 1_000)        # 4 cells x 256 chips
    assert periodic_network(d, R=22, max_rows=2_000) is None
    monkeypatch.setattr("synth.solving.periodic.MAX_DROPPED", 1_024)
    monkeypatch.setattr("synth.solving.periodic.MAX_IDLE_SHARE", 0.005)    # three chips count as 6 idle links
    assert periodic_network(d, R=22, max_rows=2_000) is None


def test_a_lattice_of_chips_on_a_3d_torus_keeps_a_group_that_numbers_chunks():
    # every link is fixed by some element that exchanges the two other axes: only the even permutations stay
    from synth.symmetry.lattice import lattice_stabilizer
    from synth.symmetry.spec import _lattice_view, fixing_group
    from synth.topology.failures import Failures

    t = parse_torus("8x8x8")
    chips = Failures(nodes=[0, 4, 32, 36, 256, 260, 288, 292])
    g = fixing_group(t, chips, t)
    assert g.order == 192 and lattice_stabilizer(_lattice_view(t), chips).shape[0] == 384
    assert g.orbit_sizes.max() == g.order                  # a link with a trivial stabilizer


def test_dropping_the_failed_chip_keeps_every_lifted_tree_but_its_sends():
    # the schedule on the damaged torus, lifted by the elements that fix the chip, is the periodic schedule lifted
    # by its whole group with the chip's sends removed: the same trees, each once, with the same weights
    from synth.models.packing import layered_arcs, pack
    from synth.schedule.lift import lift
    from synth.solving.periodic import drop_failed_chips, periodic_network

    t = parse_torus("8x8")
    d = damage(t, parse_failures(t, nodes=["9"]))
    p = periodic_network(d, R=12, max_rows=2_000)
    assert p.cell == (4, 8) and p.leaves == (9, 41)
    packed = pack(layered_arcs(p.topology, p.group, p.leaves), units=8)
    out = drop_failed_chips(packed, p)
    assert out.base.topology is p.damaged and out.group.order < p.group.order

    def trees(base, group, net):
        s = lift(base, group)
        per = {}
        for b in s.blocks:
            links = b.links.reshape(b.chunk.size, -1)[:, 0]
            for c, u, v, op in zip(b.chunk.tolist(), net.link_src[links].tolist(), net.link_dst[links].tolist(),
                                   np.broadcast_to(b.op, b.chunk.shape).tolist()):
                if 9 not in (u, v):
                    per.setdefault(c, set()).add((int(b.round), u, v, int(op)))
        return Counter(frozenset(x) for x in per.values())

    assert trees(out.base, out.group, p.damaged) == trees(packed.base, packed.group, p.topology)
    assert out.base.weights.sum() * out.group.order == packed.base.weights.sum() * packed.group.order
    assert out.tree_images is not None and (out.tree_images.of >= 0).all()


def test_a_pod_with_a_failed_chip_is_certified_on_the_damaged_torus(monkeypatch, tmp_path, capsys):
    # 16x16 with a failed chip, as a pod past the timed master's rows (142 per reduce round, 16 rounds at least):
    # the trees run on the torus whose chip and its copies on cells of 8x8 forward nothing (38 rows per round);
    # the certificate is on the damaged torus itself, checked and executed
    import synth.solving.packing as packing
    from synth.check import execute, measure_explicit
    from synth.check.bounds.bandwidth import bandwidth_bound, best_cut
    from synth.check.claims import read_certificate
    from synth.schedule.chunking import chunk_elements
    from synth.schedule.lift import lift, lifted_weights

    monkeypatch.setattr(packing, "TIMED_MAX_ROWS", 2_000)
    monkeypatch.setattr("synth.solving.periodic.PLANE_ROWS", 1_000)
    out = tmp_path / "c.json"
    assert main(["solve", "--torus", "16x16", "--fail-node", "1.1", "--out", str(out), "--time-limit", "8"]) == 0
    err = capsys.readouterr().err
    assert "cells of 8x8 chips (3 working chips that forward nothing" in err and "timed trees (22 reduce" in err
    cert = read_certificate(str(out))
    d = damage(parse_torus("16x16"), parse_failures(parse_torus("16x16"), nodes=["1.1"]))
    assert cert.topology.spec == d.spec and cert.solver["failed_chips_dropped"] == [17]
    assert main(["check", str(out)]) == 0 and "VALID" in capsys.readouterr().out
    schedule = lift(cert.base, cert.group)
    assert execute(schedule) == []
    m = measure_explicit(schedule, chunk_elements(lifted_weights(cert.base, cert.group), cert.elements))
    bound = bandwidth_bound(d, cert.elements, best_cut(d)).value
    assert Fraction(cert.claims["bandwidth_term"]) == m.bandwidth_term
    # past the layered trees' 75 % (the best of their class on the periodic network)
    assert Fraction(cert.claims["bandwidth_fraction"]) == bound / m.bandwidth_term > Fraction(8, 10)
    assert "image" in out.read_text()                      # components as images of the base trees
    assert main(["export", str(out), "--out", str(tmp_path / "x.json")]) == 0
