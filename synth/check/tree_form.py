"""The tree form of a certificate component: a parent array with send rounds.

Most components are a spanning tree (or forest) used twice: every vertex reduces its value into
its parent once and later receives the total back from it by a copy.  As transmissions that is
``2(p-1)`` rows ``[round, src, dst, op, route]``; as a tree it is three integers per vertex::

    "tree": {"parent": [-1, 0, 1, ...], "up": [0, 7, 6, ...], "down": [0, 9, 10, ...],
             "up_routes": [[v, [v, ..., parent[v]]], ...],        # optional
             "down_routes": [[v, [parent[v], ..., v]], ...]}      # optional

* ``parent[v]``: the vertex ``v`` is joined to (``-1``: none); the parent array is a forest (a
  cycle is a format error), one entry per vertex of the topology;
* ``up[v] > 0``: in that round ``v`` reduces its value into ``parent[v]`` (``0``: no such send);
* ``down[v] > 0``: in that round ``parent[v]`` copies its value into ``v`` (``0``: none);
* a vertex with a parent has an ``up`` or a ``down`` round (or both), one without has neither;
* the route of a send is the link between the two vertices, unless ``up_routes`` (``down_routes``)
  lists the vertex with the route's vertex list (a multi-hop tree edge: k-hop trees, switches),
  each vertex at most once, in increasing order.

A component's transmissions are those of its tree plus the rows of its ``transmissions`` list, if
any (what is no tree edge: the exchange of a forest plus exchange, a second copy into a vertex).
The form only spells rows: the checker re-derives every transmission and executes it as any other,
so a round order that copies before it has reduced is INVALID by execution, and a route over a
failed link INVALID as in the long form.

:func:`tree_parts` chooses, for a base schedule, which rows each component writes as a tree (the
writer's side; any schedule works, what is no tree stays rows); :func:`tree_rows` reads one back.

Examples
--------
>>> from synth import parse_torus, sp_allreduce
>>> t = parse_torus("4x4")
>>> base = sp_allreduce(t)
>>> parts = tree_parts(base)
>>> parts.components.tolist(), int(parts.in_tree.sum()) == base.n_transmissions
([0], True)
>>> tree = tree_json(base, parts, 0)
>>> sorted(tree), tree["parent"][:4], tree["up"][:4], tree["down"][:4]
(['down', 'parent', 'up'], [-1, 0, 3, 0], [0, 4, 3, 4], [0, 5, 6, 5])
>>> rnd, src, dst, op, lengths, links = tree_rows(t, 0, tree)
>>> sorted(zip(rnd.tolist(), src.tolist(), dst.tolist())) == sorted(zip(base.round.tolist(), base.src.tolist(),
...                                                                      base.dst.tolist()))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.check.tree_images import TreeImages, expand_image
from synth.errors import FileFormatError, InvalidScheduleError
from synth.schedule.data import COPY, REDUCE, BaseSchedule
from synth.topology.failures import failed_step

__all__ = ["TreeParts", "TREE_KEYS", "IMAGE_TREE_KEYS", "tree_parts", "tree_parts_of", "tree_json", "tree_rows",
           "tree_count", "route_links"]

TREE_KEYS = ("parent", "up", "down", "up_routes", "down_routes")
IMAGE_TREE_KEYS = ("image", "changes")   # version 3: the tree as an image of a base tree (synth.check.tree_images)
_ARRAYS = ("parent", "up", "down")


@dataclass(frozen=True, eq=False)
class TreeParts:
    """Which rows of a base schedule a certificate writes as trees.

    Attributes
    ----------
    components : numpy.ndarray
        The components written in the tree form, increasing.
    parent, up, down : numpy.ndarray
        ``len(components) x V`` arrays: row ``i`` is the tree of component ``components[i]``.
    in_tree : numpy.ndarray
        Boolean, one per transmission: the row is a send of its component's tree (the others are
        written as rows).
    routed, routed_ptr : numpy.ndarray
        The tree sends whose route is not the one link between their ends, by component (CSR: those
        of ``components[i]`` are ``routed[routed_ptr[i]:routed_ptr[i+1]]``).
    """

    components: np.ndarray
    parent: np.ndarray
    up: np.ndarray
    down: np.ndarray
    in_tree: np.ndarray
    routed: np.ndarray
    routed_ptr: np.ndarray


def _far_ancestors(parent, span: int) -> np.ndarray:
    """For a flat parent array (``-1`` at roots) whose trees have at most ``span`` vertices each, an ancestor
    at least ``span`` steps up, or the root.

    Pointer jumping, ``log2(span)`` passes.  On a forest every result is a root; a vertex on a cycle, or
    below one, ends on a vertex of that cycle.
    """
    anc = np.where(parent >= 0, parent, np.arange(parent.size))
    for _ in range(max(1, int(span).bit_length())):
        anc = anc[anc]
    return anc


def tree_parts(base: BaseSchedule) -> TreeParts:
    """Split every component of ``base`` into a tree and the rows that are none (vectorized).

    A vertex's only reduce of its component is its ``up`` send, its only copy received its ``down``
    (when it comes from the same parent, or there is no up send); a send between a vertex and itself
    stays a row, and one entry per parent cycle goes back to rows (an exchange).  A component is
    written as a tree when its tree holds at least ``V / 2`` sends (the arrays then cost fewer
    integers than the rows they replace).
    """
    t = base.topology
    V, n = t.n_vertices, base.n_transmissions
    comp, src, dst, op = base.component, base.src, base.dst, base.op   # as stored: no 64-bit copies of millions
    red = op == REDUCE
    node = np.where(red, src, dst)      # the child end of a would-be tree send
    par = np.where(red, dst, src)
    loop = src == dst
    rows = np.flatnonzero(~loop) if loop.any() else np.arange(n)
    key = comp[rows].astype(np.int64) * (2 * V) + node[rows] * 2 + op[rows]
    if key.size > 1 and not np.all(key[1:] >= key[:-1]):   # rows built tree by tree are in this order already
        order = np.argsort(key)
        rows, key = rows[order], key[order]
    lone = np.ones(rows.size, dtype=bool)         # a vertex's only reduce, or only copy received, in its component
    lone[1:] &= key[1:] != key[:-1]
    lone[:-1] &= key[:-1] != key[1:]
    rows, key = rows[lone], key[lone] // 2
    pair = np.zeros(rows.size, dtype=bool)        # a copy right after the up send of the same vertex
    pair[1:] = key[1:] == key[:-1]
    keep = ~pair
    keep[1:] |= pair[1:] & (par[rows[1:]] == par[rows[:-1]])  # a copy from another parent than the up's stays a row
    cand, key = rows[keep], key[keep]
    share = np.bincount(comp[cand], minlength=base.n_components)
    chosen = np.flatnonzero(share * 2 >= max(V, 1))
    row_of = np.full(base.n_components, -1, dtype=np.int64)   # a table, not isin / searchsorted: millions of rows
    row_of[chosen] = np.arange(chosen.size)
    cand = cand[row_of[comp[cand]] >= 0]
    row = row_of[comp[cand]]
    flat = row * V + node[cand]
    parent = np.full(chosen.size * V, -1, dtype=np.int64)
    parent[flat] = row * V + par[cand]
    anc = _far_ancestors(parent, V)   # row i's parents stay in row i: trees of at most V vertices
    cut = np.zeros(parent.size, dtype=bool)
    cut[anc[parent[anc] >= 0]] = True              # one vertex of every cycle leaves the tree
    cand, flat = cand[~cut[flat]], flat[~cut[flat]]
    parent[cut] = -1
    parent = np.where(parent >= 0, parent % max(V, 1), -1).reshape(chosen.size, V)
    rounds = {}
    for op in (REDUCE, COPY):
        arr = np.zeros(chosen.size * V, dtype=np.int64)
        sel = base.op[cand] == op
        arr[flat[sel]] = base.round[cand[sel]]
        rounds[op] = arr.reshape(chosen.size, V)
    in_tree = np.zeros(n, dtype=bool)
    in_tree[cand] = True
    direct = base.route_lengths[cand] == 1
    if _parallel(t):   # then the one link between the ends may not be the one the route takes
        direct &= base.route_links[base.route_ptr[cand]] == t.link_ids(src[cand], dst[cand])
    routed = cand[~direct]
    routed = routed[np.argsort(comp[routed], kind="stable")]
    ptr = np.searchsorted(comp[routed], chosen, side="left")
    return TreeParts(chosen, parent, rounds[REDUCE], rounds[COPY], in_tree, routed,
                     np.append(ptr, routed.size).astype(np.int64))


def tree_parts_of(base, images: TreeImages | None):
    """The :class:`synth.check.tree_form.TreeParts` of ``base`` when ``images`` holds the trees ``base`` was built
    from (the same object, kept alive by the hint, so never a look-alike), else None."""
    if images is None or images.trees is None or images.built is not base:
        return None
    parent, up, down = images.trees
    C = parent.shape[0]
    return TreeParts(np.arange(C), parent, up, down, np.ones(base.n_transmissions, dtype=bool),
                     np.zeros(0, dtype=np.int64), np.zeros(C + 1, dtype=np.int64))


def _parallel(t) -> bool:
    """Whether two links of ``t`` join the same ordered pair of vertices."""
    if t.n_links < 2:
        return False
    keys = np.sort(t.link_src.astype(np.int64) * t.n_vertices + t.link_dst)
    return bool(np.any(keys[1:] == keys[:-1]))


def _route_vertices(base: BaseSchedule, i: int) -> list:
    links = base.route(i)
    return [int(base.topology.link_src[links[0]])] + base.topology.link_dst[links].tolist()


def tree_json(base: BaseSchedule, parts: TreeParts, row: int) -> dict:
    """The ``tree`` object of ``parts.components[row]`` (routes listed only where they are not one link)."""
    out = {"parent": parts.parent[row].tolist(), "up": parts.up[row].tolist(), "down": parts.down[row].tolist()}
    mine = parts.routed[parts.routed_ptr[row]:parts.routed_ptr[row + 1]]
    for op, name in ((REDUCE, "up_routes"), (COPY, "down_routes")):
        sel = mine[base.op[mine] == op]
        if sel.size:
            child = (base.src if op == REDUCE else base.dst)[sel]
            out[name] = [[int(child[k]), _route_vertices(base, int(i))] for k, i in enumerate(sel[np.argsort(child)])]
            out[name].sort()
    return out


def tree_count(tree) -> int:
    """How many sends a ``tree`` object spells (its non-zero rounds), checking only that it is an object of lists.

    Cheap, before the topology is built (:func:`synth.check.base_json.base_shape`).
    """
    if not isinstance(tree, dict) or not all(isinstance(tree.get(k), list) for k in _ARRAYS):
        raise ValueError("'tree' needs the lists 'parent', 'up' and 'down'")
    return sum(len(tree[k]) - tree[k].count(0) for k in ("up", "down"))   # types are checked by tree_rows


def _int_array(values, name: str, V: int) -> np.ndarray:
    if not isinstance(values, list) or len(values) != V:
        raise ValueError(f"'{name}' must be a list of {V} integers, one per vertex")
    if V and set(map(type, values)) != {int}:
        raise ValueError(f"'{name}' must hold integers only")
    return np.array(values, dtype=np.int64)


def _routes(topology, values, name: str, child_first: bool, parent, rounds) -> dict:
    """``{vertex: link ids}`` of an ``up_routes`` / ``down_routes`` list, strictly checked."""
    if not isinstance(values, list):
        raise ValueError(f"'{name}' must be a list of [vertex, route]")
    out, last = {}, -1
    for entry in values:
        if not (isinstance(entry, list) and len(entry) == 2 and type(entry[0]) is int and isinstance(entry[1], list)
                and len(entry[1]) >= 2 and set(map(type, entry[1])) == {int}):
            raise ValueError(f"'{name}' entries are [vertex, [vertex ids of the route]]")
        v, route = entry
        if not 0 <= v < parent.size or v <= last:
            raise ValueError(f"'{name}' lists vertex {str(v)[:20]} out of order or out of range")
        last = v
        if parent[v] < 0 or rounds[v] == 0:
            raise ValueError(f"'{name}' lists vertex {v}, which has no such send")
        ends = (v, int(parent[v])) if child_first else (int(parent[v]), v)
        if (route[0], route[-1]) != ends:
            raise ValueError(f"the route of vertex {v} in '{name}' does not go from {ends[0]} to {ends[1]}")
        out[v] = route_links(topology, np.asarray(route, dtype=np.int64))
    return out


def route_links(topology, verts) -> np.ndarray:
    """Link ids of the steps of ``verts``; a step over a failure is INVALID, one that is no link malformed."""
    links = topology.link_ids(verts[:-1], verts[1:]).astype(np.int64)
    if np.any(links < 0):
        k = int(np.argmax(links < 0))
        u, v = int(verts[k]), int(verts[k + 1])
        failed = failed_step(topology, u, v)
        if failed:
            raise InvalidScheduleError(f"route step {u}->{v} crosses {failed}: a false schedule")
        raise ValueError(f"route step {u}->{v} is not a link")
    return links


def tree_rows(topology, c: int, tree, trees=None) -> tuple:
    """The transmissions of component ``c``'s ``tree`` as ``(round, src, dst, op, route lengths, links)``.

    Up sends first (by vertex), then down sends (by vertex).  ``trees``: a version 3 file's base trees
    (:func:`synth.check.tree_images.read_base_trees`), which a tree given as an ``image`` is expanded from.

    Raises
    ------
    FileFormatError
        For anything malformed, a parent cycle included, naming component ``c``.
    InvalidScheduleError
        For a send over a failed link or chip (a false schedule).
    """
    try:
        return _tree_rows(topology, tree, trees)
    except InvalidScheduleError as exc:
        raise InvalidScheduleError(f"component {c}, tree: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise FileFormatError(f"component {c}, tree: {exc}") from None


def _tree_rows(topology, tree, trees=None) -> tuple:
    V = topology.n_vertices
    if not isinstance(tree, dict):
        raise ValueError("must be an object")
    valid = TREE_KEYS if trees is None else TREE_KEYS + IMAGE_TREE_KEYS
    unknown = sorted(set(tree) - set(valid))
    if unknown:
        raise ValueError(f"unknown key {str(unknown[0])[:40]!r} (valid: {', '.join(valid)})")
    if "image" in tree:
        if set(tree) - set(IMAGE_TREE_KEYS):
            raise ValueError("a tree given as an 'image' holds only 'image' and 'changes'")
        parent, up, down = expand_image(topology, trees, tree["image"], tree.get("changes", []))
    elif "changes" in tree:
        raise ValueError("'changes' belong to a tree given as an 'image'")
    else:
        parent, up, down = (_int_array(tree.get(k), k, V) for k in _ARRAYS)
    has = parent >= 0
    if np.any((parent < -1) | (parent >= V)) or np.any(parent == np.arange(V)):
        v = int(np.flatnonzero((parent < -1) | (parent >= V) | (parent == np.arange(V)))[0])
        raise ValueError(f"vertex {v}: parent {int(parent[v])} is not another vertex (or -1)")
    if np.any(up < 0) or np.any(down < 0):
        raise ValueError("rounds must be non-negative (0: no send)")
    bad = np.flatnonzero(has != ((up > 0) | (down > 0)))
    if bad.size:
        v = int(bad[0])
        raise ValueError(f"vertex {v}: " + ("a parent but no up or down round" if has[v] else
                                            "an up or down round but no parent"))
    anc = _far_ancestors(parent, V)
    if np.any(parent[anc] >= 0):
        raise ValueError(f"the parent array has a cycle (through vertex {int(anc[parent[anc] >= 0][0])}): "
                         "not a forest")
    routes = {op: _routes(topology, tree.get(name, []), name, op == REDUCE, parent, r)
              for op, name, r in ((REDUCE, "up_routes", up), (COPY, "down_routes", down))}
    parts = []
    for op, r in ((REDUCE, up), (COPY, down)):
        v = np.flatnonzero(r > 0)
        s, d = (v, parent[v]) if op == REDUCE else (parent[v], v)
        parts.append((r[v], s, d, np.full(v.size, op, dtype=np.int64), *_send_links(topology, v, s, d, routes[op])))
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(6))


def _send_links(topology, v, s, d, listed: dict) -> tuple:
    """``(route lengths, links)`` of the sends ``s -> d`` of vertices ``v``: ``listed`` routes, else the link."""
    lengths = np.ones(v.size, dtype=np.int64)
    at = np.searchsorted(v, np.fromiter(listed, dtype=np.int64, count=len(listed)))
    lengths[at] = [x.size for x in listed.values()]
    plain = np.ones(v.size, dtype=bool)
    plain[at] = False
    direct = topology.link_ids(s[plain], d[plain]).astype(np.int64)
    if np.any(direct < 0):
        k = int(np.flatnonzero(plain)[np.argmax(direct < 0)])
        route_links(topology, np.array([s[k], d[k]]))
    ptr = np.concatenate([[0], np.cumsum(lengths)])
    links = np.empty(int(ptr[-1]), dtype=np.int64)
    links[ptr[:-1][plain]] = direct
    for k, x in zip(at.tolist(), listed.values()):
        links[ptr[k]:ptr[k + 1]] = x
    return lengths, links
