"""Moved to :mod:`synth.models.forest.labels` and :mod:`synth.models.khop.search.construct`.

Kept so old imports work.
"""

from synth.models.forest.labels import *  # noqa: F401,F403
from synth.models.forest.labels import __all__  # noqa: F401
from synth.models.khop.search.construct import HeuristicResult, heuristic_tree  # noqa: F401
from synth.models.forest.labels import _BIG, _cut_candidates, _shift_perturb  # noqa: F401  (imported by old callers)
