"""Fabrics with unequal links: synth's certified bandwidth term against the certified bound and ForestColl's optimum.

Run: ``python bench/fabrics.py [--set quick|full] [--only NAME:SERVERS:FAILURE,...] [--time-limit S]
[--json [FILE]]``; ``FAILURE`` is ``healthy``, ``nic`` (the NIC of GPU 1 fails: a failed vertex) or
``link`` (the link from GPU 1 to its server's first switch or xGMI neighbour fails, both directions).

Fabrics are ``--machine NAME:N`` (:mod:`synth.topology.machines`, ``dgx-a100``, ``dgx-h100``, ``mi250``)
when the installed synth has the preset; without it the DGX fabrics are built here from the same facts
(8 GPUs per server on one NVSwitch at 300 or 450 GB/s per direction, a NIC per GPU at 25 or 50 GB/s,
NIC ``g`` on rail switch ``g % 2`` or ``g``) and ``mi250`` rows say the preset is missing.

Every row, per element of the allreduce (elements per node ``N`` divided out; times in elements per GB/s,
so ``1/x`` is GB/s of algorithm bandwidth):

* ``bound/N``: the certified lower bound of docs/bounds.md with capacities (volume, least cut by max-flow,
  per-vertex), what any allreduce needs;
* ``Q/N``: the bandwidth term ``sum_s max_e load/bandwidth`` of ``synth.solve``'s certificate (re-derived by
  the checker), and ``bw %`` the bound over it (the certificate's ``bandwidth_fraction``);
* ``FC/N``: ForestColl's optimum (:mod:`synth.analysis.forestcoll`: its allgather characterization, the
  reduce-scatter on the reversed fabric, the two in sequence), and ``Q/FC``: synth over ForestColl (below 1:
  synth is faster), ``bound/FC``: how far ahead any schedule could be.

A fabric synth cannot solve, or whose failure disconnects it, is a row with the reason in ``note``.
"""

from fractions import Fraction

from _harness import Col, Table, log, parse_args, parser, timed

from synth.analysis.forestcoll import forestcoll_optimum
from synth.check.bounds.bandwidth import bandwidth_bound, best_cut
from synth.errors import SynthError
from synth.solving import solve
from synth.topology.failures import damage, parse_failures
from synth.topology.user import topology_from_json

QUICK = [("dgx-a100", 1, "healthy"), ("dgx-a100", 2, "healthy"), ("dgx-a100", 2, "nic"), ("dgx-a100", 2, "link"),
         ("dgx-h100", 2, "healthy"), ("dgx-h100", 2, "nic"), ("mi250", 1, "healthy"), ("mi250", 1, "link"),
         ("mi250", 2, "healthy"), ("mi250", 2, "nic")]
FULL = [(name, n, f) for name in ("dgx-a100", "dgx-h100") for n in (1, 2, 4, 8)
        for f in (("healthy",) if n == 1 else ("healthy", "nic", "link"))] \
    + [("mi250", n, f) for n in (1, 2) for f in ("healthy", "link", "nic")]
SETS = {"quick": QUICK, "full": FULL}
DGX = {"dgx-a100": (300, 25, 2), "dgx-h100": (450, 50, 8)}   # NVSwitch GB/s, NIC GB/s, rail switches
COLUMNS = [Col("fabric", fmt="<12"), Col("failure", fmt="<8"), Col("p", fmt=">4"),
           Col("bound/N", "bound", ">10.5f"), Col("Q/N", "q", ">10.5f"), Col("bw %", "bw", ">6.1f"),
           Col("FC/N", "fc", ">10.5f"), Col("Q/FC", "q_fc", ">6.3f"), Col("bound/FC", "bound_fc", ">8.3f"),
           Col("solve s", "seconds", ">7.1f"), Col("note", fmt="<")]


def fabric(name, servers):
    """The fabric ``name:servers``: synth's preset when there is one, else (DGX only) built here."""
    try:
        from synth.topology.machines import machine_spec
        from synth.topology.spec import build_topology
        return build_topology(machine_spec(f"{name}:{servers}"))
    except SynthError:
        if name not in DGX:
            raise
    nvlink, nic, rails = DGX[name]
    G, n = 8, servers
    links, bandwidth = [], []
    for s in range(n):
        for g in range(G):
            links.append([s * G + g, n * G + s]); bandwidth.append(nvlink)
            if n > 1:
                nic_v = n * G + n + s * G + g
                links += [[s * G + g, nic_v], [nic_v, n * G + n + n * G + g % rails]]
                bandwidth += [nic, nic]
    vertices = n * G + n + (n * G + rails if n > 1 else 0)
    return topology_from_json({"name": f"{name}:{n}", "vertices": vertices, "compute": list(range(n * G)),
                               "links": links, "bandwidth": bandwidth})


def failed(t, failure):
    """``t`` with the NIC of GPU 1 or the first link out of GPU 1 failed (``healthy``: ``t``)."""
    if failure == "healthy":
        return t
    if failure == "nic":
        return damage(t, parse_failures(t, [], [str(_nic_of_gpu_1(t))]))
    first = int(t.link_dst[t.link_src == 1].min())
    return damage(t, parse_failures(t, [f"1-{first}"], []))


def _nic_of_gpu_1(t):
    """GPU 1's NIC: the preset's (``nic_of``), or by the numbering :func:`fabric` builds."""
    if hasattr(t, "nic_of"):
        return int(t.nic_of(1))
    servers = t.n_compute // 8
    if servers < 2:
        raise SynthError("one server has no NICs")
    return t.n_compute + servers + 1


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
               note=cert.provenance.get("algorithm") or "")
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
