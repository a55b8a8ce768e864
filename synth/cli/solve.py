"""``synth solve``: build a schedule, check it, print a summary, write its certificate."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace

from synth.cli._common import (DEFAULT_TIME_LIMIT, EXIT_FAILED, EXIT_OK, MAX_DEPTH, MAX_ELEMENTS, MAX_SEED,
                               add_cluster_arg, add_topology_args, int_in, print_note, print_table, progress,
                               progress_always, seconds, size, stdout_for, topology_from_args)
from synth.analysis.simulate import ENGINES
from synth.errors import SynthError
from synth.models._names import SOLVERS  # the --solver choices, without importing a solver
from synth.symmetry.spec import TORUS_GROUPS  # the --group choices: the one table of group names
from synth.check.certificate import read_certificate, write_certificate
from synth.units import format_size
from synth.fileio import check_writable, printable
from synth.schedule.data import COLLECTIVES
from synth.solving import SolveRequest, check_written, plan
from synth.solving.by_size import choice_summary, choose_by_size, size_note, size_summary
from synth.solving.candidates import takes_candidates
from synth.solving.cache import cache_dir, cache_writable
from synth.solving.khop import start_tree
from synth.solving.summary import solve_summary
from synth.topology.torus import Torus

__all__ = ["add_parser", "cmd_solve", "print_result", "print_plan"]


def cmd_solve(args) -> int:
    """Build a schedule, check it, print a summary and, with --out, write its certificate.

    Example: ``synth solve --torus 16x16 --out sp-16x16.json``
    """
    start = time.perf_counter()
    if args.out is not None:
        check_writable(args.out)  # before the solve, not after minutes of it
    topology = topology_from_args(args)
    choice = None
    sweep = bool(args.size) and not takes_candidates(topology)   # an equal-sided torus: the depth sweep
    if args.size:
        if args.collective != "allreduce":
            raise SynthError("--size chooses among allreduce schedules; with --collective give --depth K instead")
        if args.depth is not None or args.exchange:
            raise SynthError("--size chooses the depth and tree vs exchange itself: drop --depth / --exchange")
    if sweep and args.plan:
        raise SynthError("--plan shows what one solve would build; --size on an equal-sided torus solves every depth "
                         "to choose one: drop --size, or give the --depth it chose")
    if sweep:
        note = size_note(topology, args.time_limit, args.seed, args.solver)
        if note:
            print_note(f"--size {format_size(args.size)}: {note}")
        choice = choose_by_size(topology, args.size, time_limit=args.time_limit, seed=args.seed, solver=args.solver,
                                progress=progress, report=progress_always, engine=args.engine,
                                solve_many=_solve_many(args))
        how = "modeled" if args.engine == "model" else "simulated"
        progress_always(f"best at {format_size(args.size)}: {choice.chosen} "
                        f"({choice.modeled_seconds * 1e6:.2f} us {how})")
        args.depth, args.exchange = choice.depth, choice.exchange
        args.elements = args.elements or choice.elements
    elif args.engine != "model" and not args.size:
        raise SynthError("--engine times the candidates of --size: give --size too")
    elif args.cluster is not None:
        raise SynthError("--cluster spreads the depths that --size compares on an equal-sided torus: give --size "
                         "too, on such a torus")
    start_parent = None
    if args.start:
        if not isinstance(topology, Torus):
            raise SynthError("--start continues a k-hop tree solve on a torus")
        start_parent = start_tree(topology, args.start)
    request = SolveRequest(topology, depth=args.depth, elements=args.elements, mode=args.mode,
                           exchange=args.exchange, progress=progress, generators=getattr(args, "generators", None),
                           allow_unbalanced=args.allow_unbalanced, group=args.group, time_limit=args.time_limit,
                           seed=args.seed, solver=args.solver, start=start_parent, collective=args.collective,
                           size=None if sweep else args.size, engine="model" if sweep else args.engine)
    chosen = plan(request)
    if args.plan:
        return print_plan(topology, chosen, args)
    note = None if choice else _time_note(topology, chosen)
    if note:
        print_note(note)
    result = chosen.build(request, chosen)
    cert = result.certificate
    cert.provenance["seconds"] = round(time.perf_counter() - start, 3)
    if args.out is not None:  # only --out writes; '-' is stdout, and the summary then goes to stderr
        write_certificate(cert, args.out)
        progress(f"wrote {args.out}")

    # `valid` is what `synth check` says of the file (of the certificate itself when none is written)
    if args.out not in (None, "-"):
        # read back once the solve's own objects are let go (the LP's arcs in the plan, the trees the writer took),
        # so the check does not come on top of them: 16x20x28 with a failed link peaked at 11.6 GB with them
        chosen = cert = None
        result = replace(result, certificate=None)
        cert = read_certificate(args.out)
        result = replace(result, certificate=cert)
    report = check_written(cert)
    failed = [f"{k}: claimed {v[0]}, measured {v[1]}" for k, v in report.claims.items() if not v[2]]
    for error in report.errors + failed:
        print(f"synth: the certificate does not check: {error}", file=sys.stderr)

    extra = None
    if choice is not None:
        extra = size_summary(cert, choice)
    elif "size_choice" in cert.provenance:
        extra = choice_summary(cert)
    return print_result(topology, result, report, args, extra)


def print_result(topology, result, report, args, extra=None) -> int:
    """The notes on stderr, then the summary (a table, or ``--json``); the exit code of the checker's verdict."""
    summary = solve_summary(topology, result, report, args.out, extra)
    for note in result.notes:
        print_note(note)
    stream = stdout_for(args)
    if args.json:
        print(json.dumps(summary), file=stream)
    else:
        print_table(summary, stream)
    return EXIT_OK if report.valid else EXIT_FAILED


