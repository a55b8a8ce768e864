"""The CP-SAT balance model, built from small ``add_*`` helpers.

Unit components have weight 1; a component of weight ``w`` is ``w`` equal
units, so choosing components and integer weights is choosing how many units
use each option, and the model stays linear.  Variables (all in the dicts of
:class:`BalanceVars`, keyed by index tuples, named after their index):

* ``w[p]``: units built on option ``p`` (a root or a root pair);
* ``y[p, i, O]``: over those units together, the vertices of type ``i`` of
  option ``p`` whose parent link lies in orbit ``O``
  (``sum_O y[p, i, O] = type_count[i] * w[p]``);
* ``k[c]``: units of the fixed candidate ``c`` (the k-hop hook);
* ``load[s, O]``: base incidences of round ``s`` on orbit ``O`` (a reduce of
  level ``l`` counts on ``O`` in its reduce round and on ``rev[O]`` in its copy
  round; the exchange and candidates add constants);
* ``z[s]``: the largest ``load[s, O]`` (only for the smallest-Omega fallback);
* ``ub[s, O]``: the upper bound given to ``load[s, O]`` (a number, not a variable);
* ``total``: the number of units, ``sum w + sum k``; chunks are ``|G| * total``.

Any integer ``y`` with these sums splits into ``w[p]`` single units
(:func:`synth.models.balance.build.split_units`), so the aggregate model is
exact, with no per-unit symmetry.  With all orbits of size ``|G|`` the lift
has Omega = 1 iff ``load[s, O]`` is the same for every ``O`` (:func:`add_balance`).

Examples
--------
>>> from ortools.sat.python import cp_model

from synth.models.backends.result import Status
>>> from synth.topology.torus import parse_torus
>>> from synth.symmetry.torus import torus_translations_negation
>>> from synth.models.balance.data import balance_data, tree_options
>>> t = parse_torus("3x4"); g = torus_translations_negation(t)
>>> data = balance_data(t, g, tree_options(t, g), max_weight=4)
>>> model = cp_model.CpModel(); v = BalanceVars()
>>> add_options(model, v, data); add_round_loads(model, v, data); add_balance(model, v, data)
>>> add_total(model, v, data); model.minimize(v.total)
>>> res = solve(model, v, seed=0, time_limit=10)
>>> res.status, res.values["w"]
('optimal', {(0,): 2})
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from synth.models.backends.interrupt import cpsat_solve
from synth.models.backends.result import Status

__all__ = ["BalanceVars", "SolveOutcome", "add_options", "add_candidates", "add_round_loads", "add_balance",
           "add_total", "add_max_loads", "solve", "STATUS"]

#: CP-SAT's status codes in the one vocabulary of :class:`~synth.models.backends.result.Status`
STATUS = {cp_model.OPTIMAL: Status.OPTIMAL, cp_model.FEASIBLE: Status.FEASIBLE, cp_model.INFEASIBLE: Status.INFEASIBLE,
          cp_model.UNKNOWN: Status.UNKNOWN, cp_model.MODEL_INVALID: Status.UNKNOWN}


@dataclass
class BalanceVars:
    """The model's variables, one dict per family, keyed by index tuples."""

    w: dict = field(default_factory=dict)
    y: dict = field(default_factory=dict)
    k: dict = field(default_factory=dict)
    load: dict = field(default_factory=dict)
    z: dict = field(default_factory=dict)
    ub: dict = field(default_factory=dict)
    total: object = None


def add_options(model, v: BalanceVars, data) -> None:
    """``w[p]`` and ``y[p, i, O]`` with the per-type sums (one BFS parent per vertex)."""
    W = data.max_weight
    for p, opt in enumerate(data.options):
        v.w[p,] = model.new_int_var(0, W, f"w[{p}]")
        for i in range(opt.n_types):
            n = int(opt.type_count[i])
            ys = []
            for o in opt.type_orbits[i]:
                v.y[p, i, o] = model.new_int_var(0, n * W, f"y[{p},{i},{o}]")
                ys.append(v.y[p, i, o])
            model.add(sum(ys) == n * v.w[p,])


