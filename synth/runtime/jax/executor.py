"""Run a schedule inside ``jax.shard_map``: one traced program, ``jax.lax.ppermute`` per permutation.

:func:`psum_fn` is a drop-in for ``jax.lax.psum(x, axis_name)`` inside a ``shard_map`` (or any
code that runs per device over a mesh axis of ``p`` devices, device ``r`` the schedule's compute
vertex ``r``); :func:`allreduce_fn` wraps it in a ``shard_map`` over one axis of a mesh, for a
global array whose rows are the devices' vectors.  Both are plain functions of arrays, usable
inside ``jax.jit``.

Each device views its vector as the rows of :mod:`synth.runtime.jax.tables`.  A round gathers
every row the device sends (values at the start of the round), runs the round's ppermutes, and
scatters what arrived: ``add`` for reduce, ``set`` for copy (SPEC section 1).  The device picks its
own row of each table with ``jax.lax.axis_index``, so the program is the same on every device
and its size is that of the tables: rounds x permutations, independent of the vector's length.

The result is the exact allreduce on every device, but JAX cannot know that it is the same on
every device: inside a ``shard_map`` with ``check_vma=True`` it is typed as varying over the
axis (where ``psum``'s is invariant), so an ``out_specs`` that leaves the axis out needs
``check_vma=False``.

Examples
--------
Traced on an abstract mesh (no device needed): the ring on 3 vertices runs both ways round, 4 rounds
of two ppermutes each.

>>> import jax, numpy as np
>>> from synth.baselines import build_baseline
>>> from synth.topology.torus import parse_torus
>>> ring = build_baseline("ring", parse_torus("3"))
>>> mesh = jax.sharding.AbstractMesh((3,), ("x",))
>>> jaxpr = jax.make_jaxpr(allreduce_fn(ring, mesh, "x"))(jax.ShapeDtypeStruct((3, 4), np.int32))
>>> str(jaxpr).count("ppermute")
8
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from synth.errors import OptionError
from synth.runtime.jax.tables import JaxTables, build_tables

__all__ = ["psum_fn", "allreduce_fn", "allreduce_rows"]


def allreduce_rows(vec, tables: JaxTables, axis_name):
    """The allreduce of one flat per-device vector ``vec`` over ``axis_name`` (inside a shard_map)."""
    n = int(vec.shape[0])
    if n == 0:
        return vec
    W = tables.n_rows
    u = tables.row_length(n)
    state = jnp.concatenate([vec, jnp.zeros((W + 1) * u - n, vec.dtype)]).reshape(W + 1, u)
    me = jax.lax.axis_index(axis_name)
    # the tables hold rows 0..W by construction: no bounds handling in the gathers and scatters
    inside = "promise_in_bounds"
    for rt in tables.rounds:
        # every row sent this round, as it was at the start of the round
        rows = state.at[jnp.asarray(rt.send)[me]].get(mode=inside)
        got = [jax.lax.ppermute(rows[off:off + length], axis_name, perm=list(pairs))
               for pairs, off, length in rt.perms]
        got = got[0] if len(got) == 1 else jnp.concatenate(got)
        if rt.add is not None:
            state = state.at[jnp.asarray(rt.add)[me]].add(got, mode=inside)
        if rt.put is not None:
            state = state.at[jnp.asarray(rt.put)[me]].set(got, mode=inside)
    return state.reshape(-1)[:n]


def _check_axis(tables, axis_name):
    size = jax.lax.axis_size(axis_name)
    if size != tables.n_devices:
        raise OptionError(f"axis_name {axis_name!r} has {size} devices; the schedule ({tables.label}) needs "
                          f"{tables.n_devices}")


def psum_fn(source, axis_name):
    """A function that sums its argument over ``axis_name`` by running the schedule: ``psum``'s drop-in.

    Parameters
    ----------
    source
        A certificate or explicit file path, a certificate, a baseline, a schedule
        (anything :func:`~synth.runtime.plan.load_schedule` takes) or prebuilt
        :class:`~synth.runtime.jax.tables.JaxTables`.  The tables are built here, once.
    axis_name : hashable
        The mesh axis of ``p`` devices, device ``r`` at index ``r`` the schedule's compute vertex ``r``.

    Returns
    -------
    callable
        ``f(x)`` for an array or a pytree of arrays (any shapes; numeric dtypes): the leaves of one
        dtype are flattened into one vector and summed by one run of the schedule.  Call it where
        ``jax.lax.psum(x, axis_name)`` would be called (inside ``shard_map``).

    Raises
    ------
    OptionError
        At trace time, when the axis does not have ``p`` devices or a leaf is not numeric.
    """
    tables = build_tables(source)

    def psum(x):
        _check_axis(tables, axis_name)
        leaves, treedef = jax.tree.flatten(x)
        leaves = [jnp.asarray(leaf) for leaf in leaves]
        out = list(leaves)
        by_dtype: dict = {}
        for i, leaf in enumerate(leaves):
            if not (jnp.issubdtype(leaf.dtype, jnp.number)):
                raise OptionError(f"x must hold numbers, not {leaf.dtype}")
            by_dtype.setdefault(leaf.dtype, []).append(i)
        for dtype, idx in by_dtype.items():
            flat = [leaves[i].reshape(-1) for i in idx]
            summed = allreduce_rows(flat[0] if len(flat) == 1 else jnp.concatenate(flat), tables, axis_name)
            at = 0
            for i in idx:
                out[i] = summed[at:at + leaves[i].size].reshape(leaves[i].shape)
                at += leaves[i].size
        return jax.tree.unflatten(treedef, out)

    return psum


def allreduce_fn(source, mesh, axis_name):
    """The allreduce of a global array over one mesh axis, as a ``shard_map`` of :func:`psum_fn`.

    Parameters
    ----------
    source
        As for :func:`psum_fn`.
    mesh : jax.sharding.Mesh
        Its axis ``axis_name`` has ``p`` devices in the schedule's vertex order (on a torus of
        TPUs, build it with :func:`synth.runtime.jax.devices.torus_mesh`).
    axis_name : str

    Returns
    -------
    callable
        ``g(x)`` for an array of shape ``(p, ...)`` (row ``r`` is device ``r``'s input, the array
        sharded or not): the same shape with every row the sum of the rows, sharded over the axis.

    Raises
    ------
    OptionError
        When the mesh has no such axis or its size is not ``p``.
    """
    tables = build_tables(source)
    names = tuple(mesh.axis_names)
    if axis_name not in names:
        raise OptionError(f"axis_name {axis_name!r} is not an axis of the mesh (axes: {', '.join(map(str, names))})")
    size = int(mesh.shape[axis_name])
    if size != tables.n_devices:
        raise OptionError(f"axis_name {axis_name!r} has {size} devices; the schedule ({tables.label}) needs "
                          f"{tables.n_devices}")
    inner = psum_fn(tables, axis_name)
    spec = jax.P(axis_name)
    return jax.shard_map(lambda block: inner(block), mesh=mesh, in_specs=spec, out_specs=spec)
