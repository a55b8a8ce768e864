"""The layered Lagrangian bound for k-hop trees: re-derive it from a stored dual.

A solver's lower bound on ``W*(k)`` (the least weight of a spanning tree of depth
``<= k`` rooted at vertex 0 of a torus) is a claim; this module turns it into
something ``synth check`` re-derives, without the solver and without trusting it.
The certificate stores a dual solution; the bound is the value of the Lagrangian
relaxation at that dual, recomputed here from the definition below.  Any dual gives
a valid bound, so a wrong or tampered dual can only give a weaker number, never a
false one.

The relaxation (the layered-graph LP, docs/spec.md §5).  Layered node ``(i, h)`` is
"vertex ``i`` at depth ``h``" (node id ``h * V + i``, the root is node 0).  Variables,
all in ``[0, 1]``: ``y[i, h]`` for ``i != 0``, ``1 <= h <= k``; ``z[t, i, h]`` for the arcs
``(t, h - 1) -> (i, h)`` of

* ``h = 1``: ``t = 0``;
* ``h >= 2``: ``t != 0``, ``t != i``, ``dist(t, i) < dist(0, i)``, and for ``h >= 3`` ``t`` not a
  neighbour of the root.

(Exact reduction: re-hanging a vertex ``j`` with ``dist(parent, j) >= dist(0, j)`` on the
root never costs more and never deepens anything, and terminates, so some optimal tree
uses only these arcs; a root neighbour then hangs on the root.)  Rows, each valid for
every such tree (``x`` its incidence vector):

* ``D[i, h]``: ``y[i, h] - sum_t z[t, i, h] = 0``          (dual ``beta``, free)
* ``O[i]``:    ``sum_h y[i, h] = 1``                        (dual ``alpha``, free)
* ``L[t, i, h]``: ``z[t, i, h] - y[t, h - 1] <= 0``, ``h >= 2``  (dual ``lambda <= 0``)
* ``C[S]``:    ``sum of z over arcs entering S >= 1`` for a set ``S`` of layered nodes
  that holds every copy ``(j, 1..k)`` of some ``j != 0`` and not the root  (dual ``mu >= 0``)

For any duals with these signs, ``L = sum alpha + sum mu + sum over columns of
min(0, reduced cost)`` is at most the LP optimum, hence at most ``W*``; since tree weights
are integers, ``ceil(L - tol)`` is a bound too (``tol`` covers float64 rounding).
Reduced costs: ``rc(y[i, h]) = -beta[i, h] - alpha[i] + sum_j lambda[i, j, h + 1]`` and
``rc(z[t, i, h]) = dist(t, i) + beta[i, h] - lambda[t, i, h] - sum_{S entered} mu[S]``.

Stored form (JSON, ``"kind": "khop-layered-lagrangian"``): each entry stands for all its
distinct images under the root's stabilizer (the signed coordinate permutations of
the torus, computed here), each image taking the entry's value; values of entries
that share a row add up.  Entries: ``alpha`` ``[i, value]``, ``beta`` ``[i, h, value]``,
``lambda`` ``[t, i, h, value]``, ``cuts`` ``[value, [node ids of S]]``.  Entries with the wrong
sign, or on rows outside the relaxation, are rejected.

Examples
--------
The zero dual proves nothing; pricing the root's four neighbours proves that each of them
costs at least 1.  Real duals come from the k-hop solver's LP
(``tests/check/bounds/test_dual_bounds.py`` checks them against an independent LP solve):

>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("4x4")
>>> layered_dual_bound(t, 2, {"kind": "khop-layered-lagrangian", "k": 2}).bound
0
>>> dual = {"kind": "khop-layered-lagrangian", "k": 2, "alpha": [[1, 1.0]],
...         "beta": [[1, 1, -1.0], [1, 2, -1.0]]}
>>> layered_dual_bound(t, 2, dual).bound   # alpha spreads over the 4 neighbours of 0 only
4
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from synth.check.bounds.kinds import DualBound
from synth.errors import SynthError
from synth.symmetry.torus import root_stabilizer
from synth.topology.torus import Torus

__all__ = ["layered_dual_bound", "root_stabilizer_perms", "MAX_LAGRANGIAN_VERTICES"]

# Work limits, checked before anything of that size is made (the duals come from files):
MAX_LAGRANGIAN_VERTICES = 4096  # the re-derivation holds a few V x V float64 arrays: about 1 GB at 64x64
_MAX_PERM_ENTRIES = 1 << 25     # root stabilizer permutations x V (int64)
_MAX_CUT_ENTRIES = 1 << 26      # cut images x (k + 1) x V (float64): 512 MiB
_MAX_CUT_FLOPS = 1 << 36        # cut images x (k + 1) x V^2: the cut products, a few seconds


def root_stabilizer_perms(t) -> np.ndarray:
    """Vertex permutations of the torus fixing 0 (:func:`synth.symmetry.torus.root_stabilizer`) as int64.

    Returns a ``G x V`` int64 array (identity first, duplicates removed); the bound only
    uses it through sets of images, so their order does not matter.

    >>> from synth.topology.torus import parse_torus
    >>> root_stabilizer_perms(parse_torus("4x4")).shape, root_stabilizer_perms(parse_torus("4x6")).shape
    ((8, 16), (4, 24))
    """
    return root_stabilizer(t).astype(np.int64)


def _images(perms, V, nodes):
    """Distinct images of the node set ``nodes`` (ids ``h * V + i``), as sorted arrays."""
    h, i = np.divmod(np.asarray(nodes, dtype=np.int64), V)
    imgs = np.sort(h[None, :] * V + perms[:, i], axis=1)
    return np.unique(imgs, axis=0)


def _entries(dual, key, width):
    rows = dual.get(key, [])
    if not isinstance(rows, list) or any(not isinstance(r, (list, tuple)) or len(r) != width for r in rows):
        raise SynthError(f"dual bound: '{key}' must be a list of {width}-element entries")
    return rows


def layered_dual_bound(t, k: int, dual: dict) -> DualBound:
    """The Lagrangian bound on ``W*(k)`` at the stored ``dual`` (module docstring), on the torus ``t``.

    Parameters
    ----------
    t : Torus
    k : int
        The dual's own depth bound (:func:`synth.check.bounds.khop_dual_bound` has checked that
        it is at least the depth asked for).
    dual : dict
        The stored dual, of kind ``"khop-layered-lagrangian"``.

    The :class:`DualBound` it returns and the :class:`~synth.errors.SynthError` it raises on a
    malformed dual are those of :func:`~synth.check.bounds.khop_dual_bound`, which dispatches here;
    a dual too large to re-derive raises too.
    """
    _check_size(t, k)
    V = t.n_vertices
    perms = root_stabilizer_perms(t)
    verts = np.arange(V)
    D = t.dist(verts[:, None], verts[None, :]).astype(np.float64)
    relax = _Relaxation(k, D, D[0] == 1,
                        (D < D[0][None, :]) & (verts[:, None] != 0) & (verts[:, None] != verts[None, :]))
    mult = _read_multipliers(dual, perms, relax)
    mu, M, n_cut_rows = _read_cuts(dual, perms, k, V)
    val, tol = _value(relax, mult, mu, M)
    return DualBound(max(0, math.ceil(val - tol)), val, tol, mult.n_rows + n_cut_rows)


@dataclass(frozen=True)
class _Relaxation:
    """The layered relaxation on a torus: depth bound ``k``, distances ``D``, the root's neighbours
    ``nbr`` and the arcs ``allowed[t, i]`` (``i`` nearer the root than ``t``)."""

    k: int
    D: np.ndarray
    nbr: np.ndarray
    allowed: np.ndarray


@dataclass(frozen=True)
class _Multipliers:
    """The dual's vertex (``alpha``), layer (``beta``) and arc (``lambda``, sparse, ``<= 0``) multipliers,
    expanded over the root stabilizer, and the rows they stand for."""

    alpha: np.ndarray
    beta: np.ndarray
    lam_t: np.ndarray
    lam_i: np.ndarray
    lam_h: np.ndarray
    lam_v: np.ndarray
    n_rows: int


def _check_size(t, k) -> None:
    """Refuse what this check cannot re-derive: bad ``k``, too many vertices, too large a stabilizer."""
    V = t.n_vertices
    if k < 1 or V < 2:
        raise SynthError("dual bound: need k >= 1 and at least two vertices")
    if V > MAX_LAGRANGIAN_VERTICES:
        raise SynthError(f"dual bound: a layered dual on {V} vertices is beyond the {MAX_LAGRANGIAN_VERTICES} "
                         "this check re-derives (use the cone-count bound)")
    if k > V - 1:
        raise SynthError(f"dual bound: depth {k} exceeds {V - 1}, the deepest a tree on {V} vertices can be")
    n_perms = 2 ** len(t.shape) * math.factorial(len(t.shape))   # every signed permutation: a lattice's point group
    if isinstance(t, Torus):
        n_perms = 2 ** len(t.shape)
        for side in set(t.shape):
            n_perms *= math.factorial(list(t.shape).count(side))
    if n_perms * V > _MAX_PERM_ENTRIES:
        raise SynthError(f"dual bound: the root stabilizer of {t.name} has {n_perms} elements, too many to expand")


def _vertex(i, V):
    if not (isinstance(i, int) and 0 < i < V):
        raise SynthError(f"dual bound: vertex {i!r} out of range 1..{V - 1}")
    return i


def _layer(h, k, lo=1):
    if not (isinstance(h, int) and lo <= h <= k):
        raise SynthError(f"dual bound: layer {h!r} out of range {lo}..{k}")
    return h


def _number(x, sign=0):
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise SynthError(f"dual bound: value {x!r} is not a finite number")
    if sign * x < 0:
        raise SynthError(f"dual bound: value {x!r} has the wrong sign")
    return float(x)


def _read_multipliers(dual, perms, relax) -> _Multipliers:
    """The stored alpha, beta and lambda, each entry checked and spread over its orbit under ``perms``."""
    k, V = relax.k, relax.D.shape[0]
    alpha = np.zeros(V)
    beta = np.zeros((k + 1, V))
    lam_t, lam_i, lam_h, lam_v = [], [], [], []   # sparse lambda (duplicates add up)
    n_rows = 0
    for i, x in _entries(dual, "alpha", 2):
        orb = np.unique(perms[:, _vertex(i, V)])
        alpha[orb] += _number(x)
        n_rows += orb.size
    for i, h, x in _entries(dual, "beta", 3):
        orb = np.unique(perms[:, _vertex(i, V)])
        beta[_layer(h, k), orb] += _number(x)
        n_rows += orb.size
    for tt, i, h, x in _entries(dual, "lambda", 4):
        h = _layer(h, k, 2)
        if not (isinstance(tt, int) and 0 < tt < V) or not relax.allowed[tt, _vertex(i, V)] \
                or (h >= 3 and relax.nbr[tt]):
            raise SynthError(f"dual bound: lambda on ({tt}, {i}, {h}), not an arc of the relaxation")
        pairs = np.unique(np.stack([perms[:, tt], perms[:, i]], axis=1), axis=0)
        lam_t.append(pairs[:, 0])
        lam_i.append(pairs[:, 1])
        lam_h.append(np.full(pairs.shape[0], h))
        lam_v.append(np.full(pairs.shape[0], _number(x, -1)))
        n_rows += pairs.shape[0]
    if lam_t:
        lam_t, lam_i, lam_h, lam_v = (np.concatenate(a) for a in (lam_t, lam_i, lam_h, lam_v))
    else:
        lam_t = lam_i = lam_h = np.zeros(0, dtype=np.int64)
        lam_v = np.zeros(0)
    return _Multipliers(alpha, beta, lam_t, lam_i, lam_h, lam_v, n_rows)


def _read_cuts(dual, perms, k, V):
    """The stored cuts, checked and spread over their images under ``perms``: ``(mu, M, rows)`` with ``M``
    the ``rows x (k + 1) x V`` incidence of each cut image."""
    cut_sets, cut_vals = [], []
    for x, nodes in _entries(dual, "cuts", 2):
        x = _number(x, 1)
        if not isinstance(nodes, list) or not all(isinstance(n, int) and V <= n < (k + 1) * V for n in nodes):
            raise SynthError(f"dual bound: a cut's nodes must be ids in {V}..{(k + 1) * V - 1} (no layer 0)")
        inside = np.zeros((k + 1) * V, dtype=bool)
        inside[nodes] = True
        full = inside.reshape(k + 1, V)[1:].all(axis=0)
        if not full.any():
            raise SynthError("dual bound: a cut does not hold every copy of any vertex")
        if (len(cut_sets) + perms.shape[0]) * (k + 1) * V > _MAX_CUT_ENTRIES \
                or (len(cut_sets) + perms.shape[0]) * (k + 1) * V * V > _MAX_CUT_FLOPS:
            raise SynthError(f"dual bound: the cuts expand to more than {len(cut_sets)} sets of up to {(k + 1) * V} "
                             "nodes, beyond what this check re-derives")
        for img in _images(perms, V, nodes):
            cut_sets.append(img)
            cut_vals.append(x)
    mu = np.asarray(cut_vals, dtype=np.float64)
    M = np.zeros((len(cut_sets), (k + 1) * V))
    for r, img in enumerate(cut_sets):
        M[r, img] = 1.0
    return mu, M.reshape(len(cut_sets), k + 1, V), len(cut_sets)


def _value(relax, mult, mu, M):
    """The Lagrangian value at the multipliers and its rounding-error bound ``(val, tol)``.

    Float64 error: every reduced cost is a sum of at most n_ops terms whose magnitudes add up
    to mag, so it is off by at most gamma * mag (gamma = n_ops * eps); a column can only be
    mis-priced when its computed reduced cost is below that, and the sums add n * eps * |sum|.
    """
    k, D, V = relax.k, relax.D, relax.D.shape[0]
    alpha, beta = mult.alpha, mult.beta
    eps = float(np.finfo(np.float64).eps)
    n_ops = mu.size + mult.lam_v.size + 8
    gamma = n_ops * eps / (1 - n_ops * eps)

    def part(rc, mag):
        neg = np.minimum(rc, 0.0)
        err = gamma * mag
        return float(neg.sum()), float(err[rc < err].sum()) + rc.size * eps * float(-neg.sum())

    parts = [(float(alpha.sum()), alpha.size * eps * float(np.abs(alpha).sum())),
             (float(mu.sum()), mu.size * eps * float(mu.sum()))]
    # y columns
    lam_out = np.zeros((k + 1, V))          # sum_j lambda[t=i, j, h+1] for y[i, h] (all lambda <= 0)
    np.add.at(lam_out, (mult.lam_h - 1, mult.lam_t), mult.lam_v)
    rc_y = -beta[1:, 1:] - alpha[None, 1:] + lam_out[1:, 1:]
    parts.append(part(rc_y, np.abs(beta[1:, 1:]) + np.abs(alpha[None, 1:]) - lam_out[1:, 1:]))
    # z columns, layer by layer (mu >= 0, so the cut terms' magnitudes are their values)
    for h in range(1, k + 1):
        enter_h = mu @ M[:, h, :] if mu.size else np.zeros(V)          # sum of mu over S holding (i, h)
        if h == 1:
            rc = D[0, 1:] + beta[1, 1:] - enter_h[1:]
            parts.append(part(rc, D[0, 1:] + np.abs(beta[1, 1:]) + enter_h[1:]))
            continue
        both = (M[:, h - 1, :].T * mu) @ M[:, h, :] if mu.size else np.zeros((V, V))  # tail in S too
        rc = D + beta[h][None, :] - (enter_h[None, :] - both)
        mag = D + np.abs(beta[h])[None, :] + enter_h[None, :] + both
        on = mult.lam_h == h
        np.add.at(rc, (mult.lam_t[on], mult.lam_i[on]), -mult.lam_v[on])
        np.add.at(mag, (mult.lam_t[on], mult.lam_i[on]), -mult.lam_v[on])
        mask = relax.allowed.copy()
        if h >= 3:
            mask[relax.nbr, :] = False
        parts.append(part(rc[mask], mag[mask]))
    val = float(sum(p for p, _ in parts))
    tol = float(sum(e for _, e in parts)) + len(parts) * eps * sum(abs(p) for p, _ in parts)
    return val, tol
