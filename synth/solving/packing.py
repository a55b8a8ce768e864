"""The solve of a graph that symmetry cannot balance: the packing model of :mod:`synth.models.packing`.

:func:`plan_packing` decides, without solving, which packing model a request gets (the layered LP, then
timed trees; routed trees on switches or one-way links; depth-bounded trees below the layered depth),
and :func:`build_packed` runs it, for a damaged topology (failed links or chips,
:mod:`synth.topology.failures`), a grid and a user graph whose group leaves a shortest-path tree
unbalanced.  The models return their schedules uncertified (:class:`synth.models.packing.result.Packed`);
:func:`certify_packed` certifies each once.  The layered LP chooses owners' shares and shortest-path
parents, lifted by whatever symmetry remains (the residual group), and its integer rounding is certified
like any schedule.  The notes say why this path was taken, the LP's value against the volume bound (the best of the
layered class) and what the certified schedule reaches.  Where the timed trees' master LP has at most
:data:`TIMED_MAX_ROWS` load rows, timed trees (:mod:`synth.models.packing.timed`: more rounds, trees not
layered by distance) follow by column generation, and the better certified schedule is kept.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> t = parse_torus("4x4"); d = damage(t, parse_failures(t, links=["0-1"]))
>>> from synth.solving.request import SolveRequest
>>> req = SolveRequest(d)
>>> p = plan_packing(req, d, default_group(d), "1 failed link", None, None)
>>> p.construction, p.algorithms, p.solves
('timed-packing', ('layered-packing', 'timed-packing'), True)
>>> r = p.build(req, p)
>>> r.certificate.provenance["algorithm"], r.depth
('timed-packing', 8)
>>> r.notes[0]
'1 failed link: no symmetry balances this network; the packing model chooses trees, owners and shares (layered LP, group of order 4)'
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from fractions import Fraction

from synth.check.claims import certify
from synth.errors import OptionError, SynthError
from synth.schedule.collective import collective_half
from synth.schedule.data import ALLREDUCE
from synth.solving.limits import check_local_size, check_pairs
from synth.solving.packing_notes import class_bound_note, lp_notes, share_note
from synth.solving.periodic import damaged_everywhere, fewest_rounds_network, local_network
from synth.solving.reference import healthy_reference
from synth.solving.request import Plan, SolveResult, quiet
from synth.solving.rounds import (TIMED_EXTRA_ROUNDS, TIMED_MAX_ROWS, depth_note, least_rounds, timed_extra,
                                  timed_rounds, unequal_links)
from synth.symmetry.spec import default_group

__all__ = ["plan_packing", "build_packed", "certify_packed", "certified_fraction", "PackingPrep",
           "DEFAULT_UNITS", "FULL_LP_ARCS", "LOCAL_RADIUS", "FREE_SHARES_ARCS", "TIMED_FABRIC_PURGE",
           "TIMED_FABRIC_WARM", "TIMED_STARTS", "UNEQUAL_UNITS", "TIMED_UNITS", "TIMED_ITERATIONS", "units"]

#: units per owner in the layered and routed rounding: 1,024 keeps the certified term within about 0.1 % of the LP's
DEFAULT_UNITS = 1024
#: parent choices up to which the whole layered LP is solved (an 8x8 torus has about 4,000 and a 16x16 one
#: 65,000 with one failed link, 129,024 with 8: beyond 20,000 by an interior point with crossover, 28-30 CPU s
#: there, where the simplex took 200 s); beyond (a 32x32 torus: a million), the local LP around the failures,
#: unless they are near most vertices (:func:`~synth.solving.periodic.damaged_everywhere`)
FULL_LP_ARCS = 140_000
LOCAL_RADIUS = 3
#: parent choices up to which the local LP keeps the shares free (every load row of the LP is then back:
#: 9 s on a 16x16 torus with one failure, 75.5 % of the bound against 75.1 % with equal shares; on 16x16
#: with 8 failed links, 129,024 choices, HiGHS ended without a solution after 46 s)
FREE_SHARES_ARCS = 100_000
#: units per owner of the timed trees where links differ, whose damaged masters end interior weighing every column
#: (four MI250 nodes, a failed NIC: rounding lost 0.51 point with 8,192, 0.03 with this)
UNEQUAL_UNITS = 131072
#: units per owner of the timed trees on tori: with 1,024 the schedule lost a few tenths of a point of the LP's value
#: (``python bench/timed_units.py --set full``: 6x6 with a failed link 99.60 % of the bound against 99.98 % with
#: this; 16x16x16's periodic network 91.27 against 91.51 %, the LP 91.52 %), for a few more trees
TIMED_UNITS = 16384
#: column generation iterations of the timed LP at most, so that the time limit (CPU seconds) ends it: four MI250
#: nodes at R = 32 take about 170 in 60 CPU s, 32x32's periodic network 300 in 780 (300 stopped it at 88.05 %)
TIMED_ITERATIONS = 2000
#: where links differ, the timed pricing starts from each owner's this many heaviest columns (four MI250 nodes,
#: R = 24, 60 CPU s: 77.98 % of the volume bound against 77.53 % from the heaviest column alone)
TIMED_FABRIC_WARM = 3
#: the timed pricing takes the fixed starting labellings in the first this many iterations only (four MI250 nodes:
#: 77.98 % against 77.19 % every fourth iteration); on tori, with one pricing point (no smoothing), a third of the
#: time per iteration: 16x16x16 with a failed link at 240 CPU s 92.69 % against 87.16 %, 16x16 at 60 s 89.78 % (87.41)
TIMED_STARTS = 5
#: idle solves before a column leaves the timed master where links differ (tori: 4; mi250:4 nic 74.70 against 74.08 %)
TIMED_FABRIC_PURGE = 8


@dataclass(frozen=True, eq=False)
class PackingPrep:
    """What :func:`plan_packing` computed for :func:`build_packed`: the network, its group, why it is packed,
    the arcs (layered or routed), the depth bound, the timed trees' reduce rounds ``R`` (None: no timed
    trees) and the LP's time limit (None: none)."""

    topology: object
    group: object
    reason: str
    data: object
    depth: int | None
    R: int | None
    time_limit: float | None
    periodic: object = None   # the periodic network this one is (synth.solving.periodic.Periodic), if any
    # a dict the builds on this network share: the first layered LP solved is kept there (``synth solve --size``:
    # each timed candidate starts from the layered candidate's instead of solving it again in its own share)
    shared: dict | None = None


