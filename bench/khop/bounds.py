"""Lower bounds on W*(k) for k-hop trees: the cone count (no LP), the layered LP and the Steiner bound.

Per instance: ``p - 1``; the cone-counting bound (:func:`synth.check.bounds.cone_count_bound`,
exact, from the topology alone) and its seconds; the layered LP's bound
(:class:`synth.models.khop.lp.LayeredLP` on root-stabilizer orbits, until it converges,
stalls or reaches ``--lp-limit``) and its seconds, when the torus has at most
``--lp-max-vertices`` vertices; and the share of the LP's excess over ``p - 1`` that the
cone count reaches (``cone/LP``, both measured in this process); then the excess Steiner
bound (:func:`synth.models.khop.steiner.terminal_search`, at most ``--steiner-limit``
seconds) and its seconds, and how far it is above the LP's rounded-up bound (``St-LP``).

Run: ``python bench/khop/bounds.py [--set quick|table1|deep] [--only 16x16:10,...] [--lp-limit 300]
[--lp-max-vertices 1024] [--steiner-limit 60]``
(``quick``: 8x8 and 16x16, seconds; ``table1``: the depths of the paper's Table 1, minutes;
``deep``: depths near the diameter, where few vertices lie beyond ``k``).
"""

from __future__ import annotations

import math
import time

from _common import Col, Ratio, Table, parse_args, parser, timed, timed_orbit_lp

from synth.check.bounds import cone_count_bound
from synth.models.khop.steiner import terminal_search
from synth.topology.torus import parse_torus

SETS = {
    "quick": [("8x8", k) for k in (2, 3, 4, 5)] + [("16x16", k) for k in (3, 4, 7)],
    "table1": [("8x8", k) for k in (3, 5)] + [("16x16", k) for k in (3, 4, 7)]
    + [("32x32", k) for k in (6, 9, 11, 12, 20, 22)] + [("64x64", k) for k in (10, 11, 14)],
    "deep": [("16x16", k) for k in (8, 9, 10, 11, 12, 13)] + [("32x32", k) for k in (20, 22)],
}

COLUMNS = [Col("torus", "shape", ">6"), Col("k", fmt=">3"), Col("p-1", "p1", ">6"), Col("cone", fmt=">6"),
           Col("s", "cone_s", ">6.2f"), Col("LP", fmt=">9.2f"), Col("s", "LP_s", ">6.1f"),
           Ratio("cone/LP", "cone_value", "LP", minus="p1", fmt=">8.2f"),
           Col("Steiner", fmt=">7"), Col("s", "Steiner_s", ">6.1f"), Col("St-LP", "St_minus_LP", ">+5d")]


def main(argv=None):
    ap = parser(__doc__, SETS)
    ap.add_argument("--lp-limit", type=float, default=300.0, help="seconds per LP")
    ap.add_argument("--lp-max-vertices", type=int, default=1024, help="skip the LP on bigger tori")
    ap.add_argument("--steiner-limit", type=float, default=60.0, help="seconds per Steiner terminal search")
    a = parse_args(ap, argv)
    table = Table(COLUMNS, json=a.json)
    for shape, k in a.instances:
        t = parse_torus(shape)
        p1 = t.n_vertices - 1
        cone, t_cone = timed(cone_count_bound, t, k)
        row = {"shape": shape, "k": k, "p1": p1, "cone": cone.bound, "cone_value": cone.value, "cone_s": t_cone,
               "LP": None, "LP_s": None}
        lp_bound = None
        if t.n_vertices <= a.lp_max_vertices and k < t.diameter:
            _lp, res, t_lp = timed_orbit_lp(t, k, deadline=time.monotonic() + a.lp_limit)
            row.update(LP=res.bound, LP_s=t_lp)
            lp_bound = math.ceil(res.bound - 1e-6) if math.isfinite(res.bound) else None
        st, t_st = timed(terminal_search, t, k, deadline=time.monotonic() + a.steiner_limit)
        row.update(Steiner=st.bound, Steiner_s=t_st, St_minus_LP=None if lp_bound is None else st.bound - lp_bound)
        table.add(row)


if __name__ == "__main__":
    main()
