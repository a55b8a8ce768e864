"""The healthy trees a damaged network's local layered LP keeps: the healthy network's own schedule, as parent
fractions.

Past :data:`~synth.solving.packing.FULL_LP_ARCS` parent choices the layered LP changes a damaged network's
healthy trees only near the failures (:func:`synth.models.packing.local.solve_local`) and keeps them
elsewhere, so the trees kept must be what ``synth solve`` builds on the healthy network, balanced: SP-allreduce
lifted by Γ on an equal-sided torus, the balanced family of BFS trees where the sides differ (SP-allreduce
lifted by translations and negation loads the longer sides' links more: kept on 16x20x28 with a failed link
it gave 35.55 % of the volume bound), a BFS tree lifted by the built-in group elsewhere.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> t = parse_torus("4x6")
>>> healthy_reference(damage(t, parse_failures(t, links=["0-1"]))).what
'the balanced family of the healthy solve, 2 tree(s) lifted by translations-negation(torus 4x6)'
"""

from __future__ import annotations

import functools
from dataclasses import replace

from synth.errors import SynthError
from synth.schedule.sp import sp_allreduce
from synth.schedule.user import shortest_path_tree
from synth.solving.balanced import balanced_family
from synth.symmetry.spec import default_group
from synth.topology.torus import Torus

__all__ = ["healthy_reference", "family_sends", "HEALTHY_FAMILY_SECONDS", "FAMILY_MAX_SENDS"]

#: CPU seconds the balance model may take for the healthy family of a torus whose sides differ, the local LP's
#: reference there (16x20x28: 0.5 s)
HEALTHY_FAMILY_SECONDS = 30.0
#: sends up to which the local LP keeps the balanced family of a torus whose sides differ (its trees and their
#: negations, usually 6 per owner), counted over the owners its LP represents where they are known (the schedule
#: before it is lifted, as :func:`~synth.solving.limits.check_local_size`), else over every owner (16x20x28: 963 M
#: lifted; with two scattered failed links, its cells of 16x20x4 for the local LP, 160 owners: 17 M); beyond,
#: SP-allreduce lifted by translations and negation, 2 per owner
FAMILY_MAX_SENDS = 80_000_000


def family_sends(healthy, n_trees: int, owners: int | None = None) -> int:
    """About how many sends the local LP's schedule has when each owner keeps ``n_trees`` healthy trees: every
    vertex's chunk on every tree, ``2(p - 1)`` sends each (the rounding's blocks; the cuts add a few); lifted
    (every owner's), or of ``owners`` owners (the represented ones: the schedule before it is lifted)."""
    p = healthy.n_vertices
    return 2 * n_trees * (p if owners is None else owners) * (p - 1)


@functools.lru_cache(maxsize=2)
def _translated_trees(healthy) -> tuple:
    """``(sp, family)``: SP-allreduce and the balanced family of the torus ``healthy`` lifted by translations and
    negation, as parent fractions (``family`` None where that group balances SP-allreduce).  The same for every
    failure set and every lattice of cells tried on ``healthy`` (:func:`~synth.solving.periodic.local_network`
    asks for each), so solved once: the balance model took 0.5 s a time on 16x20x28."""
    from synth.models.packing.region import TreeReference   # models: loaded with the solvers, on demand

    group = default_group(healthy)
    # the same fractions without the lift (16x20x28: 17,920 elements times 8,959 arcs took 10 GB); SP-allreduce
    # only where this group balances it, as plan_torus: elsewhere (sides that differ) its longer sides' links
    # carry more, and a local LP that kept it far from the failures would keep that imbalance (16x20x28:
    # 35.55 % of the volume bound, against 82.5 % with the balanced family)
    sp = replace(TreeReference.lifted(sp_allreduce(healthy), group), what=f"SP-allreduce lifted by {group.name}")
    if group.is_regular:
        return sp, None
    return sp, TreeReference.lifted(balanced_family(healthy, group, False, HEALTHY_FAMILY_SECONDS, 0)[0], group)


def healthy_reference(topology, owners: int | None = None, balanced: bool = False, healthy=None):
    """Parent fractions of the healthy network's own schedule (what ``synth solve`` builds there: SP-allreduce on
    tori, lifted by Γ or by translations and negation, or the balanced family where that group does not balance
    it; a BFS tree lifted by the built-in group elsewhere), or None when there is none to start from.

    ``owners``: the owners the local LP represents (None: every owner), whose sends the balanced family must keep
    within :data:`FAMILY_MAX_SENDS`; beyond, SP-allreduce, unbalanced, or None if ``balanced``.  ``healthy``: the
    healthy network, where ``topology`` does not name it (a periodic network whose failed chips' copies are all
    its damage is the torus itself)."""
    # models: loaded with the solvers, on demand
    from synth.models.packing import reference_fractions
    from synth.models.packing.region import TreeReference

    healthy = getattr(topology, "healthy", None) if healthy is None else healthy
    group = None if healthy is None else default_group(healthy)
    if group is None or healthy.n_compute != healthy.n_vertices:
        return None
    if isinstance(healthy, Torus) and healthy.is_equal_sided and group.spec == {"kind": "torus-gamma"}:
        return TreeReference.sp_gamma(healthy)   # SP-allreduce lifted by Γ, in closed form (no lift of 2d p trees)
    if isinstance(healthy, Torus) and group.spec == {"kind": "torus-translations-negation"}:
        sp, family = _translated_trees(healthy)
        if family is None:
            return sp
        sends = family_sends(healthy, len(family.weight), owners)
        if sends <= FAMILY_MAX_SENDS:
            return replace(family, what=f"the balanced family of the healthy solve, {family.what}")
        return None if balanced else replace(
            sp, what=f"{sp.what}, unbalanced here: its balanced family would make about {sends:,} "
                     f"{'lifted ' if owners is None else ''}sends, past {FAMILY_MAX_SENDS:,}")
    base = sp_allreduce(healthy) if isinstance(healthy, Torus) else shortest_path_tree(healthy)
    try:
        return reference_fractions(base, group)
    except SynthError:
        return None
