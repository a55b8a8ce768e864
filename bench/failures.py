"""Damaged and irregular networks: the packing model against the bound, the Ring and the baselines.

Run: ``python bench/failures.py [--set quick|full|scale|pod] [--only NETWORK:FAILURES[:HOW],...] [--sizes 1MiB,16MiB]
[--no-sim] [--sim-limit MESSAGES] [--no-goodput] [--time-limit S] [--workdir DIR] [--json [FILE]]``.

``NETWORK`` is a torus shape (``8x8``), ``mesh`` + a shape (``mesh8x8``: ``synth solve --mesh 8x8``)
or a preset ``NAME@SHAPE`` (``tofu-d@2x2x2``: ``--machine tofu-d:2x2x2``; ``-mesh`` appended for a
mesh allocation, ``--no-wrap``); ``FAILURES`` is ``none`` or failures joined by ``+``:
``l0.0-0.1`` a failed link, ``n1.1`` a failed chip.

The first table solves each network as ``synth solve`` does (:func:`synth.solving.solve`: the packing
path when symmetry cannot balance), certifies, and prints the rounds against the one-hop round bound,
the layered LP's share of the volume bound (the best of its class), the certified schedule's share of
the certified bound (``bandwidth_fraction``, re-derived by ``synth check``), its share of the layered
class's certified bound (``class %``: the LP's dual, docs/bounds.md section 5; blank where none is
claimed), chunks and seconds.

The second table (``--no-goodput`` leaves it out) puts the same certified schedule beside a Ring on a
Hamiltonian cycle of the damaged network (:func:`synth.baselines.damaged.damaged_ring`: a cycle through the surviving chips
that avoids the failed links when one of the candidates does; a step over a failed link or past a
failed chip takes a shortest detour, since a torus of even sides is bipartite and has no Hamiltonian
cycle through an odd number of chips) and the paper's
baselines (Bucket, Swing, Trivance, and the balanced multiport Ring of plain tori) wherever they still
run, each with its refusal otherwise: rounds, ``Q/N``, ``bw %`` (the certified bound over the bandwidth
term) and the goodput (Gb/s) by the cost model and by a SimGrid replay at each size.  Ratios: each row's
simulated goodput over the healthy torus's SP-allreduce on the same shape (the reference rows, failures
``none``), and under each network the packing schedule's simulated goodput over the Ring's.

Sets: ``quick`` (8x8 and 4x4x4 tori with 1, 2, 4, 8 failed links and 1 failed chip, the meshes 8x8 and
4x4x4, a Tofu-D job; about 15 CPU minutes with SimGrid, the timed trees taking up to a minute each),
``full`` (``quick`` and the 16x16 torus with the same failures), ``scale`` (16x16 with one and eight failed links, 32x32 with one: minutes each,
packing only with ``--no-goodput``), ``pod`` (issue 50's damaged pods, :mod:`_pod`: each solve, or
``HOW`` = ``repair`` of the healthy certificate, run by the CLI in a subprocess of its own, with its CPU
seconds, peak memory, certificate size, check time, fraction, rounds and goodput by the model at
``--sizes`` (default there 1MiB,16MiB,256MiB) against the healthy pod, the layered class and RS+AG;
failures there by vertex id, ``l0-1``; the heavy cases take minutes and GBs each, run one at a time).
"""

import tempfile
from fractions import Fraction

from _evaluate import Candidate, baseline, certified, evaluate, merge_refused, size_keys
from _harness import Col, Ratio, Table, log, parse_args, parser, timed
from _pod import POD, pod_case

from synth.baselines.damaged import damaged_ring
from synth.check import execute
from synth.errors import SynthError
from synth.solving import solve
from synth.topology.failures import damage, parse_failures
from synth.topology.machines import machine_spec
from synth.topology.spec import build_topology
from synth.topology.torus import parse_torus
from synth.units import parse_size

