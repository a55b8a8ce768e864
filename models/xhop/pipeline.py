"""The solve pipeline behind :func:`models.xhop.solve_xhop`: heuristic, per-partner bounds, MIPs, tree bound.

``best`` is a :class:`~synth.models.backends.result.Best` updated in place (the incumbent
forest with its roots ``(0, b)``, the bound and its method) so that whatever was found
survives an interruption.

Bounds.  Every bound is valid for the minimum over *all* partners:

* ``p - 1``: ``p - 2`` forest edges and the exchange route, each at least 1 long;
* per partner ``b`` (one per orbit of the root stabilizer, which maps forests to forests of
  the same weight): ``dist(0, b) + (p - 2) + max(0, ecc({0, b}) - h)`` (a vertex at distance
  ``e`` from both roots needs ``e - h`` extra length on its root path), then the LP relaxation
  of the hop-indexed model (a Lagrangian value of its duals, recomputed from the matrix, so
  it is valid for any duals), then the MIP with reduced-cost fixing and the cutoff
  ``UB - 1``; the global bound is the minimum over partners, and a partner whose bound
  reaches the incumbent is done;
* trees: a forest of depth ``h`` plus the edge ``0-b`` is a spanning tree of depth ``h + 1``,
  and ``W_tree`` does not increase with the depth, so any valid lower bound on ``W_tree(k)``
  with ``k >= h + 1`` bounds ``W_exchange(h)``.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> import time
>>> from synth.models.backends.result import Best
>>> best = Best()
>>> run_pipeline(parse_torus("6x6"), 2, best, deadline=time.monotonic() + 30, use_trees=False)
>>> best.weight, best.bound, best.incumbent.roots[0], best.incumbent.partner > 0
(44, 44.0, 0, True)
"""

from __future__ import annotations

import math
import time
from types import SimpleNamespace

import numpy as np
from synth.models.backends.lagrangian import lagrangian_bound
from synth.models.khop import solve_khop
from synth.models.forest.cuts import CutLoop, add_entering_cuts
from synth.models.xhop.search import (
    label_search,
    heuristic_forest,
    labels_to_parent,
    split_tree,
)
from synth.models.xhop.instance import (
    distance_matrix,
    forest_weight,
    hop_arcs,
    pair_stabilizer,
    partner_orbits,
    root_distance,
)
from synth.models.xhop.model import (
    add_objective_cutoff,
    build_xhop_model,
    decode_forest,
    encode_forest,
    model_data,
)

__all__ = ["heuristic_iterations", "lp_bound", "run_pipeline", "trivial_partner_bounds"]

_EPS = 1e-6
_ARC_BUDGET = 200_000   # arcs summed over the partner orbits that the cut loops handle in 60 s


def lp_bound(model, time_limit=None):
    """LP relaxation of ``model``: ``(bound, rc)`` with the Lagrangian bound of HiGHS's duals.

    Returns ``(-inf, None)`` when HiGHS returns no duals.
    """
    h = model.to_highs(time_limit, relax=True)
    h.run()
    sol = h.getSolution()
    if not sol.dual_valid:
        return -np.inf, None
    A, lo, hi = model.matrix()
    return lagrangian_bound(A, lo, hi, model.cost, model.lo, model.hi, np.asarray(sol.row_dual))


def trivial_partner_bounds(D, h, partners) -> np.ndarray:
    """``dist(0, b) + (p - 2) + max(0, ecc({0, b}) - h)`` for each partner (module docstring)."""
    V = D.shape[0]
    out = []
    for b in np.asarray(partners).tolist():
        ecc = int(root_distance(D, b).max())
        out.append(int(D[0, b]) + V - 2 + max(0, ecc - h))
    return np.asarray(out, dtype=np.int64)


def _offer(best, t, b, parent, say, source):
    return best.offer_tree(parent, forest_weight(t, b, parent), source, say, roots=(0, b))


