"""HyperX ``K_{n_1} x ... x K_{n_d}``: every node joined to all others of each coordinate line.

Numbering: vertex ids are row-major indices of the coordinates (as on tori);
link ``v*D + sum_{j<i}(n_j - 1) + (delta - 1)`` leaves ``v`` along dimension
``i`` to the node whose ``i``-th coordinate is ``v_i + delta (mod n_i)``,
``delta = 1..n_i-1``, ``D = sum_i (n_i - 1)``.  Diameter ``d``.

Its symmetry groups are in :mod:`synth.symmetry.hyperx`, its base trees in
:mod:`synth.schedule.hyperx`.

Examples
--------
>>> h = parse_hyperx("4x4")
>>> h.n_vertices, h.n_links, h.diameter
(16, 96, 2)
>>> h.dist(0, h.vertex((1, 3))).item()
2
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from synth.errors import TopologyError, check_instance
from synth.topology.base import MAX_VERTICES, Grid, Topology, check_size, is_int, spec_volume
from synth.topology.torus import shape_sides

__all__ = ["HyperX", "hyperx", "parse_hyperx", "hyperx_from_spec", "hyperx_spec_size"]


def parse_hyperx(text: str) -> "HyperX":
    """Parse ``'32x32'`` (or ``'8x8x8'``) into a :class:`HyperX`."""
    check_instance(text, "text", str, " (e.g. '8x8')")
    text = str(text).strip().lower()
    if not re.match(r"^\d+(x\d+)*$", text):
        raise TopologyError(f"hyperx shape {text[:40]!r} is not of the form NxN... (e.g. 32x32)")
    return hyperx(shape_sides(text, "hyperx"))


def hyperx_from_spec(spec) -> "HyperX":
    """A ``hyperx`` spec (``{"kind": "hyperx", "shape": [4, 4]}``)."""
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(is_int(s) for s in shape):
        raise TopologyError("a hyperx spec needs 'shape': a list of integers")
    return hyperx(shape)


def hyperx_spec_size(spec):
    """``(V, E, V)`` of a ``hyperx`` spec without building it; None if malformed.

    >>> hyperx_spec_size({"kind": "hyperx", "shape": [4, 4]})
    (16, 96, 16)
    """
    sized = spec_volume(spec)
    if sized is None:
        return None
    shape, V = sized
    return V, V * sum(s - 1 for s in shape), V


def hyperx(shape) -> "HyperX":
    """The HyperX with the given sides (each at least 2), within :data:`synth.topology.base.MAX_LINKS`."""
    if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) for s in shape):
        raise TopologyError("hyperx sides must be integers")
    shape = tuple(int(s) for s in shape)
    if not shape or any(s < 2 for s in shape):
        raise TopologyError(f"hyperx sides must be at least 2, got {'x'.join(map(str, shape))[:60]}")
    V = 1
    for s in shape:  # exact, and stops once certainly over the cap (a long shape has a huge product)
        V *= s
        if V > MAX_VERTICES:
            break
    D = sum(s - 1 for s in shape)
    check_size(f"hyperx {'x'.join(map(str, shape))[:60]}", V, V * D)
    coords = np.indices(shape).reshape(len(shape), V)
    dst = []
    for i, n in enumerate(shape):
        for delta in range(1, n):
            moved = coords.copy()
            moved[i] = (moved[i] + delta) % n
            dst.append(np.ravel_multi_index(tuple(moved), shape))
    dst = np.stack(dst, axis=1).ravel()
    src = np.repeat(np.arange(V), D)
    name = "x".join(map(str, shape))
    return HyperX(f"hyperx {name}", {"kind": "hyperx", "shape": list(shape)}, V, src, dst, None, shape)


@dataclass(frozen=True, eq=False)
class HyperX(Grid, Topology):
    """A HyperX network; see the module docstring for the numbering."""

    shape: tuple = ()

    @property
    def degree(self) -> int:
        return sum(s - 1 for s in self.shape)

    @property
    def diameter(self) -> int:
        return self.ndim

    def dist(self, u, v) -> np.ndarray:
        return (self.coords(u) != self.coords(v)).sum(axis=-1)

    def route(self, u: int, v: int) -> np.ndarray:
        """Dimension-order route: fix differing coordinates from dimension 0 up, one hop each."""
        cu, cv = self.coords(u).astype(np.int64), self.coords(v)
        links = []
        offsets = np.concatenate([[0], np.cumsum(self.sides - 1)])
        for i in range(self.ndim):
            if cu[i] != cv[i]:
                delta = int((cv[i] - cu[i]) % self.shape[i])
                links.append(int(self.vertex(cu)) * self.degree + int(offsets[i]) + delta - 1)
                cu[i] = cv[i]
        return np.asarray(links, dtype=np.int32)

    def shortest_route(self, u: int, v: int) -> np.ndarray:
        return self.route(u, v)
