"""Timed trees: valid columns, never worse than layered, brute force on tiny graphs, a knocked-out constraint."""

import itertools
from dataclasses import replace

import numpy as np
import pytest

from synth.check.claims import certify, check_certificate
from synth.errors import ScheduleError
from synth.models.packing.tree_pricing import best_parents, exact_price, price, start_labels
from synth.models.packing.tree_space import TreeSpace, arc_costs
from synth.models.packing.master import MasterLP, mirrored, rows_per_round
from synth.models.packing.timed import TimedOptions, solve_timed, timed_windows
from synth.models.packing.timed_schedule import pack_timed, round_timed
from synth.solving.packing import certify_packed
from synth.symmetry.spec import default_group
from synth.topology.base import Topology
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus


def damaged(shape, links=(), nodes=()):
    t = parse_torus(shape)
    return damage(t, parse_failures(t, links=list(links), nodes=list(nodes)))


@pytest.fixture(scope="module")
def torus4():
    d = damaged("4x4", links=["0-1"])
    return d, solve_timed(d, default_group(d), R=6, time_limit=30)


def test_every_column_is_a_timed_tree_and_the_schedule_checks(torus4):
    d, sol = torus4
    V = d.n_vertices
    assert {tuple(w) for w in sol.window.tolist()} > {(sol.R, 0)}     # trees in windows (overlap) were priced
    for k, L, pl, (Rj, o) in zip(sol.root, sol.labels, sol.plink, sol.window):
        r = int(sol.roots[k])
        assert L[r] == Rj + 1 and pl[r] == -1 and 0 <= o <= sol.R - Rj    # windows up to the centre: pairs
        kids = np.flatnonzero(pl >= 0)
        assert set(kids.tolist()) == set(range(V)) - {r}
        assert np.all(d.link_src[pl[kids]] == kids)
        assert np.all(L[kids] < L[d.link_dst[pl[kids]]])          # labels grow towards the root
        assert np.all((L[kids] >= 1) & (L[kids] <= Rj))
    cert = certify_packed(pack_timed(sol, units=64))
    report = check_certificate(cert)
    assert report.valid
    frac = cert.claims["bandwidth_fraction"]
    num, _, den = frac.partition("/")
    assert int(num) / int(den) > sol.layered.fraction          # beyond the layered class
    assert int(num) / int(den) <= sol.fraction + 0.02          # rounding costs little, never beats the LP by much
    # the LP's loads are the schedule's: with fine units it certifies what the LP claims
    fine = certify_packed(pack_timed(sol, units=8192)).claims["bandwidth_fraction"].partition("/")
    assert int(fine[0]) / int(fine[2]) == pytest.approx(sol.fraction, abs=0.005)


def test_the_timed_lp_is_at_most_the_layered_lp(torus4):
    d, sol = torus4
    assert sol.objective <= sol.layered.objective + 1e-9
    same_rounds = solve_timed(d, default_group(d), R=None, time_limit=20)
    assert same_rounds.R == same_rounds.layered.data.H
    assert same_rounds.objective <= same_rounds.layered.objective + 1e-9


def all_trees(space, root):
    """Every timed tree of ``root``: every labelling, every admissible parent of every vertex."""
    t = space.topology
    others = np.flatnonzero(space.live & (np.arange(t.n_vertices) != root))
    for labels in itertools.product(range(1, space.R + 1), repeat=others.size):
        L = np.zeros(t.n_vertices, dtype=np.int64)
        L[others] = labels
        L[root] = space.R + 1
        choices = []
        for v in others.tolist():
            out = np.flatnonzero(t.link_src == v)
            choices.append([a for a in out.tolist() if L[t.link_dst[a]] > L[v]])
        for pick in itertools.product(*choices):
            pl = np.full(t.n_vertices, -1, dtype=np.int64)
            pl[others] = pick
            yield L, pl


