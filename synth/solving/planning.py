"""One plan per request: which construction runs and why, decided without solving.

:func:`plan` is the solve stage's one dispatch: it picks the planner of the topology's network
family (:data:`PLANNERS`), which checks the options, decides the group and the construction, and
returns a :class:`~synth.solving.request.Plan` whose ``build`` runs exactly that construction
(:func:`synth.solving.solve` does ``plan.build(request, plan)``).  So what ``synth solve --plan``
prints, and the CLI's note that a solve may take up to ``--time-limit``, come from the decision
that the solve itself follows.

Planning solves nothing: it verifies the group (or searches it, on a user graph), reads the k-hop
cache, builds the packing model's arcs, and on a grid or user graph certifies the shortest-path
tree whose balance decides whether the packing model runs.

Examples
--------
>>> from synth.solving.request import SolveRequest
>>> from synth.topology.torus import parse_torus
>>> p = plan(SolveRequest(parse_torus("8x8"), exchange=True))
>>> p.construction, p.algorithms, p.group_name, p.solves
('exchange', ('forest-exchange',), 'gamma', False)
>>> p = plan(SolveRequest(parse_torus("6x4"), depth=2))
>>> p.construction, p.solves, p.time_limit
('khop-family', True, 60.0)
"""

from __future__ import annotations

from synth.solving.graphs import plan_damaged, plan_hyperx, plan_spine_leaf, plan_user
from synth.solving.lattice import plan_lattice
from synth.solving.request import Plan, SolveRequest
from synth.solving.torus import plan_torus
from synth.topology.failures import Damaged
from synth.topology.hyperx import HyperX
from synth.topology.lattice import LatticeTorus
from synth.topology.spineleaf import SpineLeaf
from synth.topology.torus import Torus

__all__ = ["plan", "PLANNERS"]

#: the planner of each network family, in the order they are tried (a damaged network first: it wraps any
#: healthy kind); a topology of none of these types is a user graph (:func:`synth.solving.graphs.plan_user`)
PLANNERS = ((Damaged, plan_damaged), (Torus, plan_torus), (HyperX, plan_hyperx), (SpineLeaf, plan_spine_leaf),
            (LatticeTorus, plan_lattice))


def plan(request: SolveRequest) -> Plan:
    """The plan for ``request`` (module docstring).

    Raises
    ------
    OptionError
        When the options do not fit the topology (the error a solve would raise, before any solve).
    """
    for kind, planner in PLANNERS:
        if isinstance(request.topology, kind):
            return planner(request)
    return plan_user(request)
