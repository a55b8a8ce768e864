"""A failed chip on a pod: its copies on a lattice forward nothing, the schedule drops it (synth.solving.periodic)."""

from collections import deque
from fractions import Fraction

import numpy as np
import pytest

import synth.solving.rounds as rounds
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


def test_owners_without_layered_trees_start_from_trees_that_avoid_the_leaves(monkeypatch):
    # an owner beside a leaf whose layered share was 0 starts from priced trees: a distance-layered start there
    # must pass through the leaf (vertex 7's one nearer neighbour towards owner 1 is the leaf 0) and prices inf;
    # such a tree is no column (24x24 with a failed chip certified its timed trees wrong)
    import synth.models.packing.timed as timed
    from synth.models.packing.layered import layered_arcs, solve_layered
    from synth.models.packing.master import MasterLP
    from synth.models.packing.tree_space import TreeSpace
    from synth.symmetry.spec import fixing_group
    from synth.topology.failures import Failures

    t = parse_torus("8x8")
    leaves = (0, 36)
    g = fixing_group(t, Failures(nodes=leaves), t)
    layered = solve_layered(layered_arcs(t, g, leaves))
    monkeypatch.setattr(timed, "start_columns", lambda *_a: [])       # every owner starts from a priced tree
    sol = timed.solve_timed(t, g, 10, time_limit=10, layered=layered,
                            options=timed.TimedOptions(max_iterations=2, purge=0))
    used = sol.plink[sol.plink >= 0]
    assert sol.x.size and set(sol.root.tolist()) == set(range(sol.roots.size))
    assert not np.isin(sol.space.arc_dst[used], leaves).any()
    # the master itself refuses a tree through a leaf
    space = TreeSpace.build(t, g, 10, leaves)
    lp = MasterLP(space, g.order)
    k = int(np.flatnonzero(sol.roots == 1)[0])
    L = np.full(t.n_vertices, 1, dtype=np.int64)
    L[1], L[0] = 11, 2
    plink = np.full(t.n_vertices, -1, dtype=np.int64)
    plink[7] = t.link_ids(7, 0)                        # 7 sends to the leaf 0
    assert not lp.add(k, L, plink) and lp.n_columns == 0


def test_a_failed_chip_repeats_on_cells_with_its_copies_as_leaves(monkeypatch):
    from synth.solving.periodic import periodic_network

    t = parse_torus("16x16")
    d = damage(t, parse_failures(t, nodes=["1.2"]))
    p = periodic_network(d, R=22, max_rows=2_000)
    assert p.cell == (8, 8) and p.topology is t and p.dropped == (18,)
    assert p.leaves == (18, 26, 146, 154)                  # (1, 2) moved by (0 or 8, 0 or 8)
    images = p.group.vertex_images(np.array(p.leaves))
    assert (np.sort(images, axis=1) == np.array(p.leaves)).all() and p.group.order == 32
    assert "3 working chips that forward nothing" in p.note()
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


@pytest.fixture(scope="module")
def chip_8x8():
    """8x8 with a failed chip: its periodic network (cells of 4x8, the chip and one copy as leaves) and the
    layered packing there."""
    from synth.models.packing import layered_arcs, pack
    from synth.solving.periodic import periodic_network

    t = parse_torus("8x8")
    d = damage(t, parse_failures(t, nodes=["9"]))
    p = periodic_network(d, R=12, max_rows=2_000)
    assert p.cell == (4, 8) and p.leaves == (9, 41) and p.dropped == (9,)
    return d, p, pack(layered_arcs(p.topology, p.group, p.leaves), units=8)


@pytest.mark.parametrize("elements", [None, 1000])      # equal chunks per component, and unequal ones
def test_a_dropped_chip_is_measured_by_the_group_as_its_lift_is_executed(chip_8x8, elements):
    # the symmetric measurement (loads per link orbit, the chip's links and sends counted out) against the
    # lifted schedule without the chip, executed and counted link by link on the damaged torus
    from synth.check import execute, measure_explicit, measure_symmetric
    from synth.schedule.lift import default_elements, lift, lifted_chunk_elements

    d, p, packed = chip_8x8
    base, group = packed.base, packed.group
    sizes = lifted_chunk_elements(base, group, elements or default_elements(base, group))
    schedule = lift(base, group, p.dropped)
    assert schedule.topology.spec == d.spec and execute(schedule) == []
    assert len(np.unique(sizes.reshape(base.n_components, -1), axis=1)[0]) > 1 or elements is None
    m = measure_symmetric(base, group, sizes, p.dropped)
    assert m == measure_explicit(schedule, sizes)
    assert m.compute_nodes == 63 and m.links == d.n_links
    whole = measure_symmetric(base, group, sizes)       # the periodic network's: the chip's sends counted
    assert whole.transmissions - m.transmissions == 2 * base.n_components * group.order   # its up and down sends


