r"""Check MSCCL XML algorithms: the structural rules of the runtimes, and an interpreter.

This module is independent of the exporter (:mod:`synth.runtime.msccl`): it reads the
XML text only (standard library parser plus a scan of the raw text for what the
runtimes' own, simpler parser needs), so an exported file is checked by what it *says*.

:func:`validate` enforces the rules of msccl-executor-nccl / RCCL's parser
(``msccl_parser.cc``) and kernel (``msccl_kernel.cu``) for the limits in
:class:`MscclLimits` (from :mod:`synth.runtime.msccl`'s defaults, restated here): required
attributes, contiguous threadblock ids and step numbers, peers other than the GPU
itself, at most one threadblock per (channel, send peer) and per (channel, recv peer),
``cnt < max_count``, offsets inside the buffers, one dependency per step with extra ones
as ``nop`` steps directly before a step that has one, dependencies only on steps marked
``hasdep``, and equal send/receive sequences (``cnt`` by ``cnt``) on every
(sender, receiver, channel) connection.

:func:`interpret` executes every GPU's threadblocks on numpy buffers: steps in order,
waiting for their dependency (the runtime's flag: the last finished ``hasdep`` step of the
other threadblock), and sends matched first-in first-out per connection.  By default a
send completes only when its receive has taken the data (``capacity=0``): a program that
finishes like that finishes with any amount of buffering, so the check covers
large messages, where NCCL's connection buffers fill up.  It runs the algorithm out of
place and, if it declares ``inplace="1"``, in place, and compares the output buffers
with the exact sums (random 64-bit integers, wrapping).

Examples
--------
Two GPUs swap and add their inputs (out of place: each reduces into ``o`` what the other
sent, while its own send still reads ``i``):

>>> gpu = '''  <gpu id="{g}" i_chunks="2" o_chunks="2" s_chunks="0">
...     <tb id="0" send="{h}" recv="-1" chan="0">
...       <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="-1" deps="-1" hasdep="{d}"/>
...     </tb>
...     <tb id="1" send="-1" recv="{h}" chan="0">
...       <step s="0" type="rrc" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="2" depid="{w}" deps="{w}" hasdep="0"/>
...     </tb>
...   </gpu>
... '''
>>> head = ('<algo name="swap" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" '
...         'inplace="0" outofplace="1" minBytes="0" maxBytes="0">\n')
>>> def algo(dep):
...     d, w = (1, 0) if dep else (0, -1)
...     return head + gpu.format(g=0, h=1, d=d, w=w) + gpu.format(g=1, h=0, d=d, w=w) + "</algo>\n"
>>> report = check_xml(algo(dep=False))
>>> report.ok, report.race_checked, report.executed[:2]
(True, True, ['out-of-place', 'out-of-place, shuffled #1'])

If each receive waited for its own GPU's send, both sends would wait for receives that
wait for them: fine with buffered connections, a deadlock once a message exceeds the buffer:

>>> check_xml(algo(dep=True)).errors[0][:45]
'out-of-place: deadlock: gpu 0 tb 0 step 0 (s '
>>> check_xml(algo(dep=True), capacity=1).ok
True
>>> check_xml(algo(dep=False).replace('recv="1"', 'recv="0"')).errors[0]
'gpu 0, tb 1: recv peer 0 is the GPU itself'
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Algo", "Gpu", "ThreadBlock", "Step", "CheckLimits", "CheckReport", "parse_xml", "validate",
           "interpret", "race_check", "check_xml", "STEP_TYPES"]

STEP_TYPES = ("s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop")
_SENDS = {"s", "rcs", "rrs", "rrcs"}
_RECVS = {"r", "rcs", "rrs", "rrc", "rrcs"}
_READS_SRC = {"s", "rrs", "rrc", "rrcs", "cpy", "re"}  # steps that read srcbuf locally
_WRITES_DST = {"r", "rcs", "rrc", "rrcs", "cpy", "re"}  # steps that write dstbuf locally
_ALGO_ATTRS = ("name", "proto", "nchannels", "nchunksperloop", "ngpus", "coll", "inplace", "outofplace",
               "minBytes", "maxBytes")


@dataclass(frozen=True)
class CheckLimits:
    """Runtime limits (msccl-executor-nccl and RCCL; see :class:`synth.runtime.msccl.MscclLimits`)."""

    max_steps: int = 64
    max_tbs_per_channel: int = 32
    max_tbs: int = 64
    max_channels: int = 32
    max_count: int = 72
    max_chunks: int = 32767
    max_nodes: int = 4095  # MAX_NODES 4096 less one: see MscclLimits.max_nodes
    max_subs: int = 1024
    max_attrs: int = 16
    max_str: int = 255  # bytes of an attribute value; keys at most max_str - 1 (see _raw_checks)
    max_name_bytes: int = 255
    scratch_cap: int = 1 << 30  # bytes of scratch per GPU at maxBytes above which check_xml adds a note


@dataclass
class Step:
    s: int
    type: str
    srcbuf: str
    srcoff: int
    dstbuf: str
    dstoff: int
    cnt: int
    depid: int
    deps: int
    hasdep: int


@dataclass
class ThreadBlock:
    id: int
    send: int
    recv: int
    chan: int
    steps: list = field(default_factory=list)


@dataclass
class Gpu:
    id: int
    i_chunks: int
    o_chunks: int
    s_chunks: int
    tbs: list = field(default_factory=list)


@dataclass
class Algo:
    attrs: dict
    gpus: list = field(default_factory=list)

    @property
    def ngpus(self) -> int:
        return int(self.attrs.get("ngpus", len(self.gpus)))

    @property
    def nchunksperloop(self) -> int:
        return int(self.attrs["nchunksperloop"])


@dataclass
class CheckReport:
    """Result of :func:`check_xml`: structural errors, then the interpreter's."""

    errors: list = field(default_factory=list)
    structural: bool = True
    executed: list = field(default_factory=list)  # modes run by the interpreter ("out-of-place", "in-place")
    race_checked: bool = False
    notes: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


