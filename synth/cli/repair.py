"""``synth repair``: a certified healthy schedule, failures, and a certified schedule of the damaged network."""

from __future__ import annotations

import sys
import time
from dataclasses import replace

from synth.check.certificate import read_certificate, write_certificate
from synth.check.claims import file_kind, require_valid
from synth.cli._common import DEFAULT_TIME_LIMIT, keep_freed_memory, progress, seconds
from synth.cli.solve import print_result
from synth.errors import FileFormatError
from synth.fileio import check_writable, printable
from synth.solving import check_written
from synth.solving.repair import repair
from synth.topology.failures import parse_failures

__all__ = ["add_parser", "cmd_repair"]


def cmd_repair(args) -> int:
    """Repair a certified schedule around failed links and chips: a valid schedule within seconds, improved
    while --time-limit lasts (docs/failures.md).

    Example: ``synth repair sp-8x8.json --fail-link 0.0-0.1 --out repaired.json``
    """
    started = time.monotonic()
    keep_freed_memory()
    if args.out is not None:
        check_writable(args.out)
    if file_kind(args.file) == "explicit":
        raise FileFormatError(f"{printable(args.file)} is an explicit schedule file: synth repair needs a certificate "
                              "of the healthy network (synth solve --out writes one)")
    require_valid(args.file, "not repaired")   # the repaired certificate's provenance names this file
    cert = read_certificate(args.file)
    failures = parse_failures(cert.topology, args.fail_link, args.fail_node)
    to_file = args.out is not None and args.out != "-"
    written = []   # each better schedule replaces the file at once (atomically): the first within seconds

    def keep(c):
        write_certificate(c, args.out)
        written.append(c)

    result = repair(cert, failures, time_limit=args.time_limit, mode=args.mode, progress=progress,
                    on_better=keep if to_file else None, started=started)
    if args.out is not None and not (written and written[-1] is result.certificate):
        write_certificate(result.certificate, args.out)
    if to_file:   # read back once the repair's own objects are let go, as synth solve does
        cert = None
        written.clear()
        result = replace(result, certificate=None)
        result = replace(result, certificate=read_certificate(args.out))
    report = check_written(result.certificate)
    for k, v in report.claims.items():
        if not v[2]:
            print(f"synth: the certificate does not check: {k}: claimed {v[0]}, measured {v[1]}", file=sys.stderr)
    return print_result(result.certificate.network, result, report, args)


def add_parser(sub) -> None:
    """Add ``synth repair`` to the subparsers ``sub``."""
    rp = sub.add_parser("repair", help="repair a certified schedule around failed links and chips",
                        description=cmd_repair.__doc__)
    rp.add_argument("file", help="a certificate of the healthy network")
    rp.add_argument("--fail-link", metavar="U-V", action="append", default=[],
                    help="a failed link, by vertex ids or coordinates (e.g. 0.1-0.2); repeatable")
    rp.add_argument("--fail-node", metavar="V", action="append", default=[], help="a failed chip; repeatable")
    rp.add_argument("--time-limit", type=seconds, default=DEFAULT_TIME_LIMIT,
                    help=f"seconds to improve the first valid schedule (default {DEFAULT_TIME_LIMIT:g})")
    rp.add_argument("--mode", choices=("auto", "explicit", "symmetric"), default="auto", help="check mode")
    rp.add_argument("--out", metavar="FILE", help="write the repaired certificate ('-': stdout)")
    rp.add_argument("--json", action="store_true")
    rp.set_defaults(func=cmd_repair)
