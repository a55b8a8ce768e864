"""Depth-bounded (k-hop) families for groups smaller than Γ (rectangular tori, SPEC sections 5-6).

Under Γ on an equal-sided torus one k-hop tree lifts to Omega = 1.  Under a
group ``G`` that contains the translations but is not regular on links
(translations x negation: one link orbit per dimension; translations: one per
dimension and direction) the lift of a weighted family puts on orbit ``O`` in
round ``s`` a load proportional to ``sum_t w_t u_{t,O}(s)``; Omega = 1 iff this
is the same on every orbit in every round.  This module builds k-hop trees
whose rounds make that possible; :func:`synth.models.balance.balance_candidates`
then chooses their integer weights and :func:`synth.check.measure_symmetric`
re-derives Omega.

**Labels as rounds.**  A tree of depth at most ``K`` is scheduled by *labels*
``l(v)`` in ``1..K`` (root ``0``) with ``l(parent) < l(v)``: ``v`` reduces into
its parent in round ``K - l(v) + 1`` and receives the result in round
``K + l(v)`` (``2K`` rounds; with ``l`` the depth this is
:func:`synth.schedule.tree_schedule`).  A leaf's label is free above its
parent's, so leaves can be moved between rounds to even out the orbits.

**Skeletons.**  A k-hop tree from :func:`synth.models._khop_heuristic.heuristic_tree`
(on the torus metric and on dimension-weighted metrics
``D_c(u, v) = sum_i c_i |dx_i|``, which shift hops between dimensions) or from
:func:`synth.models.khop.solve_khop` (small tori).  Its inner vertices are the
*hubs*; a hub's skeleton label is an upper bound on its label (labels only go
down, so a hub whose skeleton label is below ``h`` stays below ``h``).

**Assignment model** (a MIP, HiGHS through :func:`scipy.optimize.milp`).  For a
given number of units (trees) on one skeleton, every non-root vertex ``v`` picks, per unit,
an edge *profile* ``P`` (link-orbit incidences of the dimension-order routes to a
hub or the root and back, for the reduce and the copy round; the route's length
is the edge's cost) and a label ``h`` in ``[m, U_v]``:
``m - 1`` the smallest skeleton label of a hub with that profile, ``U_v`` the
skeleton label of a hub and ``K`` for a leaf.  Parents are offered within
``slack`` of the lightest edge to a hub of label at most ``m - 1`` (and within
``reach`` of the lightest overall).  Labels are aggregated into slots
``n[P, U, h]``: intervals sharing their upper end are nested, so Hall's
condition (``sum_{h >= m'} n[P, U, h] >= #vertices with m >= m'``) makes the
aggregate exact without per-vertex label variables.  Rows: per label, round
(reduce, copy) and orbit ``O >= 1``, ``load[h, O] = load[h, 0]``.  Under a group
without the negation (translations: orbits split by direction) a family may also
pair each tree with its mirror image ``v -> -v``, whose directions are reversed;
its profiles are then those of an edge plus its image.  Objective: least total weight ``W``.
The LP relaxation is solved first (infeasible: no balanced family on the
skeleton, proven); the options it takes whole are fixed and the MIP is solved
on the rest (status ``"feasible"``, or ``"optimal"`` when ``W`` meets the LP
bound), the full MIP only if that fails.  When no unit count up to
``max_units`` balances, a fallback minimizes the bandwidth term
``sum_h m * max_O load[h, O]`` (``Omega * W`` up to a constant), so the
balance model's own fallback starts from a good family.

Examples
--------
>>> from synth.torus import parse_torus
>>> from synth.group import torus_translations_negation
>>> t = parse_torus("3x4"); g = torus_translations_negation(t)
>>> fam = khop_family(t, 2, g, time_limit=3)
>>> fam.balanced, fam.depth, fam.units, fam.candidates[0].n_rounds
(True, 2, 1, 4)
>>> from synth.models.balance import balance_candidates
>>> r = balance_candidates(t, g, fam.candidates, time_limit=10)
>>> r.status, str(r.omega), r.chunks
('optimal', '1', 24)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from synth.errors import SynthError
from synth.models._khop_instance import distance_matrix
from synth.schedule import COPY, REDUCE, BaseSchedule

__all__ = ["KHopFamily", "khop_family", "labelled_tree_schedule", "compact_rounds", "dimension_metric",
           "orbit_profiles", "skeletons", "EXACT_MAX_VERTICES", "ITERATIONS"]

_DEFAULT_COSTS = ((1, 1), (2, 1), (1, 2), (3, 2), (2, 3))
_EXTRA_COSTS = ((3, 1), (1, 3), (4, 1), (1, 4), (3, 1, 2), (1, 2, 3), (2, 3, 1))  # tried when nothing balanced


@dataclass(frozen=True)
class KHopFamily:
    """Candidate k-hop trees for :func:`synth.models.balance.balance_candidates`.

    Attributes
    ----------
    k : int
        The depth bound asked for.
    depth : int
        ``K <= k``: every candidate has ``2K`` rounds (labels ``1..K``).
    candidates : tuple of BaseSchedule
        One component each (weight 1), all with ``2K`` rounds.
    weights : tuple of int
        ``W`` (sum of tree-edge lengths) of each candidate.
    balanced : bool
        Whether the assignment model balanced the first ``units`` candidates (every
        orbit equally loaded in every round, one chunk per unit); a claim of the
        model, re-derived by the checker after the weights are chosen.
    units : int
        How many of the candidates (the first ones) form the model's family.
    status : str
        The assignment model's verdict for that family: ``"optimal"`` (least ``W``
        among balanced families on the skeleton, proven), ``"feasible"``,
        ``"fallback"`` (no balanced family found; least bandwidth term instead).
    skeleton : str
        Which tree gave the hubs and their labels.
    min_weight : int
        The lightest tree any skeleton had (the unbalanced k-hop tree).
    lightest : int
        Index of that tree among ``candidates`` (scheduled by its own labels).
    seconds : float
    notes : tuple of str
    """

    k: int
    depth: int
    candidates: tuple
    weights: tuple
    balanced: bool
    units: int
    status: str
    skeleton: str
    min_weight: int
    lightest: int
    seconds: float
    notes: tuple = ()


# ---------------------------------------------------------------- metrics
def dimension_metric(t, costs) -> np.ndarray:
    """``V x V`` int32 matrix ``D_c(u, v) = sum_i c_i * (torus distance along dimension i)``.

    ``costs`` has one positive integer per dimension (a shorter tuple is repeated).

    Examples
    --------
    >>> from synth.torus import parse_torus
    >>> t = parse_torus("3x4")
    >>> dimension_metric(t, (2, 1))[0, [1, 2, 4, 5]].tolist()
    [1, 2, 2, 3]
    """
    costs = tuple(int(c) for c in costs)
    if not costs or min(costs) < 1:
        raise SynthError(f"dimension costs must be positive integers, got {costs}")
    return distance_matrix(t, costs, dtype=np.int32)


def _orbit_of_step(t, group) -> np.ndarray:
    """``orb[2i + s]``: the link orbit of a hop along dimension ``i`` (``s = 1``: towards -1).

    Raises
    ------
    SynthError
        If the group does not contain the translations (orbits then depend on the vertex).
    """
    d2 = 2 * t.ndim
    lo = np.asarray(group.link_orbit, dtype=np.int64).reshape(t.n_vertices, d2)
    if not np.all(lo == lo[0]):
        raise SynthError(f"k-hop families need a group containing the translations of {t.name}")
    return lo[0]


def orbit_profiles(t, group, u, v) -> np.ndarray:
    """Link-orbit incidences of the dimension-order routes ``u[j] -> v[j]``, shape ``(len, n_orbits)``.

    Examples
    --------
    >>> from synth.torus import parse_torus
    >>> from synth.group import torus_translations_negation, torus_translations
    >>> t = parse_torus("3x4")
    >>> orbit_profiles(t, torus_translations_negation(t), [0], [t.vertex((1, 2))]).tolist()
    [[1, 2]]
    >>> orbit_profiles(t, torus_translations(t), [0], [t.vertex((2, 3))]).tolist()
    [[0, 1, 0, 1]]
    """
    orb = _orbit_of_step(t, group)
    steps = np.atleast_2d(t.steps(np.asarray(u), np.asarray(v)))
    out = np.zeros((steps.shape[0], group.n_link_orbits), dtype=np.int64)
    for i in range(t.ndim):
        s = steps[:, i]
        for sign, j in ((s > 0, 2 * i), (s < 0, 2 * i + 1)):
            np.add.at(out, (np.flatnonzero(sign), orb[j]), np.abs(s[sign]))
    return out


# ---------------------------------------------------------------- schedules
def labelled_tree_schedule(t, parent, labels, depth: int, label: str = "") -> BaseSchedule:
    """A tree scheduled by labels: ``v`` reduces in round ``K - l(v) + 1``, receives in ``K + l(v)``.

    Parameters
    ----------
    t : Torus
    parent : array_like
        ``-1`` at the root 0, a vertex elsewhere.
    labels : array_like
        ``0`` at the root, ``l(parent[v]) < l(v) <= depth`` elsewhere.
    depth : int
        ``K``; the schedule has ``2K`` rounds (edges on the dimension-order route ``t.route``).

    Examples
    --------
    >>> from synth.torus import parse_torus
    >>> t = parse_torus("3")
    >>> b = labelled_tree_schedule(t, [-1, 0, 0], [0, 1, 2], 2)
    >>> b.n_rounds, b.round.tolist(), b.src.tolist(), b.op.tolist()
    (4, [1, 2, 3, 4], [2, 1, 0, 0], [0, 0, 1, 1])
    """
    parent = np.asarray(parent, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    kids = np.flatnonzero(parent >= 0)
    if labels[0] != 0 or np.any(labels[kids] <= labels[parent[kids]]) or np.any(labels[kids] > depth):
        raise SynthError("labels must grow from the root (0) to every child and stay within the depth")
    rows = []
    for v in kids.tolist():
        u, h = int(parent[v]), int(labels[v])
        rows.append((0, depth - h + 1, v, u, REDUCE, t.route(v, u)))
        rows.append((0, depth + h, u, v, COPY, t.route(u, v)))
    rows.sort(key=lambda r: (r[1], r[2], r[3]))
    return BaseSchedule.from_rows(t, 2 * depth, rows, (1,), (label or f"labelled tree, depth {depth}",))


def _tree_weight(t, parent) -> int:
    kids = np.flatnonzero(parent >= 0)
    return int(t.dist(kids, parent[kids]).sum())


# ---------------------------------------------------------------- skeletons
EXACT_MAX_VERTICES = 256   # above this the exact k-hop pipeline rarely beats the heuristic in its share of time
ITERATIONS = ((50, 20), (4, 2))  # heuristic perturbation rounds (first cost vector, others), small / large tori


def _skeleton(t, k, job, seed, share, primary=False):
    """One skeleton ``(name, parent, labels)``: ``job`` is ``"exact"`` or a dimension-cost tuple.

    The heuristic runs a fixed number of perturbation rounds (:data:`ITERATIONS`, by torus size
    and job), so its tree depends on the seed and not on the machine's speed unless ``share``
    cuts it short.  A weighted metric is scaled by ``k + 1``: the heuristic's label-closing
    step assumes unit steps, and with every distance above ``k`` it leaves labels alone.
    """
    from synth.models._khop_heuristic import heuristic_tree
    from synth.models._khop_instance import tree_depths

    if job == "exact":
        from synth.models.khop import solve_khop

        res = solve_khop(t, k, time_limit=share, seed=seed)
        if res.parent is None:
            return None
        parent = np.asarray(res.parent, dtype=np.int64)
        return f"k-hop solver tree ({res.status})", parent, tree_depths(parent)
    its = ITERATIONS[t.n_vertices > EXACT_MAX_VERTICES][0 if primary else 1]
    D = dimension_metric(t, job)
    if len(set(job)) > 1:
        D = D * (k + 1)
    res = heuristic_tree(D, k, seed=seed, time_limit=share, iterations=its)
    parent = np.asarray(res.parent, dtype=np.int64)
    labels = np.asarray(res.labels, dtype=np.int64).copy()
    labels[0] = 0
    kids = np.flatnonzero(parent >= 0)
    if np.any(labels[kids] <= labels[parent[kids]]) or labels.max() > k:
        labels = tree_depths(parent)
    return f"heuristic tree, dimension costs {tuple(job)}" + (f", seed {seed}" if seed else ""), parent, labels


def skeletons(t, k: int, *, costs=_DEFAULT_COSTS, seed: int = 0, time_limit: float = 10.0, exact=None,
              progress=None) -> list:
    """k-hop trees to build families on: ``[(name, parent, labels), ...]``, lightest first.

    One from :func:`synth.models.khop.solve_khop` (``exact``, by default on tori of at most
    :data:`EXACT_MAX_VERTICES` vertices; labels are the depths) and one from the heuristic
    per dimension-cost vector in ``costs`` (its own labels, which are at least the depths
    and leave the hubs more room).  The jobs share the time; duplicate trees are dropped.

    Examples
    --------
    >>> from synth.torus import parse_torus
    >>> sk = skeletons(parse_torus("3x4"), 2, costs=((1, 1),), time_limit=2)
    >>> [name for name, _, _ in sk]
    ['k-hop solver tree (optimal)']
    """
    say = progress or (lambda _m: None)
    t0 = time.monotonic()
    exact = t.n_vertices <= EXACT_MAX_VERTICES if exact is None else exact
    jobs = (["exact"] if exact else []) + [tuple(c) for c in costs]
    out, seen = [], set()
    for j, job in enumerate(jobs):
        left = time_limit - (time.monotonic() - t0)
        share = max(0.2, left / (len(jobs) - j))
        sk = _skeleton(t, k, job, seed, share, primary=(j == int(exact)))
        if sk is None or sk[1].tobytes() in seen:
            continue
        seen.add(sk[1].tobytes())
        W = _tree_weight(t, sk[1])
        say(f"skeleton: {sk[0]}, W = {W}")
        out.append((W, j, sk))
    out.sort(key=lambda s: s[:2])
    return [sk for _, _, sk in out]


# ---------------------------------------------------------------- the assignment model
def _build_options(t, group, parent, labels, k, slack, reach, D, neg=None):
    """Options ``(v, profile, m, U)``: ``v`` may hang under a hub with that route profile at labels ``m..U``.

    ``U`` is ``v``'s skeleton label if ``v`` is a hub (labels only decrease, so every parent
    whose skeleton label is below ``h`` stays below ``h``), else ``k``.  A parent whose skeleton
    label is ``m - 1`` is offered when its edge is within ``slack`` of the lightest edge to a
    hub of label ``<= m - 1`` and within ``reach`` of the lightest edge overall.  With ``neg``
    (the negation, for groups without it) a profile is that of the edge plus its mirror image.
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
        P = _profiles(t, group, v, cand, neg)
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


