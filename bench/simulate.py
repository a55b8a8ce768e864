"""The paper's section 7 on SimGrid: simulated time and goodput of every schedule, beside the model.

Run: ``python bench/simulate.py [--set quick|cheap|paper] [--only EXP[:SIZE+SIZE...],...] [--cluster WHERE]
[--store PATH] [--json [FILE]]``,
e.g. ``python bench/simulate.py --only square32:4MiB+64KiB --json notebooks/data/simulate-square32.jsonl``
(``notebooks/f_simulated.ipynb`` reads every ``notebooks/data/simulate-*.jsonl``).  Needs SimGrid
(``apt-get install -y python3-simgrid``).

Each (experiment, topology, schedule) is one campaign task (:mod:`synth.campaign`): the call
``simulate:simulate_case`` builds that one schedule where it runs and replays it at every size,
network and mode of its case.  ``--cluster`` says where the tasks run: ``local`` (default: a Dask
LocalCluster, one worker per core; ``local:1`` when one 64x64 schedule fills the memory), ``local:N``,
``tcp://HOST:PORT`` (a running scheduler: this folder's ``_harness.py`` and ``simulate.py`` are uploaded
to its workers) or ``serial``.  ``--store PATH`` keeps the results in a campaign store, so a run that is
stopped starts again where it stopped (``synth campaign status PATH``).

One row per (experiment, topology, schedule, network setting, size): the simulated time
(``synth.analysis.simulate``, rounds mode unless the row says ``deps``), the cost model's time,
their ratio, goodput, the fraction of ``G_max``, the messages simulated, the wall seconds of the
simulation and the driver's CPU seconds in SimGrid.  Experiments (``--only``; sizes after a colon
replace the default sizes of square16, square32, square64, rect, hyperx and spineleaf):

* ``square8``: 8x8 at 64 KiB ... 256 MiB: SP, exchange, k-SP for every depth 1..7 (solved here,
  10 s per depth, cached), every baseline; deps mode too for a few of them at three sizes.
* ``square16``: 16x16 at six sizes: SP, exchange, the k-hop certificates of
  ``instances/torus`` (k = 3, 4, 7, 15) and the paper's baselines (Bucket, Swing, Trivance).
* ``square32``: 32x32 at 64 KiB, 1 MiB, 4 MiB (where the paper's gain peaks) and 64 MiB: SP, exchange,
  k = 6, 9, 12, 22, the paper's baselines; about 1.9 M messages per size.
* ``square64``: 64x64 at 64 MiB (where the paper's gain peaks): SP, k = 10, 11, 14 (Table 1's picks), the paper's
  baselines (11.2 M messages, about an hour of CPU per size here; each schedule is a task of its own).
* ``rect``: 64x16, 128x8, 256x4 at 256 MiB: SP (balanced BFS trees) and the paper's baselines.
* ``hyperx``: HyperX 32x32 at 64 KiB and 256 MiB: SP (windmill) and every baseline synth builds there.
* ``rect-bucket-deps``: Bucket on 64x16, 128x8, 256x4 at 256 MiB in deps mode (a message
  starts once its data is complete, so families on the shorter sides run ahead: the reference's pacing).
* ``hyperx-baselines`` (``--only`` alone): hyperx without SP, the paper's baselines on HyperX 32x32 (its
  embedded torus, 4 of the 62 links per node) at 64 KiB and 256 MiB: 379 s in all here, where SP costs
  about 30 minutes per size.
* ``square64-64kib`` (``--only`` alone): SP-allreduce and Bucket on 64x64 at 64 KiB, the paper's 2.00x.
* ``hyperx-sp``, ``spineleaf-sp`` (``--only`` alone): SP alone on HyperX 32x32 (63,488 concurrent
  flows) and on spine-leaf 16,32,16 (the star: 261,632), at the sizes of ``hyperx`` and ``spineleaf``.
* ``spineleaf``: spine-leaf 16,32,16 at 32 KiB and 256 MiB: SP and the baselines synth builds;
  ``spineleaf-baselines`` (``--only`` alone): the baselines without SP.
* ``square8-paper``, ``square16-1mib`` (set ``cheap``): 8x8 with k = 2, 3, 5 and the paper's
  baselines at five sizes; 16x16 with k = 3, 7 and the paper's baselines at 1 MiB; ``square16-more``:
  16x16 with k = 3, 4, 7, 15 and the paper's baselines at 64 KiB and 4 MiB, k = 4 and 15 at 1 MiB.
* ``smoke`` (``--only`` alone): k = 2 and Bucket on 4x4 at 64 KiB, to try the harness in seconds.
* ``latency-at-end``: 8x8 at 128 KiB and 1 MiB, SP, k = 1..7 and the paper's baselines, each message paying
  its hop latency after its last byte (``hop_latency_at="end"``) instead of before its flow: the other
  bracket of a packet network.
* ``bandwidth``, ``latency``: 8x8 at 512 KiB and 1 MiB under 100 Gb/s ... 3.2 Tb/s and
  200 ... 1600 ns per hop: k-SP (k = 2, 3, 5, 8) and the paper's baselines.
"""

