"""Route profiles: how many hops of a dimension-order route fall on each link orbit.

A k-hop family on a torus under a group ``G`` that contains the translations only
sees, for every tree edge, the link-orbit incidences of its routes (the edge's
*profile*): a hop along dimension ``i`` towards ``+1`` or ``-1`` lies in an orbit
that does not depend on where it starts (:func:`step_orbits`).  The metrics
``D_c(u, v) = sum_i c_i |dx_i|`` (:func:`dimension_metric`) shift hops between
dimensions when the skeletons are built.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.symmetry.torus import torus_translations
>>> t = parse_torus("3x4"); g = torus_translations(t)
>>> step_orbits(t, g).tolist()
[0, 1, 2, 3]
>>> edge_profiles(t, g, t.vertex((1, 1)), np.array([0]), None).tolist()  # reduce half, copy half
[[0, 1, 0, 1, 1, 0, 1, 0]]
"""

from __future__ import annotations

import numpy as np

from synth.errors import OptionError, SynthError
from synth.models.forest.instance import distance_matrix

__all__ = ["dimension_metric", "step_orbits", "orbit_profiles", "edge_profiles"]


def dimension_metric(t, costs) -> np.ndarray:
    """``V x V`` int32 matrix ``D_c(u, v) = sum_i c_i * (torus distance along dimension i)``.

    ``costs`` has one positive integer per dimension (a shorter tuple is repeated).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("3x4")
    >>> dimension_metric(t, (2, 1))[0, [1, 2, 4, 5]].tolist()
    [1, 2, 2, 3]
    """
    costs = tuple(int(c) for c in costs)
    if not costs or min(costs) < 1:
        raise OptionError(f"costs must be positive integers (one per dimension), not {costs}")
    return distance_matrix(t, costs, dtype=np.int32)


def step_orbits(t, group) -> np.ndarray:
    """``orb[2i + s]``: the link orbit of a hop along dimension ``i`` (``s = 1``: towards -1).

    Raises
    ------
    SynthError
        If the group does not contain the translations (orbits then depend on the vertex).
    """
    d2 = 2 * t.ndim
    lo = np.asarray(group.link_orbit, dtype=np.int64).reshape(t.n_vertices, d2)
    if not np.all(lo == lo[0]):
        raise SynthError(f"k-hop families need a group containing the translations of {t.name}")
    return lo[0]


def orbit_profiles(t, group, u, v) -> np.ndarray:
    """Link-orbit incidences of the dimension-order routes ``u[j] -> v[j]``, shape ``(len, n_orbits)``.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> from synth.symmetry.torus import torus_translations, torus_translations_negation
    >>> t = parse_torus("3x4")
    >>> orbit_profiles(t, torus_translations_negation(t), [0], [t.vertex((1, 2))]).tolist()
    [[1, 2]]
    >>> orbit_profiles(t, torus_translations(t), [0], [t.vertex((2, 3))]).tolist()
    [[0, 1, 0, 1]]
    """
    orb = step_orbits(t, group)
    steps = np.atleast_2d(t.steps(np.asarray(u), np.asarray(v)))
    out = np.zeros((steps.shape[0], group.n_link_orbits), dtype=np.int64)
    for i in range(t.ndim):
        s = steps[:, i]
        for sign, j in ((s > 0, 2 * i), (s < 0, 2 * i + 1)):
            np.add.at(out, (np.flatnonzero(sign), orb[j]), np.abs(s[sign]))
    return out


def edge_profiles(t, group, v, cand, neg) -> np.ndarray:
    """Per candidate parent: orbit incidences of the reduce route ``v -> u`` and of the copy route ``u -> v``.

    (They are not always reverses of each other: an antipodal coordinate goes ``+`` both ways.)
    With ``neg`` (the negation ``v -> -v`` as a vertex map) a profile is that of the edge plus
    its mirror image.
    """
    vv = np.full(cand.size, v)
    P = np.concatenate([orbit_profiles(t, group, vv, cand), orbit_profiles(t, group, cand, vv)], axis=1)
    if neg is not None:
        P = P + edge_profiles(t, group, neg[v], neg[cand], None)
    return P
