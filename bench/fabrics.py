"""Fabrics with unequal links: synth's certified bandwidth term against the certified bound and ForestColl's optimum.

Run: ``python bench/fabrics.py [--set quick|full] [--only NAME:SERVERS:FAILURE,...] [--time-limit S]
[--json [FILE]]``; ``FAILURE`` is ``healthy``, ``nic`` (the NIC of GPU 1 fails: a failed vertex) or
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

A fabric synth cannot solve, or whose failure disconnects it, is a row with the reason in ``note``.
"""

from fractions import Fraction

from _harness import Col, Table, log, parse_args, parser, timed

from synth.analysis.forestcoll import forestcoll_optimum
from synth.check.bounds.bandwidth import bandwidth_bound, best_cut
from synth.errors import SynthError
from synth.solving import solve
from synth.topology.failures import damage, parse_failures
from synth.baselines import build_baseline
from synth.topology.machines import machine_spec
from synth.topology.spec import build_topology

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
    return table.add(row)


def main(argv=None):
    args = parse_args(parser(__doc__, SETS, fields=(str, int, str), spec="NAME:SERVERS:FAILURE",
                             time_limit=60.0, seed=0), argv)
    table = Table(COLUMNS, json=args.json)
    for name, servers, failure in args.instances:
        log(f"{name}:{servers} {failure}")
        run(table, name, servers, failure, args)


if __name__ == "__main__":
    main()
