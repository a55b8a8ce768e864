"""Exact exchange forests on tiny tori by exhaustive search (the references for the tests).

Two independent methods:

* :func:`enumerate_forests` -- every partner ``b`` and every parent assignment (each non-root
  picks any other vertex as its parent), kept when following parents reaches a root within
  ``h`` steps.  No structure is assumed; the work is ``(p - 1)^(p - 2)`` per partner, so this is
  for ``p <= 9``.
* :func:`brute_force_xhop` -- the labelling dynamic program of :mod:`synth.models.forest.brute`:
  with ``R = {0, b} = A_1 <= A_2 <= ... <= A_h``, ``G_h(A) = sum_{v not in A} dist(v, A)`` and
  ``G_l(A) = min_{B >= A} sum_{v in B - A} dist(v, A) + G_{l+1}(B)``.  About ``3^(p - 2)``
  work per level: ``p <= 16``.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("7")
>>> [enumerate_forests(t, h)[0] for h in (1, 2, 3)]
[9, 7, 6]
>>> [brute_force_xhop(t, h)[0] for h in (1, 2, 3)]
[9, 7, 6]
"""

from __future__ import annotations

import itertools

import numpy as np

from synth.models.forest.brute import brute_force_labels
from synth.models.xhop.instance import distance_matrix, partner_orbits

__all__ = ["brute_force_xhop", "enumerate_forests"]

_INF = np.int64(1 << 40)


def enumerate_forests(t, h: int, partners=None, max_vertices: int = 9, collect: bool = False):
    """Minimum ``W`` over every partner and every parent assignment of depth ``<= h``.

    Parameters
    ----------
    t : Torus
    h : int
    partners : iterable of int, optional
        Default: every vertex but 0.
    max_vertices : int
        Refuse bigger tori.
    collect : bool
        Also return the set of every valid ``(b, parent tuple)``.

    Returns
    -------
    weight : int
    b : int
    parent : numpy.ndarray
    forests : set
        Only with ``collect``.
    """
    V = t.n_vertices
    if V > max_vertices:
        raise ValueError(f"enumeration is for at most {max_vertices} vertices, got {V}")
    D = distance_matrix(t).astype(np.int64)
    partners = range(1, V) if partners is None else partners
    best = (None, None, None)
    found = set()
    for b in partners:
        b = int(b)
        others = [v for v in range(V) if v not in (0, b)]
        choices = [[u for u in range(V) if u != v] for v in others]
        P = np.array(list(itertools.product(*choices)), dtype=np.int64).reshape(-1, len(others))
        full = np.empty((P.shape[0], V), dtype=np.int64)
        full[:, 0], full[:, b] = 0, b              # roots point at themselves
        full[:, others] = P
        anc = np.tile(np.arange(V), (P.shape[0], 1))
        for _ in range(h):
            anc = np.take_along_axis(full, anc, axis=1)
        ok = np.all((anc == 0) | (anc == b), axis=1)
        if not ok.any():
            continue
        w = D[np.asarray(others)[None, :], P].sum(axis=1) + D[0, b]
        w = np.where(ok, w, _INF)
        i = int(np.argmin(w))
        if best[0] is None or w[i] < best[0]:
            parent = full[i].copy()
            parent[[0, b]] = -1
            best = (int(w[i]), b, parent)
        if collect:
            for row in full[ok]:
                p = row.copy()
                p[[0, b]] = -1
                found.add((b, tuple(p.tolist())))
    return best + ((found,) if collect else ())


def brute_force_xhop(t, h: int, partners=None):
    """``(W*, b, parent)`` by the labelling DP over the given partners (default: one per orbit)."""
    D = distance_matrix(t)
    partners = partner_orbits(t)[0] if partners is None else partners
    best = (None, None, None)
    for b in partners:
        w, parent = brute_force_labels(D, [0, int(b)], h)
        w += int(D[0, b])
        if best[0] is None or w < best[0]:
            best = (w, int(b), parent)
    return best
