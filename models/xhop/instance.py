"""Instance data for depth-bounded exchange forests: distances, symmetry, partners, arc reductions.

An *exchange forest* of depth ``h`` on a torus is a forest with two roots, ``a = 0`` and a
partner ``b``, in which every vertex is at most ``h`` edges below its root.  Its weight is
``W = sum over forest edges of dist(u, v) + dist(a, b)`` (the exchange route counts once:
the base schedule sends it twice, as every forest edge).

Two equivalent descriptions are used in this package:

* ``(b, parent)``: a parent array with ``-1`` at ``0`` and ``b``;
* hop-indexed arcs ``(i, j, l)``: ``j`` sits at depth ``l`` under ``i``, which sits at depth
  ``l - 1`` (``l = 1`` exactly when ``i`` is a root).  A virtual super-root hangs ``0`` and
  ``b`` at depth 0.

Exact arc reductions (for a fixed pair of roots ``R = {0, b}``, ``d_R(j) = min(dist(0, j),
dist(b, j))``):

* a vertex at depth 1 hangs under its nearer root (ties: vertex 0);
* never hang ``j`` under a non-root ``i`` with ``dist(i, j) >= d_R(j)``: re-hanging ``j``
  with its subtree on its nearer root costs no more and only lowers depths, and each such
  re-hang adds a child to a root, so repeating it ends in an optimal forest without them;
* hence a vertex with ``d_R(j) = 1`` sits at depth 1, and in general ``j`` can sit at depth
  ``l`` only if some vertex that can sit at depth ``l - 1`` is closer to ``j`` than ``d_R(j)``
  (:func:`depth_reach`).

Symmetry: the automorphisms of the torus fixing vertex 0 (coordinate sign flips and
permutations of equal sides, :func:`root_stabilizer`) map the partner ``b`` to any vertex of
its orbit, so one partner per orbit suffices (:func:`partner_orbits`).  For a fixed pair the
automorphisms mapping ``{0, b}`` onto itself (:func:`pair_stabilizer`, including the swap
``u -> b - u``) preserve the instance.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("4x4")
>>> reps, size = partner_orbits(t)
>>> reps.tolist(), size.tolist()
([1, 2, 5, 6, 10], [4, 2, 4, 4, 1])
>>> pair_stabilizer(t, 5).shape
(4, 16)
>>> parent = bfs_forest(t, 1)
>>> check_forest(t, 1, parent)
(3, 15)
"""

from __future__ import annotations

import numpy as np

from synth.schedule.forest import bfs_forest as _bfs_forest
from synth.schedule.forest import check_forest as _check_forest
from synth.schedule.forest import forest_weight as _edges_weight
from synth.schedule.forest import parent_depths
from synth.models.forest.instance import (distance_matrix, root_stabilizer, signed_perms,  # noqa: F401
                                          unique_identity_first)  # distance_matrix, root_stabilizer re-exported

__all__ = [
    "allowed_arcs",
    "bfs_forest",
    "check_forest",
    "depth_reach",
    "distance_matrix",
    "forest_depths",
    "forest_weight",
    "hop_arcs",
    "nearest_root",
    "pair_eccentricity",
    "pair_stabilizer",
    "partner_orbits",
    "root_distance",
    "root_stabilizer",
]


def pair_stabilizer(t, b: int) -> np.ndarray:
    """Automorphisms mapping the set ``{0, b}`` onto itself, ``G x V`` int32, identity first.

    They are ``u -> s(u)`` with ``s(b) = b`` and ``u -> b + s(u)`` with ``s(b) = -b``, ``s`` a
    signed coordinate permutation; the second kind always contains the swap ``u -> b - u``.
    """
    V = t.n_vertices
    coords = t.coords(np.arange(V))
    cb = np.asarray(t.coords(b), dtype=np.int64)
    perms = []
    for sigma, signs in signed_perms(t):
        img = coords[:, sigma] * signs
        sb = t.vertex(cb[sigma] * signs)
        if sb == b:
            perms.append(t.vertex(img))
        if sb == t.vertex(-cb):
            perms.append(t.vertex(img + cb))
    return unique_identity_first(perms, V)


def partner_orbits(t):
    """One partner per orbit of the root stabilizer on the vertices other than 0.

    Returns
    -------
    reps : numpy.ndarray
        int64 representatives (the smallest vertex id of each orbit), increasing.
    sizes : numpy.ndarray
        Orbit sizes.
    """
    perms = root_stabilizer(t)
    label = perms.min(axis=0).astype(np.int64)
    reps, sizes = np.unique(label[1:], return_counts=True)
    return reps, sizes


