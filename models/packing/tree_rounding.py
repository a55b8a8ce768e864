"""Rounding the local layered LP onto the healthy trees themselves: components that are healthy trees with changes.

The local LP (:mod:`~synth.models.packing.local`) keeps every pair ``(owner r, vertex v)`` that the healthy
trees settle (:class:`~synth.models.packing.region.TreeReference`: ``r``'s trees ``r + T_k`` of weights
``w_k`` each give ``v`` a parent that is still one hop closer) and re-chooses only the others.  The generic
rounding (:func:`~synth.models.packing.rounding.round_schedule`) splits a fixed pair's units among its
parents in the order of their ids, so a unit's tree mixes the healthy trees vertex by vertex (on a family of
unequal weights, hundreds of components per owner).  Here the units of owner ``r`` are cut into one block per
tree instead (block ``k``: units ``floor(W_k n / W) .. floor(W_{k+1} n / W) - 1``, ``W_k`` the weights before
``k``) and a unit of block ``k`` takes, at every fixed pair, its parent in the tree ``r + T_k``: the same
parent fractions up to one unit, so the same loads up to rounding (a block's start moves to a free pair's
cut fewer than ``units / MIN_SHARE`` units away, :func:`~synth.models.packing.rounding.merge_slivers`, so that
no chunk is a sliver).  Free pairs split their units by the LP's fractions as before
(:func:`~synth.models.packing.rounding.split_units`).  Every component is then the
healthy tree ``r + T_k`` except at the free pairs and where the damaged layers move a round, which is what a
version 3 certificate stores (:mod:`synth.check.tree_images`): the returned
:class:`~synth.check.tree_images.TreeImages` names that tree (a base tree ``T_k`` translated by ``r``) for
each component, and the writer keeps only the differences (a few dozen vertices of 4,096 on a damaged
16x16x16 torus).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.spec import default_group
>>> from synth.models.packing.layered import layered_arcs
>>> from synth.models.packing.local import solve_local
>>> from synth.models.packing.region import TreeReference
>>> t = parse_torus("6x6"); d = damage(t, parse_failures(t, links=["0-1"]))
>>> ref = TreeReference.sp_gamma(t)
>>> sol = solve_local(layered_arcs(d, default_group(d)), ref, radius=1)
>>> base, images = round_on_trees(sol, ref, units=64)
>>> base.n_components == images.of.size, images.parent.shape, sorted(set(images.of.tolist()))
(True, (4, 36), [0, 1, 2, 3])
"""

from __future__ import annotations

import numpy as np

from synth.check.tree_images import TreeImages
from synth.schedule.forest import trees_base
from synth.schedule.weights import largest_remainder
from synth.models.packing.layered import LayeredSolution
from synth.models.packing.region import TreeReference
from synth.models.packing.rounding import expand, merge_slivers, split_units, unit_cuts

__all__ = ["round_on_trees", "block_starts", "MIN_SHARE"]

_BATCH = 256   # components whose translations are built at once
#: a block's start moves to a free pair's cut nearer than this share of an owner's units (1/64 of 1,024: 16
#: units): one unit apart they made 1-unit chunks on 16x20x28, with no byte of a 1 MiB message for them
MIN_SHARE = 64


