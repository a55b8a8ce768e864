"""The k-hop family: depth-bounded trees whose weighted lift balances under a group smaller than Γ.

Under Γ on an equal-sided torus one k-hop tree lifts to Omega = 1.  Under a
group ``G`` that contains the translations but is not regular on links
(translations x negation: one link orbit per dimension; translations: one per
dimension and direction) the lift of a weighted family puts on orbit ``O`` in
round ``s`` a load proportional to ``sum_t w_t u_{t,O}(s)``; Omega = 1 iff this
is the same on every orbit in every round.  This module builds k-hop trees
whose rounds make that possible; :func:`synth.models.balance.balance_candidates`
then chooses their integer weights and :func:`synth.check.measure_symmetric`
re-derives Omega.

It tries families by size: ``u`` trees on one skeleton
(:mod:`~synth.models.balance.family.skeletons`), each vertex given a hub and a label by
the assignment model (:mod:`~synth.models.balance.family.assignment`), or (under a group
without the negation) ``u`` trees and their mirror images; the smallest size that
balances wins, the lightest family of that size among the skeletons.  When none does,
more skeletons are tried one at a time while the time lasts, and last the assignment
model minimizes the bandwidth term on the lightest skeleton, so the balance model's own
fallback starts from a good family.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.symmetry.torus import torus_translations_negation
>>> t = parse_torus("3x4"); g = torus_translations_negation(t)
>>> fam = khop_family(t, 2, g, time_limit=3)
>>> fam.balanced, fam.depth, fam.units, fam.candidates[0].n_rounds
(True, 2, 1, 4)
>>> from synth.models.balance import balance_candidates
>>> r = balance_candidates(t, g, fam.candidates, time_limit=10)
>>> r.status, str(r.omega), r.chunks
('optimal', '1', 24)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from synth.errors import OptionError, SynthError
from synth.models.forest.instance import tree_weight
from synth.topology.torus import Torus

from .assignment import assign
from .labels import compress_labels, labelled_tree_schedule, mirror_tree
from .profiles import dimension_metric, step_orbits
from .skeletons import DEFAULT_COSTS, skeleton, skeletons

__all__ = ["KHopFamily", "khop_family"]

_EXTRA_COSTS = ((3, 1), (1, 3), (4, 1), (1, 4), (3, 1, 2), (1, 2, 3), (2, 3, 1))  # tried when nothing balanced


@dataclass(frozen=True)
class KHopFamily:
    """Candidate k-hop trees for :func:`synth.models.balance.balance_candidates`.

    Attributes
    ----------
    k : int
        The depth bound asked for.
    depth : int
        ``K <= k``: every candidate has ``2K`` rounds (labels ``1..K``).
    candidates : tuple of BaseSchedule
        One component each (weight 1), all with ``2K`` rounds.
    weights : tuple of int
        ``W`` (sum of tree-edge lengths) of each candidate.
    balanced : bool
        Whether the assignment model balanced the first ``units`` candidates (every
        orbit equally loaded in every round, one chunk per unit); a claim of the
        model, re-derived by the checker after the weights are chosen.
    units : int
        How many of the candidates (the first ones) form the model's family.
    status : str
        The assignment model's verdict for that family: ``"optimal"`` (least ``W``
        among balanced families on the skeleton, proven), ``"feasible"``,
        ``"fallback"`` (no balanced family found; least bandwidth term instead).
    skeleton : str
        Which tree gave the hubs and their labels.
    min_weight : int
        The lightest tree any skeleton had (the unbalanced k-hop tree).
    lightest : int
        Index of that tree among ``candidates`` (scheduled by its own labels).
    seconds : float
    notes : tuple of str
    """

    k: int
    depth: int
    candidates: tuple
    weights: tuple
    balanced: bool
    units: int
    status: str
    skeleton: str
    min_weight: int
    lightest: int
    seconds: float
    notes: tuple = ()


@dataclass(frozen=True)
class FamilyOptions:
    """The search options of :func:`khop_family`: ``max_units``, the largest family size tried (trees of
    weight 1; ``|G|`` chunks per tree; under a group without the negation a family may also be trees and
    their mirror images, whose directions balance each other); ``slack``, the extra edge length allowed
    over a vertex's nearest eligible hub (module docstring); ``costs``, the dimension-cost vectors of the
    heuristic skeletons (see :func:`dimension_metric`)."""

    max_units: int = 2
    slack: int = 2
    costs: tuple = DEFAULT_COSTS


def khop_family(t, k: int, group, *, time_limit: float = 60.0, seed: int = 0, progress=None,
                **options) -> KHopFamily:
    """k-hop trees (depth <= ``k``) whose rounds let a weighted lift through ``group`` reach Omega = 1.

    Parameters
    ----------
    t : Torus
    k : int
        Depth bound, ``1 <= k``; bounds at or above the diameter are treated as ``H``.
    group : Group
        A verified group containing the translations of ``t`` (e.g.
        :func:`synth.symmetry.torus.torus_translations_negation`).
    time_limit : float
        Seconds, roughly: about half for the skeletons, then the assignment MIPs (each
        given a share of what is left; one that has started may run past the end by a second).
    seed : int
    progress : callable, optional
    **options
        Those of :class:`FamilyOptions` (``max_units``, ``slack``, ``costs``).

    Returns
    -------
    KHopFamily
        The first ``units`` candidates are the model's family; the lightest skeleton tree
        is appended when it is not among them, so the balance model's fallback can use it.

    Raises
    ------
    OptionError
        On a bad depth bound ``k`` or unit count ``max_units``.
    SynthError
        On a group without the translations, or a non-torus.
    """
    opts = FamilyOptions(**options)
    if not isinstance(t, Torus):
        raise SynthError("k-hop families are defined on tori")
    k = int(k)
    if k < 1:
        raise OptionError(f"k (the depth bound) must be at least 1, not {k}")
    if opts.max_units < 1:
        raise OptionError(f"max_units must be at least 1, not {opts.max_units}")
    if group.topology.n_links != t.n_links:
        raise SynthError("the group acts on a different topology")
    orb = step_orbits(t, group)
    say = progress or (lambda _m: None)
    t0 = time.monotonic()
    k = min(k, t.diameter)
    # without the negation in the group (orbits split by direction) every tree comes with its mirror image
    mirror = bool(np.all(orb[0::2] != orb[1::2]))
    neg = t.vertex(-t.coords(np.arange(t.n_vertices))).astype(np.int64) if mirror else None
    sks = skeletons(t, k, costs=opts.costs, seed=seed, time_limit=0.55 * time_limit, progress=say)
    run = _FamilySearch(t, group, k, opts, dimension_metric(t, (1,)), neg, say, t0 + time_limit)
    best = run.by_size(sks)
    if best is None:  # more skeletons, one at a time, while the time lasts
        best = run.more_skeletons(sks, seed, time_limit)
    notes = []
    if best is None:
        notes.append(f"no family of at most {opts.max_units} trees on {run.tried} skeleton(s) balances every "
                     f"round (slack {opts.slack}); the assignment model minimized the bandwidth term instead")
        best = run.fallback(sks[0])
    return _family(t, k, best, sks[0], time.monotonic() - t0, tuple(notes))


class _FamilySearch:
    """The assignment searches of :func:`khop_family` over skeletons, sharing the time left."""

    def __init__(self, t, group, k, opts, D, neg, say, end):
        self.t, self.group, self.k, self.opts, self.D, self.neg, self.say, self.end = t, group, k, opts, D, neg, \
            say, end
        self.tried = 0

    def left(self):
        return self.end - time.monotonic()

    def mirrored(self, trees):
        """Every tree and its mirror image (groups without the negation), else ``trees``."""
        if self.neg is None:
            return trees
        return [x for p, lab in trees for x in ((p, lab), mirror_tree(self.t, p, lab, self.neg))]

    def by_size(self, sks):
        """Families by size: u trees on one skeleton, or (without the negation in the group) u trees and their
        mirror images, 2u trees; the lightest balanced family of the first size that has one, or None."""
        t, neg, max_units = self.t, self.neg, self.opts.max_units
        modes = sorted([(u, u, None) for u in range(1, max_units + 1)]
                       + ([(2 * u, u, neg) for u in range(1, max_units // 2 + 1)] if neg is not None else []),
                       key=lambda x: (x[0], x[2] is None))
        best = None  # (W per tree, trees in the family, status, skeleton, [(parent, labels), ...])
        for size in sorted({x[0] for x in modes}):
            for _, units, ng in (x for x in modes if x[0] == size):
                for name, parent, labels in sks:
                    if self.tried and self.left() <= 0:
                        break
                    self.tried += 1
                    status, trees = assign(t, self.group, parent, labels, self.k, units, self.opts.slack, self.D,
                                           max(1.0, self.left() / 2), neg=ng)
                    what = f"{units} tree(s)" + (" and their mirror images" if ng is not None else "")
                    if trees is None:
                        self.say(f"{name}, {what}: {status}")
                        continue
                    if ng is not None:
                        trees = [x for p, lab in trees for x in ((p, lab), mirror_tree(t, p, lab, neg))]
                    W = sum(tree_weight(t, p) for p, _ in trees) / size
                    self.say(f"{name}, {what}: balanced, W = {W:g} per tree ({status})")
                    if best is None or W < best[0]:
                        best = (W, size, status, name, trees)
            if best is not None:
                return best
        return None

    def more_skeletons(self, sks, seed, time_limit):
        """One tree on further skeletons, one at a time, while a quarter of ``time_limit`` is left."""
        t = self.t
        seen = {p.tobytes() for _, p, _ in sks}
        extra = [(c, seed) for c in _EXTRA_COSTS if len(c) <= t.ndim] + [(c, seed + 1) for c in self.opts.costs]
        for job, sd in extra:
            if self.left() < 0.25 * time_limit:
                break
            sk = skeleton(t, self.k, job, sd, min(self.left() / 4, time_limit / 10))
            if sk is None or sk[1].tobytes() in seen:
                continue
            seen.add(sk[1].tobytes())
            name, parent, labels = sk
            self.tried += 1
            status, trees = assign(t, self.group, parent, labels, self.k, 1, self.opts.slack, self.D,
                                   max(1.0, self.left() / 3), neg=self.neg)
            self.say(f"{name}: {status if trees is None else 'balanced'}")
            if trees is not None:
                trees = self.mirrored(trees)
                return (tree_weight(t, trees[0][0]), len(trees), status, name, trees)
        return None

    def fallback(self, first):
        """No balanced family: the assignment model's least bandwidth term on the first skeleton (or its tree)."""
        name, parent, labels = first
        status, trees = assign(self.t, self.group, parent, labels, self.k, 1, self.opts.slack, self.D,
                               max(1.0, self.left()), balanced=False, neg=self.neg)
        trees = [(parent, labels)] if trees is None else self.mirrored(trees)
        return (None, len(trees), "fallback" if status in ("optimal", "feasible") else status, name, trees)


def _family(t, k, best, lightest_skeleton, seconds, notes) -> KHopFamily:
    """The family of ``best`` as candidate schedules, the lightest skeleton tree appended when not among them."""
    _, min_parent, min_labels = lightest_skeleton
    _, units, status, skel, trees = best
    family = list(trees)
    same = [i for i, (p, _) in enumerate(family) if np.array_equal(p, min_parent)]
    if same:
        lightest = same[0]
    else:
        lightest = len(family)
        family.append((min_parent, min_labels))
    family, K = compress_labels(family)
    cands, weights = [], []
    for i, (p, lab) in enumerate(family):
        W = tree_weight(t, p)
        role = f"unit {i + 1} of {units}" if i < units else "lightest skeleton tree"
        cands.append(labelled_tree_schedule(t, p, lab, K, label=f"k-hop tree ({role}), depth bound {k}, W = {W}"))
        weights.append(W)
    return KHopFamily(k, K, tuple(cands), tuple(weights), best[0] is not None, units, status,
                      skel, tree_weight(t, min_parent), lightest, seconds, notes)
