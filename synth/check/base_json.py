"""The ``base_schedule`` object of a certificate, to and from a :class:`~synth.schedule.BaseSchedule`.

A component is written as a tree (:mod:`synth.check.tree_form`), as the image of a base tree
(:mod:`synth.check.tree_images`, version 3) or as rows of transmissions (:mod:`synth.check.rows_form`); the
certificate around it is :mod:`synth.check.certificate`'s.  Reading checks the structure first
(:func:`base_shape`, cheap, before the topology is built), then every row against the topology
(:func:`base_from_json`).

Examples
--------
>>> from synth import parse_torus, sp_allreduce
>>> base = sp_allreduce(parse_torus("4x4"))
>>> data = base_to_json(base)
>>> sorted(data["components"][0]), base_shape(data)
(['label', 'tree', 'weight'], [30])
>>> base_from_json(base.topology, data).n_transmissions == base.n_transmissions
True
"""

from __future__ import annotations

import numpy as np

from synth.check import rows_form
from synth.check.tree_form import tree_count, tree_json, tree_parts, tree_parts_of, tree_rows
from synth.check.tree_images import (MAX_IMAGE_ENTRIES, TreeImages, base_trees_json, grid_of, image_count,
                                     image_trees, read_base_trees)
from synth.errors import FileFormatError, ScheduleError
from synth.fileio import printable
from synth.schedule import OPS, BaseSchedule

__all__ = ["base_to_json", "base_shape", "base_from_json", "route_vertices", "compact_rows", "tree_row",
           "images_hint", "known_keys", "BASE_KEYS", "BASE_KEYS_3", "COMPONENT_KEYS"]

BASE_KEYS = ("rounds", "components")
BASE_KEYS_3 = ("rounds", "trees", "components")
COMPONENT_KEYS = ("weight", "label", "tree", "transmissions")


def route_vertices(topology, links) -> list:
    links = np.asarray(links)
    return [int(topology.link_src[links[0]])] + topology.link_dst[links].tolist()


def base_to_json(base: BaseSchedule, compact: bool = True, images: TreeImages | None = None) -> dict:
    """The ``base_schedule`` object of a certificate (``compact``: components in the tree form where they are
    trees, :func:`synth.check.tree_form.tree_parts`, as images of ``images``' base trees where it names one;
    else every component as transmissions)."""
    t = base.topology
    parts = (tree_parts_of(base, images) or tree_parts(base)) if compact else None
    imaged = image_trees(t, parts, images) if compact else {}
    rows_of = compact_rows(base, parts)
    comps = []
    for c in range(base.n_components):
        comp = {"weight": int(base.weights[c]), "label": base.labels[c]}
        k = tree_row(parts, c)
        if k is not None:
            comp["tree"] = imaged[c] if c in imaged else tree_json(base, parts, k)
        rows = [[int(base.round[i]), int(base.src[i]), int(base.dst[i]), OPS[base.op[i]],
                 route_vertices(t, base.route(i))] for i in rows_of[c]]
        if rows or k is None:
            comp["transmissions"] = rows
        comps.append(comp)
    return {"rounds": int(base.n_rounds), **({"trees": base_trees_json(images)} if imaged else {}), "components": comps}


def tree_row(parts, c: int):
    """The row of component ``c`` in ``parts``, or None when it is written as transmissions."""
    if parts is None:
        return None
    k = int(np.searchsorted(parts.components, c))
    return k if k < parts.components.size and parts.components[k] == c else None


def compact_rows(base: BaseSchedule, parts) -> list:
    """Per component, the indices of the transmissions written as rows (not in its tree), in schedule order."""
    keep = np.arange(base.n_transmissions) if parts is None else np.flatnonzero(~parts.in_tree)
    order = keep[np.argsort(base.component[keep], kind="stable")]
    starts = np.searchsorted(base.component[order], np.arange(base.n_components + 1))
    return [order[starts[c]:starts[c + 1]] for c in range(base.n_components)]


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def base_shape(data, version: int = 2) -> list:
    """Transmissions per component of a ``base_schedule`` object, checking its structure only.

    Cheap and done before the topology is built, so the counts can be checked against it
    (:func:`synth.check.certificate.read_certificate`).  Version 1 components hold ``transmissions`` only;
    version 2 ones a ``tree`` (:mod:`synth.check.tree_form`), ``transmissions`` or both, and no other key.
    """
    if not isinstance(data, dict) or not isinstance(data.get("components"), list) or not data["components"]:
        raise FileFormatError("base_schedule needs a non-empty 'components' list")
    if version >= 2:
        known_keys(data, BASE_KEYS_3 if version >= 3 else BASE_KEYS, "base_schedule")
    base_counts = _base_tree_counts(data["trees"]) if version >= 3 and "trees" in data else []
    rounds = data.get("rounds")
    if not _is_int(rounds) or rounds < 1:
        raise FileFormatError("base_schedule.rounds must be a positive integer")
    counts = []
    for c, comp in enumerate(data["components"]):
        if not isinstance(comp, dict):
            raise FileFormatError(f"component {c} must be an object")
        if version >= 2:
            known_keys(comp, COMPONENT_KEYS, f"component {c}")
        tree = comp.get("tree") if version >= 2 else None
        rows = comp.get("transmissions", [] if tree is not None else None)
        if not isinstance(rows, list):
            raise FileFormatError(f"component {c} needs a 'transmissions' list" + (" or a 'tree'" if version >= 2
                                                                                  else ""))
        try:
            counts.append(len(rows) + (0 if tree is None else image_count(tree, base_counts)
                                       if isinstance(tree, dict) and "image" in tree else tree_count(tree)))
        except ValueError as exc:
            raise FileFormatError(f"component {c}: {exc}") from None
    if rounds > sum(counts):
        raise FileFormatError(f"base_schedule.rounds is {rounds} but the schedule has only {sum(counts)} "
                              "transmissions")
    return counts