class _Mismatch(Exception):
    pass


class XmlError(ValueError):
    """The text is not an MSCCL algorithm the checker can read."""


def _int(elem, key, where):
    v = elem.attrib.get(key)
    if v is None:
        raise XmlError(f"{where}: missing attribute {key!r}")
    try:
        return int(v)
    except ValueError:
        raise XmlError(f"{where}: attribute {key}={v!r} is not an integer") from None


def parse_xml(text_or_path) -> Algo:
    """Parse MSCCL XML (text, or a path to a file) into :class:`Algo`.

    Raises
    ------
    XmlError
        For malformed XML or missing/non-integer attributes.
    """
    text = _text(text_or_path)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise XmlError(f"not well-formed XML: {exc}") from None
    if root.tag != "algo":
        raise XmlError(f"the root element is <{root.tag}>, expected <algo>")
    algo = Algo(dict(root.attrib))
    for g in root:
        if g.tag != "gpu":
            continue
        where = f"gpu {g.attrib.get('id', '?')}"
        gpu = Gpu(_int(g, "id", where), _int(g, "i_chunks", where), _int(g, "o_chunks", where),
                  _int(g, "s_chunks", where))
        for t in g:
            if t.tag != "tb":
                continue
            w2 = f"{where}, tb {t.attrib.get('id', '?')}"
            tb = ThreadBlock(_int(t, "id", w2), _int(t, "send", w2), _int(t, "recv", w2), _int(t, "chan", w2))
            for st in t:
                if st.tag != "step":
                    continue
                w3 = f"{w2}, step {st.attrib.get('s', '?')}"
                for key in ("type", "srcbuf", "dstbuf"):
                    if key not in st.attrib:
                        raise XmlError(f"{w3}: missing attribute {key!r}")
                tb.steps.append(Step(_int(st, "s", w3), st.attrib["type"], st.attrib["srcbuf"], _int(st, "srcoff", w3),
                                     st.attrib["dstbuf"], _int(st, "dstoff", w3), _int(st, "cnt", w3),
                                     _int(st, "depid", w3), _int(st, "deps", w3), _int(st, "hasdep", w3)))
            gpu.tbs.append(tb)
        algo.gpus.append(gpu)
    return algo


def _text(text_or_path) -> str:
    if isinstance(text_or_path, str) and text_or_path.lstrip().startswith("<"):
        return text_or_path
    with open(text_or_path, encoding="utf-8") as f:
        return f.read()


_TAG = re.compile(r"<([^>]*)>")
_ATTR = re.compile(r'\s*([A-Za-z_][\w]*)="([^"<>]*)"')


