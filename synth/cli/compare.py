"""``synth compare``: modeled time and goodput of every algorithm at each message size."""

from __future__ import annotations

import json
import sys

from synth.cli._common import (EXIT_OK, add_cluster_arg, add_topology_args, int_in, progress, progress_always,
                               seconds, sizes, topology_argv, topology_from_args)
from synth.errors import SynthError
from synth.analysis.compare import DEFAULT_SOLVE_SECONDS, compare
from synth.analysis.cost import Network, link_class_rates, rates_json
from synth.schedule.data import COLLECTIVES
from synth.analysis.simulate import ENGINES
from synth.units import format_size, parse_bandwidth, parse_time

__all__ = ["add_parser", "cmd_compare"]


def cmd_compare(args) -> int:
    """Model every algorithm at each message size: rounds, deficiencies, time, goodput; best marked.

    Example: ``synth compare --torus 8x8 --sizes 64KiB,1MiB,64MiB``
    """
    t = topology_from_args(args)
    simulate_many = None
    if args.cluster is not None:
        # the campaign stage (and Dask) load only for --cluster
        from synth.campaign import parse_cluster
        from synth.campaign.calls import compare_simulator

        parse_cluster(args.cluster)
        if args.engine != "simgrid":
            raise SynthError("--cluster spreads the SimGrid replays: give --engine simgrid too")
        argv = ["compare", *topology_argv(args), "--sizes", ",".join(map(str, args.sizes)), "--bandwidth",
                args.bandwidth, "--hop-latency", args.hop_latency, "--alpha", args.alpha, "--element-bytes",
                str(args.element_bytes), "--engine", "simgrid", "--time-limit", repr(args.time_limit)]
        simulate_many = compare_simulator(argv, args.cluster, args.main, notice=progress_always)
    net = Network(parse_bandwidth(args.bandwidth), parse_time(args.hop_latency), parse_time(args.alpha),
                  args.element_bytes)
    algorithms = [a.strip() for a in args.algorithms.split(",")] if args.algorithms else None
    notes = []
    rows = compare(t, args.sizes, net, algorithms, progress, notes, collective=args.collective, engine=args.engine,
                   simulate_many=simulate_many, time_limit=args.time_limit)
    simulated = args.engine != "model"
    if args.json:
        out = {"topology": t.name, **rates_json(link_class_rates(t, net), net), "hop_latency_s": net.hop_latency,
               "alpha_s": net.alpha, "notes": notes, "rows": [r.to_json() for r in rows]}
        print(json.dumps({**out, "engine": args.engine} if simulated else out))
        return EXIT_OK
    links = "links at their own bandwidths" if t.has_bandwidths else f"{args.bandwidth} links"
    hops = "their own latencies" if t.has_latencies else f"{args.hop_latency} per hop"
    print(f"{t.name}: {links}, {hops}, alpha {args.alpha}; "
          f"{'times simulated on SimGrid; ' if simulated else ''}* marks the fastest at each size")
    print(f"{'size':>8} {'algorithm':<20} {'S':>5} {'psi':>7} {'theta':>7} {'omega':>7} "
          f"{'time (us)':>11} {'goodput':>12} {'% bound':>8}")
    for r in rows:
        print(f"{format_size(r.size):>8} {r.algorithm + (' *' if r.best else ''):<20} {r.rounds:>5} "
              f"{float(r.psi):>7.3f} {float(r.theta):>7.3f} {float(r.omega):>7.3f} {r.seconds * 1e6:>11.2f} "
              f"{r.goodput * 8 / 1e9:>8.1f} Gb/s {100 * r.fraction_of_bound:>7.1f}")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return EXIT_OK


def add_parser(sub) -> None:
    """Add ``synth compare`` to the subparsers ``sub``."""
    cp = sub.add_parser("compare", help="modeled time and goodput of every algorithm", description=cmd_compare.__doc__)
    add_topology_args(cp)
    cp.add_argument("--sizes", type=sizes, default="64KiB,1MiB,64MiB", help="comma-separated message sizes")
    cp.add_argument("--bandwidth", default="400Gbps",
                    help="per-link bandwidth (default 400Gbps) of a topology whose links carry none of their own")
    cp.add_argument("--hop-latency", default="400ns",
                    help="latency per hop (default 400ns) of a topology whose links carry no latencies of their own")
    cp.add_argument("--alpha", default="1us", help="fixed cost per round (default 1us; see synth.analysis.cost)")
    cp.add_argument("--element-bytes", type=int_in(1, 1024), default=4, help="bytes per element (default 4)")
    cp.add_argument("--algorithms", help="comma-separated subset (default: all that apply)")
    cp.add_argument("--time-limit", type=seconds, default=DEFAULT_SOLVE_SECONDS, metavar="S",
                    help=f"time limit in seconds of the solve of synth's own schedule (default "
                         f"{DEFAULT_SOLVE_SECONDS:g}; as synth solve --time-limit): only damaged and irregular "
                         "networks and the balance models of rectangular tori solve; progress shows on a terminal")
    cp.add_argument("--collective", default="allreduce", choices=COLLECTIVES,
                    help="compare allreduce (default), or the reduce-scatter or allgather halves")
    cp.add_argument("--engine", default="model", choices=ENGINES,
                    help="what times each algorithm: the cost model (default) or a SimGrid replay (rounds mode)")
    add_cluster_arg(cp, "each algorithm's SimGrid replay (with --engine simgrid)")
    cp.add_argument("--json", action="store_true")
    cp.set_defaults(func=cmd_compare)
