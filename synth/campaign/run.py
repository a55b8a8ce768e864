"""Run a campaign: submit its tasks, take their outcomes as they finish, write each row at once.

:func:`outcomes` is the one loop (serial, or Dask futures keyed by content and taken with
``as_completed``); :func:`run_campaign` adds the store (finished keys skipped, one transaction per
finished task) and progress; :func:`run_tasks` returns the outcomes in task order, for commands
that spread their own work (``synth sweep --cluster``).  A worker that dies takes its tasks with it
and the scheduler gives them to another (Dask's ``allowed-failures``); a task that raises is tried
:data:`RETRIES` more times.

Examples
--------
>>> import os, tempfile
>>> from synth.campaign.spec import task_from_json
>>> tasks = [task_from_json({"call": "synth.units:parse_size", "kwargs": {"text": t}}) for t in ("1KiB", "x")]
>>> path = os.path.join(tempfile.mkdtemp(), "c.sqlite")
>>> run_campaign(tasks, path, "serial")
CampaignSummary(total=2, skipped=0, ran=2, failed=1)
>>> run_campaign(tasks, path, "serial")  # everything finished: nothing runs again
CampaignSummary(total=2, skipped=2, ran=0, failed=0)
>>> progress_text(3, 10, 1, 30.0)
'3/10 tasks, 1 failed, 0:00:30 elapsed, ETA 0:01:10'
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from synth.campaign.client import connect, has_dashboard, parse_cluster, probe
from synth.campaign.execute import execute, one_line
from synth.campaign.store import Store

__all__ = ["CampaignSummary", "outcomes", "run_campaign", "run_tasks", "progress_text", "RETRIES"]

#: further tries of a task whose function raised on a worker (a dead worker's tasks move on regardless)
RETRIES = 2


@dataclass(frozen=True)
class CampaignSummary:
    total: int  # tasks in the campaign
    skipped: int  # finished in the store before this run
    ran: int
    failed: int  # of those that ran


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def progress_text(done: int, total: int, failed: int, elapsed: float) -> str:
    """The progress line: done / total, failures, elapsed time and the time left at this pace."""
    eta = _clock(elapsed / done * (total - done)) if done else "?"
    return f"{done}/{total} tasks, {failed} failed, {_clock(elapsed)} elapsed, ETA {eta}"


def _on_worker(task, entry):
    """What a Dask worker runs: the task, and the worker's address in its outcome."""
    # only ever called on a worker, where distributed is loaded already
    from distributed import get_worker

    out = execute(task, entry)
    out["worker"] = get_worker().address
    return out


def outcomes(tasks, cluster="local", *, entry=None, uploads=(), notice=lambda message: None):
    """Yield ``(task, outcome)`` as the tasks finish on ``cluster`` (:func:`synth.campaign.client.parse_cluster`).

    ``entry`` runs command lines (``synth.cli.task_main``); ``uploads`` are Python files sent to every
    worker (Dask's ``upload_file``), for calls of modules the workers do not have; ``notice`` gets
    the dashboard's address.
    """
    spec = parse_cluster(cluster)
    if spec.kind == "serial":
        for task in tasks:
            yield task, {**execute(task, entry), "worker": "serial"}
        return
    if not tasks:
        return
    # Dask loads only for a campaign that uses it
    from distributed import as_completed

    with connect(spec) as client:
        if spec.kind == "address":
            served = "dashboard" in client.scheduler_info().get("services", {})
            notice(f"scheduler {spec.address}, dashboard {client.dashboard_link if served else 'off'}")
        else:
            notice(f"{spec.workers} local worker(s), dashboard "
                   f"{client.dashboard_link if has_dashboard() else 'off (pip install bokeh for one)'}")
        for path in uploads:
            client.upload_file(str(path))
        by_key = {}
        for task in tasks:
            future = client.submit(_on_worker, task, entry, key=f"synth-task-{task.key}", retries=RETRIES,
                                   pure=False)
            by_key[future.key] = (task, future)
        for future in as_completed([f for _, f in by_key.values()]):
            task, _ = by_key.pop(future.key)
            try:
                out = future.result()
            except Exception as exc:  # the worker died too often, or Dask gave up: the row says why
                out = {"status": "failed", "result": None, "seconds": None, "worker": None,
                       "error": one_line(f"{exc.__class__.__name__}: {exc}")}
            future.release()
            yield task, out


def run_campaign(tasks, store_path, cluster="local", *, entry=None, retry_failed=False, uploads=(),
                 progress=lambda text: None, notice=lambda message: None, on_row=None) -> CampaignSummary:
    """Run the tasks not yet finished in the store at ``store_path``, writing each row as it finishes.

    ``progress`` gets :func:`progress_text` after every task, ``on_row`` (if given) each
    ``(task, outcome)``; ``retry_failed`` runs the tasks that failed before again.
    """
    spec = parse_cluster(cluster)  # a bad --cluster, or an address where no scheduler answers, is refused
    if spec.kind == "address":      # before the store is touched
        probe(spec.address)
    with Store(store_path, exclusive=True) as store:
        store.add(tasks)
        finished = store.finished(retry_failed)
        todo = [t for t in tasks if t.key not in finished]
        start, done, failed = time.monotonic(), 0, 0
        progress(progress_text(0, len(todo), 0, 0.0))
        for task, out in outcomes(todo, cluster, entry=entry, uploads=uploads, notice=notice):
            store.record(task.key, out)
            done += 1
            failed += out["status"] == "failed"
            if on_row is not None:
                on_row(task, out)
            progress(progress_text(done, len(todo), failed, time.monotonic() - start))
    return CampaignSummary(len(tasks), len(tasks) - len(todo), done, failed)


def run_tasks(tasks, cluster="local", *, entry=None, notice=lambda message: None) -> list[dict]:
    """The outcomes of ``tasks`` in their order (no store): for work a command spreads over a cluster."""
    found = {}
    for task, out in outcomes(tasks, cluster, entry=entry, notice=notice):
        found[task.key] = out
    return [found[t.key] for t in tasks]
