"""Which devices run the schedule, in which order: emulated host devices, and tori of TPUs by coordinates.

* :func:`host_devices` asks JAX for ``n`` CPU devices.  XLA fixes the number of host devices when
  its CPU backend starts (the first JAX operation), from the option ``jax_num_cpu_devices`` (or the
  environment variable ``JAX_NUM_CPU_DEVICES``, or the older
  ``XLA_FLAGS=--xla_force_host_platform_device_count=n``); after that it cannot change in the
  process.  So the option is set when the backend has not started, and otherwise the caller learns
  that this process cannot have ``n`` devices (``synth run`` then runs in a fresh process).
* :func:`torus_device_order` puts devices in synth's vertex order (row-major coordinates, the last
  fastest) from their physical coordinates (``device.coords`` on TPU), and refuses, saying why,
  when the coordinates do not form the torus; :func:`torus_mesh` makes the one-axis ``Mesh``;
  :func:`damaged_device_order` does the same on a slice with failed chips, leaving them out.

Examples
--------
>>> from types import SimpleNamespace as Dev
>>> devs = [Dev(id=i, coords=(i % 4, i // 4, 0)) for i in range(16)]   # x fastest, as TPUs number them
>>> [d.id for d in torus_device_order(devs, "4x4")][:6]
[0, 4, 8, 12, 1, 5]
"""

from __future__ import annotations

import math
import re

import numpy as np

from synth.errors import OptionError

__all__ = ["host_devices", "torus_device_order", "damaged_device_order", "torus_mesh", "requested_host_devices"]

_FORCE = re.compile(r"--xla_force_host_platform_device_count=(\d+)")


def requested_host_devices(environ) -> int:
    """Host devices the environment asks for: ``JAX_NUM_CPU_DEVICES``, else the XLA flag, else 0.

    >>> requested_host_devices({"XLA_FLAGS": "--xla_cpu_foo --xla_force_host_platform_device_count=8"})
    8
    """
    value = str(environ.get("JAX_NUM_CPU_DEVICES", "")).strip()
    if value.lstrip("-").isdigit() and int(value) >= 0:
        return int(value)
    found = _FORCE.findall(str(environ.get("XLA_FLAGS", "")))
    return int(found[-1]) if found else 0


def host_devices(n: int) -> list | None:
    """At least ``n`` CPU devices of this process, or None when its CPU backend started with fewer.

    Sets ``jax_num_cpu_devices`` to ``n`` when JAX's backends have not started and fewer host
    devices were asked for (a larger request, by the option or the environment, is kept).
    """
    import os

    import jax  # optional dependency (the [jax] extra)

    want = max(int(n), int(jax.config.jax_num_cpu_devices), requested_host_devices(os.environ))
    if want != jax.config.jax_num_cpu_devices:
        try:
            jax.config.update("jax_num_cpu_devices", want)
        except RuntimeError:  # the backends have started: the count is fixed in this process
            pass
    devices = jax.devices("cpu")
    return list(devices) if len(devices) >= n else None


def _shape(shape) -> tuple:
    if isinstance(getattr(shape, "shape", None), tuple):   # a Torus or LatticeTorus: its box of coordinates
        return tuple(int(s) for s in shape.shape)
    if isinstance(shape, str):
        text = shape.strip().lower()
        if not re.match(r"^\d{1,9}(x\d{1,9}){0,31}$", text):
            raise OptionError(f"shape {text[:40]!r} is not of the form NxNx... (e.g. 4x4x8)")
        shape = [int(s) for s in text.split("x")]
    out = tuple(int(s) for s in shape)
    if not out or min(out) < 1:
        raise OptionError(f"shape must be side lengths, not {shape!r}")
    return out


def torus_device_order(devices, shape, *, core_on_chip=None) -> list:
    """``devices`` in the vertex order of the torus ``shape``: entry ``v`` sits at vertex ``v``.

    Coordinates come from ``device.coords`` (TPU: ``(x, y, z)``).  Coordinate axes on which every
    device has the same value are dropped (a 2-D slice reports ``z = 0``); the others, shifted to
    start at 0, must be exactly the grid ``shape``, in the same order, each point once.  Vertex ids
    are synth's: row-major, the last coordinate fastest.  The wrap-around links cannot be seen from
    coordinates: that the slice is a torus (not a mesh without wrap-around) is the user's to know.

    Parameters
    ----------
    devices : sequence
        Objects with ``coords`` (and ``core_on_chip`` where a chip has several devices).
    shape : str, sequence of int, or topology
        ``"4x4x8"``, ``(4, 4, 8)``, or a torus, twisted torus or mesh (its ``shape``: the box of
        coordinates its vertex ids number, :mod:`synth.topology.lattice`).
    core_on_chip : int, optional
        Keep only the devices with this ``core_on_chip`` (chips with two cores, TPU v2/v3).

    Returns
    -------
    list
        ``p`` devices; make the mesh with ``jax.sharding.Mesh(np.array(order), (axis_name,))``
        (:func:`torus_mesh`).

    Raises
    ------
    OptionError
        When devices lack coordinates, their number is not ``prod(shape)``, two share a coordinate,
        or their coordinates span another box (the message says which, and the shape they do form).

    Examples
    --------
    >>> from types import SimpleNamespace as Dev
    >>> devs = [Dev(id=i, coords=(i % 4, i // 4, 0)) for i in range(12)]
    >>> torus_device_order(devs, "4x4")
    Traceback (most recent call last):
    ...
    synth.errors.OptionError: shape 4x4 has 16 vertices, but 12 devices were given
    >>> torus_device_order(devs, "3x4")
    Traceback (most recent call last):
    ...
    synth.errors.OptionError: shape 3x4: the devices' coordinates span 4x3x1 (axes x 4, y 3, z 1), which drops to \
4x3 and is not 3x4 in order; pass shape 4x3? (the torus' dimensions follow the coordinate axes)
    """
    dims = _shape(shape)
    text = "x".join(map(str, dims))
    devs = list(devices)
    if core_on_chip is not None:
        devs = [d for d in devs if getattr(d, "core_on_chip", 0) == core_on_chip]
    if any(getattr(d, "coords", None) is None for d in devs):
        raise OptionError("devices report no physical coordinates (device.coords): only TPU devices do; "
                          "on other devices the order of jax.devices() is all there is")
    p = math.prod(dims)
    if len(devs) != p:
        cores = {getattr(d, "core_on_chip", 0) for d in devs}
        several = len(cores) > 1 and core_on_chip is None
        hint = f" ({len(cores)} cores per chip: pass core_on_chip to keep one)" if several else ""
        raise OptionError(f"shape {text} has {p} vertices, but {len(devs)} devices were given{hint}")
    vid = _vertex_ids(devs, dims, text)
    if np.unique(vid).size != p:
        shared = int(p - np.unique(vid).size)
        raise OptionError(f"shape {text}: {shared} device(s) share coordinates with another (several cores per "
                          "chip?); pass core_on_chip to keep one device per chip")
    order = [None] * p
    for v, d in zip(vid.tolist(), devs):
        order[v] = d
    return order


