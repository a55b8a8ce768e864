"""Run schedules on real engines and export them to GPU runtimes.

* :mod:`synth.runtime.plan`: packed messages and the chunk layout (shared);
* :mod:`synth.runtime.report`: the fields every engine's run report shares;
* :mod:`synth.runtime.mpi`: ``synth run``, MPI point-to-point through mpi4py
  (ranks, launch, simulate; the per-rank program is :mod:`synth.runtime.mpi._worker`);
* :mod:`synth.runtime.jax`: ``synth run --engine jax``, ``jax.lax.ppermute`` inside ``jax.shard_map``
  (a drop-in for ``psum``; tables, executor, devices, run; JAX is imported only when used);
* :mod:`synth.runtime.msccl`: ``synth export --format msccl-xml`` (:mod:`~synth.runtime.msccl.export`)
  and, apart from it, a validator and an interpreter for MSCCL XML (:mod:`synth.runtime.msccl.check`);
* :mod:`synth.runtime.explicit_export`: a certificate lifted to an explicit file, or an explicit file
  re-emitted with another element count;
* :mod:`synth.runtime.formats`: the export formats, one registry (``synth export --format``).

The commands themselves live in :mod:`synth.cli.run` and :mod:`synth.cli.export`.
Nothing here imports mpi4py at import time: the MPI extra is only needed to run.
"""
