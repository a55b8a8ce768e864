"""Moved to :mod:`synth.models.khop.brute`; kept so old imports work."""

from synth.models.khop.brute import *  # noqa: F401,F403
from synth.models.khop.brute import __all__  # noqa: F401
