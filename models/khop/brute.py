"""Exact k-hop trees on tiny tori by exhaustive dynamic programming (the reference for tests).

Labels.  Give every non-root vertex a label ``l(v)`` in ``1..k`` (the root has 0) and
hang ``v`` under its nearest vertex of smaller label.  Every labelling yields a tree of
depth at most ``k`` (a parent's label is smaller, and depth <= label by induction), and
labelling a tree by its depths yields that tree or a lighter one.  So

    W*(k) = min over labellings of  sum_v dist(v, A_l(v)),   A_h = {0} + {u : l(u) < h}.

With the nested sets ``{0} = A_1 <= A_2 <= ... <= A_k <= V`` this is a DP over subsets:
``G_k(A) = sum_{v not in A} dist(v, A)`` and
``G_h(A) = min_{B >= A} sum_{v in B - A} dist(v, A) + G_{h+1}(B)``, ``W* = G_1({0})``.
The work is about ``3^(V-1)`` per level, so this is for ``V <= 16`` or so.

``allowed`` (a ``V x V`` mask) restricts which arcs ``u -> v`` may be used, to test
arc reductions: a vertex with no allowed parent in ``A_l(v)`` makes the labelling infeasible.

Examples
--------
>>> from synth.torus import parse_torus
>>> t = parse_torus("7")
>>> [brute_force_khop(t, k)[0] for k in (1, 2, 3)]
[12, 8, 6]
"""

from __future__ import annotations

import numpy as np

from synth.models.forest.instance import distance_matrix

__all__ = ["brute_force_khop"]

_INF = np.int32(1 << 20)


def _subset_dists(Dm):
    """``dA[mask, v]``: distance from ``v`` to ``{0} + mask`` under the masked distances ``Dm``."""
    V = Dm.shape[0]
    m = V - 1
    dA = np.empty((1 << m, V), dtype=np.int32)
    dA[0] = Dm[0]
    for b in range(m):
        lo, hi = 1 << b, 1 << (b + 1)
        dA[lo:hi] = np.minimum(dA[0:lo], Dm[b + 1][None, :])  # masks whose top bit is b
    return dA


def brute_force_khop(t, k: int, allowed=None, max_vertices: int = 17):
    """Exact ``(W*, parent)`` for a depth bound ``k`` (see the module docstring).

    Parameters
    ----------
    t : Torus
    k : int
    allowed : numpy.ndarray, optional
        ``V x V`` bool mask of usable arcs ``u -> v``; default all.
    max_vertices : int
        Refuse bigger instances (the work grows like ``3^V``).

    Returns
    -------
    weight : int
        ``W*(k)`` (``None`` if no allowed tree exists).
    parent : numpy.ndarray or None
        An optimal tree.
    """
    V = t.n_vertices
    if V > max_vertices:
        raise ValueError(f"brute force is for at most {max_vertices} vertices, got {V}")
    D = distance_matrix(t).astype(np.int32)
    Dm = D.copy() if allowed is None else np.where(allowed, D, _INF)
    np.fill_diagonal(Dm, _INF)
    m = V - 1
    dA = _subset_dists(Dm)
    bits = ((np.arange(1 << m)[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)
    out_cost = np.where(bits, 0, dA[:, 1:])          # cost of each vertex outside A, attached to A
    G = out_cost.sum(axis=1, dtype=np.int64)          # G_k
    choice = []                                        # choice[h][A] = B chosen at level h
    for _h in range(k - 1, 1, -1):                     # G_h for h = k-1 .. 2
        newG = np.empty_like(G)
        arg = np.empty(1 << m, dtype=np.int64)
        for A in range(1 << m):
            free = np.flatnonzero(~bits[A])
            if free.size == 0:
                newG[A], arg[A] = G[A], A
                continue
            sub = bits[:1 << free.size, :free.size]
            B = A | (sub.astype(np.int64) @ (1 << free))
            val = sub.astype(np.int64) @ dA[A, free + 1].astype(np.int64) + G[B]
            i = int(np.argmin(val))
            newG[A], arg[A] = val[i], B[i]
        choice.append(arg)
        G = newG
    # level 1: A_1 = {0}; B = A_2 ranges over every subset
    if k == 1:
        total, A2 = int(G[0]), 0
    else:
        val = np.where(bits, dA[0, 1:][None, :], 0).sum(axis=1, dtype=np.int64) + G
        A2 = int(np.argmin(val))
        total = int(val[A2])
    if total >= _INF:
        return None, None
    chain = [0, A2]                                    # masks of A_1, A_2, ...
    for arg in reversed(choice):
        chain.append(int(arg[chain[-1]]))
    label = np.full(V, k, dtype=np.int64)
    label[0] = 0
    for h in range(len(chain) - 1, 0, -1):
        members = np.flatnonzero(bits[chain[h]]) + 1
        label[members] = h                              # in A_{h+1}, hence label <= h
    parent = np.full(V, -1, dtype=np.int64)
    for v in range(1, V):
        cand = np.flatnonzero(label < label[v])
        parent[v] = cand[np.argmin(Dm[cand, v])]
    return total, parent
