"""``synth sweep``: W*(k) for every depth bound and the best schedule per message size."""

from __future__ import annotations

import json

from synth.cli._common import (DEFAULT_TIME_LIMIT, EXIT_OK, MAX_SEED, add_cluster_arg, int_in, print_note, progress,
                               progress_always, seconds, sizes, stdout_for, topology_from_args)
from synth.models._names import SOLVERS  # the --solver choices, without importing a solver
from synth.analysis.cost import Network
from synth.analysis.simulate import ENGINES
from synth.errors import SynthError
from synth.units import format_size, parse_bandwidth, parse_time
from synth.fileio import check_writable, write_atomic
from synth.solving.sweep import parse_depths, sweep, sweep_note

__all__ = ["add_parser", "cmd_sweep"]


def cmd_sweep(args) -> int:
    """Solve every depth bound: W*(k), bound, gap, theta, rounds, and the best choice per message size.

    Example: ``synth sweep --torus 16x16 --depths 1..16 --jobs 2`` (or ``--cluster local``: each depth a task
    of a Dask cluster)
    """
    if args.out:
        check_writable(args.out)
    t = topology_from_args(args)
    solve_many = None
    if args.cluster is not None:
        # the campaign stage (and Dask) load only for --cluster
        from synth.campaign import parse_cluster
        from synth.campaign.calls import khop_solver

        parse_cluster(args.cluster)
        if args.jobs > 1:
            raise SynthError("--jobs runs local processes; with --cluster the cluster's workers solve: drop one")
        solve_many = khop_solver(args.cluster, notice=progress_always)
    net = Network(parse_bandwidth(args.bandwidth), parse_time(args.hop_latency), parse_time(args.alpha))
    depths = parse_depths(args.depths, t.diameter) if args.depths is not None else None
    kw = {"sizes": args.sizes} if args.sizes else {}
    note = sweep_note(t, depths, args.time_limit, args.seed, args.solver, args.jobs)
    if note:
        print_note(note)
    table = sweep(t, depths, time_limit=args.time_limit, seed=args.seed, solver=args.solver, jobs=args.jobs,
                  net=net, progress=progress, report=progress_always, engine=args.engine, solve_many=solve_many,
                  **kw)
    if args.out:
        write_atomic(args.out, json.dumps(table.to_json(), indent=1) + "\n")
    stream = stdout_for(args)
    if args.json:
        print(json.dumps(table.to_json()), file=stream)
        return EXIT_OK
    print(f"{t.name}: k-hop trees lifted by Gamma (p = {t.n_vertices}, H = {t.diameter})", file=stream)
    print(f"{'k':>3} {'depth':>5} {'rounds':>6} {'W':>7} {'bound':>9} {'gap %':>7} {'theta':>7} {'status':>9}",
          file=stream)
    for r in table.rows:
        print(f"{r.k:>3} {r.depth:>5} {r.rounds:>6} {r.weight:>7} {r.lower_bound:>9} {100 * r.gap:>7.2f} "
              f"{float(r.theta):>7.3f} {r.status:>9}", file=stream)
    print(f"best schedule per message size ({'modeled' if args.engine == 'model' else 'simulated'} time):",
          file=stream)
    for size_, best in table.best.items():
        print(f"  {format_size(size_):>8}: {best}", file=stream)
    return EXIT_OK


def add_parser(sub) -> None:
    """Add ``synth sweep`` to the subparsers ``sub``."""
    sw = sub.add_parser("sweep", help="W*(k) for every depth and the best k per size", description=cmd_sweep.__doc__)
    sw.add_argument("--torus", metavar="SHAPE", required=True)
    sw.add_argument("--depths", help="e.g. 1..16 or 2,3,5 (default: 1..H)")
    sw.add_argument("--jobs", type=int_in(1, 256), default=1, help="parallel solver processes")
    add_cluster_arg(sw, "the depths' solves")
    sw.add_argument("--time-limit", type=seconds, default=DEFAULT_TIME_LIMIT, metavar="S",
                    help=f"per depth (default {DEFAULT_TIME_LIMIT:g})")
    sw.add_argument("--seed", type=int_in(0, MAX_SEED), default=0)
    sw.add_argument("--solver", default="auto", choices=SOLVERS)
    sw.add_argument("--sizes", type=sizes, help="comma-separated message sizes (default 64KiB..256MiB, powers of two)")
    sw.add_argument("--bandwidth", default="400Gbps")
    sw.add_argument("--hop-latency", default="400ns")
    sw.add_argument("--alpha", default="1us", help="fixed cost per round (default 1us)")
    sw.add_argument("--engine", default="model", choices=ENGINES,
                    help="what times each candidate: the cost model (default) or a SimGrid replay (rounds mode)")
    sw.add_argument("--out", metavar="FILE", help="write the table as JSON ('-': stdout)")
    sw.add_argument("--json", action="store_true")
    sw.set_defaults(func=cmd_sweep)
