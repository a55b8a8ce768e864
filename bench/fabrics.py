"""Fabrics with unequal links: synth's certified bandwidth term against the certified bound and ForestColl's optimum.

Run: ``python bench/fabrics.py [--set quick|full] [--only NAME:SERVERS:FAILURE,...] [--time-limit S]
[--sizes 1MiB,16MiB,256MiB] [--no-sim] [--sim-limit MESSAGES] [--json [FILE]]``; ``FAILURE`` is ``healthy``, ``nic`` (the NIC of GPU 1 fails: a failed vertex) or
``link`` (the link from GPU 1 to its server's first switch or xGMI neighbour fails, both directions).

Fabrics are the presets ``--machine NAME:N`` (:mod:`synth.topology.machines`: ``dgx-a100``, ``dgx-h100``,
``mi250``) and ``tpu-v5p-slices:K``, K slices of a v5p 2x2x2 joined by the data-centre network
(``--machine tpu-v5p:2x2x2 --slices K``); on those ``nic`` fails chip 1's DCN link.

Every row, per element of the allreduce (elements per node ``N`` divided out; times in elements per GB/s,
so ``1/x`` is GB/s of algorithm bandwidth):

* ``bound/N``: the certified lower bound of docs/bounds.md with capacities (volume, least cut by max-flow,
  per-vertex), what any allreduce needs;
* ``Q/N``: the bandwidth term ``sum_s max_e load/bandwidth`` of ``synth.solve``'s certificate (re-derived by
  the checker), and ``bw %`` the bound over it (the certificate's ``bandwidth_fraction``);
* ``FC/N``: ForestColl's optimum (:mod:`synth.analysis.forestcoll`: its allgather characterization, the
  reduce-scatter on the reversed fabric, the two in sequence), and ``Q/FC``: synth over ForestColl (below 1:
  synth is faster), ``bound/FC``: how far ahead any schedule could be;
* ``ring/FC``, ``tree/FC``, ``hier/FC``: the baselines GPU users know (:mod:`synth.baselines.gpu`: NCCL's rings,
  NCCL's double binary tree, the hierarchical allreduce), measured by the checker, over ForestColl's optimum.

At every size of ``--sizes`` (default 1 MiB, 16 MiB and 256 MiB per GPU), a second table gives the goodput
``N (p-1) / (p T)`` in Gb/s (``N`` bytes per GPU, ``T`` the time; as ``bench/failures.py``) of synth's certified
schedule and of each baseline, by the cost model (:mod:`synth.analysis.cost`: every link at its own bandwidth,
400 ns per hop, 1 us per round) and by a SimGrid replay (:func:`synth.analysis.simulate.simulate_schedule`,
rounds mode, the engine of ``synth simulate``; ``--no-sim`` leaves it out, ``--sim-limit`` skips bigger
replays), measured by ``bench/_evaluate.py``; and ForestColl's, by the model only:
:func:`synth.analysis.forestcoll.forestcoll_seconds`, its bandwidth term plus the least latency its trees can
have (its trees are pipelined: each pays a fill of ``alpha`` plus the route's latency per tree level, and the
deepest tree is at least as deep as the farthest pair of GPUs, once for the reduce-scatter and once for the
allgather).  That is ForestColl at its best: no tree of its is built, and its chunks pay no ``alpha`` each.
The row's JSON keys are ``{synth,ring,tree,hier} {model,sim} SIZE`` and ``fc model SIZE`` (Gb/s), with
``sim_note`` saying why a replay is missing.

A fabric synth cannot solve, or whose failure disconnects it, is a row with the reason in ``note``.
"""

from fractions import Fraction

from _evaluate import GBPS, NET, baseline, certified, evaluate, size_keys
from _harness import Col, Table, log, parse_args, parser, timed

from synth.analysis.forestcoll import forestcoll_optimum, forestcoll_seconds
from synth.check.bounds.bandwidth import bandwidth_bound, best_cut
from synth.errors import SynthError
from synth.solving import solve
from synth.topology.failures import damage, parse_failures
from synth.baselines import build_baseline
from synth.topology.machines import machine_spec
from synth.topology.spec import build_topology
from synth.units import parse_size

