"""The record of a k-hop tree solve: the tree, the bound the checker re-derives, the solver's claims.

Status.  ``"optimal"`` when the weight meets the bound ``synth check`` re-derives;
:data:`SOLVER_CLAIM` (``"optimal (solver claim)"``) when only the solver's MIP proved
it (``solver_bound``, which no checker can re-derive); else ``"feasible"``
(:func:`tree_status`).  :func:`tighten` makes the records of one torus consistent
across depth bounds; :func:`fresh_record` is the record of a solve just run.

Examples
--------
>>> tree_status(18, 17.2, None), tree_status(19, 17.0, 19), tree_status(20, 17.0, None)[0]
(('optimal', 0.0), ('optimal (solver claim)', 0.10526315789473684), 'feasible')
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["TreeRecord", "SOLVER_CLAIM", "tree_status", "fresh_record", "tighten"]

#: The status of a tree whose optimality only the solver's MIP proved: a claim, not re-derivable.
SOLVER_CLAIM = "optimal (solver claim)"


@dataclass(frozen=True)
class TreeRecord:
    """A k-hop tree, the bound ``synth check`` re-derives for it, and what the solver claims beyond that.

    ``lower_bound`` is the bound of ``dual`` (re-derived by :mod:`synth.check.bounds` when the
    record comes from the cache, :mod:`synth.solving.cache`; ``synth check`` re-derives it from the certificate);
    ``gap`` is ``(weight - lower_bound) / weight``.  ``solver_bound`` is the solver's own
    bound when it is stronger (a MIP proof), a claim only; ``status`` is ``"optimal"``,
    :data:`SOLVER_CLAIM` or ``"feasible"`` (module docstring).  ``interrupted``: the solve
    was cut short by Ctrl-C or SIGTERM (kept in the cache as such, never served as an answer).
    """

    shape: tuple
    k: int
    parent: np.ndarray
    depth: int
    weight: int
    lower_bound: float
    gap: float
    status: str
    seconds: float
    solver: str
    bound_method: str
    time_limit: float
    seed: int
    cached: bool = False
    dual: dict | None = None
    start_weight: int | None = None      # W of the tree the solve started from (``--start``), if any
    solver_bound: int | None = None      # the solver's bound when above lower_bound (MIP): a claim
    interrupted: bool = False
    interrupted_before: int | None = None  # W of an interrupted solve of the same inputs that this one replaced
    uncached: str | None = None            # why the solve could not be cached (the next run solves again)

    def solver_claims(self) -> dict:
        """The certificate's ``solver`` section.

        ``synth check`` takes these as the solver's claims, except ``dual_bound`` (when
        the solve kept one): a dual of the layered LP from which the checker re-derives
        a lower bound itself (:mod:`synth.check.bounds`), the claim ``weight_lower_bound``,
        which equals ``lower_bound`` here.  ``solver_lower_bound`` (when present) is the
        solver's stronger, unchecked bound; ``status`` says :data:`SOLVER_CLAIM` when only it
        proves the tree optimal.
        """
        out = {"model": "synth.models.khop", "status": self.status, "depth_bound": self.k,
               "weight": self.weight, "lower_bound": self.lower_bound, "gap": round(self.gap, 6),
               "bound_method": self.bound_method, "solver": self.solver, "time_limit": self.time_limit,
               "seed": self.seed, "seconds": round(self.seconds, 3)}
        if self.solver_bound is not None:
            out["solver_lower_bound"] = self.solver_bound
        if self.interrupted:
            out["interrupted"] = True
        if self.start_weight is not None:
            out["start_weight"] = self.start_weight
        if self.dual is not None:
            out["dual_bound"] = self.dual
        return out


def tree_status(weight, lower_bound, solver_bound):
    """``(status, gap)`` of a tree from the re-derived bound and the solver's claimed bound (or None)."""
    if weight <= math.ceil(lower_bound - 1e-9):
        return "optimal", 0.0
    gap = (weight - lower_bound) / weight
    if solver_bound is not None and weight <= math.ceil(solver_bound - 1e-9):
        return SOLVER_CLAIM, gap
    return "feasible", gap


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x) -> bool:
    return (_is_int(x) or isinstance(x, float)) and math.isfinite(x)