def _raw_checks(text, limits) -> list:
    """What the runtimes' own XML tokenizer needs beyond well-formedness."""
    errors = []
    if not text.lstrip(" \n\r").startswith("<algo"):
        errors.append("the file must start with <algo (no XML declaration or comment first: the runtime reads the "
                      "first element as the algorithm's header)")
    if "\t" in text:
        errors.append("tabs in the file: the runtime's tokenizer only skips spaces and newlines")
    for m in _TAG.finditer(text):
        body = m.group(1)
        if body.startswith("/") or body.startswith("!--"):
            continue
        if body.startswith("?"):
            errors.append("an XML processing instruction (<?...?>): the runtime's parser cannot read it")
            break
        parts = body.rstrip("/").split(None, 1)
        rest = parts[1] if len(parts) > 1 else ""
        if "'" in rest:
            errors.append(f"<{parts[0]}>: single-quoted attribute; the runtime needs double quotes")
            break
        if re.search(r'"\S', rest.replace('"/', '" ')) and re.search(r'="[^"]*"[^\s/>]', rest):
            errors.append(f"<{parts[0]}>: attributes must be separated by a space")
            break
        attrs = _ATTR.findall(rest)
        if len(attrs) > limits.max_attrs:
            errors.append(f"<{parts[0]}> has {len(attrs)} attributes, over the parser's {limits.max_attrs}")
            break
        for k, v in attrs:
            # mscclXmlGetValue copies a value's bytes and its terminator into char[MAX_STR_LEN+1] unchecked;
            # mscclXmlGetToken refuses a key once it reaches MAX_STR_LEN-1 bytes (src/misc/msccl/msccl_parser.cc)
            if len(v.encode("utf-8")) > limits.max_str or len(k.encode("utf-8")) > limits.max_str - 1:
                errors.append(f"<{parts[0]}>: attribute {k} longer than the parser's {limits.max_str}-byte buffer "
                              f"({limits.max_str} bytes of value, {limits.max_str - 1} of name)")
                break
    return errors


def _limits(limits) -> CheckLimits:
    """:class:`CheckLimits` from ``None``, a CheckLimits, or any object with some of its fields (e.g. MscclLimits)."""
    if limits is None:
        return CheckLimits()
    if isinstance(limits, CheckLimits):
        return limits
    base = CheckLimits()
    return CheckLimits(**{k: getattr(limits, k, getattr(base, k)) for k in base.__dataclass_fields__})


def validate(algo: Algo, limits=None, coll: str | None = "allreduce") -> list:
    """Structural errors of ``algo`` (empty list: it satisfies every rule the runtimes check)."""
    lim = _limits(limits)
    errors = []
    a = algo.attrs
    for key in _ALGO_ATTRS:
        if key not in a:
            errors.append(f"algo: missing attribute {key!r}")
    if errors:
        return errors
    try:
        nch, ncl, ngpus = int(a["nchannels"]), int(a["nchunksperloop"]), int(a["ngpus"])
        inplace, outofplace = int(a["inplace"]), int(a["outofplace"])
        min_b, max_b = int(a["minBytes"]), int(a["maxBytes"])
    except ValueError:
        return ["algo: nchannels, nchunksperloop, ngpus, inplace, outofplace, minBytes, maxBytes must be integers"]
    if a["proto"] not in ("Simple", "LL", "LL128"):
        errors.append(f"algo: proto {a['proto']!r} is not Simple, LL or LL128")
    if coll is not None and a["coll"] != coll:
        errors.append(f"algo: coll is {a['coll']!r}, expected {coll!r}")
    if not 1 <= nch <= lim.max_channels:
        errors.append(f"algo: nchannels {nch} outside 1..{lim.max_channels} (MAXCHANNELS)")
    if not 1 <= ncl <= lim.max_chunks:
        errors.append(f"algo: nchunksperloop {ncl} outside 1..{lim.max_chunks}")
    if inplace not in (0, 1) or outofplace not in (0, 1) or not (inplace or outofplace):
        errors.append("algo: inplace and outofplace must be 0 or 1, and not both 0")
    if min_b < 0 or max_b < 0 or (max_b and max_b < min_b):
        errors.append("algo: need 0 <= minBytes <= maxBytes (maxBytes 0 means no limit)")
    if len(a["name"].encode("utf-8")) > lim.max_name_bytes:
        errors.append(f"algo: name of {len(a['name'].encode('utf-8'))} bytes (UTF-8), over the parser's "
                      f"{lim.max_name_bytes}")
    if ngpus != len(algo.gpus):
        errors.append(f"algo: ngpus {ngpus} but {len(algo.gpus)} <gpu> elements")
    if len(algo.gpus) > lim.max_subs:
        errors.append(f"algo: {len(algo.gpus)} gpus, over the parser's {lim.max_subs} children per element")
    ids = sorted(g.id for g in algo.gpus)
    if ids != list(range(len(algo.gpus))):
        errors.append(f"gpu ids must be 0..{len(algo.gpus) - 1}, each once")
        return errors
    gpus = {g.id: g for g in algo.gpus}
    for g in algo.gpus:
        errors.extend(_validate_gpu(g, ngpus, nch, ncl, a["coll"], lim))
        if len(errors) > 50:
            return errors + ["... stopped after 50 errors"]
    if errors:
        return errors
    errors.extend(_validate_connections(gpus))
    return errors


