"""HyperX ``K_{n_1} x ... x K_{n_d}``: every node joined to all others of each coordinate line.

Numbering: vertex ids are row-major indices of the coordinates (as on tori);
link ``v*D + sum_{j<i}(n_j - 1) + (delta - 1)`` leaves ``v`` along dimension
``i`` to the node whose ``i``-th coordinate is ``v_i + delta (mod n_i)``,
``delta = 1..n_i-1``, ``D = sum_i (n_i - 1)``.  Diameter ``d``.

Groups: on a square 2-D HyperX the paper's translations x the four rotations
``(x, y) -> (-y, x)``; otherwise translations x cyclic coordinate shifts (equal
sides) x negation.  Links of offset ``n/2`` (even ``n``) are fixed by a
half-turn about their midpoint, so that orbit is half-size.

The base tree on 2-D is the paper's *windmill* (depth 2): the root joins the
cross (its row and column); a node in the quadrant where both centred
offsets have the same sign attaches to the cross node of its column (same
``x``), the others to the cross node of its row (same ``y``); the centred
offset of ``n/2`` counts as positive.

Examples
--------
>>> h = parse_hyperx("4x4")
>>> h.n_vertices, h.n_links, h.diameter
(16, 96, 2)
>>> g = hyperx_group(h)
>>> g.order, sorted(set(g.orbit_sizes.tolist()))
(64, [32, 64])
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from synth.errors import TopologyError
from synth.group import Group
from synth.schedule import BaseSchedule, tree_schedule
from synth.topology import MAX_VERTICES, Grid, Topology, check_size
from synth.torus import shape_sides

__all__ = ["HyperX", "hyperx", "parse_hyperx", "hyperx_group", "windmill_parents", "hyperx_tree"]


def parse_hyperx(text: str) -> "HyperX":
    """Parse ``'32x32'`` (or ``'8x8x8'``) into a :class:`HyperX`."""
    text = str(text).strip().lower()
    if not re.match(r"^\d+(x\d+)*$", text):
        raise TopologyError(f"hyperx shape {text[:40]!r} is not of the form NxN... (e.g. 32x32)")
    return hyperx(shape_sides(text, "hyperx"))


def hyperx(shape) -> "HyperX":
    """The HyperX with the given sides (each at least 2), within :data:`synth.topology.MAX_LINKS`."""
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


def hyperx_group(h: HyperX) -> Group:
    """Translations x rotations (square 2-D) or x coordinate shifts and negation (see module docstring)."""
    coords = h.coords(np.arange(h.n_vertices))
    gens = []
    for i in range(h.ndim):
        shift = np.zeros(h.ndim, dtype=np.int64)
        shift[i] = 1
        gens.append(h.vertex(coords + shift))
    if h.ndim == 2 and h.shape[0] == h.shape[1]:
        gens.append(h.vertex(np.stack([-coords[:, 1], coords[:, 0]], axis=1)))
        name, kind = "translations-rotations", "hyperx-rotations"
    else:
        gens.append(h.vertex(-coords))
        if h.ndim > 1 and len(set(h.shape)) == 1:
            gens.append(h.vertex(np.roll(coords, -1, axis=1)))
        name, kind = "translations-shifts-negation", "hyperx-shifts-negation"
    return Group.from_generators(h, np.stack(gens), f"{name}({h.name})", {"kind": kind})


def _centred(c, n):
    """Offsets in ``(-n/2, n/2]``: ``n/2`` itself counts as positive."""
    return np.where(2 * c <= n, c, c - n)


def windmill_parents(h: HyperX) -> np.ndarray:
    """Parents of the windmill tree rooted at vertex 0 on a 2-D HyperX."""
    if h.ndim != 2:
        raise TopologyError("the windmill tree is defined on 2-D HyperX")
    c = h.coords(np.arange(h.n_vertices))
    x, y = _centred(c[:, 0], h.shape[0]), _centred(c[:, 1], h.shape[1])
    same_sign = (x > 0) == (y > 0)
    column_node = h.vertex(np.stack([c[:, 0], np.zeros_like(c[:, 0])], axis=1))
    row_node = h.vertex(np.stack([np.zeros_like(c[:, 1]), c[:, 1]], axis=1))
    parent = np.where(same_sign, column_node, row_node)
    parent[(x == 0) | (y == 0)] = 0
    parent[0] = -1
    return parent.astype(np.int64)


def coordinate_tree_parents(h: HyperX) -> np.ndarray:
    """A BFS tree of depth ``d``: a node's parent clears its last nonzero coordinate."""
    c = h.coords(np.arange(h.n_vertices))
    nz = c != 0
    last = h.ndim - 1 - np.argmax(nz[:, ::-1], axis=1)
    cleared = c.copy()
    cleared[np.arange(h.n_vertices), last] = 0
    parent = h.vertex(cleared).astype(np.int64)
    parent[0] = -1
    return parent


def hyperx_tree(h: HyperX) -> BaseSchedule:
    """The windmill (2-D) or coordinate BFS tree (other dimensions) as a base schedule."""
    if h.ndim == 2:
        parent, label = windmill_parents(h), "windmill tree, root 0, depth 2"
    else:
        parent, label = coordinate_tree_parents(h), f"coordinate BFS tree, root 0, depth {h.ndim}"
    return tree_schedule(h, parent, 0, route=lambda u, w: h.link_ids([u], [w]), label=label)
