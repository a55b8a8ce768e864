"""Run a schedule inside ``jax.shard_map``: one traced program, ``jax.lax.ppermute`` per permutation.

:func:`psum_fn` is a drop-in for ``jax.lax.psum(x, axis_name)`` inside a ``shard_map`` (or any
code that runs per device over a mesh axis of ``p`` devices, device ``r`` the schedule's compute
vertex ``r``); :func:`allreduce_fn` wraps it in a ``shard_map`` over one axis of a mesh, for a
global array whose rows are the devices' vectors.  Both are plain functions of arrays, usable
inside ``jax.jit``.  A reduce-scatter schedule runs as :func:`psum_scatter_fn` (the drop-in for
``jax.lax.psum_scatter(x, axis_name, tiled=True)``) or :func:`reduce_scatter_fn`, an allgather
schedule as :func:`all_gather_fn` (``jax.lax.all_gather(x, axis_name, tiled=True)``) or
:func:`allgather_fn`; :func:`collective_fn` picks the ``shard_map`` by the schedule's collective.
Each function refuses a schedule of another collective.

Blocks (:mod:`synth.runtime.jax.tables`): device ``r``'s block is the ``r``-th ``p``-th of the
vector.  A reduce-scatter's device holds the whole input (its rows are the ``p`` blocks, each
padded to ``R`` rows) and returns its own ``R`` rows, cut back to the block; an allgather's
device starts from its own block at rows ``rR ..``, zeros elsewhere, and returns every block.

Each device views its vector as the rows of :mod:`synth.runtime.jax.tables`.  A round gathers
every row the device sends (values at the start of the round), runs the round's ppermutes, and
scatters what arrived: ``add`` for reduce, ``set`` for copy (docs/spec.md §1).  The device picks its
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

Its reduce-scatter half: each device ends with its own third, as ``psum_scatter(..., tiled=True)``.

>>> from synth.baselines.halves import baseline_half
>>> rs = baseline_half(ring, "reduce-scatter")
>>> jax.eval_shape(reduce_scatter_fn(rs, mesh, "x"), jax.ShapeDtypeStruct((3, 6), np.int32)).shape
(3, 2)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from synth.errors import OptionError
from synth.runtime.jax.tables import JaxTables, build_tables

__all__ = ["psum_fn", "psum_scatter_fn", "all_gather_fn", "allreduce_fn", "reduce_scatter_fn", "allgather_fn",
           "collective_fn", "allreduce_rows", "reduce_scatter_rows", "allgather_rows"]

#: the JAX primitive each collective stands in for, and this module's drop-in for it
DROP_INS = {"allreduce": ("jax.lax.psum", "psum_fn"),
            "reduce-scatter": ("jax.lax.psum_scatter(..., tiled=True)", "psum_scatter_fn"),
            "allgather": ("jax.lax.all_gather(..., tiled=True)", "all_gather_fn")}


def _run_rounds(state, tables: JaxTables, me, axis_name):
    """Every round of the tables on one device's ``(W + 1, u)`` rows (row ``W`` the trash row)."""
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
    return state


def _expect(tables: JaxTables, collective: str) -> None:
    if tables.collective != collective:
        primitive, name = DROP_INS[tables.collective]
        raise OptionError(f"source is a {tables.collective} schedule ({tables.label}), not an {collective}: run it "
                          f"with {name}, the drop-in for {primitive}")


def allreduce_rows(vec, tables: JaxTables, axis_name):
    """The allreduce of one flat per-device vector ``vec`` over ``axis_name`` (inside a shard_map)."""
    n = int(vec.shape[0])
    if n == 0:
        return vec
    W = tables.n_rows
    u = tables.row_length(n)
    state = jnp.concatenate([vec, jnp.zeros((W + 1) * u - n, vec.dtype)]).reshape(W + 1, u)
    state = _run_rounds(state, tables, jax.lax.axis_index(axis_name), axis_name)
    return state.reshape(-1)[:n]


def _blocks(tables: JaxTables, b: int):
    """``(p, R, u)``: devices, rows per block and elements per row for blocks of ``b`` elements."""
    return tables.n_devices, tables.block_rows, tables.row_length(b * tables.n_devices)


