"""Schedules: the data (:mod:`~synth.schedule.data`; chunk sizes in :mod:`~synth.schedule.chunking`), parent
arrays and their schedules (:mod:`~synth.schedule.forest`), each family's construction, and the lift through a group.

``from synth.schedule import BaseSchedule`` and the other names of the former module
``synth/schedule.py`` keep working from here.  The function ``lift`` is not re-exported
here, where that name is the module: import it from :mod:`synth.schedule.lift`.
"""

from synth.schedule.data import REDUCE, COPY, OPS, BaseSchedule, Block, Schedule
from synth.schedule.data import ALLREDUCE, REDUCE_SCATTER, ALLGATHER, COLLECTIVES
from synth.schedule.chunking import chunk_elements, positive_chunks, block_chunk_elements, chunk_offsets
from synth.schedule.collective import collective_half
from synth.schedule.forest import (forest_depths, forest_weight, check_forest, bfs_forest, tree_schedule,
                                   exchange_schedule)
from synth.schedule.lift import lifted_weights, lifted_owners, lifted_chunk_elements
from synth.schedule.sp import bfs_parents, sp_allreduce
from synth.schedule.exchange import exchange_roots, bfs_forest_parents, exchange_allreduce
from synth.schedule.hyperx import windmill_parents, coordinate_tree_parents, hyperx_tree
from synth.schedule.spineleaf import spine_leaf_star
from synth.schedule.user import shortest_path_tree

__all__ = [
    "REDUCE", "COPY", "OPS", "BaseSchedule", "Block", "Schedule", "chunk_elements", "positive_chunks",
    "forest_depths", "forest_weight", "check_forest", "bfs_forest", "tree_schedule", "exchange_schedule",
    "lifted_weights", "bfs_parents", "sp_allreduce", "exchange_roots", "bfs_forest_parents", "exchange_allreduce",
    "windmill_parents", "coordinate_tree_parents", "hyperx_tree", "spine_leaf_star", "shortest_path_tree",
    "ALLREDUCE", "REDUCE_SCATTER", "ALLGATHER", "COLLECTIVES", "block_chunk_elements", "chunk_offsets",
    "collective_half", "lifted_owners", "lifted_chunk_elements",
]
