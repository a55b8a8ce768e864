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
from synth.schedule.collective import collective_half
from synth.schedule.data import ALLREDUCE, COPY, REDUCE, BaseSchedule
from synth.models.packing.layered import LayeredSolution, layered_arcs, solve_layered

__all__ = ["PackResult", "pack", "round_schedule", "largest_remainder"]


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


def largest_remainder(values, total: int) -> np.ndarray:
    """Nonnegative integers summing to ``total``, each within 1 of ``values * total / sum(values)``.

    >>> largest_remainder([0.5, 0.3, 0.2], 4).tolist()
    [2, 1, 1]
    """
    v = np.maximum(np.asarray(values, dtype=np.float64), 0.0)
    s = v.sum()
    if total == 0 or s <= 0:
        out = np.zeros(v.size, dtype=np.int64)
        if total:
            out[0] = total
        return out
    exact = v * (total / s)
    out = np.floor(exact + 1e-9).astype(np.int64)
    rest = total - int(out.sum())
    if rest > 0:
        order = np.lexsort((np.arange(v.size), -(exact - out)))
        out[order[:rest]] += 1
    elif rest < 0:
        order = np.lexsort((np.arange(v.size), exact - out))
        for i in order:
            if rest == 0:
                break
            take = min(int(out[i]), -rest)
            out[i] -= take
            rest += take
    return out


def round_schedule(sol: LayeredSolution, units: int = 1024) -> BaseSchedule:
    """The integer schedule of ``sol`` with about ``units`` units per owner (module docstring)."""
    d = sol.data
    t, H, V = d.topology, d.H, d.topology.n_vertices
    n_root = largest_remainder(sol.w, units * d.n_roots)
    key = d.root * V + d.child
    order = np.lexsort((d.parent, key))
    comp_rows, weights, labels = [], [], []
    cols = {k: [] for k in ("component", "round", "src", "dst", "op", "link")}
    starts = np.flatnonzero(np.r_[True, key[order][1:] != key[order][:-1]])
    bounds = np.r_[starts, order.size]
    for i, r in enumerate(d.roots.tolist()):
        n = int(n_root[i])
        if n == 0:
            continue
        # unit -> parent arc, per child of this root
        groups = [order[bounds[g]:bounds[g + 1]] for g in np.flatnonzero(d.root[order[starts]] == i)]
        cuts = {0, n}
        assign = []
        for arcs in groups:
            counts = largest_remainder(sol.y[arcs], n)
            ends = np.cumsum(counts)
            cuts.update(ends[:-1].tolist())
            assign.append((arcs, ends))
        cuts = sorted(cuts)
        for a, b in zip(cuts[:-1], cuts[1:]):
            c = len(weights)
            weights.append(b - a)
            labels.append(f"layered tree of owner {r}, units {a}..{b - 1} of {n}")
            for arcs, ends in assign:
                arc = int(arcs[int(np.searchsorted(ends, a, side="right"))])
                dep = int(d.depth[arc])
                for rnd, src, dst, op, link in ((H - dep + 1, d.child[arc], d.parent[arc], REDUCE, d.up[arc]),
                                                (H + dep, d.parent[arc], d.child[arc], COPY, d.down[arc])):
                    for name, value in zip(cols, (c, rnd, src, dst, op, link)):
                        cols[name].append(int(value))
    arr = {k: np.asarray(v, dtype=np.int64) for k, v in cols.items()}
    order = np.lexsort((arr["dst"], arr["src"], arr["component"], arr["round"]))
    arr = {k: v[order] for k, v in arr.items()}
    n = order.size
    return BaseSchedule(t, 2 * H, arr["component"], arr["round"], arr["src"], arr["dst"], arr["op"],
                        np.arange(n + 1), arr["link"], np.asarray(weights), tuple(labels))


def pack(t, group=None, units: int = 1024, free_shares: bool = True, time_limit=None, mode="auto",
         progress=lambda _m: None, elements=None, collective=ALLREDUCE) -> PackResult:
    """Solve the layered LP on ``t`` (lifted by ``group``), round it and certify the schedule.

    ``collective``: certify the reduce-scatter or allgather half instead (the trees reduce to their
    owners in rounds ``1..H`` and copy back after).
    """
    t0 = time.monotonic()
    data = layered_arcs(t, group)
    progress(f"layered LP: {data.n_arcs:,} parent choices of {data.n_roots} owner(s), {2 * data.H} rounds")
    sol = solve_layered(data, free_shares, time_limit=time_limit)
    progress(f"layered LP {sol.status}: {100 * sol.fraction:.1f} % of the volume bound; rounding to "
             f"{units} units per owner")
    base = collective_half(round_schedule(sol, units), collective)
    solver = {"model": "synth.models.packing", "status": sol.status, "lp_objective": round(sol.objective, 9),
              "lp_fraction_of_volume_bound": round(sol.fraction, 6), "units_per_owner": units,
              "free_shares": free_shares, "seconds": round(time.monotonic() - t0, 3),
              "meaning": "solver claims, not re-derived: the layered LP's value per element (the least bandwidth "
                         "term of a schedule of its class: shortest-path trees layered by distance, 2H rounds) "
                         "and its share of the volume bound; the schedule's own bandwidth term and bound are "
                         "claims that synth check re-derives"}
    progress(f"checking the packed schedule ({base.n_transmissions * (group.order if group else 1):,} "
             "transmissions)")
    cert = certify(base, group, elements, mode=mode, solver=solver,
                   provenance={"algorithm": "layered-packing", "group": None if group is None else group.name,
                               "seed": None})
    return PackResult(cert, sol, units, time.monotonic() - t0)
