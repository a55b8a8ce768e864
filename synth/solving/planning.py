"""One plan per request: which construction runs and why, decided without solving.

:func:`plan` is the solve stage's one dispatch: it picks the planner of the topology's network
family (:data:`PLANNERS`, keyed by the ``solve_path`` of the topology's row in the table of network kinds,
:func:`synth.topology.kinds.kind_of`), which checks the options, decides the group and the construction, and
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

from synth.solving.candidates import plan_by_size, without_size
from synth.solving.graphs import plan_damaged, plan_hyperx, plan_spine_leaf, plan_user
from synth.solving.lattice import plan_lattice
from synth.solving.request import Plan, SolveRequest
from synth.solving.torus import plan_torus
from synth.topology.kinds import kind_of

__all__ = ["plan", "PLANNERS"]

#: the planner of each solve path of the table of network kinds (:data:`synth.topology.kinds.KINDS`): a
#: damaged network of any kind is packed; a plain graph is a user graph
PLANNERS = {"packing": plan_damaged, "torus": plan_torus, "hyperx": plan_hyperx, "spineleaf": plan_spine_leaf,
            "lattice": plan_lattice, "user": plan_user}


def plan(request: SolveRequest) -> Plan:
    """The plan for ``request`` (module docstring).

    Raises
    ------
    OptionError
        When the options do not fit the topology (the error a solve would raise, before any solve).

    With ``size`` (bytes) the plan ranks candidates by their time at that size
    (:func:`synth.solving.candidates.plan_by_size`); an equal-sided healthy torus has its depth sweep
    instead (:func:`synth.solving.by_size.choose_by_size`).
    """
    if request.size is not None:   # by message size: the candidates, beside what a solve without it builds
        return plan_by_size(request, plan(without_size(request)))
    return PLANNERS[kind_of(request.topology).solve_path](request)
