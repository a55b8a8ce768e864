"""The symmetry group of a spine-leaf network (docs/spec.md §6).

``h_{i,j} -> h_{i+a, j+b}``, ``L_j -> L_{j+b}``, ``S_i -> S_{i+a}``, order ``q*l``;
it acts freely on links with four orbits.

Examples
--------
>>> from synth.topology.spineleaf import spine_leaf
>>> g = spine_leaf_group(spine_leaf(2, 3, 2))
>>> g.order, g.n_link_orbits, g.is_free
(6, 4, True)
"""

from __future__ import annotations

import numpy as np

from synth.symmetry.group import Group
from synth.topology.spineleaf import SpineLeaf

__all__ = ["spine_leaf_group"]


def spine_leaf_group(s: SpineLeaf) -> Group:
    """The host-index and leaf shifts (order ``q*l``)."""
    q, l = s.spines, s.leaves
    i, j = np.arange(q * l) % q, np.arange(q * l) // q
    shift_i = np.concatenate([s.host((i + 1) % q, j), s.leaf(np.arange(l)), s.spine((np.arange(q) + 1) % q)])
    shift_j = np.concatenate([s.host(i, (j + 1) % l), s.leaf((np.arange(l) + 1) % l), s.spine(np.arange(q))])
    return Group.from_generators(s, np.stack([shift_i, shift_j]), f"host-leaf shifts({s.name})",
                                 {"kind": "spine-leaf-shifts"})
