"""HyperX, spine-leaf, user graphs and damaged networks: their plans and fixed constructions.

HyperX gets the windmill (2-D) or the coordinate BFS tree, spine-leaf the shortest-path star, each
lifted by its closed-form group; a user graph a shortest-path tree lifted by its given or searched
group, or the packing model (:mod:`synth.solving.packing`) when no symmetry balances it; a damaged
network (failed links or chips) the packing model under its residual group.  A user graph whose links
differ in bandwidth goes to the packing model, whose rounds last as long as their slowest link's load
over bandwidth: a lift balanced link by link may still wait on its slow links.

Examples
--------
>>> from synth.solving.request import SolveRequest
>>> from synth.topology.hyperx import parse_hyperx
>>> p = plan_hyperx(SolveRequest(parse_hyperx("4x4")))
>>> p.construction, p.algorithms, p.solves
('hyperx-tree', ('windmill',), False)
"""

from __future__ import annotations

from dataclasses import replace

from synth.check.claims import certify
from synth.errors import GroupError, OptionError, SynthError
from synth.schedule.collective import collective_half
from synth.schedule.hyperx import hyperx_tree
from synth.schedule.spineleaf import spine_leaf_star
from synth.schedule.user import round_incidences, shortest_path_tree
from synth.solving.packing import plan_packing
from synth.solving.request import Plan, SolveResult
from synth.solving.rounds import unequal_links
from synth.symmetry.hyperx import hyperx_group
from synth.symmetry.residual import trivial_group
from synth.symmetry.spec import default_group, lifting_group
from synth.symmetry.spineleaf import spine_leaf_group

__all__ = ["plan_hyperx", "plan_spine_leaf", "plan_user", "plan_damaged", "build_fixed", "build_user",
           "PACKING_MAX_VERTICES"]

#: user graphs up to this size that no symmetry balances go to the packing model (its layered LP has a
#: variable per owner and parent choice, with no healthy schedule to start from); larger ones are refused
PACKING_MAX_VERTICES = 1024


def _no_exchange(topology, exchange):
    if exchange:
        raise OptionError(f"exchange is defined on tori; {topology.name} is not one")


def plan_hyperx(req) -> Plan:
    """HyperX: the windmill (2-D) or coordinate BFS tree, lifted by the HyperX group."""
    t = req.topology
    _no_exchange(t, req.exchange)
    req.say("verifying the HyperX group")
    algorithm = "windmill" if t.ndim == 2 else "coordinate-tree"
    return Plan("hyperx-tree", f"{t.name}: the {algorithm} balances under the HyperX group", "hyperx", (algorithm,),
                build_fixed, hyperx_group(t), depth=req.depth, prepared=hyperx_tree(t))


def plan_spine_leaf(req) -> Plan:
    """Spine-leaf: the shortest-path star, lifted by the host and leaf shifts."""
    t = req.topology
    _no_exchange(t, req.exchange)
    req.say("verifying the spine-leaf group")
    return Plan("spine-leaf-star", f"{t.name}: the shortest-path star under the host and leaf shifts", "spine-leaf",
                ("spine-leaf-star",), build_fixed, spine_leaf_group(t), depth=req.depth, prepared=spine_leaf_star(t))


def build_fixed(req, plan) -> SolveResult:
    """The certified lift of a fixed construction (``plan.prepared``), refused below its depth; a note when
    Omega > 1."""
    t, group, base = req.topology, plan.group, plan.prepared
    tree_depth = base.n_rounds // 2
    if req.depth is not None and req.depth < tree_depth:
        # a SynthError: as an OptionError the CLI would say '--depth 1 is below ...', not today's line
        raise SynthError(f"depth {req.depth} is below this construction's depth {tree_depth} on {t.name}")
    req.say(f"checking the lifted schedule ({base.n_transmissions * group.order:,} transmissions)")
    cert = certify(collective_half(base, req.collective), group, req.elements, mode=req.mode,
                   provenance={"algorithm": plan.algorithms[0], "seed": None})
    notes = []
    if cert.claims["omega"] != "1":
        notes.append(f"omega = {cert.claims['omega']} on {t.name}: the lift is not perfectly balanced")
    return SolveResult(cert, tree_depth, notes)


