"""Ring allreduce (Patarasuk & Yuan 2009), balanced multiport on tori, single-port on spine-leaf.

Reference for the tori: ajuerss/sst-trivance, ``EmberRingAllreduce25D`` in
``sst-elements-library-11.1.0/src/sst/elements/ember/mpi/motifs/emberhxmesh.cc``
("Rings" of ``benchmarks/allreduce/launchAll.py``): two edge-disjoint
Hamiltonian rings of a 2-D torus, each run both ways, as here; synth finds
``d`` Hamiltonian cycles on every shape by its own search (below), not by the
reference's 2-D construction.  On spine-leaf (the paper's
section 7.6) one ring over the hosts (:func:`host_ring`).

One ring: a Hamiltonian cycle, the vector cut into ``p`` blocks, a
reduce-scatter of ``p - 1`` steps (each node passes one block to its successor
and adds the one it receives) and an allgather of ``p - 1`` steps.

Balanced multiport.  The torus ``C_{n_1} x ... x C_{n_d}`` is ``2d``-regular and
splits into ``d`` edge-disjoint Hamiltonian cycles; each cycle runs one ring
in each direction, so ``2d`` families of ``p`` blocks each, and in every round
every directed link carries exactly one block: ``2(p-1)`` rounds and
``Psi = Theta = Omega = 1`` on every shape.

The decomposition (:func:`hamiltonian_decomposition`) starts from the
dimension classes (class ``i`` = all links along dimension ``i``, a union of
rings) and merges cycles by *square swaps*: in a unit square whose opposite
sides have classes ``A`` and ``B``, the two classes trade sides.  Every
vertex keeps two edges of each class; a swap joins two ``A``-cycles when its
two ``A``-sides lie on different ones, and keeps an ``A``-cycle whole when
both sides lie on it and are traversed the same way.  Swaps that lower the
total number of cycles are taken until every class is one Hamiltonian cycle
(with seeded random swaps that keep the count to leave a plateau).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("3x4")
>>> cycles = hamiltonian_cycles(t)
>>> len(cycles), [sorted(c.tolist()) == list(range(12)) for c in cycles]
(2, [True, True])
>>> m = ring(t).measure()
>>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
(22, '1', '1', '1')
"""

from __future__ import annotations

import numpy as np

from synth.baselines._engine import Rounds, add_allreduce, torus_disp
from synth.baselines.base import Baseline
from synth.errors import TopologyError
from synth.topology.spineleaf import SpineLeaf
from synth.topology.torus import Torus

__all__ = ["ring", "run_rings", "host_ring", "hamiltonian_decomposition", "hamiltonian_cycles", "SUPPORTED"]

SUPPORTED = ("tori of any shape; spine-leaf (one ring over the hosts); damaged tori and grids (one cycle, detoured "
             "around the failures: synth.baselines.damaged)")


def _cycles(t, plus, color, c):
    """Cycle id, position and cycle length of every vertex in class ``c``."""
    V, _d = t.n_vertices, t.ndim
    v, i = np.nonzero(color == c)
    w = plus[v, i]
    a = np.concatenate([v, w])
    b = np.concatenate([w, v])
    order = np.argsort(a, kind="stable")
    nb = b[order].reshape(V, 2).tolist()
    cyc = [-1] * V
    pos = [0] * V
    lengths = []
    for start in range(V):
        if cyc[start] >= 0:
            continue
        cid = len(lengths)
        prev, cur, k = -1, start, 0
        while True:
            cyc[cur] = cid
            pos[cur] = k
            k += 1
            x, y = nb[cur]
            nxt = x if x != prev else y
            if nxt == start:
                break
            prev, cur = cur, nxt
        lengths.append(k)
    cyc = np.asarray(cyc, dtype=np.int64)
    return cyc, np.asarray(pos, dtype=np.int64), np.asarray(lengths, dtype=np.int64)[cyc], len(lengths)


