"""Moved to synth.solve.sweep; kept so old imports work."""

from synth.solve.sweep import SweepRow, SweepTable, cached_depths, parse_depths, sweep, sweep_note

__all__ = ["SweepRow", "SweepTable", "sweep", "parse_depths", "cached_depths", "sweep_note"]
