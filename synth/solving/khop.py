"""Solved k-hop trees: solve with :mod:`synth.models.khop` or read the cache, build base schedules.

:func:`khop_tree` returns the tree of a torus and a depth bound as a
:class:`~synth.solving.record.TreeRecord`, from the cache (:mod:`synth.solving.cache`, which
re-checks every entry) or a fresh solve; only completed solves are served from the cache (a solve
cut short by Ctrl-C or SIGTERM propagates the interrupt and leaves its best tree in the cache
marked interrupted, which the next call solves again).  :func:`tree_base` turns the record into a base schedule, and
:func:`start_tree` reads the tree of a certificate to start a solve from.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> rec = khop_tree(parse_torus("4x4"), 2, time_limit=10, cache=False)
>>> rec.status, rec.weight, rec.depth
('optimal', 18, 2)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from synth.check.certificate import read_certificate
from synth.errors import OptionError, SynthError
from synth.schedule.data import REDUCE
from synth.schedule.forest import forest_depths, forest_weight, tree_schedule
from synth.solving.cache import cache_dir, cache_key, interrupted_path, read_entry, write_entry
from synth.solving.record import TreeRecord, fresh_record

__all__ = ["khop_tree", "tree_base", "start_tree", "khop_notes", "check_start", "cacheable", "cache_answers"]


def start_tree(t, path) -> np.ndarray:
    """The parent array of the k-hop tree in a certificate, to start a solve from (``synth solve --start``).

    The certificate is read as it is (run ``synth check`` to verify it); the tree must
    be a spanning tree of the torus ``t`` rooted at vertex 0, which :func:`khop_tree`
    checks again against the depth bound.

    Raises
    ------
    OptionError
        Naming the parameter ``start`` (the CLI says ``--start``), if the file is unreadable, is for
        another topology, or holds no single rooted tree.
    """
    try:
        cert = read_certificate(path)
    except (OSError, ValueError, SynthError) as exc:
        raise OptionError(f"start {path}: cannot read the certificate ({exc})") from None
    if cert.topology.name != t.name:
        raise OptionError(f"start {path}: the certificate is for {cert.topology.name}, not {t.name}")
    b = cert.base
    red = (b.component == 0) & (b.op == REDUCE)
    parent = np.full(t.n_vertices, -1, dtype=np.int64)
    src, dst = b.src[red].astype(np.int64), b.dst[red].astype(np.int64)
    parent[src] = dst
    if np.unique(src).size != src.size or (parent < 0).sum() != 1 or parent[0] != -1:
        raise OptionError(f"start {path}: the certificate's first component is not one tree rooted at vertex 0")
    return parent


def khop_tree(t, k: int, *, time_limit: float = 60.0, seed: int = 0, solver: str = "auto", progress=None,
              cache: bool = True, start=None) -> TreeRecord:
    """The k-hop tree for torus ``t`` and depth bound ``k``, from the cache or a fresh solve.

    The solver gets ``time_limit`` less a reserve (3 %, at least 1 s) for lifting and
    checking the schedule, so that ``synth solve --time-limit S`` ends within ``S``.
    ``start`` (a parent array, e.g. from :func:`start_tree`) is the solve's first
    incumbent, so the result is never heavier; such a solve bypasses the cache, as do
    ``k = 1`` and ``k >= H`` (solved at once).  A cache entry is re-checked and its bound
    re-derived when read, and only that is served: a cached record carries no solver claim
    (:func:`synth.solving.cache.entry_record`).

    Ctrl-C or SIGTERM (a ``KeyboardInterrupt``) propagates: nothing is returned.  The best
    tree so far goes to the cache marked interrupted (:func:`synth.solving.cache.interrupted_path`),
    and a note on the exception says so (the CLI prints it); the next call solves again and
    its record says so (``interrupted_before``).
    """
    # the models load on demand: they pull in the solvers, which nothing else needs
    from synth.models.khop import solve_khop

    start_weight = None
    if start is not None:
        cache = False
        start = np.asarray(start, dtype=np.int64)
        start_weight = check_start(t, start, k)
    if not cacheable(t, k):
        cache = False
    path = cache_dir() / cache_key(t, k, solver, time_limit, seed)
    stopped = interrupted_path(path)
    before = None           # an interrupted solve of the same inputs, found in the cache: never the answer
    if cache and path.exists():
        rec = read_entry(path, t, k, float(time_limit), int(seed), solver)
        if rec is not None and not rec.interrupted:
            if progress:
                progress(f"k={k}: cached tree, W = {rec.weight} ({rec.status})")
            return rec
    if cache and stopped.exists():
        before = read_entry(stopped, t, k, float(time_limit), int(seed), solver)
        if before is not None and progress:
            progress(f"k={k}: the cache holds an interrupted solve (W = {before.weight}); solving again")
    # the solve leaves room for lifting and checking, so the whole command fits in time_limit
    reserve = min(max(1.0, 0.03 * time_limit), 0.5 * time_limit)
    try:
        res = solve_khop(t, k, time_limit=time_limit - reserve, seed=seed, solver=solver, threads=1,
                         progress=progress, start=start)
    except KeyboardInterrupt as exc:     # Ctrl-C or SIGTERM: it propagates; the best tree so far is kept
        _keep_interrupted(exc, t, k, stopped if cache else None, time_limit, seed, start_weight)
        raise
    if res.parent is None or res.status in ("infeasible", "unknown"):
        raise SynthError(f"no tree of depth <= {k} found on {t.name} ({res.status})")
    rec = fresh_record(t, k, res, time_limit, seed, start_weight)
    if before is not None:
        rec = dataclasses.replace(rec, interrupted_before=before.weight)
    if cache:
        problem = write_entry(path, t, rec)  # an unwritable cache costs time only: the record says so
        if problem:
            rec = dataclasses.replace(rec, uncached=problem)
        try:
            stopped.unlink(missing_ok=True)     # the complete solve replaces the interrupted one
        except OSError:
            pass
    return rec


def check_start(t, start, k) -> int:
    """The weight of the start tree ``start`` (a parent array), after checking it is a spanning tree rooted at
    0 of depth at most ``k``.

    Raises
    ------
    OptionError
        Naming the parameter ``start``'s tree, when it is not such a tree.
    """
    start = np.asarray(start, dtype=np.int64)
    try:
        depth = int(forest_depths(t, start, [0]).max())
    except SynthError as exc:
        raise OptionError(f"the start tree is not a spanning tree rooted at 0: {exc}") from None
    if depth > k:
        raise OptionError(f"the start tree has depth {depth}, more than the depth bound {k}")
    return forest_weight(t, start)


def cacheable(t, k) -> bool:
    """Whether the k-hop tree of ``t`` for ``k`` goes through the cache: not the star (``k = 1``) nor the BFS
    tree (``k >= H``), solved at once, cheaper than reading an entry back."""
    return 1 < k < t.diameter


def cache_answers(t, k, time_limit, seed, solver) -> bool:
    """Whether :func:`khop_tree` (without a start tree) would answer from the cache: a complete entry that
    passes its checks (:func:`synth.solving.cache.read_entry`)."""
    if not cacheable(t, k):
        return False
    try:
        path = cache_dir() / cache_key(t, k, solver, time_limit, seed)
        if not path.exists():
            return False
    except OSError:
        return False
    rec = read_entry(path, t, k, float(time_limit), int(seed), solver)
    return rec is not None and not rec.interrupted


def _keep_interrupted(exc, t, k, path, time_limit, seed, start_weight) -> None:
    """Say on ``exc`` (a note the CLI prints) what the interrupted solve found, and store it at ``path``.

    The entry is marked ``interrupted`` and lives beside the real entry (:func:`interrupted_path`), so it is
    never served as an answer: the next call solves again and says so.
    """
    partial = getattr(exc, "partial", None)
    if partial is None:
        exc.add_note(f"k={k}: interrupted before a tree was found")
        return
    rec = fresh_record(t, k, partial, time_limit, seed, start_weight)
    what = f"k={k}: interrupted; the best tree so far has W = {rec.weight} (gap {100 * rec.gap:.1f} %)"
    if path is None:
        exc.add_note(f"{what}; not kept (this solve is not cached) and not written")
        return
    problem = write_entry(path, t, rec)
    exc.add_note(f"{what}; not kept ({problem})" if problem else
                 f"{what}; kept in the cache marked interrupted, never served as an answer: the same command "
                 "solves again")


def tree_base(t, rec: TreeRecord):
    """The base schedule of a k-hop tree: ``2h`` rounds, each edge on the torus's dimension-order route."""
    return tree_schedule(t, rec.parent, 0, route=t.route,
                         label=f"k-hop tree, depth bound {rec.k}, depth {rec.depth}, W = {rec.weight}")


def khop_notes(rec: TreeRecord) -> list:
    """What a user should know about a solved tree: its gap when not optimal, the cache, the start."""
    notes = []
    if rec.status != "optimal":
        notes.append(f"{rec.status}: W = {rec.weight}, lower bound {rec.lower_bound} (re-derived by synth check "
                     f"from the certificate's dual), gap {100 * rec.gap:.2f} %")
    if rec.solver_bound is not None:
        notes.append(f"the solver claims W* >= {rec.solver_bound} (its MIP; synth check cannot re-derive that)")
    if rec.interrupted_before is not None:
        notes.append(f"the cache held an interrupted solve of this tree (W = {rec.interrupted_before}), never "
                     "served as an answer: solved again")
    if rec.uncached:
        notes.append(f"{rec.uncached}: the same command solves again")
    if rec.cached:
        notes.append("tree read from the cache, which serves only what synth check re-derives (the tree and its "
                     "dual's bound), never the solver's own claims: a fresh solve (another `seed`, or an empty "
                     "$SYNTH_CACHE_DIR) makes those again")
    if rec.start_weight is not None:
        notes.append(f"started from a tree of weight {rec.start_weight}")
    return notes
