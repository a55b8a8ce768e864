"""The ``synth`` command line: a thin layer over the library.

Each command parses its arguments, calls the library, and :func:`main` turns every
expected failure (a :class:`~synth.errors.SynthError`, and as a safety net any
``OSError``, ``ValueError``, ``OverflowError``, ``RecursionError`` or ``MemoryError``)
into one line ``synth: error: ...`` on stderr with exit code 2.  ``synth check`` exits 1
only when a schedule fails its check (INVALID); a crash is never 1.  SIGTERM is handled
like Ctrl-C, so a write in progress removes its temp file.  Flags are validated where
they are parsed: time limits finite and positive, seeds 32-bit, counts and sizes in range.

Exit codes: 0 success, 1 a failed check or run (INVALID), 2 an error, 130 Ctrl-C, 143 SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import threading
import time

from synth import __version__
from synth.errors import SynthError

#: ``synth.models.khop.SOLVERS``, spelled out so that building the parser imports no solver
KHOP_SOLVERS = ("auto", "scip", "highs", "cpsat", "heuristic")

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 128 + signal.SIGTERM

DEFAULT_TIME_LIMIT = 60.0
#: longest accepted --time-limit / --timeout (about 4 months): a bound that catches typos, not a real wait
MAX_SECONDS = 1e7
#: seeds go to the solvers as 32-bit ints (SCIP's randomization/randomseedshift, CP-SAT's random_seed)
MAX_SEED = 2**31 - 1
#: input elements per node (--elements): 2**48 float32 elements are 1 PiB, the largest size parse_size takes
MAX_ELEMENTS = 2**48
#: what the round lower bound binds: it holds for one-hop schedules with 2p-2 transmissions per chunk
ROUND_BOUND_SCOPE = "one-hop schedules with 2p-2 transmissions per chunk"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints the usage too)
        raise SynthError(f"{self.prog}: {message}")


def _progress(message: str) -> None:
    if sys.stderr.isatty():
        print(f"[synth] {message}", file=sys.stderr, flush=True)


def _report(message: str) -> None:
    """Progress that shows on stderr even when it is not a terminal (one line per solved depth)."""
    print(f"[synth] {message}", file=sys.stderr, flush=True)


def _note(message: str) -> None:
    print(f"note: {message}", file=sys.stderr, flush=True)


def _stdout_for(args):
    """Where a command's summary goes: stderr when ``--out -`` puts the file itself on stdout."""
    return sys.stderr if getattr(args, "out", None) == "-" else sys.stdout


