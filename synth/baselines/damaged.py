"""Ring on a damaged grid or torus: one Hamiltonian cycle of the healthy network, routed around the failures.

The cycle is the snake of the healthy network's box of representatives (:func:`synth.baselines.lattice.box_cycle`)
under axis orders, reflections and wrapped translations (:func:`healthy_cycles`), the one that crosses the fewest
failed links (none when one fits) and, among those, needs the shortest detours.  A failed chip is skipped; a step
whose link failed, or that skips a chip, takes a shortest route of the damaged network (2 hops where the cycle turns
at a failed chip, 3 around a failed link).  A torus of even sides is bipartite, so no cycle passes through an odd
number of chips on links alone: the detours are needed there.  Ring runs the cycle both ways
(:func:`synth.baselines.ring.run_rings`, ``p`` blocks each): ``2(p - 1)`` rounds.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> t = parse_torus("4x4")
>>> b = damaged_ring(damage(t, parse_failures(t, links=["0-1"])))
>>> m = b.measure()
>>> m.rounds, m.max_route, b.notes
(30, 1, 'one cycle of torus 4x4 with 1 failed link x 2 directions, 16 blocks')
>>> b = damaged_ring(damage(t, parse_failures(t, nodes=["5"])))
>>> b.measure().rounds, b.notes.endswith("1 step(s) rerouted around failures (2 hops)")
(28, True)
"""

from __future__ import annotations

import itertools

import numpy as np

from synth.baselines.base import Baseline
from synth.baselines.lattice import box_cycle
from synth.baselines.ring import run_rings
from synth.errors import SynthError, TopologyError
from synth.topology.lattice import grid

__all__ = ["healthy_cycles", "damaged_ring"]


def healthy_cycles(t):
    """Hamiltonian cycles of the grid or torus ``t``: its box's snake under axis orders, reflections, translations.

    At most 24 axis orders, 16 reflections and 1,024 translations each; yields vertex orders of ``t``.
    """
    shape = tuple(int(s) for s in t.shape)
    wrap = tuple(getattr(t, "wrap", (True,) * len(shape)))
    for perm in itertools.islice(itertools.permutations(range(len(shape))), 24):
        try:
            order = box_cycle(grid(tuple(shape[i] for i in perm), (False,) * len(shape)))
        except SynthError:
            continue
        base = np.zeros((order.size, len(shape)), dtype=np.int64)
        base[:, list(perm)] = np.stack(np.unravel_index(order, tuple(shape[i] for i in perm)), axis=-1)
        for flip in itertools.islice(itertools.product((False, True), repeat=len(shape)), 16):
            coords = np.where(flip, np.asarray(shape) - 1 - base, base)
            shifts = itertools.product(*[range(s) if w else [0] for s, w in zip(shape, wrap)])
            for shift in itertools.islice(shifts, 1024):
                yield np.ravel_multi_index(tuple(((coords + shift) % shape).T), shape)


def damaged_ring(t) -> Baseline:
    """Ring, both directions, on the cycle of the damaged grid or torus ``t`` (module docstring); on a healthy one,
    the box's snake itself.

    Raises
    ------
    TopologyError
        When ``t`` is no damaged grid or torus, or its healthy box has no Hamiltonian cycle (an odd number of nodes).
    """
    base = getattr(t, "healthy", t)
    if not hasattr(base, "shape"):
        raise TopologyError(f"ring is defined on damaged tori and grids, not on {getattr(t, 'name', t)!r}")
    chips = len(t.failures.nodes) if hasattr(t, "failures") else 0
    alive = np.zeros(t.n_vertices, dtype=bool)
    alive[t.compute] = True
    best = None
    for order in healthy_cycles(base):
        order = order[alive[order]]
        gaps = np.flatnonzero(t.link_ids(order, np.roll(order, -1)) < 0)
        if best is not None and gaps.size > len(best[1]):
            continue
        hops = [int(t.bfs([int(order[i])])[int(order[(i + 1) % order.size])]) for i in gaps]
        if best is None or (len(hops), sum(hops)) < (len(best[1]), sum(best[1])):
            best = (order, hops)
        if len(hops) == chips and sum(hops) == 2 * chips:
            break
    if best is None:
        raise TopologyError(f"ring: {base.name} has {base.n_vertices} nodes, an odd number: its box has no "
                            "Hamiltonian cycle")
    order, hops = best
    notes = f"one cycle of {t.name} x 2 directions, {order.size} blocks"
    if hops:
        notes += f"; {len(hops)} step(s) rerouted around failures ({', '.join(map(str, hops))} hops)"
    return run_rings(t, [order], notes)
