"""Primal heuristic for minimum-weight k-hop trees: construction plus iterated label local search.

Several seeded farthest-point orders give starts (:func:`~synth.models.forest.labels.best_prefix_labels`),
the label search of :class:`~synth.models.forest.labels.LabelSearch` descends from each, and
random or shifted perturbations of small regions iterate it until the time runs out.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.models.forest.instance import distance_matrix
>>> t = parse_torus("8x8")
>>> res = heuristic_tree(distance_matrix(t), 3, seed=0, time_limit=2.0)
>>> int(res.weight) <= 80, int(res.depth) <= 3
(True, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from synth.models.forest.instance import tree_depths
from synth.models.forest.labels import (_perturb, _shift_perturb, LabelSearch, best_prefix_labels,
                                        fps_order, labels_cost, labels_to_parent, parent_to_labels)

__all__ = ["HeuristicResult", "heuristic_tree"]


@dataclass(frozen=True)
class HeuristicResult:
    parent: np.ndarray
    labels: np.ndarray
    weight: int
    depth: int


@dataclass(frozen=True, eq=False)
class HeuristicOptions:
    """The search options of :func:`heuristic_tree` (documented there)."""

    iterations: int | None = None
    time_limit: float = 60.0
    start: object = None
    n_orders: int = 2
    bfs: bool = True
    max_radius: int | None = None
    shifts: object = None


def heuristic_tree(D, k: int, *, seed: int = 0, progress=None, **options) -> HeuristicResult:
    """A good k-hop tree rooted at 0 for the metric ``D`` (construction + iterated local search).

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` distances (the torus metric).
    k : int
        Depth bound (``1 <= k``).
    seed : int
        Seeds the orders and the perturbations.
    progress : callable, optional
        Called with a message whenever the best weight improves.
    **options
        Those of :class:`HeuristicOptions`, below.
    iterations : int, optional
        Perturbation rounds of the iterated local search (default: scaled to the
        instance).  The result depends only on ``seed`` and ``iterations`` unless
        ``time_limit`` cuts the search short.
    time_limit : float
        A safety cap in seconds.
    start : array_like, optional
        A parent array to start from as well (e.g. a previous incumbent); it is searched
        first, and wins ties.
    n_orders, bfs : int, bool
        How many farthest-point constructions to search, and whether to search the
        truncated BFS tree too (at least one start is always searched).
    max_radius : int, optional
        Largest radius of the perturbed balls (default ``round(sqrt(V) / 3)`` clipped to ``[2, 3]``).
    shifts : numpy.ndarray, optional
        ``S x V`` vertex permutations (translations, e.g.
        :func:`models.forest.instance.translations`).  When given, half of the
        perturbations shift the labels of a ball of radius 2..6 by one of them instead
        of randomizing them.  From the 120 s instance trees, 60 s of search, seeds 1-3:
        32x32, k = 6: 1272-1275 against 1276-1277; 16x16, k = 7: 281-284 against 283-284.

    Returns
    -------
    HeuristicResult
    """
    opts = HeuristicOptions(**options)
    t_end = time.monotonic() + opts.time_limit
    V = D.shape[0]
    iterations = int(min(200, max(20, 20_000 // V))) if opts.iterations is None else opts.iterations
    if k == 1 or V <= 2:
        labels = np.ones(V, dtype=np.int64)
        labels[0] = 0
        parent = labels_to_parent(D, labels)
        return HeuristicResult(parent, labels, labels_cost(D, labels), 1 if V > 1 else 0)
    ls, best_lab, best_cost = _construct(D, k, seed, opts, t_end)
    if progress:
        progress(f"heuristic: construction + descent W = {best_cost}")
    # small balls work best: radius <= 3 gave 368-370 against 371 (16x16, k = 3), 293-294 against
    # 299-300 (k = 6) and 1152 against 1178 (32x32, k = 11; radius 11) in 30-40 s
    max_r = max(2, min(3, int(round(np.sqrt(V) / 3)))) if opts.max_radius is None else int(opts.max_radius)
    best_lab, best_cost = _iterated(ls, (best_lab, best_cost), np.random.default_rng([seed, 1_000_003]),
                                    (iterations, max_r, opts.shifts), t_end, progress)
    parent = labels_to_parent(ls.D, best_lab)
    depth = int(tree_depths(parent).max())
    return HeuristicResult(parent, best_lab, int(best_cost), depth)


def _construct(D, k, seed, opts, t_end):
    """The searched starts of :func:`heuristic_tree`: ``(label search, best labels, their cost)``."""
    def candidates():
        if opts.start is not None:                                  # the given tree first: always searched
            yield np.minimum(parent_to_labels(opts.start), k)
        if opts.bfs or (opts.start is None and opts.n_orders == 0):
            yield np.minimum(D[0].astype(np.int64), k)             # truncated BFS: good when k is near H
        for i in range(opts.n_orders):                              # spread hubs: good when k is small
            yield best_prefix_labels(D, fps_order(D, np.random.default_rng([seed, i])), k)

    ls = None
    best_lab, best_cost = None, None
    for lab in candidates():
        if best_lab is not None and time.monotonic() > t_end:
            break
        if ls is None:
            ls = LabelSearch(D, k, lab)
        else:
            ls.set_labels(lab)
        ls.search(deadline=t_end)
        if best_cost is None or ls.cost < best_cost:
            best_lab, best_cost = ls.labels.copy(), ls.cost
    return ls, best_lab, best_cost


def _iterated(ls, best, rng, plan, t_end, progress):
    """Iterated local search from ``best = (labels, cost)``: perturb a ball, search again, keep if not worse;
    ``plan`` is ``(iterations, largest ball radius, shifts or None)``.  The best ``(labels, cost)``."""
    iterations, max_r, shifts = plan
    best_lab, best_cost = best
    cur_lab, cur_cost = best_lab.copy(), best_cost
    Dm, k = ls.D, ls.k
    for _ in range(iterations):
        if time.monotonic() > t_end:
            break
        if shifts is not None and rng.random() < 0.5:
            ls.set_labels(_shift_perturb(cur_lab, Dm, rng, shifts, 6))
        else:
            radius = int(rng.integers(1, max_r + 1))
            ls.set_labels(_perturb(cur_lab, Dm, k, rng, radius))
        ls.search(deadline=t_end)
        if ls.cost <= cur_cost:
            cur_lab, cur_cost = ls.labels.copy(), ls.cost
            if cur_cost < best_cost:
                best_lab, best_cost = cur_lab.copy(), cur_cost
                if progress:
                    progress(f"heuristic: W = {best_cost}")
    return best_lab, best_cost
