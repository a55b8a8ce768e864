"""Moved to synth.solve.summary; kept so old imports work."""

from synth.solve.summary import ROUND_BOUND_SCOPE, SOLVER_FIELDS, solve_summary

__all__ = ["ROUND_BOUND_SCOPE", "SOLVER_FIELDS", "solve_summary"]
