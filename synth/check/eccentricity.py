"""The least eccentricities of a network, without a BFS from every vertex.

The allreduce round bound (docs/spec.md §3) needs ``min_v ecc(v)`` and ``min_{ab} ecc({a,b})``
over the compute nodes.  On a damaged pod the residual group is small, so one BFS per vertex
orbit is still one BFS per vertex, give or take a factor of 4 (a 128x128 torus with a failed
link: 4,096 BFS).  Failures only lengthen distances, so the healthy topology's closed-form
eccentricities are lower bounds (*floors*) on the damaged ones; candidates are measured in order
of their floor, a batch at a time (scipy's BFS, in C), until no candidate left can beat or tie
the best found.  On a pod with a few failures the first batch attains its floor and ends the
search.

Floors, for a topology whose healthy form is a torus, lattice torus or grid:

* a vertex: its healthy eccentricity, unless every vertex that attains it failed (a failed node
  is no longer a target): then 0;
* a link ``a-b``: ``max(floor(a), floor(b)) - 1`` (``d(w,a) <= d(w,b) + 1``), and on a
  vertex-transitive healthy topology its healthy pair eccentricity (the same for every translate),
  unless every vertex attaining it failed.

The pair term ``2 ecc({a,b}) + 1`` beats ``2 min ecc`` only when ``ecc({a,b}) = min ecc - 1``
(``ecc({a,b}) >= ecc(a) - 1``), so only links whose floor allows that are measured, in order,
and the first that attains it is the witness: the bound and its witness are those of a BFS from
every vertex and link (``tests/check/test_eccentricity.py`` compares them).

Round lower bounds (:func:`round_lower_bound`).  Allreduce: docs/spec.md §3.  Reduce-scatter
and allgather: **with one-hop transmissions, at least** ``max_v ecc(v)`` **rounds**, ``ecc``
over the compute nodes.  Proof: every compute node owns a chunk with at least one element
(:func:`synth.schedule.data.block_chunk_elements` refuses a node without one).  Take nodes
``u, v`` at distance ``d = dist(u, v) = max_v ecc(v)``.  In a reduce-scatter, let ``c`` be a
chunk owned by ``v``: its final value depends on ``u``'s input of ``c``, and a value that
depends on ``u``'s input at the end of round ``s`` sits at a node at most ``s`` hops from ``u``
(induction on ``s``: a payload is the sender's value at the *start* of its round and crosses
one link).  So ``S >= d``.  In an allgather, a chunk owned by ``u`` must reach ``v``, which
by the same induction takes ``d`` rounds.  The bound does not depend on Ψ or on the number of
transmissions: it binds every one-hop schedule.  On a torus ``T_n^d`` (odd or even sides, and
rectangular) it is the diameter ``H``, which the halves of SP-allreduce meet
(:mod:`synth.schedule.collective`): they are round-optimal and, lifted by Γ, Ψ = Θ = Ω = 1.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.torus import torus_gamma
>>> round_lower_bound(parse_torus("4x4"), torus_gamma(parse_torus("4x4")))
(7, 'adjacent pair (0, 4)')
>>> round_lower_bound(parse_torus("4x4"), torus_gamma(parse_torus("4x4")), "reduce-scatter")
(4, 'node 0, eccentricity 4')
>>> t = parse_torus("6x6")
>>> least_eccentricities(t, t.compute, range(t.n_links))     # 2H - 1 = 11 rounds: the pair (0, 6)
(6, 0, 5, (0, 6))
>>> d = damage(t, parse_failures(t, nodes=["21"]))           # vertex 0's only farthest vertex failed
>>> least_eccentricities(d, d.compute, range(d.n_links))
(5, 0, None, None)
"""

from __future__ import annotations

import numpy as np

from synth.errors import ScheduleError, check_instance
from synth.schedule import ALLREDUCE, COLLECTIVES
from synth.symmetry.group import Group
from synth.topology.base import Grid, Topology
from synth.topology.failures import Damaged, whole_network
from synth.topology.lattice import LatticeTorus

__all__ = ["round_lower_bound", "least_eccentricities", "eccentricity_floors", "diameter_bounds"]

#: distances held at once by one batch of BFS (float64 in scipy: 128 MB)
MAX_ENTRIES = 1 << 24
#: failed nodes above which the floors' guard (one closed-form distance row per failed node) is skipped
MAX_GUARDED = 64


