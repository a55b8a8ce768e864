"""Trivance (Juerss, Addanki, Schmid, SIGCOMM 2026), multiport torus version.

Partner rule.  At its ``k``-th step in dimension ``i`` every node exchanges with
*two* peers, ``x + 3^k`` and ``x - 3^k`` along ``i``, using both ports of that
dimension.  On a ring of ``3^t`` nodes the three windows (own, left, right)
are disjoint and together three times as large, so ``t`` steps reach everyone.

Multiport.  The vector is cut into ``d`` equal parts; part ``j`` starts on
dimension ``j`` and takes the dimensions in turn, so every step uses all
``2d`` links of every node.

* **trivance-l** (latency-optimal): each step a node adds its whole part into
  both peers'; ``log3 p`` rounds.  Sides that are not powers of three are
  shrunk first to the largest power of three below them (the extra node ``x``
  adds everything into ``x mod 3^t``, one dimension per round) and the result
  is copied back at the end.
* **trivance-b** (bandwidth-optimal): each part is cut into one block per node;
  the reduce-scatter sends at step ``s`` (distance ``3^s``) to each peer the
  blocks that peer's remaining steps reach (a third of the data each way at
  distance 1, a ninth at distance 3, ...), the allgather runs the steps in
  reverse; ``2 log3 p`` rounds.  Other sides run on the real ring with
  ``ceil(log3 n)`` steps, each block sent only to nodes that lack it.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> b = trivance_l(parse_torus("9x9"))
>>> m = b.measure()
>>> m.rounds, str(m.psi), str(m.theta)
(4, '81/20', '2')
"""

from __future__ import annotations

import numpy as np

from synth.baselines._engine import (
    Rounds, add_allreduce, add_enlarge, add_shrink, allgather_plan, ceil_log, dimension_order, floor_power,
    is_power, offset_map, shrink_plan,
)
from synth.baselines.base import Baseline
from synth.errors import TopologyError
from synth.schedule import REDUCE
from synth.topology.torus import Torus

__all__ = ["trivance_l", "trivance_b", "SUPPORTED"]

SUPPORTED = "tori of any shape (powers of three natively; other sides shrunk (L) or ceil(log3 n) steps (B))"


def _check(t, name):
    if not isinstance(t, Torus):
        raise TopologyError(f"{name} is defined on tori only (any shape), not on {getattr(t, 'name', t)!r}")


def _part_steps(t, active, virtual, part):
    """Per step of part ``part``: the two maps (``+3^k`` first, then ``-3^k``)."""
    steps = [ceil_log(v, 3) for v in virtual]
    return [[offset_map(t, active, virtual, dim, 3 ** k), offset_map(t, active, virtual, dim, -(3 ** k))]
            for dim, k in dimension_order(part, steps)]


def trivance_l(t: Torus):
    """TrivanceL: ``log3 p`` rounds on power-of-three sides (else ``log3`` of the virtual size, +2 per shrunk side).

    Parameters
    ----------
    t : Torus

    Returns
    -------
    Baseline
        ``d`` chunks of equal weight, one per part.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> m = trivance_l(parse_torus("3x3x3")).measure()
    >>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
    (3, '81/26', '1', '1')
    >>> trivance_l(parse_torus("4x4")).schedule.n_rounds     # virtual 3x3: 2 steps + 2 + 2
    6
    """
    _check(t, "trivance-l")
    d = t.ndim
    virtual = [floor_power(n, 3) for n in t.shape]
    shrink, active = shrink_plan(t, virtual)
    r = Rounds(t)
    rnd = 1 + add_shrink(r, shrink, d, 1)
    parts = [_part_steps(t, active, virtual, j) for j in range(d)]
    K = len(parts[0])
    for s in range(K):
        for j in range(d):
            for to, disp in parts[j][s]:
                src = np.flatnonzero(to >= 0)
                r.add(rnd + s, REDUCE, j, src, to[src], disp[src])
    rnd += K
    rnd += add_enlarge(r, shrink, d, rnd)
    notes = f"{d} parts, {K} steps with two peers each"
    if shrink:
        notes += f"; shrunk to virtual {'x'.join(map(str, virtual))} torus (+{2 * len(shrink)} rounds)"
    return Baseline(r.schedule(d, rnd - 1), np.ones(d, dtype=np.int64), "trivance-l", notes)


def trivance_b(t: Torus):
    """TrivanceB: reduce-scatter and allgather, ``2 log3 p`` rounds on power-of-three sides.

    Parameters
    ----------
    t : Torus

    Returns
    -------
    Baseline
        ``d * p`` chunks of equal weight (part ``j``, block ``b`` is chunk ``j*p + b``).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> m = trivance_b(parse_torus("9x9")).measure()
    >>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
    (8, '1', '6/5', '1')
    """
    _check(t, "trivance-b")
    d = t.ndim
    virtual = list(t.shape)
    active = np.ones(t.n_vertices, dtype=bool)
    owners = np.arange(t.n_vertices)
    B = owners.size
    r = Rounds(t)
    used = 0
    for j in range(d):
        steps = _part_steps(t, active, virtual, j)
        plan = allgather_plan(t.n_vertices, owners, steps[::-1])
        used = add_allreduce(r, plan, j * B, 1)
    notes = f"{d} parts x {B} blocks, {used // 2} reduce-scatter + {used // 2} allgather steps"
    if not all(is_power(n, 3) for n in t.shape):
        notes += "; sides that are not powers of three use ceil(log3 n) steps without duplicate blocks"
    return Baseline(r.schedule(d * B, used), np.ones(d * B, dtype=np.int64), "trivance-b", notes)
