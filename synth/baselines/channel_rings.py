"""Rings over a server's direct GPU links, found the way NCCL's and RCCL's topology search finds its channels.

NCCL (and RCCL, its AMD port, which builds the rings of an MI250 node over its xGMI links) searches for a
set of *channels*: rings through every GPU of the server, each at one speed, that share the links' bandwidth
(a ring at speed ``b`` takes ``b`` from every directed link it crosses, so a link of ``k`` xGMI lanes can
carry several rings).  The search tries speeds from the highest down and, at each, finds as many rings as
the links' remaining bandwidth allows; it keeps the speed whose rings carry the most in total
(channels x speed).  :func:`channel_rings` does that over a server's direct GPU-to-GPU links (our own
search: a depth-first search per ring that follows the links with the most bandwidth left, then the GPUs
with the fewest onward links, within :data:`RING_SEARCH` expansions).

With several servers a channel's ring runs through every server, entering each through a NIC and leaving
it through a NIC (NCCL's search then looks for paths from a network device, through the server's GPUs, to
a network device): :func:`channel_paths` finds, the same way, Hamiltonian paths through the server's GPUs
from an entry GPU to another exit GPU, each taking its speed from the links it crosses and from the
scale-out bandwidth (NIC) into its entry GPU and out of its exit GPU.

The speeds are taken along the direction a channel's allgather runs; its reduce-scatter runs it backwards,
on the reverse links, which carry the same share where a link has one bandwidth both ways (xGMI lanes,
NICs, ICI).

Examples
--------
Four GPUs on a square of 2-lane links with one 1-lane diagonal: a ring at 100 GB/s each way round the
square (the diagonal cannot close a ring of four at that speed).

>>> lanes = np.array([[0, 2, 1, 2], [2, 0, 2, 0], [1, 2, 0, 2], [2, 0, 2, 0]])
>>> rings, speed = channel_rings(50.0 * lanes)
>>> speed, [r.tolist() for r in rings]
(100.0, [[0, 1, 2, 3], [0, 3, 2, 1]])
>>> channel_rings(np.zeros((3, 3)))          # no direct links: no rings
([], 0.0)
"""

from __future__ import annotations

import numpy as np

__all__ = ["channel_rings", "channel_paths", "hamiltonian_cycle", "hamiltonian_path", "RING_SEARCH", "MAX_RINGS"]

#: expansions of one depth-first search for a ring before it gives up
RING_SEARCH = 4_000
#: the most rings (NCCL searches up to half its 32 channels, then doubles them)
MAX_RINGS = 16
_SLACK = 1e-9


def hamiltonian_cycle(adj, prefer=None, budget: int = RING_SEARCH):
    """A Hamiltonian cycle from vertex 0 of the directed graph ``adj`` (boolean matrix; a symmetric one is
    undirected), or None (also when ``budget`` expansions find none).

    The search tries, from each vertex, the successors with the largest ``prefer`` (a matrix, e.g. the
    bandwidth left) first, then those with the fewest unvisited successors of their own, then the lowest ids.

    >>> square = np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]], dtype=bool)
    >>> hamiltonian_cycle(square).tolist()
    [0, 1, 2, 3]
    >>> hamiltonian_cycle(np.ones((3, 3), dtype=bool) & ~np.eye(3, dtype=bool), prefer=np.eye(3)[[2, 0, 1]]).tolist()
    [0, 2, 1]
    """
    adj = np.asarray(adj, dtype=bool)
    G = adj.shape[0]
    if G < 3:
        return np.arange(G) if G < 2 or (adj[0, 1] and adj[1, 0]) else None
    return hamiltonian_path(adj, 0, adj[:, 0], prefer, budget)     # back to 0 from the path's end


def hamiltonian_path(adj, start: int, end_ok, prefer=None, budget: int = RING_SEARCH):
    """A path through every vertex of the directed graph ``adj`` from ``start`` to a vertex where ``end_ok`` is
    True, or None (also when ``budget`` expansions find none); successors tried as :func:`hamiltonian_cycle`.

    >>> line = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=bool)
    >>> hamiltonian_path(line, 0, np.array([False, False, True])).tolist()
    [0, 1, 2]
    >>> hamiltonian_path(line, 1, np.ones(3, dtype=bool)) is None
    True
    """
    adj = np.asarray(adj, dtype=bool)
    G = adj.shape[0]
    weight = np.zeros(adj.shape) if prefer is None else np.asarray(prefer, dtype=np.float64)
    path, seen, left = [int(start)], np.zeros(G, dtype=bool), [int(budget)]
    seen[start] = True

    def extend():
        if len(path) == G:
            return bool(end_ok[path[-1]])
        left[0] -= 1
        if left[0] < 0:
            return False
        nxt = np.flatnonzero(adj[path[-1]] & ~seen)
        onward = (adj[nxt] & ~seen).sum(axis=1)
        for v in nxt[np.lexsort((nxt, onward, -weight[path[-1], nxt]))].tolist():
            path.append(v)
            seen[v] = True
            if extend():
                return True
            path.pop()
            seen[v] = False
        return False

    return np.asarray(path) if G > 1 and extend() else None


