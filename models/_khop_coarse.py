"""Coarse-to-fine start for k-hop trees on big tori: solve the half torus, scale its tree up by two.

On a torus with even sides, the vertices with even coordinates form a copy of the half
torus with every distance doubled.  A tree of depth ``k' = ceil(k / 2)`` on the half
torus becomes a labelling of the full one (labels as in :mod:`models._khop_heuristic`):
the image ``2v`` of a vertex of depth ``d' >= 1`` gets label ``2 d' - 1`` (the scaled
edge of length ``2L`` splits into a unit step and a jump), every other vertex the
least ``label(2u) + dist(2u, v)`` (reached by unit steps), capped at ``k``; the label
local search then repairs the caps and polishes.  (For odd ``k``, labels
``max(1, 2 d' - 2)`` put the leaves on ``k - 1``: 64x64, k = 11, 600 s: 4605 against
4558 without, so they are not used.)  The half torus has a quarter of the
vertices (in 2-D), so its search covers the torus far better in the same time.

Measured on 64x64 from trees of 32x32 (``k' = 5``: W = 1341 after 120 s; ``k' = 6``:
1224 after 2400 s), then 2-5 s of label search: k = 10 gives W = 4706 and k = 11 gives
4605, where the direct pipeline had 4896 and 4819 after 1200 s and 180 s.  In the
pipeline (:data:`models._khop_pipeline.COARSE_FROM`), 600 s on 64x64, k = 10: 4630.

Examples
--------
>>> import time
>>> from synth.torus import parse_torus
>>> from synth.models._khop_instance import distance_matrix, tree_weight
>>> t = parse_torus("12x12")
>>> parent = coarse_start(t, 6, distance_matrix(t), deadline=time.monotonic() + 5)
>>> int(parent[0]), tree_weight(t, parent) >= t.n_vertices - 1
(-1, True)
>>> coarse_start(t, 4, distance_matrix(t), deadline=time.monotonic() + 5) is None    # ceil(4 / 2) < 3
True
"""

from __future__ import annotations

import math
import time

import numpy as np

from synth.models._khop_heuristic import LabelSearch, labels_to_parent, parent_to_labels
from synth.models._khop_instance import distance_matrix
from synth.torus import parse_torus

__all__ = ["half_torus", "scale_labels", "coarse_start", "MIN_HALF_DEPTH"]

# a half tree of depth 1 or 2 (a star, or hubs around the root) scales up badly; measured on
# 64x64 at 60 s, coarse against direct: k = 2: 28270 / 14336, k = 4: 6822 / 6553, k = 6: 5409 / 5502
MIN_HALF_DEPTH = 3


def half_torus(t):
    """The torus of half the side lengths, or ``None`` unless every side is even and at least 6."""
    if any(n % 2 or n < 6 for n in t.shape):
        return None
    return parse_torus("x".join(str(n // 2) for n in t.shape))


def scale_labels(t, half, half_labels, k, D=None) -> np.ndarray:
    """Labels on ``t`` from labels of a tree on ``half`` (module docstring), capped at ``k``.

    Parameters
    ----------
    t, half : Torus
        ``half`` is :func:`half_torus` of ``t``.
    half_labels : numpy.ndarray
        Depth labels of a tree on ``half`` (0 at the root).
    k : int
        Depth bound on ``t``.
    D : numpy.ndarray, optional
        Distances of ``t`` (computed if not given).

    >>> t = parse_torus("6x6")
    >>> lab = scale_labels(t, half_torus(t), np.array([0, 1, 1, 1, 2, 2, 1, 2, 2]), 3)
    >>> lab.reshape(6, 6)[:2].tolist()
    [[0, 1, 1, 2, 1, 1], [1, 2, 2, 3, 2, 2]]
    """
    if D is None:
        D = distance_matrix(t)
    images = t.vertex(2 * half.coords(np.arange(half.n_vertices)))
    hl = np.asarray(half_labels, dtype=np.int64)
    base = np.where(hl > 0, 2 * hl - 1, 0)
    lab = (base[:, None] + D[images]).min(axis=0)
    lab = np.minimum(lab, k)
    lab[0] = 0
    return lab.astype(np.int64)


def coarse_start(t, k, D, *, deadline, seed=0, solver="auto", say=lambda _m: None, search_share=0.1):
    """A tree of depth ``<= k`` on ``t`` from a solve of the half torus at depth ``ceil(k / 2)``.

    The half torus is solved by :func:`models._khop_pipeline.run_pipeline` without its
    LP bound (only the tree is used) until ``search_share`` of the time left before
    ``deadline`` remains; the label search on ``t`` gets the rest.

    Returns
    -------
    numpy.ndarray or None
        A parent array, or ``None`` when ``t`` has an odd side, ``ceil(k / 2) <
        MIN_HALF_DEPTH``, or the time ran out.
    """
    from synth.models._khop_pipeline import run_pipeline

    half = half_torus(t)
    kh = math.ceil(k / 2)
    if half is None or kh < MIN_HALF_DEPTH:
        return None
    name = f"coarse {half.name.split()[-1]} k={kh}"
    if kh >= half.diameter:                   # the BFS tree: its labels are the distances
        labels = half.dist(0, np.arange(half.n_vertices)).astype(np.int64)
    else:
        sub = {"parent": None, "weight": None, "bound": float(half.n_vertices - 1), "method": ""}
        sub_deadline = time.monotonic() + (1 - search_share) * (deadline - time.monotonic())
        run_pipeline(half, kh, sub, deadline=sub_deadline, seed=seed, solver=solver, bound=False,
                     say=lambda m: say(f"{name}: {m}"))
        if sub["parent"] is None:
            return None
        labels = parent_to_labels(sub["parent"])
    search = LabelSearch(D, k, scale_labels(t, half, labels, k, D))
    say(f"{name}: scaled up, W = {search.cost}")
    search.search(deadline)
    say(f"{name}: after the label search, W = {search.cost}")
    return labels_to_parent(D, search.labels)
