"""Lower bounds on W*(k) for k-hop trees: the cone count (no LP), the layered LP and the Steiner bound.

Per instance: ``p - 1``; the cone-counting bound (:func:`synth.dualbound.cone_count_bound`,
exact, from the topology alone) and its seconds; the layered LP's bound
(:class:`synth.models._khop_lp.LayeredLP` on root-stabilizer orbits, until it converges,
stalls or reaches ``--lp-limit``) and its seconds, when the torus has at most
``--lp-max-vertices`` vertices; and the share of the LP's excess over ``p - 1`` that the
cone count reaches (``cone/LP``, both measured in this process); then the excess Steiner
bound (:func:`synth.models._khop_steiner.terminal_search`, at most ``--steiner-limit``
seconds) and its seconds, and how far it is above the LP's rounded-up bound (``St-LP``).

Run: ``python bench/bench_khop_bounds.py [--set quick|table1|deep] [--only 16x16:10,...] [--lp-limit 300]
[--lp-max-vertices 1024] [--steiner-limit 60]``
(``quick``: 8x8 and 16x16, seconds; ``table1``: the depths of the paper's Table 1, minutes;
``deep``: depths near the diameter, where few vertices lie beyond ``k``).
"""

from __future__ import annotations

import math
import time

from synth.dualbound import cone_count_bound
from synth.models._khop_steiner import terminal_search
from synth.torus import parse_torus

# the sibling script (this directory is on sys.path when run)
from bench_khop import instance_parser, instances, timed_orbit_lp

SETS = {
    "quick": [("8x8", k) for k in (2, 3, 4, 5)] + [("16x16", k) for k in (3, 4, 7)],
    "table1": [("8x8", k) for k in (3, 5)] + [("16x16", k) for k in (3, 4, 7)]
    + [("32x32", k) for k in (6, 9, 11, 12, 20, 22)] + [("64x64", k) for k in (10, 11, 14)],
    "deep": [("16x16", k) for k in (8, 9, 10, 11, 12, 13)] + [("32x32", k) for k in (20, 22)],
}


def main(argv=None):
    ap = instance_parser(__doc__, SETS)
    ap.add_argument("--lp-limit", type=float, default=300.0, help="seconds per LP")
    ap.add_argument("--lp-max-vertices", type=int, default=1024, help="skip the LP on bigger tori")
    ap.add_argument("--steiner-limit", type=float, default=60.0, help="seconds per Steiner terminal search")
    a = ap.parse_args(argv)
    todo = instances(a, SETS)
    print(f"{'torus':>6} {'k':>3} {'p-1':>6} {'cone':>6} {'s':>6} {'LP':>9} {'s':>6} {'cone/LP':>8} "
          f"{'Steiner':>7} {'s':>6} {'St-LP':>5}", flush=True)
    for shape, k in todo:
        t = parse_torus(shape)
        p1 = t.n_vertices - 1
        t0 = time.perf_counter()
        cone = cone_count_bound(t, k)
        t_cone = time.perf_counter() - t0
        lp_text, share, lp_bound = f"{'-':>9} {'-':>6}", "-", None
        if t.n_vertices <= a.lp_max_vertices and k < t.diameter:
            _lp, res, t_lp = timed_orbit_lp(t, k, deadline=time.monotonic() + a.lp_limit)
            lp_text = f"{res.bound:>9.2f} {t_lp:>6.1f}"
            lp_bound = math.ceil(res.bound - 1e-6) if math.isfinite(res.bound) else None
            if res.bound > p1 + 1e-9:
                share = f"{(cone.value - p1) / (res.bound - p1):.2f}"
        t0 = time.perf_counter()
        st = terminal_search(t, k, deadline=time.monotonic() + a.steiner_limit)
        t_st = time.perf_counter() - t0
        diff = "-" if lp_bound is None else f"{st.bound - lp_bound:+d}"
        print(f"{shape:>6} {k:>3} {p1:>6} {cone.bound:>6} {t_cone:>6.2f} {lp_text} {share:>8} "
              f"{st.bound:>7} {t_st:>6.1f} {diff:>5}", flush=True)


if __name__ == "__main__":
    main()
