"""Primal heuristic for minimum-weight k-hop trees: construction plus label local search.

Labels (see :mod:`models.khop.brute`): every non-root vertex gets a label in ``1..k``
and hangs under its nearest vertex of smaller label, ``A_h = {0} + {u : l(u) < h}``;
the weight is ``sum_v dist(v, A_l(v))`` and the depth is at most ``k``.  Searching over
labels instead of parent arrays keeps every candidate feasible and makes the best
parent choice implicit, so a move is just "change one label".

Construction: a farthest-point order of the vertices (root first) spreads every
prefix evenly over the torus; an exact DP over the ``k - 1`` cut points of that order
picks the best nested prefixes ``A_2 <= ... <= A_k``.  Several seeded orders are tried.

Local search: all single-label moves are priced at once with dense matrix arithmetic
(``O(V^2)`` per pass); improving moves far apart from each other are applied as a
batch, falling back to the single best move when a batch interacts badly.  Iterated
with random perturbations of small regions until the time runs out.

Examples
--------
>>> from synth.torus import parse_torus
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

__all__ = ["HeuristicResult", "heuristic_tree", "labels_to_parent", "labels_cost", "parent_to_labels",
           "LabelSearch", "fps_order", "best_prefix_labels"]

_BIG = np.int32(1 << 20)
SORTED_UPTO = 2048      # LabelSearch sorts the rows of D once up to this many vertices


@dataclass(frozen=True)
class HeuristicResult:
    parent: np.ndarray
    labels: np.ndarray
    weight: int
    depth: int


def _dist_no_diag(D):
    Dm = D.astype(np.int32)
    np.fill_diagonal(Dm, _BIG)
    return Dm


def labels_to_parent(D, labels) -> np.ndarray:
    """Parent array of a labelling: each vertex under its nearest vertex of smaller label.

    Ties go to the smaller label (so the actual depth is as small as possible), then
    to the smaller vertex id.
    """
    labels = np.asarray(labels)
    V = labels.size
    parent = np.full(V, -1, dtype=np.int64)
    k = int(labels.max())
    for h in range(1, k + 1):
        w = np.flatnonzero(labels == h)
        if w.size == 0:
            continue
        a = np.flatnonzero(labels < h)
        key = D[np.ix_(w, a)].astype(np.int64) * (k + 1) + labels[a][None, :]
        parent[w] = a[np.argmin(key, axis=1)]
    return parent


def labels_cost(D, labels) -> int:
    """Weight of the tree of a labelling."""
    labels = np.asarray(labels)
    total = 0
    for h in range(1, int(labels.max()) + 1):
        w = np.flatnonzero(labels == h)
        if w.size:
            total += int(D[np.ix_(w, np.flatnonzero(labels < h))].min(axis=1).sum())
    return total


def parent_to_labels(parent) -> np.ndarray:
    """Labels of a tree: its depths (``labels_to_parent`` of them is at most as heavy)."""
    from synth.models.forest.instance import tree_depths

    return tree_depths(parent)


def fps_order(D, rng) -> np.ndarray:
    """Farthest-point order from the root; ties broken at random (seeded)."""
    V = D.shape[0]
    noise = rng.random(V) * 0.5        # < 1: only breaks ties between equal distances
    order = np.empty(V, dtype=np.int64)
    order[0] = 0
    near = D[0].astype(np.float64)
    near[0] = -1
    for r in range(1, V):
        v = int(np.argmax(near + noise))
        order[r] = v
        near = np.minimum(near, D[v])
        near[order[:r + 1]] = -1
    return order


def _cut_candidates(V, exact_upto=1024, n_coarse=768):
    """Prefix sizes the DP of :func:`best_prefix_labels` may cut at: all when ``V`` is small,
    else every size up to 256 and ``n_coarse`` evenly spaced ones beyond (plus ``V``)."""
    if V <= exact_upto:
        return np.arange(1, V + 1)
    return np.unique(np.concatenate([np.arange(1, min(V, 257)), np.linspace(1, V, n_coarse).round().astype(np.int64),
                                     [V]]))


def best_prefix_labels(D, order, k) -> np.ndarray:
    """Labels from the best split of ``order`` into ``k`` consecutive levels (exact DP).

    Level ``h`` holds ranks ``a_h .. a_{h+1} - 1`` (``a_1 = 1``, ``a_{k+1} = V``) and its
    vertices hang under the prefix of size ``a_h``.  On more than 1024 vertices the cut
    points ``a_h`` are restricted to a grid (:func:`_cut_candidates`), which keeps the
    memory at ``O(V * grid)`` instead of ``O(V^2)`` 8-byte entries.
    """
    V = D.shape[0]
    cand = _cut_candidates(V)                        # possible prefix sizes, increasing, cand[0] = 1, last = V
    m = cand.size
    P = D[np.ix_(order, order)].astype(np.int32)
    np.minimum.accumulate(P, axis=0, out=P)          # P[a-1, r] = dist(o_r, first a vertices)
    Pa = P[cand - 1].astype(np.int64)                # rows: prefix of size cand[i]
    del P
    r = np.arange(V)
    Pa[r[None, :] < cand[:, None]] = 0               # only ranks r >= a are hung under the prefix of size a
    C = np.zeros((m, V + 1), dtype=np.int64)
    np.cumsum(Pa, axis=1, out=C[:, 1:])
    del Pa
    S = C[:, cand]                                   # S[i, j] = sum_{cand_i <= r < cand_j} P[cand_i, r] (j >= i)
    S = S - C[np.arange(m), cand][:, None]
    del C
    S = np.where(np.arange(m)[None, :] >= np.arange(m)[:, None], S, np.int64(1) << 40)
    F = S[0].copy()                                   # level 1: ranks [1, b) under the root
    args = []
    for _ in range(2, k + 1):
        tot = F[:, None] + S
        arg = np.argmin(tot, axis=0)
        F = tot[arg, np.arange(m)]
        args.append(arg)
    cuts = [m - 1]
    for arg in reversed(args):
        cuts.append(int(arg[cuts[-1]]))
    cuts.append(0)
    cuts = [int(cand[c]) for c in cuts[::-1]]         # a_1 = 1, ..., a_{k+1} = V
    labels = np.zeros(V, dtype=np.int64)
    for h in range(1, k + 1):
        labels[order[cuts[h - 1]:cuts[h]]] = h
    return labels


def _percentile95(c):
    """``np.percentile(c, 95)`` (linear interpolation) by a partial sort."""
    c = np.asarray(c)
    pos = 0.95 * (c.size - 1)
    lo = int(np.floor(pos))
    hi = min(lo + 1, c.size - 1)
    part = np.partition(c, [lo, hi])
    return part[lo] + (pos - lo) * (part[hi] - part[lo])


class LabelSearch:
    """Local search over labellings (module docstring), on a dense distance matrix.

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` distances.
    k : int
        Depth bound.
    labels : array_like
        Start labels, ``0`` at vertex 0 only.
    ext : numpy.ndarray, optional
        ``V x (k + 1)``: ``ext[v, b]`` is the cost of ``v`` under label ``b`` through
        parents that are not in this instance (non-increasing in ``b``); used by the
        windows of :mod:`models.khop.search.window`.
    frozen : numpy.ndarray, optional
        Vertices whose labels never change (vertex 0 always is).
    """

    def __init__(self, D, k, labels, ext=None, frozen=None):
        self.D = _dist_no_diag(D)
        self.k = int(k)
        self.labels = np.asarray(labels, dtype=np.int64).copy()
        self.V = self.labels.size
        self.ext = None if ext is None else np.minimum(np.asarray(ext, dtype=np.int64), _BIG)
        self.frozen = np.zeros(self.V, dtype=bool) if frozen is None else np.asarray(frozen, dtype=bool).copy()
        self.frozen[0] = True
        # up to SORTED_UPTO vertices, every row of D sorted once makes each refresh a few
        # whole-array operations (windows of 32x32, k = 6: 0.68 ms -> 0.12 ms a refresh, 7.2 -> 5.5 ms a window)
        self._order = None
        self._edges = None              # (tail, head) of the unit-distance pairs, for close()
        if self.V <= SORTED_UPTO:
            self._order = np.argsort(self.D, axis=1, kind="stable").astype(np.int32)
            self._dsorted = np.take_along_axis(self.D, self._order, axis=1)
        self._refresh()

    # ----------------------------------------------------------- state
    def _refresh(self):
        """Own cost ``c``, nearest ``n1`` and second-nearest cost ``c2`` of every vertex.

        Ties go to the smaller vertex id (both ways of computing it below agree).
        """
        if self._order is not None:
            self._refresh_sorted()
            return
        V, lab = self.V, self.labels
        c = np.zeros(V, dtype=np.int64)
        c2 = np.full(V, _BIG, dtype=np.int64)
        n1 = np.full(V, -1, dtype=np.int64)
        for h in range(1, self.k + 1):
            w = np.flatnonzero(lab == h)
            if w.size == 0:
                continue
            a = np.flatnonzero(lab < h)
            sub = self.D[np.ix_(w, a)]
            i1 = np.argmin(sub, axis=1)
            n1[w] = a[i1]
            c[w] = sub[np.arange(w.size), i1]
            if a.size > 1:
                sub[np.arange(w.size), i1] = _BIG
                c2[w] = sub.min(axis=1)
            if self.ext is not None:
                e = self.ext[w, h]
                outside = e <= c[w]                     # served from outside: no hub of ours to lose
                c2[w] = np.where(outside, c[w], np.minimum(c2[w], e))
                n1[w[outside]] = -1
                c[w] = np.minimum(c[w], e)
        self.c, self.c2, self.n1 = c, c2, n1
        self.cost = int(c.sum())

    def _refresh_sorted(self):
        """:meth:`_refresh` from the rows of ``D`` sorted once: the first two vertices of smaller label."""
        lab, V = self.labels, self.V
        rows = np.arange(V)
        ok = lab[self._order] < lab[:, None]
        i1 = ok.argmax(axis=1)
        has1 = ok[rows, i1]
        ok[rows, i1] = False
        i2 = ok.argmax(axis=1)
        has2 = ok[rows, i2]
        n1 = np.where(has1, self._order[rows, i1], -1).astype(np.int64)
        c = np.where(has1, self._dsorted[rows, i1], 0).astype(np.int64)
        c2 = np.where(has2, self._dsorted[rows, i2], _BIG).astype(np.int64)
        if self.ext is not None:
            e = self.ext[rows, lab]
            served = lab >= 1
            outside = served & (e <= c)
            c2 = np.where(outside, c, np.where(served, np.minimum(c2, e), c2))
            n1[outside] = -1
            c = np.where(served, np.minimum(c, e), c)
        self.c, self.c2, self.n1 = c, c2, n1
        self.cost = int(c.sum())

    # ----------------------------------------------------------- pricing
    def move_deltas(self) -> np.ndarray:
        """``delta[v, b]``: exact weight change of setting ``l(v) = b`` (``b`` in ``0..k``; col 0 unused)."""
        V, k, lab, D = self.V, self.k, self.labels, self.D
        # own cost at every label: nearest vertex of each label (excluding v), then prefix minima
        R = np.empty((V, k), dtype=np.int64)
        for h in range(k):
            m = np.flatnonzero(lab == h)
            R[:, h] = D[:, m].min(axis=1) if m.size else _BIG
        own = np.minimum.accumulate(R, axis=1)          # own[:, b-1] = dist(v, A_b - v)
        if self.ext is not None:
            own = np.minimum(own, self.ext[:, 1:])
        # promotion gains: P[v, h] = sum over w of label h of max(0, c_w - d(v, w))
        cols = np.flatnonzero((self.c >= 2) & (lab >= 1))
        P = np.zeros((V, k + 1), dtype=np.float64)
        if cols.size:
            M = np.maximum(0, self.c[cols][None, :].astype(np.int32) - D[:, cols]).astype(np.float32)
            onehot = np.zeros((cols.size, k + 1), dtype=np.float32)
            onehot[np.arange(cols.size), lab[cols]] = 1
            P = (M @ onehot).astype(np.float64)
        # demotion losses: Q[v, h] = sum over clients w of v with label h of (c2_w - c_w)
        has = self.n1 >= 0
        Q = np.bincount(self.n1[has] * (k + 1) + lab[has], weights=(self.c2[has] - self.c[has]).astype(np.float64),
                        minlength=V * (k + 1)).reshape(V, k + 1)
        Pc = np.cumsum(P, axis=1)                        # Pc[v, h] = sum_{h' <= h} P[v, h']
        Qc = np.cumsum(Q, axis=1)
        self._own, self._Pc, self._Qc = own, Pc, Qc      # reused by swap_deltas
        a = lab
        delta = np.full((V, k + 1), np.inf)
        rows = np.arange(V)
        for b in range(1, k + 1):
            gain = np.where(b < a, Pc[rows, a] - Pc[:, b], 0.0)
            loss = np.where(b > a, Qc[:, b] - Qc[rows, a], 0.0)
            delta[:, b] = own[:, b - 1] - self.c - gain + loss
        delta[rows, a] = np.inf
        delta[self.frozen] = np.inf
        return delta

    def set_labels(self, labels):
        self.labels = np.asarray(labels, dtype=np.int64).copy()
        self._refresh()

    def swap_deltas(self, radius=2):
        """Exact weight change of swapping the labels of a hub ``u`` and a nearby ``v`` with a larger label.

        Call after :meth:`move_deltas` (it reuses its tables).  With ``a = l(u) < b = l(v)``
        only the vertices labelled in ``(a, b]`` see a change: ``u`` leaves their parent
        set and ``v`` joins it.

        Returns
        -------
        u, v, delta : numpy.ndarray
        """
        lab, D, c, c2, n1 = self.labels, self.D, self.c, self.c2, self.n1
        hubs = np.flatnonzero(np.bincount(n1[n1 >= 0], minlength=self.V) > 0)
        hubs = hubs[hubs > 0]
        if hubs.size == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
        near = D[hubs] <= radius
        pu, pv = np.nonzero(near)
        u, v = hubs[pu], pv
        ok = (lab[v] > lab[u]) & ~self.frozen[u] & ~self.frozen[v]
        u, v = u[ok], v[ok]
        if u.size == 0:
            return u, v, np.zeros(0)
        a, b = lab[u], lab[v]
        own, Pc, Qc = self._own, self._Pc, self._Qc
        own_v = own[v, a - 1]                                  # v takes label a: parent set A_a
        own_u = np.minimum(own[u, b - 1], D[u, v])             # u takes label b: A_b now holds v
        gain_v = Pc[v, b] - Pc[v, a]                           # as if every w kept its parent
        loss_u = Qc[u, b] - Qc[u, a]                           # clients of u fall back to c2
        v_client = (n1[v] == u)
        loss_u = loss_u - np.where(v_client, c2[v] - c[v], 0)  # v's own cost is counted in own_v
        # correction over the clients w of u with label in (a, b], w != v: v competes with c2, not c
        order = np.argsort(n1, kind="stable")
        starts = np.searchsorted(n1[order], u)
        ends = np.searchsorted(n1[order], u, side="right")
        counts = ends - starts
        pair = np.repeat(np.arange(u.size), counts)
        offs = np.arange(pair.size) - np.repeat(np.cumsum(counts) - counts, counts)
        w = order[np.repeat(starts, counts) + offs]
        lw = lab[w]
        inside = (lw > a[pair]) & (lw <= b[pair]) & (w != v[pair])
        dvw = D[v[pair], w]
        corr = np.where(inside, np.minimum(0, dvw - c2[w]) - np.minimum(0, dvw - c[w]), 0)
        corr = np.bincount(pair, weights=corr, minlength=u.size)
        delta = own_u + own_v - c[u] - c[v] - gain_v + loss_u + corr
        return u, v, delta

    def descend(self, deadline=None, max_passes=10_000, swaps=True) -> int:
        """Apply improving label moves (then label swaps) until none is left; return the cost."""
        for _ in range(max_passes):
            if deadline is not None and time.monotonic() > deadline:
                break
            delta = self.move_deltas()
            best_b = np.argmin(delta, axis=1)
            best = delta[np.arange(self.V), best_b]
            improving = np.flatnonzero(best < -0.5)
            moves = [(int(x), int(best_b[x]), float(best[x])) for x in improving]
            swap_moves = []
            if swaps:
                su, sv, sd = self.swap_deltas()
                good = np.flatnonzero(sd < -0.5)
                swap_moves = [(int(su[i]), int(sv[i]), float(sd[i])) for i in good]
            if not moves and not swap_moves:
                break
            # one list of candidate changes: (delta, {vertex: new label})
            cand = [(d, {x: b}) for x, b, d in moves]
            cand += [(d, {uu: int(self.labels[vv]), vv: int(self.labels[uu])}) for uu, vv, d in swap_moves]
            cand.sort(key=lambda m: m[0])
            # batch: changes whose vertices are far apart from each other
            radius = 2 * max(2, int(_percentile95(self.c)))
            chosen = [cand[0]]
            blocked = (self.D[list(cand[0][1])] <= radius).any(axis=0)   # within radius of a chosen vertex
            for d, ch in cand[1:]:
                xs = list(ch)
                if not blocked[xs].any():
                    chosen.append((d, ch))
                    blocked |= (self.D[xs] <= radius).any(axis=0)
            old_cost, old_labels = self.cost, self.labels.copy()
            new = self.labels.copy()
            for _, ch in chosen:
                for x, b in ch.items():
                    new[x] = b
            self.set_labels(new)
            if len(chosen) > 1 and self.cost >= old_cost + chosen[0][0] + 0.5:
                new = old_labels.copy()                  # the batch interacted: take the best change alone
                for x, b in chosen[0][1].items():
                    new[x] = b
                self.set_labels(new)
        return self.cost

    def close(self) -> bool:
        """Lower every label to ``min_u l(u) + d(u, v)`` (capped at ``k``); return whether anything changed.

        This never increases the weight: a lowered vertex has a neighbour of label one
        less on its shortest path to ``u``, so it costs 1, and lowering labels only
        enlarges the sets ``A_h`` the other vertices choose their parents from.  With
        frozen vertices (besides the root) the labels are lowered along edges instead,
        so that the neighbour of label one less exists.
        """
        lab = self.labels
        if not self.frozen[1:].any():
            new = np.minimum(lab, (lab[:, None] + self.D).min(axis=0))
            new = np.minimum(new, self.k)
            new[0] = 0
        else:
            # frozen labels stay, so a lowered label needs a neighbour one less: relax along edges
            if self._edges is None:
                self._edges = np.nonzero(self.D == 1)
            nbr_i, nbr_j = self._edges
            new = lab.copy()
            free = ~self.frozen
            while True:
                best = np.full(self.V, np.iinfo(np.int64).max)
                np.minimum.at(best, nbr_j, new[nbr_i] + 1)
                low = free & (best < new)
                if not low.any():
                    break
                new[low] = best[low]
        if np.array_equal(new, lab):
            return False
        self.set_labels(new)
        return True

    def search(self, deadline=None) -> int:
        """Alternate :meth:`descend` and :meth:`close` until neither changes anything."""
        while True:
            self.descend(deadline)
            if not self.close() or (deadline is not None and time.monotonic() > deadline):
                return self.cost


def _perturb(labels, D, k, rng, radius):
    """Randomize the labels of the vertices in a ball around a random centre."""
    V = labels.size
    centre = int(rng.integers(1, V))
    ball = np.flatnonzero((D[centre] <= radius) & (np.arange(V) > 0))
    new = labels.copy()
    new[ball] = rng.integers(1, k + 1, size=ball.size)
    return new


def _shift_perturb(labels, D, rng, shifts, max_radius, centre=None):
    """Move the label pattern of a ball around a random centre by a translation (``shifts``: its rows).

    A random relabelling destroys the hubs of the ball and their clusters; shifting
    keeps them and slides them a step or two, so the descent that follows can re-fit
    the border instead of rebuilding the ball.
    """
    V = labels.size
    if centre is None:
        centre = int(rng.integers(1, V))
    radius = int(rng.integers(2, max_radius + 1))
    ball = np.flatnonzero((D[centre] <= radius) & (np.arange(V) > 0))
    g = shifts[int(rng.integers(shifts.shape[0]))]
    new = labels.copy()
    new[ball] = np.maximum(labels[g[ball]], 1)           # v takes the label of v + delta (the root's: 1)
    return new


def heuristic_tree(D, k: int, *, seed: int = 0, iterations: int | None = None, time_limit: float = 60.0,
                   start=None, n_orders: int = 2, bfs: bool = True, max_radius=None, shifts=None,
                   progress=None) -> HeuristicResult:
    """A good k-hop tree rooted at 0 for the metric ``D`` (construction + iterated local search).

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` distances (the torus metric).
    k : int
        Depth bound (``1 <= k``).
    seed : int
        Seeds the orders and the perturbations.
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
    progress : callable, optional
        Called with a message whenever the best weight improves.

    Returns
    -------
    HeuristicResult
    """
    t_end = time.monotonic() + time_limit
    V = D.shape[0]
    if iterations is None:
        iterations = int(min(200, max(20, 20_000 // V)))
    if k == 1 or V <= 2:
        labels = np.ones(V, dtype=np.int64)
        labels[0] = 0
        parent = labels_to_parent(D, labels)
        return HeuristicResult(parent, labels, labels_cost(D, labels), 1 if V > 1 else 0)

    def candidates():
        if start is not None:                                       # the given tree first: always searched
            yield np.minimum(parent_to_labels(start), k)
        if bfs or (start is None and n_orders == 0):
            yield np.minimum(D[0].astype(np.int64), k)             # truncated BFS: good when k is near H
        for i in range(n_orders):                                   # spread hubs: good when k is small
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
    if progress:
        progress(f"heuristic: construction + descent W = {best_cost}")
    # iterated local search: perturb a ball, search again, keep if not worse
    rng = np.random.default_rng([seed, 1_000_003])
    cur_lab, cur_cost = best_lab.copy(), best_cost
    Dm = ls.D
    # small balls work best: radius <= 3 gave 368-370 against 371 (16x16, k = 3), 293-294 against
    # 299-300 (k = 6) and 1152 against 1178 (32x32, k = 11; radius 11) in 30-40 s
    max_r = max(2, min(3, int(round(np.sqrt(V) / 3)))) if max_radius is None else int(max_radius)
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
    parent = labels_to_parent(Dm, best_lab)
    from synth.models.forest.instance import tree_depths

    depth = int(tree_depths(parent).max())
    return HeuristicResult(parent, best_lab, int(best_cost), depth)
