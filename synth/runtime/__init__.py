"""Run schedules on real engines and export them to GPU runtimes.

* :mod:`synth.runtime.plan`: packed messages and the chunk layout (shared);
* :mod:`synth.runtime.mpi`: ``synth run``, MPI point-to-point through mpi4py
  (the per-rank program is :mod:`synth.runtime._mpi_worker`);
* :mod:`synth.runtime.msccl`: ``synth export --format msccl-xml``;
* :mod:`synth.runtime.msccl_check`: a validator and an interpreter for MSCCL XML;
* :mod:`synth.runtime.cli`: the command-line glue for both.

Nothing here imports mpi4py at import time: the MPI extra is only needed to run.
"""
