"""Timed trees by column generation: schedules beyond the layered class.

A *timed tree* of owner ``r`` over ``R`` reduce rounds (:mod:`synth.models.packing.tree_pricing`) gives every
other vertex ``v`` a send round ``L_v`` and a parent ``u`` with ``L_v < L_u`` (``L_r = R + 1``): ``v``
sends its partial sum to ``u`` in round ``L_v`` and ``u`` sends the result back in round
``2R + 1 - L_v``, valid because ``L_v < L_u`` puts ``v``'s copy after ``u``'s.  Trees need not be
shortest-path trees and rounds are free, so this class holds the layered one (``R = H``).  A tree may
also take a window of the ``2R`` rounds (:func:`timed_windows`: fewer reduce rounds, early or late), so the
phases of different trees overlap.

The master LP: one column per timed tree of an owner that represents its orbit under the group
(lifted by every element, as :mod:`synth.models.packing.layered`), weight ``x >= 0``; ``M_s`` per
round; minimize ``sum_s M_s`` with every lifted link's load in round ``s`` at most ``M_s`` and
``G * sum x = 1`` (free shares).  It starts from each owner's heaviest layered trees (decomposed by the
rounding of :mod:`synth.models.packing.rounding`, shifted to every start round when ``R > H``:
:func:`start_columns`), and the
heuristic pricing adds, for each owner, the cheapest tree it finds under the load rows' duals while
its reduced cost is negative.  The pricing is not exact: when it finds nothing the LP is the best
over the trees found, not over the class (``status`` says so).  :mod:`synth.models.packing.timed_schedule`
makes the weights integer and returns the schedule for the solve stage to certify.

Examples
--------
>>> from synth.symmetry.spec import default_group
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.topology.torus import parse_torus
>>> d = damage(parse_torus("4x4"), parse_failures(parse_torus("4x4"), links=["0-1"]))
>>> sol = solve_timed(d, default_group(d), R=5, time_limit=20)     # reduce rounds: H + 1
>>> sol.fraction > sol.layered.fraction + 0.01, sol.R
(True, 5)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from synth.models.packing.arcs import volume_bound
from synth.models.packing.hierarchy import hierarchical_columns
from synth.models.packing.layered import LayeredArcs, LayeredSolution, layered_arcs, solve_layered
from synth.models.packing.master import MasterLP
from synth.models.packing.rounding import round_schedule
from synth.models.packing.routed import RoutedArcs, needs_routes, round_routed, routed_arcs, solve_routed
from synth.models.packing.tree_pricing import exact_price, price, start_labels
from synth.models.packing.tree_space import TreeSpace, arc_prices, tree_routes
from synth.schedule.data import REDUCE

__all__ = ["TimedSolution", "TimedOptions", "solve_timed", "layered_columns", "start_columns", "timed_windows",
           "sweeps_by_default", "MODEL", "START_COLUMNS", "START_UNITS", "SWEEP_WORK"]

MODEL = "synth.models.packing.timed"


@dataclass(frozen=True, eq=False)
class TimedSolution:
    """The master LP's value and its columns: owner index, labels and parent links of every tree, weights."""

    space: TreeSpace
    roots: np.ndarray
    group: object
    status: str
    objective: float
    volume_bound: float
    root: np.ndarray         # per column: index into roots
    labels: np.ndarray       # (columns, V)
    plink: np.ndarray        # (columns, V): arc ids (TreeSpace), -1 at the root and dead vertices
    routes: np.ndarray       # (columns, 2, V): the route of each arc up (reduce) and of its reverse down (copy)
    x: np.ndarray            # per column weight (G * sum = 1)
    window: np.ndarray       # (columns, 2): each tree's reduce rounds R_j and offset o (:func:`timed_windows`)
    mirror: bool             # each column is its tree and the tree in the mirrored window, half each
    iterations: int
    seconds: float
    layered: LayeredSolution

    R = property(lambda self: self.space.R, doc="Reduce rounds (the schedule has ``2R``, empty ones dropped).")
    fraction = property(lambda self: self.volume_bound / self.objective,
                        doc="Volume bound / LP value: the share of the bound that the columns found reach.")


