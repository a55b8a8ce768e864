"""The names of the k-hop solvers: one home, importable without importing any solver.

:mod:`synth.models.khop` dispatches on these names; the CLI offers them as ``--solver`` choices
without loading OR-Tools, HiGHS or SCIP.

* ``auto``: LP bound, branch-and-cut in SCIP and window LNS (CP-SAT when pyscipopt is missing);
* ``scip``: the same, SCIP only;
* ``highs``, ``cpsat``: the same with a HiGHS or CP-SAT MIP;
* ``heuristic``: local search and the LP bound only.

Examples
--------
>>> SOLVERS[0]
'auto'
"""

__all__ = ["SOLVERS"]

SOLVERS = ("auto", "scip", "highs", "cpsat", "heuristic")
