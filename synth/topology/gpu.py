"""GPU servers joined by NIC rails: DGX A100, DGX H100 and AMD MI250 nodes, with their link bandwidths.

A :class:`GpuFabric` is ``N`` identical servers.  Inside a server the GPUs reach each other through
an NVSwitch (DGX) or direct xGMI links (MI250); across servers each GPU has its own NIC, and NIC
``g`` of every server joins rail switch ``g % rails``.  GPUs compute; NVSwitches, NICs and rail
switches only forward.  With one server there are no NICs and no rail switches (as in
ForestColl's models: a NIC whose rail switch reaches no other server adds no path worth having).

**Numbering** (``G`` GPUs and ``S`` local switches per server, ``R`` rail switches):

* GPU ``g`` of server ``s``: ``s*G + g`` (the compute vertices, ``0 .. N*G - 1``);
* local switch ``k`` of server ``s`` (the NVSwitch): ``N*G + s*S + k``;
* the NIC of GPU ``s*G + g``: ``N*G + N*S + s*G + g`` (only when ``N > 1``);
* rail switch ``r``: ``N*G + N*S + N*G + r`` (only when ``N > 1``).

**Links**, by class, each class listing its connections server by server, every connection as
two directed links (the one listed first, then its reverse at index + number of connections):
``0`` the links inside a server (GPU -> NVSwitch, or GPU -> GPU by xGMI), ``1`` GPU -> NIC,
``2`` NIC -> rail switch.  :attr:`GpuFabric.link_class` holds each link's class,
:attr:`GpuFabric.class_names` their names; bandwidths are in GB/s per direction
(:attr:`~synth.topology.base.Topology.link_bandwidth`).

**Presets** (:data:`PRESETS`; each documented with its sources in docs/machines.md):

* ``dgx-a100``: 8 A100 GPUs, each to one NVSwitch at 300 GB/s per direction (NVIDIA DGX A100
  datasheet: 600 GB/s bidirectional NVLink per GPU), each to its own 25 GB/s NIC (200 Gb/s
  ConnectX-6), NIC ``g`` to rail switch ``g % 2``: the model of ForestColl's ``topologies.py``
  (``a100_topology``: two IB switches for the odd and even NICs), link for link.
* ``dgx-h100``: 8 H100 GPUs, each to one NVSwitch at 450 GB/s per direction (NVIDIA DGX H100:
  900 GB/s bidirectional NVLink per GPU), 8 NICs of 400 Gb/s = 50 GB/s (ConnectX-7), one rail
  switch per NIC (rail-optimized, as NVIDIA's DGX SuperPOD reference architecture cables them).
* ``mi250``: 16 GCDs (8 MI250 packages of two dies) joined by xGMI links of 1, 2 or 4 lanes of
  50 GB/s each (ForestColl's ``MI250_ADJ_MAT``; AMD's MI250 / MI200 CDNA2 whitepaper gives 50 GB/s
  per Infinity Fabric link), one 16 GB/s NIC per GCD (ForestColl's ``MI250_IB_BW``), all NICs to one
  switch.  ForestColl joins the GCD to the switch directly; here a NIC vertex sits in between at the
  same bandwidth (so a failed NIC is a failed vertex, as on the DGX): every cut has the same capacity.

**Symmetry.**  :attr:`GpuFabric.local_symmetries` are permutations of a server's GPUs that, with
the matching permutation of the rail switches, are automorphisms of the fabric that keep every
bandwidth (the GPU rotation on the DGX, the four automorphisms of the xGMI lane matrix on MI250,
found by brute force and tested); with the rotation of the servers they generate the default
lifting group (:mod:`synth.symmetry.gpu`).

Examples
--------
>>> t = gpu_fabric("dgx-a100", 2)
>>> t.name, t.n_vertices, t.n_compute, t.n_links
('dgx-a100:2', 36, 16, 96)
>>> sorted(set(t.link_bandwidth.tolist()))
[25.0, 300.0]
>>> int(t.nic_of(9)), int(t.rail_of(9)), int(t.rail_switch(t.rail_of(9))), int(t.nvswitch(1))
(27, 1, 35, 17)
>>> gpu_fabric("mi250", 1).n_links, gpu_fabric("dgx-h100", 4).rails
(56, 8)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from synth.errors import TopologyError
from synth.topology.base import Topology, check_size, is_int

__all__ = ["GpuPreset", "PRESETS", "GpuFabric", "gpu_fabric", "gpu_from_spec", "gpu_spec_size", "MAX_SERVERS"]

#: more servers than this is a typo (8,192 GPUs on the DGX presets)
MAX_SERVERS = 1024


@dataclass(frozen=True)
class GpuPreset:
    """A server model: its GPUs, its local switches and links, its NIC and rails, its symmetries, its sources.

    ``local`` lists the undirected links inside one server as ``(a, b, GB/s)`` over the server's
    local ids (``0 .. gpus-1`` the GPUs, ``gpus ..`` its switches).  ``symmetries`` are pairs
    (permutation of the GPUs, permutation of the rails) that are automorphisms of every fabric
    of the preset (module docstring).
    """

    name: str
    gpus: int
    switches: int
    local: tuple
    local_class: str
    nic_bandwidth: float
    rails: int
    symmetries: tuple
    summary: str
    source: str


def _nvswitch(gpus, bandwidth):
    return tuple((g, gpus, float(bandwidth)) for g in range(gpus))


#: ForestColl's MI250_ADJ_MAT (topologies.py): xGMI lanes between the 16 GCDs of a node (symmetric)
MI250_LANES = (
    (0, 4, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0),
    (4, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0),
    (0, 0, 0, 4, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0),
    (0, 0, 4, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0),
    (2, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 1, 0, 0, 4, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 0, 1, 0, 1, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 0, 0, 2, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    (1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 2, 0, 0, 0),
    (0, 1, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0, 0),
    (0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 1, 0),
    (0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2),
    (0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 4, 1, 0),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 1, 1),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 4),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 4, 0),
)
#: GB/s per xGMI lane, per direction
XGMI_LANE_BANDWIDTH = 50.0


def _xgmi():
    return tuple((a, b, XGMI_LANE_BANDWIDTH * MI250_LANES[a][b]) for a in range(16) for b in range(a + 1, 16)
                 if MI250_LANES[a][b])


def _rotation(gpus, rails):
    """GPU g -> g+1 with rail r -> r+1: an automorphism when NIC g sits on rail g % rails."""
    return (tuple((g + 1) % gpus for g in range(gpus)), tuple((r + 1) % rails for r in range(rails)))


_FORESTCOLL = "ForestColl, https://github.com/liangyuRain/ForestColl (topologies.py)"
PRESETS = {p.name: p for p in (
    GpuPreset("dgx-a100", 8, 1, _nvswitch(8, 300.0), "nvswitch", 25.0, 2, (_rotation(8, 2),),
              "8 A100 on one NVSwitch at 300 GB/s, 8 NICs at 25 GB/s on 2 rail switches",
              "NVIDIA DGX A100 datasheet (NVLink 600 GB/s bidirectional per GPU, 8x 200 Gb/s ConnectX-6); "
              + _FORESTCOLL + ", a100_topology"),
    GpuPreset("dgx-h100", 8, 1, _nvswitch(8, 450.0), "nvswitch", 50.0, 8, (_rotation(8, 8),),
              "8 H100 on one NVSwitch at 450 GB/s, 8 NICs at 50 GB/s on 8 rail switches",
              "NVIDIA DGX H100 datasheet (NVLink 900 GB/s bidirectional per GPU, 8x 400 Gb/s ConnectX-7); "
              "NVIDIA HGX AI Factory (H100, H200, B200) reference architecture, GPUs on a rail-optimized compute "
              "fabric: https://docs.nvidia.com/reference-architectures/hgx-ai-factory-h100-h200-b200/"
              "network-logical-architecture.md"),
    GpuPreset("mi250", 16, 0, _xgmi(), "xgmi", 16.0, 1,
              ((tuple(g ^ 8 for g in range(16)), (0,)), (tuple(g ^ 3 for g in range(16)), (0,))),
              "16 MI250 GCDs joined by xGMI links of 1, 2 or 4 lanes at 50 GB/s, a 16 GB/s NIC per GCD on 1 switch",
              "AMD Instinct MI250 / CDNA2 whitepaper (50 GB/s per Infinity Fabric link); "
              + _FORESTCOLL + ", mi250_topology (MI250_ADJ_MAT, MI250_IB_BW = 16)"),
)}


def _counts(p: GpuPreset, n: int):
    """``(V, E)`` of ``n`` servers of preset ``p``."""
    nics = n * p.gpus if n > 1 else 0
    V = n * p.gpus + n * p.switches + nics + (p.rails if n > 1 else 0)
    return V, 2 * (n * len(p.local) + 2 * nics)


def _preset(name) -> GpuPreset:
    if not isinstance(name, str) or name not in PRESETS:
        raise TopologyError(f"unknown GPU machine {str(name)[:40]!r}; valid: {', '.join(sorted(PRESETS))}")
    return PRESETS[name]


def _servers(n) -> int:
    if not is_int(n) or not 1 <= n <= MAX_SERVERS:
        raise TopologyError(f"a GPU fabric has 1 to {MAX_SERVERS} servers, got {str(n)[:20]}")
    return int(n)


def gpu_fabric(machine: str, servers: int) -> "GpuFabric":
    """``servers`` servers of the preset ``machine`` (module docstring), with their bandwidths.

    Raises
    ------
    TopologyError
        On an unknown preset (naming the valid ones) or a server count outside ``1 .. MAX_SERVERS``.
    """
    p, n = _preset(machine), _servers(servers)
    V, E = _counts(p, n)
    name = f"{p.name}:{n}"
    check_size(name, V, E)
    G, S = p.gpus, p.switches
    local = np.asarray([(a, b) for a, b, _ in p.local], dtype=np.int64).reshape(-1, 2)
    bw_local = np.asarray([w for _, _, w in p.local], dtype=np.float64)
    # a local id below G is a GPU (s*G + id), else switch id-G of server s
    ends = np.where(local[None] < G, (np.arange(n)[:, None, None] * G + local[None]),
                    n * G + np.arange(n)[:, None, None] * S + local[None] - G).reshape(-1, 2)
    pairs, bws, classes = [ends], [np.tile(bw_local, n)], [np.zeros(n * len(p.local), dtype=np.int8)]
    if n > 1:
        gpu = np.arange(n * G)
        nic = n * G + n * S + gpu
        rail = n * G + n * S + n * G + (gpu % G) % p.rails
        pairs += [np.stack([gpu, nic], 1), np.stack([nic, rail], 1)]
        bws += [np.full(n * G, p.nic_bandwidth)] * 2
        classes += [np.full(n * G, 1, dtype=np.int8), np.full(n * G, 2, dtype=np.int8)]
    src, dst, bw, cls = [], [], [], []
    for pr, w, c in zip(pairs, bws, classes):
        src += [pr[:, 0], pr[:, 1]]
        dst += [pr[:, 1], pr[:, 0]]
        bw += [w, w]
        cls += [c, c]
    return GpuFabric(name, {"kind": "gpu", "machine": p.name, "servers": n}, V, np.concatenate(src),
                     np.concatenate(dst), np.arange(n * G), bandwidth=np.concatenate(bw), machine=p.name,
                     servers=n, gpus_per_server=G, switches_per_server=S, rails=p.rails if n > 1 else 0,
                     link_class=np.concatenate(cls), class_names=(p.local_class, "nic", "rail"))


_SPEC_KEYS = {"kind", "machine", "servers"}


def gpu_from_spec(spec) -> "GpuFabric":
    """A ``gpu`` spec: ``{"kind": "gpu", "machine": NAME, "servers": N}`` (an unknown key is an error)."""
    extra = sorted(set(spec) - _SPEC_KEYS)
    if extra:
        raise TopologyError(f"unknown key {extra[0][:40]!r} in a gpu topology spec; valid: "
                            f"{', '.join(sorted(_SPEC_KEYS))}")
    return gpu_fabric(spec.get("machine"), spec.get("servers"))


def gpu_spec_size(spec):
    """``(V, E, GPUs)`` of a ``gpu`` spec without building it; None if malformed.

    >>> gpu_spec_size({"kind": "gpu", "machine": "dgx-a100", "servers": 2})
    (36, 96, 16)
    """
    p, n = PRESETS.get(spec.get("machine")) if isinstance(spec.get("machine"), str) else None, spec.get("servers")
    if p is None or not is_int(n) or not 1 <= n <= MAX_SERVERS:
        return None
    return (*_counts(p, n), n * p.gpus)


@dataclass(frozen=True, eq=False)
class GpuFabric(Topology):
    """Servers of GPUs joined by NIC rails; the numbering and link classes are in the module docstring."""

    machine: str = ""
    servers: int = 0
    gpus_per_server: int = 0
    switches_per_server: int = 0
    rails: int = 0
    link_class: np.ndarray = field(default=None, repr=False)
    class_names: tuple = ()

    @property
    def preset(self) -> GpuPreset:
        """The server model (:data:`PRESETS`)."""
        return PRESETS[self.machine]

    @property
    def local_symmetries(self) -> tuple:
        """Pairs (GPU permutation within a server, rail permutation) that are automorphisms (module docstring)."""
        return self.preset.symmetries

    def gpu(self, server, index) -> np.ndarray:
        """Vertex id of GPU ``index`` of ``server``."""
        return np.asarray(server) * self.gpus_per_server + np.asarray(index)

    def server_of(self, gpu) -> np.ndarray:
        """The server of each GPU."""
        return np.asarray(gpu) // self.gpus_per_server

    def nvswitch(self, server) -> np.ndarray:
        """Vertex id of the server's NVSwitch; -1 on a fabric without one (MI250)."""
        base = self.servers * self.gpus_per_server + np.asarray(server) * self.switches_per_server
        return base if self.switches_per_server else np.full(np.shape(server), -1)

    def nic_of(self, gpu) -> np.ndarray:
        """Vertex id of the GPU's NIC; -1 with one server (no NICs)."""
        base = self.servers * (self.gpus_per_server + self.switches_per_server)
        return base + np.asarray(gpu) if self.servers > 1 else np.full(np.shape(gpu), -1)

    def rail_of(self, gpu) -> np.ndarray:
        """The rail (``0 .. rails-1``) of the GPU's NIC; -1 with one server."""
        r = (np.asarray(gpu) % self.gpus_per_server) % max(self.rails, 1)
        return r if self.servers > 1 else np.full(np.shape(gpu), -1)

    def rail_switch(self, rail) -> np.ndarray:
        """Vertex id of rail switch ``rail``."""
        return self.servers * (2 * self.gpus_per_server + self.switches_per_server) + np.asarray(rail)