def plan_packing(req, topology, group, reason, time_limit, depth, periodic=None) -> Plan:
    """The packing plan for ``topology`` lifted by ``group`` (None: the built-in or residual group).

    ``reason`` says why the network is packed; ``time_limit`` bounds the LPs (None: none, and 600 CPU s for
    the timed trees); ``depth`` the trees' depth (None: none); ``periodic``: the
    :class:`~synth.solving.periodic.Periodic` network ``topology`` is, whose ``R`` the timed trees' reduce rounds
    are at least where they fit (else :func:`~synth.solving.rounds.least_rounds`) and whose ``leaves`` no tree
    forwards through.  A network whose layered LP its limits refuse (:mod:`synth.solving.limits`: too little
    symmetry left on a pod) is planned on its failures repeated on cells where any fit
    (:func:`~synth.solving.periodic.local_network`).
    """
    # the models load on demand: they pull in the solvers, which the other constructions never need
    from synth.models.packing import layered_arcs
    from synth.models.packing.depth import hops_per_level
    from synth.models.packing.routed import needs_routes
    from synth.models.packing.master import rows_per_round

    group = default_group(topology) if group is None else group
    name = "trivial" if group is None else group.name
    if needs_routes(topology):
        return _plan_routed(req, topology, group, reason, time_limit, depth)
    leaves = periodic.leaves if periodic is not None and periodic.leaves else None
    if periodic is None and (refusal := _refusal(topology, group)) is not None:
        # too little symmetry left: the local LP on its failures repeated on cells, if any fit (not depth-bounded)
        if depth is not None or (p := local_network(topology)) is None:
            raise refusal
        return plan_packing(req, p.topology, p.group, f"{reason} ({p.note()})", time_limit, depth, p)
    check_pairs(topology, group, leaves)
    data = layered_arcs(topology, group, leaves)   # one BFS per represented owner: built once, for H and for the LP
    if depth is not None and depth < data.H:
        m, levels = hops_per_level(data.H, depth)
        prep = PackingPrep(topology, group, reason, data, depth, None, time_limit)
        return Plan("depth-packing", f"{reason}; depth {depth} below the layered trees' H = {data.H}: arcs of up to "
                    f"{m} hops, {levels} levels", name, ("depth-bounded-packing",), build_packed, group,
                    solves=True, time_limit=time_limit, depth=depth, prepared=prep)
    per_round = rows_per_round(topology, group)
    # a periodic network's rounds were chosen within its own rows (a long solve's may pass the timed master's limit)
    R, clipped = timed_rounds(data.H, depth, per_round,
                              least_rounds(topology, per_round) if periodic is None else periodic.R,
                              planned_rows=0 if periodic is None else periodic.rows)
    if clipped is False and req.collective == ALLREDUCE and depth is None:   # its failures on a lattice, if they fit
        if (p := fewest_rounds_network(topology, data.H, data.H + timed_extra(data.H), data.H + TIMED_EXTRA_ROUNDS,
                                       time_limit)) is not None:
            return plan_packing(req, p.topology, p.group, f"{reason} ({p.note()})", time_limit, depth, p)
    if clipped is False and periodic is None and depth is None and (p := _balanced_cells(topology, data)) is not None:
        return plan_packing(req, p.topology, p.group, f"{reason} ({p.note()})", time_limit, depth, p)
    rows = R * per_round
    timed = req.collective == ALLREDUCE and clipped is not False
    notes = tuple(n for n in [depth_note(depth, data.H, R, clipped, req.collective, per_round)] if n)
    prep = PackingPrep(topology, group, reason, data, depth, R if timed else None, time_limit, periodic)
    if timed:
        return Plan("timed-packing", f"{reason}; the timed trees' master LP ({rows:,} load rows, {R} reduce "
                    "rounds) follows the layered LP unless its schedule meets the bound",
                    name, ("layered-packing", "timed-packing"), build_packed, group, solves=True,
                    time_limit=time_limit, notes=notes, depth=depth, prepared=prep)
    why = "not an allreduce" if req.collective != ALLREDUCE else f"{rows:,} load rows > {TIMED_MAX_ROWS:,}"
    return Plan("layered-packing", f"{reason}; the layered LP (no timed trees: {why})", name, ("layered-packing",),
                build_packed, group, solves=True, time_limit=time_limit, notes=notes, depth=depth, prepared=prep)


