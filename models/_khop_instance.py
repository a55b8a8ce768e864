"""Moved to :mod:`synth.models.forest.instance`; kept so old imports work."""

from synth.models.forest.instance import *  # noqa: F401,F403
from synth.models.forest.instance import __all__  # noqa: F401
