"""The layered LP near the failures only: a healthy schedule's trees kept wherever they still fit.

On a large damaged network most of the layered LP's choices are settled by the healthy schedule: a
vertex far from every failure whose healthy parent (towards a chunk's owner) is still one hop closer
on the damaged graph can keep it.  :func:`reference_fractions` reads those parents from a healthy
base schedule of trees lifted by its group (SP-allreduce: ``2d`` trees per owner, so a vertex's
parent is a fraction over up to two links); :func:`solve_local` keeps every such pair fixed, with
the owners' shares equal, and solves the layered LP (:mod:`synth.models.packing.layered`) over the
other pairs: those within ``radius`` hops of a failure, and those whose healthy parent was lost or
is no longer closer.  Fixed pairs only add constant loads; rows exist only for the links and rounds
a free pair touches, and every round's bound starts at the largest constant load.  The result is a
:class:`~synth.models.packing.layered.LayeredSolution` over every arc, which
:func:`~synth.models.packing.rounding.round_schedule` turns into a schedule as usual.

This is what repair (``synth repair``) starts from, and what keeps 32x32 tori within minutes.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.spec import default_group
>>> from synth.symmetry.torus import torus_gamma
>>> from synth.schedule.sp import sp_allreduce
>>> t = parse_torus("6x6"); d = damage(t, parse_failures(t, links=["0-1"]))
>>> ref = reference_fractions(sp_allreduce(t), torus_gamma(t))
>>> sol = solve_local(layered_arcs(d, default_group(d)), ref, radius=2)
>>> sol.status, 0.7 < sol.fraction <= 1
('optimal', True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from synth.errors import SynthError
from synth.models.backends.linear import LinearModel
from synth.models.packing.arcs import lifted_links, load_orbits, no_solution, stabilizers, volume_bound
from synth.models.packing.layered import LayeredArcs, LayeredSolution, layered_arcs
from synth.schedule.data import REDUCE

__all__ = ["Reference", "reference_fractions", "solve_local", "equal_shares", "near_failures", "layered_arcs"]


@dataclass(frozen=True, eq=False)
class Reference:
    """Parent fractions of a healthy schedule: sorted keys ``(root * V + child) * V + parent`` and their shares."""

    n_vertices: int
    keys: np.ndarray
    fraction: np.ndarray

    def lookup(self, root, child, parent) -> np.ndarray:
        V = self.n_vertices
        k = (np.asarray(root, dtype=np.int64) * V + child) * V + parent
        pos = np.minimum(np.searchsorted(self.keys, k), max(self.keys.size - 1, 0))
        return np.where(self.keys[pos] == k, self.fraction[pos], 0.0)


def reference_fractions(base, group) -> Reference:
    """The parent fractions of ``base`` (one-hop trees, one root each) lifted by ``group``, weighted by chunk.

    Raises
    ------
    SynthError
        If a component reduces over a multi-hop route or has no single root.
    """
    t = base.topology
    V = t.n_vertices
    red = np.flatnonzero(base.op == REDUCE)
    if np.any(base.route_lengths[red] != 1):
        raise SynthError("repair starts from a schedule of one-hop trees; this one reduces over longer routes")
    comp, src, dst = base.component[red], base.src[red].astype(np.int64), base.dst[red].astype(np.int64)
    roots = np.full(base.n_components, -1, dtype=np.int64)
    for c in range(base.n_components):
        sel = comp == c
        cand = np.setdiff1d(dst[sel], src[sel])
        if cand.size != 1:
            raise SynthError(f"component {c} of the healthy schedule is not a tree with one root")
        roots[c] = cand[0]
    images = group.vertex_images(np.arange(V)).astype(np.int64)        # (G, V)
    keys = (images[:, roots[comp]] * V + images[:, src]) * V + images[:, dst]
    weight = np.broadcast_to(base.weights[comp].astype(np.float64), keys.shape)
    uniq, inv = np.unique(keys.ravel(), return_inverse=True)
    total = np.bincount(inv, weights=weight.ravel())
    pair, pinv = np.unique(uniq // V, return_inverse=True)
    norm = np.bincount(pinv, weights=total)
    return Reference(V, uniq, total / norm[pinv])


def equal_shares(data: LayeredArcs) -> np.ndarray:
    """Shares of the represented owners giving every owner ``1/p`` of the vector once lifted."""
    owners = data.topology.n_compute - (0 if data.leaves is None else data.leaves.size)   # leaves own nothing
    return 1.0 / (owners * stabilizers(data.group, data.roots))


def near_failures(t, radius: int, leaves=()) -> np.ndarray:
    """Vertices within ``radius`` hops (on the damaged graph) of a failed link's end or of a neighbour of a failed
    node or of one of ``leaves`` (chips that forward nothing)."""
    f = getattr(t, "failures", None)
    h = getattr(t, "healthy", t)
    gone = set(f.nodes if f else ()) | {int(v) for v in leaves}
    ends = [v for pair in (f.links if f else ()) for v in pair]
    for v in gone:
        ends.extend(h.link_dst[h.link_src == v].tolist())
    ends = [v for v in ends if v not in gone]
    if not ends:
        return np.zeros(t.n_vertices, dtype=bool)
    d = t.bfs(ends)
    return (d >= 0) & (d <= radius)


def solve_local(data: LayeredArcs, ref: Reference, radius: int = 3, time_limit=None, threads: int = 1,
                near=None, free_shares: bool = False) -> LayeredSolution:
    """The layered LP over the pairs the reference does not settle (module docstring).

    ``free_shares``: the owners' shares are variables too (the fixed pairs then load every link in
    proportion to their owner's share, so every row of the full LP is back: for mid-sized networks).
    """
    if free_shares:
        return _solve_local_free(data, ref, radius, time_limit, threads, near)
    t0 = time.monotonic()
    t, H, E = data.topology, data.H, data.topology.n_links
    w = equal_shares(data)
    V = t.n_vertices
    f, free, pair, uniq = _free_pairs(data, ref, radius, near)
    G = 1 if data.group is None else data.group.order
    # a lifted load is the same on every link of an orbit O (an arc over link l loads each link of l's orbit
    # G / |O| times): one row per link orbit and round, as the whole LP (build_packing_lp), G times fewer nonzeros
    # than a row per link (16x16x16's cells of 16x8x8, a group of order 8)
    orbit, size = load_orbits(data.group, E)
    n_orb = size.size
    rep = np.zeros(n_orb, dtype=np.int64)
    rep[orbit[::-1]] = np.arange(E)[::-1]                             # the first link of each orbit
    bw, times = t.link_bandwidth[rep], G / size
    # constant loads of the fixed arcs per (round, orbit): the represented owners' loads, lifted
    fx = np.flatnonzero(~free)
    y_fixed = w[data.root[fx]] * f[fx]
    own = np.zeros(2 * H * n_orb)
    for links, rnd in ((data.up, H - data.depth + 1), (data.down, H + data.depth)):
        own += np.bincount((rnd[fx] - 1) * n_orb + orbit[links[fx]], weights=y_fixed, minlength=2 * H * n_orb)
    const = (own.reshape(2 * H, n_orb) * times).ravel()
    floor = (const.reshape(2 * H, n_orb) / bw).max(axis=1)
    fr = np.flatnonzero(free)
    m = LinearModel(name="layered-packing-local")
    y = m.add_vars(fr.size, 0.0, np.inf, integer=False)
    M = m.add_vars(2 * H, floor, np.inf, integer=False, cost=1.0)
    fpairs, fpair_idx = np.unique(pair[fr], return_inverse=True)
    m.add_rows(fpair_idx, y, np.ones(fr.size), fpairs.size, w[uniq[fpairs] // V], w[uniq[fpairs] // V],
               "pass_share")
    rows, coef = [], []
    for links, rnd in ((data.up, H - data.depth + 1), (data.down, H + data.depth)):
        o = orbit[links[fr]]
        rows.append((rnd[fr] - 1) * n_orb + o)
        coef.append(times[o])
    rows = np.concatenate(rows)
    touched, rinv = np.unique(rows, return_inverse=True)
    all_rows = np.concatenate([rinv, np.arange(touched.size)])
    all_cols = np.concatenate([np.tile(y, 2), M[touched // n_orb]])
    vals = np.concatenate([np.concatenate(coef), -bw[touched % n_orb]])     # load <= b_e M_s
    m.add_rows(all_rows, all_cols, vals, touched.size, -np.inf, -const[touched], "load")
    sol = m.solve_highs(time_limit=time_limit, threads=threads, relax=True)
    if sol.values is None:
        raise no_solution("local layered", t, sol, time_limit)
    y_all = np.zeros(data.n_arcs)
    y_all[fx] = y_fixed
    y_all[fr] = np.maximum(sol.values[y], 0.0)
    vol = volume_bound(t)
    return LayeredSolution(data, str(sol.status), float(sol.objective), vol, w, y_all, time.monotonic() - t0,
                           free=free)


def _free_pairs(data, ref, radius, near):
    """Per arc: the reference fraction, whether its pair is free, and the pair index (with the pairs' keys)."""
    t, V = data.topology, data.topology.n_vertices
    f = ref.lookup(data.roots[data.root], data.child, data.parent)
    uniq, pair = np.unique(data.root * V + data.child, return_inverse=True)
    covered = np.bincount(pair, weights=f, minlength=uniq.size)
    near = near_failures(t, radius, () if data.leaves is None else data.leaves) if near is None else near
    free_pair = (np.abs(covered - 1.0) > 1e-9) | near[uniq % V]
    return f, free_pair[pair], pair, uniq


def _solve_local_free(data, ref, radius, time_limit, threads, near) -> LayeredSolution:
    """:func:`solve_local` with the shares free: fixed pairs become columns of their owner's share."""
    t0 = time.monotonic()
    t, H, E, V = data.topology, data.H, data.topology.n_links, data.topology.n_vertices
    G = 1 if data.group is None else data.group.order
    f, free, pair, uniq = _free_pairs(data, ref, radius, near)
    fr, fx = np.flatnonzero(free), np.flatnonzero(~free)
    m = LinearModel(name="layered-packing-local-free")
    y = m.add_vars(fr.size, 0.0, np.inf, integer=False)
    w = m.add_vars(data.n_roots, 0.0, np.inf, integer=False)
    M = m.add_vars(2 * H, 0.0, np.inf, integer=False, cost=1.0)
    m.add_rows(np.zeros(data.n_roots), w, np.full(data.n_roots, float(G)), 1, 1.0, 1.0, "shares")
    fpairs, fpair_idx = np.unique(pair[fr], return_inverse=True)
    m.add_rows(np.r_[fpair_idx, np.arange(fpairs.size)], np.r_[y, w[uniq[fpairs] // V]],
               np.r_[np.ones(fr.size), -np.ones(fpairs.size)], fpairs.size, 0.0, 0.0, "pass_share")
    rows, cols, vals = [], [], []
    for links, rnd in ((data.up, H - data.depth + 1), (data.down, H + data.depth)):
        img = lifted_links(data.group, links)
        for sel, col, val in ((fr, y, np.ones(fr.size)), (fx, w[data.root[fx]], f[fx])):
            rows.append(((rnd[sel] - 1)[None, :] * E + img[:, sel]).ravel())
            cols.append(np.broadcast_to(col[None, :], (G, sel.size)).ravel())
            vals.append(np.broadcast_to(val[None, :], (G, sel.size)).ravel())
    rows.append(np.arange(2 * H * E))
    cols.append(np.repeat(M, E))
    vals.append(-np.tile(t.link_bandwidth, 2 * H))     # load <= b_e M_s
    m.add_rows(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), 2 * H * E, -np.inf, 0.0, "load")
    sol = m.solve_highs(time_limit=time_limit, threads=threads, relax=True)
    if sol.values is None:
        raise no_solution("local layered", t, sol, time_limit)
    w_val = np.maximum(sol.values[w], 0.0)
    y_all = np.zeros(data.n_arcs)
    y_all[fx] = w_val[data.root[fx]] * f[fx]
    y_all[fr] = np.maximum(sol.values[y], 0.0)
    vol = volume_bound(t)
    return LayeredSolution(data, str(sol.status), float(sol.objective), vol, w_val, y_all, time.monotonic() - t0,
                           free=free)
