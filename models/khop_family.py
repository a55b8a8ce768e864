"""Moved to :mod:`synth.models.balance.family`; kept so old imports work.

Examples
--------
>>> from synth.models.khop_family import khop_family
>>> from synth.models.balance.family import khop_family as moved
>>> khop_family is moved
True
"""

from synth.models.balance.family import (EXACT_MAX_VERTICES, ITERATIONS, KHopFamily, compact_rounds, dimension_metric,
                                         khop_family, labelled_tree_schedule, orbit_profiles, skeletons)

__all__ = ["KHopFamily", "khop_family", "labelled_tree_schedule", "compact_rounds", "dimension_metric",
           "orbit_profiles", "skeletons", "EXACT_MAX_VERTICES", "ITERATIONS"]