def _vertex_ids(devs, dims, text) -> np.ndarray:
    """The torus vertex of every device from its coordinates (constant axes dropped, the rest shifted to 0)."""
    coords = np.array([tuple(int(c) for c in d.coords) for d in devs], dtype=np.int64).reshape(len(devs), -1)
    lo = coords.min(axis=0)
    extent = coords.max(axis=0) - lo + 1
    keep = np.flatnonzero(extent > 1)
    got = tuple(int(e) for e in extent[keep])
    if got != dims:
        names = "xyzw"[:coords.shape[1]] if coords.shape[1] <= 4 else [f"axis {i}" for i in range(coords.shape[1])]
        axes = ", ".join(f"{names[i]} {int(e)}" for i, e in enumerate(extent))
        hint = f"; pass shape {'x'.join(map(str, got))}?" if sorted(got) == sorted(dims) else ""
        raise OptionError(f"shape {text}: the devices' coordinates span {'x'.join(map(str, extent.tolist()))} "
                          f"(axes {axes}), which drops to {'x'.join(map(str, got)) or '1'} and is not {text} in order"
                          f"{hint} (the torus' dimensions follow the coordinate axes)")
    local = coords[:, keep] - lo[keep]
    return np.ravel_multi_index(tuple(local.T), dims)


def damaged_device_order(devices, topology, *, core_on_chip=None) -> list:
    """The devices of a slice with failed chips in rank order: entry ``r`` sits at compute vertex ``r``.

    ``topology`` is a damaged torus (:class:`synth.topology.failures.Damaged`); devices are placed by
    their coordinates as in :func:`torus_device_order` on the healthy torus, and those at failed
    chips (if the slice still reports them) are left out.  Every other vertex needs one device.

    Examples
    --------
    >>> from types import SimpleNamespace as Dev
    >>> from synth.topology.torus import parse_torus
    >>> from synth.topology.failures import damage, parse_failures
    >>> t = parse_torus("4x4"); d = damage(t, parse_failures(t, nodes=["1.1"]))
    >>> devs = [Dev(id=i, coords=(i % 4, i // 4, 0)) for i in range(16)]
    >>> order = damaged_device_order(devs, d)
    >>> len(order), [o.id for o in order][:6], 5 in [o.id for o in order]
    (15, [0, 4, 8, 12, 1, 9], False)
    >>> len(damaged_device_order([x for x in devs if x.id != 5], d))
    15
    """
    healthy = topology.healthy
    dims = _shape(healthy)
    text = "x".join(map(str, dims))
    devs = [d for d in devices if core_on_chip is None or getattr(d, "core_on_chip", 0) == core_on_chip]
    if any(getattr(d, "coords", None) is None for d in devs):
        raise OptionError("devices report no physical coordinates (device.coords): only TPU devices do")
    vid = _vertex_ids(devs, dims, text)
    at = {}
    for v, d in zip(vid.tolist(), devs):
        if topology.is_compute[v]:
            if v in at:
                raise OptionError(f"shape {text}: two devices at vertex {v} (several cores per chip?); pass "
                                  "core_on_chip to keep one device per chip")
            at[v] = d
    missing = [int(v) for v in topology.compute if int(v) not in at]
    if missing:
        raise OptionError(f"{topology.name}: no device at compute vertex {missing[0]}"
                          f"{f' and {len(missing) - 1} more' if len(missing) > 1 else ''} (a failed chip? name "
                          "it in `fail_node`)")
    return [at[int(v)] for v in topology.compute]


def torus_mesh(devices, shape, axis_name: str = "torus", *, core_on_chip=None):
    """``jax.sharding.Mesh(np.array(torus_device_order(devices, shape)), (axis_name,))``.

    The mesh for :func:`synth.runtime.jax.executor.allreduce_fn` on a torus of TPUs
    (``devices = jax.devices()``, one slice).
    """
    from jax.sharding import Mesh  # optional dependency (the [jax] extra)

    order = torus_device_order(devices, shape, core_on_chip=core_on_chip)
    arr = np.empty(len(order), dtype=object)
    arr[:] = order
    return Mesh(arr, (axis_name,))
