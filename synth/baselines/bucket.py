"""Bucket (Jain & Sabharwal 2010), balanced multiport (Sack & Gropp 2015).

One *family* does a ring reduce-scatter along the coordinate rings of one
dimension after the other (``n_i - 1`` nearest-neighbour steps each, the data
per node shrinking by ``n_i`` each time), which leaves each node with its own
block fully reduced, and then the ring allgathers in the reverse order.

Balanced multiport: ``2d`` families, each with ``1/(2d)`` of the vector.
Family ``(j, +)`` takes the dimensions in the order ``j, j+1, ...`` and sends to
``+1`` neighbours in the allgather (``-1`` in the reduce-scatter); family
``(j, -)`` the same the other way round.  On ``T_n^d`` every round then has
every directed link carrying one equal block: ``2d(n-1)`` rounds,
``Psi = Theta = Omega = 1``.  On unequal sides the families are in different
dimensions with different block sizes at the same time (``Omega > 1``).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> m = bucket(parse_torus("3x3x3")).measure()
>>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
(12, '1', '1', '1')
"""

from __future__ import annotations

import numpy as np

from synth.baselines._engine import Rounds, add_allreduce, allgather_plan, offset_map
from synth.baselines.base import Baseline
from synth.errors import TopologyError
from synth.topology.torus import Torus

__all__ = ["bucket", "SUPPORTED"]

SUPPORTED = "tori of any shape"


def bucket(t: Torus):
    """The balanced multiport Bucket schedule: ``2 sum_i (n_i - 1)`` rounds.

    Parameters
    ----------
    t : Torus

    Returns
    -------
    Baseline
        ``2d * p`` chunks of equal weight (family ``f``, block ``b`` is chunk ``f*p + b``).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> m = bucket(parse_torus("5x5")).measure()
    >>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
    (16, '1', '1', '1')
    >>> bucket(parse_torus("3x6")).measure().rounds   # 2 * (2 + 5)
    14
    """
    if not isinstance(t, Torus):
        raise TopologyError(f"bucket is defined on tori only (any shape), not on {getattr(t, 'name', t)!r}")
    d = t.ndim
    V = t.n_vertices
    active = np.ones(V, dtype=bool)
    owners = np.arange(V)
    r = Rounds(t)
    used = 0
    family = 0
    for j in range(d):
        dims = [(j + k) % d for k in range(d)]  # reduce-scatter order
        for sign in (1, -1):
            steps = []
            for dim in reversed(dims):  # allgather order
                m = offset_map(t, active, t.shape, dim, sign)
                steps += [[m]] * (t.shape[dim] - 1)
            plan = allgather_plan(V, owners, steps)
            used = add_allreduce(r, plan, family * V, 1)
            family += 1
    C = 2 * d * V
    notes = f"{2 * d} families (start dimension x direction) x {V} blocks"
    return Baseline(r.schedule(C, used), np.ones(C, dtype=np.int64), "bucket", notes)