def add_candidates(model, v: BalanceVars, data) -> None:
    """``k[c]``: units of each fixed candidate component."""
    for c in range(len(data.candidates)):
        v.k[c,] = model.new_int_var(0, data.max_weight, f"k[{c}]")


def add_round_loads(model, v: BalanceVars, data) -> None:
    """``load[s, O]`` for rounds ``s = 1..S`` (call after :func:`add_options` / :func:`add_candidates`)."""
    S, m = data.n_rounds, data.n_orbits
    terms = {(s, o): [] for s in range(1, S + 1) for o in range(m)}
    bound = {key: 0 for key in terms}
    for p, opt in enumerate(data.options):
        for i in range(opt.n_types):
            lv = int(opt.type_level[i])
            r_red, r_cp = int(opt.reduce_round(lv)), int(opt.copy_round(lv))
            for o in opt.type_orbits[i]:
                terms[r_red, o].append(v.y[p, i, o])
                terms[r_cp, int(data.rev[o])].append(v.y[p, i, o])
                bound[r_red, o] += int(opt.type_count[i])
                bound[r_cp, int(data.rev[o])] += int(opt.type_count[i])
        for s, o in zip(*opt.fixed.nonzero()):
            terms[s + 1, o].append(int(opt.fixed[s, o]) * v.w[p,])
            bound[s + 1, o] += int(opt.fixed[s, o])
    for c, cand in enumerate(data.candidates):
        for s, o in zip(*cand.inc.nonzero()):
            terms[s + 1, o].append(int(cand.inc[s, o]) * v.k[c,])
            bound[s + 1, o] += int(cand.inc[s, o])
    for (s, o), t in terms.items():
        v.ub[s, o] = bound[s, o] * data.max_weight
        v.load[s, o] = model.new_int_var(0, v.ub[s, o], f"load[{s},{o}]")
        model.add(v.load[s, o] == sum(t))


def add_balance(model, v: BalanceVars, data) -> None:
    """Omega = 1 after the lift: in every round every orbit carries the same load."""
    for s in range(1, data.n_rounds + 1):
        for o in range(1, data.n_orbits):
            model.add(v.load[s, o] == v.load[s, 0])


def add_total(model, v: BalanceVars, data, lo: int = 1, hi: int | None = None) -> None:
    """``total = sum w + sum k`` (units; chunks are ``|G| * total``), within ``lo..hi``."""
    hi = data.max_weight if hi is None else hi
    v.total = model.new_int_var(lo, hi, "total")
    model.add(v.total == sum(v.w.values()) + sum(v.k.values()))


def add_max_loads(model, v: BalanceVars, data) -> None:
    """``z[s] >= load[s, O]``: the largest orbit load of each round (the fallback's objective)."""
    for s in range(1, data.n_rounds + 1):
        v.z[s,] = model.new_int_var(0, max(v.ub[s, o] for o in range(data.n_orbits)), f"z[{s}]")
        for o in range(data.n_orbits):
            model.add(v.z[s,] >= v.load[s, o])


@dataclass(frozen=True)
class SolveOutcome:
    """CP-SAT's verdict: ``status`` (a :class:`~synth.models.backends.result.Status`), variable values
    (when a solution exists), objective."""

    status: Status
    values: dict
    objective: float | None
    seconds: float


def solve(model, v: BalanceVars, *, seed: int = 0, time_limit: float = 60.0, num_workers: int = 1) -> SolveOutcome:
    """Solve deterministically (``num_workers=1`` and a fixed seed) and read the variables back."""
    solver = cp_model.CpSolver()
    solver.parameters.random_seed = int(seed)
    solver.parameters.num_workers = int(num_workers)
    solver.parameters.max_time_in_seconds = max(0.01, float(time_limit))
    t0 = time.perf_counter()
    code = cpsat_solve(solver, model)      # Ctrl-C and SIGTERM stop it at once and propagate
    seconds = time.perf_counter() - t0
    status = STATUS.get(code, Status.UNKNOWN)
    values = {}
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        for name in ("w", "y", "k", "load", "z"):
            values[name] = {key: int(solver.value(var)) for key, var in getattr(v, name).items()}
    has_obj = model.has_objective() and code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    return SolveOutcome(status, values, solver.objective_value if has_obj else None, seconds)
