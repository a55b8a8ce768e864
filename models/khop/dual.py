"""Export the layered LP's dual in the form ``synth check`` re-derives (:mod:`synth.check.bounds`).

The LP of :mod:`models.khop.lp` is aggregated over the root's stabilizer: each of its
rows is the full row of one representative (a vertex, a vertex and a layer, an arc, a
cut set ``S``) evaluated at an invariant point.  Spreading a dual ``u`` of such a row
evenly over the ``m`` distinct images of the representative's row gives a dual of the
full LP with the same Lagrangian value (every member of an arc orbit then has the
same reduced cost), which is what :func:`synth.check.bounds.khop_dual_bound` expects:
one entry per row orbit, its value the per-image share ``u / m``.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.check.bounds import khop_dual_bound
>>> from synth.models.forest.instance import distance_matrix, root_stabilizer
>>> from synth.models.khop.lp import LayeredLP
>>> t = parse_torus("6x6")
>>> lp = LayeredLP(distance_matrix(t), 3, root_stabilizer(t))
>>> res = lp.solve()
>>> dual = export_dual(lp, res.bound)
>>> khop_dual_bound(t, 3, dual).bound == dual["bound"] == 40
True
"""

from __future__ import annotations

import math

import numpy as np

from synth.check.bounds import CONE_KIND, KIND, cone_count_bound

__all__ = ["export_dual", "simple_dual", "cone_dual"]


def _n_images(perms, V, nodes):
    h, i = np.divmod(np.asarray(nodes, dtype=np.int64), V)
    return np.unique(np.sort(h[None, :] * V + perms[:, i], axis=1), axis=0).shape[0]


def export_dual(lp, bound: float) -> dict:
    """The LP's best duals (those that gave ``bound``) as a stored dual for :mod:`synth.check.bounds`.

    Parameters
    ----------
    lp : LayeredLP
        After :meth:`LayeredLP.solve`.
    bound : float
        The Lagrangian value these duals gave (recorded, rounded up, as the dual's ``bound``).
    """
    u = np.asarray(lp.best_duals(), dtype=np.float64).copy()
    u[(u > 0) & ~np.isfinite(lp.row_lo)] = 0.0          # the same clipping as the LP's own bound
    u[(u < 0) & ~np.isfinite(lp.row_hi)] = 0.0
    V, k, perms = lp.V, lp.k, lp.perms
    n_y, nrep = lp.n_y, lp.nrep
    out = {"kind": KIND, "k": int(k), "bound": max(0, math.ceil(bound - 1e-6)),
           "alpha": [], "beta": [], "lambda": [], "cuts": []}
    for r in np.flatnonzero(u[:n_y]):
        ri, h = divmod(int(r), k)
        out["beta"].append([int(lp.reps[ri]), h + 1, float(u[r] / lp.orb[ri])])
    for ri in np.flatnonzero(u[n_y:n_y + nrep]):
        out["alpha"].append([int(lp.reps[ri]), float(u[n_y + ri] / lp.orb[ri])])
    cut_rows = np.asarray(lp._cut_rows, dtype=np.int64)
    is_cut = np.zeros(u.size, dtype=bool)
    is_cut[cut_rows] = True
    for c, r in enumerate(cut_rows.tolist()):
        if u[r] > 0:
            nodes = np.asarray(lp.cuts[c][1], dtype=np.int64)
            out["cuts"].append([float(u[r] / _n_images(perms, V, nodes)), sorted(int(n) for n in nodes)])
    link = np.flatnonzero(u != 0)
    link = link[(link >= n_y + nrep) & ~is_cut[link]]
    if link.size:
        A = lp.matrix().tocsr()
        tail, head, layer, col = lp.arcs
        first = {}
        for idx in np.argsort(col, kind="stable")[::-1]:     # a member arc of every column
            first[int(col[idx])] = idx
        for r in link.tolist():
            cols = A.indices[A.indptr[r]:A.indptr[r + 1]]
            vals = A.data[A.indptr[r]:A.indptr[r + 1]]
            zc = int(cols[(cols >= n_y) & (vals > 0)][0]) - n_y
            m = first[zc]
            out["lambda"].append([int(tail[m]), int(head[m]), int(layer[m]), float(u[r] / lp.col_size[zc])])
    return out


def simple_dual(t, k: int, perms) -> dict:
    """The dual behind the closed-form bounds: ``alpha[i] = c_i``, ``beta[i, h] = -c_i``.

    ``c_i`` is the cheapest arc into ``i``: ``dist(0, i)`` when ``k = 1`` (the star is the only
    tree, and this proves it optimal), else 1 (every vertex hangs on a neighbour or the
    root: ``W >= p - 1``, which the BFS tree meets for ``k >= H``).

    >>> from synth.topology.torus import parse_torus
    >>> from synth.check.bounds import khop_dual_bound
    >>> from synth.models.forest.instance import root_stabilizer
    >>> t = parse_torus("5x5")
    >>> [khop_dual_bound(t, k, simple_dual(t, k, root_stabilizer(t))).bound for k in (1, 2, 4)]
    [60, 24, 24]
    """
    perms = np.asarray(perms)
    reps = np.unique(perms.min(axis=0)[1:])
    cost = t.dist(np.zeros(reps.size, dtype=np.int64), reps) if k == 1 else np.ones(reps.size, dtype=np.int64)
    out = {"kind": KIND, "k": int(k), "bound": int(sum(int(c) * int(np.unique(perms[:, r]).size)
                                                       for r, c in zip(reps, cost))),
           "alpha": [[int(r), float(c)] for r, c in zip(reps, cost)],
           "beta": [[int(r), h, -float(c)] for r, c in zip(reps, cost) for h in range(1, k + 1)],
           "lambda": [], "cuts": []}
    return out


def cone_dual(t, k: int) -> dict:
    """The cone-counting bound (:func:`synth.check.bounds.cone_count_bound`) as a stored dual.

    It needs no LP, so it is the bound of the tori where the LP does not finish; the
    stored form holds only ``k``, and ``synth check`` re-derives the bound from the topology.

    >>> from synth.topology.torus import parse_torus
    >>> cone_dual(parse_torus("16x16"), 3)
    {'kind': 'khop-cone-count', 'k': 3, 'bound': 324}
    """
    return {"kind": CONE_KIND, "k": int(k), "bound": int(cone_count_bound(t, int(k)).bound)}
