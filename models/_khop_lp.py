"""Moved to :mod:`synth.models.khop.lp`; kept so old imports work."""

from synth.models.khop.lp import *  # noqa: F401,F403
from synth.models.khop.lp import __all__  # noqa: F401
from synth.models._solve.lagrangian import lagrangian_bound, stalled, too_slow  # noqa: F401
from synth.models.forest.cuts import cone_cuts, flow_cuts  # noqa: F401
