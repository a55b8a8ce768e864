"""The timed trees' rounding: one timed LP per instance rounded to 1,024, 4,096 and ``TIMED_UNITS`` (16,384) units
per owner, each schedule certified.

Run: ``python bench/timed_units.py [--set quick|full] [--only NETWORK:SECONDS,...] [--json [FILE]]``; ``NETWORK``
a torus shape with its first link failed (``8x8``), or such a torus's periodic network (``16x16x16/p``:
:func:`~synth.solving.periodic.periodic_network` and its long-solve rounds, what ``synth solve`` prices there);
``SECONDS`` the column generation's CPU seconds.

The LP is solved once (:func:`~synth.models.packing.timed.solve_timed`, ``R`` the layered depth plus
:func:`~synth.solving.rounds.timed_extra`, the crossover to a vertex at the end, as ``synth solve`` does) and
rounded three times in this process (:func:`~synth.models.packing.timed_schedule.pack_timed`).  Printed: the LP's
share of the volume bound, the trees (components) of each rounding, the certified share of the bound
(``synth check`` re-derives it) and ``x 1024`` (that share over the 1,024-unit rounding's).
"""

import time

from _harness import Col, Ratio, Table, parse_args, parser

from synth.check.claims import certify
from synth.models.packing.layered import layered_arcs
from synth.models.packing.timed import solve_timed
from synth.models.packing.timed_schedule import pack_timed
from synth.solving.packing import TIMED_UNITS, certified_fraction
from synth.solving.periodic import long_rounds, periodic_network
from synth.solving.rounds import timed_extra
from synth.symmetry.spec import default_group
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus

SETS = {"quick": [("6x6", 8), ("8x8", 10), ("4x4x4", 10)],
        "full": [("6x6", 8), ("8x8", 10), ("4x4x4", 10), ("16x16x16/p", 300)]}
COLUMNS = [Col("network", fmt="<11"), Col("R", fmt=">3"), Col("CPU s", "cpu", ">7.1f"), Col("LP %", "lp", ">7.2f"),
           Col("units", fmt=">6"), Col("trees", fmt=">6"), Col("cert %", "cert", ">7.2f"),
           Ratio("x 1024", "cert", fmt=">7.4f")]


def _network(name, seconds):
    """The network the timed trees run on, its group, ``R`` and the chips its schedule drops."""
    shape = name.removesuffix("/p")
    t = parse_torus(shape)
    d = damage(t, parse_failures(t, links=["0-1"]))
    group = default_group(d)
    H = layered_arcs(d, group).H
    if not name.endswith("/p"):
        return d, group, H + timed_extra(H), ()
    p = periodic_network(d, H + timed_extra(H), time_limit=seconds, most=long_rounds(H))
    return p.topology, p.group, p.R, p.dropped


def run(name, seconds):
    t, group, R, dropped = _network(name, seconds)
    c0 = time.process_time()
    sol = solve_timed(t, group, R=R, time_limit=seconds)
    cpu = time.process_time() - c0
    rows = []
    for units in (1024, 4096, TIMED_UNITS):
        packed = pack_timed(sol, units)
        cert = certify(packed.base, packed.group, dropped=dropped)
        rows.append({"network": name, "R": R, "cpu": cpu, "lp": 100 * sol.fraction, "units": units,
                     "trees": packed.base.n_components, "cert": 100 * float(certified_fraction(cert))})
    return rows


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, int), spec="NETWORK:SECONDS")
    args = parse_args(ap, argv)
    table = Table(COLUMNS, baseline=lambda r: r["units"] == 1024, group=("network", "R"), json=args.json,
                  title="== the timed LP rounded to more units per owner")
    for name, seconds in args.instances:
        for row in run(name, seconds):
            table.add(row)


if __name__ == "__main__":
    main()