def layered_columns(space, sol, R: int, units: int = 1024):
    """The trees of a layered or routed LP's rounded solution ``sol`` as timed trees of ``space``, shifted to
    every start round ``0..R - H`` earlier (rows ``(k, L, plink, routes)``) and their weights (``G * sum = 1``
    per shift).  A tree over a route that ``space`` does not keep (a pair with more than ``MAX_ROUTES``
    routes, whose reverses need not be among those kept) is left out."""
    data = sol.data
    base = round_schedule(sol, units) if isinstance(data, LayeredArcs) else round_routed(sol, units)
    H, V = base.n_rounds // 2, space.live.size
    index = {tuple(row[row >= 0].tolist()): q for q, row in enumerate(space.route_links)}
    ptr = base.route_ptr
    q = np.array([index.get(tuple(base.route_links[a:b].tolist()), -1) for a, b in zip(ptr[:-1], ptr[1:])],
                 dtype=np.int64)
    red = base.op == REDUCE
    child = np.where(red, base.src, base.dst)
    arc = space.hop.link_ids(child, np.where(red, base.dst, base.src)).astype(np.int64)
    G = 1 if data.group is None else data.group.order
    out = []
    for c in range(base.n_components):
        sel = base.component == c
        if np.any(q[sel] < 0):
            continue
        up, down = sel & red, sel & ~red
        k = int(np.searchsorted(data.roots, np.setdiff1d(base.dst[up], base.src[up])[0]))
        L0 = np.zeros(V, dtype=np.int64)
        L0[child[up]] = base.round[up] + (R - H)
        pl = np.full(V, -1, dtype=np.int64)
        pl[child[up]] = arc[up]
        routes = np.full((2, V), -1, dtype=np.int64)
        routes[0, child[up]] = q[up]
        routes[1, child[down]] = q[down]
        x = base.weights[c] / (G * base.weights.sum())
        for shift in range(R - H + 1):
            L = np.where(pl >= 0, L0 - shift, 0)
            L[data.roots[k]] = R + 1
            out.append((k, L, pl, routes, x, shift))
    return out


#: wall seconds the last master solve, the crossover to a vertex, may take at least (and this share of the
#: time limit): on the 16x16 torus with a failed link after 900 CPU s of column generation it ran for more
#: than 8 minutes; past it the last interior solution is rounded instead
VERTEX_SECONDS = 30.0
VERTEX_SHARE = 0.1
#: no master solve starts with fewer CPU seconds left than this share of the last one's (a damaged MI250 master's
#: 13-s solve, started a second before its limit, ended 13 s past it)
NEXT_SOLVE_SHARE = 0.5
#: the layered LP's trees that start the master: per owner its heaviest this many (tree, shift) columns of
#: the layered solution rounded to :data:`START_UNITS` units per owner.  On the 8x8 torus with one failed
#: link and 60 CPU s the master reaches 98.1 % of the volume bound from these 195 columns against 96.2 %
#: from all 980 of the rounding to 1,024 units: a smaller master solves faster, and the pricing adds the
#: trees the LP needs
START_COLUMNS = 10
START_UNITS = 64


def start_columns(space, sol, R: int):
    """The columns ``(k, L, plink, routes)`` that start the master: every owner's :data:`START_COLUMNS`
    heaviest of :func:`layered_columns` at :data:`START_UNITS` units (an owner left without any is priced
    from the starting labels by :func:`solve_timed`)."""
    rows = layered_columns(space, sol, R, units=START_UNITS)
    order = sorted(range(len(rows)), key=lambda i: (rows[i][0], -rows[i][4], i))
    kept, per = [], {}
    for i in order:
        k = rows[i][0]
        if per.get(k, 0) < START_COLUMNS:
            per[k] = per.get(k, 0) + 1
            kept.append(rows[i][:4])
    return kept