def _paths_at(bandwidth, into, out, speed: float, most: int) -> list:
    """As many paths at ``speed`` as the bandwidth left allows (at most ``most``): each from a GPU with
    ``speed`` left of ``into`` to another with ``speed`` left of ``out``, taking ``speed`` from all three (the
    search for one path shares :data:`RING_SEARCH` expansions among its starting GPUs)."""
    left, into, out = (np.array(x, dtype=np.float64) for x in (bandwidth, into, out))
    floor = speed * (1 - _SLACK)
    share = max(RING_SEARCH // max(1, int(np.count_nonzero(into >= floor))), 500)   # one search's budget, shared
    paths = []
    while len(paths) < most:
        found = None
        for start in np.argsort(-into, kind="stable").tolist():
            if into[start] < floor:
                break
            found = hamiltonian_path(left >= floor, start, out >= floor, prefer=left, budget=share)
            if found is not None:
                break
        if found is None:
            break
        left[found[:-1], found[1:]] -= speed
        into[found[0]] -= speed
        out[found[-1]] -= speed
        paths.append(found)
    return paths


def _best(search, capacities, most: int) -> tuple:
    """The speed whose channels (``search(speed)``) carry the most, trying speeds from the highest down."""
    caps = sorted({float(c) for c in capacities if c > 0})
    speeds = sorted({c / k for c in caps for k in range(1, most + 1)}, reverse=True)
    best, best_speed = [], 0.0
    for speed in speeds:
        if speed * most <= len(best) * best_speed * (1 + _SLACK):
            break                      # no more channels at a lower speed can carry more
        found = search(speed)
        if len(found) * speed > len(best) * best_speed * (1 + _SLACK):
            best, best_speed = found, speed
    return best, float(best_speed)


def channel_paths(bandwidth, into, out, most: int = MAX_RINGS) -> tuple:
    """``(paths, speed)``: the paths through every GPU of a server, each from an entry GPU to a different exit
    GPU, that carry the most in total (paths x speed) when each takes ``speed`` from every link it crosses,
    from its entry GPU's ``into`` and from its exit GPU's ``out`` (the module docstring); ``([], 0.0)``
    without any.

    Parameters
    ----------
    bandwidth : array_like
        ``G x G``: GB/s of the direct link from GPU ``a`` to GPU ``b`` (0: none).
    into, out : array_like
        GB/s into and out of each GPU from and to the other servers (its NIC).
    most : int
        The most paths.

    Examples
    --------
    Four GPUs in a line of 2-lane links, a 16 GB/s NIC on each: the line both ways, 32 GB/s each way (only
    the two ends can start and end a path).

    >>> line = 100.0 * (np.eye(4, k=1) + np.eye(4, k=-1))
    >>> paths, speed = channel_paths(line, [16.0] * 4, [16.0] * 4)
    >>> speed, [p.tolist() for p in paths]
    (16.0, [[0, 1, 2, 3], [3, 2, 1, 0]])
    """
    bw = np.asarray(bandwidth, dtype=np.float64)
    into, out = np.asarray(into, dtype=np.float64), np.asarray(out, dtype=np.float64)
    caps = np.concatenate([bw[bw > 0], into[into > 0], out[out > 0]])
    return _best(lambda speed: _paths_at(bw, into, out, speed, most), caps, most)


def _rings_at(bandwidth, speed: float, most: int) -> list:
    """As many rings at ``speed`` as the bandwidth left allows (at most ``most``), each taking ``speed`` from
    the links it crosses."""
    left = np.array(bandwidth, dtype=np.float64)
    rings = []
    while len(rings) < most:
        ring = hamiltonian_cycle(left >= speed * (1 - _SLACK), prefer=left)
        if ring is None:
            break
        left[ring, np.roll(ring, -1)] -= speed
        rings.append(ring)
    return rings


def channel_rings(bandwidth, most: int = MAX_RINGS) -> tuple:
    """``(rings, speed)``: the rings through every GPU that carry the most in total (rings x speed) when each
    takes ``speed`` from every directed link it crosses (the module docstring); ``([], 0.0)`` without any.

    Parameters
    ----------
    bandwidth : array_like
        ``G x G``: GB/s of the direct link from GPU ``a`` to GPU ``b`` (0: none).
    most : int
        The most rings.

    Returns
    -------
    rings : list of numpy.ndarray
        Each an order of the ``G`` GPUs; the ring sends from position ``k`` to ``k + 1`` (and last to first).
    speed : float
        GB/s of every ring.
    """
    bw = np.asarray(bandwidth, dtype=np.float64)
    return _best(lambda speed: _rings_at(bw, speed, most), bw[bw > 0], most)
