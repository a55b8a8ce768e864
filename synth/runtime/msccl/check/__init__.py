r"""Check MSCCL XML algorithms: the structural rules of the runtimes, and an interpreter.

This package is independent of the exporter (:mod:`synth.runtime.msccl.export`, never imported
here; ``tests/test_isolation.py`` checks it): it reads the
XML text only (standard library parser plus a scan of the raw text for what the
runtimes' own, simpler parser needs), so an exported file is checked by what it *says*.

:func:`validate` enforces the rules of msccl-executor-nccl / RCCL's parser
(``msccl_parser.cc``) and kernel (``msccl_kernel.cu``) for the limits in
:class:`CheckLimits` (:mod:`synth.runtime.msccl.limits`, one definition the exporter reads too): required
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
with the collective's exact result (random 64-bit integers, wrapping): for ``allreduce``
every GPU's output is the sum of all inputs; for ``reducescatter`` (input: the vector of
``nchunksperloop`` chunks, output: the GPU's block, aliased at ``i[r*B:(r+1)*B]`` in place)
GPU ``r``'s output is the sum over GPUs of block ``r``; for ``allgather`` (input: the GPU's
block, aliased at ``o[r*B:(r+1)*B]`` in place) every output is the concatenation of the inputs.

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

from dataclasses import dataclass, field

import numpy as np

from synth.runtime.msccl.check.interpret import interpret
from synth.runtime.msccl.check.parse import STEP_TYPES, Algo, Gpu, Step, ThreadBlock, XmlError, parse_xml, read_text
from synth.runtime.msccl.check.races import race_check
from synth.runtime.msccl.check.validate import CheckLimits, as_check_limits, raw_checks, validate

__all__ = ["Algo", "Gpu", "ThreadBlock", "Step", "CheckLimits", "CheckReport", "XmlError", "parse_xml", "validate",
           "interpret", "race_check", "check_xml", "STEP_TYPES"]


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


def check_xml(text_or_path, limits=None, *, seed: int = 0, capacity: int | None = 0,
              elements_per_chunk: int = 1, shuffled_runs: int = 1, race_check_bytes: int = 1 << 29,
              coll: str | None = None) -> CheckReport:
    """Validate the structure, then interpret the algorithm and compare with the collective's exact result.

    ``coll`` is the collective the file must declare (``allreduce``, ``reducescatter``,
    ``allgather``); ``None`` takes the file's own (any of the three).

    Runs out of place if ``outofplace="1"`` and in place if ``inplace="1"``, each in the
    plain turn order and ``shuffled_runs`` more times in shuffled, lagging orders; the first
    execution also goes through :func:`race_check` (``race_check_bytes=0`` skips it), so a
    passing report means: the structure is valid, the algorithm completes even without
    buffering, it is free of data races, and its result is the exact sum.
    """
    lim = as_check_limits(limits)
    text = read_text(text_or_path)
    report = CheckReport()
    report.errors.extend(raw_checks(text, lim))
    try:
        algo = parse_xml(text)
    except XmlError as exc:
        report.errors.append(str(exc))
        report.structural = False
        return report
    report.errors.extend(validate(algo, lim, coll=coll))
    if report.errors:
        report.structural = False
        return report
    p, n = algo.ngpus, algo.nchunksperloop
    s_max = max((g.s_chunks for g in algo.gpus), default=0)
    scratch = int(algo.attrs["maxBytes"]) * s_max // n
    if scratch > lim.scratch_cap:
        report.notes.append(f"maxBytes {algo.attrs['maxBytes']} makes the original MSCCL allocate {scratch:,} bytes of "
                            f"scratch per GPU at init (maxBytes x s_chunks {s_max} / nchunksperloop {n})")
    inputs, want, what = _expected(algo.attrs["coll"], p, n, elements_per_chunk, np.random.default_rng(seed))
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
        bad = np.argwhere(outs != want)
        for gpu, el in bad[:5]:
            report.errors.append(f"{label}: gpu {int(gpu)}, output chunk {int(el) // elements_per_chunk}: {what}")
    return report


def _expected(coll, p, n, E, rng):
    """``(inputs, outputs, message)``: random inputs of every GPU, the exact outputs, what a wrong one is not."""
    if coll == "reducescatter":
        inputs = rng.integers(0, 2**62, size=(p, n * E), dtype=np.int64).astype(np.uint64)
        with np.errstate(over="ignore"):
            total = inputs.sum(axis=0, dtype=np.uint64)
        return inputs, total.reshape(p, -1), "not the sum over all GPUs of its block"
    if coll == "allgather":
        inputs = rng.integers(0, 2**62, size=(p, n // p * E), dtype=np.int64).astype(np.uint64)
        return inputs, np.broadcast_to(inputs.reshape(1, -1), (p, n * E)), "not the input of the block's GPU"
    inputs = rng.integers(0, 2**62, size=(p, n * E), dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        want = inputs.sum(axis=0, dtype=np.uint64)
    return inputs, want[None, :], "output is not the sum of all inputs"
