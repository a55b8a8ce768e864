"""From the layered LP's fractions to an integer schedule the checker executes.

Each owner ``r`` gets ``n_r`` units (its share ``w_r`` rounded, largest remainders, over ``K`` units
per owner on average); each vertex splits its owner's ``n_r`` units among its parents in proportion
to ``y`` (largest remainders again), taking the units in order: units ``0..c_1-1`` go to the first
parent, the next ``c_2`` to the second, and so on.  Unit ``j`` then has one parent per vertex: a
shortest-path tree.  Consecutive units with the same tree form one component whose weight is their
count, so an owner has at most ``n_r`` components and usually far fewer.  The rounds are those of the
LP (a vertex at distance ``d`` reduces in round ``H - d + 1`` and receives in round ``H + d``).

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

import numpy as np

from synth.check.claims import certify
from synth.errors import SynthError
from synth.schedule.collective import collective_half
from synth.schedule.data import ALLREDUCE, COPY, REDUCE, BaseSchedule
from synth.schedule.weights import largest_remainder
from synth.models.packing.core import expand, packed_base, split_units, unit_cuts
from synth.models.packing.layered import LayeredSolution, layered_arcs, solve_layered
from synth.models.packing.local import solve_local
from synth.models.packing.classdual import with_class_bound

__all__ = ["PackResult", "pack", "round_schedule"]


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


def round_schedule(sol: LayeredSolution, units: int = 1024) -> BaseSchedule:
    """The integer schedule of ``sol`` with about ``units`` units per owner (module docstring)."""
    d = sol.data
    t, H, V = d.topology, d.H, d.topology.n_vertices
    n_root = largest_remainder(sol.w, units * d.n_roots)
    lo, hi = split_units(n_root, d.root, d.child, d.parent, sol.y, V)   # unit range [lo, hi) of each arc
    cuts = unit_cuts(n_root, [(d.root, hi)])
    arc, comp = expand(cuts, d.root, lo, hi)
    dep = d.depth[arc]
    labels = tuple(f"layered tree of owner {int(d.roots[r])}, units {int(u)}..{int(u + w - 1)} of {int(n_root[r])}"
                   for r, u, w in zip(cuts.root.tolist(), cuts.first.tolist(), cuts.weight.tolist()))
    return packed_base(t, 2 * H, np.r_[comp, comp], np.r_[H - dep + 1, H + dep], np.r_[d.child[arc], d.parent[arc]],
                       np.r_[d.parent[arc], d.child[arc]], np.r_[np.full(arc.size, REDUCE), np.full(arc.size, COPY)],
                       np.r_[d.up[arc], d.down[arc]], cuts.weight, labels)


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
