"""Machine presets as data: the shapes each vendor sells, and how each side wraps or twists.

``--machine NAME:SHAPE`` builds the topology spec of a slice (a ``torus``, ``grid`` or ``twisted``
spec of :mod:`synth.topology.spec`); a shape the vendor does not offer is refused with one line
naming valid ones.  Sources (vendor documentation):

* ``tpu-v4``: https://cloud.google.com/tpu/docs/v4 ("3D mesh and 3D torus"): slices of one or more
  full 4x4x4 cubes (every side a multiple of 4) have wraparound links, smaller slices (2x2x1, 2x2x2,
  2x2x4, 2x4x4) are 3-D meshes; a slice with 2A=B=C or 2A=2B=C (4x4x8, 4x8x8, 12x12x24) can be
  configured as a *twisted* torus.  Confirmed.  The preset twists every shape that can be twisted (the
  user's choice on the vendor's side; ``--torus`` builds the untwisted one).  Which shapes: Google's xpk
  (``src/xpk/core/system_characteristics.py``, ``generate_tpu_topologies(max_cubes=64)``): sides that
  are multiples of 4, at most 64 cubes (4,096 chips), in any order.
* ``tpu-v5p``: https://cloud.google.com/tpu/docs/v5p (Configurations): "all 4x4x4 and larger slices
  have full 3D torus connectivity", smaller ones no wraparound; twisted offered on 4x4x8, 4x8x8,
  8x8x16, 8x16x16 (the v4 rule); the largest single slice is 16x16x24 (96 cubes, 6,144 chips; the
  pod's 8,960 chips are not one slice).  Confirmed for the listed shapes; the twist of other shapes
  that meet the rule (12x12x24) is the v4 rule, unconfirmed for v5p.  Shapes A <= B <= C as xpk lists them.
* ``tpu-v5e``: https://cloud.google.com/tpu/docs/v5e: 2-D slices 1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16,
  16x16 (confirmed), a 256-chip pod whose interconnect is a 2-D torus (confirmed).  That a sub-slice
  wraps only its sides of 16 (8x16 wraps the 16 side, 8x8 none) is **unconfirmed** (no vendor page found).
* ``tpu-v6e``: https://cloud.google.com/tpu/docs/v6e-intro: 256 chips per pod, "many similarities with
  v5e"; the v5e shapes and wrap rule are assumed, **unconfirmed**.
* ``tpu7x`` (Ironwood): https://docs.cloud.google.com/tpu/docs/tpu7x: 9,216-chip pods, "many
  similarities with TPU v5p"; shapes from xpk (``generate_tpu_topologies(max_cubes=144)``: sides that are
  multiples of 4, A <= B <= C, at most 144 cubes, e.g. 12x12x36, and the four sub-cube slices).  Wrap
  as v5p (a full cube wraps) is **unconfirmed**; no twist is documented, none is applied.
* ``trn2``: https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/trn2-arch.html:
  a Trn2 instance's 16 Trainium2 chips form a 4x4 2-D torus; a Trn2 UltraServer joins four instances,
  the chips with the same coordinates in a ring: 4x4x4 with every side wrapped.  Confirmed.
* ``tofu-d``: Tofu interconnect D (Fugaku): a 6-D mesh/torus (https://en.wikipedia.org/wiki/Torus_fusion;
  Ajima et al., "The Tofu Interconnect", IEEE Micro 32(1), 2012, and "Tofu: A 6D Mesh/Torus Interconnect
  for Exascale Computers", Computer 42(11), 2009, whose abstracts were read: the cubic fragments embed a
  3-D torus) of 158,976 nodes (https://www.r-ccs.riken.jp/en/fugaku/about/).  X×Y×Z×a×b×c with a and c of size 2
  and b a ring of 3, the full machine 24×23×24×2×3×2 (= 158,976): **unconfirmed** by a page found here
  (the product matches the node count).  A job gets X×Y×Z as a torus, or a mesh (``--no-wrap``); the
  2×3×2 unit is appended.  A side of 2 is one link (:mod:`synth.topology.lattice`).
* ``ipu-pod``: Graphcore IPU-POD64 datasheet ("2D-torus IPU-Link topology", confirmed by an earlier
  session), https://docs.graphcore.ai/projects/ipum-release-notes/en/latest/overview.html (an IPU-M2000
  holds 4 IPUs; an IPU-POD is interconnected IPU-M2000s; a pod holds a power of 2, at least 16): SHAPE is 4xM, the 4 IPUs of a
  machine by M machines, every side wrapped (IPU-POD16 = 4x4, IPU-POD64 = 4x16, up to 4x64).
* ``dgx-a100``, ``dgx-h100``, ``mi250``: GPU servers joined by NIC rails, ``NAME:N`` for ``N`` servers
  (a ``gpu`` spec, :mod:`synth.topology.gpu`, where each preset's sources are listed): NVIDIA's DGX
  A100 and DGX H100 datasheets, AMD's MI250 whitepaper, and ForestColl's fabric models
  (https://github.com/liangyuRain/ForestColl, ``topologies.py``).

``--slices K`` joins ``K`` copies of a TPU slice by the data-centre network (a ``multislice`` spec,
:mod:`synth.topology.multislice`), with the generation's ICI bandwidth per link and DCN bandwidth per chip
(:data:`TPU_BANDWIDTHS`, each with its source; ``--dcn-bandwidth`` overrides the DCN figure).

Examples
--------
>>> machine_spec("tpu-v4:4x4x8")
{'kind': 'twisted', 'shape': [4, 4, 8]}
>>> machine_spec("tpu-v5e:8x16")
{'kind': 'grid', 'shape': [8, 16], 'wrap': [False, True]}
>>> machine_spec("tofu-d:2x3x2")["shape"]
[2, 3, 2, 2, 3, 2]
>>> machine_spec("trn2:4x8")
Traceback (most recent call last):
...
synth.errors.TopologyError: trn2 does not offer 4x8; valid: 4x4 (instance), 4x4x4 (UltraServer)
>>> machine_spec("tpu-v5p:16x20x28")      # the v5p pod, not a slice: 6,144 chips at most
Traceback (most recent call last):
...
synth.errors.TopologyError: tpu-v5p does not offer 16x20x28; valid: 2x2x1, 2x2x2, 2x2x4, 2x4x4, or AxBxC with A <= B <= C multiples of 4 and at most 96 cubes, up to 16x16x24 (twisted when 2A=B=C or 2A=2B=C)
>>> machine_spec("tpu7x:12x12x36")
{'kind': 'torus', 'shape': [12, 12, 36]}
>>> machine_spec("dgx-a100:4")
{'kind': 'gpu', 'machine': 'dgx-a100', 'servers': 4}
>>> machine_spec("tpu-v5p:4x4x4", slices=2)    # doctest: +NORMALIZE_WHITESPACE
{'kind': 'multislice', 'slice': {'kind': 'torus', 'shape': [4, 4, 4]}, 'slices': 2, 'ici_bandwidth': 100.0,
 'dcn_bandwidth': 6.25}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from synth.errors import TopologyError
from synth.topology.gpu import MAX_SERVERS, PRESETS as GPU_PRESETS
from synth.topology.multislice import MAX_SLICES

__all__ = ["Machine", "MACHINES", "machine_spec", "machine_names", "TpuBandwidth", "TPU_BANDWIDTHS", "multislice_spec"]

_SHAPE = re.compile(r"^\d{1,4}(x\d{1,4}){0,5}$")


@dataclass(frozen=True)
class Machine:
    """A preset: ``rule(shape, mesh) -> spec or None`` (None: not offered), what is valid, the source."""

    name: str
    rule: Callable
    valid: str
    source: str


def _grid(shape, wrap):
    return {"kind": "grid", "shape": list(shape), "wrap": list(wrap)}


def _torus(shape):
    return {"kind": "torus", "shape": list(shape)}


#: the slices smaller than a cube (no wraparound), as the vendor lists them
_SUB_CUBE = ((2, 2, 1), (2, 2, 2), (2, 2, 4), (2, 4, 4))


def _tpu3d(max_cubes, twist=True, nondecreasing=False):
    """A 3-D TPU generation: the sub-cube slices, or sides that are multiples of 4 (up to 256) with at most
    ``max_cubes`` 4x4x4 cubes, as Google's xpk enumerates them (``generate_tpu_topologies``)."""
    def rule(s, mesh):
        if len(s) != 3:
            return None
        if tuple(s) in _SUB_CUBE:
            return _grid(s, (False,) * 3)
        if not all(x % 4 == 0 and x <= 256 for x in s) or (s[0] // 4) * (s[1] // 4) * (s[2] // 4) > max_cubes:
            return None
        if nondecreasing and list(s) != sorted(s):
            return None
        if mesh:
            return _grid(s, (False,) * 3)
        a, b, c = s
        if twist and ((2 * a == b == c) or (2 * a == 2 * b == c)):
            return {"kind": "twisted", "shape": list(s)}
        return _torus(s)
    return rule


def _tpu2d(s, mesh):
    if len(s) != 2 or s[0] > s[1] or tuple(s) not in {(1, 1), (2, 2), (2, 4), (4, 4), (4, 8), (8, 8), (8, 16),
                                                      (16, 16)}:
        return None
    return _grid(s, [x == 16 and not mesh for x in s])


def _trn2(s, mesh):
    if tuple(s) not in ((4, 4), (4, 4, 4)):
        return None
    return _grid(s, (False,) * len(s)) if mesh else _torus(s)


def _tofu(s, mesh):
    if len(s) != 3 or s[0] > 24 or s[1] > 23 or s[2] > 24 or min(s) < 1:
        return None
    return _grid(list(s) + [2, 3, 2], [not mesh] * 3 + [True] * 3)


def _ipu(s, mesh):
    if len(s) != 2 or s[0] != 4 or s[1] not in (4, 16, 32, 64):
        return None
    return _grid(s, (False, False)) if mesh else _torus(s)


def _gpu(name):
    """GPU servers (:mod:`synth.topology.gpu`): SHAPE is the number of servers."""
    def rule(s, mesh):
        if mesh:
            raise TopologyError(f"{name} has no wraparound to remove (`no_wrap` goes with the tori)")
        if len(s) != 1 or not 1 <= s[0] <= MAX_SERVERS:
            return None
        return {"kind": "gpu", "machine": name, "servers": s[0]}
    return rule


_V4 = "https://cloud.google.com/tpu/docs/v4 (3D mesh and 3D torus)"
_V5P = "https://cloud.google.com/tpu/docs/v5p (Configurations)"
_V5E = "https://cloud.google.com/tpu/docs/v5e (Configurations)"
_V6E = "https://cloud.google.com/tpu/docs/v6e-intro (as v5e; shapes and wrap unconfirmed)"
_TPU7X = ("https://docs.cloud.google.com/tpu/docs/tpu7x (9,216-chip pods); shapes: Google's xpk, "
          "src/xpk/core/system_characteristics.py (generate_tpu_topologies, max_cubes=144)")
_TRN2 = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/trn2-arch.html"
_TOFU = ("https://en.wikipedia.org/wiki/Torus_fusion (6-D mesh/torus), https://www.r-ccs.riken.jp/en/fugaku/about/ "
         "(158,976 nodes = 24x23x24x2x3x2)")
_IPU = ("Graphcore IPU-POD64 datasheet (2-D torus); "
        "https://docs.graphcore.ai/projects/ipum-release-notes/en/latest/overview.html (4 IPUs per IPU-M2000)")

MACHINES = {m.name: m for m in (
    Machine("tpu-v4", _tpu3d(64), "2x2x1, 2x2x2, 2x2x4, 2x4x4, or sides that are multiples of 4 with at most 64 "
            "4x4x4 cubes, e.g. 16x16x16 (twisted when 2A=B=C or 2A=2B=C)", _V4),
    Machine("tpu-v5p", _tpu3d(96, nondecreasing=True), "2x2x1, 2x2x2, 2x2x4, 2x4x4, or AxBxC with A <= B <= C "
            "multiples of 4 and at most 96 cubes, up to 16x16x24 (twisted when 2A=B=C or 2A=2B=C)", _V5P),
    Machine("tpu-v5e", _tpu2d, "1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16", _V5E),
    Machine("tpu-v6e", _tpu2d, "1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16", _V6E),
    Machine("tpu7x", _tpu3d(144, twist=False, nondecreasing=True), "2x2x1, 2x2x2, 2x2x4, 2x4x4, or AxBxC with "
            "A <= B <= C multiples of 4 and at most 144 cubes, e.g. 12x12x36", _TPU7X),
    Machine("trn2", _trn2, "4x4 (instance), 4x4x4 (UltraServer)", _TRN2),
    Machine("tofu-d", _tofu, "XxYxZ up to 24x23x24 (the 2x3x2 unit is appended)", _TOFU),
    Machine("ipu-pod", _ipu, "4x4 (IPU-POD16), 4x16 (IPU-POD64), 4x32, 4x64", _IPU),
) + tuple(Machine(p.name, _gpu(p.name), f"1 to {MAX_SERVERS} servers ({p.summary})", p.source)
          for p in GPU_PRESETS.values())}


@dataclass(frozen=True)
class TpuBandwidth:
    """A TPU generation's link figures, in GB/s per direction: ``ici`` per ICI link, ``dcn`` per chip."""

    ici: float
    dcn: float
    source: str


#: ICI per link and direction = the vendor's bidirectional ICI per chip / 2 / ICI ports; DCN per chip in GB/s
TPU_BANDWIDTHS = {
    "tpu-v4": TpuBandwidth(50.0, 6.25, "**unconfirmed**: https://cloud.google.com/tpu/docs/v4 gives no ICI or DCN "
                           "figure per chip; assumed half of v5p's ICI per link and v5p's DCN per chip"),
    "tpu-v5p": TpuBandwidth(100.0, 6.25, _V5P + ": bidirectional ICI 1200 GB/s per chip over 6 ports; DCN "
                            "50 Gb/s per chip"),
    "tpu-v5e": TpuBandwidth(50.0, 3.125, _V5E + ": bidirectional ICI 400 GB/s per chip over 4 ports; 2 x 100 Gb/s "
                            "NICs per 8-chip host = 25 Gb/s per chip"),
    "tpu-v6e": TpuBandwidth(100.0, 12.5, "https://cloud.google.com/tpu/docs/v6e: bidirectional ICI 800 GB/s per chip "
                            "over 4 ports; DCN 100 Gb/s per chip (https://docs.cloud.google.com/tpu/docs/tpu7x, "
                            "table of generations)"),
    "tpu7x": TpuBandwidth(100.0, 12.5, "https://docs.cloud.google.com/tpu/docs/tpu7x: bidirectional ICI 1200 GB/s "
                          "per chip over 6 ports (as v5p); DCN 100 Gb/s per chip"),
}


def _count(value, what, lo, hi) -> int:
    """A whole number from a flag's word or an int, within ``lo .. hi``."""
    text = str(value).strip()
    if isinstance(value, bool) or not re.fullmatch(r"\d{1,6}", text) or not lo <= int(text) <= hi:
        raise TopologyError(f"{what} must be a whole number from {lo} to {hi}, got {text[:20]!r}")
    return int(text)


def _gb_per_s(value, what) -> float:
    try:
        x = float(str(value).strip()) if not isinstance(value, bool) else float("nan")
    except ValueError:
        x = float("nan")
    if not (x > 0 and x < float("inf")):
        raise TopologyError(f"{what} must be a number of GB/s above 0, got {str(value)[:20]!r}")
    return x


def multislice_spec(name: str, inner: dict, slices, dcn_bandwidth=None) -> dict:
    """The ``multislice`` spec of ``slices`` copies of the TPU slice ``inner`` (:mod:`synth.topology.multislice`).

    ``dcn_bandwidth``: GB/s per chip (default: the generation's, :data:`TPU_BANDWIDTHS`).

    >>> multislice_spec("tpu-v5p", {"kind": "torus", "shape": [4, 4, 4]}, "2")["dcn_bandwidth"]
    6.25
    """
    if name not in TPU_BANDWIDTHS:
        raise TopologyError(f"`slices` goes with a TPU preset ({', '.join(sorted(TPU_BANDWIDTHS))}), not {name}")
    figures = TPU_BANDWIDTHS[name]
    dcn = figures.dcn if dcn_bandwidth is None else _gb_per_s(dcn_bandwidth, "`dcn_bandwidth`")
    return {"kind": "multislice", "slice": inner, "slices": _count(slices, "`slices`", 2, MAX_SLICES),
            "ici_bandwidth": figures.ici, "dcn_bandwidth": dcn}


def machine_names() -> list:
    """The preset names, sorted."""
    return sorted(MACHINES)


def machine_spec(text: str, mesh: bool = False, slices=None, dcn_bandwidth=None) -> dict:
    """The topology spec of ``NAME:SHAPE`` (``mesh``: the allocation has no wraparound, ``--no-wrap``).

    ``slices``: that many copies of a TPU slice joined by the data-centre network (:func:`multislice_spec`),
    at ``dcn_bandwidth`` GB/s per chip (default: the generation's).

    Raises
    ------
    TopologyError
        On an unknown name (naming the presets) or a shape the vendor does not offer (naming valid ones).
    """
    name, _, shape = str(text).strip().lower().partition(":")
    if name not in MACHINES:
        raise TopologyError(f"unknown machine {name[:40]!r}; valid: {', '.join(machine_names())} (as NAME:SHAPE)")
    m = MACHINES[name]
    if not _SHAPE.match(shape):
        raise TopologyError(f"{name} needs a shape, e.g. {name}:{m.valid.split(',')[0].split(' ')[0]}; valid: "
                            f"{m.valid}")
    sides = [int(x) for x in shape.split("x")]
    spec = m.rule(sides, mesh) if min(sides) >= 1 else None
    if spec is None:
        raise TopologyError(f"{name} does not offer {shape}; valid: {m.valid}")
    if slices is not None:
        return multislice_spec(name, spec, slices, dcn_bandwidth)
    if dcn_bandwidth is not None:
        raise TopologyError("`dcn_bandwidth` goes with `slices` (the network between slices)")
    return spec
