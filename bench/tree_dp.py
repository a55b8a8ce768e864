"""The timed pricing's tree DP (:func:`~synth.models.packing.tree_pricing.tree_labels`) against the DP as it was
before 2026-12-07 (every row's arc prices copied whole, ``(rows, vertices, labels)``, and each level's children
sorted by parent), kept here as the baseline.

Run: ``python bench/tree_dp.py [--set quick|full] [--only NETWORK:R,...] [--json [FILE]]``; ``NETWORK`` as in
``bench/sweep.py`` (a torus shape with its first link failed, ``/p`` its periodic network, or a ``--machine``
preset).

Each instance takes the same rows (the fixed starting labellings of its owners, :func:`sweep.priced_rows`), their
cheapest parents under the same random prices, and runs the DP on them :data:`REPS` times with each version in
this process.  Printed: the rows, the CPU seconds, ``x before`` (the seconds over the baseline's) and whether the
labels are the baseline's.
"""

import time

import numpy as np
from _harness import Col, Ratio, Table, parse_args, parser
from sweep import priced_rows

from synth.models.packing import tree_pricing

SETS = {"quick": [("16x16", 22), ("16x16x16/p", 33)],
        "full": [("mi250:4", 32), ("16x16", 22), ("32x32/p", 44), ("16x16x16/p", 33), ("16x20x28/p", 44)]}
COLUMNS = [Col("network", fmt="<11"), Col("R", fmt=">3"), Col("dp", fmt="<8"), Col("rows", fmt=">5"),
           Col("CPU s", "cpu", ">7.3f"), Ratio("x before", "cpu", fmt=">8.3f"), Col("same", fmt=">5")]
REPS = 5


def tree_labels_before(space, C, L, plink, roots, lo=None):
    """The tree DP before 2026-12-07 (the baseline)."""
    B, V = L.shape
    R, INF = space.R, np.inf
    has = plink >= 0
    par = np.where(has, space.arc_dst[np.maximum(plink, 0)], -1)
    g = np.where(has[:, :, None], C[np.maximum(plink, 0)], 0.0)
    g[:, :, 0] = INF
    if lo is not None:
        g = np.where(np.arange(R + 1)[None, None, :] < lo[:, :, None], INF, g)
    kids = np.zeros((B * V, R + 2))
    levels = []
    for level in range(1, R + 1):
        bi, vi = np.nonzero(has & (L == level))
        if bi.size == 0:
            continue
        gv = g[bi, vi] + kids[bi * V + vi, :R + 1]
        f = np.full((bi.size, R + 2), INF)
        f[:, 1:] = np.minimum.accumulate(gv, axis=1)
        key = bi * V + par[bi, vi]
        order = np.argsort(key, kind="stable")
        first = np.flatnonzero(np.r_[True, key[order][1:] != key[order][:-1]])
        kids[key[order][first]] += np.add.reduceat(f[order], first, axis=0)
        levels.append((bi, vi, gv))
    new = L.copy()
    for bi, vi, gv in reversed(levels):
        cap = new[bi, par[bi, vi]]
        new[bi, vi] = np.where(np.arange(R + 1)[None, :] < cap[:, None], gv, INF).argmin(axis=1)
    return new


def run(name, R):
    space, C, roots, L0 = priced_rows(name, R)
    plink, _ = tree_pricing.best_parents(space, C, L0, roots)
    rows, labels = [], {}
    for how, dp in (("before", tree_labels_before), ("now", tree_pricing.tree_labels)):
        dp(space, C, L0, plink, roots)      # once untimed: the first call pays for the allocations
        c0 = time.process_time()
        for _ in range(REPS):
            labels[how] = dp(space, C, L0, plink, roots)
        rows.append({"network": name, "R": R, "dp": how, "rows": int(L0.shape[0]), "cpu": time.process_time() - c0,
                     "same": "yes" if np.array_equal(labels[how], labels["before"]) else "NO"})
    return rows


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, int), spec="NETWORK:R")
    args = parse_args(ap, argv)
    table = Table(COLUMNS, baseline=lambda r: r["dp"] == "before", group=("network", "R"), json=args.json,
                  title=f"== the tree DP, {REPS} runs over the same rows and prices")
    for name, R in args.instances:
        for row in run(name, R):
            table.add(row)


if __name__ == "__main__":
    main()
