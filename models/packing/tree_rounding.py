"""Rounding the local layered LP onto the healthy trees themselves: components that are healthy trees with changes.

The local LP (:mod:`~synth.models.packing.local`) keeps every pair ``(owner r, vertex v)`` that the healthy
SP-allreduce settles (:class:`~synth.models.packing.region.SPReference`: ``r``'s ``2d`` trees ``r + P_k(T0)``
each give ``v`` a parent that is still one hop closer) and re-chooses only the others.  The generic rounding
(:func:`~synth.models.packing.rounding.round_schedule`) splits a fixed pair's units among its parents in the
order of their ids, so a unit's tree mixes the healthy trees vertex by vertex.  Here the units of owner ``r``
are cut into ``2d`` blocks instead (block ``k``: units ``floor(k n / 2d) .. floor((k+1) n / 2d) - 1``) and a
unit of block ``k`` takes, at every fixed pair, its parent in the tree ``r + P_k(T0)``: the same parent
fractions up to one unit, so the same loads up to rounding.  Free pairs split their units by the LP's
fractions as before (:func:`~synth.models.packing.rounding.split_units`).  Every component is then the healthy
tree ``r + P_k(T0)`` except at the free pairs and where the damaged layers move a round, which is what a
version 3 certificate stores (:mod:`synth.check.tree_images`): the returned
:class:`~synth.check.tree_images.TreeImages` names that tree for each component, and the writer keeps only
the differences (a few dozen vertices of 4,096 on a damaged 16x16x16 torus).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.spec import default_group
>>> from synth.models.packing.layered import layered_arcs
>>> from synth.models.packing.local import solve_local
>>> from synth.models.packing.region import SPReference
>>> t = parse_torus("6x6"); d = damage(t, parse_failures(t, links=["0-1"]))
>>> sol = solve_local(layered_arcs(d, default_group(d)), SPReference(t), radius=1)
>>> base, images = round_on_trees(sol, SPReference(t), units=64)
>>> base.n_components == images.of.size, images.parent.shape, sorted(set(images.axes.ravel().tolist()))
(True, (1, 36), [-2, -1, 1, 2])
"""

from __future__ import annotations

import numpy as np

from synth.check.tree_images import TreeImages, axes_matrix, image_maps
from synth.schedule.forest import trees_base
from synth.schedule.sp import bfs_parents
from synth.schedule.weights import largest_remainder
from synth.models.packing.layered import LayeredSolution
from synth.models.packing.region import SPReference, gamma_points
from synth.models.packing.rounding import expand, split_units, unit_cuts

__all__ = ["round_on_trees"]

_BATCH = 256   # components whose image maps are built at once


def round_on_trees(sol: LayeredSolution, ref: SPReference, units: int = 1024):
    """``(base schedule, tree images)`` of the local LP ``sol`` solved against ``ref`` (module docstring)."""
    d, h = sol.data, ref.torus
    t, H, V, R = d.topology, d.H, d.topology.n_vertices, d.n_roots
    mats = gamma_points(h)
    K = len(mats)
    n_root = largest_remainder(sol.w, units * R)
    fa = np.flatnonzero(sol.free)
    lo, hi = split_units(n_root, d.root[fa], d.child[fa], d.parent[fa], sol.y[fa], V)
    bounds = (n_root[:, None] * np.arange(1, K)[None, :]) // K               # (R, K - 1): block starts
    cuts = unit_cuts(n_root, [(d.root[fa], hi), (np.repeat(np.arange(R), K - 1), bounds.ravel())])
    block = (bounds[cuts.root] <= cuts.first[:, None]).sum(axis=1)
    owner = d.roots[cuts.root]
    axes = np.array([axes_matrix(A) for A in mats], dtype=np.int64)[block]
    par0, up0, down0 = _base_tree(h)
    parent = np.empty((cuts.root.size, V), dtype=np.int64)
    for lo_c in range(0, cuts.root.size, _BATCH):
        sl = slice(lo_c, lo_c + _BATCH)
        phi = image_maps(h, owner[sl], axes[sl])
        parent[lo_c + np.arange(phi.shape[0])[:, None], phi] = np.where(par0 >= 0, phi[:, np.maximum(par0, 0)], -1)
    arc, comp = expand(cuts, d.root[fa], lo, hi)                          # free pairs: the LP's parents
    parent[comp, d.child[fa][arc]] = d.parent[fa][arc]
    dep = np.full((R, V), -1, dtype=np.int64)
    dep[d.root, d.child] = d.depth
    depth = dep[cuts.root]
    parent[depth < 0] = -1                                                   # the owner, failed chips
    up = np.where(parent >= 0, H - depth + 1, 0)
    down = np.where(parent >= 0, H + depth, 0)
    labels = tuple(f"layered tree of owner {int(d.roots[r])}, units {int(u)}..{int(u + w - 1)} of {int(n_root[r])}"
                   for r, u, w in zip(cuts.root.tolist(), cuts.first.tolist(), cuts.weight.tolist()))
    base = trees_base(t, 2 * H, parent, up, down, cuts.weight, labels)
    images = TreeImages(par0[None], up0[None], down0[None], np.zeros(owner.size, dtype=np.int64), owner, axes,
                        (parent, up, down), base)
    return base, images


def _base_tree(h):
    """SP-allreduce's tree ``T0`` of vertex 0 on the healthy torus ``h`` with its own rounds (``2H``, depth ``H``)."""
    par0 = bfs_parents(h, 0)
    depth0 = h.bfs([0]).astype(np.int64)
    H0 = int(depth0.max())
    has = par0 >= 0
    return par0, np.where(has, H0 - depth0 + 1, 0), np.where(has, H0 + depth0, 0)
