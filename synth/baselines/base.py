"""The :class:`Baseline` type: a baseline's explicit schedule and its chunk weights.

Every algorithm module of :mod:`synth.baselines` builds one; the registry
(:data:`synth.baselines.BASELINES`) imports those modules, and they import this one,
so the package has no import cycle.

Every builder has the same contract, written here once: it takes the
topology (a :class:`~synth.topology.torus.Torus` for the torus algorithms,
which :func:`require_torus` checks; any topology with compute nodes for the
doubling families) and returns a :class:`Baseline`; a builder's docstring
says how many chunks it cuts and how they are numbered.
:func:`synth.baselines.build_baseline` is the entry point that also routes
HyperX and spine-leaf through the torus builders.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from synth.check import measure_explicit
from synth.errors import ScheduleError, TopologyError
from synth.check.explicit import write_explicit
from synth.schedule import Schedule, chunk_elements
from synth.topology.torus import Torus

__all__ = ["Baseline", "require_torus"]


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
    >>> from synth.topology.torus import parse_torus
    >>> from synth.baselines import build_baseline
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

        >>> from synth.topology.torus import parse_torus
        >>> from synth.baselines import build_baseline
        >>> build_baseline("ring", parse_torus("3")).chunk_sizes().tolist()
        [1, 1, 1, 1, 1, 1]
        """
        return chunk_elements(self.weights, int(self.weights.sum()) if elements is None else int(elements))

    def measure(self, elements: int | None = None):
        """:func:`synth.check.measure_explicit` of the schedule for ``elements`` per node.

        The default, one element per unit of weight, makes every chunk exactly
        proportional to its weight, so the measured fractions are the exact
        closed forms.

        >>> from synth.topology.torus import parse_torus
        >>> from synth.baselines import build_baseline
        >>> m = build_baseline("ring", parse_torus("3x3")).measure()
        >>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
        (16, '1', '1', '1')
        """
        return measure_explicit(self.schedule, self.chunk_sizes(elements))

    def write(self, path, elements: int | None = None, claims: bool = True) -> None:
        """Write the explicit file (:mod:`synth.check.explicit`) that ``synth check`` verifies.

        With ``claims`` the header carries what the checker measured here
        (rounds, volumes, ``psi``, ``theta``, ``omega``, ...), which ``synth check``
        re-derives and compares.

        >>> import os, tempfile
        >>> from synth.topology.torus import parse_torus
        >>> from synth.check.claims import check_file
        >>> from synth.baselines import build_baseline
        >>> path = os.path.join(tempfile.mkdtemp(), "swing.jsonl")
        >>> build_baseline("swing-l", parse_torus("4x4")).write(path)
        >>> report = check_file(path)
        >>> report.valid, report.claims["psi"]
        (True, ('32/15', '32/15', True))
        """
        made = self.measure(elements).to_json() if claims else None
        write_explicit(self.schedule, self.chunk_sizes(elements), path, claims=made)


def require_torus(t, name: str) -> None:
    """Raise :class:`~synth.errors.TopologyError` unless ``t`` is a torus: the torus builders' precondition.

    HyperX and spine-leaf reach these builders as a torus (the registry's
    wrappers), so the message names them too.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> require_torus(parse_torus("4x4"), "bucket")
    >>> require_torus("ring of 4", "bucket")
    Traceback (most recent call last):
    ...
    synth.errors.TopologyError: bucket is defined on tori (any shape), HyperX and spine-leaf, not on 'ring of 4'
    """
    if not isinstance(t, Torus):
        raise TopologyError(f"{name} is defined on tori (any shape), HyperX and spine-leaf, "
                            f"not on {getattr(t, 'name', t)!r}")
