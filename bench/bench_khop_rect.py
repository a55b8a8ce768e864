"""Depth-bounded (k-hop) families on rectangular tori: candidates, chunks, Omega, W, seconds.

Run: ``python bench/bench_khop_rect.py [--time-limit S] [--shapes 64x16,128x8] [--depths 10,20]``

For every shape and depth bound below the diameter it runs the whole ``synth solve
--torus SHAPE --depth K`` pipeline (candidate trees from :mod:`synth.models.khop_family`,
weights from :func:`synth.models.balance.balance_candidates`, certification) and prints
one row: the candidates offered, the chunks and weights chosen, Omega as measured by the
checker, the mean tree weight W per chunk next to the lightest single tree's W and its
Omega alone, the rounds and the wall time.
"""

from __future__ import annotations

import argparse
import time

from synth.solve import solve
from synth.torus import parse_torus

DEFAULT = {"64x16": (10, 20, 30), "128x8": (10, 20, 40), "256x4": (10, 20, 40), "4x4x8": (3, 4, 6),
           "8x8x16": (5, 8, 12)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--shapes", default=",".join(DEFAULT))
    ap.add_argument("--depths", default=None, help="comma-separated; default per shape")
    ap.add_argument("--mode", default="symmetric", help="checker mode for the certificate (default symmetric)")
    args = ap.parse_args(argv)
    print(f"{'shape':>7} {'k':>3} {'H':>3} {'rounds':>6} {'cands':>5} {'chunks':>6} {'weights':>10} {'omega':>12} "
          f"{'W/chunk':>9} {'W_min':>6} {'omega_min':>10} {'status':>10} {'seconds':>7}", flush=True)
    for shape in args.shapes.split(","):
        t = parse_torus(shape)
        depths = [int(x) for x in args.depths.split(",")] if args.depths else DEFAULT.get(shape, (4,))
        for k in depths:
            if k >= t.diameter:
                continue
            t0 = time.perf_counter()
            r = solve(t, depth=k, time_limit=args.time_limit, mode=args.mode)
            sec = time.perf_counter() - t0
            c, s = r.certificate.claims, r.certificate.solver
            fam = s["family"]
            mean_w = float(sum(w * x for w, x in zip(s["weights"], s["tree_weights"])) / sum(s["weights"]))
            print(f"{shape:>7} {k:>3} {t.diameter:>3} {c['rounds']:>6} {len(fam['candidate_weights']):>5} "
                  f"{c['chunks']:>6} {str(s['weights']):>10} {c['omega']:>12} {mean_w:>9.1f} "
                  f"{fam['lightest_tree_weight']:>6} {fam['lightest_tree_omega']:>10} {s['balance_status']:>10} "
                  f"{sec:>7.1f}", flush=True)


if __name__ == "__main__":
    main()
