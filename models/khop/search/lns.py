"""Large-neighbourhood search for k-hop trees: re-solve a window of vertices exactly (CP-SAT).

Fix and optimize.  Pick a *window*: the ``size`` non-root vertices nearest a random
centre.  Every vertex outside it keeps its parent and its depth; the window's vertices
choose a new parent and depth, and CP-SAT finds the lightest choice.  The model is the
hop-indexed one (:mod:`models.khop.model`) restricted to the window's heads:

* ``z[t, i, h]`` for a window vertex ``i``: parent ``t`` at depth ``h - 1``.  An outside
  tail has a fixed depth, so it offers one layer (``depth(t) + 1 <= k``); a window tail
  offers every layer ``2..k``; the root offers layer 1;
* one parent per window vertex;
* ``z[t, i, h] => y[t, h - 1]`` for a window tail ``t`` (``y`` = "at that depth");
* *pins*: a window vertex with children outside keeps its depth (they keep theirs);
* minimize the weight of the window's edges (the rest is fixed).

Every solution is a tree of depth at most ``k`` (the pins keep the outside depths
right), the current tree is one (it is the hint), so the weight never goes up.  With
``radius=None, hubs_only=False, reduce=False`` the model holds *every* tree that agrees
with the current one outside the window (``tests/models/khop/test_khop_lns.py`` checks this against
enumeration); :func:`lns_search` trims it for speed: tails within ``radius`` of the head (the
window's longest current edge + 1), outside tails that already have children, the
arc reduction ``dist(t, i) < dist(0, i)`` for unpinned heads, and depths within 2 of the
window's current ones.

After an improving window, a label descent (:class:`models.forest.labels.LabelSearch`)
lets the vertices outside re-attach to the new hubs.

When no window of up to 60 vertices improves the tree any more, :func:`kick_search`
moves bigger pieces: it shifts the depth labels of a ball by a translation, repairs the
result with the label descent and three exact windows, and keeps it when it is not
heavier.

Measured (one thread, 60 s from the trees of ``instances/torus`` or of a 600 s solve):
32x32 k = 6 went from 1299 to 1259 (the iterated local search had moved 1316 -> 1299 in
600 s), 64x64 k = 10 from 5011 to 4988; 16x16 k = 7 from 287 to 281 (68 s); 16x16 k = 3
stayed at 369.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.models.forest.instance import distance_matrix, tree_weight
>>> import numpy as np
>>> t = parse_torus("6x6")
>>> D = distance_matrix(t)
>>> star = np.zeros(36, dtype=np.int64); star[0] = -1
>>> res = lns_search(D, 2, star, seed=0, iterations=4, size=12)
>>> res.weight < tree_weight(t, star), res.weight == tree_weight(t, res.parent)
(True, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from synth.models.backends.interrupt import cpsat_solve
from synth.models.forest.instance import tree_depths
from synth.models.forest.labels import LabelSearch, _shift_perturb, labels_to_parent

__all__ = ["LNSResult", "KickOptions", "window_arcs", "solve_window", "lns_search", "kick_search"]


@dataclass(frozen=True)
class LNSResult:
    parent: np.ndarray
    weight: int
    windows: int          # windows solved
    improved: int         # windows that lowered the weight


def _weight(D, parent):
    v = np.flatnonzero(parent >= 0)
    return int(D[parent[v], v].sum())


def window_arcs(D, k, parent, depth, window, *, radius=None, hubs_only=True, reduce=True, depth_slack=None):
    """The hop-indexed arcs ``(tail, head, layer)`` the window model may use, and the pins.

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` distances.
    k : int
    parent, depth : numpy.ndarray
        The current tree (``parent[0] = -1``) and its depths.
    window : numpy.ndarray
        Non-root vertices free to move.
    radius : int, optional
        Tails farther than this from the head are left out (the current parent never is).
    hubs_only : bool
        Leave out outside tails without children (the current parent stays).
    reduce : bool
        Leave out tails ``t`` with ``dist(t, i) >= dist(0, i)`` for heads without pins.
    depth_slack : int, optional
        A window tail may only take depths within this much of the window's current
        depths (the models stay small when ``k`` is large).

    Returns
    -------
    tail, head, layer : numpy.ndarray
    pins : dict
        Window vertex -> the depth its outside children force on it.
    """
    V = D.shape[0]
    window = np.asarray(window, dtype=np.int64)
    inwin = np.zeros(V, dtype=bool)
    inwin[window] = True
    kids = np.flatnonzero(parent >= 0)
    hub = np.zeros(V, dtype=bool)
    hub[parent[kids]] = True
    out_kids = kids[~inwin[kids] & inwin[parent[kids]]]
    pins = {int(p): int(depth[c]) - 1 for p, c in zip(parent[out_kids].tolist(), out_kids.tolist())}
    pinned = np.zeros(V, dtype=bool)
    pinned[list(pins)] = True
    # candidate (tail, head) pairs, one column per window head
    Dw = D[:, window]
    ok = np.ones(Dw.shape, dtype=bool)
    ok[0] = False                                       # the root arc is added below
    ok[window, np.arange(window.size)] = False          # no self loops
    if radius is not None:
        ok &= Dw <= radius
    if hubs_only:
        ok &= (inwin | hub)[:, None]
    if reduce:
        ok &= (Dw < D[0, window][None, :]) | pinned[window][None, :]
    cur = parent[window]
    ok[cur[cur > 0], np.flatnonzero(cur > 0)] = True     # the current parent always stays
    t, col = np.nonzero(ok)
    i = window[col]
    # layers: a window tail any of 2..k, an outside tail its depth + 1
    win_t = inwin[t]
    lo, hi = 1, k - 1                                   # depths a window tail may take
    if depth_slack is not None:
        lo = max(1, int(depth[window].min()) - depth_slack)
        hi = min(k - 1, int(depth[window].max()) + depth_slack)
    reps = np.where(win_t, max(hi - lo + 1, 0), (depth[t] + 1 <= k).astype(np.int64))
    tt = np.repeat(t, reps)
    ii = np.repeat(i, reps)
    start = np.cumsum(reps) - reps
    offs = np.arange(tt.size) - np.repeat(start, reps)
    hh = np.where(np.repeat(win_t, reps), lo + 1 + offs, np.repeat(depth[t] + 1, reps))
    # the root arcs
    tt = np.concatenate([np.zeros(window.size, dtype=np.int64), tt])
    ii = np.concatenate([window, ii])
    hh = np.concatenate([np.ones(window.size, dtype=np.int64), hh])
    # pins: a pinned head keeps its layer
    pin_of = np.full(V, -1, dtype=np.int64)
    for p, d in pins.items():
        pin_of[p] = d
    keep = (pin_of[ii] < 0) | (hh == pin_of[ii])
    return tt[keep], ii[keep], hh[keep], pins


def solve_window(D, k, parent, depth, window, *, seed=0, work_limit=1.0, time_limit=10.0, **arc_options):
    """Re-solve the window exactly (module docstring); the new ``(parent, depth, optimal)`` or ``None``.

    ``work_limit`` is CP-SAT's deterministic time (reproducible); ``time_limit`` a
    wall-clock cap.  ``None`` when CP-SAT found no solution within them (the caller
    keeps a returned tree only if it is lighter).
    """
    from ortools.sat.python import cp_model

    tail, head, layer, _pins = window_arcs(D, k, parent, depth, window, **arc_options)
    m = cp_model.CpModel()
    z = [m.new_bool_var("") for _ in range(tail.size)]
    by_head, into = {}, {}
    for n, (t, i, h) in enumerate(zip(tail.tolist(), head.tolist(), layer.tolist())):
        by_head.setdefault(i, []).append(z[n])
        into.setdefault((i, h), []).append(z[n])
    if len(by_head) < len(window):
        return None                                      # a pinned vertex with no way to keep its depth
    for lits in by_head.values():
        m.add_exactly_one(lits)
    inwin = np.zeros(D.shape[0], dtype=bool)
    inwin[window] = True
    for n, (t, h) in enumerate(zip(tail.tolist(), layer.tolist())):
        if h >= 2 and inwin[t]:
            above = into.get((t, h - 1))
            if above is None:
                m.add(z[n] == 0)
            else:
                m.add(cp_model.LinearExpr.sum(above) >= z[n])
    m.minimize(cp_model.LinearExpr.weighted_sum(z, D[tail, head].astype(np.int64).tolist()))
    cur = (parent[head] == tail) & (depth[head] == layer)
    for n in range(tail.size):
        m.add_hint(z[n], bool(cur[n]))
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.random_seed = int(seed)
    s.parameters.max_deterministic_time = float(work_limit)
    s.parameters.max_time_in_seconds = float(time_limit)
    # CP-SAT would catch Ctrl-C and stop as at a limit, so the search would go on and the
    # solve would end as if completed: cpsat_solve stops it and lets the interrupt through
    st = cpsat_solve(s, m)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    pick = np.array([s.value(v) for v in z], dtype=bool)
    new_parent, new_depth = parent.copy(), depth.copy()
    new_parent[head[pick]] = tail[pick]
    new_depth[head[pick]] = layer[pick]
    return new_parent, new_depth, st == cp_model.OPTIMAL


def _solve_near(D, k, parent, depth, centre, size, rng, seed, left):
    """Re-solve the window of the ``size`` non-root vertices nearest ``centre`` (ties at random), trimmed for speed."""
    V = D.shape[0]
    order = np.lexsort((rng.random(V), D[centre]))
    window = order[order != 0][:min(size, V - 1)]
    longest = int(D[np.maximum(parent[window], 0), window].max())
    return solve_window(D, k, parent, depth, window, seed=seed, time_limit=10.0 if left is None else left,
                        radius=longest + 1, depth_slack=2)


def lns_search(D, k, parent, *, seed=0, iterations=None, deadline=None, size=20, max_size=60,
               progress=None) -> LNSResult:
    """Improve the tree ``parent`` by re-solving random windows (module docstring).

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` distances.
    k : int
        Depth bound (the tree must respect it).
    parent : numpy.ndarray
        Start tree, ``-1`` at the root 0.
    seed : int
        Seeds the window centres and CP-SAT; the result depends only on the seed and
        the number of windows unless a wall-clock limit cuts a window short.
    iterations : int, optional
        Windows to solve (default: until ``deadline`` or a sweep without improvement at ``max_size``).
    deadline : float, optional
        ``time.monotonic()`` value to stop at.
    size, max_size : int
        First and largest window size.  Small windows are fast (20 vertices: about
        0.3 s on 32x32 and 0.5 s on 64x64, k = 10); after a sweep of ``V / size``
        windows without improvement the size grows by half, and the search stops
        after such a sweep at ``max_size``.
    progress : callable, optional
        Called with a message on every improvement.

    Returns
    -------
    LNSResult
    """
    V = D.shape[0]
    parent = np.asarray(parent, dtype=np.int64).copy()
    depth = tree_depths(parent)
    weight = _weight(D, parent)
    max_size = int(min(max_size, V - 1))
    size = int(min(size, max_size))
    if size < 1:
        return LNSResult(parent, weight, 0, 0)
    rng = np.random.default_rng([seed, 7_368_787])
    ls = LabelSearch(D, k, depth)
    n = improved = stale = 0
    while iterations is None or n < iterations:
        if stale >= V / size:                    # a sweep without improvement: bigger windows
            if size >= max_size:
                break
            size, stale = min(max_size, size + (size + 1) // 2), 0
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0.05:
            break
        n += 1
        centre = int(rng.integers(1, V))
        res = _solve_near(D, k, parent, depth, centre, size, rng, seed, left)
        if res is None:
            stale += 1
            continue
        new_parent, new_depth, _ = res
        new_weight = _weight(D, new_parent)
        if new_weight >= weight:
            stale += 1
            continue
        # the vertices outside may now hang more cheaply under the window's new hubs
        ls.set_labels(new_depth)
        ls.search(deadline=deadline)
        if ls.cost < new_weight:
            new_parent = labels_to_parent(ls.D, ls.labels)
            new_depth, new_weight = tree_depths(new_parent), _weight(D, new_parent)
        parent, depth, weight = new_parent, new_depth, new_weight
        improved += 1
        stale = 0
        if progress is not None:
            progress(f"lns: W = {weight} (window {n})")
    return LNSResult(parent, weight, n, improved)


@dataclass(frozen=True)
class KickOptions:
    """How many kicks :func:`kick_search` tries (``iterations``; None: until the deadline), the largest radius
    of its shifted balls (``max_radius``) and the sizes of its repair windows (``sizes``)."""

    iterations: int | None = None
    max_radius: int = 5
    sizes: tuple = (30, 30, 45)


def kick_search(D, k, parent, shifts, *, seed=0, deadline=None, progress=None, **options) -> LNSResult:
    """Shift a ball of the tree's depth pattern, repair it exactly, keep it if not heavier.

    When the window LNS stalls, its tree is optimal for every window of up to 60
    vertices, and moving a hub with its cluster takes more.  A *kick* moves the depth
    labels of a ball (radius 2..``max_radius``) by a translation (``shifts``: vertex
    permutations, e.g. :func:`models.forest.instance.translations`), lets a label
    descent re-hang every vertex, then re-solves three windows around the moved labels
    exactly (``sizes``: two of 30 vertices near random moved ones, one of 45 at the
    middle of the moved set).  The result replaces the tree when it is not heavier:
    equal moves let the search drift along plateaus.

    Measured from 600 s pipeline trees that the LNS could no longer improve (one
    thread, 150 s): 32x32, k = 11: 1134 -> 1129 (the LNS: no improvement in 79 windows;
    kicks that randomize the ball instead of shifting it: 1133); k = 6: 1246 -> 1243.

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` distances.
    k : int
        Depth bound.
    parent : numpy.ndarray
        Start tree, ``-1`` at the root 0.
    shifts : numpy.ndarray
        ``S x V`` vertex permutations preserving ``D``.
    seed : int
        The result depends only on the seed and the number of kicks unless a
        wall-clock limit cuts a step short.
    deadline : float, optional
        ``time.monotonic()`` value to stop at.
    progress : callable, optional
        Called with a message on every improvement.
    **options
        Those of :class:`KickOptions` (kicks, ball radius, repair window sizes: the last
        window is centred on the middle of the moved labels, the others on random ones).

    Returns
    -------
    LNSResult
        ``windows`` counts the kicks, ``improved`` those that lowered the weight.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> from synth.models.forest.instance import distance_matrix, translations, tree_weight
    >>> t = parse_torus("6x6")
    >>> D = distance_matrix(t)
    >>> from synth.models.forest.labels import labels_to_parent
    >>> labels = np.random.default_rng(0).integers(1, 3, size=36); labels[0] = 0
    >>> start = labels_to_parent(D, labels)          # a random tree of depth <= 2
    >>> res = kick_search(D, 2, start, translations(t, 2), seed=0, iterations=3, sizes=(6, 9))
    >>> res.weight < tree_weight(t, start), res.weight == tree_weight(t, res.parent)
    (True, True)
    """
    opts = KickOptions(**options)
    parent = np.asarray(parent, dtype=np.int64).copy()
    depth = tree_depths(parent)
    weight = _weight(D, parent)
    rng = np.random.default_rng([seed, 5_021_981])
    ls = LabelSearch(D, k, depth)
    n = improved = 0
    while opts.iterations is None or n < opts.iterations:
        if deadline is not None and deadline - time.monotonic() <= 0.05:
            break
        n += 1
        new = _shift_perturb(depth, ls.D, rng, shifts, opts.max_radius)
        moved = np.flatnonzero(new != depth)
        if moved.size == 0:
            continue
        ls.set_labels(new)
        ls.search(deadline=deadline)
        cand = labels_to_parent(ls.D, ls.labels)
        centres = [int(rng.choice(moved)) for _ in opts.sizes[:-1]] + [int(moved[moved.size // 2])]
        cand, cand_depth, cand_weight = _repair(D, k, cand, zip(opts.sizes, centres), rng, (seed, deadline))
        if cand_weight <= weight:
            if cand_weight < weight:
                improved += 1
                if progress is not None:
                    progress(f"kick: W = {cand_weight} (kick {n})")
            parent, depth, weight = cand, cand_depth, cand_weight
    return LNSResult(parent, weight, n, improved)


def _repair(D, k, cand, windows, rng, seeding):
    """Re-solve the ``windows`` (``(size, centre)`` pairs) of the tree ``cand`` exactly, keeping each lighter
    result: ``(parent, depths, weight)``.  ``seeding`` is ``(seed, deadline)``."""
    seed, deadline = seeding
    cand_depth, cand_weight = tree_depths(cand), _weight(D, cand)
    for size, centre in windows:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0.05:
            break
        res = _solve_near(D, k, cand, cand_depth, centre, size, rng, seed, left)
        if res is not None and _weight(D, res[0]) < cand_weight:
            cand, cand_depth = res[0], res[1]
            cand_weight = _weight(D, cand)
    return cand, cand_depth, cand_weight
