"""Moved to synth.schedule.lift; kept so old imports work."""

from synth.schedule.lift import lift, lifted_weights

__all__ = ["lift", "lifted_weights"]
