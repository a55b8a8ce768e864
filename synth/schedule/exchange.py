"""Forest plus exchange (paper Appendix A.5, docs/spec.md §4): ``2H - 1`` rounds on even tori.

The roots are vertex 0 and its ``+1`` neighbour along the first even dimension.  Every other
vertex hangs from the nearer root (ties go to vertex 0) through the first hop of its dimension-order
route to it, which is a BFS forest of depth ``ecc({a, b}) = H - 1``.  Lifted by
Γ (equal-sided tori) the schedule has ``2p - 2`` one-hop transmissions per chunk and Ω = 1, so it
meets the round lower bound ``2H - 1`` of fully bandwidth-optimal schedules.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("8x8")
>>> b = exchange_allreduce(t)
>>> b.n_rounds, b.n_transmissions, 2 * t.diameter - 1
(15, 126, 15)
"""

from __future__ import annotations

import numpy as np

from synth.errors import TopologyError, check_instance
from synth.schedule.data import BaseSchedule
from synth.schedule.forest import bfs_forest, exchange_schedule
from synth.topology.torus import Torus

__all__ = ["exchange_roots", "bfs_forest_parents", "exchange_allreduce"]


def exchange_roots(t: Torus):
    """The adjacent root pair ``(a, b)``: vertex 0 and its ``+1`` neighbour along the first even dimension."""
    even = [i for i, n in enumerate(t.shape) if n % 2 == 0]
    if not even:
        raise TopologyError(f"{t.name} has no even side: a pair saves no round there, 2H is already optimal")
    return 0, int(t.link_dst[2 * even[0]])


def bfs_forest_parents(t: Torus, a: int, b: int) -> np.ndarray:
    """Parents of the BFS forest rooted at ``{a, b}`` (``-1`` at the roots); ties go to ``a``."""
    return bfs_forest(t, [a, b])


def exchange_allreduce(t: Torus) -> BaseSchedule:
    """The ``2H - 1``-round forest-plus-exchange base schedule on a torus with an even side."""
    check_instance(t, "t", Torus, " (e.g. synth.parse_torus('4x4'))")
    if not isinstance(t, Torus):
        raise TopologyError("the forest-plus-exchange construction is built on tori")
    a, b = exchange_roots(t)
    parent = bfs_forest_parents(t, a, b)
    return exchange_schedule(t, parent, a, b, route=lambda u, w: t.link_ids([u], [w]),
                             label=f"BFS forest + exchange, roots {a} and {b}, depth {t.diameter - 1}")
