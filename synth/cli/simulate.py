"""``synth simulate``: replay a schedule on SimGrid and print simulated time beside the model's.

Examples
--------
>>> from synth.cli import _parser
>>> a = _parser().parse_args(["simulate", "c.json", "--size", "64KiB", "--size", "1MiB,4MiB", "--mode", "deps"])
>>> a.size, a.mode, a.alpha, a.func is cmd_simulate
([[65536], [1048576, 4194304]], 'deps', '1us', True)
"""

from __future__ import annotations

import json

from synth.analysis.cost import Network, rates_json
from synth.analysis.simulate import LATENCY_AT, MODES, simulate
from synth.cli._common import EXIT_OK, int_in, progress, seconds, sizes
from synth.units import format_size, parse_bandwidth, parse_time

__all__ = ["add_parser", "cmd_simulate"]


def add_parser(sub) -> None:
    """Add ``synth simulate FILE`` to the subparsers ``sub``."""
    r = sub.add_parser("simulate", help="replay a schedule on the SimGrid network simulator",
                       description=cmd_simulate.__doc__)
    r.add_argument("file", help="a certificate or an explicit schedule file")
    r.add_argument("--size", type=sizes, action="append",
                   help="bytes per node, e.g. 64KiB or 64KiB,1MiB; repeatable (default 1MiB)")
    r.add_argument("--bandwidth", default="400Gbps",
                   help="per-link bandwidth (default 400Gbps) of a topology whose links carry none of their own")
    r.add_argument("--hop-latency", default="400ns",
                   help="latency per hop (default 400ns) of a topology whose links carry no latencies of their own")
    r.add_argument("--alpha", default="1us", help="start-up cost of every message (default 1us, the model's "
                                                  "per-round cost)")
    r.add_argument("--element-bytes", type=int_in(1, 1024), default=4, help="bytes per element (default 4)")
    r.add_argument("--mode", default="rounds", choices=MODES,
                   help="rounds: a node starts round s+1 when its round-s messages are done; deps: a message "
                        "starts as soon as the data it carries is complete at its sender")
    r.add_argument("--hop-latency-at", default="start", choices=LATENCY_AT,
                   help="start: a message waits alpha + hops x hop latency, then streams (default); end: it waits "
                        "alpha, streams, and arrives hops x hop latency after its last byte (a packet network "
                        "lies between the two)")
    r.add_argument("--timeout", type=seconds, help="seconds per simulated size before giving up (default: none)")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.set_defaults(func=cmd_simulate)


def cmd_simulate(args) -> int:
    """Replay a certificate or explicit file on SimGrid: the schedule's own routes, max-min link
    sharing, per-hop latency; print simulated time, goodput, the fraction of G_max and the model's time.

    The file is checked first, as ``synth check`` does: an INVALID schedule is not timed (exit 1).
    Needs SimGrid's Python bindings (`apt-get install -y python3-simgrid`).
    Example: ``synth simulate sp-8x8.json --size 64KiB,1MiB --mode deps``
    """
    net = Network(parse_bandwidth(args.bandwidth), parse_time(args.hop_latency), parse_time(args.alpha),
                  args.element_bytes)
    wanted = [s for group in (args.size or [[1 << 20]]) for s in group]
    # an INVALID file raises InvalidScheduleError: exit 1, as synth check (synth.cli._failure)
    rows = simulate(args.file, wanted, net, args.mode, timeout=args.timeout, hop_latency_at=args.hop_latency_at,
                    progress=progress)
    classes = rows[0].link_classes
    if args.json:
        print(json.dumps({"file": args.file, "schedule": rows[0].label, "mode": args.mode, **rates_json(classes, net),
                          "hop_latency_s": net.hop_latency, "alpha_s": net.alpha,
                          "hop_latency_at": args.hop_latency_at, "rows": [r.to_json() for r in rows]}))
        return EXIT_OK
    each = ", ".join(f"{(name or 'links')} {rate / 1e9:g} GB/s" for name, rate, _ in classes)
    links = f"links at their own bandwidths ({each})" if classes else f"{args.bandwidth} links"
    print(f"{rows[0].label}: SimGrid replay, {args.mode} mode, {rows[0].messages:,} messages; "
          f"{links}, {args.hop_latency} per hop (paid at the flow's {args.hop_latency_at}), alpha {args.alpha}")
    print(f"{'size':>8} {'simulated (us)':>15} {'model (us)':>11} {'sim/model':>10} {'goodput':>13} "
          f"{'% G_max':>8} {'wall (s)':>9}")
    for r in rows:
        print(f"{format_size(r.size):>8} {r.seconds * 1e6:>15.3f} {r.model_seconds * 1e6:>11.3f} "
              f"{r.seconds / r.model_seconds:>10.4f} {r.goodput * 8 / 1e9:>8.1f} Gb/s "
              f"{100 * r.fraction_of_bound:>8.1f} {r.wall_seconds:>9.2f}")
    return EXIT_OK
