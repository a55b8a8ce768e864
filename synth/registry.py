"""Moved to synth.topology.spec (topologies by spec) and synth.symmetry.spec (groups by name); kept so old imports
work.
"""

from synth.topology.spec import TOPOLOGIES, build_topology, spec_size
from synth.symmetry.spec import default_group, group_builder, group_kinds

__all__ = ["TOPOLOGIES", "build_topology", "spec_size", "default_group", "group_builder", "group_kinds"]
