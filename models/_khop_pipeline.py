"""The solve pipeline behind :func:`models.khop.solve_khop`: heuristic, LP bound, fixing, MIP.

``best`` is a dict the pipeline updates in place (``parent``, ``weight``, ``bound``,
``method``, ``solver``), so that whatever it has found survives a Ctrl-C.

Examples
--------
>>> from synth.torus import parse_torus
>>> import time
>>> best = {"parent": None, "weight": None, "bound": 24.0, "method": ""}
>>> run_pipeline(parse_torus("5x5"), 2, best, deadline=time.monotonic() + 20)
>>> best["weight"], best["bound"]
(31, 31.0)
"""

from __future__ import annotations

import math
import time

import numpy as np

from synth.models._khop_heuristic import heuristic_tree
from synth.models._khop_instance import distance_matrix, hop_arcs, root_stabilizer, tree_depths, tree_weight
from synth.models._khop_lp import LayeredLP
from synth.models._khop_model import ModelData, build_hop_model, decode_parent

__all__ = ["run_pipeline", "cut_images", "MAX_MIP_ARCS"]

_EPS = 1e-6
MAX_MIP_ARCS = 150_000      # beyond this many surviving arcs the MIP is hopeless: spend the time elsewhere


def _offer_tree(best, parent, weight, say, source):
    if best["weight"] is None or weight < best["weight"]:
        best["parent"], best["weight"] = np.asarray(parent, dtype=np.int64), int(weight)
        say(f"incumbent W = {weight} ({source})")
        return True
    return False


def _offer_bound(best, bound, method, say):
    bound = float(bound)
    if bound > best["bound"] + 1e-9:
        best["bound"], best["method"] = bound, method
        say(f"bound {bound:g} ({method})")


def cut_images(cuts, perms, V):
    """All images of layered cuts ``(j, nodes)`` under the vertex permutations ``perms`` (deduplicated)."""
    seen, out = set(), []
    for j, nodes in cuts:
        nodes = np.asarray(nodes, dtype=np.int64)
        h, i = np.divmod(nodes, V)
        for g in perms:
            img = np.sort(h * V + g[i])
            key = img.tobytes()
            if key not in seen:
                seen.add(key)
                out.append((int(g[j]), img))
    return out


def _mip_loop(t, k, best, lp, lpres, method, perms, D, arcs, *, deadline, seed, solver, threads, say):
    """Reduced-cost fixing against the incumbent, then the MIP; restart whenever the incumbent improves.

    An arc whose reduced cost lifts the LP bound above ``UB - 1`` lies in no tree of
    weight ``<= UB - 1`` (weights are integers), so the MIP keeps only the other arcs,
    adds the objective cut-off ``W <= UB - 1`` and the LP's binding cuts with all their
    images: infeasible means the incumbent is optimal; a solution improves it.
    """
    tail, head, layer = arcs
    V = t.n_vertices
    rc = lp.arc_reduced_costs()
    binding = [c for c, u in zip(lp.cuts, lp.duals[lp.n_base_rows:]) if u > 1e-9]
    cuts = cut_images(binding, perms, V)
    name = "cp-sat" if solver == "cpsat" else "highs"
    while True:
        ub = best["weight"]
        if best["bound"] >= ub:
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0.05:
            return
        keep = lpres.bound + rc <= ub - 1 + _EPS
        n_keep = int(keep.sum())
        say(f"reduced-cost fixing against W = {ub} keeps {n_keep} of {keep.size} arcs")
        if n_keep > MAX_MIP_ARCS:
            say("too many arcs survive for the MIP; skipping it")
            return
        data = ModelData(D, k, tail[keep], head[keep], layer[keep])
        model, z, _y = build_hop_model(data, cuts)
        cols = list(model.cost.keys())
        model.add_row(cols, [model.cost[c] for c in cols], -np.inf, ub - 1, "objective_cutoff")
        if solver == "cpsat":
            sol = model.solve_cpsat(time_limit=remaining, threads=threads, seed=seed, progress=say,
                                    stop_below=ub - 1)
        else:
            sol = model.solve_highs(time_limit=remaining, threads=threads, seed=seed, progress=say,
                                    stop_below=ub - 1)
        improved = False
        if sol.values is not None:
            parent = decode_parent(z, sol.values, V)
            improved = _offer_tree(best, parent, tree_weight(t, parent), say, name)
        if sol.status == "infeasible":
            _offer_bound(best, ub, f"{method}; reduced-cost fixing + {name}: no tree lighter than {ub}", say)
        elif sol.status == "optimal" and sol.objective is not None:
            _offer_bound(best, round(sol.objective), f"{method}; reduced-cost fixing + {name} optimal", say)
        elif np.isfinite(sol.bound) and not improved:
            # the restricted model holds every tree of weight <= ub - 1, so min(its bound, ub) is valid
            _offer_bound(best, math.ceil(min(sol.bound, ub) - _EPS), f"{method}; reduced-cost fixing + {name} bound",
                         say)
        if sol.interrupted:
            raise KeyboardInterrupt
        if not improved:
            return


def run_pipeline(t, k, best, *, deadline, seed=0, solver="auto", threads=1, say=lambda _m: None):
    """Heuristic, then the LP bound, then reduced-cost fixing and the MIP (see :mod:`models.khop`)."""
    t_start = time.monotonic()
    budget = max(deadline - t_start, 0.1)
    D = distance_matrix(t)
    V = t.n_vertices
    # 1. heuristic (a fixed number of iterations keeps it deterministic; the time cap is a safety net)
    res = heuristic_tree(D, k, seed=seed, time_limit=0.25 * budget, progress=say)
    _offer_tree(best, res.parent, res.weight, say, "heuristic")
    # 2. LP bound with cuts, on the orbits of the root's stabilizer
    perms = root_stabilizer(t)
    arcs = hop_arcs(t, k, dist=D)
    lp = LayeredLP(D, k, perms, *arcs)
    lp_deadline = time.monotonic() + 0.6 * max(deadline - time.monotonic(), 0)
    lpres = lp.solve(deadline=lp_deadline, progress=say, target=best["weight"] - 1 + _EPS)
    method = (f"layered-graph LP with {lpres.n_cuts} directed cuts on the root-stabilizer orbits "
              f"({'converged' if lpres.converged else 'not converged'})")
    _offer_bound(best, math.ceil(lpres.bound - _EPS), method, say)
    if best["bound"] >= best["weight"] or solver == "heuristic":
        return
    # 3. fixing + MIP, restarted on every improvement
    _mip_loop(t, k, best, lp, lpres, method, perms, D, arcs, deadline=deadline, seed=seed,
              solver="highs" if solver == "highs" else "cpsat", threads=threads, say=say)
    # 4. time left and no proof: more local search from the incumbent
    if best["bound"] < best["weight"] and deadline - time.monotonic() > 1.0:
        res = heuristic_tree(D, k, seed=seed + 1, start=best["parent"], time_limit=deadline - time.monotonic(),
                             progress=say)
        _offer_tree(best, res.parent, res.weight, say, "heuristic")
