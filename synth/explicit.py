"""Moved to :mod:`synth.check.explicit`; kept so old imports work."""

from synth.check.explicit import (FORMAT, MAX_EXPLICIT_BYTES, MAX_ROW_BYTES, VERSION, explicit_lines, read_explicit,
                                  write_explicit)

__all__ = ["FORMAT", "VERSION", "write_explicit", "read_explicit", "explicit_lines", "MAX_EXPLICIT_BYTES",
           "MAX_ROW_BYTES"]
