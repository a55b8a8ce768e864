"""The full automorphism group of a topology, by nauty (the ``pynauty`` package), within a time limit.

nauty runs in a child process that is killed at the deadline and capped in memory, so
no graph can hold the caller past its limit; graphs above :data:`MAX_VERTICES` vertices
are refused before any work (nauty's dense graphs take ``V^2 / 8`` bytes and its time
grows quickly with ``V`` on long paths).  Automorphisms preserve the link direction
and which vertices compute (two colour classes).

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
    src, dst = t.link_src.tolist(), t.link_dst.tolist()
    # an undirected graph (every link has its reverse) runs as one: nauty is faster on those
    directed = not np.all(t.link_ids(t.link_dst, t.link_src) >= 0)
    adj = {}
    for u, v in zip(src, dst):
        if directed or u < v:
            adj.setdefault(u, []).append(v)
    compute = t.is_compute.astype(bool)
    colours = [c for c in (np.flatnonzero(compute).tolist(), np.flatnonzero(~compute).tolist()) if c]
    payload = json.dumps({"n": V, "directed": bool(directed), "adj": adj, "colours": colours})
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
    gens = np.asarray(result["gens"], dtype=np.int64).reshape(-1, V)
    mantissa, exponent = result["mantissa"], int(result["exponent"])
    if exponent == 0 and mantissa < 2 ** 53:
        order = int(round(mantissa))
    else:  # huge: only the leading digits are known
        digits = round(mantissa * 10 ** 15)
        order = digits * 10 ** (exponent - 15) if exponent >= 15 else digits // 10 ** (15 - exponent)
    return Automorphisms(gens, max(1, order))

