"""``synth baseline``: a baseline algorithm as a checkable explicit schedule."""

from __future__ import annotations

import json

from synth.cli._common import EXIT_OK, MAX_ELEMENTS, add_topology_args, int_in, progress, stdout_for, topology_from_args
from synth.baselines import BASELINES, build_baseline
from synth.baselines.halves import baseline_half
from synth.schedule.data import COLLECTIVES
from synth.fileio import check_writable

__all__ = ["add_parser", "cmd_baseline"]


def cmd_baseline(args) -> int:
    """Generate a baseline algorithm as a checkable explicit schedule.

    Example: ``synth baseline bucket --torus 8x8 --out bucket-8x8.jsonl``
    """
    if args.out is not None:
        check_writable(args.out)
    t = topology_from_args(args)
    b = baseline_half(build_baseline(args.name, t), args.collective)
    m = b.measure(args.elements)
    if args.out:
        b.write(args.out, args.elements)
        progress(f"wrote {args.out}")
    phase = {} if args.collective == "allreduce" else {"collective": args.collective}  # allreduce: as before
    out = {"topology": t.name, "algorithm": args.name, **phase, "rounds": m.rounds, "psi": str(m.psi),
           "theta": str(m.theta), "omega": str(m.omega), "weight": str(m.weight), "chunks": m.chunks,
           "transmissions": m.transmissions, "notes": b.notes, "file": args.out}
    stream = stdout_for(args)
    if args.json:
        print(json.dumps(out), file=stream)
    else:
        width = max(len(k) for k in out)
        for k, v in out.items():
            if v not in (None, ""):
                print(f"{k:<{width}}  {v}", file=stream)
    return EXIT_OK


def add_parser(sub) -> None:
    """Add ``synth baseline NAME`` to the subparsers ``sub``."""
    b = sub.add_parser("baseline", help="a baseline algorithm as an explicit schedule",
                       description=cmd_baseline.__doc__)
    b.add_argument("name", help=", ".join(BASELINES))  # the registry's names, in its order
    add_topology_args(b)
    b.add_argument("--out", metavar="FILE", help="write the explicit schedule (JSON Lines) here ('-': stdout)")
    b.add_argument("--elements", type=int_in(1, MAX_ELEMENTS), metavar="N",
                   help="input elements per node (default: one per chunk)")
    b.add_argument("--collective", default="allreduce", choices=COLLECTIVES,
                   help="allreduce (default), or its reduce-scatter or allgather phase")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=cmd_baseline)