import functools
import os
import sys
import tempfile
from pathlib import Path

from _harness import Col, Ratio, Table, log, parse_args, parser

from synth.analysis.cost import PAPER_SIZES, Network
from synth.campaign import CLUSTER_HELP, Store, Task, parse_cluster, run_campaign
from synth.campaign.spec import canonical
from synth.analysis.simulate import INSTALL_HINT, SimOptions, simgrid_available, simulate_schedule
from synth.baselines import BASELINES, build_baseline
from synth.errors import SynthError
from synth.runtime.plan import load_schedule
from synth.schedule.lift import lift, lifted_weights
from synth.solving.khop import khop_tree, tree_base
from synth.symmetry.torus import torus_gamma
from synth.topology.hyperx import parse_hyperx
from synth.topology.spineleaf import parse_spine_leaf
from synth.topology.torus import parse_torus
from synth.units import parse_size

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
INSTANCES = ROOT / "instances"
KiB, MiB = 1 << 10, 1 << 20
PAPER_BASELINES = ("bucket", "swing-l", "swing-b", "trivance-l", "trivance-b")
EXPERIMENTS = ("square8", "square16", "square32", "square64", "rect", "rect-bucket-deps", "hyperx", "spineleaf",
               "bandwidth", "latency", "latency-at-end")
# what fits a busy machine
CHEAP = ("square8-paper", "square16-1mib", "square16-more")
# by --only alone: parts of others
EXTRA = ("hyperx-baselines", "spineleaf-baselines", "square64-64kib", "hyperx-sp", "spineleaf-sp", "smoke")
SETS = {"quick": [("square8-paper", None)], "paper": [(e, None) for e in EXPERIMENTS],
        "cheap": [(e, None) for e in CHEAP]}
COLUMNS = [Col("experiment", "exp", "<9"), Col("topology", "topo", "<10"), Col("schedule", "sched", "<18"),
           Col("mode", fmt="<6"), Col("lat at", "lat_at", "<6"), Col("Gb/s link", "bw_gbps", ">9.0f"),
           Col("ns/hop", "hop_ns", ">6.0f"),
           Col("size", "size_label", ">7"), Col("sim us", "sim_us", ">11.2f"), Col("model us", "model_us", ">11.2f"),
           Ratio("sim/model", "sim_us", "model_us", fmt=">9.4f"), Col("Gb/s", "goodput_gbps", ">8.1f"),
           Col("% G_max", "pct_bound", ">7.1f"), Col("messages", "messages", ">9d"), Col("wall s", "wall_s", ">7.1f"),
           Col("cpu s", "cpu_s", ">7.1f")]


def _sizes(text):
    """``4MiB+64KiB``: the sizes of an ``--only`` experiment."""
    return tuple(parse_size(x) for x in text.split("+"))