def _tree_bound(trees, h):
    """Best lower bound on ``W_exchange(h)`` from k-hop results with ``k >= h + 1``."""
    lb, src = -np.inf, None
    for r in trees:
        k = int(getattr(r, "k", 0) or 0)
        if k >= h + 1 and r.lower_bound is not None and float(r.lower_bound) > lb:
            lb, src = float(r.lower_bound), k
    return lb, src


def _tree_starts(trees, h):
    starts = []
    for r in trees:
        if int(r.depth) <= h:
            starts.extend(split_tree(r.parent))
    return starts


def _parent_of(D, b, labels):
    lab = np.asarray(labels, dtype=np.int64).copy()
    lab[[0, b]] = 0
    return labels_to_parent(D, lab)


def _khop_bound(t, h, best, deadline, seed, say):
    if best.bound >= best.weight or h + 1 >= t.diameter:
        return
    r = solve_khop(t, h + 1, time_limit=max(deadline - time.monotonic(), 1.0), seed=seed)
    if r.lower_bound is not None:
        best.offer_bound(math.ceil(float(r.lower_bound) - _EPS),
                     f"W_tree({h + 1}) lower bound from solve_khop ({r.bound_method})", say)


def _lp_rounding(t, D, h, b, loop, best, say):
    """Labels from the LP's depths (rounded down, nearest, up), improved by the label local search."""
    v, x = loop.v, loop.x
    ycols = v.y[:, 1:]
    val = np.where(ycols >= 0, x[np.maximum(ycols, 0)], 0.0)
    mean = (val * np.arange(1, h + 1)[None, :]).sum(axis=1) / np.maximum(val.sum(axis=1), 1e-9)
    ls = None
    for lab in (np.floor(mean), np.round(mean), np.ceil(mean), np.argmax(val, axis=1) + 1.0):
        lab = np.clip(lab, 1, h).astype(np.int64)
        lab[[0, b]] = 0
        if ls is None:
            ls = label_search(D, h, lab)
        else:
            ls.set_labels(lab)
        ls.search()
        _offer(best, t, b, labels_to_parent(ls.D, ls.labels), say, f"LP rounding + local search, partner {b}")


def _partner_lp_roundings(t, D, h, best, lb, how, res, stop, say):
    """Large instances: one LP per partner, most promising (by the search) first, rounded into forests."""
    import highspy

    order = sorted(res.per_partner, key=lambda b: (res.per_partner[b][0], b))
    for b in order:
        if time.monotonic() >= stop:
            break
        data = model_data(D, h, [b], arcs=hop_arcs(D, b, h))
        model, v = build_xhop_model(data)
        hs = model.to_highs(time_limit=max(stop - time.monotonic(), 0.05), relax=True)
        hs.run()
        if hs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            break
        sol = hs.getSolution()
        A, lo, hi = model.matrix()
        bound, _rc = lagrangian_bound(A, lo, hi, model.cost, model.lo, model.hi, np.asarray(sol.row_dual))
        if b in lb:
            lb[b] = max(lb[b], math.ceil(bound - _EPS))
            how[b] = "LP"
        loop = SimpleNamespace(v=v, x=np.asarray(sol.col_value))
        _lp_rounding(t, D, h, b, loop, best, say)
        say(f"partner {b}: LP bound {bound:.3f}")


