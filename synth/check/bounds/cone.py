"""The cone-counting lower bound for k-hop trees: re-derived from the topology alone, no LP.

A stored dual of kind ``"khop-cone-count"`` holds nothing but ``k``; its bound is what large
tori (64x64), where the layered LP does not finish, get.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from synth.check.bounds.kinds import DualBound
from synth.errors import SynthError

__all__ = ["cone_count_bound", "MAX_CONE_VERTICES"]

MAX_CONE_VERTICES = 16384       # cone counting takes O(V^2 k) time: seconds at 64x64, a minute at 128x128


def cone_count_bound(t, k: int) -> DualBound:
    """A lower bound on ``W*(k)`` that counts cones, from the topology alone (no LP).

    Let ``M`` be the number of vertices farther than ``k`` from the root,
    ``N(d, s) = #{x : |x| <= s, |x - d| >= s + 2}`` for a displacement ``d``, ``rho`` the
    largest ``N(d, s) / (|d| - 1)`` over ``|d| >= 2`` and ``0 <= s <= k - 2``, and, for a
    possible child ``c`` of the root, ``N_c = #{j : dist(c, j) <= k - 1, dist(0, j) > k}``.
    Then ``W*(k) - (p - 1)`` is at least the least value of
    ``sum_c x_c (|c| - 1) + (M - sum_c x_c N_c) / rho`` over ``0 <= x_c <= 1`` with
    ``sum_c x_c N_c <= M`` (a fractional knapsack: greedy by ``N_c / (|c| - 1)``).

    Proof.  Let ``v_0 = 0, ..., v_m = j`` (``m <= k``) be the tree path to a vertex ``j``
    with ``dist(0, j) > k``, and ``f(h) = dist(v_h, j) - (k - h)``: ``f(0) > 0 >= f(m)``.
    At the first ``h`` with ``f(h) <= 0``, ``dist(v_h, j) <= k - h`` and
    ``dist(v_{h-1}, j) >= k - h + 2``: charge ``j`` to the edge ``v_{h-1} v_h``.  An edge of
    length ``L`` at depth ``h >= 2`` is charged at most ``N(v_h - v_{h-1}, k - h) <=
    rho (L - 1)`` times (never when ``L = 1``); the root's edge to a child ``c`` at most
    ``N_c`` times.  Every far vertex is charged once, so with ``C`` the root's children,
    ``M <= sum_{c in C} N_c + rho * (excess of the deeper edges)``, and the excess
    ``W - (p - 1)`` is at least the knapsack value at ``x = 1_C`` (or a smaller ``x`` with
    ``sum x_c N_c = M``).  In LP terms this is a dual that prices every vertex at 1 and
    the cone cuts ``S_j(k)`` of the layered relaxation.  The arithmetic is exact
    (fractions), so ``tol = 0``.

    Parameters
    ----------
    t : Torus
    k : int
        Depth bound, ``k >= 1``.

    Returns
    -------
    DualBound
        ``value`` is ``p - 1`` plus the knapsack value, ``bound`` its ceiling.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> cone_count_bound(parse_torus("64x64"), 10).bound
    4322
    >>> cone_count_bound(parse_torus("5x5"), 1).bound     # the star, the only tree of depth 1
    60
    >>> cone_count_bound(parse_torus("8x8"), 8).bound     # k >= H: no vertex is farther than k
    63
    """
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise SynthError(f"cone-count bound: need an integer depth k >= 1, got {str(k)[:40]}")
    V = t.n_vertices
    if V > MAX_CONE_VERTICES:
        raise SynthError(f"cone-count bound: {V} vertices is beyond the {MAX_CONE_VERTICES} this check re-derives")
    verts = np.arange(V)
    d0 = t.dist(0, verts).astype(np.int64)
    far_mask = d0 > k
    far = int(far_mask.sum())
    if far == 0:
        return DualBound(V - 1, float(V - 1), 0.0, V - 1)
    rho = None                                          # a Fraction; None when k = 1 (no deeper edges)
    n_c = np.zeros(V, dtype=np.int64)
    chunk = max(1, 4_000_000 // V)
    for lo in range(1, V, chunk):
        d = verts[lo:lo + chunk]
        excess = d0[d] - 1                              # |d| - 1
        Dd = t.dist(d[:, None], verts[None, :]).astype(np.int64)
        n_c[d] = ((Dd <= k - 1) & far_mask[None, :]).sum(axis=1)
        ok = excess >= 1
        for s in range(k - 1):
            n = ((d0[None, :] <= s) & (Dd >= s + 2)).sum(axis=1)
            ratio = np.where(ok, n / np.maximum(excess, 1), -1.0)
            top = ratio.max()
            for a in np.flatnonzero(ok & (ratio >= top * (1 - 1e-9))):   # the float leader(s), compared exactly
                r = Fraction(int(n[a]), int(excess[a]))
                if rho is None or r > rho:
                    rho = r
    # the root's children, best ratio first; children that charge less than rho per unit don't help
    kids = [(Fraction(int(n_c[c]), int(d0[c] - 1)), int(n_c[c]), int(d0[c] - 1))
            for c in np.flatnonzero((d0 >= 2) & (n_c > 0))]
    kids.sort(reverse=True)
    left, extra = Fraction(far), Fraction(0)
    for ratio, n, length in kids:
        if left == 0 or (rho is not None and ratio <= rho):
            break
        take = min(Fraction(1), left / n)
        extra += take * length
        left -= take * n
    if left > 0:
        if rho is None or rho == 0:
            raise SynthError("cone-count bound: the far vertices cannot all be charged (cannot happen)")
        extra += left / rho
    return DualBound(V - 1 + math.ceil(extra), float(V - 1 + extra), 0.0, V - 1 + far)