# ---------------------------------------------------------------- flag types (argparse ``type=``)
def seconds(text) -> float:
    """A time limit: a finite number of seconds above 0 and at most :data:`MAX_SECONDS`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"cannot read {str(text)[:40]!r} as seconds") from None
    if not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
        raise argparse.ArgumentTypeError(f"{str(text)[:40]!r} must be a finite number of seconds above 0 "
                                         f"and at most {MAX_SECONDS:g}")
    return value


def int_in(lo: int, hi: int):
    """A ``type=`` for whole numbers from ``lo`` to ``hi``."""
    def parse(text) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{str(text)[:40]!r} is not a whole number") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{str(text)[:40]} is out of range ({lo} to {hi:,})")
        return value
    parse.__name__ = f"whole number {lo}..{hi}"
    return parse


def size(text) -> int:
    """A message size in bytes, read by :func:`synth.cost.parse_size` (the one size parser)."""
    from synth.cost import parse_size

    try:
        return parse_size(text)
    except SynthError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def sizes(text) -> list:
    """Comma-separated message sizes (``64KiB,1MiB``)."""
    out = [size(part) for part in str(text).split(",") if part.strip()]
    if not out:
        raise argparse.ArgumentTypeError("give at least one size, e.g. 64KiB,1MiB")
    return out


def _fmt(x) -> str:
    from fractions import Fraction

    if isinstance(x, Fraction):
        return str(x) if x.denominator == 1 else f"{float(x):.6f} ({x})"
    return str(x)


def _topology_from_args(args):
    from synth.hyperx import parse_hyperx
    from synth.spineleaf import parse_spine_leaf
    from synth.torus import parse_torus

    given = [(flag, getattr(args, flag, None)) for flag in ("torus", "hyperx", "spine_leaf", "topology")]
    given = [(flag, value) for flag, value in given if value is not None]
    if len(given) != 1:
        raise SynthError("name exactly one topology: --torus 16x16, --hyperx 32x32, --spine-leaf 16,32,16 "
                         "or --topology FILE")
    flag, value = given[0]
    if flag == "topology":
        from synth.usertopo import read_topology

        topology, args.generators = read_topology(value)
        return topology
    return {"torus": parse_torus, "hyperx": parse_hyperx, "spine_leaf": parse_spine_leaf}[flag](value)


def _group_for(topology, args):
    from synth.registry import default_group

    if getattr(args, "topology", None):
        from synth.usertopo import user_group

        return user_group(topology, getattr(args, "generators", None))
    return default_group(topology)


def _add_topology_args(parser):
    parser.add_argument("--torus", metavar="SHAPE", help="torus side lengths, e.g. 16x16 or 8x8x8")
    parser.add_argument("--hyperx", metavar="SHAPE", help="HyperX sides, e.g. 32x32")
    parser.add_argument("--spine-leaf", metavar="S,L,H", help="spines, leaves, hosts per leaf, e.g. 16,32,16")
    parser.add_argument("--topology", metavar="FILE",
                        help="a synth-topology JSON file: vertices, links, optional compute and generators "
                             "(README, section 'The --topology file')")


# ---------------------------------------------------------------- commands
def cmd_solve(args) -> int:
    """Build a schedule, check it, print a summary and, with --out, write its certificate.

    Example: ``synth solve --torus 16x16 --out sp-16x16.json``
    """
    from synth.solve import solve

    start = time.perf_counter()
    if args.out is not None:
        from synth.fileio import check_writable

        check_writable(args.out)  # before the solve, not after minutes of it
    topology = _topology_from_args(args)
    chosen = None
    if args.size:
        from synth.cost import Network, format_size
        from synth.sweep import sweep, sweep_note

        if args.depth is not None or args.exchange:
            raise SynthError("--size chooses the depth and tree vs exchange itself: drop --depth / --exchange")
        nbytes = args.size
        note = sweep_note(topology, None, args.time_limit, args.seed, args.solver)
        if note:
            _note(f"--size {format_size(nbytes)}: {note}")
        table = sweep(topology, time_limit=args.time_limit, seed=args.seed, solver=args.solver, sizes=[nbytes],
                      net=Network(), progress=_progress, report=_report)
        chosen = table.best[nbytes]
        _report(f"best at {format_size(nbytes)}: {chosen} ({table.times[nbytes][chosen] * 1e6:.2f} us modeled)")
        if chosen == "exchange":
            args.exchange = True
        else:
            args.depth = int(chosen.split("=")[1])
        args.elements = args.elements or nbytes // Network().element_bytes
    start_parent = None
    if args.start:
        from synth.torus import Torus
        from synth.trees import start_tree

        if not isinstance(topology, Torus):
            raise SynthError("--start continues a k-hop tree solve on a torus")
        start_parent = start_tree(topology, args.start)
    note = None if chosen else _time_note(topology, args, start_parent)
    if note:
        _note(note)
    result = solve(topology, depth=args.depth, elements=args.elements, mode=args.mode, exchange=args.exchange,
                   progress=_progress, generators=getattr(args, "generators", None),
                   allow_unbalanced=args.allow_unbalanced, group=args.group, time_limit=args.time_limit,
                   seed=args.seed, solver=args.solver, start=start_parent)
    cert = result.certificate
    cert.provenance["seconds"] = round(time.perf_counter() - start, 3)
    if args.out is not None:  # only --out writes; '-' is stdout, and the summary then goes to stderr
        from synth.certificate import write_certificate

        write_certificate(cert, args.out)
        _progress(f"wrote {args.out}")
    from synth.solve import check_written

    # `valid` is what `synth check` says of the file (of the certificate itself when none is written)
    report = check_written(cert, args.out if args.out not in (None, "-") else None)
    failed = [f"{k}: claimed {v[0]}, measured {v[1]}" for k, v in report.claims.items() if not v[2]]
    for error in report.errors + failed:
        print(f"synth: the certificate does not check: {error}", file=sys.stderr)
    c = cert.claims
    if chosen is not None:
        from synth.check import measure_symmetric
        from synth.cost import goodput, model_time
        from synth.lift import lifted_weights
        from synth.schedule import chunk_elements

        m = measure_symmetric(cert.base, cert.group, chunk_elements(lifted_weights(cert.base, cert.group),
                                                                    cert.elements))
        extra = {"chosen": chosen, "size": format_size(args.size), "modeled_us": round(model_time(m) * 1e6, 3),
                 "goodput_gbps": round(goodput(m) * 8 / 1e9, 2)}
    else:
        extra = {}
    summary = {
        "topology": topology.name, "algorithm": cert.provenance.get("algorithm"),
        "compute_nodes": c["compute_nodes"], "links": c["links"], "diameter": getattr(topology, "diameter", None),
        "chunks": c["chunks"], "rounds": c["rounds"], "round_lower_bound": c["round_lower_bound"],
        "round_lower_bound_scope": ROUND_BOUND_SCOPE,
        "round_optimal": c["round_optimal"], "psi": c["psi"], "theta": c["theta"], "omega": c["omega"],
        "weight": c["weight"], "depth": result.depth, "valid": report.valid, "certificate": args.out,
        **{k: v for k, v in cert.solver.items()
           if k in ("status", "lower_bound", "gap", "solver_lower_bound", "balance_status")},
        **extra,
    }
    for note in result.notes:
        _note(note)
    stream = _stdout_for(args)
    if args.json:
        print(json.dumps(summary), file=stream)
    else:
        _print_table(summary, stream)
    return EXIT_OK if report.valid else EXIT_FAILED


#: labels of the text tables where the JSON key alone would mislead
_LABELS = {"round_lower_bound": "round_lower_bound (one-hop)"}


def _print_table(summary: dict, stream) -> None:
    """``key  value`` lines; the bound's scope is in its label, not a line of its own."""
    rows = {_LABELS.get(k, k): v for k, v in summary.items() if k != "round_lower_bound_scope"}
    if "certificate" in summary and summary["certificate"] is None:
        rows["certificate"] = "not written (--out FILE writes it)"
    elif summary.get("certificate") == "-":
        rows["certificate"] = "written to stdout"
    width = max(len(k) for k in rows)
    for k, v in rows.items():
        if v is not None:
            print(f"{k:<{width}}  {v}", file=stream)


