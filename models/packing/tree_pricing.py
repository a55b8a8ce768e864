"""Pricing timed trees: the cheapest tree of one owner under per-link, per-round prices.

A *timed tree* of root ``r`` over ``R`` reduce rounds gives every other live vertex ``v`` a label
``L_v`` in ``1..R`` (``L_r = R + 1``) and a parent ``u``, a neighbour with ``L_u > L_v``: ``v`` sends
its partial sum to ``u`` in round ``L_v`` and gets the result back in round ``2R + 1 - L_v``.  With a
price ``C[a, t]`` for using arc ``a = v -> u`` at label ``t`` (a link, or a route through switches:
:mod:`synth.models.packing.tree_space`; both directions, both phases, every lifted image:
:func:`~synth.models.packing.tree_space.arc_costs`), a tree costs the sum of its arcs' prices.  Given the labels, every
vertex independently takes its cheapest admissible parent (:func:`best_parents`); given the tree,
the best labels follow from a dynamic program over the tree (:func:`tree_labels`); single labels are
improved by coordinate descent (:func:`sweep`).  :func:`price` alternates the three from several
starting labellings, all roots and starts at once (rows of a label matrix ``L``, shape ``(B, V)``).
:func:`exact_price` enumerates every labelling (tiny graphs: the tests' brute force).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("3x3")
>>> sp = TreeSpace.build(t, None, R=2)
>>> C = arc_costs(sp, np.ones((4, t.n_links)))
>>> L, plink, cost = price(sp, C, np.array([0]), distance_labels(sp, np.array([0]), 0))
>>> cost.tolist()                        # 8 vertices, each one arc up and one down, every price 1
[16.0]
>>> exact_price(sp, C, 0)[2]
16.0
"""

from __future__ import annotations

import itertools

import numpy as np

from synth.models.packing.tree_space import TreeSpace, arc_costs
from synth.topology.base import Topology

__all__ = ["best_parents", "tree_labels", "sweep", "price", "exact_price",
           "distance_labels", "start_labels"]

INF = np.inf


def _slot_costs(space, C, L, vs, lo=None):
    """``(B, len(vs), D)``: the price of each parent slot of the vertices ``vs`` (inf where not admissible;
    ``lo``, per row and vertex, the smallest label allowed)."""
    nb, ln = space.nbr[vs], space.lnk[vs]
    lv = L[:, vs]
    lu = np.where(nb >= 0, L[:, np.maximum(nb, 0)], -1)
    ok = (nb >= 0) & (lu > lv[:, :, None]) & (lv[:, :, None] >= 1) & (lv[:, :, None] <= space.R)
    if lo is not None:
        ok &= (lv >= lo[:, vs])[:, :, None]
    val = C[np.maximum(ln, 0), np.clip(lv, 0, space.R)[:, :, None]]
    return np.where(ok, val, INF)


def best_parents(space: TreeSpace, C, L, roots, lo=None):
    """Per row of ``L``: each vertex's cheapest admissible parent link (-1 at roots and dead vertices) and the
    total (``lo``: per row and vertex, the smallest label allowed; None: 1)."""
    B, V = L.shape
    # the vertices with arcs only (on switch fabrics half the vertices, the NICs and switches, have none)
    vs = np.flatnonzero((space.nbr >= 0).any(axis=1))
    vals = _slot_costs(space, C, L, vs, lo)
    slot = vals.argmin(axis=2)
    cost = np.full((B, V), INF)
    cost[:, vs] = np.take_along_axis(vals, slot[:, :, None], 2)[:, :, 0]
    plink = np.full((B, V), -1, dtype=space.lnk.dtype)
    plink[:, vs] = space.lnk[vs[None, :], slot]
    idle = ~space.live[None, :] | (np.arange(V)[None, :] == roots[:, None])
    cost = np.where(idle, 0.0, cost)
    plink = np.where(idle, -1, plink)
    return plink, cost.sum(axis=1)


