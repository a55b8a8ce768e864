"""The structural rules of the MSCCL runtimes, checked on the text and on the parsed :class:`Algo`.

:func:`validate` enforces the rules of msccl-executor-nccl / RCCL's parser
(``msccl_parser.cc``) and kernel (``msccl_kernel.cu``) for the limits in
:class:`CheckLimits` (the runtime limits of :mod:`synth.runtime.msccl.limits`, one definition
the exporter reads too): required attributes, contiguous threadblock ids and step numbers,
peers other than the GPU itself, at most one threadblock per (channel, send peer) and per
(channel, recv peer), ``cnt < max_count``, offsets inside the buffers, one dependency per step
with extra ones as ``nop`` steps directly before a step that has one, dependencies only on
steps marked ``hasdep``, and equal send/receive sequences (``cnt`` by ``cnt``) on every
(sender, receiver, channel) connection.  :func:`raw_checks` scans the raw text for what the
runtimes' own, simpler tokenizer needs beyond well-formedness.

Examples
--------
>>> from synth.runtime.msccl.check.parse import parse_xml
>>> algo = parse_xml('<algo name="a" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="1" coll="allreduce" '
...                  'inplace="0" outofplace="1" minBytes="0" maxBytes="0"><gpu id="0" i_chunks="1" o_chunks="1" '
...                  's_chunks="0"></gpu></algo>')
>>> validate(algo)
[]
>>> validate(algo, CheckLimits(max_chunks=0))
['algo: nchunksperloop 1 outside 1..0']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from synth.runtime.msccl.check.parse import ALGO_ATTRS, Algo, READS_SRC, RECVS, SENDS, STEP_TYPES, WRITES_DST
from synth.runtime.msccl.limits import PROTOCOLS, SCRATCH_CAP, MscclLimits

__all__ = ["CheckLimits", "validate", "raw_checks", "as_check_limits"]


@dataclass(frozen=True)
class CheckLimits(MscclLimits):
    """The runtime limits (:class:`~synth.runtime.msccl.limits.MscclLimits`, shared with the exporter) and what
    only a reader of the text needs: attributes per element, bytes per attribute, the scratch worth a note."""

    max_attrs: int = 16
    max_str: int = 255  # bytes of an attribute value; keys at most max_str - 1 (see _raw_checks)
    max_name_bytes: int = 255
    scratch_cap: int = SCRATCH_CAP  # bytes of scratch per GPU at maxBytes above which check_xml adds a note


_TAG = re.compile(r"<([^>]*)>")
_ATTR = re.compile(r'\s*([A-Za-z_][\w]*)="([^"<>]*)"')


def raw_checks(text, limits) -> list:
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
        if "'" in re.sub(r'"[^"]*"', '""', rest):  # a ' inside a double-quoted value is read as is
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


def as_check_limits(limits) -> CheckLimits:
    """:class:`CheckLimits` from ``None``, a CheckLimits, or any object with some of its fields (e.g. MscclLimits)."""
    if limits is None:
        return CheckLimits()
    if isinstance(limits, CheckLimits):
        return limits
    base = CheckLimits()
    return CheckLimits(**{k: getattr(limits, k, getattr(base, k)) for k in base.__dataclass_fields__})


def validate(algo: Algo, limits=None, coll: str | None = "allreduce") -> list:
    """Structural errors of ``algo`` (empty list: it satisfies every rule the runtimes check)."""
    lim = as_check_limits(limits)
    errors = []
    a = algo.attrs
    for key in ALGO_ATTRS:
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
    if a["proto"] not in PROTOCOLS:
        errors.append(f"algo: proto {a['proto']!r} is not Simple, LL or LL128")
    if coll is not None and a["coll"] != coll:
        errors.append(f"algo: coll is {a['coll']!r}, expected {coll!r}")
    elif a["coll"] not in ("allreduce", "reducescatter", "allgather"):
        errors.append(f"algo: coll {a['coll'][:40]!r} is not allreduce, reducescatter or allgather")
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
    where = f"gpu {g.id}"
    errors = _gpu_sizes(g, ngpus, ncl, coll)
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
    conns = {"send": ({}, {}), "recv": ({}, {})}  # kind -> ((chan, peer) -> tb, chan -> threadblocks)
    for t in g.tbs:
        w = f"{where}, tb {t.id}"
        errors.extend(_tb_peers(g, t, w, ngpus, nch, conns))
        if len(t.steps) > lim.max_steps:
            errors.append(f"{w}: {len(t.steps)} steps, over MSCCL_MAX_NUM_STEPS {lim.max_steps}")
        if len(t.steps) > lim.max_subs:
            errors.append(f"{w}: {len(t.steps)} steps, over the parser's {lim.max_subs} children per element")
        errors.extend(_tb_steps(t, w, by_id, sizes, lim))
    for chan, n in list(conns["send"][1].items()) + list(conns["recv"][1].items()):
        if n > lim.max_tbs_per_channel:
            errors.append(f"{where}: {n} threadblocks with a peer on channel {chan}, over "
                          f"MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL {lim.max_tbs_per_channel}")
            break
    return errors


def _gpu_sizes(g, ngpus, ncl, coll):
    """Errors in a GPU's ``i_chunks``, ``o_chunks`` and ``s_chunks`` for the collective."""
    errors = []
    where = f"gpu {g.id}"
    if min(g.i_chunks, g.o_chunks, g.s_chunks) < 0:
        errors.append(f"{where}: negative i_chunks, o_chunks or s_chunks")
    if coll == "allreduce" and (g.i_chunks != ncl or g.o_chunks != ncl):
        errors.append(f"{where}: i_chunks and o_chunks must equal nchunksperloop ({ncl}) for allreduce")
    elif coll in ("reducescatter", "allgather"):
        # nchunksperloop counts the whole vector (the runtimes' sizeMultiplier = ngpus); a GPU's block is 1/ngpus
        want = (ncl, ncl // ngpus) if coll == "reducescatter" else (ncl // ngpus, ncl)
        if ncl % ngpus:
            errors.append(f"{where}: nchunksperloop {ncl} is not a multiple of ngpus {ngpus} ({coll} blocks)")
        elif (g.i_chunks, g.o_chunks) != want:
            errors.append(f"{where}: i_chunks {g.i_chunks} and o_chunks {g.o_chunks} must be {want[0]} and {want[1]} "
                          f"for {coll} (the vector of nchunksperloop chunks and one GPU's block of it)")
    return errors


def _tb_peers(g, t, w, ngpus, nch, conns):
    """Errors in a threadblock's peers and channel; counts its connection in ``conns``."""
    errors = []
    for peer, kind in ((t.send, "send"), (t.recv, "recv")):
        if peer == g.id:
            errors.append(f"{w}: {kind} peer {peer} is the GPU itself")
        elif not -1 <= peer < ngpus:
            errors.append(f"{w}: {kind} peer {peer} is not -1 or a GPU id")
    if not 0 <= t.chan < nch:
        errors.append(f"{w}: channel {t.chan} outside 0..{nch - 1}")
    for peer, kind, what in ((t.send, "send", f"sending to {t.send}"), (t.recv, "recv", f"receiving from {t.recv}")):
        if peer < 0:
            continue
        at, count = conns[kind]
        if (t.chan, peer) in at:
            errors.append(f"{w}: a second threadblock {what} on channel {t.chan} (tb {at[(t.chan, peer)]})"
                          + ("; one connection per direction and channel" if kind == "send" else ""))
        at[(t.chan, peer)] = t.id
        count[t.chan] = count.get(t.chan, 0) + 1
    return errors


def _tb_steps(t, w, by_id, sizes, lim):
    """Errors in the steps of threadblock ``t``: numbering, types, buffers, dependencies and counts."""
    errors = []
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
        errors.extend(_step_dependency(t, st, ws, by_id, prev_nop))
        if st.type == "nop":
            if st.hasdep:
                errors.append(f"{ws}: hasdep on a nop (the runtime never signals a nop)")
            prev_nop = True
            continue
        prev_nop = False
        errors.extend(_step_data(t, k, ws, sizes, lim))
    if prev_nop:
        errors.append(f"{w}: ends with nop steps (the runtime drops them)")
    return errors


def _step_dependency(t, st, ws, by_id, prev_nop):
    """Errors in a step's ``depid``/``deps``."""
    errors = []
    if st.depid == -1:
        if st.deps != -1:
            errors.append(f"{ws}: deps {st.deps} without depid")
        if st.type == "nop":
            errors.append(f"{ws}: a nop without a dependency")
        if prev_nop:
            errors.append(f"{ws}: follows nop steps but has no dependency itself (the runtime refuses this)")
        return errors
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
    return errors


def _step_data(t, k, ws, sizes, lim):
    """Errors in what step ``k`` of ``t`` (not a nop) moves: count, peers, buffer bounds, fused reduces."""
    errors = []
    st = t.steps[k]
    if not 1 <= st.cnt < lim.max_count:
        errors.append(f"{ws}: cnt {st.cnt} outside 1..{lim.max_count - 1} (MSCCL_MAX_COUNT {lim.max_count})")
    if st.type in SENDS and t.send < 0:
        errors.append(f"{ws}: type {st.type} sends but the threadblock has no send peer")
    if st.type in RECVS and t.recv < 0:
        errors.append(f"{ws}: type {st.type} receives but the threadblock has no recv peer")
    if st.type in READS_SRC and not (0 <= st.srcoff and st.srcoff + st.cnt <= sizes[st.srcbuf]):
        errors.append(f"{ws}: source {st.srcbuf}[{st.srcoff}:{st.srcoff + st.cnt}] outside the buffer "
                      f"({sizes[st.srcbuf]} chunks)")
    if st.type in WRITES_DST and not (0 <= st.dstoff and st.dstoff + st.cnt <= sizes[st.dstbuf]):
        errors.append(f"{ws}: destination {st.dstbuf}[{st.dstoff}:{st.dstoff + st.cnt}] outside the buffer "
                      f"({sizes[st.dstbuf]} chunks)")
    if st.type == "re" and k > 0:
        pv = t.steps[k - 1]
        if (pv.type == "re" and pv.dstbuf == st.dstbuf and pv.dstoff == st.dstoff and pv.srcbuf == st.srcbuf
                and st.depid == -1 and not pv.hasdep and pv.cnt != st.cnt):
            errors.append(f"{ws}: the runtime fuses consecutive 're' steps with one destination, but the "
                          "counts differ")
    return errors


def _validate_connections(gpus):
    errors = []
    sends, recvs = {}, {}
    for g in gpus.values():
        for t in g.tbs:
            if t.send >= 0:
                sends[(g.id, t.send, t.chan)] = [st.cnt for st in t.steps if st.type in SENDS]
            if t.recv >= 0:
                recvs[(t.recv, g.id, t.chan)] = [st.cnt for st in t.steps if st.type in RECVS]
    for key in sorted(set(sends) | set(recvs)):
        u, v, c = key
        s, r = sends.get(key, []), recvs.get(key, [])
        if len(s) != len(r):
            errors.append(f"connection {u}->{v} channel {c}: {len(s)} sends but {len(r)} receives")
        elif s != r:
            k = next(i for i, (x, y) in enumerate(zip(s, r)) if x != y)
            errors.append(f"connection {u}->{v} channel {c}: send #{k} has cnt {s[k]}, its receive cnt {r[k]}")
    return errors
