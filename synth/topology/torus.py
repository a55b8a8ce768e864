"""Tori ``Z_{n_1} x ... x Z_{n_d}`` with closed-form distances and routes.

Numbering (stable; certificates and explicit files depend on it):

* vertex ids are the row-major indices of the coordinates, last coordinate
  fastest (``numpy.ravel_multi_index`` order);
* the directed link ``v*2d + 2*i + s`` leaves ``v`` along dimension ``i``,
  towards ``+1`` when ``s == 0`` and ``-1`` when ``s == 1``.

Routes go in dimension order (dimension 0 first), each dimension the short way
round; on an even side an antipodal coordinate (difference exactly ``n/2``) is
crossed in the ``+1`` direction.

Examples
--------
>>> t = parse_torus("4x4")
>>> t.n_vertices, t.n_links, t.diameter
(16, 64, 4)
>>> t.dist(0, t.vertex((2, 3))).item()
3
>>> [int(t.link_dst[e]) for e in t.route(0, t.vertex((2, 3)))]
[4, 8, 11]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from synth.errors import TopologyError, check_instance, check_int
from synth.topology.base import MAX_VERTICES, Grid, Topology, check_size

__all__ = ["Torus", "torus", "parse_torus", "shape_sides"]

_SHAPE = re.compile(r"^\d+(x\d+)*$")


def parse_torus(text: str) -> "Torus":
    """Parse ``'16x16'``, ``'8x8x8'`` or ``'9'`` into a :class:`Torus`.

    Raises
    ------
    TopologyError
        On anything else, naming the problem.
    """
    check_instance(text, "text", str, " (e.g. '4x4')")
    text = str(text).strip().lower()
    if not _SHAPE.match(text):
        raise TopologyError(f"torus shape {text[:40]!r} is not of the form NxNx... (e.g. 16x16) with positive "
                            "integer sides")
    return torus(shape_sides(text, "torus"))


def shape_sides(text: str, kind: str) -> tuple:
    """The sides of ``'NxNx...'`` as ints, refusing more than 32 sides or sides of more than 9 digits.

    The shape is bounded before ``int`` sees it, so a huge string costs nothing.
    """
    parts = text.split("x")
    if len(parts) > 32 or any(len(p) > 9 for p in parts):
        raise TopologyError(f"{kind} shape {text[:40]!r}{'...' if len(text) > 40 else ''} is too large "
                            f"(at most {MAX_VERTICES} vertices)")
    return tuple(int(s) for s in parts)


def torus(shape) -> "Torus":
    """The torus with the given side lengths (each at least 3), within :data:`synth.topology.base.MAX_VERTICES`."""
    sides = check_instance(shape, "shape", (list, tuple, np.ndarray), " of side lengths (e.g. [4, 4])")
    shape = [check_int(s, "shape") for s in sides]
    if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) for s in shape):
        raise TopologyError("torus sides must be integers")
    shape = tuple(int(s) for s in shape)
    if not shape:
        raise TopologyError("a torus needs at least one dimension")
    if any(s < 3 for s in shape):
        raise TopologyError(f"torus sides must be at least 3, got {'x'.join(map(str, shape))}")
    d = len(shape)
    V = 1
    for s in shape:  # exact (Python ints), and stops early: the product of a long shape can be huge
        V *= s
        if V > MAX_VERTICES:
            break
    check_size(f"torus {'x'.join(map(str, shape))}", V, V * 2 * d)
    coords = np.indices(shape, dtype=np.int32).reshape(d, V)
    src = np.repeat(np.arange(V, dtype=np.int32), 2 * d)
    dst = np.empty((V, 2 * d), dtype=np.int32)
    n = np.asarray(shape, dtype=np.int32)[:, None]
    for i in range(d):
        for s, step in enumerate((1, -1)):
            moved = coords.copy()
            moved[i] = (moved[i] + step) % n[i]
            dst[:, 2 * i + s] = np.ravel_multi_index(tuple(moved), shape)
    name = "x".join(map(str, shape))
    return Torus(f"torus {name}", {"kind": "torus", "shape": list(shape)}, V, src, dst.ravel(), None, shape)


@dataclass(frozen=True, eq=False)
class Torus(Grid, Topology):
    """A torus; see the module docstring for the numbering."""

    shape: tuple = ()

    @property
    def degree(self) -> int:
        """Out-links per vertex, ``D = 2d``."""
        return 2 * self.ndim

    @property
    def is_equal_sided(self) -> bool:
        return len(set(self.shape)) == 1

    @cached_property
    def link_dim(self) -> np.ndarray:
        """Dimension of each link."""
        return np.tile(np.repeat(np.arange(self.ndim, dtype=np.int32), 2), self.n_vertices)

    @cached_property
    def link_sign(self) -> np.ndarray:
        """Direction of each link, ``+1`` or ``-1``."""
        return np.tile(np.array([1, -1] * self.ndim, dtype=np.int8), self.n_vertices)

    @property
    def diameter(self) -> int:
        """``H = sum_i floor(n_i / 2)``."""
        return int(sum(s // 2 for s in self.shape))

    def dist(self, u, v) -> np.ndarray:
        """Closed-form hop distance, vectorized over ``u`` and ``v``."""
        delta = np.abs(self.coords(u) - self.coords(v))
        return np.minimum(delta, self.sides - delta).sum(axis=-1)

    def eccentricity(self, v=None) -> np.ndarray:
        """Every vertex of a torus has eccentricity ``H``."""
        shape = np.shape(v) if v is not None else (self.n_vertices,)
        return np.full(shape, self.diameter, dtype=np.int64)

    def pair_eccentricity(self, dim: int) -> int:
        """``ecc({a, b})`` for a link along dimension ``dim``: an even side saves one hop."""
        n = self.shape[dim]
        return self.diameter - (1 if n % 2 == 0 else 0)

    def distance_distribution(self) -> np.ndarray:
        """``counts[h]`` = number of vertices at distance ``h`` from any vertex (closed form)."""
        out = np.array([1], dtype=np.int64)
        for n in self.shape:
            ring = np.bincount(np.minimum(np.arange(n), n - np.arange(n)))
            out = np.convolve(out, ring)
        return out

    def steps(self, u, v) -> np.ndarray:
        """Signed steps per dimension of the dimension-order route ``u -> v``, shape ``(..., d)``.

        Each coordinate goes the short way; a difference of exactly ``n/2`` goes ``+``.
        """
        delta = (self.coords(v) - self.coords(u)) % self.sides
        return np.where(2 * delta <= self.sides, delta, delta - self.sides)

    def route(self, u: int, v: int) -> np.ndarray:
        """The dimension-order shortest route ``u -> v`` as link ids."""
        steps = self.steps(u, v)
        links, x = [], np.array(self.coords(u), dtype=np.int64)
        for i, k in enumerate(steps.tolist()):
            s = 0 if k > 0 else 1
            for _ in range(abs(k)):
                links.append(int(self.vertex(x)) * self.degree + 2 * i + s)
                x[i] += 1 if k > 0 else -1
        return np.asarray(links, dtype=np.int32)

    def shortest_route(self, u: int, v: int) -> np.ndarray:
        return self.route(u, v)

    def first_hop(self, u, v) -> np.ndarray:
        """Vectorized first link of ``route(u, v)`` (``-1`` where ``u == v``)."""
        steps = self.steps(u, v)
        nz = steps != 0
        dim = np.argmax(nz, axis=-1)
        k = np.take_along_axis(steps, dim[..., None], axis=-1)[..., 0]
        link = np.asarray(u, dtype=np.int64) * self.degree + 2 * dim + (k < 0)
        return np.where(nz.any(axis=-1), link, -1)
