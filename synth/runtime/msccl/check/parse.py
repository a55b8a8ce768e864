"""Read MSCCL XML into plain dataclasses: :class:`Algo` of :class:`Gpu` of :class:`ThreadBlock` of :class:`Step`.

The standard library parser reads the text; nothing here knows the exporter
(:mod:`synth.runtime.msccl.export`), so an exported file is checked by what it *says*.
The step-type vocabulary (which steps send, receive, read or write locally) lives here,
shared by the validator, the interpreter and the race check.

Examples
--------
>>> algo = parse_xml('<algo name="a" ngpus="1" nchunksperloop="1"><gpu id="0" i_chunks="1" o_chunks="1" '
...                  's_chunks="0"></gpu></algo>')
>>> algo.ngpus, algo.nchunksperloop, algo.gpus[0].tbs
(1, 1, [])
>>> parse_xml("<algo><gpu/></algo>")
Traceback (most recent call last):
...
synth.errors.XmlError: gpu ?: missing attribute 'id'
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from synth.errors import XmlError
from synth.fileio import LIMITS, read_text as read_file_text

__all__ = ["Algo", "Gpu", "ThreadBlock", "Step", "XmlError", "parse_xml", "read_text", "STEP_TYPES", "SENDS", "RECVS",
           "READS_SRC", "WRITES_DST", "ALGO_ATTRS"]

STEP_TYPES = ("s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop")
SENDS = {"s", "rcs", "rrs", "rrcs"}
RECVS = {"r", "rcs", "rrs", "rrc", "rrcs"}
READS_SRC = {"s", "rrs", "rrc", "rrcs", "cpy", "re"}  # steps that read srcbuf locally
WRITES_DST = {"r", "rcs", "rrc", "rrcs", "cpy", "re"}  # steps that write dstbuf locally
ALGO_ATTRS = ("name", "proto", "nchannels", "nchunksperloop", "ngpus", "coll", "inplace", "outofplace",
               "minBytes", "maxBytes")


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
    text = read_text(text_or_path)
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


def read_text(text_or_path) -> str:
    """The XML text itself (a string starting with ``<``), or the text of the file at that path."""
    if isinstance(text_or_path, str) and text_or_path.lstrip().startswith("<"):
        return text_or_path
    # a regular file only, never blocking, up to the limit export writes to (synth.fileio.LIMITS)
    return read_file_text(text_or_path, LIMITS["msccl-xml"])
