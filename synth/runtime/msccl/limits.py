"""The MSCCL runtimes' limits: one definition, read by the exporter and by the validator.

Neither :mod:`synth.runtime.msccl.export` nor :mod:`synth.runtime.msccl.check` owns them, so
the validator restates no number of the exporter's and never imports it; its
:class:`~synth.runtime.msccl.check.CheckLimits` adds what only a reader of the text needs.

Examples
--------
>>> MscclLimits().max_steps, MscclLimits(max_steps=10).max_steps, PROTOCOLS
(64, 10, ('Simple', 'LL', 'LL128'))
>>> MscclOptions(proto="LL", inplace=False).limits.max_count
72
"""

from __future__ import annotations

from dataclasses import dataclass

from synth.errors import ScheduleError

__all__ = ["MscclLimits", "MscclOptions", "PROTOCOLS", "SCRATCH_CAP", "MAX_MSCCL_TRANSMISSIONS"]

PROTOCOLS = ("Simple", "LL", "LL128")
SCRATCH_CAP = 1 << 30  # 1 GiB: the scratch per GPU the default maxBytes lets microsoft/msccl allocate


#: transmissions an MSCCL export takes by default (``MscclOptions.max_transmissions``)
MAX_MSCCL_TRANSMISSIONS = 1_000_000


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


@dataclass(frozen=True)
class MscclOptions:
    """What an MSCCL export declares and how it plans (:func:`~synth.runtime.msccl.export.export_msccl`).

    Attributes
    ----------
    proto : {"Simple", "LL", "LL128"}
    name : str, optional
        The ``algo`` name; default: from the source.  Quotes, ``<``, ``>``, ``&`` and
        control characters are replaced, and it is cut to ``limits.max_name_bytes`` bytes
        of UTF-8 at a character boundary (:func:`~synth.runtime.msccl.export.xml_name`).
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
        whose scratch exceeds it is kept and noted in the export's ``notes``.
    scratch_reuse : bool, optional
        Give a scratch place to another chunk once its value is dead (its last read done and
        ordered before the new write by a dependency), rather than one place per chunk for
        the whole run.  Default: on for a reduce-scatter, whose partial sums outside the
        GPU's block all live in scratch; off otherwise.  It is dropped where it saves no
        scratch, or where its extra dependencies do not fit the limits.
    limits : MscclLimits
    max_transmissions : int
        Transmissions of the schedule at most (:data:`MAX_MSCCL_TRANSMISSIONS`), refused before a
        certificate is lifted: the export plans every transmission (the 8x8 torus with a failed link,
        310,464 of them, took 193 CPU s and 1.1 GB; 16x16 with four, 3.2 M, passed 14 GB).
    layout : {"greedy", "identity"}
        Chunk order of an allreduce; a reduce-scatter or allgather always has the runtimes'
        (by owner rank, then chunk id).
    initial_copy : bool, optional
        Start with local copies of the input into the output, so that messages mixing
        untouched and updated chunks read one buffer (fewer steps, one extra local pass
        over the buffer).  Default: build both and keep the one with fewer channels, then
        fewer threadblocks, then fewer steps.
    """

    proto: str = "Simple"
    name: str | None = None
    inplace: bool = True
    outofplace: bool = True
    min_bytes: int = 0
    max_bytes: int | None = None
    limits: MscclLimits | None = None  # None: MscclLimits()
    layout: str = "greedy"
    initial_copy: bool | None = None
    scratch_cap: int = SCRATCH_CAP
    scratch_reuse: bool | None = None
    max_transmissions: int = MAX_MSCCL_TRANSMISSIONS

    def __post_init__(self):
        if self.limits is None:
            object.__setattr__(self, "limits", MscclLimits())

    def check(self) -> None:
        """Raise :class:`~synth.errors.ScheduleError` for options no export can honour."""
        if self.proto not in PROTOCOLS:
            raise ScheduleError(f"unknown protocol {self.proto!r}; valid: {', '.join(PROTOCOLS)}")
        if not (self.inplace or self.outofplace):
            raise ScheduleError("the algorithm must allow in-place or out-of-place calls (or both)")
        lo, hi = self.min_bytes, self.max_bytes
        if lo < 0 or (hi is not None and (hi < 0 or (hi and hi < lo))):
            raise ScheduleError("need 0 <= min_bytes <= max_bytes (max_bytes 0: no limit in msccl-executor-nccl)")
        if self.scratch_cap <= 0:
            raise ScheduleError("scratch_cap must be positive")
        if self.max_transmissions < 1:
            raise ScheduleError("max_transmissions must be positive")