def _balanced_cells(topology, data):
    """The cells of :func:`~synth.solving.periodic.local_network` where the local LP on ``topology`` (its arcs
    ``data``) would keep healthy trees that do not balance its links (SP-allreduce on a torus whose sides differ,
    whose balanced family is too large for the owners the LP represents: 16x20x28 with a failed link, 35.55 % of
    the bound), or None."""
    if _local_reference(topology, data, balanced=True) is not None or _local_reference(topology, data) is None:
        return None
    return local_network(topology)


def _refusal(topology, group):
    """The error that refuses the layered LP on ``topology`` lifted by ``group`` before it is built (its (owner,
    vertex) pairs, or the schedule of the local LP it would take), or None."""
    from synth.models.packing.layered import root_reps   # solvers, on demand

    try:
        check_pairs(topology, group, None)
        owners = root_reps(topology, group).size
        if owners * topology.n_vertices > FULL_LP_ARCS and not damaged_everywhere(topology, LOCAL_RADIUS) \
                and (reference := healthy_reference(topology, owners)) is not None:
            check_local_size(topology, group, owners, reference)
    except SynthError as exc:
        return exc
    return None


def _plan_routed(req, topology, group, reason, time_limit, depth) -> Plan:
    """Switches or one-way links: the routed LP, then (an allreduce, switches, links in pairs) timed trees over
    the routes through the switches when their master LP fits."""
    from synth.models.packing.routed import needs_routes, routed_arcs   # solvers, on demand
    from synth.models.packing.master import rows_per_round

    what, name = needs_routes(topology), "trivial" if group is None else group.name
    data = routed_arcs(topology, group)
    if depth is not None and depth < data.H_up:
        raise OptionError(f"depth {depth} is below the routed trees' depth {data.H_up} (compute hops) on "
                          f"{topology.name}: the depth-bounded packing model needs every linked vertex to "
                          "compute and links in pairs")
    per_round = rows_per_round(topology, group)
    R, clipped = timed_rounds(data.H_up, depth, per_round, least_rounds(topology, per_round), unequal_links(topology))
    timed = req.collective == ALLREDUCE and what == "switches" and clipped is not False
    prep = PackingPrep(topology, group, reason, data, depth, R if timed else None, time_limit)
    if timed:
        return Plan("timed-packing", f"{reason}; {what}: trees whose arcs are routes (the routed LP), then timed "
                    f"trees over those routes ({R * per_round:,} load rows, {R} reduce rounds)", name,
                    ("routed-packing", "timed-packing"), build_packed, group, solves=True, time_limit=time_limit,
                    depth=depth, prepared=prep)
    return Plan("routed-packing", f"{reason}; {what}: trees whose arcs are routes", name, ("routed-packing",),
                build_packed, group, solves=True, time_limit=time_limit, depth=depth, prepared=prep)


