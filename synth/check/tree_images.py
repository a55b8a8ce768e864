"""Tree images: a component's tree as a base tree carried onto the network by a coordinate map, plus changes.

A damaged pod's schedule keeps the healthy trees almost everywhere: thousands of spanning trees that are
each one tree (SP-allreduce's) translated and turned, except at a few vertices near the failures.
Certificate version 3 (:mod:`synth.check.certificate`) says so directly: it lists base trees once, in the
tree form, and gives a component's tree as the image of one of them with the vertices that differ::

    "base_schedule": {"rounds": 48, "trees": [{"parent": [...], "up": [...], "down": [...]}],
                      "components": [
        {"weight": 3, "label": "...",
         "tree": {"image": {"tree": 0, "shift": 273, "axes": [2, -3, 1]},
                  "changes": [[v, parent, up, down], ...]}}, ...]}

On a network whose vertices form a grid of sides ``n`` (tori, meshes, HyperX; for a damaged network its
healthy grid) the map ``phi`` sends the vertex of coordinates ``x`` to the vertex of coordinates
``y_i = shift_i + sign(a_i) x_{|a_i|}`` (mod ``n_i``; ``shift_i`` the coordinates of vertex ``shift``,
``a = axes`` a signed permutation of ``1..d`` that only exchanges sides of equal length, so ``phi`` is a
bijection).  The component's tree is ``parent[phi(x)] = phi(base parent[x])`` (``-1`` stays ``-1``),
``up[phi(x)] = base up[x]``, ``down[phi(x)] = base down[x]``; then each change ``[v, parent, up, down]``
sets vertex ``v``'s three entries (each vertex at most once, in increasing order).

Nothing else is taken on trust: the expanded arrays are read as any tree
(:func:`synth.check.tree_form.tree_rows`: a forest, every send along a link of the damaged network, else a
format error, or INVALID when it crosses a failure) and the checker executes every transmission.  A map
that is no automorphism of the network simply gives sends between vertices that are not joined.

:class:`TreeImages` is the writer's hint (which base tree and map each component starts from): the writer
stores the differences of the component's actual tree against it, so a wrong hint costs bytes, never truth.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("4x4")
>>> image_maps(t, np.array([5]), np.array([[1, 2]]))[0, :4].tolist()      # a translation by (1, 1)
[5, 6, 7, 4]
>>> image_maps(t, np.array([0]), np.array([[-2, 1]]))[0, [1, 4]].tolist()  # (x0, x1) -> (-x1, x0)
[12, 1]
>>> parent, up, down = np.array([[-1, 0, 1, 0]]), np.array([[0, 2, 1, 2]]), np.array([[0, 3, 4, 3]])
>>> p, u, d = expand_image(parse_torus("4"), (parent, up, down), {"tree": 0, "shift": 1, "axes": [1]}, [])
>>> p.tolist(), u.tolist(), d.tolist()
([1, -1, 1, 2], [2, 0, 2, 1], [3, 0, 3, 4])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.errors import FileFormatError

__all__ = ["TreeImages", "IMAGE_KEYS", "MAX_IMAGE_ENTRIES", "grid_of", "image_maps", "read_base_trees",
           "expand_image", "image_count", "image_trees", "base_trees_json"]

IMAGE_KEYS = ("tree", "shift", "axes")
BASE_TREE_KEYS = ("parent", "up", "down")
#: components given as images times vertices: what a file may make the reader expand (a 16x16x16 pod: 9.2 M)
MAX_IMAGE_ENTRIES = 1 << 26
_BATCH = 256   # components expanded at once by the writer (memory: a few int64 arrays of batch x V)


@dataclass(frozen=True, eq=False)
class TreeImages:
    """Which base tree and map each component of a base schedule starts from (the writer's hint).

    Attributes
    ----------
    parent, up, down : numpy.ndarray
        ``B x V``: the base trees, in the tree form (:mod:`synth.check.tree_form`).
    of : numpy.ndarray
        Per component, the index of its base tree (``-1``: written without an image).
    shift : numpy.ndarray
        Per component, the vertex whose coordinates translate the image.
    axes : numpy.ndarray
        ``C x d``: per component, the signed permutation (``1..d``, signs) of the map (module docstring).
    """

    parent: np.ndarray
    up: np.ndarray
    down: np.ndarray
    of: np.ndarray
    shift: np.ndarray
    axes: np.ndarray
    #: optionally, the trees of every component (``C x V`` parent, up and down arrays) and the very base schedule
    #: they were built into (:func:`synth.schedule.forest.trees_base`): the writer then takes them as they are
    #: for that object only, instead of finding the trees among millions of rows again
    #: (:func:`synth.check.tree_form.tree_parts_of`)
    trees: tuple | None = None
    built: object = None


def grid_of(topology):
    """The grid the maps act on: ``topology``'s own, or its healthy network's; None when it has none."""
    from synth.topology.base import Grid   # a check-stage reader needs only the coordinates

    g = getattr(topology, "healthy", None) or topology
    return g if isinstance(g, Grid) and g.n_vertices == topology.n_vertices else None


def _check_axes(grid, axes) -> np.ndarray:
    d = grid.ndim
    if not (isinstance(axes, list) and len(axes) == d and all(type(a) is int for a in axes)
            and sorted(abs(a) for a in axes) == list(range(1, d + 1))):
        raise ValueError(f"'axes' must list the {d} signed axes 1..{d}, each once (e.g. {list(range(1, d + 1))})")
    a = np.asarray(axes, dtype=np.int64)
    if np.any(grid.sides[np.abs(a) - 1] != grid.sides):
        raise ValueError(f"'axes' {axes} exchanges sides of different lengths: not a map of the grid")
    return a


def image_maps(grid, shift, axes) -> np.ndarray:
    """``m x V`` vertex maps ``phi`` of shifts ``shift`` (m,) and signed axes ``axes`` (m, d), module docstring."""
    shift, axes = np.asarray(shift, dtype=np.int64), np.asarray(axes, dtype=np.int64).reshape(shift.size, -1)
    x = grid.coords(np.arange(grid.n_vertices))                 # (V, d)
    s = grid.coords(shift)                                      # (m, d)
    sides = grid.sides
    out = np.zeros((shift.size, grid.n_vertices), dtype=np.int64)
    stride = 1
    for i in range(grid.ndim - 1, -1, -1):
        src = x[:, np.abs(axes[:, i]) - 1].T                    # (m, V): the source coordinate of axis i
        out += ((np.sign(axes[:, i])[:, None] * src + s[:, i:i + 1]) % sides[i]) * stride
        stride *= int(sides[i])
    return out


def read_base_trees(topology, values):
    """``(parent, up, down)`` ``B x V`` arrays of a file's ``trees`` list, strictly typed (entries in range)."""
    V = topology.n_vertices
    if not isinstance(values, list) or not values:
        raise FileFormatError("base_schedule.trees must be a non-empty list of trees")
    if grid_of(topology) is None:
        raise FileFormatError("base_schedule.trees: tree images need a network whose vertices form a grid")
    out = []
    for b, tree in enumerate(values):
        if not isinstance(tree, dict) or sorted(tree) != sorted(BASE_TREE_KEYS):
            raise FileFormatError(f"base tree {b} must be an object of exactly {', '.join(BASE_TREE_KEYS)}")
        arrs = []
        for k in BASE_TREE_KEYS:
            v = tree[k]
            if not isinstance(v, list) or len(v) != V or (V and set(map(type, v)) != {int}):
                raise FileFormatError(f"base tree {b}: '{k}' must be a list of {V} integers, one per vertex")
            arrs.append(np.array(v, dtype=np.int64))
        if np.any((arrs[0] < -1) | (arrs[0] >= V)) or np.any(arrs[1] < 0) or np.any(arrs[2] < 0):
            raise FileFormatError(f"base tree {b}: a parent outside -1..{V - 1} or a negative round")
        out.append(arrs)
    return tuple(np.stack([a[k] for a in out]) for k in range(3))


def image_count(tree, base_counts) -> int:
    """The sends an image ``tree`` may spell, at most (its base tree's plus two per change), checking its keys."""
    image, changes = tree.get("image"), tree.get("changes", [])
    if not isinstance(image, dict) or not isinstance(changes, list):
        raise ValueError("'image' must be an object and 'changes' a list")
    b = image.get("tree")
    if type(b) is not int or not 0 <= b < len(base_counts):
        raise ValueError(f"image tree {str(b)[:20]} is not a base tree (0..{len(base_counts) - 1})")
    return base_counts[b] + 2 * len(changes)


def expand_image(topology, trees, image, changes):
    """``(parent, up, down)`` of one component given as an ``image`` of a base tree with ``changes``.

    Raises ``ValueError`` for anything malformed (the caller names the component).
    """
    grid, V = grid_of(topology), topology.n_vertices
    if not isinstance(image, dict) or sorted(image) != sorted(IMAGE_KEYS):
        raise ValueError(f"'image' must be an object of exactly {', '.join(IMAGE_KEYS)}")
    b, shift = image["tree"], image["shift"]
    if type(b) is not int or not 0 <= b < trees[0].shape[0]:
        raise ValueError(f"image tree {str(b)[:20]} is not a base tree")
    if type(shift) is not int or not 0 <= shift < V:
        raise ValueError(f"image shift {str(shift)[:20]} is not a vertex")
    axes = _check_axes(grid, image["axes"])
    phi = image_maps(grid, np.array([shift]), axes[None, :])[0]
    bp = trees[0][b]
    parent, up, down = np.empty(V, dtype=np.int64), np.empty(V, dtype=np.int64), np.empty(V, dtype=np.int64)
    parent[phi] = np.where(bp >= 0, phi[np.maximum(bp, 0)], -1)
    up[phi], down[phi] = trees[1][b], trees[2][b]
    if changes:
        ch = _changes(changes, V)
        parent[ch[:, 0]], up[ch[:, 0]], down[ch[:, 0]] = ch[:, 1], ch[:, 2], ch[:, 3]
    return parent, up, down


def _changes(changes, V: int) -> np.ndarray:
    if not isinstance(changes, list) or not all(type(c) is list and len(c) == 4 and set(map(type, c)) == {int}
                                                for c in changes):
        raise ValueError("'changes' entries are [vertex, parent, up, down], integers")
    ch = np.array(changes, dtype=np.int64).reshape(-1, 4)
    if np.any(ch[:, 0] < 0) or np.any(ch[:, 0] >= V) or np.any(np.diff(ch[:, 0]) <= 0):
        raise ValueError("'changes' must name vertices of the network, each once, in increasing order")
    if np.any((ch[:, 1] < -1) | (ch[:, 1] >= V)):
        raise ValueError("a change's parent must be a vertex or -1")
    return ch


def image_trees(topology, parts, images: TreeImages) -> dict:
    """The writer's side: ``{component: tree object}`` for the components of ``parts`` (a
    :class:`synth.check.tree_form.TreeParts`) that ``images`` gives a base tree and that have no routed send:
    ``{"image": ..., "changes": [...]}`` with every vertex whose parent or rounds differ from the image.  At most
    ``MAX_IMAGE_ENTRIES // n_vertices`` components are imaged (the rest stay plain trees): the writer never writes
    what the reader refuses."""
    grid = grid_of(topology)
    if grid is None or images is None:
        return {}
    routed = np.diff(parts.routed_ptr) > 0
    rows = np.flatnonzero((images.of[parts.components] >= 0) & ~routed)[:MAX_IMAGE_ENTRIES // topology.n_vertices]
    out = {}
    for lo in range(0, rows.size, _BATCH):
        r = rows[lo:lo + _BATCH]
        comps = parts.components[r]
        of, shift, axes = images.of[comps], images.shift[comps], images.axes[comps]
        phi = image_maps(grid, shift, axes)
        bp = images.parent[of]
        at = np.arange(r.size)[:, None]
        expect = np.empty_like(phi), np.empty_like(phi), np.empty_like(phi)
        expect[0][at, phi] = np.where(bp >= 0, np.take_along_axis(phi, np.maximum(bp, 0), axis=1), -1)
        expect[1][at, phi], expect[2][at, phi] = images.up[of], images.down[of]
        actual = parts.parent[r], parts.up[r], parts.down[r]
        diff = (expect[0] != actual[0]) | (expect[1] != actual[1]) | (expect[2] != actual[2])
        for i, c in enumerate(comps.tolist()):
            v = np.flatnonzero(diff[i])
            ch = np.stack([v, actual[0][i, v], actual[1][i, v], actual[2][i, v]], axis=1).tolist()
            out[c] = {"image": {"tree": int(of[i]), "shift": int(shift[i]), "axes": [int(a) for a in axes[i]]},
                      "changes": ch}
    return out


def base_trees_json(images: TreeImages) -> list:
    """The ``trees`` list of a version 3 ``base_schedule``."""
    return [{k: getattr(images, k)[b].tolist() for k in BASE_TREE_KEYS} for b in range(images.parent.shape[0])]
