"""Moved to :mod:`synth.models.forest.labels`; kept so old imports work."""

from synth.models.forest.labels import *  # noqa: F401,F403
from synth.models.forest.labels import __all__  # noqa: F401
