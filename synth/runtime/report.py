"""What the reports of ``synth run`` share, whichever engine ran the schedule.

:class:`RunReportBase` holds the fields every engine measures the same way: the schedule's
label and shape (rounds, chunks, packed messages), the vector (elements, dtype), the iterations,
their times and the problems found.  The MPI report (:class:`synth.runtime.mpi.RunReport`) and
the JAX report (:class:`synth.runtime.jax.run.JaxRunReport`) add their engine's own fields, its
reference collective's times and its ``to_json`` / ``summary``.  Every field is keyword-only, so
a report is built by name.

Examples
--------
>>> rep = RunReportBase(label="sp", elements=256, dtype="float32", iters=3, warmup=1, rounds=8, chunks=64,
...                     messages=512, schedule_s=[0.003, 0.001, 0.002])
>>> rep.ok, rep.bytes, rep.median_s, rep.collective
(True, 1024, 0.002, 'allreduce')
>>> median_ms(rep.schedule_s)
'2.000 ms (min 1.000, max 3.000)'
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["RunReportBase", "median_s", "median_ms"]


def median_s(xs) -> float:
    """Median of per-iteration seconds, NaN when there are none."""
    return float(np.median(xs)) if xs else float("nan")


def median_ms(xs) -> str:
    """``"<median> ms (min <min>, max <max>)"`` of per-iteration seconds (at least one)."""
    return f"{1e3 * float(np.median(xs)):.3f} ms (min {1e3 * min(xs):.3f}, max {1e3 * max(xs):.3f})"


@dataclass(kw_only=True)
class RunReportBase:
    """The fields of a ``synth run`` report that every engine fills alike.

    Attributes
    ----------
    label : str
        Where the schedule came from (file, certificate's algorithm, baseline).
    elements : int
        Elements of the vector per rank or device (a reduce-scatter's input, an allgather's output).
    dtype : str
    iters, warmup : int
        Timed iterations, after untimed ones; every one is checked.
    rounds, chunks, messages : int
        The schedule's rounds, chunks and packed messages.
    schedule_s : list of float
        Seconds of each timed iteration of the schedule.
    errors : list of str
        What differed from the exact result or from the reference collective; empty when right.
    collective : str
        ``"allreduce"``, ``"reduce-scatter"`` or ``"allgather"``.
    """

    label: str
    elements: int
    dtype: str
    iters: int
    warmup: int
    rounds: int
    chunks: int
    messages: int
    schedule_s: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    collective: str = "allreduce"

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def itemsize(self) -> int:
        """Bytes per element of ``dtype``."""
        return int(np.dtype(self.dtype).itemsize)

    @property
    def bytes(self) -> int:
        return self.elements * self.itemsize

    @property
    def median_s(self) -> float:
        return median_s(self.schedule_s)
