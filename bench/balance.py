"""Balanced families (models/balance*.py): rounds, chunks, Omega and seconds per instance.

Run: ``python bench/balance.py [--check] [--max-side 24] [--time-limit 60] [--json [FILE]]``.

Sections: the paper's rectangular tori (Theorem 6.1), every m x n with
3 <= m, n <= max-side, d-dimensional rectangular tori, and 2H-1 exchange
schedules under subgroups of equal-sided tori.  ``chunks`` is ``|G| * sum(w)``;
``bound`` is the fewest chunks any Omega = 1 schedule built from units of the
family can have (``|E| / max incidences of a unit in one round``), whatever the
group.  Omega is re-derived by ``synth.check.measure_symmetric``; with
``--check`` every headline result is also certified by ``synth.check.claims.certify``
(explicit execution of the lifted schedule when it has at most 30M
transmissions), and the certify time is printed.  ``ch/bound`` is the chunks over that bound.
"""

import time

from _harness import Col, Ratio, Table, parse_args, parser, timed

from synth.check.claims import certify
from synth.symmetry.torus import torus_gamma, torus_translations, torus_translations_negation
from synth.models.balance import balance_bfs_trees, balance_exchange_forests
from synth.topology.torus import parse_torus

GROUPS = {"gamma": torus_gamma, "trans-neg": torus_translations_negation, "trans": torus_translations}
FAMILY = {"trees": balance_bfs_trees, "exchange": balance_exchange_forests}
COLUMNS = [Col("instance", fmt="<10"), Col("group", fmt="<10"), Col("family", fmt="<9"), Col("status", fmt="<11"),
           Col("rounds", fmt=">6"), Col("H", fmt=">4"), Col("units", fmt=">5"), Col("chunks", fmt=">7"),
           Col("bound", fmt=">7"), Col("Omega", fmt=">6"), Col("seconds", fmt=">8.3f"),
           Ratio("ch/bound", "chunks", "bound", fmt=">8.2f")]
CHECK = [Col("certify", "certify_s", ">7.1f"), Col("ok", fmt=">5"), Col("lb", fmt=">5"),
         Col("round_optimal", fmt=">13")]


def run(table, shape, group, family, args, check=False):
    t = parse_torus(shape)
    g = GROUPS[group](t)
    r = FAMILY[family](t, g, time_limit=args.time_limit, seed=args.seed)
    row = {"instance": shape, "group": group, "family": family, "status": r.status, "rounds": r.rounds,
           "H": t.diameter, "units": sum(r.weights), "chunks": r.chunks, "bound": r.chunk_bound,
           "Omega": str(r.omega), "seconds": r.seconds}
    if check and r.base is not None:
        c, row["certify_s"] = timed(certify, r.base, g)
        row["ok"] = c.claims["omega"] == str(r.omega) and c.claims["psi"] == "1" and c.claims["theta"] == "1"
        row["lb"], row["round_optimal"] = c.claims["round_lower_bound"], c.claims["round_optimal"]
    table.add(row)
    return r


def main(argv=None):
    ap = parser(__doc__, time_limit=60.0, seed=0)
    ap.add_argument("--check", action="store_true", help="certify the headline results (explicit execution)")
    ap.add_argument("--max-side", type=int, default=24)
    args = parse_args(ap, argv)
    table = Table(COLUMNS + (CHECK if args.check else []), json=args.json,
                  title="== paper's rectangular tori, two BFS trees (Theorem 6.1: 80 / 136 / 260 rounds, 4mn chunks)")
    for shape in ("64x16", "128x8", "256x4"):
        run(table, shape, "trans-neg", "trees", args, args.check)
    table.note("-- beyond the paper: forest plus exchange, 2H-1 rounds (all sides even)")
    for shape in ("64x16", "128x8", "256x4"):
        for group in ("trans-neg", "trans"):
            run(table, shape, group, "exchange", args, args.check)

    table.section(f"\n== every m x n, 3 <= m, n <= {args.max_side}, BFS trees, translations + negation")
    t0 = time.perf_counter()
    worst, failures, by_parity = 0.0, [], {}
    for m in range(3, args.max_side + 1):
        for n in range(3, args.max_side + 1):
            r = run(table, f"{m}x{n}", "trans-neg", "trees", args)
            worst = max(worst, r.seconds)
            if not (r.status == "optimal" and r.omega == 1 and r.rounds == 2 * parse_torus(f"{m}x{n}").diameter):
                failures.append((m, n))
            by_parity.setdefault((m % 2, n % 2), set()).add(sum(r.weights))
    table.note(f"-- {(args.max_side - 2) ** 2} instances in {time.perf_counter() - t0:.1f} s (slowest {worst:.3f} s); "
               f"failures: {failures or 'none'}; units by (m odd, n odd): "
               + ", ".join(f"{k}: {sorted(v)}" for k, v in sorted(by_parity.items())))

    table.note("-- same grid, translations only (|G| = mn, 4 orbits): fewer chunks where every level splits in 4")
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
    table.note(f"   {total} instances in {time.perf_counter() - t0:.1f} s; translations only reach the bound on "
               f"{at_bound}; fewer chunks than translations + negation on {len(fewer)}: {' '.join(fewer) or '-'}")

    table.section("\n== d-dimensional rectangular tori")
    for shape in ("4x4x8", "8x8x16", "4x8x16"):
        for group in ("trans-neg", "trans"):
            for family in ("trees", "exchange"):
                run(table, shape, group, family, args, args.check)

    table.section("\n== SP-allreduce's 2H rounds on odd equal-sided tori: translations only vs Gamma")
    for shape in ("9x9", "15x15", "3x3x3", "5x5x5"):
        for group in ("gamma", "trans"):
            run(table, shape, group, "trees", args, args.check)

    table.section("\n== 2H-1 exchange schedules under subgroups of equal-sided tori (bound |E|/2)")
    for shape in ("8x8", "16x16"):
        for group in ("gamma", "trans-neg", "trans"):
            run(table, shape, group, "exchange", args, args.check)
    table.note("-- for comparison: 2H-round BFS trees (bound |E|: one vertex at distance H)")
    for shape in ("8x8", "16x16"):
        for group in ("gamma", "trans-neg", "trans"):
            run(table, shape, group, "trees", args)


if __name__ == "__main__":
    main()
