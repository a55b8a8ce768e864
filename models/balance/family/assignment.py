"""The assignment model: which hub and which label each vertex takes, per unit, so that every orbit balances.

A MIP solved by HiGHS through :func:`scipy.optimize.milp`, built apart from solving:
:func:`build_assignment` posts the row families (:func:`add_one_option`,
:func:`add_hall`, :func:`add_balanced_loads` or :func:`add_max_loads`) into an
:class:`AssignmentModel`, :func:`solve_assignment` solves it, :func:`decode_assignment`
turns the solution into labelled trees; :func:`assign` does the three.

For a given number of units (trees) on one skeleton, every non-root vertex ``v`` picks,
per unit, an edge *profile* ``P`` (link-orbit incidences of the dimension-order routes
to a hub or the root and back, for the reduce and the copy round,
:func:`~synth.models.balance.family.profiles.edge_profiles`; the route's length is the
edge's cost) and a label ``h`` in ``[m, U_v]``: ``m - 1`` the smallest skeleton label of
a hub with that profile, ``U_v`` the skeleton label of a hub and ``K`` for a leaf.
Parents are offered within ``slack`` of the lightest edge to a hub of label at most
``m - 1`` (and within ``reach`` of the lightest overall).  Labels are aggregated into
slots ``n[P, U, h]``: intervals sharing their upper end are nested, so Hall's condition
(``sum_{h >= m'} n[P, U, h] >= #vertices with m >= m'``) makes the aggregate exact
without per-vertex label variables.  Rows: per label, round (reduce, copy) and orbit
``O >= 1``, ``load[h, O] = load[h, 0]``.  Under a group without the negation
(translations: orbits split by direction) a family may also pair each tree with its
mirror image ``v -> -v``, whose directions are reversed; its profiles are then those of
an edge plus its image.  Objective: least total weight ``W``.

The LP relaxation is solved first (infeasible: no balanced family on the skeleton,
proven); the options it takes whole are fixed and the MIP is solved on the rest (status
``"feasible"``, or ``"optimal"`` when ``W`` meets the LP bound), the full MIP only if
that fails.  Unbalanced (``balanced=False``), the model minimizes the bandwidth term
``sum_h m * max_O load[h, O]`` (``Omega * W`` up to a constant) instead.

Columns: ``x`` (one per option ``(v, P, m, U)``: units of ``v`` taking it), then the
slots ``n[P, U, h]``, then (unbalanced only) ``z[h, half]``, the largest orbit load of
label ``h`` in its reduce (``half = 0``) or copy (``half = 1``) round.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.symmetry.torus import torus_translations_negation
>>> from synth.models.balance.family.profiles import dimension_metric
>>> from synth.models.balance.family.skeletons import skeleton
>>> t = parse_torus("4x6"); g = torus_translations_negation(t)
>>> _, parent, labels = skeleton(t, 2, (1, 1), 0, 30.0, primary=True)  # 30 s: never cut short here
>>> model = build_assignment(t, g, parent, labels, 2, 1, 2, dimension_metric(t, (1,)))
>>> model.n_options, model.n_columns == model.A.shape[1]
(81, True)
>>> status, val = solve_assignment(model, time_limit=5)
>>> (p, lab), = decode_assignment(t, g, model, val)
>>> status, int(lab.max()), int(t.dist(np.arange(1, 24), p[1:]).sum())
('feasible', 2, 34)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix, csr_matrix

from synth.errors import SynthError
from synth.models.backends.result import Status

from .profiles import edge_profiles

__all__ = ["AssignmentModel", "build_assignment", "solve_assignment", "decode_assignment", "assign",
           "hub_options", "add_one_option", "add_hall", "add_balanced_loads", "add_max_loads"]


@dataclass(frozen=True, eq=False)
class AssignmentModel:
    """The assignment MIP on one skeleton, ready for :func:`solve_assignment`.

    Attributes
    ----------
    c : numpy.ndarray
        Objective over every column.
    A : scipy.sparse.csr_matrix
        The rows, with bounds ``lo <= A x <= hi``.
    lo, hi : numpy.ndarray
    ub : numpy.ndarray
        Column upper bounds (lower bounds are 0).
    integrality : numpy.ndarray
        1 on the option and slot columns, 0 on ``z``.
    balanced : bool
        Balance rows and the least-weight objective, or the bandwidth-term fallback.
    units, n_vertices : int
    labels, hubs : numpy.ndarray
        The skeleton's labels and its hubs (inner vertices and the root).
    profiles : list of tuple
        Edge profiles (reduce half, copy half) by index.
    keys : list of tuple
        Per option column ``(v, profile index, m, U)``.
    slot_keys : list of tuple
        Per slot column ``(profile index, U, h)``.
    cost : numpy.ndarray
        Route length of each profile.
    """

    c: np.ndarray
    A: csr_matrix
    lo: np.ndarray
    hi: np.ndarray
    ub: np.ndarray
    integrality: np.ndarray
    balanced: bool
    units: int
    n_vertices: int
    labels: np.ndarray
    hubs: np.ndarray
    profiles: list
    keys: list
    slot_keys: list
    cost: np.ndarray

    @property
    def n_options(self) -> int:
        """Number of option columns ``x`` (the first ones)."""
        return len(self.keys)

    @property
    def n_columns(self) -> int:
        return int(self.c.size)

    @property
    def option_vertex(self) -> np.ndarray:
        """The vertex of each option column."""
        return np.asarray([q[0] for q in self.keys], dtype=np.int64)

    @property
    def option_cost(self) -> np.ndarray:
        """The route length of each option column."""
        return self.cost[np.asarray([q[1] for q in self.keys], dtype=np.int64)]


class _Rows:
    """Sparse rows ``lo <= sum c x <= hi``, appended one at a time."""

    def __init__(self):
        self.rows, self.cols, self.vals, self.lo, self.hi = [], [], [], [], []
        self.n = 0

    def add(self, rc, lb, ub) -> None:
        for c, val in rc:
            self.rows.append(self.n)
            self.cols.append(c)
            self.vals.append(val)
        self.lo.append(lb)
        self.hi.append(ub)
        self.n += 1

    def matrix(self, n_var) -> csr_matrix:
        return coo_matrix((self.vals, (self.rows, self.cols)), shape=(self.n, n_var)).tocsr()


def _min_by(idx, val, size):
    out = np.full(size, np.iinfo(np.int64).max // 4, dtype=np.int64)
    np.minimum.at(out, idx, val)
    return out


def hub_options(t, group, parent, labels, k, slack, reach, D, neg=None):
    """Options ``(v, profile, m, U)``: ``v`` may hang under a hub with that route profile at labels ``m..U``.

    ``U`` is ``v``'s skeleton label if ``v`` is a hub (labels only decrease, so every parent
    whose skeleton label is below ``h`` stays below ``h``), else ``k``.  A parent whose skeleton
    label is ``m - 1`` is offered when its edge is within ``slack`` of the lightest edge to a
    hub of label ``<= m - 1`` and within ``reach`` of the lightest edge overall.  With ``neg``
    (the negation, for groups without it) a profile is that of the edge plus its mirror image.

    Returns ``(hubs, profiles, keys)``.
    """
    V = t.n_vertices
    is_hub = np.zeros(V, dtype=bool)
    is_hub[parent[parent >= 0]] = True
    is_hub[0] = True
    hubs = np.flatnonzero(is_hub)
    hl = labels[hubs]
    upper = np.where(is_hub, labels, k)
    prof_index, profiles, keys = {}, [], []
    for v in range(1, V):
        ok = hl < upper[v]
        cand, cm = hubs[ok], hl[ok] + 1
        dv = D[v, cand].astype(np.int64)
        best_upto = np.minimum.accumulate(_min_by(cm, dv, k + 2))
        sel = (dv <= best_upto[cm] + slack) & (dv <= dv.min() + reach)
        cand, cm = cand[sel], cm[sel]
        P = edge_profiles(t, group, v, cand, neg)
        seen = {}
        for p, mm in zip(map(tuple, P.tolist()), cm.tolist()):
            if p not in seen or mm < seen[p]:
                seen[p] = mm
        for p, mm in seen.items():
            if p not in prof_index:
                prof_index[p] = len(profiles)
                profiles.append(p)
            keys.append((v, prof_index[p], mm, int(upper[v])))
    return hubs, profiles, keys


def add_one_option(rows: _Rows, kv, V: int, units: int) -> None:
    """Every non-root vertex takes exactly ``units`` options (one per unit)."""
    order = np.argsort(kv, kind="stable")
    starts = np.searchsorted(kv[order], np.arange(1, V + 1))
    for v in range(1, V):
        rows.add([(int(i), 1.0) for i in order[starts[v - 1]:starts[v]]], units, units)


def add_hall(rows: _Rows, groups: dict, slot_of: dict, km, sh, nx: int) -> None:
    """Hall's condition for label intervals ``[m, U]`` sharing ``U``: the slots serve the vertices.

    ``groups[(P, U)]`` lists the option columns, ``slot_of[(P, U)]`` the slots (offset by ``nx``).
    """
    for g, items in groups.items():
        items = np.asarray(items)
        ss = np.asarray(slot_of[g])
        rows.add([(int(i), 1.0) for i in items] + [(nx + int(j), -1.0) for j in ss], 0, 0)
        for thr in range(int(km[items].min()) + 1, g[1] + 1):
            xi = items[km[items] >= thr]
            if xi.size:
                sj = ss[sh[ss] >= thr]
                rows.add([(int(i), 1.0) for i in xi] + [(nx + int(j), -1.0) for j in sj], -np.inf, 0)


def add_balanced_loads(rows: _Rows, prof, sp, sh, k: int, m: int, nx: int) -> None:
    """``load[h, half, O] = load[h, half, 0]`` for every label, half (reduce, copy) and orbit ``O >= 1``."""
    for h in range(1, k + 1):
        sj = np.flatnonzero(sh == h)
        for half in (0, 1):
            for o in range(1, m):
                coef = prof[sp[sj], half * m + o] - prof[sp[sj], half * m]
                keep = coef != 0
                if keep.any():
                    rows.add([(nx + int(j), float(c)) for j, c in zip(sj[keep], coef[keep])], 0, 0)


def add_max_loads(rows: _Rows, prof, sp, sh, k: int, m: int, nx: int, ns: int) -> None:
    """``z[h, half] >= load[h, half, O]`` for every label, half and orbit (the fallback's objective)."""
    for h in range(1, k + 1):
        sj = np.flatnonzero(sh == h)
        for half in (0, 1):
            for o in range(m):
                coef = prof[sp[sj], half * m + o]
                keep = coef != 0
                rows.add([(nx + int(j), float(c)) for j, c in zip(sj[keep], coef[keep])]
                         + [(nx + ns + 2 * (h - 1) + half, -1.0)], -np.inf, 0)


def build_assignment(t, group, parent, labels, k, units, slack, D, balanced=True, reach=None,
                     neg=None) -> AssignmentModel:
    """The assignment model on one skeleton (``parent``, ``labels``) for ``units`` trees of depth ``<= k``."""
    V = t.n_vertices
    m = group.n_link_orbits
    reach = max(2 * slack, 8) if reach is None else reach
    hubs, profiles, keys = hub_options(t, group, parent, labels, k, slack, reach, D, neg)
    prof = np.asarray(profiles, dtype=np.int64).reshape(-1, 2 * m)  # reduce half, copy half
    cost = prof[:, :m].sum(axis=1)
    nx = len(keys)
    kv = np.asarray([q[0] for q in keys], dtype=np.int64)
    kp = np.asarray([q[1] for q in keys], dtype=np.int64)
    km = np.asarray([q[2] for q in keys], dtype=np.int64)
    ku = np.asarray([q[3] for q in keys], dtype=np.int64)
    # slots n[P, U, h], h in [smallest m of the group, U]
    groups = {}
    for i in range(nx):
        g = (int(kp[i]), int(ku[i]))
        groups.setdefault(g, []).append(i)
    slot_keys = []
    for (p, u), items in sorted(groups.items()):
        for h in range(int(km[items].min()), u + 1):
            slot_keys.append((p, u, h))
    ns = len(slot_keys)
    sp = np.asarray([s[0] for s in slot_keys], dtype=np.int64)
    su = np.asarray([s[1] for s in slot_keys], dtype=np.int64)
    sh = np.asarray([s[2] for s in slot_keys], dtype=np.int64)
    nz = 0 if balanced else 2 * k
    n_var = nx + ns + nz
    slot_of = {}
    for j in range(ns):
        slot_of.setdefault((int(sp[j]), int(su[j])), []).append(j)

    rows = _Rows()
    add_one_option(rows, kv, V, units)
    add_hall(rows, groups, slot_of, km, sh, nx)
    if balanced:
        add_balanced_loads(rows, prof, sp, sh, k, m, nx)
    else:
        add_max_loads(rows, prof, sp, sh, k, m, nx, ns)
    c = np.zeros(n_var)
    if balanced:
        c[:nx] = cost[kp]
    else:
        c[nx + ns:] = m
        c[:nx] = 1e-3 * cost[kp]  # among equal bandwidth terms, the lighter
    ub = np.concatenate([np.full(nx + ns, float(units * V)), np.full(nz, np.inf)])
    integ = np.concatenate([np.ones(nx + ns), np.zeros(nz)])
    return AssignmentModel(c, rows.matrix(n_var), np.asarray(rows.lo, dtype=float), np.asarray(rows.hi, dtype=float),
                           ub, integ, bool(balanced), int(units), V, np.asarray(labels), hubs, profiles, keys,
                           slot_keys, cost)


def solve_assignment(model: AssignmentModel, time_limit: float, gap: float = 1e-3):
    """``(status, column values or None)``: the LP relaxation, then the MIP with the LP's whole options fixed.

    ``status`` is ``"optimal"``, ``"feasible"``, ``"infeasible"`` (proven, by the LP or the MIP)
    or ``"unknown"``.  Each solve gets a share of ``time_limit`` (at least 1 s in all; one that
    has started may run past the end by half a second).
    """
    c, cons, integ = model.c, LinearConstraint(model.A, model.lo, model.hi), model.integrality
    nx, V, units = model.n_options, model.n_vertices, model.units
    kv, kcost = model.option_vertex, model.option_cost
    t_end = time.monotonic() + max(1.0, float(time_limit))
    lb, ub = np.zeros(model.n_columns), model.ub
    # the LP relaxation: infeasible means no family on this skeleton (proven); else it is a bound on W,
    # and fixing the options it already takes whole leaves a small MIP that usually finds a solution fast
    lp = milp(c, constraints=cons, bounds=Bounds(lb, ub), options={"time_limit": max(0.5, t_end - time.monotonic()),
                                                                     "disp": False})
    if lp.x is None:
        return (Status.INFEASIBLE if lp.status == 2 else Status.UNKNOWN), None
    res = None
    vert_whole = np.ones(V, dtype=bool)   # vertices whose options the LP takes whole
    frac = np.abs(lp.x[:nx] - np.rint(lp.x[:nx])) > 1e-9
    vert_whole[kv[frac]] = False
    cheapest = np.full(V, np.iinfo(np.int64).max)
    np.minimum.at(cheapest, kv, kcost)
    lp_cost = np.zeros(V)
    np.add.at(lp_cost, kv, lp.x[:nx] * kcost)
    stages = [vert_whole, vert_whole & (np.abs(lp_cost - units * cheapest) < 1e-9)]
    for stage, fix_v in enumerate(stages):
        if not fix_v[1:].any() or time.monotonic() >= t_end:
            continue
        fixed = np.zeros(model.n_columns, dtype=bool)
        fixed[:nx] = fix_v[kv]
        fl, fu = lb.copy(), ub.copy()
        fl[fixed] = fu[fixed] = np.rint(lp.x[fixed])
        res = milp(c, constraints=cons, integrality=integ, bounds=Bounds(fl, fu),
                   options={"time_limit": max(0.5, (t_end - time.monotonic()) / (3 - stage)), "disp": False,
                            "mip_rel_gap": gap})
        if res.x is not None:
            res_status = Status.FEASIBLE  # optimal only among the options left free
            break
        res = None
    if res is None:
        res = milp(c, constraints=cons, integrality=integ, bounds=Bounds(lb, ub),
                   options={"time_limit": max(0.5, t_end - time.monotonic()), "disp": False, "mip_rel_gap": gap})
        if res.x is None:
            return (Status.INFEASIBLE if res.status == 2 else Status.UNKNOWN), None
        res_status = Status.OPTIMAL if res.status == 0 else Status.FEASIBLE
    status = res_status
    val = np.rint(res.x).astype(np.int64)
    if model.balanced and status == "feasible" and float(c @ val) <= np.ceil(lp.fun - 1e-6) + 1e-9:
        status = Status.OPTIMAL  # meets the LP bound: no family on this skeleton is lighter
    return status, val


def decode_assignment(t, group, model: AssignmentModel, val, neg=None) -> list:
    """``[(parent, labels) per unit]`` from the column values of a solution."""
    V, units, hubs = t.n_vertices, model.units, model.hubs
    hl = model.labels[hubs]
    parents = [np.full(V, -1, dtype=np.int64) for _ in range(units)]
    labs = [np.zeros(V, dtype=np.int64) for _ in range(units)]
    fill = np.zeros(V, dtype=np.int64)          # units already given an option, per vertex
    items = {}                                   # (profile, U) -> [(m, v, unit)]
    for i, (v, p, mm, u) in enumerate(model.keys):
        for _ in range(int(val[i])):
            j = int(fill[v])
            fill[v] += 1
            items.setdefault((p, u), []).append((mm, v, j))
    if np.any(fill[1:] != units):
        raise SynthError("internal error: the assignment left a vertex without a parent")
    nx = model.n_options
    slots = {}
    for j, (p, u, h) in enumerate(model.slot_keys):
        slots.setdefault((p, u), []).extend([h] * int(val[nx + j]))
    for g, its in items.items():
        its.sort(reverse=True)
        hs = sorted(slots.get(g, []), reverse=True)
        if len(hs) != len(its):
            raise SynthError("internal error: slots and vertices do not match")
        for (mm, v, j), h in zip(its, hs):
            if not mm <= h <= g[1]:
                raise SynthError("internal error: a label outside its interval")
            labs[j][v] = h
            parents[j][v] = _pick_parent(t, group, v, model.profiles[g[0]], hubs, hl, h, neg)
    return list(zip(parents, labs))


def _pick_parent(t, group, v, profile, hubs, hl, below, neg):
    cand = hubs[hl < below]
    P = edge_profiles(t, group, v, cand, neg)
    hit = np.flatnonzero(np.all(P == np.asarray(profile), axis=1))
    if hit.size == 0:
        raise SynthError("internal error: no hub realizes the chosen profile")
    return int(cand[hit[0]])


def assign(t, group, parent, labels, k, units, slack, D, time_limit, balanced=True, reach=None, gap=1e-3,
           neg=None):
    """The assignment model on one skeleton: ``(status, [(parent, labels) per unit] or None)``."""
    model = build_assignment(t, group, parent, labels, k, units, slack, D, balanced=balanced, reach=reach, neg=neg)
    status, val = solve_assignment(model, time_limit, gap)
    if val is None:
        return status, None
    return status, decode_assignment(t, group, model, val, neg)
