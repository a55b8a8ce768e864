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

from synth.errors import OptionError, SynthError
from synth.schedule.data import ALLREDUCE
from synth.schedule.sp import sp_allreduce
from synth.schedule.user import shortest_path_tree
from synth.symmetry.spec import default_group
from synth.topology.torus import Torus

__all__ = ["solve_packed", "class_bound_note", "healthy_reference", "DEFAULT_UNITS", "FULL_LP_ARCS", "LOCAL_RADIUS",
           "FREE_SHARES_ARCS"]

#: units per owner in the rounding: 1,024 keeps the certified term within about 0.1 % of the LP's
DEFAULT_UNITS = 1024
#: parent choices up to which the whole layered LP is solved (an 8x8 torus has about 4,000 and a 16x16 one
#: 65,000 with one failed link, 129,024 with 8: beyond 20,000 by an interior point with crossover, 28-30 CPU s
#: there, where the simplex took 200 s); beyond (a 32x32 torus: a million), the local LP around the failures
FULL_LP_ARCS = 140_000
LOCAL_RADIUS = 3
#: parent choices up to which the local LP keeps the shares free (every load row of the LP is then back:
#: 9 s on a 16x16 torus with one failure, 75.5 % of the bound against 75.1 % with equal shares; on 16x16
#: with 8 failed links, 129,024 choices, HiGHS ended without a solution after 46 s)
FREE_SHARES_ARCS = 100_000


def healthy_reference(topology):
    """Parent fractions of the healthy network's own schedule (SP-allreduce on tori, a BFS tree lifted by the
    built-in group elsewhere), or None when there is none to start from."""
    from synth.models.packing import reference_fractions   # a model: loaded with the solvers, on demand

    healthy = getattr(topology, "healthy", None)
    group = None if healthy is None else default_group(healthy)
    if group is None or healthy.n_compute != healthy.n_vertices:
        return None
    base = sp_allreduce(healthy) if isinstance(healthy, Torus) else shortest_path_tree(healthy)
    try:
        return reference_fractions(base, group)
    except SynthError:
        return None


def _quiet(_message):
    pass


def solve_packed(topology, group=None, elements=None, mode="auto", progress=_quiet, collective=ALLREDUCE,
                 reason="", time_limit=None, depth=None):
    """Pack layered trees on ``topology`` (lifted by ``group``; default: the built-in or residual group).

    Returns ``(certificate, depth, notes)``; :func:`synth.solving.solve` wraps them in its result.
    """
    # the models load on demand: they pull in the solvers, which the other constructions never need
    from synth.models.packing import layered_arcs, pack
    from synth.models.packing.layered import SIMPLEX_ARCS

    if group is None:
        group = default_group(topology)
    H = layered_arcs(topology, group).H   # cheap beside the LP: one BFS per represented owner
    if depth is not None and depth < H:
        raise OptionError(f"depth {depth} is below the layered trees' depth {H} on {topology.name}: the "
                          "packing model has no depth-bounded variant yet")
    order = 1 if group is None else group.order
    notes = [f"{reason + ': ' if reason else ''}no symmetry balances this network; the packing model chooses "
             f"trees, owners and shares (layered LP, group of order {order})"]
    data = layered_arcs(topology, group)
    reference = healthy_reference(topology) if data.n_arcs > FULL_LP_ARCS else None
    free = reference is None or data.n_arcs <= FREE_SHARES_ARCS
    try:
        try:
            res = pack(topology, group, DEFAULT_UNITS, free_shares=free, time_limit=time_limit, mode=mode,
                       progress=progress, elements=elements, collective=collective, reference=reference,
                       radius=LOCAL_RADIUS)
        except SynthError:
            if reference is not None or data.n_arcs <= SIMPLEX_ARCS:
                raise
            reference = healthy_reference(topology)   # the whole LP ended without a solution (a time limit)
            if reference is None:
                raise
            progress("the whole layered LP found no solution; the local LP instead")
            free = data.n_arcs <= FREE_SHARES_ARCS
            res = pack(topology, group, DEFAULT_UNITS, free_shares=free, time_limit=time_limit, mode=mode,
                       progress=progress, elements=elements, collective=collective, reference=reference,
                       radius=LOCAL_RADIUS, class_bound=False)   # its dual would need the LP that just failed
    except SynthError as exc:
        raise SynthError(f"collective {collective}: {exc}" if collective != ALLREDUCE else str(exc)) from None
    sol, cert = res.solution, res.certificate
    if reference is not None:   # the shares as solved (free ones fall back to equal when that LP fails)
        notes.append(f"{data.n_arcs:,} parent choices: the LP changes the healthy trees only within "
                     f"{LOCAL_RADIUS} hops of a failure and where they were lost, with "
                     f"{'free' if cert.solver.get('free_shares') else 'equal'} shares")
    if sol.status != "optimal":
        notes.append(f"layered LP {sol.status} (time limit): its solution is feasible, not proven best")
    if collective == ALLREDUCE:
        num, _, den = cert.claims["bandwidth_fraction"].partition("/")
        notes.append(f"bandwidth term {cert.claims['bandwidth_term']} for {cert.elements} elements: "
                     f"{100 * int(num) / int(den or 1):.2f} % of the certified bound (the "
                     + ("layered LP reaches " if reference is None else "local LP, some trees fixed, reaches ")
                     + f"{100 * sol.fraction:.2f} % of the volume bound"
                     + (": the best of its class)" if reference is None else ")"))
        notes.append(class_bound_note(cert))
    return cert, H, notes


def class_bound_note(cert) -> str:
    """What the certificate says about the layered class's bound (docs/bounds.md section 5), or why it has none."""
    claim = cert.claims.get("class_bound")
    if claim is None:
        return ("no class bound: the local LP keeps most healthy trees fixed, so its dual bounds only the "
                "schedules that keep them, and the whole layered LP was not solved for its dual (too large, "
                "or out of time)")
    return (f"bound of the layered class (from {cert.solver.get('class_dual', 'a dual')}, re-derived by synth "
            f"check): {claim['value']:.6g} elements; this schedule reaches {100 * claim['fraction']:.2f} % of it "
            "(it bounds layered schedules only)")
