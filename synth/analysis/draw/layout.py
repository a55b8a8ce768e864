"""Where every vertex and link of a topology sits on the page (numpy only: no matplotlib here).

One layout per topology kind, all in units where neighbouring vertices sit about 1 apart:

* **tori and HyperX** (:class:`synth.topology.base.Grid`), 1 to 3 dimensions: a grid, row ``c0`` at
  the top (2D: ``x = c1, y = -c0``); in 3D the layers ``c0 = 0, 1, ...`` stand side by side, each
  an ``n1 x n2`` grid.  A torus link that wraps around is drawn as a stub leaving its sender
  towards the side it wraps to (no line across the picture); a link between layers is a short
  diagonal stub, up-right towards a later layer, down-left towards an earlier one; HyperX links
  (every node of a line is joined to every other) are arcs bent to the right of their
  direction, so a link and its reverse never cover each other;
* **spine-leaf**: hosts at the bottom grouped under their leaf, leaves above them, spines on top;
* **GPU servers** (:class:`synth.topology.gpu.GpuFabric`): each server's GPUs in rows of 8, servers
  side by side, the NVSwitch above its GPUs, a row of NICs below them and the rail switches at the bottom;
  direct GPU-GPU links (xGMI) are arcs so that they do not run through the GPUs between;
* **multislice** (:class:`synth.topology.multislice.Multislice`): each slice laid out as its kind is,
  the slices side by side, the DCN switch below their middle;
* **any other graph** (``--topology`` files): networkx's Kamada-Kawai layout (deterministic: it
  starts from a circle), or a spring layout with a fixed seed beyond :data:`KAMADA_KAWAI_LIMIT`
  vertices, scaled so that the median link is 1 long.

Straight links are shifted a little to the right of their direction, so the two directions of a
connection show as two parallel strokes.  :attr:`Layout.paths` holds every directed link as a
polyline of :data:`POINTS` points.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> lay = layout(parse_torus("4x4"))
>>> lay.pos.shape, lay.paths.shape, int(lay.wrap.sum())
((16, 2), (64, 12, 2), 16)
>>> lay.pos[5].tolist()
[1.0, -1.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.errors import OptionError
from synth.topology.base import Grid
from synth.topology.gpu import GpuFabric
from synth.topology.hyperx import HyperX
from synth.topology.multislice import Multislice
from synth.topology.spineleaf import SpineLeaf
from synth.topology.torus import Torus

__all__ = ["Layout", "layout", "POINTS", "OFFSET", "KAMADA_KAWAI_LIMIT"]

POINTS = 12  # points of every link's polyline (straight links too, so all fit one array)
OFFSET = 0.1  # how far a straight link is shifted to the right of its direction
STUB = 0.45  # the length of a wrapping link's stub, in grid steps
LAYER_GAP = 2.0  # the space between two layers of a 3D grid
LAYER_STEP = 0.7  # where a link to the next layer points (a diagonal, up-right), in grid steps
GPU_ROW = 8  # GPUs per row of a server (MI250's 16 GCDs: two rows)
KAMADA_KAWAI_LIMIT = 300  # vertices up to which a graph gets the Kamada-Kawai layout (O(V^2) memory)


@dataclass(frozen=True, eq=False)
class Layout:
    """Vertex positions and link polylines.

    Attributes
    ----------
    pos : numpy.ndarray
        ``V x 2`` float positions.
    paths : numpy.ndarray
        ``E x POINTS x 2``: link ``e`` drawn from its sender's side to its receiver's.
    centred : numpy.ndarray
        The same without the shift of straight links (a tree's links pass through the vertices).
    wrap : numpy.ndarray
        Boolean per link: a stub (a torus link that wraps around, a link between layers), not a line.
    step : numpy.ndarray
        ``E x 2``: for a stub, where the receiver would sit had the link not wrapped (relative).
    kind : str
        ``"grid"``, ``"spine-leaf"``, ``"gpu-servers"``, ``"multislice"`` or ``"graph"``.
    """

    pos: np.ndarray
    paths: np.ndarray
    centred: np.ndarray
    wrap: np.ndarray
    step: np.ndarray
    kind: str


def _right(d: np.ndarray) -> np.ndarray:
    """Unit vectors to the right of the directions ``d`` (``E x 2``)."""
    n = np.hypot(d[:, 0], d[:, 1])
    n[n == 0] = 1.0
    return np.stack([d[:, 1], -d[:, 0]], axis=1) / n[:, None]


def _bezier(a, b, bend) -> np.ndarray:
    """Quadratic curves from ``a`` to ``b`` (``E x 2``) whose middle is pushed ``bend * |b - a|`` to the right."""
    d = b - a
    ctrl = (a + b) / 2 + _right(d) * (bend * np.hypot(d[:, 0], d[:, 1]))[:, None]
    t = np.linspace(0.0, 1.0, POINTS)[None, :, None]
    return (1 - t) ** 2 * a[:, None] + 2 * (1 - t) * t * ctrl[:, None] + t ** 2 * b[:, None]


def _straight(a, b, offset: float = OFFSET) -> np.ndarray:
    shift = _right(b - a) * offset
    return _bezier(a + shift, b + shift, np.zeros(a.shape[0]))


def _grid_pos(shape, coords) -> np.ndarray:
    """Page positions of grid coordinates ``(..., d)`` (which may lie one step outside the grid)."""
    c = np.asarray(coords, dtype=np.float64)
    if len(shape) == 1:
        return np.stack([c[..., 0], np.zeros_like(c[..., 0])], axis=-1)
    if len(shape) == 2:
        return np.stack([c[..., 1], -c[..., 0]], axis=-1)
    return np.stack([c[..., 0] * (shape[2] - 1 + LAYER_GAP) + c[..., 2], -c[..., 1]], axis=-1)


def _grid(t) -> Layout:
    shape = tuple(t.shape)
    if not 1 <= len(shape) <= 3:
        raise OptionError(f"draw: {t.name} has {len(shape)} dimensions; pictures show grids of 1 to 3")
    pos = _grid_pos(shape, t.coords(np.arange(t.n_vertices)))
    src, dst = t.link_src, t.link_dst
    cs, cd = t.coords(src), t.coords(dst)
    a, b = pos[src], pos[dst]
    if isinstance(t, Torus):
        dim, sign = t.link_dim, t.link_sign
        unwrapped = cs.copy()
        unwrapped[np.arange(src.size), dim] += sign
        wrap = (unwrapped[np.arange(src.size), dim] < 0) | (unwrapped[np.arange(src.size), dim] >= t.sides[dim])
        step = _grid_pos(shape, unwrapped) - a
        far = np.zeros(src.size, dtype=bool)
    else:  # HyperX: every pair of a line is joined; arcs keep them apart
        wrap = np.zeros(src.size, dtype=bool)
        step = b - a
        far = np.ones(src.size, dtype=bool)
    if len(shape) == 3:  # between layers: a diagonal stub, up-right to a later layer, down-left to an earlier one
        across = cs[:, 0] != cd[:, 0]
        step[across] = LAYER_STEP * np.sign(cd[across, 0] - cs[across, 0])[:, None]
        wrap, far = wrap | across, far & ~across
    lines = np.abs(cs - cd).sum(axis=1)  # coordinate distance: longer arcs bend less, relative to their length
    out = []
    for offset in (OFFSET, 0.0):
        paths = _straight(a, b, offset)
        if far.any():
            paths[far] = _bezier(a[far], b[far], 0.25 / np.sqrt(np.maximum(lines[far], 1)))
        if wrap.any():
            paths[wrap] = _straight(a[wrap], a[wrap] + STUB * step[wrap], offset)
        out.append(paths)
    return Layout(pos, out[0], out[1], wrap, step, "grid")


def _spine_leaf(t: SpineLeaf) -> Layout:
    q, l = t.spines, t.leaves
    width = l * (q + 1) - 1
    tier = max(3.0, 0.22 * width)  # the height between tiers: the picture stays about twice as wide as high
    host = np.arange(q * l)
    pos = np.zeros((t.n_vertices, 2))
    pos[host, 0] = host // q * (q + 1) + host % q
    pos[t.leaf(np.arange(l)), 0] = np.arange(l) * (q + 1) + (q - 1) / 2
    pos[t.leaf(np.arange(l)), 1] = tier
    pos[t.spine(np.arange(q)), 0] = (np.arange(q) + 0.5) * (width / q)
    pos[t.spine(np.arange(q)), 1] = 2 * tier
    return _plain(t, pos, "spine-leaf")


def _gpu(t: GpuFabric) -> Layout:
    n, G = t.servers, t.gpus_per_server
    cols = min(G, GPU_ROW)
    rows = -(-G // cols)
    gpu = np.arange(n * G)
    row, col = np.divmod(gpu % G, cols)
    x = t.server_of(gpu) * (cols + 2) + col
    pos = np.zeros((t.n_vertices, 2))
    pos[gpu] = np.stack([x, -1.5 * row], axis=1)
    if t.switches_per_server:
        pos[t.nvswitch(np.arange(n)), 0] = np.arange(n) * (cols + 2) + (cols - 1) / 2
        pos[t.nvswitch(np.arange(n)), 1] = 2.5
    if n > 1:   # one row of NICs below the GPUs, a later GPU row's NICs just right of the first's
        nic_y = -1.5 * rows
        pos[t.nic_of(gpu)] = np.stack([x + row / rows, np.full(x.size, nic_y)], axis=1)
        width = n * (cols + 2) - 3
        pos[t.rail_switch(np.arange(t.rails)), 0] = (np.arange(t.rails) + 0.5) * (width / t.rails)
        pos[t.rail_switch(np.arange(t.rails)), 1] = nic_y - max(3.0, 0.15 * width)
    lay = _plain(t, pos, "gpu-servers")
    direct = t.is_compute[t.link_src] & t.is_compute[t.link_dst]
    if direct.any():   # GPU to GPU on one row: arcs, the longer the higher
        a, b = pos[t.link_src[direct]], pos[t.link_dst[direct]]
        arcs = _bezier(a, b, np.full(a.shape[0], 0.3))
        lay.paths[direct] = arcs
        lay.centred[direct] = arcs
    return lay


def _multislice(t: Multislice) -> Layout:
    inner = layout(t.slice_topology)
    K, C = t.slices, t.chips_per_slice
    width = float(np.ptp(inner.pos[:, 0])) + 2.0
    shift = np.stack([np.arange(K) * width, np.zeros(K)], axis=1)
    pos = np.concatenate([(inner.pos[None] + shift[:, None]).reshape(-1, 2),
                          [[(K * width - 2.0) / 2, float(inner.pos[:, 1].min()) - max(3.0, 0.2 * K * width)]]])
    dcn = np.zeros(t.n_links, dtype=bool)
    dcn[K * t.slice_topology.n_links:] = True
    plain = _plain(t, pos, "multislice")
    paths, centred = plain.paths.copy(), plain.centred.copy()
    link_shift = np.repeat(shift, t.slice_topology.n_links, axis=0)[:, None, :]
    paths[~dcn] = np.tile(inner.paths, (K, 1, 1)) + link_shift
    centred[~dcn] = np.tile(inner.centred, (K, 1, 1)) + link_shift
    wrap = np.concatenate([np.tile(inner.wrap, K), np.zeros(2 * K * C, dtype=bool)])
    step = np.concatenate([np.tile(inner.step, (K, 1)), plain.step[dcn]])
    return Layout(pos, paths, centred, wrap, step, "multislice")


def _graph(t) -> Layout:
    import networkx as nx  # networkx is a dependency anyway; only graphs without a grid need it

    g = nx.Graph()
    g.add_nodes_from(range(t.n_vertices))
    g.add_edges_from(zip(t.link_src.tolist(), t.link_dst.tolist()))
    if t.n_vertices <= KAMADA_KAWAI_LIMIT:
        where = nx.kamada_kawai_layout(g)
    else:
        where = nx.spring_layout(g, seed=0)
    pos = np.array([where[v] for v in range(t.n_vertices)], dtype=np.float64)
    lengths = np.hypot(*(pos[t.link_src] - pos[t.link_dst]).T)
    scale = float(np.median(lengths)) if lengths.size else 1.0
    return _plain(t, pos / (scale if scale > 0 else 1.0), "graph")


def _surviving(lay: Layout, healthy, t) -> Layout:
    """``lay`` (of ``healthy``) restricted to the links of ``t``, which keeps the healthy vertex ids."""
    index = {pair: i for i, pair in enumerate(zip(healthy.link_src.tolist(), healthy.link_dst.tolist()))}
    keep = np.array([index[pair] for pair in zip(t.link_src.tolist(), t.link_dst.tolist())], dtype=np.int64)
    return Layout(lay.pos, lay.paths[keep], lay.centred[keep], lay.wrap[keep], lay.step[keep], lay.kind)


def _plain(t, pos, kind) -> Layout:
    a, b = pos[t.link_src], pos[t.link_dst]
    return Layout(pos, _straight(a, b), _straight(a, b, 0.0), np.zeros(t.n_links, dtype=bool), b - a, kind)


def layout(topology) -> Layout:
    """The :class:`Layout` of ``topology`` (see the module docstring for each kind); a damaged network
    (:class:`~synth.topology.failures.Damaged`) is drawn as its healthy one, with the links that survive."""
    healthy = getattr(topology, "healthy", None)
    if healthy is not None:
        return _surviving(layout(healthy), healthy, topology)
    if isinstance(topology, (Torus, HyperX)) and isinstance(topology, Grid):
        return _grid(topology)
    if isinstance(topology, SpineLeaf):
        return _spine_leaf(topology)
    if isinstance(topology, GpuFabric):
        return _gpu(topology)
    if isinstance(topology, Multislice):
        return _multislice(topology)
    return _graph(topology)
