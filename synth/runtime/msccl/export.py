"""Export a schedule as an MSCCL XML algorithm (``coll="allreduce"``, ``"reducescatter"``, ``"allgather"``).

The file loads without hand edits in the MSCCL runtimes that read the MSCCL XML format:
msccl-executor-nccl, RCCL's MSCCL path and the original MSCCL (``MSCCL_XML_FILES``).
:mod:`synth.runtime.msccl.check` validates the structural rules below and executes the
XML on numpy buffers.

Translation
-----------
* One MSCCL chunk per unit of chunk weight: chunk ``c`` of weight ``w_c`` covers
  ``w_c`` consecutive MSCCL chunks (``nchunksperloop`` = total weight, reduced by the
  gcd); the chunk order is the layout of :mod:`synth.runtime.plan`, chosen so that the
  chunks a message packs are adjacent.  A chunk heavier than one step carries (packed
  schedules: about a thousand units per owner) makes the export round the source's weights
  to fewer MSCCL chunks in the same proportions (:func:`coarser_weights`; a certificate's
  relative weights only, never an explicit file's element counts), with a note
  saying what that costs in bandwidth term; every chunk is an allreduce of its own
  elements, so any positive weights give a correct algorithm.  Transmissions with the same round, sender and
  receiver form one message (a multi-hop route becomes a direct send from sender to
  receiver: the route is the interconnect's business); every contiguous run of a message
  becomes one ``s`` step at the sender and one ``r`` (copy) or ``rrc`` (reduce) step at
  the receiver, with equal ``cnt`` (at most ``max_count - 1``).  Optionally (``initial_copy``)
  the input is first copied into the output, so that runs never break between chunks
  still in ``i`` and chunks already updated in ``o``.
* GPU fabrics: a route through switches is one send between GPUs (above); a connection that
  leaves a server goes on the channel of its NIC rail (:mod:`synth.runtime.msccl.rails`), so the
  runtime's per-channel network connections follow the rails the schedule chose.
* Threadblocks: one per (peer, direction) for every connection segment, ``send`` *or*
  ``recv``, never both.  With that split the program completes even when a send cannot
  finish before its receive has started (zero buffering): a send of round ``s`` only
  waits for writes of earlier rounds, and a receive only for earlier rounds and, within
  its round, for receives from lower-numbered peers into the same chunk.
* Buffers: the input ``i`` is never written (so ``outofplace`` is safe) and is treated as
  the same memory as ``o`` when planning (so ``inplace`` is safe too).  The payload of a
  round-``s`` message is the sender's value at the start of the round, so a chunk that a
  GPU both sends and receives in one round is received into the *other* place (scratch
  ``s`` or output ``o``); places are planned backwards so that the last value lands in
  ``o`` whenever possible, else a final local ``cpy`` moves it there.
* Dependencies: read-after-write, write-after-read and write-after-write on every
  (GPU, chunk, place), reduced with vector clocks to the ones not implied by the order
  of threadblocks and by other dependencies; a step keeps one dependency and the others
  become ``nop`` steps just before it (the runtimes allow one per step).
* Limits (:class:`MscclLimits`): when a threadblock would exceed ``max_steps``, its
  connection is split by rounds over more channels; what still does not fit is refused
  with :class:`~synth.errors.ScheduleError` saying which limit.
* ``maxBytes``: the original MSCCL (microsoft/msccl) allocates scratch for the largest
  buffer an algorithm may be selected for, ``maxBytes * s_chunks / nchunksperloop`` bytes
  per GPU (:func:`scratch_bytes`), where msccl-executor-nccl and RCCL size it per call
  from the actual buffer (``mscclSetupScratch`` in ``src/misc/msccl/msccl_setup.cc``:
  ``nBytes * nScratchChunks / nChunksPerLoop``).  By default the export therefore picks
  the largest ``maxBytes`` whose scratch stays within :data:`SCRATCH_CAP` (1 GiB), or
  :data:`NO_SCRATCH_MAX_BYTES` (1 TiB) when the algorithm uses no scratch; an explicit
  ``max_bytes`` above that is kept, with a note in :attr:`MscclExport.notes`.

Reduce-scatter and allgather
----------------------------
A schedule whose collective is ``reduce-scatter`` or ``allgather`` becomes ``coll="reducescatter"``
or ``coll="allgather"`` with the runtimes' buffers, as msccl-tools writes them
(``msccl/language/collectives.py``: ``ReduceScatter``, ``AllGather``; ``ir.py``: ``ir_to_xml``)
and as msccl-executor-nccl and RCCL read them (``src/misc/msccl/msccl_parser.cc``: ``sizeMultiplier =
nGpus`` for both; ``msccl_setup.cc``: ``sizePerMscclChunk = count * sizeMultiplier / nChunksPerLoop``,
``count`` being the per-rank count; the original MSCCL's kernel gets ``comm->nRanks`` as its
multiplier too, ``src/collectives/device/all_gather.h``):

* ``nchunksperloop`` counts MSCCL chunks of the *whole* vector, ``p * B``, each GPU's block
  being ``B`` of them: the chunks lie by owner rank, then chunk id
  (:func:`synth.runtime.plan.owner_layout`), a block's chunks cut in proportion to their weights.
* reduce-scatter: ``i_chunks = p * B`` (the vector), ``o_chunks = B`` (the GPU's block: output
  offset ``x`` is vector offset ``r * B + x``); a chunk of another block is summed in scratch, since
  ``i`` is never written, and a scratch place passes to another chunk once its value is dead and a
  dependency orders its last read before the new write (``scratch_reuse``).  allgather: ``i_chunks = B``
  (the GPU's block), ``o_chunks = p * B``.
* ``inplace`` / ``outofplace`` as for allreduce; in place the runtimes pass ``recvbuff = sendbuff +
  r * count`` (reduce-scatter) or ``sendbuff = recvbuff + r * count`` (allgather), which is how the
  selection in ``mscclInternalSchedulerSelectAlgo`` (``msccl_lifecycle.cc``) recognizes in-place calls.
  The planner treats the aliased chunks as one memory (:class:`~synth.runtime.msccl.layout.BufferMap`),
  so one file is correct both ways; out of place, an allgather copies its own block from ``i`` to
  ``o`` (in place that copy is the identity, and an export with ``outofplace=False`` omits it).
  msccl-tools folds the aliased buffer into the other when it writes an in-place program; the
  file here names both, which the runtimes' pointers make the same memory in an in-place call.
* ``minBytes`` / ``maxBytes`` and the scratch are in bytes of the whole vector (``nBytes = count *
  typesize * sizeMultiplier``); msccl-executor-nccl selects the algorithm only when the per-rank
  ``count`` is a multiple of ``nchunksperloop``.

Examples
--------
>>> from synth import lift, parse_torus, sp_allreduce, torus_gamma  # the public names
>>> from synth.runtime.msccl.check import check_xml
>>> t = parse_torus("4x4")
>>> ex = export_msccl(lift(sp_allreduce(t), torus_gamma(t)))
>>> ex.ngpus, ex.nchunksperloop, ex.nchannels, ex.max_tbs_per_gpu
(16, 64, 1, 8)
>>> ex.xml.startswith('<algo name="')
True
>>> check_xml(ex.xml).ok
True
>>> from synth.schedule.collective import collective_half
>>> rs = export_msccl(lift(collective_half(sp_allreduce(t), "reduce-scatter"), torus_gamma(t)))
>>> rs.coll, rs.nchunksperloop, re.findall(r'i_chunks="(\\d+)" o_chunks="(\\d+)"', rs.xml)[0]
('reducescatter', 64, ('64', '4'))
>>> check_xml(rs.xml).executed[:2]
['out-of-place', 'in-place']
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

import numpy as np

from synth.errors import ScheduleError
from synth.fileio import write_atomic
from synth.runtime.msccl.layout import BufferMap, ChunkLayout
from synth.runtime.msccl.limits import PROTOCOLS, SCRATCH_CAP, MscclLimits, MscclOptions
from synth.runtime.msccl.operations import plan_operations
from synth.runtime.msccl.rails import connection_rails
from synth.runtime.msccl.threadblocks import emit_xml, fit_threadblocks
from synth.check.claims import file_kind
from synth.check.metrics import measure_explicit
from synth.runtime.plan import flatten, greedy_layout, load_schedule, owner_layout
from synth.schedule.weights import keep_chunks, largest_remainder

__all__ = ["MscclLimits", "MscclOptions", "MscclExport", "export_msccl", "export_summary_json", "scratch_bytes",
           "xml_name", "PROTOCOLS", "DEFAULT_MAX_BYTES", "NO_SCRATCH_MAX_BYTES", "SCRATCH_CAP"]

COLLS = {"allreduce": "allreduce", "reduce-scatter": "reducescatter", "allgather": "allgather"}  # synth -> XML
NO_SCRATCH_MAX_BYTES = 1 << 40  # 1 TiB; nonzero because the original MSCCL selects only below maxBytes
DEFAULT_MAX_BYTES = None  # chosen per export from the scratch it uses (see the module docstring)


@dataclass
class MscclExport:
    """The exported algorithm and what it needs.

    ``xml`` is the file's text; ``order`` the chunk layout and ``unit_offset[c]`` where
    schedule chunk ``c`` starts, in MSCCL chunks (each ``count / nchunksperloop`` elements);
    ``max_bytes`` the declared ``maxBytes``; ``notes`` what a user should know (e.g. the
    scratch the original MSCCL would allocate), one line each.
    """

    xml: str
    name: str
    ngpus: int
    nchunksperloop: int
    nchannels: int
    max_tbs_per_gpu: int
    max_steps_per_tb: int
    n_steps: int
    n_nops: int
    scratch_chunks: int
    final_copies: int
    order: np.ndarray = field(repr=False)
    unit_offset: np.ndarray = field(repr=False)
    initial_copy: bool = False
    max_bytes: int = 0
    notes: list = field(default_factory=list)
    coll: str = "allreduce"

    def write(self, path) -> None:
        """Write the XML atomically (temp file + rename)."""
        write_atomic(path, [self.xml], kind="msccl-xml")

    def summary(self) -> str:
        return (f"{self.name}: {self.ngpus} GPUs, nchunksperloop {self.nchunksperloop}, {self.nchannels} channel(s), "
                f"up to {self.max_tbs_per_gpu} threadblocks per GPU and {self.max_steps_per_tb} steps per "
                f"threadblock ({self.n_steps} steps, {self.n_nops} nops), scratch {self.scratch_chunks} chunks, "
                f"{self.final_copies} final local copies"
                + (", input copied to output first" if self.initial_copy else "")
                + f", maxBytes {self.max_bytes}" + ("" if self.coll == "allreduce" else f", coll {self.coll}"))


def xml_name(name: str, max_bytes: int = 255) -> str:
    """``name`` made safe for the ``algo`` attribute and cut to ``max_bytes`` bytes of UTF-8.

    The runtimes' tokenizer reads bytes up to the closing double quote and does not decode
    entities, so quotes and markup characters are replaced, control characters (tabs and
    newlines, which it does not skip) become spaces, and the cut never splits a character.

    Examples
    --------
    >>> xml_name('a "b" <c> & d')
    "a 'b' (c) and d"
    >>> len(xml_name("é" * 200).encode()), xml_name("aé", 2)
    (254, 'a')
    """
    name = name.replace('"', "'").replace("<", "(").replace(">", ")").replace("&", "and")
    name = re.sub(r"[\x00-\x1f\x7f]", " ", name)
    return name.encode("utf-8", "replace")[:max_bytes].decode("utf-8", "ignore")


def scratch_bytes(max_bytes: int, s_chunks: int, nchunksperloop: int) -> int:
    """Scratch per GPU the original MSCCL allocates at init: ``maxBytes * s_chunks // nchunksperloop``.

    Examples
    --------
    >>> scratch_bytes(1 << 40, 8, 256) >> 30  # GiB: the 8x8 exchange export with maxBytes 1 TiB
    32
    """
    return int(max_bytes) * int(s_chunks) // int(nchunksperloop)


def _resolve_max_bytes(max_bytes, min_bytes, units, s_max, cap):
    """``(maxBytes, notes)``: the default from the scratch cap, or the given value with a note if over it."""
    if max_bytes is None:
        if s_max == 0:
            return NO_SCRATCH_MAX_BYTES, []
        mb = min(cap * units // s_max, NO_SCRATCH_MAX_BYTES)
        if mb <= min_bytes:
            raise ScheduleError(f"`min_bytes` {min_bytes} leaves no sizes whose scratch ({s_max} of {units} chunks per "
                                f"GPU) stays within {cap} bytes; pass `max_bytes` explicitly")
        return mb, []
    if max_bytes < 1 or max_bytes < min_bytes:
        raise ScheduleError(f"`max_bytes` {max_bytes} must be at least 1 and at least `min_bytes` {min_bytes}: "
                            "the runtime would never select the algorithm")
    need = scratch_bytes(max_bytes, s_max, units)
    if need <= cap:
        return int(max_bytes), []
    return int(max_bytes), [f"maxBytes {max_bytes} makes the original MSCCL (microsoft/msccl) allocate {need:,} bytes "
                            f"of scratch per GPU at init (maxBytes x s_chunks {s_max} / nchunksperloop {units}), over "
                            f"{cap:,}; a smaller `max_bytes` avoids that, as do msccl-executor-nccl and RCCL, which "
                            "size scratch per call"]


def export_msccl(source, path=None, options: MscclOptions | None = None, *, weights=None,
                 **fields) -> MscclExport:
    """Translate a schedule into an MSCCL allreduce, reducescatter or allgather algorithm (module docstring).

    Parameters
    ----------
    source
        A certificate or explicit file path, or anything
        :func:`~synth.runtime.plan.load_schedule` takes (Schedule, Baseline, Certificate).
    path : str, optional
        Also write the XML there.
    options : MscclOptions, optional
        What the algorithm declares and how it is planned (protocol, name, in/out of place,
        byte range, scratch, limits, layout, initial copy); default ``MscclOptions()``.
    weights : array_like, optional
        Relative chunk sizes (integers), kept exactly; default: the source's (equal for lifted schedules;
        an explicit file's chunk sizes, kept exactly too), a certificate's rounded to fewer MSCCL chunks
        where a chunk would not fit one step (:func:`coarser_weights`; a note says what that costs).
    **fields
        Fields of :class:`MscclOptions` that replace those of ``options``
        (``export_msccl(s, proto="LL")`` is ``export_msccl(s, options=MscclOptions(proto="LL"))``).

    Returns
    -------
    MscclExport

    Raises
    ------
    ScheduleError
        When the schedule cannot fit the limits (the message names the limit), or is malformed.
    """
    opts = replace(options or MscclOptions(), **fields)
    opts.check()
    schedule, w_src, label = load_schedule(source, opts.max_transmissions)
    coll = COLLS.get(schedule.collective)
    if coll is None:
        raise ScheduleError(f"the MSCCL export writes allreduce, reduce-scatter and allgather algorithms, not "
                            f"{str(schedule.collective)[:40]}")
    w, bufmap = _units(schedule, w_src if weights is None else weights, coll)
    limits, coarse = opts.limits, [None]
    if coll == "allreduce" and weights is None and not _explicit_file(source):
        coarse = coarser_weights(w, limits)   # weights given, or an explicit file's sizes, are kept exactly
    for fit in coarse:   # the exact weights, or ever coarser ones until the steps fit the limits
        try:
            best = _export_weighted(schedule, w if fit is None else fit, bufmap, label, opts)
        except ScheduleError:
            if fit is coarse[-1]:
                raise
            continue
        if fit is not None:
            best.notes.append(_coarse_note(schedule, w, fit, limits))
        break
    if path is not None:
        best.write(path)
    return best


def _explicit_file(source) -> bool:
    return isinstance(source, (str, os.PathLike)) and file_kind(source) == "explicit"


def coarser_weights(w, limits: MscclLimits):
    """The chunk weights to try for integer weights ``w``, in order.

    ``[None]`` (the weights as they are) when every chunk fits one step (``cnt < max_count``) and
    the loop fits ``max_chunks``; otherwise weights in the same proportions over ever fewer MSCCL
    chunks (:func:`~synth.schedule.weights.largest_remainder`: each within one of the exact share; the
    heaviest chunk at most ``max_count - 1``; a light chunk may get none and drop out, the others
    still cover the vector), halving the loop down to one MSCCL chunk per chunk on average.
    Packed schedules (:mod:`synth.models.packing`) have chunks of a thousand units and more.

    Examples
    --------
    >>> [t.tolist() for t in coarser_weights(np.array([456, 300, 1]), MscclLimits())]
    [[71, 46, 0], [35, 23, 0], [17, 12, 0], [4, 3, 0], [2, 1, 0], [1, 0, 0]]
    >>> coarser_weights(np.array([3, 1]), MscclLimits())
    [None]
    """
    cap, U = limits.max_count - 1, int(w.sum())
    if int(w.max()) <= cap and U <= limits.max_chunks:
        return [None]
    total = int(U * min(cap / int(w.max()), limits.max_chunks / U))
    out = []
    while total >= 1:
        fit = largest_remainder(w, total)    # each within one of its share: at most cap
        if fit.max() > 0:
            fit = fit // int(np.gcd.reduce(fit[fit > 0]))
            if not out or not np.array_equal(fit, out[-1]):
                out.append(fit)
        if total <= w.size // 2:
            break
        total //= 2
    return out


def _coarse_note(schedule, w, fit, limits) -> str:
    """What the coarser weights cost: the modeled bandwidth term per element against the exact weights'."""
    exact = measure_explicit(schedule, w).bandwidth_term / int(w.sum())
    part, kept = keep_chunks(schedule, fit)
    coarse = measure_explicit(part, kept).bandwidth_term / int(kept.sum())
    dropped = int((fit == 0).sum())
    return (f"chunk weights rounded from {int(w.sum())} to {int(fit.sum())} MSCCL chunks per loop (a step carries at "
            f"most {limits.max_count - 1}, a loop at most {limits.max_chunks})"
            + (f", {dropped} of {w.size} chunks too light to keep" if dropped else "")
            + f": bandwidth term per element {float(100 * coarse / exact):.2f} % of the exact weights' (the certificate's)")


