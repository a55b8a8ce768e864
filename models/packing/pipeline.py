"""The layered packing pipeline: solve the layered LP and round it.

:func:`pack` solves the layered LP (:mod:`~synth.models.packing.layered`, or only near the failures,
:mod:`~synth.models.packing.local`) and rounds it (:func:`~synth.models.packing.rounding.round_schedule`);
the schedule is returned uncertified (:class:`~synth.models.packing.result.Packed`): the solve stage
certifies it (:func:`synth.solving.packing.certify_packed`) and adds the bound of the layered class
(:mod:`~synth.models.packing.classdual`).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.spec import default_group
>>> t = parse_torus("4x4"); d = damage(t, parse_failures(t, nodes=["5"]))
>>> from synth.models.packing.layered import layered_arcs
>>> r = pack(layered_arcs(d, default_group(d)), units=4)
>>> r.base.n_rounds <= 2 * r.solution.data.H, r.lp_fraction > 0.7
(True, True)
"""

from __future__ import annotations

import time

from synth.errors import SynthError
from synth.models.packing.layered import solve_layered
from synth.models.packing.local import solve_local
from synth.models.packing.result import Packed
from synth.models.packing.region import TreeReference
from synth.models.packing.rounding import round_schedule
from synth.models.packing.tree_rounding import round_on_trees

__all__ = ["pack"]


def pack(data, units: int = 1024, free_shares: bool = True, time_limit=None, progress=lambda _m: None,
         reference=None, radius=3, on_trees: bool = False) -> Packed:
    """Solve the layered LP over the arcs ``data`` (:func:`layered_arcs` of a topology and group) and round it.

    Returns the integer schedule, uncertified (:class:`~synth.models.packing.result.Packed`: the solve
    stage certifies it, :func:`synth.solving.packing.certify_packed`).  ``reference``: the parent fractions
    of a healthy schedule (:func:`synth.models.packing.local.reference_fractions`); the LP then changes only
    the pairs within ``radius`` of a failure or no longer served by it
    (:func:`synth.models.packing.local.solve_local`; ``free_shares`` there too).  ``on_trees``, with a
    :class:`~synth.models.packing.region.TreeReference`: rounded onto the healthy trees
    (:func:`~synth.models.packing.tree_rounding.round_on_trees`), the result carrying the writer's ``tree_images``.
    """
    t0 = time.monotonic()
    progress(f"layered LP: {data.n_arcs:,} parent choices of {data.n_roots} owner(s), {2 * data.H} rounds"
             + ("" if reference is None else f"; only those within {radius} hops of a failure or lost are free"))
    if reference is None:
        sol = solve_layered(data, free_shares, time_limit=time_limit)
    else:
        try:
            sol = solve_local(data, reference, radius, time_limit=time_limit, free_shares=free_shares)
        except SynthError:
            if not free_shares:
                raise
            # the free-share LP carries every load row: when HiGHS ends without a solution (seen once, 16x16
            # with 8 failed links, status unknown), the equal-share LP, much smaller, still gives a schedule
            progress("the local LP with free shares found no solution; equal shares instead")
            free_shares = False
            sol = solve_local(data, reference, radius, time_limit=time_limit)
    progress(f"layered LP {sol.status}: {100 * sol.fraction:.1f} % of the volume bound; rounding to "
             f"{units} units per owner")
    images = None
    if on_trees and isinstance(reference, TreeReference):
        base, images = round_on_trees(sol, reference, units)
    else:
        base = round_schedule(sol, units)
    claims = {"model": "synth.models.packing", "lp_status": sol.status, "lp_objective": round(sol.objective, 9),
              "lp_fraction_of_volume_bound": round(sol.fraction, 6), "units_per_owner": units,
              "free_shares": free_shares, "lp": "layered" if reference is None else f"layered, local (radius {radius})",
              "seconds": round(time.monotonic() - t0, 3),
              "meaning": "solver claims, not re-derived: the layered LP's value per element (the least bandwidth "
                         "term of a schedule of its class: shortest-path trees layered by distance, 2H rounds) "
                         "and its share of the volume bound; the schedule's own bandwidth term and bound are "
                         "claims that synth check re-derives"}
    return Packed(base, data.group, claims, "layered-packing", sol.status, sol.fraction, sol, units,
                  time.monotonic() - t0, images)
