"""``synth bound``: the round lower bound of a topology and what attains it."""

from __future__ import annotations

import json

from synth.cli._common import EXIT_FAILED, EXIT_OK, add_topology_args, topology_from_args
from synth.solving.summary import ROUND_BOUND_SCOPE
from synth.check import round_lower_bound
from synth.symmetry.spec import lifting_group
from synth.topology.torus import Torus

__all__ = ["add_parser", "cmd_bound"]


def cmd_bound(args) -> int:
    """The round lower bound for fully bandwidth-optimal schedules (docs/spec.md §3), and what attains it.

    Example: ``synth bound --torus 8x8``
    """
    t = topology_from_args(args)
    bound, witness = round_lower_bound(t, lifting_group(t, args.generators))
    closed = None
    if isinstance(t, Torus):
        closed = 2 * t.diameter - (1 if any(n % 2 == 0 for n in t.shape) else 0)
    out = {"topology": t.name, "round_lower_bound": bound, "attained_by": witness, "closed_form": closed,
           "agrees": None if closed is None else bound == closed, "round_lower_bound_scope": ROUND_BOUND_SCOPE}
    if args.json:
        print(json.dumps(out))
    else:
        tail = "" if closed is None else f"; closed form 2H{'-1' if closed < 2 * t.diameter else ''} = {closed}"
        print(f"{t.name}: at least {bound} rounds for any schedule with 2p-2 one-hop transmissions per chunk "
              f"({witness}{tail})")
    return EXIT_FAILED if closed is not None and bound != closed else EXIT_OK


def add_parser(sub) -> None:
    """Add ``synth bound`` to the subparsers ``sub``."""
    bd = sub.add_parser("bound", help="round lower bound and what attains it", description=cmd_bound.__doc__)
    add_topology_args(bd)
    bd.add_argument("--json", action="store_true")
    bd.set_defaults(func=cmd_bound)
