"""Groups of network automorphisms that lift base schedules, one module per family.

:mod:`~synth.symmetry.group` verifies a :class:`Group` from its generators; the torus,
HyperX and spine-leaf modules build the groups of those families, :mod:`~synth.symmetry.search`
searches one on a user graph, and :mod:`~synth.symmetry.spec` is the one table of group
names (:data:`~synth.symmetry.spec.GROUPS`).
"""

from synth.symmetry.group import Group
from synth.symmetry.torus import torus_gamma, torus_translations_negation, torus_translations, root_stabilizer
from synth.symmetry.hyperx import hyperx_group
from synth.symmetry.spineleaf import spine_leaf_group
from synth.symmetry.search import search_group, user_group
from synth.symmetry.lattice import lattice_gamma, grid_group, point_group
from synth.symmetry.spec import (GroupKind, GROUPS, TORUS_GROUPS, named_group, torus_group, torus_group_builder,
                                  default_group, lifting_group, group_builder, group_kinds)

__all__ = [
    "Group", "torus_gamma", "torus_translations_negation", "torus_translations", "root_stabilizer", "hyperx_group",
    "spine_leaf_group", "search_group", "user_group", "GroupKind", "GROUPS", "TORUS_GROUPS", "named_group",
    "torus_group", "torus_group_builder", "default_group", "lifting_group", "group_builder", "group_kinds",
    "lattice_gamma", "grid_group", "point_group",
]