def _time_note(topology, args, start=None):
    """The one-line note that this solve may run up to ``--time-limit`` (None when it will not).

    None too when the solve will refuse ``--start`` at once: an error is then the only line.
    """
    from synth.torus import Torus

    if not isinstance(topology, Torus):
        return None
    H = topology.diameter
    khop = args.depth is not None and args.depth < H
    plain_tree = khop and not args.exchange and args.group in (None, "gamma") and topology.is_equal_sided
    balance = not khop and (args.group not in (None, "gamma") or not topology.is_equal_sided)
    if not (khop or balance):
        return None
    if khop and args.exchange and not (topology.is_equal_sided and args.group in (None, "gamma")):
        return None  # depth-bounded exchange needs Γ on an equal-sided torus: solve refuses at once
    if start is not None:
        from synth.schedule import forest_depths

        if not plain_tree or int(forest_depths(topology, start, [0]).max()) > args.depth:
            return None
    elif plain_tree:
        from synth.sweep import cached_depths

        if cached_depths(topology, [args.depth], args.time_limit, args.seed, args.solver):
            return None
    if khop:
        what = f"a depth-{args.depth} {'exchange forest' if args.exchange else 'tree'}"
        if not plain_tree and not args.exchange:
            what += " family"
    else:
        what = f"balanced {'exchange forests' if args.exchange else 'BFS trees'} (CP-SAT)"
    cached = " (a solved tree is cached: the same command again is instant)" if plain_tree else ""
    return (f"solving {what} on {topology.name} may take up to --time-limit {args.time_limit:g} s "
            f"(default {DEFAULT_TIME_LIMIT:g}){cached}")