def _label(size):
    return f"{size // MiB}MiB" if size >= MiB else f"{size // KiB}KiB"


def _lifted_certificate(path):
    schedule, weights, _ = load_schedule(str(path))
    return schedule, weights


def _khop(t, k):
    if k >= t.diameter:
        return _lifted_certificate(INSTANCES / "torus" / f"sp-{t.name.split()[-1]}.json")
    rec = khop_tree(t, k, time_limit=10)
    g = torus_gamma(t)
    base = tree_base(t, rec)
    return lift(base, g), lifted_weights(base, g)


def _lazy(build, *args):
    """A schedule built only in its own task (:func:`simulate_case`): listing an experiment's tasks builds
    nothing, and on 64x64 one lifted schedule holds 134 M transmissions (eight did not fit in 24 GB)."""
    return functools.partial(build, *args)


def _baseline(name, t):
    b = build_baseline(name, t)
    return b.schedule, b.weights


def _baselines(t, names, notes):
    """Baselines built when their task runs; one that does not apply to ``t`` is left out there, with a note."""
    return {name: _lazy(_baseline, name, t) for name in names}


def cases(exp, notes, sizes=None):
    """``[(topology label, {schedule name: (schedule, weights)}, sizes, networks, modes)]`` of one experiment
    (``sizes``, when given, in place of the square16, square32, square64, rect, hyperx and spineleaf sizes)."""
    torus = INSTANCES / "torus"
    if exp == "square8":
        t = parse_torus("8x8")
        scheds = {"sp": _lazy(_lifted_certificate, torus / "sp-8x8.json"),
                  "exchange": _lazy(_lifted_certificate, torus / "exchange-8x8.json")}
        scheds.update({f"k={k}": _lazy(_khop, t, k) for k in range(1, 8)})
        scheds.update(_baselines(t, sorted(BASELINES), notes))
        deps = {n: scheds[n] for n in ("sp", "exchange", "k=2", "k=3", "k=6", "bucket", "swing-b", "trivance-b")}
        notes.append("8x8 deps mode: at 64 KiB, 1 MiB and 64 MiB for sp, exchange, k = 2, 3, 6 and the B baselines")
        return [("8x8", scheds, PAPER_SIZES, [Network()], ("rounds",)),
                ("8x8", deps, (64 * KiB, MiB, 64 * MiB), [Network()], ("deps",))]
    if exp == "square8-paper":  # the paper's candidate depths and baselines at five sizes (a cheaper square8)
        t = parse_torus("8x8")
        scheds = {f"k={k}": _lazy(_khop, t, k) for k in (2, 3, 5)}
        scheds.update(_baselines(t, PAPER_BASELINES, notes))
        sizes = (64 * KiB, 256 * KiB, MiB, 8 * MiB, 64 * MiB)
        return [("8x8", scheds, sizes, [Network()], ("rounds",))]
    if exp == "square16-1mib":  # where the paper's 16x16 gain peaks (a cheaper square16)
        t = parse_torus("16x16")
        scheds = {f"k={k}": _lazy(_lifted_certificate, torus / f"khop-16x16-k{k}.json") for k in (3, 7)}
        scheds.update(_baselines(t, PAPER_BASELINES, notes))
        return [("16x16", scheds, (MiB,), [Network()], ("rounds",))]
    if exp == "square16-more":  # square16-1mib's neighbours: 64 KiB and 4 MiB, and k = 4, 15 at 1 MiB
        t = parse_torus("16x16")
        ks = {f"k={k}": _lazy(_lifted_certificate, torus / f"khop-16x16-k{k}.json") for k in (3, 4, 7, 15)}
        scheds = dict(ks, **_baselines(t, PAPER_BASELINES, notes))
        return [("16x16", {n: ks[n] for n in ("k=4", "k=15")}, (MiB,), [Network()], ("rounds",)),
                ("16x16", scheds, (64 * KiB, 4 * MiB), [Network()], ("rounds",))]
    if exp == "square16":
        t = parse_torus("16x16")
        scheds = {"sp": _lazy(_lifted_certificate, torus / "sp-16x16.json"),
                  "exchange": _lazy(_lifted_certificate, torus / "exchange-16x16.json")}
        scheds.update({f"k={k}": _lazy(_lifted_certificate, torus / f"khop-16x16-k{k}.json") for k in (3, 4, 7, 15)})
        scheds.update(_baselines(t, PAPER_BASELINES, notes))
        sizes = sizes or (64 * KiB, 256 * KiB, MiB, 4 * MiB, 32 * MiB, 256 * MiB)
        return [("16x16", scheds, sizes, [Network()], ("rounds",))]
    if exp == "square32":
        t = parse_torus("32x32")
        scheds = {"sp": _lazy(_lifted_certificate, torus / "sp-32x32.json"),
                  "exchange": _lazy(_lifted_certificate, torus / "exchange-32x32.json")}
        scheds.update({f"k={k}": _lazy(_lifted_certificate, torus / f"khop-32x32-k{k}.json") for k in (6, 9, 12, 22)})
        scheds.update(_baselines(t, PAPER_BASELINES, notes))
        notes.append("32x32: depths 6, 9, 12, 22 of instances/torus (Table 1's picks but 11 and 20) and the BFS tree")
        return [("32x32", scheds, sizes or (64 * KiB, MiB, 4 * MiB, 64 * MiB), [Network()], ("rounds",))]
    if exp == "square64":
        t = parse_torus("64x64")
        # cheapest first, so that a run stopped at the deadline leaves SP and the baselines behind
        scheds = {"sp": _lazy(_lifted_certificate, torus / "sp-64x64.json")}
        scheds.update({n: _lazy(_baseline, n, t) for n in ("swing-l", "trivance-l", "swing-b", "trivance-b", "bucket")})
        scheds.update({f"k={k}": _lazy(_lifted_certificate, torus / f"khop-64x64-k{k}.json") for k in (14, 11, 10)})
        return [("64x64", scheds, sizes or (64 * MiB,), [Network()], ("rounds",))]
    if exp == "square64-64kib":  # the paper's 2.00x of SP-allreduce over Bucket at 64 KiB on 64x64
        t = parse_torus("64x64")
        scheds = {"sp": _lazy(_lifted_certificate, torus / "sp-64x64.json"), "bucket": _lazy(_baseline, "bucket", t)}
        return [("64x64", scheds, sizes or (64 * KiB,), [Network()], ("rounds",))]
    if exp == "rect":
        out = []
        for shape in ("64x16", "128x8", "256x4"):
            t = parse_torus(shape)
            scheds = {"sp": _lazy(_lifted_certificate, INSTANCES / "torus-rect" / f"balanced-{shape}.json")}
            scheds.update(_baselines(t, PAPER_BASELINES, notes))
            out.append((shape, scheds, sizes or (256 * MiB,), [Network()], ("rounds",)))
        notes.append("rect: ring left out (2046 rounds, 8 M messages)")
        return out
    if exp == "rect-bucket-deps":  # Bucket as the reference runs it: each message as soon as its data is there
        return [(shape, _baselines(parse_torus(shape), ("bucket",), notes), sizes or (256 * MiB,), [Network()],
                 ("deps",)) for shape in ("64x16", "128x8", "256x4")]
    if exp == "hyperx":
        t = parse_hyperx("32x32")
        scheds = {"sp": _lazy(_lifted_certificate, INSTANCES / "hyperx" / "windmill-32x32.json")}
        scheds.update(_baselines(t, sorted(BASELINES), notes))
        return [("hyperx32", scheds, sizes or (64 * KiB, 256 * MiB), [Network()], ("rounds",))]
    if exp == "hyperx-baselines":  # the paper's baselines alone (4 links per node: cheap), without SP's 63k flows
        t = parse_hyperx("32x32")
        return [("hyperx32", _baselines(t, PAPER_BASELINES, notes), sizes or (64 * KiB, 256 * MiB), [Network()],
                 ("rounds",))]
    if exp == "spineleaf-baselines":  # spineleaf without SP (the star: 261,632 concurrent flows)
        t = parse_spine_leaf("16,32,16")
        return [("sl16-32-16", _baselines(t, sorted(BASELINES), notes), sizes or (32 * KiB, 256 * MiB), [Network()],
                 ("rounds",))]
    if exp == "hyperx-sp":
        scheds = {"sp": _lazy(_lifted_certificate, INSTANCES / "hyperx" / "windmill-32x32.json")}
        return [("hyperx32", scheds, sizes or (64 * KiB, 256 * MiB), [Network()], ("rounds",))]
    if exp == "spineleaf-sp":
        scheds = {"sp": _lazy(_lifted_certificate, INSTANCES / "spine-leaf" / "star-16-32-16.json")}
        return [("sl16-32-16", scheds, sizes or (32 * KiB, 256 * MiB), [Network()], ("rounds",))]
    if exp == "spineleaf":
        t = parse_spine_leaf("16,32,16")
        scheds = {"sp": _lazy(_lifted_certificate, INSTANCES / "spine-leaf" / "star-16-32-16.json")}
        scheds.update(_baselines(t, sorted(BASELINES), notes))
        return [("sl16-32-16", scheds, sizes or (32 * KiB, 256 * MiB), [Network()], ("rounds",))]
    if exp == "latency-at-end":  # square8's envelope and baselines with the hop latency paid after each flow
        t = parse_torus("8x8")
        scheds = {"sp": _lazy(_lifted_certificate, torus / "sp-8x8.json")}
        scheds.update({f"k={k}": _lazy(_khop, t, k) for k in range(1, 8)})
        scheds.update(_baselines(t, PAPER_BASELINES, notes))
        return [("8x8", scheds, (128 * KiB, MiB), [Network()], ("rounds/end",))]
    if exp == "smoke":  # the harness in seconds: k = 2 and Bucket on 4x4 at 64 KiB
        t = parse_torus("4x4")
        return [("4x4", {"k=2": _lazy(_khop, t, 2), **_baselines(t, ("bucket",), notes)}, (64 * KiB,),
                 [Network()], ("rounds",))]
    if exp in ("bandwidth", "latency"):
        t = parse_torus("8x8")
        # k = 1 (an all-to-all star, 18 k flows in one round) costs half a minute per run and is never the
        # best at these sizes on 8x8 (square8): left out, as are the depths the model never picks here
        scheds = {f"k={k}": _lazy(_khop, t, k) for k in (2, 3, 5, 8)}
        scheds.update(_baselines(t, PAPER_BASELINES, notes))
        notes.append(f"{exp}: k = 2, 3, 5, 8 and the paper's baselines at 512 KiB and 1 MiB")
        if exp == "bandwidth":
            nets = [Network(bandwidth=g * 1e9 / 8) for g in (100, 200, 400, 800, 1600, 3200)]
        else:
            nets = [Network(hop_latency=ns * 1e-9) for ns in (200, 400, 800, 1600)]
        return [("8x8", scheds, (512 * KiB, MiB), nets, ("rounds",))]
    raise SystemExit(f"unknown experiment {exp!r}; valid: {', '.join(EXPERIMENTS + CHEAP + EXTRA)}")


