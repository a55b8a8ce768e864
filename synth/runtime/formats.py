"""The export formats: one registry that ``synth export --format`` takes its choices from.

Each :class:`ExportFormat` names its format, says in a few words what it is, lists the options
it reads (the ``synth export`` flags' names, ``_`` for ``-``) and writes a certificate's or
explicit file's schedule through one function ``export(path, out, options, progress)`` that
returns an :class:`Exported`: the summary ``--json`` prints, the lines printed without it,
the notes and check errors for stderr, and whether the export passed its check (nothing is
written when it did not).  Adding a format is one function plus one row of :data:`EXPORT_FORMATS`
(and, if it has options of its own, their flags in :mod:`synth.cli.export`).

Examples
--------
>>> list(EXPORT_FORMATS)
['explicit', 'msccl-xml']
>>> import os, tempfile
>>> from synth.baselines import build_baseline
>>> from synth.topology.torus import parse_torus
>>> d = tempfile.mkdtemp()
>>> src, dst = os.path.join(d, "ring.jsonl"), os.path.join(d, "ring.xml")
>>> build_baseline("ring", parse_torus("3x3")).write(src, 1 << 10)
>>> done = EXPORT_FORMATS["msccl-xml"].export(src, dst, {"check": True})
>>> done.ok, done.summary["check"]["ok"], open(dst).read().startswith("<algo ")
(True, True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from synth.runtime.explicit_export import MAX_TRANSMISSIONS, export_explicit
from synth.runtime.msccl.check import check_xml
from synth.runtime.msccl.export import DEFAULT_MAX_BYTES, export_msccl, export_summary_json
from synth.runtime.msccl.limits import MAX_MSCCL_TRANSMISSIONS

__all__ = ["Exported", "ExportFormat", "EXPORT_FORMATS"]


@dataclass(frozen=True)
class Exported:
    """What an export wrote and says: ``summary`` (JSON-ready), ``lines`` (text), ``notes`` and ``errors``
    (for stderr; notes quote library parameters `like_this`), ``ok`` (False: its check failed, nothing written)."""

    summary: dict
    lines: tuple
    notes: tuple = ()
    errors: tuple = ()
    ok: bool = True


@dataclass(frozen=True)
class ExportFormat:
    """A format: ``name`` (the ``--format`` word), ``help``, the ``options`` it reads and its ``export``."""

    name: str
    help: str
    options: tuple
    export: Callable[..., Exported]


def _quiet(_message):
    pass


def _explicit(path, out, options: dict, progress=_quiet) -> Exported:
    summary, line = export_explicit(path, out, options.get("elements"),
                                    options.get("max_transmissions") or MAX_TRANSMISSIONS, progress)
    return Exported(summary, (line,))


def _msccl(path, out, options: dict, progress=_quiet) -> Exported:
    """MSCCL XML; with ``check``, validated and executed by the interpreter first, and written only if it passes."""
    max_bytes = options.get("max_bytes")
    ex = export_msccl(path, None, proto=options.get("proto") or "Simple", name=options.get("name"),
                      inplace=not options.get("no_inplace"), outofplace=not options.get("no_outofplace"),
                      min_bytes=options.get("min_bytes") or 0,
                      max_bytes=DEFAULT_MAX_BYTES if max_bytes is None else max_bytes,
                      max_transmissions=options.get("max_transmissions") or MAX_MSCCL_TRANSMISSIONS)
    summary, ok, errors = export_summary_json(ex, out), True, []
    if options.get("check"):
        rep = check_xml(ex.xml, coll=ex.coll)
        ok, errors = rep.ok, rep.errors[:20]
        summary["check"] = {"ok": rep.ok, "errors": errors, "executed": rep.executed,
                            "race_checked": rep.race_checked, "notes": rep.notes}
    if ok:
        ex.write(out)  # only what passed the check (atomic: a failure leaves an older file intact)
    else:
        summary["path"] = None
    lines = [f"{f'wrote {out}' if ok else f'did not write {out} (the check failed)'}: {ex.summary()}"]
    if ok:
        lines.append(f"  load it with MSCCL_XML_FILES={out} (MSCCL), or put it in MSCCL_ALGO_DIR "
                     "(msccl-executor-nccl: NCCL_MSCCL_ENABLE=1; RCCL: RCCL_MSCCL_ENABLE=1); the "
                     + ("buffer's element count" if ex.coll == "allreduce" else "per-rank count (each rank's block)")
                     + f" must be a multiple of {ex.nchunksperloop}, and the communicator needs >= {ex.nchannels} "
                       "channel(s)")
    if "check" in summary:
        c = summary["check"]
        lines.append(f"  check: {'OK' if c['ok'] else 'FAILED'} ({', '.join(c['executed'])}"
                     f"{', race-free' if c['race_checked'] else ''})")
    return Exported(summary, tuple(lines), tuple(ex.notes), tuple(errors), ok)


#: the formats ``synth export --format`` takes, the default first
EXPORT_FORMATS = {f.name: f for f in (
    ExportFormat("explicit", "JSON Lines, one transmission a line", ("elements", "max_transmissions"), _explicit),
    ExportFormat("msccl-xml", "an MSCCL algorithm for MSCCL, msccl-executor-nccl and RCCL",
                 ("proto", "name", "min_bytes", "max_bytes", "no_inplace", "no_outofplace", "check",
                  "max_transmissions"), _msccl),
)}