def reduce_scatter_rows(vec, tables: JaxTables, axis_name):
    """The reduce-scatter of one flat per-device vector of ``p*b`` elements: this device's block, ``b`` sums."""
    p, R, u = _blocks(tables, int(vec.shape[0]) // tables.n_devices)
    b = int(vec.shape[0]) // p
    if b == 0:
        return vec[:0]
    blocks = jnp.pad(vec.reshape(p, b), ((0, 0), (0, R * u - b))).reshape(p * R, u)
    state = jnp.concatenate([blocks, jnp.zeros((1, u), vec.dtype)])
    me = jax.lax.axis_index(axis_name)
    state = _run_rounds(state, tables, me, axis_name)
    return jax.lax.dynamic_slice_in_dim(state, me * R, R).reshape(-1)[:b]


def allgather_rows(vec, tables: JaxTables, axis_name):
    """The allgather of one flat per-device block of ``b`` elements: every device's block, ``p*b`` elements."""
    b = int(vec.shape[0])
    p, R, u = _blocks(tables, b)
    if b == 0:
        return jnp.zeros(0, vec.dtype)
    mine = jnp.pad(vec, (0, R * u - b)).reshape(R, u)
    me = jax.lax.axis_index(axis_name)
    state = jax.lax.dynamic_update_slice_in_dim(jnp.zeros((p * R + 1, u), vec.dtype), mine, me * R, 0)
    state = _run_rounds(state, tables, me, axis_name)
    return state[:p * R].reshape(p, R * u)[:, :b].reshape(-1)


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
        When the schedule is not an allreduce; at trace time, when the axis does not have ``p``
        devices or a leaf is not numeric.
    """
    tables = build_tables(source)
    _expect(tables, "allreduce")

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


def _by_dtype(leaves):
    """Leaf indices grouped by dtype (one run of the schedule per dtype); refuses non-numeric leaves."""
    groups: dict = {}
    for i, leaf in enumerate(leaves):
        if not jnp.issubdtype(leaf.dtype, jnp.number):
            raise OptionError(f"x must hold numbers, not {leaf.dtype}")
        if leaf.ndim == 0:
            raise OptionError("x must have at least one dimension: its leading axis holds the blocks")
        groups.setdefault(leaf.dtype, []).append(i)
    return groups.items()


def _leafwise(tables, axis_name, x, run_group):
    """``x`` (a pytree) with the leaves of each dtype replaced by ``run_group(leaves)``: one run per dtype."""
    _check_axis(tables, axis_name)
    leaves, treedef = jax.tree.flatten(x)
    leaves = [jnp.asarray(leaf) for leaf in leaves]
    out = list(leaves)
    for _, idx in _by_dtype(leaves):
        for i, result in zip(idx, run_group([leaves[i] for i in idx])):
            out[i] = result
    return jax.tree.unflatten(treedef, out)


def psum_scatter_fn(source, axis_name):
    """A function that runs a reduce-scatter schedule: ``jax.lax.psum_scatter(x, axis_name, tiled=True)``'s drop-in.

    Parameters
    ----------
    source
        A reduce-scatter schedule, as for :func:`psum_fn`.
    axis_name : hashable
        The mesh axis of ``p`` devices, device ``r`` the schedule's compute vertex ``r``.

    Returns
    -------
    callable
        ``f(x)`` for an array or a pytree of arrays whose leading axis is a multiple of ``p``: device
        ``r`` gets, of every leaf, the sum over devices of the ``r``-th ``p``-th of that axis (shape
        ``(n / p, ...)``, as ``psum_scatter`` with ``scatter_dimension=0, tiled=True``).  The leaves
        of one dtype travel together, in one run of the schedule.

    Raises
    ------
    OptionError
        When the schedule is not a reduce-scatter; at trace time, when the axis does not have ``p``
        devices, a leaf is not numeric or its leading axis does not split into ``p`` blocks.
    """
    tables = build_tables(source)
    _expect(tables, "reduce-scatter")
    p = tables.n_devices

    def scatter_group(leaves):
        for leaf in leaves:
            if leaf.shape[0] % p:
                raise OptionError(f"x: a leading axis of {leaf.shape[0]} does not split into the {p} devices' blocks")
        # device r's block of the run: the r-th p-th of every leaf, one after the other
        parts = [leaf.reshape(p, -1) for leaf in leaves]
        mine = reduce_scatter_rows(jnp.concatenate(parts, axis=1).reshape(-1), tables, axis_name)
        cuts = np.cumsum([part.shape[1] for part in parts])[:-1].tolist()
        return [piece.reshape((leaf.shape[0] // p,) + leaf.shape[1:])
                for piece, leaf in zip(jnp.split(mine, cuts), leaves)]

    def psum_scatter(x):
        return _leafwise(tables, axis_name, x, scatter_group)

    return psum_scatter


def all_gather_fn(source, axis_name):
    """A function that runs an allgather schedule: ``jax.lax.all_gather(x, axis_name, tiled=True)``'s drop-in.

    Parameters
    ----------
    source
        An allgather schedule, as for :func:`psum_fn`.
    axis_name : hashable
        The mesh axis of ``p`` devices, device ``r`` the schedule's compute vertex ``r``.

    Returns
    -------
    callable
        ``f(x)`` for an array or a pytree of arrays (at least one dimension each): every device gets,
        of every leaf, the devices' leaves concatenated along the leading axis in device order
        (shape ``(p * n, ...)``, as ``all_gather`` with ``axis=0, tiled=True``).  The leaves of one
        dtype travel together, in one run of the schedule.

    Raises
    ------
    OptionError
        When the schedule is not an allgather; at trace time, when the axis does not have ``p``
        devices, or a leaf is not numeric or has no dimension.
    """
    tables = build_tables(source)
    _expect(tables, "allgather")
    p = tables.n_devices

    def gather_group(leaves):
        flat = [leaf.reshape(-1) for leaf in leaves]
        every = allgather_rows(jnp.concatenate(flat), tables, axis_name).reshape(p, -1)
        cuts = np.cumsum([part.size for part in flat])[:-1].tolist()
        return [piece.reshape((p * leaf.shape[0],) + leaf.shape[1:])
                for piece, leaf in zip(jnp.split(every, cuts, axis=1), leaves)]

    def all_gather(x):
        return _leafwise(tables, axis_name, x, gather_group)

    return all_gather


def _mesh_tables(source, mesh, axis_name) -> JaxTables:
    """The tables of ``source``, checked against the mesh axis that is to run them."""
    tables = build_tables(source)
    names = tuple(mesh.axis_names)
    if axis_name not in names:
        raise OptionError(f"axis_name {axis_name!r} is not an axis of the mesh (axes: {', '.join(map(str, names))})")
    size = int(mesh.shape[axis_name])
    if size != tables.n_devices:
        raise OptionError(f"axis_name {axis_name!r} has {size} devices; the schedule ({tables.label}) needs "
                          f"{tables.n_devices}")
    return tables


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
        When the mesh has no such axis or its size is not ``p``, or the schedule is not an allreduce.
    """
    inner = psum_fn(_mesh_tables(source, mesh, axis_name), axis_name)
    spec = jax.P(axis_name)
    return jax.shard_map(lambda block: inner(block), mesh=mesh, in_specs=spec, out_specs=spec)


def reduce_scatter_fn(source, mesh, axis_name):
    """The reduce-scatter of a global array over one mesh axis, as a ``shard_map`` of :func:`psum_scatter_fn`.

    Parameters
    ----------
    source, mesh, axis_name
        As for :func:`allreduce_fn`; the schedule a reduce-scatter.

    Returns
    -------
    callable
        ``g(x)`` for an array of shape ``(p, n, ...)``, ``n`` a multiple of ``p`` (row ``r`` device
        ``r``'s input): shape ``(p, n / p, ...)``, row ``r`` the sum over rows of the ``r``-th
        ``p``-th of axis 1 (device ``r``'s block), sharded over the axis.

    Raises
    ------
    OptionError
        As for :func:`allreduce_fn`, or when the schedule is not a reduce-scatter.
    """
    inner = psum_scatter_fn(_mesh_tables(source, mesh, axis_name), axis_name)
    spec = jax.P(axis_name)
    return jax.shard_map(lambda block: inner(block[0])[None], mesh=mesh, in_specs=spec, out_specs=spec)


def allgather_fn(source, mesh, axis_name):
    """The allgather of a global array over one mesh axis, as a ``shard_map`` of :func:`all_gather_fn`.

    Parameters
    ----------
    source, mesh, axis_name
        As for :func:`allreduce_fn`; the schedule an allgather.

    Returns
    -------
    callable
        ``g(x)`` for an array of shape ``(p, b, ...)`` (row ``r`` device ``r``'s block): shape
        ``(p, p * b, ...)``, every row the blocks concatenated in device order, sharded over the axis.

    Raises
    ------
    OptionError
        As for :func:`allreduce_fn`, or when the schedule is not an allgather.
    """
    inner = all_gather_fn(_mesh_tables(source, mesh, axis_name), axis_name)
    spec = jax.P(axis_name)
    return jax.shard_map(lambda block: inner(block[0])[None], mesh=mesh, in_specs=spec, out_specs=spec)


def collective_fn(source, mesh, axis_name):
    """:func:`allreduce_fn`, :func:`reduce_scatter_fn` or :func:`allgather_fn`, by the schedule's collective."""
    tables = build_tables(source)
    make = {"allreduce": allreduce_fn, "reduce-scatter": reduce_scatter_fn, "allgather": allgather_fn}
    return make[tables.collective](tables, mesh, axis_name)
