"""The jump search against the windowed label search, same start, same time.

Per instance: the start weight (the farthest-point construction plus descent, seed 0);
the weight the windowed label search (:func:`models.khop.search.window.window_search`, the
baseline: before the jump search, the pipeline's best arm on big tori) reaches from it
in ``--seconds``; the weight the jump search (:func:`models.khop.search.jump.jump_search`)
reaches from the same start in the same time, with its perturbation rounds per second,
and from the root alone (no start); and the ratio of the excess over ``p - 1`` the jump
search (from the start) leaves to the baseline's (``jump/win``: below 1 when the jump
search is ahead).  All run in this process, one after the other.

Run: ``python bench/khop/jump.py [--set quick|big] [--only 16x16:3] [--seconds 60] [--seed 1]``
(``quick``: 16x16, k = 3, 4 and 32x32, k = 6, 9, about 12 minutes at 60 s; ``big``:
32x32 and 64x64 at the Table 1 depths).
"""

from __future__ import annotations

import time

import numpy as np

from _common import Col, Ratio, Table, khop_starts, parse_args, parser

from synth.models.forest.labels import parent_to_labels
from synth.models.forest.instance import translations
from synth.models.khop.search.jump import jump_search
from synth.models.khop.search.window import window_search

SETS = {
    "quick": [("16x16", 3), ("16x16", 4), ("32x32", 6), ("32x32", 9)],
    "big": [("32x32", k) for k in (6, 9, 11, 12)] + [("64x64", k) for k in (10, 11, 14)],
}

COLUMNS = [Col("torus", "shape", ">6"), Col("k", fmt=">3"), Col("p-1", "p1", ">6"), Col("start", fmt=">6"),
           Col("window", fmt=">7"), Col("jump", fmt=">6"), Col("rounds/s", "rate", ">9.1f"),
           Col("jump(root)", "jump_root", ">11"), Ratio("jump/win", "jump", "window", minus="p1", fmt=">9.3f")]


def main(argv=None):
    a = parse_args(parser(__doc__, SETS, seed=1, seconds=60.0), argv)
    table = Table(COLUMNS, json=a.json)
    for shape, k, t, D, start in khop_starts(a.instances):
        labels = np.minimum(parent_to_labels(start.parent), k)
        win = window_search(D, k, labels, seed=a.seed, deadline=time.monotonic() + a.seconds,
                            shifts=translations(t, 2))
        t0 = time.monotonic()
        jump = jump_search(D, k, labels, seed=a.seed, deadline=t0 + a.seconds)
        rate = jump.rounds / max(time.monotonic() - t0, 1e-9)
        root = jump_search(D, k, None, seed=a.seed, deadline=time.monotonic() + a.seconds)
        table.add({"shape": shape, "k": k, "p1": t.n_vertices - 1, "start": start.weight, "window": win.weight,
                   "jump": jump.weight, "rate": rate, "jump_root": root.weight})


if __name__ == "__main__":
    main()