def least_eccentricities(topology, vertices, links):
    """``(best_v, arg_v, best_p, arg_p)``: the least eccentricity over ``vertices`` (the first attaining it,
    in their order) and, among ``links`` between compute nodes, the first (in their order) whose pair
    eccentricity is ``best_v - 1`` (``best_p``, ``arg_p`` the pair; ``None, None`` when none is).

    Eccentricities are over the compute nodes, hop distances to the vertex (or the nearer end).
    ``vertices`` must meet every orbit of a group of automorphisms (or be every compute vertex), so
    that their least eccentricity is the topology's.
    """
    vertices = np.asarray(vertices, dtype=np.int64)
    links = np.asarray(links, dtype=np.int64)
    vfloor, lfloor = eccentricity_floors(topology)
    bfs = _Distances(topology)
    best_v, arg_v = _least_vertex(bfs, vertices, vfloor[vertices])
    if best_v is None:
        return None, None, None, None
    a, b = topology.link_src[links], topology.link_dst[links]
    cand = links[topology.is_compute[a] & topology.is_compute[b] & (lfloor[links] <= best_v - 1)]
    step = 8
    for start in _batches(cand.size, step, bfs.batch):
        chunk = cand[start[0]:start[1]]
        ends = np.concatenate([topology.link_src[chunk], topology.link_dst[chunk]])
        rows, index = bfs.rows(ends)
        da, db = rows[index[:chunk.size]], rows[index[chunk.size:]]
        d = np.where((da >= 0) & (db >= 0), np.minimum(da, db), np.maximum(da, db))
        ok = (d >= 0).all(axis=1)
        ecc = np.where(ok, d.max(axis=1), np.iinfo(np.int64).max)
        hit = np.flatnonzero(ecc <= best_v - 1)
        if hit.size:
            e = int(chunk[hit[0]])
            return best_v, arg_v, int(ecc[hit[0]]), (int(topology.link_src[e]), int(topology.link_dst[e]))
    return best_v, arg_v, None, None


def _least_vertex(bfs, vertices, floors):
    """The least eccentricity over ``vertices`` and the first attaining it, measured in order of floor."""
    pos = np.arange(vertices.size)
    order = np.lexsort((pos, floors))
    best, arg = None, None
    for lo, hi in _batches(order.size, 8, bfs.batch):
        i = order[lo]
        if best is not None and (floors[i] > best or (floors[i] == best and i > arg)):
            break
        chunk = order[lo:hi]
        rows, index = bfs.rows(vertices[chunk])
        ecc = rows[index].max(axis=1)
        for j, e in zip(chunk.tolist(), ecc.tolist()):
            if best is None or e < best or (e == best and j < arg):
                best, arg = int(e), j
    return (None, None) if best is None else (best, int(vertices[arg]))


def _batches(n, first, cap):
    """``(lo, hi)`` slices of ``range(n)``, the first ``first`` long, doubling up to ``cap``."""
    lo, size = 0, max(1, min(first, cap))
    while lo < n:
        yield lo, min(n, lo + size)
        lo, size = lo + size, min(2 * size, cap)


