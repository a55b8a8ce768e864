"""Moved to :mod:`synth.models.khop.pipeline`; kept so old imports work."""

from synth.models.khop.pipeline import *  # noqa: F401,F403
from synth.models.khop.pipeline import __all__  # noqa: F401
