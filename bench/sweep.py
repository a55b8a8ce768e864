"""The timed pricing's label sweep (models/packing/tree_pricing.py): its neighbour sums bucketed by label
against summed at every label.

Run: ``python bench/sweep.py [--set quick|full] [--only NETWORK:R,...] [--json [FILE]]``; ``NETWORK`` is a
``--machine`` preset (``mi250:4``) or a torus shape with its first link failed (``16x16``).

Each instance prices the same rows (the fixed starting labellings of four owners, twice over, or 64 owners
on a torus) under the same random prices with :func:`~synth.models.packing.tree_pricing.sweep`, five passes,
twice in this process: with every neighbour's term summed at every label (``dense``, the baseline row:
:data:`~synth.models.packing.tree_pricing.FEW_NEIGHBOURS` raised past every degree) and as the sweep does by
default (``default``: bucketed by the neighbours' labels where a vertex has more than ``FEW_NEIGHBOURS``).
Printed: the neighbours per vertex at most, the CPU seconds, ``x dense`` (the seconds over the dense
row's) and whether the labels are the same.
"""

import time

import numpy as np
from _harness import Col, Ratio, Table, parse_args, parser

from synth.models.packing import tree_pricing
from synth.models.packing.tree_space import TreeSpace, arc_costs
from synth.symmetry.spec import default_group
from synth.topology.failures import damage, parse_failures
from synth.topology.machines import machine_names, machine_spec
from synth.topology.spec import build_topology
from synth.topology.torus import parse_torus

SETS = {"quick": [("mi250:4", 32), ("16x16", 22)],
        "full": [("mi250:2", 16), ("mi250:4", 32), ("mi250:8", 32), ("dgx-a100:4", 16), ("dgx-h100:8", 32),
                 ("8x8", 12), ("16x16", 22)]}
COLUMNS = [Col("network", fmt="<11"), Col("R", fmt=">3"), Col("sums", fmt="<8"), Col("neighbours", fmt=">10"),
           Col("rows", fmt=">5"), Col("CPU s", "cpu", ">7.3f"), Ratio("x dense", "cpu", fmt=">8.3f"),
           Col("same", fmt=">5")]
PASSES = 5


def _network(name):
    if name.split(":")[0] in machine_names():
        return build_topology(machine_spec(name)), 4
    t = parse_torus(name)
    return damage(t, parse_failures(t, links=["0-1"])), 64


def run(name, R):
    t, owners = _network(name)
    space = TreeSpace.build(t, default_group(t), R)
    C = arc_costs(space, np.random.default_rng(0).lognormal(0.0, 1.0, (2 * R, t.n_links)))
    roots = np.flatnonzero(space.live)[:owners]
    L0 = tree_pricing.start_labels(space, roots)
    L0 = np.concatenate([L0, L0]) if owners == 4 else L0
    roots = np.tile(roots, L0.shape[0] // roots.size)
    rows, labels, few = [], {}, tree_pricing.FEW_NEIGHBOURS
    for sums in ("dense", "default"):
        tree_pricing.FEW_NEIGHBOURS = 10 ** 9 if sums == "dense" else few
        try:
            c0, L = time.process_time(), L0
            for _ in range(PASSES):
                L = tree_pricing.sweep(space, C, L, roots)
            cpu = time.process_time() - c0
        finally:
            tree_pricing.FEW_NEIGHBOURS = few
        labels[sums] = L
        rows.append({"network": name, "R": R, "sums": sums, "neighbours": int(space.nbr.shape[1]),
                     "rows": int(L0.shape[0]), "cpu": cpu,
                     "same": "yes" if np.array_equal(L, labels["dense"]) else "NO"})
    return rows


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, int), spec="NETWORK:R")
    args = parse_args(ap, argv)
    table = Table(COLUMNS, baseline=lambda r: r["sums"] == "dense", group=("network", "R"), json=args.json,
                  title=f"== the label sweep, {PASSES} passes over the same rows and prices")
    for name, R in args.instances:
        for row in run(name, R):
            table.add(row)


if __name__ == "__main__":
    main()
