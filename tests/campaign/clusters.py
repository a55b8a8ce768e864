"""Clusters for the campaign tests (fixtures imported by the test modules that use them; not a conftest, whose
module name `conftest` would shadow the suite-wide tests/conftest.py): a LocalCluster of two processes, and a separately started
``dask scheduler`` with two ``dask worker`` processes (each in its own temporary folder, with its own
solve cache), both on 127.0.0.1 and stopped by the fixture."""

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

#: ``dask scheduler`` and ``dask worker`` of this interpreter, whatever is on PATH
SCHEDULER = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
WORKER = [sys.executable, "-m", "distributed.cli.dask_worker"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def local_address():
    """The scheduler address of a LocalCluster with two worker processes, one thread each."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster:
        yield cluster.scheduler_address


class External:
    """A scheduler and two workers started as subprocesses; ``workers`` are their Popen objects."""

    def __init__(self, root: Path):
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.root = root
        self.scheduler = self._start("scheduler", [*SCHEDULER, "--host", "127.0.0.1", "--port", str(self.port),
                                                   "--no-dashboard"])
        self.workers = [self.start_worker(f"worker{i}") for i in range(2)]
        self.wait_for_workers(2)

    def _start(self, name, argv):
        folder = self.root / name
        folder.mkdir(exist_ok=True)
        env = {**os.environ, "SYNTH_CACHE_DIR": str(folder / "cache")}
        log = open(folder / "log.txt", "ab")
        return subprocess.Popen(argv, cwd=folder, env=env, stdout=log, stderr=log, start_new_session=True)

    def start_worker(self, name):
        return self._start(name, [*WORKER, self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                  "--local-directory", str(self.root / name)])

    def wait_for_workers(self, n, timeout=60):
        from distributed import Client

        with Client(self.address, timeout=timeout) as client:
            client.wait_for_workers(n, timeout=timeout)

    def stop(self):
        for proc in [*self.workers, self.scheduler]:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGTERM)
        for proc in [*self.workers, self.scheduler]:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture(scope="module")
def external(tmp_path_factory):
    cluster = External(tmp_path_factory.mktemp("dask"))
    try:
        yield cluster
    finally:
        cluster.stop()


def wait_until(predicate, timeout=60.0, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return False
