"""Depth-bounded exchange schedules against k-hop trees: weight, bound, rounds and modeled time.

For each torus and each depth ``K``: the k-hop tree (``solve_khop``, ``2K`` rounds) and the
exchange forest (``solve_xhop``, ``2K + 1`` rounds), both certified under Γ (rounds, Ψ = Ω = 1,
weight re-derived by the checker), and the modeled time of SPEC section 1 (400 Gb/s, 400 ns per
hop, alpha 1 us, 4-byte elements) at each message size; the faster of the two is marked
(``t`` tree, ``x`` exchange, ``=`` tie).  A
second table gives, per size, the best tree and the best exchange schedule over every ``K``.

Run: ``python bench/bench_xhop.py [--shapes 8x8,16x16] [--time-limit 30] [--seed 0]
[--sizes 64KiB,1MiB,64MiB] [--json out.json]``.  Heavy: about ``2 H`` solves of up to
``--time-limit`` seconds per torus (plus the k-hop solver's own overruns); run it once, in the
background, on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from synth.models.khop import solve_khop
from synth.models.xhop import solve_xhop

from synth.certify import certify
from synth.check import measure_symmetric
from synth.cost import format_size, model_time, parse_size
from synth.group import torus_gamma
from synth.lift import lifted_weights
from synth.schedule import chunk_elements, exchange_schedule, tree_schedule
from synth.torus import parse_torus


def _times(base, group, sizes):
    out = []
    for n_bytes in sizes:
        m = measure_symmetric(base, group, chunk_elements(lifted_weights(base, group), n_bytes // 4))
        out.append(model_time(m))
    return out


def _claims(base, group):
    c = certify(base, group).claims
    return int(c["rounds"]), str(c["psi"]), str(c["omega"]), str(c["weight"])


def run(shape, time_limit, seed, sizes, log):
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
            shape=shape, K=k,
            tree=dict(weight=int(tr.weight), lower_bound=float(tr.lower_bound), status=tr.status, rounds=t_claims[0],
                      gap=float(tr.gap), seconds=round(float(tr.seconds), 1), times_us=[v * 1e6 for v in tt]),
            exchange=dict(weight=int(x.weight), lower_bound=float(x.lower_bound), status=x.status,
                          rounds=x_claims[0], gap=float(x.gap), seconds=round(xs, 1), b=int(x.b),
                          b_coords=[int(c) for c in t.coords(x.b)], exchange_hops=int(t.dist(0, x.b)),
                          bound_method=x.bound_method, times_us=[v * 1e6 for v in xt]),
            winner=["exchange" if b < a - 1e-12 else ("tree" if a < b - 1e-12 else "tie") for a, b in zip(tt, xt)],
        ))
    return rows


def _print(rows, sizes, out=sys.stdout):
    names = [format_size(s) for s in sizes]
    hdr = (f"{'torus':>6} {'K':>2} | {'W_tree':>6} {'LB':>6} {'S':>3} {'s':>5} | {'W_x':>5} {'LB_x':>5} {'gap':>6} "
           f"{'S':>3} {'b':>8} {'s':>5} | " + " | ".join(f"{n + ' tree/exch (us)':>26}" for n in names))
    print(hdr, file=out)
    print("-" * len(hdr), file=out)
    for r in rows:
        tr, x = r["tree"], r["exchange"]
        cells = []
        for i in range(len(sizes)):
            mark = {"exchange": "x", "tree": "t", "tie": "="}[r["winner"][i]]
            cells.append(f"{tr['times_us'][i]:>10.2f} / {x['times_us'][i]:>10.2f} {mark:>2}")
        lb = x["lower_bound"]
        print(f"{r['shape']:>6} {r['K']:>2} | {tr['weight']:>6} {tr['lower_bound']:>6.0f} {tr['rounds']:>3} "
              f"{tr['seconds']:>5.1f} | {x['weight']:>5} {lb:>5.0f} {100 * x['gap']:>5.1f}% {x['rounds']:>3} "
              f"{tuple(x['b_coords'])!s:>8} {x['seconds']:>5.1f} | " + " | ".join(cells), file=out)
    print(file=out)
    for shape in sorted(set(r["shape"] for r in rows), key=lambda s: [int(v) for v in s.split("x")]):
        sub = [r for r in rows if r["shape"] == shape]
        for i, n in enumerate(names):
            bt = min(sub, key=lambda r: r["tree"]["times_us"][i])
            bx = min(sub, key=lambda r: r["exchange"]["times_us"][i])
            tt, xt = bt["tree"]["times_us"][i], bx["exchange"]["times_us"][i]
            win = "exchange" if xt < tt - 1e-9 else ("tree" if tt < xt - 1e-9 else "tie")
            print(f"{shape} {n}: best tree K={bt['K']} ({bt['tree']['rounds']} rounds) {tt:.2f} us; best exchange "
                  f"K={bx['K']} ({bx['exchange']['rounds']} rounds) {xt:.2f} us; {win} wins by "
                  f"{abs(tt - xt) / max(tt, xt) * 100:.1f}%", file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="8x8,16x16")
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sizes", default="64KiB,1MiB,64MiB")
    ap.add_argument("--json", default=None, help="write the rows to this file")
    args = ap.parse_args(argv)
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    rows = []
    for shape in args.shapes.split(","):
        rows.extend(run(shape, args.time_limit, args.seed, sizes, lambda m: print(m, file=sys.stderr, flush=True)))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(dict(sizes=sizes, time_limit=args.time_limit, seed=args.seed, rows=rows), f, indent=1)
    _print(rows, sizes)


if __name__ == "__main__":
    main()
