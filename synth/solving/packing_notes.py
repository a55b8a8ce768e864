"""What the packing path tells the user: the LPs' status and reach, the class bound, what the shares allow.

Examples
--------
>>> from types import SimpleNamespace as ns
>>> class_bound_note(ns(claims={}))[:40]
'no class bound: the local LP keeps most '
"""

from __future__ import annotations

from fractions import Fraction

from synth.schedule.data import ALLREDUCE

__all__ = ["lp_notes", "class_bound_note", "share_note"]


def lp_notes(kind, packed, cert, collective, local=False, periodic=False, class_note=True) -> list:
    """What the LP's status and the certified fraction tell the user (the LP's ``kind`` names its class; without
    ``class_note`` nothing of the layered class's bound, which comes once the layered schedule is kept)."""
    notes = []
    if packed.lp_status != "optimal":
        notes.append(f"{kind} LP {packed.lp_status} (time limit): its solution is feasible, not proven best")
    if collective == ALLREDUCE:
        notes.append(f"bandwidth term {cert.claims['bandwidth_term']} for {cert.elements} elements: "
                     f"{100 * float(Fraction(cert.claims['bandwidth_fraction'])):.2f} % of the certified bound (the "
                     + (f"{kind} LP reaches " if not local else "local LP, some trees fixed, reaches ")
                     + f"{100 * packed.lp_fraction:.2f} % of the volume bound"
                     + (": the best of its class)" if not local else ")"))
        if kind == "layered" and periodic:
            notes.append("no class bound: the layered LP ran on the periodic network, whose failed chips' copies "
                         "forward nothing, so its dual bounds the layered schedules there, not on this network")
        elif kind == "layered" and class_note:
            notes.append(class_bound_note(cert))
    return notes


def class_bound_note(cert) -> str:
    """What the certificate says about the layered class's bound (docs/bounds.md section 5), or why it has none."""
    claim = cert.claims.get("class_bound")
    if claim is None:
        return ("no class bound: the local LP keeps most healthy trees fixed, so its dual bounds only the "
                "schedules that keep them, and the whole layered LP was not solved for its dual (too large, "
                "or out of time)")
    return (f"bound of the layered class (from {cert.solver.get('class_dual', 'a dual')}, re-derived by synth "
            f"check): {claim['value']:.6g} elements; the layered schedule reaches {100 * claim['fraction']:.2f} % "
            "of it (it bounds layered schedules only)")


def share_note(topology, collective) -> list:
    """What the owners' shares allow the tree classes here (an allreduce on a network with a vertex of low degree)."""
    from synth.models.packing.phase_bound import phase_share_bound   # a model: loaded with the solvers, on demand

    if collective != ALLREDUCE:
        return []
    b = phase_share_bound(topology)
    if b >= 1:
        return []
    return [f"no tree schedule whose every tree reduces in one phase and copies in the next (the layered trees) "
            f"passes {100 * b:.2f} % of the volume bound here: every vertex sends each chunk once, so the vertices of "
            "low degree would have to own more than the whole vector; the timed trees' windows let the phases "
            "overlap (docs/failures.md section 8)"]
