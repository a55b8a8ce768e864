"""Minimum-weight k-hop trees: W, lower bound, gap and seconds per instance.

Each instance is solved twice in this process: by the iterated local search alone
(``solver="heuristic"``, the baseline) and by the full pipeline (heuristic, LP
bound, reduced-cost fixing, MIP, window LNS).  The tree of the full solve is certified under
Γ, so the printed ``W``, depth and rounds are re-derived by the checker, not taken
from the solver; the bound is the solver's claim with its method.  Columns:

``W``       weight of the best tree (checker), ``LB`` the lower bound, ``gap`` ``(W - LB) / W``,
``s``       wall seconds of the full solve (``limit`` is its time limit),
``W/Wh``    the full solve's weight over the heuristic-only weight (baseline, same process),
``W/(p-1)`` Θ of the lifted schedule.

Instance sets (``--set``):

``issue``   the targets of the k-hop study: 8x8 k = 2..7, 16x16 k = 2..15, 32x32 k = 6, 9, 11, 12, 20, 22,
            64x64 k = 10, 11, 14 (hours at the default limit of 600 s; run in the background);
``table1``  the depths of the paper's Table 1 below H: 8x8 k = 1, 3, 5; 16x16 k = 3, 4, 7, 15;
            32x32 k = 6, 9, 11, 12, 20, 22; 64x64 k = 10, 11, 14;
``quick``   8x8 k = 2..7 and 16x16 k = 3 (a few minutes at ``--time-limit 60``).

Run: ``python bench/khop/solve.py [--set quick|table1|issue] [--only 16x16:3,32x32:11]
[--time-limit 600] [--seed 0] [--json [rows.jsonl]]``.
"""

from __future__ import annotations

import time

from _common import Col, Ratio, Table, log, parse_args, parser

from synth.check.claims import certify
from synth.symmetry.torus import torus_gamma
from synth.models.khop import solve_khop
from synth.schedule import tree_schedule
from synth.topology.torus import parse_torus

SETS = {
    "quick": [("8x8", k) for k in range(2, 8)] + [("16x16", 3)],
    "table1": [("8x8", k) for k in (1, 3, 5)] + [("16x16", k) for k in (3, 4, 7, 15)]
    + [("32x32", k) for k in (6, 9, 11, 12, 20, 22)] + [("64x64", k) for k in (10, 11, 14)],
    "issue": [("8x8", k) for k in range(2, 8)] + [("16x16", k) for k in range(2, 16)]
    + [("32x32", k) for k in (6, 9, 11, 12, 20, 22)] + [("64x64", k) for k in (10, 11, 14)],
}

COLUMNS = [Col("torus", "shape", ">6"), Col("k", fmt=">3"), Col("status", fmt=">9"), Col("W", fmt=">6"),
           Col("LB", fmt=">9.1f"), Col("gap %", "gap_pct", ">6.2f"), Col("s", "seconds", ">6.1f"),
           Col("limit", fmt=">5g"), Col("rounds", fmt=">6"), Ratio("W/Wh", "W", "W_heuristic", fmt=">6.3f"),
           Col("W/(p-1)", "theta", ">7.3f")]


def run_one(shape, k, time_limit, seed):
    """Solve one instance (heuristic baseline, then the full pipeline) and certify the tree."""
    t = parse_torus(shape)
    t0 = time.monotonic()
    base = solve_khop(t, k, time_limit=time_limit, seed=seed, solver="heuristic")
    t_heur = time.monotonic() - t0
    t0 = time.monotonic()
    r = solve_khop(t, k, time_limit=time_limit, seed=seed)
    seconds = time.monotonic() - t0
    sched = tree_schedule(t, r.parent, 0, route=t.route)
    claims = certify(sched, torus_gamma(t)).claims
    weight = int(claims["weight"])
    if weight != r.weight:
        raise SystemExit(f"{shape} k={k}: the checker measures W = {weight}, the solver claims {r.weight}")
    gap = (weight - r.lower_bound) / weight
    row = {"shape": shape, "k": k, "status": r.status, "W": weight, "LB": r.lower_bound,
           "gap": gap, "gap_pct": 100 * gap, "seconds": round(seconds, 1), "limit": time_limit,
           "depth": r.depth, "rounds": int(claims["rounds"]), "W_heuristic": base.weight,
           "heuristic_seconds": round(t_heur, 1), "theta": weight / (t.n_vertices - 1),
           "bound_method": r.bound_method}
    log(f"{shape} k={k}: {r.status} W={weight} LB={r.lower_bound:g} gap={100 * gap:.2f}% {seconds:.1f}s")
    return row


def main(argv=None):
    a = parse_args(parser(__doc__, SETS, time_limit=60.0, seed=0), argv)
    table = Table(COLUMNS, json=a.json)
    for shape, k in a.instances:
        table.add(run_one(shape, k, a.time_limit, a.seed))


if __name__ == "__main__":
    main()
