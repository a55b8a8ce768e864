"""What every packing model returns: an integer schedule, its group and the solver's claims, uncertified.

The solve stage (:mod:`synth.solving.packing`) certifies a :class:`Packed` once, with the options of the
request (elements, check mode), and compares the schedules it keeps by the numbers the checker measured.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.spec import default_group
>>> from synth.models.packing.layered import layered_arcs
>>> from synth.models.packing.pipeline import pack
>>> t = parse_torus("4x4"); d = damage(t, parse_failures(t, links=["0-1"]))
>>> p = pack(layered_arcs(d, default_group(d)), units=4)
>>> p.algorithm, p.lp_status, 0.75 < p.lp_fraction <= 1, p.base.n_rounds
('layered-packing', 'optimal', True, 8)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Packed"]


@dataclass(frozen=True, eq=False)
class Packed:
    """A packing model's schedule before certification.

    ``base`` the integer base schedule (an allreduce); ``group`` the group that lifts it; ``claims`` the
    solver claims for the certificate; ``algorithm`` its provenance name; ``lp_status`` and
    ``lp_fraction`` (the LP's share of the volume bound, a number) what the LP reached; ``solution`` the
    LP solution behind it (the layered class's bound is derived from its dual); ``units`` per owner.
    """

    base: object
    group: object
    claims: dict
    algorithm: str
    lp_status: str
    lp_fraction: float
    solution: object
    units: int
    seconds: float
    tree_images: object = None   # the writer's hint (synth.check.tree_images.TreeImages), when rounded on trees
