"""``synth export``: write a certificate's schedule as explicit JSON Lines or as MSCCL XML.

The options only ``--format msccl-xml`` uses sit in their own argument group
(:func:`add_msccl_export_arguments`), read by :func:`export_msccl_from_args`.
"""

from __future__ import annotations

import argparse
import json
import sys

from synth.cli._common import EXIT_OK, MAX_ELEMENTS, flags_in, int_in, progress, stdout_for
from synth.errors import SynthError
from synth.check.certificate import read_certificate
from synth.check.claims import file_kind, require_valid
from synth.check.explicit import write_explicit
from synth.fileio import check_writable
from synth.runtime.explicit_export import reemit_explicit
from synth.runtime.msccl import DEFAULT_MAX_BYTES, export_msccl, export_summary_json
from synth.runtime.msccl.check import check_xml
from synth.schedule.data import require_elements
from synth.schedule.lift import lift, lifted_chunk_elements

__all__ = ["add_parser", "cmd_export", "add_msccl_export_arguments", "export_msccl_from_args"]

#: largest byte count accepted for --min-bytes / --max-bytes: the runtimes read them as 64-bit sizes
MAX_BUFFER_BYTES = 1 << 62


def cmd_export(args) -> int:
    """Write a certificate's schedule in another format.

    Example: ``synth export cert.json --format explicit --out schedule.jsonl``
    """
    check_writable(args.out)
    if args.format not in ("explicit", "msccl-xml"):
        raise SynthError(f"unknown export format {args.format!r}; valid: explicit, msccl-xml")
    require_valid(args.file, "not exported")   # never copy a forged schedule or claim into another format
    if args.format == "msccl-xml":
        return export_msccl_from_args(args)
    if file_kind(args.file) == "explicit":  # e.g. a baseline: already explicit, re-written after validation
        line = reemit_explicit(args.file, args.out, args.elements)
        if args.json:
            print(json.dumps({"file": args.out, "format": "explicit", "note": line}), file=stdout_for(args))
        else:
            print(line, file=stdout_for(args))
        return EXIT_OK
    cert = read_certificate(args.file)
    n = cert.base.n_transmissions * cert.group.order
    if n > args.max_transmissions:
        raise SynthError(f"the explicit schedule has {n:,} transmissions, over --max-transmissions "
                         f"{args.max_transmissions:,}; raise it if you really want that file")
    elements = args.elements or cert.elements
    require_elements(elements, cert.base.n_components * cert.group.order)  # as `solve --elements` refuses it
    progress(f"lifting {n:,} transmissions")
    schedule = lift(cert.base, cert.group)
    sizes = lifted_chunk_elements(cert.base, cert.group, elements)  # reduce-scatter / allgather: equal blocks
    claims = cert.claims if elements == cert.elements else None
    write_explicit(schedule, sizes, args.out, claims)
    stream = stdout_for(args)
    if args.json:
        print(json.dumps({"file": args.out, "format": "explicit", "transmissions": n, "chunks": schedule.n_chunks,
                          "rounds": schedule.n_rounds, "elements": elements}), file=stream)
    else:
        print(f"wrote {args.out}: {n} transmissions, {schedule.n_chunks} chunks, {schedule.n_rounds} rounds",
              file=stream)
    return EXIT_OK


def _buffer_bytes(text) -> int:
    """A ``type=`` for --min-bytes / --max-bytes: a whole number of bytes, 0 to :data:`MAX_BUFFER_BYTES`."""
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
                   help="validate the XML and execute it with the interpreter before writing it; if that fails, "
                        "nothing is written and the exit code is 1 (msccl-xml)")


def export_msccl_from_args(args) -> int:
    """``synth export FILE --format msccl-xml --out algo.xml``: write the XML, print a summary.

    Exit 1 when ``--check`` finds a problem; the XML is then not written (an older file at
    ``--out`` stays as it was), so that no runtime loads an algorithm that computes wrong sums.
    """
    max_bytes = DEFAULT_MAX_BYTES if getattr(args, "max_bytes", None) is None else args.max_bytes
    ex = export_msccl(args.file, None, proto=getattr(args, "proto", "Simple"), name=getattr(args, "name", None),
                      inplace=not getattr(args, "no_inplace", False),
                      outofplace=not getattr(args, "no_outofplace", False),
                      min_bytes=getattr(args, "min_bytes", 0), max_bytes=max_bytes)
    out = export_summary_json(ex, args.out)
    out["notes"] = [flags_in(note) for note in out["notes"]]  # the library's notes name parameters: say flags
    stream = sys.stderr if args.out == "-" else sys.stdout  # '-': the XML itself is on stdout
    ok = True
    if getattr(args, "check", False):
        rep = check_xml(ex.xml, coll=ex.coll)
        ok = rep.ok
        out["check"] = {"ok": rep.ok, "errors": rep.errors[:20], "executed": rep.executed,
                        "race_checked": rep.race_checked, "notes": rep.notes}
    if ok:
        ex.write(args.out)  # only what passed the check (atomic: a failure leaves an older file intact)
    else:
        out["path"] = None
    if getattr(args, "json", False):
        print(json.dumps(out), file=stream)
    else:
        _print_msccl_summary(args, ex, out, stream)
    return 0 if ok else 1


def _print_msccl_summary(args, ex, out, stream) -> None:
    where = f"wrote {args.out}" if out["path"] is not None else f"did not write {args.out} (the check failed)"
    print(f"{where}: {ex.summary()}", file=stream)
    for note in ex.notes:
        print(f"note: {flags_in(note)}", file=sys.stderr)
    if out["path"] is not None:
        print(f"  load it with MSCCL_XML_FILES={args.out} (MSCCL), or put it in MSCCL_ALGO_DIR "
              f"(msccl-executor-nccl: NCCL_MSCCL_ENABLE=1; RCCL: RCCL_MSCCL_ENABLE=1); the "
              + ("buffer's element count" if ex.coll == "allreduce" else "per-rank count (each rank's block)")
              + f" must be a multiple of {ex.nchunksperloop}, and the communicator needs >= {ex.nchannels} channel(s)",
              file=stream)
    if "check" in out:
        c = out["check"]
        print(f"  check: {'OK' if c['ok'] else 'FAILED'} ({', '.join(c['executed'])}"
              f"{', race-free' if c['race_checked'] else ''})", file=stream)
        for e in c["errors"]:
            print(f"  error: {e}", file=sys.stderr)


def add_parser(sub) -> None:
    """Add ``synth export FILE`` to the subparsers ``sub``."""
    e = sub.add_parser("export", help="write a schedule in another format", description=cmd_export.__doc__)
    e.add_argument("file")
    e.add_argument("--format", default="explicit", help="explicit (JSON Lines) or msccl-xml")
    e.add_argument("--out", required=True, metavar="FILE", help="output path ('-': stdout, the summary then "
                                                                 "goes to stderr)")
    e.add_argument("--elements", type=int_in(1, MAX_ELEMENTS), metavar="N",
                   help="input elements per node (default: the certificate's)")
    e.add_argument("--max-transmissions", type=int_in(1, 2**40), default=20_000_000, metavar="N")
    e.add_argument("--json", action="store_true")
    add_msccl_export_arguments(e)
    e.set_defaults(func=cmd_export)