QUICK = [("dgx-a100", 1, "healthy"), ("dgx-a100", 2, "healthy"), ("dgx-a100", 2, "nic"), ("dgx-a100", 2, "link"),
         ("dgx-h100", 2, "healthy"), ("dgx-h100", 2, "nic"), ("mi250", 1, "healthy"), ("mi250", 1, "link"),
         ("mi250", 2, "healthy"), ("mi250", 2, "nic"), ("tpu-v5p-slices", 2, "healthy")]
FULL = [(name, n, f) for name in ("dgx-a100", "dgx-h100") for n in (1, 2, 4, 8)
        for f in (("healthy",) if n == 1 else ("healthy", "nic", "link"))] \
    + [("mi250", n, f) for n in (1, 2) for f in ("healthy", "link", "nic")] \
    + [("tpu-v5p-slices", k, f) for k in (2, 4) for f in ("healthy", "link", "nic")]
SETS = {"quick": QUICK, "full": FULL}
BASELINES = {"ring": "nccl-ring", "tree": "nccl-tree", "hier": "hierarchical"}
COLUMNS = [Col("fabric", fmt="<12"), Col("failure", fmt="<8"), Col("p", fmt=">4"),
           Col("bound/N", "bound", ">10.5f"), Col("Q/N", "q", ">10.5f"), Col("bw %", "bw", ">6.1f"),
           Col("FC/N", "fc", ">10.5f"), Col("Q/FC", "q_fc", ">6.3f"), Col("bound/FC", "bound_fc", ">8.3f"),
           Col("ring/FC", "ring_fc", ">7.3f"), Col("tree/FC", "tree_fc", ">7.3f"), Col("hier/FC", "hier_fc", ">7.3f"),
           Col("solve s", "seconds", ">7.1f"), Col("note", fmt="<")]
#: the schedules timed at every size: synth's certificate and the baselines (the keys of BASELINES)
TIMED = ("synth",) + tuple(BASELINES)


def fabric(name, servers):
    """The preset ``name:servers`` (``tpu-v5p-slices:K``: K v5p 2x2x2 slices on the data-centre network)."""
    if name == "tpu-v5p-slices":
        return build_topology(machine_spec("tpu-v5p:2x2x2", slices=servers))
    return build_topology(machine_spec(f"{name}:{servers}"))


def failed(t, failure):
    """``t`` with the NIC of GPU 1 (TPU slices: chip 1's DCN link) or the first link out of GPU 1 failed
    (``healthy``: ``t``)."""
    if failure == "healthy":
        return t
    if failure == "nic" and not hasattr(t, "nic_of"):
        switch = int(t.link_dst[(t.link_src == 1) & ~t.is_compute[t.link_dst]].max())
        return damage(t, parse_failures(t, [f"1-{switch}"], []))
    if failure == "nic":
        if int(t.nic_of(1)) < 0:
            raise SynthError("one server has no NICs")
        return damage(t, parse_failures(t, [], [str(int(t.nic_of(1)))]))
    first = int(t.link_dst[t.link_src == 1].min())
    return damage(t, parse_failures(t, [f"1-{first}"], []))


def baseline_terms(t, fc, n):
    """Each GPU baseline's bandwidth term over ForestColl's (left out where the baseline refuses the fabric)."""
    out = {}
    for key, name in BASELINES.items():
        try:
            b = build_baseline(name, t)
            m = b.measure(t.n_compute * 64 * int(b.weights.sum()))
        except SynthError:
            continue
        out[f"{key}_fc"] = float(Fraction(m.bandwidth_term) / m.elements / (fc / n))
    return out


