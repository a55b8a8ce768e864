"""Instance data for the k-hop tree models: distances, the exact arc reduction, the root's stabilizer.

A k-hop tree is described two equivalent ways in this package:

* a parent array (``parent[v]``, ``-1`` at the root ``0``), depth at most ``k``;
* a *hop-indexed arc* ``(i, j, h)``: ``j`` sits at depth ``h`` and hangs under ``i``
  (``i`` at depth ``h - 1``; ``i = 0`` exactly when ``h = 1``).

Exact arc reduction: an optimal tree never needs to hang ``j`` under a
non-root ``i`` with ``dist(i, j) >= dist(0, j)``: re-hanging ``j`` (with its subtree)
on the root costs no more and only lowers depths, and each such re-hang adds a child
to the root, so repeating it terminates in an optimal tree without such arcs.
Consequences used here: the root's neighbours sit at depth 1, so they never parent a
vertex at depth 3 or more.

Symmetry: the automorphisms of the torus that fix the root are the coordinate sign
flips and the permutations of equal sides (:func:`root_stabilizer`).  They preserve
distances, so they map k-hop trees to k-hop trees of the same weight.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("4x4")
>>> distance_matrix(t)[0, [1, 5, 10]].tolist()
[1, 2, 4]
>>> root_stabilizer(t).shape
(8, 16)
>>> tail, head, layer = hop_arcs(t, 3)
>>> int(tail.size), int((layer == 1).sum())
(143, 15)
"""

from __future__ import annotations

import itertools

import numpy as np

from synth.schedule.forest import check_forest, forest_weight, parent_depths
from synth.symmetry.torus import root_stabilizer  # the one home; re-exported for the models
from synth.topology.torus import Torus

__all__ = ["distance_matrix", "root_stabilizer", "signed_perms", "unique_identity_first", "translations",
           "orbit_labels", "allowed_pairs", "hop_arcs", "tree_weight", "tree_depths", "check_tree"]


def distance_matrix(t, costs=(1,), dtype=np.int16) -> np.ndarray:
    """``V x V`` matrix of torus distances (closed form, one dimension at a time).

    ``costs[i % len(costs)]`` weighs a hop along dimension ``i`` (default: every hop
    costs 1).  For 64x64 the int16 matrix is 32 MiB; larger tori should not ask for it.
    A lattice torus (:class:`synth.topology.lattice.LatticeTorus`, unit costs only) reads its
    own distances, which are not a sum over dimensions once a side is twisted.
    """
    V = t.n_vertices
    if not isinstance(t, Torus):
        if tuple(costs) != (1,):
            raise ValueError(f"distance_matrix: weighted hops are defined on plain tori only, not on {t.name}")
        verts = np.arange(V)
        return t.dist(verts[:, None], verts[None, :]).astype(dtype)
    coords = t.coords(np.arange(V))
    out = np.zeros((V, V), dtype=dtype)
    for i, n in enumerate(t.shape):
        c = coords[:, i].astype(dtype)
        delta = np.abs(c[:, None] - c[None, :])
        out += costs[i % len(costs)] * np.minimum(delta, n - delta)
    return out


def signed_perms(t):
    """``(sigma, signs)`` of every signed permutation of coordinates that maps the torus to itself."""
    d, shape = t.ndim, tuple(t.shape)
    for sigma in itertools.permutations(range(d)):
        if any(shape[sigma[i]] != shape[i] for i in range(d)):
            continue
        for signs in itertools.product((1, -1), repeat=d):
            yield list(sigma), np.asarray(signs)


def unique_identity_first(perms, V) -> np.ndarray:
    """The distinct rows of ``perms`` (vertex permutations), sorted, the identity moved first."""
    perms = np.unique(np.asarray(perms, dtype=np.int32).reshape(-1, V), axis=0)
    ident = np.arange(V, dtype=np.int32)
    order = np.argsort(~np.all(perms == ident, axis=1), kind="stable")
    return perms[order]