#: the 8 failed links of docs/failures.md section 6
L16 = ["l" + pair for pair in "0.0-0.1 2.3-2.4 4.6-4.7 6.9-6.10 8.12-8.13 10.15-10.0 12.2-13.2 14.8-15.8".split()]
EIGHT = "+".join(L16)
L8 = ["l0.0-0.1", "l4.4-4.5", "l2.2-2.3", "l6.6-6.7", "l1.4-2.4", "l3.7-3.0", "l5.1-6.1", "l7.5-0.5"]
L444 = ["l0.0.0-0.0.1", "l2.2.2-2.2.3", "l1.0.3-1.0.0", "l3.1.1-0.1.1", "l0.2.0-0.3.0", "l2.0.1-3.0.1",
        "l1.3.2-1.0.2", "l3.3.3-3.3.2"]


def _series(shape, links, chip):
    """The healthy torus, 1, 2, 4 and 8 of ``links`` failed, and one failed ``chip``."""
    return [(shape, "none")] + [(shape, "+".join(links[:k])) for k in (1, 2, 4, 8)] + [(shape, chip)]


QUICK = (_series("8x8", L8, "n1.1") + _series("4x4x4", L444, "n1.1.1")
         + [("mesh8x8", "none"), ("mesh4x4x4", "none"), ("tofu-d@2x2x2", "none"),
            ("tofu-d@2x2x2", "l0.0.0.0.0.0-0.0.0.0.1.0")])
SETS = {
    "quick": QUICK,
    "full": QUICK + _series("16x16", L16, "n1.1") + [("tofu-d@4x2x2-mesh", "none")],
    "scale": [("16x16", "l0.0-0.1"), ("16x16", EIGHT), ("32x32", "l0.0-0.1")],
    "pod": POD,
}
COLUMNS = [Col("network", fmt="<18"), Col("failures", text=lambda r: _short(r["failures"]), fmt="<24"),
           Col("algorithm", fmt="<18"), Col("rounds", fmt=">6"), Col("bound", "round_bound", ">5"),
           Col("LP %", "lp", ">6.2f"), Col("cert %", "cert", ">7.2f"), Col("class %", "klass", ">7.2f"),
           Col("chunks", fmt=">7"), Col("seconds", fmt=">8.1f")]
PAPER = ("ring", "bucket", "swing-l", "swing-b", "trivance-l", "trivance-b")


def _short(failures):
    """``failures`` for the table: short lists whole, long ones counted."""
    items = failures.split("+")
    if len(failures) <= 24:
        return failures
    links, chips = sum(f[0] == "l" for f in items), sum(f[0] == "n" for f in items)
    return ", ".join(x for x in (f"{links} links" * bool(links), f"{chips} chips" * bool(chips)) if x)


def healthy(name):
    """The healthy network ``name`` names (module docstring)."""
    if name.startswith("mesh"):
        sides = [int(s) for s in name[4:].split("x")]
        return build_topology({"kind": "grid", "shape": sides, "wrap": [False] * len(sides)})
    if "@" in name:
        preset, _, shape = name.partition("@")
        mesh = shape.endswith("-mesh")
        return build_topology(machine_spec(f"{preset}:{shape.removesuffix('-mesh')}", mesh=mesh))
    return parse_torus(name)


def network(name, failures):
    t = healthy(name)
    if failures == "none":
        return t
    items = failures.split("+")
    return damage(t, parse_failures(t, [f[1:] for f in items if f[0] == "l"], [f[1:] for f in items if f[0] == "n"]))


def reference(name):
    """The shape whose healthy torus is the reference row of ``name`` (a mesh's: the torus of its shape)."""
    return name[4:] if name.startswith("mesh") else name.removesuffix("-mesh")


