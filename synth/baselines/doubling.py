"""Recursive doubling and halving-doubling (Rabenseifner 2004; Thakur, Rabenseifner, Gropp 2005).

Ranks are the compute nodes in id order (row-major on tori).  Partners are
``rank XOR 2^k``; a transmission follows the topology's shortest route (the
torus's dimension-order route), so partners far apart cost several hops.
These are the classical single-port algorithms: one family, one message per
node per round.

* **recursive-doubling**: ``log2 p'`` steps, each node adds its whole vector
  into its partner's.
* **halving-doubling** (Rabenseifner): reduce-scatter by recursive halving
  (partner distance ``1, 2, 4, ...``, half the remaining data each step) and
  allgather by recursive doubling (the same steps in reverse); ``2 log2 p'``
  rounds, ``Psi = 1``.

When ``p`` is not a power of two, ``p' = 2^floor(log2 p)`` and the first
``2(p - p')`` ranks pair up: each even one adds its vector into the odd one
after it before the algorithm and gets the result copied back after it (two
extra rounds).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> m = halving_doubling(parse_torus("4x4")).measure()
>>> m.rounds, str(m.psi)
(8, '1')
>>> recursive_doubling(parse_torus("3x3")).schedule.n_rounds   # 9 = 8 + 1
5
"""

from __future__ import annotations

import numpy as np

from synth.baselines._engine import Rounds, add_allreduce, add_enlarge, add_shrink, allgather_plan
from synth.baselines.base import Baseline
from synth.errors import TopologyError
from synth.schedule import REDUCE
from synth.topology import Topology

__all__ = ["recursive_doubling", "halving_doubling", "SUPPORTED"]

SUPPORTED = "any topology with at least 2 compute nodes (tori of any shape); non-powers of two add 2 rounds"


def _setup(t):
    if not isinstance(t, Topology):
        raise TopologyError("recursive doubling is defined on any topology with at least 2 compute nodes")
    ranks = t.compute.astype(np.int64)
    p = ranks.size
    if p < 2:
        raise TopologyError("recursive doubling needs at least 2 compute nodes")
    pp = 1 << (p.bit_length() - 1)
    extra = p - pp
    # Thakur/Rabenseifner folding: rank 2i adds into rank 2i+1 for i < extra
    fold_src = ranks[0:2 * extra:2]
    fold_dst = ranks[1:2 * extra:2]
    shrink = [(fold_src, fold_dst, None)] if extra else []
    new_to_real = np.concatenate([ranks[1:2 * extra:2], ranks[2 * extra:]])  # new rank -> vertex
    steps = []
    for k in range(pp.bit_length() - 1):
        to = np.full(t.n_vertices, -1, dtype=np.int64)
        to[new_to_real] = new_to_real[np.arange(pp) ^ (1 << k)]
        steps.append(to)
    return new_to_real, steps, shrink


def recursive_doubling(t: Topology):
    """Recursive doubling: ``log2 p'`` rounds (+2 when ``p`` is not a power of two).

    On any topology with compute nodes (ranks in id order); the whole vector
    is one chunk.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> m = recursive_doubling(parse_torus("4x4")).measure()
    >>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
    (4, '32/15', '3/2', '4')
    """
    owners, steps, shrink = _setup(t)
    r = Rounds(t)
    rnd = 1 + add_shrink(r, shrink, 1, 1)
    for s, to in enumerate(steps):
        src = np.flatnonzero(to >= 0)
        r.add(rnd + s, REDUCE, 0, src, to[src])
    rnd += len(steps)
    rnd += add_enlarge(r, shrink, 1, rnd)
    notes = f"{len(steps)} exchange steps over {owners.size} ranks"
    if shrink:
        notes += f"; {shrink[0][0].size} ranks folded in and out (+2 rounds)"
    return Baseline(r.schedule(1, rnd - 1), np.ones(1, dtype=np.int64), "recursive-doubling", notes)


def halving_doubling(t: Topology):
    """Rabenseifner's halving-doubling: ``2 log2 p'`` rounds (+2 when ``p`` is not a power of two).

    Ranks are the compute nodes in id order, on any topology; ``p'`` chunks
    of equal weight, block ``b`` owned by new rank ``b``.

    Examples
    --------
    >>> from synth.topology import Topology
    >>> star = Topology.from_links("star", {"kind": "links"}, 4,
    ...     [(0, 3), (3, 0), (1, 3), (3, 1), (2, 3), (3, 2)], compute=[0, 1, 2])
    >>> b = halving_doubling(star)           # 3 hosts around a switch: 2 + 2 rounds
    >>> b.schedule.n_rounds, b.notes
    (4, '2 blocks, 1 halving + 1 doubling steps; 1 ranks folded in and out (+2 rounds)')
    """
    owners, steps, shrink = _setup(t)
    B = owners.size
    r = Rounds(t)
    rnd = 1 + add_shrink(r, shrink, B, 1)
    plan = allgather_plan(t.n_vertices, owners, [[(to, None)] for to in steps[::-1]])
    rnd += add_allreduce(r, plan, 0, rnd)
    rnd += add_enlarge(r, shrink, B, rnd)
    notes = f"{B} blocks, {len(steps)} halving + {len(steps)} doubling steps"
    if shrink:
        notes += f"; {shrink[0][0].size} ranks folded in and out (+2 rounds)"
    return Baseline(r.schedule(B, rnd - 1), np.ones(B, dtype=np.int64), "halving-doubling", notes)
