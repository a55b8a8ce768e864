"""Fabrics with unequal links: synth solve's weighted bandwidth term against ForestColl's optimum.

Run: ``python bench/unequal_links.py [--set quick|full] [--only FABRIC:FAILURE,...] [--time-limit S] [--json [FILE]]``.

``FABRIC`` is ``a100x N`` or ``mi250xN`` (``a100x2``): the fabric models of ForestColl's own repository
(its ``topologies.py``, liangyuRain/ForestColl), written as synth topology files with a ``bandwidth`` list
(GB/s): a DGX A100 server is 8 GPUs on an NVSwitch at 300 GB/s per direction and, with more than one
server, a NIC per GPU at 25 GB/s (GPU - NIC and NIC - rail switch) on two rail switches (even and odd
NICs); an MI250 node is 16 GCDs joined by xGMI links of 1, 2 or 4 lanes at 50 GB/s each and, with more
than one node, a 16 GB/s link per GCD to one switch.  ``FAILURE`` is ``none``, ``nic`` (GPU/GCD 0's NIC
link), ``nvl`` (GPU 0's NVSwitch link) or ``xgmi`` (the first xGMI link, GCD 0 - GCD 1).

Each row solves the file as ``synth solve --topology FILE`` does (with ``--time-limit``), certifies, and
prints the construction, the schedule's bandwidth term with bandwidths (``sum_s max_e load / b_e`` per
element, seconds per GB: from the certified loads), ForestColl's optimum (twice its allgather optimum,
its max-flow characterization: ``(1 / p) max_S |compute outside S| / (bandwidth into S)``, found by a
binary search on the rate with one max-flow per compute vertex), their ratio and the seconds.
The bound of synth check with capacities is another engineer's (issue 51 item 3): not printed here.
"""

import json
import os
import sys
import tempfile

import networkx as nx
import numpy as np
from _harness import Col, Ratio, Table, log, parse_args, parser, timed

from synth.check.metrics import link_loads_symmetric
from synth.schedule import chunk_elements
from synth.schedule.lift import lifted_weights
from synth.solving import SolveRequest, plan
from synth.topology.user import read_topology

#: xGMI lanes between the 16 GCDs of an MI250 node (ForestColl's topologies.py)
MI250_LANES = [
    [0, 4, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0], [4, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0],
    [0, 0, 0, 4, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0], [0, 0, 4, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0],
    [2, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 4, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 1, 0, 1, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 2, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 2, 0, 0, 0], [0, 1, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0, 0],
    [0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 1, 0], [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2],
    [0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 4, 1, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 1, 1],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 4], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 4, 0],
]

SETS = {
    "quick": [("a100x1", "none"), ("a100x2", "none"), ("a100x2", "nic"), ("mi250x1", "none"), ("mi250x1", "xgmi"),
              ("mi250x2", "none"), ("mi250x2", "nic")],
}
SETS["full"] = SETS["quick"] + [("a100x2", "nvl"), ("mi250x2", "xgmi"), ("a100x4", "none"), ("a100x4", "nic")]


def a100(n):
    """``n`` DGX A100 servers (GPUs first, then the NVSwitches, the NICs and the two rail switches)."""
    gpus, links, bw = 8 * n, [], []
    for a in range(n):
        for b in range(8):
            links.append([8 * a + b, gpus + a])
            bw.append(300)
            if n > 1:
                nic = gpus + n + 8 * a + b
                links += [[8 * a + b, nic], [nic, gpus + 9 * n + b % 2]]
                bw += [25, 25]
    vertices = gpus + n + (8 * n + 2 if n > 1 else 0)
    return {"name": f"dgx-a100 x{n}", "vertices": vertices, "compute": list(range(gpus)), "links": links, "bandwidth": bw}


