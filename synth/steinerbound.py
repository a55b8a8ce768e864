"""Moved to :mod:`synth.check.bounds.steiner` (``STEINER_KIND`` to :mod:`synth.check.bounds.kinds`);
kept so old imports work."""

from synth.check.bounds.kinds import STEINER_KIND
from synth.check.bounds.steiner import MAX_CELLS, MAX_TERMINALS, excess_tables, splits, steiner_dual, terminal_bound

__all__ = ["terminal_bound", "excess_tables", "steiner_dual", "splits", "STEINER_KIND", "MAX_TERMINALS", "MAX_CELLS"]
