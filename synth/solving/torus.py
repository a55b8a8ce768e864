"""Tori: SP-allreduce, the forest plus exchange, k-hop trees and families, balanced families.

:func:`plan_torus` decides, without solving, which of these a request gets and under which group;
each ``build_*`` function runs one (a :class:`~synth.solving.request.Plan`'s ``build``).

Examples
--------
>>> from synth.solving.request import SolveRequest
>>> from synth.topology.torus import parse_torus
>>> p = plan_torus(SolveRequest(parse_torus("4x4"), depth=2))
>>> p.construction, p.group_name, p.solves
('khop-tree', 'gamma', True)
>>> plan_torus(SolveRequest(parse_torus("6x4"))).construction
'balanced-family'
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from synth.check import measure_symmetric
from synth.check.claims import certify
from synth.errors import OptionError, SynthError
from synth.schedule.collective import collective_half
from synth.schedule.exchange import exchange_allreduce
from synth.schedule.forest import exchange_schedule
from synth.schedule.sp import sp_allreduce
from synth.solving.balanced import balanced_family
from synth.solving.khop import cache_answers, check_start, khop_notes, khop_tree, tree_base
from synth.solving.request import Plan, SolveResult
from synth.symmetry.spec import torus_group_builder
from synth.symmetry.torus import torus_gamma

__all__ = ["plan_torus", "build_tree", "build_khop_tree", "build_khop_family", "build_khop_exchange",
           "lifted_result"]


def plan_torus(req) -> Plan:
    """The plan for a healthy torus (module docstring); raises the option errors a solve would."""
    t, depth, exchange = req.topology, req.depth, req.exchange
    H = t.diameter
    khop = depth is not None and depth < H
    gamma = req.group in (None, "gamma") and t.is_equal_sided
    if req.start is not None and not (khop and not exchange and gamma):
        # parameters quoted `so` mid-sentence: the CLI says their flags (synth.cli._common.with_flags)
        raise OptionError("start continues a k-hop tree solve: it needs `depth` below the diameter, an "
                          "equal-sided torus, the default `group` and no `exchange`")
    if khop:
        return _plan_khop(req, gamma)
    notes = []
    if depth is not None and depth > H:
        notes.append(f"depth {depth} exceeds the diameter H = {H}; the BFS tree (depth {H}) is optimal")
    if exchange and all(n % 2 for n in t.shape):
        notes.append(f"every side of {t.name} is odd: no adjacent pair saves a round, so 2H = {2 * H} "
                     "rounds is already the lower bound; returning SP-allreduce")
        exchange = False
    name = req.group or ("gamma" if t.is_equal_sided else "translations-negation")
    grp = _group(req, name)
    if grp.is_regular:
        construction = "exchange" if exchange else "sp"
        algorithm = "forest-exchange" if exchange else "sp-allreduce"
        reason = f"the {name} group is regular on the links: every BFS {'forest' if exchange else 'tree'} balances"
        return Plan(construction, reason, name, (algorithm,), build_tree, grp, notes=tuple(notes), depth=depth,
                    exchange=exchange)
    return Plan("balanced-family", f"the {name} group has {grp.n_link_orbits} link orbits: a single lifted tree "
                "would not balance", name, ("balanced-forest-exchange" if exchange else "balanced-bfs-trees",),
                build_tree, grp, solves=True, time_limit=req.time_limit, notes=tuple(notes), depth=depth,
                exchange=exchange)


def _group(req, name):
    build = torus_group_builder(name)
    req.say(f"verifying the group ({name})")
    return build(req.topology)


def _plan_khop(req, gamma) -> Plan:
    """``depth`` below the diameter: a k-hop tree, exchange forest or family."""
    t, k = req.topology, req.depth
    if not gamma:
        if req.exchange:
            raise OptionError("depth-bounded exchange forests are lifted by Γ: they need an equal-sided torus and "
                              "the default group")
        name = req.group or "translations-negation"
        grp = _group(req, name)
        if grp.is_regular:
            raise OptionError(f"the {name} group is regular on links: use the default k-hop tree (no family needed)")
        return Plan("khop-family", f"the {name} group has {grp.n_link_orbits} link orbits: k-hop trees weighted "
                    "for balance", name, ("k-sp-family",), build_khop_family, grp, solves=True,
                    time_limit=req.time_limit, depth=k)
    if req.exchange:
        return Plan("khop-exchange", f"depth {k} below the diameter {t.diameter}, with exchange", "gamma",
                    ("k-sp-exchange",), build_khop_exchange, solves=True, time_limit=req.time_limit, depth=k,
                    exchange=True)
    reason = f"depth {k} below the diameter {t.diameter}: a least-weight tree of depth <= {k}"
    if req.start is not None:
        check_start(t, req.start, k)     # refused before any solve, as the solve would
        reason += ", started from the given tree"
    cached = req.start is None and cache_answers(t, k, req.time_limit, req.seed, req.solver)
    return Plan("khop-tree", reason, "gamma", ("k-sp-allreduce",), build_khop_tree, solves=not cached,
                time_limit=None if cached else req.time_limit, cached=cached, depth=k)


def lifted_result(req, base, grp, solver, provenance, depth, notes) -> SolveResult:
    """Certify the collective's half of ``base`` lifted by ``grp``: the result with ``depth`` and ``notes``."""
    req.say(f"checking the lifted schedule ({base.n_transmissions * grp.order:,} transmissions)")
    cert = certify(collective_half(base, req.collective), grp, req.elements, mode=req.mode, solver=solver,
                   provenance=provenance)
    return SolveResult(cert, depth, list(notes))


