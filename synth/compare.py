"""Moved to :mod:`synth.analysis.compare`; kept so old imports work.

Examples
--------
>>> from synth.compare import compare
>>> import synth.analysis.compare
>>> compare is synth.analysis.compare.compare
True
"""

from synth.analysis.compare import EXPLICIT_BASELINE_LIMIT, Row, candidates, compare

__all__ = ["Row", "compare", "candidates", "EXPLICIT_BASELINE_LIMIT"]