def pair_eccentricity(t, b: int) -> int:
    """``ecc({0, b}) = max_v min(dist(v, 0), dist(v, b))``."""
    v = np.arange(t.n_vertices)
    return int(np.minimum(t.dist(v, 0), t.dist(v, b)).max())


def root_distance(D, b: int) -> np.ndarray:
    """``d_R(j) = min(dist(0, j), dist(b, j))`` for every vertex (int32)."""
    return np.minimum(D[0], D[b]).astype(np.int32)


def nearest_root(D, b: int) -> np.ndarray:
    """The root each vertex hangs under at depth 1: ``b`` when strictly nearer, else ``0``."""
    return np.where(D[b] < D[0], b, 0).astype(np.int64)


def allowed_arcs(D, b: int) -> np.ndarray:
    """Boolean ``V x V`` mask of non-root arcs ``i -> j`` kept by the exact reduction (module docstring)."""
    dR = root_distance(D, b)
    keep = D < dR[None, :]
    keep[[0, b], :] = False
    keep[:, [0, b]] = False
    np.fill_diagonal(keep, False)
    return keep


def depth_reach(D, b: int, h: int, keep=None) -> np.ndarray:
    """``reach[l, j]``: ``j`` can sit at depth ``l`` (``0..h``) in a reduced forest (roots only at 0)."""
    V = D.shape[0]
    keep = allowed_arcs(D, b) if keep is None else keep
    reach = np.zeros((h + 1, V), dtype=bool)
    reach[0, [0, b]] = True
    if h >= 1:
        reach[1] = True
        reach[1, [0, b]] = False
    for l in range(2, h + 1):
        reach[l] = keep[reach[l - 1]].any(axis=0)
    return reach


def hop_arcs(D, b: int, h: int, reduce: bool = True):
    """Hop-indexed arcs ``(i, j, l)`` a forest with roots ``{0, b}`` and depth ``<= h`` may use.

    Parameters
    ----------
    D : numpy.ndarray
        Distances.
    b : int
        The partner root.
    h : int
        Depth bound (``>= 1``).
    reduce : bool
        Apply the exact reductions (module docstring); ``False`` keeps every arc (both roots
        may parent any vertex at depth 1, any non-root any vertex below).

    Returns
    -------
    tail, head, layer : numpy.ndarray
        int64 arrays, sorted by layer, then tail, then head.
    """
    V = D.shape[0]
    others = np.setdiff1d(np.arange(V), [0, b])
    if reduce:
        keep = allowed_arcs(D, b)
        reach = depth_reach(D, b, h, keep)
        tails = [nearest_root(D, b)[others]]
        heads = [others]
    else:
        keep = np.ones((V, V), dtype=bool)
        keep[[0, b], :] = False
        keep[:, [0, b]] = False
        np.fill_diagonal(keep, False)
        reach = np.ones((h + 1, V), dtype=bool)
        tails = [np.repeat([0, b], others.size)]
        heads = [np.tile(others, 2)]
    layers = [np.ones(tails[0].size, dtype=np.int64)]
    for l in range(2, h + 1):
        mask = keep & reach[l - 1][:, None] & reach[l][None, :]
        ii, jj = np.nonzero(mask)
        tails.append(ii)
        heads.append(jj)
        layers.append(np.full(ii.size, l, dtype=np.int64))
    tail = np.concatenate(tails).astype(np.int64)
    head = np.concatenate(heads).astype(np.int64)
    layer = np.concatenate(layers)
    order = np.lexsort((head, tail, layer))
    return tail[order], head[order], layer[order]


# parent arrays have one home, synth.schedule.forest; these are its faces for the root set {0, b}
forest_depths = parent_depths


def forest_weight(t, b: int, parent) -> int:
    """``W = sum over forest edges of dist(v, parent[v]) + dist(0, b)``: the forest and the exchange route."""
    return _edges_weight(t, parent) + int(t.dist(0, b))


def check_forest(t, b: int, parent, h: int | None = None) -> tuple:
    """Validate an exchange forest with roots ``0`` and ``b``; return ``(depth, weight)``.

    Raises
    ------
    ValueError
        If it is not a spanning forest hanging from exactly ``0`` and ``b`` or is deeper than ``h``.
    """
    b = int(b)
    if not 0 < b < t.n_vertices:
        raise ValueError(f"the partner root must be a vertex other than 0, got {b}")
    depth, edges = _check_forest(t, parent, [0, b], h)
    return depth, edges + int(t.dist(0, b))


def bfs_forest(t, b: int) -> np.ndarray:
    """A BFS forest rooted at ``{0, b}``: each vertex hangs one step closer to its nearer root (0 on ties).

    Its depth is ``ecc({0, b})``; its forest edges all have length 1.
    """
    return _bfs_forest(t, [0, b])
