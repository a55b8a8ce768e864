"""synth's certified bandwidth term against ForestColl's optimum on random fabrics it was never tuned to.

Random graphs with random bandwidths (tests/conftest.py ``weighted_graph``) and random GPU-like fabrics
(servers of GPUs on a local switch or on direct links, a NIC per GPU on a rail switch, random bandwidths,
one random failed link), solved by :func:`synth.solving.solve` at a small time limit, certified (the
term is the checker's), and compared with :func:`synth.analysis.forestcoll.forestcoll_optimum`: the
issue's judgement allows 3 % behind it.
"""

from fractions import Fraction

import numpy as np
import pytest

from conftest import weighted_graph
from synth.analysis.forestcoll import forestcoll_optimum
from synth.solving import solve
from synth.topology.failures import damage, parse_failures
from synth.topology.user import topology_from_json

SLACK = Fraction(103, 100)
TIME_LIMIT = 5.0
#: the sweep's limit: seed 8 (four servers of six GPUs on direct links, one rail) reaches 1.157 of ForestColl
#: at 5 CPU s, 1.026 at 30 and 1.007 at the CLI's default 60 (before its user-graph path honoured the limit, its
#: timed trees took 600 CPU s whatever the limit said)
SWEEP_TIME_LIMIT = 30.0


def server_fabric(rng, servers, gpus, direct):
    """``servers`` servers of ``gpus`` GPUs, inside a server a local switch (or, ``direct``, a random
    connected set of GPU-GPU links), GPU -> NIC -> rail switch ``g % rails``; random bandwidths per class,
    the NIC slower than the inside."""
    p = servers * gpus
    rails = int(rng.integers(1, gpus + 1))
    local, nics = p, p + (0 if direct else servers)
    rail0 = nics + p
    links, bw = [], []
    fast, nic_bw = float(rng.choice([50, 100, 300])), float(rng.choice([12.5, 16, 25, 50]))
    for s in range(servers):
        g0 = s * gpus
        if direct:
            inside = {(g0 + int(rng.integers(0, g)), g0 + g) for g in range(1, gpus)}
            inside |= {tuple(sorted(map(int, g0 + rng.choice(gpus, 2, replace=False)))) for _ in range(gpus // 2)}
            for a, b in sorted(inside):
                links.append([a, b])
                bw.append(fast * int(rng.integers(1, 4)))
        else:
            for g in range(gpus):
                links.append([g0 + g, local + s])
                bw.append(fast)
        for g in range(gpus):
            links.append([g0 + g, nics + g0 + g])
            bw.append(nic_bw)
            links.append([nics + g0 + g, rail0 + g % rails])
            bw.append(nic_bw)
    return topology_from_json({"vertices": rail0 + rails, "compute": list(range(p)), "links": links,
                               "bandwidth": bw})


def fail_one(rng, t):
    """``t`` with one random link failed (both directions), or ``t`` when every failure disconnects it."""
    for e in rng.permutation(t.n_links).tolist():
        a, b = int(t.link_src[e]), int(t.link_dst[e])
        try:
            d = damage(t, parse_failures(t, [f"{a}-{b}"], []))
            forestcoll_optimum(d, d.n_compute)
            return d
        except Exception:      # disconnected: another link
            continue
    return t


def ratio(t, time_limit=TIME_LIMIT):
    """The certified bandwidth term of ``synth.solve`` over ForestColl's optimum for the same elements."""
    cert = solve(t, time_limit=time_limit, seed=0).certificate
    q = Fraction(cert.claims["bandwidth_term"])
    return q / forestcoll_optimum(t, cert.elements).allreduce


@pytest.mark.parametrize("seed", range(6))
def test_random_weighted_graphs_within_slack_of_forestcoll(seed):
    rng = np.random.default_rng(1000 + seed)
    t = weighted_graph(rng, int(rng.integers(4, 8)), int(rng.integers(0, 4)), switches=int(rng.integers(0, 2)))
    assert ratio(t) <= SLACK


@pytest.mark.parametrize("seed", range(4))
def test_random_gpu_fabrics_within_slack_of_forestcoll(seed):
    rng = np.random.default_rng(2000 + seed)
    t = server_fabric(rng, int(rng.integers(2, 4)), int(rng.integers(2, 5)), direct=bool(seed % 2))
    if seed >= 2:
        t = fail_one(rng, t)
    assert ratio(t) <= SLACK


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(24))
def test_random_fabrics_within_slack_of_forestcoll_sweep(seed):
    rng = np.random.default_rng(3000 + seed)
    if seed % 3 == 0:
        t = weighted_graph(rng, int(rng.integers(5, 10)), int(rng.integers(0, 6)), switches=int(rng.integers(0, 3)),
                           directed=seed % 2 == 0)        # each direction its own bandwidth
    else:
        t = server_fabric(rng, int(rng.integers(2, 5)), int(rng.integers(2, 7)), direct=bool(seed % 3 == 2))
    if seed % 2:
        t = fail_one(rng, t)
    assert ratio(t, SWEEP_TIME_LIMIT) <= SLACK
