"""Depth-bounded (k-hop) families on rectangular tori: candidates, chunks, Omega, W, seconds.

Run: ``python bench/khop/rect.py [--time-limit S] [--set default|quick] [--only 64x16:10,128x8:20]``

For every shape and depth bound below the diameter it runs the whole ``synth solve
--torus SHAPE --depth K`` pipeline (candidate trees from :mod:`synth.models.balance.family`,
weights from :func:`synth.models.balance.balance_candidates`, certification) and prints
one row: the candidates offered, the chunks and weights chosen, Omega as measured by the
checker, the mean tree weight W per chunk next to the lightest single tree's W and its
Omega alone (the baseline: ``W/W_min`` is the mean weight over it), the rounds and the wall time.
Depth bounds not below the diameter are left out.
"""

from __future__ import annotations

from _common import Col, Ratio, Table, parse_args, parser, timed

from synth.solving import solve
from synth.topology.torus import parse_torus

DEPTHS = {"64x16": (10, 20, 30), "128x8": (10, 20, 40), "256x4": (10, 20, 40), "4x4x8": (3, 4, 6),
          "8x8x16": (5, 8, 12)}
SETS = {"default": [(shape, k) for shape, ks in DEPTHS.items() for k in ks], "quick": [("4x4x8", 3), ("4x4x8", 4)]}

COLUMNS = [Col("shape", fmt=">7"), Col("k", fmt=">3"), Col("H", fmt=">3"), Col("rounds", fmt=">6"),
           Col("cands", fmt=">5"), Col("chunks", fmt=">6"), Col("weights", fmt=">10"), Col("omega", fmt=">12"),
           Col("W/chunk", "mean_w", ">9.1f"), Col("W_min", fmt=">6"), Col("omega_min", fmt=">10"),
           Col("status", fmt=">10"), Col("seconds", fmt=">7.1f"), Ratio("W/W_min", "mean_w", "W_min")]


def main(argv=None):
    ap = parser(__doc__, SETS, default_set="default", time_limit=60.0)
    ap.add_argument("--mode", default="symmetric", help="checker mode for the certificate (default symmetric)")
    args = parse_args(ap, argv)
    table = Table(COLUMNS, json=args.json)
    for shape, k in args.instances:
        t = parse_torus(shape)
        if k >= t.diameter:
            continue
        r, sec = timed(solve, t, depth=k, time_limit=args.time_limit, mode=args.mode)
        c, s = r.certificate.claims, r.certificate.solver
        fam = s["family"]
        table.add({"shape": shape, "k": k, "H": t.diameter, "rounds": c["rounds"],
                   "cands": len(fam["candidate_weights"]), "chunks": c["chunks"], "weights": str(s["weights"]),
                   "omega": c["omega"],
                   "mean_w": float(sum(w * x for w, x in zip(s["weights"], s["tree_weights"])) / sum(s["weights"])),
                   "W_min": fam["lightest_tree_weight"], "omega_min": fam["lightest_tree_omega"],
                   "status": s["balance_status"], "seconds": sec})


if __name__ == "__main__":
    main()
