"""Repair: from a certified healthy schedule to a certified schedule of the damaged network.

:func:`repair` reads the healthy schedule's trees (:func:`synth.models.packing.reference_fractions`),
applies the failures to its topology and keeps every tree edge that still serves: first with the
smallest free region (``radius`` 1 around the failures, the local layered LP of
:mod:`synth.models.packing.local`, equal shares), which takes seconds and is certified at once; then,
while ``time_limit`` lasts, with wider regions and finally the whole layered LP (shares free) when the
network is small enough, keeping whichever certified schedule has the smallest bandwidth term.  On a
pod, or where the damaged network is past the local LP's limits, the failures repeated on the smallest
cells that fit come first, with the failed links' ends alone free, then one hop, and then the damaged
network itself or, where it is refused, the largest cells that fit (:func:`_stages`).

Examples
--------
>>> from synth.solving import solve
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import parse_failures
>>> t = parse_torus("4x4")
>>> r = repair(solve(t).certificate, parse_failures(t, links=["0-1"]), time_limit=30)
>>> r.certificate.topology.name, r.certificate.provenance["algorithm"]
('torus 4x4 with 1 failed link', 'repair')
>>> r.notes[0].startswith("healthy trees: SP-allreduce"), r.notes[1].startswith("first valid schedule")
(True, True)
"""

from __future__ import annotations

import time
from dataclasses import replace

from synth.errors import SynthError
from synth.schedule.data import ALLREDUCE
from synth.solving import SolveResult
from synth.solving.limits import check_local_size, check_pairs
from synth.solving.packing import DEFAULT_UNITS, FREE_SHARES_ARCS, FULL_LP_ARCS, certified_fraction, certify_packed
from synth.solving.packing_notes import class_bound_note
from synth.solving.periodic import local_network
from synth.solving.request import quiet
from synth.symmetry.residual import residual_group
from synth.symmetry.spec import default_group
from synth.topology.failures import Damaged, damage

__all__ = ["repair", "RADII", "CELL_RADII", "CELLS_FIRST_PAIRS", "CELLS_FIRST_RATIO"]

#: the free regions tried, in order, while time remains (the first is always tried); last, the whole layered LP
#: (shares free) where ``synth solve`` solves it too (``FULL_LP_ARCS`` parent choices: 16x16 with a failed link)
RADII = (1, 3, 6)
#: the same on cells (:func:`_stages`): the failed links' ends alone first (16x16x16 with four scattered failed
#: links, cells of 4x8x4: its LP in 0.8 s, 83.10 % of the certified bound, against 5.2 s and 83.19 % with one hop)
CELL_RADII = (0, 1)
#: (owner, vertex) pairs of the damaged network from which repair solves on cells first (:func:`_stages`), where
#: they have :data:`CELLS_FIRST_RATIO` times fewer owners: 16x16x16 with a failed link has 1.5 M (32x32 0.28 M)
CELLS_FIRST_PAIRS = 1_000_000
CELLS_FIRST_RATIO = 8


