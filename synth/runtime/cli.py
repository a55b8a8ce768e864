"""Command-line glue for ``synth run`` and ``synth export --format msccl-xml``.

``synth/cli.py`` wires these in with three calls::

    from synth.runtime.cli import add_run_command, add_msccl_export_arguments, export_msccl_from_args
    add_run_command(sub)                      # the 'run' subcommand
    add_msccl_export_arguments(export_parser)  # --proto, --min-bytes, ... on 'export'
    if args.format == "msccl-xml": return export_msccl_from_args(args)   # in cmd_export

Examples
--------
>>> import argparse
>>> p = argparse.ArgumentParser(prog="synth")
>>> sub = p.add_subparsers(dest="command")
>>> add_run_command(sub)
>>> a = p.parse_args(["run", "cert.json", "--size", "64KiB", "--mode", "deps"])
>>> a.size, a.mode, a.iters, a.dtype, a.func is cmd_run
(65536, 'deps', 5, 'float32', True)
"""

from __future__ import annotations

import json
import sys

__all__ = ["add_run_command", "cmd_run", "add_msccl_export_arguments", "export_msccl_from_args"]


def add_run_command(sub):
    """Add ``synth run FILE`` to the subparsers ``sub``."""
    from synth.cli import int_in, seconds, size
    from synth.runtime.mpi import DTYPES, MODES

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
    from synth.runtime.mpi import run_schedule

    report = run_schedule(args.file, size=args.size, iters=args.iters, dtype=args.dtype, mode=args.mode,
                          mpiexec=args.mpiexec, warmup=args.warmup, timeout=args.timeout,
                          keep_dir=getattr(args, "workdir", None))
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print(report.summary())
    return 0 if report.ok else 1


#: largest byte count accepted for --min-bytes / --max-bytes: the runtimes read them as 64-bit sizes
MAX_BUFFER_BYTES = 1 << 62


def _buffer_bytes(text) -> int:
    """A ``type=`` for --min-bytes / --max-bytes: a whole number of bytes, 0 to :data:`MAX_BUFFER_BYTES`."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{str(text)[:40]!r} is not a whole number of bytes") from None
    if not 0 <= value <= MAX_BUFFER_BYTES:
        raise argparse.ArgumentTypeError(f"{str(text)[:40]} is out of range (0 to 2^62 bytes)")
    return value


def add_msccl_export_arguments(parser):
    """Options of ``synth export`` that only ``--format msccl-xml`` uses."""
    g = parser.add_argument_group("msccl-xml")
    g.add_argument("--proto", default="Simple", choices=("Simple", "LL", "LL128"), help="NCCL protocol (msccl-xml)")
    g.add_argument("--name", help="algorithm name in the XML (msccl-xml)")
    g.add_argument("--min-bytes", type=_buffer_bytes, default=0,
                   help="smallest buffer the runtime may use it for (msccl-xml)")
    g.add_argument("--max-bytes", type=_buffer_bytes, default=None,
                   help="largest buffer the runtime may use it for (msccl-xml; default: 1 TiB, or less so that the "
                        "scratch microsoft/msccl allocates at init stays within 1 GiB per GPU)")
    g.add_argument("--no-inplace", action="store_true", help="declare inplace=0 (msccl-xml)")
    g.add_argument("--no-outofplace", action="store_true", help="declare outofplace=0 (msccl-xml)")
    g.add_argument("--check", action="store_true",
                   help="validate the XML and execute it with the interpreter before reporting (msccl-xml)")


def export_msccl_from_args(args) -> int:
    """``synth export FILE --format msccl-xml --out algo.xml``: write the XML, print a summary.

    Exit 1 when ``--check`` finds a problem.
    """
    from synth.runtime.msccl import DEFAULT_MAX_BYTES, export_msccl, export_summary_json

    max_bytes = DEFAULT_MAX_BYTES if getattr(args, "max_bytes", None) is None else args.max_bytes
    ex = export_msccl(args.file, args.out, proto=getattr(args, "proto", "Simple"), name=getattr(args, "name", None),
                      inplace=not getattr(args, "no_inplace", False),
                      outofplace=not getattr(args, "no_outofplace", False),
                      min_bytes=getattr(args, "min_bytes", 0), max_bytes=max_bytes)
    out = export_summary_json(ex, args.out)
    stream = sys.stderr if args.out == "-" else sys.stdout  # '-': the XML itself is on stdout
    ok = True
    if getattr(args, "check", False):
        from synth.runtime.msccl_check import check_xml

        rep = check_xml(ex.xml)
        ok = rep.ok
        out["check"] = {"ok": rep.ok, "errors": rep.errors[:20], "executed": rep.executed,
                        "race_checked": rep.race_checked, "notes": rep.notes}
    if getattr(args, "json", False):
        print(json.dumps(out), file=stream)
    else:
        print(f"wrote {args.out}: {ex.summary()}", file=stream)
        for note in ex.notes:
            print(f"note: {note}", file=sys.stderr)
        print(f"  load it with MSCCL_XML_FILES={args.out} (MSCCL), or put it in MSCCL_ALGO_DIR "
              f"(msccl-executor-nccl: NCCL_MSCCL_ENABLE=1; RCCL: RCCL_MSCCL_ENABLE=1); the buffer's element count "
              f"must be a multiple of {ex.nchunksperloop}, and the communicator needs >= {ex.nchannels} channel(s)",
              file=stream)
        if "check" in out:
            c = out["check"]
            print(f"  check: {'OK' if c['ok'] else 'FAILED'} ({', '.join(c['executed'])}"
                  f"{', race-free' if c['race_checked'] else ''})", file=stream)
            for e in c["errors"]:
                print(f"  error: {e}", file=sys.stderr)
    return 0 if ok else 1
