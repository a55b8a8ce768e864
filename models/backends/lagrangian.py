"""Lagrangian bounds from any duals, and when a cut loop's bound has stopped paying for itself.

Shared by the k-hop LP (:mod:`synth.models.khop.lp`) and the exchange cut loop
(:mod:`synth.models.forest.cuts`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["lagrangian_bound", "stalled", "too_slow"]


def lagrangian_bound(A, row_lo, row_hi, cost, col_lo, col_hi, duals):
    """``b.u + sum_c min over [lo, hi] of rc_c x_c`` with ``rc = cost - A^T u``: valid for any ``u``.

    A dual on a row side that is infinite is clipped to 0 (that is still a valid dual).

    Returns
    -------
    bound : float
    rc : numpy.ndarray
        Reduced costs under the clipped duals.
    """
    u = np.asarray(duals, dtype=np.float64).copy()
    u[(u > 0) & ~np.isfinite(row_lo)] = 0.0
    u[(u < 0) & ~np.isfinite(row_hi)] = 0.0
    rc = cost - A.T @ u
    rhs = np.where(u > 0, np.where(np.isfinite(row_lo), row_lo, 0.0), np.where(np.isfinite(row_hi), row_hi, 0.0))
    bound = float(u @ rhs) + float(np.minimum(rc * col_lo, rc * col_hi).sum())
    return bound, rc


def stalled(bounds, rounds, tol):
    """Whether a bound sequence has stalled: the LP's cut loop should stop.

    It has when the last ``rounds`` rounds gained less than ``tol`` (relative) and, at
    their pace, the bound would need more than ten times as many rounds to reach the
    next integer (``W`` is an integer, so only crossing one matters).  16x16, k = 5: the
    relative rule alone stopped at 288.97 (+0.016 over 16 rounds); going on crossed 289
    at round 238 and converged at 289.09, a bound of 290 instead of 289.

    Examples
    --------
    >>> stalled([288.950, 288.960, 288.972], 2, 1e-4)      # 0.028 to go, +0.022 per 2 rounds
    False
    >>> stalled([289.050, 289.060, 289.072], 2, 1e-4)      # 0.93 to go
    True
    >>> stalled([288.0, 288.5, 289.0], 2, 1e-4)            # no stall at all
    False
    """
    if len(bounds) <= rounds:
        return False
    b = bounds[-1]
    gain = b - bounds[-1 - rounds]
    to_next = np.floor(b + 1e-6) + 1 - b
    return bool(gain < tol * max(1.0, abs(b)) and 10 * gain < to_next)


def too_slow(history, deadline, window=10.0):
    """Whether, at its pace, the bound cannot reach the next integer before ``deadline``.

    ``history`` holds ``(time, bound)`` after each cut round.  W is an integer, so only
    crossing the next one matters.  The bound climbs in bursts, so the pace is measured
    since the round at which it reached its current integer part, and over ``window``
    seconds and two rounds at least (16x16, k = 5: after a jump from 258.4 to 287.54 in
    one round, two rounds of +0.002 stopped the LP).  Measured on recorded LP runs with
    225 s (16x16) and 280 s (32x32) of LP time: 16x16, k = 5 stops at 289.007 after
    80 s and k = 8 at 267.004 after 55 s, bounds 290 and 268 (a pace over the last two
    rounds stopped them at 288.71 and 266.97); 32x32, k = 12 still stops at 1062.586
    after 149 s and k = 6 at 1155.336 after 80 s (rather than 50 s; it gains +0.1 in
    the 260 s after).

    Examples
    --------
    >>> too_slow([(0.0, 288.2), (5.0, 288.9), (10.0, 288.95), (11.0, 288.95)], deadline=100.0)
    False
    >>> too_slow([(0.0, 288.9), (5.0, 289.001), (10.0, 289.003), (11.0, 289.003)], deadline=100.0)
    True
    """
    if len(history) < 3:
        return False
    t_b, b_b = history[-1]
    level = np.floor(b_b + 1e-6)
    a = len(history) - 3
    while a > 0 and (np.floor(history[a - 1][1] + 1e-6) >= level or history[a][0] > t_b - window):
        a -= 1
    t_a, b_a = history[a]
    pace = (b_b - b_a) / max(t_b - t_a, 1e-9)
    return bool(pace * (deadline - t_b) < level + 1 - b_b)
