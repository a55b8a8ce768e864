"""The explicit schedule file: every transmission spelled out, for any tool to verify.

Format ``synth-explicit``, version 1, JSON Lines.  The first line is the header::

    {"format": "synth-explicit", "version": 1, "topology": {...}, "vertices": V,
     "compute": [ids], "links": [[u, v], ...], "chunk_elements": [e_0, ...], "rounds": S}

then one line per transmission, sorted by round::

    {"round": s, "chunk": c, "src": u, "dst": v, "route": [u, ..., v], "op": "reduce" | "copy"}

Rounds are numbered from 1; a route is a vertex list along directed links of
the header.  Semantics are those of SPEC section 1 (:mod:`synth.schedule`).
The header may carry ``"claims"`` (as in certificates); ``synth check``
re-derives them.
"""

from __future__ import annotations

import json

import numpy as np

from synth.errors import FileFormatError, SynthError
from synth.fileio import write_atomic
from synth.registry import build_topology
from synth.schedule import OPS, Block, Schedule
from synth.topology import Topology

__all__ = ["FORMAT", "VERSION", "write_explicit", "read_explicit", "explicit_lines"]

FORMAT = "synth-explicit"
VERSION = 1


def explicit_lines(schedule: Schedule, chunk_elements, claims=None):
    """Yield the lines of the explicit file (header first)."""
    t = schedule.topology
    header = {"format": FORMAT, "version": VERSION, "topology": t.spec, **t.to_json(),
              "chunk_elements": [int(x) for x in chunk_elements], "rounds": int(schedule.n_rounds)}
    if claims:
        header["claims"] = claims
    yield json.dumps(header, separators=(",", ":")) + "\n"
    for b in schedule.blocks:
        op = OPS[b.op]
        verts = np.concatenate([t.link_src[b.links[:, :1]], t.link_dst[b.links]], axis=1).tolist()
        for c, route in zip(b.chunk.tolist(), verts):
            yield (f'{{"round":{b.round},"chunk":{c},"src":{route[0]},"dst":{route[-1]},'
                   f'"route":{json.dumps(route, separators=(",", ":"))},"op":"{op}"}}\n')


def write_explicit(schedule: Schedule, chunk_elements, path, claims=None) -> None:
    """Write the explicit file atomically."""
    write_atomic(path, explicit_lines(schedule, chunk_elements, claims))


def _header_topology(h) -> Topology:
    try:
        n = int(h["vertices"])
        links = np.asarray(h["links"], dtype=np.int64).reshape(-1, 2)
        compute = np.asarray(h["compute"], dtype=np.int64)
    except (KeyError, TypeError, ValueError):
        raise FileFormatError("explicit header needs 'vertices', 'compute' and 'links' ([[u, v], ...])") from None
    try:
        generic = Topology.from_links("explicit", {"kind": "links"}, n, links, compute)
    except SynthError as exc:
        raise FileFormatError(f"explicit header: {exc}") from None
    spec = h.get("topology")
    if isinstance(spec, dict) and spec.get("kind") not in (None, "links"):
        try:
            named = build_topology(spec)
        except SynthError as exc:
            raise FileFormatError(f"explicit header topology: {exc}") from None
        if (named.n_vertices != n or not np.array_equal(named.link_src, generic.link_src)
                or not np.array_equal(named.link_dst, generic.link_dst)
                or not np.array_equal(named.compute, generic.compute)):
            raise FileFormatError(f"explicit header: the links listed are not those of {named.name}")
        return named
    return generic


def read_explicit(path):
    """Read an explicit file: returns ``(schedule, chunk_elements, header)``.

    Raises
    ------
    FileFormatError
        With the line number, for anything malformed.
    """
    try:
        f = open(path, encoding="utf-8")
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot open ({exc.strerror})") from None
    with f:
        try:
            header = json.loads(f.readline())
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise FileFormatError(f"{path}: line 1 is not a JSON header") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise FileFormatError(f"{path}: not a synth-explicit file")
        if header.get("version") != VERSION:
            raise FileFormatError(f"{path}: explicit format version {header.get('version')!r} is not supported")
        t = _header_topology(header)
        try:
            sizes = np.asarray(header["chunk_elements"], dtype=np.int64).ravel()
            rounds = int(header["rounds"])
        except (KeyError, TypeError, ValueError):
            raise FileFormatError(f"{path}: header needs 'chunk_elements' and 'rounds'") from None
        if sizes.size == 0 or np.any(sizes < 0) or rounds < 1:
            raise FileFormatError(f"{path}: chunk_elements must be non-negative and rounds positive")
        groups = {}
        for lineno, line in enumerate(f, start=2):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                rnd, chunk, src, dst, op = (row["round"], row["chunk"], row["src"], row["dst"], row["op"])
                route = row["route"]
                if not all(isinstance(x, int) for x in (rnd, chunk, src, dst)) or op not in OPS:
                    raise ValueError("round, chunk, src, dst must be integers and op reduce or copy")
                if not isinstance(route, list) or len(route) < 2 or route[0] != src or route[-1] != dst:
                    raise ValueError("route must be a vertex list from src to dst")
                if not 1 <= rnd <= rounds or not 0 <= chunk < sizes.size:
                    raise ValueError(f"round must lie in 1..{rounds} and chunk in 0..{sizes.size - 1}")
            except (json.JSONDecodeError, KeyError, TypeError, ValueError, UnicodeDecodeError) as exc:
                raise FileFormatError(f"{path}, line {lineno}: {exc}") from None
            groups.setdefault((rnd, OPS.index(op), len(route) - 1), []).append((chunk, route, lineno))
    blocks = []
    for (rnd, op, L), rows in sorted(groups.items()):
        verts = np.asarray([r[1] for r in rows], dtype=np.int64)
        links = t.link_ids(verts[:, :-1], verts[:, 1:])
        if np.any(links < 0):
            i, k = np.argwhere(links < 0)[0]
            raise FileFormatError(f"{path}, line {rows[i][2]}: route step {verts[i, k]}->{verts[i, k + 1]} "
                                  "is not a link of the header")
        blocks.append(Block(rnd, op, np.asarray([r[0] for r in rows], dtype=np.int32), links.astype(np.int32)))
    return Schedule(t, int(sizes.size), rounds, tuple(blocks)), sizes, header