@pytest.mark.parametrize("overlap", [False, True])
@pytest.mark.parametrize("shape,links,extra", [("4", ["0-1"], 1), ("5", [], 1), ("4", ["0-1"], 2), ("3x3", ["0-1"], 0)])
def test_column_generation_against_every_tree(shape, links, extra, overlap):
    # the master LP over every timed tree of every window (enumerated) is the exact pricing's value; the
    # heuristic's may be above
    d = damaged(shape, links=links)
    g = default_group(d)
    exact = solve_timed(d, g, R=None, options=TimedOptions(exact=True, overlap=overlap))
    R = exact.R + extra
    exact = solve_timed(d, g, R=R, options=TimedOptions(exact=True, overlap=overlap))
    heur = solve_timed(d, g, R=R, options=TimedOptions(overlap=overlap))
    assert exact.status.startswith("optimal")
    assert heur.objective >= exact.objective - 1e-9
    if shape == "3x3":
        return                                           # too many trees to list; exact pricing is the reference
    lp = MasterLP(TreeSpace.build(d, g, R), 1 if g is None else g.order)
    windows = timed_windows(exact.R - extra, R, lp.mirror) if overlap else ((R, 0),)
    for Rj, o in windows:
        for k, r in enumerate(exact.roots.tolist()):
            for L, pl in all_trees(replace(lp.space, R=Rj), r):
                lp.add(k, L, pl, window=(Rj, o))
    value = lp.solve(vertex=True)[0]
    assert value == pytest.approx(exact.objective, abs=1e-9)
    assert heur.objective == pytest.approx(value, abs=1e-9)          # the heuristic finds the optimum here


def test_the_heuristic_gap_on_a_3x3_torus_is_reported():
    # R = H + 1: the exact pricing reaches 98.40 % of the volume bound; the first heuristic (one pricing
    # point, no purge, no restarts) stopped at 97.06 %; the heuristic as it is now reaches the exact value
    d = damaged("3x3", links=["0-1"])
    g = default_group(d)
    exact = solve_timed(d, g, R=3, options=TimedOptions(exact=True, overlap=False))
    heuristic = solve_timed(d, g, R=3, options=TimedOptions(overlap=False))
    assert exact.fraction == pytest.approx(0.98396, abs=1e-4)
    assert heuristic.fraction == pytest.approx(exact.fraction, abs=1e-9)


