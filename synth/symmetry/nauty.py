"""The full automorphism group of a topology, by nauty (the ``pynauty`` package), within a time limit.

nauty runs in a child process that is killed at the deadline and capped in memory, so
no graph can hold the caller past its limit; graphs above :data:`MAX_VERTICES` vertices
are refused before any work (nauty's dense graphs take ``V^2 / 8`` bytes and its time
grows quickly with ``V`` on long paths).  Automorphisms preserve the link direction,
which vertices compute (two colour classes) and each link's bandwidth and latency.

Examples
--------
>>> from synth.topology.user import topology_from_json
>>> t = topology_from_json({"vertices": 4, "links": [[0, 1], [1, 2], [2, 3], [3, 0]]})
>>> aut = automorphisms(t, seconds=20)
>>> aut.order, aut.generators.shape[1]
(8, 4)
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass

import numpy as np

from synth.errors import GroupError
from synth.topology.base import Topology

__all__ = ["Automorphisms", "automorphisms", "MAX_VERTICES"]

#: nauty is not asked about graphs with more vertices than this (time and memory grow too fast)
MAX_VERTICES = 10_000
_MEMORY = 2 << 30   # address-space cap of the nauty process

# the child: reads the graph as JSON on stdin, writes generators and order as JSON on stdout;
# it imports pynauty only (not synth), so it starts in a few tens of milliseconds
_CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({mem}, {mem}))
import pynauty
d = json.load(sys.stdin)
g = pynauty.Graph(d["n"], directed=d["directed"], adjacency_dict={{int(k): v for k, v in d["adj"].items()}},
                  vertex_coloring=[set(c) for c in d["colours"]])
gens, mantissa, exponent, _, _ = pynauty.autgrp(g)
json.dump({{"gens": gens, "mantissa": mantissa, "exponent": exponent}}, sys.stdout)
"""


@dataclass(frozen=True)
class Automorphisms:
    """Generators (``k x V`` vertex permutations) of the full automorphism group and its order.

    ``order`` is exact below 2**53 and correct in its leading 15 digits above (nauty's).
    """

    generators: np.ndarray
    order: int


def _coloured_graph(t: Topology):
    """nauty's input: ``(vertex count, adjacency, colour classes, directed)``.

    Links that differ in bandwidth or latency must not be swapped: each link then gets a middle
    vertex coloured by its ``(bandwidth, latency)`` class (``u -> m -> v``), so nauty's
    automorphisms, restricted to the first ``V`` vertices, are those that keep every link's values
    (a middle vertex is the only one between its two ends, so the restriction loses nothing).
    """
    V = t.n_vertices
    rev = t.link_ids(t.link_dst, t.link_src)
    values = np.stack([t.link_bandwidth, t.link_latency], axis=1)
    weighted = t.has_bandwidths or t.has_latencies
    # an undirected graph (every link has its reverse, with the same values) runs as one: nauty is faster
    directed = not np.all(rev >= 0) or (weighted and np.any(values[np.maximum(rev, 0)] != values))
    keep = np.ones(t.n_links, dtype=bool) if directed else t.link_src < t.link_dst
    src, dst = t.link_src[keep].tolist(), t.link_dst[keep].tolist()
    compute = t.is_compute.astype(bool)
    colours = [c for c in (np.flatnonzero(compute).tolist(), np.flatnonzero(~compute).tolist()) if c]
    adj = {}
    if not weighted:
        for u, v in zip(src, dst):
            adj.setdefault(u, []).append(v)
        return V, adj, colours, directed
    _, cls = np.unique(values[keep], axis=0, return_inverse=True)
    cls = np.asarray(cls).ravel()
    mids = V + np.arange(len(src))
    for u, v, m in zip(src, dst, mids.tolist()):
        adj.setdefault(u, []).append(m)
        adj.setdefault(m, []).append(v)
    colours += [mids[cls == c].tolist() for c in range(int(cls.max()) + 1)]
    return V + len(src), adj, colours, directed


def automorphisms(t: Topology, *, seconds: float = 30.0, deadline: float | None = None) -> Automorphisms:
    """The automorphism group of ``t`` (link directions and compute vertices preserved), by nauty.

    Raises
    ------
    GroupError
        If ``t`` has more than :data:`MAX_VERTICES` vertices, or nauty does not finish by the deadline
        (``deadline``, a :func:`time.monotonic` value, else ``seconds`` from now), or fails.
    """
    V = t.n_vertices
    if V > MAX_VERTICES:
        raise GroupError(f"{t.name}: {V:,} vertices is over the automorphism search's limit of {MAX_VERTICES:,}")
    if V <= 1:
        return Automorphisms(np.zeros((0, V), dtype=np.int64), 1)
    deadline = time.monotonic() + seconds if deadline is None else deadline
    n, adj, colours, directed = _coloured_graph(t)
    if n > MAX_VERTICES:
        raise GroupError(f"{t.name}: {V:,} vertices and {n - V:,} link classes to tell apart is over the "
                         f"automorphism search's limit of {MAX_VERTICES:,} vertices")
    payload = json.dumps({"n": n, "directed": bool(directed), "adj": adj, "colours": colours})
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise GroupError(f"{t.name}: time limit reached before the automorphism search")
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD.format(mem=_MEMORY)], input=payload, text=True,
                             capture_output=True, timeout=remaining)
    except subprocess.TimeoutExpired:
        raise GroupError(f"{t.name}: nauty did not finish the automorphism group within the time limit") from None
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no message"])[-1]
        raise GroupError(f"{t.name}: nauty failed on this graph ({last[:200]})")
    result = json.loads(out.stdout)
    gens = np.asarray(result["gens"], dtype=np.int64).reshape(-1, n)[:, :V]
    mantissa, exponent = result["mantissa"], int(result["exponent"])
    if exponent == 0 and mantissa < 2 ** 53:
        order = int(round(mantissa))
    else:  # huge: only the leading digits are known
        digits = round(mantissa * 10 ** 15)
        order = digits * 10 ** (exponent - 15) if exponent >= 15 else digits // 10 ** (15 - exponent)
    return Automorphisms(gens, max(1, order))

