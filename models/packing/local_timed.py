"""Timed trees near the failures only: the healthy trees kept elsewhere, a master LP over the damaged region.

Far from a failure the healthy SP trees are already optimal (:mod:`synth.models.packing.region`): every
owner ``r`` keeps its healthy trees ``T(r, P)`` (one per element ``P`` of the point group ``W``, weight
``1 / (p |W|)`` each), shifted to start ``sigma`` rounds late (``sigma`` in ``0..R - H``, one mixture
``a_sigma`` for every tree, so the far links stay balanced round by round), and only the *free* vertices
near the failures choose their parents and send rounds anew (a timed tree, docs/timed.md), under the
fixed halo around them.  The master LP has load rows only for the links that touch a free vertex (one per
link orbit of the group and round) plus one row per round for the far links' known load; a column is one
slot ``(r, P, sigma)``'s free part (an orbit representative's, lifted by the group), priced by
:func:`synth.models.packing.tree_pricing.price` on the region alone with the halo labels fixed and a
lower bound on each free vertex's label (above its fixed children's).  Its value is an upper bound of
the schedule's bandwidth term per element; the pricing is heuristic, so it is no bound of the class.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.spec import default_group
>>> t = parse_torus("6x6"); d = damage(t, parse_failures(t, links=["0-1"]))
>>> sol = solve_local_timed(d, default_group(d), extra=2, radius=1, time_limit=30)
>>> sol.fraction > 0.75, sol.R
(True, 8)
>>> round_local_timed(sol, units=64).n_rounds <= 16
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from synth.check.bounds.bandwidth import min_compute_distance
from synth.errors import SynthError
from synth.models.packing.region import damaged_region, healthy_parents, linear_part, point_group
from synth.models.packing.tree_pricing import TreeSpace, arc_costs, best_parents, price
from synth.schedule.data import COPY, REDUCE, BaseSchedule
from synth.schedule.weights import largest_remainder

__all__ = ["LocalTimedSolution", "solve_local_timed", "round_local_timed", "MODEL"]

MODEL = "synth.models.packing.local_timed"
#: pricing rows per batch (the tree DP holds rows x region vertices x rounds floats)
BATCH = 2048


class _Sub:
    """The region's graph with local vertex and link ids (what :class:`TreeSpace` reads of a topology)."""

    def __init__(self, d, verts, links):
        self.n_vertices, self.n_links = verts.size, links.size
        loc = np.full(d.n_vertices, -1, dtype=np.int64)
        loc[verts] = np.arange(verts.size)
        self.link_src, self.link_dst = loc[d.link_src[links]], loc[d.link_dst[links]]
        self.is_compute = np.ones(verts.size, dtype=bool)
        lid = np.full(d.n_links, -1, dtype=np.int64)
        lid[links] = np.arange(links.size)
        self._lid, self._d, self._verts = lid, d, verts

    def link_ids(self, src, dst):
        return self._lid[self._d.link_ids(self._verts[np.asarray(src)], self._verts[np.asarray(dst)])]


@dataclass(frozen=True, eq=False)
class LocalTimedSolution:
    """The local master's value and columns (slot index, sigma, labels and parent links over the region)."""

    topology: object
    group: object
    mats: list
    verts: np.ndarray        # region vertices (free first), global ids
    n_free: int
    links: np.ndarray        # region links, global ids
    space: TreeSpace
    slots: np.ndarray        # (n, 2): owner, point element of the slot representatives
    stab: np.ndarray         # stabilizer order per slot representative
    status: str
    objective: float
    volume_bound: float
    column: np.ndarray       # (columns, 2): slot index, sigma
    labels: np.ndarray       # (columns, region vertices)
    plink: np.ndarray        # (columns, region vertices): local link ids, -1 where fixed
    x: np.ndarray
    shifts: np.ndarray       # a_sigma
    iterations: int
    seconds: float
    H: int

    R = property(lambda self: self.space.R, doc="Reduce rounds.")
    fraction = property(lambda self: self.volume_bound / self.objective, doc="Volume bound / LP value.")


