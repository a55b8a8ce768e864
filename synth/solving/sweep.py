"""Depth sweeps: W*(k) for every depth bound, and the best schedule per message size.

For every ``k`` the k-hop tree comes from :func:`synth.solving.khop.khop_tree` (so
from the cache when solved before; solves run in parallel processes), and
``k >= H`` is the BFS tree.  Each tree is lifted by Γ, and on even tori the
forest plus exchange (``2H - 1`` rounds, ``W = p - 1``) joins the candidates.
For each message size every candidate is measured with integer chunk sizes and
costed with :func:`synth.analysis.cost.model_time`; the fastest is the best choice.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> table = sweep(parse_torus("4x4"), time_limit=10, cache=False)
>>> [(r.k, r.weight, r.rounds) for r in table.rows]
[(1, 32, 2), (2, 18, 4), (3, 16, 6), (4, 15, 8)]
>>> table.best[65536], table.best[1 << 28]  # small messages: few rounds; large: least traffic
('k=1', 'exchange')
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from dataclasses import dataclass, field
from fractions import Fraction

from synth.check import measure_symmetric
from synth.analysis.cost import Network, PAPER_SIZES, model_time
from synth.analysis.simulate import ENGINES, simulated_seconds
from synth.errors import OptionError, SynthError
from synth.schedule.chunking import chunk_elements
from synth.schedule.exchange import exchange_allreduce
from synth.schedule.lift import lift, lifted_weights
from synth.schedule.sp import sp_allreduce
from synth.fileio import printable
from synth.solving.cache import cache_dir, cache_key, cache_writable
from synth.solving.khop import khop_tree, tree_base
from synth.solving.record import tighten
from synth.symmetry.torus import torus_gamma
from synth.topology.torus import torus

__all__ = ["SweepRow", "SweepTable", "SweepOptions", "sweep", "parse_depths", "cached_depths", "sweep_note"]


@dataclass(frozen=True)
class SweepRow:
    k: int
    depth: int
    rounds: int
    weight: int
    lower_bound: float
    gap: float
    status: str
    theta: Fraction
    seconds: float
    solver: str = ""
    bound_method: str = ""

    def to_json(self) -> dict:
        return {"k": self.k, "depth": self.depth, "rounds": self.rounds, "weight": self.weight,
                "lower_bound": self.lower_bound, "gap": self.gap, "status": self.status,
                "theta": float(self.theta), "seconds": self.seconds, "solver": self.solver,
                "bound_method": self.bound_method}


@dataclass
class SweepTable:
    topology: str
    rows: list
    best: dict = field(default_factory=dict)  # size -> "k=K" or "exchange"
    times: dict = field(default_factory=dict)  # size -> {candidate: seconds}
    engine: str = "model"  # what timed the candidates: the cost model, or a SimGrid replay ("simgrid")

    def to_json(self) -> dict:
        out = {"topology": self.topology, "rows": [r.to_json() for r in self.rows],
               "best": {str(s): b for s, b in self.best.items()}}
        if self.engine == "model":
            out["modeled_seconds"] = {str(s): t for s, t in self.times.items()}
        else:
            out["engine"] = self.engine
            out["simulated_seconds"] = {str(s): t for s, t in self.times.items()}
        return out


def parse_depths(text: str, H: int) -> list:
    """``'1..16'``, ``'2,3,5'`` or ``'3'`` into a sorted list of depth bounds (clipped at ``H``).

    Ranges are clipped at the diameter ``H`` before they are expanded (``k >= H`` is the
    BFS tree), so ``1..100000000`` costs no more than ``1..H``.

    >>> parse_depths("1..100000000", 4), parse_depths("2,3,9", 4)
    ([1, 2, 3, 4], [2, 3, 4])
    """
    out = set()
    try:
        for part in str(text).split(","):
            if ".." in part:
                a, b = (int(x) for x in part.split(".."))
                if a < 1 or b < a:
                    raise SynthError(f"depth range {part.strip()!r} must be 1 <= first <= last")
                out.update(range(min(a, H), min(b, H) + 1))
            elif part.strip():
                k = int(part)
                if k < 1:
                    raise SynthError("depths must be positive")
                out.add(min(k, H))
    except ValueError:
        raise SynthError(f"cannot read depths {str(text)[:40]!r}; write e.g. 1..16 or 2,3,5") from None
    if not out:
        raise SynthError("depths must be positive")
    return sorted(out)


def cached_depths(t, depths, time_limit, seed, solver) -> list:
    """The depth bounds among ``depths`` whose k-hop tree is in the cache (:mod:`synth.solving.cache`) already."""
    try:
        folder = cache_dir()
        return [k for k in depths if (folder / cache_key(t, k, solver, time_limit, seed)).exists()]
    except Exception:  # an unreadable cache only means the note says "to solve"
        return []


def sweep_note(t, depths, time_limit, seed, solver, jobs=1):
    """One line saying how long a sweep may take, or None when every depth is cached (or none is solved)."""
    if not getattr(t, "is_equal_sided", False):
        return None
    H = t.diameter
    ks = [k for k in (depths or range(1, H + 1)) if k < H]
    todo = len(ks) - len(cached_depths(t, ks, time_limit, seed, solver))
    if todo == 0:
        return None
    parallel = f", {jobs} at a time" if jobs > 1 and todo > 1 else ""
    cached = f" ({len(ks) - todo} cached)" if todo < len(ks) else ""
    unwritable = "" if cache_writable() else f"; the solve cache {printable(cache_dir())} cannot be written"
    return (f"solving {todo} of {len(ks)} depth bound(s){cached} on {t.name}, up to `time_limit` {time_limit:g} s "
            f"each{parallel}; one line per depth follows{unwritable}")


def _worker_signals():
    """A sweep worker leaves Ctrl-C to the parent (which terminates the pool) and dies at once on SIGTERM."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _solve_one(args):
    shape, k, time_limit, seed, solver, cache = args
    return khop_tree(torus(shape), k, time_limit=time_limit, seed=seed, solver=solver, cache=cache)