def translations(t, max_step: int = 2) -> np.ndarray:
    """Translations of the torus along one axis by ``1..max_step`` steps either way, as vertex permutations.

    Row ``s`` maps every vertex ``v`` to ``v + delta_s``; the rows come in the order
    axis, step, sign, so the inverse of every row is in the set too.

    Returns
    -------
    numpy.ndarray
        ``S x V`` int64 with ``S = 2 * ndim * max_step`` (steps longer than half a side
        are left out).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> g = translations(parse_torus("4x4"), 1)
    >>> g.shape, g[:, 0].tolist()
    ((4, 16), [4, 12, 1, 3])
    """
    V = t.n_vertices
    coords = t.coords(np.arange(V))
    shape = np.asarray(t.shape)
    rows = []
    for axis in range(t.ndim):
        for step in range(1, min(int(max_step), int(shape[axis]) // 2) + 1):
            for sign in (1, -1):
                delta = np.zeros(t.ndim, dtype=np.int64)
                delta[axis] = sign * step
                rows.append(t.vertex(coords + delta))   # vertex() reduces (a twisted wrap too)
    return np.asarray(rows, dtype=np.int64).reshape(len(rows), V)


def orbit_labels(images: np.ndarray) -> np.ndarray:
    """Canonical orbit label of each point from its images (``G x m`` point ids under each element).

    The label is the smallest image, which is the same for every point of an orbit
    because the images form a group.
    """
    return images.min(axis=0)


def allowed_pairs(t, dist=None) -> np.ndarray:
    """Boolean ``V x V`` mask of arcs ``i -> j`` kept by the exact arc reduction.

    ``i -> j`` is kept when ``i`` is the root, or when ``i, j`` are not the root and
    ``dist(i, j) < dist(0, j)``.
    """
    D = distance_matrix(t) if dist is None else dist
    keep = D < D[0][None, :]
    keep[0, :] = True
    keep[:, 0] = False
    np.fill_diagonal(keep, False)
    return keep


def hop_arcs(t, k: int, reduce: bool = True, dist=None):
    """Every hop-indexed arc ``(i, j, h)`` a k-hop tree may use.

    Parameters
    ----------
    t : Torus
    k : int
        Depth bound.
    reduce : bool
        Apply the exact arc reduction (module docstring); ``False`` keeps every arc.

    Returns
    -------
    tail, head, layer : numpy.ndarray
        int32 arrays, sorted by layer, then tail, then head.
    """
    D = distance_matrix(t) if dist is None else dist
    V = t.n_vertices
    if reduce:
        keep = allowed_pairs(t, D)
        root_nbr = D[0] == 1
    else:
        keep = np.ones((V, V), dtype=bool)
        keep[:, 0] = False
        np.fill_diagonal(keep, False)
        root_nbr = np.zeros(V, dtype=bool)
    tails, heads, layers = [], [], []
    j = np.arange(1, V, dtype=np.int32)
    tails.append(np.zeros(V - 1, dtype=np.int32))
    heads.append(j)
    layers.append(np.ones(V - 1, dtype=np.int32))
    inner = keep.copy()
    inner[0, :] = False
    for h in range(2, k + 1):
        mask = inner.copy()
        if h >= 3:
            mask[root_nbr, :] = False  # a root neighbour sits at depth 1, never at h - 1 >= 2
        ii, jj = np.nonzero(mask)
        tails.append(ii.astype(np.int32))
        heads.append(jj.astype(np.int32))
        layers.append(np.full(ii.size, h, dtype=np.int32))
    return np.concatenate(tails), np.concatenate(heads), np.concatenate(layers)


# parent arrays have one home, synth.schedule.forest; these are its k-hop faces (root set {0})
tree_weight = forest_weight


def tree_depths(parent) -> np.ndarray:
    """Depth of every vertex of a parent array rooted at 0 (``-1`` marks the root); ValueError if not a tree."""
    return parent_depths(parent, [0])


def check_tree(t, parent, k: int | None = None) -> tuple:
    """``(depth, weight)`` of a spanning tree rooted at 0 of depth at most ``k``; ValueError if it is not one."""
    return check_forest(t, parent, [0], k)
