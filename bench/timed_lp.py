"""Timed trees' column generation (models/packing/timed.py): the master LP by simplex against interior point.

Run: ``python bench/timed_lp.py [--set quick|full] [--only SHAPE:LINK:R,...] [--time-limit 60] [--json [FILE]]``.

Each instance (a torus, one failed link, ``R`` reduce rounds) runs :func:`solve_timed` twice in this
process with the same CPU budget (``--time-limit``, CPU seconds of the column generation): the master
LP solved by primal simplex from the last basis (``method="simplex"``, the baseline row) and by the
interior point method without crossover (``"ipm"``, the default).  Printed: iterations (LP solves),
columns at the end, the LP's share of the volume bound, the CPU seconds, the LP's share of those
seconds, and ``x simplex``: the share of the volume bound over the simplex row's.  The LP's value is
a solver claim over the trees found (``synth check`` re-derives the schedule's own bound).
"""

import time

from _harness import Col, Ratio, Table, parse_args, parser

from synth.models.packing import master, timed
from synth.symmetry.spec import default_group
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus

SETS = {"quick": [("6x6", "0.0-0.1", 8), ("8x8", "0.0-0.1", 10)],
        "full": [("6x6", "0.0-0.1", 8), ("8x8", "0.0-0.1", 10), ("8x8", "0.0-0.1", 12), ("4x4x4", "0.0.0-0.0.1", 10)]}
COLUMNS = [Col("torus", fmt="<6"), Col("failed", fmt="<12"), Col("R", fmt=">3"), Col("method", fmt="<8"),
           Col("iterations", fmt=">10"), Col("columns", fmt=">8"), Col("LP %", "lp", ">7.2f"),
           Col("CPU s", "cpu", ">7.1f"), Col("LP share", "lp_share", ">8.2f"), Ratio("x simplex", "lp", fmt=">9.4f")]


def run(shape, link, R, method, budget):
    t = parse_torus(shape)
    d = damage(t, parse_failures(t, links=[link]))
    g = default_group(d)
    lp_cpu = [0.0]
    solve = master.MasterLP.solve

    def counted(self, *args, **kwargs):        # the master LP's own CPU seconds
        c = time.process_time()
        try:
            return solve(self, *args, **kwargs)
        finally:
            lp_cpu[0] += time.process_time() - c

    master.MasterLP.solve = counted
    try:
        c0 = time.process_time()
        sol = timed.solve_timed(d, g, R=R, time_limit=budget, options=timed.TimedOptions(method=method))
        cpu = time.process_time() - c0
    finally:
        master.MasterLP.solve = solve
    return {"torus": shape, "failed": link, "R": R, "method": method, "iterations": sol.iterations,
            "columns": int(sol.x.size), "lp": 100 * sol.fraction, "cpu": cpu, "lp_share": lp_cpu[0] / cpu,
            "status": sol.status}


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, str, int), spec="SHAPE:LINK:R", time_limit=60.0)
    args = parse_args(ap, argv)
    title = f"== timed trees, equal CPU budgets ({args.time_limit:g} s of column generation)"
    table = Table(COLUMNS, baseline=lambda r: r["method"] == "simplex", group=("torus", "failed", "R"),
                  json=args.json, title=title)
    for shape, link, R in args.instances:
        for method in ("simplex", "ipm"):
            table.add(run(shape, link, R, method, args.time_limit))


if __name__ == "__main__":
    main()