def _export_weighted(schedule, w, bufmap, label, opts) -> MscclExport:
    """The export with MSCCL chunk weights ``w``: the layout, then the best of the initial-copy variants."""
    units, p, limits = int(w.sum()), schedule.topology.n_compute, opts.limits
    if units > limits.max_chunks:
        raise ScheduleError(f"the chunk sizes of {label} reduce to nchunksperloop = {units} MSCCL chunks, over the "
                            f"limit {limits.max_chunks} (int16 offsets); use fewer or equal-size chunks (for an "
                            "explicit file: an element count divisible by the number of chunks)")
    opts = replace(opts, name=xml_name(opts.name or f"synth {label}, {schedule.topology.name}, {schedule.n_rounds} "
                                       "rounds", limits.max_name_bytes))
    if p > limits.max_subs:
        raise ScheduleError(f"{p} GPUs: over the parser limit of {limits.max_subs} gpu elements")
    arrays, layout = _messages(schedule, w, bufmap, opts.layout)
    rails = connection_rails(schedule)
    tries = [opts.initial_copy] if opts.initial_copy is not None else [False, True]
    reuse = (bufmap.coll == "reducescatter") if opts.scratch_reuse is None else bool(opts.scratch_reuse)
    best, failure = None, None
    for ic in tries:
        try:
            ex = _build_reusing(arrays, layout, opts, ic, reuse, rails)
        except ScheduleError as exc:
            failure = failure or exc
            continue
        if best is None or (ex.nchannels, ex.max_tbs_per_gpu, ex.n_steps) < (
                best.nchannels, best.max_tbs_per_gpu, best.n_steps):
            best = ex
    if best is None:
        raise failure
    return best


