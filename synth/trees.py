"""Moved to synth.solve.khop (khop_tree, tree_base, start_tree), synth.solve.record (TreeRecord, tighten,
SOLVER_CLAIM) and synth.solve.cache (cache_dir); kept so old imports work.
"""

from synth.solve.cache import cache_dir
from synth.solve.khop import khop_tree, start_tree, tree_base
from synth.solve.record import SOLVER_CLAIM, TreeRecord, tighten

__all__ = ["TreeRecord", "khop_tree", "tree_base", "cache_dir", "tighten", "start_tree", "SOLVER_CLAIM"]
