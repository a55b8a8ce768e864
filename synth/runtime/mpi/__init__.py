"""``synth run``: execute a schedule under MPI (mpi4py), check it and time it next to ``MPI_Allreduce``.

* :mod:`~synth.runtime.mpi.ranks`: every rank's plan, precomputed in the parent;
* :mod:`~synth.runtime.mpi.launch`: :func:`run_schedule` writes the plans and launches ``mpiexec``
  on the per-rank program :mod:`~synth.runtime.mpi._worker` (a file that imports no synth);
* :mod:`~synth.runtime.mpi.simulate`: :func:`simulate_run`, the same plans in one process.

This face keeps ``from synth.runtime.mpi import run_schedule`` (the old module path) working.
"""

from synth.runtime.mpi.launch import INSTALL_HINT, MODES, WORKER, MpiRunOptions, Prepared, RunReport, find_mpiexec, \
    parse_size, prepare_run, run_schedule
from synth.runtime.mpi.ranks import DTYPES, rank_plans
from synth.runtime.mpi.simulate import simulate_run

__all__ = ["RunReport", "Prepared", "MpiRunOptions", "run_schedule", "prepare_run", "rank_plans", "simulate_run",
           "parse_size", "find_mpiexec", "DTYPES", "MODES", "INSTALL_HINT", "WORKER"]
