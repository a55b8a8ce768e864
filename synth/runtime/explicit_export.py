"""``synth export`` of an explicit schedule file (what ``synth baseline`` writes).

An explicit file already is the ``explicit`` format: :func:`reemit_explicit` reads it
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

from synth.check.explicit import read_explicit, write_explicit
from synth.errors import SynthError
from synth.schedule.data import block_chunk_elements, chunk_elements, require_elements

__all__ = ["reemit_explicit"]


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
