"""The balance pipeline: weighted BFS trees or forests whose lift has Omega = 1 under a smaller group.

With a group ``G`` acting freely on the directed links in ``m`` orbits (all of
size ``|G|``), lifting puts on every link of orbit ``O`` in round ``s`` the load
``sum_t w_t u_{t,O}(s)`` (docs/spec.md §6).  These functions choose base
components and integer weights so that this is the same on every orbit in
every round, with the fewest chunks ``|G| * sum(w)``, by a CP-SAT model
(:mod:`synth.models.balance.model`) over per-level counts
(:mod:`synth.models.balance.data`).  Families:

* ``"trees"``: BFS trees rooted at vertex 0 (or given roots), ``2H`` rounds;
* ``"exchange"``: BFS forests rooted at an adjacent pair plus the exchange of
  the two roots in the middle round (docs/spec.md §4), ``2H - 1`` rounds on
  even sides;
* ``"candidates"``: fixed components built elsewhere (e.g. k-hop trees from
  ``synth.models.balance.family``), of which only the weights are chosen; candidates can
  also be added to the other two families when their rounds agree.

Omega is never taken from the model: it is re-derived from the built base
schedule by :func:`synth.check.measure_symmetric`.  When no balanced family
exists within ``max_weight`` units, the result says so (status
``"infeasible"``) and carries the family of smallest Omega the fallback found.

Examples
--------
Two BFS trees balance the 3x4 torus under translations and negation (the
paper's Theorem 6.1, ``4mn`` chunks); a 3x5 torus needs only one:

>>> from synth.topology.torus import parse_torus
>>> from synth.symmetry.torus import torus_translations_negation
>>> t = parse_torus("3x4"); r = balance_bfs_trees(t, torus_translations_negation(t))
>>> r.status, r.rounds, r.weights, r.chunks, str(r.omega)
('optimal', 6, (1, 1), 48, '1')
>>> t = parse_torus("3x5"); r = balance_bfs_trees(t, torus_translations_negation(t))
>>> r.status, r.rounds, r.weights, r.chunks, str(r.omega)
('optimal', 6, (1,), 30, '1')

The exchange round of a 4x5 torus can only use horizontal links (only the even side
saves a level), so no exchange family balances; the best one is returned, honestly:

>>> t = parse_torus("4x5"); r = balance_exchange_forests(t, torus_translations_negation(t), max_weight=2)
>>> r.status, r.rounds, r.omega > 1
('infeasible', 7, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from ortools.sat.python import cp_model

from synth.check import Metrics, measure_symmetric
from synth.errors import ScheduleError
from synth.models.backends.result import Status
from synth.schedule import BaseSchedule

from .build import build_base, components_from_values
from .data import balance_data, candidate_columns, chunk_lower_bound, forest_options, tree_options
from .model import (BalanceVars, add_balance, add_candidates, add_max_loads, add_options, add_round_loads,
                            add_total, solve)

__all__ = ["BalanceResult", "FAMILIES", "balance", "balance_bfs_trees", "balance_exchange_forests",
           "balance_candidates"]

FAMILIES = ("trees", "exchange", "candidates")


@dataclass(frozen=True)
class BalanceResult:
    """What the balance model found.

    Attributes
    ----------
    status : Status
        About the balanced problem, as CP-SAT reported it: ``"optimal"`` (Omega = 1 with
        the fewest chunks of the family, proven), ``"feasible"`` (Omega = 1, fewest chunks
        not proven), ``"infeasible"`` (proven: no balanced family of at most ``max_weight``
        units; ``base`` is the smallest-Omega fallback), ``"unknown"`` (limits reached
        without either; ``base`` is the best fallback found, or ``None``).
    family : str
        One of :data:`FAMILIES`.
    base : BaseSchedule or None
        The weighted components (one chunk per group element and unit of weight).
    weights : tuple of int
    chunks : int
        ``|G| * sum(weights)``.
    rounds : int
    omega : fractions.Fraction or None
        Re-derived by :func:`synth.check.measure_symmetric` from ``base``.
    seconds : float
        Wall time of the whole call (model building, solving, building, measuring); the
        time limit can be exceeded by up to a second, as the fallback always tries one unit.
    seed : int
    group_order, n_orbits : int
    roots : tuple
        Per component: its root(s), or the candidate's label.
    chunk_bound : int
        :func:`synth.models.balance.data.chunk_lower_bound`: no Omega = 1 schedule whose
        chunks each run one unit of the family has fewer chunks, whatever the group.
    metrics : synth.check.Metrics or None
        The checker's metrics of the lift, one element per unit of chunk weight.
    notes : tuple of str
    """

    status: Status
    family: str
    base: BaseSchedule | None
    weights: tuple
    chunks: int
    rounds: int
    omega: Fraction | None
    seconds: float
    seed: int
    group_order: int
    n_orbits: int
    roots: tuple = ()
    chunk_bound: int = 0
    metrics: Metrics | None = None
    notes: tuple = ()

    @property
    def balanced(self) -> bool:
        """True when the re-derived Omega is exactly 1."""
        return self.omega == 1


def _measure(topology, group, data, values):
    comps = components_from_values(data, values)
    base = build_base(topology, data, comps)
    metrics = measure_symmetric(base, group, np.repeat(base.weights, group.order))
    roots = tuple(data.options[c[1]].roots if c[0] == "option" else data.candidates[c[1]].schedule.labels[0]
                  for c, _, _ in comps)
    return base, metrics, roots


def _model(data, balanced: bool, total=None):
    model, v = cp_model.CpModel(), BalanceVars()
    add_options(model, v, data)
    add_candidates(model, v, data)
    add_round_loads(model, v, data)
    if balanced:
        add_balance(model, v, data)
        add_total(model, v, data)
        model.minimize(v.total)
    else:
        add_total(model, v, data, total, total)
        add_max_loads(model, v, data)
        model.minimize(sum(v.z.values()))
    return model, v


def _run(topology, group, family, options, candidates, max_weight, time_limit, seed, num_workers):
    t0 = time.perf_counter()
    if group.topology.n_links != topology.n_links or group.topology.n_vertices != topology.n_vertices:
        raise ScheduleError("the group acts on a different topology")
    data = balance_data(topology, group, options, candidate_columns(group, candidates), max_weight)

    def left():
        return time_limit - (time.perf_counter() - t0)

    common = dict(family=family, rounds=data.n_rounds, seed=seed, group_order=group.order,
                  n_orbits=group.n_link_orbits, chunk_bound=chunk_lower_bound(data, topology.n_links))
    model, v = _model(data, balanced=True)
    out = solve(model, v, seed=seed, time_limit=left(), num_workers=num_workers)
    notes = []
    if out.values:
        base, metrics, roots = _measure(topology, group, data, out.values)
        if metrics.omega != 1:
            notes.append(f"the model claimed balance but the checker measured Omega = {metrics.omega}")
        return BalanceResult(out.status, base=base, weights=tuple(int(w) for w in base.weights),
                             chunks=group.order * int(base.weights.sum()), omega=metrics.omega,
                             seconds=time.perf_counter() - t0, roots=roots, metrics=metrics,
                             notes=tuple(notes), **common)
    if out.status == "infeasible":
        notes.append(f"no balanced {family} family with at most {max_weight} units of weight (proven by CP-SAT)")
    else:
        notes.append(f"no balanced {family} family found within {time_limit:g} s (not proven impossible)")
    best, proven, tried = None, True, 0
    for total in range(1, max_weight + 1):
        if left() <= 0 and total > 1:
            break
        model, v = _model(data, balanced=False, total=total)  # one unit is always tried (>= 1 s)
        fb = solve(model, v, seed=seed, time_limit=max(left(), 1.0 if total == 1 else 0.0), num_workers=num_workers)
        tried, proven = total, proven and fb.status in ("optimal", "infeasible")
        if not fb.values:
            continue
        base, metrics, roots = _measure(topology, group, data, fb.values)
        key = (metrics.omega, int(base.weights.sum()))
        if best is None or key < best[0]:
            best = (key, base, metrics, roots)
    if best is None:
        notes.append(f"fallback found no schedule ({tried} of {max_weight} unit totals tried)")
        return BalanceResult(out.status, base=None, weights=(), chunks=0, omega=None,
                             seconds=time.perf_counter() - t0, notes=tuple(notes), **common)
    _, base, metrics, roots = best
    notes.append(f"fallback: the smallest Omega over 1..{tried} units (each total minimizing the sum of round "
                 f"maxima; {'proven for every total' if proven and tried == max_weight else 'not proven'})")
    return BalanceResult(out.status, base=base, weights=tuple(int(w) for w in base.weights),
                         chunks=group.order * int(base.weights.sum()), omega=metrics.omega,
                         seconds=time.perf_counter() - t0, roots=roots, metrics=metrics, notes=tuple(notes),
                         **common)


def balance_bfs_trees(topology, group, *, roots=(0,), candidates=(), max_weight: int = 16,
                      time_limit: float = 60.0, seed: int = 0, num_workers: int = 1) -> BalanceResult:
    """Weighted BFS trees (``2H`` rounds) whose lift through ``group`` has Omega = 1, fewest chunks.

    Parameters
    ----------
    topology : Topology
        Every vertex must hold data and every link have a reverse.
    group : Group
        A verified group (free action on links).
    roots : sequence of int
        Roots the trees may use (same eccentricity); default vertex 0.
    candidates : sequence of BaseSchedule
        Extra fixed components with the same number of rounds (weights chosen by the model).
    max_weight : int
        Largest number of units (sum of weights) considered.
    time_limit : float
        Seconds for the whole call.
    seed, num_workers : int
        CP-SAT's random seed and workers; one worker makes the result deterministic.

    Returns
    -------
    BalanceResult

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> from synth.symmetry.torus import torus_translations
    >>> t = parse_torus("5x7"); r = balance_bfs_trees(t, torus_translations(t))
    >>> r.status, r.chunks, str(r.omega), r.n_orbits
    ('optimal', 70, '1', 4)
    """
    return _run(topology, group, "trees", tree_options(topology, group, roots), candidates, max_weight, time_limit,
                seed, num_workers)


def balance_exchange_forests(topology, group, *, pairs=None, candidates=(), max_weight: int = 16,
                             time_limit: float = 60.0, seed: int = 0, num_workers: int = 1) -> BalanceResult:
    """Weighted BFS forests plus exchange (``2H - 1`` rounds on even sides) with Omega = 1, fewest chunks.

    ``pairs`` are the adjacent root pairs allowed; by default one per class of adjacent pairs
    under the group, among those of least joint eccentricity
    (:func:`synth.models.balance.data.exchange_pairs`).  Other parameters as in
    :func:`balance_bfs_trees`.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> from synth.symmetry.torus import torus_translations
    >>> t = parse_torus("4x4"); r = balance_exchange_forests(t, torus_translations(t))
    >>> r.status, r.rounds, r.chunks, str(r.omega), r.roots
    ('optimal', 7, 32, '1', ((0, 4), (0, 1)))
    """
    return _run(topology, group, "exchange", forest_options(topology, group, pairs), candidates, max_weight,
                time_limit, seed, num_workers)


def balance_candidates(topology, group, candidates, *, max_weight: int = 16, time_limit: float = 60.0,
                       seed: int = 0, num_workers: int = 1) -> BalanceResult:
    """Integer weights for fixed components (all with the same rounds) so that the lift has Omega = 1.

    This is the hook for families built elsewhere, e.g. depth-bounded (k-hop) trees: every
    component of every given base schedule is a candidate (its own weight is ignored).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> from synth.symmetry.torus import torus_translations_negation
    >>> from synth.schedule.sp import sp_allreduce
    >>> t = parse_torus("3x3"); r = balance_candidates(t, torus_translations_negation(t), [sp_allreduce(t)])
    >>> r.status, r.chunks, str(r.omega)
    ('infeasible', 18, '3/2')
    """
    if not candidates:
        raise ScheduleError("balance_candidates needs at least one candidate schedule")
    return _run(topology, group, "candidates", (), candidates, max_weight, time_limit, seed, num_workers)


def balance(topology, group, family: str = "trees", **kwargs) -> BalanceResult:
    """Dispatch to :func:`balance_bfs_trees`, :func:`balance_exchange_forests` or :func:`balance_candidates`."""
    if family == "trees":
        return balance_bfs_trees(topology, group, **kwargs)
    if family == "exchange":
        return balance_exchange_forests(topology, group, **kwargs)
    if family == "candidates":
        cands = kwargs.pop("candidates", ())
        return balance_candidates(topology, group, cands, **kwargs)
    raise ScheduleError(f"unknown balance family {family!r}; valid: {', '.join(FAMILIES)}")
