"""The solver back-ends of :class:`~synth.models.backends.linear.LinearModel`: HiGHS, CP-SAT and SCIP.

Each compiles the model's columns and CSR rows (:meth:`LinearModel.matrix`) into its solver,
solves, and returns a :class:`~synth.models.backends.result.MipSolution` whose status, objective
and bound are what the solver proved: ``optimal`` only with a proof, ``feasible`` with the
bound it reached when a limit stopped it, ``infeasible`` with bound +inf.  The model's
``solve_highs``, ``solve_cpsat`` and ``solve_scip`` methods call these.

Examples
--------
>>> from synth.models.backends.linear import LinearModel
>>> m = LinearModel(name="toy")
>>> x = m.add_vars(2, 0, 3, True, cost=[-1.0, -1.0])
>>> m.add_row(x, [2, 3], -np.inf, 6.0, "cap")
0
>>> solve_highs(m, time_limit=10).objective, solve_cpsat(m, time_limit=10).objective
(-3.0, -3.0)
"""

from __future__ import annotations

import contextlib
import os
import time

import numpy as np

from synth.models.backends.interrupt import cpsat_solve
from synth.models.backends.result import MipSolution, Status

__all__ = ["new_highs", "to_highs", "solve_highs", "to_cpsat", "solve_cpsat", "solve_scip"]


def new_highs():
    """A silent ``highspy.Highs``; its one-time banner goes to ``/dev/null``, not to our stdout."""
    import highspy  # optional solver: imported when used

    with _stdout_to_devnull():
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
    return h


def to_highs(model, time_limit=None, threads=1, seed=0, relax=False):
    """A ``highspy.Highs`` holding the model (its LP relaxation with ``relax``)."""
    import highspy  # optional solver: imported when used

    h = new_highs()
    inf = highspy.kHighsInf
    h.addCols(model.n_cols, model.cost, model.lo, model.hi, 0, np.zeros(0, np.int32), np.zeros(0, np.int32),
              np.zeros(0))
    A, lo, hi = model.matrix()
    if A.shape[0]:
        h.addRows(A.shape[0], np.where(np.isfinite(lo), lo, -inf), np.where(np.isfinite(hi), hi, inf), A.nnz,
                  A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data)
    ints = np.flatnonzero(model.integer).astype(np.int32)
    if ints.size and not relax:
        h.changeColsIntegrality(ints.size, ints, np.full(ints.size, highspy.HighsVarType.kInteger))
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("random_seed", int(seed))
    if time_limit is not None:
        h.setOptionValue("time_limit", float(max(time_limit, 0.01)))
    return h

def solve_highs(model, time_limit=None, threads=1, seed=0, start=None, progress=None, stop_below=None,
                relax=False, guard_presolve=True, options=None) -> MipSolution:
    """Solve with HiGHS; Ctrl-C or SIGTERM cancels the search and propagates, carrying what it has
    as ``partial`` (:func:`_ended`).

    ``stop_below``: stop at the first incumbent of objective at most this value.
    ``relax``: solve the LP relaxation.
    ``guard_presolve``: the time limit covers building HiGHS's model, and presolve is
    skipped on a big MIP with little time (HiGHS's presolve does not watch the clock:
    on a big model it overran a 5 s limit by 4 s and a 10 s one by 11 s, 60k columns);
    without it the limit is HiGHS's own (the exchange pipeline's slices rely on that).
    ``options``: more HiGHS options by name (e.g. ``{"solver": "ipm", "run_crossover": "off"}``).
    """
    import highspy  # optional solver: imported when used

    t0 = time.monotonic()
    h = to_highs(model, time_limit, threads, seed, relax)
    for key, value in (options or {}).items():
        h.setOptionValue(key, value)
    is_mip = bool(model.integer.any()) and not relax
    if time_limit is not None and guard_presolve:
        h.setOptionValue("time_limit", float(max(time_limit - (time.monotonic() - t0), 0.01)))
        nnz = sum(b[0].size if len(b) == 5 else b[0].nnz for b in model.rows)
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
    # an LP's duals whenever HiGHS has any (an interior point stopped early gives approximate ones: whoever
    # uses them must not trust them, as the layered class bound's checker does not)
    duals = np.asarray(h.getSolution().row_dual) if not is_mip and info.dual_solution_status != 0 else None
    h.clearCallbacks()   # the interrupt handler holds h: freed now, not when the collector runs (16x16x16: 3 GB)
    return _ended(MipSolution(status, obj, bound, values, time.monotonic() - t0, caught is not None, duals), caught)


def to_cpsat(model, deadline=None):
    """The CP-SAT model and its variables; ``TimeoutError`` past ``deadline`` (``time.monotonic()``)."""
    from ortools.sat.python import cp_model  # optional solver: imported when used

    m = cp_model.CpModel()
    m.name = model.name
    xs = [m.new_int_var(int(np.ceil(lo)), int(np.floor(hi)), nm)
          for nm, lo, hi in zip(model.col_names, model._lo, model._hi)]
    A, rlo, rhi = model.matrix()
    names = model.row_names()
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
    m.minimize(sum(int(round(v)) * xs[j] for j, v in sorted(model._cost.items()) if v))
    return m, xs

def solve_cpsat(model, time_limit=None, threads=1, seed=0, start=None, progress=None,
                linearization_level=2, stop_below=None, enumerate_all=False):
    """Solve with CP-SAT (``linearization_level=2``: at the default its bound stays weak).

    Deterministic for a given seed with ``threads=1``; several workers race, so
    their result can differ from run to run.  ``stop_below``: stop at the first
    solution of objective at most this value.  Ctrl-C and SIGTERM stop the search at
    once and propagate (:func:`synth.models.backends.interrupt.cpsat_solve`; CP-SAT left to
    itself would catch Ctrl-C and end as at its time limit).  With ``enumerate_all`` (the objective ignored)
    returns the list of every feasible integral point instead: for tests on tiny
    models.
    """
    from ortools.sat.python import cp_model  # optional solver: imported when used

    t0 = time.monotonic()
    try:
        m, xs = to_cpsat(model, deadline=None if time_limit is None else t0 + time_limit)
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

def solve_scip(model, time_limit=None, threads=1, seed=0, start=None, progress=None, stop_below=None,
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
    m = Model(model.name)
    m.hideOutput(True)
    m.setParam("randomization/randomseedshift", int(seed))
    cost = model._cost
    xs = [m.addVar(name=nm, vtype="B" if (integer and lo >= 0 and hi <= 1) else ("I" if integer else "C"),
                   lb=lo, ub=hi, obj=cost.get(j, 0.0))
          for j, (nm, lo, hi, integer) in enumerate(zip(model.col_names, model._lo, model._hi, model._int))]
    inf = m.infinity()
    A, rlo, rhi = model.matrix()
    names = [b[4] if len(b) == 5 else None for b in model.rows]
    names = model.row_names() if None in names else names
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
