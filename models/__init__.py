"""Optimization models: k-hop trees, exchange forests, balanced families, packed trees.

This folder is installed as ``synth.models`` (``package-dir`` in pyproject.toml), so the
import path ``synth.models.khop`` is the file ``models/khop/__init__.py``, and
``import synth.models`` needs an install (``pip install -e .``): a bare source checkout
has no ``synth/models``.

Layout, bottom-up:

* ``backends/`` -- the LP/MIP back-ends, with no problem knowledge: one
  :class:`~synth.models.backends.linear.LinearModel` for HiGHS, CP-SAT and SCIP, one
  :class:`~synth.models.backends.result.MipSolution`, ``Status``, ``Incumbent`` and ``Best``
  (what a pipeline has found so far), Lagrangian bounds;
* ``forest/`` -- depth-bounded forests on a root set (a k-hop tree: ``{0}``; an exchange
  forest: ``{0, b}``): distances and hop arcs, the label search, the exact subset DP, cuts
  of the layered graph;
* ``khop/`` -- :func:`~synth.models.khop.solve_khop` (public API) and its model, LP, bounds,
  searches and pipeline;
* ``xhop/`` -- :func:`~synth.models.xhop.solve_xhop` and its model, search, pipeline;
* ``balance/`` -- balanced families of trees and forests (``balance.family``: k-hop families);
* ``packing/`` -- schedules for graphs symmetry cannot balance: trees packed by an LP (layered,
  timed, routed, depth-bounded), then made integer.

The names below load their module on first use (``from synth.models import solve_khop``),
so importing this package loads no solver.  The checker (:mod:`synth.check`) never imports
this package.

Examples
--------
>>> import synth.models as models
>>> models.SOLVERS[0], callable(models.solve_khop)
('auto', True)
"""

import importlib

__all__ = ["solve_khop", "KHopResult", "SOLVERS", "SOLVER_REVISION", "solve_xhop", "XHopResult",
           "exchange_depth_threshold"]

_HOMES = {
    "solve_khop": "synth.models.khop",
    "KHopResult": "synth.models.khop",
    "SOLVER_REVISION": "synth.models.khop",
    "SOLVERS": "synth.models._names",
    "solve_xhop": "synth.models.xhop",
    "XHopResult": "synth.models.xhop",
    "exchange_depth_threshold": "synth.models.xhop",
}


def __getattr__(name):
    # lazy re-exports: ``import synth.models`` stays free of numpy-heavy modules and solvers
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
