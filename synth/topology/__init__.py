"""Network topologies as arrays, one module per family (the first stage of synth).

:mod:`~synth.topology.base` holds the generic :class:`Topology`; tori, HyperX, spine-leaf,
the lattice family and user graphs add their numbering and closed forms;
:mod:`~synth.topology.kinds` is the one table of network kinds (flags, parsers, spec kinds,
default group, solve path); :mod:`~synth.topology.spec` rebuilds any of them from the JSON
``spec`` that certificates store.  Their symmetry groups are in
:mod:`synth.symmetry`, their base schedules in :mod:`synth.schedule`.

The builders ``torus`` and ``hyperx`` are not re-exported here, where those names are the
modules: import them from :mod:`synth.topology.torus` and :mod:`synth.topology.hyperx`.
"""

from synth.topology.base import Topology, Grid, MAX_VERTICES, MAX_LINKS, check_size
from synth.topology.torus import Torus, parse_torus, shape_sides
from synth.topology.hyperx import HyperX, parse_hyperx
from synth.topology.spineleaf import SpineLeaf, spine_leaf, parse_spine_leaf
from synth.topology.user import topology_from_json, read_topology
from synth.topology.lattice import LatticeTorus, lattice_torus, twisted, grid, parse_lattice
from synth.topology.spec import build_topology, spec_size
from synth.topology.kinds import KINDS, kind_of

__all__ = [
    "Topology", "Grid", "MAX_VERTICES", "MAX_LINKS", "check_size", "Torus", "parse_torus", "shape_sides", "HyperX",
    "parse_hyperx", "SpineLeaf", "spine_leaf", "parse_spine_leaf", "topology_from_json", "read_topology",
    "build_topology", "spec_size", "KINDS", "kind_of", "LatticeTorus", "lattice_torus", "twisted", "grid",
    "parse_lattice",
]
