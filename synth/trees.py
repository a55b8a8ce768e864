"""Solved k-hop trees: solve with :mod:`synth.models.khop`, cache on disk, build base schedules.

A solve is keyed by the torus shape, the depth bound and the solver settings
(solver, time limit, seed); its tree and the solver's claims are stored as
JSON in the cache directory (``$SYNTH_CACHE_DIR``, else
``$XDG_CACHE_HOME/synth``, else ``~/.cache/synth``), so asking again is
instant.  A cached tree is re-checked (spanning, depth, weight) when read; a
damaged entry is ignored and solved again.

Examples
--------
>>> from synth.torus import parse_torus
>>> rec = khop_tree(parse_torus("4x4"), 2, time_limit=10, cache=False)
>>> rec.status, rec.weight, rec.depth
('optimal', 18, 2)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from synth import __version__
from synth.errors import SynthError
from synth.fileio import write_atomic
from synth.schedule import forest_depths, tree_schedule

__all__ = ["TreeRecord", "khop_tree", "tree_base", "cache_dir", "tighten", "start_tree"]


@dataclass(frozen=True)
class TreeRecord:
    """A k-hop tree and what the solver claimed about it."""

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

    def solver_claims(self) -> dict:
        """The certificate's ``solver`` section.

        ``synth check`` takes these as the solver's claims, except ``dual_bound`` (when
        the solve kept one): a dual of the layered LP from which the checker re-derives
        a lower bound itself (:mod:`synth.dualbound`).
        """
        out = {"model": "synth.models.khop", "status": self.status, "depth_bound": self.k,
               "weight": self.weight, "lower_bound": self.lower_bound, "gap": round(self.gap, 6),
               "bound_method": self.bound_method, "solver": self.solver, "time_limit": self.time_limit,
               "seed": self.seed, "seconds": round(self.seconds, 3)}
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


def _read_cached(path, t, k):
    try:
        data = json.loads(Path(path).read_text())
        parent = np.asarray(data["parent"], dtype=np.int64)
        depth = int(forest_depths(t, parent, [0]).max())
        weight = _tree_weight(t, parent)
        if depth > k or weight != data["weight"]:
            return None
        dual = data.get("dual")
        return TreeRecord(tuple(t.shape), k, parent, depth, weight, data["lower_bound"], data["gap"],
                          data["status"], data["seconds"], data["solver"], data["bound_method"],
                          data["time_limit"], data["seed"], cached=True,
                          dual=dual if isinstance(dual, dict) else None)
    except (OSError, ValueError, KeyError, TypeError, SynthError):
        return None


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
    incumbent, so the result is never heavier; such a solve bypasses the cache.
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
    path = cache_dir() / _key(t, k, solver, time_limit, seed)
    if cache and path.exists():
        rec = _read_cached(path, t, k)
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
    rec = TreeRecord(tuple(t.shape), k, np.asarray(res.parent, dtype=np.int64), int(res.depth), int(res.weight),
                     res.lower_bound, float(res.gap), res.status, float(res.seconds), res.solver,
                     res.bound_method, float(time_limit), int(seed), dual=getattr(res, "dual", None),
                     start_weight=start_weight)
    # a solve cut short by Ctrl-C is not cached: its settings would not reproduce it
    if cache and not getattr(res, "interrupted", False):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            data = {"synth": __version__, "shape": list(t.shape), "k": k, "parent": rec.parent.tolist(),
                    **{f: getattr(rec, f) for f in ("depth", "weight", "lower_bound", "gap", "status", "seconds",
                                                    "solver", "bound_method", "time_limit", "seed", "dual")}}
            write_atomic(path, json.dumps(data))
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
    takes that tree, and a weaker bound at ``a`` takes the one proven at ``b``;
    ``bound_method`` and ``solver`` say where each came from and the status and gap
    are recomputed (``"optimal"`` when the weight meets the rounded-up bound).

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
    import math

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
            out[a] = dataclasses.replace(lo, lower_bound=hi.lower_bound, dual=_stronger(lo.dual, hi.dual),
                                         bound_method=f"bound of the depth-{hi.k} solve: {hi.bound_method}")
    for i, rec in enumerate(out):
        optimal = rec.weight <= math.ceil(rec.lower_bound - 1e-9)
        out[i] = dataclasses.replace(rec, gap=0.0 if optimal else (rec.weight - rec.lower_bound) / rec.weight,
                                     status="optimal" if optimal else "feasible")
    return out


def tree_base(t, rec: TreeRecord):
    """The base schedule of a k-hop tree: ``2h`` rounds, each edge on the torus's dimension-order route."""
    return tree_schedule(t, rec.parent, 0, route=t.route,
                         label=f"k-hop tree, depth bound {rec.k}, depth {rec.depth}, W = {rec.weight}")