def cmd_check(args) -> int:
    """Re-derive every claim of a certificate or explicit file; exit 1 if any fails.

    Example: ``synth check instances/torus-16x16-sp.json``
    """
    from synth.certify import check_file

    _progress(f"checking {args.file}")
    report = check_file(args.file, args.mode)
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        m = report.metrics
        print(f"{args.file}: {'VALID' if report.valid else 'INVALID'} ({report.kind}, {report.mode} check)")
        for e in report.errors:
            print(f"  error: {e}")
        if m is not None:
            scope = "" if m.max_route <= 1 else "; this schedule routes over several hops, so it does not bind it"
            print(f"  rounds {m.rounds}, round lower bound (one-hop) {report.round_lower_bound} "
                  f"({report.bound_witness}{scope})")
            print(f"  psi {_fmt(m.psi)}, theta {_fmt(m.theta)}, omega {_fmt(m.omega)}, weight {_fmt(m.weight)}")
            print(f"  {m.compute_nodes} nodes, {m.links} links, {m.chunks} chunks, {m.elements} elements, "
                  f"{m.transmissions} transmissions")
        for key, (claimed, measured, ok) in report.claims.items():
            print(f"  {'ok  ' if ok else 'FAIL'} {key}: claimed {claimed}, measured {measured}")
        for key, value in report.solver.items():
            if key == "dual_bound":
                print("  solver's dual: stored; weight_lower_bound above is re-derived from it (synth.dualbound)")
            else:
                print(f"  solver claim (not re-derived) {key}: {value}")
    return EXIT_OK if report.valid else EXIT_FAILED


def cmd_export(args) -> int:
    """Write a certificate's schedule in another format.

    Example: ``synth export cert.json --format explicit --out schedule.jsonl``
    """
    from synth.certificate import read_certificate
    from synth.explicit import write_explicit
    from synth.fileio import read_json
    from synth.lift import lift, lifted_weights
    from synth.schedule import chunk_elements

    from synth.fileio import check_writable

    check_writable(args.out)
    if args.format == "msccl-xml":
        from synth.runtime.cli import export_msccl_from_args

        return export_msccl_from_args(args)
    if args.format != "explicit":
        raise SynthError(f"unknown export format {args.format!r}; valid: explicit, msccl-xml")
    from synth.certify import file_kind

    if file_kind(args.file) == "explicit":  # e.g. a baseline: already explicit, re-written after validation
        from synth.runtime.explicit_export import reemit_explicit

        line = reemit_explicit(args.file, args.out, args.elements)
        if args.json:
            print(json.dumps({"file": args.out, "format": "explicit", "note": line}), file=_stdout_for(args))
        else:
            print(line, file=_stdout_for(args))
        return EXIT_OK
    cert = read_certificate(read_json(args.file))
    n = cert.base.n_transmissions * cert.group.order
    if n > args.max_transmissions:
        raise SynthError(f"the explicit schedule has {n:,} transmissions, over --max-transmissions "
                         f"{args.max_transmissions:,}; raise it if you really want that file")
    elements = args.elements or cert.elements
    _progress(f"lifting {n:,} transmissions")
    schedule = lift(cert.base, cert.group)
    sizes = chunk_elements(lifted_weights(cert.base, cert.group), elements)
    claims = cert.claims if elements == cert.elements else None
    write_explicit(schedule, sizes, args.out, claims)
    stream = _stdout_for(args)
    if args.json:
        print(json.dumps({"file": args.out, "format": "explicit", "transmissions": n, "chunks": schedule.n_chunks,
                          "rounds": schedule.n_rounds, "elements": elements}), file=stream)
    else:
        print(f"wrote {args.out}: {n} transmissions, {schedule.n_chunks} chunks, {schedule.n_rounds} rounds",
              file=stream)
    return EXIT_OK


