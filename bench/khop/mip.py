"""The MIP engines on the same reduced k-hop model: CP-SAT (baseline), HiGHS, SCIP's branch-and-cut.

Per instance the script builds what the pipeline of :mod:`synth.models.khop` hands to
its MIP: the orbit LP (:class:`synth.models.khop.lp.LayeredLP`), an incumbent ``UB``
(``--ub``, default the heuristic-only solve of ``--heuristic-seconds``), the arcs that
survive reduced-cost fixing against ``UB``, the LP's binding cuts with all their images
and the cut-off ``W <= UB - 1``.  Each engine then solves that model for at most
``--time-limit`` seconds, stopping at the first lighter tree: ``infeasible`` proves
``UB`` optimal, ``improved`` found a lighter tree, ``feasible`` / ``unknown`` ran out of
time (the bound is printed).  SCIP gets the layered cone and flow cuts at every node of
its search (:func:`synth.models.forest.cuts.layered_separator`); CP-SAT and HiGHS
see the root's cuts only.  ``x cpsat`` is the engine's seconds over CP-SAT's.

Run: ``python bench/khop/mip.py [--set quick|wide] [--only 12x12:3:192] [--engines cpsat,scip]
[--time-limit 600]`` (``quick``: 8x8, K = 3 and 10x10, K = 4, a minute; ``wide``: 10x10, K = 3 and
12x12, K = 3 and 4 against their best known trees, an hour or more).
"""

from __future__ import annotations

import numpy as np

from _common import Col, Ratio, Table, parse_args, parser, timed

from synth.models.forest.instance import distance_matrix, root_stabilizer
from synth.models.khop.lp import LayeredLP
from synth.models.khop.model import ModelData, build_hop_model
from synth.models.forest.cuts import cut_images, layered_separator
from synth.models.khop import solve_khop
from synth.topology.torus import parse_torus

# (shape, K, UB or None for the heuristic's)
SETS = {
    "quick": [("8x8", 3, None), ("10x10", 4, None)],
    "wide": [("10x10", 3, 128), ("12x12", 3, 192), ("12x12", 4, 170)],
}

COLUMNS = [Col("torus", "shape", ">6"), Col("k", fmt=">3"), Col("UB", fmt=">5"), Col("LP", fmt=">9.3f"),
           Col("arcs", fmt=">7"), Col("engine", fmt=">6"), Col("result", fmt=">10"), Col("bound", fmt=">8.2f"),
           Col("s", fmt=">7.1f"), Ratio("x cpsat", "s", fmt=">7.2f")]


def solve_with(engine, model, z, D, k, ub, seconds, seed):
    if engine == "scip":
        return model.solve_scip(time_limit=seconds, seed=seed, stop_below=ub - 1,
                                separate=layered_separator(D, k, z))
    if engine == "cpsat":
        return model.solve_cpsat(time_limit=seconds, seed=seed, stop_below=ub - 1)
    return model.solve_highs(time_limit=seconds, seed=seed, stop_below=ub - 1)


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, int, int), required=2, spec="SHAPE:K[:UB]", time_limit=600.0, seed=0)
    ap.add_argument("--engines", default="cpsat,highs,scip")
    ap.add_argument("--heuristic-seconds", type=float, default=20.0)
    a = parse_args(ap, argv)  # --time-limit: seconds per engine and instance
    table = Table(COLUMNS, baseline=lambda r: r["engine"] == "cpsat", group=("shape", "k"), json=a.json)
    for shape, k, ub in a.instances:
        t = parse_torus(shape)
        D, perms = distance_matrix(t), root_stabilizer(t)
        if ub is None:
            ub = solve_khop(t, k, time_limit=a.heuristic_seconds, solver="heuristic", seed=a.seed).weight
        lp = LayeredLP(D, k, perms)
        res = lp.solve(stall_rounds=15)
        tail, head, layer = lp.arcs_below(ub - 1 - res.bound + 1e-6)
        cuts = cut_images(lp.binding_cuts(), perms, t.n_vertices)
        for engine in a.engines.split(","):
            model, z, _y = build_hop_model(ModelData(D, k, tail, head, layer), cuts)
            model.add_row(*model.objective_terms(), -np.inf, ub - 1, "objective_cutoff")
            sol, secs = timed(solve_with, engine, model, z, D, k, ub, a.time_limit, a.seed)
            result = "improved" if sol.values is not None and sol.objective <= ub - 1 + 1e-6 else sol.status
            table.add({"shape": shape, "k": k, "UB": ub, "LP": res.bound, "arcs": tail.size, "engine": engine,
                       "result": result, "bound": sol.bound, "s": secs})


if __name__ == "__main__":
    main()