def _solve_many(args):
    """Who solves the depths of ``--size``: campaign tasks on ``--cluster``, or this process (None)."""
    if args.cluster is None:
        return None
    # the campaign stage (and Dask) load only for --cluster
    from synth.campaign import parse_cluster
    from synth.campaign.calls import khop_solver

    parse_cluster(args.cluster)
    return khop_solver(args.cluster, notice=progress_always)


def _time_note(topology, chosen):
    """The one-line note that this solve may run up to ``--time-limit`` (None when it will not), from the plan."""
    if not chosen.solves or chosen.time_limit is None or chosen.construction not in _NOTED:
        return None
    if chosen.construction == "by-size":
        return (f"solving {len(chosen.prepared.candidates)} candidates on {topology.name} may take up to --time-limit "
                f"{chosen.time_limit:g} CPU s in all (they share it; default {DEFAULT_TIME_LIMIT:g}); raise it for "
                "schedules nearer the bound")
    what = _NOTED[chosen.construction].format(k=chosen.depth, family="exchange forests" if chosen.exchange
                                              else "BFS trees")
    cached = ""
    if chosen.construction == "khop-tree":
        cached = (" (a solved tree is cached: the same command again is instant)" if cache_writable() else
                  f" (the solve cache {printable(cache_dir())} cannot be written: the same command solves again)")
    return (f"solving {what} on {topology.name} may take up to --time-limit {chosen.time_limit:g} s "
            f"(default {DEFAULT_TIME_LIMIT:g}){cached}")


#: the constructions whose solve the note announces, and what it calls them
_NOTED = {"khop-tree": "a depth-{k} tree", "khop-exchange": "a depth-{k} exchange forest",
          "khop-family": "a depth-{k} tree family", "balanced-family": "balanced {family} (CP-SAT)",
          "by-size": "the candidates"}


def print_plan(topology, chosen, args) -> int:
    """``--plan``: what the solve would build and why, on stdout (a table, or ``--json``); solves nothing."""
    summary = {"topology": topology.name, **chosen.as_dict()}
    if args.json:
        print(json.dumps(summary))
    else:
        print_table({k: (", ".join(v) if isinstance(v, list) else v) for k, v in summary.items()
                     if not (isinstance(v, list) and not v)}, sys.stdout)
    return EXIT_OK


