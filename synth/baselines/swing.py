"""Swing (De Sensi, Bonato, Saam, Hoefler, NSDI 2024), multiport torus version.

References: HLC-Lab/bine_trees_fugaku ``lib/libswing_coll.cc`` (libswing, the
authors' MPI library) and ajuerss/sst-trivance
``sst-elements-library-11.1.0/src/sst/elements/ember/mpi/motifs/emberswingcoll.cc``
(the SST motif of the paper's runs; launcher ``benchmarks/allreduce/launchAll.py``,
which runs SwingB on ``2d`` ports and SwingL on one: ``swing-l-1port``).

Partner rule.  At its ``k``-th step in dimension ``i`` a node with coordinate
``x`` (``x = x_i``) talks to ``x + s * rho(k)``, where
``rho(k) = sum_{j=0..k} (-2)^j = 1, -1, 3, -5, 11, ...`` and ``s = +1`` for even
``x``, ``-1`` for odd ``x`` (so partners always differ in parity and the
relation is symmetric).  A route goes the short way round the ring.

Multiport.  The vector is cut into ``2d`` equal parts, one per port.  Port ``j``
starts on dimension ``j mod d`` and then takes the dimensions in turn
(skipping exhausted ones on unequal sides); ports ``j >= d`` are *mirrored*
(``s`` negated), so that in every step each dimension is used by one plain and
one mirrored collective and both directions of every link carry the same load.

* **swing-l** (latency-optimal): each step every node adds its whole part
  into its partner's; ``log2 p`` steps.  Sides that are not powers of two are
  first shrunk to the largest power of two ``2^m`` below them, one dimension
  per round, the extra nodes adding everything into ``x mod 2^m``, and the
  result is copied back at the end.  This is the shrink/enlarge of Swing's
  implementation (libswing), which pairs ``x`` with ``x - (n - 2^m)`` instead:
  the same hop counts, mirrored.
* The whole vector crosses the shrink and enlarge routes in one message, as
  in libswing (its multiport shrink is a TODO there).
* **swing-b** (bandwidth-optimal): each part is cut into one block per node;
  reduce-scatter in ``log2 p`` steps (at step ``s`` a node sends the blocks its
  partner's remaining steps reach), then the allgather in reverse.  Even sides
  that are not powers of two run on the real ring with ``ceil(log2 n)`` steps,
  each block sent only to nodes that do not hold it yet: a node sends a block
  in the last reduce-scatter step whose reach contains it, which is libswing's
  rule for duplicated reaches.  Odd sides (where the parity rule does not pair
  nodes) are shrunk as for swing-l.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> b = swing_b(parse_torus("4x4"))
>>> b.schedule.n_rounds, b.schedule.n_chunks
(8, 64)
>>> rho(0), rho(1), rho(2), rho(3)
(1, -1, 3, -5)
"""

from __future__ import annotations

import numpy as np

from synth.baselines._engine import (
    Rounds, add_allreduce, add_enlarge, add_shrink, allgather_plan, ceil_log, dimension_order, floor_power,
    is_power, offset_map, shrink_plan,
)
from synth.baselines.base import Baseline, require_torus
from synth.schedule import REDUCE
from synth.topology.torus import Torus

__all__ = ["rho", "swing_l", "swing_l_1port", "swing_b", "SUPPORTED"]

SUPPORTED = ("tori of any shape (powers of two natively; other sides via shrink/enlarge or duplicate-free reach); "
             "HyperX as the torus of the same shape; spine-leaf on the ring of the hosts")


def rho(k: int) -> int:
    """Swing's signed partner distance at step ``k``: ``sum_{j=0..k} (-2)^j``.

    Examples
    --------
    >>> [rho(k) for k in range(6)]
    [1, -1, 3, -5, 11, -21]
    """
    return (1 - (-2) ** (k + 1)) // 3


def _port_maps(t, active, virtual, port):
    """The map of every step of port ``port`` on the virtual torus."""
    d = t.ndim
    mirrored = port >= d
    steps = [ceil_log(v, 2) for v in virtual]
    coords = t.coords(np.arange(t.n_vertices))
    out = []
    for dim, k in dimension_order(port % d, steps):
        sign = np.where(coords[:, dim] % 2 == 0, 1, -1) * (-1 if mirrored else 1)
        out.append(offset_map(t, active, virtual, dim, sign * rho(k)))
    return out


