"""What a damaged network may cost before synth refuses it: limits on the layered LP's size that keep a solve or a
repair within about 8 GB, each refusing with one line (exit 2) before the memory is spent.

Where failures leave a pod little symmetry, the layered LP chooses parents for every represented owner and vertex
(:func:`check_pairs`, before the choices are built) and its local form keeps every represented owner's healthy trees
(:func:`check_local_size`, before the schedule is rounded): both grow with the owners a group of order 1 leaves.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> check_pairs(parse_torus("4x4"), None, None) is None
True
"""

from __future__ import annotations

from synth.errors import SynthError
from synth.solving.reference import family_sends

__all__ = ["check_pairs", "check_local_size", "MAX_PAIRS", "MAX_LOCAL_SENDS"]

#: (represented owner, vertex) pairs up to which the layered LP's parent choices are built: about three choices a
#: pair at 80 bytes each (16x16x16 with four scattered failed links, a group of order 1: 16.8 M pairs, 50 M
#: choices, 4.0 GB; 16x20x28 with a failed link, 12.4 M pairs); beyond, the network is refused with one line
MAX_PAIRS = 20_000_000
#: sends of the local LP's schedule before it is lifted (its represented owners' trees) up to which synth solves,
#: rounds and certifies it: the schedule, its rounding and its check hold about 130 bytes per send (16x20x28
#: with a failed link, 1,386 owners under a group of order 8 with 2 trees each, about 50 M sends: 6.3 GB at
#: the default minute; 16x16x16 with four scattered failed links, 4,096 owners with 6 trees, 201 M: 16.4 GB
#: after the rounding alone, then killed)
MAX_LOCAL_SENDS = 80_000_000


def check_pairs(topology, group, leaves) -> None:
    """Refuse, with one line, a network whose layered LP would choose parents for more than :data:`MAX_PAIRS`
    (represented owner, vertex) pairs (a pod whose failures leave too little symmetry)."""
    from synth.models.packing.layered import root_reps   # solvers, on demand

    pairs = root_reps(topology, group, leaves).size * topology.n_vertices
    if pairs > MAX_PAIRS:
        raise SynthError(f"{topology.name} leaves a group of order {1 if group is None else group.order}: its layered "
                         f"LP would choose parents for {pairs:,} (owner, vertex) pairs, past the {MAX_PAIRS:,} synth "
                         "holds within 8 GB; failures that repeat on a lattice of cells keep more (docs/failures.md "
                         "section 4)")


def check_local_size(topology, group, n_owners: int, reference, trees: int | None = None) -> None:
    """Refuse, with one line, a local layered LP whose schedule would pass :data:`MAX_LOCAL_SENDS` sends before it
    is lifted: ``n_owners`` represented owners under ``group`` each keep ``reference``'s healthy trees (``trees``
    of them; None: as many as ``reference`` names, at least one).

    Raises
    ------
    SynthError
        If it would (a network whose failures leave too little symmetry for its size).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> check_local_size(parse_torus("4x4"), None, 16, None) is None
    True
    """
    trees = max(1, len(getattr(reference, "weight", ())) if trees is None else trees)
    sends = family_sends(topology, trees, n_owners)
    if sends > MAX_LOCAL_SENDS:
        order = 1 if group is None else group.order
        raise SynthError(f"{topology.name} leaves a group of order {order}: the local layered LP's schedule would "
                         f"have about {sends:,} sends before it is lifted ({n_owners:,} owners, {trees} healthy "
                         f"tree(s) each), past the {MAX_LOCAL_SENDS:,} synth rounds and checks within 8 GB; "
                         "failures that repeat on a lattice of cells keep more (docs/failures.md section 9)")
