"""Moved to synth.solve.by_size; kept so old imports work."""

from synth.solve.by_size import SizeChoice, choose_by_size, elements_for, size_note, size_summary

__all__ = ["SizeChoice", "choose_by_size", "elements_for", "size_note", "size_summary"]
