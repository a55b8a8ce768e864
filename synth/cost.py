"""Moved to :mod:`synth.analysis.cost` (the cost model) and :mod:`synth.units` (sizes, rates, times); kept so old
imports work.

Examples
--------
>>> from synth.cost import parse_size, model_time
>>> import synth.analysis.cost, synth.units
>>> parse_size is synth.units.parse_size, model_time is synth.analysis.cost.model_time
(True, True)
"""

from synth.analysis.cost import PAPER_SIZES, Network, goodput, goodput_bound, model_time
from synth.units import MAX_SIZE, format_size, parse_bandwidth, parse_size, parse_time

__all__ = ["Network", "parse_size", "parse_bandwidth", "parse_time", "model_time", "goodput", "goodput_bound",
           "format_size", "PAPER_SIZES", "MAX_SIZE"]
