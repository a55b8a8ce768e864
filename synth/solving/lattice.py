"""Schedules on lattice tori and grids, through the constructions synth already has.

* A lattice torus whose group (:func:`synth.symmetry.lattice.lattice_gamma`) is regular on the links
  (the twisted tori): the BFS tree from 0 lifts to Ψ = Θ = Ω = 1 in ``2H`` rounds (the balance
  lemma), or, with ``exchange``, the BFS forest on an adjacent pair whose joint eccentricity is
  ``H - 1`` plus the exchange, ``2H - 1`` rounds.
* A lattice torus with several link orbits: the balanced families of :mod:`synth.models.balance`,
  as on rectangular tori.
* Meshes and mixed wrap (no transitive symmetry): the shortest-path tree from a centre vertex,
  lifted by the grid's reflections and translations; or weighted BFS trees from the centre
  vertices when the balance model finds a better family.  The result is reported as measured:
  Ω and the fraction of the volume bound ``2N(p - 1) / |E|`` (element-transmissions per link: no
  one-hop allreduce moves less, and none spreads them more evenly) that the bandwidth term reaches.

Examples
--------
>>> from synth.topology.lattice import twisted
>>> from synth.solving.request import SolveRequest
>>> req = SolveRequest(twisted((2, 4)))
>>> p = plan_lattice(req)
>>> p.construction, p.group_name
('sp', 'lattice-gamma')
>>> r = p.build(req, p)
>>> c = r.certificate.claims
>>> c["rounds"], c["psi"], c["theta"], c["omega"], r.depth
(4, '1', '1', '1', 2)
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from synth.check.claims import certify
from synth.errors import OptionError, SynthError
from synth.schedule.collective import collective_half
from synth.schedule.forest import bfs_forest, exchange_schedule, tree_schedule
from synth.schedule.user import shortest_path_tree
from synth.solving.balanced import balanced_family
from synth.solving.lattice_khop import plan_lattice_khop
from synth.solving.packing import certified_fraction, plan_packing
from synth.solving.request import Plan, SolveResult
from synth.solving.torus import lifted_result
from synth.symmetry.lattice import LATTICE_GROUPS, grid_group

__all__ = ["plan_lattice", "build_lattice_tree", "build_grid", "volume_fraction", "exchange_pair"]


def volume_fraction(claims) -> Fraction:
    """The volume bound ``2N(p-1)/|E|`` over the certificate's bandwidth term (1 = no link carries more).

    >>> volume_fraction({"elements": 96, "compute_nodes": 24, "links": 96, "bandwidth_term": 46})
    Fraction(1, 1)
    """
    bound = Fraction(2 * claims["elements"] * (claims["compute_nodes"] - 1), claims["links"])
    return bound / Fraction(claims["bandwidth_term"])


def exchange_pair(t):
    """An adjacent pair ``(0, b)`` of least joint eccentricity, and that eccentricity (BFS from the pair)."""
    best = None
    for e in np.flatnonzero(t.link_src == 0).tolist():
        b = int(t.link_dst[e])
        ecc = int(t.bfs([0, b]).max())
        if best is None or ecc < best[2]:
            best = (0, b, ecc)
    return best


def _one_hop(t):
    return lambda u, w: t.link_ids([u], [w])


def plan_lattice(req) -> Plan:
    """The plan for a :class:`~synth.topology.lattice.LatticeTorus` (module docstring); raises the option errors a
    solve would."""
    t, depth = req.topology, req.depth
    H = t.diameter
    khop = depth is not None and depth < H
    if req.start is not None and not (khop and not req.exchange):
        raise OptionError("start continues a k-hop tree solve: it needs `depth` below the diameter and no `exchange`")
    if not t.is_vertex_transitive:
        return _plan_grid(req, khop)
    name = req.group or "gamma"
    if name not in LATTICE_GROUPS:
        raise OptionError(f"group must be one of {', '.join(LATTICE_GROUPS)} on {t.name}, got {str(name)[:40]!r}")
    req.say(f"verifying the group ({name})")
    grp = LATTICE_GROUPS[name](t)
    if khop:
        return plan_lattice_khop(req, grp)
    notes, exchange, pair = [], req.exchange, None
    if exchange:
        pair = exchange_pair(t)
        if 2 * pair[2] + 1 >= 2 * H:
            notes.append(f"no adjacent pair of {t.name} is nearer to every node than one node is (joint "
                         f"eccentricity {pair[2]}): 2H = {2 * H} rounds is already the lower bound; returning "
                         "SP-allreduce")
            exchange, pair = False, None
    kind = grp.spec["kind"]
    if grp.is_regular:
        return Plan("exchange" if exchange else "sp", f"the {kind} group of {t.name} is regular on the links",
                    kind, ("forest-exchange" if exchange else "sp-allreduce",), build_lattice_tree, grp,
                    notes=tuple(notes), depth=depth, exchange=exchange, prepared=pair)
    return Plan("balanced-family", f"the {kind} group of {t.name} has {grp.n_link_orbits} link orbits",
                kind, ("balanced-forest-exchange" if exchange else "balanced-bfs-trees",), build_lattice_tree, grp,
                solves=True, time_limit=req.time_limit, notes=tuple(notes), depth=depth, exchange=exchange,
                prepared=pair)


def build_lattice_tree(req, plan) -> SolveResult:
    """SP-allreduce, the forest plus exchange or a balanced family on a vertex-transitive lattice torus."""
    t, grp, notes = req.topology, plan.group, list(plan.notes)
    claims, depth_out = {}, t.diameter if plan.prepared is None else plan.prepared[2]
    if plan.construction == "exchange":
        a, b, ecc = plan.prepared
        base = exchange_schedule(t, bfs_forest(t, [a, b]), a, b, route=_one_hop(t),
                                 label=f"BFS forest + exchange, roots {a} and {b}, depth {ecc}")
        algorithm = "forest-exchange"
    elif plan.construction == "sp":
        base = tree_schedule(t, bfs_forest(t, [0]), 0, route=_one_hop(t), label=f"SP BFS tree, root 0, depth "
                             f"{t.diameter}")
        algorithm = "sp-allreduce"
    else:
        base, algorithm, claims, more = balanced_family(t, grp, plan.exchange, req.time_limit, req.seed, req.progress)
        notes.extend(more)
    provenance = {"algorithm": algorithm, "group": grp.spec["kind"], "seed": req.seed if claims else None}
    return lifted_result(req, base, grp, claims, provenance, depth_out, notes)


def _plan_grid(req, khop) -> Plan:
    """Meshes and mixed wrap: the better (by fraction of the certified bandwidth bound) of the lifted
    shortest-path tree and the packing model's trees (:mod:`synth.solving.packing`).

    A ``depth`` below the diameter has no lifted k-hop tree here (no group transitive on the nodes):
    the depth-bounded packing LP (:mod:`synth.models.packing.depth`) builds the schedule instead."""
    t = req.topology
    if req.exchange:
        raise OptionError(f"exchange needs a vertex-transitive graph; {t.name} has a side that does not wrap")
    if khop:
        why = (f"depth {req.depth} is below the diameter {t.diameter} of {t.name}, which has a side that does not "
               "wrap (no node-transitive group lifts a k-hop tree)")
        return plan_packing(req, t, None, why, req.time_limit, req.depth)
    req.say("building the grid group (reflections and wrapped translations)")
    grp = grid_group(t)
    base = shortest_path_tree(t)
    cert = certify(collective_half(base, req.collective), grp, req.elements, mode=req.mode,
                   provenance={"algorithm": "shortest-path-tree", "group": grp.spec["kind"], "seed": None})
    reason = f"{t.name} is not vertex-transitive (a side does not wrap)"
    packing = None
    if cert.claims["omega"] != "1":
        try:   # trees, owners and shares chosen by an LP where symmetry cannot balance
            packing = plan_packing(req, t, None, reason, req.time_limit, None)
        except SynthError as exc:
            req.say(f"packing model: {exc}")
    if packing is None:
        return Plan("grid-tree", f"{reason}: the lifted shortest-path tree (omega = {cert.claims['omega']})",
                    grp.spec["kind"], ("shortest-path-tree",), build_grid, grp, prepared=(base, cert, None))
    return Plan("grid-tree", f"{reason}: the lifted shortest-path tree has omega = {cert.claims['omega']}; then "
                f"{packing.construction} ({packing.reason}), kept if it reaches more of the bound",
                grp.spec["kind"], ("shortest-path-tree",) + packing.algorithms, build_grid, grp, solves=True,
                time_limit=req.time_limit, prepared=(base, cert, packing))


def build_grid(req, plan) -> SolveResult:
    """The lifted shortest-path tree of a grid, or the packing model's schedule when it reaches more."""
    base, cert, packing = plan.prepared
    t, grp = req.topology, plan.group
    if packing is not None:
        try:
            packed = packing.build(req, packing)
        except SynthError as exc:
            req.say(f"packing model: {exc}")
        else:
            if certified_fraction(packed.certificate) > certified_fraction(cert):
                return packed
    c = cert.claims
    frac = volume_fraction(c)
    notes = [f"{t.name} is not vertex-transitive (a side does not wrap): group {grp.spec['kind']} of order "
             f"{grp.order} with {grp.n_link_orbits} link orbits; best omega found = {c['omega']}, bandwidth term "
             f"{c['bandwidth_term']} = {float(frac):.1%} of the volume bound 2N(p-1)/|E| (the best synth finds, "
             "not a proven optimum; the Ring baseline, synth baseline ring, spreads the volume more evenly in "
             "2(p-1) rounds)"]
    return SolveResult(cert, base.n_rounds // 2, notes)
