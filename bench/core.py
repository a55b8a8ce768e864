"""Core performance figures: lift + explicit check of SP-allreduce, symmetric checks.

Run: ``python bench/core.py [--big] [--json [FILE]]``.  Prints seconds and peak RSS; the
baseline in the same process is a plain numpy ``np.add.at`` scatter of the same
size, so the ratio ``x add.at`` (the executor's seconds over the scatter's) says how the
executor compares with the obvious approach.
"""

import resource

import numpy as np

from _harness import Col, Ratio, Table, parse_args, parser, timed

from synth.check import execute, measure_explicit, measure_symmetric, round_lower_bound
from synth.symmetry.torus import torus_gamma
from synth.schedule.lift import lift, lifted_weights
from synth.schedule import chunk_elements
from synth.schedule.sp import sp_allreduce
from synth.topology.torus import parse_torus

EXPLICIT = [Col("explicit", "shape", "<9"), Col("transmissions", fmt=">13,"), Col("group+base", "setup_s", ">10.2f"),
            Col("lift", "lift_s", ">5.2f"), Col("execute", "execute_s", ">7.2f"), Col("loads", "loads_s", ">5.2f"),
            Col("total", "total_s", ">5.2f"), Col("ok", fmt=">5"), Col("omega", fmt=">5"),
            Col("RSS GiB", "rss_gib", ">7.2f"), Ratio("x add.at", "execute_s", fmt=">8.2f")]
SYMMETRIC = [Col("symmetric", "shape", "<9"), Col("group verify", "group_s", ">12.2f"),
             Col("base+metrics+bound", "rest_s", ">18.2f"), Col("total", "total_s", ">5.2f"), Col("ok", fmt=">5"),
             Col("rounds", fmt=">6"), Col("bound", fmt=">5")]


def peak_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _torus_group(shape):
    t = parse_torus(shape)
    return t, torus_gamma(t)


def _setup(shape):
    t, g = _torus_group(shape)
    return t, g, sp_allreduce(t)


def explicit(shape):
    (t, g, b), t_setup = timed(_setup, shape)
    s, t_lift = timed(lift, b, g)
    errors, t_exec = timed(execute, s)
    m, t_loads = timed(measure_explicit, s, chunk_elements(lifted_weights(b, g), g.order))
    return {"shape": shape, "transmissions": s.n_transmissions, "setup_s": t_setup, "lift_s": t_lift,
            "execute_s": t_exec, "loads_s": t_loads, "total_s": t_setup + t_lift + t_exec + t_loads,
            "ok": not errors, "omega": str(m.omega), "rss_gib": peak_gib()}


def symmetric(shape):
    (t, g), t_group = timed(_torus_group, shape)

    def rest():
        b = sp_allreduce(t)
        errors = execute(b.as_schedule())
        m = measure_symmetric(b, g, chunk_elements(lifted_weights(b, g), g.order))
        return errors, m, round_lower_bound(t, g)

    (errors, m, bound), t_rest = timed(rest)
    return {"shape": shape, "group_s": t_group, "rest_s": t_rest, "total_s": t_group + t_rest, "ok": not errors,
            "rounds": m.rounds, "bound": bound[0]}


def baseline_add_at(shape, n):
    """The same number of scattered updates by a plain ``np.add.at``: the executor's baseline row."""
    vals = np.zeros(n, dtype=np.uint64)
    idx = np.random.default_rng(0).integers(0, n, n)
    _, seconds = timed(lambda: np.add.at(vals, idx, np.ones(n, dtype=np.uint64)))  # the ones timed too, as before
    return {"shape": "np.add.at", "group": shape, "transmissions": n, "execute_s": seconds}


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("--big", action="store_true", help="include 64x64 explicit (needs ~4 GiB)")
    args = parse_args(ap, argv)
    table = Table(EXPLICIT, baseline=lambda r: r["shape"] == "np.add.at", group=("group",), json=args.json)
    row = explicit("32x32")
    table.add(baseline_add_at("32x32", row["transmissions"]))
    table.add(dict(row, group="32x32"))
    if args.big:
        table.add(explicit("64x64"))  # no baseline: the scatter of 134 M updates is left out
    sym = Table(SYMMETRIC, json=args.json, title="")
    for shape in ("16x16x16", "8x8x8x8", "64x64"):
        sym.add(symmetric(shape))


if __name__ == "__main__":
    main()