@dataclass(frozen=True)
class TimedOptions:
    """How :func:`solve_timed` generates columns.

    ``max_iterations``: LP solves at most.  ``overlap``: trees in the windows of :func:`timed_windows` where every
    arc is one link (False, and on networks with switches: every tree in all ``2R`` rounds, reduce then copy).
    ``exact``: price by enumerating every labelling
    (:func:`~synth.models.packing.tree_pricing.exact_price`, tiny graphs only); the value is then the LP
    optimum over the whole class.  ``smooth``: weights of the best duals so far in further pricing
    points (Wentges smoothing; empty: the current duals only).  ``purge``: columns with weight 0 in that
    many solves in a row (and out of the basis, under the simplex) leave the LP (0: never).  ``kicks``:
    when the pricing finds nothing, that many restarts from labellings priced under randomly perturbed
    prices (seeded by the iteration: deterministic).  ``method``: how :class:`MasterLP` solves the master
    (default ``"ipm"``, ``"simplex"`` with ``exact``).  ``warm``: the pricing starts from each owner's that many
    heaviest columns; ``starts``: and in the first that many iterations also from the fixed starting
    labellings (:func:`~synth.models.packing.tree_pricing.start_labels`; None: in every iteration).
    ``hierarchy``: the master also starts from every owner's hierarchical trees
    (:func:`~synth.models.packing.hierarchy.hierarchical_columns`: fabrics of servers whose links differ).
    ``sweep``: the pricing's single-label moves (:func:`~synth.models.packing.tree_pricing.sweep`); without them
    it alternates parents and the tree DP only; None: unless the master started from hierarchical trees and a
    vertex's arcs (on average) times ``R`` pass :data:`SWEEP_WORK` (from the routed LP's stars only the sweep's
    moves get away: two MI250 nodes, 5 CPU s, 30 % of the volume bound without it against 78 %).
    ``crossover``: after the column generation, solve once more to a vertex (fewer trees to round; under
    ``"ipm"``); without it the last interior solution's weights are rounded.
    """

    max_iterations: int = 400
    overlap: bool = True
    exact: bool = False
    smooth: tuple = (0.5,)
    purge: int = 4
    kicks: int = 3
    method: str | None = None
    warm: int = 1
    starts: int | None = None
    hierarchy: bool = False
    sweep: bool | None = None
    crossover: bool = True


def solve_timed(t, group=None, R=None, time_limit: float = 60.0, layered: LayeredSolution | None = None,
                progress=lambda _m: None, options: TimedOptions = TimedOptions(), columns=()) -> TimedSolution:
    """Column generation over timed trees with ``R`` reduce rounds (default ``H``); module docstring.

    Stops when the pricing finds no improving tree, after ``options.max_iterations`` LP solves, after 25
    solves without a gain of 1e-6 (relative), or when this process has used ``time_limit`` CPU seconds
    since the call (CPU, not wall time: machines shared by many jobs stretch the wall clock).
    ``options``: :class:`TimedOptions`; ``columns``: more trees ``(k, L, plink, routes, window)`` the master starts
    with (:func:`synth.models.packing.healthy_start.healthy_start`'s).
    """
    t0, cpu0 = time.monotonic(), time.process_time()
    if layered is None:
        layered = solve_routed(routed_arcs(t, group)) if needs_routes(t) else solve_layered(layered_arcs(t, group))
    data = layered.data
    H = data.H_up if isinstance(data, RoutedArcs) else data.H
    R = H if R is None else int(R)
    if R < H:
        raise ValueError(f"R = {R} is below the layered depth {H}")
    G = 1 if group is None else group.order
    space = TreeSpace.build(t, group, R, getattr(data, "leaves", None))
    lp = MasterLP(space, G, options.method or ("simplex" if options.exact else "ipm"))
    windows = timed_windows(H, R, lp.mirror) if options.overlap and needs_routes(t) is None else ((R, 0),)
    for k, L, pl, routes in start_columns(space, layered, R):
        lp.add(k, L, pl, routes)
    more = hierarchical_columns(space, data.roots) if options.hierarchy else []
    for k, L, pl, routes, window in (*columns, *more):
        lp.add(k, L, pl, routes, window)
    if not set(range(data.n_roots)) <= set(lp.root):     # trees left out: every owner starts from a priced tree
        C, up, down = arc_prices(space, np.ones((2 * R, t.n_links)))
        owner, L, plink, cost = _price_rows(space, C, data.roots, start_labels(space, data.roots)[:data.n_roots],
                                            start_labels(space, data.roots))
        routes = tree_routes(up, down, L, plink)
        # a start that leaves a vertex no parent but a leaf prices inf: no tree of the class (24x24 with a failed
        # chip: the owners beside it, whose layered shares were 0, got trees through its copies)
        for i in np.flatnonzero(np.isfinite(cost)).tolist():
            lp.add(owner[i], L[i], plink[i], routes[i])
    pricer = _Pricer(space, data.roots, G, options, windows, bool(more))
    vol = volume_bound(t)
    status, obj, x, it = _generate(lp, pricer, (cpu0, time_limit), progress, vol)
    return TimedSolution(space, data.roots, group, status, obj, vol, np.asarray(lp.root), np.array(lp.labels),
                         np.array(lp.plink), np.array(lp.routes), x, np.array(lp.window, dtype=np.int64).reshape(-1, 2),
                         lp.mirror, it, time.monotonic() - t0, layered)


