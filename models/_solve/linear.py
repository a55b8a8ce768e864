"""One solver-neutral linear model: columns and row blocks as arrays, compiled to HiGHS, CP-SAT or SCIP.

Columns come one at a time (:meth:`LinearModel.add_var`, with a name) or as a block
(:meth:`LinearModel.add_vars`); rows likewise (:meth:`LinearModel.add_row` or
:meth:`LinearModel.add_rows` from coordinate triples).  :attr:`LinearModel.rows` lists the
row blocks in the order they were added, so the last one can be popped again.  The
back-ends read one CSR matrix (:meth:`LinearModel.matrix`) with each row's entries in the
order they were given.

* :meth:`LinearModel.solve_highs` -- HiGHS (MIP, or its LP relaxation with ``relax``);
* :meth:`LinearModel.solve_cpsat` -- CP-SAT (integer coefficients only), or every
  feasible point of a tiny model with ``enumerate_all``;
* :meth:`LinearModel.solve_scip` -- SCIP branch-and-cut, with a separator hook that adds
  cuts at every node.

Every solve returns a :class:`~synth.models._solve.result.MipSolution`.

Examples
--------
>>> import numpy as np
>>> m = LinearModel(name="toy")
>>> x = m.add_vars(3, 0, 1, True, cost=[3.0, 2.0, 4.0])
>>> m.add_rows([0, 0, 0], x, [1, 1, 1], 1, 2.0, np.inf, "pick_two")
range(0, 1)
>>> sol = m.solve_highs(time_limit=10)
>>> sol.status, sol.objective, [round(v) for v in sol.values]
('optimal', 5.0, [1, 1, 0])
>>> m.solve_cpsat(time_limit=10).objective
5.0
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from synth.models._solve.interrupt import cpsat_solve
from synth.models._solve.result import MipSolution, Status

__all__ = ["LinearModel", "new_highs"]


def new_highs():
    """A silent ``highspy.Highs``; its one-time banner goes to ``/dev/null``, not to our stdout."""
    import highspy  # optional solver: imported when used

    with _stdout_to_devnull():
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
    return h


@dataclass
class LinearModel:
    """Columns (bounds, integrality, cost, names) and row blocks; compiles to HiGHS, CP-SAT or SCIP.

    A row block is either one row ``(cols, coefs, lo, hi, name)`` from :meth:`add_row` or
    ``(A, lo, hi, family)`` with a CSR matrix ``A`` from :meth:`add_rows`.
    """

    name: str = "model"
    rows: list = field(default_factory=list)
    _names: list = field(default_factory=list, repr=False)      # None for unnamed columns
    _lo: list = field(default_factory=list, repr=False)         # per column, or arrays of a block
    _hi: list = field(default_factory=list, repr=False)
    _int: list = field(default_factory=list, repr=False)
    _cost: dict = field(default_factory=dict, repr=False)       # column -> cost (0 elsewhere)
    _row_ends: list = field(default_factory=list, repr=False)   # rows after each block
    n_cols: int = 0

    # ----------------------------------------------------------- columns
    def add_var(self, name, lo=0.0, hi=1.0, integer=True) -> int:
        """One named column; returns its index."""
        self._names.append(name)
        self._lo.append(float(lo))
        self._hi.append(float(hi))
        self._int.append(bool(integer))
        self.n_cols += 1
        return self.n_cols - 1

    def add_vars(self, n, lo=0.0, hi=1.0, integer=True, cost=0.0) -> np.ndarray:
        """``n`` unnamed columns (bounds and cost broadcast); returns their indices."""
        n = int(n)
        cols = np.arange(self.n_cols, self.n_cols + n, dtype=np.int64)
        self._names.extend([None] * n)
        self._lo.extend(np.broadcast_to(np.asarray(lo, dtype=np.float64), (n,)).tolist())
        self._hi.extend(np.broadcast_to(np.asarray(hi, dtype=np.float64), (n,)).tolist())
        self._int.extend([bool(integer)] * n)
        self.n_cols += n
        cost = np.broadcast_to(np.asarray(cost, dtype=np.float64), (n,))
        if np.any(cost):
            self.set_cost(cols, cost)
        return cols

    def set_cost(self, cols, values):
        """Objective coefficients of one column or of an array of columns."""
        if np.ndim(cols) == 0:
            self._cost[int(cols)] = float(values)
            return
        values = np.broadcast_to(np.asarray(values, dtype=np.float64), np.shape(cols))
        self._cost.update(zip(np.asarray(cols, dtype=np.int64).tolist(), values.tolist()))

    def objective_terms(self):
        """``(cols, coefs)`` of the columns with a nonzero cost, in column order: a cutoff row's terms."""
        cols = np.asarray(sorted(j for j, v in self._cost.items() if v), dtype=np.int64)
        return cols, np.asarray([self._cost[j] for j in cols.tolist()], dtype=np.float64)

    @property
    def col_names(self) -> list:
        return [f"c{j}" if nm is None else nm for j, nm in enumerate(self._names)]

    @property
    def cost(self) -> np.ndarray:
        c = np.zeros(self.n_cols)
        if self._cost:
            c[np.fromiter(self._cost.keys(), np.int64, len(self._cost))] = list(self._cost.values())
        return c

    @property
    def lo(self) -> np.ndarray:
        return np.asarray(self._lo, dtype=np.float64)

    @property
    def hi(self) -> np.ndarray:
        return np.asarray(self._hi, dtype=np.float64)

    @property
    def integer(self) -> np.ndarray:
        return np.asarray(self._int, dtype=bool)

    # -------------------------------------------------------------- rows
    def add_row(self, cols, coefs, lo=-np.inf, hi=np.inf, name="") -> int:
        """One row ``lo <= coefs . x[cols] <= hi``; returns its index."""
        self.rows.append((np.asarray(cols, dtype=np.int64), np.asarray(coefs, dtype=np.float64), float(lo),
                          float(hi), name))
        return self._grew(1) - 1

    def add_rows(self, row, col, val, n_rows, lo, hi, family) -> range:
        """Add ``n_rows`` rows from coordinate triples (duplicates summed); returns their indices."""
        n_rows = int(n_rows)
        A = sp.csr_matrix((np.asarray(val, dtype=np.float64), (np.asarray(row, dtype=np.int64),
                                                              np.asarray(col, dtype=np.int64))),
                          shape=(n_rows, self.n_cols))
        A.sum_duplicates()
        self.rows.append((A, np.broadcast_to(np.asarray(lo, dtype=np.float64), (n_rows,)).copy(),
                          np.broadcast_to(np.asarray(hi, dtype=np.float64), (n_rows,)).copy(), family))
        end = self._grew(n_rows)
        return range(end - n_rows, end)

    def _grew(self, n) -> int:
        del self._row_ends[len(self.rows) - 1:]             # blocks popped from ``rows`` since
        self._row_ends.append((self._row_ends[-1] if self._row_ends else 0) + n)
        return self._row_ends[-1]

    @property
    def n_rows(self) -> int:
        k = len(self.rows)
        return self._row_ends[k - 1] if k and len(self._row_ends) >= k else self._count_rows()

    def _count_rows(self) -> int:
        return sum(1 if len(b) == 5 else b[0].shape[0] for b in self.rows)

    def family_rows(self, family) -> int:
        """How many rows the blocks of ``family`` hold."""
        return sum(b[0].shape[0] for b in self.rows if len(b) == 4 and b[3] == family)

    def last_block(self):
        """The CSR matrix of the newest :meth:`add_rows` block."""
        return self.rows[-1][0]

    def matrix(self):
        """``(A, row_lo, row_hi)`` of all rows (CSR, with the current number of columns).

        Each row keeps its entries in the order given; runs of single rows are one block.
        """
        mats, los, his = [], [], []
        singles = []

        def flush():
            if singles:
                ptr = np.zeros(len(singles) + 1, dtype=np.int64)
                np.cumsum([r[0].size for r in singles], out=ptr[1:])
                idx = np.concatenate([r[0] for r in singles])
                val = np.concatenate([r[1] for r in singles])
                mats.append(sp.csr_matrix((val, idx, ptr), shape=(len(singles), self.n_cols)))
                los.append(np.array([r[2] for r in singles]))
                his.append(np.array([r[3] for r in singles]))
                singles.clear()

        for b in self.rows:
            if len(b) == 5:
                singles.append(b)
                continue
            flush()
            A = b[0]
            mats.append(sp.csr_matrix((A.data, A.indices, A.indptr), shape=(A.shape[0], self.n_cols)))
            los.append(b[1])
            his.append(b[2])
        flush()
        if not mats:
            return sp.csr_matrix((0, self.n_cols)), np.zeros(0), np.zeros(0)
        A = mats[0] if len(mats) == 1 else sp.vstack(mats, format="csr")
        return A, np.concatenate(los), np.concatenate(his)

    def row_names(self) -> list:
        """A name per row: the one given to :meth:`add_row`, else ``family_n`` (``rN`` if empty)."""
        out = []
        for b in self.rows:
            if len(b) == 5:
                out.append(b[4] or f"r{len(out)}")
            else:
                out.extend(f"{b[3]}_{n}" for n in range(b[0].shape[0]))
        return out

    def is_feasible(self, values, tol=1e-9) -> bool:
        """Whether ``values`` satisfies every row, the bounds and integrality."""
        x = np.asarray(values, dtype=np.float64)
        A, lo, hi = self.matrix()
        ax = A @ x
        ints = self.integer
        return bool(np.all(ax >= lo - tol) and np.all(ax <= hi + tol) and np.all(x >= self.lo - tol)
                    and np.all(x <= self.hi + tol) and np.all(np.abs(x[ints] - np.round(x[ints])) <= tol))

    # ------------------------------------------------------------- HiGHS
    def to_highs(self, time_limit=None, threads=1, seed=0, relax=False):
        """A ``highspy.Highs`` holding the model (its LP relaxation with ``relax``)."""
        import highspy  # optional solver: imported when used

        h = new_highs()
        inf = highspy.kHighsInf
        h.addCols(self.n_cols, self.cost, self.lo, self.hi, 0, np.zeros(0, np.int32), np.zeros(0, np.int32),
                  np.zeros(0))
        A, lo, hi = self.matrix()
        if A.shape[0]:
            h.addRows(A.shape[0], np.where(np.isfinite(lo), lo, -inf), np.where(np.isfinite(hi), hi, inf), A.nnz,
                      A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data)
        ints = np.flatnonzero(self.integer).astype(np.int32)
        if ints.size and not relax:
            h.changeColsIntegrality(ints.size, ints, np.full(ints.size, highspy.HighsVarType.kInteger))
        h.setOptionValue("threads", int(threads))
        h.setOptionValue("random_seed", int(seed))
        if time_limit is not None:
            h.setOptionValue("time_limit", float(max(time_limit, 0.01)))
        return h

    def solve_highs(self, time_limit=None, threads=1, seed=0, start=None, progress=None, stop_below=None,
                    relax=False, guard_presolve=True) -> MipSolution:
        """Solve with HiGHS; Ctrl-C or SIGTERM cancels the search and propagates, carrying what it has
        as ``partial`` (:func:`_ended`).

        ``stop_below``: stop at the first incumbent of objective at most this value.
        ``relax``: solve the LP relaxation.
        ``guard_presolve``: the time limit covers building HiGHS's model, and presolve is
        skipped on a big MIP with little time (HiGHS's presolve does not watch the clock:
        on a big model it overran a 5 s limit by 4 s and a 10 s one by 11 s, 60k columns);
        without it the limit is HiGHS's own (the exchange pipeline's slices rely on that).
        """
        import highspy  # optional solver: imported when used

        t0 = time.monotonic()
        h = self.to_highs(time_limit, threads, seed, relax)
        is_mip = bool(self.integer.any()) and not relax
        if time_limit is not None and guard_presolve:
            h.setOptionValue("time_limit", float(max(time_limit - (time.monotonic() - t0), 0.01)))
            nnz = sum(b[0].size if len(b) == 5 else b[0].nnz for b in self.rows)
            if is_mip and time_limit < 5e-4 * nnz:
                h.setOptionValue("presolve", "off")
        if start is not None:
            h.setSolution(_highs_solution(start))
        if progress is not None or stop_below is not None:
            last = [None]

            def on_improve(e):
                val = e.data_out.objective_function_value
                if last[0] is None or val < last[0] - 1e-9:
                    last[0] = val
                    if progress is not None:
                        progress(f"highs: incumbent {val:.0f}, bound {e.data_out.mip_dual_bound:.2f}")
                    if stop_below is not None and val <= stop_below + 1e-6:
                        h.cancelSolve()

            h.cbMipImprovingSolution += on_improve
        h.HandleUserInterrupt = True
        caught = None
        h.startSolve()
        while True:
            try:
                done, _ = h.wait(0.1)
                if done:
                    break
            except KeyboardInterrupt as exc:    # Ctrl-C or SIGTERM: stop HiGHS, then let the interrupt through
                caught = exc
                h.cancelSolve()
        info = h.getInfo()
        ms = h.getModelStatus()
        has_sol = info.primal_solution_status == 2
        values = np.asarray(h.getSolution().col_value) if has_sol else None
        obj = float(info.objective_function_value) if has_sol else None
        bound = float(info.mip_dual_bound) if is_mip else (obj if obj is not None else -np.inf)
        if ms == highspy.HighsModelStatus.kOptimal:
            status = Status.OPTIMAL
        elif ms == highspy.HighsModelStatus.kInfeasible:
            status, bound = Status.INFEASIBLE, np.inf
        else:
            status = Status.FEASIBLE if has_sol else Status.UNKNOWN
        if not np.isfinite(bound) and status != Status.INFEASIBLE:
            bound = -np.inf
        return _ended(MipSolution(status, obj, bound, values, time.monotonic() - t0, caught is not None), caught)

    # ------------------------------------------------------------ CP-SAT
    def to_cpsat(self, deadline=None):
        """The CP-SAT model and its variables; ``TimeoutError`` past ``deadline`` (``time.monotonic()``)."""
        from ortools.sat.python import cp_model  # optional solver: imported when used

        m = cp_model.CpModel()
        m.name = self.name
        xs = [m.new_int_var(int(np.ceil(lo)), int(np.floor(hi)), nm)
              for nm, lo, hi in zip(self.col_names, self._lo, self._hi)]
        A, rlo, rhi = self.matrix()
        names = self.row_names()
        for r in range(A.shape[0]):
            if deadline is not None and r % 1000 == 0 and time.monotonic() > deadline:
                raise TimeoutError("no time left to build the CP-SAT model")
            s, e = A.indptr[r], A.indptr[r + 1]
            coefs = A.data[s:e]
            if np.any(coefs != np.round(coefs)):
                raise ValueError(f"row {names[r]} has non-integer coefficients; CP-SAT needs integers")
            expr = sum(int(c) * xs[j] for j, c in zip(A.indices[s:e].tolist(), coefs.tolist()))
            lo, hi = rlo[r], rhi[r]
            lo_i = int(np.ceil(lo - 1e-9)) if np.isfinite(lo) else None
            hi_i = int(np.floor(hi + 1e-9)) if np.isfinite(hi) else None
            if lo_i is not None and hi_i is not None and lo_i == hi_i:
                m.add(expr == lo_i)
            else:
                if lo_i is not None:
                    m.add(expr >= lo_i)
                if hi_i is not None:
                    m.add(expr <= hi_i)
        m.minimize(sum(int(round(v)) * xs[j] for j, v in sorted(self._cost.items()) if v))
        return m, xs

    def solve_cpsat(self, time_limit=None, threads=1, seed=0, start=None, progress=None,
                    linearization_level=2, stop_below=None, enumerate_all=False):
        """Solve with CP-SAT (``linearization_level=2``: at the default its bound stays weak).

        Deterministic for a given seed with ``threads=1``; several workers race, so
        their result can differ from run to run.  ``stop_below``: stop at the first
        solution of objective at most this value.  Ctrl-C and SIGTERM stop the search at
        once and propagate (:func:`synth.models._solve.interrupt.cpsat_solve`; CP-SAT left to
        itself would catch Ctrl-C and end as at its time limit).  With ``enumerate_all`` (the objective ignored)
        returns the list of every feasible integral point instead: for tests on tiny
        models.
        """
        from ortools.sat.python import cp_model  # optional solver: imported when used

        t0 = time.monotonic()
        try:
            m, xs = self.to_cpsat(deadline=None if time_limit is None else t0 + time_limit)
        except TimeoutError:
            return MipSolution(Status.UNKNOWN, None, -np.inf, None, time.monotonic() - t0)
        solver = cp_model.CpSolver()
        solver.parameters.random_seed = int(seed)
        solver.parameters.num_workers = int(threads)
        solver.parameters.linearization_level = int(linearization_level)
        if enumerate_all:
            m.clear_objective()
            solver.parameters.enumerate_all_solutions = True
            found = []

            class _All(cp_model.CpSolverSolutionCallback):
                def on_solution_callback(self):
                    found.append(np.array([self.value(x) for x in xs], dtype=np.int64))

            solver.solve(m, _All())
            return found
        if start is not None:
            for x, v in zip(xs, np.asarray(start).tolist()):
                m.add_hint(x, int(round(v)))
        # the limit covers building the CP-SAT model too
        limit = float(max(time_limit - (time.monotonic() - t0), 0.01)) if time_limit is not None else None
        if limit is not None:
            solver.parameters.max_time_in_seconds = limit
        stopped = [False]

        class _CB(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self):
                val = self.objective_value
                if progress is not None:
                    progress(f"cp-sat: incumbent {val:.0f}, bound {self.best_objective_bound:.2f}")
                if stop_below is not None and val <= stop_below + 1e-6:
                    stopped[0] = True
                    self.stop_search()

        st = cpsat_solve(solver, m, _CB())      # Ctrl-C and SIGTERM stop it at once and propagate
        has = st in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        values = np.array([solver.value(x) for x in xs], dtype=np.float64) if has else None
        obj = float(solver.objective_value) if has else None
        bound = float(solver.best_objective_bound) if st != cp_model.INFEASIBLE else np.inf
        status = {cp_model.OPTIMAL: Status.OPTIMAL, cp_model.FEASIBLE: Status.FEASIBLE,
                  cp_model.INFEASIBLE: Status.INFEASIBLE}.get(st, Status.UNKNOWN)
        if status in (Status.UNKNOWN, Status.FEASIBLE) and not np.isfinite(bound):
            bound = -np.inf
        return MipSolution(status, obj, bound, values, time.monotonic() - t0)

    # -------------------------------------------------------------- SCIP
    def solve_scip(self, time_limit=None, threads=1, seed=0, start=None, progress=None, stop_below=None,
                   separate=None) -> MipSolution:
        """Solve with SCIP (branch-and-cut); ``separate`` adds cuts at every node of the search.

        ``separate(x)`` receives the LP values of all columns at a node and returns rows
        ``(cols, coefs, lo)`` meaning ``coefs . x[cols] >= lo``; they must be valid for every
        integral solution (they are added as global cuts, which SCIP may drop again).
        This is what CP-SAT and HiGHS cannot do: with the layered cuts re-separated inside
        the search, SCIP proved 12x12, k = 3 optimal (W* = 192, 421 s on the model fixed
        against 192), where the pipeline with CP-SAT had not in 25 minutes.

        ``threads`` is ignored (SCIP searches with one thread).  ``start``: column values
        of a feasible solution, the first incumbent.  ``stop_below``: stop at the first
        incumbent of objective at most this value.  SCIP catches Ctrl-C itself and stops
        (SIGTERM's handler runs in our callbacks, which stop it too); the interrupt then
        propagates, carrying what SCIP has as ``partial`` (:func:`_ended`).  Needs ``pyscipopt``.
        """
        # optional solver: imported when used
        from pyscipopt import SCIP_EVENTTYPE, SCIP_RESULT, Eventhdlr, Model, Sepa

        t0 = time.monotonic()
        m = Model(self.name)
        m.hideOutput(True)
        m.setParam("randomization/randomseedshift", int(seed))
        cost = self._cost
        xs = [m.addVar(name=nm, vtype="B" if (integer and lo >= 0 and hi <= 1) else ("I" if integer else "C"),
                       lb=lo, ub=hi, obj=cost.get(j, 0.0))
              for j, (nm, lo, hi, integer) in enumerate(zip(self.col_names, self._lo, self._hi, self._int))]
        inf = m.infinity()
        A, rlo, rhi = self.matrix()
        names = [b[4] if len(b) == 5 else None for b in self.rows]
        names = self.row_names() if None in names else names
        for n in range(A.shape[0]):
            if time_limit is not None and n % 1000 == 0 and time.monotonic() - t0 > time_limit:
                return MipSolution(Status.UNKNOWN, None, -np.inf, None, time.monotonic() - t0)
            s, e = A.indptr[n], A.indptr[n + 1]
            expr = _scip_sum(xs, A.indices[s:e], A.data[s:e])
            lo, hi, nm = float(rlo[n]), float(rhi[n]), names[n]
            if np.isfinite(lo) and np.isfinite(hi) and lo != hi:
                m.addCons(expr >= lo, name=f"{nm or n}_lo")
                m.addCons(expr <= hi, name=f"{nm or n}_hi")
            elif lo == hi:
                m.addCons(expr == lo, name=nm or f"r{n}")
            elif np.isfinite(lo):
                m.addCons(expr >= lo, name=nm or f"r{n}")
            elif np.isfinite(hi):
                m.addCons(expr <= hi, name=nm or f"r{n}")
        if start is not None:
            sol = m.createSol()
            for x, v in zip(xs, np.asarray(start, dtype=np.float64).tolist()):
                if v:
                    m.setSolVal(sol, x, v)
            m.addSol(sol, free=True)
        state = {"last": 0.0, "stopped": False, "cuts": 0, "interrupted": None, "inc": np.inf}

        class _Events(Eventhdlr):
            def eventinit(self):
                self.model.catchEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)
                self.model.catchEvent(SCIP_EVENTTYPE.NODESOLVED, self)

            def eventexec(self, event):
                try:
                    self._exec()
                except KeyboardInterrupt as exc:    # Ctrl-C in the caller's callback, or SIGTERM's handler
                    state["interrupted"] = exc
                    self.model.interruptSolve()

            def _exec(self):
                # the incumbent is not yet in getPrimalbound() when BESTSOLFOUND fires: every
                # event looks at it, and the next NODESOLVED reports it and stops if asked
                mdl = self.model
                inc = mdl.getPrimalbound() if mdl.getNSols() else None
                inc = inc if inc is not None and abs(inc) < 1e19 else None
                now = time.monotonic()
                better = inc is not None and inc < state["inc"] - 1e-9
                if better:
                    state["inc"] = inc
                if progress is not None and (better or now - state["last"] > 5.0):
                    state["last"] = now
                    text = f"{inc:.0f}" if inc is not None else "none"
                    progress(f"scip: incumbent {text}, bound {mdl.getDualbound():.2f}, {mdl.getNNodes()} nodes, "
                             f"{state['cuts']} cuts")
                if better and stop_below is not None and inc <= stop_below + 1e-6:
                    state["stopped"] = True
                    mdl.interruptSolve()

        class _Cuts(Sepa):
            def sepaexeclp(self):
                try:
                    return self._separate()
                except KeyboardInterrupt as exc:    # SIGTERM's handler ran here: stop as on Ctrl-C
                    state["interrupted"] = exc
                    self.model.interruptSolve()
                    return {"result": SCIP_RESULT.DIDNOTRUN}

            def _separate(self):
                mdl = self.model
                x = np.fromiter((mdl.getSolVal(None, v) for v in xs), dtype=np.float64, count=len(xs))
                added = 0
                for cols, coefs, lo in separate(x):
                    row = mdl.createEmptyRowSepa(self, f"cut{state['cuts']}", lhs=float(lo), rhs=inf, local=False,
                                                 modifiable=False, removable=True)
                    mdl.cacheRowExtensions(row)
                    for c, a in zip(np.asarray(cols).tolist(), np.asarray(coefs).tolist()):
                        mdl.addVarToRow(row, xs[c], a)
                    mdl.flushRowExtensions(row)
                    if mdl.isCutEfficacious(row):
                        mdl.addCut(row, forcecut=False)
                        added += 1
                        state["cuts"] += 1
                    mdl.releaseRow(row)
                return {"result": SCIP_RESULT.SEPARATED if added else SCIP_RESULT.DIDNOTFIND}

        m.includeEventhdlr(_Events(), "progress", "incumbent and bound reports")
        if separate is not None:
            m.includeSepa(_Cuts(), "user", "cuts of the caller, at every node", priority=1000, freq=1,
                          maxbounddist=1.0)
        if time_limit is not None:
            m.setParam("limits/time", float(max(time_limit - (time.monotonic() - t0), 0.01)))
        with _stdout_to_devnull():         # SCIP's Ctrl-C handler prints to stdout, which holds our results
            m.optimize()
        st = m.getStatus()
        has = m.getNSols() > 0
        best = m.getBestSol() if has else None
        values = np.array([m.getSolVal(best, x) for x in xs], dtype=np.float64) if has else None
        obj = float(m.getSolObjVal(best)) if has else None
        if st == "optimal":
            status, bound = Status.OPTIMAL, obj
        elif st == "infeasible":
            status, bound = Status.INFEASIBLE, np.inf
        else:
            status = Status.FEASIBLE if has else Status.UNKNOWN
            bound = float(m.getDualbound())
            if not np.isfinite(bound) or abs(bound) >= inf:
                bound = -np.inf
        caught = state["interrupted"]
        if caught is None and st == "userinterrupt" and not state["stopped"]:
            caught = KeyboardInterrupt()        # SCIP caught Ctrl-C itself
        return _ended(MipSolution(status, obj, bound, values, time.monotonic() - t0, caught is not None), caught)


def _ended(sol: MipSolution, caught):
    """``sol``, or (when the solve was interrupted) the interrupt raised again, carrying ``sol`` as ``partial``.

    Ctrl-C and SIGTERM are never swallowed: a caller that can use the solver's incumbent takes it
    from the exception (:func:`synth.models.khop.pipeline`), every other caller simply stops.
    """
    if caught is None:
        return sol
    caught.partial = sol
    raise caught


@contextlib.contextmanager
def _stdout_to_devnull():
    """File descriptor 1 goes to ``/dev/null`` inside the block (C libraries print there directly)."""
    import sys

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _scip_sum(xs, cols, coefs):
    """``sum coefs[n] * xs[cols[n]]`` as one SCIP expression."""
    from pyscipopt import quicksum  # optional solver: imported when used

    return quicksum(a * xs[c] for c, a in zip(np.asarray(cols).tolist(), np.asarray(coefs).tolist()))


def _highs_solution(values):
    import highspy  # optional solver: imported when used

    s = highspy.HighsSolution()
    s.col_value = list(np.asarray(values, dtype=np.float64))
    s.value_valid = True
    return s