def _units(schedule, weights, coll):
    """``(w, bufmap)``: the MSCCL chunks of every schedule chunk, and where chunks live in ``i`` and ``o``."""
    w_in = np.asarray(weights).ravel()
    w = w_in.astype(np.int64)
    if w.size != schedule.n_chunks or np.any(w < 0) or int(w.sum()) <= 0 or not np.array_equal(w, w_in):
        raise ScheduleError(f"need {schedule.n_chunks} non-negative integer chunk weights with a positive sum")
    if coll == "allreduce":
        return w // int(np.gcd.reduce(w[w > 0])), BufferMap()
    return _block_units(schedule, w, schedule.topology.n_compute)


def _messages(schedule, w, bufmap, layout):
    """``(arrays, ChunkLayout)``: the transmissions of positive weight sorted by message, then by chunk
    position in the layout, and the layout (``layout`` names the chunk order of an allreduce)."""
    rnd, op, chunk, src, dst, _ = flatten(schedule)
    keep = w[chunk] > 0
    rnd, op, chunk, src, dst = rnd[keep], op[keep], chunk[keep], src[keep], dst[keep]
    C = schedule.n_chunks
    # messages: (round, src, dst); layout from their chunk sets
    srt = np.lexsort((chunk, dst, src, rnd))
    rnd, op, chunk, src, dst = rnd[srt], op[srt], chunk[srt], src[srt], dst[srt]
    mkeys = np.stack([rnd, src, dst], axis=1)
    new = np.ones(rnd.size, dtype=bool)
    new[1:] = np.any(mkeys[1:] != mkeys[:-1], axis=1)
    mptr = np.append(np.flatnonzero(new), rnd.size)
    if layout not in ("greedy", "identity"):
        raise ScheduleError(f"unknown layout {layout!r}; valid: greedy, identity")
    if bufmap.coll != "allreduce":
        order = owner_layout(schedule)
    else:
        order = greedy_layout(C, chunk, mptr) if layout == "greedy" else np.arange(C, dtype=np.int64)
    pos = np.empty(C, dtype=np.int64)
    pos[order] = np.arange(C)
    unit_offset = np.zeros(C, dtype=np.int64)
    unit_offset[order] = np.concatenate([[0], np.cumsum(w[order])[:-1]])
    msg = np.cumsum(new) - 1
    srt = np.lexsort((pos[chunk], msg))
    arrays = (rnd[srt], op[srt], chunk[srt], src[srt], dst[srt], msg[srt])
    return arrays, ChunkLayout(w, order, pos, unit_offset, mptr, schedule.topology.n_compute,
                               int(schedule.n_rounds), bufmap)