def hamiltonian_decomposition(t: Torus, seed: int = 0, max_plateau: int | None = None) -> np.ndarray:
    """Split the torus's edges into ``d`` Hamiltonian cycles.

    Returns
    -------
    numpy.ndarray
        ``color[v, i]`` in ``0..d-1``: the cycle of the edge from ``v`` to ``v + e_i``.

    Raises
    ------
    TopologyError
        If the search fails (not observed on any shape tried).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> col = hamiltonian_decomposition(parse_torus("4x4"))
    >>> col.shape, np.bincount(col.ravel()).tolist()
    ((16, 2), [16, 16])
    """
    if not isinstance(t, Torus):
        raise TopologyError(f"ring is defined on tori only (any shape), not on {getattr(t, 'name', t)!r}")
    V, d = t.n_vertices, t.ndim
    color = np.tile(np.arange(d, dtype=np.int64), (V, 1))
    if d == 1:
        return color
    plus = _plus_steps(t)
    rng = np.random.default_rng(seed)
    state = [_cycles(t, plus, color, c) for c in range(d)]
    pairs = [(i, j) for i in range(d) for j in range(i + 1, d)]
    q0 = np.arange(V)
    plateau, limit = 0, max_plateau if max_plateau is not None else 20 * V + 1000
    while any(s[3] > 1 for s in state):
        cyc = np.stack([s[0] for s in state])
        pos = np.stack([s[1] for s in state])
        length = np.stack([s[2] for s in state])

        def fwd(c, u, w):
            return np.mod(pos[c, w] - pos[c, u], length[c, u]) == 1

        best, cand = None, []
        for i, j in pairs:
            q1, q3 = plus[:, i], plus[:, j]
            q2 = plus[q1, j]
            A, B = color[q0, i], color[q0, j]
            ok = (A == color[q3, i]) & (B == color[q1, j]) & (A != B)
            dA = np.where(cyc[A, q0] != cyc[A, q3], -1, np.where(fwd(A, q0, q1) == fwd(A, q3, q2), 0, 1))
            dB = np.where(cyc[B, q0] != cyc[B, q1], -1, np.where(fwd(B, q0, q3) == fwd(B, q1, q2), 0, 1))
            delta = np.where(ok, dA + dB, 9)
            m = int(delta.min())
            if best is None or m < best:
                best, cand = m, []
            if m == best:
                cand += [(i, j, v) for v in np.flatnonzero(delta == m).tolist()]
        if best > 0 or (best == 0 and plateau >= limit):
            raise TopologyError(f"no Hamiltonian decomposition found for torus {'x'.join(map(str, t.shape))}")
        plateau = plateau + 1 if best == 0 else 0
        i, j, v = cand[int(rng.integers(len(cand)))]
        q1, q3 = plus[v, i], plus[v, j]
        A, B = int(color[v, i]), int(color[v, j])
        color[v, i] = color[q3, i] = B
        color[v, j] = color[q1, j] = A
        state[A] = _cycles(t, plus, color, A)
        state[B] = _cycles(t, plus, color, B)
    return color


def _plus_steps(t: Torus) -> np.ndarray:
    """``plus[v, i]``: the vertex ``v + e_i`` (one step up dimension ``i``, wrapping)."""
    V, d = t.n_vertices, t.ndim
    coords = t.coords(np.arange(V)).astype(np.int64)
    plus = np.empty((V, d), dtype=np.int64)
    for i in range(d):
        c = coords.copy()
        c[:, i] += 1
        plus[:, i] = t.vertex(c)
    return plus


def hamiltonian_cycles(t: Torus) -> list:
    """The ``d`` Hamiltonian cycles of :func:`hamiltonian_decomposition` as vertex sequences.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> [c.tolist() for c in hamiltonian_cycles(parse_torus("5"))]
    [[0, 1, 2, 3, 4]]
    """
    V, d = t.n_vertices, t.ndim
    if d == 1:
        return [np.arange(V)]
    color = hamiltonian_decomposition(t)
    plus = _plus_steps(t)
    out = []
    for c in range(d):
        _, pos, _, n = _cycles(t, plus, color, c)
        if n != 1:
            raise TopologyError("internal error: a class is not one cycle")
        seq = np.empty(V, dtype=np.int64)
        seq[pos] = np.arange(V)
        out.append(seq)
    return out


