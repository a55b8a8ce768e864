"""Campaign throughput: tasks per second and speedup of one and two Dask workers on a CPU-bound campaign.

Run: ``python bench/campaign.py [--tasks N] [--torus SHAPE] [--json [FILE]]``; on an idle 2-core machine
``python bench/campaign.py --tasks 40 --torus 16x16`` (about 2 minutes of CPU per configuration at one
worker).  The campaign is ``N`` tasks ``synth compare --torus SHAPE --sizes {i}MiB`` (every algorithm
built and checked transmission by transmission: about 1.4 s of CPU each on 16x16, all of it in one
process, no I/O; the size only makes each task's key its own).  It runs four ways, each with a fresh
store:

* ``serial``: in this process, no Dask (the reference for the table's rows and for speedup);
* ``local:1`` and ``local:2``: a Dask ``LocalCluster`` of one and two worker processes;
* ``external``: a ``dask scheduler`` and two ``dask worker`` processes started here as subprocesses on
  127.0.0.1, each in its own temporary folder with its own solve cache.

``seconds`` is from the moment the cluster is reached to the last row written (cluster start-up is
``startup s``); ``speedup`` is ``local:1``'s seconds over the row's.  Every run's table is compared with
the serial one, timing columns aside (``same``).
"""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import Col, Table, log, parse_args, parser

from synth.campaign import Store, comparable, run_campaign, task_from_json
from synth.cli import task_main

#: ``dask scheduler`` / ``dask worker`` of this interpreter: python -m distributed.cli.dask_<what>
DASK = [sys.executable, "-m"]
COLUMNS = [Col("cluster", fmt="<9"), Col("workers", fmt=">7d"), Col("tasks", fmt=">5d"),
           Col("startup s", "startup_s", ">9.1f"), Col("seconds", fmt=">8.1f"), Col("tasks/s", "rate", ">8.2f"),
           Col("speedup", fmt=">7.2f"), Col("same", fmt=">5")]


def campaign(n, shape):
    return [task_from_json(["compare", "--torus", shape, "--sizes", f"{i + 1}MiB"]) for i in range(n)]


def timed_run(tasks, cluster, folder):
    """(seconds from the cluster reached to the last row, start-up seconds, the rows)."""
    marks = {"t0": time.monotonic()}
    path = Path(folder) / f"{cluster.replace('/', '_').replace(':', '_')}.sqlite"

    def notice(message):
        marks["ready"] = time.monotonic()
        log(message)

    run_campaign(tasks, path, cluster, entry=task_main, notice=notice)
    end = time.monotonic()
    ready = marks.get("ready", marks["t0"])
    with Store(path) as store:
        return end - ready, ready - marks["t0"], store.rows()


class External:
    """A scheduler and two workers as subprocesses, each in a folder of its own; stopped by :meth:`stop`."""

    def __init__(self, root, workers=2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.address = f"tcp://127.0.0.1:{port}"
        self.procs = [self._start(root, "scheduler", ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
                                                      "--no-dashboard"])]
        for i in range(workers):
            folder = f"worker{i}"
            self.procs.append(self._start(root, folder, ["distributed.cli.dask_worker", self.address, "--nthreads", "1", "--no-nanny",
                                                         "--no-dashboard", "--local-directory",
                                                         str(Path(root) / folder)]))
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=120)

    @staticmethod
    def _start(root, name, args):
        folder = Path(root) / name
        folder.mkdir(parents=True)
        env = {**os.environ, "SYNTH_CACHE_DIR": str(folder / "cache")}
        return subprocess.Popen([*DASK, *args], cwd=folder, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)

    def stop(self):
        for proc in self.procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("--tasks", type=int, default=40, help="tasks in the campaign (default %(default)d)")
    ap.add_argument("--torus", default="16x16", help="the torus each task compares on (default %(default)s)")
    args = parse_args(ap, argv)
    tasks = campaign(args.tasks, args.torus)
    table = Table(COLUMNS, json=args.json, title=f"host: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
                                                 f"{args.tasks} x synth compare --torus {args.torus}")
    with tempfile.TemporaryDirectory() as folder:
        serial_s, _, reference = timed_run(tasks, "serial", folder)
        runs = [("serial", 1, serial_s, 0.0, reference)]
        for n in (1, 2):
            runs.append((f"local:{n}", n, *timed_run(tasks, f"local:{n}", folder)))
        external = External(Path(folder) / "external")
        try:
            runs.append(("external", 2, *timed_run(tasks, external.address, folder)))
        finally:
            external.stop()
    one = next(seconds for name, _, seconds, *_ in runs if name == "local:1")
    for name, workers, seconds, startup, rows in runs:
        table.add({"cluster": name, "workers": workers, "tasks": len(tasks), "startup_s": startup,
                   "seconds": seconds, "rate": len(tasks) / seconds, "speedup": one / seconds,
                   "same": "yes" if comparable(rows) == comparable(reference) else "NO"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
