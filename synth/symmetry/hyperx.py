"""The symmetry group of a HyperX that lifts its base trees.

On a square 2-D HyperX the paper's translations x the four rotations
``(x, y) -> (-y, x)``; otherwise translations x cyclic coordinate shifts (equal
sides) x negation.  Links of offset ``n/2`` (even ``n``) are fixed by a
half-turn about their midpoint, so that orbit is half-size.

Examples
--------
>>> from synth.topology.hyperx import parse_hyperx
>>> g = hyperx_group(parse_hyperx("4x4"))
>>> g.order, sorted(set(g.orbit_sizes.tolist()))
(64, [32, 64])
"""

from __future__ import annotations

import numpy as np

from synth.symmetry.group import Group
from synth.topology.hyperx import HyperX

__all__ = ["hyperx_group"]


def hyperx_group(h: HyperX) -> Group:
    """Translations x rotations (square 2-D) or x coordinate shifts and negation (see the module docstring)."""
    coords = h.coords(np.arange(h.n_vertices))
    gens = []
    for i in range(h.ndim):
        shift = np.zeros(h.ndim, dtype=np.int64)
        shift[i] = 1
        gens.append(h.vertex(coords + shift))
    if h.ndim == 2 and h.shape[0] == h.shape[1]:
        gens.append(h.vertex(np.stack([-coords[:, 1], coords[:, 0]], axis=1)))
        name, kind = "translations-rotations", "hyperx-rotations"
    else:
        gens.append(h.vertex(-coords))
        if h.ndim > 1 and len(set(h.shape)) == 1:
            gens.append(h.vertex(np.roll(coords, -1, axis=1)))
        name, kind = "translations-shifts-negation", "hyperx-shifts-negation"
    return Group.from_generators(h, np.stack(gens), f"{name}({h.name})", {"kind": kind})
