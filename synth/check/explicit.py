"""The explicit schedule file: every transmission spelled out, for any tool to verify.

Format ``synth-explicit``, version 1, JSON Lines.  The first line is the header::

    {"format": "synth-explicit", "version": 1, "topology": {...}, "vertices": V,
     "compute": [ids], "links": [[u, v], ...], "chunk_elements": [e_0, ...], "rounds": S,
     "bandwidth": [GB/s, ...], "latency": [µs, ...]}     # optional, parallel to "links"

``bandwidth`` (default 1 per link) and ``latency`` (default 0) are present when the topology's links
have them; when the header names a built-in topology they must be that topology's.

then one line per transmission, sorted by round::

    {"round": s, "chunk": c, "src": u, "dst": v, "route": [u, ..., v], "op": "reduce" | "copy"}

Rounds are numbered from 1; a route is a vertex list along directed links of
the header.  Semantics are those of docs/spec.md §1 (:mod:`synth.schedule`).
The header may name the collective: ``"collective": "reduce-scatter" | "allgather"``
with ``"chunk_owner": [v_0, ...]`` (the owner vertex of every chunk); absent, it is an
allreduce (every older file reads as before).  The chunks a node owns then sum to the same
block size for every compute node (``N / p``: the layout of :mod:`synth.schedule.data`).
The header may carry ``"claims"`` (as in certificates); ``synth check``
re-derives them.  Every ``chunk_elements`` entry is a positive integer, and
``rounds`` is the last round with a transmission (see :func:`read_explicit`
for the limits a reader enforces).
"""

from __future__ import annotations

import json
import os
from array import array

import numpy as np

from synth.errors import FileFormatError, InvalidScheduleError, SynthError, check_instance, check_path
from synth.fileio import LIMITS, loads_strict, open_regular, read_line, write_atomic
from synth.topology.failures import failed_step
from synth.topology.spec import build_topology, spec_size
from synth.schedule import ALLREDUCE, COLLECTIVES, OPS, Block, Schedule, positive_chunks
from synth.topology import Topology
from synth.topology.base import link_values

__all__ = ["FORMAT", "VERSION", "write_explicit", "read_explicit", "explicit_lines"]

FORMAT = "synth-explicit"
VERSION = 1


def explicit_lines(schedule: Schedule, chunk_elements, claims=None):
    """Yield the lines of the explicit file (header first)."""
    t = schedule.topology
    header = {"format": FORMAT, "version": VERSION, "topology": t.spec, **t.to_json(),
              "chunk_elements": [int(x) for x in chunk_elements], "rounds": int(schedule.n_rounds)}
    if schedule.collective != ALLREDUCE:
        header["collective"] = schedule.collective
        header["chunk_owner"] = [int(v) for v in schedule.owner.tolist()]
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
    """Write the explicit file atomically; refuse chunks of no element first (the reader refuses them)."""
    check_instance(schedule, "schedule", Schedule)
    check_path(path)
    positive_chunks(chunk_elements)
    write_atomic(path, _within_line_limits(path, explicit_lines(schedule, chunk_elements, claims)), kind="explicit")


def _within_line_limits(path, lines):
    """``lines``, refusing (before the file exists) a header or a transmission line :func:`read_explicit` refuses."""
    for i, line in enumerate(lines):
        cap = LIMITS["json"] if i == 0 else LIMITS["explicit-line"]
        if (len(line) if line.isascii() else len(line.encode("utf-8"))) > cap:
            raise FileFormatError(f"cannot write {path}: line {i + 1} would be longer than {cap >> 10} KiB, the "
                                  "limit for a line of an explicit file; nothing written")
        yield line


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _int_list(x) -> bool:
    return isinstance(x, list) and all(_is_int(v) for v in x)


def _header_topology(h) -> Topology:
    n, links, compute = h.get("vertices"), h.get("links"), h.get("compute")
    if not _is_int(n) or not _int_list(compute) or not isinstance(links, list) or not all(
            isinstance(pair, list) and len(pair) == 2 and _is_int(pair[0]) and _is_int(pair[1]) for pair in links):
        raise FileFormatError("explicit header needs integer 'vertices', 'compute' (integer ids) and 'links' "
                              "([[u, v], ...] of integer ids)")
    try:
        values = {key: link_values(h[key], len(links), key, key == "bandwidth")
                  for key in ("bandwidth", "latency") if key in h}
        generic = Topology.from_links("explicit", {"kind": "links"}, n, links, compute, **values)
    except SynthError as exc:
        raise FileFormatError(f"explicit header: {exc}") from None
    spec = h.get("topology")
    if isinstance(spec, dict) and spec.get("kind") == "links" and "links" in spec:
        return _same_links(spec, generic)
    if isinstance(spec, dict) and spec.get("kind") not in (None, "links"):
        size = spec_size(spec)
        damaged = "failed" in spec   # failures remove links: the healthy count is an upper bound
        if size is not None and (size[0] != n or (size[1] < len(links) if damaged else size[1] != len(links))):
            raise FileFormatError(f"explicit header: the topology names {size[0]} vertices and {size[1]} links, "
                                  f"the header lists {n} and {len(links)}")
        try:
            named = build_topology(spec)
        except SynthError as exc:
            raise FileFormatError(f"explicit header topology: {exc}") from None
        if named.n_vertices != n:
            raise FileFormatError(f"explicit header: the links listed are not those of {named.name}")
        return _same(named, generic)
    return generic


