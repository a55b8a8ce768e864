"""Exact depth-bounded forests on a root set by a subset DP over labellings (the tests' reference).

Labels.  Give every non-root vertex a label ``l(v)`` in ``1..h`` (the roots have 0) and
hang ``v`` under its nearest vertex of smaller label.  Every labelling yields a forest of
depth at most ``h`` (a parent's label is smaller, and depth <= label by induction), and
labelling a forest by its depths yields that forest or a lighter one.  So with
``R = A_1 <= A_2 <= ... <= A_h``, ``G_h(A) = sum_{v not in A} dist(v, A)`` and
``G_l(A) = min_{B >= A} sum_{v in B - A} dist(v, A) + G_{l+1}(B)``, the optimum is
``G_1(R)``.  The work is about ``3^(V - |R|)`` per level, so this is for 16 free vertices
or so.  A k-hop tree is the root set ``{0}`` (:func:`synth.models.khop.brute.brute_force_khop`),
an exchange forest ``{0, b}`` (:func:`synth.models.xhop.brute.brute_force_xhop`).

``allowed`` (a ``V x V`` mask) restricts which arcs ``u -> v`` may be used, to test arc
reductions: a vertex with no allowed parent in ``A_l(v)`` makes the labelling infeasible.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.models.forest.instance import distance_matrix
>>> D = distance_matrix(parse_torus("7"))
>>> [brute_force_labels(D, [0], h)[0] for h in (1, 2, 3)]
[12, 8, 6]
>>> w, parent = brute_force_labels(D, [0, 3], 2)
>>> w, parent.tolist()
(5, [-1, 0, 3, -1, 3, 4, 0])
"""

from __future__ import annotations

import numpy as np

__all__ = ["brute_force_labels"]

_INF = np.int64(1 << 20)     # the cost of a forbidden arc (or of a vertex to itself)


def _subset_dists(Dm, roots, free):
    """``dA[mask, v]``: distance from ``v`` to ``roots + free[mask]`` under the masked distances ``Dm``."""
    m = len(free)
    dA = np.empty((1 << m, Dm.shape[0]), dtype=np.int64)
    dA[0] = Dm[list(roots)].min(axis=0)
    for i in range(m):
        lo, hi = 1 << i, 1 << (i + 1)
        dA[lo:hi] = np.minimum(dA[0:lo], Dm[free[i]][None, :])  # masks whose top bit is i
    return dA


def brute_force_labels(D, roots, h: int, allowed=None, max_free: int = 16):
    """Exact minimum forest weight for the root set ``roots`` and depth bound ``h`` (module docstring).

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` distances.
    roots : sequence of int
    h : int
        Depth bound.
    allowed : numpy.ndarray, optional
        ``V x V`` bool mask of usable arcs ``u -> v``; default all.
    max_free : int
        Refuse more non-root vertices than this (the work grows like ``3^free``).

    Returns
    -------
    weight : int
        The optimum (``None`` if no allowed forest exists).
    parent : numpy.ndarray or None
        An optimal forest (``-1`` at the roots).
    """
    V = D.shape[0]
    roots = [int(r) for r in roots]
    free = [v for v in range(V) if v not in roots]
    m = len(free)
    if m > max_free:
        raise ValueError(f"the labelling DP is for at most {max_free} free vertices, got {m}")
    Dm = D.astype(np.int64) if allowed is None else np.where(allowed, D, _INF).astype(np.int64)
    np.fill_diagonal(Dm, _INF)
    dA = _subset_dists(Dm, roots, free)
    fr = np.asarray(free, dtype=np.int64)
    bits = ((np.arange(1 << m)[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)
    G = np.where(bits, 0, dA[:, fr]).sum(axis=1)        # G_h: every remaining vertex hangs under A
    choice = []                                          # choice[l][A] = B chosen at level l
    for _l in range(h - 1, 1, -1):                       # G_l for l = h-1 .. 2
        newG = np.empty_like(G)
        arg = np.empty(1 << m, dtype=np.int64)
        for A in range(1 << m):
            idx = np.flatnonzero(~bits[A])
            if idx.size == 0:
                newG[A], arg[A] = G[A], A
                continue
            sub = bits[:1 << idx.size, :idx.size]
            B = A | (sub.astype(np.int64) @ (np.int64(1) << idx))
            val = sub.astype(np.int64) @ dA[A, fr[idx]] + G[B]
            i = int(np.argmin(val))
            newG[A], arg[A] = val[i], B[i]
        choice.append(arg)
        G = newG
    # level 1: A_1 = R; B = A_2 ranges over every subset
    if h == 1:
        total, A2 = int(G[0]), 0
    else:
        val = np.where(bits, dA[0, fr][None, :], 0).sum(axis=1) + G
        A2 = int(np.argmin(val))
        total = int(val[A2])
    if total >= _INF:
        return None, None
    chain = [0, A2]                                      # masks of A_1, A_2, ...
    for arg in reversed(choice):
        chain.append(int(arg[chain[-1]]))
    label = np.full(V, h, dtype=np.int64)
    label[roots] = 0
    for l in range(len(chain) - 1, 0, -1):
        label[fr[bits[chain[l]]]] = l                    # in A_{l+1}, hence label <= l
    parent = np.full(V, -1, dtype=np.int64)
    for v in free:
        cand = np.flatnonzero(label < label[v])
        parent[v] = cand[np.argmin(Dm[cand, v])]
    return total, parent
