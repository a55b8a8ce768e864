"""Minimum-weight k-hop spanning trees of a torus (docs/spec.md §5).

For a torus and a depth bound ``k``, :func:`solve_khop` returns a spanning tree rooted
at vertex 0 of depth at most ``k`` that minimizes ``W(T) = sum over tree edges of the
torus distance``, with a lower bound on the optimum ``W*`` whose provenance it names.

Pipeline (``solver="auto"``):

1. ``k >= H``: the BFS tree, ``W = p - 1``, optimal (every edge costs at least 1).
   ``k = 1``: the star, the only tree of depth 1.  Otherwise the first bound is the
   cone-counting bound (:func:`synth.check.bounds.cone_count_bound`), which needs no LP.
2. The jump search (:mod:`models.khop.search.jump`): a tree is the min-plus closure of its few
   jumps (the vertices whose parent is farther than one hop), and an iterated local
   search moves, re-levels, adds and removes jumps, each move carrying a jump's whole
   territory, priced exactly in one array operation (a fixed number of rounds, from
   ``start`` if given, else from the root alone).  On small tori the label search's
   farthest-point construction and descent follow (:mod:`models.forest.labels`).
3. The layered-graph LP with directed cuts, aggregated over the root's stabilizer
   (:mod:`models.khop.lp`): a valid bound and reduced costs.  Skipped on tori too large
   for its first solve to finish in the time left (the bound is then the cone count's).
   Then the excess Steiner bound (:mod:`synth.check.bounds.steiner`, terminals chosen by
   :mod:`models.khop.steiner`), an exact hop-constrained Steiner arborescence over a few
   far vertices: it beats the LP when few vertices lie beyond depth ``k`` (16x16,
   k = 9, 10, 11, 12: 266, 264, 263, 261 against the LP's 265, 263, 261, 260).
4. When reduced-cost fixing against the incumbent would leave a big MIP, a long
   improvement phase first (a lighter incumbent fixes more arcs) in which the jump
   search, a label search (the iterated one; from 1024 vertices on the windowed one of
   :mod:`models.khop.search.window`), the window LNS (:mod:`models.khop.search.lns`: CP-SAT re-solves
   the parents and depths of 20-60 nearby vertices exactly, the rest fixed) and kicks
   (a ball of the depth pattern shifted, then repaired) share the time, each slice to
   the best recent gain per second.
5. Reduced-cost fixing: an arc whose reduced cost lifts the bound past ``UB - 1`` is in
   no tree lighter than the incumbent (weights are integers), so it is dropped.
6. The hop-indexed MIP (:mod:`models.khop.model`) on the surviving arcs, with the
   LP's cuts and all their images, and the objective cut off at ``UB - 1``: a solution
   improves the incumbent, infeasibility proves it optimal.  ``auto`` and ``scip``
   solve it by branch-and-cut in SCIP, which separates the cone and flow cuts again at
   every node of its search (:func:`models.forest.cuts.layered_separator`); ``auto``
   gives CP-SAT a tenth of the time first, and all of it on big models or without
   ``pyscipopt`` (:func:`models.khop.pipeline.mip_engines`); ``cpsat`` and ``highs``
   give the model to CP-SAT or HiGHS with the root's cuts only.  12x12, k = 3 and 4 with
   ``time_limit=1500``: ``auto`` proves ``W* = 192`` and ``169`` in 920 s and 895 s, where the
   pipeline with CP-SAT alone had ended at 192 / 189 and 170 / 167.
7. The improvement phase of step 4 until the deadline when nothing is proven (also the
   whole search when the LP is skipped).  On 32x32, k = 6, 600 s: W = 1199 (1219 before
   the jump search, 1239 before the windowed search); 64x64, k = 10: 4499 (4630 before).

Every phase checks the deadline and solver calls get only the time left (see
:func:`solve_khop`, Notes).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> r = solve_khop(parse_torus("6x6"), 2, time_limit=20)
>>> r.status, r.weight, r.depth, r.lower_bound == r.weight
('optimal', 50, 2, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from synth.errors import OptionError
from synth.models._names import SOLVERS
from synth.models.backends.result import Best, Status
from synth.models.forest.result import ForestResult
from synth.models.forest.instance import check_tree, root_stabilizer
from synth.topology.torus import Torus

__all__ = ["KHopResult", "solve_khop", "SOLVERS", "SOLVER_REVISION"]

#: Bumped whenever a change to the pipeline can change its result for the same inputs
#: (a lighter tree, a stronger bound): :func:`synth.solving.khop.khop_tree` keys its cache on
#: it, so a solve cached by an older solver is run again instead of served stale.
SOLVER_REVISION = 3


@dataclass(frozen=True)
class KHopResult(ForestResult):
    """Outcome of :func:`solve_khop`: the fields of :class:`~synth.models.forest.result.ForestResult`
    (``depth_bound`` is ``k``; ``solver`` the solver option, or ``"bfs"`` / ``"star"`` for the
    closed forms) and the dual.

    Attributes
    ----------
    dual : dict or None
        The dual behind the strongest bound ``synth check`` can re-derive
        (:mod:`synth.check.bounds`): the excess Steiner bound's terminals when they prove the
        most (:mod:`synth.check.bounds.steiner`), else the layered LP's when it ran and proved
        more, else the cone-counting bound's, or for ``k = 1`` and ``k >= H`` the closed form's
        (``p - 1``, or the star's weight at ``k = 1``).  Its ``bound`` can be below
        ``lower_bound`` when the MIP proved more.  An ``interrupted`` result (the ``partial``
        of an interrupt) is cached as interrupted only, never served as an answer
        (:func:`synth.solving.khop.khop_tree`).
    """

    dual: dict | None = None

    @property
    def k(self) -> int:
        """The depth bound (``depth_bound``), under its name in the k-hop docs."""
        return self.depth_bound


def _bfs_parent(t):
    """A BFS tree of the torus: every vertex one step closer to the root (weight p - 1).

    On a lattice torus, whose coordinate differences are not its distances, each vertex takes
    its first out-neighbour (link order) one hop nearer the root.
    """
    V = t.n_vertices
    if not isinstance(t, Torus):
        d0 = t.dist(0, np.arange(V))
        closer = np.flatnonzero(d0[t.link_dst] == d0[t.link_src] - 1)
        parent = np.full(V, -1, dtype=np.int64)
        parent[t.link_src[closer][::-1]] = t.link_dst[closer][::-1]   # the last write is the first link
        return parent
    coords = t.coords(np.arange(V))
    steps = t.steps(np.zeros(V, dtype=np.int64), np.arange(V))   # signed offsets from the root
    parent = np.full(V, -1, dtype=np.int64)
    nz = np.any(steps != 0, axis=1)
    dim = np.argmax(steps != 0, axis=1)                            # first non-zero coordinate
    back = coords.copy()
    rows = np.flatnonzero(nz)
    back[rows, dim[rows]] -= np.sign(steps[rows, dim[rows]])
    parent[rows] = t.vertex(back[rows])
    return parent


def _result(t, k, parent, bound, method, t0, seed, solver, time_limit, status=None, dual=None, interrupted=False):
    depth, weight = check_tree(t, parent, k)
    if dual is None:        # the closed-form bound's dual (p - 1, or the star's weight at k = 1)
        from synth.models.khop.dual import simple_dual  # numpy-only, but kept off the import of solve_khop

        dual = simple_dual(t, k, root_stabilizer(t))
    bound = float(bound)
    if bound >= weight - 1e-6:
        bound = float(weight)
        status = "optimal"
    elif np.isclose(bound, round(bound)):
        bound = float(round(bound))
    status = status or "feasible"
    gap = (weight - bound) / weight if weight > 0 else 0.0
    lb = int(bound) if float(bound).is_integer() else bound
    return KHopResult(Status(status), np.asarray(parent, dtype=np.int64), depth, weight, lb, gap,
                      time.monotonic() - t0, seed, solver, method, time_limit, k, bool(interrupted), dual)


def _check_start(t, k, start):
    """The parent array ``start`` as int64, after checking it is a spanning tree of depth ``<= k`` rooted at 0."""
    try:
        parent = np.asarray(start)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"start must be a parent array: {exc}") from None
    if parent.ndim != 1 or parent.size != t.n_vertices:
        raise ValueError(f"start must be a parent array of {t.n_vertices} entries, got shape {parent.shape}")
    if not (np.issubdtype(parent.dtype, np.integer) or
            (np.issubdtype(parent.dtype, np.floating) and np.all(parent == np.round(parent)))):
        raise ValueError("start must hold integer vertex ids (-1 at the root)")
    parent = parent.astype(np.int64)
    try:
        depth, _w = check_tree(t, parent)
    except ValueError as exc:
        raise ValueError(f"start is not a spanning tree rooted at vertex 0: {exc}") from None
    if depth > k:
        raise ValueError(f"start has depth {depth}, more than the depth bound {k}")
    return parent


def solve_khop(t, k: int, *, time_limit: float = 60.0, seed: int = 0, solver: str = "auto", threads: int = 1,
               progress=None, start=None) -> KHopResult:
    """Minimum-weight spanning tree of depth at most ``k`` rooted at vertex 0 of the torus ``t``.

    Parameters
    ----------
    t : Torus
    k : int
        Depth bound, ``k >= 1``.
    time_limit : float
        Wall-clock budget in seconds (the trivial cases return at once).
    seed : int
        Seeds the heuristic and the solvers; results are reproducible for a seed with
        ``threads=1`` (CP-SAT with several workers is not deterministic).
    solver : str
        ``"auto"`` / ``"scip"`` (LP bound + branch-and-cut in SCIP on the reduced model;
        ``auto`` uses CP-SAT instead when ``pyscipopt`` is not installed), ``"cpsat"``
        (LP bound + CP-SAT), ``"highs"`` (LP bound + HiGHS MIP), ``"heuristic"`` (iterated
        or windowed local search and LP bound: no MIP and no window LNS, which needs CP-SAT).
    threads : int
        Solver threads (default 1).
    progress : callable, optional
        Receives one-line messages on incumbent and bound updates.
    start : array_like, optional
        A parent array (``-1`` at the root 0) of a spanning tree of depth at most ``k``,
        for instance the tree solved for depth ``k - 1``.  It is the first incumbent (the
        result is never heavier) and a starting point of the local search.

    Returns
    -------
    KHopResult

    Raises
    ------
    KeyboardInterrupt
        Ctrl-C (or SIGTERM, which the CLI turns into one) during the solve is never swallowed:
        it propagates, and carries the best tree found so far, when there is one, as its
        attribute ``partial`` (a :class:`KHopResult` marked ``interrupted``, with its honest
        status and gap), for a caller that keeps it (:func:`synth.solving.khop.khop_tree`).
    synth.errors.OptionError
        (a ``ValueError``) On an unknown solver, ``k < 1``, or ``solver="scip"`` without
        ``pyscipopt`` installed; the message starts with the parameter's name.
    ValueError
        On a ``start`` that is not a spanning tree of depth at most ``k`` rooted at 0.

    Notes
    -----
    Time.  Every phase (distances, heuristic, each LP solve, pricing, separation, MIP
    build and solve) checks the deadline ``time_limit`` after the call, and solver calls
    get only the time left, so the call returns within about ``time_limit`` plus a
    second or two.  On large tori (about 2000 vertices or more with a minute or so) the
    LP would not finish; the bound is then the cone-counting bound
    (:func:`synth.check.bounds.cone_count_bound`: 64x64, k = 10: 4322 against ``p - 1 = 4095``).

    Determinism.  With ``threads=1`` the same ``(t, k, seed, time_limit, start)`` give
    the same tree when the solve ends on a proof of optimality or after the fixed
    iteration counts of its phases.  A solve stopped by the time limit stops wherever
    the clock says, so its tree and bound may differ from run to run.

    Examples
    --------
    Warm start from the tree of a smaller depth bound (a tree of depth ``<= 2`` is one of
    depth ``<= 3``):

    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("6x6")
    >>> r2 = solve_khop(t, 2, time_limit=20)
    >>> r3 = solve_khop(t, 3, time_limit=20, start=r2.parent)
    >>> r3.weight <= r2.weight, r3.status
    (True, 'optimal')
    >>> solve_khop(t, 1, start=r2.parent)
    Traceback (most recent call last):
    ...
    ValueError: start has depth 2, more than the depth bound 1
    """
    if solver not in SOLVERS:
        raise OptionError(f"solver must be one of {', '.join(SOLVERS)}, not {solver!r}")
    from synth.models.khop.pipeline import scip_available  # the pipeline (scipy, searches) loads when a solve needs it

    if solver == "scip" and not scip_available():
        raise OptionError("solver scip needs the pyscipopt package (pip install pyscipopt); without it, "
                          "solver auto uses CP-SAT") from None
    k = int(k)
    if k < 1:
        raise OptionError(f"k (the depth bound) must be at least 1, not {k}")
    t0 = time.monotonic()
    say = progress or (lambda _m: None)
    V, H = t.n_vertices, t.diameter
    if start is not None:
        start = _check_start(t, k, start)
    if k >= H:
        return _result(t, k, _bfs_parent(t), V - 1, "W >= p - 1: every tree edge has length >= 1", t0, seed,
                       "bfs", time_limit)
    if k == 1:
        parent = np.zeros(V, dtype=np.int64)
        parent[0] = -1
        return _result(t, k, parent, int(t.dist(0, np.arange(V)).sum()), "the star is the only tree of depth 1",
                       t0, seed, "star", time_limit)
    deadline = t0 + time_limit
    from synth.models.khop.dual import cone_dual  # start-up speed, as above
    from synth.models.khop.pipeline import run_pipeline  # start-up speed, as above

    best = Best(bound=V - 1, method="W >= p - 1")
    try:
        cone = cone_dual(t, k)      # the bound that needs no LP (1.7 s on 64x64)
        best.bound, best.dual = float(cone["bound"]), cone
        best.method = "cone counting: W - (p - 1) >= far vertices / cone charges per unit of excess"
        say(f"bound {cone['bound']} (cone counting)")
        run_pipeline(t, k, best, deadline=deadline, seed=seed, solver=solver, threads=threads, say=say,
                     start=start)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM in any phase: it propagates, with what was found
        if best.parent is not None:
            exc.partial = _result(t, k, best.parent, best.bound, best.method, t0, seed, solver, time_limit,
                                  dual=best.dual, interrupted=True)
        raise
    parent = best.parent
    if parent is None:
        parent = _bfs_parent(t)
        parent = np.where(t.dist(0, np.arange(V)) <= k, parent, 0)   # truncated BFS + star: always depth <= k
        parent[0] = -1
    return _result(t, k, parent, best.bound, best.method, t0, seed, solver, time_limit, dual=best.dual)