def cmd_info(args) -> int:
    """Facts about a topology: size, diameter, distances, symmetry group, round lower bound.

    Example: ``synth info --torus 8x8x8``
    """
    import numpy as np

    from synth.check import round_lower_bound

    t = _topology_from_args(args)
    g = _group_for(t, args)
    bound, witness = round_lower_bound(t, g)
    first = int(t.compute[0])
    dist = t.bfs([first])[t.compute]
    info = {"topology": t.name, "vertices": t.n_vertices, "compute_nodes": t.n_compute, "links": t.n_links,
            "out_degree": sorted(set(np.bincount(t.link_src, minlength=t.n_vertices)[t.compute].tolist())),
            "diameter": getattr(t, "diameter", None) or int(dist.max()),
            "distance_distribution": np.bincount(dist).tolist(),
            "group": g.name if g else None, "group_order": g.order if g else None,
            "link_orbits": g.n_link_orbits if g else None, "orbit_sizes": g.orbit_sizes.tolist() if g else None,
            "regular_on_links": g.is_regular if g else None,
            "round_lower_bound": bound, "bound_witness": witness}
    if args.json:
        print(json.dumps({**info, "round_lower_bound_scope": ROUND_BOUND_SCOPE}))
    else:
        _print_table(info, sys.stdout)
    return EXIT_OK


def cmd_bound(args) -> int:
    """The round lower bound for fully bandwidth-optimal schedules (SPEC 3), and what attains it.

    Example: ``synth bound --torus 8x8``
    """
    from synth.check import round_lower_bound

    from synth.torus import Torus

    t = _topology_from_args(args)
    bound, witness = round_lower_bound(t, _group_for(t, args))
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


def cmd_baseline(args) -> int:
    """Generate a baseline algorithm as a checkable explicit schedule.

    Example: ``synth baseline bucket --torus 8x8 --out bucket-8x8.jsonl``
    """
    from synth.baselines import SUPPORTED, build_baseline

    if args.out is not None:
        from synth.fileio import check_writable

        check_writable(args.out)
    t = _topology_from_args(args)
    if args.name not in SUPPORTED:
        raise SynthError(f"unknown baseline {args.name!r}; valid: {', '.join(sorted(SUPPORTED))}")
    b = build_baseline(args.name, t)
    m = b.measure(args.elements)
    if args.out:
        b.write(args.out, args.elements)
        _progress(f"wrote {args.out}")
    out = {"topology": t.name, "algorithm": args.name, "rounds": m.rounds, "psi": str(m.psi),
           "theta": str(m.theta), "omega": str(m.omega), "weight": str(m.weight), "chunks": m.chunks,
           "transmissions": m.transmissions, "notes": b.notes, "file": args.out}
    stream = _stdout_for(args)
    if args.json:
        print(json.dumps(out), file=stream)
    else:
        width = max(len(k) for k in out)
        for k, v in out.items():
            if v not in (None, ""):
                print(f"{k:<{width}}  {v}", file=stream)
    return EXIT_OK