def _validate_gpu(g, ngpus, nch, ncl, coll, lim):
    errors = []
    where = f"gpu {g.id}"
    if min(g.i_chunks, g.o_chunks, g.s_chunks) < 0:
        errors.append(f"{where}: negative i_chunks, o_chunks or s_chunks")
    if coll == "allreduce" and (g.i_chunks != ncl or g.o_chunks != ncl):
        errors.append(f"{where}: i_chunks and o_chunks must equal nchunksperloop ({ncl}) for allreduce")
    tb_ids = sorted(t.id for t in g.tbs)
    if tb_ids != list(range(len(g.tbs))):
        errors.append(f"{where}: threadblock ids must be 0..{len(g.tbs) - 1}, each once (the runtime refuses gaps)")
        return errors
    if len(g.tbs) > lim.max_tbs:
        errors.append(f"{where}: {len(g.tbs)} threadblocks, over the limit {lim.max_tbs}")
    if len(g.tbs) > 128:
        errors.append(f"{where}: threadblock ids above 127 do not fit the runtime's int8 dependentBid")
    nodes = 1 + ngpus + len(g.tbs) + sum(len(t.steps) for t in g.tbs)
    if nodes > lim.max_nodes:
        errors.append(f"{where}: {nodes} XML nodes to load for this rank, over the parser's limit of {lim.max_nodes} "
                      "(it refuses to read on once MAX_NODES slots are used, and the closing tag needs one)")
    sizes = {"i": g.i_chunks, "o": g.o_chunks, "s": g.s_chunks}
    by_id = {t.id: t for t in g.tbs}
    send_chan, recv_chan = {}, {}
    n_send, n_recv = {}, {}
    for t in g.tbs:
        w = f"{where}, tb {t.id}"
        for peer, kind in ((t.send, "send"), (t.recv, "recv")):
            if peer == g.id:
                errors.append(f"{w}: {kind} peer {peer} is the GPU itself")
            elif not -1 <= peer < ngpus:
                errors.append(f"{w}: {kind} peer {peer} is not -1 or a GPU id")
        if not 0 <= t.chan < nch:
            errors.append(f"{w}: channel {t.chan} outside 0..{nch - 1}")
        if t.send >= 0:
            if (t.chan, t.send) in send_chan:
                errors.append(f"{w}: a second threadblock sending to {t.send} on channel {t.chan} "
                              f"(tb {send_chan[(t.chan, t.send)]}); one connection per direction and channel")
            send_chan[(t.chan, t.send)] = t.id
            n_send[t.chan] = n_send.get(t.chan, 0) + 1
        if t.recv >= 0:
            if (t.chan, t.recv) in recv_chan:
                errors.append(f"{w}: a second threadblock receiving from {t.recv} on channel {t.chan} "
                              f"(tb {recv_chan[(t.chan, t.recv)]})")
            recv_chan[(t.chan, t.recv)] = t.id
            n_recv[t.chan] = n_recv.get(t.chan, 0) + 1
        if len(t.steps) > lim.max_steps:
            errors.append(f"{w}: {len(t.steps)} steps, over MSCCL_MAX_NUM_STEPS {lim.max_steps}")
        if len(t.steps) > lim.max_subs:
            errors.append(f"{w}: {len(t.steps)} steps, over the parser's {lim.max_subs} children per element")
        prev_nop = False
        for k, st in enumerate(t.steps):
            ws = f"{w}, step {st.s}"
            if st.s != k:
                errors.append(f"{w}: step numbers must be 0, 1, 2, ... in order (found {st.s} at position {k})")
                break
            if st.type not in STEP_TYPES:
                errors.append(f"{ws}: unknown type {st.type!r}")
                continue
            if st.srcbuf not in sizes or st.dstbuf not in sizes:
                errors.append(f"{ws}: buffers must be i, o or s")
                continue
            if st.hasdep not in (0, 1):
                errors.append(f"{ws}: hasdep must be 0 or 1")
            if st.depid == -1:
                if st.deps != -1:
                    errors.append(f"{ws}: deps {st.deps} without depid")
                if st.type == "nop":
                    errors.append(f"{ws}: a nop without a dependency")
                if prev_nop:
                    errors.append(f"{ws}: follows nop steps but has no dependency itself (the runtime refuses this)")
            else:
                dt = by_id.get(st.depid)
                if dt is None or st.depid == t.id:
                    errors.append(f"{ws}: depid {st.depid} is not another threadblock of this GPU")
                elif not 0 <= st.deps < len(dt.steps):
                    errors.append(f"{ws}: deps {st.deps} is not a step of tb {st.depid}")
                else:
                    target = dt.steps[st.deps]
                    if target.type == "nop":
                        errors.append(f"{ws}: depends on a nop step (tb {st.depid} step {st.deps})")
                    elif target.hasdep != 1:
                        errors.append(f"{ws}: depends on tb {st.depid} step {st.deps}, which has hasdep=0 (the "
                                      "runtime only signals steps with hasdep=1)")
            if st.type == "nop":
                if st.hasdep:
                    errors.append(f"{ws}: hasdep on a nop (the runtime never signals a nop)")
                prev_nop = True
                continue
            prev_nop = False
            if not 1 <= st.cnt < lim.max_count:
                errors.append(f"{ws}: cnt {st.cnt} outside 1..{lim.max_count - 1} (MSCCL_MAX_COUNT {lim.max_count})")
            if st.type in _SENDS and t.send < 0:
                errors.append(f"{ws}: type {st.type} sends but the threadblock has no send peer")
            if st.type in _RECVS and t.recv < 0:
                errors.append(f"{ws}: type {st.type} receives but the threadblock has no recv peer")
            if st.type in _READS_SRC and not (0 <= st.srcoff and st.srcoff + st.cnt <= sizes[st.srcbuf]):
                errors.append(f"{ws}: source {st.srcbuf}[{st.srcoff}:{st.srcoff + st.cnt}] outside the buffer "
                              f"({sizes[st.srcbuf]} chunks)")
            if st.type in _WRITES_DST and not (0 <= st.dstoff and st.dstoff + st.cnt <= sizes[st.dstbuf]):
                errors.append(f"{ws}: destination {st.dstbuf}[{st.dstoff}:{st.dstoff + st.cnt}] outside the buffer "
                              f"({sizes[st.dstbuf]} chunks)")
            if st.type == "re" and k > 0:
                pv = t.steps[k - 1]
                if (pv.type == "re" and pv.dstbuf == st.dstbuf and pv.dstoff == st.dstoff and pv.srcbuf == st.srcbuf
                        and st.depid == -1 and not pv.hasdep and pv.cnt != st.cnt):
                    errors.append(f"{ws}: the runtime fuses consecutive 're' steps with one destination, but the "
                                  "counts differ")
        if prev_nop:
            errors.append(f"{w}: ends with nop steps (the runtime drops them)")
    for chan, n in list(n_send.items()) + list(n_recv.items()):
        if n > lim.max_tbs_per_channel:
            errors.append(f"{where}: {n} threadblocks with a peer on channel {chan}, over "
                          f"MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL {lim.max_tbs_per_channel}")
            break
    return errors


