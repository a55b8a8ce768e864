"""The layered LP's dual as a certified bound of the layered class (docs/bounds.md section 5).

The load rows' duals of the whole layered LP (:func:`~synth.models.packing.layered.solve_layered`)
become a dual ``pi`` that the checker accepts (:mod:`synth.check.bounds.layered_class`): negatives
clipped, each round scaled to sum to at most 1.  A lifted LP has one load row per link orbit, whose dual
is spread evenly over the orbit's links (:func:`~synth.models.packing.arcs.load_duals`): a dual that is the same
on every link of an orbit, the average of the lifted LP's duals over the group (that LP's dual bounds lifted
schedules only; the average bounds every layered schedule, and gives the same value).  The stored value is
what the checker's formula gives for that ``pi``, never the LP's objective.  The local LP
(:mod:`~synth.models.packing.local`) fixes most trees, so its dual bounds only the schedules that keep them:
its schedules get the dual of the whole LP, solved again for that by an interior point (:func:`whole_lp_dual`),
or no claim beyond :data:`CLASS_LP_ARCS`.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.spec import default_group
>>> from synth.models.packing.layered import layered_arcs, solve_layered
>>> t = parse_torus("4x4"); d = damage(t, parse_failures(t, links=["0-1"]))
>>> sol = solve_layered(layered_arcs(d, default_group(d)))
>>> pi = class_dual(sol)
>>> from synth.check.bounds.layered_class import class_value, layered_distances
>>> abs(class_value(d, pi, layered_distances(d)) - sol.objective) < 1e-6
True
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np

from synth.check.bounds.layered_class import (CLASS_KEY, base_transmissions, class_claim, layered_distances,
                                              layered_violation)
from synth.models.backends.solvers import solve_highs
from synth.models.packing.arcs import load_duals
from synth.models.packing.layered import build_layered
from synth.schedule.data import ALLREDUCE

__all__ = ["class_dual", "valid_dual", "whole_lp_dual", "with_class_bound", "IPM", "CLASS_LP_ARCS"]


#: HiGHS options for the whole LP solved for its dual only: an interior point without crossover (the
#: 16x16 torus with one failed link, 65,408 parent choices: 15 CPU s, against 200 s by simplex); its duals
#: are approximate, and any dual is a valid bound: only the value, re-derived, counts
IPM = {"solver": "ipm", "run_crossover": "off"}
#: parent choices up to which a local-LP schedule still gets the whole LP's dual (measured: docs/bounds.md §5)
CLASS_LP_ARCS = 140_000


def valid_dual(load) -> np.ndarray:
    """A dual the checker accepts from load duals per link (:func:`~synth.models.packing.arcs.load_duals`: the same
    on every link of an orbit, as the checker's lift by the group needs): clipped, rounds summing to <= 1."""
    pi = np.maximum(np.asarray(load, dtype=np.float64), 0.0)
    sums = pi.sum(axis=1, keepdims=True)
    return np.ascontiguousarray(pi / np.maximum(sums, 1.0))


def class_dual(sol) -> np.ndarray | None:
    """``pi`` (``2H x |E|``) from ``sol``'s load duals, valid for the unlifted class; None without duals."""
    if getattr(sol, "load_dual", None) is None:   # the local LP, or another model's solution
        return None
    return valid_dual(sol.load_dual)


def whole_lp_dual(data, time_limit=None) -> tuple:
    """``(pi, seconds)`` from the whole layered LP on ``data`` solved by an interior point for its dual only.

    ``pi`` is None when HiGHS ends without duals.
    """
    model, _, _, M = build_layered(data, free_shares=True)
    sol = solve_highs(model, time_limit=time_limit, relax=True, options=IPM)
    if sol.row_dual is None:
        return None, sol.seconds
    return valid_dual(load_duals(sol.row_dual, M.size, data.group, data.topology.n_links)), sol.seconds


def with_class_bound(cert, sol, progress=lambda _m: None, time_limit=None):
    """``cert`` with the claim ``class_bound`` (a layered allreduce); else ``cert`` unchanged.

    The whole LP's own dual when ``sol`` has one; for the local LP, the whole LP is solved again for its
    dual (up to :data:`CLASS_LP_ARCS` parent choices); beyond, no claim.
    """
    if cert.base.collective != ALLREDUCE or not hasattr(sol, "data") or cert.topology.has_bandwidths:
        return cert   # the class bound counts every link as 1: not a bound with bandwidths
    pi, how = class_dual(sol), f"the whole layered LP's dual ({getattr(sol, 'method', 'simplex')})"
    if pi is None and sol.data.n_arcs > CLASS_LP_ARCS:
        return cert   # no dual to be had: the class test below would cost a pod's schedule in memory for nothing
    t = cert.topology
    D = layered_distances(t)
    if layered_violation(t, D, base_transmissions(cert.base), cert.base.n_components) is not None:
        return cert   # another class's schedule (e.g. more rounds): the bound says nothing about it
    if pi is None:
        progress(f"the whole layered LP ({sol.data.n_arcs:,} parent choices) for its dual: the bound of the class")
        pi, seconds = whole_lp_dual(sol.data, time_limit)
        how = "the whole layered LP's dual (interior point, no crossover)"
        progress(f"the whole layered LP: {'no dual' if pi is None else 'a dual'} in {seconds:.1f} s")
    if pi is None:
        return cert
    claim = class_claim(t, pi, D, cert.elements, Fraction(cert.claims["bandwidth_term"]))
    return replace(cert, claims={**cert.claims, CLASS_KEY: claim}, solver={**cert.solver, "class_dual": how})