def _base_tree_counts(trees) -> list:
    """The sends of each base tree of a version 3 ``trees`` list (structure only: the reader checks the rest)."""
    if not isinstance(trees, list) or not trees:
        raise FileFormatError("base_schedule.trees must be a non-empty list of trees")
    try:
        return [tree_count(tree) for tree in trees]
    except ValueError as exc:
        raise FileFormatError(f"base_schedule.trees: {exc}") from None


def known_keys(data: dict, keys, where: str) -> None:
    unknown = sorted(str(k) for k in set(data) - set(keys))
    if unknown:
        raise FileFormatError(f"{where}: unknown key {printable(unknown[0][:40])!r} (valid: {', '.join(keys)})")


def base_from_json(topology, data, version: int = 2) -> BaseSchedule:
    """Parse a ``base_schedule`` object, with one-line errors for anything malformed.

    Types are strict (``1.5``, ``"1"`` and ``true`` are not integers); weights are integers in
    ``1..2**53-1``; ``rounds`` must be the last round that has a transmission (:func:`synth.check.claims.certify`
    writes exactly that), so nothing is allocated for rounds the file does not fill.  Each component's
    rows are read column by column (:func:`synth.check.rows_form.fast_rows`); a component that is not plainly well
    formed
    is read row by row, which names the first bad transmission.  A ``tree`` (version 2) is read by
    :func:`synth.check.tree_form.tree_rows`; its sends come before the component's rows.
    """
    base_shape(data, version)
    trees = _read_trees(topology, data) if version >= 3 and "trees" in data else None
    parts, weights, labels = [], [], []
    for c, comp in enumerate(data["components"]):
        w = comp.get("weight", 1)
        if not _is_int(w) or w < 1:
            raise FileFormatError(f"component {c}: weight must be a positive integer, got {str(w)[:40]}")
        weights.append(w)
        labels.append(str(comp.get("label", f"component {c}"))[:1000])
        rows = comp.get("transmissions", [])
        part = rows_form.fast_rows(topology, rows)
        if part is None:
            part = rows_form.slow_rows(topology, c, rows)
        if version >= 2 and "tree" in comp:
            tree = tree_rows(topology, c, comp["tree"], trees)
            part = tuple(np.concatenate([a, b]) for a, b in zip(tree, part))
        parts.append(_compact(part, c))
    n = np.array([p[0].size for p in parts], dtype=np.int64)
    rnd, src, dst, op, lengths, links = (np.concatenate([p[k] for p in parts]) if parts else
                                         np.zeros(0, _COLUMNS[k]) for k in range(6))
    parts.clear()
    last = int(rnd.max()) if rnd.size else 0
    if rnd.size and data["rounds"] != last:
        raise FileFormatError(f"base_schedule.rounds is {data['rounds']} but the last round with a transmission "
                              f"is {last}")
    ptr = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, dtype=np.int64, out=ptr[1:])
    component = np.repeat(np.arange(n.size, dtype=np.int32), n)
    try:
        return BaseSchedule(topology, int(data["rounds"]), component, rnd, src, dst, op, ptr, links,
                            np.asarray(weights), tuple(labels))
    except ScheduleError as exc:
        raise FileFormatError(f"base schedule: {exc}") from None


#: the dtypes a component's columns (round, sender, receiver, op, route length, route links) are kept in while a
#: file is read: the base schedule's own, so that a pod's 50 M rows are not held as int64 twice over (16x20x28
#: with a failed link: its 2.6 MB certificate took 7.1 GB to read, 3.2 GB so)
_COLUMNS = (np.int32, np.int32, np.int32, np.int8, np.int32, np.int32)


def _compact(part, c: int):
    """``part``'s columns in :data:`_COLUMNS`' dtypes; a round past them is a format error, not a wrapped number
    (vertices and links are already known to be the network's)."""
    rnd = part[0]
    if rnd.size and (int(rnd.max()) > np.iinfo(np.int32).max or int(rnd.min()) < 0):
        raise FileFormatError(f"component {c}: a round outside 0..{np.iinfo(np.int32).max}")
    return tuple(np.asarray(a, dtype=d) for a, d in zip(part, _COLUMNS))


def _read_trees(topology, data):
    """A version 3 file's base trees, once the expansion they ask for is known to be bounded."""
    images = sum(1 for comp in data["components"] if isinstance(comp.get("tree"), dict) and "image" in comp["tree"])
    if images * topology.n_vertices > MAX_IMAGE_ENTRIES:
        raise FileFormatError(f"{images} tree images of {topology.n_vertices} vertices: more than the "
                              f"{MAX_IMAGE_ENTRIES:,} entries a certificate may expand to")
    return read_base_trees(topology, data["trees"])


def images_hint(topology, data, version: int):
    """The :class:`TreeImages` a version 3 file was written with (writing it again gives the same bytes)."""
    if version < 3 or "trees" not in data:
        return None
    trees = read_base_trees(topology, data["trees"])
    n = len(data["components"])
    of, shift = np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64)
    axes = np.tile(np.arange(1, grid_of(topology).ndim + 1), (n, 1))
    for c, comp in enumerate(data["components"]):
        image = comp.get("tree", {}).get("image")
        if image is not None:   # already checked by the reader
            of[c], shift[c], axes[c] = image["tree"], image["shift"], image["axes"]
    return TreeImages(*trees, of, shift, axes)