def _validate_connections(gpus):
    errors = []
    sends, recvs = {}, {}
    for g in gpus.values():
        for t in g.tbs:
            if t.send >= 0:
                sends[(g.id, t.send, t.chan)] = [st.cnt for st in t.steps if st.type in _SENDS]
            if t.recv >= 0:
                recvs[(t.recv, g.id, t.chan)] = [st.cnt for st in t.steps if st.type in _RECVS]
    for key in sorted(set(sends) | set(recvs)):
        u, v, c = key
        s, r = sends.get(key, []), recvs.get(key, [])
        if len(s) != len(r):
            errors.append(f"connection {u}->{v} channel {c}: {len(s)} sends but {len(r)} receives")
        elif s != r:
            k = next(i for i, (x, y) in enumerate(zip(s, r)) if x != y)
            errors.append(f"connection {u}->{v} channel {c}: send #{k} has cnt {s[k]}, its receive cnt {r[k]}")
    return errors


# ------------------------------------------------------------------------ interpreter
def interpret(algo: Algo, inputs, in_place: bool = False, capacity: int | None = 0, elements_per_chunk: int = 1,
              seed: int | None = None, trace: list | None = None):
    """Execute ``algo`` on ``inputs`` (``ngpus x (nchunksperloop * elements_per_chunk)`` array).

    Returns ``(outputs, errors)``: the output buffers after the run (for ``in_place`` the
    input buffers, which are the output) and a list of errors (deadlock, data left in a
    connection, a receive whose ``cnt`` differs from its send, a send whose source changed
    before the send completed).  ``capacity`` is how many unreceived sends a connection
    holds before a send blocks; ``0`` (default) means a send completes only when its
    receive takes the data; ``None`` means unbounded.  Threadblocks advance in turns; with
    ``seed`` the turn order is shuffled and some threadblocks lag behind, which exposes
    missing dependencies as wrong sums.  With a ``trace`` list, the start and end of every
    step are appended to it in execution order (for :func:`race_check`).
    """
    record = trace.append if trace is not None else (lambda ev: None)
    rng = None if seed is None else np.random.default_rng(seed)
    E = int(elements_per_chunk)
    gpus = sorted(algo.gpus, key=lambda g: g.id)
    inputs = np.asarray(inputs)
    bufs = []
    for g in gpus:
        i = inputs[g.id].copy()
        o = i if in_place else np.zeros_like(i)
        s = np.zeros(max(g.s_chunks, 0) * E, dtype=inputs.dtype)
        bufs.append({"i": i, "o": o, "s": s})
    # per threadblock state
    tbs = [(g.id, t) for g in gpus for t in sorted(g.tbs, key=lambda t: t.id)]
    pc = {(gid, t.id): 0 for gid, t in tbs}
    flag = {(gid, t.id): -1 for gid, t in tbs}
    phase = {}  # (gpu, tb) -> (data, item) for fused steps after their receive part / a posted send
    queues = {}  # (u, v, chan) -> list of [data, cnt, taken]
    errors = []

    def view(gid, buf, off, cnt):
        return bufs[gid][buf][off * E:(off + cnt) * E]

    def dep_ok(gid, st):
        return st.depid < 0 or flag[(gid, st.depid)] >= st.deps

    def post(gid, t, data, cnt):
        q = queues.setdefault((gid, t.send, t.chan), [])
        item = [data.copy(), cnt, False, (gid, t.id, pc[(gid, t.id)])]
        q.append(item)
        return item

    def send_done(gid, t, item):
        if capacity is None:
            return True
        if item[2]:
            return True
        if capacity == 0:
            return False
        q = queues[(gid, t.send, t.chan)]
        ahead = sum(1 for it in q if not it[2] and it is not item)
        return ahead < capacity

    def take(gid, t):
        q = queues.get((t.recv, gid, t.chan))
        if not q:
            return None
        for it in q:
            if not it[2]:
                return it
        return None

    def finish(gid, t, st, sender=None):
        state = phase.get((gid, t.id))
        if sender is None and state is not None and len(state) > 2:
            sender = state[2]
        record(("E", gid, t.id, pc[(gid, t.id)], sender))
        if state is not None and st.type == "s" and not np.array_equal(
                state[1][0], view(gid, st.srcbuf, st.srcoff, st.cnt)):
            raise _Mismatch(f"gpu {gid}, tb {t.id}, step {st.s}: the source changed while the send was in flight "
                            "(a missing dependency)")
        if st.hasdep:
            flag[(gid, t.id)] = st.s
        pc[(gid, t.id)] += 1
        phase.pop((gid, t.id), None)

    def advance(gid, t):
        """Run tb ``t`` as far as it can go; True if it made any progress."""
        key = (gid, t.id)
        any_progress = False
        while pc[key] < len(t.steps):
            st = t.steps[pc[key]]
            state = phase.get(key)
            if state is None and not dep_ok(gid, st):
                return any_progress
            typ = st.type
            if state is None:
                if typ in _RECVS and take(gid, t) is None:
                    return any_progress
                record(("S", gid, t.id, pc[key]))
            if typ == "nop":
                finish(gid, t, st)
                any_progress = True
                continue
            if typ in ("cpy", "re"):
                src = view(gid, st.srcbuf, st.srcoff, st.cnt)
                dst = view(gid, st.dstbuf, st.dstoff, st.cnt)
                if typ == "cpy":
                    dst[...] = src
                else:
                    dst += src
                finish(gid, t, st)
                any_progress = True
                continue
            if state is None:
                if typ == "s":
                    state = phase[key] = ("sent", post(gid, t, view(gid, st.srcbuf, st.srcoff, st.cnt), st.cnt))
                else:  # the receive part
                    item = take(gid, t)
                    if item is None:
                        return any_progress
                    if item[1] != st.cnt:
                        raise _Mismatch(f"gpu {gid}, tb {t.id}, step {st.s}: receives cnt {st.cnt} but the "
                                        f"matching send has cnt {item[1]}")
                    item[2] = True
                    data = item[0]
                    if typ in ("rrs", "rrc", "rrcs"):
                        data = data + view(gid, st.srcbuf, st.srcoff, st.cnt)
                    if typ in ("r", "rcs", "rrc", "rrcs"):
                        view(gid, st.dstbuf, st.dstoff, st.cnt)[...] = data
                    if typ in ("r", "rrc"):
                        finish(gid, t, st, item[3])
                        any_progress = True
                        continue
                    state = phase[key] = ("sent", post(gid, t, data, st.cnt), item[3])
                any_progress = True
            if not send_done(gid, t, state[1]):
                return any_progress
            finish(gid, t, st)
            any_progress = True
        return any_progress

    active = list(tbs)
    lag = rng is not None
    while active:
        moved = False
        turn = [active[k] for k in rng.permutation(len(active))] if rng is not None else active
        try:
            for gid, t in turn:
                if lag and rng.random() < 0.3:
                    continue
                moved = advance(gid, t) or moved
        except _Mismatch as exc:
            errors.append(str(exc))
            return None, errors
        still = [(gid, t) for gid, t in active if pc[(gid, t.id)] < len(t.steps)]
        if not moved and lag:
            lag = False  # a pass without lagging decides whether this is a deadlock
            continue
        lag = rng is not None
        if not moved:
            stuck = []
            for gid, t in still[:6]:
                st = t.steps[pc[(gid, t.id)]]
                why = (f"waits for tb {st.depid} step {st.deps}" if (gid, t.id) not in phase and not dep_ok(gid, st)
                       else f"{st.type} blocked on its connection")
                stuck.append(f"gpu {gid} tb {t.id} step {st.s} ({why})")
            errors.append("deadlock: " + "; ".join(stuck) + (" ..." if len(still) > 6 else ""))
            return None, errors
        active = still
    for key, q in queues.items():
        left = sum(1 for it in q if not it[2])
        if left:
            errors.append(f"connection {key[0]}->{key[1]} channel {key[2]}: {left} send(s) never received")
    outs = np.stack([b["o"] for b in bufs])
    if not in_place:
        for g, b in zip(gpus, bufs):
            if not np.array_equal(b["i"], inputs[g.id]):
                errors.append(f"gpu {g.id}: the input buffer was modified in an out-of-place run")
                break
    return outs, errors


