"""The layered packing pipeline: solve the layered LP, round it, certify the schedule.

:func:`pack` solves the layered LP (:mod:`~synth.models.packing.layered`, or only near the failures,
:mod:`~synth.models.packing.local`), rounds it (:func:`~synth.models.packing.rounding.round_schedule`),
certifies the schedule and, on request, adds the bound of the layered class
(:mod:`~synth.models.packing.classdual`); :class:`PackResult` carries what the caller reports.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.spec import default_group
>>> t = parse_torus("4x4"); d = damage(t, parse_failures(t, nodes=["5"]))
>>> r = pack(d, default_group(d), units=4)
>>> r.certificate.claims["rounds"] <= 2 * r.solution.data.H, r.lp_fraction > 0.7
(True, True)
>>> float(eval(r.certificate.claims["bandwidth_fraction"])) > 0.6
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from synth.check.claims import certify
from synth.errors import SynthError
from synth.schedule.collective import collective_half
from synth.schedule.data import ALLREDUCE
from synth.models.packing.layered import LayeredSolution, layered_arcs, solve_layered
from synth.models.packing.local import solve_local
from synth.models.packing.classdual import with_class_bound
from synth.models.packing.rounding import round_schedule

__all__ = ["PackResult", "pack"]


@dataclass(frozen=True, eq=False)
class PackResult:
    """A certified packed schedule, the LP behind it and what it reached."""

    certificate: object
    solution: LayeredSolution
    units: int
    seconds: float

    @property
    def lp_fraction(self) -> float:
        return self.solution.fraction


def pack(t, group=None, units: int = 1024, free_shares: bool = True, time_limit=None, mode="auto",
         progress=lambda _m: None, elements=None, collective=ALLREDUCE, reference=None, radius=3,
         class_bound=True, data=None) -> PackResult:
    """Solve the layered LP on ``t`` (lifted by ``group``), round it and certify the schedule.

    ``collective``: certify the reduce-scatter or allgather half instead (the trees reduce to their
    owners in rounds ``1..H`` and copy back after).  ``reference``: the parent fractions of a healthy
    schedule (:func:`synth.models.packing.local.reference_fractions`); the LP then changes only the
    pairs within ``radius`` of a failure or no longer served by it
    (:func:`synth.models.packing.local.solve_local`; ``free_shares`` there too).  ``class_bound``: claim
    the bound of the layered class (:func:`synth.models.packing.classdual.with_class_bound`; for the local
    LP it solves the whole LP again).  ``data``: the arcs of :func:`layered_arcs` ``(t, group)`` when the
    caller has them already.
    """
    t0 = time.monotonic()
    data = layered_arcs(t, group) if data is None else data
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
    base = collective_half(round_schedule(sol, units), collective)
    solver = {"model": "synth.models.packing", "lp_status": sol.status, "lp_objective": round(sol.objective, 9),
              "lp_fraction_of_volume_bound": round(sol.fraction, 6), "units_per_owner": units,
              "free_shares": free_shares, "lp": "layered" if reference is None else f"layered, local (radius {radius})",
              "seconds": round(time.monotonic() - t0, 3),
              "meaning": "solver claims, not re-derived: the layered LP's value per element (the least bandwidth "
                         "term of a schedule of its class: shortest-path trees layered by distance, 2H rounds) "
                         "and its share of the volume bound; the schedule's own bandwidth term and bound are "
                         "claims that synth check re-derives"}
    progress(f"checking the packed schedule ({base.n_transmissions * (group.order if group else 1):,} "
             "transmissions)")
    cert = certify(base, group, elements, mode=mode, solver=solver,
                   provenance={"algorithm": "layered-packing", "group": None if group is None else group.name,
                               "seed": None})
    if class_bound:   # the bound of the layered class (docs/bounds.md section 5)
        cert = with_class_bound(cert, sol, progress, time_limit)
    return PackResult(cert, sol, units, time.monotonic() - t0)
