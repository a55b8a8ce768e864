"""The symmetry group of a multislice (:mod:`synth.topology.multislice`): slice rotation × the slice's group.

Two kinds of generators, each verified an automorphism (bandwidths kept) by
:meth:`~synth.symmetry.group.Group.from_generators`: the rotation of the slices, ``k -> k+1 (mod K)``,
and every generator of the slice's own group applied to all slices at once; both fix the DCN switch.
The group is the slice's group times ``Z_K``; on slices that are tori it is regular on the chips'
translations and keeps the point group of the slice.

Examples
--------
>>> from synth.topology.spec import build_topology
>>> from synth.symmetry.torus import torus_translations
>>> t = build_topology({"kind": "multislice", "slice": {"kind": "torus", "shape": [4, 4]}, "slices": 3,
...                     "ici_bandwidth": 50.0, "dcn_bandwidth": 3.125})
>>> multislice_group(t, torus_translations(t.slice_topology)).order
48
"""

from __future__ import annotations

import numpy as np

from synth.symmetry.group import Group
from synth.topology.multislice import Multislice

__all__ = ["multislice_group"]


def multislice_group(t: Multislice, slice_group: Group) -> Group:
    """The slice rotation and ``slice_group``'s generators applied to every slice (module docstring)."""
    K, C = t.slices, t.chips_per_slice
    base = (np.arange(K, dtype=np.int64) * C)[:, None]
    gens = []
    for g in np.asarray(slice_group.generators, dtype=np.int64):
        gens.append(np.concatenate([(base + g[None, :]).ravel(), [t.dcn_switch]]))
    gens.append(np.concatenate([(((np.arange(K) + 1) % K)[:, None] * C + np.arange(C)[None, :]).ravel(),
                                [t.dcn_switch]]))
    return Group.from_generators(t, np.stack(gens), f"slice rotation x {slice_group.name}",
                                 {"kind": "multislice-shifts"})
