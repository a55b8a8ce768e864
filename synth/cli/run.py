"""``synth run``: execute a schedule under MPI, check it and time it against MPI_Allreduce.

Examples
--------
>>> import argparse
>>> p = argparse.ArgumentParser(prog="synth")
>>> sub = p.add_subparsers(dest="command")
>>> add_parser(sub)
>>> a = p.parse_args(["run", "cert.json", "--size", "64KiB", "--mode", "deps"])
>>> a.size, a.mode, a.iters, a.dtype, a.func is cmd_run
(65536, 'deps', 5, 'float32', True)
"""

from __future__ import annotations

import json

from synth.cli._common import EXIT_FAILED, EXIT_OK, int_in, seconds, size
from synth.runtime.mpi import DTYPES, MODES, run_schedule

__all__ = ["add_parser", "cmd_run"]


def add_parser(sub) -> None:
    """Add ``synth run FILE`` to the subparsers ``sub``."""
    r = sub.add_parser("run", help="execute a schedule under MPI, check it and time it against MPI_Allreduce",
                       description=cmd_run.__doc__)
    r.add_argument("file", help="a certificate or an explicit schedule file")
    r.add_argument("--size", type=size, default="1MiB", help="bytes per rank, e.g. 64KiB, 1MiB (default 1MiB)")
    r.add_argument("--iters", type=int_in(1, 10**6), default=5, help="timed iterations (default 5), each checked")
    r.add_argument("--warmup", type=int_in(0, 10**6), default=1, help="untimed iterations first (default 1)")
    r.add_argument("--dtype", default="float32", choices=DTYPES)
    r.add_argument("--mode", default="rounds", choices=MODES,
                   help="rounds: round-synchronous; deps: each rank moves on as soon as its data has arrived")
    r.add_argument("--mpiexec", metavar="CMD",
                   help="MPI launcher, with flags if needed (default: the mpiexec next to this Python, then PATH)")
    r.add_argument("--timeout", type=seconds, default=1800.0, help="seconds before the job is killed (default 1800)")
    r.add_argument("--workdir", metavar="DIR",
                   help="write the per-rank plans here (a directory every node can read, on a cluster) and keep them;"
                        " default: a temporary directory")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.set_defaults(func=cmd_run)


def cmd_run(args) -> int:
    """Execute a schedule with MPI point-to-point (mpi4py) on p ranks, rank r = compute vertex r.

    Every iteration is checked against the exact sum and MPI_Allreduce; exit 1 on a wrong result.
    Example: ``synth run sp-4x4.json --size 1MiB --iters 10 --mode deps``
    """
    report = run_schedule(args.file, size=args.size, iters=args.iters, dtype=args.dtype, mode=args.mode,
                          mpiexec=args.mpiexec, warmup=args.warmup, timeout=args.timeout,
                          keep_dir=getattr(args, "workdir", None))
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print(report.summary())
    return EXIT_OK if report.ok else EXIT_FAILED
