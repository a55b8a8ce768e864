"""Balanced families (models/balance*.py): rounds, chunks, Omega and seconds per instance.

Run: ``python bench/bench_balance.py [--check] [--max-side 24] [--time-limit 60]``.

Sections: the paper's rectangular tori (Theorem 6.1), every m x n with
3 <= m, n <= max-side, d-dimensional rectangular tori, and 2H-1 exchange
schedules under subgroups of equal-sided tori.  ``chunks`` is ``|G| * sum(w)``;
``bound`` is the fewest chunks any Omega = 1 schedule built from units of the
family can have (``|E| / max incidences of a unit in one round``), whatever the
group.  Omega is re-derived by ``synth.check.measure_symmetric``; with
``--check`` every headline result is also certified by ``synth.certify.certify``
(explicit execution of the lifted schedule when it has at most 30M
transmissions), and the certify time is printed.
"""

import argparse
import time

from synth.certify import certify
from synth.group import torus_gamma, torus_translations, torus_translations_negation
from synth.models.balance import balance_bfs_trees, balance_exchange_forests
from synth.torus import parse_torus

GROUPS = {"gamma": torus_gamma, "trans-neg": torus_translations_negation, "trans": torus_translations}
FAMILY = {"trees": balance_bfs_trees, "exchange": balance_exchange_forests}
HEAD = f"{'instance':<10} {'group':<10} {'family':<9} {'status':<11} {'rounds':>6} {'H':>4} {'units':>5} " \
       f"{'chunks':>7} {'bound':>7} {'Omega':>6} {'seconds':>8}"


def run(shape, group, family, args, check=False):
    t = parse_torus(shape)
    g = GROUPS[group](t)
    r = FAMILY[family](t, g, time_limit=args.time_limit, seed=args.seed)
    line = (f"{shape:<10} {group:<10} {family:<9} {r.status:<11} {r.rounds:>6} {t.diameter:>4} "
            f"{sum(r.weights):>5} {r.chunks:>7} {r.chunk_bound:>7} {str(r.omega):>6} {r.seconds:>8.3f}")
    if check and r.base is not None:
        t0 = time.perf_counter()
        c = certify(r.base, g)
        ok = c.claims["omega"] == str(r.omega) and c.claims["psi"] == "1" and c.claims["theta"] == "1"
        line += (f"  certify {time.perf_counter() - t0:.1f}s ok={ok} lb={c.claims['round_lower_bound']} "
                 f"round_optimal={c.claims['round_optimal']}")
    print(line, flush=True)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="certify the headline results (explicit execution)")
    ap.add_argument("--max-side", type=int, default=24)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    print("== paper's rectangular tori, two BFS trees (Theorem 6.1: 80 / 136 / 260 rounds, 4mn chunks)")
    print(HEAD)
    for shape in ("64x16", "128x8", "256x4"):
        run(shape, "trans-neg", "trees", args, args.check)
    print("-- beyond the paper: forest plus exchange, 2H-1 rounds (all sides even)")
    for shape in ("64x16", "128x8", "256x4"):
        for group in ("trans-neg", "trans"):
            run(shape, group, "exchange", args, args.check)

    print(f"\n== every m x n, 3 <= m, n <= {args.max_side}, BFS trees, translations + negation")
    print(HEAD)
    t0 = time.perf_counter()
    worst, failures, by_parity = 0.0, [], {}
    for m in range(3, args.max_side + 1):
        for n in range(3, args.max_side + 1):
            r = run(f"{m}x{n}", "trans-neg", "trees", args)
            worst = max(worst, r.seconds)
            if not (r.status == "optimal" and r.omega == 1 and r.rounds == 2 * parse_torus(f"{m}x{n}").diameter):
                failures.append((m, n))
            by_parity.setdefault((m % 2, n % 2), set()).add(sum(r.weights))
    print(f"-- {(args.max_side - 2) ** 2} instances in {time.perf_counter() - t0:.1f} s (slowest {worst:.3f} s); "
          f"failures: {failures or 'none'}; units by (m odd, n odd): "
          + ", ".join(f"{k}: {sorted(v)}" for k, v in sorted(by_parity.items())))

    print("-- same grid, translations only (|G| = mn, 4 orbits): fewer chunks where every level splits in 4")
    t0 = time.perf_counter()
    fewer, at_bound, total = [], 0, 0
    for m in range(3, args.max_side + 1):
        for n in range(3, args.max_side + 1):
            t = parse_torus(f"{m}x{n}")
            a = balance_bfs_trees(t, torus_translations_negation(t), time_limit=args.time_limit, seed=args.seed)
            b = balance_bfs_trees(t, torus_translations(t), time_limit=args.time_limit, seed=args.seed)
            total += 1
            at_bound += b.chunks == b.chunk_bound
            if b.omega == 1 and b.chunks < a.chunks:
                fewer.append(f"{m}x{n}:{b.chunks}")
    print(f"   {total} instances in {time.perf_counter() - t0:.1f} s; translations only reach the bound on "
          f"{at_bound}; fewer chunks than translations + negation on {len(fewer)}: {' '.join(fewer) or '-'}")

    print("\n== d-dimensional rectangular tori")
    print(HEAD)
    for shape in ("4x4x8", "8x8x16", "4x8x16"):
        for group in ("trans-neg", "trans"):
            for family in ("trees", "exchange"):
                run(shape, group, family, args, args.check)

    print("\n== SP-allreduce's 2H rounds on odd equal-sided tori: translations only vs Gamma")
    print(HEAD)
    for shape in ("9x9", "15x15", "3x3x3", "5x5x5"):
        for group in ("gamma", "trans"):
            run(shape, group, "trees", args, args.check)

    print("\n== 2H-1 exchange schedules under subgroups of equal-sided tori (bound |E|/2)")
    print(HEAD)
    for shape in ("8x8", "16x16"):
        for group in ("gamma", "trans-neg", "trans"):
            run(shape, group, "exchange", args, args.check)
    print("-- for comparison: 2H-round BFS trees (bound |E|: one vertex at distance H)")
    for shape in ("8x8", "16x16"):
        for group in ("gamma", "trans-neg", "trans"):
            run(shape, group, "trees", args)


if __name__ == "__main__":
    main()