def certified_fraction(cert) -> Fraction:
    """The share of the certified bandwidth bound a certificate's schedule reaches (1: it meets the bound)."""
    return Fraction(cert.claims["bandwidth_fraction"])


def certify_packed(packed, elements=None, mode="auto", collective=ALLREDUCE, progress=quiet, dropped=()):
    """Certify a packing model's schedule (:class:`synth.models.packing.result.Packed`), its ``collective`` half, with
    its solver claims and the writer's hint of the trees it was rounded onto (for that very schedule only);
    ``dropped``: the failed chips its trees all have as leaves (:mod:`synth.check.dropped`)."""
    base = collective_half(packed.base, collective)
    progress(f"checking the packed schedule ({base.n_transmissions * packed.group.order:,} transmissions)")
    cert = certify(base, packed.group, elements, mode=mode, solver=packed.claims,
                   provenance={"algorithm": packed.algorithm, "group": packed.group.name, "seed": None},
                   dropped=dropped)
    return cert if packed.tree_images is None else replace(cert, tree_images=packed.tree_images)


def build_packed(req, plan) -> SolveResult:
    """Run a packing plan (:func:`plan_packing`): the certified schedule, its depth and the notes."""
    prep = plan.prepared
    try:
        if plan.algorithms[0] == "routed-packing":
            return _build_routes(req, prep, f"routed LP over {_needs(prep.topology)}",
                                 {"max_routes_per_pair": _max_routes()}, prep.data)
        if plan.construction == "depth-packing":
            return _build_depth(req, prep)
        return _build_layered(req, prep, plan.notes)
    except SynthError as exc:
        if req.collective == ALLREDUCE:
            raise
        raise SynthError(f"collective {req.collective}: {exc}") from None


def _needs(topology):
    from synth.models.packing.routed import needs_routes   # solvers, on demand

    return needs_routes(topology)


def _max_routes():
    from synth.models.packing.routed import MAX_ROUTES   # solvers, on demand

    return MAX_ROUTES