def cmd_compare(args) -> int:
    """Model every algorithm at each message size: rounds, deficiencies, time, goodput; best marked.

    Example: ``synth compare --torus 8x8 --sizes 64KiB,1MiB,64MiB``
    """
    from synth.compare import compare
    from synth.cost import Network, format_size, parse_bandwidth, parse_time

    t = _topology_from_args(args)
    sizes = args.sizes
    net = Network(parse_bandwidth(args.bandwidth), parse_time(args.hop_latency), parse_time(args.alpha),
                  args.element_bytes)
    algorithms = [a.strip() for a in args.algorithms.split(",")] if args.algorithms else None
    notes = []
    rows = compare(t, sizes, net, algorithms, _progress, notes)
    if args.json:
        print(json.dumps({"topology": t.name, "bandwidth_bytes_per_s": net.bandwidth,
                          "hop_latency_s": net.hop_latency, "alpha_s": net.alpha, "notes": notes,
                          "rows": [r.to_json() for r in rows]}))
        return EXIT_OK
    print(f"{t.name}: {args.bandwidth} links, {args.hop_latency} per hop, alpha {args.alpha}; "
          "* marks the fastest at each size")
    print(f"{'size':>8} {'algorithm':<20} {'S':>5} {'psi':>7} {'theta':>7} {'omega':>7} "
          f"{'time (us)':>11} {'goodput':>12} {'% bound':>8}")
    for r in rows:
        print(f"{format_size(r.size):>8} {r.algorithm + (' *' if r.best else ''):<20} {r.rounds:>5} "
              f"{float(r.psi):>7.3f} {float(r.theta):>7.3f} {float(r.omega):>7.3f} {r.seconds * 1e6:>11.2f} "
              f"{r.goodput * 8 / 1e9:>8.1f} Gb/s {100 * r.fraction_of_bound:>7.1f}")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return EXIT_OK


