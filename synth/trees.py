"""Solved k-hop trees: solve with :mod:`synth.models.khop`, cache on disk, build base schedules.

A solve is keyed by the torus shape, the depth bound and the solver settings
(solver, time limit, seed); its tree and the solver's claims are stored as
JSON in the cache directory (``$SYNTH_CACHE_DIR``, else
``$XDG_CACHE_HOME/synth``, else ``~/.cache/synth``), so asking again is
instant.  Only completed solves are cached (a solve cut short by Ctrl-C is
not), and an entry is untrusted data when read: the tree is re-checked (spanning,
depth, weight), the lower bound is re-derived from the stored dual through the
checker's code (:func:`synth.dualbound.khop_dual_bound`, which also covers the
Steiner and cone-counting bounds), the status and gap are recomputed from the two,
and an entry that is damaged, inconsistent or fails its checksum is ignored and
solved again.

Status.  ``"optimal"`` when the weight meets the bound ``synth check`` re-derives;
:data:`SOLVER_CLAIM` (``"optimal (solver claim)"``) when only the solver's MIP proved
it (``solver_bound``, which no checker can re-derive); else ``"feasible"``.

Examples
--------
>>> from synth.torus import parse_torus
>>> rec = khop_tree(parse_torus("4x4"), 2, time_limit=10, cache=False)
>>> rec.status, rec.weight, rec.depth
('optimal', 18, 2)
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from synth._version import __version__
from synth.errors import SynthError
from synth.fileio import write_atomic
from synth.schedule import forest_depths, tree_schedule

__all__ = ["TreeRecord", "khop_tree", "tree_base", "cache_dir", "tighten", "start_tree", "SOLVER_CLAIM"]

#: The status of a tree whose optimality only the solver's MIP proved: a claim, not re-derivable.
SOLVER_CLAIM = "optimal (solver claim)"


@dataclass(frozen=True)
class TreeRecord:
    """A k-hop tree, the bound ``synth check`` re-derives for it, and what the solver claims beyond that.

    ``lower_bound`` is the bound of ``dual`` (re-derived by :mod:`synth.dualbound` when the
    record comes from the cache; ``synth check`` re-derives it from the certificate);
    ``gap`` is ``(weight - lower_bound) / weight``.  ``solver_bound`` is the solver's own
    bound when it is stronger (a MIP proof), a claim only; ``status`` is ``"optimal"``,
    :data:`SOLVER_CLAIM` or ``"feasible"`` (module docstring).  ``interrupted``: the solve
    was cut short by Ctrl-C (not cached).
    """

    shape: tuple
    k: int
    parent: np.ndarray
    depth: int
    weight: int
    lower_bound: float
    gap: float
    status: str
    seconds: float
    solver: str
    bound_method: str
    time_limit: float
    seed: int
    cached: bool = False
    dual: dict | None = None
    start_weight: int | None = None      # W of the tree the solve started from (``--start``), if any
    solver_bound: int | None = None      # the solver's bound when above lower_bound (MIP): a claim
    interrupted: bool = False

    def solver_claims(self) -> dict:
        """The certificate's ``solver`` section.

        ``synth check`` takes these as the solver's claims, except ``dual_bound`` (when
        the solve kept one): a dual of the layered LP from which the checker re-derives
        a lower bound itself (:mod:`synth.dualbound`), the claim ``weight_lower_bound``,
        which equals ``lower_bound`` here.  ``solver_lower_bound`` (when present) is the
        solver's stronger, unchecked bound; ``status`` says :data:`SOLVER_CLAIM` when only it
        proves the tree optimal.
        """
        out = {"model": "synth.models.khop", "status": self.status, "depth_bound": self.k,
               "weight": self.weight, "lower_bound": self.lower_bound, "gap": round(self.gap, 6),
               "bound_method": self.bound_method, "solver": self.solver, "time_limit": self.time_limit,
               "seed": self.seed, "seconds": round(self.seconds, 3)}
        if self.solver_bound is not None:
            out["solver_lower_bound"] = self.solver_bound
        if self.interrupted:
            out["interrupted"] = True
        if self.start_weight is not None:
            out["start_weight"] = self.start_weight
        if self.dual is not None:
            out["dual_bound"] = self.dual
        return out


def cache_dir() -> Path:
    if os.environ.get("SYNTH_CACHE_DIR"):
        return Path(os.environ["SYNTH_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "synth"


def _key(t, k, solver, time_limit, seed) -> str:
    """The cache entry's name: the solve's inputs and the solver's revision."""
    from synth.models.khop import SOLVER_REVISION

    shape = "x".join(map(str, t.shape))
    return f"khop-torus-{shape}-k{k}-{solver}-t{time_limit:g}-s{seed}-r{SOLVER_REVISION}.json"