def _slot_reps(d, group, mats):
    """Representatives ``(owner, k)`` of the slots under the group and their stabilizer orders."""
    live = np.flatnonzero(d.is_compute & (np.bincount(d.link_src, minlength=d.n_vertices) > 0))
    K = len(mats)
    slot = (live[:, None] * K + np.arange(K)[None, :]).ravel()
    if group is None:
        return np.stack([slot // K, slot % K], axis=1), np.ones(slot.size, dtype=np.int64)
    index = {m.tobytes(): i for i, m in enumerate(mats)}
    vimg = group.vertex_images(np.arange(d.n_vertices))
    h = d.healthy
    kimg = np.array([[index[(linear_part(h, img) @ m).tobytes()] for m in mats] for img in vimg])
    imgs = vimg[:, slot // K] * K + kimg[:, slot % K]                   # (G, slots)
    rep = imgs.min(axis=0)
    reps, counts = np.unique(rep, return_counts=True)
    return np.stack([reps // K, reps % K], axis=1), group.order // counts


def _slot_rows(sol_parts, rows, sigma):
    """Per pricing row (slot index ``rows``, shift ``sigma``): labels, lower bounds, root, fixed arcs."""
    d, mats, verts, n_free, R, H, sub, slots = sol_parts
    h = d.healthy
    owner, k = slots[rows, 0], slots[rows, 1]
    halo = verts[n_free:]
    par = healthy_parents(h, halo, owner, mats, k)                      # (B, halo)
    n = verts.size
    L = np.zeros((rows.size, n), dtype=np.int64)
    L[:, n_free:] = H + 1 - h.dist(halo[None, :], owner[:, None]) + sigma[:, None]
    loc = np.full(d.n_vertices, -1, dtype=np.int64)
    loc[verts] = np.arange(n)
    root = loc[owner]
    has = root >= 0
    L[has, root[has]] = R + 1
    ploc = np.where(par >= 0, loc[np.maximum(par, 0)], -1)
    fixed_child = (ploc >= 0) & (ploc < n_free)                          # halo vertex whose parent is free
    lo = np.ones((rows.size, n), dtype=np.int64)
    b, j = np.nonzero(fixed_child)
    np.maximum.at(lo, (b, ploc[b, j]), L[b, n_free + j] + 1)
    flink = np.full((rows.size, n - n_free), -1, dtype=np.int64)
    flink[b, j] = sub.link_ids(n_free + j, ploc[b, j])
    return L, lo, root, flink


def _initial_labels(space, L, lo, root, n_free):
    """Every free vertex's largest admissible label (one below its best neighbour's, at most ``R``)."""
    R = space.R
    L = L.copy()
    free = np.arange(n_free)
    isroot = root[:, None] == free[None, :]
    L[:, :n_free] = np.where(isroot, R + 1, 0)
    nb = space.nbr[:n_free]
    for _ in range(space.nbr.shape[0] + 1):
        best = np.where(nb[None] >= 0, L[:, np.maximum(nb, 0)], -(10 ** 6)).max(axis=2) - 1
        new = np.where(isroot, R + 1, np.minimum(best, R))
        if np.array_equal(new, L[:, :n_free]):
            break
        L[:, :n_free] = new
    bad = (L[:, :n_free] < np.maximum(lo[:, :n_free], 1)) & ~isroot
    if bad.any():
        raise SynthError("the damaged region leaves a healthy tree no admissible labels; a larger radius")
    return L


class _Master:
    """The local master LP in HiGHS (module docstring); columns added as priced."""

    def __init__(self, space, n_slots, n_sigma, far, w, stab, extra):
        import highspy  # optional solver: imported when used

        R, E = space.R, space.rev.size
        rep = space.images.min(axis=0)
        self.reps = np.flatnonzero(rep == np.arange(E))
        self.orbit = np.searchsorted(self.reps, rep)
        self.orbit_size = np.bincount(self.orbit, minlength=self.reps.size).astype(np.float64)
        self.space, self.n_sigma, self.n_slots, self.stab = space, n_sigma, n_slots, stab
        self.h = h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        for k, v in (("presolve", "off"), ("threads", 1), ("solver", "ipm"), ("run_crossover", "off")):
            h.setOptionValue(k, v)
        inf = highspy.kHighsInf
        n = self.reps.size
        self.n_load = 2 * R * n
        h.addCols(2 * R, np.ones(2 * R), np.zeros(2 * R), np.full(2 * R, inf), 0, np.zeros(0, np.int32),
                  np.zeros(0, np.int32), np.zeros(0))
        slot_orbit, orbit_far, orbit_slots = extra
        nb = orbit_far.shape[0] * n_sigma                  # extra shares b[o, sigma] of the owners near the failures
        nv = n_sigma + nb
        h.addCols(nv, np.zeros(nv), np.zeros(nv), np.full(nv, inf), 0, np.zeros(0, np.int32),
                  np.zeros(0, np.int32), np.zeros(0))
        nl = self.n_load
        h.addRows(nl, np.full(nl, -inf), np.zeros(nl), nl, np.arange(nl, dtype=np.int32),
                  np.repeat(np.arange(2 * R, dtype=np.int32), n), -np.ones(nl))
        # far rows: sum_sigma a_sigma far[sigma, s] + sum b[o, sigma] orbit_far[o, sigma, s] <= M_s
        bfar = orbit_far.reshape(nb, 2 * R)
        idx = [np.r_[s, 2 * R + np.arange(nv)].astype(np.int32) for s in range(2 * R)]
        val = [np.r_[-1.0, far[:, s], bfar[:, s]] for s in range(2 * R)]
        h.addRows(2 * R, np.full(2 * R, -inf), np.zeros(2 * R), 2 * R * (nv + 1),
                  np.arange(2 * R, dtype=np.int32) * (nv + 1), np.concatenate(idx), np.concatenate(val))
        # convexity: stab * sum x - w a_sigma = 0 per (slot, sigma); sum a = 1
        nc = n_slots * n_sigma
        self.conv0 = nl + 2 * R
        sig = np.tile(np.arange(n_sigma), n_slots)
        so = np.repeat(slot_orbit, n_sigma)
        near = so >= 0
        starts = np.r_[0, np.cumsum(1 + near)[:-1]].astype(np.int32)
        cidx = np.zeros(int(nc + near.sum()), dtype=np.int32)
        cval = np.zeros(cidx.size)
        cidx[starts] = 2 * R + sig
        cval[starts] = -w
        cidx[starts[near] + 1] = 2 * R + n_sigma + so[near] * n_sigma + sig[near]
        cval[starts[near] + 1] = -1.0
        h.addRows(nc, np.zeros(nc), np.zeros(nc), cidx.size, starts, cidx, cval)
        h.addRows(1, np.ones(1), np.ones(1), nv, np.zeros(1, np.int32), (2 * R + np.arange(nv)).astype(np.int32),
                  np.r_[np.ones(n_sigma), np.repeat(orbit_slots, n_sigma)])
        self.keys, self.cols, self.L, self.P = set(), [], [], []
        self.first = 2 * R + nv

    def add(self, slot, sigma, L, plink, flink_rows) -> bool:
        key = (int(slot), int(sigma), L.tobytes(), plink.tobytes())
        if key in self.keys:
            return False
        self.keys.add(key)
        rows, counts = flink_rows
        E = self.space.rev.size
        s, e = np.divmod(rows, E)
        mine = self.reps[self.orbit[e]] == e
        conv = self.conv0 + slot * self.n_sigma + sigma
        r = np.r_[s[mine] * self.reps.size + self.orbit[e[mine]], conv].astype(np.int32)
        v = np.r_[counts[mine], float(self.stab[slot])]
        self.h.addCols(1, np.zeros(1), np.zeros(1), np.full(1, np.inf), r.size, np.zeros(1, np.int32), r, v)
        self.cols.append((int(slot), int(sigma)))
        self.L.append(L.copy())
        self.P.append(plink.copy())
        return True

    def solve(self, vertex=False):
        self.h.setOptionValue("run_crossover", "on" if vertex else "off")
        self.h.run()
        sol = self.h.getSolution()
        import highspy  # optional solver: imported when used

        if self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise SynthError(f"the local timed master LP ended {self.h.modelStatusToString(self.h.getModelStatus())}")
        R = self.space.R
        col = np.asarray(sol.col_value)
        y = np.asarray(sol.row_dual)
        pi = (np.maximum(-y[:self.n_load], 0.0).reshape(2 * R, self.reps.size) / self.orbit_size)[:, self.orbit]
        mu = y[self.conv0:self.conv0 + self.n_slots * self.n_sigma].reshape(self.n_slots, self.n_sigma)
        x = np.maximum(col[self.first:], 0.0)
        return float(self.h.getInfo().objective_function_value), x, np.maximum(col[2 * R:2 * R + self.n_sigma], 0), pi, mu


def _column_rows(space, n_free, L, plink, flink, sigma_labels):
    """Round-major rows ``(s - 1) * E + e`` of a column's lifted loads and their counts: the free arcs and the
    halo's fixed arcs into the region."""
    E, R = space.rev.size, space.R
    v = np.flatnonzero(plink >= 0)
    a = np.r_[plink[v], flink[flink >= 0]]
    lab = np.r_[L[v], sigma_labels[flink >= 0]]
    up = (lab - 1)[None, :] * E + space.images[:, a]
    down = (2 * R - lab)[None, :] * E + space.images[:, space.rev[a]]
    rows, counts = np.unique(np.concatenate([up.ravel(), down.ravel()]), return_counts=True)
    return rows, counts.astype(np.float64)


def _far_loads(h, H, R, n_sigma, scale):
    """``far[sigma, s]``: the healthy trees' load on every far link in round ``s`` (0-based), per element."""
    n_d = np.bincount(h.dist(np.arange(h.n_vertices), 0), minlength=H + 1)
    far = np.zeros((n_sigma, 2 * R))
    for sg in range(n_sigma):
        for dist in range(1, H + 1):
            lab = H + 1 - dist + sg
            far[sg, lab - 1] += n_d[dist] / h.n_links * scale
            far[sg, 2 * R - lab] += n_d[dist] / h.n_links * scale
    return far


def solve_local_timed(d, group, extra: int = 4, radius: int = 2, time_limit: float = 60.0,
                      max_iterations: int = 200, progress=lambda _m: None) -> LocalTimedSolution:
    """Column generation of the local timed trees over ``R = H + extra`` reduce rounds (module docstring).

    Stops when the pricing finds no improving tree, after ``max_iterations`` LP solves, after 15 solves
    without a relative gain of 1e-6, or after ``time_limit`` CPU seconds of this process.
    """
    t0, cpu0 = time.monotonic(), time.process_time()
    h = d.healthy
    mats = point_group(h, group)
    H = h.diameter
    R, n_sigma = H + extra, extra + 1
    free, halo = damaged_region(d, group, radius)
    verts = np.r_[np.flatnonzero(free), np.flatnonzero(halo)]
    n_free = int(free.sum())
    inreg = free[d.link_src] | free[d.link_dst]
    links = np.flatnonzero(inreg)
    sub = _Sub(d, verts, links)
    space = TreeSpace.build(sub, None, R)
    live = np.zeros(verts.size, dtype=bool)
    live[:n_free] = True
    images = np.arange(links.size)[None, :] if group is None else sub._lid[group.link_images(links)]
    space = TreeSpace(sub, R, live, space.nbr, space.lnk, space.back, images.astype(np.int64), space.rev)
    slots, stab = _slot_reps(d, group, mats)
    p_live = int(np.sum(d.is_compute & (np.bincount(d.link_src, minlength=d.n_vertices) > 0)))
    w = 1.0 / (p_live * len(mats))
    far = _far_loads(h, H, R, n_sigma, h.n_vertices / p_live)
    lp = _Master(space, slots.shape[0], n_sigma, far, w, stab,
                 _near_owners(d, group, mats, slots, free, links, (R, H, n_sigma)))
    parts = (d, mats, verts, n_free, R, H, sub, slots)
    row_slot = np.repeat(np.arange(slots.shape[0]), n_sigma)
    row_sigma = np.tile(np.arange(n_sigma), slots.shape[0])
    fixed = [_slot_rows(parts, row_slot[i:i + BATCH], row_sigma[i:i + BATCH]) for i in range(0, row_slot.size, BATCH)]
    L0 = np.concatenate([_initial_labels(space, f[0], f[1], f[2], n_free) for f in fixed])
    lo, root, flink = (np.concatenate([f[i] for f in fixed]) for i in (1, 2, 3))
    del fixed
    ones = arc_costs(space, np.ones((2 * R, links.size)))
    for i in range(0, row_slot.size, BATCH):
        sl = slice(i, i + BATCH)
        pl, _ = best_parents(space, ones, L0[sl], root[sl], lo[sl])
        for j in range(pl.shape[0]):
            b = i + j
            lp.add(row_slot[b], row_sigma[b], L0[b], pl[j],
                   _column_rows(space, n_free, L0[b], pl[j], flink[b], L0[b, n_free:]))
    vol = 2 * (d.n_compute - 1) * min_compute_distance(d) / d.n_links
    progress(f"local timed trees: {n_free} free vertices, {verts.size - n_free} fixed around them, "
             f"{links.size} links, {slots.shape[0]} slots x {n_sigma} shifts, {lp.n_load} load rows")
    status, best, stall, it = "", np.inf, 0, 0
    warm = L0.copy()
    while True:
        obj, x, a, pi, mu = lp.solve()
        it += 1
        if obj < best * (1 - 1e-6):
            best, stall = obj, 0
        else:
            stall += 1
        if it >= max_iterations or stall >= 15:
            status = f"column generation stopped: {'no gain in 15 iterations' if stall >= 15 else 'iteration limit'}"
            break
        if time.process_time() - cpu0 > time_limit:
            status = f"column generation stopped at the time limit ({time_limit:g} CPU s)"
            break
        added = _price_all(lp, space, pi, mu, obj, (row_slot, row_sigma, root, lo, flink, warm), n_free, stab)
        progress(f"local timed LP, R = {R}, iteration {it}: {100 * vol / obj:.2f} % of the volume bound, "
                 f"{len(lp.cols)} columns, {added} added")
        if not added:
            status = "column generation stopped: the heuristic pricing found no improving tree"
            break
    obj, x, a = lp.solve(vertex=True)[:3]
    return LocalTimedSolution(d, group, mats, verts, n_free, links, space, slots, stab, status, obj, vol,
                              np.array(lp.cols), np.array(lp.L), np.array(lp.P), x, a, it,
                              time.monotonic() - t0, H)


def _near_owners(d, group, mats, slots, free, links, rounds):
    """The owners in the region may take larger shares: per slot its owner's orbit among them (-1: none), per
    orbit and shift the largest load its trees put on a far link in each round (per unit of share per tree),
    and the number of trees of an orbit's owners; ``rounds`` is ``(R, H, shifts)``."""
    R, H, n_sigma = rounds
    h, V = d.healthy, d.n_vertices
    orbit = np.arange(V) if group is None else group.vertex_images(np.arange(V)).min(axis=0)
    reps = np.unique(orbit[free])
    slot_orbit = np.where(free[slots[:, 0]], np.searchsorted(reps, orbit[slots[:, 0]]), -1)
    far_link = np.ones(d.n_links, dtype=bool)
    far_link[links] = False
    live = d.is_compute & (np.bincount(d.link_src, minlength=V) > 0)
    out = np.zeros((reps.size, n_sigma, 2 * R))
    sizes = np.zeros(reps.size)
    for i, o in enumerate(reps.tolist()):
        owners = np.flatnonzero(orbit == o)
        sizes[i] = owners.size * len(mats)
        own = np.repeat(owners, len(mats))
        ks = np.tile(np.arange(len(mats)), owners.size)
        par = healthy_parents(h, np.arange(V), own, mats, ks)
        c, v = np.nonzero((par >= 0) & ~free[None, :] & live[None, :])
        u = par[c, v]
        lab = H + 1 - h.dist(v, own[c])
        up, down = d.link_ids(v, u), d.link_ids(u, v)
        for sg in range(n_sigma):
            load = np.zeros((2 * R, d.n_links))
            np.add.at(load, (lab + sg - 1, up), 1.0)
            np.add.at(load, (2 * R - lab - sg, down), 1.0)
            out[i, sg] = (load * far_link[None, :]).max(axis=1)
    return slot_orbit, out, sizes


def _price_all(lp, space, pi, mu, obj, rows, n_free, stab) -> int:
    """Price every row (slot, shift) at the duals, from its warm labels, and add the improving trees: how many."""
    row_slot, row_sigma, root, lo, flink, warm = rows
    C = arc_costs(space, pi)
    added = 0
    for i in range(0, row_slot.size, BATCH):
        sl = slice(i, i + BATCH)
        L, pl, cost = price(space, C, root[sl], warm[sl], lo=lo[sl])
        red = cost + _fixed_costs(C, flink[sl], L[:, n_free:]) - stab[row_slot[sl]] * mu[row_slot[sl], row_sigma[sl]]
        good = np.flatnonzero(red < -1e-7 * obj)
        for j in good.tolist():
            b = i + j
            added += lp.add(row_slot[b], row_sigma[b], L[j], pl[j],
                            _column_rows(space, n_free, L[j], pl[j], flink[b], L[j, n_free:]))
        warm[sl][good] = L[good]
    return added


def _fixed_costs(C, flink, labels):
    """The price of each row's fixed halo arcs into the region."""
    has = flink >= 0
    return np.where(has, C[np.maximum(flink, 0), np.clip(labels, 0, C.shape[1] - 1)], 0.0).sum(axis=1)


def round_local_timed(sol: LocalTimedSolution, units: int = 1024) -> BaseSchedule:
    """The integer schedule: ``units`` per slot on average over the columns (largest remainders); each column
    with a unit is one component, its whole tree: the healthy tree shifted by its ``sigma`` outside the
    region and the column's free part inside (empty rounds removed)."""
    d, R, H = sol.topology, sol.R, sol.H
    h = d.healthy
    n = largest_remainder(sol.x, units * sol.slots.shape[0])
    keep = np.flatnonzero(n > 0)
    V = d.n_vertices
    live = d.is_compute & (np.bincount(d.link_src, minlength=V) > 0)
    free = np.zeros(V, dtype=bool)
    free[sol.verts[:sol.n_free]] = True
    owner, k = sol.slots[sol.column[keep, 0], 0], sol.slots[sol.column[keep, 0], 1]
    sigma = sol.column[keep, 1]
    par = healthy_parents(h, np.arange(V), owner, sol.mats, k)           # (c, V)
    lab = H + 1 - h.dist(np.arange(V)[None, :], owner[:, None]) + sigma[:, None]
    fv = sol.verts[:sol.n_free]
    ploc = sol.plink[keep][:, :sol.n_free]
    par[:, fv] = np.where(ploc >= 0, sol.verts[sol.space.topology.link_dst[np.maximum(ploc, 0)]], -1)
    lab[:, fv] = sol.labels[keep][:, :sol.n_free]
    ok = live[None, :] & (par >= 0)
    c, v = np.nonzero(ok)
    u = par[c, v]
    L = lab[c, v]
    link = d.link_ids(v, u)
    if np.any(link < 0):
        raise SynthError("a kept healthy tree uses a failed link outside the region (a larger radius)")
    rev = d.link_ids(u, v)
    comp = np.r_[c, c]
    rnd = np.r_[L, 2 * R + 1 - L]
    src, dst = np.r_[v, u], np.r_[u, v]
    op = np.r_[np.full(c.size, REDUCE), np.full(c.size, COPY)]
    lk = np.r_[link, rev]
    used, rnd = np.unique(rnd, return_inverse=True)
    srt = np.lexsort((dst, src, comp, rnd))
    labels = tuple(f"local timed tree of owner {int(owner[i])}, point element {int(k[i])}, shift {int(sigma[i])}, "
                   f"{int(n[j])} units" for i, j in enumerate(keep.tolist()))
    return BaseSchedule(d, int(used.size), comp[srt], rnd[srt] + 1, src[srt], dst[srt], op[srt],
                        np.arange(src.size + 1), lk[srt], n[keep], labels)
