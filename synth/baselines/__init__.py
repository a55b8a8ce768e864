"""Baseline allreduce algorithms as explicit schedules the checker verifies.

Every baseline is generated transmission by transmission in synth's explicit
representation (:class:`synth.schedule.Schedule`), so :func:`synth.check.execute`
proves it correct and :func:`synth.check.measure_explicit` measures its
``S``, ``Psi``, ``Theta`` and ``Omega`` exactly as for SP-allreduce.

=====================  ==========================================================
name                   algorithm
=====================  ==========================================================
``ring``               balanced multiport Ring: ``d`` edge-disjoint Hamiltonian
                       cycles, each run both ways (Patarasuk & Yuan 2009)
``bucket``             balanced multiport Bucket: ring reduce-scatter/allgather
                       along the coordinate rings (Jain & Sabharwal 2010;
                       Sack & Gropp 2015)
``swing-l``            Swing, latency-optimal (De Sensi et al., NSDI 2024)
``swing-b``            Swing, bandwidth-optimal
``trivance-l``         Trivance, latency-optimal (Juerss, Addanki, Schmid 2026)
``trivance-b``         Trivance, bandwidth-optimal
``recursive-doubling`` recursive doubling (Rabenseifner 2004, Thakur et al. 2005)
``halving-doubling``   Rabenseifner's recursive halving reduce-scatter + doubling
                       allgather
=====================  ==========================================================

Examples
--------
>>> from synth.torus import parse_torus
>>> from synth.check import execute
>>> b = build_baseline("bucket", parse_torus("4x4"))
>>> execute(b.schedule)
[]
>>> m = b.measure()
>>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
(12, '1', '1', '1')
>>> sorted(BASELINES)[:3]
['bucket', 'halving-doubling', 'recursive-doubling']
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from synth.errors import ScheduleError, TopologyError
from synth.schedule import Schedule, chunk_elements

__all__ = ["Baseline", "BASELINES", "SUPPORTED", "build_baseline"]


@dataclass(frozen=True, eq=False)
class Baseline:
    """A baseline's explicit schedule and how to size its chunks.

    Attributes
    ----------
    schedule : Schedule
        Every transmission of every chunk.
    weights : numpy.ndarray
        int64 relative size of each chunk (one entry per chunk); cut a vector of
        ``N`` elements with :func:`synth.schedule.chunk_elements`.
    name : str
        The registry name (``"swing-b"``, ...).
    notes : str
        How the schedule was built on this shape (families, shrinking, ...).

    Examples
    --------
    >>> from synth.torus import parse_torus
    >>> b = build_baseline("swing-l", parse_torus("4x4"))
    >>> b.n_chunks, b.weights.tolist(), b.chunk_sizes(8).tolist()
    (4, [1, 1, 1, 1], [2, 2, 2, 2])
    """

    schedule: Schedule
    weights: np.ndarray
    name: str
    notes: str = field(default="")

    def __post_init__(self):
        w = np.ascontiguousarray(self.weights, dtype=np.int64).ravel()
        if w.size != self.schedule.n_chunks or np.any(w < 1):
            raise ScheduleError(
                f"a baseline needs one positive weight per chunk ({w.size} for {self.schedule.n_chunks})")
        object.__setattr__(self, "weights", w)

    @property
    def n_chunks(self) -> int:
        """Number of chunks."""
        return int(self.schedule.n_chunks)

    @property
    def topology(self):
        """The topology the schedule runs on."""
        return self.schedule.topology

    def chunk_sizes(self, elements: int | None = None) -> np.ndarray:
        """Elements per chunk for ``elements`` per node (default: one per unit of weight).

        >>> from synth.torus import parse_torus
        >>> build_baseline("ring", parse_torus("3")).chunk_sizes().tolist()
        [1, 1, 1, 1, 1, 1]
        """
        return chunk_elements(self.weights, int(self.weights.sum()) if elements is None else int(elements))

    def measure(self, elements: int | None = None):
        """:func:`synth.check.measure_explicit` of the schedule for ``elements`` per node.

        The default, one element per unit of weight, makes every chunk exactly
        proportional to its weight, so the measured fractions are the exact
        closed forms.

        >>> from synth.torus import parse_torus
        >>> m = build_baseline("ring", parse_torus("3x3")).measure()
        >>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
        (16, '1', '1', '1')
        """
        from synth.check import measure_explicit

        return measure_explicit(self.schedule, self.chunk_sizes(elements))

    def write(self, path, elements: int | None = None, claims: bool = True) -> None:
        """Write the explicit file (:mod:`synth.explicit`) that ``synth check`` verifies.

        With ``claims`` the header carries what the checker measured here
        (rounds, volumes, ``psi``, ``theta``, ``omega``, ...), which ``synth check``
        re-derives and compares.

        >>> import os, tempfile
        >>> from synth.torus import parse_torus
        >>> from synth.certify import check_file
        >>> path = os.path.join(tempfile.mkdtemp(), "swing.jsonl")
        >>> build_baseline("swing-l", parse_torus("4x4")).write(path)
        >>> report = check_file(path)
        >>> report.valid, report.claims["psi"]
        (True, ('32/15', '32/15', True))
        """
        from synth.explicit import write_explicit

        made = self.measure(elements).to_json() if claims else None
        write_explicit(self.schedule, self.chunk_sizes(elements), path, claims=made)


def _registry():
    from synth.baselines import bucket, doubling, ring, swing, trivance

    return {
        "ring": (ring.ring, ring.SUPPORTED),
        "bucket": (bucket.bucket, bucket.SUPPORTED),
        "swing-l": (swing.swing_l, swing.SUPPORTED),
        "swing-b": (swing.swing_b, swing.SUPPORTED),
        "trivance-l": (trivance.trivance_l, trivance.SUPPORTED),
        "trivance-b": (trivance.trivance_b, trivance.SUPPORTED),
        "recursive-doubling": (doubling.recursive_doubling, doubling.SUPPORTED),
        "halving-doubling": (doubling.halving_doubling, doubling.SUPPORTED),
    }


_REG = _registry()
#: name -> builder ``f(topology) -> Baseline``
BASELINES = {name: f for name, (f, _) in _REG.items()}
#: name -> one line saying which shapes the algorithm supports
SUPPORTED = {name: s for name, (_, s) in _REG.items()}


def build_baseline(name: str, topology) -> Baseline:
    """Build the named baseline's explicit schedule on ``topology``.

    Parameters
    ----------
    name : str
        One of :data:`BASELINES`.
    topology : Topology
        A :class:`~synth.torus.Torus` (every baseline) or, for the doubling
        families, any topology with compute nodes.

    Raises
    ------
    TopologyError
        For an unknown name, or a shape the algorithm is not defined on (the
        message says which shapes it supports).

    Examples
    --------
    >>> from synth.torus import parse_torus
    >>> b = build_baseline("trivance-l", parse_torus("9x9"))
    >>> b.name, b.schedule.n_rounds
    ('trivance-l', 4)
    >>> build_baseline("tree", parse_torus("4x4"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    synth.errors.TopologyError: unknown baseline 'tree'; valid: bucket, halving-doubling, ..., trivance-l
    """
    if name not in BASELINES:
        raise TopologyError(f"unknown baseline {name!r}; valid: {', '.join(sorted(BASELINES))}")
    return BASELINES[name](topology)