def test_pricing_never_worse_than_its_starts_and_exact_is_a_lower_bound():
    d = damaged("3x3", links=["0-1"])
    g = default_group(d)
    sp = TreeSpace.build(d, g, 3)
    rng = np.random.default_rng(0)
    C = arc_costs(sp, rng.random((6, d.n_links)))
    roots = np.array([0, 4])
    L0 = start_labels(sp, roots)
    rts = np.tile(roots, L0.shape[0] // roots.size)
    _, start_cost = best_parents(sp, C, L0, rts)
    L, pl, cost = price(sp, C, rts, L0)
    assert np.all(cost <= start_cost + 1e-12)
    for i, r in enumerate(rts.tolist()):
        assert exact_price(sp, C, r)[2] <= cost[i] + 1e-12


def test_knocked_out_label_order_is_rejected_by_the_checker(torus4):
    d, sol = torus4
    # a pricing that ignored L_v < L_u: give a vertex its parent's label (it then sends its partial sum in the
    # same round as its parent, whose value then misses it)
    j = int(np.argmax(sol.x))
    L, pl = sol.labels[j].copy(), sol.plink[j]
    v = int(np.flatnonzero((pl >= 0) & (L < sol.R) & (L[d.link_dst[np.maximum(pl, 0)]] <= sol.R))[0])
    L[v] = L[d.link_dst[pl[v]]]
    bad = type(sol)(**{**sol.__dict__, "labels": np.array([L if i == j else sol.labels[i]
                                                          for i in range(sol.labels.shape[0])])})
    with pytest.raises(ScheduleError):
        certify(round_timed(bad, units=64), sol.group)


def _same_lp(sol, full, small):
    """Both masters with every tree of ``sol`` as a column of the window ``(R, 0)``, solved at a vertex: the prices
    ``C`` of each, the share dual, each column's tree cost under prices ``C``, and the second's weights."""
    for lp in (full, small):
        for j in range(sol.x.size):
            lp.add(sol.root[j], sol.labels[j], sol.plink[j])
    (a, _, pa, mua), (b, xb, pb, mub) = full.solve(vertex=True), small.solve(vertex=True)
    assert b == pytest.approx(a, rel=1e-9) and mub == pytest.approx(mua, rel=1e-7)
    cost = lambda C, j: sum(C[sol.plink[j][v], sol.labels[j][v]] for v in np.flatnonzero(sol.plink[j] >= 0))
    return arc_costs(sol.space, pa), arc_costs(sol.space, pb), mub, cost, xb


@pytest.mark.parametrize("method", ["simplex", "ipm"])
def test_one_row_per_link_orbit_is_the_same_lp(torus4, method):
    # columns are trees summed over the group: rows of one link orbit are equal, so keeping one per orbit
    # changes neither the value nor any column's price (the orbit row's dual spread over its links)
    d, sol = torus4
    space, G = sol.space, sol.group.order
    full, small = MasterLP(space, G, method, orbits=False), MasterLP(space, G, method)
    assert small.n_load * 2 <= full.n_load             # the residual group of 4x4 minus a link has order 4
    Ca, Cb, mub, cost, x = _same_lp(sol, full, small)
    for j in range(0, sol.x.size, max(1, sol.x.size // 20)):
        assert cost(Cb, j) >= G * mub - 1e-7              # no column prices below the share row's dual
    assert sum(cost(Ca, j) * x[j] for j in range(sol.x.size)) == pytest.approx(
        sum(cost(Cb, j) * x[j] for j in range(sol.x.size)), rel=1e-6)


@pytest.mark.parametrize("method", ["simplex", "ipm"])
def test_mirrored_master_is_the_same_lp(torus4, method):
    # a tree's copy over rev(e) in round 2R + 1 - s loads what its reduce over e did in round s: the master
    # without the copy rounds' rows (each M_s counted twice) has the same value and prices every column alike
    d, sol = torus4
    space, G = sol.space, sol.group.order
    full, half = MasterLP(space, G, method, mirror=False), MasterLP(space, G, method)
    assert mirrored(d) and half.n_load * 2 == full.n_load
    Ca, Cb, _mub, cost, _x = _same_lp(sol, full, half)
    for j in range(0, sol.x.size, max(1, sol.x.size // 20)):
        assert cost(Cb, j) == pytest.approx(cost(Ca, j), rel=1e-6, abs=1e-9)


def test_mirror_needs_single_links_and_equal_reverse_bandwidths():
    t = parse_torus("3x3")
    assert mirrored(t) and rows_per_round(t, None) == t.n_links
    bw = np.ones(t.n_links)
    bw[0] = 2.0                                          # one direction of one link faster than its reverse
    uneven = Topology.from_links("3x3, one link faster one way", {}, t.n_vertices,
                                 np.stack([t.link_src, t.link_dst], axis=1), bandwidth=bw)
    assert not mirrored(uneven) and rows_per_round(uneven, None) == 2 * t.n_links
    assert MasterLP(TreeSpace.build(uneven, None, 2), 1).n_load == 2 * 2 * t.n_links


def test_a_crossover_past_its_seconds_rounds_the_interior_solution(monkeypatch):
    # the last master solve (the crossover to a vertex) is bounded: past its seconds the last interior
    # solution's weights are rounded, and the status says so; the schedule still certifies
    import synth.models.packing.timed as timed

    t = parse_torus("4x4")
    d = damage(t, parse_failures(t, links=["0-1"]))
    monkeypatch.setattr(timed, "VERTEX_SECONDS", 1e-9)
    monkeypatch.setattr(timed, "VERTEX_SHARE", 0.0)
    sol = solve_timed(d, default_group(d), R=5, time_limit=5, options=TimedOptions(max_iterations=3))
    assert "the crossover to a vertex passed 1e-09 s" in sol.status
    assert np.count_nonzero(sol.x) > 0 and sol.fraction > 0.5
    certify_packed(pack_timed(sol, units=64))
    # the crossover after a pricing that found nothing at the interior duals is bounded as well
    sol = solve_timed(d, default_group(d), R=5, time_limit=30)
    assert "no improving tree at the interior duals, and the crossover to a vertex passed 1e-09 s" in sol.status
    assert sol.x.size == sol.labels.shape[0] and sol.fraction > 0.99
    certify_packed(pack_timed(sol, units=64))


def test_a_bounded_solve_counts_only_its_own_run_time(torus4):
    # HiGHS's time limit counts the run time of every solve of the model so far: a bound of ``seconds``
    # must be that much beyond what the earlier solves used, or a long column generation's crossover
    # stops at once (half of ten solves' time is far more than one crossover of the same LP needs)
    d, sol = torus4
    lp = MasterLP(sol.space, sol.group.order, "ipm")
    for j in range(sol.x.size):
        lp.add(sol.root[j], sol.labels[j], sol.plink[j], sol.routes[j], tuple(sol.window[j]))
    for _ in range(10):
        lp.solve()
    done = lp.solve(vertex=True, seconds=lp.h.getRunTime() / 2)
    assert done is not None and done[0] == pytest.approx(sol.objective, rel=1e-6)


def test_a_window_column_of_the_mirrored_master_is_its_tree_and_the_mirrored_one(torus4):
    # off the centre a column of the mirrored master stands for its tree in its window and in the mirrored
    # window, half each: the master over every rows with both trees as columns has the same value, and the
    # prices the mirrored master returns price each column as its tree in its own window (every column at
    # least the share row's dual, the basic ones exactly)
    d, sol = torus4
    space, G, R = sol.space, sol.group.order, sol.R
    full, half = MasterLP(space, G, "simplex", mirror=False), MasterLP(space, G, "simplex")
    off = 0
    for j in range(sol.x.size):
        (Rj, o), args = sol.window[j].tolist(), (sol.root[j], sol.labels[j], sol.plink[j], sol.routes[j])
        half.add(*args, window=(Rj, o))
        full.add(*args, window=(Rj, o))
        off += full.add(*args, window=(Rj, 2 * (R - Rj) - o))
    assert off > 0
    (a, _, _, _), (b, x, pi, mu) = full.solve(vertex=True), half.solve(vertex=True)
    assert b == pytest.approx(a, rel=1e-9)
    for j in range(sol.x.size):
        (Rj, o), L, pl = sol.window[j].tolist(), sol.labels[j], sol.plink[j]
        C = arc_costs(replace(space, R=Rj), pi[o:o + 2 * Rj])
        cost = sum(C[pl[v], L[v]] for v in np.flatnonzero(pl >= 0))
        assert cost >= G * mu - 1e-9
        if x[j] > 1e-9:
            assert cost == pytest.approx(G * mu, rel=1e-7)


def test_a_master_solve_stopped_by_the_time_limit_leaves_the_last_solution(monkeypatch):
    # a master solve that ends at the time limit (HiGHS returns no optimum) leaves the previous solution's
    # weights, the columns priced since at 0, and the status says so; the schedule still certifies
    d = damaged("4x4", links=["0-1"])
    real, calls = MasterLP.solve, []

    def solve(self, vertex=False, seconds=None):
        calls.append(seconds)
        return None if len(calls) == 3 else real(self, vertex, seconds)

    monkeypatch.setattr(MasterLP, "solve", solve)
    sol = solve_timed(d, default_group(d), R=5, time_limit=30)
    assert calls[0] is None and all(s is not None for s in calls[1:])       # every solve after the first is bounded
    assert "a master solve reached the time limit (30 CPU s)" in sol.status and len(calls) == 3
    assert sol.x.size == sol.labels.shape[0] and np.count_nonzero(sol.x) > 0
    certify_packed(pack_timed(sol, units=64))


@pytest.mark.parametrize("share", [0.5, 0.0])
def test_no_master_solve_starts_that_would_end_well_past_the_time_limit(monkeypatch, share):
    # every master solve takes 10 s on a fake CPU clock: with a 14-s limit the first leaves 4 s, less than half
    # the next one's 10 (NEXT_SOLVE_SHARE), so the column generation stops there and only the crossover follows;
    # knocked out (share 0) a second solve starts and ends 6 s past the limit
    import time as real_time
    from types import SimpleNamespace

    import synth.models.packing.timed as timed

    clock, real, calls = [0.0], MasterLP.solve, []

    def solve(self, vertex=False, seconds=None):
        calls.append(vertex)
        clock[0] += 10.0
        return real(self, vertex, seconds)

    monkeypatch.setattr(timed, "time", SimpleNamespace(process_time=lambda: clock[0], monotonic=real_time.monotonic))
    monkeypatch.setattr(MasterLP, "solve", solve)
    monkeypatch.setattr(timed, "NEXT_SOLVE_SHARE", share)
    d = damaged("4x4", links=["0-1"])
    sol = solve_timed(d, default_group(d), R=5, time_limit=14)
    if share:
        assert calls == [False, True] and "the next master solve, about 10.0 s, would end past it" in sol.status
    else:
        assert calls == [False, False, True] and "would end past it" not in sol.status
    assert "column generation stopped at the time limit (14 CPU s" in sol.status
    certify_packed(pack_timed(sol, units=64))


def test_warm_labels_take_each_owners_heaviest_columns_by_rank():
    from types import SimpleNamespace

    from synth.models.packing.timed import _warm_labels

    labels = [np.full(3, i) for i in range(5)]
    lp = SimpleNamespace(root=[0, 0, 1, 0, 1], window=[(4, 0)] * 4 + [(2, 0)], labels=labels)
    x = np.array([0.1, 0.5, 0.2, 0.3, 0.9])
    starts = np.array([[7, 7, 7], [8, 8, 8], [9, 9, 9]])
    warm = _warm_labels(lp, x, 3, starts, (4, 0), depth=3)
    # rank 0 of owners 0, 1, 2, then rank 1, rank 2; owner 1 has one column in the window (column 4 is in
    # another), owner 2 none
    assert warm[:, 0].tolist() == [1, 2, 9, 3, 2, 9, 0, 2, 9]
    assert np.array_equal(_warm_labels(lp, x, 3, starts, (4, 0)), warm[:3])


@pytest.mark.parametrize("starts", [None, 2])
def test_the_pricing_takes_the_fixed_starts_only_in_its_first_iterations(monkeypatch, starts):
    import synth.models.packing.timed as timed

    d = damaged("4x4", links=["0-1"])
    g = default_group(d)
    seen, original = [], timed._price_rows

    def record(space, C, roots, warm, fixed, sweeps=True):
        seen.append(fixed.shape[0] // roots.size)
        return original(space, C, roots, warm, fixed, sweeps)

    monkeypatch.setattr(timed, "_price_rows", record)
    n_starts = start_labels(TreeSpace.build(d, g, 6), np.array([0])).shape[0]
    solve_timed(d, g, R=6, time_limit=30, options=TimedOptions(overlap=False, kicks=0, max_iterations=5, warm=3,
                                                               starts=starts))
    # one pricing point in the first iteration, two after (the smoothing's); starts: the two lower-ranked
    # warm rows and, while they are taken, the fixed starting labellings
    assert seen[0] == 2 + n_starts
    later = set(seen[1:])
    assert later == ({2 + n_starts} if starts is None else {2 + n_starts, 2}) and seen[-1] == (
        2 + n_starts if starts is None else 2)


def test_the_sweep_goes_only_where_hierarchical_trees_start_a_master_of_heavy_vertices(monkeypatch):
    """The pricing's sweep (every label of a vertex against every neighbour) is left out only where the master
    starts from hierarchical trees and arcs per vertex times R pass SWEEP_WORK: four MI250 nodes at R = 32 (63
    arcs), not at R = 16, not from the routed trees alone, not on a torus; an explicit option wins."""
    from synth.models.packing import timed, tree_pricing
    from synth.topology.machines import machine_spec
    from synth.topology.spec import build_topology

    mi = build_topology(machine_spec("mi250:4"))
    g = default_group(mi)
    roots = np.array([0])
    for R, hierarchical, options, sweeps in [(32, True, TimedOptions(), False), (16, True, TimedOptions(), True),
                                             (32, False, TimedOptions(), True),
                                             (32, True, TimedOptions(sweep=True), True)]:
        space = TreeSpace.build(mi, g, R)
        assert timed._Pricer(space, roots, g.order, options, None, hierarchical).sweeps is sweeps
    torus = parse_torus("4x4")
    assert timed._Pricer(TreeSpace.build(torus, None, 6), roots, 1, TimedOptions(), None, True).sweeps
    # without sweeps the pricing never sweeps, and still returns trees no dearer than its starting labels'
    d = damage(torus, parse_failures(torus, links=["0-1"]))
    space = TreeSpace.build(d, None, 5)
    C = arc_costs(space, np.random.default_rng(0).random((10, d.n_links)))
    L0 = start_labels(space, np.array([3]))
    monkeypatch.setattr(tree_pricing, "sweep", lambda *a, **k: pytest.fail("swept"))
    L, plink, cost = price(space, C, np.full(L0.shape[0], 3), L0, sweeps=False)
    assert np.all(cost <= best_parents(space, C, L0, np.full(L0.shape[0], 3))[1] + 1e-9)
    with pytest.raises(pytest.fail.Exception):
        price(space, C, np.full(L0.shape[0], 3), L0)


def test_without_the_crossover_the_interior_weights_are_rounded_and_the_status_says_so():
    t = parse_torus("4x4")
    d = damage(t, parse_failures(t, links=["0-1"]))
    g = default_group(d)
    kept = solve_timed(d, g, R=5, time_limit=10, options=TimedOptions(max_iterations=3))
    interior = solve_timed(d, g, R=5, time_limit=10, options=TimedOptions(max_iterations=3, crossover=False))
    assert "no crossover" in interior.status and "no crossover" not in kept.status
    # a vertex has at most as many positive weights as rows; an interior point keeps every column slightly up
    assert (interior.x > 1e-12).sum() > (kept.x > 1e-12).sum()
    assert interior.objective == pytest.approx(kept.objective, rel=1e-3)
    assert pack_timed(interior, units=64).lp_fraction == interior.fraction


@pytest.mark.parametrize("t", [parse_torus("4x4"), damaged("4x6", links=["0-1"])], ids=lambda t: t.name)
def test_an_arcs_price_sums_its_links_prices_over_every_group_element(t):
    # arc_costs sums by link orbits, weighted: against the plain sum of every element's image, link by link, at
    # prices that are not the same on an orbit's links (a master's are; random ones need not be)
    g = default_group(t)
    space = TreeSpace.build(t, g, 3)
    pi = np.random.default_rng(1).random((6, t.n_links))
    images = g.link_images(np.arange(t.n_links)).tolist()
    C = arc_costs(space, pi)
    for a in range(0, space.n_arcs, 7):
        e, back = int(space.route_links[a, 0]), int(space.rev[space.route_links[a, 0]])
        for lab in range(1, 4):
            want = sum(pi[lab - 1][img[e]] + pi[6 - lab][img[back]] for img in images)
            assert C[a, lab] == pytest.approx(want, rel=1e-12)