def _accesses(st):
    """(buffer, offset, count, writes) of the local memory a step touches."""
    t = st.type
    out = []
    if t in _READS_SRC:
        out.append((st.srcbuf, st.srcoff, st.cnt, False))
    if t in _WRITES_DST:
        out.append((st.dstbuf, st.dstoff, st.cnt, True))
    return out


def race_check(algo: Algo, trace, alias_io: bool, max_bytes: int = 1 << 29) -> list:
    """Errors for every pair of conflicting accesses that no happens-before relation orders.

    Happens-before is the weakest the runtimes guarantee, whatever their buffering: the
    order of steps in a threadblock, a dependency (the step waited for ends before the
    waiting step starts) and a message (its send starts before its receive ends).  Two
    steps of one GPU conflict when they touch a common chunk of one buffer and one of them
    writes it (``i`` and ``o`` are one buffer when ``alias_io``).  A race-free program
    computes the same result in every execution, so one correct interpretation proves
    them all.  Vector clocks over all threadblocks, computed along ``trace`` (a complete
    execution from :func:`interpret`); returns ``["race check skipped ..."]`` when they
    would take more than ``max_bytes``.
    """
    tbs = [(g.id, t) for g in sorted(algo.gpus, key=lambda g: g.id) for t in sorted(g.tbs, key=lambda t: t.id)]
    tb_index = {(gid, t.id): i for i, (gid, t) in enumerate(tbs)}
    base, n_steps = {}, 0
    for gid, t in tbs:
        base[(gid, t.id)] = n_steps
        n_steps += len(t.steps)
    n_tbs = len(tbs)
    longest = max((len(t.steps) for _, t in tbs), default=0)
    dtype = np.uint8 if 2 * longest + 2 < 255 else np.uint16
    if 2 * n_steps * n_tbs * np.dtype(dtype).itemsize > max_bytes:
        return [f"race check skipped: {n_steps} steps x {n_tbs} threadblocks of vector clocks exceed "
                f"{max_bytes >> 20} MiB"]
    # clocks: entry t = 1 + (2k or 2k+1) for the last start/end of step k of threadblock t known to happen before
    vs = np.zeros((n_steps, n_tbs), dtype=dtype)
    ve = np.zeros((n_steps, n_tbs), dtype=dtype)
    steps = {(gid, t.id): t.steps for gid, t in tbs}
    for ev in trace:
        gid, tid, k = ev[1], ev[2], ev[3]
        key = (gid, tid)
        sid, ti = base[key] + k, tb_index[key]
        if ev[0] == "S":
            row = ve[sid - 1].copy() if k > 0 else np.zeros(n_tbs, dtype=dtype)
            st = steps[key][k]
            if st.depid >= 0:
                np.maximum(row, ve[base[(gid, st.depid)] + st.deps], out=row)
            row[ti] = 2 * k + 1
            vs[sid] = row
        else:
            row = vs[sid].copy()
            if ev[4] is not None:
                sg, stb, sk = ev[4]
                np.maximum(row, vs[base[(sg, stb)] + sk], out=row)
            row[ti] = 2 * k + 2
            ve[sid] = row
    # conflicting pairs per GPU, buffer and chunk
    recs = []
    for gid, t in tbs:
        b0, ti = base[(gid, t.id)], tb_index[(gid, t.id)]
        for k, st in enumerate(t.steps):
            for buf, off, cnt, wr in _accesses(st):
                if alias_io and buf == "i":
                    buf = "o"
                bi = "ios".index(buf)
                for u in range(off, off + cnt):
                    recs.append((gid, bi, u, b0 + k, ti, k, wr))
    if not recs:
        return []
    a = np.asarray(recs, dtype=np.int64)
    a = a[np.lexsort((a[:, 3], a[:, 2], a[:, 1], a[:, 0]))]
    key = (a[:, 0] * 3 + a[:, 1]) * (1 << 32) + a[:, 2]
    cut = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ptr = np.r_[cut, key.size]
    sizes = np.diff(ptr)
    grp = np.repeat(np.arange(sizes.size), sizes)
    idx = np.arange(key.size)
    after = ptr[grp + 1] - idx - 1
    first = np.repeat(idx, after)
    second = first + 1 + (np.arange(int(after.sum())) - np.repeat(np.cumsum(after) - after, after))
    x, y = a[first], a[second]
    keep = (x[:, 6] | y[:, 6]).astype(bool) & (x[:, 4] != y[:, 4])
    x, y = x[keep], y[keep]
    if x.shape[0] == 0:
        return []
    pair = np.unique(np.stack([x[:, 3], y[:, 3]], axis=1), axis=0, return_index=True)[1]
    x, y = x[pair], y[pair]
    # ordered: end(x) before start(y), or end(y) before start(x)
    x_then_y = vs[y[:, 3], x[:, 4]] >= 2 * x[:, 5] + 2
    y_then_x = vs[x[:, 3], y[:, 4]] >= 2 * y[:, 5] + 2
    bad = np.flatnonzero(~(x_then_y | y_then_x))
    errors = []
    for j in bad[:5]:
        errors.append(f"race on gpu {int(x[j, 0])}, buffer {'ios'[int(x[j, 1])]} chunk {int(x[j, 2])}: tb "
                      f"{_tb_of(tbs, x[j, 4])} step {int(x[j, 5])} and tb {_tb_of(tbs, y[j, 4])} step {int(y[j, 5])} "
                      "are not ordered (a missing dependency)")
    if bad.size > 5:
        errors.append(f"... {bad.size} unordered pairs in all")
    return errors


