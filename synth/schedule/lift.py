"""Lift a base schedule through a group into the explicit schedule.

Chunk ``t*|G| + i`` is component ``t`` moved by group element ``i``: every
transmission of the component keeps its round and op, and its route is the
image of the base route link by link.  Chunk ``t*|G| + i`` has weight
``weights[t]`` (see :func:`synth.schedule.chunking.chunk_elements`).  For a reduce-scatter or
allgather chunk ``t*|G| + i`` is owned by element ``i``'s image of component ``t``'s owner
(:func:`lifted_owners`), and :func:`lifted_chunk_elements` cuts the blocks of
:mod:`synth.schedule.data`.

Examples
--------
>>> from synth import parse_torus, sp_allreduce, torus_gamma  # the public names
>>> t = parse_torus("4x4")
>>> s = lift(sp_allreduce(t), torus_gamma(t))
>>> s.n_chunks, s.n_rounds, s.n_transmissions
(64, 8, 1920)
>>> from synth.schedule.collective import collective_half
>>> rs = collective_half(sp_allreduce(t), "reduce-scatter")
>>> lifted_owners(rs, torus_gamma(t))[:8].tolist()
[0, 0, 0, 0, 1, 1, 1, 1]
>>> lifted_chunk_elements(rs, torus_gamma(t), 128)[:4].tolist()
[2, 2, 2, 2]
"""

from __future__ import annotations

import numpy as np

from synth.errors import InvalidScheduleError, ScheduleError, check_instance
from synth.schedule.data import ALLREDUCE, BaseSchedule, Block, Schedule
from synth.schedule.chunking import block_chunk_elements, chunk_elements
from synth.symmetry.group import Group
from synth.topology.failures import without_nodes

__all__ = ["lift", "lifted_weights", "lifted_owners", "lifted_chunk_elements", "default_elements"]

_TABLE_LIMIT = 1 << 22


def lifted_weights(base: BaseSchedule, group: Group) -> np.ndarray:
    """Weight of every lifted chunk: component weights, each repeated ``|G|`` times."""
    check_instance(base, "base", BaseSchedule)
    check_instance(group, "group", Group)
    return np.repeat(base.weights, group.order)


def lifted_owners(base: BaseSchedule, group: Group):
    """Owner of every lifted chunk (``None`` for an allreduce): element ``i`` applied to component ``t``'s owner."""
    if base.owner is None:
        return None
    return group.vertex_images(base.owner).T.ravel().astype(np.int64)  # row t: the images of owner t


def lifted_chunk_elements(base: BaseSchedule, group: Group, n_elements: int) -> np.ndarray:
    """Elements of every lifted chunk for ``n_elements`` per node (:mod:`synth.schedule.data`: chunking, layout)."""
    weights = lifted_weights(base, group)
    if base.collective == ALLREDUCE:
        return chunk_elements(weights, n_elements)
    return block_chunk_elements(lifted_owners(base, group), weights, base.topology.compute, n_elements)


def default_elements(base: BaseSchedule, group: Group) -> int:
    """One element per unit of chunk weight: ``|G| * sum(weights)``, or for a reduce-scatter or allgather
    ``p`` blocks of the largest total weight a node owns (every chunk then gets an element)."""
    if base.collective == ALLREDUCE:
        return group.order * sum(int(w) for w in base.weights.tolist())
    owned = np.bincount(lifted_owners(base, group), weights=lifted_weights(base, group),
                        minlength=base.topology.n_vertices)[base.topology.compute]
    return int(base.topology.n_compute * max(1, int(owned.max())))


def lift(base: BaseSchedule, group: Group, dropped=()) -> Schedule:
    """The explicit schedule of ``base`` lifted through ``group``; with ``dropped`` chips (an allreduce's), the
    schedule on the network without them (:func:`~synth.topology.failures.without_nodes`): every lifted
    transmission from or to a dropped chip is left out, the others keep their chunks, rounds and routes.

    A dropped chip that forwarded in some tree leaves a schedule its execution finds wrong; a route through one
    is a false schedule (:class:`~synth.errors.InvalidScheduleError`).

    >>> from synth import parse_torus, sp_allreduce, torus_gamma
    >>> t = parse_torus("3x3")
    >>> lift(sp_allreduce(t), torus_gamma(t), dropped=[4]).topology.name
    'torus 3x3 with 1 failed node'
    """
    check_instance(base, "base", BaseSchedule)
    check_instance(group, "group", Group)
    if group.topology is not base.topology and group.topology.n_links != base.topology.n_links:
        raise ScheduleError("the group and the base schedule live on different topologies")
    G = group.order
    blocks = []
    parts = base.grouped()
    # images of every route link at once when that table is small; per block otherwise (cache-friendly)
    table = None
    if G * base.route_links.size <= _TABLE_LIMIT:
        used, inverse = np.unique(base.route_links, return_inverse=True)
        table, column = group.link_images(used), inverse.ravel()
    lengths = base.route_lengths   # once: the property is a diff over every route
    for part in parts:
        t = int(base.component[part[0]])
        L = int(lengths[part[0]])
        routes = base.route_matrix(part)  # k x L
        if table is None:
            links = group.link_images(routes).reshape(G * part.size, L)  # G x (k*L): rows are chunks
        else:
            links = np.take(table, column[base.route_ptr[part][:, None] + np.arange(L)].ravel(), axis=1)
            links = links.reshape(G * part.size, L)
        chunk = np.repeat(np.arange(t * G, (t + 1) * G, dtype=np.int32), part.size)
        blocks.append(Block(int(base.round[part[0]]), int(base.op[part[0]]), chunk, links))
    if len(dropped):
        return _dropped(base, G, blocks, dropped)
    return Schedule(base.topology, G * base.n_components, base.n_rounds, tuple(blocks), base.collective,
                    lifted_owners(base, group))


def _dropped(base: BaseSchedule, G: int, blocks, dropped) -> Schedule:
    """The lifted ``blocks`` on the network without the ``dropped`` chips (:func:`lift`)."""
    t = base.topology
    if base.collective != ALLREDUCE:
        raise ScheduleError(f"only an allreduce drops chips, not a {base.collective}")
    net = without_nodes(t, dropped)
    dead = np.zeros(t.n_vertices, dtype=bool)
    dead[list(net.failures.nodes)] = True
    onto = net.link_ids(t.link_src, t.link_dst)     # -1: a link at a dropped chip
    out = []
    for b in blocks:
        keep = ~dead[t.link_src[b.links[:, 0]]] & ~dead[t.link_dst[b.links[:, -1]]]
        links = onto[b.links[keep]]
        if np.any(links < 0):
            raise InvalidScheduleError(f"round {b.round}: a route passes through a dropped chip")
        out.append(Block(b.round, b.op, b.chunk[keep], links))
    return Schedule(net, G * base.n_components, base.n_rounds, tuple(out), base.collective, None)
