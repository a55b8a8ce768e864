"""The solve of a graph that symmetry cannot balance: the packing model of :mod:`synth.models.packing`.

:func:`solve_packed` is what :func:`synth.solving.solve` calls for a damaged topology (failed links or
chips, :mod:`synth.topology.failures`) and for a user graph whose group leaves a shortest-path tree
unbalanced: the layered LP chooses owners' shares and shortest-path parents, lifted by whatever
symmetry remains (the residual group), and its integer rounding is certified like any schedule.
The notes say why this path was taken, the LP's value against the volume bound (the best of the
layered class) and what the certified schedule reaches.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> t = parse_torus("4x4"); d = damage(t, parse_failures(t, links=["0-1"]))
>>> cert, depth, notes = solve_packed(d, reason="1 failed link")
>>> cert.provenance["algorithm"], depth
('layered-packing', 4)
>>> notes[0]
'1 failed link: no symmetry balances this network; the packing model chooses trees, owners and shares (layered LP, group of order 2)'
"""

from __future__ import annotations

from synth.check.claims import certify
from synth.errors import OptionError, SynthError
from synth.schedule.collective import collective_half
from synth.schedule.data import ALLREDUCE
from synth.symmetry.spec import default_group

__all__ = ["solve_packed", "DEFAULT_UNITS"]

#: units per owner in the rounding: 1,024 keeps the certified term within about 0.1 % of the LP's
DEFAULT_UNITS = 1024


def _quiet(_message):
    pass


def solve_packed(topology, group=None, elements=None, mode="auto", progress=_quiet, collective=ALLREDUCE,
                 reason="", time_limit=None, depth=None):
    """Pack layered trees on ``topology`` (lifted by ``group``; default: the built-in or residual group).

    Returns ``(certificate, depth, notes)``; :func:`synth.solving.solve` wraps them in its result.
    """
    # the models load on demand: they pull in the solvers, which the other constructions never need
    from synth.models.packing import layered_arcs, round_schedule, solve_layered

    if group is None:
        group = default_group(topology)
    data = layered_arcs(topology, group)
    if depth is not None and depth < data.H:
        raise OptionError(f"depth {depth} is below the layered trees' depth {data.H} on {topology.name}: the "
                          "packing model has no depth-bounded variant yet")
    order = 1 if group is None else group.order
    notes = [f"{reason + ': ' if reason else ''}no symmetry balances this network; the packing model chooses "
             f"trees, owners and shares (layered LP, group of order {order})"]
    progress(f"layered LP: {data.n_arcs:,} parent choices of {data.n_roots} owner(s), {2 * data.H} rounds")
    sol = solve_layered(data, time_limit=time_limit)
    if sol.status != "optimal":
        notes.append(f"layered LP {sol.status} (time limit): its solution is feasible, not proven best")
    progress(f"layered LP {sol.status}: {100 * sol.fraction:.1f} % of the volume bound")
    base = round_schedule(sol, DEFAULT_UNITS)
    solver = {"model": "synth.models.packing", "status": sol.status, "lp_objective": round(sol.objective, 9),
              "lp_fraction_of_volume_bound": round(sol.fraction, 6), "units_per_owner": DEFAULT_UNITS,
              "seconds": round(sol.seconds, 3),
              "meaning": "solver claims, not re-derived: the layered LP's value per element (the least bandwidth "
                         "term of a schedule of its class: shortest-path trees layered by distance, 2H rounds) and "
                         "its share of the volume bound; bandwidth_term and bandwidth_lower_bound are claims "
                         "synth check re-derives"}
    progress(f"checking the packed schedule ({base.n_transmissions * order:,} transmissions)")
    try:
        half = collective_half(base, collective)
    except SynthError as exc:
        raise SynthError(f"collective {collective}: {exc}") from None
    cert = certify(half, group, elements, mode=mode, solver=solver,
                   provenance={"algorithm": "layered-packing", "group": None if group is None else group.name,
                               "seed": None})
    if collective == ALLREDUCE:
        got = cert.claims["bandwidth_fraction"]
        notes.append(f"bandwidth term {cert.claims['bandwidth_term']} for {cert.elements} elements: "
                     f"{100 * _value(got):.2f} % of the certified bound (the layered LP reaches "
                     f"{100 * sol.fraction:.2f} % of the volume bound: the best of its class)")
    return cert, data.H, notes


def _value(fraction: str) -> float:
    num, _, den = fraction.partition("/")
    return int(num) / int(den or 1)