def run(table, name, servers, failure, args):
    row = {"fabric": f"{name}:{servers}", "failure": failure}
    try:
        t = failed(fabric(name, servers), failure)
        result, seconds = timed(solve, t, time_limit=args.time_limit, seed=args.seed)
    except SynthError as exc:
        row["note"] = f"refused: {' '.join(str(exc).split())[:120]}"
        return table.add(row)
    cert = result.certificate
    n = cert.elements
    q = Fraction(cert.claims["bandwidth_term"])
    bound = bandwidth_bound(t, n, best_cut(t)).value
    fc = forestcoll_optimum(t, n).allreduce
    row.update(p=t.n_compute, bound=float(bound / n), q=float(q / n), bw=100 * float(bound / q),
               fc=float(fc / n), q_fc=float(q / fc), bound_fc=float(bound / fc), seconds=seconds,
               note=cert.provenance.get("algorithm") or "", **baseline_terms(t, fc, n))
    if args.sizes:
        row.update(goodputs(t, cert, args))
    return table.add(row)


def goodputs(t, cert, args):
    """Goodput (Gb/s) at every size of synth's schedule and each baseline, by the model and SimGrid, and
    ForestColl's by the model (module docstring); ``sim_note`` says why a replay is missing."""
    out, notes = {}, []
    cands = [certified("synth", cert)] + [baseline(name, t, label=key) for key, name in BASELINES.items()]
    for cand in cands:
        r = evaluate(t, cand, args.sizes, sim=not args.no_sim, sim_limit=args.sim_limit)
        for label, mkey, skey in size_keys(args.sizes):
            out[f"{cand.name} model {label}"] = r.get(mkey)
            out[f"{cand.name} sim {label}"] = r.get(skey)
        why = r.get("sim_note") or (r.get("note") if cand.schedule is None else None)
        if why:
            notes.append(f"{cand.name}: {why}")
    optimum = forestcoll_optimum(t, t.n_compute)
    p = t.n_compute
    for (label, _, _), size in zip(size_keys(args.sizes), args.sizes):
        n = size // NET.element_bytes
        out[f"fc model {label}"] = n * NET.element_bytes * (p - 1) / (p * forestcoll_seconds(t, n, NET, optimum)) * GBPS
    if notes:
        out["sim_note"] = "; ".join(dict.fromkeys(notes))
    return out


def goodput_table(rows, sizes):
    """The goodputs of every row: a line per fabric and schedule (ForestColl's by the model only)."""
    cols = [Col("fabric", fmt="<17"), Col("failure", fmt="<8"), Col("schedule", fmt="<8")]
    for label, _, _ in size_keys(sizes):
        cols += [Col(f"{label} model", f"model {label}", ">12.1f"), Col(f"{label} sim", f"sim {label}", ">10.1f")]
    table = Table(cols, title="== goodput (Gb/s) by the cost model and by SimGrid; ForestColl by the model "
                              "(its bandwidth term and its least tree latency)")
    for row in rows:
        if "q" not in row:
            continue
        for who in TIMED + ("fc",):
            line = {"fabric": row["fabric"], "failure": row["failure"], "schedule": who}
            for label, _, _ in size_keys(sizes):
                for how in ("model", "sim"):
                    if f"{who} {how} {label}" in row:
                        line[f"{how} {label}"] = row[f"{who} {how} {label}"]
            table.add(line)
    if any(r.get("sim_note") for r in rows):
        for r in rows:
            if r.get("sim_note"):
                table.note(f"  {r['fabric']} {r['failure']}: {r['sim_note'][:200]}")


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, int, str), spec="NAME:SERVERS:FAILURE", time_limit=60.0, seed=0)
    ap.add_argument("--sizes", default="1MiB,16MiB,256MiB",
                    help="message sizes per GPU for the goodput table (default %(default)s; empty: none)")
    ap.add_argument("--no-sim", action="store_true", help="the cost model only, no SimGrid replay")
    ap.add_argument("--sim-limit", type=int, default=60_000, help="largest replay in messages (default %(default)d)")
    args = parse_args(ap, argv)
    try:
        args.sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    except SynthError as exc:
        ap.error(f"--sizes: {exc}")
    table = Table(COLUMNS, json=args.json)
    rows = []
    for name, servers, failure in args.instances:
        log(f"{name}:{servers} {failure}")
        rows.append(run(table, name, servers, failure, args))
    if args.sizes and args.json != "-":
        goodput_table(rows, args.sizes)


if __name__ == "__main__":
    main()
