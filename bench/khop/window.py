"""The windowed label search against the whole-torus iterated local search, same start, same time.

Per instance: the start weight (the farthest-point construction plus descent, seed 0);
the weight the whole-torus iterated local search (:func:`models.forest.labels.heuristic_tree`,
the baseline) reaches in ``--seconds``; the weight the windowed search
(:func:`models.khop.search.window.window_search`) reaches in the same time, with its windows per
second; and the ratio of the excess over ``p - 1`` each leaves (``win/ils``: below 1 when
the windowed search is ahead).  Both run in this process, one after the other.

Run: ``python bench/khop/window.py [--set quick|big] [--only 32x32:6] [--seconds 60] [--seed 1]``
(``quick``: 32x32, k = 6, 9, a few minutes; ``big``: 32x32 and 64x64 at Table 1 depths).
"""

from __future__ import annotations

import time

import numpy as np

from _common import Col, Ratio, Table, khop_starts, parse_args, parser

from synth.models.forest.labels import parent_to_labels
from synth.models.khop.search.construct import heuristic_tree
from synth.models.forest.instance import translations
from synth.models.khop.search.window import window_search

SETS = {
    "quick": [("32x32", 6), ("32x32", 9)],
    "big": [("32x32", k) for k in (6, 9, 11, 12)] + [("64x64", k) for k in (10, 11, 14)],
}

COLUMNS = [Col("torus", "shape", ">6"), Col("k", fmt=">3"), Col("p-1", "p1", ">6"), Col("start", fmt=">6"),
           Col("ils", fmt=">6"), Col("window", fmt=">6"), Col("win/s", "rate", ">7.0f"),
           Ratio("win/ils", "window", "ils", minus="p1", fmt=">8.3f")]


def main(argv=None):
    a = parse_args(parser(__doc__, SETS, seed=1, seconds=60.0), argv)
    table = Table(COLUMNS, json=a.json)
    for shape, k, t, D, start in khop_starts(a.instances):
        shifts = translations(t, 2)
        ils = heuristic_tree(D, k, seed=a.seed, iterations=10 ** 9, time_limit=a.seconds, start=start.parent,
                             n_orders=0, bfs=False, shifts=shifts)
        t0 = time.monotonic()
        win = window_search(D, k, np.minimum(parent_to_labels(start.parent), k), seed=a.seed,
                            deadline=t0 + a.seconds, shifts=shifts)
        table.add({"shape": shape, "k": k, "p1": t.n_vertices - 1, "start": start.weight, "ils": ils.weight,
                   "window": win.weight, "rate": win.windows / max(time.monotonic() - t0, 1e-9)})


if __name__ == "__main__":
    main()
