"""Label local search for depth-bounded forests: labellings, their trees, and the search over them.

Labels (see :mod:`synth.models.forest.brute`): every non-root vertex gets a label in ``1..k``
and hangs under its nearest vertex of smaller label, ``A_h = {0} + {u : l(u) < h}``;
the weight is ``sum_v dist(v, A_l(v))`` and the depth is at most ``k``.  Searching over
labels instead of parent arrays keeps every candidate feasible and makes the best
parent choice implicit, so a move is just "change one label".

Starts: a farthest-point order of the vertices (root first) spreads every prefix
evenly over the torus; an exact DP over the ``k - 1`` cut points of that order picks
the best nested prefixes ``A_2 <= ... <= A_k`` (:func:`fps_order`, :func:`best_prefix_labels`).

Local search (:class:`LabelSearch`): all single-label moves are priced at once with
dense matrix arithmetic (``O(V^2)`` per pass); improving moves far apart from each other
are applied as a batch, falling back to the single best move when a batch interacts
badly.  :mod:`synth.models.khop.search.construct` iterates it with perturbations.

Examples
--------
>>> import numpy as np
>>> from synth.topology.torus import parse_torus
>>> from synth.models.forest.instance import distance_matrix
>>> D = distance_matrix(parse_torus("8x8"))
>>> start = best_prefix_labels(D, fps_order(D, np.random.default_rng(0)), 3)
>>> ls = LabelSearch(D, 3, start)
>>> labels_cost(D, start), ls.search(), ls.cost == labels_cost(D, ls.labels)
(106, 81, True)
"""

from __future__ import annotations

import time

import numpy as np

from synth.models.forest.instance import tree_depths

__all__ = ["labels_to_parent", "labels_cost", "parent_to_labels", "LabelSearch", "fps_order",
           "best_prefix_labels"]

_BIG = np.int32(1 << 20)
SORTED_UPTO = 2048      # LabelSearch sorts the rows of D once up to this many vertices


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
    return tree_depths(parent)


def fps_order(D, rng, roots=(0,)) -> np.ndarray:
    """Farthest-point order starting with the roots; ties broken at random (seeded)."""
    V = D.shape[0]
    noise = rng.random(V) * 0.5        # < 1: only breaks ties between equal distances
    order = np.empty(V, dtype=np.int64)
    r0 = len(roots)
    order[:r0] = roots
    near = D[list(roots)].min(axis=0).astype(np.float64)
    near[list(roots)] = -1
    for r in range(r0, V):
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


def best_prefix_labels(D, order, k, n_roots=1, exact_upto=None) -> np.ndarray:
    """Labels from the best split of ``order`` into ``k`` consecutive levels after the roots (exact DP).

    ``order`` starts with the ``n_roots`` roots.  Level ``h`` holds ranks ``a_h .. a_{h+1} - 1``
    (``a_1 = n_roots``, ``a_{k+1} = V``) and its vertices hang under the prefix of size
    ``a_h``.  On more than ``exact_upto`` (default 1024) vertices the cut points ``a_h`` are
    restricted to a grid (:func:`_cut_candidates`), which keeps the memory at
    ``O(V * grid)`` instead of ``O(V^2)`` 8-byte entries.
    """
    V = D.shape[0]
    cand = _cut_candidates(V) if exact_upto is None else _cut_candidates(V, exact_upto)
    if n_roots > 1:                                  # every level hangs under at least the roots
        cand = np.unique(np.concatenate([[n_roots], cand[cand > n_roots]]))
    # cand: the possible prefix sizes, increasing, cand[0] = n_roots, last = V
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
    F = S[0].copy()                                   # level 1: ranks [n_roots, b) under the roots
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
    cuts = [int(cand[c]) for c in cuts[::-1]]         # a_1 = n_roots, ..., a_{k+1} = V
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
    """Local search over labellings (module docstring) for a root set, on a dense distance matrix.

    The roots are the vertices of label 0 (the k-hop tree: vertex 0; the exchange forest:
    0 and its partner ``b``); they never move, and :meth:`set_labels` may change them.

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` distances (an ``int32`` matrix with ``_BIG`` on the diagonal is used as is).
    k : int
        Depth bound.
    labels : array_like
        Start labels, ``0`` at the roots only.
    ext : numpy.ndarray, optional
        ``V x (k + 1)``: ``ext[v, b]`` is the cost of ``v`` under label ``b`` through
        parents that are not in this instance (non-increasing in ``b``); used by the
        windows of :mod:`models.khop.search.window`.
    frozen : numpy.ndarray, optional
        Vertices whose labels never change (the roots always are).
    swaps : bool
        Whether :meth:`descend` also tries swapping the labels of a hub and a nearby vertex.
    batch : {"p95", "max"}
        How far apart the moves :meth:`descend` applies together must be: twice the 95th
        percentile of the vertices' own costs (the k-hop search) or twice the largest (the
        exchange search).
    sort_rows : bool, optional
        Sort every row of ``D`` once so that each refresh is a few whole-array operations
        (default: up to ``SORTED_UPTO`` vertices).
    """

    def __init__(self, D, k, labels, ext=None, frozen=None, *, swaps=True, batch="p95", sort_rows=None):
        if batch not in ("p95", "max"):
            raise ValueError(f"batch must be 'p95' or 'max', not {batch!r}")
        plain = D.dtype == np.int32 and bool((np.diagonal(D) == _BIG).all())
        self.D = D if plain else _dist_no_diag(D)
        self.k = int(k)
        self.swaps, self.batch = bool(swaps), batch
        labels = np.asarray(labels, dtype=np.int64)
        self.V = labels.size
        self.ext = None if ext is None else np.minimum(np.asarray(ext, dtype=np.int64), _BIG)
        self._fixed = np.zeros(self.V, dtype=bool) if frozen is None else np.asarray(frozen, dtype=bool).copy()
        # up to SORTED_UPTO vertices, every row of D sorted once makes each refresh a few
        # whole-array operations (windows of 32x32, k = 6: 0.68 ms -> 0.12 ms a refresh, 7.2 -> 5.5 ms a window)
        self._order = None
        self._edges = None              # (tail, head) of the unit-distance pairs, for close()
        if self.V <= SORTED_UPTO if sort_rows is None else sort_rows:
            self._order = np.argsort(self.D, axis=1, kind="stable").astype(np.int32)
            self._dsorted = np.take_along_axis(self.D, self._order, axis=1)
        self.set_labels(labels)

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
        """Start from ``labels``; its label-0 vertices are the roots from now on."""
        self.labels = np.asarray(labels, dtype=np.int64).copy()
        self.roots = self.labels == 0
        self.frozen = self._fixed | self.roots
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
            if swaps and self.swaps:
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
            if self.batch == "p95":
                radius = 2 * max(2, int(_percentile95(self.c)))
            else:
                radius = 2 * int(max(self.c.max(), 1))
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
        if not self._fixed[~self.roots].any():
            new = np.minimum(lab, (lab[:, None] + self.D).min(axis=0))
            new = np.minimum(new, self.k)
            new[self.roots] = 0
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
    """Randomize the labels of the non-roots in a ball around a random non-root centre."""
    movable = np.flatnonzero(labels > 0)
    centre = int(movable[rng.integers(0, movable.size)])
    ball = np.flatnonzero((D[centre] <= radius) & (labels > 0))
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
