"""The hop-indexed k-hop tree model, built from one helper per constraint family.

Variables (dicts keyed by index tuples, names built from the indices):

* ``z[i, j, h]`` binary: vertex ``j`` at depth ``h`` with parent ``i`` (name ``z_i_j_h``);
* ``y[j, h]`` in ``[0, 1]``: vertex ``j`` at depth ``h`` (name ``y_j_h``), integral
  whenever ``z`` is.

Families (each ``add_<family>(model, vars, data)`` posts one family and returns what
it creates, keyed by index tuples):

* :func:`add_arc_vars` -- the ``z`` variables of the allowed hop-indexed arcs;
* :func:`add_depth_vars` -- ``y[j, h] = sum_i z[i, j, h]``;
* :func:`add_one_parent` -- ``sum_h y[j, h] = 1`` for every non-root ``j``;
* :func:`add_parent_above` -- ``z[i, j, h] <= y[i, h - 1]`` for ``h >= 2``;
* :func:`add_layer_cuts` -- directed cuts of the layered graph (``models.khop.lp``);
* :func:`add_weight_objective` -- minimize ``sum dist(i, j) z[i, j, h]``.

Every integral solution of the first four families is a spanning tree of depth at most
``k`` rooted at 0 (each vertex has one parent one level up, so following parents
strictly decreases the depth down to the root), and every such tree is one.

The model is a :class:`LinearModel`: solver-neutral arrays that compile to HiGHS
(:meth:`LinearModel.to_highs`), CP-SAT (:meth:`LinearModel.to_cpsat`) or SCIP
(:meth:`LinearModel.solve_scip`, which also takes a separator of cuts to add at every
node of its branch-and-cut).

Examples
--------
>>> from synth.torus import parse_torus
>>> from synth.models.forest.instance import distance_matrix, hop_arcs
>>> t = parse_torus("4x4")
>>> data = ModelData(distance_matrix(t), 2, *hop_arcs(t, 2))
>>> model, z, y = build_hop_model(data)
>>> len(z), model.n_rows
(93, 119)
>>> sol = model.solve_highs(time_limit=10)
>>> sol.status, round(sol.objective)
('optimal', 18)
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["ModelData", "LinearModel", "MipSolution", "add_arc_vars", "add_depth_vars", "add_one_parent",
           "add_parent_above", "add_layer_cuts", "add_weight_objective", "build_hop_model", "decode_parent",
           "new_highs"]


@dataclass(frozen=True, eq=False)
class ModelData:
    """What the helpers need: distances, depth bound and the allowed hop-indexed arcs."""

    D: np.ndarray
    k: int
    tail: np.ndarray
    head: np.ndarray
    layer: np.ndarray

    @property
    def V(self) -> int:
        return int(self.D.shape[0])


def new_highs():
    """A silent ``highspy.Highs``; its one-time banner goes to ``/dev/null``, not to our stdout."""
    import highspy

    with _stdout_to_devnull():
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
    return h


@dataclass
class MipSolution:
    status: str                 # "optimal", "feasible", "infeasible", "unknown"
    objective: float | None     # incumbent value (None without one)
    bound: float                # solver's dual bound (valid for this model)
    values: np.ndarray | None   # column values of the incumbent
    seconds: float
    interrupted: bool = False


@dataclass
class LinearModel:
    """Columns and rows as growing arrays; compiles to HiGHS or CP-SAT."""

    name: str = "khop"
    col_names: list = field(default_factory=list)
    col_lo: list = field(default_factory=list)
    col_hi: list = field(default_factory=list)
    col_int: list = field(default_factory=list)
    cost: dict = field(default_factory=dict)
    rows: list = field(default_factory=list)       # (cols, coefs, lo, hi, name)

    @property
    def n_cols(self) -> int:
        return len(self.col_names)

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    def add_var(self, name, lo=0.0, hi=1.0, integer=True) -> int:
        self.col_names.append(name)
        self.col_lo.append(float(lo))
        self.col_hi.append(float(hi))
        self.col_int.append(bool(integer))
        return self.n_cols - 1

    def add_row(self, cols, coefs, lo=-np.inf, hi=np.inf, name="") -> int:
        self.rows.append((np.asarray(cols, dtype=np.int64), np.asarray(coefs, dtype=np.float64), float(lo),
                          float(hi), name))
        return self.n_rows - 1

    def set_cost(self, col, value):
        self.cost[col] = float(value)

    # ------------------------------------------------------------- HiGHS
    def _csr(self):
        ptr = np.zeros(self.n_rows + 1, dtype=np.int64)
        np.cumsum([r[0].size for r in self.rows], out=ptr[1:])
        idx = np.concatenate([r[0] for r in self.rows]) if self.rows else np.zeros(0, np.int64)
        val = np.concatenate([r[1] for r in self.rows]) if self.rows else np.zeros(0)
        return ptr, idx, val

    def to_highs(self, time_limit=None, threads=1, seed=0):
        import highspy

        h = new_highs()
        inf = highspy.kHighsInf
        c = np.zeros(self.n_cols)
        for j, v in self.cost.items():
            c[j] = v
        lo, hi = np.asarray(self.col_lo), np.asarray(self.col_hi)
        h.addCols(self.n_cols, c, lo, hi, 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        ptr, idx, val = self._csr()
        rlo = np.array([r[2] for r in self.rows])
        rhi = np.array([r[3] for r in self.rows])
        h.addRows(self.n_rows, np.where(np.isfinite(rlo), rlo, -inf), np.where(np.isfinite(rhi), rhi, inf),
                  idx.size, ptr[:-1].astype(np.int32), idx.astype(np.int32), val)
        ints = np.flatnonzero(self.col_int).astype(np.int32)
        if ints.size:
            h.changeColsIntegrality(ints.size, ints, np.full(ints.size, highspy.HighsVarType.kInteger))
        h.setOptionValue("threads", int(threads))
        h.setOptionValue("random_seed", int(seed))
        if time_limit is not None:
            h.setOptionValue("time_limit", float(max(time_limit, 0.01)))
        return h

    def solve_highs(self, time_limit=None, threads=1, seed=0, start=None, progress=None,
                    stop_below=None) -> MipSolution:
        """Solve with HiGHS; Ctrl-C cancels the search and returns what it has.

        ``stop_below``: stop at the first incumbent of objective at most this value.
        """
        import highspy

        t0 = time.monotonic()
        h = self.to_highs(time_limit, threads, seed)
        if time_limit is not None:      # the limit covers building the solver's model too
            h.setOptionValue("time_limit", float(max(time_limit - (time.monotonic() - t0), 0.01)))
            # HiGHS's presolve does not watch the clock: on a big model with little time it
            # overran a 5 s limit by 4 s and a 10 s one by 11 s (60k columns), so it is skipped
            nnz = sum(r[0].size for r in self.rows)
            if any(self.col_int) and time_limit < 5e-4 * nnz:
                h.setOptionValue("presolve", "off")
        if start is not None:
            h.setSolution(_highs_solution(start))
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
        interrupted = False
        h.startSolve()
        while True:
            try:
                done, _ = h.wait(0.1)
                if done:
                    break
            except KeyboardInterrupt:
                interrupted = True
                h.cancelSolve()
        info = h.getInfo()
        ms = h.getModelStatus()
        has_sol = info.primal_solution_status == 2
        values = np.asarray(h.getSolution().col_value) if has_sol else None
        obj = float(info.objective_function_value) if has_sol else None
        is_mip = any(self.col_int)
        bound = float(info.mip_dual_bound) if is_mip else (obj if obj is not None else -np.inf)
        if ms == highspy.HighsModelStatus.kOptimal:
            status = "optimal"
            if is_mip and obj is not None:
                bound = max(bound, obj - 1e-6 * max(1.0, abs(obj)) if bound != bound else bound)
        elif ms == highspy.HighsModelStatus.kInfeasible:
            status, bound = "infeasible", np.inf
        else:
            status = "feasible" if has_sol else "unknown"
        if not np.isfinite(bound) and status not in ("infeasible",):
            bound = -np.inf
        return MipSolution(status, obj, bound, values, time.monotonic() - t0, interrupted)

    # ------------------------------------------------------------ CP-SAT
    def to_cpsat(self, deadline=None):
        """The CP-SAT model and its variables; ``TimeoutError`` past ``deadline`` (``time.monotonic()``)."""
        from ortools.sat.python import cp_model

        m = cp_model.CpModel()
        m.name = self.name
        xs = [m.new_int_var(int(np.ceil(lo)), int(np.floor(hi)), nm)
              for nm, lo, hi in zip(self.col_names, self.col_lo, self.col_hi)]
        for n, (cols, coefs, lo, hi, nm) in enumerate(self.rows):
            if deadline is not None and n % 1000 == 0 and time.monotonic() > deadline:
                raise TimeoutError("no time left to build the CP-SAT model")
            if np.any(coefs != np.round(coefs)):
                raise ValueError(f"row {nm} has non-integer coefficients; CP-SAT needs integers")
            expr = sum(int(c) * xs[j] for j, c in zip(cols.tolist(), coefs.tolist()))
            lo_i = int(np.ceil(lo - 1e-9)) if np.isfinite(lo) else None
            hi_i = int(np.floor(hi + 1e-9)) if np.isfinite(hi) else None
            if lo_i is not None and hi_i is not None and lo_i == hi_i:
                m.add(expr == lo_i)
            else:
                if lo_i is not None:
                    m.add(expr >= lo_i)
                if hi_i is not None:
                    m.add(expr <= hi_i)
        m.minimize(sum(int(round(v)) * xs[j] for j, v in self.cost.items()))
        return m, xs

    def solve_cpsat(self, time_limit=None, threads=1, seed=0, start=None, progress=None,
                    linearization_level=2, stop_below=None) -> MipSolution:
        """Solve with CP-SAT (``linearization_level=2``: at the default its bound stays weak).

        Deterministic for a given seed with ``threads=1``; several workers race, so
        their result can differ from run to run.  ``stop_below``: stop at the first
        solution of objective at most this value.  CP-SAT catches Ctrl-C itself and
        stops as at a time limit; an early stop that is neither that nor a proof is
        reported as ``interrupted``.
        """
        from ortools.sat.python import cp_model

        t0 = time.monotonic()
        try:
            m, xs = self.to_cpsat(deadline=None if time_limit is None else t0 + time_limit)
        except TimeoutError:
            return MipSolution("unknown", None, -np.inf, None, time.monotonic() - t0)
        if start is not None:
            for x, v in zip(xs, np.asarray(start).tolist()):
                m.add_hint(x, int(round(v)))
        solver = cp_model.CpSolver()
        solver.parameters.random_seed = int(seed)
        solver.parameters.num_workers = int(threads)
        solver.parameters.linearization_level = int(linearization_level)
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

        st = solver.solve(m, _CB())
        has = st in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        values = np.array([solver.value(x) for x in xs], dtype=np.float64) if has else None
        obj = float(solver.objective_value) if has else None
        bound = float(solver.best_objective_bound) if st != cp_model.INFEASIBLE else np.inf
        status = {cp_model.OPTIMAL: "optimal", cp_model.FEASIBLE: "feasible",
                  cp_model.INFEASIBLE: "infeasible"}.get(st, "unknown")
        if status in ("unknown", "feasible") and not np.isfinite(bound):
            bound = -np.inf
        elapsed = time.monotonic() - t0
        interrupted = (status in ("unknown", "feasible") and not stopped[0] and limit is not None
                       and solver.wall_time < 0.9 * limit - 0.2)
        return MipSolution(status, obj, bound, values, elapsed, interrupted)

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
        incumbent of objective at most this value.  SCIP catches Ctrl-C itself
        and stops; that is reported as ``interrupted``.  Needs ``pyscipopt``.
        """
        from pyscipopt import SCIP_EVENTTYPE, SCIP_RESULT, Eventhdlr, Model, Sepa

        t0 = time.monotonic()
        m = Model(self.name)
        m.hideOutput(True)
        m.setParam("randomization/randomseedshift", int(seed))
        xs = [m.addVar(name=nm, vtype="B" if (integer and lo >= 0 and hi <= 1) else ("I" if integer else "C"),
                       lb=lo, ub=hi, obj=self.cost.get(j, 0.0))
              for j, (nm, lo, hi, integer) in enumerate(zip(self.col_names, self.col_lo, self.col_hi, self.col_int))]
        inf = m.infinity()
        for n, (cols, coefs, lo, hi, nm) in enumerate(self.rows):
            if time_limit is not None and n % 1000 == 0 and time.monotonic() - t0 > time_limit:
                return MipSolution("unknown", None, -np.inf, None, time.monotonic() - t0)
            expr = _scip_sum(xs, cols, coefs)
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
        state = {"last": 0.0, "stopped": False, "cuts": 0, "interrupted": False, "inc": np.inf}

        class _Events(Eventhdlr):
            def eventinit(self):
                self.model.catchEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)
                self.model.catchEvent(SCIP_EVENTTYPE.NODESOLVED, self)

            def eventexec(self, event):
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
                    try:
                        progress(f"scip: incumbent {text}, bound {mdl.getDualbound():.2f}, {mdl.getNNodes()} nodes, "
                                 f"{state['cuts']} cuts")
                    except KeyboardInterrupt:       # raised by the caller's callback: stop as on Ctrl-C
                        state["interrupted"] = True
                        mdl.interruptSolve()
                if better and stop_below is not None and inc <= stop_below + 1e-6:
                    state["stopped"] = True
                    mdl.interruptSolve()

        class _Cuts(Sepa):
            def sepaexeclp(self):
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
            status, bound = "optimal", obj
        elif st == "infeasible":
            status, bound = "infeasible", np.inf
        else:
            status = "feasible" if has else "unknown"
            bound = float(m.getDualbound())
            if not np.isfinite(bound) or abs(bound) >= inf:
                bound = -np.inf
        interrupted = state["interrupted"] or (st == "userinterrupt" and not state["stopped"])
        return MipSolution(status, obj, bound, values, time.monotonic() - t0, interrupted)


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
    from pyscipopt import quicksum

    return quicksum(a * xs[c] for c, a in zip(np.asarray(cols).tolist(), np.asarray(coefs).tolist()))