def _tree_weight(t, parent):
    kids = np.flatnonzero(parent >= 0)
    return int(t.dist(kids, parent[kids]).sum())


def _status(weight, lower_bound, solver_bound):
    """``(status, gap)`` of a tree from the re-derived bound and the solver's claimed bound (or None)."""
    if weight <= math.ceil(lower_bound - 1e-9):
        return "optimal", 0.0
    gap = (weight - lower_bound) / weight
    if solver_bound is not None and weight <= math.ceil(solver_bound - 1e-9):
        return SOLVER_CLAIM, gap
    return "feasible", gap


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x) -> bool:
    return (_is_int(x) or isinstance(x, float)) and math.isfinite(x)


def _fresh_record(t, k, res, time_limit, seed, start_weight):
    """The record of a solve just run: the bound its dual proves, the solver's stronger bound as a claim."""
    parent = np.asarray(res.parent, dtype=np.int64)
    weight = int(res.weight)
    dual = res.dual if isinstance(res.dual, dict) else None
    claimed = dual.get("bound") if dual is not None else None
    if dual is not None and _is_number(claimed):
        lb = min(math.ceil(claimed - 1e-9), weight)     # synth check re-derives it (solve: ``valid``)
        dual = {**dual, "bound": lb}
    else:                                               # no dual: only W >= p - 1 (every edge costs >= 1)
        dual, lb = None, t.n_vertices - 1
    solver_lb = float(res.lower_bound)
    solver_bound = min(math.ceil(solver_lb - 1e-9), weight) if math.isfinite(solver_lb) else None
    solver_bound = solver_bound if solver_bound is not None and solver_bound > lb else None
    status, gap = _status(weight, lb, solver_bound)
    return TreeRecord(tuple(t.shape), k, parent, int(res.depth), weight, lb, gap, status, float(res.seconds),
                      str(res.solver), str(res.bound_method), float(time_limit), int(seed), dual=dual,
                      start_weight=start_weight, solver_bound=solver_bound,
                      interrupted=bool(getattr(res, "interrupted", False)))