def plan_user(req) -> Plan:
    """User graphs: a shortest-path tree lifted by the given or a searched group; the packing model when no
    symmetry balances it (and the graph is small enough, and ``allow_unbalanced`` is not given)."""
    t, generators = req.topology, req.generators
    if req.exchange:
        raise OptionError("exchange is defined on tori only")
    req.say("verifying the given group" if generators is not None else "searching the automorphisms")
    base = None

    def rounds():   # built once nauty has the group: a graph over the search's limits is refused first
        nonlocal base
        base = shortest_path_tree(t)
        return round_incidences(collective_half(base, req.collective))
    try:
        group = lifting_group(t, generators, rounds=rounds)
    except GroupError as exc:
        if generators is not None or req.allow_unbalanced or t.n_vertices > PACKING_MAX_VERTICES:
            raise
        # no usable symmetry at all: the packing model needs none (the trivial group lifts nothing)
        return plan_packing(req, t, trivial_group(t), f"{exc}".rstrip("."), req.time_limit, None)
    if unequal_links(t) and not req.allow_unbalanced and t.n_vertices <= PACKING_MAX_VERTICES:
        # a shortest-path tree routes by hops: on links of unequal bandwidth its lift waits on the slow ones
        why = (f"the links of {t.name} differ in bandwidth, which a shortest-path tree (routes by hops) ignores")
        return _user_packing(req, t, group, why, f"{why}; `allow_unbalanced` keeps that tree")
    base = base or shortest_path_tree(t)
    cert = certify(collective_half(base, req.collective), group, req.elements, mode=req.mode,
                   provenance={"algorithm": "shortest-path-tree", "seed": None})
    omega = cert.claims["omega"]
    tree = Plan("shortest-path-tree", f"a group of order {group.order} with {group.n_link_orbits} link orbit(s)"
                + ("" if omega == "1" else f" leaves the lift unbalanced (omega = {omega}); `allow_unbalanced`"),
                group.name, ("shortest-path-tree",), build_user, group, prepared=(base, cert, None))
    if omega == "1" or req.allow_unbalanced:
        return tree
    why = _unbalanced(t, generators, group, omega)
    if t.n_vertices > PACKING_MAX_VERTICES:
        return _refused(tree, why)
    try:
        return _user_packing(req, t, group, why, f"{why}; `allow_unbalanced` keeps that schedule")
    except SynthError as exc:
        return _refused(tree, f"{why}, and {exc}")


def _unbalanced(t, generators, group, omega) -> str:
    """Why a lifted shortest-path tree is not kept: the given group, the one searched within the limits, or the
    kind's own closed-form group (GPU servers, TPU slices; named) leaves it unbalanced.

    >>> from synth.topology.gpu import gpu_fabric
    >>> from synth.symmetry.spec import default_group, lifting_group
    >>> t = gpu_fabric("mi250", 1)
    >>> _unbalanced(t, None, lifting_group(t), "56/15")
    'the group server and GPU symmetries(mi250:1) (order 4) does not balance a shortest-path tree on mi250:1 (omega = 56/15)'
    """
    if generators is None and default_group(t) is not None:
        return (f"the group {group.name} (order {group.order}) does not balance a shortest-path tree on {t.name} "
                f"(omega = {omega})")
    found = "given" if generators is not None else "found within the limits"
    return (f"no symmetry {found} balances a shortest-path tree on {t.name} (best omega = {omega} with a group of "
            f"order {group.order})")


def _user_packing(req, t, group, why, reason) -> Plan:
    """The packing plan of a user graph (its LPs bounded by the request's time limit), its build refusing with
    ``why`` when the model fails."""
    packing = plan_packing(req, t, group, reason, req.time_limit, None)
    return replace(packing, build=_build_user_packed, prepared=(packing, why))


def _refuse(why):
    """Refuse an unbalanced user graph, saying ``why`` and what would get a schedule."""
    raise SynthError(f"{why}; pass `generators` (of a group that does) or `allow_unbalanced` to get that schedule "
                     "anyway")


def _refused(tree, why) -> Plan:
    """A plan whose build refuses (:func:`_refuse`): no balanced schedule, and no packing model for it."""
    return Plan("shortest-path-tree", f"refused: {why}", tree.group_name, (), build_user, tree.group,
                prepared=(None, None, why))


def _build_user_packed(req, plan) -> SolveResult:
    """The packing plan of an unbalanced user graph; when the model fails, the refusal says why."""
    packing, why = plan.prepared
    try:
        return packing.build(req, packing)
    except SynthError as exc:
        _refuse(f"{why}, and {exc}")


def build_user(req, plan) -> SolveResult:
    """The certified lift of a user graph's shortest-path tree (certified when planned), or the refusal."""
    base, cert, refusal = plan.prepared
    if refusal is not None:
        _refuse(refusal)
    notes = [f"group of order {plan.group.order} with {plan.group.n_link_orbits} link orbit(s)"]
    if cert.claims["omega"] != "1":
        notes.append(f"unbalanced: omega = {cert.claims['omega']}")
    return SolveResult(cert, base.n_rounds // 2, notes)


def plan_damaged(req) -> Plan:
    """Failed links or chips: the packing model, lifted by the residual group (:mod:`synth.solving.packing`)."""
    t = req.topology
    if req.exchange:
        raise OptionError("exchange is defined on healthy tori; the packing model builds trees")
    try:
        group = lifting_group(t, req.generators)
    except GroupError:
        if req.generators is not None:
            raise
        # the healthy graph has no usable symmetry (a user graph nauty finds no group of): the packing model
        # needs none, as on the healthy graph (plan_user)
        group = trivial_group(t)
    req.say(f"residual group of order {group.order}")
    return plan_packing(req, t, group, t.failures.describe(), req.time_limit, req.depth)
