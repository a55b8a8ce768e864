"""Moved to :mod:`synth.runtime.msccl.check` (parse, validate, interpret, races); kept so old imports work."""

from synth.runtime.msccl.check import (STEP_TYPES, Algo, CheckLimits, CheckReport, Gpu, Step, ThreadBlock, XmlError,
                                       check_xml, interpret, parse_xml, race_check, validate)

__all__ = ["Algo", "Gpu", "ThreadBlock", "Step", "CheckLimits", "CheckReport", "XmlError", "parse_xml", "validate",
           "interpret", "race_check", "check_xml", "STEP_TYPES"]