def _tb_of(tbs, ti):
    return tbs[int(ti)][1].id


def check_xml(text_or_path, limits=None, *, seed: int = 0, capacity: int | None = 0,
              elements_per_chunk: int = 1, shuffled_runs: int = 1, race_check_bytes: int = 1 << 29) -> CheckReport:
    """Validate the structure, then interpret the algorithm and compare with the exact allreduce.

    Runs out of place if ``outofplace="1"`` and in place if ``inplace="1"``, each in the
    plain turn order and ``shuffled_runs`` more times in shuffled, lagging orders; the first
    execution also goes through :func:`race_check` (``race_check_bytes=0`` skips it), so a
    passing report means: the structure is valid, the algorithm completes even without
    buffering, it is free of data races, and its result is the exact sum.
    """
    lim = _limits(limits)
    text = _text(text_or_path)
    report = CheckReport()
    report.errors.extend(_raw_checks(text, lim))
    try:
        algo = parse_xml(text)
    except XmlError as exc:
        report.errors.append(str(exc))
        report.structural = False
        return report
    report.errors.extend(validate(algo, lim))
    if report.errors:
        report.structural = False
        return report
    p, n = algo.ngpus, algo.nchunksperloop
    s_max = max((g.s_chunks for g in algo.gpus), default=0)
    scratch = int(algo.attrs["maxBytes"]) * s_max // n
    if scratch > lim.scratch_cap:
        report.notes.append(f"maxBytes {algo.attrs['maxBytes']} makes the original MSCCL allocate {scratch:,} bytes of "
                            f"scratch per GPU at init (maxBytes x s_chunks {s_max} / nchunksperloop {n})")
    rng = np.random.default_rng(seed)
    inputs = rng.integers(0, 2**62, size=(p, n * elements_per_chunk), dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        want = inputs.sum(axis=0, dtype=np.uint64)
    modes = []
    if int(algo.attrs["outofplace"]):
        modes.append(("out-of-place", False))
    if int(algo.attrs["inplace"]):
        modes.append(("in-place", True))
    runs = [(label, in_place, None) for label, in_place in modes]
    runs += [(f"{label}, shuffled #{k + 1}", in_place, seed + 1 + k) for k in range(shuffled_runs)
             for label, in_place in modes]
    for n_run, (label, in_place, order_seed) in enumerate(runs):
        trace = [] if n_run == 0 and race_check_bytes else None
        with np.errstate(over="ignore"):
            outs, errs = interpret(algo, inputs, in_place=in_place, capacity=capacity,
                                   elements_per_chunk=elements_per_chunk, seed=order_seed, trace=trace)
        report.executed.append(label)
        if trace is not None and outs is not None and not errs:
            races = race_check(algo, trace, alias_io=bool(int(algo.attrs["inplace"])), max_bytes=race_check_bytes)
            if races and races[0].startswith("race check skipped"):
                report.notes.extend(races)
            else:
                report.errors.extend(races)
                report.race_checked = True
        report.errors.extend(f"{label}: {e}" for e in errs)
        if outs is None:
            continue
        bad = np.argwhere(outs != want[None, :])
        for gpu, el in bad[:5]:
            report.errors.append(f"{label}: gpu {int(gpu)}, chunk {int(el) // elements_per_chunk}: output is not the "
                                 "sum of all inputs")
    return report
