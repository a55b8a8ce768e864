"""Moved to :mod:`synth.check.claims` (``synth.certify.certify`` stays public API); kept so old imports work."""

from synth.check.claims import (EXPLICIT_HARD_LIMIT, EXPLICIT_LIMIT, MODES, Report, certify, check_certificate,
                                check_explicit, check_file, claims_of, file_kind)

__all__ = ["Report", "certify", "check_certificate", "check_explicit", "check_file", "claims_of", "file_kind",
           "MODES", "EXPLICIT_LIMIT", "EXPLICIT_HARD_LIMIT"]
