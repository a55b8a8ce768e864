"""Baselines on lattice tori and grids: Ring on a Hamiltonian cycle; the others refused with the reason.

The Hamiltonian cycle (:func:`box_cycle`) lives in the box of representatives (the HNF's diagonal,
:mod:`synth.topology.lattice`): a step ``±e_i`` that stays inside the box is a link of every lattice
torus and grid alike, so one construction serves meshes, mixed wrap and twisted tori.  The box is
read as a 2-D mesh ``a x b``: one side against the boustrophedon (snake) path through the others;
with ``a`` even the cycle runs along the first row, snakes back through columns ``1..b-1`` row by
row, and returns up column 0.  A box with an odd number of nodes has no such cycle (a mesh is
bipartite); that case is refused with the reason.

Ring runs that cycle in both directions (Patarasuk & Yuan's ring, ``p`` blocks each):
``2(p - 1)`` rounds, Ψ = Θ = 1, and Ω = ``D/2`` on a ``D``-regular graph (two of the ``D`` links
of a node carry all the traffic): the balanced multiport Ring of the plain tori needs ``d``
edge-disjoint Hamiltonian cycles, which are not constructed here.

Bucket, Swing and Trivance are defined by their authors on coordinate rings of a plain torus
(Bucket's reduce-scatter along each ring, Swing's and Trivance's partners at distances along one
ring).  A twisted torus's coordinate lines do not close after their side (they close after the
twist), and a mesh side is no ring: those libraries do not run there, and synth refuses them with
that reason (:func:`refusal`).

Examples
--------
>>> from synth.topology.lattice import twisted, grid
>>> m = lattice_ring(twisted((2, 4))).measure()
>>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
(14, '1', '1', '2')
>>> box_cycle(grid((3, 3), (False, False)))  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
synth.errors.TopologyError: ring: mesh 3x3 has 9 nodes, an odd number: its box of representatives has no
Hamiltonian cycle (synth builds none through the wrap links)
"""

from __future__ import annotations

import numpy as np

from synth.baselines.base import Baseline
from synth.baselines.ring import run_rings
from synth.errors import TopologyError

__all__ = ["box_cycle", "lattice_ring", "refusal"]


def _snake(shape) -> np.ndarray:
    """Boustrophedon order of the box ``shape`` (coordinates, ``M x k``): consecutive rows differ by one step."""
    if not shape:
        return np.zeros((1, 0), dtype=np.int64)
    inner = _snake(shape[1:])
    rows = []
    for x in range(shape[0]):
        part = inner if x % 2 == 0 else inner[::-1]
        rows.append(np.concatenate([np.full((part.shape[0], 1), x, dtype=np.int64), part], axis=1))
    return np.concatenate(rows)


def box_cycle(t) -> np.ndarray:
    """A Hamiltonian cycle of the box of representatives, as the vertex order (module docstring).

    Raises
    ------
    TopologyError
        When the box has an odd number of nodes, or fewer than two sides longer than 1 and no
        wrapped one (a path has no cycle).
    """
    V = t.n_vertices
    if V % 2:
        raise TopologyError(f"ring: {t.name} has {V} nodes, an odd number: its box of representatives has no "
                            "Hamiltonian cycle (synth builds none through the wrap links)")
    dims = [i for i, s in enumerate(t.shape) if s > 1]
    if len(dims) == 1:
        if not t.wrap[dims[0]] and t.shape[dims[0]] > 2:
            raise TopologyError(f"ring: {t.name} is a path: it has no Hamiltonian cycle")
        order = np.zeros((V, t.ndim), dtype=np.int64)
        order[:, dims[0]] = np.arange(V)
        return t.vertex(order)
    even = next(i for i in dims if t.shape[i] % 2 == 0)
    others = [i for i in dims if i != even]
    a, snake = t.shape[even], _snake([t.shape[i] for i in others])
    b = snake.shape[0]
    cells = [(0, j) for j in range(b)]
    for r in range(1, a):
        cols = range(b - 1, 0, -1) if r % 2 else range(1, b)
        cells.extend((r, j) for j in cols)
    cells.extend((r, 0) for r in range(a - 1, 0, -1))
    cells = np.asarray(cells, dtype=np.int64)
    coords = np.zeros((V, t.ndim), dtype=np.int64)
    coords[:, even] = cells[:, 0]
    coords[:, others] = snake[cells[:, 1]]
    return t.vertex(coords)


def lattice_ring(t) -> Baseline:
    """Ring on :func:`box_cycle`, both directions: ``2(p-1)`` rounds, Ψ = Θ = 1 (module docstring)."""
    notes = f"one Hamiltonian cycle of the box of representatives x 2 directions x {t.n_vertices} blocks"
    return run_rings(t, [box_cycle(t)], notes)


def refusal(name: str, t) -> str:
    """Why the baseline ``name`` does not run on the lattice torus or grid ``t`` (one line)."""
    what = "a twisted (lattice) torus, whose coordinate lines close only after the twist" \
        if not t.is_diagonal else "a grid with a side that does not wrap (a mesh side is no ring)"
    return (f"{name} runs on the coordinate rings of a plain torus (as its authors' library does); {t.name} is "
            f"{what}: refused. Ring (a Hamiltonian cycle) and the doubling families run here")