def repair(cert, failures, time_limit=60.0, mode="auto", progress=quiet, on_better=None, started=None):
    """A certified schedule for ``cert``'s topology with ``failures`` (module docstring).

    Returns a :class:`synth.solving.SolveResult`; its notes say how long the first valid schedule took and
    what each later step reached, and when.  ``on_better(certificate)`` is called with each certified schedule
    better than every one before (the CLI writes it, so a file holds the best so far from the first step on),
    and once more when the class bound is added at the end.  ``started``: the ``time.monotonic()`` the times
    count from (default: the call).
    """
    # the models load on demand: they pull in the solvers, which the other constructions never need
    from synth.models.packing import layered_arcs, pack, with_class_bound

    t0 = time.monotonic() if started is None else started
    if isinstance(cert.topology, Damaged) or cert.dropped:
        raise SynthError("repair starts from a healthy network's certificate; this one already has failures")
    if cert.base.collective != ALLREDUCE:
        raise SynthError("repair starts from an allreduce certificate")
    if not failures:
        raise SynthError("name at least one failure: `fail_link` or `fail_node`")
    damaged = damage(cert.topology, failures)
    # the larger of the certificate's group's residual and the network's own (on tori every closed-form
    # automorphism that fixes the failures: order 8 against Γ's 2 for a link of 16x16x16, 4x fewer owners)
    group = max((g for g in (residual_group(damaged, cert.group), default_group(damaged)) if g is not None),
                key=lambda g: g.order)
    closed, reference, trees, notes = _healthy_trees(cert)
    best, i = None, 0
    for k, (network, net_group, radii, cells) in enumerate(_stages(damaged, group, reference, trees)):
        leaves = cells.leaves if cells is not None and cells.leaves else None
        later = "the damaged network itself" if cells is None else cells.note()
        if k and time_limit - (time.monotonic() - t0) <= 0:
            notes.append(f"time limit: stopped before {later}")
            break
        arcs = layered_arcs(network, net_group, leaves)
        n_arcs = arcs.n_arcs
        lifted = f" lifted by a group of order {1 if net_group is None else net_group.order}, {n_arcs:,} parent choices"
        if k == 0:   # the first note names the healthy trees and the first network
            notes[0] += "; damaged network" + ("" if cells is None else f" ({cells.note()})") + lifted
        else:
            notes.append(f"then {later}" + lifted)
        # on cells the shares stay equal: free ones would bring back every load row of the pod
        steps = [("local", r) for r in radii] + ([("full", None)] if cells is None and n_arcs <= FULL_LP_ARCS else [])
        for kind, radius in steps:
            left = time_limit - (time.monotonic() - t0)
            if i > 0 and left <= 0:
                notes.append(f"time limit: stopped before the {kind} LP" + _radius(radius, " (radius {})"))
                break
            progress(f"repair step {i + 1}: {kind} layered LP" + _radius(radius, ", radius {}"))
            try:
                res = pack(arcs, DEFAULT_UNITS, progress=progress, time_limit=max(left, 1.0) if i else None,
                           reference=reference if kind == "local" else None, radius=radius or 0,
                           free_shares=cells is None and n_arcs <= FREE_SHARES_ARCS, on_trees=closed)
                c = certify_packed(res, mode=mode, progress=progress, dropped=() if cells is None else cells.dropped)
            except SynthError as exc:
                if i == 0:
                    raise
                notes.append(f"step {i + 1} ({kind}) failed: {exc}")
                i += 1
                continue
            frac = certified_fraction(c)
            what = f"{kind} LP" + _radius(radius, ", radius {}")
            now = time.monotonic() - t0
            note = (f"first valid schedule in {now:.1f} s ({what}): " if i == 0 else f"{what}: ") + \
                f"{100 * float(frac):.2f} % of the certified bound" + (f" at {now:.1f} s" if i else "")
            if best is None or frac > certified_fraction(best):
                # (the class bound's whole LP has no leaves: none for a schedule that drops chips)
                best, best_sol = _stamped(c, cert, t0), None if leaves else res.solution
                note += _handed(on_better, best, t0)
            notes.append(note)
            i += 1
        arcs = res = None    # the next stage's network may be many times larger
    left = time_limit - (time.monotonic() - t0)
    if left > 0 and best_sol is not None:   # the bound of the layered class, once, for the schedule kept (bounds.md 5)
        bounded = with_class_bound(best, best_sol, progress, left)
        if bounded is not best:
            best = _stamped(bounded, cert, t0)
            if on_better is not None:
                notes.append("the class bound added" + _handed(on_better, best, t0))
    notes.append(f"kept {100 * float(certified_fraction(best)):.2f} % of the certified bound")
    notes.append(class_bound_note(best) if left > 0 else "no class bound: no time left for the whole layered LP")
    return SolveResult(best, int(best.base.n_rounds) // 2, notes)


def _healthy_trees(cert) -> tuple:
    """``(closed, reference, trees, notes)``: whether ``cert`` is SP-allreduce lifted by Γ, its trees' parent
    fractions (in closed form where it is: lifting them takes GBs at 16x16x16), the trees each owner keeps (None:
    SP-allreduce's own count) and a note saying how they were read."""
    from synth.models.packing import reference_fractions   # solvers, on demand
    from synth.models.packing.region import TreeReference, is_sp_gamma

    closed = is_sp_gamma(cert.base, cert.group)
    reference = TreeReference.sp_gamma(cert.topology) if closed else reference_fractions(cert.base, cert.group)
    # before its arcs (GBs where it fails): each owner keeps the certificate's trees, as many as it has lifted
    lifted = cert.base.n_components * (1 if cert.group is None else cert.group.order)
    trees = None if closed else -(-lifted // cert.topology.n_compute)
    note = ("healthy trees: SP-allreduce lifted by Γ, read in closed form" if closed else
            f"healthy trees: the certificate's {cert.base.n_components} lifted by its group of order "
            f"{cert.group.order}")
    return closed, reference, trees, [note]


def _stages(damaged, group, reference, trees):
    """``(network, group, radii, cells)`` of each network repair solves, in turn (found as they come: the first
    schedule is out before the later networks are looked for): ``damaged`` lifted by ``group`` with
    :data:`RADII` (``cells`` None); before it, or in its place where the local LP's pairs or schedule would pass its
    limits there (too little symmetry left; then the largest cells that fit follow with one hop, those
    ``synth solve`` takes), the failures repeated on the smallest cells that fit (``cells``, the
    :class:`~synth.solving.periodic.Periodic` of :func:`~synth.solving.periodic.local_network`: a failed chip's
    copies forward nothing, and the chip is dropped from every tree) with :data:`CELL_RADII`, where the damaged
    network has :data:`CELLS_FIRST_PAIRS` (owner, vertex) pairs or more (then with one hop only) and the cells
    :data:`CELLS_FIRST_RATIO` times fewer owners (16x16x16 with a failed link: 12 owners on cells of 4x4x4 against
    360, the first schedule at 1.5 s against 7.4, 83.31 % of the bound against 83.30).  ``reference`` and
    ``trees``: the healthy trees each owner keeps."""
    from synth.models.packing.layered import root_reps   # solvers, on demand

    owners = root_reps(damaged, group).size
    try:
        check_pairs(damaged, group, None)
        check_local_size(damaged, group, owners, reference, trees)
        own = [(damaged, group, RADII, None)]
    except SynthError as exc:
        own, refused = [], exc
    if own and owners * damaged.n_vertices < CELLS_FIRST_PAIRS:
        yield from own
        return
    # past them, one hop only: wider regions took GBs more for nothing (16x16x16 with links 0-1 and 17-18, a group
    # of order 4: 83.30 % of the bound with one hop at 27 s, and with three at 58 s, 8.9 GB)
    own = [(damaged, group, RADII[:1], None)] if own else []
    p = local_network(damaged, radius=CELL_RADII[-1], smallest=True)
    cell_owners = 0 if p is None else root_reps(p.topology, p.group, p.leaves or None).size
    fewer = p is not None and (not own or cell_owners * CELLS_FIRST_RATIO <= owners)
    if fewer:
        try:
            check_local_size(p.topology, p.group, cell_owners, reference, trees)
        except SynthError:
            fewer = False
    if not fewer and not own:
        raise refused
    if fewer:
        yield p.topology, p.group, CELL_RADII, p
    if fewer and not own:   # nothing larger to follow: the largest cells that fit, as synth solve takes them
        q = local_network(damaged, radius=CELL_RADII[-1])
        if q is not None and q.cell != p.cell:
            yield q.topology, q.group, CELL_RADII[-1:], q
    yield from own


def _radius(radius, form) -> str:
    """``form`` with the free region's ``radius`` (None: the whole LP, no radius)."""
    return "" if radius is None else form.format(radius)


def _stamped(c, healthy_cert, t0):
    """``c`` with the repair's provenance (a copy: the dict is not shared with the certificate it came from)."""
    return replace(c, provenance={**c.provenance, "algorithm": "repair",
                                  "repaired_from": healthy_cert.provenance.get("algorithm"),
                                  "seconds": round(time.monotonic() - t0, 3)})


def _handed(on_better, c, t0) -> str:
    """Give ``c`` to ``on_better`` (if any) and say when it had it."""
    if on_better is None:
        return ""
    on_better(c)
    return f"; written at {time.monotonic() - t0:.1f} s"
