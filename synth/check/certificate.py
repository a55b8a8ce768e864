"""Certificates: a base schedule, its group and the claims the checker re-derives.

Format ``synth-certificate``, version 2 (one JSON object)::

    {
      "format": "synth-certificate", "version": 2,
      "topology": {"kind": "torus", "shape": [16, 16]},          # synth.topology.spec.build_topology
      "group": {"kind": "torus-gamma"},                          # synth.symmetry.spec.named_group
      "base_schedule": {
        "rounds": 32,
        "components": [
          {"weight": 1, "label": "SP BFS tree, root 0, depth 16",
           "tree": {"parent": [...], "up": [...], "down": [...]},            # synth.check.tree_form
           "transmissions": [[round, src, dst, "reduce" | "copy", [src, ..., dst]], ...]}
        ]
      },
      "chunking": {"elements": 512, "rule": "proportional-floor"},
      "collective": "reduce-scatter",                            # optional: absent means allreduce
      "chunk_owner": [0],                                        # reduce-scatter / allgather: owner per component
      "claims": {"rounds": 32, "round_lower_bound": 31, "psi": "1", "theta": "1", "omega": "1",
                 "weight": "255", ...},                            # exact fractions as strings
      "solver": {...},                                           # solver's own claims, not checkable
      "provenance": {"tool": "synth 0.1.0", "algorithm": "sp-allreduce", "seed": null, "seconds": 0.1}
    }

A component holds a ``tree`` (a parent array with send rounds, :mod:`synth.check.tree_form`), rows of
``transmissions``, or both (its transmissions are the tree's sends and the rows); :func:`write_certificate`
writes each component that is a tree as one (``compact=False``: every one as rows), and gzip-compresses a
file whose name ends in ``.gz``.  Version 1 (rows only, unknown keys ignored) is still read; in version 2
an unknown key is an error.  Version 3 adds ``base_schedule.trees`` and components whose tree is an
``image`` of one of them with ``changes`` (:mod:`synth.check.tree_images`); it is written only when a
certificate carries a :class:`~synth.check.tree_images.TreeImages` hint that a component uses, so every
other file stays version 2.  Version 4 adds ``dropped``, a sorted list of chips the schedule drops
(:mod:`synth.check.dropped`): the base schedule, lifted by the group on ``topology`` (the network with those
chips), has each of them, and every chip of their orbits, as a leaf of every component; the schedule is that
lift without their sends, on ``topology`` without them (:func:`synth.topology.failures.without_nodes`), and
every claim is that network's.  It is written only when a certificate drops chips.  Routes are vertex lists
along directed links.  Component ``t`` lifted by group
element ``i`` is chunk ``t*|G| + i``; ``chunking.elements`` input elements per
node are cut as in :func:`synth.schedule.chunk_elements`.  ``collective`` (absent: an
allreduce, so every older certificate reads as before) and, for ``reduce-scatter`` and
``allgather``, ``chunk_owner`` (the owner vertex of each component; chunk ``t*|G| + i`` is owned
by element ``i``'s image of it) name the collective the checker executes; the elements are
then ``p`` equal blocks, one per owner (layout, minimum volume: :mod:`synth.schedule.data`).  Every key of
``claims`` is re-derived by ``synth check``; ``solver`` is reported as the
solver's claim, with one exception: a k-hop certificate's ``solver.dual_bound``
(a dual of the layered LP, or the cone-counting bound, :mod:`synth.check.bounds`) is re-evaluated by the
checker, which then also checks the claims ``weight_lower_bound`` (the dual's
``bound`` on ``W*`` for depth ``solver.depth_bound``) and ``depth_bound``
(``rounds <= 2 * depth_bound``).  Only ``provenance.seconds`` varies between
identical runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from synth._version import __version__
from synth.errors import FileFormatError, ScheduleError, SynthError, check_instance, check_path
from synth.check.base_json import (base_from_json, base_shape, base_to_json, compact_rows, images_hint, known_keys,
                                    tree_row)
from synth.check.tree_form import tree_json, tree_parts, tree_parts_of
from synth.check.tree_images import TreeImages, base_trees_json, image_trees
from synth.fileio import LIMITS, read_json, write_atomic
from synth.symmetry.group import Group
from synth.symmetry.spec import named_group
from synth.topology.failures import MAX_FAILURES, without_nodes
from synth.topology.spec import build_topology, spec_size
from synth.schedule import ALLREDUCE, COLLECTIVES, OPS, BaseSchedule
from synth.topology import check_size

__all__ = ["Certificate", "FORMAT", "VERSION", "IMAGES_VERSION", "DROPPED_VERSION", "VERSIONS", "collective_to_json",
           "collective_from_json", "check_declared_size", "read_certificate", "write_certificate",
           "certificate_to_json", "certificate_lines", "dumps"]

FORMAT = "synth-certificate"
VERSION = 2
IMAGES_VERSION = 3  # written only when a component is a tree image (synth.check.tree_images); else VERSION
DROPPED_VERSION = 4  # written only when the schedule drops chips (synth.check.dropped)
VERSIONS = (1, 2, 3, 4)   # what read_certificate reads: version 1 files (every component as transmissions) still read
TOP_KEYS = ("format", "version", "topology", "group", "base_schedule", "chunking", "collective", "chunk_owner",
            "claims", "solver", "provenance")
TOP_KEYS_4 = TOP_KEYS + ("dropped",)
CHUNKING_KEYS = ("elements", "rule")


@dataclass(frozen=True, eq=False)
class Certificate:
    """A certificate in memory (see the module docstring for the file format)."""

    topology: object
    group: Group
    base: BaseSchedule
    elements: int
    claims: dict = field(default_factory=dict)
    solver: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)
    #: the writer's hint (:class:`synth.check.tree_images.TreeImages`): the base tree and map each component
    #: starts from; the file then stores only each tree's differences from its image (version 3)
    tree_images: TreeImages | None = None
    #: the chips the schedule drops, sorted (version 4, :mod:`synth.check.dropped`)
    dropped: tuple = ()

    @cached_property
    def network(self):
        """The network the schedule runs on: ``topology`` without the ``dropped`` chips (itself when none are)."""
        return without_nodes(self.topology, self.dropped)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def collective_to_json(base: BaseSchedule) -> dict:
    """The ``collective`` and ``chunk_owner`` fields (none for an allreduce: its files stay as they were)."""
    if base.collective == ALLREDUCE:
        return {}
    return {"collective": base.collective, "chunk_owner": [int(v) for v in base.owner.tolist()]}


def collective_from_json(data: dict, n_components: int):
    """``(collective, owners or None)`` of a certificate, strictly typed; absent means allreduce."""
    collective = data.get("collective", ALLREDUCE)
    if collective not in COLLECTIVES:
        raise FileFormatError(f"collective must be one of {', '.join(COLLECTIVES)}, got {str(collective)[:40]!r}")
    owner = data.get("chunk_owner")
    if collective == ALLREDUCE:
        if owner is not None:
            raise FileFormatError("chunk_owner belongs to a reduce-scatter or allgather, not an allreduce")
        return collective, None
    if not isinstance(owner, list) or len(owner) != n_components or not all(_is_int(v) for v in owner):
        raise FileFormatError(f"a {collective} needs 'chunk_owner': {n_components} integer vertex id(s), one per "
                              "component")
    return collective, owner


def certificate_to_json(cert: Certificate, base: bool = True, compact: bool = True, images: bool = False) -> dict:
    """The certificate as a JSON object (``base=False``: without ``base_schedule``, which
    :func:`certificate_lines` writes from the arrays, ``images`` saying whether it holds tree images;
    ``compact`` as in :func:`base_to_json`)."""
    body = base_to_json(cert.base, compact, cert.tree_images) if base else None
    imaged = images or (body or {}).get("trees")
    out = {
        "format": FORMAT,
        "version": DROPPED_VERSION if cert.dropped else IMAGES_VERSION if imaged else VERSION,
        "topology": cert.topology.spec,
        "group": cert.group.to_json(),
        "base_schedule": body,
        "chunking": {"elements": int(cert.elements), "rule": "proportional-floor"},
        **collective_to_json(cert.base),
        "claims": cert.claims,
        "solver": cert.solver,
        "provenance": {"tool": f"synth {__version__}", **cert.provenance},
        **({"dropped": list(cert.dropped)} if cert.dropped else {}),
    }
    if not base:
        del out["base_schedule"]
    return out


def dumps(obj: dict) -> str:
    """Compact, deterministic JSON: one transmission per line inside the base schedule, one line per tree array."""
    import json

    head = {k: v for k, v in obj.items() if k != "base_schedule"}
    base = obj["base_schedule"]
    parts = ["{\n"]
    for k, v in head.items():
        parts.append(f'  {json.dumps(k)}: {json.dumps(v, sort_keys=True)},\n')
    parts.append(_base_head(base["rounds"], base.get("trees")))
    comps = base["components"]
    for ci, comp in enumerate(comps):
        rows = comp.get("transmissions")
        parts.append(_component_text(comp["weight"], comp["label"], comp.get("tree"),
                                     None if rows is None else [json.dumps(r, separators=(",", ":")) for r in rows],
                                     ci + 1 == len(comps)))
    parts.append("  ]}\n}\n")
    return "".join(parts)


def _base_head(rounds: int, trees) -> str:
    """The ``base_schedule`` object's text up to its components (a version 3 file's base trees, a line each)."""
    import json

    listed = "" if not trees else ('"trees": [\n' + ",\n".join(f"    {json.dumps(x, separators=(',', ':'))}"
                                                                 for x in trees) + "],\n  ")
    return f'  "base_schedule": {{"rounds": {rounds}, {listed}"components": [\n'


def _component_text(weight: int, label: str, tree, rows, last: bool) -> str:
    """One component as :func:`dumps` writes it; ``rows`` the texts of its transmissions (None: no such key)."""
    import json

    text = f'    {{"weight": {weight}, "label": {json.dumps(label)}'
    if tree is not None:
        body = ",\n".join(f"      {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in tree.items())
        text += f', "tree": {{\n{body}}}'
    if rows is not None:
        text += ', "transmissions": [\n' + "".join(f"      {r}{',' if i + 1 < len(rows) else ''}\n"
                                                    for i, r in enumerate(rows)) + "    ]"
    return text + "}" + ("" if last else ",") + "\n"


def write_certificate(cert: Certificate, path, compact: bool = True) -> None:
    """Write ``cert`` atomically: the bytes of ``dumps(certificate_to_json(cert, compact=compact))``, streamed
    from the arrays; gzip-compressed when ``path`` ends in ``.gz`` (:func:`synth.fileio.write_atomic`)."""
    import os

    check_instance(cert, "cert", Certificate)
    check_path(path)
    write_atomic(path, certificate_lines(cert, compact), kind="certificate",
                 compress=os.fspath(path).endswith(".gz"))


def certificate_lines(cert: Certificate, compact: bool = True):
    """Yield the text of ``dumps(certificate_to_json(cert, compact=compact))`` in pieces, rows made from the
    arrays at once.

    Large schedules (millions of transmissions) never become Python lists of rows.
    """
    import json

    base = cert.base
    parts = (tree_parts_of(base, cert.tree_images) or tree_parts(base)) if compact else None
    imaged = image_trees(base.topology, parts, cert.tree_images) if compact else {}
    head = certificate_to_json(cert, base=False, images=bool(imaged))
    yield "{\n" + "".join(f'  {json.dumps(k)}: {json.dumps(v, sort_keys=True)},\n' for k, v in head.items())
    yield _base_head(int(base.n_rounds), base_trees_json(cert.tree_images) if imaged else None)
    rows_of = compact_rows(base, parts)
    order = np.concatenate(rows_of) if rows_of else np.zeros(0, dtype=np.int64)
    texts = _row_texts(base, order)
    at = 0
    for c in range(base.n_components):
        k = tree_row(parts, c)
        rows = texts[at:at + rows_of[c].size]
        at += rows_of[c].size
        tree = None if k is None else imaged[c] if c in imaged else tree_json(base, parts, k)
        yield _component_text(int(base.weights[c]), base.labels[c], tree, rows if rows or k is None else None,
                              c + 1 == base.n_components)
    yield "  ]}\n}\n"


def _row_texts(base: BaseSchedule, order) -> list:
    """The JSON text of transmissions ``order`` (``[round, src, dst, op, route vertices]``), as :func:`dumps`."""
    t = base.topology
    lengths = base.route_lengths[order]
    route = np.empty(order.size, dtype=object)
    for L in np.unique(lengths).tolist():
        sel = np.flatnonzero(lengths == L)
        links = base.route_links[base.route_ptr[order[sel]][:, None] + np.arange(L)]
        verts = np.concatenate([t.link_src[links[:, :1]], t.link_dst[links]], axis=1).tolist()
        route[sel] = [",".join(map(str, v)) for v in verts]
    ops = [f'"{name}"' for name in OPS]
    return [f"[{r},{s},{d},{ops[o]},[{v}]]" for r, s, d, o, v in
            zip(base.round[order].tolist(), base.src[order].tolist(), base.dst[order].tolist(),
                base.op[order].tolist(), route.tolist())]


def read_certificate(path_or_data) -> Certificate:
    """Read and structurally validate a certificate (claims are *not* checked here).

    Versions 1 and 2; a gzip-compressed file is read through the bounded decompressor, the certificate
    limit holding for its decompressed text (:func:`synth.fileio.read_capped`).  In a version 2 file an
    unknown key (at the top, in ``chunking``, ``base_schedule``, a component or a tree) is an error.
    """
    isinstance(path_or_data, dict) or check_path(path_or_data, "path_or_data")
    data = (read_json(path_or_data, LIMITS["certificate"], gunzip=True) if not isinstance(path_or_data, dict)
            else path_or_data)
    if data.get("format") != FORMAT:
        raise FileFormatError(f"not a synth certificate (format {str(data.get('format'))[:40]!r})")
    version = data.get("version")
    if not _is_int(version) or version not in VERSIONS:
        raise FileFormatError(f"certificate version {str(version)[:40]!r} is not supported "
                              f"(this reads {' and '.join(map(str, VERSIONS))})")
    if version >= 2:
        known_keys(data, TOP_KEYS_4 if version >= 4 else TOP_KEYS, "certificate")
        if isinstance(data.get("chunking"), dict):
            known_keys(data["chunking"], CHUNKING_KEYS, "chunking")
    for key in ("topology", "group", "base_schedule", "chunking"):
        if key not in data:
            raise FileFormatError(f"certificate lacks '{key}'")
    for key in ("claims", "solver", "provenance"):
        if not isinstance(data.get(key, {}), dict):
            raise FileFormatError(f"certificate '{key}' must be an object")
    elements = data["chunking"].get("elements") if isinstance(data["chunking"], dict) else None
    if not _is_int(elements) or elements < 1:
        raise FileFormatError("chunking.elements must be a positive integer")
    counts = base_shape(data["base_schedule"], version)
    check_declared_size(data["topology"], counts)
    try:
        topology = build_topology(data["topology"])
        group = named_group(topology, data["group"])
    except SynthError as exc:
        raise FileFormatError(f"certificate: {exc}") from None
    base = base_from_json(topology, data["base_schedule"], version)
    hint = images_hint(topology, data["base_schedule"], version)
    collective, owner = collective_from_json(data, base.n_components)
    if collective != ALLREDUCE:
        try:
            base = replace(base, collective=collective, owner=owner)
        except ScheduleError as exc:
            raise FileFormatError(f"certificate: {exc}") from None
    dropped = _dropped(topology, data.get("dropped", []), collective)
    return Certificate(topology, group, base, elements, data.get("claims", {}), data.get("solver", {}),
                       data.get("provenance", {}), hint, dropped)


def _dropped(topology, data, collective: str) -> tuple:
    """A version 4 file's ``dropped`` chips: sorted distinct compute vertices of an allreduce's topology, which
    the network without them keeps connected."""
    if not isinstance(data, list) or len(data) > MAX_FAILURES or not all(_is_int(v) for v in data):
        raise FileFormatError(f"dropped must be a list of at most {MAX_FAILURES} vertex ids")
    if data != sorted(set(data)) or not all(0 <= v < topology.n_vertices and topology.is_compute[v] for v in data):
        raise FileFormatError("dropped must list distinct compute vertices of the topology, in increasing order")
    if data and collective != ALLREDUCE:
        raise FileFormatError(f"only an allreduce drops chips, not a {collective}")
    try:
        without_nodes(topology, data)
    except SynthError as exc:
        raise FileFormatError(f"certificate: dropped: {exc}") from None
    return tuple(data)


def check_declared_size(spec, counts) -> None:
    """Check the topology ``spec`` names against the schedule, before building either.

    Every component is an allreduce of one chunk over all ``p`` compute vertices, and each of
    them but one must receive at least once, so a component has at least ``p - 1`` transmissions.
    With the size caps of :func:`synth.topology.check_size` this bounds the work by the file.

    Raises
    ------
    FileFormatError
        If the topology is over the caps or too large for the schedule.
    """
    size = spec_size(spec)
    if size is None:
        return
    V, E, p = size
    try:
        check_size(f"the certificate's {spec.get('kind')}", V, E)
    except SynthError as exc:
        raise FileFormatError(f"certificate: {exc}") from None
    if p is not None and counts and p - 1 > min(counts):
        c = counts.index(min(counts))
        raise FileFormatError(f"certificate: component {c} has {counts[c]} transmissions but its topology has "
                              f"{p} compute nodes; an allreduce needs at least {p - 1}")
