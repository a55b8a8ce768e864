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
(36, 36.0)
"""

from __future__ import annotations

import math
import time

import numpy as np

from synth.models._khop_heuristic import heuristic_tree
from synth.models._khop_instance import distance_matrix, hop_arcs, root_stabilizer, tree_weight
from synth.models._khop_lp import LayeredLP
from synth.models._khop_model import ModelData, build_hop_model, decode_parent

__all__ = ["run_pipeline", "cut_images"]

_EPS = 1e-6


def _offer_tree(best, t, parent, weight, say, source):
    if best["weight"] is None or weight < best["weight"]:
        best["parent"], best["weight"] = np.asarray(parent, dtype=np.int64), int(weight)
        say(f"incumbent W = {weight} ({source})")


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


def run_pipeline(t, k, best, *, deadline, seed=0, solver="auto", threads=1, say=lambda _m: None):
    """Heuristic, then the LP bound, then reduced-cost fixing and the MIP (see :mod:`models.khop`)."""
    t_start = time.monotonic()
    budget = max(deadline - t_start, 0.1)
    D = distance_matrix(t)
    V = t.n_vertices
    # 1. heuristic
    h_time = min(0.15 * budget, 5.0 + V / 100)
    res = heuristic_tree(D, k, seed=seed, time_limit=h_time, progress=say)
    _offer_tree(best, t, res.parent, res.weight, say, "heuristic")
    # 2. LP bound with cuts, on the orbits of the root's stabilizer
    perms = root_stabilizer(t)
    tail, head, layer = hop_arcs(t, k, dist=D)
    lp = LayeredLP(D, k, perms, tail, head, layer)
    ub = best["weight"]
    lp_deadline = time.monotonic() + 0.6 * max(deadline - time.monotonic(), 0)
    lpres = lp.solve(deadline=lp_deadline, progress=say, target=ub - 1 + _EPS)
    method = (f"layered-graph LP with {lpres.n_cuts} directed cuts on the root-stabilizer orbits "
              f"({'converged' if lpres.converged else 'not converged'})")
    _offer_bound(best, math.ceil(lpres.bound - _EPS), method, say)
    if best["bound"] >= best["weight"] or solver == "heuristic":
        return
    # 3. reduced-cost fixing: keep the arcs that can lie in a tree of weight <= UB - 1
    ub = best["weight"]
    rc = lp.arc_reduced_costs()
    keep = lpres.bound + rc <= ub - 1 + _EPS
    say(f"reduced-cost fixing keeps {int(keep.sum())} of {keep.size} arcs")
    data = ModelData(D, k, tail[keep], head[keep], layer[keep])
    cuts = cut_images(lp.cuts, perms, V)
    model, z, y = build_hop_model(data, cuts)
    cols = list(model.cost.keys())
    model.add_row(cols, [model.cost[c] for c in cols], -np.inf, ub - 1 + 0.5, "objective_cutoff")
    remaining = deadline - time.monotonic()
    if remaining <= 0.05:
        return
    if solver == "cpsat":
        sol = model.solve_cpsat(time_limit=remaining, threads=threads, seed=seed, progress=say)
    else:
        sol = model.solve_highs(time_limit=remaining, threads=threads, seed=seed, progress=say)
    name = "cp-sat" if solver == "cpsat" else "highs"
    if sol.values is not None:
        parent = decode_parent(z, sol.values, V)
        _offer_tree(best, t, parent, tree_weight(t, parent), say, name)
    if sol.status == "infeasible":
        _offer_bound(best, ub, f"{method}; reduced-cost fixing + {name} MIP: no tree lighter than {ub}", say)
    elif sol.status == "optimal" and sol.objective is not None:
        _offer_bound(best, round(sol.objective), f"{method}; reduced-cost fixing + {name} MIP optimal", say)
    elif np.isfinite(sol.bound):
        mip_lb = math.ceil(min(sol.bound, ub) - _EPS)
        _offer_bound(best, mip_lb, f"{method}; reduced-cost fixing + {name} MIP bound", say)
    if sol.interrupted:
        raise KeyboardInterrupt