def add_parser(sub) -> None:
    """Add ``synth solve`` to the subparsers ``sub``."""
    s = sub.add_parser("solve", help="build, check and certify a schedule", description=cmd_solve.__doc__)
    add_topology_args(s)
    s.add_argument("--depth", type=int_in(1, MAX_DEPTH), metavar="K", help="tree depth bound (k-SP-allreduce)")
    s.add_argument("--size", metavar="BYTES", type=size,
                   help="choose the schedule with the least modeled time at this message size, e.g. 1MiB: on an "
                        "equal-sided torus the depth (and tree vs exchange; every depth below H solved once, up "
                        "to --time-limit each, one progress line per depth, solved trees cached); elsewhere "
                        "(damaged networks, meshes, lattices, --topology) the layered trees, timed trees of "
                        "H..H+4 reduce rounds, the depth-bounded trees and the Ring, sharing --time-limit; "
                        "--plan lists them")
    s.add_argument("--collective", default="allreduce", choices=COLLECTIVES,
                   help="the collective to certify: allreduce (default), or the reduce-scatter or allgather half "
                        "of the same tree (h rounds for a tree of depth h; not with --exchange)")
    s.add_argument("--engine", default="model", choices=ENGINES,
                   help="with --size: what times each candidate, the cost model (default) or a SimGrid replay "
                        "(rounds mode; needs python3-simgrid)")
    add_cluster_arg(s, "the depths that --size compares")
    s.add_argument("--exchange", action="store_true",
                   help="forest plus exchange: 2H-1 rounds on tori with an even side (round-optimal)")
    s.add_argument("--elements", type=int_in(1, MAX_ELEMENTS), metavar="N",
                   help="input elements per node (default: one per chunk); a packing "
                        "schedule rounds to as many units as they fill")
    s.add_argument("--group", choices=tuple(TORUS_GROUPS),
                   help="torus symmetry group to lift with (default: gamma on equal sides, else "
                        "translations-negation); smaller groups need fewer chunks")
    s.add_argument("--time-limit", type=seconds, default=DEFAULT_TIME_LIMIT, metavar="S",
                   help=f"solver time limit in seconds (default {DEFAULT_TIME_LIMIT:g}); only --depth K below the "
                        "diameter, --size and the balance models of rectangular tori or smaller groups solve, "
                        "and then a note on stderr says so; SP-allreduce needs no solver")
    s.add_argument("--seed", type=int_in(0, MAX_SEED), default=0,
                   help="solver seed, 0 to 2**31-1 (results are deterministic per seed)")
    s.add_argument("--solver", default="auto", choices=SOLVERS,
                   help="k-hop solver: LP bound, branch-and-cut in SCIP and window LNS (auto, scip; auto "
                        "falls back to CP-SAT without pyscipopt); the same with a CP-SAT or HiGHS MIP (cpsat, "
                        "highs); or local search and the bound only (heuristic)")
    s.add_argument("--start", metavar="FILE",
                   help="with --depth: start the k-hop solve from the tree of this certificate (e.g. an "
                        "earlier run's); the result is never heavier")
    s.add_argument("--allow-unbalanced", action="store_true",
                   help="with --topology: return the best-omega lift even when no symmetry balances it")
    s.add_argument("--mode", default="auto", choices=("auto", "explicit", "symmetric"), help="how to check")
    s.add_argument("--out", metavar="FILE",
                   help="write the certificate here ('-': to stdout, the summary then goes to stderr); without "
                        "--out no file is written")
    s.add_argument("--plan", action="store_true",
                   help="print which construction would run and why (group, whether --time-limit applies, "
                        "whether the cache answers; with --size off an equal-sided torus, the candidates), and "
                        "solve nothing")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_solve)