def test_only_a_leaf_of_every_tree_can_be_dropped():
    # SP-allreduce's trees have every chip forward in some tree: dropping one is refused by the group, and the
    # lift without it executes wrong
    from synth import sp_allreduce, torus_gamma
    from synth.check import execute, measure_symmetric
    from synth.errors import InvalidScheduleError
    from synth.schedule.lift import lift, lifted_chunk_elements

    t = parse_torus("4x4")
    base, group = sp_allreduce(t), torus_gamma(t)
    with pytest.raises(InvalidScheduleError, match="in the orbit of a dropped chip, forwards"):
        measure_symmetric(base, group, lifted_chunk_elements(base, group, 64), [5])
    assert execute(lift(base, group, [5]))


def test_a_certificate_that_drops_a_chip_reads_back_and_its_drop_is_checked(chip_8x8, tmp_path, capsys):
    from synth.check.certificate import read_certificate, write_certificate
    from synth.check.claims import certify, check_certificate

    d, p, packed = chip_8x8
    cert = certify(packed.base, packed.group, dropped=p.dropped, mode="symmetric")
    path = tmp_path / "c.json"
    write_certificate(cert, path)
    back = read_certificate(str(path))
    assert back.dropped == (9,) and back.network.spec == d.spec and back.topology.spec == p.topology.spec
    assert check_certificate(back).valid and check_certificate(back, "explicit").valid
    text = path.read_text()
    assert '"version": 4' in text and '"dropped": [9]' in text
    # the claims are the damaged torus's: without the drop the same schedule measures otherwise
    (tmp_path / "kept.json").write_text(text.replace(',\n  "dropped": [9]', "").replace('"version": 4', '"version": 2'))
    assert main(["check", str(tmp_path / "kept.json")]) == 1 and "INVALID" in capsys.readouterr().out
    for bad in ("[9, 9]", "[64]", "[\"9\"]"):
        (tmp_path / "bad.json").write_text(text.replace('"dropped": [9]', f'"dropped": {bad}'))
        assert main(["check", str(tmp_path / "bad.json")]) == 2
        assert "dropped" in capsys.readouterr().err
    (tmp_path / "v3.json").write_text(text.replace('"version": 4', '"version": 3'))
    assert main(["check", str(tmp_path / "v3.json")]) == 2 and "unknown key 'dropped'" in capsys.readouterr().err
    # a chip outside the leaves' orbit forwards in some tree: the lift without it executes wrong, and the group
    # finds it forwarding
    (tmp_path / "other.json").write_text(text.replace('"dropped": [9]', '"dropped": [10]'))
    assert main(["check", str(tmp_path / "other.json")]) == 1 and "does not end with" in capsys.readouterr().out
    assert main(["check", str(tmp_path / "other.json"), "--mode", "symmetric"]) == 1
    assert "forwards" in capsys.readouterr().out


def test_a_pod_with_a_failed_chip_is_certified_on_the_damaged_torus(monkeypatch, tmp_path, capsys):
    # 16x16 with a failed chip, as a pod past the timed master's rows (142 per reduce round, 16 rounds at least):
    # the trees run on the torus whose chip and its copies on cells of 8x8 forward nothing (38 rows per round);
    # the certificate is on the damaged torus itself, checked and executed
    from synth.check import execute, measure_explicit
    from synth.check.bounds.bandwidth import bandwidth_bound, best_cut
    from synth.check.claims import read_certificate
    from synth.schedule.chunking import chunk_elements
    from synth.schedule.lift import lift, lifted_weights

    monkeypatch.setattr(rounds, "TIMED_MAX_ROWS", 2_000)
    monkeypatch.setattr("synth.solving.periodic.PLANE_ROWS", 1_000)
    out = tmp_path / "c.json"
    assert main(["solve", "--torus", "16x16", "--fail-node", "1.1", "--out", str(out), "--time-limit", "8"]) == 0
    err = capsys.readouterr().err
    assert "cells of 8x8 chips (3 working chips that forward nothing" in err and "timed trees (22 reduce" in err
    cert = read_certificate(str(out))
    d = damage(parse_torus("16x16"), parse_failures(parse_torus("16x16"), nodes=["1.1"]))
    assert cert.network.spec == d.spec and cert.dropped == (17,) and cert.group.order == 32
    assert main(["check", str(out)]) == 0 and "VALID" in capsys.readouterr().out
    schedule = lift(cert.base, cert.group, cert.dropped)
    assert schedule.topology.spec == d.spec
    assert execute(schedule) == []
    m = measure_explicit(schedule, chunk_elements(lifted_weights(cert.base, cert.group), cert.elements))
    bound = bandwidth_bound(d, cert.elements, best_cut(d)).value
    assert Fraction(cert.claims["bandwidth_term"]) == m.bandwidth_term
    # past the layered trees' 75 % (the best of their class on the periodic network)
    assert Fraction(cert.claims["bandwidth_fraction"]) == bound / m.bandwidth_term > Fraction(8, 10)
    assert '"dropped": [17]' in out.read_text()            # the periodic schedule and the chip it drops
    assert main(["export", str(out), "--out", str(tmp_path / "x.json")]) == 0