@dataclass(frozen=True)
class SweepOptions:
    """The options of :func:`sweep` (and :func:`synth.solving.by_size.choose_by_size`), documented there."""

    time_limit: float = 60.0
    seed: int = 0
    solver: str = "auto"
    jobs: int = 1
    sizes: tuple = PAPER_SIZES
    net: Network = field(default_factory=Network)
    cache: bool = True
    progress: object = field(default=lambda m: None, repr=False)
    report: object = field(default=None, repr=False)
    engine: str = "model"
    solve_many: object = field(default=None, repr=False)


def sweep(t, depths=None, **options) -> SweepTable:
    """Solve every depth bound and pick the best schedule per message size (see module docstring).

    ``options`` (:class:`SweepOptions`): ``time_limit``, ``seed``, ``solver`` and ``jobs`` (local
    processes) for the solves; ``sizes`` and ``net`` for the times.  ``report``, if given, gets one
    line as each depth starts and one as it ends (``progress`` otherwise); solved depths come from the
    cache of :func:`synth.solving.khop.khop_tree` (``cache``).  ``engine="simgrid"`` times every
    candidate by a SimGrid replay (rounds mode, :func:`synth.analysis.simulate.simulated_seconds`)
    instead of the cost model.  ``solve_many``, if given, solves the depths in place of ``jobs`` local
    processes: it takes ``[(shape, k, time_limit, seed, solver, cache), ...]`` and returns their
    records in that order (``synth sweep --cluster`` passes one that runs them as campaign tasks).

    Ctrl-C or SIGTERM (a ``KeyboardInterrupt``) stops the whole sweep: it propagates, no later
    depth is solved and no table is returned (the interrupted depth's best tree is kept in the
    cache marked interrupted, :func:`synth.solving.khop.khop_tree`).
    """
    opts = SweepOptions(**options)
    if not getattr(t, "is_equal_sided", False):
        raise SynthError("sweeps lift trees by Γ: they need an equal-sided torus")
    if opts.engine not in ENGINES:
        raise OptionError(f"engine must be one of {', '.join(ENGINES)}, not {opts.engine!r}")
    H = t.diameter
    depths = depths or list(range(1, H + 1))
    records = tighten(_solve_depths(t, [k for k in depths if k < H], opts))
    p = t.n_vertices
    rows, bases = [], {}
    for rec in records:
        rows.append(SweepRow(rec.k, rec.depth, 2 * rec.depth, rec.weight, rec.lower_bound, rec.gap, rec.status,
                             Fraction(rec.weight, p - 1), rec.seconds, rec.solver, rec.bound_method))
        bases[f"k={rec.k}"] = tree_base(t, rec)
        opts.progress(f"k={rec.k}: W = {rec.weight} ({rec.status}, gap {100 * rec.gap:.2f} %)")
    if H in depths:
        rows.append(SweepRow(H, H, 2 * H, p - 1, p - 1, 0.0, "optimal", Fraction(1), 0.0, "bfs",
                             "every edge costs at least 1"))
        bases[f"k={H}"] = sp_allreduce(t)
    if any(n % 2 == 0 for n in t.shape):
        bases["exchange"] = exchange_allreduce(t)
    table = SweepTable(t.name, rows, engine=opts.engine)
    _time_candidates(t, bases, opts, table)
    return table


