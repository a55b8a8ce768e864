"""Primal heuristic for exchange forests: labels, construction, local search, partner search.

Labels.  The two roots ``0`` and ``b`` get label 0, every other vertex a label in ``1..h``,
and each vertex hangs under its nearest vertex of smaller label, ``A_l = {u : l(u) < l}``.
Every labelling is a forest of depth at most ``h`` (a parent's label is smaller), of weight
``dist(0, b) + sum_v dist(v, A_l(v))``, and labelling a forest by its depths gives that forest
or a lighter one.  Searching labels keeps every candidate feasible and makes the best parent
implicit, so a move is "change one label".

Construction: a farthest-point order from the two roots spreads every prefix evenly; an exact
DP over the cut points of that order picks the best nested prefixes ``A_2 <= ... <= A_h``
(:func:`~synth.models.forest.labels.best_prefix_labels`); the truncated BFS labelling ``min(d_R, h)`` is tried too.

Local search (:func:`label_search`, a :class:`~synth.models.forest.labels.LabelSearch`): all
single-label moves are priced at once with dense array arithmetic; improving moves far apart
are applied as a batch.  Iterated with random
perturbations of small balls (seeded).

Partner search (:func:`heuristic_forest`): every partner orbit gets a construction and a
descent; the best few partners are then improved by the iterated search, and partner moves
(``b`` to a nearby vertex, keeping the other labels) are tried between rounds.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.models.xhop.instance import distance_matrix
>>> t = parse_torus("8x8")
>>> res = heuristic_forest(t, distance_matrix(t), 3, seed=0, time_limit=5.0)
>>> res.weight <= 78, res.depth <= 3
(True, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from synth.models.forest.labels import (_dist_no_diag, _perturb, LabelSearch, best_prefix_labels, fps_order,
                                        labels_cost, labels_to_parent)
from synth.models.xhop.instance import forest_depths, partner_orbits, root_distance

__all__ = [
    "ForestResult",
    "heuristic_forest",
    "label_search",
    "labels_cost",
    "labels_to_parent",
    "sample_partners",
    "split_tree",
]


@dataclass(frozen=True)
class ForestResult:
    b: int
    parent: np.ndarray
    labels: np.ndarray
    weight: int
    depth: int
    per_partner: dict = None    # partner -> (weight, labels) of the best forest seen for it


def label_search(D, h, labels) -> LabelSearch:
    """The exchange forests' :class:`~synth.models.forest.labels.LabelSearch`: moves only, batches spread
    by the largest own cost, rows not sorted (one instance serves every partner in turn)."""
    return LabelSearch(D, h, labels, swaps=False, batch="max", sort_rows=False)


def _root_labels(V, b, base):
    lab = np.asarray(base, dtype=np.int64).copy()
    lab[[0, b]] = 0
    return lab


def split_tree(parent, b: int | None = None):
    """Exchange forests from a tree rooted at 0: cut the edge to a child ``c`` of the root.

    The forest has roots ``0`` and ``c``, the same weight (the cut edge becomes the exchange
    route) and no larger depth.  Returns a list of ``(c, parent)`` (only ``c = b`` if given).
    """
    parent = np.asarray(parent, dtype=np.int64)
    kids = np.flatnonzero(parent == 0) if b is None else [b]
    out = []
    for c in kids:
        if parent[c] != 0:
            continue
        p = parent.copy()
        p[c] = -1
        out.append((int(c), p))
    return out


_FPS_MAX = 2048          # the prefix DP holds (p + 1)^2 int64 matrices: skip it on bigger tori


def sample_partners(reps, V, budget=2e7):
    """Every partner orbit when ``len(reps) * p^2 <= budget`` (all of them up to 16x16), else an
    evenly spaced deterministic sample of at least 8 (always including the first, adjacent one)."""
    reps = np.asarray(reps)
    cap = max(8, int(budget // (V * V)))
    if reps.size <= cap:
        return reps
    return np.unique(reps[np.linspace(0, reps.size - 1, cap).round().astype(np.int64)])


def _construct(D, Dm, b, k, rng_seeds, extra=()):
    """Candidate labellings for partner ``b``: truncated BFS, FPS prefixes, extras."""
    V = D.shape[0]
    dR = root_distance(D, b)
    cands = [_root_labels(V, b, np.minimum(dR, k))]
    for s in rng_seeds if V <= _FPS_MAX else ():
        order = fps_order(D, np.random.default_rng(s), roots=[0, b])
        cands.append(best_prefix_labels(D, order, k, n_roots=2, exact_upto=_FPS_MAX))
    cands.extend(_root_labels(V, b, e) for e in extra)
    return cands


def _descend_all(ls, cands, deadline):
    best_lab, best_cost = None, None
    for lab in cands:
        ls.set_labels(lab)
        ls.search(deadline=deadline)
        if best_cost is None or ls.cost < best_cost:
            best_lab, best_cost = ls.labels.copy(), ls.cost
    return best_lab, best_cost


@dataclass(frozen=True, eq=False)
class ForestOptions:
    """The search options of :func:`heuristic_forest` (documented there)."""

    time_limit: float = 30.0
    partners: object = None
    starts: tuple = ()
    iterations: int | None = None
    n_intensify: int | None = None


def heuristic_forest(t, D, h: int, *, seed: int = 0, progress=None, **options) -> ForestResult:
    """A good exchange forest of depth ``<= h`` (construction, descent, partner and iterated search).

    Parameters
    ----------
    t : Torus
    D : numpy.ndarray
        Distances of ``t``.
    h : int
        Depth bound, ``h >= 1``.
    seed : int
        Seeds the orders and the perturbations.
    progress : callable, optional
    **options
        Those of :class:`ForestOptions`:
    time_limit : float
        Safety cap in seconds; the search is otherwise bounded by ``iterations``, so the result
        depends only on the seed unless the cap cuts it short.
    partners : array_like, optional
        Partners to try (default: one per orbit of the root stabilizer).
    starts : sequence of ``(b, parent)``
        Extra starting forests (e.g. split k-hop trees).
    iterations : int, optional
        Perturbation rounds, times 3, shared by the intensified partners (default scaled to the
        instance).
    n_intensify : int, optional
        How many of the best partners after the construction get the iterated search (default
        8 on tori up to 150 vertices, else 3).

    Returns
    -------
    ForestResult
    """
    opts = ForestOptions(**options)
    run = _ForestSearch(D, h, seed, time.monotonic() + opts.time_limit, progress or (lambda _m: None))
    V = D.shape[0]
    partners = sample_partners(partner_orbits(t)[0], V) if opts.partners is None else opts.partners
    partners = [int(b) for b in partners]
    extra = {}
    for b, parent in opts.starts:
        extra.setdefault(int(b), []).append(forest_depths(parent, [0, b]))
    for b in extra:
        if b not in partners:
            partners.append(b)
    iterations = int(min(150, max(20, 20_000 // V))) if opts.iterations is None else opts.iterations
    run.ls = label_search(run.Dm, h, _root_labels(V, partners[0], np.ones(V)))
    scored = run.score(partners, extra)
    # 2. intensify the best few partners: more orders, iterated local search
    n_top = min(len(scored), opts.n_intensify or (8 if V <= 150 else 3))
    run.intensify(scored[:n_top], max(1, 3 * iterations // n_top))  # the same total work however many share it
    run.partner_moves()
    parent = labels_to_parent(run.Dm, run.best_lab)
    depth = int(forest_depths(parent, [0, run.best_b]).max())
    return ForestResult(int(run.best_b), parent, run.best_lab, int(run.best_w), depth, run.per)


class _ForestSearch:
    """The state :func:`heuristic_forest`'s phases share: distances, the label search, the best forest per
    partner (``per``) and overall (``best_w``, ``best_b``, ``best_lab``)."""

    def __init__(self, D, h, seed, t_end, say):
        self.D, self.h, self.seed, self.t_end, self.say = D, h, seed, t_end, say
        self.Dm = _dist_no_diag(D)
        self.d0 = D[0].astype(np.int64)
        self.ls, self.per = None, {}
        self.best_w = self.best_b = self.best_lab = None

    def score(self, partners, extra):
        """Phase 1: every partner, construction + descent, in the order of the truncated BFS forest's weight
        (cheap), so that a time cap on a big torus cuts the least promising partners; sorted by weight."""
        D, Dm, h, d0, V = self.D, self.Dm, self.h, self.d0, self.D.shape[0]
        quick = [labels_cost(Dm, _root_labels(V, b, np.minimum(root_distance(D, b), h))) + int(d0[b])
                 for b in partners]
        partners = [partners[i] for i in np.argsort(quick, kind="stable")]
        scored = []
        for n, b in enumerate(partners):
            if scored and time.monotonic() > self.t_end:
                break
            cands = _construct(D, Dm, b, h, [[self.seed, b, 0]], extra.get(b, ()))
            lab, cost = _descend_all(self.ls, cands, self.t_end)
            scored.append((cost + int(d0[b]), n, b, lab))
        self.per = {b: (w, lab) for w, _, b, lab in scored}
        scored.sort(key=lambda r: (r[0], r[1]))
        self.best_w, _, self.best_b, self.best_lab = scored[0]
        self.say(f"heuristic: best partner {self.best_b}, W = {self.best_w} after construction")
        return scored

    def intensify(self, top, rounds):
        """Phase 2: more orders and ``rounds`` of iterated local search for each partner of ``top``."""
        D, Dm, h, ls, t_end, V = self.D, self.Dm, self.h, self.ls, self.t_end, self.D.shape[0]
        rng = np.random.default_rng([self.seed, 7])
        max_r = max(2, int(round(np.sqrt(V) / 3)))
        for w0, _, b, lab0 in top:
            if time.monotonic() > t_end:
                break
            cands = [lab0] + _construct(D, Dm, b, h, [[self.seed, b, i] for i in (1, 2)])[1:]
            cur_lab, cur_cost = _descend_all(ls, cands, t_end)
            for _ in range(rounds):
                if time.monotonic() > t_end:
                    break
                ls.set_labels(_perturb(cur_lab, Dm, h, rng, int(rng.integers(1, max_r + 1))))
                ls.search(deadline=t_end)
                if ls.cost <= cur_cost:
                    cur_lab, cur_cost = ls.labels.copy(), ls.cost
            w = cur_cost + int(self.d0[b])
            if w < self.per[b][0]:
                self.per[b] = (w, cur_lab)
            if w < self.best_w:
                self.best_w, self.best_b, self.best_lab = w, b, cur_lab
                self.say(f"heuristic: partner {b}, W = {w}")

    def partner_moves(self):
        """Phase 3: move the partner to a vertex near it (keeping the other labels), search again."""
        Dm, ls, V = self.Dm, self.ls, self.D.shape[0]
        improved = True
        while improved and time.monotonic() < self.t_end:
            improved = False
            near = np.flatnonzero((Dm[self.best_b] <= 2) & (np.arange(V) != 0))
            for nb in near.tolist():
                lab = self.best_lab.copy()
                lab[self.best_b] = 1
                lab[nb] = 0
                ls.set_labels(lab)
                ls.search(deadline=self.t_end)
                w = ls.cost + int(self.d0[nb])
                if nb not in self.per or w < self.per[nb][0]:
                    self.per[nb] = (w, ls.labels.copy())
                if w < self.best_w:
                    self.best_w, self.best_b, self.best_lab, improved = w, nb, ls.labels.copy(), True
                    self.say(f"heuristic: partner move to {nb}, W = {w}")
                    break
