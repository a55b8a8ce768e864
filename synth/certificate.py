"""Moved to :mod:`synth.check.certificate`; kept so old imports work."""

from synth.check.certificate import (FORMAT, VERSION, Certificate, base_from_json, base_shape, base_to_json,
                                     certificate_to_json, check_declared_size, dumps, read_certificate,
                                     write_certificate)

__all__ = ["Certificate", "FORMAT", "VERSION", "base_to_json", "base_from_json", "base_shape",
           "check_declared_size", "read_certificate", "write_certificate", "certificate_to_json", "dumps"]
