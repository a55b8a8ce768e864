"""Campaigns: many independent synth tasks run on a Dask cluster, their results in one SQLite store.

A stage of its own above :mod:`synth.analysis`: every task is a synth command line (run with
``--json``) or a call of a library function, so nothing below knows about Dask.

* :mod:`~synth.campaign.spec`: a task and its content key;
* :mod:`~synth.campaign.expand`: campaign files (JSON or TOML), grids expanded into tasks;
* :mod:`~synth.campaign.store`: the SQLite results store (read it with pandas);
* :mod:`~synth.campaign.execute`: one task, where it lands;
* :mod:`~synth.campaign.client`: ``--cluster`` (serial, ``local[:N]``, ``tcp://HOST:PORT``);
* :mod:`~synth.campaign.run`: submit, ``as_completed``, write rows, progress;
* :mod:`~synth.campaign.calls`: the library calls that ``sweep``, ``compare`` and ``solve --size``
  spread over a cluster.

Examples
--------
>>> import os, tempfile
>>> tasks = parse_campaign({"tasks": [{"call": "synth.units:parse_size", "kwargs": {"text": "2KiB"}}]})
>>> path = os.path.join(tempfile.mkdtemp(), "c.sqlite")
>>> run_campaign(tasks, path, "serial").ran
1
>>> with Store(path) as store:
...     [row["result"] for row in store.rows()]
[2048]
"""

from synth.campaign.client import CLUSTER_HELP, Cluster, parse_cluster
from synth.campaign.expand import parse_campaign, read_campaign
from synth.campaign.run import CampaignSummary, outcomes, progress_text, run_campaign, run_tasks
from synth.campaign.spec import Task, content_key, task_from_json
from synth.campaign.store import Store, comparable

__all__ = ["CLUSTER_HELP", "CampaignSummary", "Cluster", "Store", "Task", "comparable", "content_key", "outcomes",
           "parse_campaign", "parse_cluster", "progress_text", "read_campaign", "run_campaign", "run_tasks",
           "task_from_json"]
