"""The work that ``synth sweep``, ``synth solve --size`` and ``synth compare --engine simgrid`` spread over a
cluster, as campaign tasks.

* a depth of a sweep is the call :func:`khop_entry` (the k-hop tree's cache entry comes back, and the
  client re-checks it with :func:`synth.solving.cache.entry_record` as it would a cache file);
* a candidate of ``compare --engine simgrid`` is the command line ``synth compare ... --algorithms NAME``,
  its simulated seconds read from the JSON rows.

Examples
--------
>>> out = khop_entry([4, 4], 2, time_limit=10.0)
>>> out["entry"]["k"], out["entry"]["weight"]
(2, 18)
>>> solve = khop_solver("serial")
>>> [(r.k, r.weight, r.status) for r in solve([((4, 4), 2, 10.0, 0, "auto", True)])]
[(2, 18, 'optimal')]
"""

from __future__ import annotations

import math
from dataclasses import replace

from synth.campaign.run import run_tasks
from synth.campaign.spec import Task, canonical
from synth.errors import OptionError, SynthError, check_instance, check_int
from synth.solving.cache import entry, entry_record
from synth.solving.khop import khop_tree
from synth.topology.torus import torus

__all__ = ["khop_entry", "khop_solver", "compare_simulator", "MAX_TASK_SECONDS", "MAX_TASK_SEED",
           "MAX_TASK_DEPTH"]

#: the longest time limit a task may ask for (about 4 months, as the CLI's --time-limit)
MAX_TASK_SECONDS = 1e7
#: seeds go to the solvers as 32-bit ints; depths are bounded as the CLI's --depth
MAX_TASK_SEED = MAX_TASK_DEPTH = 2**31 - 1


def khop_entry(shape, k, time_limit=60.0, seed=0, solver="auto", cache=True) -> dict:
    """Solve (or read from this worker's cache) the k-hop tree of the torus ``shape``: its cache entry as JSON.

    A campaign file may call it (:data:`synth.campaign.spec.CALLS`), so every argument is checked as the
    CLI checks its flags: ``shape`` a list of side lengths, ``k`` 1 to :data:`MAX_TASK_DEPTH`, ``time_limit``
    finite, above 0 and at most :data:`MAX_TASK_SECONDS`, ``seed`` 0 to :data:`MAX_TASK_SEED`, ``cache`` a bool.

    >>> khop_entry("4x4", 2)
    Traceback (most recent call last):
    ...
    synth.errors.ArgumentTypeError: shape: expected a list or tuple (e.g. [8, 8]), got str
    """
    t = torus(tuple(check_instance(shape, "shape", (list, tuple), " (e.g. [8, 8])")))
    k = check_int(k, "k", minimum=1)
    if k > MAX_TASK_DEPTH:
        raise OptionError(f"k must be at most {MAX_TASK_DEPTH}, got {k}")
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or \
            not (math.isfinite(time_limit) and 0 < time_limit <= MAX_TASK_SECONDS):
        raise OptionError(f"time_limit must be a number of seconds above 0 and at most {MAX_TASK_SECONDS:g}, "
                          f"not {str(time_limit)[:40]}")
    seed = check_int(seed, "seed", minimum=0)
    if seed > MAX_TASK_SEED:
        raise OptionError(f"seed must be at most {MAX_TASK_SEED}, got {seed}")
    rec = khop_tree(t, k, time_limit=float(time_limit), seed=seed, solver=check_instance(solver, "solver", str),
                    cache=check_instance(cache, "cache", bool))
    return {"entry": entry(t, rec), "cached": bool(rec.cached)}


def _failed(outs, labels):
    for out, label in zip(outs, labels):
        if out["status"] != "done":
            raise SynthError(f"{label}: {out['error']}")


def khop_solver(cluster, notice=lambda message: None):
    """A ``solve_many`` for :func:`synth.solving.sweep.sweep`: each depth one :func:`khop_entry` task on
    ``cluster``; every tree that comes back is re-checked, and a failed task stops the sweep with its line."""
    def solve_many(jobs):
        tasks = [Task(call="synth.campaign.calls:khop_entry",
                      kwargs=canonical({"shape": list(shape), "k": k, "time_limit": float(limit), "seed": seed,
                                        "solver": solver, "cache": cache}))
                 for shape, k, limit, seed, solver, cache in jobs]
        outs = run_tasks(tasks, cluster, notice=notice)
        _failed(outs, [f"k={job[1]}" for job in jobs])
        records = []
        for (shape, k, limit, seed, solver, _), out in zip(jobs, outs):
            t = torus(tuple(shape))
            # the worker's answer to this request, not a stored file: a solve it just ran keeps its claims
            rec = entry_record(out["result"]["entry"], t, k, float(limit), int(seed), solver, claims=True)
            if rec is None:
                raise SynthError(f"k={k}: the tree a worker sent back does not check")
            records.append(replace(rec, cached=bool(out["result"]["cached"])))
        return records
    return solve_many


def compare_simulator(argv, cluster, entry, notice=lambda message: None):
    """A ``simulate_many`` for :func:`synth.analysis.compare.compare`: each candidate the command line
    ``argv + ["--algorithms", NAME]`` (a ``synth compare --engine simgrid`` of it alone) on ``cluster``,
    run through ``entry`` (``synth.cli.task_main``); returns ``name -> [seconds per size]``."""
    def simulate_many(names):
        tasks = [Task(argv=(*argv, "--algorithms", name, "--json")) for name in names]
        outs = run_tasks(tasks, cluster, entry=entry, notice=notice)
        _failed(outs, names)
        found = {}
        for name, out in zip(names, outs):
            rows = [r for r in out["result"]["rows"] if r["algorithm"] == name]
            found[name] = [r["seconds"] for r in rows]
        return found
    return simulate_many
