"""Real machine shapes: twisted against plain tori, and each preset's best schedule per size.

Run: ``python bench/machines.py [--set quick|full] [--only pair:SHAPE,preset:NAME:SHAPE,...]
[--sizes 1KiB,1MiB,16MiB] [--no-sim] [--sim-limit MESSAGES] [--json [FILE]]``.

``pair:SHAPE`` evaluates the twisted torus of ``SHAPE`` (``4x8``, ``4x4x8``, ``4x8x8``) beside the
plain torus of the same shape: SP-allreduce and the forest plus exchange (:func:`synth.solving.solve`,
certified), Ring on a Hamiltonian cycle, and Bucket, Swing and Trivance where they are defined (on the
twisted torus they are refused, with the reason).  ``preset:NAME:SHAPE`` builds ``--machine NAME:SHAPE``
(:mod:`synth.topology.machines`) and evaluates the same candidates, plus, on an equal-sided plain torus,
the k-hop tree that :func:`synth.solving.by_size.choose_by_size` picks at each size; the best schedule
per size is then listed by the model and by SimGrid.

Every row: rounds, ``Q/N`` (bandwidth term over the elements per node), ``bw %`` (the certified lower
bound of docs/bounds.md over the bandwidth term), and the goodput (Gb/s) by the cost model (400 Gb/s
links, 400 ns per hop, alpha 1 us) and by a SimGrid replay (rounds mode) at each size; a replay with more
than ``--sim-limit`` messages (the Rings on 128 nodes and more) is skipped and says so.  A size
smaller than a schedule's chunk count (1 KiB on 128 nodes) is padded to one element per chunk, as a
runtime would; the goodput counts the real elements only, and the row says so.  The ratios
printed under each pair: the best twisted schedule's goodput over the best plain one's, and SP-allreduce's
over the best baseline's, by model and by SimGrid.

The ``quick`` set (about 3 CPU minutes with SimGrid) is what bench/RESULTS.md records; ``full`` adds
4x8x8 and larger presets.
"""

from _evaluate import baseline, best_by, evaluate, merge_refused, size_keys, solved
from _harness import Col, Table, log, parse_args, parser

from synth.solving.by_size import choose_by_size
from synth.errors import SynthError
from synth.topology.lattice import twisted
from synth.topology.machines import machine_spec
from synth.topology.spec import build_topology
from synth.topology.torus import Torus, torus
from synth.units import parse_size

PRESETS_QUICK = [("preset", "tpu-v4", "2x4x4"), ("preset", "tpu-v5p", "2x2x4"), ("preset", "tpu-v5e", "4x8"),
                 ("preset", "tpu-v6e", "8x16"), ("preset", "tpu7x", "4x4x4"), ("preset", "trn2", "4x4"),
                 ("preset", "tofu-d", "2x2x2"), ("preset", "ipu-pod", "4x4")]
SETS = {
    "quick": [("pair", "4x8", None), ("pair", "4x4x8", None)] + PRESETS_QUICK,
    "full": [("pair", "4x8", None), ("pair", "4x4x8", None), ("pair", "4x8x8", None)] + PRESETS_QUICK
    + [("preset", "tpu-v4", "4x4x8"), ("preset", "tpu-v5p", "4x8x8"), ("preset", "tpu-v5e", "16x16"),
       ("preset", "trn2", "4x4x4"), ("preset", "tofu-d", "3x2x2"), ("preset", "ipu-pod", "4x16")],
}
BASELINES = ("ring", "bucket", "swing-l", "swing-b", "trivance-l", "trivance-b")


def columns(sizes, first):
    cols = [first, Col("algorithm", text=lambda r: r["algorithm"][:24], fmt="<24"), Col("p", fmt=">4"),
            Col("rounds", fmt=">6"), Col("Q/N", "q_per_n", ">6.3f"), Col("bw %", "bw", ">6.1f")]
    for label, mkey, skey in size_keys(sizes):
        cols += [Col(f"{label} model", mkey, ">12.1f"), Col(f"{label} sim", skey, ">10.1f")]
    return cols + [Col("note", text=note, fmt="<")]


def note(row):
    """The row's refusal or skip reasons, shortened for the table (``--json`` keeps them whole)."""
    return "; ".join(x[:100] for x in (row.get("note"), row.get("sim_note")) if x)


