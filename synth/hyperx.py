"""Moved to synth.topology.hyperx (the network), synth.symmetry.hyperx (its group) and synth.schedule.hyperx (its
trees); kept so old imports work.
"""

from synth.topology.hyperx import HyperX, hyperx, parse_hyperx
from synth.symmetry.hyperx import hyperx_group
from synth.schedule.hyperx import coordinate_tree_parents, hyperx_tree, windmill_parents

__all__ = ["HyperX", "hyperx", "parse_hyperx", "hyperx_group", "coordinate_tree_parents", "hyperx_tree",
           "windmill_parents"]