def tree_labels(space: TreeSpace, C, L, plink, roots, lo=None):
    """The best labels for the trees ``plink`` (every vertex's label below its parent's, at least ``lo``); the
    labels ``L`` must be admissible for them.  Children have smaller labels, so one pass per label level
    suffices; a level's vertices are taken by parent (its children's sums summed without a sort of their rows),
    and only their own arcs' prices are read (no ``(rows, vertices, labels)`` copy of them: on the v5p pod's
    periodic network 0.75 times the time, `bench/tree_dp.py`)."""
    B, V = L.shape
    R = space.R
    has = plink >= 0
    par = np.where(has, space.arc_dst[np.maximum(plink, 0)], -1)
    cols = np.arange(R + 1)
    kids = np.zeros((B * V, R + 2))                                        # row b * V + v
    flat = np.where(has, L, 0).ravel()
    order = np.argsort(flat, kind="stable")
    bounds = np.searchsorted(flat[order], np.arange(R + 2))
    levels = []
    for level in range(1, R + 1):
        idx = order[bounds[level]:bounds[level + 1]]
        if idx.size == 0:
            continue
        bi, vi = np.divmod(idx, V)
        key = bi * V + par[bi, vi]
        by = np.argsort(key, kind="stable")
        bi, vi, idx, key = bi[by], vi[by], idx[by], key[by]
        gv = C[plink[bi, vi]]                                              # (n, R+1), column 0: no such label
        gv[:, 0] = INF
        if lo is not None:
            gv[cols[None, :] < lo[bi, vi][:, None]] = INF
        gv += kids[idx, :R + 1]                                            # a vertex's children come before it
        f = np.full((bi.size, R + 2), INF)                                 # f[., T]: best with label < T
        f[:, 1:] = np.minimum.accumulate(gv, axis=1)
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])          # add each f to its parent's children
        kids[key[first]] += np.add.reduceat(f, first, axis=0)
        levels.append((bi, vi, gv))
    new = L.copy()
    for bi, vi, gv in reversed(levels):
        cap = new[bi, par[bi, vi]]                                          # parent's new label
        new[bi, vi] = np.where(cols[None, :] < cap[:, None], gv, INF).argmin(axis=1)
    return new


#: entries of the sweep's ``(rows, vertices, neighbours, rounds)`` temporaries at most: a class moves in steps of
#: as many vertices as keep within it (0: one vertex at a time, as before the classes)
SWEEP_ENTRIES = 4_000_000


