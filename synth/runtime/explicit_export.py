"""``synth export --format explicit``: a certificate lifted to explicit JSON Lines, or an explicit file re-emitted.

:func:`export_explicit` lifts a certificate's base schedule by its group (refusing more than
``max_transmissions``), or re-emits an explicit file (what ``synth baseline`` writes).  An
explicit file already is the ``explicit`` format: :func:`reemit_explicit` reads it
through :func:`synth.check.explicit.read_explicit` (so a malformed file is refused with the line
that is wrong) and writes it again, optionally re-cut to another element count.  For
``--format msccl-xml`` the exporter (:func:`synth.runtime.msccl.export_msccl`) takes the
path directly: its chunk sizes become the MSCCL chunk weights.

Examples
--------
>>> import os, tempfile
>>> from synth.baselines import build_baseline
>>> from synth.topology.torus import parse_torus
>>> d = tempfile.mkdtemp()
>>> src, dst = os.path.join(d, "ring.jsonl"), os.path.join(d, "copy.jsonl")
>>> build_baseline("ring", parse_torus("3x3")).write(src, 1 << 10)
>>> reemit_explicit(src, dst).startswith(f"wrote {dst}: already explicit;")
True
>>> open(src).read() == open(dst).read()
True
"""

from __future__ import annotations

import numpy as np

from synth.check.certificate import read_certificate
from synth.check.claims import file_kind
from synth.check.explicit import read_explicit, write_explicit
from synth.errors import SynthError
from synth.schedule.chunking import block_chunk_elements, chunk_elements, require_elements
from synth.schedule.lift import lift, lifted_chunk_elements

__all__ = ["reemit_explicit", "export_explicit", "MAX_TRANSMISSIONS"]

#: transmissions of a lifted explicit file at most, unless the caller raises it
MAX_TRANSMISSIONS = 20_000_000


def _quiet(_message):
    pass


def export_explicit(path, out, elements: int | None = None, max_transmissions: int = MAX_TRANSMISSIONS,
                    progress=_quiet):
    """Write the schedule of the certificate or explicit file ``path`` to ``out`` as explicit JSON Lines.

    Returns ``(summary, line)``: what ``synth export --json`` prints and the one line it prints
    without ``--json``.  A certificate is lifted by its group (its claims kept when ``elements`` is
    its own); an explicit file is re-emitted (:func:`reemit_explicit`).

    Raises
    ------
    SynthError
        For a malformed file, more than ``max_transmissions`` transmissions (the parameter is named,
        `like_this`), or ``elements`` below the chunk count.
    """
    if file_kind(path) == "explicit":  # e.g. a baseline: already explicit, re-written after validation
        line = reemit_explicit(path, out, elements)
        return {"file": out, "format": "explicit", "note": line}, line
    cert = read_certificate(path)
    n = cert.base.n_transmissions * cert.group.order
    if n > max_transmissions:
        raise SynthError(f"the explicit schedule has {n:,} transmissions, over `max_transmissions` "
                         f"{max_transmissions:,}; raise it if you really want that file")
    elements = elements or cert.elements
    require_elements(elements, cert.base.n_components * cert.group.order)  # as `solve --elements` refuses it
    progress(f"lifting {n:,} transmissions")
    schedule = lift(cert.base, cert.group, cert.dropped)
    sizes = lifted_chunk_elements(cert.base, cert.group, elements)  # reduce-scatter / allgather: equal blocks
    write_explicit(schedule, sizes, out, cert.claims if elements == cert.elements else None)
    n = schedule.n_transmissions     # without the dropped chips' sends
    summary = {"file": out, "format": "explicit", "transmissions": n, "chunks": schedule.n_chunks,
               "rounds": schedule.n_rounds, "elements": elements}
    return summary, f"wrote {out}: {n} transmissions, {schedule.n_chunks} chunks, {schedule.n_rounds} rounds"


def reemit_explicit(path, out, elements: int | None = None) -> str:
    """Write the explicit file ``path`` again to ``out``, after reading and validating it.

    Parameters
    ----------
    path, out
        The explicit file and where to write (may be the same path; the write is atomic).
    elements : int, optional
        Re-cut the chunks for this many elements per node, in proportion to the file's
        chunk sizes (equal chunks if they are all zero); the header's claims are dropped
        then, since they were made for the old sizes.

    Returns
    -------
    str
        One line for the user.

    Raises
    ------
    SynthError
        For a malformed file (:class:`~synth.errors.FileFormatError`) or a bad element count.
    """
    schedule, sizes, header = read_explicit(path)
    claims = header.get("claims")
    total = int(sizes.sum())
    recut = elements is not None and elements != total
    if recut:
        if elements < 0:
            raise SynthError(f"elements must be non-negative, not {elements}")
        require_elements(elements, schedule.n_chunks)
        weights = sizes if total > 0 else np.ones(sizes.size, dtype=np.int64)
        if schedule.owner is None:
            sizes = chunk_elements(weights, elements)
        else:  # a reduce-scatter or allgather: p equal blocks, each cut over its owner's chunks
            sizes = block_chunk_elements(schedule.owner, weights, schedule.topology.compute, elements)
        claims = None
    write_explicit(schedule, sizes, out, claims)
    n = sum(len(b) for b in schedule.blocks)
    how = f"re-cut for {int(elements)} elements" if recut else "already explicit; re-written"
    return (f"wrote {out}: {how}, {n} transmissions, {schedule.n_chunks} chunks, {schedule.n_rounds} rounds"
            + ("" if claims is None else ", claims kept"))
