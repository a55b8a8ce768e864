"""Windowed label search for big tori: re-label a ball of the tree, every other label fixed.

The iterated local search of :mod:`models.forest.labels` re-prices every label of every
vertex after each perturbation, ``O(V^2 k)`` work: 0.26 s a pass on 64x64 (k = 11) and
a few passes a perturbation, so a 600 s solve gets a few hundred perturbations.  A
perturbation is local, though, and so is most of its repair.  Here a perturbation of a
ball is repaired inside a *window* (7 ms a window there, 5.5 ms on 32x32):

* the movable vertices ``M``: the non-root vertices within ``radius`` of a centre;
* the frozen clients ``F``: the other vertices ``x`` with ``dist(x, M) <= c(x)`` (their own
  cost), the only ones whose cost a change of labels in ``M`` can touch (a vertex
  farther from ``M`` than its cost keeps its parent or an equally near one);
* every other vertex is *outside*, and is summarized by ``ext[w, b]``: the distance from
  ``w`` to the nearest outside vertex of label ``< b`` (the root included).

:class:`models.forest.labels.LabelSearch` runs on the window (``M + F`` plus a dummy root
that serves nobody) with ``ext`` and ``F`` frozen, and its cost change is the exact change
of the whole tree's weight.  A window costs ``O(|M + F| V)`` to build and its search
``O(|M + F|^2 k)`` per pass.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.models.forest.instance import distance_matrix
>>> from synth.models.forest.labels import labels_cost
>>> t = parse_torus("12x12")
>>> D = distance_matrix(t)
>>> start = np.minimum(D[0].astype(np.int64), 3)          # truncated BFS labels, depth 3
>>> res = window_search(D, 3, start, seed=0, iterations=40)
>>> res.weight < labels_cost(D, start), res.weight == labels_cost(D, res.labels)
(True, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from synth.models.forest.labels import _BIG, LabelSearch, _shift_perturb

__all__ = ["Window", "window_instance", "WindowResult", "window_search", "own_costs"]


@dataclass(frozen=True)
class Window:
    """A window of a labelled tree (module docstring).

    ``ids[0]`` is ``-1`` (the dummy root), then the movable vertices, then the frozen ones;
    ``D``, ``ext``, ``labels`` and ``frozen`` are indexed like ``ids``.
    """

    ids: np.ndarray
    n_movable: int
    D: np.ndarray
    ext: np.ndarray
    labels: np.ndarray
    frozen: np.ndarray


@dataclass(frozen=True)
class WindowResult:
    labels: np.ndarray
    weight: int
    windows: int          # perturbations tried
    improved: int         # those that lowered the weight


def own_costs(D, labels, k) -> np.ndarray:
    """``c[v] = dist(v, {0} + {u : l(u) < l(v)})``, the cost of every vertex (0 at the root)."""
    labels = np.asarray(labels)
    c = np.zeros(labels.size, dtype=np.int64)
    for h in range(1, k + 1):
        w = np.flatnonzero(labels == h)
        if w.size:
            c[w] = D[np.ix_(w, np.flatnonzero(labels < h))].min(axis=1)
    return c


def window_instance(D, labels, cost, k, movable) -> Window:
    """The window that frees ``movable`` (non-root vertex ids) and fixes every other label.

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` distances.
    labels : numpy.ndarray
        Labels of the whole tree (``0`` at the root only, else ``1..k``).
    cost : numpy.ndarray
        :func:`own_costs` of ``labels``.
    k : int
    movable : numpy.ndarray
        Vertices free to change their labels (not the root).

    Returns
    -------
    Window
    """
    V = labels.size
    movable = np.asarray(movable, dtype=np.int64)
    in_m = np.zeros(V, dtype=bool)
    in_m[movable] = True
    near = D[movable].min(axis=0)
    clients = np.flatnonzero(~in_m & (near <= cost) & (np.arange(V) > 0))
    sub = np.concatenate([movable, clients])
    outside = ~in_m
    outside[clients] = False
    # G[:, m]: nearest outside vertex of label exactly m; ext[:, b] = min over m < b
    G = np.full((sub.size, k + 1), int(_BIG), dtype=np.int64)
    out = np.flatnonzero(outside)
    lab_out = labels[out]
    Dso = D[np.ix_(sub, out)]
    for m in range(k):
        cols = np.flatnonzero(lab_out == m)
        if cols.size:
            G[:, m] = Dso[:, cols].min(axis=1)
    ext = np.full((sub.size + 1, k + 1), int(_BIG), dtype=np.int64)
    ext[1:, 1:] = np.minimum.accumulate(G[:, :k], axis=1)
    Dsub = np.full((sub.size + 1, sub.size + 1), int(_BIG), dtype=np.int32)
    Dsub[1:, 1:] = D[np.ix_(sub, sub)]
    lab = np.concatenate([[0], labels[sub]]).astype(np.int64)
    frozen = np.zeros(sub.size + 1, dtype=bool)
    frozen[0] = True
    frozen[1 + movable.size:] = True
    return Window(np.concatenate([[-1], sub]), int(movable.size), Dsub, ext, lab, frozen)


def window_search(D, k, labels, *, seed=0, iterations=None, deadline=None, radius=6, max_perturb=2, shifts=None,
                  progress=None) -> WindowResult:
    """Iterated local search in windows: perturb a ball, repair it in its window, keep it if not heavier.

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` distances.
    k : int
        Depth bound.
    labels : array_like
        Start labels (``0`` at the root, ``1..k`` elsewhere), e.g. a tree's depths.
    seed : int
        The result depends only on the seed and ``iterations`` unless ``deadline`` cuts
        the search short.
    iterations : int, optional
        Perturbations to try (default: until ``deadline``).
    deadline : float, optional
        ``time.monotonic()`` value to stop at.
    radius : int
        Radius of the window's movable ball around the perturbation's centre.
    max_perturb : int
        Largest radius of a randomized ball (at most ``radius``).
    shifts : numpy.ndarray, optional
        ``S x V`` vertex permutations (translations): half of the perturbations shift the
        labels of a ball of radius ``2..radius - 2`` by one of them instead.
    progress : callable, optional
        Called with a message on every improvement.

    Returns
    -------
    WindowResult
    """
    if iterations is None and deadline is None:
        raise ValueError("window_search needs iterations or a deadline")
    labels = np.asarray(labels, dtype=np.int64).copy()
    V = labels.size
    cost = own_costs(D, labels, k)
    weight = int(cost.sum())
    if V < 2:
        return WindowResult(labels, weight, 0, 0)
    rng = np.random.default_rng([seed, 7_340_033])
    ids = np.arange(V)
    n = improved = 0
    max_perturb = max(1, min(max_perturb, radius))
    while iterations is None or n < iterations:
        if deadline is not None and time.monotonic() > deadline:
            break
        n += 1
        centre = int(rng.integers(1, V))
        movable = np.flatnonzero((D[centre] <= radius) & (ids > 0))
        if shifts is not None and radius >= 4 and rng.random() < 0.5:
            new = _shift_perturb(labels, D, rng, shifts, radius - 2, centre=centre)
        else:
            r = int(rng.integers(1, max_perturb + 1))
            ball = np.flatnonzero((D[centre] <= r) & (ids > 0))
            new = labels.copy()
            new[ball] = rng.integers(1, k + 1, size=ball.size)
        win = window_instance(D, labels, cost, k, movable)
        ls = LabelSearch(win.D, k, win.labels, ext=win.ext, frozen=win.frozen)
        before = ls.cost
        trial = win.labels.copy()
        trial[1:1 + win.n_movable] = new[movable]
        ls.set_labels(trial)
        ls.search(deadline=deadline)
        if ls.cost <= before:
            sub = win.ids[1:]
            labels[sub] = ls.labels[1:]
            cost[sub] = ls.c[1:]
            if ls.cost < before:
                weight += ls.cost - before
                improved += 1
                if progress is not None:
                    progress(f"window search: W = {weight}")
    return WindowResult(labels, weight, n, improved)