def sweep(space: TreeSpace, C, L, roots, lo=None):
    """One pass of single-label moves: each vertex takes the label that minimizes its own price plus its
    neighbours' (each re-choosing its parent), over all rows at once (labels at least ``lo``); returns the new
    labels.

    A vertex's label enters only its own parent choice and its neighbours', so vertices three or more arcs apart
    move independently: the pass takes the classes of :attr:`~synth.models.packing.tree_space.TreeSpace.sweep_classes`
    one after the other, every vertex of a class at once (a class moves exactly as its vertices would one by one,
    Gauss-Seidel between classes; on 16x16x16 sixteen steps instead of 4,096).  Each neighbour's best parent other
    than the moving vertex comes from the two cheapest of its parent slots, kept for every vertex and row and
    updated where a label moves (only the moved vertex's slots and its neighbours' slots toward it change),
    instead of pricing every neighbour's slots again at every move (on four MI250 nodes, up to 63 routes per GCD,
    that was half the timed trees' CPU)."""
    B, V = L.shape
    L = L.copy()
    vals = _slot_costs(space, C, L, np.arange(V), lo)                      # (B, V, D): every parent slot
    slots = list(_two_least(vals))                                         # first, second, arg
    D, R = space.nbr.shape[1], space.R
    step = max(1, SWEEP_ENTRIES // max(1, B * D * R))                      # vertices per step at most
    for cls in space.sweep_classes:
        for at in range(0, cls.size, step):
            _move(space, C, L, roots, lo, cls[at:at + step], vals, slots)
    return L


def _move(space, C, L, roots, lo, vs, vals, slots):
    """Move the vertices ``vs`` (pairwise three or more arcs apart) of every row to their best labels, in place
    (``L``, the parent slots ``vals`` and their two least ``slots``)."""
    B, R = L.shape[0], space.R
    first, second, arg = slots
    ts = np.arange(1, R + 1)
    nb, ln, bk = space.nbr[vs], space.lnk[vs], space.back[vs]              # (n, D)
    have = nb >= 0
    nbc, lnc, bkc = np.maximum(nb, 0), np.maximum(ln, 0), np.maximum(bk, 0)
    lu = L[:, nbc]                                                         # (B, n, D)
    up = have[None, :, :, None] & (lu[:, :, :, None] > ts)                 # (B, n, D, R): admissible parents
    own = np.where(up, C[lnc][None, :, :, 1:], INF).min(axis=2)            # (B, n, R)
    if lo is not None:
        own = np.where(ts[None, None, :] >= lo[:, vs, None], own, INF)
    excl = np.where(arg[:, nbc] == bkc[None], second[:, nbc], first[:, nbc])         # (B, n, D): not via v
    via = C[space.lnk[nbc, bkc][None], np.clip(lu, 0, R)]                  # w -> v at w's label
    counted = have[None] & space.live[nbc][None] & (roots[:, None, None] != nbc[None])
    n, D = vs.size, nb.shape[1]
    sums = _neighbour_totals(excl.reshape(B * n, D), via.reshape(B * n, D), lu.reshape(B * n, D),
                             counted.reshape(B * n, D), R).reshape(B, n, R)
    total = own + sums
    best = total.argmin(axis=2)                                            # (B, n)
    cur = np.take_along_axis(total, np.clip(L[:, vs], 1, R)[:, :, None] - 1, 2)[:, :, 0]
    low = np.take_along_axis(total, best[:, :, None], 2)[:, :, 0]
    bi, ni = np.nonzero((roots[:, None] != vs[None, :]) & (low < cur - 1e-12))
    if bi.size == 0:
        return
    v = vs[ni]
    L[bi, v] = best[bi, ni] + 1
    # the slots that read v's label: v's own, and each neighbour's slot toward v
    lv = L[bi, v]
    lw = L[bi[:, None], nbc[ni]]                                           # (m, D): each neighbour's label
    ok = have[ni] & (lu[bi, ni] > lv[:, None]) & (lv[:, None] >= 1) & (lv[:, None] <= R)
    if lo is not None:
        ok &= (lv >= lo[bi, v])[:, None]
    vals[bi, v] = np.where(ok, C[lnc[ni], np.clip(lv, 0, R)[:, None]], INF)
    ok = have[ni] & (lw < lv[:, None]) & (lw >= 1) & (lw <= R)
    if lo is not None:
        ok &= lw >= lo[bi[:, None], nbc[ni]]
    mb, md = np.nonzero(have[ni])                                          # each moved vertex's neighbours
    rows, ws = bi[mb], nbc[ni][mb, md]
    vals[rows, ws, bkc[ni][mb, md]] = np.where(ok, via[bi, ni], INF)[mb, md]
    rows, ws = np.r_[bi, rows], np.r_[v, ws]                               # every slot list that changed
    f, s2, a = _two_least(vals[rows, ws])
    first[rows, ws], second[rows, ws], arg[rows, ws] = f, s2, a


def _neighbour_totals(excl, via, lu, counted, R):
    """``(B, R)``: for each label ``t`` the moving vertex may take, the sum over its ``counted`` neighbours ``w``
    of ``w``'s cheapest parent: ``excl`` (its best not via the moving vertex) while ``t <= L_w``, and
    ``min(excl, via)`` once ``t > L_w`` (``via``: ``w``'s arc to the moving vertex at ``L_w``); inf where a term is.

    Each term changes once, at ``t = L_w + 1``, so the sum is the sum at ``t = 1`` plus the changes bucketed by
    ``L_w`` and accumulated over ``t``: work in neighbours plus rounds, not their product (a GCD of four MI250
    nodes has 63 neighbours through the switches; a torus vertex has 4 or 6, but the pods price up to 52 rounds:
    the sweep on 16x16x16's periodic network 1.5 times faster than with every term summed at every label,
    ``python bench/sweep.py``)."""
    B = excl.shape[0]
    after = np.minimum(excl, via)
    e_inf, a_inf = counted & np.isinf(excl), counted & np.isinf(after)
    e_val = np.where(counted & ~e_inf, excl, 0.0)
    a_val = np.where(counted & ~a_inf, after, 0.0)
    at = (np.arange(B)[:, None] * (R + 1) + np.clip(lu, 0, R)).ravel()        # bucket R: never (t <= R)
    change = np.bincount(at, (a_val - e_val).ravel(), B * (R + 1)).reshape(B, R + 1)
    infs = np.bincount(at, (a_inf.astype(np.float64) - e_inf).ravel(), B * (R + 1)).reshape(B, R + 1)
    value = e_val.sum(axis=1)[:, None] + np.cumsum(change, axis=1)[:, :R]
    n_inf = e_inf.sum(axis=1)[:, None] + np.cumsum(infs, axis=1)[:, :R]
    return np.where(n_inf > 0.5, INF, value)


def _two_least(vals):
    """The least value along the last axis, the least of the others, and where the first is."""
    arg = vals.argmin(axis=-1)
    first = np.take_along_axis(vals, arg[..., None], -1)[..., 0]
    if vals.shape[-1] < 2:
        return first, np.full(first.shape, INF), arg
    rest = vals.copy()
    np.put_along_axis(rest, arg[..., None], INF, -1)
    return first, rest.min(axis=-1), arg


def _paths(space: TreeSpace):
    """The graph of the starting labels' distances: ``space.hop`` without the links out of a leaf (a leaf is
    reached and goes no further, as in :func:`~synth.models.packing.layered.layered_arcs`)."""
    h = space.hop
    if space.leaf is None:
        return h
    keep = ~space.leaf[h.link_src]
    return Topology(h.name, {}, h.n_vertices, h.link_src[keep], h.link_dst[keep], h.compute)


def distance_labels(space: TreeSpace, roots, shift: int = 0):
    """Labels layered by distance (``R + 1 - d - shift``, at least 1; paths through no leaf), one row per root."""
    L = np.zeros((len(roots), space.live.size), dtype=np.int64)
    paths = _paths(space)
    for i, r in enumerate(np.asarray(roots).tolist()):
        d = paths.bfs([r])
        L[i] = np.where(space.live, np.maximum(space.R + 1 - d - shift, 1), 0)
        L[i, r] = space.R + 1
    return L


def start_labels(space: TreeSpace, roots):
    """Starting labellings per root: layered late and early, and leaves early (rows grouped by start)."""
    paths = _paths(space)
    ecc = np.array([paths.bfs([r])[space.live].max() for r in np.asarray(roots).tolist()])
    starts = [distance_labels(space, roots, 0)]
    early = distance_labels(space, roots, 0)
    shift = (space.R - ecc)[:, None]
    early = np.where(early <= space.R, np.maximum(early - shift, 1), early)
    starts.append(early)
    leaf = distance_labels(space, roots, 0)
    # a vertex no neighbour of which is farther from the root sends first
    far = leaf[:, space.nbr] < leaf[:, :, None]
    far &= space.nbr[None] >= 0
    leafy = ~far.any(axis=2) & space.live[None, :] & (leaf <= space.R)
    starts.append(np.where(leafy, 1, leaf))
    return np.concatenate(starts)


def price(space: TreeSpace, C, roots, L0, rounds: int = 6, lo=None, sweeps: bool = True):
    """Improve the labellings ``L0`` (rows for ``roots``) by alternating parents, the tree DP and sweeps;
    returns ``(L, plink, cost)`` per row.  ``lo`` (per row and vertex): the smallest label allowed (the
    labels ``L0`` must respect it); vertices that are not ``space.live`` keep their labels.  ``sweeps``:
    False alternates parents and the tree DP only (cheaper where vertices have many neighbours)."""
    roots = np.asarray(roots, dtype=np.int64)
    L = np.asarray(L0, dtype=np.int64).copy()
    plink, cost = best_parents(space, C, L, roots, lo)
    for _ in range(rounds):
        L2 = tree_labels(space, C, L, plink, roots, lo)
        if sweeps:
            L2 = sweep(space, C, L2, roots, lo)
        p2, c2 = best_parents(space, C, L2, roots, lo)
        gain = c2 < cost - 1e-12
        if not gain.any():
            break
        L[gain], plink[gain], cost[gain] = L2[gain], p2[gain], c2[gain]
    return L, plink, cost


def exact_price(space: TreeSpace, C, root: int, batch: int = 4096):
    """The cheapest timed tree of ``root`` by enumerating every labelling (tiny graphs only)."""
    others = np.flatnonzero(space.live & (np.arange(space.live.size) != root))
    best = (None, None, INF)
    combos = itertools.product(range(1, space.R + 1), repeat=others.size)
    while True:
        chunk = np.array(list(itertools.islice(combos, batch)), dtype=np.int64).reshape(-1, others.size)
        if chunk.shape[0] == 0:
            return best
        L = np.zeros((chunk.shape[0], space.live.size), dtype=np.int64)
        L[:, others] = chunk
        L[:, root] = space.R + 1
        plink, cost = best_parents(space, C, L, np.full(chunk.shape[0], root))
        i = int(cost.argmin())
        if cost[i] < best[2] - 1e-12:
            best = (L[i], plink[i], float(cost[i]))