def _profiles(t, group, v, cand, neg):
    """Per candidate parent: orbit incidences of the reduce route ``v -> u`` and of the copy route ``u -> v``.

    (They are not always reverses of each other: an antipodal coordinate goes ``+`` both ways.)
    """
    vv = np.full(cand.size, v)
    P = np.concatenate([orbit_profiles(t, group, vv, cand), orbit_profiles(t, group, cand, vv)], axis=1)
    if neg is not None:
        P = P + _profiles(t, group, neg[v], neg[cand], None)
    return P


def _mirror(t, parent, labels, neg):
    """The image of a labelled tree under the negation ``v -> -v`` (root 0 stays)."""
    kids = np.flatnonzero(parent >= 0)
    mp = np.full(parent.size, -1, dtype=np.int64)
    mp[neg[kids]] = neg[parent[kids]]
    ml = np.zeros_like(labels)
    ml[neg] = labels
    return mp, ml


def _min_by(idx, val, size):
    out = np.full(size, np.iinfo(np.int64).max // 4, dtype=np.int64)
    np.minimum.at(out, idx, val)
    return out


def _solve_assignment(t, group, parent, labels, k, units, slack, D, time_limit, balanced=True, reach=None,
                      gap=1e-3, neg=None):
    """The assignment model on one skeleton: ``(status, [(parent, labels) per unit] or None)``."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    V = t.n_vertices
    m = group.n_link_orbits
    reach = max(2 * slack, 8) if reach is None else reach
    hubs, profiles, keys = _build_options(t, group, parent, labels, k, slack, reach, D, neg)
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
    rows, cols, vals, lo, hi = [], [], [], [], []
    r = 0

    def add(rc, lb, ub):
        nonlocal r
        for c, val in rc:
            rows.append(r)
            cols.append(c)
            vals.append(val)
        lo.append(lb)
        hi.append(ub)
        r += 1

    order = np.argsort(kv, kind="stable")
    starts = np.searchsorted(kv[order], np.arange(1, V + 1))
    for v in range(1, V):  # one option per vertex and unit
        add([(int(i), 1.0) for i in order[starts[v - 1]:starts[v]]], units, units)
    slot_of = {}
    for j in range(ns):
        slot_of.setdefault((int(sp[j]), int(su[j])), []).append(j)
    for g, items in groups.items():  # Hall's condition for intervals [m, U] sharing U
        items = np.asarray(items)
        ss = np.asarray(slot_of[g])
        add([(int(i), 1.0) for i in items] + [(nx + int(j), -1.0) for j in ss], 0, 0)
        for thr in range(int(km[items].min()) + 1, g[1] + 1):
            xi = items[km[items] >= thr]
            if xi.size:
                sj = ss[sh[ss] >= thr]
                add([(int(i), 1.0) for i in xi] + [(nx + int(j), -1.0) for j in sj], -np.inf, 0)
    for h in range(1, k + 1):  # loads per label, half (reduce round, copy round) and orbit
        sj = np.flatnonzero(sh == h)
        for half in (0, 1):
            for o in range(m):
                col = half * m + o
                if balanced:
                    if o == 0:
                        continue
                    coef = prof[sp[sj], col] - prof[sp[sj], half * m]
                    keep = coef != 0
                    if keep.any():
                        add([(nx + int(j), float(c)) for j, c in zip(sj[keep], coef[keep])], 0, 0)
                else:  # z[h, half] >= load[h, half, o]
                    coef = prof[sp[sj], col]
                    keep = coef != 0
                    add([(nx + int(j), float(c)) for j, c in zip(sj[keep], coef[keep])]
                        + [(nx + ns + 2 * (h - 1) + half, -1.0)], -np.inf, 0)
    A = coo_matrix((vals, (rows, cols)), shape=(r, n_var)).tocsr()
    c = np.zeros(n_var)
    if balanced:
        c[:nx] = cost[kp]
    else:
        c[nx + ns:] = m
        c[:nx] = 1e-3 * cost[kp]  # among equal bandwidth terms, the lighter
    ub = np.concatenate([np.full(nx + ns, float(units * V)), np.full(nz, np.inf)])
    integ = np.concatenate([np.ones(nx + ns), np.zeros(nz)])
    cons = LinearConstraint(A, lo, hi)
    t_end = time.monotonic() + max(1.0, float(time_limit))
    lb, ub = np.zeros(n_var), ub
    # the LP relaxation: infeasible means no family on this skeleton (proven); else it is a bound on W,
    # and fixing the options it already takes whole leaves a small MIP that usually finds a solution fast
    lp = milp(c, constraints=cons, bounds=Bounds(lb, ub), options={"time_limit": max(0.5, t_end - time.monotonic()),
                                                                     "disp": False})
    if lp.x is None:
        return ("infeasible" if lp.status == 2 else "unknown"), None
    res = None
    vert_whole = np.ones(V, dtype=bool)   # vertices whose options the LP takes whole
    frac = np.abs(lp.x[:nx] - np.rint(lp.x[:nx])) > 1e-9
    vert_whole[kv[frac]] = False
    cheapest = np.full(V, np.iinfo(np.int64).max)
    np.minimum.at(cheapest, kv, cost[kp])
    lp_cost = np.zeros(V)
    np.add.at(lp_cost, kv, lp.x[:nx] * cost[kp])
    stages = [vert_whole, vert_whole & (np.abs(lp_cost - units * cheapest) < 1e-9)]
    for stage, fix_v in enumerate(stages):
        if not fix_v[1:].any() or time.monotonic() >= t_end:
            continue
        fixed = np.zeros(n_var, dtype=bool)
        fixed[:nx] = fix_v[kv]
        fl, fu = lb.copy(), ub.copy()
        fl[fixed] = fu[fixed] = np.rint(lp.x[fixed])
        res = milp(c, constraints=cons, integrality=integ, bounds=Bounds(fl, fu),
                   options={"time_limit": max(0.5, (t_end - time.monotonic()) / (3 - stage)), "disp": False,
                            "mip_rel_gap": gap})
        if res.x is not None:
            res_status = "feasible"  # optimal only among the options left free
            break
        res = None
    if res is None:
        res = milp(c, constraints=cons, integrality=integ, bounds=Bounds(lb, ub),
                   options={"time_limit": max(0.5, t_end - time.monotonic()), "disp": False, "mip_rel_gap": gap})
        if res.x is None:
            return ("infeasible" if res.status == 2 else "unknown"), None
        res_status = "optimal" if res.status == 0 else "feasible"
    status = res_status
    val = np.rint(res.x).astype(np.int64)
    if balanced and status == "feasible" and float(c @ val) <= np.ceil(lp.fun - 1e-6) + 1e-9:
        status = "optimal"  # meets the LP bound: no family on this skeleton is lighter
    return status, _decode(t, group, labels, units, hubs, profiles, keys, slot_keys, val, neg)


def _decode(t, group, labels, units, hubs, profiles, keys, slot_keys, val, neg):
    V = t.n_vertices
    hl = labels[hubs]
    parents = [np.full(V, -1, dtype=np.int64) for _ in range(units)]
    labs = [np.zeros(V, dtype=np.int64) for _ in range(units)]
    fill = np.zeros(V, dtype=np.int64)          # units already given an option, per vertex
    items = {}                                   # (profile, U) -> [(m, v, unit)]
    for i, (v, p, mm, u) in enumerate(keys):
        for _ in range(int(val[i])):
            j = int(fill[v])
            fill[v] += 1
            items.setdefault((p, u), []).append((mm, v, j))
    if np.any(fill[1:] != units):
        raise SynthError("internal error: the assignment left a vertex without a parent")
    nx = len(keys)
    slots = {}
    for j, (p, u, h) in enumerate(slot_keys):
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
            parents[j][v] = _pick_parent(t, group, v, profiles[g[0]], hubs, hl, h, neg)
    return list(zip(parents, labs))


def _pick_parent(t, group, v, profile, hubs, hl, below, neg):
    cand = hubs[hl < below]
    P = _profiles(t, group, v, cand, neg)
    hit = np.flatnonzero(np.all(P == np.asarray(profile), axis=1))
    if hit.size == 0:
        raise SynthError("internal error: no hub realizes the chosen profile")
    return int(cand[hit[0]])


def _compress(units_trees):
    """Drop label values no vertex uses (keeping the order), so that the depth is as small as possible."""
    used = np.unique(np.concatenate([lab for _, lab in units_trees]))
    remap = np.zeros(int(used.max()) + 1, dtype=np.int64)
    remap[used] = np.arange(used.size)
    return [(p, remap[lab]) for p, lab in units_trees], int(used.size - 1)


def compact_rounds(base) -> BaseSchedule:
    """Drop the label levels no component uses from a labelled-tree schedule (``2K`` -> ``2K'`` rounds).

    Rounds ``s`` and ``2K + 1 - s`` hold label ``K - s + 1``; a level with neither is removed.
    A weighted family may use fewer levels than its candidates together.

    Examples
    --------
    >>> from synth.torus import parse_torus
    >>> b = labelled_tree_schedule(parse_torus("3"), [-1, 0, 0], [0, 1, 3], 3)
    >>> compact_rounds(b).round.tolist()
    [1, 2, 3, 4]
    """
    S = base.n_rounds
    K = S // 2
    used = np.zeros(K + 1, dtype=bool)
    r = base.round.astype(np.int64)
    lab = np.where(r <= K, K - r + 1, r - K)
    used[lab] = True
    if used[1:].all():
        return base
    keep = np.flatnonzero(used[1:]) + 1
    remap = np.zeros(K + 1, dtype=np.int64)
    remap[keep] = np.arange(1, keep.size + 1)
    K2 = int(keep.size)
    nl = remap[lab]
    rnd = np.where(r <= K, K2 - nl + 1, K2 + nl)
    return BaseSchedule(base.topology, 2 * K2, base.component, rnd, base.src, base.dst, base.op, base.route_ptr,
                        base.route_links, base.weights, base.labels)


def khop_family(t, k: int, group, *, time_limit: float = 60.0, seed: int = 0, max_units: int = 2,
                slack: int = 2, costs=_DEFAULT_COSTS, progress=None) -> KHopFamily:
    """k-hop trees (depth <= ``k``) whose rounds let a weighted lift through ``group`` reach Omega = 1.

    Parameters
    ----------
    t : Torus
    k : int
        Depth bound, ``1 <= k``; bounds at or above the diameter are treated as ``H``.
    group : Group
        A verified group containing the translations of ``t`` (e.g.
        :func:`synth.group.torus_translations_negation`).
    time_limit : float
        Seconds, roughly: about half for the skeletons, then the assignment MIPs (each
        given a share of what is left; one that has started may run past the end by a second).
    seed : int
    max_units : int
        Largest family size tried (trees of weight 1; ``|G|`` chunks per tree).  Under a group
        without the negation (orbits split by direction) a family may also be trees and
        their mirror images, whose directions balance each other.
    slack : int
        Extra edge length allowed over a vertex's nearest eligible hub (module docstring).
    costs : sequence of tuple
        Dimension-cost vectors for the heuristic skeletons (see :func:`dimension_metric`).
    progress : callable, optional

    Returns
    -------
    KHopFamily
        The first ``units`` candidates are the model's family; the lightest skeleton tree
        is appended when it is not among them, so the balance model's fallback can use it.

    Raises
    ------
    SynthError
        On a bad depth bound or unit count, a group without the translations, or a non-torus.
    """
    from synth.torus import Torus

    if not isinstance(t, Torus):
        raise SynthError("k-hop families are defined on tori")
    k = int(k)
    if k < 1:
        raise SynthError(f"the depth bound must be at least 1, got {k}")
    if max_units < 1:
        raise SynthError(f"max_units must be at least 1, got {max_units}")
    if group.topology.n_links != t.n_links:
        raise SynthError("the group acts on a different topology")
    orb = _orbit_of_step(t, group)
    say = progress or (lambda _m: None)
    t0 = time.monotonic()
    k = min(k, t.diameter)
    # without the negation in the group (orbits split by direction) every tree comes with its mirror image
    mirror = bool(np.all(orb[0::2] != orb[1::2]))
    neg = t.vertex(-t.coords(np.arange(t.n_vertices))).astype(np.int64) if mirror else None

    def left():
        return time_limit - (time.monotonic() - t0)

    sks = skeletons(t, k, costs=costs, seed=seed, time_limit=0.55 * time_limit, progress=say)
    D = dimension_metric(t, (1,))
    _, min_parent, min_labels = sks[0]
    min_W = _tree_weight(t, min_parent)
    notes = []
    best = None  # (W per tree, trees in the family, status, skeleton, [(parent, labels), ...])
    tried = 0
    # families by size: u trees on one skeleton, or (without the negation in the group) u trees and
    # their mirror images, 2u trees
    modes = sorted([(u, u, None) for u in range(1, max_units + 1)]
                   + ([(2 * u, u, neg) for u in range(1, max_units // 2 + 1)] if mirror else []),
                   key=lambda x: (x[0], x[2] is None))
    for size in sorted({x[0] for x in modes}):
        for _, units, ng in (x for x in modes if x[0] == size):
            for name, parent, labels in sks:
                if tried and left() <= 0:
                    break
                tried += 1
                status, trees = _solve_assignment(t, group, parent, labels, k, units, slack, D,
                                                  max(1.0, left() / 2), neg=ng)
                what = f"{units} tree(s)" + (" and their mirror images" if ng is not None else "")
                if trees is None:
                    say(f"{name}, {what}: {status}")
                    continue
                if ng is not None:
                    trees = [x for p, lab in trees for x in ((p, lab), _mirror(t, p, lab, neg))]
                W = sum(_tree_weight(t, p) for p, _ in trees) / size
                say(f"{name}, {what}: balanced, W = {W:g} per tree ({status})")
                if best is None or W < best[0]:
                    best = (W, size, status, name, trees)
        if best is not None:
            break
    if best is None:  # more skeletons, one at a time, while the time lasts
        seen = {p.tobytes() for _, p, _ in sks}
        extra = [(c, seed) for c in _EXTRA_COSTS if len(c) <= t.ndim] + [(c, seed + 1) for c in costs]
        for job, sd in extra:
            if left() < 0.25 * time_limit:
                break
            sk = _skeleton(t, k, job, sd, min(left() / 4, time_limit / 10))
            if sk is None or sk[1].tobytes() in seen:
                continue
            seen.add(sk[1].tobytes())
            name, parent, labels = sk
            tried += 1
            status, trees = _solve_assignment(t, group, parent, labels, k, 1, slack, D, max(1.0, left() / 3),
                                              neg=neg)
            say(f"{name}: {status if trees is None else 'balanced'}")
            if trees is not None:
                if mirror:
                    trees = [x for p, lab in trees for x in ((p, lab), _mirror(t, p, lab, neg))]
                best = (_tree_weight(t, trees[0][0]), len(trees), status, name, trees)
                break
    balanced = best is not None
    if not balanced:
        notes.append(f"no family of at most {max_units} trees on {tried} skeleton(s) balances every round "
                     f"(slack {slack}); the assignment model minimized the bandwidth term instead")
        name, parent, labels = sks[0]
        status, trees = _solve_assignment(t, group, parent, labels, k, 1, slack, D, max(1.0, left()),
                                          balanced=False, neg=neg)
        if trees is None:
            trees = [(min_parent, min_labels)]
        elif mirror:
            trees = [x for p, lab in trees for x in ((p, lab), _mirror(t, p, lab, neg))]
        best = (None, len(trees), "fallback" if status in ("optimal", "feasible") else status, name, trees)
    _, units, status, skel, trees = best
    family = list(trees)
    same = [i for i, (p, _) in enumerate(family) if np.array_equal(p, min_parent)]
    if same:
        lightest = same[0]
    else:
        lightest = len(family)
        family.append((min_parent, min_labels))
    family, K = _compress(family)
    cands, weights = [], []
    for i, (p, lab) in enumerate(family):
        W = _tree_weight(t, p)
        role = f"unit {i + 1} of {units}" if i < units else "lightest skeleton tree"
        cands.append(labelled_tree_schedule(t, p, lab, K, label=f"k-hop tree ({role}), depth bound {k}, W = {W}"))
        weights.append(W)
    return KHopFamily(k, K, tuple(cands), tuple(weights), balanced, units, status, skel, min_W, lightest,
                      time.monotonic() - t0, tuple(notes))