def _same_links(spec, generic) -> Topology:
    """The header's own topology (a ``links`` spec: a user graph), which must list what the header lists."""
    try:
        named = build_topology(spec)
    except SynthError as exc:
        raise FileFormatError(f"explicit header topology: {exc}") from None
    return _same(named, generic)


def _same(named, generic) -> Topology:
    """``named`` if the header's ``generic`` graph lists its links, compute vertices and link values."""
    if not (np.array_equal(named.link_src, generic.link_src) and np.array_equal(named.link_dst, generic.link_dst)
            and np.array_equal(named.compute, generic.compute)):
        raise FileFormatError(f"explicit header: the links listed are not those of {named.name}")
    for key in ("bandwidth", "latency"):
        if not np.array_equal(getattr(named, f"link_{key}"), getattr(generic, f"link_{key}")):
            raise FileFormatError(f"explicit header: the links' {key} list is not that of {named.name}")
    return named


def _row(line: bytes, where: str, rounds: int, n_chunks: int, n_vertices: int):
    """One transmission line, strictly typed: ``(round, op, chunk, route)``."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise FileFormatError(f"{where}: not UTF-8 text") from None
    row = loads_strict(text, where)
    if not isinstance(row, dict):
        raise FileFormatError(f"{where}: a transmission must be a JSON object")
    try:
        rnd, chunk, src, dst, op, route = (row[k] for k in ("round", "chunk", "src", "dst", "op", "route"))
    except KeyError as exc:
        raise FileFormatError(f"{where}: missing key {exc}") from None
    if not all(_is_int(x) for x in (rnd, chunk, src, dst)) or op not in OPS:
        raise FileFormatError(f"{where}: round, chunk, src, dst must be integers and op reduce or copy")
    if not _int_list(route) or len(route) < 2 or route[0] != src or route[-1] != dst:
        raise FileFormatError(f"{where}: route must be a list of integer vertex ids from src to dst")
    if not 1 <= rnd <= rounds or not 0 <= chunk < n_chunks:
        raise FileFormatError(f"{where}: round must lie in 1..{rounds} and chunk in 0..{n_chunks - 1}")
    if min(route) < 0 or max(route) >= n_vertices:
        raise FileFormatError(f"{where}: a route vertex lies outside 0..{n_vertices - 1}")
    return rnd, OPS.index(op), chunk, route


def read_explicit(path):
    """Read an explicit file: returns ``(schedule, chunk_elements, header)``.

    The file is streamed: at most ``LIMITS["explicit"]`` bytes in all, a header line of at most
    ``LIMITS["json"]``, transmission lines of at most ``LIMITS["explicit-line"]`` (:data:`synth.fileio.LIMITS`),
    each parsed strictly (:func:`synth.fileio.loads_strict`) and kept as packed int32
    arrays.  The header's counts are checked against the lines before anything of their
    size is made: ``rounds`` is the last round with a transmission and at most the number
    of transmissions, every chunk has a positive size and, since each chunk's allreduce
    needs at least ``p - 1`` transmissions, ``len(chunk_elements) * (p - 1)`` is at most
    the number of transmissions.

    Raises
    ------
    FileFormatError
        With the line number, for anything malformed.
    """
    check_path(path)
    with open_regular(path) as f:
        cap, header_cap, row_cap = LIMITS["explicit"], LIMITS["json"], LIMITS["explicit-line"]
        if os.fstat(f.fileno()).st_size > cap:
            raise FileFormatError(f"{path}: larger than {cap >> 20} MiB, the limit for explicit files")
        first = read_line(f, header_cap)
        if len(first) > header_cap:
            raise FileFormatError(f"{path}: line 1 is longer than {header_cap >> 10} KiB")
        try:
            header = loads_strict(first.decode("utf-8"), f"{path}, line 1")
        except UnicodeDecodeError:
            raise FileFormatError(f"{path}: line 1 is not a JSON header") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise FileFormatError(f"{path}: not a synth-explicit file")
        if header.get("version") != VERSION:
            raise FileFormatError(f"{path}: explicit format version {str(header.get('version'))[:40]!r} "
                                  "is not supported")
        sizes, rounds = header.get("chunk_elements"), header.get("rounds")
        if not _int_list(sizes) or not sizes or not _is_int(rounds) or rounds < 1:
            raise FileFormatError(f"{path}: header needs 'chunk_elements' (a non-empty list of integers) and "
                                  "'rounds' (a positive integer)")
        if min(sizes) < 1:
            c = int(np.argmin(sizes))
            raise FileFormatError(f"{path}: chunk {c} has {sizes[c]} elements; chunk_elements must be positive")
        try:
            t = _header_topology(header)
        except FileFormatError as exc:
            raise FileFormatError(f"{path}: {exc}") from None
        sizes = np.asarray(sizes, dtype=np.int64)
        V, C = t.n_vertices, int(sizes.size)
        groups = {}  # (round, op, route length) -> (chunks, flat route vertices, line numbers), packed int32
        n_rows, last, total = 0, 0, len(first)
        lineno = 1
        while True:
            line = read_line(f, row_cap)
            if not line:
                break
            lineno += 1
            total += len(line)
            if len(line) > row_cap:
                raise FileFormatError(f"{path}, line {lineno}: longer than {row_cap >> 10} KiB")
            if total > cap:
                raise FileFormatError(f"{path}: larger than {cap >> 20} MiB, the limit for "
                                      "explicit files")
            if not line.strip():
                continue
            rnd, op, chunk, route = _row(line, f"{path}, line {lineno}", rounds, C, V)
            g = groups.get((rnd, op, len(route) - 1))
            if g is None:
                g = groups[(rnd, op, len(route) - 1)] = (array("i"), array("i"), array("q"))
            g[0].append(chunk)
            g[1].extend(route)
            g[2].append(lineno)
            n_rows += 1
            last = max(last, rnd)
    if n_rows == 0:
        raise FileFormatError(f"{path}: no transmission lines")
    if rounds != last:
        raise FileFormatError(f"{path}: the header says {rounds} rounds but the last round with a transmission "
                              f"is {last}")
    if rounds > n_rows:
        raise FileFormatError(f"{path}: the header says {rounds} rounds for only {n_rows} transmissions")
    if C * max(t.n_compute - 1, 1) > n_rows:
        raise FileFormatError(f"{path}: {C} chunks over {t.n_compute} compute nodes need at least "
                              f"{C * max(t.n_compute - 1, 1)} transmissions, the file has {n_rows}")
    blocks = []
    for (rnd, op, L), (chunks, flat, lines) in sorted(groups.items()):
        verts = np.frombuffer(flat, dtype=np.int32).reshape(-1, L + 1).astype(np.int64)
        links = t.link_ids(verts[:, :-1], verts[:, 1:])
        if np.any(links < 0):
            i, k = np.argwhere(links < 0)[0]
            u, v = int(verts[i, k]), int(verts[i, k + 1])
            failed = failed_step(t, u, v)
            if failed:
                raise InvalidScheduleError(f"{path}, line {lines[i]}: route step {u}->{v} crosses {failed}: a "
                                           "false schedule")
            raise FileFormatError(f"{path}, line {lines[i]}: route step {u}->{v} is not a link of the header")
        blocks.append(Block(rnd, op, np.frombuffer(chunks, dtype=np.int32).copy(), links.astype(np.int32)))
    collective, owner = _header_collective(path, header, t, sizes)
    try:
        schedule = Schedule(t, C, rounds, tuple(blocks), collective, owner)
    except SynthError as exc:
        raise FileFormatError(f"{path}: {exc}") from None
    return schedule, sizes, header


def _header_collective(path, header, t, sizes):
    """``(collective, owners)`` of the header: absent is an allreduce; owners must give equal blocks."""
    collective = header.get("collective", ALLREDUCE)
    if collective not in COLLECTIVES:
        raise FileFormatError(f"{path}: collective must be one of {', '.join(COLLECTIVES)}, "
                              f"got {str(collective)[:40]!r}")
    owner = header.get("chunk_owner")
    if collective == ALLREDUCE:
        if owner is not None:
            raise FileFormatError(f"{path}: chunk_owner belongs to a reduce-scatter or allgather, not an allreduce")
        return collective, None
    if not _int_list(owner) or len(owner) != sizes.size:
        raise FileFormatError(f"{path}: a {collective} needs 'chunk_owner', one integer vertex id per chunk "
                              f"({sizes.size})")
    arr = np.asarray(owner, dtype=np.int64)
    if arr.min() < 0 or arr.max() >= t.n_vertices or not t.is_compute[arr].all():
        raise FileFormatError(f"{path}: chunk_owner names a vertex that is not a compute vertex")
    blocks = [0] * t.n_vertices  # exact Python sums: sizes go up to 2**53
    for v, x in zip(owner, sizes.tolist()):
        blocks[v] += x
    blocks = [blocks[v] for v in t.compute.tolist()]
    if min(blocks) != max(blocks):
        r = next(i for i, b in enumerate(blocks) if b != blocks[0])
        raise FileFormatError(f"{path}: the blocks of a {collective} are equal (N/p elements per node), but node "
                              f"{int(t.compute[r])} owns {int(blocks[r])} elements and node {int(t.compute[0])} "
                              f"{int(blocks[0])}")
    return collective, owner
