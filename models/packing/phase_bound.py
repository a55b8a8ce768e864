"""How far tree schedules with a reduce phase then a copy phase can go: the owners' shares bound them.

In the layered and local timed classes, and for timed trees of the one window ``(R, 0)``, an owner's
chunk is reduced up a tree in rounds ``1..R`` and copied down it in rounds ``R + 1..2R``, and every vertex
``v`` other than the
owner sends the chunk exactly once in the reduce phase and receives it exactly once in the copy phase.
So with shares ``w`` (``sum w = 1``) the reduce phase takes at least ``(1 - w_v) / deg(v)`` per element
(``v``'s sends over its ``deg(v)`` out-links; the bandwidth term is a sum of per-round maxima, at least
the busiest link's total) and the copy phase as much: the bandwidth term per element is at least
``2 T`` with ``T`` the least value for which shares ``w_v >= 1 - T deg(v)`` summing to at most one exist.
A chip that lost a link must own about a quarter of the vector (on a 2-D torus) for the schedule to
reach the volume bound, and eight of them cannot all do so: on a 16x16 torus with four scattered
failed links no such schedule passes 86.05 % of the volume bound (:func:`phase_share_bound`).  Timed
trees in shorter windows (:func:`synth.models.packing.timed.timed_windows`) reduce and copy while others
still reduce, so the bound does not apply to them.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> t = parse_torus("16x16")
>>> d = damage(t, parse_failures(t, links=["0-1", "37-53", "100-101", "200-216"]))
>>> round(phase_share_bound(d), 4)
0.8605
>>> round(phase_share_bound(damage(t, parse_failures(t, links=["0-1"]))), 4)
1.0
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from synth.check.bounds.bandwidth import min_compute_distance

__all__ = ["least_phase_time", "phase_share_bound"]


def least_phase_time(degrees) -> Fraction:
    """The least ``T`` with ``sum_v max(0, 1 - T deg(v)) <= 1`` (exact): the shortest reduce phase per element
    over all shares, for compute vertices of out-degrees ``degrees``.

    >>> least_phase_time([3, 3, 4, 4, 4, 4]), least_phase_time([3] * 8 + [4] * 248)
    (Fraction(5, 22), Fraction(7, 24))
    """
    ds, counts = np.unique(np.asarray(degrees, dtype=np.int64), return_counts=True)

    def excess(T):
        return sum(int(c) * max(Fraction(0), 1 - T * int(d)) for d, c in zip(ds, counts))

    # the sum is continuous and decreasing in T: it meets 1 where the vertices of the smallest degrees
    # (those below 1 / T) give k - T S = 1, for one of the prefixes of the sorted degrees
    cands = [Fraction(int(counts[:k].sum()) - 1, int((ds[:k] * counts[:k]).sum())) for k in range(1, ds.size + 1)]
    cands += [Fraction(1, int(d)) for d in ds]
    return min(T for T in cands if T >= 0 and excess(T) <= 1)


def phase_share_bound(t) -> float:
    """The largest share of the volume bound any schedule of the phase-separated tree classes reaches on ``t``
    (module docstring): volume bound over ``2 T``."""
    live = t.is_compute & (np.bincount(t.link_src, minlength=t.n_vertices) > 0)
    deg = np.minimum(np.bincount(t.link_src, minlength=t.n_vertices), np.bincount(t.link_dst, minlength=t.n_vertices))
    T = least_phase_time(deg[live])
    vol = Fraction(2 * (int(t.n_compute) - 1) * int(min_compute_distance(t)), int(t.n_links))
    return float(min(Fraction(1), vol / (2 * T)))
