"""Moved to synth.topology.spineleaf (the network), synth.symmetry.spineleaf (its group) and
synth.schedule.spineleaf (its star); kept so old imports work.
"""

from synth.topology.spineleaf import SpineLeaf, parse_spine_leaf, spine_leaf
from synth.symmetry.spineleaf import spine_leaf_group
from synth.schedule.spineleaf import spine_leaf_star

__all__ = ["SpineLeaf", "parse_spine_leaf", "spine_leaf", "spine_leaf_group", "spine_leaf_star"]