def _digest(data: dict) -> str:
    """sha256 of an entry's canonical JSON (its ``sha256`` field left out): catches damage, not forgery."""
    body = {key: v for key, v in data.items() if key != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _entry(t, rec: TreeRecord) -> dict:
    """The cache entry of a record.  ``status``, ``lower_bound`` and ``gap`` are for people: never read back."""
    data = {"synth": __version__, "shape": list(t.shape), "k": rec.k, "parent": rec.parent.tolist(),
            "weight": rec.weight, "dual": rec.dual, "solver_bound": rec.solver_bound, "seconds": rec.seconds,
            "solver": rec.solver, "bound_method": rec.bound_method, "time_limit": rec.time_limit, "seed": rec.seed,
            "status": rec.status, "lower_bound": rec.lower_bound, "gap": rec.gap}
    data["sha256"] = _digest(data)
    return data


def _max_entry_bytes(t) -> int:
    """An entry larger than this is not one of ours (the LP's duals: about 250 bytes per vertex on 32x32)."""
    return max(1 << 20, 4096 * t.n_vertices)


def _read_cached(path, t, k, time_limit, seed):
    """The record of the cache entry at ``path``, or None when it is unreadable, damaged or inconsistent.

    Nothing in it is trusted: the parent array must be a spanning tree of depth ``<= k``
    of the stated weight, the dual's bound is re-derived (:func:`synth.dualbound.khop_dual_bound`)
    and must reach what the entry stores, the solver's claimed bound must lie between that
    bound and the weight, and status and gap are recomputed; the entry's own ``status``,
    ``lower_bound`` and ``gap`` are not read.
    """
    from synth.dualbound import khop_dual_bound

    try:
        path = Path(path)
        if path.stat().st_size > _max_entry_bytes(t):
            return None
        data = json.loads(path.read_bytes())
        if not isinstance(data, dict) or data.get("sha256") != _digest(data):
            return None
        V = t.n_vertices
        raw, dual, sb = data["parent"], data["dual"], data["solver_bound"]
        seconds, solver, method = data["seconds"], data["solver"], data["bound_method"]
        if (data["shape"] != list(t.shape) or data["k"] != k or not _is_int(data["k"])
                or data["time_limit"] != time_limit or data["seed"] != seed or not _is_int(data["seed"])
                or not isinstance(raw, list) or len(raw) != V or not all(_is_int(x) for x in raw)
                or not isinstance(dual, dict) or not _is_number(dual.get("bound"))
                or not (sb is None or _is_int(sb)) or not _is_number(seconds) or seconds < 0
                or not isinstance(solver, str) or not isinstance(method, str)
                or len(solver) + len(method) > 10_000 or not _is_int(data["weight"])):
            return None
        parent = np.asarray(raw, dtype=np.int64)
        if parent[0] != -1 or parent[1:].min(initial=0) < 0 or parent.max() >= V:
            return None
        depth = int(forest_depths(t, parent, [0]).max())
        weight = _tree_weight(t, parent)
        if depth > k or weight != data["weight"]:
            return None
        lb = math.ceil(dual["bound"] - 1e-9)
        if khop_dual_bound(t, k, dual).bound < lb or lb > weight:
            return None                 # the dual does not prove what the entry says it does
        if sb is not None and not lb < sb <= weight:
            if sb > weight:
                return None             # no valid bound exceeds a tree's weight
            sb = None
        status, gap = _status(weight, lb, sb)
        return TreeRecord(tuple(t.shape), k, parent, depth, weight, lb, gap, status, float(seconds), solver, method,
                          float(time_limit), int(seed), cached=True, dual={**dual, "bound": lb}, solver_bound=sb)
    except (OSError, ValueError, KeyError, TypeError, OverflowError, IndexError, RecursionError, MemoryError,
            SynthError):
        return None             # an entry we cannot read is solved again


def start_tree(t, path) -> np.ndarray:
    """The parent array of the k-hop tree in a certificate, to start a solve from (``synth solve --start``).

    The certificate is read as it is (run ``synth check`` to verify it); the tree must
    be a spanning tree of the torus ``t`` rooted at vertex 0, which :func:`khop_tree`
    checks again against the depth bound.

    Raises
    ------
    SynthError
        If the file is unreadable, is for another topology, or holds no single rooted tree.
    """
    from synth.certificate import read_certificate
    from synth.schedule import REDUCE

    try:
        cert = read_certificate(path)
    except (OSError, ValueError, SynthError) as exc:
        raise SynthError(f"--start {path}: cannot read the certificate ({exc})") from None
    if cert.topology.name != t.name:
        raise SynthError(f"--start {path}: the certificate is for {cert.topology.name}, not {t.name}")
    b = cert.base
    red = (b.component == 0) & (b.op == REDUCE)
    parent = np.full(t.n_vertices, -1, dtype=np.int64)
    src, dst = b.src[red].astype(np.int64), b.dst[red].astype(np.int64)
    parent[src] = dst
    if np.unique(src).size != src.size or (parent < 0).sum() != 1 or parent[0] != -1:
        raise SynthError(f"--start {path}: the certificate's first component is not one tree rooted at vertex 0")
    return parent


def khop_tree(t, k: int, *, time_limit: float = 60.0, seed: int = 0, solver: str = "auto", threads: int = 1,
              progress=None, cache: bool = True, start=None) -> TreeRecord:
    """The k-hop tree for torus ``t`` and depth bound ``k``, from the cache or a fresh solve.

    The solver gets ``time_limit`` less a reserve (3 %, at least 1 s) for lifting and
    checking the schedule, so that ``synth solve --time-limit S`` ends within ``S``.
    ``start`` (a parent array, e.g. from :func:`start_tree`) is the solve's first
    incumbent, so the result is never heavier; such a solve bypasses the cache, as do
    ``k = 1`` and ``k >= H`` (solved at once).  A solve cut short by Ctrl-C is returned
    (``interrupted``) but not cached; a cache entry is re-checked and its bound
    re-derived when read (module docstring).
    """
    from synth.models.khop import solve_khop

    start_weight = None
    if start is not None:
        cache = False
        start = np.asarray(start, dtype=np.int64)
        try:
            depth = int(forest_depths(t, start, [0]).max())
        except SynthError as exc:
            raise SynthError(f"the start tree is not a spanning tree rooted at 0: {exc}") from None
        if depth > k:
            raise SynthError(f"the start tree has depth {depth}, more than the depth bound {k}")
        start_weight = _tree_weight(t, start)
    if k == 1 or k >= t.diameter:
        cache = False           # the star or the BFS tree: solved at once, cheaper than reading an entry back
    path = cache_dir() / _key(t, k, solver, time_limit, seed)
    if cache and path.exists():
        rec = _read_cached(path, t, k, float(time_limit), int(seed))
        if rec is not None:
            if progress:
                progress(f"k={k}: cached tree, W = {rec.weight} ({rec.status})")
            return rec
    # the solve leaves room for lifting and checking, so the whole command fits in time_limit
    reserve = min(max(1.0, 0.03 * time_limit), 0.5 * time_limit)
    res = solve_khop(t, k, time_limit=time_limit - reserve, seed=seed, solver=solver, threads=threads,
                     progress=progress, start=start)
    if res.parent is None or res.status in ("infeasible", "unknown"):
        raise SynthError(f"no tree of depth <= {k} found on {t.name} ({res.status})")
    rec = _fresh_record(t, k, res, time_limit, seed, start_weight)
    # a solve cut short (Ctrl-C) is not cached: its settings would not reproduce it
    if cache and not rec.interrupted:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(_entry(t, rec)))
        except (OSError, SynthError):
            pass  # an unwritable cache only costs time
    return rec


