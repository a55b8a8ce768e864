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

from dataclasses import replace

from synth.campaign.run import run_tasks
from synth.campaign.spec import Task, canonical
from synth.errors import SynthError
from synth.solving.cache import entry, entry_record
from synth.solving.khop import khop_tree
from synth.topology.torus import torus

__all__ = ["khop_entry", "khop_solver", "compare_simulator"]


def khop_entry(shape, k, time_limit=60.0, seed=0, solver="auto", cache=True) -> dict:
    """Solve (or read from this worker's cache) the k-hop tree of the torus ``shape``: its cache entry as JSON."""
    t = torus(tuple(shape))
    rec = khop_tree(t, k, time_limit=time_limit, seed=seed, solver=solver, cache=cache)
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
        for (shape, k, limit, seed, _, _), out in zip(jobs, outs):
            t = torus(tuple(shape))
            rec = entry_record(out["result"]["entry"], t, k, float(limit), int(seed))
            if rec is None:
                raise SynthError(f"k={k}: the tree a worker sent back does not check")
            records.append(replace(rec, cached=bool(out["result"]["cached"])))
        return records
    return solve_many


def compare_simulator(argv, cluster, entry, notice=lambda message: None):
    """A ``simulate_many`` for :func:`synth.analysis.compare.compare`: each candidate the command line
    ``argv + ["--algorithms", NAME]`` (a ``synth compare --engine simgrid`` of it alone) on ``cluster``,
    run through ``entry`` (``synth.cli.main``); returns ``name -> [seconds per size]``."""
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
