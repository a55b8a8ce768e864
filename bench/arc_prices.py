"""The timed pricing's arc prices (``arc_prices`` in models/packing/tree_space.py): laid out link by round,
rows gathered whole, against the round-by-link layout it had.

Run: ``python bench/arc_prices.py [--set quick|full] [--only NETWORK:R,...] [--json [FILE]]``; ``NETWORK`` is a
``--machine`` preset (``mi250:16``) or a torus shape, healthy (``16x16``) or with its first link failed
(``16x16-1``).

Each instance prices the same random duals (2R rounds by links, seven tenths of them zero, as a master's are)
:data:`REPEATS` times in this process: with ``round_by_link`` below (the baseline row: the group's images
and every route's links gathered as columns of the round-by-link array, as the pricing did to stop 59) and
with :func:`~synth.models.packing.tree_space.arc_prices`.  Printed: the routes, the group's order, the CPU
seconds, ``x baseline`` and whether prices and routes are the same.
"""

import time

import numpy as np
from _harness import Col, Ratio, Table, parse_args, parser

from synth.models.packing.tree_space import INF, TreeSpace, _cheapest, arc_prices
from synth.symmetry.spec import default_group
from synth.topology.failures import damage, parse_failures
from synth.topology.machines import machine_names, machine_spec
from synth.topology.spec import build_topology
from synth.topology.torus import parse_torus

SETS = {"quick": [("mi250:8", 32), ("16x16-1", 20)],
        "full": [("mi250:4", 32), ("mi250:8", 32), ("mi250:16", 32), ("dgx-h100:8", 32), ("16x16", 16),
                 ("16x16-1", 20), ("8x8x8-1", 14)]}
COLUMNS = [Col("network", fmt="<11"), Col("R", fmt=">3"), Col("layout", fmt="<13"), Col("routes", fmt=">7"),
           Col("group", fmt=">6"), Col("CPU s", "cpu", ">8.4f"), Ratio("x baseline", "cpu", fmt=">10.3f"),
           Col("same", fmt=">5")]
REPEATS = 10


def round_by_link(space, pi):
    """The baseline: ``arc_prices`` in the round-by-link layout (2R, E), columns gathered."""
    R = space.R
    P = np.asarray(pi, dtype=np.float64)[:, space.images].sum(axis=1)
    padded = np.concatenate([P, np.zeros((P.shape[0], 1))], axis=1)
    best, route = _cheapest(space, padded[:, space.route_links].sum(axis=2).T)
    t = np.arange(1, R + 1)
    C = np.full((space.n_arcs, R + 1), INF)
    C[:, 1:] = best[:, t - 1] + best[space.arc_rev][:, 2 * R - t]
    up = np.zeros((space.n_arcs, R + 1), dtype=np.int64)
    down = np.zeros((space.n_arcs, R + 1), dtype=np.int64)
    up[:, 1:] = route[:, t - 1]
    down[:, 1:] = route[space.arc_rev][:, 2 * R - t]
    return C, up, down


def _network(name):
    if name.split(":")[0] in machine_names():
        return build_topology(machine_spec(name))
    shape, _, failed = name.partition("-")
    t = parse_torus(shape)
    return damage(t, parse_failures(t, links=["0-1"])) if failed else t


def run(name, R):
    t = _network(name)
    g = default_group(t)
    space = TreeSpace.build(t, g, R)
    rng = np.random.default_rng(0)
    pi = rng.random((2 * R, t.n_links)) * (rng.random((2 * R, t.n_links)) < 0.3)
    rows, out = [], {}
    for layout, fn in (("round-by-link", round_by_link), ("link-by-round", arc_prices)):
        c0 = time.process_time()
        for _ in range(REPEATS):
            out[layout] = fn(space, pi)
        cpu = time.process_time() - c0
        same = all(np.array_equal(a, b) if a.dtype.kind == "i" else np.allclose(a, b, rtol=1e-12, atol=0)
                   for a, b in zip(out[layout], out["round-by-link"]))
        rows.append({"network": name, "R": R, "layout": layout, "routes": int(space.route_links.shape[0]),
                     "group": 1 if g is None else g.order, "cpu": cpu, "same": "yes" if same else "NO"})
    return rows


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, int), spec="NETWORK:R")
    args = parse_args(ap, argv)
    table = Table(COLUMNS, baseline=lambda r: r["layout"] == "round-by-link", group=("network", "R"),
                  json=args.json, title=f"== arc prices of the same duals, {REPEATS} times")
    for name, R in args.instances:
        for row in run(name, R):
            table.add(row)


if __name__ == "__main__":
    main()