def fresh_record(t, k, res, time_limit, seed, start_weight):
    """The record of a solve just run (``res``, a :class:`synth.models.khop.KHopResult`): the bound its
    dual proves, the solver's stronger bound as a claim."""
    parent = np.asarray(res.parent, dtype=np.int64)
    weight = int(res.weight)
    dual = res.dual if isinstance(res.dual, dict) else None
    claimed = dual.get("bound") if dual is not None else None
    if dual is not None and _is_number(claimed):
        lb = min(math.ceil(claimed - 1e-9), weight)     # synth check re-derives it (solve: ``valid``)
        dual = {**dual, "bound": lb}
    else:                                               # no dual: only W >= p - 1 (every edge costs >= 1)
        dual, lb = None, t.n_vertices - 1
    solver_lb = float(res.lower_bound)
    solver_bound = min(math.ceil(solver_lb - 1e-9), weight) if math.isfinite(solver_lb) else None
    solver_bound = solver_bound if solver_bound is not None and solver_bound > lb else None
    status, gap = tree_status(weight, lb, solver_bound)
    return TreeRecord(tuple(t.shape), k, parent, int(res.depth), weight, lb, gap, status, float(res.seconds),
                      str(res.solver), str(res.bound_method), float(time_limit), int(seed), dual=dual,
                      start_weight=start_weight, solver_bound=solver_bound,
                      interrupted=bool(getattr(res, "interrupted", False)))


def _stronger(a, b):
    """Of two stored duals (either may be None), the one proving more."""
    if a is None or b is None:
        return a or b
    return b if b.get("bound", 0) > a.get("bound", 0) else a


def tighten(records) -> list:
    """Make a set of solves of one torus consistent across depth bounds.

    For depth bounds ``a < b``, a tree of depth ``<= a`` is also a tree of depth
    ``<= b``, and a bound valid at ``b`` is valid at ``a`` (``W*(a) >= W*(b)``).  So a
    time-limited solve at ``b`` that ended heavier than the tree found at ``a``
    takes that tree, and a weaker bound at ``a`` takes the one proven at ``b`` (with its
    dual, which proves it at ``a`` too), as does the solver's claimed bound;
    ``bound_method`` and ``solver`` say where each came from and the status and gap
    are recomputed (``"optimal"`` when the weight meets the rounded-up bound,
    :data:`SOLVER_CLAIM` when only the solver's claimed bound does).

    Parameters
    ----------
    records : sequence of TreeRecord
        Solves of one torus, any depth bounds.

    Returns
    -------
    list of TreeRecord
        In the order given.

    Examples
    --------
    >>> import numpy as np
    >>> r = lambda k, w, lb: TreeRecord((4, 4), k, np.zeros(16, np.int64), k, w, lb, 0.0, "feasible", 1.0,
    ...                                 "auto", "LP", 10.0, 0)
    >>> [(x.k, x.weight, x.lower_bound, x.status) for x in tighten([r(2, 20, 17.0), r(3, 21, 18.0)])]
    [(2, 20, 18.0, 'feasible'), (3, 20, 18.0, 'feasible')]
    """
    order = sorted(range(len(records)), key=lambda i: records[i].k)
    out = list(records)
    for a, b in zip(order, order[1:]):          # lighter trees flow to larger depth bounds
        lo, hi = out[a], out[b]
        if lo.weight < hi.weight:
            out[b] = dataclasses.replace(hi, parent=lo.parent, depth=lo.depth, weight=lo.weight,
                                         solver=f"{lo.solver} (tree of the depth-{lo.k} solve)")
    for a, b in zip(order[::-1][1:], order[::-1]):  # stronger bounds flow to smaller depth bounds
        lo, hi = out[a], out[b]
        if hi.lower_bound > lo.lower_bound:
            lo = out[a] = dataclasses.replace(lo, lower_bound=hi.lower_bound, dual=_stronger(lo.dual, hi.dual),
                                              bound_method=f"bound of the depth-{hi.k} solve: {hi.bound_method}")
        if hi.solver_bound is not None and hi.solver_bound > max(lo.solver_bound or -math.inf, lo.lower_bound):
            out[a] = dataclasses.replace(lo, solver_bound=hi.solver_bound)
    for i, rec in enumerate(out):
        sb = rec.solver_bound if rec.solver_bound is not None and rec.solver_bound > rec.lower_bound else None
        status, gap = tree_status(rec.weight, rec.lower_bound, sb)
        out[i] = dataclasses.replace(rec, gap=gap, status=status, solver_bound=sb)
    return out
