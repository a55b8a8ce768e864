"""``synth run``: execute a schedule under MPI or JAX, check it and time it against MPI_Allreduce or psum.

Examples
--------
>>> import argparse
>>> p = argparse.ArgumentParser(prog="synth")
>>> sub = p.add_subparsers(dest="command")
>>> add_parser(sub)
>>> a = p.parse_args(["run", "cert.json", "--size", "64KiB", "--mode", "deps"])
>>> a.size, a.mode, a.iters, a.dtype, a.engine, a.func is cmd_run
(65536, 'deps', 5, 'float32', 'mpi', True)
>>> p.parse_args(["run", "cert.json", "--engine", "jax", "--dtype", "bfloat16"]).dtype
'bfloat16'
"""

from __future__ import annotations

import json

from synth.cli._common import EXIT_FAILED, EXIT_OK, int_in, seconds, size
from synth.errors import SynthError
from synth.runtime.jax.run import DTYPES as JAX_DTYPES
from synth.runtime.jax.run import run_jax
from synth.runtime.mpi import DTYPES, MODES, run_schedule

ENGINES = ("mpi", "jax")
PLATFORMS = ("cpu", "gpu", "tpu")
#: flags of the MPI engine only (None when not given)
MPI_ONLY = ("mode", "mpiexec", "workdir")

__all__ = ["add_parser", "cmd_run"]


def add_parser(sub) -> None:
    """Add ``synth run FILE`` to the subparsers ``sub``."""
    r = sub.add_parser("run", help="execute a schedule under MPI or JAX, check it and time it against "
                                   "MPI_Allreduce or psum", description=cmd_run.__doc__)
    r.add_argument("file", help="a certificate or an explicit schedule file")
    r.add_argument("--engine", default="mpi", choices=ENGINES,
                   help="mpi: mpiexec and mpi4py (default); jax: ppermute inside shard_map on the local JAX devices")
    r.add_argument("--size", type=size, default="1MiB", help="bytes per rank, e.g. 64KiB, 1MiB (default 1MiB)")
    r.add_argument("--iters", type=int_in(1, 10**6), default=5, help="timed iterations (default 5), each checked")
    r.add_argument("--warmup", type=int_in(0, 10**6), default=1, help="untimed iterations first (default 1)")
    r.add_argument("--dtype", default="float32", choices=tuple(dict.fromkeys(DTYPES + tuple(JAX_DTYPES))),
                   help=f"mpi: {', '.join(DTYPES)}; jax: {', '.join(JAX_DTYPES)} (default float32)")
    r.add_argument("--mode", choices=MODES,
                   help="mpi: rounds (default): round-synchronous; deps: each rank moves on as soon as its data has "
                        "arrived")
    r.add_argument("--platform", choices=PLATFORMS,
                   help="jax: the JAX platform (default: JAX's default backend; on cpu, p emulated host devices)")
    r.add_argument("--mpiexec", metavar="CMD",
                   help="MPI launcher, with flags if needed (default: the mpiexec next to this Python, then PATH)")
    r.add_argument("--timeout", type=seconds, default=1800.0, help="seconds before the job is killed (default 1800)")
    r.add_argument("--workdir", metavar="DIR",
                   help="write the per-rank plans here (a directory every node can read, on a cluster) and keep them;"
                        " default: a temporary directory")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.set_defaults(func=cmd_run)


def cmd_run(args) -> int:
    """Execute a schedule on p ranks or devices, rank r = compute vertex r, and time it.

    ``--engine mpi`` (default): MPI point-to-point (mpi4py), checked against the exact sum and
    MPI_Allreduce.  ``--engine jax``: one jax.lax.ppermute per permutation inside jax.shard_map on
    the local JAX devices (p emulated host devices on CPU), checked against the exact sum and
    jax.lax.psum (a reduce-scatter against psum_scatter, an allgather against all_gather, both
    tiled).  Exit 1 on a wrong result.
    Examples: ``synth run sp-4x4.json --size 1MiB --iters 10 --mode deps``,
    ``synth run sp-4x4.json --engine jax --dtype int32``
    """
    if getattr(args, "engine", "mpi") == "jax":
        return _run_jax(args)
    if args.dtype not in DTYPES:
        raise SynthError(f"synth run: argument --dtype: {args.dtype!r} needs --engine jax (mpi: {', '.join(DTYPES)})")
    if getattr(args, "platform", None) is not None:
        raise SynthError("synth run: argument --platform: only with --engine jax")
    report = run_schedule(args.file, size=args.size, iters=args.iters, dtype=args.dtype,
                          mode=args.mode or "rounds", mpiexec=args.mpiexec, warmup=args.warmup,
                          timeout=args.timeout, keep_dir=getattr(args, "workdir", None))
    return _print(args, report)


def _run_jax(args) -> int:
    given = [f"--{k}" for k in MPI_ONLY if getattr(args, k, None) is not None]
    if given:
        raise SynthError(f"synth run: argument {given[0]}: only with --engine mpi")
    report = run_jax(args.file, size=args.size, iters=args.iters, dtype=args.dtype, warmup=args.warmup,
                     platform=args.platform, timeout=args.timeout)
    return _print(args, report)


def _print(args, report) -> int:
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print(report.summary())
    return EXIT_OK if report.ok else EXIT_FAILED