def simulate_case(exp, case, schedule, sizes=None):
    """One campaign task: build ``schedule`` of case number ``case`` of experiment ``exp`` (``sizes`` as
    ``--only`` gives them) and replay it at every size, network and mode of the case.

    Returns ``{"rows": [table rows], "notes": [...]}``; a schedule that cannot be built here (a baseline
    that does not apply) gives no rows and a note saying why.
    """
    notes = []
    topo, scheds, sizes, nets, modes = cases(exp, notes, tuple(sizes) if sizes else None)[case]
    try:
        built = scheds[schedule]
        schedule_, weights = built() if callable(built) else built
    except SynthError as exc:
        return {"rows": [], "notes": [f"{topo}: {schedule} left out: {exc}"]}
    rows = []
    for net in nets:
        for spec in modes:  # "rounds", "deps", or "rounds/end": hop latency after the flow
            mode, _, at = spec.partition("/")
            at = at or "start"
            options = SimOptions(hop_latency_at=at)
            for r in simulate_schedule(schedule_, weights, sizes, net, mode, schedule, options=options):
                rows.append({"exp": exp, "topo": topo, "sched": schedule, "mode": mode, "lat_at": at,
                             "bw_gbps": net.bandwidth * 8 / 1e9, "hop_ns": net.hop_latency * 1e9,
                             "size": r.size, "size_label": _label(r.size), "sim_us": r.seconds * 1e6,
                             "model_us": r.model_seconds * 1e6, "goodput_gbps": r.goodput * 8 / 1e9,
                             "pct_bound": 100 * r.fraction_of_bound, "messages": r.messages,
                             "wall_s": r.wall_seconds, "cpu_s": r.cpu_seconds})
    return {"rows": rows, "notes": []}


