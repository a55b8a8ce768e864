"""The timed trees' schedule (:mod:`synth.models.packing.timed`): the master LP's weights made integer.

:func:`round_timed` spreads ``units`` per owner over the columns by largest remainders; each column with a
unit is one weighted component whose transmissions are its tree's routes at their send rounds.
:func:`pack_timed` returns that schedule with the solver's claims, uncertified, for the solve stage to certify.

Examples
--------
>>> from synth.models.packing.timed import solve_timed
>>> from synth.symmetry.spec import default_group
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.topology.torus import parse_torus
>>> d = damage(parse_torus("4x4"), parse_failures(parse_torus("4x4"), links=["0-1"]))
>>> sol = solve_timed(d, default_group(d), R=5, time_limit=20)
>>> res = pack_timed(sol, units=64)
>>> res.algorithm, res.lp_fraction == sol.fraction
('timed-packing', True)
"""

from __future__ import annotations

import time

import numpy as np

from synth.models.packing.result import Packed
from synth.models.packing.rounding import packed_base
from synth.models.packing.timed import MODEL, TimedSolution
from synth.schedule.data import COPY, REDUCE, BaseSchedule
from synth.schedule.weights import largest_remainder

__all__ = ["round_timed", "pack_timed"]


def round_timed(sol: TimedSolution, units: int = 1024) -> BaseSchedule:
    """The integer schedule: ``units`` per owner on average spread over the columns by largest remainders;
    each column with a unit is one component in its window, or where the columns are pairs
    (``sol.mirror``) two components, in its window and the mirrored one, unless its window is centred
    (empty rounds removed)."""
    sp, R = sol.space, sol.R
    n = largest_remainder(sol.x, units * sol.roots.size)
    keep = np.flatnonzero(n > 0)
    placed = []                                     # (column, offset, weight) per component
    pairs = sol.mirror and bool(np.any(sol.window[keep, 1] != R - sol.window[keep, 0]))
    for j in keep.tolist():
        Rj, o = (int(z) for z in sol.window[j])
        mirror = 2 * (R - Rj) - o
        if not pairs or mirror == o:
            placed.append((j, o, int(n[j]) * (2 if pairs else 1)))
        else:
            placed += [(j, o, int(n[j])), (j, mirror, int(n[j]))]
    rows = [[] for _ in range(6)]
    for c, (j, o, _w) in enumerate(placed):
        L, pl, (up, down), Rj = sol.labels[j], sol.plink[j], sol.routes[j], int(sol.window[j, 0])
        v = np.flatnonzero(pl >= 0)
        u = sp.arc_dst[pl[v]]
        for part, new in zip(rows, (np.full(2 * v.size, c), np.r_[L[v], 2 * Rj + 1 - L[v]] + o, np.r_[v, u], np.r_[u, v],
                                    np.r_[np.full(v.size, REDUCE), np.full(v.size, COPY)],
                                    sp.route_links[np.r_[up[v], down[v]]])):
            part.append(new)
    comp, rnd, src, dst, op, links = (np.concatenate(p) for p in rows)
    used, rnd = np.unique(rnd, return_inverse=True)
    weights = np.array([w for _j, _o, w in placed], dtype=np.int64)
    labels = tuple(f"timed tree of owner {int(sol.roots[sol.root[j]])}, column {j}, {w} units"
                   + (f", rounds {o + 1}..{o + 2 * int(sol.window[j, 0])}" if int(sol.window[j, 0]) != R else "")
                   for j, o, w in placed)
    return packed_base(sp.topology, int(used.size), (comp, rnd + 1, src, dst, op, links), weights, labels)


def pack_timed(sol: TimedSolution, units: int = 1024) -> Packed:
    """Round ``sol``: the schedule with the solver claims, uncertified
    (:class:`~synth.models.packing.result.Packed`)."""
    t0 = time.monotonic()
    base = round_timed(sol, units)
    lp_status = sol.status if sol.status.startswith("optimal") else f"heuristic: {sol.status}"
    solver = {"model": MODEL, "lp_status": lp_status, "lp_objective": round(sol.objective, 9),
              "lp_fraction_of_volume_bound": round(sol.fraction, 6), "reduce_rounds": sol.R,
              "iterations": sol.iterations, "columns": int(sol.x.size), "units_per_owner": units,
              "layered_lp_fraction": round(sol.layered.fraction, 6), "seconds": round(sol.seconds, 3),
              "meaning": "solver claims, not re-derived: the master LP's value per element over the timed trees "
                         "found by a heuristic pricing (not a bound for the class) and its share of the volume "
                         "bound; the schedule's own bandwidth term and bound are claims that synth check "
                         "re-derives"}
    return Packed(base, sol.group, solver, "timed-packing", lp_status, sol.fraction, sol, units,
                  time.monotonic() - t0 + sol.seconds)