def ring(t):
    """Balanced multiport Ring: ``2d`` rings on ``d`` Hamiltonian cycles, ``2(p-1)`` rounds; one ring on spine-leaf.

    Parameters
    ----------
    t : Torus or SpineLeaf

    Returns
    -------
    Baseline
        ``2d * p`` chunks of equal weight (ring ``f``, block ``b`` is chunk ``f*p + b``);
        ``p`` on spine-leaf (:func:`host_ring`).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> m = ring(parse_torus("3x3x3")).measure()
    >>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
    (52, '1', '1', '1')
    """
    if isinstance(t, SpineLeaf):
        return host_ring(t)
    if not isinstance(t, Torus):
        raise TopologyError(f"ring is defined on tori (any shape) and spine-leaf, not on {getattr(t, 'name', t)!r}")
    cycles = hamiltonian_cycles(t)
    notes = f"{len(cycles)} edge-disjoint Hamiltonian cycles x 2 directions x {t.n_vertices} blocks"
    return run_rings(t, cycles, notes, torus_disp)


def run_rings(t, cycles, notes: str, disp=None) -> Baseline:
    """Ring allreduce on each Hamiltonian cycle (vertex orders) in both directions, ``p`` blocks each.

    ``disp(t, src, dst)`` gives the torus routes' signed steps; ``None``: shortest routes (any topology).
    A cycle through only the compute vertices (a damaged network's, its failed chips left out) has
    ``p`` = its length; a block is then named by its owner's position on the cycle instead of its vertex id.
    """
    V = len(cycles[0])
    r = Rounds(t)
    used, family = 0, 0
    for seq in cycles:
        seq = np.asarray(seq, dtype=np.int64)
        label = np.arange(t.n_vertices, dtype=np.int64)   # block ids: vertex ids on a cycle through every vertex
        if V != t.n_vertices:
            label[seq] = np.arange(V)
        for order in (seq, seq[::-1]):
            nxt = np.roll(order, -1)
            steps = None if disp is None else disp(t, order, nxt)
            # allgather step k: the node at position i passes on the block of position i - k
            plan = [[(order, nxt, steps, label[np.roll(order, k)])] for k in range(V - 1)]
            used = add_allreduce(r, plan, family * V, 1)
            family += 1
    C = family * V
    return Baseline(r.schedule(C, used), np.ones(C, dtype=np.int64), "ring", notes)


def host_ring(s: SpineLeaf):
    """Ring on a spine-leaf network: one ring over the hosts in id order, ``2(p-1)`` rounds.

    Every host has one link, so one ring, one direction (Patarasuk & Yuan's
    single-port ring): in each round every host sends one block to the next
    host, ``h_{i,j} -> L_j -> h_{i+1,j}`` on a leaf and ``h_{q-1,j} -> L_j ->
    S_{q-1} -> L_{j+1} -> h_{0,j+1}`` between leaves
    (:func:`synth.baselines._engine.spine_leaf_route`).  Host links carry one
    block per round, the minimum; spine links are mostly idle (``Omega > 1``
    counts them, as for SP-allreduce there).

    Examples
    --------
    >>> from synth.topology.spineleaf import spine_leaf
    >>> m = host_ring(spine_leaf(2, 3, 2)).measure()
    >>> m.rounds, str(m.psi), m.max_route, max(m.max_load)
    (10, '1', 4, 1)
    """
    hosts = s.compute.astype(np.int64)
    p = hosts.size
    nxt = np.roll(hosts, -1)
    r = Rounds(s)
    plan = [[(hosts, nxt, None, np.roll(np.arange(p), k))] for k in range(p - 1)]
    used = add_allreduce(r, plan, 0, 1)
    notes = f"one ring over the {p} hosts in id order, {p} blocks"
    return Baseline(r.schedule(p, used), np.ones(p, dtype=np.int64), "ring", notes)