def _solve_depths(t, solve_ks, opts) -> list:
    """The records of the depth bounds ``solve_ks``: by ``solve_many``, a pool of ``jobs``, or one by one."""
    jobs_args = [(tuple(t.shape), k, opts.time_limit, opts.seed, opts.solver, opts.cache) for k in solve_ks]
    opts.progress(f"solving {len(solve_ks)} depth bound(s) on {t.name} with {opts.jobs} process(es)")
    say = opts.report or opts.progress
    cached = set(cached_depths(t, solve_ks, opts.time_limit, opts.seed, opts.solver)) if opts.cache else set()
    if opts.solve_many is not None and jobs_args:
        records = list(opts.solve_many(jobs_args))
        for i, rec in enumerate(records, 1):
            say(f"k={rec.k} ({i} of {len(jobs_args)}): W = {rec.weight}, {rec.status}"
                f"{' (cached)' if rec.cached else ''}")
        return records
    records = []
    if opts.jobs > 1 and len(jobs_args) > 1:
        # leaving the block terminates the workers, also on Ctrl-C or SIGTERM: the sweep stops at once
        with multiprocessing.Pool(opts.jobs, initializer=_worker_signals) as pool:
            for i, rec in enumerate(pool.imap(_solve_one, jobs_args), 1):
                say(f"k={rec.k} ({i} of {len(jobs_args)}): W = {rec.weight}, {rec.status}"
                    f"{' (cached)' if rec.cached else ''}")
                records.append(rec)
        return records
    for i, a in enumerate(jobs_args, 1):
        k = a[1]
        if k not in cached:
            say(f"k={k} ({i} of {len(jobs_args)}): solving, up to {opts.time_limit:g} s")
        t0 = time.perf_counter()
        rec = _solve_one(a)
        took = "cached" if rec.cached else f"{time.perf_counter() - t0:.1f} s"
        say(f"k={k} ({i} of {len(jobs_args)}): W = {rec.weight}, {rec.status} ({took})")
        records.append(rec)
    return records


def _time_candidates(t, bases, opts, table) -> None:
    """Time every candidate at every size (the cost model, or a SimGrid replay) into ``table``."""
    group = torus_gamma(t)
    simulated = {}
    if opts.engine == "simgrid":
        for name, base in bases.items():
            opts.progress(f"simulating {name} at {len(opts.sizes)} size(s)")
            simulated[name] = simulated_seconds(lift(base, group), lifted_weights(base, group), opts.sizes, opts.net)
    for i, size in enumerate(opts.sizes):
        n = size // opts.net.element_bytes
        times = {}
        for name, base in bases.items():
            if opts.engine == "simgrid":
                times[name] = simulated[name][i]
                continue
            m = measure_symmetric(base, group, chunk_elements(lifted_weights(base, group), n))
            times[name] = model_time(m, opts.net)
        table.times[size] = times
        table.best[size] = min(times, key=times.get)
