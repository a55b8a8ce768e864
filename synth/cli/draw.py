"""``synth draw``: a picture of a schedule on its topology (trees, per-round link loads, timeline).

Examples
--------
>>> from synth.cli import _parser
>>> a = _parser().parse_args(["draw", "c.json", "--out", "c.png", "--round", "3"])
>>> a.round, a.size, a.alpha, a.func is cmd_draw
(3, 1048576, '1us', True)
"""

from __future__ import annotations

import json

from synth.analysis.cost import Network
from synth.cli._common import EXIT_OK, int_in, progress, size
from synth.units import format_size, parse_bandwidth, parse_time

__all__ = ["add_parser", "cmd_draw"]


def cmd_draw(args) -> int:
    """Draw a certificate or explicit schedule on its topology: the base tree(s), every round's link
    loads as a heat map, and the modeled time of every round at --size (alpha, hop latency, bandwidth).

    Tori of 1 to 3 dimensions, HyperX, spine-leaf, GPU servers, TPU multislice and --topology graphs, up to
    4096 vertices; where links differ in bandwidth, each is drawn as wide as its class, with a legend in GB/s.
    Example: ``synth draw sp-8x8.json --out sp-8x8.png``
    """
    from synth.analysis.draw import draw  # waits for the command: draw pulls in matplotlib when it runs

    net = Network(parse_bandwidth(args.bandwidth), parse_time(args.hop_latency), parse_time(args.alpha),
                  args.element_bytes)
    progress(f"drawing {args.file}")
    d = draw(args.file, args.out, round_=args.round, size=args.size, net=net)
    if args.json:
        print(json.dumps({"file": args.file, "out": args.out, **d.to_json()}))
        return EXIT_OK
    shown = f"round {d.rounds[0]}" if len(d.rounds) == 1 else f"{len(d.rounds)} rounds"
    print(f"{args.out}: {d.label} on {d.topology}, {d.width}x{d.height} px; {shown}, loads {d.load_min:,} to "
          f"{d.load_max:,} bytes; modeled {d.model_seconds * 1e6:.2f} us at {format_size(d.size)}")
    return EXIT_OK


def add_parser(sub) -> None:
    """Add ``synth draw FILE --out PICTURE`` to the subparsers ``sub``."""
    p = sub.add_parser("draw", help="a picture of a schedule: trees, link loads, timeline",
                       description=cmd_draw.__doc__)
    p.add_argument("file", help="a certificate or an explicit schedule file")
    p.add_argument("--out", required=True, help="the picture to write: a .png or .svg file")
    p.add_argument("--round", type=int_in(1, 1 << 30), help="draw the loads of this round only (default: every "
                                                             "round, at most 16 panels)")
    p.add_argument("--size", type=size, default=1 << 20, help="bytes per node for loads and times (default 1MiB)")
    p.add_argument("--bandwidth", default="400Gbps", help="per-link bandwidth (default 400Gbps)")
    p.add_argument("--hop-latency", default="400ns", help="latency per hop (default 400ns)")
    p.add_argument("--alpha", default="1us", help="fixed cost per round (default 1us; see synth.analysis.cost)")
    p.add_argument("--element-bytes", type=int_in(1, 1024), default=4, help="bytes per element (default 4)")
    p.add_argument("--json", action="store_true", help="print what was drawn as one JSON object")
    p.set_defaults(func=cmd_draw)
