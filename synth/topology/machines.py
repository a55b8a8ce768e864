"""Machine presets as data: the shapes each vendor sells, and how each side wraps or twists.

``--machine NAME:SHAPE`` builds the topology spec of a slice (a ``torus``, ``grid`` or ``twisted``
spec of :mod:`synth.topology.spec`); a shape the vendor does not offer is refused with one line
naming valid ones.  Sources (vendor documentation, as read for issue 40):

* ``tpu-v4``: Cloud TPU v4 docs ("3D mesh and 3D torus"): a slice AxBxC can be a 3D torus when
  each side is a multiple of 4, and a *twisted* torus when 2A=B=C or 2A=2B=C (4x4x8, 4x8x8,
  12x12x24); smaller slices (2x2x1, 2x2x2, 2x2x4, 2x4x4) have no wraparound; pod 4096 chips
  (16x16x16).  The preset twists every shape that can be twisted.
* ``tpu-v5p``: Cloud TPU v5p docs: the same rules; largest slice 16x16x24, pod 16x20x28.
* ``tpu-v5e``, ``tpu-v6e``: Cloud TPU v5e / v6e docs: 2D, pods of 16x16; a slice wraps only its
  sides of 16 (8x16 wraps the 16 side, 8x8 none).  Slices 1x1 .. 16x16.
* ``tpu7x`` (Ironwood): Cloud TPU7x docs: 3D slices built of 4x4x4 cubes; sides that are multiples
  of 4 wrap, smaller slices are meshes (as v4/v5p; no twist is documented, none applied).
* ``trn2``: AWS Trainium2 docs: a 4x4 2D torus per Trn2 instance (16 chips), 4x4x4 per
  Trn2 UltraServer (64 chips).
* ``tofu-d``: Fujitsu Tofu interconnect D (Fugaku): 6D X×Y×Z×a×b×c, a and c of size 2, b a ring
  of 3; a job gets X×Y×Z (at most 24×23×24) as a torus, or a mesh (``--no-wrap``); the 2×3×2 unit
  is appended.  A side of 2 is one link (:mod:`synth.topology.lattice`).
* ``ipu-pod``: Graphcore IPU-POD64 datasheet ("2D-torus IPU-Link topology"), IPU-POD docs (an
  IPU-M2000 holds 4 IPUs; a pod holds a power of 2, at least 16): SHAPE is 4xM, the 4 IPUs of a
  machine by M machines, every side wrapped (IPU-POD16 = 4x4, IPU-POD64 = 4x16, up to 4x64).

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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from synth.errors import TopologyError

__all__ = ["Machine", "MACHINES", "machine_spec", "machine_names"]

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


def _tpu3d(max_chips, max_sides, twist=True):
    def rule(s, mesh):
        if len(s) != 3 or s[0] * s[1] * s[2] > max_chips or any(a > b for a, b in zip(sorted(s), max_sides)):
            return None
        if tuple(s) in ((2, 2, 1), (2, 2, 2), (2, 2, 4), (2, 4, 4), (1, 1, 1), (1, 2, 2), (2, 1, 2), (1, 2, 1)):
            return _grid(s, (False,) * 3)
        if all(x % 4 == 0 for x in s):
            if mesh:
                return _grid(s, (False,) * 3)
            a, b, c = s
            if twist and ((2 * a == b == c) or (2 * a == 2 * b == c)):
                return {"kind": "twisted", "shape": list(s)}
            return _torus(s)
        return None
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


MACHINES = {m.name: m for m in (
    Machine("tpu-v4", _tpu3d(4096, (16, 16, 16)), "2x2x1, 2x2x2, 2x2x4, 2x4x4, or sides that are multiples of 4 "
            "within 16x16x16 (twisted when 2A=B=C or 2A=2B=C)", "Cloud TPU v4 documentation"),
    Machine("tpu-v5p", _tpu3d(8960, (16, 20, 28)), "2x2x1, 2x2x2, 2x2x4, 2x4x4, or sides that are multiples of 4 "
            "within 16x20x28 (twisted when 2A=B=C or 2A=2B=C)", "Cloud TPU v5p documentation"),
    Machine("tpu-v5e", _tpu2d, "1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16", "Cloud TPU v5e documentation"),
    Machine("tpu-v6e", _tpu2d, "1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16", "Cloud TPU v6e documentation"),
    Machine("tpu7x", _tpu3d(9216, (16, 24, 24), twist=False), "2x2x1, 2x2x2, 2x2x4, 2x4x4, or sides that are "
            "multiples of 4 within 16x24x24", "Cloud TPU7x (Ironwood) documentation"),
    Machine("trn2", _trn2, "4x4 (instance), 4x4x4 (UltraServer)", "AWS Trainium2 documentation"),
    Machine("tofu-d", _tofu, "XxYxZ up to 24x23x24 (the 2x3x2 unit is appended)", "Fujitsu Tofu interconnect D"),
    Machine("ipu-pod", _ipu, "4x4 (IPU-POD16), 4x16 (IPU-POD64), 4x32, 4x64", "Graphcore IPU-POD64 datasheet"),
)}


def machine_names() -> list:
    """The preset names, sorted."""
    return sorted(MACHINES)


def machine_spec(text: str, mesh: bool = False) -> dict:
    """The topology spec of ``NAME:SHAPE`` (``mesh``: the allocation has no wraparound, ``--no-wrap``).

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
    return spec
