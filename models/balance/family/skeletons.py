"""Skeletons: the k-hop trees a family is built on, with hubs and their labels.

A skeleton is a k-hop tree from :func:`synth.models.khop.search.construct.heuristic_tree`
(on the torus metric and on dimension-weighted metrics
``D_c(u, v) = sum_i c_i |dx_i|``, :func:`~synth.models.balance.family.profiles.dimension_metric`,
which shift hops between dimensions) or from :func:`synth.models.khop.solve_khop`
(small tori).  Its inner vertices are the *hubs*; a hub's skeleton label is an upper
bound on its label (labels only go down, so a hub whose skeleton label is below ``h``
stays below ``h``).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> name, parent, labels = skeleton(parse_torus("3x4"), 2, (1, 1), 0, 30.0, primary=True)
>>> name, int(labels.max()) <= 2, int(parent[0])
('heuristic tree, dimension costs (1, 1)', True, -1)
"""

from __future__ import annotations

import time

import numpy as np

from synth.models.khop.search.construct import heuristic_tree
from synth.models.forest.instance import tree_depths, tree_weight
from synth.models.khop import solve_khop

from .profiles import dimension_metric

__all__ = ["skeleton", "skeletons", "DEFAULT_COSTS", "EXACT_MAX_VERTICES", "ITERATIONS"]

#: dimension-cost vectors of the heuristic skeletons (:func:`dimension_metric`)
DEFAULT_COSTS = ((1, 1), (2, 1), (1, 2), (3, 2), (2, 3))
EXACT_MAX_VERTICES = 256   # above this the exact k-hop pipeline rarely beats the heuristic in its share of time
ITERATIONS = ((50, 20), (4, 2))  # heuristic perturbation rounds (first cost vector, others), small / large tori


def skeleton(t, k, job, seed, share, primary=False):
    """One skeleton ``(name, parent, labels)``: ``job`` is ``"exact"`` or a dimension-cost tuple.

    The heuristic runs a fixed number of perturbation rounds (:data:`ITERATIONS`, by torus size
    and job), so its tree depends on the seed and not on the machine's speed unless ``share``
    cuts it short.  A weighted metric is scaled by ``k + 1``: the heuristic's label-closing
    step assumes unit steps, and with every distance above ``k`` it leaves labels alone.
    ``None`` when the exact solver found no tree in its ``share`` of seconds.
    """
    if job == "exact":
        res = solve_khop(t, k, time_limit=share, seed=seed)
        if res.parent is None:
            return None
        parent = np.asarray(res.parent, dtype=np.int64)
        return f"k-hop solver tree ({res.status})", parent, tree_depths(parent)
    its = ITERATIONS[t.n_vertices > EXACT_MAX_VERTICES][0 if primary else 1]
    D = dimension_metric(t, job)
    if len(set(job)) > 1:
        D = D * (k + 1)
    res = heuristic_tree(D, k, seed=seed, time_limit=share, iterations=its)
    parent = np.asarray(res.parent, dtype=np.int64)
    labels = np.asarray(res.labels, dtype=np.int64).copy()
    labels[0] = 0
    kids = np.flatnonzero(parent >= 0)
    if np.any(labels[kids] <= labels[parent[kids]]) or labels.max() > k:
        labels = tree_depths(parent)
    return f"heuristic tree, dimension costs {tuple(job)}" + (f", seed {seed}" if seed else ""), parent, labels


def skeletons(t, k: int, *, costs=DEFAULT_COSTS, seed: int = 0, time_limit: float = 10.0, exact=None,
              progress=None) -> list:
    """k-hop trees to build families on: ``[(name, parent, labels), ...]``, lightest first.

    One from :func:`synth.models.khop.solve_khop` (``exact``, by default on tori of at most
    :data:`EXACT_MAX_VERTICES` vertices; labels are the depths) and one from the heuristic
    per dimension-cost vector in ``costs`` (its own labels, which are at least the depths
    and leave the hubs more room).  The jobs share the time; duplicate trees are dropped.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> sk = skeletons(parse_torus("3x4"), 2, costs=((1, 1),), time_limit=2)
    >>> [name for name, _, _ in sk]
    ['k-hop solver tree (optimal)']
    """
    say = progress or (lambda _m: None)
    t0 = time.monotonic()
    exact = t.n_vertices <= EXACT_MAX_VERTICES if exact is None else exact
    jobs = (["exact"] if exact else []) + [tuple(c) for c in costs]
    out, seen = [], set()
    for j, job in enumerate(jobs):
        left = time_limit - (time.monotonic() - t0)
        share = max(0.2, left / (len(jobs) - j))
        sk = skeleton(t, k, job, seed, share, primary=(j == int(exact)))
        if sk is None or sk[1].tobytes() in seen:
            continue
        seen.add(sk[1].tobytes())
        W = tree_weight(t, sk[1])
        say(f"skeleton: {sk[0]}, W = {W}")
        out.append((W, j, sk))
    out.sort(key=lambda s: s[:2])
    return [sk for _, _, sk in out]