def build_tree(req, plan) -> SolveResult:
    """SP-allreduce, the forest plus exchange or a balanced family (``plan.construction``)."""
    t, grp, notes = req.topology, plan.group, list(plan.notes)
    claims = {}
    if plan.construction == "exchange":
        base, algorithm = exchange_allreduce(t), "forest-exchange"
    elif plan.construction == "sp":
        base, algorithm = sp_allreduce(t), "sp-allreduce"
    else:
        base, algorithm, claims, more = balanced_family(t, grp, plan.exchange, req.time_limit, req.seed, req.progress)
        notes.extend(more)
    provenance = {"algorithm": algorithm, "group": plan.group_name, "seed": req.seed if claims else None}
    return lifted_result(req, base, grp, claims, provenance, t.diameter - 1 if plan.exchange else t.diameter, notes)


def build_khop_tree(req, plan) -> SolveResult:
    """A minimum-weight tree of depth <= ``depth`` (k-SP-allreduce), lifted by Γ."""
    t = req.topology
    rec = khop_tree(t, req.depth, time_limit=req.time_limit, seed=req.seed, solver=req.solver,
                    progress=req.progress, start=req.start)
    provenance = {"algorithm": "k-sp-allreduce", "group": "gamma", "seed": req.seed}
    return lifted_result(req, tree_base(t, rec), torus_gamma(t), rec.solver_claims(), provenance, rec.depth,
                         khop_notes(rec))


