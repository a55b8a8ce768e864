"""Exact k-hop trees on tiny tori by exhaustive dynamic programming (the reference for tests).

The subset DP over labellings of :mod:`synth.models.forest.brute` on the root set ``{0}``:
``W*(k) = min over labellings of sum_v dist(v, A_l(v))``, ``A_h = {0} + {u : l(u) < h}``,
about ``3^(V-1)`` work per level, so this is for ``V <= 16`` or so.  ``allowed`` (a ``V x V``
mask) restricts which arcs ``u -> v`` may be used, to test arc reductions.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("7")
>>> [brute_force_khop(t, k)[0] for k in (1, 2, 3)]
[12, 8, 6]
"""

from __future__ import annotations

from synth.models.forest.brute import brute_force_labels
from synth.models.forest.instance import distance_matrix

__all__ = ["brute_force_khop"]


def brute_force_khop(t, k: int, allowed=None, max_vertices: int = 17):
    """Exact ``(W*, parent)`` for a depth bound ``k``: the labelling DP on the root set ``{0}``.

    Parameters
    ----------
    t : Torus
    k : int
    allowed : numpy.ndarray, optional
        ``V x V`` bool mask of usable arcs ``u -> v``; default all.
    max_vertices : int
        Refuse bigger instances (the work grows like ``3^V``).

    Returns
    -------
    weight : int
        ``W*(k)`` (``None`` if no allowed tree exists).
    parent : numpy.ndarray or None
        An optimal tree.
    """
    V = t.n_vertices
    if V > max_vertices:
        raise ValueError(f"brute force is for at most {max_vertices} vertices, got {V}")
    return brute_force_labels(distance_matrix(t), [0], k, allowed=allowed, max_free=V)