# ------------------------------------------------------------------ the Ring on a Hamiltonian cycle
def ring_on_cycle(t):
    """A Ring (both directions) on a Hamiltonian cycle of the damaged grid ``t``, routed around its failures
    (:func:`synth.baselines.damaged.damaged_ring`), executed; the row says how many steps detour and how long."""
    try:
        b = damaged_ring(t)
    except SynthError as exc:
        return Candidate("ring (cycle)", note=f"refused: {exc}")
    errors = execute(b.schedule)
    if errors:
        return Candidate("ring (cycle)", note=f"INVALID: {errors[0]}")
    _, _, detour = b.notes.partition("; ")
    return Candidate("ring (cycle)", b.schedule, b.weights, info={"detour": detour} if detour else {})


# ------------------------------------------------------------------ the two tables
def packing_row(name, failures, result, seconds):
    c = result.certificate
    fraction = c.claims.get("bandwidth_fraction")
    lp = (c.solver or {}).get("lp_fraction_of_volume_bound")
    klass = c.claims.get("class_bound")
    return {"table": "packing", "network": name, "failures": failures, "algorithm": c.provenance.get("algorithm"),
            "rounds": c.claims.get("rounds"), "round_bound": c.claims.get("round_lower_bound"),
            "lp": None if lp is None else 100 * lp,
            "cert": None if fraction is None else 100 * float(Fraction(fraction)),
            "klass": None if klass is None else 100 * klass["fraction"], "chunks": c.claims.get("chunks"),
            "seconds": seconds}


def goodput_rows(name, failures, t, result, sizes, args):
    cert = result.certificate
    cands = [certified(None, cert), ring_on_cycle(t)]
    # on a damaged network the library's Ring is the cycle above (synth.baselines.damaged): one row, not two
    cands += [baseline(b, t) for b in PAPER if not (b == "ring" and hasattr(t, "failures"))]
    rows = []
    for cand in merge_refused(cands):   # one row for the baselines that do not run here
        log(f"  {t.name}: {cand.name}")
        row = evaluate(t, cand, sizes, sim=not args.no_sim, sim_limit=args.sim_limit)
        is_ref = cand is cands[0] and failures == "none" and reference(name) == name
        rows.append({**row, "table": "goodput", "network": name, "failures": failures, "ref": reference(name),
                     "reference": is_ref})
    return rows


def goodput_table(sizes, json):
    cols = [Col("network", fmt="<18"), Col("failures", text=lambda r: _short(r["failures"]), fmt="<24"),
            Col("algorithm", text=lambda r: r["algorithm"][:40], fmt="<18"), Col("rounds", fmt=">6"),
            Col("Q/N", "q_per_n", ">6.3f"), Col("bw %", "bw", ">6.1f")]
    for label, mkey, skey in size_keys(sizes):
        cols += [Col(f"{label} model", mkey, ">11.1f"), Col(f"{label} sim", skey, ">9.1f"),
                 Ratio(f"sim/ref {label}", skey, key=f"sim_over_healthy {label}", fmt=">11.3f")]
    cols.append(Col("note", text=lambda r: "; ".join(str(x)[:90] for x in (r.get("detour"), r.get("note"),
                                                                            r.get("sim_note")) if x), fmt="<"))
    return Table(cols, json=json, baseline=lambda r: r.get("reference"), group=("ref",),
                 title="== goodput (Gb/s) by the model and by SimGrid; sim/ref: over the healthy torus's SP")


def versus_ring(table, rows, sizes):
    """A line per network: the packing schedule's simulated (and modeled) goodput over the Ring's."""
    first, ring = rows[0], next((r for r in rows if r["algorithm"] == "ring (cycle)"), None)
    parts = []
    for label, mkey, skey in size_keys(sizes):
        for how, key in (("sim", skey), ("model", mkey)):
            if ring is None or first.get(key) is None or ring.get(key) is None:
                parts.append(f"{label} {how} -")
                continue
            x = first[key] / ring[key]
            parts.append(f"{label} {how} {x:.3f} ({'beats' if x > 1 else 'loses to'} the ring)")
    table.note(f"  {first['network']} {_short(first['failures'])}: {first['algorithm']} / ring: " + "; ".join(parts))


