"""Depth-bounded exchange schedules: minimum-weight two-root forests of depth at most ``h``.

A forest of depth ``<= h`` with roots ``a = 0`` and a partner ``b``, joined by a shortest route,
gives an allreduce of ``2h + 1`` rounds: reduce to both roots (``h`` rounds), exchange the two
aggregates along ``route(a, b)`` and ``route(b, a)`` (one round), copy back down (``h`` rounds).
Lifted by the regular group Γ of the torus it has Ψ = 1 and Ω = 1, like every base schedule, and
Θ = W / (p - 1) with

    W = sum over forest edges of dist(u, v) + dist(a, b).

:func:`solve_xhop` minimizes ``W`` over the partner and the forest and returns a lower bound on
the minimum over *all* partners, with its provenance.

Relation to k-hop trees (``W_tree(k)``, :mod:`models.khop`):

* cutting the edge from the root to one of its children turns a tree of depth ``h`` into an
  exchange forest of depth ``<= h`` and the same weight, so ``W_exchange(h) <= W_tree(h)``
  (used as warm starts when trees are passed in);
* a forest plus the edge ``0-b`` is a tree of depth ``<= h + 1``, so ``W_exchange(h) >=
  W_tree(h + 1)``; ``W_tree`` does not increase with the depth, so any lower bound on
  ``W_tree(k)``, ``k >= h + 1``, bounds ``W_exchange(h)`` (used as a bound);
* ``W >= p - 1`` always, with equality as soon as ``h >= ecc({0, b})`` for an adjacent ``b``
  (``H - 1`` on a torus with an even side, ``H`` otherwise): the BFS forest of docs/spec.md §4.

Pipeline (:mod:`models.xhop.pipeline`): exact closed forms for ``h = 1`` (two stars, every
partner enumerated) and ``h >= ecc`` (BFS forest); otherwise

1. a label local search over every partner orbit (:mod:`models.xhop.search`), with split
   trees as extra starts;
2. per-partner bounds: ``dist(0, b) + p - 2 + max(0, ecc({0, b}) - h)``, then the LP relaxation
   of the hop-indexed MILP (:mod:`models.xhop.model`) with directed cuts separated by
   max-flow and their images under the pair's stabilizer (:mod:`models.forest.cuts`), when one
   LP is cheap enough for every open partner; each LP's depths are rounded into a forest and
   improved by the local search;
3. per-partner HiGHS MIPs with reduced-cost fixing, the cuts and the cutoff ``UB - 1``
   (round robin over the open partners);
4. the k-hop tree bound for depth ``h + 1`` (from ``trees``, or ``solve_khop`` with the time
   left).

The reported bound is the best of ``p - 1``, the tree bound and the minimum over partner orbits
of the per-partner bounds (a partner whose bound reaches the incumbent is closed).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> r = solve_xhop(parse_torus("6x6"), 2, time_limit=30)
>>> r.status, r.weight, r.depth, r.lower_bound
('optimal', 44, 2, 44)
>>> from synth.schedule import exchange_schedule
>>> from synth.check.claims import certify
>>> from synth.symmetry.torus import torus_gamma
>>> t = parse_torus("6x6")
>>> c = certify(exchange_schedule(t, r.parent, r.a, r.b, route=t.route), torus_gamma(t))
>>> c.claims["rounds"], c.claims["psi"], c.claims["omega"], c.claims["weight"]
(5, '1', '1', '44')
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from synth.errors import OptionError
from synth.models.backends.result import Best, Status
from synth.models.forest.result import ForestResult
from synth.models.forest.labels import labels_to_parent
from synth.models.xhop.instance import (
    bfs_forest,
    check_forest,
    distance_matrix,
    forest_weight,
    nearest_root,
    pair_eccentricity,
    root_distance,
)

__all__ = ["XHopResult", "exchange_depth_threshold", "solve_xhop"]


@dataclass(frozen=True)
class XHopResult(ForestResult):
    """Outcome of :func:`solve_xhop`: the fields of :class:`~synth.models.forest.result.ForestResult`
    (``depth_bound`` is ``h``; ``weight`` the forest edge distances plus ``dist(a, b)``;
    ``lower_bound`` a bound on the minimum over every partner and every forest of depth
    ``<= h``; ``solver`` what produced the forest: a closed form, the heuristic, a MIP, ...)
    and the roots.

    Attributes
    ----------
    a, b : int
        The roots; ``a`` is always vertex 0.  The schedule has ``2 * depth + 1`` rounds.
    """

    a: int = 0
    b: int = 0

    @property
    def h(self) -> int:
        """The depth bound (``depth_bound``), under its name in the exchange docs."""
        return self.depth_bound

    @property
    def source(self) -> str:
        """What produced the forest (``solver``), under its earlier name."""
        return self.solver


def exchange_depth_threshold(t) -> tuple:
    """``(h*, b)``: the least ``ecc({0, b})`` over the neighbours ``b`` of 0, and the first such ``b``.

    For ``h >= h*`` the BFS forest of that pair is optimal (``W = p - 1``).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> exchange_depth_threshold(parse_torus("8x8")), exchange_depth_threshold(parse_torus("5x5"))
    ((7, 8), (4, 5))
    """
    best = None
    for i in range(t.ndim):
        b = int(t.link_dst[2 * i])
        e = pair_eccentricity(t, b)
        if best is None or e < best[0]:
            best = (e, b)
    return best


def _result(t, h, b, parent, bound, method, t0, seed, source, time_limit, interrupted=False):
    depth, weight = check_forest(t, b, parent, h)
    bound = float(bound)
    if bound > weight + 1e-9:
        raise RuntimeError(f"internal error: lower bound {bound} above the weight {weight}")
    status = "optimal" if bound >= weight - 1e-9 else "feasible"
    lb = int(round(bound)) if abs(bound - round(bound)) < 1e-9 else bound
    gap = (weight - bound) / weight if weight > 0 else 0.0
    return XHopResult(Status(status), np.asarray(parent, dtype=np.int64), depth, weight, lb, max(gap, 0.0),
                      time.monotonic() - t0, int(seed), source, method, float(time_limit), int(h), bool(interrupted),
                      0, int(b))


def _fallback(t, D, h, b):
    """Truncated BFS labels for the pair ``{0, b}``: always a forest of depth ``<= h``."""
    lab = np.minimum(root_distance(D, b), h).astype(np.int64)
    lab[[0, b]] = 0
    Dm = D.astype(np.int32)
    np.fill_diagonal(Dm, 1 << 20)
    return labels_to_parent(Dm, lab)


def solve_xhop(t, h: int, *, time_limit: float = 60.0, seed: int = 0, progress=None, trees=None,
               use_trees: bool = True) -> XHopResult:
    """Minimum-weight exchange forest of depth at most ``h`` on the torus ``t``.

    Parameters
    ----------
    t : Torus
        Any torus (every side at least 3).
    h : int
        Depth bound of the forest, ``h >= 1``; the schedule has ``2 * depth + 1 <= 2h + 1`` rounds.
    time_limit : float
        Wall-clock budget in seconds (the closed-form cases return at once).  A call to
        :func:`synth.models.khop.solve_khop` for the tree bound gets what is left of it.
    seed : int
        Seeds the heuristic and HiGHS.  For a seed the result is reproducible unless a time
        limit cuts a phase short (then the machine's speed decides where it stops).
    progress : callable, optional
        Receives one-line messages on incumbent and bound updates.
    trees : sequence of KHopResult, optional
        k-hop trees already solved for this torus (objects with ``k``, ``parent``, ``depth``
        and ``lower_bound``).  Trees of depth ``<= h`` are split into warm starts; the best
        ``lower_bound`` with ``k >= h + 1`` is a lower bound.  Passing them avoids solving
        a tree here.
    use_trees : bool
        Without ``trees``, call ``solve_khop(t, h + 1)`` with the time that is left when a gap
        remains (default ``True``).

    Returns
    -------
    XHopResult

    Raises
    ------
    KeyboardInterrupt
        Ctrl-C (or SIGTERM, which the CLI turns into one) propagates; it carries the best
        forest found so far, when there is one, as its attribute ``partial`` (an
        :class:`XHopResult` marked ``interrupted``).
    synth.errors.OptionError
        (a ``ValueError``) If ``h < 1``.
    """
    h = int(h)
    if h < 1:
        raise OptionError(f"h (the depth bound) must be at least 1, not {h}")
    t0 = time.monotonic()
    say = progress or (lambda _m: None)
    V = t.n_vertices
    hstar, badj = exchange_depth_threshold(t)
    if h >= hstar:
        return _result(t, h, badj, bfs_forest(t, badj), V - 1,
                       f"W >= p - 1; h >= ecc({{0, {badj}}}) = {hstar}, so the BFS forest attains it",
                       t0, seed, "BFS forest", time_limit)
    D = distance_matrix(t)
    if h == 1:
        Wb = np.minimum(D[0][None, :], D).sum(axis=1, dtype=np.int64) + D[0]
        Wb[0] = np.iinfo(np.int64).max
        b = int(np.argmin(Wb))
        parent = nearest_root(D, b)
        parent[[0, b]] = -1
        return _result(t, h, b, parent, int(Wb[b]), "exact: every partner enumerated (two stars)",
                       t0, seed, "two stars", time_limit)
    from synth.models.xhop.pipeline import run_pipeline  # the pipeline (scipy, solvers' glue) loads when needed

    best = Best()
    try:
        run_pipeline(t, h, best, deadline=t0 + time_limit, seed=seed, trees=trees, use_trees=use_trees, say=say)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: it propagates, with the best forest found so far
        inc = best.incumbent
        if inc is not None:
            exc.partial = _result(t, h, inc.partner, inc.parent, max(best.bound, V - 1), best.method, t0, seed,
                                  inc.source, time_limit, True)
        raise
    if best.incumbent is None:
        parent = _fallback(t, D, h, badj)
        best.offer_tree(parent, forest_weight(t, badj, parent), "truncated BFS forest", roots=(0, badj))
    if not np.isfinite(best.bound):
        best.offer_bound(V - 1, "W >= p - 1")
    inc = best.incumbent
    return _result(t, h, inc.partner, inc.parent, best.bound, best.method, t0, seed, inc.source, time_limit)
