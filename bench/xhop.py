"""Depth-bounded exchange schedules against k-hop trees: weight, bound, rounds and modeled time.

For each torus and each depth ``K``: the k-hop tree (``solve_khop``, ``2K`` rounds) and the
exchange forest (``solve_xhop``, ``2K + 1`` rounds), both certified under Γ (rounds, Ψ = Ω = 1,
weight re-derived by the checker), and the modeled time of docs/spec.md §1 (400 Gb/s, 400 ns per
hop, alpha 1 us, 4-byte elements) at each message size; the faster of the two is marked
(``t`` tree, ``x`` exchange, ``=`` tie).  A
second table gives, per size, the best tree and the best exchange schedule over every ``K``.

Run: ``python bench/xhop.py [--set default|quick] [--only 8x8,16x16] [--time-limit 30] [--seed 0]
[--sizes 64KiB,1MiB,64MiB] [--json [FILE]]``; ``x/t`` is the exchange schedule's modeled time
over the tree's.  Heavy: about ``2 H`` solves of up to ``--time-limit`` seconds per torus (plus
the k-hop solver's own overruns); run it once, in the background, on a quiet machine.
"""

from __future__ import annotations

import time

from _harness import Col, Ratio, Table, log, parse_args, parser

from synth.models.khop import solve_khop
from synth.models.xhop import solve_xhop

from synth.check.claims import certify
from synth.check import measure_symmetric
from synth.analysis.cost import model_time
from synth.units import format_size, parse_size
from synth.symmetry.torus import torus_gamma
from synth.schedule.lift import lifted_weights
from synth.schedule import chunk_elements, exchange_schedule, tree_schedule
from synth.topology.torus import parse_torus

SETS = {"default": [("8x8",), ("16x16",)], "quick": [("4x4",)]}
MARK = {"exchange": "x", "tree": "t", "tie": "="}


def _times(base, group, sizes):
    out = []
    for n_bytes in sizes:
        m = measure_symmetric(base, group, chunk_elements(lifted_weights(base, group), n_bytes // 4))
        out.append(model_time(m))
    return out


def _claims(base, group):
    c = certify(base, group).claims
    return int(c["rounds"]), str(c["psi"]), str(c["omega"]), str(c["weight"])


def run(shape, time_limit, seed, sizes):
    t = parse_torus(shape)
    g = torus_gamma(t)
    H = t.diameter
    trees = {}
    for k in range(1, H + 1):
        t0 = time.monotonic()
        r = solve_khop(t, k, time_limit=time_limit, seed=seed)
        trees[k] = r
        log(f"{shape} tree K={k}: W={r.weight} LB={r.lower_bound} {r.status} {time.monotonic() - t0:.1f}s")
    rows = []
    for k in range(1, H + 1):
        tr = trees[k]
        t0 = time.monotonic()
        x = solve_xhop(t, k, time_limit=time_limit, seed=seed, trees=list(trees.values()))
        xs = time.monotonic() - t0
        log(f"{shape} exchange K={k}: W={x.weight} LB={x.lower_bound} {x.status} b={x.b} {xs:.1f}s "
            f"({x.bound_method})")
        tb = tree_schedule(t, tr.parent, 0, route=t.route)
        xb = exchange_schedule(t, x.parent, x.a, x.b, route=t.route)
        t_claims, x_claims = _claims(tb, g), _claims(xb, g)
        assert t_claims[1:] == ("1", "1", str(tr.weight)) and x_claims[1:] == ("1", "1", str(x.weight))
        tt, xt = _times(tb, g, sizes), _times(xb, g, sizes)
        rows.append(dict(
            shape=shape, K=k, sizes=sizes,
            tree_weight=int(tr.weight), tree_lower_bound=float(tr.lower_bound), tree_status=tr.status,
            tree_rounds=t_claims[0], tree_gap=float(tr.gap), tree_seconds=round(float(tr.seconds), 1),
            tree_times_us=[v * 1e6 for v in tt],
            x_weight=int(x.weight), x_lower_bound=float(x.lower_bound), x_status=x.status,
            x_rounds=x_claims[0], x_gap=float(x.gap), x_seconds=round(xs, 1), b=int(x.b),
            b_coords=str(tuple(int(c) for c in t.coords(x.b))), exchange_hops=int(t.dist(0, x.b)),
            bound_method=x.bound_method, x_times_us=[v * 1e6 for v in xt],
            winner=["exchange" if b < a - 1e-12 else ("tree" if a < b - 1e-12 else "tie") for a, b in zip(tt, xt)],
            **{f"tree_us_{i}": a * 1e6 for i, a in enumerate(tt)}, **{f"x_us_{i}": b * 1e6 for i, b in enumerate(xt)},
        ))
    return rows


def _columns(sizes):
    bar = Col("|", text=lambda r: "|")
    cols = [Col("torus", "shape", ">6"), Col("K", fmt=">2"), bar, Col("W_tree", "tree_weight", ">6"),
            Col("LB", "tree_lower_bound", ">6.0f"), Col("S", "tree_rounds", ">3"), Col("s", "tree_seconds", ">5.1f"),
            bar, Col("W_x", "x_weight", ">5"), Col("LB_x", "x_lower_bound", ">5.0f"), Col("gap", "x_gap", ">6.1%"),
            Col("S", "x_rounds", ">3"), Col("b", "b_coords", ">8"), Col("s", "x_seconds", ">5.1f")]
    for i, size in enumerate(sizes):
        cols += [bar, Col(f"{format_size(size)} tree/exch (us)", fmt=">26", text=lambda r, i=i: (
                     f"{r['tree_times_us'][i]:>10.2f} / {r['x_times_us'][i]:>10.2f} {MARK[r['winner'][i]]:>2}")),
                 Ratio("x/t", f"x_us_{i}", f"tree_us_{i}", fmt=">6.3f", key=f"x/t_{i}")]
    return cols


def _best(table, rows, sizes):
    names = [format_size(s) for s in sizes]
    for shape in sorted(set(r["shape"] for r in rows), key=lambda s: [int(v) for v in s.split("x")]):
        sub = [r for r in rows if r["shape"] == shape]
        for i, n in enumerate(names):
            bt = min(sub, key=lambda r: r["tree_times_us"][i])
            bx = min(sub, key=lambda r: r["x_times_us"][i])
            tt, xt = bt["tree_times_us"][i], bx["x_times_us"][i]
            win = "exchange" if xt < tt - 1e-9 else ("tree" if tt < xt - 1e-9 else "tie")
            table.note(f"{shape} {n}: best tree K={bt['K']} ({bt['tree_rounds']} rounds) {tt:.2f} us; best exchange "
                       f"K={bx['K']} ({bx['x_rounds']} rounds) {xt:.2f} us; {win} wins by "
                       f"{abs(tt - xt) / max(tt, xt) * 100:.1f}%")


def main(argv=None):
    ap = parser(__doc__, SETS, default_set="default", fields=(str,), spec="SHAPE", time_limit=30.0, seed=0)
    ap.add_argument("--sizes", default="64KiB,1MiB,64MiB")
    args = parse_args(ap, argv)
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    table = Table(_columns(sizes), rule=True, json=args.json)
    rows = []
    for (shape,) in args.instances:
        for row in run(shape, args.time_limit, args.seed, sizes):
            rows.append(table.add(row))
    table.note("")
    _best(table, rows, sizes)


if __name__ == "__main__":
    main()
