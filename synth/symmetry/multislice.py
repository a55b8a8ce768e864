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

__all__ = ["multislice_group", "failed_slices"]


def multislice_group(t: Multislice, slice_group: Group, fixed=()) -> Group:
    """The slice rotation and ``slice_group``'s generators applied to every slice (module docstring).  ``fixed``:
    slices the rotation leaves in place (it cycles the others); with fewer than two others, no slice moves."""
    K, C = t.slices, t.chips_per_slice
    base = (np.arange(K, dtype=np.int64) * C)[:, None]
    gens = []
    for g in np.asarray(slice_group.generators, dtype=np.int64):
        gens.append(np.concatenate([(base + g[None, :]).ravel(), [t.dcn_switch]]))
    moving = [k for k in range(K) if k not in set(int(f) for f in fixed)]
    if len(moving) > 1:
        slices = np.arange(K)
        slices[moving] = np.roll(moving, -1)
        gens.append(np.concatenate([(slices[:, None] * C + np.arange(C)[None, :]).ravel(), [t.dcn_switch]]))
    gens, name = np.stack(gens or [np.arange(t.n_vertices)]), f"slice rotation x {slice_group.name}"
    spec = ({"kind": "multislice-shifts"} if not fixed else
            {"kind": "generators", "name": name, "generators": gens.tolist()})
    return Group.from_generators(t, gens, name, spec)


def failed_slices(t: Multislice, failures) -> list:
    """The slices whose chips or links (a chip's DCN link included) ``failures`` touches."""
    v = np.unique(np.r_[np.asarray(failures.nodes, dtype=np.int64), np.asarray(failures.links, dtype=np.int64).ravel()])
    v = v[v < t.dcn_switch]
    return sorted(set((v // t.chips_per_slice).tolist()))
