"""Moved to :mod:`synth.models.khop.dual`; kept so old imports work."""

from synth.models.khop.dual import *  # noqa: F401,F403
from synth.models.khop.dual import __all__  # noqa: F401