def _highs_solution(values):
    import highspy

    s = highspy.HighsSolution()
    s.col_value = list(np.asarray(values, dtype=np.float64))
    s.value_valid = True
    return s


# ------------------------------------------------------------------ families
def add_arc_vars(model: LinearModel, data: ModelData) -> dict:
    """Binary ``z[i, j, h]`` for every allowed hop-indexed arc; returns the dict."""
    z = {}
    for i, j, h in zip(data.tail.tolist(), data.head.tolist(), data.layer.tolist()):
        z[i, j, h] = model.add_var(f"z_{i}_{j}_{h}", 0, 1, True)
    return z


def add_depth_vars(model: LinearModel, z: dict, data: ModelData) -> dict:
    """``y[j, h] = sum_i z[i, j, h]`` (a variable and its defining row per used ``(j, h)``).

    Returns
    -------
    dict
        ``(j, h) -> (y column, defining row)``.
    """
    into = {}
    for (i, j, h), col in z.items():
        into.setdefault((j, h), []).append(col)
    out = {}
    for (j, h), cols in sorted(into.items()):
        y = model.add_var(f"y_{j}_{h}", 0, 1, False)
        row = model.add_row([y] + cols, [1.0] + [-1.0] * len(cols), 0.0, 0.0, f"depth_{j}_{h}")
        out[j, h] = (y, row)
    return out


