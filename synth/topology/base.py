"""Network topologies as arrays: vertices are ``0..V-1``, directed links ``0..E-1``.

A :class:`Topology` is the generic data every other module works on: the two
endpoint arrays of the directed links, the compute vertices (the ones that
hold data; switches forward only) and a JSON ``spec`` that names how to build
it again.  Tori live in :mod:`synth.topology.torus`; they add closed forms on top.

Examples
--------
>>> import numpy as np
>>> ring = Topology.from_links("ring3", {"kind": "links"}, 3,
...                            [(0, 1), (1, 2), (2, 0), (1, 0), (2, 1), (0, 2)])
>>> ring.n_links
6
>>> ring.link_ids(np.array([0, 2]), np.array([1, 1])).tolist()
[0, 4]
>>> ring.bfs([0]).tolist()
[0, 1, 1]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from synth.fileio import printable
from synth.errors import TopologyError

__all__ = ["Topology", "Grid", "MAX_VERTICES", "MAX_LINKS", "check_size", "link_values", "count_of", "is_int", "spec_volume"]

MAX_VERTICES = 1 << 22  # 4,194,304 vertices: 256x the largest network we solve (64x64 torus, 32x32 HyperX)
MAX_LINKS = 1 << 24     # 16,777,216 directed links: building them peaks near 1 GB (int32 ids, int64 keys)


def count_of(array: str, doc: str) -> property:
    """A read-only ``int`` property: the length of the 1-D array attribute ``array``.

    The array dataclasses (topologies, schedules, runtime plans) count their
    rows this way, so ``t.n_links`` is ``len(t.link_src)`` as a plain ``int``.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Rows:
    ...     src: np.ndarray
    ...     n_rows = count_of("src", "Number of rows.")
    >>> Rows(np.arange(5)).n_rows, Rows.n_rows.__doc__
    (5, 'Number of rows.')
    """
    def count(self) -> int:
        return int(getattr(self, array).size)
    count.__doc__ = doc
    return property(count)


def is_int(x) -> bool:
    """Whether a value read from JSON is an integer (``True`` and ``False`` are not).

    >>> is_int(3), is_int(True), is_int(3.0)
    (True, False, False)
    """
    return isinstance(x, int) and not isinstance(x, bool)


def spec_volume(spec):
    """``(shape, V)``: a spec's ``shape`` (1 to 64 positive whole sides) and the product of its sides; None
    if malformed.

    >>> spec_volume({"shape": [4, 6]}), spec_volume({"shape": [4, 0]})
    (([4, 6], 24), None)
    """
    shape = spec.get("shape")
    if not isinstance(shape, list) or not shape or len(shape) > 64 or not all(is_int(s) and s >= 1 for s in shape):
        return None
    V = 1
    for s in shape:
        V *= s
    return shape, V


def link_values(values, n_links: int, key: str, positive: bool) -> np.ndarray:
    """Validate a per-link list (``bandwidth``: finite and positive; ``latency``: finite and non-negative).

    Returns a read-only float64 array of length ``n_links``.

    Raises
    ------
    TopologyError
        Naming the key and the first bad entry.

    Examples
    --------
    >>> link_values([1, 2.5], 2, "bandwidth", True).tolist()
    [1.0, 2.5]
    >>> link_values([1, 0], 2, "bandwidth", True)
    Traceback (most recent call last):
    ...
    synth.errors.TopologyError: 'bandwidth' entry 1 is 0.0; every link needs a finite number above 0
    """
    if isinstance(values, np.ndarray):
        arr = values.astype(np.float64, copy=True)
    else:
        if not isinstance(values, (list, tuple)) or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in values):
            raise TopologyError(f"'{key}' must be a list of numbers, one per link")
        try:
            arr = np.asarray(values, dtype=np.float64)
        except OverflowError:
            raise TopologyError(f"'{key}' holds a number too large for a float") from None
    if arr.shape != (n_links,):
        raise TopologyError(f"'{key}' lists {arr.size} values for {n_links} links; give one per link")
    bad = ~np.isfinite(arr) | ((arr <= 0) if positive else (arr < 0))
    if bad.any():
        i = int(np.argmax(bad))
        need = "a finite number above 0" if positive else "a finite number, 0 or more"
        raise TopologyError(f"'{key}' entry {i} is {arr[i]}; every link needs {need}")
    arr.setflags(write=False)
    return arr


def check_size(name: str, n_vertices: int, n_links: int) -> None:
    """Refuse a topology beyond ``MAX_VERTICES`` or ``MAX_LINKS``, from counts computed before building it.

    Raises
    ------
    TopologyError
        Naming the topology, its size and the cap.

    Examples
    --------
    >>> check_size("torus 3000x3000", 9_000_000, 36_000_000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    synth.errors.TopologyError: torus 3000x3000 has 9000000 vertices and 36000000 links; synth handles at most ...
    """
    if n_vertices > MAX_VERTICES or n_links > MAX_LINKS:
        raise TopologyError(f"{name} has {n_vertices} vertices and {n_links} links; synth handles at most "
                            f"{MAX_VERTICES} vertices and {MAX_LINKS} links")


@dataclass(frozen=True, eq=False)
class Topology:
    """A directed graph with compute vertices.

    Parameters
    ----------
    name : str
        Short human name, e.g. ``"torus 16x16"``; control characters come out escaped
        (:func:`synth.fileio.printable`), so a name from a file prints on one line.
    spec : dict
        JSON-ready description from which :func:`synth.topology.spec.build_topology` rebuilds it.
    n_vertices : int
        Number of vertices ``V``.
    link_src, link_dst : numpy.ndarray
        int32 arrays of length ``E``: link ``e`` goes from ``link_src[e]`` to ``link_dst[e]``.
    compute : numpy.ndarray
        Sorted int32 ids of the vertices that hold data.
    bandwidth : numpy.ndarray or None, keyword-only
        Bandwidth of each directed link in GB/s (float64, finite, positive); None: every link 1.
    latency : numpy.ndarray or None, keyword-only
        Latency of each directed link in µs (float64, finite, non-negative); None: every link 0.

    Read the per-link values through :attr:`link_bandwidth` and :attr:`link_latency`, which are
    arrays whether or not the topology was given any; :attr:`has_bandwidths` says whether the
    links differ from the default.
    """

    name: str
    spec: dict
    n_vertices: int
    link_src: np.ndarray
    link_dst: np.ndarray
    compute: np.ndarray = field(default=None)
    bandwidth: np.ndarray = field(default=None, kw_only=True)
    latency: np.ndarray = field(default=None, kw_only=True)

    def __post_init__(self):
        if isinstance(self.n_vertices, bool) or not isinstance(self.n_vertices, (int, np.integer)) \
                or self.n_vertices < 0:
            raise TopologyError(f"the vertex count must be a non-negative integer, got {self.n_vertices!r}")
        object.__setattr__(self, "name", printable(self.name))   # user-supplied: never a control character
        check_size(self.name, int(self.n_vertices), int(np.size(self.link_src)))
        src = np.ascontiguousarray(self.link_src, dtype=np.int32)
        dst = np.ascontiguousarray(self.link_dst, dtype=np.int32)
        if src.shape != dst.shape or src.ndim != 1:
            raise TopologyError("link_src and link_dst must be 1-D arrays of equal length")
        if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= self.n_vertices):
            raise TopologyError(f"a link endpoint lies outside 0..{self.n_vertices - 1}")
        if np.any(src == dst):
            raise TopologyError("a link joins a vertex to itself")
        compute = np.arange(self.n_vertices, dtype=np.int32) if self.compute is None else np.unique(
            np.asarray(self.compute, dtype=np.int32))
        if compute.size and (compute[0] < 0 or compute[-1] >= self.n_vertices):
            raise TopologyError("a compute vertex lies outside the vertex range")
        object.__setattr__(self, "link_src", src)
        object.__setattr__(self, "link_dst", dst)
        object.__setattr__(self, "compute", compute)
        skeys, _order = self._sorted_keys      # sorted once, kept for link_ids (faster than np.unique's hash)
        if np.any(skeys[1:] == skeys[:-1]):
            raise TopologyError("the same directed link is listed twice")
        for key, positive in (("bandwidth", True), ("latency", False)):
            values = getattr(self, key)
            if values is not None:
                object.__setattr__(self, key, link_values(values, src.size, key, positive))

    @classmethod
    def from_links(cls, name, spec, n_vertices, links, compute=None, *, bandwidth=None, latency=None):
        """Build a topology from a list of ``(u, v)`` directed links (and optionally their bandwidths and latencies).

        The vertex count is checked against the cap and against the links (a graph whose
        compute vertices can reach each other has at most ``links + 1`` vertices) before
        any array of ``n_vertices`` entries is made.
        """
        if isinstance(n_vertices, bool) or not isinstance(n_vertices, (int, np.integer)):
            raise TopologyError(f"the vertex count must be an integer, got {n_vertices!r}")
        n_vertices = int(n_vertices)
        try:
            arr = np.asarray(links, dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            raise TopologyError("links must be a list of [u, v] pairs of vertex ids") from None
        if arr.size == 0:
            arr = arr.reshape(0, 2)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise TopologyError("links must be a list of [u, v] pairs of vertex ids")
        check_size(name, n_vertices, arr.shape[0])
        if n_vertices > arr.shape[0] + 1:
            raise TopologyError(f"{name}: {n_vertices} vertices but only {arr.shape[0]} links; "
                                "some vertex would have no link")
        return cls(name, spec, n_vertices, arr[:, 0], arr[:, 1], compute, bandwidth=bandwidth, latency=latency)

    # ------------------------------------------------------------------ basics
    n_links = count_of("link_src", "Number of directed links ``E``.")
    n_compute = count_of("compute", "Number of compute vertices ``p``.")

    @property
    def link_bandwidth(self) -> np.ndarray:
        """Bandwidth of every directed link in GB/s (float64, length ``E``; ones when none was given)."""
        return np.ones(self.n_links) if self.bandwidth is None else self.bandwidth

    @property
    def link_latency(self) -> np.ndarray:
        """Latency of every directed link in µs (float64, length ``E``; zeros when none was given)."""
        return np.zeros(self.n_links) if self.latency is None else self.latency

    @property
    def has_bandwidths(self) -> bool:
        """Whether some link's bandwidth differs from 1 GB/s (the links are then not all alike).

        >>> t = Topology.from_links("pair", {"kind": "links"}, 2, [(0, 1), (1, 0)], bandwidth=[1.0, 2.5])
        >>> t.has_bandwidths, t.link_bandwidth.tolist(), t.link_latency.tolist()
        (True, [1.0, 2.5], [0.0, 0.0])
        """
        return self.bandwidth is not None and bool(np.any(self.bandwidth != 1.0))

    @property
    def has_latencies(self) -> bool:
        """Whether some link has a latency other than 0."""
        return self.latency is not None and bool(np.any(self.latency != 0.0))

    @cached_property
    def is_compute(self) -> np.ndarray:
        """Boolean mask over vertices: does the vertex hold data."""
        mask = np.zeros(self.n_vertices, dtype=bool)
        mask[self.compute] = True
        return mask

    def _keys(self, src, dst):
        return np.asarray(src, dtype=np.int64) * self.n_vertices + np.asarray(dst, dtype=np.int64)

    @cached_property
    def _sorted_keys(self):
        keys = self._keys(self.link_src, self.link_dst)
        order = np.argsort(keys, kind="stable")
        return keys[order], order.astype(np.int32)

    def link_ids(self, src, dst) -> np.ndarray:
        """Link ids of the pairs ``(src[i], dst[i])``; ``-1`` where there is no such link."""
        src = np.asarray(src)
        dst = np.asarray(dst)
        keys = self._keys(src, dst)
        skeys, order = self._sorted_keys
        pos = np.searchsorted(skeys, keys)
        pos = np.minimum(pos, max(skeys.size - 1, 0))
        ok = (skeys.size > 0) & (skeys[pos] == keys) if skeys.size else np.zeros(keys.shape, bool)
        valid = ok & (src >= 0) & (src < self.n_vertices) & (dst >= 0) & (dst < self.n_vertices)
        return np.where(valid, order[pos], -1).astype(np.int32)

    @cached_property
    def out_links(self):
        """CSR of out-links: ``(ptr, links)``; vertex ``v`` owns ``links[ptr[v]:ptr[v+1]]``."""
        order = np.argsort(self.link_src, kind="stable").astype(np.int32)
        ptr = np.zeros(self.n_vertices + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.link_src, minlength=self.n_vertices), out=ptr[1:])
        return ptr, order

    # --------------------------------------------------------------- distances
    def bfs(self, sources, reverse: bool = False) -> np.ndarray:
        """Hop distances from the set ``sources`` (to it when ``reverse``); ``-1`` if unreachable."""
        src, dst = (self.link_dst, self.link_src) if reverse else (self.link_src, self.link_dst)
        dist = np.full(self.n_vertices, -1, dtype=np.int32)
        frontier = np.unique(np.asarray(sources, dtype=np.int64))
        dist[frontier] = 0
        order = np.argsort(src, kind="stable")
        ptr = np.zeros(self.n_vertices + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=self.n_vertices), out=ptr[1:])
        sorted_dst = dst[order]
        level = 0
        while frontier.size:
            level += 1
            starts, ends = ptr[frontier], ptr[frontier + 1]
            counts = ends - starts
            idx = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
            nxt = np.unique(sorted_dst[idx])
            nxt = nxt[dist[nxt] < 0]
            dist[nxt] = level
            frontier = nxt
        return dist

    def distance_matrix(self) -> np.ndarray:
        """All-pairs hop distances (``V x V``); meant for small graphs."""
        return np.stack([self.bfs([v]) for v in range(self.n_vertices)])

    def shortest_route(self, u: int, v: int) -> np.ndarray:
        """A deterministic shortest route ``u -> v`` as link ids.

        At each vertex the walk takes the lowest-numbered out-link that gets one
        hop closer to ``v``.
        """
        direct = self.link_ids([u], [v])
        if u != v and direct[0] >= 0:   # one hop: the only out-link one hop closer (no BFS, trees stay fast)
            return direct.astype(np.int32)
        dist_to_v = self.bfs([v], reverse=True)
        if dist_to_v[u] < 0:
            raise TopologyError(f"vertex {v} cannot be reached from {u}")
        ptr, links = self.out_links
        route, x = [], int(u)
        while x != v:
            out = links[ptr[x]:ptr[x + 1]]
            out = np.sort(out)
            nxt = out[dist_to_v[self.link_dst[out]] == dist_to_v[x] - 1][0]
            route.append(int(nxt))
            x = int(self.link_dst[nxt])
        return np.asarray(route, dtype=np.int32)

    def to_json(self) -> dict:
        """The topology as an explicit JSON object (vertices, compute, links, and the links' ``bandwidth`` and
        ``latency`` lists when it has them)."""
        out = {
            "vertices": self.n_vertices,
            "compute": self.compute.tolist(),
            "links": np.stack([self.link_src, self.link_dst], axis=1).tolist(),
        }
        if self.has_bandwidths:
            out["bandwidth"] = self.bandwidth.tolist()
        if self.has_latencies:
            out["latency"] = self.latency.tolist()
        return out


class Grid:
    """Row-major coordinates for topologies whose vertices form a grid ``shape`` (tori, HyperX)."""

    shape: tuple

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @cached_property
    def sides(self) -> np.ndarray:
        return np.asarray(self.shape, dtype=np.int64)

    def coords(self, v) -> np.ndarray:
        """Coordinates of vertex ids, shape ``(..., d)``."""
        return np.stack(np.unravel_index(np.asarray(v), self.shape), axis=-1)

    def vertex(self, coords) -> np.ndarray:
        """Vertex ids of coordinates (taken modulo the sides), shape ``(...)``."""
        c = np.asarray(coords, dtype=np.int64) % self.sides
        return np.ravel_multi_index(tuple(np.moveaxis(c, -1, 0)), self.shape)
