"""MSCCL XML: the exporter (``synth export --format msccl-xml``) and, apart from it, a validator.

* :mod:`~synth.runtime.msccl.limits`: the runtimes' limits, one definition both sides read;
* :mod:`~synth.runtime.msccl.export`: :func:`export_msccl` over :mod:`~synth.runtime.msccl.layout`
  (places), :mod:`~synth.runtime.msccl.operations` (runs, operations, dependencies) and
  :mod:`~synth.runtime.msccl.threadblocks` (threadblocks, the XML);
* :mod:`~synth.runtime.msccl.check`: parse, validate, interpret and race-check XML, never
  importing the exporter.

This face keeps ``from synth.runtime.msccl import export_msccl`` (the old module path) working.
The exporter's names load on first use (PEP 562 ``__getattr__``), so that importing the
validator, which loads this package first, still loads no exporter (``tests/test_isolation.py``).
"""

from synth.runtime.msccl.limits import PROTOCOLS, SCRATCH_CAP, MscclLimits, MscclOptions

__all__ = ["MscclLimits", "MscclOptions", "MscclExport", "export_msccl", "export_summary_json", "scratch_bytes",
           "xml_name", "PROTOCOLS", "DEFAULT_MAX_BYTES", "NO_SCRATCH_MAX_BYTES", "SCRATCH_CAP"]

_EXPORTER = ("MscclExport", "export_msccl", "export_summary_json", "scratch_bytes", "xml_name", "DEFAULT_MAX_BYTES",
             "NO_SCRATCH_MAX_BYTES")


def __getattr__(name):
    if name in _EXPORTER:
        # imported here, not at the top: the validator (synth.runtime.msccl.check) must load without the exporter
        from synth.runtime.msccl import export

        return getattr(export, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
