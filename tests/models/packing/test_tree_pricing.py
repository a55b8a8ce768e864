"""The heuristic pricing's label sweep against a plain re-pricing of every neighbour at every move."""

import numpy as np
import pytest

from synth.models.packing.tree_pricing import INF, _slot_costs, start_labels, sweep
from synth.models.packing.tree_space import TreeSpace, arc_costs
from synth.symmetry.spec import default_group
from synth.topology.failures import damage, parse_failures
from synth.topology.machines import machine_spec
from synth.topology.spec import build_topology
from synth.topology.torus import parse_torus


def _plain_sweep(space, C, L, roots, lo=None):
    """What :func:`sweep` computes, the slow way: every neighbour's parent slots priced anew at every vertex."""
    B, V = L.shape
    R = space.R
    L = L.copy()
    ts = np.arange(1, R + 1)
    for v in np.concatenate(space.sweep_classes).tolist():         # one by one, in the sweep's order
        active = roots != v
        nb, ln, bk = space.nbr[v], space.lnk[v], space.back[v]
        have = nb >= 0
        nbv, lnv, bkv = nb[have], ln[have], bk[have]
        lu = L[:, nbv]
        own = np.where(lu[:, :, None] > ts[None, None, :], C[lnv][:, 1:][None, :, :], INF).min(axis=1)
        if lo is not None:
            own = np.where(ts[None, :] >= lo[:, v:v + 1], own, INF)
        wvals = _slot_costs(space, C, L, nbv, lo)
        excl = wvals.copy()
        excl[:, np.arange(nbv.size), bkv] = INF
        excl = excl.min(axis=2)
        via = C[space.lnk[nbv, bkv][None, :], np.clip(lu, 0, R)]
        wcost = np.minimum(excl[:, :, None], np.where(ts[None, None, :] > lu[:, :, None], via[:, :, None], INF))
        counted = space.live[nbv][None, :] & (roots[:, None] != nbv[None, :])
        total = own + np.where(counted[:, :, None], wcost, 0.0).sum(axis=1)
        best = total.argmin(axis=1)
        cur = total[np.arange(B), np.clip(L[:, v], 1, R) - 1]
        better = active & (total[np.arange(B), best] < cur - 1e-12)
        L[better, v] = best[better] + 1
    return L


def _torus():
    t = parse_torus("4x4")
    return damage(t, parse_failures(t, links=["0-1"]))


def _fabric(name):
    t = build_topology(machine_spec(name))
    return damage(t, parse_failures(t, nodes=[str(int(t.nic_of(1)))]))


@pytest.mark.parametrize("make, R", [(_torus, 6), (lambda: _fabric("dgx-a100:2"), 5), (lambda: _fabric("mi250:2"), 8)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_sweep_moves_as_plain_repricing_does(make, R, seed):
    # random prices and several passes (labels that move again), with and without a least label per vertex
    t = make()
    space = TreeSpace.build(t, default_group(t), R)
    rng = np.random.default_rng(seed)
    C = arc_costs(space, rng.lognormal(0.0, 1.0, (2 * R, t.n_links)))
    roots = np.flatnonzero(space.live)[:3]
    L = start_labels(space, roots)
    roots = np.tile(roots, L.shape[0] // roots.size)
    lo = np.where(rng.random(L.shape) < 0.2, np.minimum(L, 2), 1) * (L > 0)
    for bound in (None, lo):
        a = b = L
        for _ in range(3):
            a, b = sweep(space, C, a, roots, bound), _plain_sweep(space, C, b, roots, bound)
            assert np.array_equal(a, b)
        assert not np.array_equal(a, L)          # the sweep moved labels: the comparison saw moves


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_neighbour_totals_bucketed_by_label_are_the_sums_at_every_label(seed):
    # the buckets against every term summed at every label, with parents missing (inf) on both sides of a
    # neighbour's label and neighbours not counted (roots, dead vertices)
    import synth.models.packing.tree_pricing as tp

    rng = np.random.default_rng(seed)
    B, d, R = 7, 40, 9
    excl = rng.random((B, d))
    excl[:3, :2] = INF                            # rows 0-2: a neighbour with no other parent than the mover
    via = np.where(rng.random((B, d)) < 0.3, INF, rng.random((B, d)))
    lu = rng.integers(0, R + 2, (B, d))
    counted = rng.random((B, d)) < 0.8
    excl[5, 3] = via[5, 3] = INF                  # row 5: a root or dead neighbour without parents: not counted
    counted[5, 3] = False
    bucketed = tp._neighbour_totals(excl, via, lu, counted, R)
    ts = np.arange(1, R + 1)
    plain = np.array([[sum(min(excl[b, j], via[b, j] if t > lu[b, j] else INF) for j in range(d) if counted[b, j])
                       for t in ts] for b in range(B)])
    assert np.isinf(plain).any() and np.isfinite(plain[3:]).all()
    assert np.array_equal(np.isinf(bucketed), np.isinf(plain))
    fin = np.isfinite(plain)
    assert np.allclose(bucketed[fin], plain[fin], rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("with_lo", [False, True])
def test_tree_labels_are_the_cheapest_labels_of_the_tree(seed, with_lo):
    # brute force over every labelling of the tree (3x3 torus, R = 3: 3^8 labellings), rows for two roots
    import itertools

    from synth.models.packing.tree_pricing import best_parents, distance_labels, tree_labels

    t = parse_torus("3x3")
    space = TreeSpace.build(t, None, 3)
    rng = np.random.default_rng(seed)
    C = arc_costs(space, rng.lognormal(0.0, 1.0, (6, t.n_links)))
    roots = np.array([0, 4])
    L0 = distance_labels(space, roots)
    plink, _ = best_parents(space, C, L0, roots)
    lo = np.where(rng.random(L0.shape) < 0.3, np.minimum(L0, 2), 1) * (L0 > 0) if with_lo else None
    new = tree_labels(space, C, L0, plink, roots, lo)
    for row, r in enumerate(roots.tolist()):
        kids = np.flatnonzero(plink[row] >= 0)
        par = space.arc_dst[plink[row, kids]]
        least = 1 if lo is None else lo[row, kids]
        best = np.inf
        for labels in itertools.product(range(1, 4), repeat=kids.size):
            full = np.full(t.n_vertices, 4)
            full[kids] = labels
            if np.all(full[kids] < full[par]) and np.all(full[kids] >= least):
                best = min(best, float(C[plink[row, kids], full[kids]].sum()))
        got = new[row, kids]
        assert np.all(got < np.where(par == r, 4, new[row, par])) and np.all(got >= least)
        assert float(C[plink[row, kids], got].sum()) == pytest.approx(best, rel=1e-12)
