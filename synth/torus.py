"""Moved to synth.topology.torus; kept so old imports work."""

from synth.topology.torus import Torus, torus, parse_torus, shape_sides

__all__ = ["Torus", "torus", "parse_torus", "shape_sides"]
