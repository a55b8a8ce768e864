"""Moved to synth.topology.user (the file), synth.symmetry.search (its group) and synth.schedule.user (its tree);
kept so old imports work.
"""

from synth.topology.user import FORMAT, read_topology, topology_from_json
from synth.symmetry.search import search_group, user_group
from synth.schedule.user import shortest_path_tree

__all__ = ["FORMAT", "read_topology", "topology_from_json", "search_group", "user_group", "shortest_path_tree"]
