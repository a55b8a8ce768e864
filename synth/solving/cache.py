"""The on-disk cache of solved k-hop trees, whose entries are untrusted data when read.

A solve is keyed by the torus shape, the depth bound and the solver settings
(solver, time limit, seed) and the solver's revision (:func:`cache_key`); its tree and
the solver's claims are stored as JSON in :func:`cache_dir`, so asking again is instant.
An entry is re-checked when read (:func:`read_entry`): the tree (spanning, depth, weight),
the lower bound re-derived from the stored dual through the checker's code
(:func:`synth.check.bounds.khop_dual_bound`, which also covers the Steiner and cone-counting
bounds), the status and gap recomputed from the two; an entry that is damaged,
inconsistent, holds a field we never write or fails its checksum is ignored and solved again.
Its checksum is unkeyed (anyone can recompute it), so what a served entry gives is only what
the checker re-derives: the tree and its dual's bound.  The solver's own claims stored with it
(its MIP bound, its account of the bound, its time) are not served, since nothing can tell a
forged one from a real one; a fresh solve makes them again.  Entries are read through
:func:`synth.fileio.read_capped`: a regular file only (a FIFO or a symlink to ``/dev/zero`` is
refused without blocking), at most a size cap.  An interrupted solve's entry
(:func:`interrupted_path`) is marked so and never served as an answer.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> cache_key(parse_torus("4x4"), 2, "auto", 10.0, 0)  # doctest: +ELLIPSIS
'khop-torus-4x4-k2-auto-t10-s0-r....json'
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from pathlib import Path

import numpy as np

from synth._version import __version__
from synth.check.bounds import DUAL_FIELDS, khop_dual_bound
from synth.errors import SynthError
from synth.fileio import check_writable, printable, read_capped, write_atomic
from synth.schedule.forest import forest_depths, forest_weight
from synth.solving.record import TreeRecord, _is_int, _is_number, tree_status

__all__ = ["cache_dir", "cache_key", "cache_writable", "entry", "entry_record", "interrupted_path", "read_entry",
           "write_entry"]


def cache_dir() -> Path:
    """``$SYNTH_CACHE_DIR``, else ``$XDG_CACHE_HOME/synth``, else ``~/.cache/synth``."""
    if os.environ.get("SYNTH_CACHE_DIR"):
        return Path(os.environ["SYNTH_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "synth"


def cache_key(t, k, solver, time_limit, seed) -> str:
    """The cache entry's name: the solve's inputs and the solver's revision."""
    # read at call time: importing the models costs start-up time (and tests bump the revision)
    from synth.models.khop import SOLVER_REVISION

    shape = "x".join(map(str, t.shape)) if _lattice(t) is None else _lattice(t).replace(",", "_").replace(";", "-")
    kind = "torus" if _lattice(t) is None else "lattice"
    return f"khop-{kind}-{shape}-k{k}-{solver}-t{time_limit:g}-s{seed}-r{SOLVER_REVISION}.json"


def _lattice(t):
    """A lattice torus's wrap lattice (its Hermite basis, rows split by ``;``), None on a plain torus: a twisted
    4x4x8 and the plain one share their shape, never their entries."""
    basis = getattr(t, "basis", None)
    return None if basis is None else ";".join(",".join(map(str, row)) for row in basis)


