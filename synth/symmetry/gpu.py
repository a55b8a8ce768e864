"""The symmetry group of a GPU fabric (:mod:`synth.topology.gpu`): server rotation × the preset's local symmetries.

Two kinds of generators, each verified an automorphism (bandwidths kept) by
:meth:`~synth.symmetry.group.Group.from_generators`:

* the rotation of the servers, ``s -> s+1 (mod N)``, moving each server's GPUs, switches and NICs
  with it and fixing the rail switches (every server's NIC ``g`` is on the same rail);
* each of the preset's local symmetries (:attr:`~synth.topology.gpu.GpuFabric.local_symmetries`),
  applied to every server at once, NICs following their GPUs and the rail switches permuted with them.

On the DGX presets the local symmetry is the rotation of the 8 GPUs (with their rails), so the group is
``Z_8 x Z_N``, regular on the GPUs; on MI250 it is the four automorphisms of the xGMI lane matrix,
``Z_2^2 x Z_N``, free on the GCDs.  A damaged fabric lifts with the residual group of this one or, where
larger, of the one whose rotation cycles only the servers the failures leave whole (``fixed``:
:func:`failed_servers`), which a failure inside one server does not stop.

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

__all__ = ["gpu_group", "failed_servers"]


def _vertex_map(t: GpuFabric, servers, gpu_perm, rail_perm) -> np.ndarray:
    """The vertex permutation: server ``s -> servers[s]``, GPU ``g -> gpu_perm[g]``, rails by ``rail_perm``."""
    n, G, S = t.servers, t.gpus_per_server, t.switches_per_server
    servers = np.asarray(servers, dtype=np.int64)
    perm = np.arange(t.n_vertices, dtype=np.int64)
    s, g = np.divmod(np.arange(n * G), G)
    image = t.gpu(servers[s], np.asarray(gpu_perm)[g])
    perm[:n * G] = image
    if S:
        k = np.arange(n * S)
        perm[n * G + k] = n * G + servers[k // S] * S + k % S
    if n > 1:
        perm[t.nic_of(np.arange(n * G))] = t.nic_of(image)
        perm[t.rail_switch(np.arange(t.rails))] = t.rail_switch(np.asarray(rail_perm))
    return perm


def gpu_group(t: GpuFabric, fixed=()) -> Group:
    """The server rotation and the preset's local symmetries (module docstring).  ``fixed``: servers the
    rotation leaves in place (it cycles the others); with fewer than two others, no server moves."""
    G, R = t.gpus_per_server, max(t.rails, 1)
    gens = [_vertex_map(t, range(t.servers), g, r[:R] if t.rails else range(R)) for g, r in t.local_symmetries]
    moving = [s for s in range(t.servers) if s not in set(int(f) for f in fixed)]
    if len(moving) > 1:
        servers = np.arange(t.servers)
        servers[moving] = np.roll(moving, -1)
        gens.append(_vertex_map(t, servers, range(G), range(R)))
    gens, name = np.stack(gens or [np.arange(t.n_vertices)]), f"server and GPU symmetries({t.name})"
    spec = {"kind": "gpu-shifts"} if not fixed else {"kind": "generators", "name": name, "generators": gens.tolist()}
    return Group.from_generators(t, gens, name, spec)


def failed_servers(t: GpuFabric, failures) -> list:
    """The servers whose GPUs, switches, NICs or links (a NIC's link to its rail switch included) ``failures``
    touches; a failed rail switch touches none."""
    n, G, S = t.servers, t.gpus_per_server, t.switches_per_server
    v = np.unique(np.r_[np.asarray(failures.nodes, dtype=np.int64),
                        np.asarray(failures.links, dtype=np.int64).ravel()])
    server = np.select([v < n * G, v < n * (G + S), v < n * (2 * G + S)],
                       [v // G, (v - n * G) // max(S, 1), (v - n * (G + S)) // G], -1)
    return sorted(set(server[server >= 0].tolist()))
