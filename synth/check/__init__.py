"""The checker: re-executes schedules and re-derives their metrics, bounds and claims.

It never imports the optimization models (:mod:`synth.models`), a solver package, or
the solve stage (``tests/test_isolation.py`` checks it in a fresh interpreter).  Two modes:

* **explicit**: every transmission of every chunk is executed on exact
  integers (:func:`execute`) and every link load is counted
  (:func:`measure_explicit`);
* **symmetric**: each component of the base schedule is executed as a
  one-chunk allreduce, the group is verified (:mod:`synth.symmetry.group`: generators
  are automorphisms, the action on links is free) and the lifted loads follow
  from the base schedule's per-orbit incidences (:func:`measure_symmetric`).

Modules, bottom-up: :mod:`~synth.check.execution` (:func:`execute`), :mod:`~synth.check.metrics`
(:class:`Metrics`, the measurements, the round lower bound), :mod:`~synth.check.bounds` (k-hop
weight bounds re-derived from a stored dual), :mod:`~synth.check.certificate` and
:mod:`~synth.check.explicit` (the two file formats), :mod:`~synth.check.claims` (:func:`certify`
makes claims with the checker, :func:`check_file` checks a file against its claims).

Examples
--------
>>> import synth
>>> t = synth.parse_torus("4x4"); g = synth.torus_gamma(t); b = synth.sp_allreduce(t)
>>> execute(synth.lift(b, g))
[]
>>> report = check_certificate(certify(b, g))
>>> report.valid, report.mode, report.metrics.rounds, report.round_lower_bound
(True, 'explicit', 8, 7)
"""

from synth.check.bounds import DualBound, khop_dual_bound
from synth.check.certificate import Certificate, read_certificate, write_certificate
from synth.check.claims import Report, certify, check_certificate, check_explicit, check_file, file_kind
from synth.check.execution import execute
from synth.check.explicit import read_explicit, write_explicit
from synth.check.eccentricity import round_lower_bound
from synth.check.metrics import Metrics, measure_explicit, measure_symmetric

__all__ = ["Metrics", "execute", "measure_explicit", "measure_symmetric", "round_lower_bound", "DualBound",
           "khop_dual_bound", "Certificate", "read_certificate", "write_certificate", "Report", "certify",
           "check_certificate", "check_explicit", "check_file", "file_kind", "read_explicit", "write_explicit"]
