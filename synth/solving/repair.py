"""Repair: from a certified healthy schedule to a certified schedule of the damaged network.

:func:`repair` reads the healthy schedule's trees (:func:`synth.models.packing.reference_fractions`),
applies the failures to its topology and keeps every tree edge that still serves: first with the
smallest free region (``radius`` 1 around the failures, the local layered LP of
:mod:`synth.models.packing.local`, equal shares), which takes seconds and is certified at once; then,
while ``time_limit`` lasts, with wider regions and finally the whole layered LP (shares free) when the
network is small enough, keeping whichever certified schedule has the smallest bandwidth term.

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

__all__ = ["repair", "RADII"]

#: the free regions tried, in order, while time remains (the first is always tried); last, the whole layered LP
#: (shares free) where ``synth solve`` solves it too (``FULL_LP_ARCS`` parent choices: 16x16 with a failed link)
RADII = (1, 3, 6)


def repair(cert, failures, time_limit=60.0, mode="auto", progress=quiet, on_better=None, started=None):
    """A certified schedule for ``cert``'s topology with ``failures`` (module docstring).

    Returns a :class:`synth.solving.SolveResult`; its notes say how long the first valid schedule took and
    what each later step reached, and when.  ``on_better(certificate)`` is called with each certified schedule
    better than every one before (the CLI writes it, so a file holds the best so far from the first step on),
    and once more when the class bound is added at the end.  ``started``: the ``time.monotonic()`` the times
    count from (default: the call).
    """
    # the models load on demand: they pull in the solvers, which the other constructions never need
    from synth.models.packing import layered_arcs, pack, reference_fractions, with_class_bound
    from synth.models.packing.region import TreeReference, is_sp_gamma

    t0 = time.monotonic() if started is None else started
    healthy = cert.topology
    if isinstance(healthy, Damaged) or cert.dropped:
        raise SynthError("repair starts from a healthy network's certificate; this one already has failures")
    if cert.base.collective != ALLREDUCE:
        raise SynthError("repair starts from an allreduce certificate")
    if not failures:
        raise SynthError("name at least one failure: `fail_link` or `fail_node`")
    damaged = damage(healthy, failures)
    # the larger of the certificate's group's residual and the network's own (on tori every closed-form
    # automorphism that fixes the failures: order 8 against Γ's 2 for a link of 16x16x16, 4x fewer owners)
    group = max((g for g in (residual_group(damaged, cert.group), default_group(damaged)) if g is not None),
                key=lambda g: g.order)
    # SP-allreduce on an equal-sided torus: its parent fractions in closed form, not lifted (GBs at 16x16x16)
    closed = is_sp_gamma(cert.base, cert.group)
    reference = TreeReference.sp_gamma(healthy) if closed else reference_fractions(cert.base, cert.group)
    # before its arcs (GBs where it fails): each owner keeps the certificate's trees, as many as it has lifted
    lifted = cert.base.n_components * (1 if cert.group is None else cert.group.order)
    trees = None if closed else -(-lifted // healthy.n_compute)
    damaged, group, radii, cells = _network(damaged, group, reference, trees)
    arcs = layered_arcs(damaged, group)
    n_arcs = arcs.n_arcs
    best, notes = None, [("healthy trees: SP-allreduce lifted by Γ, read in closed form" if closed else
                          f"healthy trees: the certificate's {cert.base.n_components} lifted by its group of order "
                          f"{cert.group.order}") + f"; damaged network{cells} lifted by a group of order "
                         f"{1 if group is None else group.order}, {n_arcs:,} parent choices"]
    steps = [("local", r) for r in radii] + ([("full", None)] if n_arcs <= FULL_LP_ARCS else [])
    for i, (kind, radius) in enumerate(steps):
        left = time_limit - (time.monotonic() - t0)
        if i > 0 and left <= 0:
            notes.append(f"time limit: stopped before the {kind} LP" + (f" (radius {radius})" if radius else ""))
            break
        progress(f"repair step {i + 1}: {kind} layered LP" + (f", radius {radius}" if radius else ""))
        try:
            res = pack(arcs, DEFAULT_UNITS, progress=progress, time_limit=max(left, 1.0) if i else None,
                       reference=reference if kind == "local" else None, radius=radius or 0,
                       free_shares=n_arcs <= FREE_SHARES_ARCS, on_trees=closed)
            c = certify_packed(res, mode=mode, progress=progress)
        except SynthError as exc:
            if i == 0:
                raise
            notes.append(f"step {i + 1} ({kind}) failed: {exc}")
            continue
        frac = certified_fraction(c)
        what = f"{kind} LP" + (f", radius {radius}" if radius else "")
        note = (f"first valid schedule in {time.monotonic() - t0:.1f} s ({what}): " if i == 0 else f"{what}: ") + \
            f"{100 * float(frac):.2f} % of the certified bound" + (f" at {time.monotonic() - t0:.1f} s" if i else "")
        if best is None or frac > certified_fraction(best):
            best, best_sol = _stamped(c, cert, t0), res.solution
            note += _handed(on_better, best, t0)
        notes.append(note)
    left = time_limit - (time.monotonic() - t0)
    if left > 0:   # the bound of the layered class, once, for the schedule kept (docs/bounds.md section 5)
        bounded = with_class_bound(best, best_sol, progress, left)
        if bounded is not best:
            best = _stamped(bounded, cert, t0)
            if on_better is not None:
                notes.append("the class bound added" + _handed(on_better, best, t0))
    notes.append(f"kept {100 * float(certified_fraction(best)):.2f} % of the certified bound")
    notes.append(class_bound_note(best) if left > 0 else "no class bound: no time left for the whole layered LP")
    return SolveResult(best, int(best.base.n_rounds) // 2, notes)


def _network(damaged, group, reference, trees) -> tuple:
    """``(network, group, radii, note)``: ``damaged`` lifted by ``group`` with :data:`RADII`, or, where the local LP's
    pairs or schedule would pass its limits there (too little symmetry left), its failures repeated on cells
    (:func:`~synth.solving.periodic.local_network`) with their one radius (equal shares: one radius reaches what
    any does there) and a note naming them; ``reference`` and ``trees``: the healthy trees each owner keeps."""
    from synth.models.packing.layered import root_reps   # solvers, on demand

    try:
        check_pairs(damaged, group, None)
        check_local_size(damaged, group, root_reps(damaged, group).size, reference, trees)
        return damaged, group, RADII, ""
    except SynthError:
        # (a failed chip's copies would be leaves, which the repair's arcs and certificate do not carry)
        if (p := local_network(damaged)) is None or p.leaves:
            raise
    check_local_size(p.topology, p.group, root_reps(p.topology, p.group).size, reference, trees)
    return p.topology, p.group, (p.radius,), f" ({p.note()})"


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