def swing_l(t: Torus, ports: int | None = None, name: str = "swing-l"):
    """SwingL: ``log2 p`` rounds on power-of-two sides (else ``log2`` of the virtual size, +2 per shrunk side).

    One chunk of equal weight per port: ``ports`` of them, ``2d`` by default
    (``ports=1``, under the registry ``name`` ``swing-l-1port``, is
    :func:`swing_l_1port`).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> m = swing_l(parse_torus("8x8")).measure()
    >>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
    (6, '64/21', '5/3', '1')
    >>> swing_l(parse_torus("6x6")).notes
    '4 ports (2 plain, 2 mirrored), 4 exchange steps; shrunk to virtual 4x4 torus (+4 rounds)'
    """
    require_torus(t, name)
    d = t.ndim
    C = 2 * d if ports is None else ports
    virtual = [floor_power(n, 2) for n in t.shape]
    shrink, active = shrink_plan(t, virtual)
    r = Rounds(t)
    rnd = 1 + add_shrink(r, shrink, C, 1)
    maps = [_port_maps(t, active, virtual, j) for j in range(C)]
    K = len(maps[0])
    for s in range(K):
        for j in range(C):
            to, disp = maps[j][s]
            src = np.flatnonzero(to >= 0)
            r.add(rnd + s, REDUCE, j, src, to[src], disp[src])
    rnd += K
    rnd += add_enlarge(r, shrink, C, rnd)
    if C == 1:
        notes = f"1 port (the whole vector, plain partner rule), {K} exchange steps"
    else:
        notes = f"{C} ports ({min(C, d)} plain, {max(C - d, 0)} mirrored), {K} exchange steps"
    if shrink:
        notes += f"; shrunk to virtual {'x'.join(map(str, virtual))} torus (+{2 * len(shrink)} rounds)"
    return Baseline(r.schedule(C, rnd - 1), np.ones(C, dtype=np.int64), name, notes)


def swing_l_1port(t: Torus):
    """SwingL on one port, as the reference launcher runs it: the whole vector on port 0's partners.

    The launcher of ajuerss/sst-trivance (``benchmarks/allreduce/launchAll.py``)
    runs SwingL with ``ports=1``: one collective, not mirrored, whose step ``k``
    in a dimension pairs ``x`` with ``x +- rho(k)`` and adds the whole vector
    into the partner's; each step uses one link per node.  synth's ``swing-l``
    splits the vector over ``2d`` ports instead, the stronger variant.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> m = swing_l_1port(parse_torus("8x8")).measure()
    >>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
    (6, '64/21', '5/3', '16/5')
    """
    return swing_l(t, ports=1, name="swing-l-1port")


def swing_b(t: Torus):
    """SwingB: reduce-scatter and allgather, ``2 log2 p`` rounds on power-of-two sides.

    ``2d * p'`` chunks of equal weight, ``p'`` being the number of nodes left
    after shrinking odd sides; port ``j``'s block ``b`` is chunk ``j*p' + b``.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> m = swing_b(parse_torus("8x8")).measure()
    >>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
    (12, '1', '23/21', '1')
    >>> swing_b(parse_torus("6x6")).schedule.n_rounds   # 2 * (3 + 3): ceil(log2 6) steps per side
    12
    """
    require_torus(t, "swing-b")
    d = t.ndim
    virtual = [n if n % 2 == 0 else floor_power(n, 2) for n in t.shape]
    shrink, active = shrink_plan(t, virtual)
    owners = np.flatnonzero(active)
    B = owners.size
    C = 2 * d * B
    r = Rounds(t)
    rnd = 1 + add_shrink(r, shrink, C, 1)
    used = 0
    for j in range(2 * d):
        maps = _port_maps(t, active, virtual, j)
        plan = allgather_plan(t.n_vertices, owners, [[m] for m in maps[::-1]])
        used = add_allreduce(r, plan, j * B, rnd)
    rnd += used
    rnd += add_enlarge(r, shrink, C, rnd)
    notes = f"{2 * d} ports x {B} blocks, {used // 2} reduce-scatter + {used // 2} allgather steps"
    odd_even = [n for n in t.shape if n % 2 == 0 and not is_power(n, 2)]
    if odd_even:
        notes += "; even non-power-of-two sides use ceil(log2 n) steps without duplicate blocks"
    if shrink:
        notes += f"; odd sides shrunk to virtual {'x'.join(map(str, virtual))} torus (+{2 * len(shrink)} rounds)"
    return Baseline(r.schedule(C, rnd - 1), np.ones(C, dtype=np.int64), "swing-b", notes)
