"""The symmetry group of a GPU fabric (:mod:`synth.topology.gpu`): server rotation × the preset's local symmetries.

Two kinds of generators, each verified an automorphism (bandwidths kept) by
:meth:`~synth.symmetry.group.Group.from_generators`:

* the rotation of the servers, ``s -> s+1 (mod N)``, moving each server's GPUs, switches and NICs
  with it and fixing the rail switches (every server's NIC ``g`` is on the same rail);
* each of the preset's local symmetries (:attr:`~synth.topology.gpu.GpuFabric.local_symmetries`),
  applied to every server at once, NICs following their GPUs and the rail switches permuted with them.

On the DGX presets the local symmetry is the rotation of the 8 GPUs (with their rails), so the group is
``Z_8 x Z_N``, regular on the GPUs; on MI250 it is the four automorphisms of the xGMI lane matrix,
``Z_2^2 x Z_N``, free on the GCDs.  A damaged fabric lifts with the residual group of this one.

Examples
--------
>>> from synth.topology.gpu import gpu_fabric
>>> g = gpu_group(gpu_fabric("dgx-a100", 2))
>>> g.order, g.n_link_orbits
(16, 6)
>>> gpu_group(gpu_fabric("mi250", 2)).order
8
"""

from __future__ import annotations

import numpy as np

from synth.symmetry.group import Group
from synth.topology.gpu import GpuFabric

__all__ = ["gpu_group"]


def _vertex_map(t: GpuFabric, server_shift: int, gpu_perm, rail_perm) -> np.ndarray:
    """The vertex permutation: server ``s -> s + server_shift``, GPU ``g -> gpu_perm[g]``, rails by ``rail_perm``."""
    n, G, S = t.servers, t.gpus_per_server, t.switches_per_server
    perm = np.arange(t.n_vertices, dtype=np.int64)
    s, g = np.divmod(np.arange(n * G), G)
    image = t.gpu((s + server_shift) % n, np.asarray(gpu_perm)[g])
    perm[:n * G] = image
    if S:
        k = np.arange(n * S)
        perm[n * G + k] = n * G + ((k // S + server_shift) % n) * S + k % S
    if n > 1:
        perm[t.nic_of(np.arange(n * G))] = t.nic_of(image)
        perm[t.rail_switch(np.arange(t.rails))] = t.rail_switch(np.asarray(rail_perm))
    return perm


def gpu_group(t: GpuFabric) -> Group:
    """The server rotation and the preset's local symmetries (module docstring)."""
    G, R = t.gpus_per_server, max(t.rails, 1)
    gens = [_vertex_map(t, 0, g, r[:R] if t.rails else range(R)) for g, r in t.local_symmetries]
    if t.servers > 1:
        gens.append(_vertex_map(t, 1, range(G), range(R)))
    return Group.from_generators(t, np.stack(gens), f"server and GPU symmetries({t.name})", {"kind": "gpu-shifts"})
