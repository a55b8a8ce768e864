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
>>> cert, depth, notes = solve_lattice(twisted((2, 4)))
>>> c = cert.claims
>>> c["rounds"], c["psi"], c["theta"], c["omega"], depth
(4, '1', '1', '1', 2)
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from synth.check.claims import certify
from synth.errors import OptionError, SynthError
from synth.schedule.collective import collective_half
from synth.schedule.data import ALLREDUCE
from synth.schedule.forest import bfs_forest, exchange_schedule, tree_schedule
from synth.schedule.user import shortest_path_tree
from synth.solving.balanced import balanced_family
from synth.solving.lattice_khop import lattice_khop
from synth.symmetry.lattice import LATTICE_GROUPS, grid_group
from synth.solving.packing import solve_packed

__all__ = ["solve_lattice", "volume_fraction", "exchange_pair"]


def _quiet(_message):
    pass


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


def solve_lattice(t, depth=None, elements=None, mode="auto", exchange=False, progress=_quiet, group=None,
                  time_limit=60.0, seed=0, collective=ALLREDUCE, allow_unbalanced=True, solver="auto", start=None):
    """Build and certify the schedule of the module docstring on a :class:`~synth.topology.lattice.LatticeTorus`.

    Returns
    -------
    (Certificate, int, list)
        The certificate, the tree depth and the notes (:func:`synth.solving.solve` makes them a
        ``SolveResult``).
    """
    H = t.diameter
    khop = depth is not None and depth < H
    if start is not None and not (khop and not exchange):
        raise OptionError("start continues a k-hop tree solve: it needs `depth` below the diameter and no `exchange`")
    notes = []
    if not t.is_vertex_transitive:
        return _solve_grid(t, elements, mode, exchange, progress, time_limit, seed, collective,
                           depth if khop else None)
    name = group or "gamma"
    if name not in LATTICE_GROUPS:
        raise OptionError(f"group must be one of {', '.join(LATTICE_GROUPS)} on {t.name}, got {str(name)[:40]!r}")
    progress(f"verifying the group ({name})")
    grp = LATTICE_GROUPS[name](t)
    if khop:
        return lattice_khop(t, grp, depth, elements, mode, exchange, progress, time_limit, seed, collective,
                            solver, start)
    claims = {}
    depth_out = H
    if exchange:
        a, b, ecc = exchange_pair(t)
        if 2 * ecc + 1 >= 2 * H:
            notes.append(f"no adjacent pair of {t.name} is nearer to every node than one node is (joint "
                         f"eccentricity {ecc}): 2H = {2 * H} rounds is already the lower bound; returning "
                         "SP-allreduce")
            exchange = False
        else:
            depth_out = ecc
    if grp.is_regular:
        if exchange:
            base, algorithm = exchange_schedule(t, bfs_forest(t, [a, b]), a, b, route=_one_hop(t),
                                                label=f"BFS forest + exchange, roots {a} and {b}, depth {ecc}"), \
                "forest-exchange"
        else:
            base, algorithm = tree_schedule(t, bfs_forest(t, [0]), 0, route=_one_hop(t),
                                            label=f"SP BFS tree, root 0, depth {H}"), "sp-allreduce"
    else:
        base, algorithm, claims, more = balanced_family(t, grp, exchange, time_limit, seed, progress)
        notes.extend(more)
    progress(f"checking the lifted schedule ({base.n_transmissions * grp.order:,} transmissions)")
    cert = certify(collective_half(base, collective), grp, elements, mode=mode, solver=claims,
                   provenance={"algorithm": algorithm, "group": grp.spec["kind"], "seed": seed if claims else None})
    return cert, depth_out, notes


def _solve_grid(t, elements, mode, exchange, progress, time_limit, seed, collective, depth=None):
    """Meshes and mixed wrap: the better (by fraction of the certified bandwidth bound) of the lifted
    shortest-path tree and the packing model's trees (:func:`synth.solving.packing.solve_packed`).

    A ``depth`` below the diameter has no lifted k-hop tree here (no group transitive on the nodes):
    the depth-bounded packing LP (:mod:`synth.models.packing.depth`) builds the schedule instead."""
    if exchange:
        raise OptionError(f"exchange needs a vertex-transitive graph; {t.name} has a side that does not wrap")
    if depth is not None:
        why = (f"depth {depth} is below the diameter {t.diameter} of {t.name}, which has a side that does not wrap "
               "(no node-transitive group lifts a k-hop tree)")
        return solve_packed(t, None, elements, mode, progress, collective, why, time_limit, depth)
    progress("building the grid group (reflections and wrapped translations)")
    grp = grid_group(t)
    base = shortest_path_tree(t)
    cert = certify(collective_half(base, collective), grp, elements, mode=mode,
                   provenance={"algorithm": "shortest-path-tree", "group": grp.spec["kind"], "seed": None})
    if cert.claims["omega"] != "1":
        # the packing model: trees, owners and shares chosen by an LP where symmetry cannot balance
        why = f"{t.name} is not vertex-transitive (a side does not wrap)"
        try:
            packed = solve_packed(t, None, elements, mode, progress, collective, why, time_limit)
        except SynthError as exc:
            progress(f"packing model: {exc}")
        else:
            if Fraction(packed[0].claims["bandwidth_fraction"]) > Fraction(cert.claims["bandwidth_fraction"]):
                return packed
    c = cert.claims
    frac = volume_fraction(c)
    notes = [f"{t.name} is not vertex-transitive (a side does not wrap): group {grp.spec['kind']} of order "
             f"{grp.order} with {grp.n_link_orbits} link orbits; best omega found = {c['omega']}, bandwidth term "
             f"{c['bandwidth_term']} = {float(frac):.1%} of the volume bound 2N(p-1)/|E| (the best synth finds, "
             "not a proven optimum; the Ring baseline, synth baseline ring, spreads the volume more evenly in "
             "2(p-1) rounds)"]
    return cert, base.n_rounds // 2, notes
