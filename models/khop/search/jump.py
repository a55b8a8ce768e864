"""Jump search: a k-hop tree as its few *jumps*, every other label their min-plus closure.

A labelling ``l`` (root 0, others ``1..k``) gives the tree in which every vertex hangs
on its nearest vertex of smaller label (:func:`models.forest.labels.labels_to_parent`);
its weight is ``W = (V - 1) + sum_v (c(v) - 1)`` with ``c(v) = dist(v, {u : l(u) < l(v)})``.
Call ``v`` a *jump* when ``c(v) > 1``; the root is a jump of level 0.  On a graph metric
with unit edges (a torus):

* given the jumps ``J`` and their levels, ``M(x) = min_{s in J} (l(s) + d(s, x))`` is a
  lower bound on every labelling with these jumps (follow the parents from ``x``: each
  step lowers the label by at least one, until a jump), and under ``M`` every other
  vertex costs 1 (its neighbour on a shortest path to the minimizing jump has label
  ``M(x) - 1``); lowering labels never raises a cost, so ``M`` is the best labelling
  for ``J``, and the k-hop tree problem is a search over jump sets;
* the weight of ``J`` needs no ``V x V`` work: the ball ``{M < b}`` is the union of the
  balls of radius ``b - 1 - l(t)`` around the jumps ``t``, and the distance from ``s`` to
  a ball of radius ``r`` around ``t`` is ``max(0, d(s, t) - r)``, so

  ``W(J) - (V - 1) = sum_{s in J, s != 0} max(0, min_{t in J, l(t) < l(s)} (d(s, t) + l(t)) - l(s))
  + sum_x max(0, M(x) - k)``,

  the second sum for the vertices ``M`` leaves deeper than ``k`` (they take label ``k``).

On 32x32 a good tree of depth 6 has about 40 jumps among its 1024 vertices, and one
jump moved carries its whole territory with it: a move the label searches of
:mod:`models.forest.labels` and :mod:`models.khop.search.window` can make only through many
intermediate labellings, most of them heavier.  :class:`JumpSearch` prices every
relocation of one jump within a ball (and a level change, and its removal) in one
array operation over the candidates and the vertices left deeper than ``k``, and every
insertion of a jump at a given level in ``O((jumps + deep vertices) x V)``.

Measured (``bench/bench_khop_jump.py --seconds 30``, from the same construction, against
the windowed label search): 32x32, k = 6: W = 1208 against 1251 (excess over ``p - 1``
0.81 of the baseline's); k = 9: 1105 against 1181 (0.52); 16x16, k = 4: 316 against 319;
k = 3: 371 against 369, where the label searches still win.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.models.forest.instance import distance_matrix
>>> from synth.models.forest.labels import labels_cost
>>> D = distance_matrix(parse_torus("8x8"))
>>> res = jump_search(D, 3, seed=0, iterations=200)
>>> res.weight, res.weight == labels_cost(D, res.labels)
(77, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from synth.models.forest.labels import labels_cost

__all__ = ["JumpSearch", "JumpResult", "jump_search", "jumps_of_labels", "unit_metric"]

_BIG = np.int32(1 << 20)


def unit_metric(D, rows=64) -> bool:
    """Whether ``D`` looks like the shortest-path metric of a graph with unit edges.

    Checks, on up to ``rows`` source rows (all when ``V <= rows``), that every vertex at
    distance ``d >= 1`` from the source has a neighbour (a vertex at distance 1) at
    distance ``d - 1``: what the module's formulas need.  Torus metrics pass; the
    dimension-weighted metrics of :mod:`synth.models.balance.family` do not.

    >>> from synth.topology.torus import parse_torus
    >>> from synth.models.forest.instance import distance_matrix
    >>> D = distance_matrix(parse_torus("4x6"))
    >>> unit_metric(D), unit_metric(2 * D)
    (True, False)
    """
    D = np.asarray(D)
    V = D.shape[0]
    deg = (D == 1).sum(1)
    if V < 2 or deg.min() < 1 or deg.min() != deg.max():
        return V < 2
    nbr = np.nonzero(D == 1)[1].reshape(V, -1)                     # V x deg
    src = np.arange(V) if V <= rows else np.linspace(0, V - 1, rows).astype(np.int64)
    sub = D[src].astype(np.int64)                                   # R x V
    step = sub[:, nbr].min(axis=2)                                  # nearest neighbour's distance
    return bool(np.all((sub == 0) | (step == sub - 1)))


def jumps_of_labels(D, labels, k):
    """The jumps of a labelling (root first): positions and levels, labels clipped to ``k``.

    >>> import numpy as np
    >>> from synth.topology.torus import parse_torus
    >>> from synth.models.forest.instance import distance_matrix
    >>> D = distance_matrix(parse_torus("6x6"))
    >>> pos, lv = jumps_of_labels(D, np.minimum(D[0], 2), 2)    # truncated BFS: no jump
    >>> pos.tolist(), lv.tolist()
    ([0], [0])
    """
    lab = np.minimum(np.asarray(labels, dtype=np.int64), k)
    lab[0] = 0
    V = lab.size
    cost = np.zeros(V, dtype=np.int64)
    for h in range(1, k + 1):
        w = np.flatnonzero(lab == h)
        low = np.flatnonzero(lab < h)
        if w.size:
            cost[w] = D[np.ix_(w, low)].min(axis=1)
    pos = np.concatenate([[0], np.flatnonzero((cost > 1) & (lab < k))])
    return pos.astype(np.int64), lab[pos].astype(np.int64)


@dataclass(frozen=True)
class JumpResult:
    """Outcome of :func:`jump_search`."""

    labels: np.ndarray     # the best labelling found (the min-plus closure of its jumps)
    weight: int            # its tree weight W
    n_jumps: int           # its jumps, the root included
    rounds: int            # perturbations tried


class JumpSearch:
    """A jump set under local search (module docstring).

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` unit-edge graph metric (see :func:`unit_metric`).
    k : int
        Depth bound, ``k >= 2``.
    pos, lv : array_like
        Jump vertices and levels; ``pos[0] == 0`` with level 0 (the root), the other
        levels in ``1..k - 1`` (a jump at level ``k`` serves nobody: such vertices are
        the second sum of the excess).

    Attributes
    ----------
    excess : int
        ``W - (V - 1)`` of the current jump set.
    """

    def __init__(self, D, k, pos, lv):
        self.D = np.asarray(D)
        self.k = int(k)
        self.V = self.D.shape[0]
        self.pos = np.asarray(pos, dtype=np.int64).copy()
        self.lv = np.asarray(lv, dtype=np.int32).copy()
        if self.pos[0] != 0 or self.lv[0] != 0 or np.any(self.lv[1:] < 1) or np.any(self.lv[1:] > self.k - 1):
            raise ValueError("jumps: the root first at level 0, the others at levels 1..k-1")
        self._cols = np.arange(self.V)
        self._refresh()

    # ------------------------------------------------------------------ state
    def _refresh(self):
        D, pos, lv, k = self.D, self.pos, self.lv, self.k
        R = lv[:, None] + D[pos]                                   # S x V labels offered
        self.arg1 = R.argmin(axis=0)
        self.M1 = R[self.arg1, self._cols]
        if pos.size > 1:
            R[self.arg1, self._cols] = _BIG
            self.M2 = R.min(axis=0)
        else:
            self.M2 = np.full(self.V, _BIG, dtype=np.int32)
        P = D[np.ix_(pos, pos)] + lv[None, :]                        # P[s, t] = d(s, t) + l(t), t below s
        self.P = np.where(lv[None, :] < lv[:, None], P, _BIG).astype(np.int32)
        m = self.P.min(axis=1)
        ex = np.maximum(0, m - lv)
        ex[0] = 0
        self.excess = int(np.maximum(0, self.M1 - k).sum() + ex.sum())

    def labels(self) -> np.ndarray:
        """The labelling of the current jumps: ``min(M, k)``, root 0."""
        lab = np.minimum(self.M1, self.k).astype(np.int64)
        lab[0] = 0
        return lab

    def set_jumps(self, pos, lv):
        """Replace the jump set (root first, as in the constructor)."""
        self.pos = np.asarray(pos, dtype=np.int64).copy()
        self.lv = np.asarray(lv, dtype=np.int32).copy()
        self._refresh()

    # ------------------------------------------------------------------ pricing
    def move_values(self, i, cand_pos, cand_lv) -> np.ndarray:
        """Excess after replacing jump ``i >= 1`` by ``(cand_pos[c], cand_lv[c])``; level ``-1`` removes it."""
        D, k, pos, lv = self.D, self.k, self.pos, self.lv
        cand_pos = np.asarray(cand_pos, dtype=np.int64)
        cand_lv = np.asarray(cand_lv, dtype=np.int32)
        gone = cand_lv < 0
        Mo = np.where(self.arg1 == i, self.M2, self.M1)            # labels without jump i
        deep = np.flatnonzero(Mo > k)                               # only these can cost anything
        rows = np.minimum(Mo[deep][None, :], cand_lv[:, None] + D[np.ix_(cand_pos, deep)])
        rows[gone] = Mo[deep]
        cov = np.maximum(0, rows - k).sum(axis=1)
        # the other jumps: their best lower jump without i, or the candidate
        keep = np.ones(pos.size, dtype=bool)
        keep[i] = False
        P = self.P[np.ix_(keep, keep)]
        lo = lv[keep]
        mo = P.min(axis=1)
        Dc = D[np.ix_(cand_pos, pos[keep])].astype(np.int32)        # C x (S - 1)
        via = np.where((cand_lv[:, None] < lo[None, :]) & ~gone[:, None], Dc + cand_lv[:, None], _BIG)
        exo = np.maximum(0, np.minimum(mo[None, :], via) - lo[None, :])
        exo[:, 0] = 0                                               # the root (kept: i >= 1)
        own = np.where(lo[None, :] < cand_lv[:, None], Dc + lo[None, :], _BIG).min(axis=1)
        exc = np.where(gone, 0, np.maximum(0, own - cand_lv))
        return cov + exo.sum(axis=1) + exc

    def add_values(self, level) -> np.ndarray:
        """Excess after adding a jump of ``level`` at each vertex (``V`` values; ``D`` is symmetric)."""
        D, k, pos, lv = self.D, self.k, self.pos, self.lv
        deep = np.flatnonzero(self.M1 > k)
        Md = self.M1[deep][:, None]
        cov = np.maximum(0, np.minimum(Md, level + D[deep]) - k).sum(axis=0) if deep.size else 0
        Dp = D[pos].astype(np.int32)                                # S x V
        m = self.P.min(axis=1)[:, None]
        lo = lv[:, None]
        via = np.where(level < lo, Dp + level, _BIG)
        exo = np.maximum(0, np.minimum(m, via) - lo)
        exo[0] = 0
        own = np.where(lo < level, Dp + lo, _BIG).min(axis=0)
        return cov + exo.sum(axis=0) + np.maximum(0, own - level)

    # ------------------------------------------------------------------ moves
    def move(self, i, p, level):
        """Move jump ``i >= 1`` to vertex ``p`` at ``level``; a negative level removes it."""
        if level < 0:
            keep = np.arange(self.pos.size) != i
            self.pos, self.lv = self.pos[keep], self.lv[keep]
        else:
            self.pos[i], self.lv[i] = p, level
        self._refresh()

    def add(self, p, level):
        """Add a jump of ``level`` at vertex ``p``."""
        self.pos = np.append(self.pos, np.int64(p))
        self.lv = np.append(self.lv, np.int32(level))
        self._refresh()

    def prune(self):
        """Drop jumps whose excess is 0 (another jump already gives their vertex that label or less)."""
        ex = self.P.min(axis=1) - self.lv
        ex[0] = 1
        if np.any(ex <= 0):
            keep = ex > 0
            self.pos, self.lv = self.pos[keep], self.lv[keep]
            self._refresh()


def _descend(js, rng, radius, deadline):
    """Best-of-ball moves of random jumps and best insertions, ties taken at random, until a
    pass (one move per jump and one insertion per level) gains nothing."""
    k, D = js.k, js.D
    levels = np.arange(1, k)
    while True:
        start = js.excess
        for _ in range(js.pos.size - 1):
            if js.pos.size < 2:
                break
            i = int(rng.integers(1, js.pos.size))
            p0, l0 = js.pos[i], int(js.lv[i])
            near = np.flatnonzero(D[p0] <= radius)
            cl = np.array([l0 - 1, l0, l0 + 1], dtype=np.int32)
            cl = cl[(cl >= 1) & (cl <= k - 1)]
            cp = np.concatenate([np.repeat(near, cl.size), [p0]])
            cv = np.concatenate([np.tile(cl, near.size), [-1]]).astype(np.int32)
            vals = js.move_values(i, cp, cv)
            best = vals.min()
            if best <= js.excess:
                c = int(rng.choice(np.flatnonzero(vals == best)))
                if cp[c] != p0 or cv[c] != l0:
                    js.move(i, cp[c], cv[c])
        for level in rng.permutation(levels):
            vals = js.add_values(int(level))
            best = vals.min()
            if best < js.excess:
                js.add(int(rng.choice(np.flatnonzero(vals == best))), int(level))
        if js.excess >= start or time.monotonic() > deadline:
            js.prune()
            return


def _perturb(js, rng, radius):
    """One or two random changes: throw a jump within ``radius`` (level +-1), remove one, or add one."""
    k, V, D = js.k, js.V, js.D
    for _ in range(int(rng.integers(1, 3))):
        op = rng.random()
        if op < 0.6 and js.pos.size > 1:
            i = int(rng.integers(1, js.pos.size))
            near = np.flatnonzero(D[js.pos[i]] <= radius)
            level = int(np.clip(js.lv[i] + rng.integers(-1, 2), 1, k - 1))
            js.move(i, int(rng.choice(near)), level)
        elif op < 0.8 and js.pos.size > 1:
            js.move(int(rng.integers(1, js.pos.size)), 0, -1)
        else:
            js.add(int(rng.integers(1, V)), int(rng.integers(1, k)))


def jump_search(D, k, labels=None, *, seed=0, iterations=None, deadline=None, radius=3, kick_radius=6,
                worse=0.05, progress=None) -> JumpResult:
    """Iterated local search over jump sets (module docstring), from ``labels`` or from the root alone.

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` unit-edge graph metric (:func:`unit_metric`).
    k : int
        Depth bound.
    labels : array_like, optional
        A labelling to start from (its jumps, :func:`jumps_of_labels`); default: only the
        root, every vertex deeper than ``k`` an uncovered one.
    seed : int
        Seeds the moves and the perturbations.
    iterations : int, optional
        Perturbation rounds; with ``deadline`` only, until the deadline.  The result
        depends only on ``seed`` and ``iterations`` unless ``deadline`` cuts it short.
    deadline : float, optional
        A ``time.monotonic()`` value.
    radius, kick_radius : int
        A jump's moves stay within ``radius`` of it; a perturbation throws one within
        ``kick_radius`` (32x32, k = 6, 60 s from the root: 1201-1206 for radius 2-4 and
        kick radius 4-10, no clear winner).
    worse : float
        The probability of accepting a perturbation that leaves the tree one heavier
        (40 s on 16x16, k = 3, seeds 0-2: 369, 369, 367 against 370, 370, 367 without;
        60 s on 32x32, k = 6, seeds 0-1: 1202, 1201 against 1204, 1201).
    progress : callable, optional
        Called with a message whenever the best weight improves.

    Ctrl-C or SIGTERM (a ``KeyboardInterrupt``) propagates, carrying the best labelling so far
    as its attribute ``partial`` (a :class:`JumpResult`).

    Returns
    -------
    JumpResult
    """
    D = np.asarray(D)
    V = D.shape[0]
    if iterations is None and deadline is None:
        raise ValueError("jump_search needs iterations or a deadline")
    if k < 2 or V < 3:
        lab = np.minimum(D[0].astype(np.int64), max(k, 1))
        return JumpResult(lab, labels_cost(D, lab), 1, 0)
    if deadline is None:
        deadline = np.inf
    pos, lv = (np.array([0]), np.array([0])) if labels is None else jumps_of_labels(D, labels, k)
    js = JumpSearch(D, k, pos, lv)
    rng = np.random.default_rng([seed, 7_919])
    _descend(js, rng, radius, deadline)
    cur = best = (js.excess, js.pos.copy(), js.lv.copy())
    if progress:
        progress(f"jump search: descent W = {V - 1 + js.excess} ({js.pos.size} jumps)")
    rounds = 0
    try:
        while (iterations is None or rounds < iterations) and time.monotonic() < deadline:
            rounds += 1
            _perturb(js, rng, kick_radius)
            _descend(js, rng, radius, deadline)
            if js.excess <= cur[0] or (js.excess == cur[0] + 1 and rng.random() < worse):
                cur = (js.excess, js.pos.copy(), js.lv.copy())
                if cur[0] < best[0]:
                    best = cur
                    if progress:
                        progress(f"jump search: W = {V - 1 + best[0]} ({best[1].size} jumps, round {rounds})")
            else:
                js.set_jumps(cur[1], cur[2])
    except KeyboardInterrupt as exc:    # Ctrl-C or SIGTERM propagates, with the best labelling so far
        exc.partial = _result(D, js, best, rounds)
        raise
    return _result(D, js, best, rounds)


def _result(D, js, best, rounds) -> JumpResult:
    js.set_jumps(best[1], best[2])
    labels = js.labels()
    # the weight of the labelling itself: two jumps of one level on one vertex would count twice above
    return JumpResult(labels, labels_cost(D, labels), int(best[1].size), rounds)