def _partner_lps(t, D, h, best, lb, how, lp_deadline, say, only=None):
    """Cut loops per open partner (in time slices); returns ``{b: (loop, result, arcs)}``."""
    loops = {}
    order = sorted(lb if only is None else only, key=lambda b: (lb[b], b))
    for n, b in enumerate(order):
        if lb[b] >= best.weight:
            continue
        now = time.monotonic()
        if now >= lp_deadline:
            break
        todo = sum(1 for c in order[n:] if lb[c] < best.weight)
        arcs = hop_arcs(D, b, h)
        data = model_data(D, h, [b], arcs=arcs)
        model, v = build_xhop_model(data)
        slice_ = max((lp_deadline - now) / todo, 1.0)
        loop = CutLoop(model, v, data, perms=pair_stabilizer(t, b))
        cres = loop.run(deadline=min(now + slice_, lp_deadline), target=best.weight - 1 + 10 * _EPS)
        if cres.rc is None:
            continue
        lb[b] = max(lb[b], math.ceil(cres.bound - _EPS))
        how[b] = "LP with directed cuts"
        if loop.x is not None and lb[b] < best.weight:
            _lp_rounding(t, D, h, b, loop, best, say)
        loops[b] = (loop, cres, arcs)
        say(f"partner {b}: LP bound {cres.bound:.3f} after {cres.rounds} rounds, {cres.n_cuts} cuts")
    return loops


def _partner_mips(t, D, h, best, lb, how, loops, res, deadline, seed, say, publish):
    """HiGHS on each open partner (reduced-cost fixing, cutoff ``UB - 1``), round robin."""
    tries = {b: 0 for b in loops}
    while time.monotonic() < deadline - 0.05 and best.bound < best.weight:
        open_b = [b for b in loops if lb[b] < best.weight]
        if not open_b:
            break
        b = min(open_b, key=lambda c: (tries[c], lb[c], c))
        tries[b] += 1
        ub = best.weight
        loop, cres, _arcs = loops[b]
        data = loop.data
        rcz = cres.rc[loop.v.z]
        keep = cres.bound + rcz <= ub - 1 + _EPS
        fixed = model_data(D, h, [b], arcs=(data.tail[keep], data.head[keep], data.layer[keep]))
        model, v = build_xhop_model(fixed)
        old_to_new = np.full(data.tail.size, -1, dtype=np.int64)
        old_to_new[keep] = np.arange(int(keep.sum()))
        cuts = [old_to_new[c] for c in loop.cuts]
        add_entering_cuts(model, v.z, [c[c >= 0] for c in cuts], fixed)
        add_objective_cutoff(model, ub - 1)
        start = None
        if b in res.per_partner:
            st = encode_forest(v, fixed, model, b, _parent_of(D, b, res.per_partner[b][1]))
            if st is not None and model.is_feasible(st):
                start = st
        remaining = deadline - time.monotonic()
        slice_ = min(remaining, max(remaining / len(open_b), 5.0 * tries[b]))
        say(f"partner {b}: MIP on {int(keep.sum())} of {keep.size} arcs, cutoff {ub - 1}, {slice_:.1f} s")
        sol = model.solve_highs(time_limit=slice_, seed=seed, start=start, guard_presolve=False)
        if sol.values is not None:
            pb, parent = decode_forest(v, sol.values, fixed)
            _offer(best, t, pb, parent, say, f"HiGHS MIP, partner {pb}")
        if sol.status == "infeasible":
            lb[b] = max(lb[b], ub)
        elif sol.status == "optimal" and sol.objective is not None:
            lb[b] = max(lb[b], int(round(sol.objective)))
        elif np.isfinite(sol.bound):
            lb[b] = max(lb[b], math.ceil(min(sol.bound, ub) - _EPS))
        how[b] = "MIP"
        publish()


def heuristic_iterations(V, time_limit) -> int:
    """Perturbation rounds per intensified partner, from the instance size and the time limit only.

    About a third of the time limit at the measured cost of a round (~12 ms at ``p = 256``,
    growing like ``p^2``), so the result does not depend on the machine; small tori, where the
    per-partner LPs and MIPs need the time, are capped at 150.
    """
    per_round = 3 * 0.012 * (V / 256) ** 2
    return int(np.clip(time_limit / 3 / max(per_round, 1e-6), 20 if V <= 1024 else 0, 150 if V <= 150 else 2000))


