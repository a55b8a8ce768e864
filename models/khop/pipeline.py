"""The solve pipeline behind :func:`models.khop.solve_khop`: heuristic, LP bound, fixing, MIP, LNS.

``best`` is a :class:`~synth.models.backends.result.Best` the pipeline updates in place
(the incumbent tree, the bound, its method and the dual behind it), so that whatever it
has found survives a Ctrl-C.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> import time
>>> from synth.models.backends.result import Best
>>> best = Best(bound=24.0)
>>> run_pipeline(parse_torus("5x5"), 2, best, deadline=time.monotonic() + 20)
>>> best.weight, best.bound
(31, 31.0)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from synth.models.forest.labels import labels_to_parent, parent_to_labels
from synth.models.khop.search.construct import heuristic_tree
from synth.models.khop.search.jump import jump_search, unit_metric
from synth.models.forest.instance import distance_matrix, root_stabilizer, translations, tree_weight
from synth.models.khop.dual import export_dual
from synth.models.khop.search.lns import kick_search, lns_search
from synth.models.forest.cuts import cut_images, layered_separator
from synth.models.khop.lp import LayeredLP
from synth.models.khop.model import ModelData, build_hop_model, decode_parent
from synth.models.khop.steiner import terminal_search
from synth.models.khop.search.window import window_search
from synth.topology.torus import Torus

__all__ = ["run_pipeline", "cut_images", "layered_separator", "mip_engines", "scip_available", "lp_affordable",
           "jump_rounds", "MAX_MIP_ARCS", "EASY_MIP_ARCS", "ILS_ROUNDS", "LNS_FIRST", "MIN_SLICE"]

_EPS = 1e-6
MAX_MIP_ARCS = 150_000      # beyond this many surviving arcs the MIP is hopeless: spend the time elsewhere
EASY_MIP_ARCS = 20_000      # up to this many surviving arcs the MIP goes first (it often proves optimality)
ILS_ROUNDS = 2_000          # rounds of the long local search before a big MIP
LNS_FIRST = 1024            # from this many vertices on, the windowed search replaces the whole-torus one
MIN_SLICE = 4.0             # seconds: the shortest slice of the improvement phase an arm gets


def jump_rounds(V):
    """Perturbation rounds of the first jump search: a few seconds (16x16: 500, 32x32: 195, 64x64: 50)."""
    return int(min(500, max(50, 200_000 // V)))


def _dual_bound(best):
    """The bound of the dual the certificate would store (``-inf`` without one)."""
    return -math.inf if best.dual is None else best.dual.get("bound", -math.inf)


ENGINE_NAMES = {"cpsat": "cp-sat", "highs": "highs", "scip": "scip"}


def scip_available():
    """Whether ``pyscipopt`` (SCIP's branch-and-cut) can be imported."""
    try:
        import pyscipopt  # noqa: F401
    except ImportError:
        return False
    return True


def mip_engines(solver, seconds, n_arcs=0):
    """Which MIP engines solve the fixed model of ``n_arcs`` arcs, in turn, and for how long (``None``: the rest).

    ``auto`` runs CP-SAT for a tenth of the time (at least 10 s), then SCIP's
    branch-and-cut for the rest; CP-SAT only when ``pyscipopt`` is missing or the model
    has more than ``EASY_MIP_ARCS`` arcs.  Each is faster on its own kind of model:
    10x10, k = 4 (1971 arcs) takes CP-SAT 1.8 s and SCIP 18-76 s (seed and setting),
    10x10, k = 3 (5069 arcs) takes CP-SAT 144 s and SCIP 47 s; on 12x12, k = 4 (15,097
    arcs) SCIP found a lighter tree (169 against 170) where CP-SAT found nothing in
    600 s.  On big models SCIP only spends memory: 16x16, k = 3 (50,751 arcs) took 3.2
    GB and 392 s for its first two nodes, at the LP's bound.

    Examples
    --------
    >>> mip_engines("highs", 300)
    [('highs', None)]
    >>> mip_engines("auto", 300, 5000) in ([('cpsat', 30.0), ('scip', None)], [('cpsat', None)])
    True
    >>> mip_engines("auto", 300, 50_000)
    [('cpsat', None)]
    """
    if solver != "auto":
        return [(solver, None)]
    if n_arcs > EASY_MIP_ARCS or not scip_available():
        return [("cpsat", None)]
    return [("cpsat", float(min(seconds, max(10.0, 0.1 * seconds)))), ("scip", None)]


def _left(deadline):
    return deadline - time.monotonic()


def _mip_loop(t, k, best, lp, lpres, method, perms, D, *, deadline, seed, solver, threads, say):
    """Reduced-cost fixing against the incumbent, then the MIP; restart whenever the incumbent improves.

    An arc whose reduced cost lifts the LP bound above ``UB - 1`` lies in no tree of
    weight ``<= UB - 1`` (weights are integers), so the MIP keeps only the other arcs,
    adds the objective cut-off ``W <= UB - 1`` and the LP's binding cuts with all their
    images: infeasible means the incumbent is optimal; a solution improves it.
    """
    V = t.n_vertices
    cuts = cut_images(lp.binding_cuts(), perms, V) if lp.duals is not None else []
    while True:
        ub = best.weight
        if best.bound >= ub or _left(deadline) <= 0.5:
            return
        arcs = lp.arcs_below(ub - 1 - lpres.bound + _EPS, max_arcs=MAX_MIP_ARCS, deadline=deadline)
        if arcs is None:
            say("reduced-cost fixing: too many arcs survive for the MIP (or no time to price them); skipping it")
            return
        tail, head, layer = arcs
        say(f"reduced-cost fixing against W = {ub} keeps {tail.size} arcs")
        # building the model and handing it to the solver costs about 80 us per arc (59k arcs and
        # 600 cuts: 0.4 s + 4.2 s for CP-SAT) and twice that on a busy machine: skip it when that
        # is most of the time left
        if _left(deadline) < 3e-4 * tail.size * (1 + len(cuts) / 1000) + 1.0:
            say("no time left to build the MIP")
            return
        data = ModelData(D, k, tail, head, layer)
        model, z, _y = build_hop_model(data, cuts)
        model.add_row(*model.objective_terms(), -np.inf, ub - 1, "objective_cutoff")
        # the solvers stop a little after their limit (CP-SAT: 0.7 s on 60k arcs): keep a margin
        remaining = _left(deadline) - min(1.5, 0.02 * _left(deadline) + 1e-5 * tail.size)
        if tail.size > EASY_MIP_ARCS:
            # a big MIP rarely finds or proves anything (16x16, k = 3, 59k arcs: nothing in 50 s);
            # leave half of the time to the local search that follows
            remaining *= 0.5
        if remaining <= 0.2:
            return
        t_end = time.monotonic() + remaining
        improved = False
        for engine, share in mip_engines(solver, remaining, tail.size):
            seconds = t_end - time.monotonic() if share is None else share
            if seconds <= 0.2:
                break
            name = ENGINE_NAMES[engine]
            try:
                sol = _solve_mip(model, engine, z, D, k, seconds, seed=seed, threads=threads, say=say, ub=ub,
                                 deadline=deadline)
            except KeyboardInterrupt as exc:    # keep the MIP's incumbent, then let the interrupt through
                part = getattr(exc, "partial", None)
                if part is not None and part.values is not None:
                    parent = decode_parent(z, part.values, V)
                    best.offer_tree(parent, tree_weight(t, parent), name, say)
                raise
            if sol.values is not None:
                parent = decode_parent(z, sol.values, V)
                improved = best.offer_tree(parent, tree_weight(t, parent), name, say)
            if sol.status == "infeasible":
                best.offer_bound(ub, f"{method}; reduced-cost fixing + {name}: no tree lighter than {ub}", say)
            elif sol.status == "optimal" and sol.objective is not None:
                best.offer_bound(round(sol.objective), f"{method}; reduced-cost fixing + {name} optimal", say)
            elif np.isfinite(sol.bound) and not improved:
                # the restricted model holds every tree of weight <= ub - 1, so min(its bound, ub) is valid
                best.offer_bound(math.ceil(min(sol.bound, ub) - _EPS),
                             f"{method}; reduced-cost fixing + {name} bound", say)
            if sol.interrupted:
                raise KeyboardInterrupt
            if improved or best.bound >= ub:
                break
        if not improved:
            return


def _solve_mip(model, engine, z, D, k, seconds, *, seed, threads, say, ub, deadline):
    """One solve of the fixed model by ``engine``, stopped at the first tree lighter than ``ub``."""
    if engine == "scip":
        return model.solve_scip(time_limit=seconds, seed=seed, progress=say, stop_below=ub - 1,
                                separate=layered_separator(D, k, z, deadline))
    if engine == "cpsat":
        return model.solve_cpsat(time_limit=seconds, threads=threads, seed=seed, progress=say, stop_below=ub - 1)
    return model.solve_highs(time_limit=seconds, threads=threads, seed=seed, progress=say, stop_below=ub - 1)


def _steiner_bound(t, k, best, D, deadline, say):
    """The excess Steiner bound (:mod:`models.khop.steiner`) in at most a fifth of the time left (60 s at most).

    It beats the LP when few vertices lie beyond depth ``k`` (16x16: k = 9, 10, 12 gain 1,
    k = 11 gains 2); a tree it closes on is optimal.  Its terminals become the certificate's
    dual when it proves more than the LP's duals.
    """
    if not (D[0] > k).any() or not isinstance(t, Torus):   # its tables are separable over a plain torus's sides
        return
    res = terminal_search(t, k, D=D, deadline=time.monotonic() + min(60.0, 0.2 * _left(deadline)),
                          beat=math.ceil(best.bound - _EPS), progress=say)
    if res.parent is not None:
        best.offer_tree(res.parent, tree_weight(t, res.parent), "steiner bound's jumps", say)
    method = f"excess Steiner bound, {len(res.terminals)} terminals (re-derived by synth check)"
    best.offer_bound(res.bound, method, say)
    if res.bound > _dual_bound(best):
        best.dual = res.dual


def _jump(t, D, k, best, say, **kw):
    """The jump search, its tree offered to ``best``; on Ctrl-C or SIGTERM its best tree so far, then the interrupt."""
    try:
        res = jump_search(D, k, progress=say, **kw)
    except KeyboardInterrupt as exc:
        partial = getattr(exc, "partial", None)
        if partial is not None:
            parent = labels_to_parent(D, partial.labels)
            best.offer_tree(parent, tree_weight(t, parent), "jump search (interrupted)", say)
        raise
    parent = labels_to_parent(D, res.labels)
    best.offer_tree(parent, tree_weight(t, parent), "jump search", say)


def lp_affordable(V, seconds):
    """Whether the orbit LP is likely to reach a useful bound within half of ``seconds``.

    Measured (one thread): the first solve takes about 2.5 s on 1024 vertices and 46 s
    on 4096 (the interior point method), growing like ``V^2.2``, and the LP needs about
    eight such solves before its cone cuts count.  On 64x64 (k = 10) with 600 s, the
    LP's 300 s lifted the bound from 4095 to 4096 only, time the LNS lacked.
    """
    return 2.5 * (V / 1024) ** 2.2 * 16 <= seconds


@dataclass(frozen=True)
class PipelineOptions:
    """The options of :func:`run_pipeline`: solver ``seed``, ``solver`` (the MIP engines, or ``"heuristic"``),
    ``threads``, a ``start`` parent array and whether to ``bound`` (the LP, fixing and MIP)."""

    seed: int = 0
    solver: str = "auto"
    threads: int = 1
    start: np.ndarray | None = None
    bound: bool = True


def run_pipeline(t, k, best, *, deadline, say=lambda _m: None, **options):
    """Heuristic, LP bound, local search and LNS, then reduced-cost fixing and the MIP (see :mod:`models.khop`).

    Every phase checks ``deadline`` (a ``time.monotonic()`` value) and solver calls get
    only the time left.  ``options`` are those of :class:`PipelineOptions`: ``start``, a parent
    array of a tree of depth ``<= k`` (already validated), offered as the first incumbent and used
    as a start of the local search; ``bound=False`` skips the LP, fixing and MIP: all the time
    goes to the tree.

    Phases: (1) the jump search (:mod:`models.khop.search.jump`) from ``start`` or from the
    root alone, ``jump_rounds(V)`` perturbations (deterministic; the deadline is a
    safety net), then on small tori the label search's construction and descent from
    its tree; (2) the LP bound; (3) when reduced-cost fixing against the incumbent
    leaves more than ``EASY_MIP_ARCS`` arcs, a long improvement phase (at most half the
    time left): a lighter incumbent fixes more arcs; (4) fixing + MIP; (5) the
    improvement phase until the deadline if nothing is proven.
    """
    opts = PipelineOptions(**options)
    t_start = time.monotonic()
    if opts.start is not None:
        best.offer_tree(opts.start, tree_weight(t, opts.start), "start", say)
    run = _Pipeline(t, k, best, deadline, say, opts)
    if _left(deadline) <= 0:
        return
    run.first_trees(t_start, max(deadline - t_start, 0.1))
    if not opts.bound or _left(deadline) <= 0.5 or opts.solver == "heuristic" and not lp_affordable(
            t.n_vertices, _left(deadline)):
        run.improve(opts.seed + 1, run.h_deadline, 100_000)
        return
    # 2. LP bound: cone and flow cuts, column generation, on the orbits of the root's stabilizer
    if not lp_affordable(t.n_vertices, _left(deadline)):
        say(f"the LP on {t.n_vertices} vertices would not finish in the time left; local search and LNS instead")
        run.improve(opts.seed + 1, run.h_deadline, 100_000)
        return
    run.bound_and_mip()


class _Pipeline:
    """The state :func:`run_pipeline`'s phases share: the torus, its distances and shifts, the incumbent."""

    def __init__(self, t, k, best, deadline, say, opts):
        self.t, self.k, self.best, self.deadline, self.say, self.opts = t, k, best, deadline, say, opts
        V = t.n_vertices
        self.D = distance_matrix(t)
        self.shifts = translations(t, 2)
        # a local-search pass costs about 1e-8 V^2 k seconds: stop the searches that much early
        self.h_deadline = deadline - min(2.0, 1e-8 * V * V * k)
        self.jumps = False

    def search(self, seed_, until, iterations, n_orders=0, bfs=False, shift=True):
        best = self.best
        if until - time.monotonic() <= 0.05 and best.parent is not None:
            return
        res = heuristic_tree(self.D, self.k, seed=seed_, time_limit=max(until - time.monotonic(), 0.0),
                             start=best.parent, n_orders=n_orders, bfs=bfs, iterations=iterations,
                             shifts=self.shifts if shift else None, progress=self.say)
        best.offer_tree(res.parent, res.weight, "heuristic", self.say)

    def first_trees(self, t_start, budget):
        """Phase 1: the jump search, a fixed number of rounds (deterministic; the deadline is a safety net),
        then on small tori the label search's construction and descent from its tree (random perturbations
        only: the shifted ones move more than its few rounds can repair; 32x32, k = 12, one run each: 1155
        with them, 1142 without)."""
        t, D, opts = self.t, self.D, self.opts
        V = t.n_vertices
        self.jumps = unit_metric(D)
        if self.jumps:
            start = None if opts.start is None else parent_to_labels(opts.start)
            _jump(t, D, self.k, self.best, self.say, labels=start, seed=opts.seed, iterations=jump_rounds(V),
                  deadline=min(t_start + 0.5 * budget, self.h_deadline))
        if V < LNS_FIRST or not self.jumps:
            self.search(opts.seed, min(t_start + 0.25 * budget, self.h_deadline), None, n_orders=2, bfs=True,
                        shift=False)

    def arms(self, iterations) -> dict:
        """The improvement phase's arms (:meth:`improve`), in their first order."""
        t, D, k, best, say = self.t, self.D, self.k, self.best, self.say

        def jump(seed__, stop):
            _jump(t, D, k, best, say, labels=parent_to_labels(best.parent), seed=seed__, deadline=stop)

        def window(seed__, stop):
            res = window_search(D, k, np.minimum(parent_to_labels(best.parent), k), seed=seed__, deadline=stop,
                                shifts=self.shifts, progress=say)
            parent = labels_to_parent(D, res.labels)
            best.offer_tree(parent, tree_weight(t, parent), "window search", say)

        def local(seed__, stop):
            self.search(seed__, stop, iterations)

        def lns(seed__, stop):
            res = lns_search(D, k, best.parent, seed=seed__, deadline=stop, progress=say)
            best.offer_tree(res.parent, res.weight, "lns", say)

        def kick(seed__, stop):
            res = kick_search(D, k, best.parent, self.shifts, seed=seed__, deadline=stop, progress=say)
            best.offer_tree(res.parent, res.weight, "kick", say)

        arms = {"jump": jump} if self.jumps else {}
        arms["label"] = window if t.n_vertices >= LNS_FIRST else local
        if self.opts.solver != "heuristic":
            arms.update(lns=lns, kick=kick)
        return arms

    def improve(self, seed_, until, iterations):
        """Share ``[now, until]`` between the jump search, a label search, the window LNS and kicks.

        Each arm gets a first slice, in that order, then each slice (a quarter of the
        time left, at least ``MIN_SLICE``) goes to the best recent gain per second.  The jump
        search (:mod:`models.khop.search.jump`) moves a jump with its whole territory; the label
        searches re-label single vertices: the whole-torus iterated local search below
        ``LNS_FIRST`` vertices, the windowed one (:mod:`models.khop.search.window`) above;
        the window LNS re-solves 20-60 nearby vertices exactly with CP-SAT
        (:mod:`models.khop.search.lns`); kicks shift a ball of the depth pattern and repair it
        (:func:`models.khop.search.lns.kick_search`).  With ``solver="heuristic"`` (no CP-SAT)
        the jump and label searches only.  ``iterations`` caps the whole-torus search's
        perturbations per slice.
        """
        best = self.best
        arms = self.arms(iterations)
        order = list(arms)
        rate = {}
        turn = 0
        while until - time.monotonic() > 0.05:
            turn += 1
            if len(rate) < len(order):
                kind = order[len(rate)]
            else:
                kind = max(order, key=lambda m: rate[m])      # ties: the first in order
            t0, w0 = time.monotonic(), best.weight
            arms[kind](seed_ + turn, min(until, t0 + max(MIN_SLICE, 0.25 * (until - t0))))
            gain = (w0 - best.weight) / max(time.monotonic() - t0, 1e-3)
            rate[kind] = gain if kind not in rate else 0.5 * (rate[kind] + gain)

    def bound_and_mip(self):
        """Phases 2-5: the LP bound, the Steiner bound, a long improvement phase before a big MIP, fixing + MIP,
        and more local search while nothing is proven."""
        t, k, best, deadline, say, opts = self.t, self.k, self.best, self.deadline, self.say, self.opts
        perms = root_stabilizer(t)
        lp = LayeredLP(self.D, k, perms)
        lp_deadline = time.monotonic() + 0.5 * max(_left(deadline), 0)
        lpres = lp.solve(deadline=lp_deadline, progress=say, target=best.weight - 1 + _EPS, stall_rounds=15)
        state = "converged" if lpres.converged else "stopped early"
        method = (f"layered-graph LP on root-stabilizer orbits, {lpres.n_cuts} cone/flow cuts, "
                  f"{lpres.n_columns} column orbits, all arcs priced ({state})")
        usable = np.isfinite(lpres.bound) and lp.duals is not None
        if np.isfinite(lpres.bound):
            best.offer_bound(math.ceil(lpres.bound - _EPS), method, say)
            # the duals behind the bound, for the certificate (synth check re-derives it), unless the
            # cone-counting dual already proves more (an LP stopped early on a big torus)
            if usable and math.ceil(lpres.bound - _EPS) >= _dual_bound(best):
                best.dual = export_dual(lp, lpres.bound)
        if best.bound < best.weight:
            _steiner_bound(t, k, best, self.D, deadline, say)
        if best.bound >= best.weight:
            return
        if opts.solver != "heuristic" and usable:
            # 3. a long improvement phase first when the MIP would be big
            easy = lp.arcs_below(best.weight - 1 - lpres.bound + _EPS, max_arcs=EASY_MIP_ARCS, deadline=deadline)
            if easy is None:
                self.improve(opts.seed + 2, min(time.monotonic() + 0.5 * _left(self.h_deadline), self.h_deadline),
                             ILS_ROUNDS)
            # 4. fixing + MIP, restarted on every improvement
            _mip_loop(t, k, best, lp, lpres, method, perms, self.D, deadline=deadline, seed=opts.seed,
                      solver=opts.solver, threads=opts.threads, say=say)
        # 5. time left and no proof: more local search and LNS from the incumbent
        if best.bound < best.weight:
            self.improve(opts.seed + 1, self.h_deadline, 100_000)
