"""Pick the construction for a request, build it, and certify it: one function per network family.

:func:`solve` dispatches on the topology's family: tori (SP-allreduce, the forest plus
exchange, k-hop trees and families, balanced families under smaller groups), HyperX,
spine-leaf and user graphs.  The submodules hold what the torus solves need:
:mod:`~synth.solving.khop` (k-hop trees, from the cache of :mod:`~synth.solving.cache` or the
models), :mod:`~synth.solving.record`, :mod:`~synth.solving.sweep` (every depth bound),
:mod:`~synth.solving.by_size` (a depth chosen by message size) and :mod:`~synth.solving.summary`
(what ``synth solve`` prints).  Errors in the parameters are :class:`~synth.errors.OptionError`
s that begin with the parameter's name; the CLI says its flag.

``collective`` (``"allreduce"``, ``"reduce-scatter"`` or ``"allgather"``) certifies, instead of
the allreduce, the reduction or the dissemination half of the same construction
(:func:`synth.schedule.collective.collective_half`): every tree construction (SP and the balanced
BFS trees of rectangular tori or smaller groups, k-hop trees and families, HyperX windmills,
spine-leaf stars, user graphs) has both; the exchange schedules do not.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> r = solve(parse_torus("4x4"))
>>> r.certificate.claims["rounds"], r.depth
(8, 4)
>>> rs = solve(parse_torus("4x4"), collective="reduce-scatter")
>>> rs.certificate.claims["rounds"], rs.certificate.claims["round_optimal"], rs.depth
(4, True, 4)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from synth.check.certificate import Certificate, read_certificate
from synth.check.claims import certify, check_certificate
from synth.check import measure_symmetric
from synth.errors import GroupError, OptionError, SynthError, check_instance, check_int
from synth.schedule.collective import collective_half
from synth.topology.base import Topology
from synth.schedule.data import ALLREDUCE, COLLECTIVES
from synth.schedule.exchange import exchange_allreduce
from synth.schedule.forest import exchange_schedule
from synth.schedule.hyperx import hyperx_tree
from synth.schedule.sp import sp_allreduce
from synth.schedule.spineleaf import spine_leaf_star
from synth.schedule.user import round_incidences, shortest_path_tree
from synth.solving.balanced import balanced_family
from synth.solving.khop import khop_notes, khop_tree, tree_base
from synth.solving.lattice import solve_lattice
from synth.symmetry.hyperx import hyperx_group
from synth.symmetry.search import user_group
from synth.symmetry.residual import residual_group, trivial_group
from synth.symmetry.spec import TORUS_GROUPS, default_group, torus_group_builder
from synth.symmetry.spineleaf import spine_leaf_group
from synth.symmetry.torus import torus_gamma
from synth.topology.hyperx import HyperX
from synth.topology.lattice import LatticeTorus
from synth.topology.spineleaf import SpineLeaf
from synth.topology.failures import Damaged
from synth.topology.torus import Torus
from synth.solving.packing import solve_packed

__all__ = ["SolveResult", "solve", "check_written", "TORUS_GROUPS", "PACKING_MAX_VERTICES"]

#: user graphs up to this size that no symmetry balances go to the packing model (its layered LP has a
#: variable per owner and parent choice, with no healthy schedule to start from); larger ones are refused
PACKING_MAX_VERTICES = 1024


@dataclass
class SolveResult:
    """A certified schedule and what the user should know about it."""

    certificate: Certificate
    depth: int
    notes: list = field(default_factory=list)


def _quiet(_message):
    pass


def check_written(cert, path=None):
    """The checker's report on the certificate as written to ``path`` (or on ``cert`` when ``path`` is None).

    What ``synth solve`` prints as ``valid``: the file is read back and every claim
    re-derived, the dual's bound included, in symmetric mode (one orbit per group
    element; 16x16, k = 3: about 0.3 s), so ``valid True`` is what ``synth check``
    says of the same file.
    """
    return check_certificate(cert if path is None else read_certificate(path), "symmetric")


def solve(topology, depth=None, elements=None, mode="auto", exchange=False, progress=_quiet, generators=None,
          allow_unbalanced=False, group=None, time_limit=60.0, seed=0, solver="auto", start=None,
          collective=ALLREDUCE) -> SolveResult:
    """Build and certify the best schedule synth knows for ``topology`` and ``depth``.

    Without ``depth`` (or with ``depth >= H``) this is SP-allreduce: the BFS tree of
    depth ``H``, which has the least possible weight ``p - 1``.  With ``exchange`` on a
    torus with an even side it is the forest plus exchange, ``2H - 1`` rounds; on an
    all-odd torus ``2H`` is already the lower bound and SP-allreduce is returned.

    ``group`` picks the torus symmetry group (:data:`synth.symmetry.spec.TORUS_GROUPS`); Γ (the default on
    equal-sided tori) is regular on links so any BFS tree balances; under a smaller group
    (fewer chunks) or on a rectangular torus the balance model of :mod:`synth.models.balance`
    chooses weighted trees or forests with Ω = 1.

    ``start``: a parent array of a tree of depth ``<= depth`` (:func:`synth.solving.khop.start_tree`)
    that a k-hop solve (Γ on an equal-sided torus, ``depth < H``) starts from.

    ``collective``: certify the reduce-scatter or allgather half of the construction instead
    (module docstring); a tree of depth ``h`` then takes ``h`` rounds.
    """
    check_instance(topology, "topology", Topology, " (e.g. synth.parse_torus('4x4'))")
    depth = check_int(depth, "depth", 1, optional=True)
    elements = check_int(elements, "elements", 1, optional=True)
    seed = check_int(seed, "seed")
    if collective not in COLLECTIVES:
        raise OptionError(f"collective must be one of {', '.join(COLLECTIVES)}, got {str(collective)[:40]!r}")
    if collective != ALLREDUCE and exchange:
        raise OptionError(f"collective {collective}: the exchange schedules have no such half (their two roots swap "
                          "aggregates in the middle round, so neither half alone is a reduce-scatter or an "
                          "allgather); use a tree, without exchange")
    if isinstance(topology, Damaged):
        return _solve_damaged(topology, depth, elements, mode, exchange, progress, generators, time_limit,
                              collective)
    if isinstance(topology, Torus):
        return _solve_torus(topology, depth, elements, mode, exchange, progress, group, time_limit, seed, solver,
                            start, collective)
    if isinstance(topology, HyperX):
        return _solve_hyperx(topology, depth, elements, mode, exchange, progress, collective)
    if isinstance(topology, SpineLeaf):
        return _solve_spine_leaf(topology, depth, elements, mode, exchange, progress, collective)
    if isinstance(topology, LatticeTorus):   # issue 40: twisted and lattice tori, meshes, mixed wrap
        return SolveResult(*solve_lattice(topology, depth, elements, mode, exchange, progress, group, time_limit, seed,
                                          collective, solver=solver, start=start))
    return _solve_user(topology, generators, elements, mode, exchange, allow_unbalanced, progress, collective)


def _solve_torus(topology, depth, elements, mode, exchange, progress, group, time_limit, seed, solver,
                 start, collective=ALLREDUCE) -> SolveResult:
    """Tori: SP-allreduce, the forest plus exchange, or (``depth < H``) a k-hop solve (:func:`solve`)."""
    H = topology.diameter
    if depth is not None and depth < 1:
        raise OptionError(f"depth must be at least 1, got {depth}")
    notes = []
    khop = depth is not None and depth < H
    if start is not None and not (khop and not exchange and group in (None, "gamma") and topology.is_equal_sided):
        # parameters quoted `so` mid-sentence: the CLI says their flags (synth.cli._common.with_flags)
        raise OptionError("start continues a k-hop tree solve: it needs `depth` below the diameter, an "
                          "equal-sided torus, the default `group` and no `exchange`")
    if khop:
        return _solve_khop(topology, depth, elements, mode, exchange, group, time_limit, seed, solver, progress,
                           start, collective)
    if depth is not None and depth > H:
        notes.append(f"depth {depth} exceeds the diameter H = {H}; the BFS tree (depth {H}) is optimal")
    if exchange and all(n % 2 for n in topology.shape):
        notes.append(f"every side of {topology.name} is odd: no adjacent pair saves a round, so 2H = {2 * H} "
                     "rounds is already the lower bound; returning SP-allreduce")
        exchange = False
    group_kind = group or ("gamma" if topology.is_equal_sided else "translations-negation")
    build = torus_group_builder(group_kind)
    progress(f"verifying the group ({group_kind})")
    grp = build(topology)
    claims = {}
    if grp.is_regular:
        # Γ acts regularly on links: every BFS tree or forest lifts to Ω = 1 (balance lemma)
        if exchange:
            base, algorithm = exchange_allreduce(topology), "forest-exchange"
        else:
            base, algorithm = sp_allreduce(topology), "sp-allreduce"
    else:
        base, algorithm, claims, more = balanced_family(topology, grp, exchange, time_limit, seed, progress)
        notes.extend(more)
    depth_out = H - 1 if exchange else H
    progress(f"checking the lifted schedule ({base.n_transmissions * grp.order:,} transmissions)")
    cert = certify(collective_half(base, collective), grp, elements, mode=mode, solver=claims,
                   provenance={"algorithm": algorithm, "group": group_kind, "seed": seed if claims else None})
    return SolveResult(cert, depth_out, notes)


def _solve_khop(t, depth, elements, mode, exchange, group, time_limit, seed, solver, progress,
                start=None, collective=ALLREDUCE) -> SolveResult:
    """A minimum-weight tree of depth <= ``depth`` (k-SP-allreduce), lifted by Γ.

    On a rectangular torus, or under a group other than Γ, a weighted family of k-hop
    trees chosen for balance (:func:`_solve_khop_family`).
    """
    if group not in (None, "gamma") or not t.is_equal_sided:
        if exchange:
            raise OptionError("depth-bounded exchange forests are lifted by Γ: they need an equal-sided torus and "
                              "the default group")
        return _solve_khop_family(t, depth, elements, mode, group, time_limit, seed, progress, collective)
    if exchange:
        return _solve_xhop(t, depth, elements, mode, time_limit, seed, progress)
    rec = khop_tree(t, depth, time_limit=time_limit, seed=seed, solver=solver, progress=progress, start=start)
    grp = torus_gamma(t)
    base = tree_base(t, rec)
    progress(f"checking the lifted schedule ({base.n_transmissions * grp.order:,} transmissions)")
    cert = certify(collective_half(base, collective), grp, elements, mode=mode, solver=rec.solver_claims(),
                   provenance={"algorithm": "k-sp-allreduce", "group": "gamma", "seed": seed})
    return SolveResult(cert, rec.depth, khop_notes(rec))


def _solve_khop_family(t, depth, elements, mode, group, time_limit, seed, progress,
                       collective=ALLREDUCE) -> SolveResult:
    """k-hop trees (depth <= ``depth``) weighted so the lift through a smaller group has Omega = 1.

    :func:`synth.models.balance.family.khop_family` builds candidate trees whose rounds (labels)
    admit balance, :func:`synth.models.balance.balance_candidates` picks integer weights with
    the fewest chunks (or, failing that, the smallest Omega), and the checker re-derives it all.
    """
    # the models load on demand: they pull in the solvers
    from synth.models.balance import balance_candidates
    from synth.models.balance.family import compact_rounds, khop_family

    group_kind = group or "translations-negation"
    build = torus_group_builder(group_kind)
    progress(f"verifying the group ({group_kind})")
    grp = build(t)
    if grp.is_regular:
        raise OptionError(f"the {group_kind} group is regular on links: use the default k-hop tree (no family needed)")
    progress(f"building k-hop candidate trees (depth <= {depth}) for {grp.n_link_orbits} link orbits")
    fam = khop_family(t, depth, grp, time_limit=0.75 * time_limit, seed=seed, progress=progress)
    progress(f"balancing {len(fam.candidates)} candidate tree(s) (CP-SAT)")
    res = balance_candidates(t, grp, fam.candidates, time_limit=max(5.0, 0.25 * time_limit), seed=seed)
    if res.base is None:
        raise SynthError(f"no k-hop family found on {t.name} for depth {depth} ({res.status})")
    base = compact_rounds(res.base)
    tree_W = [int(base.route_lengths[(base.component == c) & (base.op == 0)].sum()) for c in range(base.n_components)]
    alone = measure_symmetric(fam.candidates[fam.lightest], grp, np.ones(grp.order, dtype=np.int64)).omega
    solver = {"model": "synth.models.balance.family", "depth_bound": depth,
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
              "tree_weights": tree_W, "omega": str(res.omega), "time_limit": time_limit, "seed": seed,
              "seconds": round(fam.seconds + res.seconds, 3)}
    progress(f"checking the lifted schedule ({base.n_transmissions * grp.order:,} transmissions)")
    cert = certify(collective_half(base, collective), grp, elements, mode=mode, solver=solver,
                   provenance={"algorithm": "k-sp-family", "group": group_kind, "seed": seed})
    mean_W = Fraction(sum(w * x for w, x in zip(res.weights, tree_W)), sum(res.weights))
    shape = f"{len(res.weights)} tree(s), weights {list(res.weights)}, W = {tree_W}"
    notes = []
    if res.balanced:
        notes.append(f"balanced k-hop family: omega = 1 with {res.chunks} chunks ({shape}; balance model "
                     f"{res.status})")
    else:
        notes.append(f"no balanced k-hop family found (balance model {res.status}); best omega = {res.omega} "
                     f"with {res.chunks} chunks ({shape})")
    notes.append(f"mean W = {float(mean_W):.6g} per chunk against W = {fam.min_weight} for the lightest tree "
                 f"found, whose lift alone has omega = {alone}")
    notes.extend(fam.notes)
    return SolveResult(cert, base.n_rounds // 2, notes)


def _solve_xhop(t, depth, elements, mode, time_limit, seed, progress) -> SolveResult:
    """A minimum-weight forest of depth <= ``depth`` with an exchange (2h+1 rounds), lifted by Γ."""
    # the models load on demand: they pull in the solvers
    from synth.models.xhop import solve_xhop

    try:
        res = solve_xhop(t, depth, time_limit=time_limit, seed=seed, progress=progress)
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
    grp = torus_gamma(t)
    solver = {"model": "synth.models.xhop", "status": res.status, "depth_bound": depth, "weight": res.weight,
              "lower_bound": res.lower_bound, "gap": round(float(res.gap), 6), "bound_method": res.bound_method,
              "time_limit": time_limit, "seed": seed, "seconds": round(float(res.seconds), 3)}
    cert = certify(base, grp, elements, mode=mode, solver=solver,
                   provenance={"algorithm": "k-sp-exchange", "group": "gamma", "seed": seed})
    notes = []
    if res.status != "optimal":
        notes.append(f"{res.status}: W = {res.weight}, lower bound {res.lower_bound}, gap {100 * res.gap:.2f} %")
    return SolveResult(cert, res.depth, notes)


def _solve_hyperx(topology, depth, elements, mode, exchange, progress, collective=ALLREDUCE) -> SolveResult:
    """HyperX: the windmill (2-D) or coordinate BFS tree, lifted by the HyperX group."""
    _no_exchange(topology, exchange)
    progress("verifying the HyperX group")
    group, base = hyperx_group(topology), hyperx_tree(topology)
    algorithm = "windmill" if topology.ndim == 2 else "coordinate-tree"
    return _certify_tree(topology, group, base, algorithm, depth, elements, mode, progress, collective)


def _solve_spine_leaf(topology, depth, elements, mode, exchange, progress, collective=ALLREDUCE) -> SolveResult:
    """Spine-leaf: the shortest-path star, lifted by the host and leaf shifts."""
    _no_exchange(topology, exchange)
    progress("verifying the spine-leaf group")
    group, base = spine_leaf_group(topology), spine_leaf_star(topology)
    return _certify_tree(topology, group, base, "spine-leaf-star", depth, elements, mode, progress, collective)


def _no_exchange(topology, exchange):
    if exchange:
        raise OptionError(f"exchange is defined on tori; {topology.name} is not one")


def _certify_tree(topology, group, base, algorithm, depth, elements, mode, progress,
                  collective=ALLREDUCE) -> SolveResult:
    """The certified lift of a fixed construction, refused below its depth; a note when Omega > 1."""
    notes = []
    tree_depth = base.n_rounds // 2
    if depth is not None and depth < tree_depth:
        # a SynthError: as an OptionError the CLI would say '--depth 1 is below ...', not today's line
        raise SynthError(f"depth {depth} is below this construction's depth {tree_depth} on {topology.name}")
    progress(f"checking the lifted schedule ({base.n_transmissions * group.order:,} transmissions)")
    cert = certify(collective_half(base, collective), group, elements, mode=mode,
                   provenance={"algorithm": algorithm, "seed": None})
    if cert.claims["omega"] != "1":
        notes.append(f"omega = {cert.claims['omega']} on {topology.name}: the lift is not perfectly balanced")
    return SolveResult(cert, tree_depth, notes)


def _solve_user(topology, generators, elements, mode, exchange, allow_unbalanced, progress,
                collective=ALLREDUCE) -> SolveResult:
    """User graphs: a shortest-path tree lifted by the given or a searched group."""
    if exchange:
        raise OptionError("exchange is defined on tori only")
    progress("verifying the given group" if generators is not None else "searching the automorphisms")
    base = None

    def rounds():   # built once nauty has the group: a graph over the search's limits is refused first
        nonlocal base
        base = shortest_path_tree(topology)
        return round_incidences(collective_half(base, collective))
    try:
        group = user_group(topology, generators, rounds=rounds)
    except GroupError as exc:
        if generators is not None or allow_unbalanced or topology.n_vertices > PACKING_MAX_VERTICES:
            raise
        # no usable symmetry at all: the packing model needs none (the trivial group lifts nothing)
        return SolveResult(*solve_packed(topology, trivial_group(topology), elements, mode, progress, collective,
                                         f"{exc}".rstrip(".")))
    base = base or shortest_path_tree(topology)
    cert = certify(collective_half(base, collective), group, elements, mode=mode,
                   provenance={"algorithm": "shortest-path-tree", "seed": None})
    notes = [f"group of order {group.order} with {group.n_link_orbits} link orbit(s)"]
    if cert.claims["omega"] != "1":
        if not allow_unbalanced:
            found = "given" if generators is not None else "found within the limits"
            why = (f"no symmetry {found} balances a shortest-path tree on {topology.name} (best omega = "
                   f"{cert.claims['omega']} with a group of order {group.order})")
            if topology.n_vertices <= PACKING_MAX_VERTICES:
                try:
                    return SolveResult(*solve_packed(topology, group, elements, mode, progress, collective,
                                                     f"{why}; `allow_unbalanced` keeps that schedule"))
                except SynthError as exc:
                    why = f"{why}, and {exc}"
            raise SynthError(f"{why}; pass `generators` (of a group that does) or `allow_unbalanced` to get that "
                             "schedule anyway")
        notes.append(f"unbalanced: omega = {cert.claims['omega']}")
    return SolveResult(cert, base.n_rounds // 2, notes)


def _solve_damaged(topology, depth, elements, mode, exchange, progress, generators, time_limit,
                   collective=ALLREDUCE) -> SolveResult:
    """Failed links or chips: the packing model, lifted by the residual group (:mod:`synth.solving.packing`)."""
    if exchange:
        raise OptionError("exchange is defined on healthy tori; the packing model builds trees")
    if generators is not None:
        group = residual_group(topology, user_group(topology.healthy, generators))
    else:
        group = default_group(topology)
        if group is None:   # a user graph without generators: search the healthy graph's group, then filter it
            group = residual_group(topology, user_group(topology.healthy))
    progress(f"residual group of order {group.order}")
    return SolveResult(*solve_packed(topology, group, elements, mode, progress, collective,
                                     topology.failures.describe(), time_limit, depth))
