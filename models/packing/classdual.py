"""The layered LP's dual as a certified bound of the layered class (docs/bounds.md section 5).

The load rows' duals of the whole layered LP (:func:`~synth.models.packing.layered.solve_layered`)
become a dual ``pi`` that the checker accepts (:mod:`synth.check.bounds.layered_class`): negatives
clipped, averaged over the group when the LP was lifted (the lifted LP's dual bounds lifted schedules
only; the average bounds every layered schedule, and gives the same value), each round scaled to sum
to at most 1.  The stored value is what the checker's formula gives for that ``pi``, never the LP's
objective.  The local LP (:mod:`~synth.models.packing.local`) fixes most trees, so its dual bounds
nothing about the class: it gets no claim.

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

import numpy as np

from synth.check.bounds.layered_class import CLASS_KEY, class_claim, layered_distances
from synth.schedule.data import ALLREDUCE

__all__ = ["class_dual", "with_class_bound"]


def class_dual(sol) -> np.ndarray | None:
    """``pi`` (``2H x |E|``) from ``sol``'s load duals, valid for the unlifted class; None without duals."""
    if getattr(sol, "load_dual", None) is None:   # the local LP, or another model's solution
        return None
    pi = np.maximum(np.asarray(sol.load_dual, dtype=np.float64), 0.0)
    g = sol.data.group
    if g is not None and g.order > 1:
        img = g.link_images(np.arange(pi.shape[1])).astype(np.int64)     # (G, E)
        pi = pi[:, img].mean(axis=1)
    sums = pi.sum(axis=1, keepdims=True)
    return np.ascontiguousarray(pi / np.maximum(sums, 1.0))


def with_class_bound(cert, sol):
    """``cert`` with the claim ``class_bound`` when ``sol`` is the whole LP with duals (an allreduce); else ``cert``."""
    pi = class_dual(sol)
    if pi is None or cert.base.collective != ALLREDUCE:
        return cert
    t = cert.topology
    claim = class_claim(t, pi, layered_distances(t), cert.elements, int(cert.claims["bandwidth_term"]))
    return replace(cert, claims={**cert.claims, CLASS_KEY: claim})
