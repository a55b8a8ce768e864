"""Moved to :mod:`synth.check.bounds` (the dispatch) and its modules :mod:`~synth.check.bounds.kinds`,
:mod:`~synth.check.bounds.lagrangian` and :mod:`~synth.check.bounds.cone`; kept so old imports work."""

from synth.check.bounds import (CONE_KIND, KIND, MAX_CONE_VERTICES, MAX_LAGRANGIAN_VERTICES, DualBound,
                                cone_count_bound, khop_dual_bound, root_stabilizer_perms)

__all__ = ["DualBound", "khop_dual_bound", "cone_count_bound", "root_stabilizer_perms", "KIND", "CONE_KIND",
           "MAX_CONE_VERTICES", "MAX_LAGRANGIAN_VERTICES"]
