"""Timed trees on fabrics of servers: the master started with and without the hierarchical trees, priced with and
without the sweep.

Run: ``python bench/hierarchy.py [--set quick|full] [--only NAME:SERVERS:R,...] [--time-limit 60] [--json [FILE]]``.

Each fabric (a healthy ``--machine`` preset, ``R`` reduce rounds, its default group) runs
:func:`~synth.models.packing.timed.solve_timed` four times in this process with the same CPU budget
(``--time-limit``, CPU seconds of the column generation) and the solve's fabric options: from the routed
LP's trees alone (``hierarchy=False``, the baseline row) and with every owner's hierarchical trees
(:mod:`synth.models.packing.hierarchy`), each priced with the sweep and without it
(:func:`~synth.models.packing.timed.sweeps_by_default` picks one in the solve: ``auto`` says which).  Printed: the
hierarchical columns added, the LP's share of the volume bound at its first solve and at the end, iterations,
CPU seconds, and ``x routed``: the end share over the baseline row's.  The LP's value is a solver claim over
the trees found (``synth check`` re-derives a schedule's own bound).
"""

import time

from _harness import Col, Ratio, Table, parse_args, parser

from synth.models.packing import timed
from synth.models.packing.hierarchy import hierarchical_columns
from synth.models.packing.routed import routed_arcs, solve_routed
from synth.models.packing.tree_space import TreeSpace
from synth.solving.packing import TIMED_FABRIC_WARM, TIMED_ITERATIONS, TIMED_STARTS
from synth.symmetry.spec import default_group
from synth.topology.machines import machine_spec
from synth.topology.spec import build_topology

SETS = {"quick": [("mi250", 2, 16), ("dgx-a100", 4, 16)],
        "full": [("mi250", 2, 16), ("mi250", 4, 32), ("mi250", 8, 32), ("dgx-h100", 8, 32), ("dgx-a100", 4, 16)]}
COLUMNS = [Col("machine", fmt="<11"), Col("R", fmt=">3"), Col("start", fmt="<13"), Col("sweep", fmt="<9"),
           Col("added", fmt=">6"),
           Col("first %", "first", ">8.2f"), Col("LP %", "lp", ">7.2f"), Col("iterations", fmt=">10"),
           Col("CPU s", "cpu", ">7.1f"), Ratio("x routed", "lp", fmt=">9.4f")]


def run(name, R, hierarchy, sweep, budget):
    t = build_topology(machine_spec(name))
    g = default_group(t)
    layered = solve_routed(routed_arcs(t, g))
    options = timed.TimedOptions(max_iterations=TIMED_ITERATIONS, warm=TIMED_FABRIC_WARM,
                                 starts=TIMED_STARTS, hierarchy=hierarchy, sweep=sweep)
    added = len(hierarchical_columns(TreeSpace.build(t, g, R), layered.data.roots)) if hierarchy else 0
    first = []
    c0 = time.process_time()
    sol = timed.solve_timed(t, g, R, time_limit=budget, layered=layered, options=options,
                            progress=lambda m: first.append(m) if not first else None)
    cpu = time.process_time() - c0
    share = float(first[0].split(": ")[1].split(" %")[0]) if first else float("nan")
    auto = timed.sweeps_by_default(TreeSpace.build(t, g, R), hierarchy)
    return {"machine": name, "R": R, "start": "hierarchical" if hierarchy else "routed",
            "sweep": ("on" if sweep else "off") + (" auto" if sweep == auto else ""), "added": added,
            "first": share, "lp": 100 * sol.fraction, "iterations": sol.iterations, "cpu": cpu,
            "status": sol.status}


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, int, int), spec="NAME:SERVERS:R", time_limit=60.0)
    args = parse_args(ap, argv)
    title = f"== timed trees on fabrics, equal CPU budgets ({args.time_limit:g} s of column generation)"
    table = Table(COLUMNS, baseline=lambda r: r["start"] == "routed" and r["sweep"].startswith("on"),
                  group=("machine", "R"), json=args.json, title=title)
    for name, servers, R in args.instances:
        for hierarchy in (False, True):
            for sweep in (True, False):
                table.add(run(f"{name}:{servers}", R, hierarchy, sweep, args.time_limit))


if __name__ == "__main__":
    main()