def add_one_parent(model: LinearModel, y: dict, data: ModelData) -> dict:
    """``sum_h y[j, h] = 1`` for every non-root vertex ``j``; returns ``j -> row``."""
    per = {j: [] for j in range(1, data.V)}
    for (j, h), (col, _) in y.items():
        per[j].append(col)
    return {j: model.add_row(cols, np.ones(len(cols)), 1.0, 1.0, f"one_parent_{j}") for j, cols in per.items()}


def add_parent_above(model: LinearModel, z: dict, y: dict, data: ModelData) -> dict:
    """``z[i, j, h] <= y[i, h - 1]`` for ``h >= 2`` (``z`` is fixed to 0 if ``i`` can't be at ``h - 1``).

    Returns
    -------
    dict
        ``(i, j, h) -> row``.
    """
    out = {}
    for (i, j, h), col in z.items():
        if h < 2:
            continue
        if (i, h - 1) in y:
            out[i, j, h] = model.add_row([col, y[i, h - 1][0]], [1.0, -1.0], -np.inf, 0.0, f"parent_above_{i}_{j}_{h}")
        else:
            out[i, j, h] = model.add_row([col], [1.0], -np.inf, 0.0, f"parent_above_{i}_{j}_{h}")
    return out


def add_layer_cuts(model: LinearModel, z: dict, cuts, data: ModelData) -> list:
    """Directed cuts ``z(delta-(S)) >= 1``; ``cuts`` holds ``(j, nodes)`` with layered node ids ``h * V + i``.

    ``S`` must contain every copy ``(j, 1..k)`` of ``j`` and not the root.  Arcs of the
    cut missing from ``z`` (reduced away) are left out, which keeps the cut valid for
    the trees the model can still represent.  Returns the rows.
    """
    V = data.V
    keys = list(z.keys())
    if not keys:
        return []
    arr = np.asarray(keys, dtype=np.int64)
    cols = np.fromiter(z.values(), dtype=np.int64, count=len(keys))
    t_node = np.where(arr[:, 2] == 1, 0, (arr[:, 2] - 1) * V + arr[:, 0])
    h_node = arr[:, 2] * V + arr[:, 1]
    rows = []
    n_nodes = (data.k + 1) * V
    for n, (j, nodes) in enumerate(cuts):
        inS = np.zeros(n_nodes, dtype=bool)
        inS[np.asarray(nodes, dtype=np.int64)] = True
        enter = inS[h_node] & ~inS[t_node]
        c = cols[enter]
        rows.append(model.add_row(c, np.ones(c.size), 1.0, np.inf, f"cut_{j}_{n}"))
    return rows


def add_weight_objective(model: LinearModel, z: dict, data: ModelData) -> dict:
    """Minimize ``W = sum dist(i, j) z[i, j, h]``; returns ``col -> cost``."""
    out = {}
    for (i, j, h), col in z.items():
        out[col] = float(data.D[i, j])
        model.set_cost(col, out[col])
    return out


def build_hop_model(data: ModelData, cuts=()):
    """The full model: arc and depth variables, one parent, parent above, cuts, objective."""
    model = LinearModel(name=f"khop_k{data.k}")
    z = add_arc_vars(model, data)
    y = add_depth_vars(model, z, data)
    add_one_parent(model, y, data)
    add_parent_above(model, z, y, data)
    if len(cuts):
        add_layer_cuts(model, z, cuts, data)
    add_weight_objective(model, z, data)
    return model, z, y


def decode_parent(z: dict, values, V: int) -> np.ndarray:
    """Parent array of an integral solution."""
    parent = np.full(V, -1, dtype=np.int64)
    for (i, j, h), col in z.items():
        if values[col] > 0.5:
            parent[j] = i
    return parent
