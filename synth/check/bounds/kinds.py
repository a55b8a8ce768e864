"""What every checkable k-hop bound returns, and the names of the stored duals' kinds.

A certificate's ``solver.dual_bound`` is a JSON object whose ``"kind"`` says which
re-derivation :func:`synth.check.bounds.khop_dual_bound` runs:

* :data:`KIND` (``"khop-layered-lagrangian"``): a dual of the layered LP
  (:mod:`synth.check.bounds.lagrangian`);
* :data:`CONE_KIND` (``"khop-cone-count"``): the cone-counting bound, from the topology alone
  (:mod:`synth.check.bounds.cone`);
* :data:`STEINER_KIND` (``"khop-terminal-steiner"``): the excess Steiner bound of a few terminals
  (:mod:`synth.check.bounds.steiner`).

Examples
--------
>>> DualBound(bound=4, value=4.0, tol=0.0, rows=4).bound
4
>>> sorted(KINDS)
['khop-cone-count', 'khop-layered-lagrangian', 'khop-terminal-steiner']
>>> DUAL_FIELDS[STEINER_KIND]
('kind', 'k', 'bound', 'terminals')
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DualBound", "KIND", "CONE_KIND", "STEINER_KIND", "KINDS", "DUAL_FIELDS"]

KIND = "khop-layered-lagrangian"
CONE_KIND = "khop-cone-count"
STEINER_KIND = "khop-terminal-steiner"
#: every kind a stored dual may name, in the order error messages list them
KINDS = (KIND, CONE_KIND, STEINER_KIND)
#: the fields a stored dual of each kind may hold: the re-derivation reads these and nothing else
DUAL_FIELDS = {KIND: ("kind", "k", "bound", "alpha", "beta", "lambda", "cuts"),
               CONE_KIND: ("kind", "k", "bound"),
               STEINER_KIND: ("kind", "k", "bound", "terminals")}


@dataclass(frozen=True)
class DualBound:
    """A re-derived bound: ``bound = ceil(value - tol)`` (``value`` the Lagrangian at the stored dual)."""

    bound: int
    value: float
    tol: float
    rows: int          # rows of the full relaxation carrying a nonzero dual