def _build_reusing(arrays, layout, opts, initial_copy, reuse, rails=None):
    """:func:`_build` with scratch reuse if asked, or without it where reuse costs a channel.

    Reuse adds dependencies (``nop`` steps) and may cut runs, so a threadblock can outgrow
    ``max_steps`` and its connection be split over more threadblocks, possibly on another
    channel, which the communicator must then have; so with more than one channel, one place
    per chunk is built too and kept if it needs fewer channels, with a note saying so.  More
    threadblocks on as many channels are accepted (within ``max_tbs``).
    """
    try:
        ex = _build(arrays, layout, opts, initial_copy, reuse, rails)
    except ScheduleError:
        if not reuse:
            raise
        ex = None
    if reuse and (ex is None or ex.nchannels > 1):
        once = _build(arrays, layout, opts, initial_copy, False, rails)
        if ex is None or once.nchannels < ex.nchannels:
            why = ("did not fit the limits" if ex is None else
                   f"needed {ex.nchannels} channel(s) and {ex.max_tbs_per_gpu} threadblocks per GPU")
            once.notes.append(f"scratch reuse {why}; kept one scratch place per chunk ({once.scratch_chunks} "
                              f"chunks, {once.nchannels} channel(s), {once.max_tbs_per_gpu} threadblocks per GPU)")
            return once
    return ex