class _Distances:
    """Hop distances from every compute vertex to given vertices (``-1``: unreachable), a batch per call."""

    def __init__(self, t):
        from scipy.sparse import coo_matrix   # scipy.sparse only here: the checker's other paths do not need it

        self.comp = t.compute
        self.graph = coo_matrix((np.ones(t.n_links), (t.link_dst, t.link_src)),
                                shape=(t.n_vertices,) * 2).tocsr()
        self.batch = max(1, MAX_ENTRIES // max(t.n_vertices, 1))

    def rows(self, targets):
        """``(rows, index)``: ``rows[index[i]]`` holds the distances from the compute vertices to ``targets[i]``."""
        from scipy.sparse.csgraph import shortest_path

        wanted, index = np.unique(np.asarray(targets, dtype=np.int64), return_inverse=True)
        dist = shortest_path(self.graph, unweighted=True, indices=wanted)[:, self.comp]
        return np.where(np.isinf(dist), -1, dist).astype(np.int64), index.reshape(-1)


def eccentricity_floors(t):
    """Lower bounds on the eccentricity of every vertex and on the pair eccentricity of every link of ``t``
    (module docstring); zeros where no closed form is known."""
    V, E = t.n_vertices, t.n_links
    base = t.healthy if isinstance(t, Damaged) else t
    if not (isinstance(base, Grid) and hasattr(base, "eccentricity") and hasattr(base, "dist")) \
            or base.compute.size != base.n_vertices:
        return np.zeros(V, dtype=np.int64), np.zeros(E, dtype=np.int64)
    failed = np.asarray(t.failures.nodes if isinstance(t, Damaged) else (), dtype=np.int64)
    if failed.size > MAX_GUARDED:
        return np.zeros(V, dtype=np.int64), np.zeros(E, dtype=np.int64)
    everyone = np.arange(V)
    ecc = np.asarray(base.eccentricity(everyone), dtype=np.int64)
    transitive = bool(getattr(base, "is_vertex_transitive", True))
    d0 = base.dist(everyone, np.zeros(V, dtype=np.int64))
    far_failed = sum((base.dist(everyone, np.full(V, x)) == ecc).astype(np.int64) for x in failed.tolist()) \
        if failed.size else np.zeros(V, dtype=np.int64)
    attained = int((d0 == d0.max()).sum()) if transitive else 1
    vfloor = np.where(far_failed >= attained, 0, ecc)
    src, dst = t.link_src, t.link_dst
    lfloor = np.maximum(np.maximum(vfloor[src], vfloor[dst]) - 1, 0)
    if transitive and E:
        lfloor = np.maximum(lfloor, _pair_floors(base, src, dst, failed, d0))
    return vfloor, lfloor


def _pair_floors(base, src, dst, failed, d0):
    """Healthy pair eccentricities of the links ``src -> dst`` of a vertex-transitive ``base`` (each link a
    translate of one at vertex 0), 0 where every vertex attaining it failed."""
    V = base.n_vertices
    offset = base.vertex(base.coords(dst) - base.coords(src))
    keys, inverse = np.unique(offset, return_inverse=True)
    inverse = inverse.reshape(-1)
    pecc, count = np.zeros(keys.size, dtype=np.int64), np.zeros(keys.size, dtype=np.int64)
    for k, delta in enumerate(keys.tolist()):
        pair = np.minimum(d0, base.dist(np.arange(V), np.full(V, delta)))
        pecc[k], count[k] = int(pair.max()), int((pair == pair.max()).sum())
    floor = pecc[inverse]
    hits = np.zeros(src.size, dtype=np.int64)
    for x in failed.tolist():
        to_x = base.dist(np.arange(V), np.full(V, x))
        hits += np.minimum(to_x[src], to_x[dst]) == floor
    return np.where(hits >= count[inverse], 0, floor)


#: BFS work (sources x links) :func:`diameter_bounds` spends on an exact diameter: about 10 s
DIAMETER_WORK = 10 ** 8


def diameter_bounds(t, group=None, work=DIAMETER_WORK):
    """``(lo, hi)``: the diameter of ``t`` over its compute vertices, exact (``lo == hi``) when one BFS per
    vertex orbit of ``group`` (every compute vertex without one) costs at most ``work`` (sources x links).

    Otherwise bounds: below, the largest eccentricity floor and the eccentricities of the first compute
    vertex; above, ``ecc_in(v) + ecc_out(v)`` of that vertex (a path through it), and on a damaged torus,
    lattice torus or grid the healthy diameter plus the largest detour ``d(p, q) - d_healthy(p, q)``
    between vertices next to a failure (a healthy shortest path meets failures only between the first
    and the last such vertex on it, and that stretch can be replaced by a detour).

    >>> from synth.topology.torus import parse_torus
    >>> from synth.topology.failures import damage, parse_failures
    >>> t = parse_torus("8x8")
    >>> d = damage(t, parse_failures(t, links=["0-1"]))
    >>> diameter_bounds(d), diameter_bounds(d, work=0)
    ((8, 8), (8, 10))
    """
    comp = t.compute
    reps = comp if group is None else comp[np.unique(group.vertex_orbit[comp], return_index=True)[1]]
    bfs = _Distances(t)
    if reps.size * max(t.n_links, 1) <= work:
        best = 0
        for lo, hi in _batches(reps.size, bfs.batch, bfs.batch):
            rows, index = bfs.rows(reps[lo:hi])
            best = max(best, int(rows[index].max()))
        return best, best
    first = int(comp[0])
    into = int(t.bfs([first], reverse=True)[comp].max())
    out = int(t.bfs([first])[comp].max())
    vfloor, _ = eccentricity_floors(t)
    lo, hi = max(into, out, int(vfloor[comp].max())), into + out
    detour = _detour(t)
    if detour is not None:
        hi = min(hi, int(np.asarray(t.healthy.eccentricity(np.arange(t.n_vertices))).max()) + detour)
    return lo, max(lo, hi)


def _detour(t):
    """The largest ``d(p, q) - d_healthy(p, q)`` over live vertices ``p, q`` next to a failure of a damaged
    torus, lattice torus or grid; None elsewhere or when one cannot reach another."""
    if not isinstance(t, Damaged) or not isinstance(t.healthy, Grid) or not hasattr(t.healthy, "dist"):
        return None
    h = t.healthy
    nodes = np.asarray(t.failures.nodes, dtype=np.int64)
    near = [np.asarray(t.failures.links, dtype=np.int64).ravel()]
    if nodes.size:
        at = np.isin(h.link_src, nodes)
        near.append(h.link_dst[at])
    border = np.unique(np.concatenate(near))
    border = border[~np.isin(border, nodes)]
    if border.size == 0:
        return 0
    from scipy.sparse import coo_matrix   # as in _Distances
    from scipy.sparse.csgraph import shortest_path

    graph = coo_matrix((np.ones(t.n_links), (t.link_src, t.link_dst)), shape=(t.n_vertices,) * 2).tocsr()
    d = shortest_path(graph, unweighted=True, indices=border)[:, border]
    if np.isinf(d).any():
        return None
    P, Q = np.meshgrid(border, border, indexing="ij")
    return int((d.astype(np.int64) - h.dist(P.ravel(), Q.ravel()).reshape(P.shape)).max())


# -------------------------------------------------------------- round bound
def round_lower_bound(topology, group=None, collective=ALLREDUCE):
    """docs/spec.md §3: ``min(2 min_v ecc(v), 2 min_{ab in E} ecc({a,b}) + 1)`` over compute nodes.

    Valid for schedules with ``2p-2`` one-hop transmissions per chunk.  With a
    verified ``group`` one vertex per orbit and one link per orbit suffices
    (eccentricities are invariant under automorphisms); of those, only the ones whose
    closed-form floor could beat the best found are measured (:mod:`synth.check.eccentricity`).
    For a reduce-scatter or allgather: ``max_v ecc(v)``, valid for every one-hop schedule
    (module docstring).

    Returns
    -------
    (int, str)
        The bound and what attains it.
    """
    check_instance(topology, "topology", Topology, " (e.g. synth.parse_torus('4x4'))")
    group is None or check_instance(group, "group", Group)
    if whole_network(topology) is not topology:   # links a schedule leaves idle count; its group need not keep them
        topology, group = whole_network(topology), None
    comp = topology.compute
    if group is not None:
        # the first member of each orbit, orbits in label order (one pass, not one per orbit)
        vert = comp[np.unique(group.vertex_orbit[comp], return_index=True)[1]].astype(np.int64).tolist()
        link_reps = np.unique(group.link_orbit, return_index=True)[1].astype(np.int64).tolist()
    else:
        vert = comp.tolist()
        link_reps = np.arange(topology.n_links).tolist()
    if collective not in COLLECTIVES:
        raise ScheduleError(f"unknown collective {str(collective)[:40]!r}; valid: {', '.join(COLLECTIVES)}")
    if collective != ALLREDUCE:
        return _farthest(topology, vert)
    if isinstance(topology, LatticeTorus):
        return _lattice_round_bound(topology, vert, link_reps)
    best_v, arg_v, best_p, arg_p = least_eccentricities(topology, vert, link_reps)
    if best_v is None:
        raise ScheduleError("the topology has no compute vertex")
    cands = [(2 * best_v, f"node {arg_v}")]
    if best_p is not None:
        cands.append((2 * best_p + 1, f"adjacent pair ({arg_p[0]}, {arg_p[1]})"))
    return min(cands, key=lambda c: c[0])


def _lattice_round_bound(t, vert, link_reps):
    """:func:`round_lower_bound` on a lattice torus or grid, with its closed-form eccentricities.

    A pair's eccentricity is at least ``max(ecc(a), ecc(b)) - 1`` and at least the least
    eccentricity ``m`` less one; the pair term ``2 ecc({a,b}) + 1`` beats ``2m`` only at ``m - 1``,
    which needs both ends central (``ecc = m``).  So only the link representatives between central
    nodes are measured (one vectorized distance row each), and the bound and its witness are those
    the general search finds (the first vertex and the first link representative attaining them).
    """
    ecc = t.eccentricity(np.asarray(vert, dtype=np.int64))
    m = int(ecc.min())
    arg_v = int(vert[int(np.argmin(ecc))])
    reps = np.asarray(link_reps, dtype=np.int64)
    src, dst = t.link_src[reps], t.link_dst[reps]
    central = (t.eccentricity(src) == m) & (t.eccentricity(dst) == m)
    everyone = np.arange(t.n_vertices)
    for a, b in zip(src[central].tolist(), dst[central].tolist()):
        pair = np.minimum(t.dist(everyone, np.full(everyone.size, a)), t.dist(everyone, np.full(everyone.size, b)))
        if int(pair.max()) == m - 1:
            return 2 * m - 1, f"adjacent pair ({a}, {b})"
    return 2 * m, f"node {arg_v}"


def _farthest(topology, vertices):
    """``max_v ecc(v)`` over ``vertices`` (every vertex orbit represented), with the node attaining it.

    ``ecc(v)`` is the largest distance from a compute node to ``v``; a compute node that cannot
    reach ``v`` makes the collective impossible.
    """
    comp = topology.compute
    best, arg = None, None
    for v in vertices:
        d = topology.bfs([v], reverse=True)[comp]
        if (d < 0).any():
            raise ScheduleError(f"compute node {int(comp[np.argmax(d < 0)])} cannot reach node {v}")
        e = int(d.max())
        if best is None or e > best:
            best, arg = e, v
    if best is None:
        raise ScheduleError("the topology has no compute vertex")
    return best, f"node {arg}, eccentricity {best}"