def candidates(t, sizes, with_khop=False):
    """Every schedule evaluated on ``t``: SP, the exchange, the k-hop trees chosen by size, the baselines."""
    out = [solved(None, t), solved(None, t, exchange=True)]
    if out[1].name == out[0].name:   # no exchange here (all sides odd): solve gave SP-allreduce again
        out.pop()
    if with_khop and isinstance(t, Torus) and t.is_equal_sided:
        depths = set()
        for size in sizes:
            try:
                choice = choose_by_size(t, size, time_limit=10)
            except SynthError as exc:
                log(f"  by_size {size}: {exc}")
                continue
            if choice.depth is not None and choice.depth < t.diameter:
                depths.add(choice.depth)
        out += [solved(f"k={k}", t, depth=k, time_limit=10) for k in sorted(depths)]
    return out + [baseline(name, t) for name in BASELINES]


def rows_for(table, t, tag, sizes, args, with_khop=False):
    rows = []
    for cand in merge_refused(candidates(t, sizes, with_khop)):
        log(f"  {t.name}: {cand.name}")
        row = evaluate(t, cand, sizes, sim=not args.no_sim, sim_limit=args.sim_limit)
        rows.append(table.add({**row, **tag, "H": t.diameter}))
    return rows


def ratio(a, b, key):
    """``a[key] / b[key]`` as text, or ``-``."""
    if a is None or b is None or a.get(key) is None or b.get(key) is None:
        return "-"
    return f"{a[key] / b[key]:.3f} ({a['algorithm']} / {b['algorithm']})"


def pair(table, shape, sizes, args):
    sides = tuple(int(x) for x in shape.split("x"))
    tw = rows_for(table, twisted(sides), {"net": f"twisted {shape}"}, sizes, args)
    pl = rows_for(table, torus(sides), {"net": f"torus {shape}"}, sizes, args)
    for label, mkey, skey in size_keys(sizes):
        for how, key in (("model", mkey), ("sim", skey)):
            base = [r for r in tw + pl if r["algorithm"] in BASELINES]
            sp = next((r for r in tw if r["algorithm"] == "sp-allreduce"), None)
            vs_plain, vs_base = ratio(best_by(tw, key), best_by(pl, key), key), ratio(sp, best_by(base, key), key)
            table.note(f"  {shape} {label} {how}: best twisted / best plain {vs_plain}; "
                       f"twisted SP / best baseline {vs_base}")


def preset(table, name, shape, sizes, args):
    spec = f"{name}:{shape}"
    try:
        t = build_topology(machine_spec(spec))
    except SynthError as exc:
        table.add({"net": spec, "algorithm": "-", "note": f"refused: {exc}"})
        return
    rows = rows_for(table, t, {"net": spec}, sizes, args, with_khop=True)
    for label, mkey, skey in size_keys(sizes):
        bm, bs = best_by(rows, mkey), best_by(rows, skey)
        by_model = f"{bm['algorithm']} ({bm[mkey]:.1f} Gb/s)" if bm else "-"
        by_sim = f"{bs['algorithm']} ({bs[skey]:.1f} Gb/s)" if bs else "- (not simulated)"
        table.note(f"  {spec} ({t.name}) {label}: best by model {by_model}; by SimGrid {by_sim}")


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, str, str), required=2, spec="pair:SHAPE|preset:NAME:SHAPE")
    ap.add_argument("--sizes", default="1KiB,1MiB,16MiB", help="message sizes (default %(default)s)")
    ap.add_argument("--no-sim", action="store_true", help="the cost model only")
    ap.add_argument("--sim-limit", type=int, default=60_000, help="largest replay in messages (default %(default)d)")
    args = parse_args(ap, argv)
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    pairs = [i for i in args.instances if i[0] == "pair"]
    presets = [i for i in args.instances if i[0] == "preset"]
    if pairs:
        table = Table(columns(sizes, Col("network", "net", "<16")), json=args.json,
                      title="== twisted against plain tori (goodput Gb/s by the model and by SimGrid)")
        for _, shape, _ in pairs:
            pair(table, shape, sizes, args)
    if presets:
        table = Table(columns(sizes, Col("preset", "net", "<16")), json=args.json,
                      title="== presets: every schedule, and the best per message size")
        for _, name, shape in presets:
            preset(table, name, shape, sizes, args)


if __name__ == "__main__":
    main()