def run_pipeline(t, h, best, *, deadline, seed=0, trees=None, use_trees=True, say=lambda _m: None):
    """Heuristic, per-partner bounds and MIPs, then the tree bound (module docstring)."""
    t0 = time.monotonic()
    budget = max(deadline - t0, 0.1)
    D = distance_matrix(t)
    V = t.n_vertices
    reps, _sizes = partner_orbits(t)
    best.offer_bound(V - 1, "W >= p - 1 (every edge and the exchange route are at least 1 long)", say)
    trees = list(trees or ())
    # 1. heuristic (with split trees as extra starts)
    # large instances (many arcs over every partner orbit): the per-partner LPs cannot all be solved,
    # so the search gets most of the time (decided from the instance, not the clock: deterministic)
    n_arcs = hop_arcs(D, int(reps[0]), h)[0].size * reps.size
    large = n_arcs > _ARC_BUDGET * max(budget, 1.0) / 60
    tree_time = not trees and use_trees
    share = (0.35 if tree_time else 0.7) if large else 1 / 3
    res = heuristic_forest(t, D, h, seed=seed, time_limit=(0.75 if large else 0.5) * budget,
                           iterations=heuristic_iterations(V, 3 * share * budget),
                           starts=_tree_starts(trees, h), progress=say)
    _offer(best, t, res.b, res.parent, say, "heuristic")
    # 2. per-partner bounds
    lb = dict(zip(reps.tolist(), trivial_partner_bounds(D, h, reps).tolist()))
    how = {b: "trivial" for b in lb}

    def global_bound():
        open_lb = [v for v in lb.values() if v < best.weight]
        return min(open_lb) if open_lb else best.weight

    def publish():
        kinds = sorted(set(how[b] for b in lb))
        best.offer_bound(global_bound(), "per-partner bounds, minimum over the partner orbits ("
                     + ", ".join(kinds) + ")", say)

    publish()
    tb, k = _tree_bound(trees, h)
    if np.isfinite(tb):
        best.offer_bound(math.ceil(tb - _EPS), f"W_tree({k}) lower bound (forest + exchange edge is a tree "
                     f"of depth {h + 1} <= {k})", say)
    # 3. per-partner LP with directed cuts, most promising first, until a partner's bound reaches UB
    if large:
        say(f"large instance ({n_arcs} arcs over {reps.size} partner orbits): no per-partner cut loops")
        loops = None
        stop = deadline - (0.5 * (deadline - time.monotonic()) if tree_time else 0.0)
        _partner_lp_roundings(t, D, h, best, lb, how, res, stop, say)
    else:
        # 3-4. LPs with cuts for the partners still open, then MIPs on them; again for the partners
        # the LP phase did not reach, until every partner is closed or the time is up
        end = deadline - (0.3 * (deadline - time.monotonic()) if tree_time else 0.0)
        loops, first = {}, True
        while time.monotonic() < end - 0.05 and best.bound < best.weight:
            pending = [b for b in lb if lb[b] < best.weight and b not in loops]
            added = 0
            if pending:
                now = time.monotonic()
                new = _partner_lps(t, D, h, best, lb, how, now + (0.6 if first else 0.8) * (end - now), say,
                                   only=pending)
                loops.update(new)
                added = len(new)
                publish()
            first = False
            if any(lb[b] < best.weight for b in loops):
                left = any(lb[b] < best.weight and b not in loops for b in lb)
                now = time.monotonic()
                _partner_mips(t, D, h, best, lb, how, loops, res, now + 0.5 * (end - now) if left else end, seed,
                              say, publish)
            elif not added:
                break
    publish()
    if use_trees and not np.isfinite(tb) and (loops is None or deadline - time.monotonic() > 2.0):
        _khop_bound(t, h, best, deadline, seed, say)
    if best.bound > best.weight:
        raise RuntimeError(f"internal error: bound {best.bound} exceeds the incumbent {best.weight}")
