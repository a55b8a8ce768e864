"""Lattice tori ``Z^d / L`` (twisted tori, plain tori) and grids whose sides each wrap or not.

A *lattice torus* is the Cayley graph of the group ``Z^d / L`` with the steps ``±e_i``: the wrap
lattice ``L`` (rank ``d``) says which coordinate vectors count as the same node.  A plain torus is
the diagonal case ``L = n_1 Z x ... x n_d Z``; the twisted tori of TPU v4/v5p slices are not
diagonal (k×k×2k: ``L`` spanned by ``(k,0,k), (0,k,k), (0,0,2k)``).  A side that does not wrap
(a mesh side) is a path instead of a ring: it needs ``L`` to split off that coordinate.

``L`` is given by an integer basis (its rows) and normalized to the Hermite normal form
(:func:`hermite_normal_form`): upper triangular, positive diagonal, every entry above the
diagonal in ``[0, diagonal of its column)``.  Two bases of the same lattice give the same form.

Numbering (stable; certificates and explicit files depend on it):

* the HNF's diagonal ``(h_1, ..., h_d)`` is the ``shape``: the box ``0 <= x_i < h_i`` holds
  exactly one representative of every class of ``Z^d / L`` (reduce a vector by subtracting
  row 1 to bring ``x_1`` into ``[0, h_1)``, then row 2, ...); vertex ids are the row-major
  indices of these representatives, last coordinate fastest (``numpy.ravel_multi_index`` order);
* the *steps* are ``+e_1, -e_1, +e_2, -e_2, ...`` taken as group elements; a step equal to
  an earlier one (a wrapped side of 2: ``+e_i = -e_i``) or to ``0`` (a side of 1) is dropped,
  so the graph is simple.  Out-links are numbered vertex by vertex, and within a vertex in step
  order; with every side wrapped link ``v*D + j`` leaves ``v`` by step ``j`` (``D`` steps), as on
  :class:`synth.topology.torus.Torus` when no step is dropped.  On an unwrapped side, the steps
  that would leave the box are absent.

**A wrapped side of 2 is one link**, not two parallel ones: ``x + 1`` and ``x - 1`` are the same
neighbour, and a link joins two nodes once.  So a side of 2 gives the same graph wrapped or not
(a ring of 2 is a path of 2).  A side of 1 has no links.

Distances: the wrapped part is vertex-transitive, so one BFS from 0 gives every distance
(``dist(u, v) = D0[v - u]``); unwrapped sides add ``|x_i - y_i|``.

Examples
--------
>>> t = twisted((4, 4, 8))
>>> t.n_vertices, t.n_links, t.diameter, t.basis
(128, 768, 6, ((4, 0, 4), (0, 4, 4), (0, 0, 8)))
>>> round(float(t.mean_distance()), 2), torus_like((4, 4, 8)).diameter
(3.46, 8)
>>> m = grid((3, 2), (False, True))  # the wrapped side of 2 has one link per node
>>> m.n_links, m.diameter, m.name
(14, 3, 'mesh 3x2')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from synth.errors import TopologyError
from synth.topology.base import Grid, Topology, check_size

__all__ = ["LatticeTorus", "hermite_normal_form", "lattice_torus", "lattice_size", "twisted", "twisted_basis", "grid",
           "torus_like", "parse_lattice", "parse_wrap", "MAX_DIMS", "MAX_ENTRY"]

MAX_DIMS = 8          # a basis has at most 8 rows (Tofu-D is 6-D)
MAX_ENTRY = 10 ** 9   # basis entries: at most 9 digits
_ROW = re.compile(r"^-?\d{1,10}(,-?\d{1,10})*$")


def hermite_normal_form(rows) -> tuple:
    """The row Hermite normal form of a square nonsingular integer matrix, exactly (Python ints).

    Upper triangular with a positive diagonal, each entry above the diagonal in ``[0, pivot)``
    of its column; it spans the same lattice as ``rows`` and is the same for every basis of it.

    Raises
    ------
    TopologyError
        If the rows are not a square integer matrix of at most :data:`MAX_DIMS` rows with entries
        of at most 9 digits, or are linearly dependent (determinant 0).

    Examples
    --------
    >>> hermite_normal_form([[0, 4, 4], [4, 0, 4], [4, 4, 0]])
    ((4, 0, 4), (0, 4, 4), (0, 0, 8))
    >>> hermite_normal_form([[1, 2], [2, 4]])
    Traceback (most recent call last):
    ...
    synth.errors.TopologyError: the lattice basis is degenerate (determinant 0): its rows must be linearly independent
    """
    d = len(rows) if isinstance(rows, (list, tuple)) else 0
    if not 1 <= d <= MAX_DIMS or not all(isinstance(r, (list, tuple)) and len(r) == d for r in rows):
        raise TopologyError(f"a lattice basis must be a square integer matrix of 1 to {MAX_DIMS} rows")
    if not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) and abs(int(x)) < MAX_ENTRY
               for r in rows for x in r):
        raise TopologyError(f"lattice basis entries must be integers of at most 9 digits (below {MAX_ENTRY})")
    m = [[int(x) for x in r] for r in rows]
    for j in range(d):  # Euclid on column j among rows j.., until one non-zero remains
        while True:
            live = [i for i in range(j, d) if m[i][j] != 0]
            if not live:
                raise TopologyError("the lattice basis is degenerate (determinant 0): its rows must be linearly "
                                    "independent")
            p = min(live, key=lambda i: (abs(m[i][j]), i))
            m[j], m[p] = m[p], m[j]
            if len(live) == 1:
                break
            for i in range(j + 1, d):
                q = m[i][j] // m[j][j]
                if q:
                    m[i] = [a - q * b for a, b in zip(m[i], m[j])]
        if m[j][j] < 0:
            m[j] = [-a for a in m[j]]
    for j in range(1, d):  # reduce above the diagonal, column by column
        for i in range(j):
            q = m[i][j] // m[j][j]
            if q:
                m[i] = [a - q * b for a, b in zip(m[i], m[j])]
    return tuple(tuple(r) for r in m)


def twisted_basis(shape) -> tuple:
    """The wrap lattice of a twisted torus (TPU v4/v5p), by shape: k×2k, k×k×2k or k×2k×2k.

    Raises
    ------
    TopologyError
        For any other shape, naming the three kinds.

    Examples
    --------
    >>> twisted_basis((4, 8)), twisted_basis((2, 4, 4))
    (((4, 4), (0, 8)), ((2, 2, 2), (0, 4, 0), (0, 0, 4)))
    """
    s = tuple(int(x) for x in shape)
    if len(s) == 2 and s[0] >= 1 and s[1] == 2 * s[0]:
        k = s[0]
        return ((k, k), (0, 2 * k))
    if len(s) == 3 and s[0] >= 1 and s[0] == s[1] and s[2] == 2 * s[0]:
        k = s[0]
        return ((k, 0, k), (0, k, k), (0, 0, 2 * k))
    if len(s) == 3 and s[0] >= 1 and s[1] == s[2] == 2 * s[0]:
        k = s[0]
        return ((k, k, k), (0, 2 * k, 0), (0, 0, 2 * k))
    raise TopologyError(f"no twisted torus of shape {'x'.join(map(str, s))[:40]}: twisted shapes are kx2k, kxkx2k "
                        "and kx2kx2k (e.g. 4x8, 4x4x8, 4x8x8)")


def _volume(diag) -> int:
    V = 1
    for h in diag:  # exact (Python ints): at most 32 sides of 9 digits
        V *= h
    return V


def lattice_torus(basis, wrap=None, name=None, spec=None) -> "LatticeTorus":
    """The lattice torus of the wrap lattice spanned by the rows of ``basis`` (module docstring).

    ``wrap[i]`` False makes side ``i`` a path; the lattice must then split off coordinate ``i``
    (its HNF has ``h_i e_i`` as row ``i`` and zeros elsewhere in column ``i``).

    Raises
    ------
    TopologyError
        On a degenerate or malformed basis, an unwrapped side the lattice does not split off,
        a graph of one node, or more than :data:`synth.topology.base.MAX_VERTICES` nodes.

    Examples
    --------
    >>> t = lattice_torus([[4, 4], [0, 8]])
    >>> t.shape, t.n_links, t.diameter, t.name
    ((4, 8), 128, 4, 'lattice torus 4,4;0,8')
    """
    hnf = hermite_normal_form(basis)
    d = len(hnf)
    shape = tuple(hnf[i][i] for i in range(d))
    wrap = (True,) * d if wrap is None else tuple(bool(w) for w in wrap)
    if len(wrap) != d:
        raise TopologyError(f"wrap needs one flag per side ({d}), got {len(wrap)}")
    text = ";".join(",".join(map(str, r)) for r in hnf)
    name = name or f"lattice torus {text}"
    split = [not any(hnf[k][i] or hnf[i][k] for k in range(d) if k != i) for i in range(d)]
    for i in range(d):
        if not wrap[i] and not split[i]:
            raise TopologyError(f"side {i} of {name} cannot be unwrapped: the lattice does not split off "
                                f"coordinate {i}")
    wrap = tuple(w or shape[i] <= 2 for i, w in enumerate(wrap))  # a path of 2 or 1 is its ring
    V = _volume(shape)
    check_size(name, V, V * 2 * d)
    if V < 2:
        raise TopologyError(f"{name} has one node: no allreduce to schedule")
    spec = spec or {"kind": "lattice", "basis": [list(r) for r in hnf],
                    **({} if all(wrap) else {"wrap": list(wrap)})}
    return _build(name, spec, hnf, shape, wrap)


def twisted(shape) -> "LatticeTorus":
    """The twisted torus of a TPU v4/v5p shape (:func:`twisted_basis`), named ``twisted torus SHAPE``."""
    text = "x".join(str(int(s)) for s in shape)
    return lattice_torus(twisted_basis(shape), name=f"twisted torus {text}",
                         spec={"kind": "twisted", "shape": [int(s) for s in shape]})


def grid(shape, wrap) -> "LatticeTorus":
    """A grid whose side ``i`` wraps when ``wrap[i]``; a mesh when none does (module docstring on sides of 2).

    Examples
    --------
    >>> grid((8, 16), (False, True)).name, grid((4, 4), (False, False)).diameter
    ('grid 8x16 wrap 1', 6)
    """
    shape = tuple(int(s) for s in shape)
    if not shape or any(s < 1 for s in shape):
        raise TopologyError(f"grid sides must be positive integers, got {'x'.join(map(str, shape))[:40] or 'none'}")
    d = len(shape)
    wrap = tuple(bool(w) for w in wrap)
    if len(wrap) != d:
        raise TopologyError(f"wrap needs one flag per side ({d}), got {len(wrap)}")
    text = "x".join(map(str, shape))
    wrapped = [str(i) for i in range(d) if wrap[i] and shape[i] > 2]   # a ring of 2 or 1 is its path
    long = [i for i in range(d) if shape[i] > 2]
    name = f"mesh {text}" if not wrapped else (f"torus {text}" if len(wrapped) == len(long)
                                              else f"grid {text} wrap {','.join(wrapped)}")
    basis = [[s if i == j else 0 for j in range(d)] for i, s in enumerate(shape)]
    wrap = tuple(w or s <= 2 for w, s in zip(wrap, shape))
    return lattice_torus(basis, wrap, name=name, spec={"kind": "grid", "shape": list(shape), "wrap": list(wrap)})


def torus_like(shape) -> "LatticeTorus":
    """The plain torus as a lattice torus (diagonal lattice, every side wrapped); for comparisons."""
    return grid(shape, (True,) * len(shape))


def parse_lattice(text: str) -> "LatticeTorus":
    """Parse ``'4,0,4;0,4,4;0,0,8'`` (the rows of a basis, split by ``;``) into a lattice torus.

    Examples
    --------
    >>> parse_lattice("4,4;0,8").diameter
    4
    >>> parse_lattice("4,0;8,0")
    Traceback (most recent call last):
    ...
    synth.errors.TopologyError: the lattice basis is degenerate (determinant 0): its rows must be linearly independent
    """
    text = str(text).strip().replace(" ", "")
    rows = text.split(";")
    if len(text) > 400 or len(rows) > MAX_DIMS or not all(_ROW.match(r) for r in rows):
        raise TopologyError(f"lattice {text[:40]!r} is not of the form 'a,b;c,d' (rows of an integer basis split by "
                            f"';', at most {MAX_DIMS} rows of 9-digit integers)")
    return lattice_torus([[int(x) for x in r.split(",")] for r in rows])


def parse_wrap(text: str, d: int) -> tuple:
    """``--no-wrap DIMS`` (``'0'``, ``'0,2'``, or ``''`` for none) as wrap flags for ``d`` sides.

    >>> parse_wrap("0,2", 3)
    (False, True, False)
    """
    parts = [p for p in str(text).replace(" ", "").split(",") if p]
    if len(parts) > MAX_DIMS or not all(p.isdigit() and len(p) <= 2 and int(p) < d for p in parts):
        raise TopologyError(f"`no_wrap` takes dimension numbers 0..{d - 1} split by commas, got {str(text)[:40]!r}")
    off = {int(p) for p in parts}
    return tuple(i not in off for i in range(d))


def _reduce(coords, basis, wrap) -> np.ndarray:
    """Canonical representatives (the box of the HNF's diagonal) of integer vectors ``(..., d)``."""
    x = np.array(coords, dtype=np.int64, copy=True)
    B = np.asarray(basis, dtype=np.int64)
    for i in range(B.shape[0]):     # upper triangular: row i touches columns i.. only, which rows < i left reduced
        q = np.floor_divide(x[..., i], B[i, i])
        x[..., i] -= q * B[i, i]
        for j in np.flatnonzero(B[i, i + 1:]).tolist():
            x[..., i + 1 + j] -= q * B[i, i + 1 + j]
    return x


def _steps(hnf, wrap) -> list:
    """``(dim, sign)`` of the steps kept (module docstring): steps equal to ``0`` or to an earlier one dropped."""
    d = len(hnf)
    seen, out = set(), []
    for i in range(d):
        for sign in (1, -1):
            e = np.zeros(d, dtype=np.int64)
            e[i] = sign
            key = ("step",) + tuple(_reduce(e, hnf, wrap).tolist()) if wrap[i] else ("path", i, sign)
            if key in seen or not any(key[1:]) and wrap[i]:
                continue
            seen.add(key)
            out.append((i, sign))
    return out


def lattice_size(basis, wrap=None) -> tuple:
    """``(vertices, directed links)`` of :func:`lattice_torus` ``(basis, wrap)``, exactly, without building it.

    >>> lattice_size([[4, 0, 4], [0, 4, 4], [0, 0, 8]]), lattice_size([[3, 0], [0, 2]], [False, False])
    ((128, 768), (6, 14))
    """
    hnf = hermite_normal_form(basis)
    d = len(hnf)
    shape = [hnf[i][i] for i in range(d)]
    wrap = [True] * d if wrap is None else [bool(w) or shape[i] <= 2 for i, w in enumerate(wrap)]
    V = 1
    for h in shape:
        V *= h
    E = 0
    for i, sign in _steps(hnf, wrap):
        E += V if wrap[i] else V // shape[i] * (shape[i] - 1)
    return V, E


def _build(name, spec, hnf, shape, wrap) -> "LatticeTorus":
    d, V = len(shape), _volume(shape)
    steps = _steps(hnf, wrap)
    coords = np.indices(shape, dtype=np.int64).reshape(d, V).T
    sides = np.asarray(shape, dtype=np.int64)
    dst = np.empty((V, len(steps)), dtype=np.int64)
    ok = np.ones((V, len(steps)), dtype=bool)
    for j, (i, sign) in enumerate(steps):
        moved = coords.copy()
        moved[:, i] += sign
        if not wrap[i]:
            ok[:, j] = (moved[:, i] >= 0) & (moved[:, i] < sides[i])
        dst[:, j] = np.ravel_multi_index(tuple(_reduce(moved, hnf, wrap).T), shape)
    src = np.broadcast_to(np.arange(V)[:, None], dst.shape)
    step_id = np.broadcast_to(np.arange(len(steps))[None, :], dst.shape)
    return LatticeTorus(name, spec, V, src[ok], dst[ok], None, shape, hnf, wrap, tuple(steps), step_id[ok])


@dataclass(frozen=True, eq=False)
class LatticeTorus(Grid, Topology):
    """A lattice torus or a grid with wrap per side; see the module docstring for the numbering."""

    shape: tuple = ()
    basis: tuple = ()
    wrap: tuple = ()
    steps: tuple = ()              # (dim, sign) of each kept step, in step order
    link_step: np.ndarray = None   # the step each link takes

    @property
    def is_vertex_transitive(self) -> bool:
        """Every side wraps (sides of 1 and 2 always count as wrapped: the ring is the path)."""
        return all(self.wrap)

    @property
    def is_diagonal(self) -> bool:
        return all(self.basis[i][j] == 0 for i in range(self.ndim) for j in range(self.ndim) if i != j)

    @cached_property
    def link_dim(self) -> np.ndarray:
        """Dimension of each link."""
        return np.asarray([i for i, _ in self.steps], dtype=np.int32)[self.link_step]

    @cached_property
    def link_sign(self) -> np.ndarray:
        """Direction of each link, ``+1`` or ``-1``."""
        return np.asarray([s for _, s in self.steps], dtype=np.int8)[self.link_step]

    def vertex(self, coords) -> np.ndarray:
        """Vertex ids of integer vectors, reduced modulo ``L`` (module docstring)."""
        c = _reduce(coords, self.basis, self.wrap)
        return np.ravel_multi_index(tuple(np.moveaxis(c, -1, 0)), self.shape)

    # ------------------------------------------------------------- distances
    @cached_property
    def _wrapped(self) -> np.ndarray:
        return np.asarray(self.wrap, dtype=bool)

    @cached_property
    def _d0(self) -> np.ndarray:
        """Distances from 0 in the wrapped factor (the unwrapped coordinates held at 0), by vertex id.

        One vectorized BFS over the whole graph from vertex 0, keeping only the vertices whose
        unwrapped coordinates are 0: the graph is a product, so their distances are the factor's.
        """
        return self.bfs([0]).astype(np.int64)

    def dist(self, u, v) -> np.ndarray:
        """Hop distance, vectorized over ``u`` and ``v`` (module docstring)."""
        cu, cv = self.coords(u), self.coords(v)
        w = self._wrapped
        delta = np.where(w, cv - cu, 0)
        path = np.where(w, 0, np.abs(cv - cu)).sum(axis=-1)
        return self._d0[self.vertex(delta)] + path

    @cached_property
    def _wrapped_radius(self) -> int:
        mask = np.all(self.coords(np.arange(self.n_vertices))[:, ~self._wrapped] == 0, axis=1)
        return int(self._d0[mask].max())

    @property
    def diameter(self) -> int:
        """Largest distance: the wrapped factor's plus ``n_i - 1`` per unwrapped side."""
        return self._wrapped_radius + int(sum(s - 1 for s, w in zip(self.shape, self._wrapped) if not w))

    def eccentricity(self, v=None) -> np.ndarray:
        """Eccentricity of vertices ``v`` (all by default), in closed form over the wrapped factor."""
        v = np.arange(self.n_vertices) if v is None else np.asarray(v)
        c = self.coords(v)
        n = self.sides
        far = np.where(self._wrapped, 0, np.maximum(c, n - 1 - c)).sum(axis=-1)
        return far + self._wrapped_radius

    def distance_distribution(self, v: int = 0) -> np.ndarray:
        """``counts[h]`` = number of vertices at distance ``h`` from ``v``."""
        return np.bincount(self.dist(np.full(self.n_vertices, v), np.arange(self.n_vertices)))

    def mean_distance(self, v: int = 0):
        """Mean distance from ``v`` to the other vertices."""
        counts = self.distance_distribution(v)
        return (counts * np.arange(counts.size)).sum() / (self.n_vertices - 1)

    # ---------------------------------------------------------------- routes
    def first_hop(self, u, v) -> np.ndarray:
        """First link of the route ``u -> v``: the first out-link (step order) one hop closer; ``-1`` if ``u == v``."""
        u = np.asarray(u, dtype=np.int64)
        v = np.broadcast_to(np.asarray(v, dtype=np.int64), u.shape)
        target = self.dist(u, v) - 1
        out = np.full(u.shape, -1, dtype=np.int64)
        cu = self.coords(u)
        for i, sign in self.steps:
            moved = cu.copy()
            moved[..., i] += sign
            inside = self._wrapped[i] | ((moved[..., i] >= 0) & (moved[..., i] < self.shape[i]))
            w = self.vertex(np.where(inside[..., None], moved, cu))
            good = (out < 0) & inside & (u != v) & (self.dist(w, v) == target)
            out = np.where(good, self.link_ids(u, w), out)
        return out

    def route(self, u: int, v: int) -> np.ndarray:
        """The route ``u -> v`` that takes :meth:`first_hop` at every node, as link ids."""
        links, x = [], int(u)
        while x != int(v):
            e = int(self.first_hop(np.array([x]), np.array([int(v)]))[0])
            links.append(e)
            x = int(self.link_dst[e])
        return np.asarray(links, dtype=np.int32)

    def shortest_route(self, u: int, v: int) -> np.ndarray:
        return self.route(u, v)
