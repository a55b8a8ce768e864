"""``synth export``: write a certificate's schedule in another format (:data:`synth.runtime.formats.EXPORT_FORMATS`).

The options only ``--format msccl-xml`` uses sit in their own argument group
(:func:`add_msccl_export_arguments`); each format reads the options its registry row lists.
"""

from __future__ import annotations

import argparse
import json
import sys

from synth.cli._common import EXIT_FAILED, EXIT_OK, MAX_ELEMENTS, flags_in, int_in, progress, stdout_for
from synth.check.claims import require_valid
from synth.fileio import check_writable
from synth.runtime.explicit_export import MAX_TRANSMISSIONS
from synth.runtime.formats import EXPORT_FORMATS
from synth.runtime.msccl.limits import MAX_MSCCL_TRANSMISSIONS

__all__ = ["add_parser", "cmd_export", "add_msccl_export_arguments"]

#: largest byte count accepted for --min-bytes / --max-bytes: the runtimes read them as 64-bit sizes
MAX_BUFFER_BYTES = 1 << 62


def cmd_export(args) -> int:
    """Write a certificate's schedule in another format.

    Example: ``synth export cert.json --format explicit --out schedule.jsonl``
    """
    check_writable(args.out)
    require_valid(args.file, "not exported")   # never copy a forged schedule or claim into another format
    fmt = EXPORT_FORMATS[args.format]
    done = fmt.export(args.file, args.out, {k: getattr(args, k, None) for k in fmt.options}, progress)
    summary = dict(done.summary)
    if "notes" in summary:  # the library's notes name parameters: say flags
        summary["notes"] = [flags_in(note) for note in summary["notes"]]
    stream = stdout_for(args)
    if args.json:
        print(json.dumps(summary), file=stream)
    else:
        for line in done.lines:
            print(line, file=stream)
        for note in done.notes:
            print(f"note: {flags_in(note)}", file=sys.stderr)
        for error in done.errors:
            print(f"  error: {error}", file=sys.stderr)
    return EXIT_OK if done.ok else EXIT_FAILED


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


def add_parser(sub) -> None:
    """Add ``synth export FILE`` to the subparsers ``sub``."""
    e = sub.add_parser("export", help="write a schedule in another format", description=cmd_export.__doc__)
    e.add_argument("file")
    e.add_argument("--format", default="explicit", choices=tuple(EXPORT_FORMATS),
                   help="; ".join(f"{f.name}: {f.help}" for f in EXPORT_FORMATS.values()))
    e.add_argument("--out", required=True, metavar="FILE", help="output path ('-': stdout, the summary then "
                                                                 "goes to stderr)")
    e.add_argument("--elements", type=int_in(1, MAX_ELEMENTS), metavar="N",
                   help="input elements per node (default: the certificate's)")
    e.add_argument("--max-transmissions", type=int_in(1, 2**40), default=None, metavar="N",
                   help=f"largest schedule exported, in transmissions (default: {MAX_TRANSMISSIONS:,} explicit, "
                        f"{MAX_MSCCL_TRANSMISSIONS:,} msccl-xml)")
    e.add_argument("--json", action="store_true")
    add_msccl_export_arguments(e)
    e.set_defaults(func=cmd_export)
