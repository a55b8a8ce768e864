"""Analysis: what a checked schedule costs, and how the algorithms compare, under the cost model.

* :mod:`synth.analysis.cost`: the cost model of docs/spec.md §1 with hop latency
  (:class:`Network`, :func:`model_time`, :func:`goodput`, :func:`goodput_bound`),
  re-exported here;
* :mod:`synth.analysis.compare`: every algorithm (SP-allreduce, the exchange, the
  baselines) measured and costed size by size.  It is imported on its own
  (``from synth.analysis.compare import compare``): it builds on the solvers and the
  baselines, which the cost model, imported by the ``synth`` facade and the runtime,
  does not need;
* :mod:`synth.analysis.draw`: pictures of a schedule on its topology (``synth draw``), over
  matplotlib, which it imports only when it draws.

Sizes, rates and times are read by :mod:`synth.units`.

Examples
--------
>>> from synth.analysis.compare import compare
>>> from synth.topology.torus import parse_torus
>>> rows = compare(parse_torus("4x4"), [1 << 20], algorithms=["sp", "ring"])
>>> [(r.algorithm, r.best) for r in rows]
[('sp', True), ('ring', False)]
"""

from synth.analysis.cost import PAPER_SIZES, Network, goodput, goodput_bound, model_time

__all__ = ["Network", "model_time", "goodput", "goodput_bound", "PAPER_SIZES"]