def _block_units(schedule, w, p):
    """MSCCL chunks per schedule chunk so that every GPU's block has the same ``B``; and the buffer map.

    Block ``r`` holds the chunks rank ``r`` owns, in proportion to their weights: with ``W_r``
    their weight sum (each block reduced by its gcd), ``B = lcm(W_r)`` and chunk ``c`` gets
    ``w_c * B / W_r`` MSCCL chunks.
    """
    t = schedule.topology
    rank = np.full(t.n_vertices, -1, dtype=np.int64)
    rank[t.compute] = np.arange(p)
    orank = rank[np.asarray(schedule.owner, dtype=np.int64)]
    totals = np.zeros(p, dtype=np.int64)
    np.add.at(totals, orank, w)
    if np.any(totals <= 0):
        r = int(np.argmax(totals <= 0))
        raise ScheduleError(f"GPU {r} owns no chunk of positive weight: its block would be empty")
    gcds = np.zeros(p, dtype=np.int64)
    np.gcd.at(gcds, orank, w)
    red = totals // gcds
    block = int(np.lcm.reduce(red))
    if block * p > np.iinfo(np.int64).max // max(int(w.max()), 1):
        raise ScheduleError("the blocks' chunk weights have no common unit that fits; use equal chunk weights")
    units = w // gcds[orank] * (block // red[orank])
    return units, BufferMap(COLLS[schedule.collective], block, orank)


