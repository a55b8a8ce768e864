"""``synth check``: re-derive every claim of a certificate or explicit schedule file."""

from __future__ import annotations

import json
from fractions import Fraction

from synth.cli._common import EXIT_FAILED, EXIT_OK, progress
from synth.check.claims import check_file
from synth.fileio import printable

__all__ = ["add_parser", "cmd_check"]


def _fmt(x) -> str:
    if isinstance(x, Fraction):
        return str(x) if x.denominator == 1 else f"{float(x):.6f} ({x})"
    return str(x)


def cmd_check(args) -> int:
    """Re-derive every claim of a certificate or explicit file; exit 1 if any fails.

    Example: ``synth check instances/torus-16x16-sp.json``
    """
    progress(f"checking {args.file}")
    report = check_file(args.file, args.mode)
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        m = report.metrics
        coll = "" if m is None or m.collective == "allreduce" else f", {m.collective}"  # allreduce: as before
        print(f"{printable(args.file)}: {'VALID' if report.valid else 'INVALID'} ({report.kind}{coll}, "
              f"{report.mode} check)")
        for e in report.errors:
            print(f"  error: {printable(e)}")
        if m is not None:
            scope = "" if m.max_route <= 1 else "; this schedule routes over several hops, so it does not bind it"
            print(f"  rounds {m.rounds}, round lower bound (one-hop) {report.round_lower_bound} "
                  f"({report.bound_witness}{scope})")
            print(f"  psi {_fmt(m.psi)}, theta {_fmt(m.theta)}, omega {_fmt(m.omega)}, weight {_fmt(m.weight)}")
            print(f"  {m.compute_nodes} nodes, {m.links} links, {m.chunks} chunks, {m.elements} elements, "
                  f"{m.transmissions} transmissions")
        for key, (claimed, measured, ok) in report.claims.items():
            if key == "class_bound" and isinstance(claimed, dict) and isinstance(measured, dict):
                print(f"  {'ok  ' if ok else 'FAIL'} {key} ({measured['class']}; from the stored dual): claimed "
                      f"{claimed.get('value')}, measured {measured['value']} elements; this schedule reaches "
                      f"{100 * measured['fraction']:.2f} % of it")
                continue
            print(f"  {'ok  ' if ok else 'FAIL'} {key}: claimed {claimed}, measured {measured}")
        for key, value in report.solver.items():
            if key == "dual_bound":
                print("  solver's dual: stored; weight_lower_bound above is re-derived from it (synth.check.bounds)")
            else:
                print(f"  solver claim (not re-derived) {key}: {value}")
    return EXIT_OK if report.valid else EXIT_FAILED


def add_parser(sub) -> None:
    """Add ``synth check FILE`` to the subparsers ``sub``."""
    c = sub.add_parser("check", help="re-derive every claim of a file", description=cmd_check.__doc__)
    c.add_argument("file")
    c.add_argument("--mode", default="auto", choices=("auto", "explicit", "symmetric"))
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_check)
