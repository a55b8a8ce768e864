"""Where a campaign runs: ``serial`` (in this process), ``local[:N]`` (a Dask ``LocalCluster``) or a
running Dask scheduler (``tcp://HOST:PORT``).

``local`` starts one worker process per core (processes, not threads: the solvers and SimGrid hold
the GIL), one thread each; ``local:N`` starts ``N``.  A scheduler address is tried for
:data:`CONNECT_TIMEOUT` seconds, then the campaign stops with one line.

Examples
--------
>>> parse_cluster("local:3"), parse_cluster("serial").kind, parse_cluster("tcp://127.0.0.1:8786").address
(Cluster(kind='local', workers=3, address=''), 'serial', 'tcp://127.0.0.1:8786')
>>> parse_cluster("local:0")
Traceback (most recent call last):
...
synth.errors.CampaignError: `cluster` local:0: the worker count must be 1 to 1024
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import re
from dataclasses import dataclass

from synth.errors import CampaignError

__all__ = ["Cluster", "parse_cluster", "connect", "has_dashboard", "CONNECT_TIMEOUT", "CLUSTER_HELP"]

#: seconds to reach a scheduler before giving up
CONNECT_TIMEOUT = 5.0
MAX_LOCAL_WORKERS = 1024
CLUSTER_HELP = ("where tasks run: local (a Dask LocalCluster, one worker process per core), local:N (N workers), "
                "tcp://HOST:PORT (a running Dask scheduler) or serial (this process, no Dask)")
_ADDRESS = re.compile(r"(tcp|tls)://[^\s/:]+:\d{1,5}")


@dataclass(frozen=True)
class Cluster:
    """A parsed ``--cluster``: ``kind`` is ``serial``, ``local`` or ``address``."""

    kind: str
    workers: int = 0
    address: str = ""


def parse_cluster(text: str) -> Cluster:
    """Read a ``--cluster`` value (module docstring)."""
    text = str(text).strip()
    if text == "serial":
        return Cluster("serial")
    if text == "local":
        return Cluster("local", max(1, os.cpu_count() or 1))
    if text.startswith("local:"):
        try:
            n = int(text[6:])
        except ValueError:
            n = 0
        if not 1 <= n <= MAX_LOCAL_WORKERS:
            raise CampaignError(f"`cluster` {text}: the worker count must be 1 to {MAX_LOCAL_WORKERS}")
        return Cluster("local", n)
    if _ADDRESS.fullmatch(text):
        return Cluster("address", address=text)
    raise CampaignError(f"`cluster` {text[:80]!r}: write local, local:N, tcp://HOST:PORT or serial")


def has_dashboard() -> bool:
    """Whether a LocalCluster here serves a dashboard (Dask's needs bokeh)."""
    return importlib.util.find_spec("bokeh") is not None


@contextlib.contextmanager
def connect(cluster: Cluster):
    """A Dask ``Client`` for ``cluster`` (not ``serial``), closed (and a local cluster stopped) on exit."""
    # Dask loads here, only for a campaign that uses it
    import dask
    from distributed import Client, LocalCluster

    if cluster.kind == "local":
        with LocalCluster(n_workers=cluster.workers, threads_per_worker=1, processes=True,
                          dashboard_address=":0" if has_dashboard() else None, silence_logs=logging.ERROR) as local, \
                Client(local) as client:
            yield client
        return
    with dask.config.set({"distributed.comm.timeouts.connect": f"{CONNECT_TIMEOUT:g}s"}):
        try:
            client = Client(cluster.address, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise CampaignError(f"cannot reach the Dask scheduler at {cluster.address} within "
                                f"{CONNECT_TIMEOUT:g} s ({' '.join(str(exc).split())[:160]})") from None
    with client:
        yield client