def _digest(data: dict) -> str:
    """sha256 of an entry's canonical JSON (its ``sha256`` field left out): catches damage, not forgery."""
    body = {key: v for key, v in data.items() if key != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def entry(t, rec: TreeRecord) -> dict:
    """The cache entry of a record.  ``status``, ``lower_bound`` and ``gap`` are for people: never read back."""
    data = {"synth": __version__, "shape": list(t.shape), "k": rec.k, "parent": rec.parent.tolist(),
            "weight": rec.weight, "dual": rec.dual, "solver_bound": rec.solver_bound, "seconds": rec.seconds,
            "solver": rec.solver, "bound_method": rec.bound_method, "time_limit": rec.time_limit, "seed": rec.seed,
            "status": rec.status, "lower_bound": rec.lower_bound, "gap": rec.gap}
    if _lattice(t) is not None:
        data["lattice"] = _lattice(t)
    if rec.interrupted:
        data["interrupted"] = True      # read back: such an entry is never served as an answer
    data["sha256"] = _digest(data)
    return data


def _max_entry_bytes(t) -> int:
    """An entry larger than this is not one of ours (the LP's duals: about 250 bytes per vertex on 32x32)."""
    return max(1 << 20, 4096 * t.n_vertices)


#: every field :func:`entry` writes; an entry holding any other is not one of ours
_FIELDS = frozenset({"synth", "shape", "k", "parent", "weight", "dual", "solver_bound", "seconds", "solver",
                     "bound_method", "time_limit", "seed", "status", "lower_bound", "gap", "lattice", "interrupted",
                     "sha256"})


def read_entry(path, t, k, time_limit, seed, solver):
    """The record of the cache entry at ``path``, or None when it is unreadable, damaged or inconsistent.

    Nothing in it is trusted: the parent array must be a spanning tree of depth ``<= k``
    of the stated weight, the dual's bound is re-derived (:func:`synth.check.bounds.khop_dual_bound`)
    and must reach what the entry stores, the solver's claimed bound must lie between that
    bound and the weight, and status and gap are recomputed; the entry's own ``status``,
    ``lower_bound`` and ``gap`` are not read, and the solver's claims are not served
    (:func:`entry_record`).
    """
    try:
        path = Path(path)
        # a regular file only, at most the cap read, never blocking (a FIFO); the fields for people
        # (status, lower bound, gap) are never read, so json's leniency there costs nothing
        data = json.loads(read_capped(path, _max_entry_bytes(t)))
    except (OSError, ValueError, RecursionError, MemoryError, SynthError):
        return None             # an entry we cannot read is solved again
    return entry_record(data, t, k, time_limit, seed, solver)


def entry_record(data, t, k, time_limit, seed, solver, *, claims=False):
    """The record of an entry's parsed JSON ``data`` (a file's, or one a campaign worker sent back), or None
    when it is damaged or inconsistent; re-checked as :func:`read_entry` says.

    With ``claims=False`` (a file) the record holds only what the checker re-derives: no solver bound (the
    status is ``"optimal"`` only when the dual's bound meets the weight), ``bound_method`` naming the
    re-derived dual, ``seconds`` the time this re-check took.  ``claims=True`` keeps the solver's claims, for
    an entry that a solve just made for this caller (a campaign worker's answer).
    """
    t0 = time.monotonic()
    try:
        if not isinstance(data, dict) or data.get("sha256") != _digest(data) or not _FIELDS.issuperset(data):
            return None
        V = t.n_vertices
        raw, dual, sb = data["parent"], data["dual"], data["solver_bound"]
        seconds, method = data["seconds"], data["bound_method"]
        if (data["shape"] != list(t.shape) or data.get("lattice") != _lattice(t) or data["k"] != k or not _is_int(data["k"])
                or data["time_limit"] != time_limit or data["seed"] != seed or not _is_int(data["seed"])
                or not isinstance(data["solver"], str) or len(data["solver"]) > 10_000
                or (data["solver"] != solver and not claims)
                or not isinstance(raw, list) or len(raw) != V or not all(_is_int(x) for x in raw)
                or not isinstance(dual, dict) or not _is_number(dual.get("bound"))
                or not set(DUAL_FIELDS.get(dual.get("kind"), ())).issuperset(dual)
                or not (sb is None or _is_int(sb)) or not _is_number(seconds) or seconds < 0
                or not isinstance(method, str) or len(method) > 10_000 or not _is_int(data["weight"])
                or not isinstance(data.get("interrupted", False), bool)):
            return None
        parent = np.asarray(raw, dtype=np.int64)
        if parent[0] != -1 or parent[1:].min(initial=0) < 0 or parent.max() >= V:
            return None
        depth = int(forest_depths(t, parent, [0]).max())
        weight = forest_weight(t, parent)
        if depth > k or weight != data["weight"]:
            return None
        lb = math.ceil(dual["bound"] - 1e-9)
        if khop_dual_bound(t, k, dual).bound < lb or lb > weight:
            return None                 # the dual does not prove what the entry says it does
        if sb is not None and not lb < sb <= weight:
            if sb > weight:
                return None             # no valid bound exceeds a tree's weight
            sb = None
        if claims:                      # a worker's answer: k = 1 and k >= H name their closed form ("star", "bfs")
            solver = data["solver"]
        else:                           # anyone can forge these with the checksum: only the re-derived is served
            sb, method = None, f"the cached tree's dual ({dual['kind']}), re-derived by synth check's code"
            seconds = time.monotonic() - t0
        status, gap = tree_status(weight, lb, sb)
        return TreeRecord(tuple(t.shape), k, parent, depth, weight, lb, gap, status, float(seconds), solver, method,
                          float(time_limit), int(seed), cached=True, dual={**dual, "bound": lb}, solver_bound=sb,
                          interrupted=data.get("interrupted", False))
    except (OSError, ValueError, KeyError, TypeError, OverflowError, IndexError, RecursionError, MemoryError,
            SynthError):
        return None             # an entry we cannot read is solved again


def write_entry(path, t, rec: TreeRecord) -> str | None:
    """Store ``rec`` at ``path`` (atomically); None, or why it could not (a one-line reason, never raised).

    An unwritable cache costs time, not the result: the caller says so (the next run solves again).
    """
    try:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(entry(t, rec)), kind="json")
        return None
    except (OSError, SynthError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return f"the solve cache {printable(str(Path(path).parent))} cannot be written ({printable(reason)})"


def cache_writable() -> bool:
    """Whether :func:`write_entry` can store entries in :func:`cache_dir` now (the folder is created if needed)."""
    try:
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        check_writable(folder / "probe.json")
        return True
    except (OSError, SynthError):
        return False


def interrupted_path(path) -> Path:
    """Where the entry of an interrupted solve goes: beside ``path``, never read as an answer.

    >>> interrupted_path("/c/khop-torus-4x4-k2-auto-t10-s0-r3.json").name
    'khop-torus-4x4-k2-auto-t10-s0-r3.interrupted.json'
    """
    path = Path(path)
    return path.with_name(path.stem + ".interrupted" + path.suffix)