def tasks_of(exp, sizes, notes):
    """The campaign tasks of one experiment: one call of :func:`simulate_case` per (case, schedule)."""
    # built here, not read from a file: a campaign file may call only synth's own task functions
    return [Task(call="simulate:simulate_case",
                 kwargs=canonical({"exp": exp, "case": i, "schedule": name, "sizes": list(sizes) if sizes else None}))
            for i, (_, scheds, *_) in enumerate(cases(exp, notes, sizes)) for name in scheds]


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, _sizes), required=1, spec="EXPERIMENT[:SIZE+SIZE...]")
    ap.add_argument("--cluster", default="local", help=CLUSTER_HELP + " (default local)")
    ap.add_argument("--store", metavar="PATH", help="keep the results in this campaign store (a stopped run "
                                                    "restarts where it stopped); default: a temporary one")
    args = parse_args(ap, argv)
    if not simgrid_available():
        raise SystemExit(f"bench/simulate.py: {INSTALL_HINT}")
    try:
        cluster = parse_cluster(args.cluster)
    except SynthError as exc:
        raise SystemExit(f"bench/simulate.py: {exc}") from None
    table = Table(COLUMNS, json=args.json, title=f"host: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    notes, tasks, experiment = [], [], {}
    for exp, sizes in args.instances:
        for task in tasks_of(exp, sizes, notes):
            tasks.append(task)
            experiment[task.key] = exp
    wall = dict.fromkeys(experiment.values(), 0.0)
    shown = set()

    def show(key, result):
        shown.add(key)
        for row in result["rows"]:
            table.add(row)
            wall[experiment[key]] += row["wall_s"]
        notes.extend(result["notes"])

    def on_row(task, outcome):
        if outcome["status"] == "done":
            show(task.key, outcome["result"])
        else:
            notes.append(f"{task.arguments()['exp']} {task.arguments()['schedule']}: failed: {outcome['error']}")

    uploads = [HERE / "_harness.py", HERE / "simulate.py"] if cluster.kind == "address" else ()
    with tempfile.TemporaryDirectory() as folder:
        store_path = args.store or Path(folder) / "simulate.sqlite"
        summary = run_campaign(tasks, store_path, args.cluster, uploads=uploads, on_row=on_row,
                               progress=lambda text: log(text) if sys.stderr.isatty() else None, notice=log)
        with Store(store_path) as store:  # what an earlier run of the same store finished
            for row in store.rows():
                if row["key"] in experiment and row["key"] not in shown and row["status"] == "done":
                    show(row["key"], row["result"])
    for note in dict.fromkeys(notes):
        table.note(f"note: {note}")
    for exp, seconds in wall.items():
        table.note(f"{exp}: {seconds:.0f} s of simulation")
    table.note(f"{summary.total} tasks: {summary.skipped} finished before, {summary.ran} run now "
               f"({summary.failed} failed) on --cluster {args.cluster}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
