"""The windowed label search against the whole-torus iterated local search, same start, same time.

Per instance: the start weight (the farthest-point construction plus descent, seed 0);
the weight the whole-torus iterated local search (:func:`models._khop_heuristic.heuristic_tree`,
the baseline) reaches in ``--seconds``; the weight the windowed search
(:func:`models._khop_window.window_search`) reaches in the same time, with its windows per
second; and the ratio of the excess over ``p - 1`` each leaves (``win/ils``: below 1 when
the windowed search is ahead).  Both run in this process, one after the other.

Run: ``python bench/bench_khop_window.py [--set quick|big] [--seconds 60] [--seed 1]``
(``quick``: 32x32, k = 6, 9, a few minutes; ``big``: 32x32 and 64x64 at Table 1 depths).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from synth.models._khop_heuristic import heuristic_tree, parent_to_labels
from synth.models._khop_instance import distance_matrix, translations
from synth.models._khop_window import window_search
from synth.torus import parse_torus

SETS = {
    "quick": [("32x32", 6), ("32x32", 9)],
    "big": [("32x32", k) for k in (6, 9, 11, 12)] + [("64x64", k) for k in (10, 11, 14)],
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="quick", choices=sorted(SETS))
    ap.add_argument("--seconds", type=float, default=60.0, help="time of each search")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    print(f"{'torus':>6} {'k':>3} {'p-1':>6} {'start':>6} {'ils':>6} {'window':>6} {'win/s':>7} {'win/ils':>8}",
          flush=True)
    for shape, k in SETS[a.set]:
        t = parse_torus(shape)
        D = distance_matrix(t)
        shifts = translations(t, 2)
        p1 = t.n_vertices - 1
        start = heuristic_tree(D, k, seed=0, iterations=0, n_orders=2)
        ils = heuristic_tree(D, k, seed=a.seed, iterations=10 ** 9, time_limit=a.seconds, start=start.parent,
                             n_orders=0, bfs=False, shifts=shifts)
        t0 = time.monotonic()
        win = window_search(D, k, np.minimum(parent_to_labels(start.parent), k), seed=a.seed,
                            deadline=t0 + a.seconds, shifts=shifts)
        rate = win.windows / max(time.monotonic() - t0, 1e-9)
        ratio = (win.weight - p1) / max(ils.weight - p1, 1)
        print(f"{shape:>6} {k:>3} {p1:>6} {start.weight:>6} {ils.weight:>6} {win.weight:>6} {rate:>7.0f} "
              f"{ratio:>8.3f}", flush=True)


if __name__ == "__main__":
    main()