def units(req, data, default: int, placed: int = 1) -> int:
    """Units per represented owner of a packing schedule's rounding over the arcs ``data`` (its ``n_roots`` owners
    lifted by its ``group``, each unit ``placed`` times at most: twice for the timed trees' mirrored windows):
    ``default``, or fewer where the lifted units would pass ``req.elements``, so that every chunk (a unit or more)
    gets an element (``synth solve --size``: 1 MiB on 16x16x16 with four scattered failed links is 262,144
    elements for 576 represented owners lifted by a group of order 8, 56 units each, where 1,024 left chunks
    empty).

    >>> from synth.solving.request import SolveRequest
    >>> from synth.topology.torus import parse_torus
    >>> from types import SimpleNamespace
    >>> t = parse_torus("16x16x16"); data = SimpleNamespace(n_roots=576, group=SimpleNamespace(order=8))
    >>> units(SolveRequest(t), data, 1024), units(SolveRequest(t, elements=262144), data, 1024)
    (1024, 56)
    """
    if req.elements is None:
        return default
    lifted = data.n_roots * (1 if data.group is None else data.group.order) * placed
    return max(1, min(default, req.elements // lifted))


def _intro(prep, what) -> str:
    order = 1 if prep.group is None else prep.group.order
    return (f"{prep.reason + ': ' if prep.reason else ''}no symmetry balances this network; the packing model "
            f"chooses trees, owners and shares ({what}, group of order {order})")


def _pack_layered(req, prep, free, reference):
    """The layered LP's schedule (the local LP when ``reference`` is given), uncertified."""
    from synth.models.packing import pack   # solvers, on demand

    # the local LP's units follow the healthy trees where it kept their parents: each component is then a
    # healthy tree with a few changes, which the certificate stores as such (version 3)
    return pack(prep.data, units(req, prep.data, DEFAULT_UNITS), free_shares=free, time_limit=prep.time_limit,
                progress=req.progress, reference=reference, radius=_radius(prep.periodic),
                on_trees=reference is not None)


def _radius(periodic) -> int:
    """The local LP's free region: :data:`LOCAL_RADIUS` hops around each failure, or the ``periodic`` network's."""
    radius = None if periodic is None else periodic.radius
    return LOCAL_RADIUS if radius is None else radius


def _build_layered(req, prep, plan_notes=()) -> SolveResult:
    """The layered LP (the local LP on large networks), certified, then the timed trees where planned."""
    from synth.models.packing.classdual import with_class_bound   # the models load on demand: they pull in the solvers

    data, allreduce = prep.data, req.collective == ALLREDUCE
    reference = _local_reference(prep.topology, data, prep.periodic)
    if reference is not None:
        check_local_size(prep.topology, prep.group, data.n_roots, reference)
    # a reduce-scatter or allgather gives every node an equal block: every owner needs a share (free ones can be 0)
    free = (reference is None or data.n_arcs <= FREE_SHARES_ARCS) and allreduce
    if prep.shared is not None and "layered" in prep.shared:    # solved already for another candidate
        packed, cert, reference, class_bound = prep.shared["layered"]
    else:
        packed, cert, reference, class_bound = _solved_layered(req, prep, free, reference)
        if prep.shared is not None:
            prep.shared["layered"] = packed, cert, reference, class_bound
    timed = prep.R is not None and certified_fraction(cert) < 1   # nothing beats a schedule that meets the bound
    # the bound of the layered class (docs/bounds.md section 5) bounds the layered schedule only: where timed trees
    # follow, it waits until the layered schedule is kept (16x20x28's periodic network: 44 CPU s)
    class_bound = class_bound and data.leaves is None
    if class_bound and not timed:
        cert = with_class_bound(cert, packed.solution, req.progress, prep.time_limit)
    notes = [_intro(prep, "layered LP"), *plan_notes, *share_note(prep.topology, req.collective)]
    if reference is not None:   # the shares as solved (free ones fall back to equal when that LP fails)
        radius = _radius(prep.periodic)
        kept = f" ({reference.what})" if getattr(reference, "what", "") else ""
        notes.append(f"{data.n_arcs:,} parent choices: the LP changes the healthy trees{kept} only within "
                     f"{radius} hop{'s' * (radius > 1)} of a failure and where they were lost, with "
                     f"{'free' if packed.claims['free_shares'] else 'equal'} shares")
    notes += lp_notes("layered", packed, cert, req.collective, local=reference is not None,
                       periodic=data.leaves is not None, class_note=not timed)
    if timed:
        return _build_timed(req, prep, packed, cert, notes, class_bound)
    return SolveResult(cert, data.H, notes)


def _solved_layered(req, prep, free, reference) -> tuple:
    """``(packed, cert, reference, class_bound)``: the layered LP's schedule (the local LP's where ``reference`` is
    given, or where the whole LP ends without a solution: ``reference`` then the healthy trees it keeps and
    ``class_bound`` False, the dual needing the LP that failed), certified."""
    from synth.models.packing.layered import SIMPLEX_ARCS   # solvers, on demand

    data, class_bound = prep.data, True
    try:
        packed = _pack_layered(req, prep, free, reference)
    except SynthError:
        # past it: damaged everywhere; with leaves the local LP's healthy trees would forward through them
        if reference is not None or data.leaves is not None or not SIMPLEX_ARCS < data.n_arcs <= FULL_LP_ARCS:
            raise
        reference = healthy_reference(prep.topology, data.n_roots)   # the whole LP ended without a solution
        if reference is None:
            raise
        req.say("the whole layered LP found no solution; the local LP instead")
        packed = _pack_layered(req, prep, data.n_arcs <= FREE_SHARES_ARCS and req.collective == ALLREDUCE, reference)
        class_bound = False
    cert = certify_packed(packed, req.elements, req.mode, req.collective, req.progress, _dropped(prep))
    return packed, cert, reference, class_bound


def _local_reference(topology, data, periodic=None, balanced=False):
    """The healthy trees the local LP keeps on ``topology`` (its arcs ``data``; the ``periodic`` network it is, if
    any), or None for the whole LP: up to :data:`FULL_LP_ARCS` parent choices, where the failures are near most
    vertices (the local LP would free most of them), and on a periodic network with failed chips' copies (leaves)
    other than the local LP's cells (:func:`~synth.solving.periodic.local_network`, whose LP knows them: no parent,
    no share); ``balanced``: None also where only trees that do not balance the links would fit."""
    cells = periodic is not None and periodic.radius is not None
    if data.n_arcs <= FULL_LP_ARCS or (data.leaves is not None and not cells):
        return None
    if damaged_everywhere(topology, _radius(periodic), () if data.leaves is None else data.leaves):
        return None
    # the cells' network is the torus itself where only chips failed: its healthy network is then its own
    return healthy_reference(topology, data.n_roots, balanced, healthy=topology if cells and not hasattr(
        topology, "healthy") else None)


def _dropped(prep) -> tuple:
    """The failed chips a periodic network's schedule drops (leaves of every tree, :mod:`synth.check.dropped`)."""
    return () if prep.periodic is None else prep.periodic.dropped


def _build_depth(req, prep) -> SolveResult:
    """``depth`` below the layered trees' ``H``: arcs of up to ``ceil(H / depth)`` hops
    (:mod:`synth.models.packing.depth`)."""
    from synth.models.packing.arcs import TIME_LIMIT_HINT   # the models load with the solvers, on demand
    from synth.models.packing.depth import choose_depth_arcs, hops_per_level

    depth, time_limit = prep.depth, prep.time_limit
    m, levels = hops_per_level(prep.data.H, depth)
    req.say(f"depth bound {depth} below H = {prep.data.H}: arcs of up to {m} hops, {levels} levels")
    failed, deadline = None, None if time_limit is None else time.monotonic() + time_limit
    for data, restricted in choose_depth_arcs(prep.topology, depth, prep.group):
        left = None if deadline is None else max(deadline - time.monotonic(), 0.01)
        if failed is not None and left is not None and left < 1.0:   # the steps share the time limit
            break
        if failed is not None:
            req.say(f"{failed}; a smaller LP")
        try:
            res = _build_routes(req, replace(prep, time_limit=left), f"depth-bounded LP, arcs of up to {m} hops",
                                {"depth_bound": depth, "hops_per_arc": m, "restricted": restricted or None}, data)
        except SynthError as exc:   # the LP found no solution within the time limit: the next step is smaller
            failed = str(exc)
            continue
        return SolveResult(res.certificate, levels, res.notes + ([restricted] if restricted else []))
    if failed is not None and failed.endswith(TIME_LIMIT_HINT):
        raise SynthError(f"the depth-bounded LP on {prep.topology.name} found no solution within the time limit "
                         f"({time_limit:g} s, shared by every size of LP tried): {TIME_LIMIT_HINT}, or a larger "
                         "`depth` (arcs of fewer hops: a smaller LP)")
    raise SynthError(failed or f"no depth-bounded LP for depth {depth} on {prep.topology.name}")


def _build_routes(req, prep, what, claims, data) -> SolveResult:
    """Pack over the routed arcs ``data``, certify and say what it reached."""
    from synth.models.packing.routed import pack_routed   # solvers, on demand

    packed = pack_routed(data, units(req, data, DEFAULT_UNITS), free_shares=req.collective == ALLREDUCE,
                         time_limit=prep.time_limit, progress=req.progress, claims=claims)
    cert = certify_packed(packed, req.elements, req.mode, req.collective, req.progress)
    notes = [_intro(prep, what)] + lp_notes(data.kind, packed, cert, req.collective)
    if prep.R is not None and certified_fraction(cert) < 1:
        return _build_timed(req, prep, packed, cert, notes)
    return SolveResult(cert, data.H_up, notes)


def _build_timed(req, prep, layered, layered_cert, notes, class_bound=False) -> SolveResult:
    """Column generation over timed trees after the layered LP; the better certified schedule is kept (with the
    layered class's bound where ``class_bound`` and that is the layered one, :func:`_layered_kept`)."""
    from synth.models.packing.healthy_start import healthy_start   # solvers, on demand
    from synth.models.packing.timed import TimedOptions, solve_timed
    from synth.models.packing.timed_schedule import pack_timed

    data, R = layered.solution.data, prep.R
    H = data.H_up if hasattr(data, "H_up") else data.H      # the routed trees' compute hops, or the layered depth
    n_units = units(req, data, UNEQUAL_UNITS if unequal_links(prep.topology) else TIMED_UNITS, placed=2)
    limit = 600.0 if prep.time_limit is None else prep.time_limit
    options = (TimedOptions(max_iterations=TIMED_ITERATIONS, warm=TIMED_FABRIC_WARM,
                            starts=TIMED_STARTS, hierarchy=True, purge=TIMED_FABRIC_PURGE)
               if unequal_links(prep.topology) else
               TimedOptions(max_iterations=TIMED_ITERATIONS, starts=TIMED_STARTS, smooth=()))
    try:
        cpu = time.process_time()
        start = healthy_start(prep.topology, prep.group, data.roots, R, limit, req.progress, options=options)
        if start is not None:
            notes.append(f"timed trees: {start.note()}")
        spent = time.process_time() - cpu
        # a master that starts from the healthy trees takes seconds per solve, its crossover up to 30 more: four
        # MI250 nodes with a failed NIC 81.6 s for 60 without it (120.5 with), 1.044 of ForestColl either way
        sol = solve_timed(prep.topology, prep.group, R, time_limit=round(max(limit - spent, 0.25 * limit), 1),
                          layered=layered.solution, progress=req.progress,
                          options=options if start is None else replace(options, crossover=False),
                          columns=() if start is None else start.columns)
        cert = certify_packed(pack_timed(sol, n_units), req.elements, mode=req.mode, dropped=_dropped(prep))
    except SynthError as exc:
        notes.append(f"timed trees: {exc}; the layered schedule is kept")
        return _layered_kept(req, prep, (layered, layered_cert, H), notes, class_bound)
    better = certified_fraction(cert) > certified_fraction(layered_cert)
    notes.append(f"timed trees ({R} reduce rounds, {sol.x.size:,} columns, {sol.iterations} iterations, "
                 f"{sol.status}): {100 * sol.fraction:.2f} % of the volume bound by the LP, "
                 f"{100 * float(certified_fraction(cert)):.2f} % of the certified bound by the schedule; "
                 + ("this schedule is kept (not layered: the layered class's bound does not bound it, and "
                    "its certificate claims none)" if better else "the layered schedule is kept"))
    return SolveResult(cert, R, notes) if better else _layered_kept(req, prep, (layered, layered_cert, H), notes,
                                                                     class_bound)


def _layered_kept(req, prep, kept, notes, class_bound) -> SolveResult:
    """The layered schedule kept after the timed trees (``kept``: its packing, certificate and depth), with the
    layered class's bound where ``class_bound``."""
    from synth.models.packing.classdual import with_class_bound   # solvers, on demand

    layered, cert, H = kept
    if class_bound:
        cert = with_class_bound(cert, layered.solution, req.progress, prep.time_limit)
        notes.append(class_bound_note(cert))
    return SolveResult(cert, H, notes)