def _stronger(a, b):
    """Of two stored duals (either may be None), the one proving more."""
    if a is None or b is None:
        return a or b
    return b if b.get("bound", 0) > a.get("bound", 0) else a


def tighten(records) -> list:
    """Make a set of solves of one torus consistent across depth bounds.

    For depth bounds ``a < b``, a tree of depth ``<= a`` is also a tree of depth
    ``<= b``, and a bound valid at ``b`` is valid at ``a`` (``W*(a) >= W*(b)``).  So a
    time-limited solve at ``b`` that ended heavier than the tree found at ``a``
    takes that tree, and a weaker bound at ``a`` takes the one proven at ``b`` (with its
    dual, which proves it at ``a`` too), as does the solver's claimed bound;
    ``bound_method`` and ``solver`` say where each came from and the status and gap
    are recomputed (``"optimal"`` when the weight meets the rounded-up bound,
    :data:`SOLVER_CLAIM` when only the solver's claimed bound does).

    Parameters
    ----------
    records : sequence of TreeRecord
        Solves of one torus, any depth bounds.

    Returns
    -------
    list of TreeRecord
        In the order given.

    Examples
    --------
    >>> import numpy as np
    >>> r = lambda k, w, lb: TreeRecord((4, 4), k, np.zeros(16, np.int64), k, w, lb, 0.0, "feasible", 1.0,
    ...                                 "auto", "LP", 10.0, 0)
    >>> [(x.k, x.weight, x.lower_bound, x.status) for x in tighten([r(2, 20, 17.0), r(3, 21, 18.0)])]
    [(2, 20, 18.0, 'feasible'), (3, 20, 18.0, 'feasible')]
    """
    import dataclasses

    order = sorted(range(len(records)), key=lambda i: records[i].k)
    out = list(records)
    for a, b in zip(order, order[1:]):          # lighter trees flow to larger depth bounds
        lo, hi = out[a], out[b]
        if lo.weight < hi.weight:
            out[b] = dataclasses.replace(hi, parent=lo.parent, depth=lo.depth, weight=lo.weight,
                                         solver=f"{lo.solver} (tree of the depth-{lo.k} solve)")
    for a, b in zip(order[::-1][1:], order[::-1]):  # stronger bounds flow to smaller depth bounds
        lo, hi = out[a], out[b]
        if hi.lower_bound > lo.lower_bound:
            lo = out[a] = dataclasses.replace(lo, lower_bound=hi.lower_bound, dual=_stronger(lo.dual, hi.dual),
                                              bound_method=f"bound of the depth-{hi.k} solve: {hi.bound_method}")
        if hi.solver_bound is not None and hi.solver_bound > max(lo.solver_bound or -math.inf, lo.lower_bound):
            out[a] = dataclasses.replace(lo, solver_bound=hi.solver_bound)
    for i, rec in enumerate(out):
        sb = rec.solver_bound if rec.solver_bound is not None and rec.solver_bound > rec.lower_bound else None
        status, gap = _status(rec.weight, rec.lower_bound, sb)
        out[i] = dataclasses.replace(rec, gap=gap, status=status, solver_bound=sb)
    return out


def tree_base(t, rec: TreeRecord):
    """The base schedule of a k-hop tree: ``2h`` rounds, each edge on the torus's dimension-order route."""
    return tree_schedule(t, rec.parent, 0, route=t.route,
                         label=f"k-hop tree, depth bound {rec.k}, depth {rec.depth}, W = {rec.weight}")
