"""Lower bounds: the layered-graph LP of the k-hop tree problem, on orbits, with column generation.

Layered graph (Gouveia, Simonetti & Uchoa 2011).  Node ``(i, h)`` (id ``h * V + i``)
means "vertex ``i`` at depth ``h``"; the hop-indexed arc ``(t, i, h)`` goes from
``(t, h-1)`` to ``(i, h)``, and ``t = 0`` exactly when ``h = 1``.  The LP, all
variables in ``[0, 1]``:

* ``y[i, h] = sum_t z[t, i, h]``                    (definition rows)
* ``sum_h y[i, h] = 1``                              (every vertex once)
* ``z[t, i, h] <= y[t, h - 1]`` for ``h >= 2``       (link rows: a parent one level up)
* ``z(delta-(S)) >= 1`` for every set ``S`` of layered nodes that holds every copy
  ``(j, 1..k)`` of a vertex ``j`` (directed cuts: the tree reaches ``j``).

Cuts.  *Cone cuts* ``S_j(r) = {(i, h) : dist(i, j) <= r - h}``, ``r >= k``, hold the
vertices from which ``j`` is reachable by unit steps in the depth left; they carry
most of the bound (on 8x8 they alone give the full cut LP's value to within 0.2) and
are separated in closed form.  General cuts come from max-flow from the root to the
copies of ``j`` (back and front cuts, nested).

Symmetry.  The root's stabilizer maps the LP to itself, so an invariant optimum
exists: one variable per orbit of arcs (standing for the common value of its arcs),
one row per orbit of rows.  A dual ``u`` of this aggregated LP spreads to a dual of the
full LP (``u_R / |R|`` on each row of the orbit ``R``) of the same value, and the reduced
cost of each arc of an orbit ``O`` is the aggregated reduced cost over ``|O|``.

Column generation.  Only some arc orbits are columns.  For a missing arc
``a = (t, i, h)`` with ``i`` a representative vertex,
``rc_a = dist(t, i) + u_def(i, h) / |orb i| - mean_g u(cuts that g(a) enters)``,
and since the cut term is at most the mean cut weight ``W`` of the head node,
``rc_a >= dist(t, i) - rho(i, h)``: only tails closer than ``rho`` are priced exactly.

The bound.  It is always the Lagrangian value of the current duals over *every* arc,
``b.u + sum_present min(0, rc) + sum_missing min(0, rc)``, recomputed in float64 from the
matrix built here (not read from the LP solver), so it is valid for any duals, whether
the LP has converged, the pricing found more columns, or not.

Layout.  The column half of :class:`LayeredLP` (arc orbits, pricing, arcs a bound keeps)
is :class:`synth.models.khop.arc_pricing.ColumnPricing`; the cone and max-flow cuts are
:mod:`synth.models.forest.cuts`.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.models.forest.instance import distance_matrix, root_stabilizer
>>> t = parse_torus("6x6")
>>> lp = LayeredLP(distance_matrix(t), 3, root_stabilizer(t))
>>> res = lp.solve()
>>> round(res.bound, 3), res.converged
(40.0, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from synth.models.backends.lagrangian import stalled, too_slow
from synth.models.backends.solvers import new_highs
from synth.models.forest.cuts import MIN_VIOLATION, cone_cuts, flow_cuts
from synth.models.khop.arc_pricing import ColumnPricing

__all__ = ["LayeredLP", "LPResult"]



@dataclass(frozen=True)
class LPResult:
    """State of the LP after :meth:`LayeredLP.solve`."""

    bound: float          # valid lower bound on W* (best Lagrangian value so far)
    objective: float      # objective of the last restricted LP solve
    converged: bool       # no violated cut and no negative column left: the LP bound of the cut model
    rounds: int
    n_cuts: int
    n_columns: int
    seconds: float


class LayeredLP(ColumnPricing):
    """The aggregated layered-graph LP (module docstring) with cut and column generation.

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` distances.
    k : int
        Depth bound.
    perms : numpy.ndarray
        ``G x V`` vertex permutations fixing the root and ``D`` (a group, identity first).
    tail, head, layer : numpy.ndarray, optional
        Arcs to start with (their orbits become columns).  Default: every allowed arc
        of length at most ``radius``; root arcs are always columns.
    radius : int, optional
        Initial column radius (default: all arcs on small instances, 2 otherwise).
    """

    def __init__(self, D, k, perms, tail=None, head=None, layer=None, radius=None):
        self.D, self.k, self.perms = D, int(k), np.asarray(perms)
        self._cols_only = False         # only columns (and their link rows) added since an optimal solve
        self._new_cols = 0              # columns added since the last solve
        self.V = V = D.shape[0]
        self.G = self.perms.shape[0]
        self.n_nodes = (k + 1) * V
        # ---- vertex orbits
        self.vrep = self.perms.min(axis=0).astype(np.int64)
        self.reps = np.unique(self.vrep[1:])
        self.nrep = self.reps.size
        self.rep_index = np.full(V, -1, dtype=np.int64)
        self.rep_index[self.reps] = np.arange(self.nrep)
        self.orb = np.bincount(self.rep_index[self.vrep[1:]], minlength=self.nrep).astype(np.float64)
        # allowed tails of every representative head, sorted by distance (exact arc reduction)
        d0 = D[0].astype(np.int64)
        self._cand_t, self._cand_d = [], []
        for r in self.reps:
            t = np.flatnonzero((D[:, r] < d0[r]) & (np.arange(V) != 0) & (np.arange(V) != r))
            t = t[np.argsort(D[t, r], kind="stable")]
            self._cand_t.append(t)
            self._cand_d.append(D[t, r].astype(np.int64))
        self._root_nbr = d0 == 1
        # ---- y columns first: y[rep, h] at rep * k + (h - 1)
        self.n_y = self.nrep * k
        # ---- arc store (members of every column orbit)
        self._key_to_col = {}
        self._arc_chunks = []          # (tail, head, layer, col) arrays
        self._arcs = None
        self.col_layer = np.zeros(0, dtype=np.int64)
        self.col_size = np.zeros(0, dtype=np.float64)
        self.col_dist = np.zeros(0, dtype=np.float64)
        # ---- rows (mirrored in scipy for the Lagrangian bound)
        self._coo = ([], [], [])        # rows, cols, vals
        self.row_lo = np.zeros(0)
        self.row_hi = np.zeros(0)
        self.row_ids = np.zeros(0, dtype=np.int64)   # stable ids: rows get deleted, ids never reused
        self.cuts = []                  # (terminal, node ids of S)
        self._cut_rows = []
        self._inc = None                # node x cut incidence
        h = new_highs()
        h.setOptionValue("threads", 1)
        h.setOptionValue("random_seed", 0)
        self.h = h
        import highspy

        self._inf = highspy.kHighsInf
        n = self.n_y
        h.addCols(n, np.zeros(n), np.zeros(n), np.ones(n), 0, np.zeros(0, np.int32), np.zeros(0, np.int32),
                  np.zeros(0))
        # definition rows y - sum z = 0 (the z parts come with the columns), once rows sum_h y = 1
        rows = np.arange(n)
        self._append_rows(rows, rows, np.ones(n), np.zeros(n), np.zeros(n))
        once = np.repeat(np.arange(self.nrep), k)
        self._append_rows(n + once, np.arange(n), np.ones(n), np.ones(self.nrep), np.ones(self.nrep))
        self.n_base_rows = n + self.nrep
        # ---- initial columns
        if radius is None:
            radius = 2
        root_t = np.zeros(V - 1, dtype=np.int64)
        self.add_arcs(root_t, np.arange(1, V), np.ones(V - 1, dtype=np.int64))
        if tail is None:
            tail, head, layer = self._arcs_within(radius)
        self.add_arcs(tail, head, layer)
        self.cones = True           # separate cone cuts (cheap, most of the bound)
        self.flows = True           # separate max-flow cuts when no cone cut is violated
        self.max_nested = 8
        self.front = False
        self.x = None
        self.duals = None
        self.bound = -np.inf
        self._best_ids = None
        self._best_vals = None
        self.ipm_columns = 8_000      # an LP with this many columns or more is solved by IPM
        self.lp_optimal = False
        self.y_lo = np.zeros(self.n_y)    # bounds of the y columns: [0, 1] unless fix_depth narrowed them
        self.y_hi = np.ones(self.n_y)

    # ============================================================== branching
    def fix_depth(self, v, h, value):
        """Restrict the LP to the trees with ``v`` at depth ``h`` (``value=1``) or not (``value=0``).

        A branching step: the bound of :meth:`solve` afterwards holds for the restricted
        trees only (the minimum over both sides of a split is a bound on ``W*``).  The
        y column stands for the whole orbit of ``v``, so ``value=0`` puts no vertex of
        that orbit at depth ``h`` (the group keeps the LP's restriction symmetric), and
        ``value=1`` needs ``v`` alone in its orbit: build the LP on the stabilizer of
        ``v`` (``perms[perms[:, v] == v]``) for that side.

        Both sides keep the exact arc reduction: it holds for every tree, so the trees it
        keeps contain an optimum, and the two sides split those trees.

        Parameters
        ----------
        v : int
            A non-root vertex.
        h : int
            A depth, ``1 <= h <= k``.
        value : {0, 1}

        Raises
        ------
        ValueError
            On a bad vertex, depth or value, or ``value=1`` on an orbit of several vertices.

        Examples
        --------
        8x8, k = 3 (``W* = 77``): the LP's 75.94 splits on whether the antipode ``(4, 4)``,
        which every map fixing the root fixes, is at depth 2: that side proves 77 (rounded up),
        the other 76.

        >>> from synth.topology.torus import parse_torus
        >>> from synth.models.forest.instance import distance_matrix, root_stabilizer
        >>> t = parse_torus("8x8")
        >>> D, G = distance_matrix(t), root_stabilizer(t)
        >>> bounds = []
        >>> for value in (1, 0):
        ...     lp = LayeredLP(D, 3, G)
        ...     lp.fix_depth(36, 2, value)
        ...     bounds.append(round(lp.solve().bound, 3))
        >>> round(LayeredLP(D, 3, G).solve().bound, 3), bounds
        (75.938, [76.571, 76.0])
        """
        v, h = int(v), int(h)
        if not 0 < v < self.V:
            raise ValueError(f"vertex must be a non-root vertex (1..{self.V - 1}), got {v}")
        if not 1 <= h <= self.k:
            raise ValueError(f"depth must be in 1..{self.k}, got {h}")
        if value not in (0, 1):
            raise ValueError(f"value must be 0 or 1, got {value!r}")
        ri = int(self.rep_index[self.vrep[v]])
        if value == 1 and self.orb[ri] != 1:
            raise ValueError(f"vertex {v} shares its orbit with {int(self.orb[ri]) - 1} others: fix it to 1 on "
                             "an LP built on its stabilizer")
        col = ri * self.k + h - 1
        self.y_lo[col] = self.y_hi[col] = float(value)
        self.h.changeColBounds(col, float(value), float(value))
        self._cols_only = False
        self.lp_optimal = False

    # ================================================================ columns
    # =================================================================== rows
    def _append_rows(self, rows, cols, vals, lo, hi, feasible=False):
        """Add rows (global row ids ``rows`` starting at the current count) to HiGHS and the mirror.

        ``feasible``: the last solution satisfies the new rows (link rows of new columns,
        which are 0), so its basis with the new slacks stays primal feasible.
        """
        nr = self.row_lo.size
        n_new = lo.size
        A = sp.csr_matrix((vals, (rows - nr, cols)), shape=(n_new, self.n_y + self.n_z))
        inf = self._inf
        self._cols_only &= feasible
        self.h.addRows(n_new, np.where(np.isfinite(lo), lo, -inf), np.where(np.isfinite(hi), hi, inf), A.nnz,
                       A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data)
        self._coo[0].append(np.asarray(rows))
        self._coo[1].append(np.asarray(cols))
        self._coo[2].append(vals)
        self.row_lo = np.concatenate([self.row_lo, lo])
        self.row_hi = np.concatenate([self.row_hi, hi])
        start = int(self.row_ids[-1]) + 1 if self.row_ids.size else 0
        self.row_ids = np.concatenate([self.row_ids, start + np.arange(n_new)])

    def matrix(self):
        """The constraint matrix (rows x (y columns + z columns)) as built so far."""
        rows, cols, vals = (np.concatenate(a) for a in self._coo)
        self._coo = ([rows], [cols], [vals])
        return sp.csr_matrix((vals, (rows, cols)), shape=(self.row_lo.size, self.n_y + self.n_z))

    def _incidence(self):
        if self._inc is None or self._inc.shape[1] != len(self.cuts):
            nodes = [np.asarray(s) for _, s in self.cuts]
            lens = [s.size for s in nodes]
            self._inc = sp.csr_matrix((np.ones(sum(lens)), (np.concatenate(nodes), np.repeat(np.arange(len(nodes)),
                                                                                              lens))),
                                      shape=(self.n_nodes, len(nodes)))
        return self._inc

    def add_cuts(self, found):
        """Add cuts ``z(delta-(S)) >= 1``; ``found`` holds ``(j, node mask or node ids)``."""
        if not found:
            return 0
        V = self.V
        mt, mi, mh, mc = self.arcs
        hn = mh * V + mi
        tn = np.where(mh == 1, 0, (mh - 1) * V + mt)
        R, C, X = [], [], []
        nr = self.row_lo.size
        for n, (j, S) in enumerate(found):
            S = np.asarray(S)
            inS = S if S.dtype == bool else np.isin(np.arange(self.n_nodes), S)
            inS = inS[:self.n_nodes]
            enter = inS[hn] & ~inS[tn]
            cnt = np.bincount(mc[enter], minlength=self.n_z)
            nz = np.flatnonzero(cnt)
            R.append(np.full(nz.size, nr + n))
            C.append(nz + self.n_y)
            X.append(cnt[nz].astype(np.float64))
            self.cuts.append((int(j), np.flatnonzero(inS)))
            self._cut_rows.append(nr + n)
        m = len(found)
        self._append_rows(np.concatenate(R), np.concatenate(C), np.concatenate(X), np.ones(m), np.full(m, np.inf))
        self._inc = None
        return m

    def purge_cuts(self, min_slack=1e-6):
        """Delete cut rows that are slack with a zero dual (they only slow the LP down).

        Deleting rows relaxes the LP, but the bound stays valid: it is the Lagrangian
        value of whatever duals the next solve returns.
        """
        if not self.cuts:
            return 0
        rows = np.asarray(self._cut_rows)
        act = self.row_act[rows]
        drop = (np.abs(self.duals[rows]) <= 1e-12) & (act > 1 + min_slack)
        if self._best_ids is not None:       # keep the rows the best bound's duals use
            drop &= ~np.isin(self.row_ids[rows], self._best_ids)
        if not drop.any():
            return 0
        alive = np.ones(self.row_lo.size, dtype=bool)
        alive[rows[drop]] = False
        dead = np.flatnonzero(~alive).astype(np.int32)
        self.h.deleteRows(dead.size, dead)
        self._cols_only = False
        newid = np.cumsum(alive) - 1
        r, c, v = (np.concatenate(a) for a in self._coo)
        keep = alive[r]
        self._coo = ([newid[r[keep]]], [c[keep]], [v[keep]])
        self.row_lo, self.row_hi = self.row_lo[alive], self.row_hi[alive]
        self.row_ids = self.row_ids[alive]
        self.cuts = [cut for cut, d in zip(self.cuts, drop) if not d]
        self._cut_rows = newid[rows[~drop]].tolist()
        self.duals = self.duals[alive]
        self.row_act = self.row_act[alive]
        self._inc = None
        return int(drop.sum())

    # ===================================================================== LP
    def _lp_solve(self, deadline=None):
        """Solve the restricted LP, within ``deadline`` (``time.monotonic()``) if given.

        HiGHS's ``time_limit`` counts the run time of all solves of this object, so the
        limit is the time already used plus what is left.  A solve stopped by the limit
        leaves primal and dual values that are not optimal (or zeros); the bound stays
        valid because it is the Lagrangian value of whatever duals are kept.  A large LP
        (``ipm_columns`` columns or more) is solved by the interior point method (with
        crossover): on 32x32 it was 3 times faster than the simplex method from scratch
        (2.3 s against 6.4 s, no cuts), and about twice as fast as the warm-started dual
        simplex after a round of cone cuts.

        Returns
        -------
        float
            The LP objective (``nan`` when the solve was stopped before optimality).
        """
        import highspy

        h = self.h
        if deadline is not None:
            left = deadline - time.monotonic()
            h.setOptionValue("time_limit", float(h.getRunTime() + max(left, 0.01)))
        else:
            h.setOptionValue("time_limit", float("inf"))
        # after a pricing round that added a few columns (and their link rows, no cuts), the last
        # basis is primal feasible and the primal simplex needs a few pivots.  32x32, k = 11:
        # rounds adding 1-15 columns took 15 s each with the interior point method from
        # scratch and 0-2 s warm-started; after +2300 columns the warm start took 23 s, IPM 16 s
        n_col = self.n_z + self.n_y
        warm = self._cols_only and self._new_cols <= max(200, n_col // 50)
        big = n_col >= self.ipm_columns and not warm
        if big:
            h.setOptionValue("solver", "ipm")
        elif warm:
            h.setOptionValue("simplex_strategy", 4)         # primal simplex
        try:
            h.run()
        finally:
            if big:
                h.setOptionValue("solver", "simplex")
            elif warm:
                h.setOptionValue("simplex_strategy", 1)     # dual simplex: after cuts
            self._new_cols = 0
        optimal = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        self._cols_only = optimal           # an optimal basis to warm-start from
        sol = h.getSolution()
        n_col, n_row = self.n_y + self.n_z, self.row_lo.size
        x, u, act = np.asarray(sol.col_value), np.asarray(sol.row_dual), np.asarray(sol.row_value)
        self.lp_optimal = bool(optimal and x.size == n_col and u.size == n_row)
        if x.size != n_col or u.size != n_row or act.size != n_row or not (np.all(np.isfinite(u))
                                                                              and np.all(np.isfinite(x))):
            x, u, act = np.zeros(n_col), np.zeros(n_row), np.zeros(n_row)
        self.x, self.duals, self.row_act = x, u, act
        return float(h.getInfo().objective_function_value) if self.lp_optimal else float("nan")

    def arc_values(self):
        """Current LP value of every member arc (aligned with :attr:`arcs`)."""
        return self.x[self.n_y + self.arcs[3]]

    # ============================================================= separation
    def separate_cones(self, x_arc, tol=MIN_VIOLATION, per_terminal=2, extra=None, deadline=None):
        """Violated cone cuts of the representatives (:func:`cone_cuts` on :attr:`arcs`)."""
        return cone_cuts(self.D, self.k, self.arcs[:3], x_arc, self.reps, tol=tol, per_terminal=per_terminal,
                         extra=extra, deadline=deadline)

    def separate_flows(self, x_arc, tol=MIN_VIOLATION, deadline=None):
        """Violated directed cuts of the representatives (:func:`flow_cuts` on :attr:`arcs`)."""
        return flow_cuts(self.D, self.k, self.arcs[:3], x_arc, self.reps, tol=tol, deadline=deadline,
                         max_nested=self.max_nested, front=self.front)

    # =================================================================== loop
    def arc_vector(self, parent, depth):
        """Member-arc values of the tree ``parent`` averaged over the group (``None`` if an arc is missing)."""
        v = np.flatnonzero(np.asarray(parent) >= 0)
        key = self._keys(np.asarray(parent)[v], v, np.asarray(depth)[v])
        cols = [self._key_to_col.get(kk) for kk in key.tolist()]
        if any(c is None for c in cols):
            return None
        zeta = np.bincount(np.asarray(cols), minlength=self.n_z) / self.col_size
        return zeta[self.arcs[3]]

    def solve(self, deadline=None, max_rounds=10_000, progress=None, target=None, max_new_columns=None,
              stall_rounds=None, stall_tol=1e-4) -> LPResult:
        """Column and cut generation until converged, the deadline, or ``bound >= target``.

        Each round prices the missing arcs (adding the most negative ones) and, when
        none is left, separates cone cuts, then max-flow cuts.  With ``stall_rounds``,
        the loop also stops on the flow cuts' long tail: with a ``deadline``, when the
        pace of the cut rounds would not lift the bound to the next integer in the time
        left (:func:`too_slow`); without one, when the bound gained less than
        ``stall_tol`` (relative) over ``stall_rounds`` cut rounds and would need ten
        times as many to reach the next integer (:func:`stalled`).  (With a deadline,
        the second rule stopped 16x16, k = 8 at 266.989 after 40 s, short of 267.)
        """
        t0 = time.monotonic()
        say = progress or (lambda _m: None)
        max_new = max_new_columns or max(2000, 4 * self.nrep * self.k)

        def late():
            return deadline is not None and time.monotonic() > deadline

        obj = self._lp_solve(deadline)
        rounds, converged = 0, False
        history = []
        while rounds < max_rounds:
            if not self.lp_optimal:
                # stopped by the deadline: its duals are no better than what we have, and
                # pricing them could take long (the bound needs every negative column).  Or
                # infeasible (a fix_depth no tree of the present columns meets): the bound
                # stays where it was, since missing columns might make it feasible
                import highspy

                infeasible = self.h.getModelStatus() == highspy.HighsModelStatus.kInfeasible
                say("lp: the restricted LP is infeasible" if infeasible else "lp: solve stopped by the time limit")
                break
            t_, i_, h_, rc, missing = self.price(deadline=deadline)
            if missing is not None:
                self._update_bound(missing)
            rounds += 1
            if target is not None and self.bound >= target:
                break
            if late() or missing is None:
                break
            if rc.size:
                order = np.argsort(rc, kind="stable")[:max_new]
                added = self.add_arcs(t_[order], i_[order], h_[order])
                if late():
                    break
                obj = self._lp_solve(deadline)
                say(f"lp round {rounds}: +{added} columns ({self.n_z} in all), objective {obj:.3f}, "
                    f"bound {self.bound:.3f}")
                continue
            x = self.arc_values()
            found = self.separate_cones(x, deadline=deadline) if self.cones else []
            kind = "cone"
            if not found and self.flows and not late():
                found = self.separate_flows(x, deadline=deadline)
                kind = "flow"
            if late():
                break
            if not found:
                converged = True
                break
            history.append((time.monotonic(), self.bound))
            if stall_rounds and (too_slow(history, deadline) if deadline is not None
                                 else stalled([b for _, b in history], stall_rounds, stall_tol)):
                break
            if rounds % 10 == 0:
                self.purge_cuts()
            self.add_cuts(found)
            if late():
                break
            obj = self._lp_solve(deadline)
            say(f"lp round {rounds}: +{len(found)} {kind} cuts ({len(self.cuts)} in all), objective {obj:.3f}, "
                f"bound {self.bound:.3f}")
        self._pad_solution()
        return LPResult(self.bound, obj, converged, rounds, len(self.cuts), self.n_z, time.monotonic() - t0)

    def _pad_solution(self):
        """Give columns and rows added after the last solve (stopped by the deadline) the value 0."""
        if self.x is None:
            return
        n_col, n_row = self.n_y + self.n_z, self.row_lo.size
        if self.x.size < n_col:
            self.x = np.concatenate([self.x, np.zeros(n_col - self.x.size)])
        if self.duals.size < n_row:
            pad = np.zeros(n_row - self.duals.size)
            self.duals = np.concatenate([self.duals, pad])
            self.row_act = np.concatenate([self.row_act, pad])

    # ============================================================ for the MIP
    def binding_cuts(self):
        """Cuts with a positive dual in the last solve."""
        return [c for c, r in zip(self.cuts, self._cut_rows) if self.duals[r] > 1e-9]

    def best_duals(self):
        """The duals of the best bound, aligned with the current rows (rows added since get 0)."""
        u = np.zeros(self.row_ids.size)
        if self._best_ids is None:          # no bound computed yet (e.g. the first solve ran out of time)
            return u
        pos = np.searchsorted(self.row_ids, self._best_ids)
        u[pos] = self._best_vals
        return u
