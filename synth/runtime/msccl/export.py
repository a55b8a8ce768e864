"""Export a schedule as an MSCCL XML algorithm (``coll="allreduce"``).

The file loads without hand edits in the MSCCL runtimes that read the MSCCL XML format:
msccl-executor-nccl, RCCL's MSCCL path and the original MSCCL (``MSCCL_XML_FILES``).
:mod:`synth.runtime.msccl_check` validates the structural rules below and executes the
XML on numpy buffers.

Translation
-----------
* One MSCCL chunk per unit of chunk weight: chunk ``c`` of weight ``w_c`` covers
  ``w_c`` consecutive MSCCL chunks (``nchunksperloop`` = total weight, reduced by the
  gcd); the chunk order is the layout of :mod:`synth.runtime.plan`, chosen so that the
  chunks a message packs are adjacent.  Transmissions with the same round, sender and
  receiver form one message (a multi-hop route becomes a direct send from sender to
  receiver: the route is the interconnect's business); every contiguous run of a message
  becomes one ``s`` step at the sender and one ``r`` (copy) or ``rrc`` (reduce) step at
  the receiver, with equal ``cnt`` (at most ``max_count - 1``).  Optionally (``initial_copy``)
  the input is first copied into the output, so that runs never break between chunks
  still in ``i`` and chunks already updated in ``o``.
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

Examples
--------
>>> from synth.torus import parse_torus
>>> from synth.group import torus_gamma
>>> from synth.sp import sp_allreduce
>>> from synth.lift import lift
>>> from synth.runtime.msccl_check import check_xml
>>> t = parse_torus("4x4")
>>> ex = export_msccl(lift(sp_allreduce(t), torus_gamma(t)))
>>> ex.ngpus, ex.nchunksperloop, ex.nchannels, ex.max_tbs_per_gpu
(16, 64, 1, 8)
>>> ex.xml.startswith('<algo name="')
True
>>> check_xml(ex.xml).ok
True
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

import numpy as np

from synth.errors import ScheduleError
from synth.runtime.plan import flatten, greedy_layout, load_schedule
from synth.schedule import COPY, REDUCE

__all__ = ["MscclLimits", "MscclExport", "export_msccl", "export_summary_json", "scratch_bytes", "xml_name",
           "PROTOCOLS", "DEFAULT_MAX_BYTES", "NO_SCRATCH_MAX_BYTES", "SCRATCH_CAP"]

PROTOCOLS = ("Simple", "LL", "LL128")
NO_SCRATCH_MAX_BYTES = 1 << 40  # 1 TiB; nonzero because the original MSCCL selects only below maxBytes
SCRATCH_CAP = 1 << 30  # 1 GiB: the scratch per GPU the default maxBytes lets microsoft/msccl allocate
DEFAULT_MAX_BYTES = None  # chosen per export from the scratch it uses (see the module docstring)
_O, _S = 0, 1  # place classes: the input/output buffer (one memory when in place) and scratch


@dataclass(frozen=True)
class MscclLimits:
    """Runtime limits the export respects (defaults: the strictest of the runtimes we target).

    Attributes
    ----------
    max_steps : int
        Steps per threadblock, nops included: ``MSCCL_MAX_NUM_STEPS`` = 64 in
        msccl-executor-nccl and RCCL (``src/include/msccl/msccl_struct.h``; the original
        MSCCL had 256).  The parser refuses ``s >= MSCCL_MAX_NUM_STEPS``.
    max_tbs_per_channel : int
        ``MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL`` = 32: threadblocks with a send peer
        (and, separately, with a recv peer) per channel.
    max_tbs : int
        Threadblocks per GPU.  The runtimes allow ``32 * MAXCHANNELS`` but index them with
        an ``int8`` (``dependentBid``), and every threadblock of the algorithm must be
        resident at once (they spin on each other's flags), so 64 stays below the SM
        count of current GPUs (A100: 108, H100: 132, MI250X GCD: 110).
    max_channels : int
        ``MAXCHANNELS`` = 32 (NCCL and RCCL ``device.h``/``devcomm.h``); the communicator
        must also have at least ``nchannels`` channels at run time.
    max_count : int
        ``MSCCL_MAX_COUNT`` = 72: the parser requires ``cnt < 72``.
    max_chunks : int
        32767: offsets are ``int16`` in ``mscclTransmission``.
    max_nodes : int
        XML nodes one rank loads: the ``algo`` element, every ``gpu`` element, and that
        rank's ``tb`` and ``step`` elements (other ranks' are skipped without taking a
        slot).  ``MAX_NODES`` is 4096 (``src/include/msccl/msccl_parser.h`` of
        msccl-executor-nccl and RCCL), but ``mscclXmlLoadSub`` (``src/misc/msccl/
        msccl_parser.cc``; the same ``xmlLoadSub`` in microsoft/msccl's
        ``src/graph/xml.cc``) fails with "XML parser is limited to ... nodes" as soon as
        ``xml->maxIndex == MAX_NODES`` at the top of its read loop, *before* reading the
        closing tag that follows every element, so at most ``MAX_NODES - 1`` = 4095 load.
    max_subs : int
        ``MAX_SUBS`` = 1024 children per element (gpus per algo, tbs per gpu): the
        parser stores ``head->subs[head->nSubs++]`` unchecked into a 1024-entry array.
    max_name_bytes : int
        Bytes of the ``name`` attribute.  Attribute values go unchecked into
        ``char value[MAX_STR_LEN+1]`` (``MAX_STR_LEN`` = 255) together with their
        terminator (``mscclXmlGetValue``), so at most 255 bytes of UTF-8 fit; the
        original MSCCL keeps the first ``MSCCL_MAX_ALGO_NAME`` = 63 of them
        (``strncpy`` in ``src/graph/topo.cc``, ``src/include/msccl.h``).
    """

    max_steps: int = 64
    max_tbs_per_channel: int = 32
    max_tbs: int = 64
    max_channels: int = 32
    max_count: int = 72
    max_chunks: int = 32767
    max_nodes: int = 4095
    max_subs: int = 1024
    max_name_bytes: int = 255


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

    def write(self, path) -> None:
        """Write the XML atomically (temp file + rename)."""
        from synth.fileio import write_atomic

        write_atomic(path, [self.xml])

    def summary(self) -> str:
        return (f"{self.name}: {self.ngpus} GPUs, nchunksperloop {self.nchunksperloop}, {self.nchannels} channel(s), "
                f"up to {self.max_tbs_per_gpu} threadblocks per GPU and {self.max_steps_per_tb} steps per "
                f"threadblock ({self.n_steps} steps, {self.n_nops} nops), scratch {self.scratch_chunks} chunks, "
                f"{self.final_copies} final local copies"
                + (", input copied to output first" if self.initial_copy else "")
                + f", maxBytes {self.max_bytes}")


# ---------------------------------------------------------------------------- planning
class _Op:
    __slots__ = ("gpu", "stream", "msg", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "deps0", "deps", "tb",
                 "pos", "step", "hasdep")

    def __init__(self, gpu, stream, msg, type_, srcbuf, srcoff, dstbuf, dstoff, cnt, deps):
        self.gpu, self.stream, self.msg, self.type = gpu, stream, msg, type_
        self.srcbuf, self.srcoff, self.dstbuf, self.dstoff, self.cnt = srcbuf, srcoff, dstbuf, dstoff, cnt
        self.deps0 = tuple(deps)  # every dependency; ``deps`` is the minimal set for the current threadblocks
        self.deps = list(deps)
        self.tb = self.pos = self.step = -1
        self.hasdep = 0


def _plan_places(w_key, w_round, conflict):
    """Place class of every write round, per (gpu, chunk) group; backwards so the last lands in O.

    ``w_key`` sorted group keys of the write *rounds* (one entry per distinct write round),
    ``conflict`` whether the old value is read in that round.  Returns the class array and
    the keys of the groups that need a final copy out of scratch.
    """
    n = w_key.size
    cls = np.zeros(n, dtype=np.int8)
    final_copy = []
    starts = np.flatnonzero(np.r_[True, w_key[1:] != w_key[:-1]]) if n else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], n] if n else starts
    for a, b in zip(starts.tolist(), ends.tolist()):
        want = [0] * (b - a)
        t = _O
        for k in range(b - a - 1, -1, -1):
            want[k] = t
            t = (1 - t) if conflict[a + k] else _O
        if t == _O:  # the place before the first write must be O (the input): feasible
            cls[a:b] = want
            continue
        prev = _O  # infeasible backwards: go forwards and copy out at the end
        for k in range(b - a):
            prev = (1 - prev) if conflict[a + k] else _O
            cls[a + k] = prev
        if prev == _S:
            final_copy.append(int(w_key[a]))
    return cls, final_copy


def _segments(sizes, k):
    """Split a sequence of message step counts into ``k`` contiguous segments of similar total."""
    total = sum(sizes)
    bounds, acc, seg = [], 0, 0
    for i, s in enumerate(sizes):
        if seg < k - 1 and acc > 0 and acc + s / 2 > total * (seg + 1) / k:
            bounds.append(i)
            seg += 1
        acc += s
    return bounds


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
            raise ScheduleError(f"min_bytes {min_bytes} leaves no sizes whose scratch ({s_max} of {units} chunks per "
                                f"GPU) stays within {cap} bytes; pass max_bytes explicitly")
        return mb, []
    if max_bytes < 1 or max_bytes < min_bytes:
        raise ScheduleError(f"max_bytes {max_bytes} must be at least 1 and at least min_bytes {min_bytes}: "
                            "the runtime would never select the algorithm")
    need = scratch_bytes(max_bytes, s_max, units)
    if need <= cap:
        return int(max_bytes), []
    return int(max_bytes), [f"maxBytes {max_bytes} makes the original MSCCL (microsoft/msccl) allocate {need:,} bytes "
                            f"of scratch per GPU at init (maxBytes x s_chunks {s_max} / nchunksperloop {units}), over "
                            f"{cap:,}; lower --max-bytes, or load it with msccl-executor-nccl or RCCL, which size "
                            "scratch per call"]


def export_msccl(source, path=None, *, weights=None, proto: str = "Simple", name: str | None = None,
                 inplace: bool = True, outofplace: bool = True, min_bytes: int = 0,
                 max_bytes: int | None = DEFAULT_MAX_BYTES, limits: MscclLimits | None = None,
                 layout: str = "greedy", initial_copy: bool | None = None,
                 scratch_cap: int = SCRATCH_CAP) -> MscclExport:
    """Translate a schedule into an MSCCL allreduce algorithm (see the module docstring).

    Parameters
    ----------
    source
        A certificate or explicit file path, or anything
        :func:`~synth.runtime.plan.load_schedule` takes (Schedule, Baseline, Certificate).
    path : str, optional
        Also write the XML there.
    weights : array_like, optional
        Relative chunk sizes (integers); default: the source's (equal for lifted schedules).
    proto : {"Simple", "LL", "LL128"}
    name : str, optional
        The ``algo`` name; default: from the source.  Quotes, ``<``, ``>``, ``&`` and
        control characters are replaced, and it is cut to ``limits.max_name_bytes`` bytes
        of UTF-8 at a character boundary (:func:`xml_name`).
    inplace, outofplace : bool
        What the runtime may select the algorithm for; both are safe (``i`` is never written).
        The original MSCCL selects only algorithms whose ``inplace`` matches the call:
        export twice there, once with ``inplace=False``.
    min_bytes, max_bytes : int
        Buffer sizes the runtime may select it for.  ``max_bytes=None`` (default): the
        largest size whose scratch in the original MSCCL stays within ``scratch_cap``
        (1 TiB if the algorithm needs no scratch).
    scratch_cap : int
        Scratch bytes per GPU the default ``max_bytes`` allows; an explicit ``max_bytes``
        whose scratch exceeds it is kept and noted in :attr:`MscclExport.notes`.
    limits : MscclLimits, optional
    layout : {"greedy", "identity"}
    initial_copy : bool, optional
        Start with local copies of the input into the output, so that messages mixing
        untouched and updated chunks read one buffer (fewer steps, one extra local pass
        over the buffer).  Default: build both and keep the one with fewer channels, then
        fewer threadblocks, then fewer steps.

    Returns
    -------
    MscclExport

    Raises
    ------
    ScheduleError
        When the schedule cannot fit the limits (the message names the limit), or is malformed.
    """
    limits = limits or MscclLimits()
    if proto not in PROTOCOLS:
        raise ScheduleError(f"unknown protocol {proto!r}; valid: {', '.join(PROTOCOLS)}")
    if not (inplace or outofplace):
        raise ScheduleError("the algorithm must allow in-place or out-of-place calls (or both)")
    if min_bytes < 0 or (max_bytes is not None and (max_bytes < 0 or (max_bytes and max_bytes < min_bytes))):
        raise ScheduleError("need 0 <= min_bytes <= max_bytes (max_bytes 0: no limit in msccl-executor-nccl)")
    if scratch_cap <= 0:
        raise ScheduleError("scratch_cap must be positive")
    schedule, w_src, label = load_schedule(source)
    w_in = np.asarray(w_src if weights is None else weights).ravel()
    w = w_in.astype(np.int64)
    if w.size != schedule.n_chunks or np.any(w < 0) or int(w.sum()) <= 0 or not np.array_equal(w, w_in):
        raise ScheduleError(f"need {schedule.n_chunks} non-negative integer chunk weights with a positive sum")
    g = int(np.gcd.reduce(w[w > 0]))
    w = w // g
    units = int(w.sum())
    if units > limits.max_chunks:
        raise ScheduleError(f"the chunk sizes of {label} reduce to nchunksperloop = {units} MSCCL chunks, over the "
                            f"limit {limits.max_chunks} (int16 offsets); use fewer or equal-size chunks (for an "
                            "explicit file: an element count divisible by the number of chunks)")
    name = xml_name(name or f"synth {label}, {schedule.topology.name}, {schedule.n_rounds} rounds",
                    limits.max_name_bytes)
    p = schedule.topology.n_compute
    if p > limits.max_subs:
        raise ScheduleError(f"{p} GPUs: over the parser limit of {limits.max_subs} gpu elements")

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
    order = greedy_layout(C, chunk, mptr) if layout == "greedy" else np.arange(C, dtype=np.int64)
    pos = np.empty(C, dtype=np.int64)
    pos[order] = np.arange(C)
    unit_offset = np.zeros(C, dtype=np.int64)
    unit_offset[order] = np.concatenate([[0], np.cumsum(w[order])[:-1]])
    msg = np.cumsum(new) - 1
    srt = np.lexsort((pos[chunk], msg))
    arrays = (rnd[srt], op[srt], chunk[srt], src[srt], dst[srt], msg[srt])
    common = dict(schedule=schedule, w=w, p=p, C=C, units=units, pos=pos, order=order, unit_offset=unit_offset,
                  mptr=mptr, limits=limits, name=name, proto=proto, inplace=inplace, outofplace=outofplace,
                  min_bytes=min_bytes, max_bytes=max_bytes, scratch_cap=scratch_cap)
    tries = [initial_copy] if initial_copy is not None else [False, True]
    best, failure = None, None
    for ic in tries:
        try:
            ex = _build(arrays, initial_copy=ic, **common)
        except ScheduleError as exc:
            failure = failure or exc
            continue
        if best is None or (ex.nchannels, ex.max_tbs_per_gpu, ex.n_steps) < (
                best.nchannels, best.max_tbs_per_gpu, best.n_steps):
            best = ex
    if best is None:
        raise failure
    ex = best
    if path is not None:
        ex.write(path)
    return ex


def _assign(ops, splits, p, limits):
    """Assign ops to threadblocks (gpu, stream, segment), compute minimal deps and nops.

    Returns ``(tbs, over)``: ``tbs[gpu]`` = list of dicts (stream, seg, chan, ops, steps);
    ``over`` maps connections whose threadblocks exceed ``max_steps`` to a larger split.
    """
    # messages per connection in order, with their step counts on each side
    conn_msgs = {}  # (sender, receiver) -> [[message, runs], ...] in order (both sides have the same runs)
    for o in ops:
        kind, peer = o.stream
        if kind != "send":
            continue
        lst = conn_msgs.setdefault((o.gpu, peer), [])
        if not lst or lst[-1][0] != o.msg:
            lst.append([o.msg, 0])
        lst[-1][1] += 1
    seg_of_msg = {}
    for key, lst in conn_msgs.items():
        k = splits.get(key, 1)
        bounds = _segments([n for _, n in lst], k) if k > 1 else []
        seg, bi = 0, 0
        for i, (m, _) in enumerate(lst):
            while bi < len(bounds) and i >= bounds[bi]:
                seg += 1
                bi += 1
            seg_of_msg[(key, m)] = seg
    # channels: segment j of a connection goes to channel j*G + group, groups keep <= max per channel
    conn_group = _channel_groups(list(conn_msgs), p, limits.max_tbs_per_channel)
    n_groups = 1 + max(conn_group.values(), default=0)
    tb_index = [dict() for _ in range(p)]
    tbs = [[] for _ in range(p)]
    for i, o in enumerate(ops):
        kind, peer = o.stream
        if kind == "local":
            key = ("local", -1, 0)
            chan = 0
        else:
            conn = (o.gpu, peer) if kind == "send" else (peer, o.gpu)
            seg = seg_of_msg[(conn, o.msg)]
            chan = seg * n_groups + conn_group[conn]
            key = (kind, peer, seg)
        t = tb_index[o.gpu].get(key)
        if t is None:
            t = len(tbs[o.gpu])
            tb_index[o.gpu][key] = t
            tbs[o.gpu].append({"key": key, "chan": chan, "ops": []})
        o.tb = t
        o.pos = len(tbs[o.gpu][t]["ops"])
        tbs[o.gpu][t]["ops"].append(i)
    # renumber threadblocks: by channel, sends before receives, then peer; local last
    for gpu in range(p):
        def sort_key(tb):
            kind, peer, _ = tb["key"]
            return (kind == "local", tb["chan"], kind != "send", peer)
        new_order = sorted(range(len(tbs[gpu])), key=lambda t: sort_key(tbs[gpu][t]))
        remap = {old: new for new, old in enumerate(new_order)}
        tbs[gpu] = [tbs[gpu][t] for t in new_order]
        for tb in tbs[gpu]:
            for i in tb["ops"]:
                ops[i].tb = remap[ops[i].tb]
    # minimal dependencies with vector clocks (ops are in a topological order)
    vc = [None] * len(ops)
    last_in_tb = [dict() for _ in range(p)]
    for i, o in enumerate(ops):
        ntb = len(tbs[o.gpu])
        prev = last_in_tb[o.gpu].get(o.tb)
        known = vc[prev].copy() if prev is not None else np.full(ntb, -1, dtype=np.int64)
        cands = [d for d in set(o.deps0) if ops[d].tb != o.tb]
        cands.sort(key=lambda d: -int(vc[d].sum()))
        kept = []
        for d in cands:
            od = ops[d]
            if known[od.tb] >= od.pos:
                continue
            kept.append(d)
            np.maximum(known, vc[d], out=known)
        # drop kept deps implied by later-kept ones
        final = []
        for d in kept:
            od = ops[d]
            if any(x != d and vc[x][od.tb] >= od.pos for x in kept):
                continue
            final.append(d)
        o.deps = sorted(final, key=lambda d: (ops[d].tb, ops[d].pos))
        known[o.tb] = o.pos
        vc[i] = known
        last_in_tb[o.gpu][o.tb] = i
    # steps (nops first) and the step-count check
    for gpu in range(p):
        for tb in tbs[gpu]:
            tb["nsteps"] = sum(max(len(ops[i].deps), 1) for i in tb["ops"])
    over = {}
    for gpu in range(p):
        for tb in tbs[gpu]:
            s = tb["nsteps"]
            if s <= limits.max_steps:
                continue
            kind, peer, seg = tb["key"]
            if kind == "local":
                raise ScheduleError(f"GPU {gpu} needs {s} local copy steps, over MSCCL_MAX_NUM_STEPS "
                                    f"{limits.max_steps}")
            conn = (gpu, peer) if kind == "send" else (peer, gpu)
            # how many segments this connection needs overall, at least one more than now
            total_steps = sum(t2["nsteps"] for t2 in tbs[gpu] if t2["key"][0] == kind and t2["key"][1] == peer)
            need = max(math.ceil(total_steps * 1.15 / limits.max_steps), splits.get(conn, 1) + 1)
            over[conn] = max(over.get(conn, 0), need)
    return tbs, over


def _channel_groups(conns, p, per_channel):
    """Group connections so that no GPU has more than ``per_channel`` send (or recv) peers in a group."""
    group = {}
    send_n, recv_n = {}, {}
    for u, v in sorted(conns):
        gidx = 0
        while send_n.get((u, gidx), 0) >= per_channel or recv_n.get((v, gidx), 0) >= per_channel:
            gidx += 1
        group[(u, v)] = gidx
        send_n[(u, gidx)] = send_n.get((u, gidx), 0) + 1
        recv_n[(v, gidx)] = recv_n.get((v, gidx), 0) + 1
    return group


def _emit(ops, tbs, p, units, s_chunks, name, proto, inplace, outofplace, min_bytes, max_bytes, limits):
    """Number the steps, mark dependencies, check the limits and write the XML text."""
    # step numbers (nops before their op)
    for gpu in range(p):
        for tb in tbs[gpu]:
            s = 0
            for i in tb["ops"]:
                o = ops[i]
                s += max(len(o.deps) - 1, 0)
                o.step = s
                s += 1
    for o in ops:
        for d in o.deps:
            ops[d].hasdep = 1
    nchannels = 1 + max((tb["chan"] for gpu in range(p) for tb in tbs[gpu]), default=0)
    max_tbs = max((len(t) for t in tbs), default=0)
    max_steps = max((tb["nsteps"] for gpu in range(p) for tb in tbs[gpu]), default=0)
    problems = []
    if nchannels > limits.max_channels:
        problems.append(f"{nchannels} channels, over MAXCHANNELS {limits.max_channels}")
    if max_tbs > limits.max_tbs:
        problems.append(f"{max_tbs} threadblocks on one GPU, over the limit {limits.max_tbs}")
    if max_steps > limits.max_steps:
        problems.append(f"{max_steps} steps in one threadblock, over MSCCL_MAX_NUM_STEPS {limits.max_steps}")
    for gpu in range(p):
        per_chan_s, per_chan_r = {}, {}
        for tb in tbs[gpu]:
            kind = tb["key"][0]
            if kind == "send":
                per_chan_s[tb["chan"]] = per_chan_s.get(tb["chan"], 0) + 1
            elif kind == "recv":
                per_chan_r[tb["chan"]] = per_chan_r.get(tb["chan"], 0) + 1
        worst = max(list(per_chan_s.values()) + list(per_chan_r.values()) + [0])
        if worst > limits.max_tbs_per_channel:
            problems.append(f"GPU {gpu}: {worst} threadblocks on one channel, over "
                            f"MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL {limits.max_tbs_per_channel}")
            break
        nodes = 1 + p + len(tbs[gpu]) + sum(tb["nsteps"] for tb in tbs[gpu])
        if nodes > limits.max_nodes:
            problems.append(f"GPU {gpu}: {nodes} XML nodes for one rank, over the parser's limit of "
                            f"{limits.max_nodes} (MAX_NODES {limits.max_nodes + 1} less the slot its next read takes)")
            break
    if problems:
        raise ScheduleError("the schedule does not fit the MSCCL runtime limits: " + "; ".join(problems))
    out = [f'<algo name="{name}" proto="{proto}" nchannels="{nchannels}" nchunksperloop="{units}" ngpus="{p}" '
           f'coll="allreduce" inplace="{int(bool(inplace))}" outofplace="{int(bool(outofplace))}" '
           f'minBytes="{int(min_bytes)}" maxBytes="{int(max_bytes)}">\n']
    n_steps = n_nops = 0
    for gpu in range(p):
        out.append(f'  <gpu id="{gpu}" i_chunks="{units}" o_chunks="{units}" s_chunks="{int(s_chunks[gpu])}">\n')
        for t, tb in enumerate(tbs[gpu]):
            kind, peer, _ = tb["key"]
            send = peer if kind == "send" else -1
            recv = peer if kind == "recv" else -1
            out.append(f'    <tb id="{t}" send="{send}" recv="{recv}" chan="{tb["chan"]}">\n')
            s = 0
            for i in tb["ops"]:
                o = ops[i]
                for d in o.deps[:-1]:
                    od = ops[d]
                    out.append(f'      <step s="{s}" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" '
                               f'cnt="0" depid="{od.tb}" deps="{od.step}" hasdep="0"/>\n')
                    s += 1
                    n_nops += 1
                if o.deps:
                    od = ops[o.deps[-1]]
                    depid, deps = od.tb, od.step
                else:
                    depid = deps = -1
                out.append(f'      <step s="{s}" type="{o.type}" srcbuf="{o.srcbuf}" srcoff="{o.srcoff}" '
                           f'dstbuf="{o.dstbuf}" dstoff="{o.dstoff}" cnt="{o.cnt}" depid="{depid}" deps="{deps}" '
                           f'hasdep="{o.hasdep}"/>\n')
                s += 1
                n_steps += 1
            out.append("    </tb>\n")
        out.append("  </gpu>\n")
    out.append("</algo>\n")
    stats = {"nchannels": nchannels, "max_tbs": max_tbs, "max_steps": max_steps, "steps": n_steps + n_nops,
             "nops": n_nops}
    return "".join(out), stats


def export_summary_json(ex: MscclExport, path=None) -> dict:
    """A JSON-ready summary of an export (what ``synth export --format msccl-xml --json`` prints)."""
    return {"name": ex.name, "ngpus": ex.ngpus, "nchunksperloop": ex.nchunksperloop, "nchannels": ex.nchannels,
            "max_threadblocks_per_gpu": ex.max_tbs_per_gpu, "max_steps_per_threadblock": ex.max_steps_per_tb,
            "steps": ex.n_steps, "nops": ex.n_nops, "scratch_chunks": ex.scratch_chunks,
            "final_copies": ex.final_copies, "max_bytes": ex.max_bytes,
            "scratch_bytes_at_max": scratch_bytes(ex.max_bytes, ex.scratch_chunks, ex.nchunksperloop),
            "notes": list(ex.notes), "path": None if path is None else os.fspath(path)}


def _build(arrays, *, schedule, w, p, C, units, pos, order, unit_offset, mptr, limits, name, proto, inplace,
           outofplace, min_bytes, max_bytes, initial_copy, scratch_cap):
    """Plan places, build the operations with dependencies, fit them into threadblocks, emit the XML."""
    rnd, op, chunk, src, dst, msg = arrays

    # -------- places: class of every write round at (gpu, chunk), class of what each read sees
    K = int(schedule.n_rounds) + 2
    read_key = (src * C + chunk) * K + rnd
    write_key = (dst * C + chunk) * K + rnd
    wr = np.unique(write_key)  # distinct (gpu, chunk, write round)
    conflict = np.isin(wr, read_key)
    w_cls, final_copy = _plan_places(wr // K, wr % K, conflict)
    # version of each write round = its index in its group (1-based)
    grp = wr // K
    gstart = np.r_[True, grp[1:] != grp[:-1]] if wr.size else np.zeros(0, dtype=bool)
    idx = np.arange(wr.size)
    version = idx - np.maximum.accumulate(np.where(gstart, idx, 0)) + 1 if wr.size else idx
    # what a read at round s sees: the last write round < s
    rpos = np.searchsorted(wr, read_key, side="left") - 1
    r_ok = rpos >= 0
    r_ok[r_ok] = grp[rpos[r_ok]] == read_key[r_ok] // K
    read_cls = np.where(r_ok, w_cls[np.maximum(rpos, 0)], _O)
    read_ver = np.where(r_ok, version[np.maximum(rpos, 0)], 0)
    # a write: its class, and for a reduce the value it adds to (the previous version)
    wpos = np.searchsorted(wr, write_key)
    write_cls = w_cls[wpos]
    write_ver = version[wpos]
    prev_ok = (wpos > 0) & (write_ver > 1)
    prev_cls = np.where(prev_ok, w_cls[np.maximum(wpos - 1, 0)], _O)
    prev_ver = write_ver - 1
    # scratch offsets per GPU: the chunks that ever use scratch there, compacted in layout order
    s_mask = np.zeros((p, C), dtype=bool)
    sw = w_cls == _S
    s_mask[(grp[sw] // C), (grp[sw] % C)] = True
    s_units = np.zeros((p, C), dtype=np.int64)
    s_chunks = np.zeros(p, dtype=np.int64)
    wo = w[order]
    for gpu in np.flatnonzero(s_mask.any(axis=1)).tolist():
        m = s_mask[gpu, order]
        cum = np.cumsum(np.where(m, wo, 0))
        s_units[gpu, order] = cum - np.where(m, wo, 0)
        s_chunks[gpu] = cum[-1]

    def off(cls, gpu, c):
        return int(s_units[gpu, c]) if cls == _S else int(unit_offset[c])

    # -------- common run partition of every message (same cnt on both sides)
    t_cnt = w[chunk]
    s_off = np.where(read_cls == _S, s_units[src, chunk], unit_offset[chunk])
    d_off = np.where(write_cls == _S, s_units[dst, chunk], unit_offset[chunk])
    first_in_chain = np.ones(rnd.size, dtype=bool)
    # chain: several reduces into one (gpu, chunk) in one round, ordered by sender (rows sorted by msg)
    ck = write_key
    o2 = np.lexsort((src, ck))
    dup = np.zeros(rnd.size, dtype=bool)
    dup[o2[1:]] = ck[o2[1:]] == ck[o2[:-1]]
    first_in_chain[dup] = False
    a_cls = np.where(first_in_chain, prev_cls, write_cls)  # the value an rrc adds to
    a_ver = np.where(first_in_chain, prev_ver, write_ver)
    a_off = np.where(a_cls == _S, s_units[dst, chunk], unit_offset[chunk])
    v0 = 1 if initial_copy else 0  # where version 0 is read from: the input, or the output after a first copy
    a_buf = np.where(a_cls == _S, 2, np.where(a_ver == 0, v0, 1))
    r_buf = np.where(read_cls == _S, 2, np.where(read_ver == 0, v0, 1))
    brk = np.zeros(rnd.size, dtype=bool)
    brk[mptr[:-1]] = True
    contig_s = np.r_[False, s_off[1:] == s_off[:-1] + t_cnt[:-1]]
    contig_d = np.r_[False, d_off[1:] == d_off[:-1] + t_cnt[:-1]]
    contig_a = np.r_[False, a_off[1:] == a_off[:-1] + t_cnt[:-1]]
    same = np.r_[False, (r_buf[1:] == r_buf[:-1]) & (write_cls[1:] == write_cls[:-1]) & (op[1:] == op[:-1])]
    same_a = np.r_[False, (a_buf[1:] == a_buf[:-1])]
    ok = contig_s & contig_d & same & ((op == COPY) | (contig_a & same_a))
    brk |= ~ok
    # cap cnt at max_count - 1 (a single chunk heavier than that cannot be sent)
    if int(t_cnt.max(initial=0)) > limits.max_count - 1:
        raise ScheduleError(f"a chunk of weight {int(t_cnt.max())} needs cnt over {limits.max_count - 1} "
                            f"(MSCCL_MAX_COUNT {limits.max_count}); reduce the chunk weights")
    run_start = np.flatnonzero(brk)
    # split runs whose total count exceeds the cap (sequential, rare)
    caps = limits.max_count - 1
    run_cnt = np.add.reduceat(t_cnt, run_start) if rnd.size else np.zeros(0, dtype=np.int64)
    if rnd.size and run_cnt.max() > caps:
        brk_list = brk.tolist()
        acc = 0
        for i, c_ in enumerate(t_cnt.tolist()):
            if brk_list[i] or acc + c_ > caps:
                brk_list[i] = True
                acc = 0
            acc += c_
        brk = np.asarray(brk_list, dtype=bool)
        run_start = np.flatnonzero(brk)

    # -------- operations with dependencies (rounds in order: sends of the round, then receives)
    ops: list[_Op] = []
    last_write = {}  # (gpu, chunk) -> op id
    last_write_at = {}  # (gpu, chunk, class) -> op id
    readers = {}  # (gpu, chunk, class) -> [op ids]
    run_end = np.r_[run_start[1:], rnd.size]
    runs_by_round = {}
    for a, b in zip(run_start.tolist(), run_end.tolist()):
        runs_by_round.setdefault(int(rnd[a]), []).append((a, b))
    BUF = "ios"
    if initial_copy:  # copy the input into the output first, so version 0 reads come from o like the rest
        live = order[w[order] > 0].tolist()
        for gpu in range(p):
            i = 0
            while i < len(live):
                j, tot = i, 0
                while j < len(live) and tot + int(w[live[j]]) <= caps:
                    tot += int(w[live[j]])
                    j += 1
                ops.append(_Op(gpu, ("local", -1), -1, "cpy", "i", int(unit_offset[live[i]]), "o",
                               int(unit_offset[live[i]]), tot, ()))
                k = len(ops) - 1
                for c in live[i:j]:
                    last_write[(gpu, c)] = k
                    last_write_at[(gpu, c, _O)] = k
                i = j
    chunk_l, src_l, dst_l, msg_l, op_l = chunk.tolist(), src.tolist(), dst.tolist(), msg.tolist(), op.tolist()
    rcls_l, wcls_l = read_cls.tolist(), write_cls.tolist()
    for r_ in sorted(runs_by_round):
        runs = runs_by_round[r_]
        send_ids = []
        for a, b in runs:  # sends: read the start-of-round values
            u, v = src_l[a], dst_l[a]
            cs = chunk_l[a:b]
            deps = {last_write[(u, c)] for c in cs if (u, c) in last_write}
            cnt = int(t_cnt[a:b].sum())
            o_ = _Op(u, ("send", v), msg_l[a], "s", BUF[r_buf[a]], int(s_off[a]), BUF[[1, 2][wcls_l[a]]],
                     int(d_off[a]), cnt, deps)
            ops.append(o_)
            k = len(ops) - 1
            cl = rcls_l[a]
            for c in cs:
                readers.setdefault((u, c, cl), []).append(k)
            send_ids.append(k)
        recv_runs = sorted(runs, key=lambda ab: (dst_l[ab[0]], src_l[ab[0]], ab[0]))
        for a, b in recv_runs:  # receives, in chain order (by receiver, then sender)
            u, v = src_l[a], dst_l[a]
            cs = chunk_l[a:b]
            cl = wcls_l[a]
            reduce_ = op_l[a] == REDUCE
            deps = set()
            for c in cs:
                if reduce_ and (v, c) in last_write:
                    deps.add(last_write[(v, c)])
                deps.update(readers.get((v, c, cl), ()))
                if (v, c, cl) in last_write_at:
                    deps.add(last_write_at[(v, c, cl)])
            cnt = int(t_cnt[a:b].sum())
            if reduce_:
                o_ = _Op(v, ("recv", u), msg_l[a], "rrc", BUF[a_buf[a]], int(a_off[a]), BUF[[1, 2][cl]], int(d_off[a]),
                         cnt, deps)
            else:
                o_ = _Op(v, ("recv", u), msg_l[a], "r", BUF[r_buf[a]], int(s_off[a]), BUF[[1, 2][cl]], int(d_off[a]),
                         cnt, deps)
            ops.append(o_)
            k = len(ops) - 1
            for c in cs:
                last_write[(v, c)] = k
                last_write_at[(v, c, cl)] = k
                readers[(v, c, cl)] = []
    # final copies out of scratch
    n_final = 0
    if final_copy:
        fc = np.asarray(sorted(final_copy, key=lambda key: (key // C, pos[key % C])), dtype=np.int64)
        gpus, cs = fc // C, fc % C
        i = 0
        while i < fc.size:
            gpu = int(gpus[i])
            j = i + 1
            tot = int(w[cs[i]])
            while (j < fc.size and gpus[j] == gpu and pos[cs[j]] == pos[cs[j - 1]] + 1
                   and s_units[gpu, cs[j]] == s_units[gpu, cs[j - 1]] + w[cs[j - 1]] and tot + w[cs[j]] <= caps):
                tot += int(w[cs[j]])
                j += 1
            deps = set()
            for c in cs[i:j].tolist():
                deps.add(last_write[(gpu, c)])
                deps.update(readers.get((gpu, c, _O), ()))
                if (gpu, c, _O) in last_write_at:
                    deps.add(last_write_at[(gpu, c, _O)])
            ops.append(_Op(gpu, ("local", -1), -1, "cpy", "s", int(s_units[gpu, cs[i]]), "o",
                           int(unit_offset[cs[i]]), tot, deps))
            n_final += 1
            i = j

    # -------- threadblocks: split connections over channels until every threadblock fits
    splits = {}  # (sender, receiver) -> number of segments
    for _attempt in range(12):
        tbs, n_over = _assign(ops, splits, p, limits)
        if not n_over:
            break
        for (u, v), need in n_over.items():
            splits[(u, v)] = need
    else:
        raise ScheduleError(f"cannot fit the steps within MSCCL_MAX_NUM_STEPS {limits.max_steps}: a single message "
                            "(its runs and the nops of their dependencies) is longer than that")
    s_max = int(s_chunks.max(initial=0))
    max_bytes, notes = _resolve_max_bytes(max_bytes, min_bytes, units, s_max, scratch_cap)
    xml, stats = _emit(ops, tbs, p, units, s_chunks, name, proto, inplace, outofplace, min_bytes, max_bytes, limits)
    return MscclExport(xml, name, p, units, stats["nchannels"], stats["max_tbs"], stats["max_steps"], stats["steps"],
                       stats["nops"], s_max, n_final, order, unit_offset, bool(initial_copy), max_bytes, notes)
