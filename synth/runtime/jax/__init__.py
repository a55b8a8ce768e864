"""Run synth schedules under JAX: ``jax.lax.ppermute`` inside ``jax.shard_map``, a drop-in for ``psum``.

* :mod:`~synth.runtime.jax.tables`: the static index tables (numpy; no JAX needed);
* :mod:`~synth.runtime.jax.executor`: :func:`psum_fn` (inside a ``shard_map``) and :func:`allreduce_fn`
  (a ``shard_map`` over one mesh axis); for reduce-scatter and allgather schedules
  :func:`psum_scatter_fn` / :func:`reduce_scatter_fn` and :func:`all_gather_fn` / :func:`allgather_fn`;
* :mod:`~synth.runtime.jax.devices`: emulated host devices, and the device order of a torus of TPUs
  from their physical coordinates (:func:`torus_device_order`, :func:`torus_mesh`);
* :mod:`~synth.runtime.jax.run`: ``synth run --engine jax`` (:func:`run_jax`).

Importing this package does not import JAX (the optional extra ``pip install -e '.[jax]'``): the
names of the executor load it when first used, so ``import synth`` and the CLI start without it.
"""

from synth.runtime.jax.tables import JaxTables, RoundTables, build_tables, split_permutations

__all__ = ["JaxTables", "RoundTables", "build_tables", "split_permutations", "psum_fn", "allreduce_fn",
           "psum_scatter_fn", "all_gather_fn", "reduce_scatter_fn", "allgather_fn", "collective_fn",
           "torus_device_order", "torus_mesh", "run_jax"]

#: names resolved on first use, from the module that holds them (each may import JAX)
_LAZY = {"psum_fn": "executor", "allreduce_fn": "executor", "allreduce_rows": "executor",
         "psum_scatter_fn": "executor", "all_gather_fn": "executor", "reduce_scatter_fn": "executor",
         "allgather_fn": "executor", "collective_fn": "executor",
         "torus_device_order": "devices", "torus_mesh": "devices", "run_jax": "run", "JaxRunReport": "run"}


def __getattr__(name):
    if name in _LAZY:
        import importlib  # lazy: the executor imports JAX, an optional dependency

        return getattr(importlib.import_module(f"synth.runtime.jax.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'synth.runtime.jax' has no attribute {name!r}")