def pod_table(sizes, json):
    """The pod set's table: one row per case (module docstring)."""
    cols = [Col("network", fmt="<9"), Col("failures", text=lambda r: _short(r["failures"]), fmt="<10"),
            Col("how", fmt="<6"), Col("algorithm", fmt="<16"), Col("CPU s", "cpu_s", ">7.1f"),
            Col("wall s", "wall_s", ">7.1f"), Col("peak GB", "peak_gb", ">7.2f"), Col("MB", text=_mb("bytes"), fmt=">7"),
            Col("gz MB", text=_mb("gz_bytes"), fmt=">6"), Col("check s", "check_cpu_s", ">7.1f"),
            Col("check GB", "check_peak_gb", ">8.2f"), Col("cert %", "fraction", ">7.2f"), Col("rounds", fmt=">6")]
    for label, _, _ in size_keys(sizes):
        cols += [Col(f"{label} Gb/s", f"gbps {label}", ">9.1f"), Col("healthy", f"healthy {label}", ">8.1f"),
                 Col("layered<=", f"layered {label}", ">9.1f"), Col("RS+AG<=", f"rsag {label}", ">8.1f")]
    cols.append(Col("note", text=lambda r: r.get("note", "") or " | ".join(r.get("notes", []))[:200], fmt="<"))
    return Table(cols, json=json, title="== damaged pods: solve or repair, check, goodput by the model (Gb/s)")


def _mb(key):
    return lambda r: "" if r.get(key) is None else f"{r[key] / 1e6:.1f}"


def run_pods(args, sizes):
    """The pod set: each case in subprocesses (:func:`_pod.pod_case`), its files under ``--workdir``."""
    table = pod_table(sizes, args.json)
    root = args.workdir or tempfile.mkdtemp(prefix="synth-pods-")
    for i, (name, failures, how) in enumerate(args.instances):
        how = how or "solve"
        log(f"pod case {i + 1}/{len(args.instances)}: {how} {name} {failures} (files in {root}/case{i})")
        table.add(pod_case(name, failures, how, f"{root}/case{i}", sizes, args.time_limit))


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, str, str), required=2, spec="NETWORK:FAILURES[:HOW]")
    ap.add_argument("--sizes", help="message sizes (default 1MiB,16MiB; 1MiB,16MiB,256MiB for --set pod)")
    ap.add_argument("--time-limit", type=float, default=5.0, help="synth repair's --time-limit in the pod set "
                    "(default %(default)g)")
    ap.add_argument("--workdir", help="where the pod set keeps its files (default a new temporary folder)")
    ap.add_argument("--no-sim", action="store_true", help="the cost model only")
    ap.add_argument("--no-goodput", action="store_true", help="the packing table only")
    ap.add_argument("--sim-limit", type=int, default=60_000, help="largest replay in messages (default %(default)d)")
    args = parse_args(ap, argv)
    pods = args.set == "pod" or any(len(i) > 2 and i[2] for i in args.instances)
    default = "1MiB,16MiB,256MiB" if pods else "1MiB,16MiB"
    sizes = [parse_size(s) for s in (args.sizes or default).split(",") if s.strip()]
    if pods:
        return run_pods(args, sizes)
    table = Table(COLUMNS, json=args.json, title="== packing on damaged and irregular networks")
    later = []
    for name, failures, *_ in args.instances:
        try:
            t = network(name, failures)
            result, seconds = timed(solve, t)
        except SynthError as exc:
            table.note(f"  {name} {failures}: refused: {exc}")
            continue
        table.add(packing_row(name, failures, result, seconds))
        if not args.no_goodput:
            later.append(goodput_rows(name, failures, t, result, sizes, args))
    if later:
        gt = goodput_table(sizes, args.json)
        for rows in later:
            for row in rows:
                gt.add(row)
            versus_ring(gt, rows, sizes)


if __name__ == "__main__":
    main()
