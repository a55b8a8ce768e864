"""The LP/MIP back-ends, with no problem knowledge: one linear model, the solvers it compiles to, their results.

* :mod:`~synth.models.backends.linear`: :class:`~synth.models.backends.linear.LinearModel`, columns and
  row blocks as arrays;
* :mod:`~synth.models.backends.solvers`: its translations into HiGHS, CP-SAT and SCIP;
* :mod:`~synth.models.backends.result`: one ``Status``, ``MipSolution``, ``Incumbent`` and ``Best``;
* :mod:`~synth.models.backends.lagrangian`: Lagrangian bounds from any duals;
* :mod:`~synth.models.backends.interrupt`: stopping a solver running in C on Ctrl-C or SIGTERM.
"""