def round_on_trees(sol: LayeredSolution, ref: TreeReference, units: int = 1024):
    """``(base schedule, tree images)`` of the local LP ``sol`` solved against ``ref`` (module docstring)."""
    d, h = sol.data, ref.torus
    t, H, V, R = d.topology, d.H, d.topology.n_vertices, d.n_roots
    n_root = largest_remainder(sol.w, units * R)
    fa = np.flatnonzero(sol.free)
    lo, hi = split_units(n_root, d.root[fa], d.child[fa], d.parent[fa], sol.y[fa], V)
    bounds = block_starts(n_root, ref.weight)                                # (R, K - 1)
    K = bounds.shape[1] + 1
    starts = np.repeat(np.arange(R), K - 1), bounds.ravel()
    cuts = unit_cuts(n_root, [(d.root[fa], hi), starts])
    # a free pair's cut beside a block's start leaves a sliver: the block's start moves to the cut (the fixed
    # pairs' fractions move a few units, the free pairs' none)
    moves = np.isin(cuts.keys, starts[0] * cuts.big + starts[1]) & ~np.isin(cuts.keys, d.root[fa] * cuts.big + hi)
    cuts = merge_slivers(cuts, n_root, max(1, units // MIN_SHARE), moves)
    block = (bounds[cuts.root] <= (cuts.first + cuts.weight // 2)[:, None]).sum(axis=1)   # the block of most units
    owner = d.roots[cuts.root]
    par0, up0, down0 = _base_trees(ref.table, H)
    # component c is r + T_k: parent[r + u] = r + table[k, u], the translation by r done axis by axis
    x, shift = h.coords(np.arange(V)), _shift_tables(h)
    parent = np.empty((cuts.root.size, V), dtype=np.int32)      # ids < V: half the bytes of int64 to move
    for k in range(K):
        rows = np.flatnonzero(block == k)
        rel = np.maximum(par0[k], 0)
        for lo_c in range(0, rows.size, _BATCH):
            sel = rows[lo_c:lo_c + _BATCH]
            s = h.coords(owner[sel])
            phi = _translated(shift, x, s)                                  # (m, V): u -> r + u
            parent[sel[:, None], phi] = np.where(par0[k] >= 0, _translated(shift, x[rel], s), -1)
    arc, comp = expand(cuts, d.root[fa], lo, hi)                          # free pairs: the LP's parents
    parent[comp, d.child[fa][arc]] = d.parent[fa][arc]
    dep = np.full((R, V), -1, dtype=np.int32)
    dep[d.root, d.child] = d.depth
    depth = dep[cuts.root]
    parent[depth < 0] = -1                                                   # the owner, failed chips
    has = parent >= 0
    up = np.where(has, np.int32(H + 1) - depth, np.int32(0))
    down = np.where(has, np.int32(H) + depth, np.int32(0))
    labels = tuple(f"layered tree of owner {int(d.roots[r])}, units {int(u)}..{int(u + w - 1)} of {int(n_root[r])}"
                   for r, u, w in zip(cuts.root.tolist(), cuts.first.tolist(), cuts.weight.tolist()))
    base = trees_base(t, 2 * H, parent, up, down, cuts.weight, labels)
    identity = np.tile(np.arange(1, h.ndim + 1, dtype=np.int64), (owner.size, 1))
    images = TreeImages(par0, up0, down0, block, owner, identity, (parent, up, down), base)
    return base, images


def _shift_tables(h) -> list:
    """Per axis ``i`` of torus ``h``: ``table[a, b] = ((a + b) mod n_i) * stride_i`` (int32), so that the vertex at
    coordinates ``x + s`` is the sum over the axes of ``table[x_i, s_i]``."""
    strides = np.cumprod((h.shape[1:] + (1,))[::-1])[::-1]
    return [(((np.arange(n)[:, None] + np.arange(n)[None, :]) % n) * int(st)).astype(np.int32)
            for n, st in zip(h.shape, strides)]


def _translated(shift, x, s) -> np.ndarray:
    """``(m, n)``: the vertex ids of coordinates ``x`` (``(n, d)``) translated by each row of ``s`` (``(m, d)``).

    >>> from synth.topology.torus import parse_torus
    >>> h = parse_torus("3x4"); x = h.coords(np.arange(12)); s = h.coords(np.array([5, 7]))
    >>> bool(np.array_equal(_translated(_shift_tables(h), x, s), h.vertex(x[None] + s[:, None])))
    True
    """
    out = shift[0][x[None, :, 0], s[:, None, 0]]
    for i in range(1, len(shift)):
        out = out + shift[i][x[None, :, i], s[:, None, i]]
    return out


def block_starts(n_root, weight) -> np.ndarray:
    """``(R, K - 1)``: where each owner's blocks ``1 .. K - 1`` start among its ``n_root`` units, block ``k``
    taking ``weight[k]`` of them over all (module docstring; exact in integers when the weights are).

    >>> block_starts(np.array([10, 7]), np.array([1.0, 1.0, 2.0])).tolist()
    [[2, 5], [1, 3]]
    """
    n_root, w = np.asarray(n_root, dtype=np.int64), np.asarray(weight, dtype=np.float64)
    cum = np.cumsum(w)[:-1]
    if np.all(w == np.round(w)) and w.sum() < 2 ** 31:
        return (n_root[:, None] * cum.astype(np.int64)[None, :]) // int(w.sum())
    return np.floor(n_root[:, None] * (cum / w.sum())[None, :] + 1e-9).astype(np.int64)


def _base_trees(table, H: int):
    """The base trees ``T_k`` in the tree form with the layered rounds of depth ``H`` (up ``H - depth + 1``, down
    ``H + depth``): the rounds the components keep where their depth did not change."""
    par = np.where(table >= 0, table, -1)
    depth = np.zeros(table.shape, dtype=np.int64)
    cur = par.copy()
    rows = np.arange(table.shape[0])[:, None]
    while np.any(cur >= 0):                                                 # pointer walk: depth <= diameter
        depth += cur >= 0
        cur = np.where(cur >= 0, par[rows, np.maximum(cur, 0)], -1)
    has = par >= 0
    return par, np.where(has, H - depth + 1, 0), np.where(has, H + depth, 0)