def export_summary_json(ex: MscclExport, path=None) -> dict:
    """A JSON-ready summary of an export (what ``synth export --format msccl-xml --json`` prints)."""
    return {"name": ex.name, "coll": ex.coll, "ngpus": ex.ngpus, "nchunksperloop": ex.nchunksperloop,
            "nchannels": ex.nchannels,
            "max_threadblocks_per_gpu": ex.max_tbs_per_gpu, "max_steps_per_threadblock": ex.max_steps_per_tb,
            "steps": ex.n_steps, "nops": ex.n_nops, "scratch_chunks": ex.scratch_chunks,
            "final_copies": ex.final_copies, "max_bytes": ex.max_bytes,
            "scratch_bytes_at_max": scratch_bytes(ex.max_bytes, ex.scratch_chunks, ex.nchunksperloop),
            "notes": list(ex.notes), "path": None if path is None else os.fspath(path)}


def _build(arrays, layout, opts, initial_copy, reuse_scratch, rails=None):
    """Plan places, build the operations with dependencies, fit them into threadblocks (connections across
    servers on the channel of their ``rails``), emit the XML."""
    ops, s_chunks, n_final = plan_operations(arrays, layout, opts.limits, initial_copy=initial_copy,
                                             outofplace=opts.outofplace, reuse_scratch=reuse_scratch)
    tbs = fit_threadblocks(ops, layout.p, opts.limits, rails)
    s_max = int(s_chunks.max(initial=0))
    max_bytes, notes = _resolve_max_bytes(opts.max_bytes, opts.min_bytes, layout.units, s_max, opts.scratch_cap)
    opts = replace(opts, max_bytes=max_bytes)
    xml, stats = emit_xml(ops, tbs, layout, s_chunks, opts)
    return MscclExport(xml, opts.name, layout.p, layout.units, stats["nchannels"], stats["max_tbs"],
                       stats["max_steps"], stats["steps"], stats["nops"], s_max, n_final, layout.order,
                       layout.unit_offset, bool(initial_copy), max_bytes, notes, layout.bufmap.coll)