def build_khop_family(req, plan) -> SolveResult:
    """k-hop trees (depth <= ``depth``) weighted so the lift through a smaller group has Omega = 1.

    :func:`synth.models.balance.family.khop_family` builds candidate trees whose rounds (labels)
    admit balance, :func:`synth.models.balance.balance_candidates` picks integer weights with
    the fewest chunks (or, failing that, the smallest Omega), and the checker re-derives it all.
    """
    # the models load on demand: they pull in the solvers
    from synth.models.balance import balance_candidates
    from synth.models.balance.family import compact_rounds, khop_family

    t, grp, depth, time_limit, seed = req.topology, plan.group, req.depth, req.time_limit, req.seed
    req.say(f"building k-hop candidate trees (depth <= {depth}) for {grp.n_link_orbits} link orbits")
    fam = khop_family(t, depth, grp, time_limit=0.75 * time_limit, seed=seed, progress=req.progress)
    req.say(f"balancing {len(fam.candidates)} candidate tree(s) (CP-SAT)")
    res = balance_candidates(t, grp, fam.candidates, time_limit=max(5.0, 0.25 * time_limit), seed=seed)
    if res.base is None:
        raise SynthError(f"no k-hop family found on {t.name} for depth {depth} ({res.status})")
    base = compact_rounds(res.base)
    tree_W = [int(base.route_lengths[(base.component == c) & (base.op == 0)].sum()) for c in range(base.n_components)]
    alone = measure_symmetric(fam.candidates[fam.lightest], grp, np.ones(grp.order, dtype=np.int64)).omega
    provenance = {"algorithm": "k-sp-family", "group": plan.group_name, "seed": seed}
    result = lifted_result(req, base, grp, _family_claims(req, fam, res, tree_W, alone), provenance,
                           base.n_rounds // 2, ())
    result.notes.extend(_family_notes(fam, res, tree_W, alone))
    return result


def _family_claims(req, fam, res, tree_W, alone) -> dict:
    """The solver claims of a balanced k-hop family."""
    return {"model": "synth.models.balance.family", "depth_bound": req.depth,
            "meaning": "solver claims, not re-derived: candidate k-hop trees scheduled by labels (an assignment "
                       "MIP on a skeleton tree; assignment_status 'optimal' = no balanced family on that skeleton "
                       "is lighter), then integer weights by CP-SAT (balance_status 'optimal' = no balanced "
                       "family of these candidates has fewer chunks; 'infeasible' = none balances, the smallest "
                       "omega found is returned); omega, weight, rounds are re-derived by synth check",
            "family": {"skeleton": fam.skeleton, "assignment_status": fam.status,
                       "assignment_balanced": fam.balanced, "units": fam.units,
                       "candidate_weights": list(fam.weights), "lightest_tree_weight": fam.min_weight,
                       "lightest_tree_omega": str(alone)},
            "balance_status": res.status, "weights": list(res.weights), "chunks": res.chunks,
            "tree_weights": tree_W, "omega": str(res.omega), "time_limit": req.time_limit, "seed": req.seed,
            "seconds": round(fam.seconds + res.seconds, 3)}


def _family_notes(fam, res, tree_W, alone) -> list:
    """What a user should know about a balanced k-hop family."""
    mean_W = Fraction(sum(w * x for w, x in zip(res.weights, tree_W)), sum(res.weights))
    shape = f"{len(res.weights)} tree(s), weights {list(res.weights)}, W = {tree_W}"
    if res.balanced:
        notes = [f"balanced k-hop family: omega = 1 with {res.chunks} chunks ({shape}; balance model {res.status})"]
    else:
        notes = [f"no balanced k-hop family found (balance model {res.status}); best omega = {res.omega} "
                 f"with {res.chunks} chunks ({shape})"]
    notes.append(f"mean W = {float(mean_W):.6g} per chunk against W = {fam.min_weight} for the lightest tree "
                 f"found, whose lift alone has omega = {alone}")
    return notes + list(fam.notes)


def build_khop_exchange(req, plan) -> SolveResult:
    """A minimum-weight forest of depth <= ``depth`` with an exchange (2h+1 rounds), lifted by Γ."""
    # the models load on demand: they pull in the solvers
    from synth.models.xhop import solve_xhop

    t, depth = req.topology, req.depth
    try:
        res = solve_xhop(t, depth, time_limit=req.time_limit, seed=req.seed, progress=req.progress)
    except KeyboardInterrupt as exc:    # Ctrl-C or SIGTERM propagates; say what is lost (no cache for forests)
        part = getattr(exc, "partial", None)
        exc.add_note(f"depth-{depth} exchange forest: interrupted; " + (
            f"the best forest so far has W = {part.weight} (gap {100 * part.gap:.1f} %), not kept (exchange "
            "forests are not cached)" if part is not None else "no forest found yet"))
        raise
    if res.parent is None or res.status in ("infeasible", "unknown"):
        raise SynthError(f"no exchange forest of depth <= {depth} found on {t.name} ({res.status})")
    base = exchange_schedule(t, res.parent, res.a, res.b, route=t.route,
                             label=f"exchange forest, depth bound {depth}, roots {res.a} and {res.b}")
    solver = {"model": "synth.models.xhop", "status": res.status, "depth_bound": depth, "weight": res.weight,
              "lower_bound": res.lower_bound, "gap": round(float(res.gap), 6), "bound_method": res.bound_method,
              "time_limit": req.time_limit, "seed": req.seed, "seconds": round(float(res.seconds), 3)}
    cert = certify(base, torus_gamma(t), req.elements, mode=req.mode, solver=solver,
                   provenance={"algorithm": "k-sp-exchange", "group": "gamma", "seed": req.seed})
    notes = []
    if res.status != "optimal":
        notes.append(f"{res.status}: W = {res.weight}, lower bound {res.lower_bound}, gap {100 * res.gap:.2f} %")
    return SolveResult(cert, res.depth, notes)