def mi250(n):
    """``n`` MI250 nodes (GCDs first, then the NIC switch)."""
    gcds, links, bw = 16 * n, [], []
    for a in range(n):
        for b in range(16):
            links += [[16 * a + b, 16 * a + c] for c in range(b + 1, 16) if MI250_LANES[b][c]]
            bw += [50 * MI250_LANES[b][c] for c in range(b + 1, 16) if MI250_LANES[b][c]]
            if n > 1:
                links.append([16 * a + b, gcds])
                bw.append(16)
    return {"name": f"mi250 x{n}", "vertices": gcds + (n > 1), "compute": list(range(gcds)), "links": links,
            "bandwidth": bw}


def fabric(name, failure):
    """The topology file's object of ``name`` (``a100x2``) with ``failure`` (``none``, ``nic``, ``nvl``, ``xgmi``)."""
    kind, n = name.split("x")
    spec = (a100 if kind == "a100" else mi250)(int(n))
    gpu0 = [i for i, (u, _v) in enumerate(spec["links"]) if u == 0]     # a100: NVSwitch, NIC; mi250: xGMI..., NIC
    if failure != "none":
        drop = {"nvl": 0, "xgmi": 0, "nic": 1 if kind == "a100" else -1}[failure]
        drop = gpu0[drop]
        spec["links"] = [link for i, link in enumerate(spec["links"]) if i != drop]
        spec["bandwidth"] = [b for i, b in enumerate(spec["bandwidth"]) if i != drop]
        spec["name"] += f" without {failure} link"
    return spec


def forestcoll_optimum(spec):
    """ForestColl's allreduce time per element (seconds per GB): twice its allgather optimum.

    Its allgather runs at rate ``x`` per shard when every compute vertex ``v`` can receive ``p x`` from a source
    feeding every compute vertex at ``x`` (max-flow), i.e. ``x <= B_in(S) / |compute outside S|`` for every
    ``S``; the time of an allgather of ``N / p`` per shard is ``(N / p) / x*``.
    """
    g = nx.DiGraph()
    for (u, v), b in zip(spec["links"], spec["bandwidth"]):
        for a, c in ((u, v), (v, u)):
            g.add_edge(a, c, capacity=b + (g[a][c]["capacity"] if g.has_edge(a, c) else 0))
    comp = spec["compute"]
    p = len(comp)

    def feasible(x):
        h = g.copy()
        h.add_edges_from((("s", c) for c in comp), capacity=x)
        return all(nx.maximum_flow_value(h, "s", v) >= p * x * (1 - 1e-9) for v in comp)

    lo, hi = 0.0, float(sum(spec["bandwidth"]))
    for _ in range(60):
        lo, hi = ((lo + hi) / 2, hi) if feasible((lo + hi) / 2) else (lo, (lo + hi) / 2)
    return 2.0 / (p * lo)


def weighted_term(cert):
    """``sum_s max_e load_s(e) / b_e`` per element of a certificate's lifted schedule."""
    n = cert.elements
    loads = link_loads_symmetric(cert.base, cert.group, chunk_elements(lifted_weights(cert.base, cert.group), n))
    return float((loads / cert.topology.link_bandwidth[None, :]).max(axis=1).sum()) / n


def run(name, failure, time_limit):
    spec = fabric(name, failure)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fabric.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        t = read_topology(path)[0]
    req = SolveRequest(t, time_limit=time_limit)
    res, seconds = timed(lambda: (lambda p: p.build(req, p))(plan(req)))
    cert = res.certificate
    return {"fabric": name, "failure": failure, "algorithm": cert.provenance["algorithm"],
            "rounds": cert.base.n_rounds, "term": weighted_term(cert), "forestcoll": forestcoll_optimum(spec),
            "seconds": seconds}


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, str), spec="FABRIC:FAILURE", time_limit=60.0)
    args = parse_args(ap, argv)
    table = Table([Col("fabric", fmt="<8"), Col("failure", fmt="<7"), Col("algorithm", fmt="<15"),
                   Col("rounds", fmt=">6d"), Col("term", fmt=">10.6f"), Col("forestcoll", fmt=">10.6f"),
                   Ratio("x forestcoll", "term", "forestcoll", fmt=">12.3f"), Col("seconds", fmt=">8.1f")],
                  json=args.json)
    for name, failure in args.instances:
        log(f"{name} {failure}")
        table.add(run(name, failure, args.time_limit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
