"""The timed pricing's label sweep (models/packing/tree_pricing.py): a class of vertices moved at once against
one vertex at a time, and its neighbour sums bucketed by label against summed at every label.

Run: ``python bench/sweep.py [--set quick|full] [--only NETWORK:R,...] [--json [FILE]]``; ``NETWORK`` is a
``--machine`` preset (``mi250:4``), a torus shape with its first link failed (``16x16``), or such a torus's
periodic network (``16x16x16/p``: :func:`~synth.solving.periodic.periodic_network`, what ``synth solve`` prices
there).

Each instance prices the same rows (the fixed starting labellings of four owners, twice over; of 64 owners on a
damaged torus; of every owner on a periodic network) under the same random prices with
:func:`~synth.models.packing.tree_pricing.sweep`, five passes, three times in this process: one vertex at a
time (``one``, the baseline row: :data:`~synth.models.packing.tree_pricing.SWEEP_ENTRIES` 0, in the order of the
classes, which is what the sweep did before it moved classes at once), with every neighbour's term summed at
every label (``dense``: :func:`dense_totals`, what the sweep did on the tori before stop 66) and as the sweep does
(``default``: a class at a time, the neighbours' terms bucketed by label).  Printed: the neighbours per vertex at most, the rows, the classes, the CPU
seconds, ``x one`` (the seconds over the one-at-a-time row's) and whether the labels are those of that row.
"""

import time

import numpy as np
from _harness import Col, Ratio, Table, parse_args, parser

from synth.models.packing import tree_pricing
from synth.models.packing.layered import root_reps
from synth.models.packing.tree_space import TreeSpace, arc_costs
from synth.solving.periodic import periodic_network
from synth.symmetry.spec import default_group
from synth.topology.failures import damage, parse_failures
from synth.topology.machines import machine_names, machine_spec
from synth.topology.spec import build_topology
from synth.topology.torus import parse_torus

SETS = {"quick": [("mi250:4", 32), ("16x16", 22), ("16x16x16/p", 33)],
        "full": [("mi250:2", 16), ("mi250:4", 32), ("mi250:8", 32), ("dgx-a100:4", 16), ("dgx-h100:8", 32),
                 ("8x8", 12), ("16x16", 22), ("32x32/p", 44), ("16x16x16/p", 33), ("16x20x28/p", 40)]}
COLUMNS = [Col("network", fmt="<11"), Col("R", fmt=">3"), Col("sums", fmt="<8"), Col("neighbours", fmt=">10"),
           Col("rows", fmt=">5"), Col("classes", fmt=">7"), Col("CPU s", "cpu", ">7.3f"),
           Ratio("x one", "cpu", fmt=">7.3f"),
           Col("same", fmt=">5")]
PASSES = 5


def _network(name, R):
    """The network, its group and the owners whose starts are priced."""
    if name.split(":")[0] in machine_names():
        t = build_topology(machine_spec(name))
        return t, default_group(t), 4
    shape, periodic = name.removesuffix("/p"), name.endswith("/p")
    t = parse_torus(shape)
    d = damage(t, parse_failures(t, links=["0-1"]))
    if not periodic:
        return d, default_group(d), 64
    p = periodic_network(d, R, time_limit=1e9)
    return p.topology, p.group, None


def priced_rows(name, R):
    """``(space, prices, roots, labels)`` of an instance: the timed trees' space, random prices, and the rows (the
    fixed starting labellings of its owners, twice over on a fabric) with each row's root."""
    t, group, owners = _network(name, R)
    space = TreeSpace.build(t, group, R)
    C = arc_costs(space, np.random.default_rng(0).lognormal(0.0, 1.0, (2 * R, t.n_links)))
    roots = np.flatnonzero(space.live)[:owners] if owners else np.asarray(root_reps(t, group), dtype=np.int64)
    L0 = tree_pricing.start_labels(space, roots)
    L0 = np.concatenate([L0, L0]) if owners == 4 else L0
    return space, C, np.tile(roots, L0.shape[0] // roots.size), L0


def dense_totals(excl, via, lu, counted, R):
    """The baseline of ``tree_pricing._neighbour_totals``: every neighbour's term summed at every label."""
    ts = np.arange(1, R + 1)
    each = np.minimum(excl[:, :, None], np.where(ts[None, None, :] > lu[:, :, None], via[:, :, None], np.inf))
    return np.where(counted[:, :, None], each, 0.0).sum(axis=1)


def run(name, R):
    space, C, roots, L0 = priced_rows(name, R)
    rows, labels = [], {}
    totals, entries = tree_pricing._neighbour_totals, tree_pricing.SWEEP_ENTRIES
    for how in ("one", "dense", "default"):
        tree_pricing.SWEEP_ENTRIES = 0 if how == "one" else entries
        tree_pricing._neighbour_totals = dense_totals if how == "dense" else totals
        try:
            c0, L = time.process_time(), L0
            for _ in range(PASSES):
                L = tree_pricing.sweep(space, C, L, roots)
            cpu = time.process_time() - c0
        finally:
            tree_pricing._neighbour_totals, tree_pricing.SWEEP_ENTRIES = totals, entries
        labels[how] = L
        rows.append({"network": name, "R": R, "sums": how, "neighbours": int(space.nbr.shape[1]),
                     "rows": int(L0.shape[0]), "classes": len(space.sweep_classes), "cpu": cpu,
                     "same": "yes" if np.array_equal(L, labels["one"]) else "NO"})
    return rows


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, int), spec="NETWORK:R")
    args = parse_args(ap, argv)
    table = Table(COLUMNS, baseline=lambda r: r["sums"] == "one", group=("network", "R"), json=args.json,
                  title=f"== the label sweep, {PASSES} passes over the same rows and prices")
    for name, R in args.instances:
        for row in run(name, R):
            table.add(row)


if __name__ == "__main__":
    main()
