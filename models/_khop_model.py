"""Moved to :mod:`synth.models.khop.model`; kept so old imports work."""

from synth.models.khop.model import *  # noqa: F401,F403
from synth.models.khop.model import __all__  # noqa: F401
