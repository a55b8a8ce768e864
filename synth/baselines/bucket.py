"""Bucket (Jain & Sabharwal 2010), balanced multiport (Sack & Gropp 2015), staged as the reference runs it.

Reference: ajuerss/sst-trivance,
``sst-elements-library-11.1.0/src/sst/elements/ember/mpi/motifs/emberhxmesh.cc``
(``EmberRingAllreduceRev``, the motif ``RingAllreduceRev`` that the launcher
``benchmarks/allreduce/launchAll.py`` runs as "Bucket", ``2d`` ports).

One *family* does a ring reduce-scatter along the coordinate rings of one
dimension after the other (``n_i - 1`` nearest-neighbour steps each, the data
per node shrinking by ``n_i`` each time), which leaves each node with its own
block fully reduced, and then the ring allgathers in the reverse order.

Balanced multiport: ``2d`` families, each with ``1/(2d)`` of the vector.
Family ``(j, +)`` takes the dimensions in the order ``j, j+1, ...`` and sends to
``+1`` neighbours in the allgather (``-1`` in the reduce-scatter); family
``(j, -)`` the same the other way round.

Stages.  The reference runs the ``2d`` families in ``2d`` *stages*: in stage
``s < d`` family ``(j, +-)`` reduce-scatters along dimension ``(j + s) mod d``,
in stage ``d + s`` it allgathers along the dimension of stage ``d - 1 - s``; a
rank enables the rings of stage ``s + 1`` only when all its rings of stage
``s`` are done (a barrier per stage).  In synth's lock-step rounds a stage is
``max_i (n_i - 1)`` rounds: every family makes its ``n_i - 1`` steps from the
stage's first round on and then idles until the stage ends (the allgather is
the time reversal of the reduce-scatter within each stage).  So ``2d *
max_i (n_i - 1)`` rounds.  On ``T_n^d`` this is the plain schedule:
``2d(n-1)`` rounds, ``Psi = Theta = Omega = 1``.  On unequal sides families in
different dimensions move blocks of different sizes in the same round
(``Omega > 1``) and the shorter sides idle; the reference's rings, not in lock
step, move at their own pace within a stage, which the cost model's
busiest-link-per-round charge cannot express (a simulator replaying the file
with per-message dependencies can).

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
from synth.baselines.base import Baseline, require_torus
from synth.topology.torus import Torus

__all__ = ["bucket", "SUPPORTED"]

SUPPORTED = "tori of any shape; HyperX as the torus of the same shape; spine-leaf on the ring of the hosts"


def bucket(t: Torus):
    """The balanced multiport Bucket schedule in the reference's stages: ``2d max_i (n_i - 1)`` rounds.

    ``2d * p`` chunks of equal weight: family ``f``, block ``b`` is chunk ``f*p + b``.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> m = bucket(parse_torus("5x5")).measure()
    >>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
    (16, '1', '1', '1')
    >>> bucket(parse_torus("3x6")).measure().rounds   # 4 stages of 5 rounds
    20
    """
    require_torus(t, "bucket")
    d = t.ndim
    V = t.n_vertices
    M = max(t.shape) - 1  # rounds per stage
    active = np.ones(V, dtype=bool)
    owners = np.arange(V)
    r = Rounds(t)
    used = 0
    family = 0
    for j in range(d):
        dims = [(j + k) % d for k in range(d)]  # reduce-scatter order: stage s uses dims[s]
        for sign in (1, -1):
            steps, rs, ag = [], [], []
            for t_ag, dim in enumerate(reversed(dims)):  # allgather stage t_ag, reduce-scatter stage d-1-t_ag
                m = offset_map(t, active, t.shape, dim, sign)
                n1 = t.shape[dim] - 1
                steps += [[m]] * n1
                ag += [t_ag * M + q for q in range(n1)]
                rs += [(d - 1 - t_ag) * M + n1 - 1 - q for q in range(n1)]
            plan = allgather_plan(V, owners, steps)
            used = add_allreduce(r, plan, family * V, 1, (d * M, rs, ag))
            family += 1
    C = 2 * d * V
    notes = f"{2 * d} families (start dimension x direction) x {V} blocks, {2 * d} stages of {M} rounds"
    if min(t.shape) - 1 < M:
        notes += "; families on shorter sides idle until their stage ends"
    return Baseline(r.schedule(C, used), np.ones(C, dtype=np.int64), "bucket", notes)