def cmd_sweep(args) -> int:
    """Solve every depth bound: W*(k), bound, gap, theta, rounds, and the best choice per message size.

    Example: ``synth sweep --torus 16x16 --depths 1..16 --jobs 2``
    """
    from synth.cost import Network, format_size, parse_bandwidth, parse_time
    from synth.fileio import check_writable, write_atomic
    from synth.sweep import parse_depths, sweep, sweep_note

    if args.out:
        check_writable(args.out)
    t = _topology_from_args(args)
    net = Network(parse_bandwidth(args.bandwidth), parse_time(args.hop_latency), parse_time(args.alpha))
    depths = parse_depths(args.depths, t.diameter) if args.depths is not None else None
    kw = {"sizes": args.sizes} if args.sizes else {}
    note = sweep_note(t, depths, args.time_limit, args.seed, args.solver, args.jobs)
    if note:
        _note(note)
    table = sweep(t, depths, time_limit=args.time_limit, seed=args.seed, solver=args.solver, jobs=args.jobs,
                  net=net, progress=_progress, report=_report, **kw)
    if args.out:
        write_atomic(args.out, json.dumps(table.to_json(), indent=1) + "\n")
    stream = _stdout_for(args)
    if args.json:
        print(json.dumps(table.to_json()), file=stream)
        return EXIT_OK
    print(f"{t.name}: k-hop trees lifted by Gamma (p = {t.n_vertices}, H = {t.diameter})", file=stream)
    print(f"{'k':>3} {'depth':>5} {'rounds':>6} {'W':>7} {'bound':>9} {'gap %':>7} {'theta':>7} {'status':>9}",
          file=stream)
    for r in table.rows:
        print(f"{r.k:>3} {r.depth:>5} {r.rounds:>6} {r.weight:>7} {r.lower_bound:>9} {100 * r.gap:>7.2f} "
              f"{float(r.theta):>7.3f} {r.status:>9}", file=stream)
    print("best schedule per message size (modeled time):", file=stream)
    for size_, best in table.best.items():
        print(f"  {format_size(size_):>8}: {best}", file=stream)
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    from synth.runtime.cli import add_msccl_export_arguments, add_run_command

    p = _Parser(prog="synth", description="Provably optimal allreduce schedules on symmetric networks.")
    p.add_argument("--version", action="version", version=f"synth {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    s = sub.add_parser("solve", help="build, check and certify a schedule", description=cmd_solve.__doc__)
    _add_topology_args(s)
    s.add_argument("--depth", type=int_in(1, MAX_SEED), metavar="K", help="tree depth bound (k-SP-allreduce)")
    s.add_argument("--size", metavar="BYTES", type=size,
                   help="choose the depth (and tree vs exchange) with the least modeled time at this message "
                        "size, e.g. 1MiB (solves every depth below H once, up to --time-limit each, with one "
                        "progress line per depth; solved trees are cached and reused)")
    s.add_argument("--exchange", action="store_true",
                   help="forest plus exchange: 2H-1 rounds on tori with an even side (round-optimal)")
    s.add_argument("--elements", type=int_in(1, MAX_ELEMENTS), metavar="N",
                   help="input elements per node (default: one per chunk)")
    s.add_argument("--group", choices=("gamma", "translations-negation", "translations"),
                   help="torus symmetry group to lift with (default: gamma on equal sides, else "
                        "translations-negation); smaller groups need fewer chunks")
    s.add_argument("--time-limit", type=seconds, default=DEFAULT_TIME_LIMIT, metavar="S",
                   help=f"solver time limit in seconds (default {DEFAULT_TIME_LIMIT:g}); only --depth K below the "
                        "diameter, --size and the balance models of rectangular tori or smaller groups solve, "
                        "and then a note on stderr says so; SP-allreduce needs no solver")
    s.add_argument("--seed", type=int_in(0, MAX_SEED), default=0,
                   help="solver seed, 0 to 2**31-1 (results are deterministic per seed)")
    s.add_argument("--solver", default="auto", choices=KHOP_SOLVERS,
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
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=cmd_solve)

    c = sub.add_parser("check", help="re-derive every claim of a file", description=cmd_check.__doc__)
    c.add_argument("file")
    c.add_argument("--mode", default="auto", choices=("auto", "explicit", "symmetric"))
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_check)

    e = sub.add_parser("export", help="write a schedule in another format", description=cmd_export.__doc__)
    e.add_argument("file")
    e.add_argument("--format", default="explicit", help="explicit (JSON Lines) or msccl-xml")
    e.add_argument("--out", required=True, metavar="FILE", help="output path ('-': stdout, the summary then "
                                                                 "goes to stderr)")
    e.add_argument("--elements", type=int_in(1, MAX_ELEMENTS), metavar="N",
                   help="input elements per node (default: the certificate's)")
    e.add_argument("--max-transmissions", type=int_in(1, 2**40), default=20_000_000, metavar="N")
    e.add_argument("--json", action="store_true")
    add_msccl_export_arguments(e)
    e.set_defaults(func=cmd_export)
    add_run_command(sub)

    bd = sub.add_parser("bound", help="round lower bound and what attains it", description=cmd_bound.__doc__)
    _add_topology_args(bd)
    bd.add_argument("--json", action="store_true")
    bd.set_defaults(func=cmd_bound)

    b = sub.add_parser("baseline", help="a baseline algorithm as an explicit schedule",
                       description=cmd_baseline.__doc__)
    b.add_argument("name", help="ring, bucket, swing-l, swing-b, trivance-l, trivance-b, recursive-doubling, "
                                "halving-doubling")
    _add_topology_args(b)
    b.add_argument("--out", metavar="FILE", help="write the explicit schedule (JSON Lines) here ('-': stdout)")
    b.add_argument("--elements", type=int_in(1, MAX_ELEMENTS), metavar="N",
                   help="input elements per node (default: one per chunk)")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=cmd_baseline)

    cp = sub.add_parser("compare", help="modeled time and goodput of every algorithm", description=cmd_compare.__doc__)
    _add_topology_args(cp)
    cp.add_argument("--sizes", type=sizes, default="64KiB,1MiB,64MiB", help="comma-separated message sizes")
    cp.add_argument("--bandwidth", default="400Gbps", help="per-link bandwidth (default 400Gbps)")
    cp.add_argument("--hop-latency", default="400ns", help="latency per hop (default 400ns)")
    cp.add_argument("--alpha", default="1us", help="fixed cost per round (default 1us; see synth.cost)")
    cp.add_argument("--element-bytes", type=int_in(1, 1024), default=4, help="bytes per element (default 4)")
    cp.add_argument("--algorithms", help="comma-separated subset (default: all that apply)")
    cp.add_argument("--json", action="store_true")
    cp.set_defaults(func=cmd_compare)

    sw = sub.add_parser("sweep", help="W*(k) for every depth and the best k per size", description=cmd_sweep.__doc__)
    sw.add_argument("--torus", metavar="SHAPE", required=True)
    sw.add_argument("--depths", help="e.g. 1..16 or 2,3,5 (default: 1..H)")
    sw.add_argument("--jobs", type=int_in(1, 256), default=1, help="parallel solver processes")
    sw.add_argument("--time-limit", type=seconds, default=DEFAULT_TIME_LIMIT, metavar="S",
                    help=f"per depth (default {DEFAULT_TIME_LIMIT:g})")
    sw.add_argument("--seed", type=int_in(0, MAX_SEED), default=0)
    sw.add_argument("--solver", default="auto", choices=KHOP_SOLVERS)
    sw.add_argument("--sizes", type=sizes, help="comma-separated message sizes (default 64KiB..256MiB, powers of two)")
    sw.add_argument("--bandwidth", default="400Gbps")
    sw.add_argument("--hop-latency", default="400ns")
    sw.add_argument("--alpha", default="1us", help="fixed cost per round (default 1us)")
    sw.add_argument("--out", metavar="FILE", help="write the table as JSON ('-': stdout)")
    sw.add_argument("--json", action="store_true")
    sw.set_defaults(func=cmd_sweep)

    i = sub.add_parser("info", help="facts about a topology", description=cmd_info.__doc__)
    _add_topology_args(i)
    i.add_argument("--json", action="store_true")
    i.set_defaults(func=cmd_info)
    return p


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised wherever the program is, so that cleanup (temp files) runs as for Ctrl-C."""


def _on_sigterm(signum, frame):
    raise Terminated()


def main(argv=None) -> int:
    """Run one ``synth`` command; return its exit code (see the module docstring)."""
    handled = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if handled else None
    try:
        return _main(argv)
    finally:
        if handled:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    else:
        text = str(exc)
    text = " ".join(text.split()) or exc.__class__.__name__
    return text if len(text) <= 400 else text[:400] + " ..."


def _main(argv) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help()
            return EXIT_USAGE
        return args.func(args)
    except SynthError as exc:
        print(f"synth: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except Terminated:
        print("synth: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("synth: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `synth check FILE | head`: stop quietly like other shell tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except MemoryError:
        print("synth: error: out of memory (try --mode symmetric or a smaller instance)", file=sys.stderr)
        return EXIT_USAGE
    except RecursionError:
        print("synth: error: the input is nested too deeply", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"synth: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, OverflowError) as exc:  # a check the library missed: still the user's input, one line
        print(f"synth: error: {_one_line(exc)} ({exc.__class__.__name__})", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # a bug: one line and a way to the traceback, never exit 1 (INVALID)
        if os.environ.get("SYNTH_DEBUG"):
            import traceback

            traceback.print_exc()
        print(f"synth: internal error: {exc.__class__.__name__}: {_one_line(exc)} (a bug: please report it with "
              "the command; SYNTH_DEBUG=1 prints the traceback)", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