def timed_windows(H: int, R: int, mirror: bool) -> tuple:
    """The windows ``(R_j, o)`` trees take in the ``2R`` rounds: ``R_j`` reduce rounds in rounds
    ``o + 1 .. o + R_j`` and their copies in ``o + R_j + 1 .. o + 2 R_j``, for ``R_j`` in ``H``, the middle and
    ``R``, early (``o = 0``) and late (``o = 2 (R - R_j)``).  A tree of a short window reduces and copies while
    trees of other windows still reduce, so the vertices' sends and receives need not all fall in two
    phases (the phase bound of :mod:`synth.models.packing.phase_bound` binds trees of the one window
    ``(R, 0)`` only).  Windows with the same centre ``o + R_j`` hold the same trees (the smaller one's with
    labels shifted), so there is one per centre: the largest.  ``mirror``: the early ones (the master pairs
    each with its mirror image, the late one).

    >>> timed_windows(8, 12, False)
    ((8, 0), (8, 8), (10, 0), (10, 4), (12, 0))
    >>> timed_windows(8, 12, True), timed_windows(8, 8, True)
    (((8, 0), (10, 0), (12, 0)), ((8, 0),))
    """
    out = []
    for Rj in sorted({H, (H + R) // 2, R}):
        out += [(Rj, o) for o in sorted({0, 2 * (R - Rj)}) if not mirror or o == 0]
    return tuple(out)


def _generate(lp, pricer, budget, progress, vol):
    """The column generation loop of :func:`solve_timed`: ``(status, objective, weights, iterations)``;
    ``budget`` is ``(process time at the start, CPU seconds)``."""
    options, (cpu0, time_limit) = pricer.options, budget
    status, best, stall, it, vertex = "", np.inf, 0, 0, False
    seconds = max(VERTEX_SECONDS, VERTEX_SHARE * time_limit)       # a crossover's wall seconds at most
    while True:
        # a master solve after the first ends past the time limit (wall seconds: the CPU seconds left and a
        # crossover's allowance), so one that stalls (on 16x16 IPX once took minutes) cannot hold the solve
        left = max(time_limit - (time.process_time() - cpu0), 0.0) + seconds
        solve_cpu = time.process_time()
        done = lp.solve(vertex, seconds if vertex else left if it else None)
        solve_cpu = time.process_time() - solve_cpu
        if done is None:            # the last solution's weights stand, the columns added since at 0
            why = (f"the heuristic pricing found no improving tree at the interior duals, and the crossover to a "
                   f"vertex passed {seconds:g} s" if vertex else
                   f"a master solve reached the time limit ({time_limit:g} CPU s)")
            return (f"column generation stopped: {why}, so the last interior solution's weights are rounded",
                    obj, np.r_[x, np.zeros(lp.n_columns - x.size)], it)
        obj, x, pi, mu = done
        it += 1
        if obj < best * (1 - 1e-6):
            best, stall = obj, 0
        else:
            stall += 1
        if it > options.max_iterations or stall >= 25:
            status = f"column generation stopped: no gain in {stall} iterations" if stall >= 25 else \
                f"column generation stopped after {options.max_iterations} iterations"
            break
        spent = time.process_time() - cpu0
        if spent + NEXT_SOLVE_SHARE * solve_cpu > time_limit:
            status = (f"column generation stopped at the time limit ({time_limit:g} CPU s" +
                      (")" if spent > time_limit else f"; the next master solve, about {solve_cpu:.1f} s, would end "
                                                       "past it)"))
            break
        if options.purge:
            x = x[lp.purge(options.purge)]
        added = pricer.add_columns(lp, x, pi, mu, obj, it)
        progress(f"timed LP, R = {lp.space.R}, iteration {it}: {100 * vol / obj:.2f} % of the volume bound, "
                 f"{lp.n_columns} columns, {added} added")
        if not added and lp.method == "ipm" and not vertex:
            vertex = True        # nothing at the interior duals: price once more at a vertex's
            continue
        if not added:
            status = ("optimal: exact pricing found no improving tree" if options.exact else
                      "column generation stopped: the heuristic pricing found no improving tree")
            break
        vertex = False
    if not vertex and not options.crossover:
        status += "; no crossover to a vertex asked for, so the last interior solution's weights are rounded"
    elif not vertex:                # the weights of a vertex: fewer trees to round
        done = lp.solve(vertex=True, seconds=seconds)
        if done is None:
            status += (f"; the crossover to a vertex passed {seconds:g} s, so the last interior solution's "
                       "weights are rounded")
        else:
            obj, x = done[:2]
    return status, obj, x, it


#: the sweep's work per vertex (its arcs, on average, times ``R``) above which the pricing goes without it: a
#: sweep's moves weigh a vertex's every label against every neighbour, and where a GCD reaches 127 others
#: through the switch the pricing took 85 % of the CPU (eight MI250 nodes, R = 32).  Without it, 60 CPU s: eight
#: nodes 68.66 % of the volume bound against 66.63 % (185 iterations against 88), with a failed NIC (R = 16)
#: 62.53 against 60.81 %; four nodes (63 arcs) at R = 32 79.21 against 78.59 %, but with a failed NIC (R = 16)
#: 71.49 against 72.25 %; and the eight H100 servers with a failed NIC (14 arcs, R = 32) stall without it at
#: 71.56 against 80.4 %
SWEEP_WORK = 1500


def sweeps_by_default(space: TreeSpace, hierarchical: bool) -> bool:
    """Whether the pricing sweeps (``TimedOptions.sweep`` None): unless the master started from hierarchical trees
    (``hierarchical``) and a vertex's arcs, on average, times ``space.R`` pass :data:`SWEEP_WORK`."""
    arcs = (space.nbr[space.live] >= 0).sum() / max(int(space.live.sum()), 1)
    return not (hierarchical and arcs * space.R > SWEEP_WORK)


class _Pricer:
    """The pricing of :func:`solve_timed`: exact, or heuristic from warm and fixed starts with smoothing and
    kicks (:class:`TimedOptions`), in every window (:func:`timed_windows`); keeps the best duals seen (the
    smoothing's centre)."""

    def __init__(self, space, roots, G, options, windows=None, hierarchical=False):
        self.space, self.roots, self.G, self.options = space, roots, G, options
        self.windows = ((space.R, 0),) if windows is None else tuple(windows)
        self.spaces = {Rj: space if Rj == space.R else replace(space, R=Rj) for Rj, _o in self.windows}
        self.starts = {Rj: start_labels(sp, roots) for Rj, sp in self.spaces.items()}
        self.center, self.center_value = None, -np.inf
        self.sweeps = sweeps_by_default(space, hierarchical) if options.sweep is None else options.sweep

    def _window(self, lp, x, w, points, it):
        """Price window ``w`` at every point of ``points`` (duals; the first the current ones) in iteration ``it``:
        the rows ``(owner, L, plink, routes)``, their costs at the current duals, and each point's least tree
        cost.  A window other than ``(R, 0)`` is priced at the current duals from the heaviest columns' labels
        only (an eighth of the work: on 16x16 the pricing, not the master, takes most of an iteration's
        time); the main window from each owner's ``options.warm`` heaviest columns and, in the first
        ``options.starts`` iterations, the fixed starts."""
        (Rj, o), space, roots = w, self.spaces[w[0]], self.roots
        main = w == (self.space.R, 0)
        C, up, down = arc_prices(space, points[0][o:o + 2 * Rj])
        if self.options.exact:
            owner = np.arange(roots.size)
            L, plink, cost = (np.array(z) for z in zip(*[exact_price(space, C, int(r)) for r in roots.tolist()]))
            return (owner, L, plink, tree_routes(up, down, L, plink)), cost, [cost.min()]
        warm = _warm_labels(lp, x, roots.size, self.starts[Rj], w, self.options.warm if main else 1)
        fixed = main and (self.options.starts is None or it <= self.options.starts)
        starts = np.concatenate([warm[roots.size:], self.starts[Rj][:self.starts[Rj].shape[0] * fixed]])
        warm = warm[:roots.size]
        found = [_price_rows(space, arc_prices(space, q[o:o + 2 * Rj])[0] if i else C, roots, warm, starts,
                             self.sweeps) for i, q in enumerate(points if main else points[:1])]
        owner, L, plink = (np.concatenate([f[i] for f in found]) for i in range(3))
        least = [f[3].min() for f in found] + [np.inf] * (len(points) - len(found))
        return (owner, L, plink, tree_routes(up, down, L, plink)), _tree_costs(C, L, plink), least

    def add_columns(self, lp, x, pi, mu, obj, it) -> int:
        """Price at the duals ``pi`` (and ``mu``, the convexity row's) and add the improving trees: how many."""
        space, roots, G, options = self.space, self.roots, self.G, self.options
        # the current duals and points between them and the best duals so far (Wentges smoothing): the trees
        # found at every point that improve at the current duals become columns
        points = [pi] + ([] if self.center is None or options.exact else
                         [a * self.center + (1 - a) * pi for a in options.smooth])
        rows, costs, windows, least = [], [], [], np.full(len(points), np.inf)
        for w in self.windows:
            found, cost, mins = self._window(lp, x, w, points, it)
            rows.append(found)
            costs.append(cost)
            windows.append(np.tile(w, (cost.size, 1)))
            least = np.minimum(least, mins)
        for q, value in zip(points, least):
            if value / G > self.center_value:
                self.center_value, self.center = value / G, q
        rows = tuple(np.concatenate([r[i] for r in rows]) for i in range(4))
        warm = _warm_labels(lp, x, roots.size, self.starts[space.R], (space.R, 0))     # before columns are added
        added = _add_improving(lp, rows, np.concatenate(costs) - G * mu, obj, np.concatenate(windows))
        kicks = 0 if options.exact or added else options.kicks
        C, up, down = arc_prices(space, pi) if kicks else (None, None, None)
        rng = np.random.default_rng(it)
        for _ in range(kicks):
            # nothing found: start again from labellings that are good for randomly perturbed prices
            noisy = C * rng.lognormal(0.0, 0.5, C.shape)
            kicked = _price_rows(space, noisy, roots, warm, self.starts[space.R], self.sweeps)[1]
            owner, L, plink, cost = _price_rows(space, C, roots, kicked[:roots.size], kicked[roots.size:],
                                                self.sweeps)
            added = _add_improving(lp, (owner, L, plink, tree_routes(up, down, L, plink)), cost - G * mu, obj)
            if added:
                break
        return added


#: trees an owner gets at most per pricing, the cheapest (one window, two pricing points and four labellings
#: from each give eight)
PER_OWNER = 8


def _add_improving(lp, rows, red, obj, windows=None) -> int:
    """Add the trees ``rows`` (``owner, L, plink, routes``; ``windows``: each one's, None: ``(R, 0)``) of
    negative reduced cost ``red`` (below ``lp.tolerance`` of ``obj``) to ``lp``, best first and at most
    :data:`PER_OWNER` per owner; how many were new."""
    owner, L, plink, routes = rows
    added, per = 0, {}
    for i in np.argsort(red, kind="stable").tolist():
        if red[i] >= -lp.tolerance * max(obj, 1e-12):
            break
        k = int(owner[i])
        if per.get(k, 0) >= PER_OWNER:
            continue
        new = lp.add(owner[i], L[i], plink[i], routes[i], None if windows is None else tuple(windows[i]))
        per[k] = per.get(k, 0) + new
        added += new
    return added


def _warm_labels(lp, x, n_roots, starts, window, depth: int = 1):
    """Every owner's ``depth`` heaviest columns' labels in ``window``, rows grouped by rank (the heaviest of
    every owner first; an owner with fewer columns repeats its heaviest, one with none takes its first start)."""
    col_root = np.asarray(lp.root)
    here = np.array([w == window for w in lp.window], dtype=bool)
    warm = np.empty((depth, n_roots, starts.shape[1]), dtype=np.int64)
    for k in range(n_roots):
        mine = np.flatnonzero((col_root == k) & here)
        mine = mine[np.argsort(-x[mine], kind="stable")]
        for rank in range(depth):
            warm[rank, k] = lp.labels[mine[rank if rank < mine.size else 0]] if mine.size else starts[k]
    return warm.reshape(depth * n_roots, -1)


def _price_rows(space, C, roots, warm, starts, sweeps=True):
    """The heuristic pricing from the warm labels and the fixed starts: owner index, labels, parents, cost."""
    rts = np.concatenate([roots, np.tile(roots, starts.shape[0] // roots.size)])
    L, plink, cost = price(space, C, rts, np.concatenate([warm, starts]), sweeps=sweeps)
    return np.searchsorted(roots, rts), L, plink, cost


def _tree_costs(C, L, plink):
    """Each row's tree priced by ``C``."""
    has = plink >= 0
    return np.where(has, C[np.maximum(plink, 0), np.minimum(L, C.shape[1] - 1)], 0.0).sum(axis=1)
