"""``synth run --engine jax``: run a schedule on the local JAX devices, check it, time it next to ``psum``.

:func:`run_jax` builds the tables (:mod:`synth.runtime.jax.tables`), finds ``p`` devices and runs
the schedule (:func:`~synth.runtime.jax.executor.allreduce_fn`) and ``jax.lax.psum`` on the same
inputs, each jitted and compiled once (compile time reported apart), then ``warmup + iters``
times; every iteration's result is checked against the exact sum and against ``psum``'s.  A
reduce-scatter runs as :func:`~synth.runtime.jax.executor.reduce_scatter_fn` next to
``jax.lax.psum_scatter(..., tiled=True)`` and is checked on each device's own block; an
allgather as :func:`~synth.runtime.jax.executor.allgather_fn` next to
``jax.lax.all_gather(..., tiled=True)``, its result (copies, never sums) checked bit for bit.
``size`` is the whole vector per device (its ``p`` blocks), rounded down to a multiple of ``p``,
as ``synth run`` under MPI does.

Devices.  On an accelerator the default backend's devices are used (a torus of TPUs in the order
of their coordinates, :func:`~synth.runtime.jax.devices.torus_device_order`; on a damaged torus the
devices of failed chips left out, :func:`~synth.runtime.jax.devices.damaged_device_order`).  On CPU, ``p``
emulated host devices are needed; their number is fixed when XLA's CPU backend starts, so:

* when JAX has not started its backends in this process (``synth run`` is a fresh process and
  imports JAX only here), ``jax_num_cpu_devices`` is set to ``p`` first and the run is in process;
* when it has started with fewer devices (a library caller that already used JAX), the run goes
  to a fresh Python (:mod:`synth.runtime.jax._worker`) with ``JAX_NUM_CPU_DEVICES=p`` in its
  environment, the tables passed in a temporary file.

Inputs.  Integer dtypes: random values over the dtype's whole range; sums wrap modulo ``2^bits``
in any order, so the check is bit-exact.  Floating dtypes: standard normal values; the result
must lie within ``(p - 1)·(eps + eps64)·Σ|x|`` of the float64 sum (the error bound of any
summation order), and within twice that of ``psum``.  Iteration ``i`` adds ``i`` to the integer
inputs and scales the float inputs by ``2^(i mod 4)`` (both exact), so no iteration can pass on
an earlier one's result.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from synth.errors import OptionError, SynthError
from synth.fileio import read_json
from synth.runtime.jax.devices import damaged_device_order, host_devices, torus_device_order
from synth.runtime.jax.tables import build_tables
from synth.runtime.memory import check_host_memory, jax_bytes
from synth.topology.torus import Torus
from synth.topology.lattice import LatticeTorus
from synth.runtime.plan import load_schedule
from synth.runtime.report import RunReportBase, median_ms, median_s
from synth.units import parse_size

__all__ = ["DTYPES", "INSTALL_HINT", "REFERENCES", "JaxRunReport", "run_jax", "execute_tables", "device_order"]

INSTALL_HINT = "pip install -e '.[jax]'"
#: dtype -> bytes per element
DTYPES = {"float32": 4, "float64": 8, "bfloat16": 2, "float16": 2, "int32": 4, "int64": 8, "int16": 2, "int8": 1,
          "uint32": 4, "uint8": 1}
AXIS = "synth"
#: the JAX primitive each collective is checked and timed against
REFERENCES = {"allreduce": "psum", "reduce-scatter": "psum_scatter", "allgather": "all_gather"}
#: what the exact result is, in the report's words
_WHAT = {"allreduce": "sum", "reduce-scatter": "sum of each device's block", "allgather": "gathered blocks"}


@dataclass(kw_only=True)
class JaxRunReport(RunReportBase):
    """What ``synth run --engine jax`` measured (seconds; per-iteration lists are the timed iterations).

    The shared fields are :class:`~synth.runtime.report.RunReportBase`'s; ``psum_s`` and
    ``psum_compile_s`` are the reference primitive's (:attr:`reference`: ``psum``, or
    ``psum_scatter`` / ``all_gather`` for a reduce-scatter / allgather).
    """

    devices: int
    platform: str
    permutations: int
    padding: float
    psum_s: list = field(default_factory=list)
    lower_s: float = 0.0
    compile_s: float = 0.0
    psum_compile_s: float = 0.0
    tables_s: float = 0.0
    where: str = ""
    order: str = ""
    check: str = ""
    jax_version: str = ""

    @property
    def itemsize(self) -> int:
        return DTYPES[self.dtype]  # bfloat16 is no numpy dtype

    @property
    def psum_median_s(self) -> float:
        return median_s(self.psum_s)

    @property
    def reference(self) -> str:
        """The JAX primitive the schedule was checked and timed against (``psum_s`` holds its times)."""
        return REFERENCES[self.collective]

    def to_json(self) -> dict:
        return {"ok": self.ok, "engine": "jax", "schedule": self.label, "devices": self.devices,
                "platform": self.platform, "elements": self.elements, "bytes": self.bytes, "dtype": self.dtype,
                "iters": self.iters, "warmup": self.warmup, "rounds": self.rounds, "chunks": self.chunks,
                "messages": self.messages, "permutations": self.permutations, "padding": self.padding,
                "schedule_s": self.schedule_s, "psum_s": self.psum_s, "schedule_median_s": self.median_s,
                "psum_median_s": self.psum_median_s, "errors": self.errors, "lower_s": self.lower_s,
                "compile_s": self.compile_s, "psum_compile_s": self.psum_compile_s, "tables_s": self.tables_s,
                "where": self.where, "device_order": self.order, "check": self.check, "jax": self.jax_version,
                **({} if self.collective == "allreduce" else {"collective": self.collective,
                                                             "reference": f"jax.lax.{self.reference}"})}

    def summary(self) -> str:
        """Human-readable lines (what ``synth run --engine jax`` prints)."""
        verdict = "OK" if self.ok else "WRONG RESULT"
        ref = self.reference
        what = "" if self.collective == "allreduce" else f"{self.collective}: "
        lines = [f"{self.label}: {verdict} on {self.devices} {self.platform} devices ({self.where}), "
                 f"{self.bytes:,} bytes ({self.elements:,} x {self.dtype}), {self.iters} iterations "
                 f"(+{self.warmup} warm-up)",
                 f"  {what}{self.rounds} rounds, {self.chunks} chunks, {self.messages} messages in "
                 f"{self.permutations} ppermutes (padding {self.padding:.3f})",
                 f"  compile: schedule {self.compile_s:.2f} s (+ trace {self.lower_s:.2f} s), "
                 f"{ref} {self.psum_compile_s:.2f} s; tables {self.tables_s:.2f} s"]
        width = max(9, len(ref))
        for name, xs in (("schedule", self.schedule_s), (ref, self.psum_s)):
            if xs:
                lines.append(f"  {name:<{width}} {median_ms(xs)} per iteration")
        if self.schedule_s and self.psum_median_s > 0:
            lines[-1] += f"  (schedule / {ref} = {self.median_s / self.psum_median_s:.2f})"
        problems = "all equal" if self.ok else f"{len(self.errors)} problem(s)"
        lines.append(f"  checked every iteration against the exact {_WHAT[self.collective]} ({self.check}) and "
                     f"{ref}: {problems}")
        lines += [f"  error: {e}" for e in self.errors[:10]]
        lines.append(f"  device order: {self.order}; jax {self.jax_version}")
        return "\n".join(lines)


def device_order(devices, topology, p):
    """The first ``p`` devices in vertex order, and how the order was chosen."""
    if getattr(devices[0], "coords", None) is not None and isinstance(topology, (Torus, LatticeTorus)):
        return torus_device_order(devices[:p] if len(devices) > p else devices, topology.shape), \
            f"physical coordinates, {topology.name}"
    if getattr(devices[0], "coords", None) is not None and isinstance(getattr(topology, "healthy", None),
                                                                       (Torus, LatticeTorus)):
        return damaged_device_order(devices, topology), f"physical coordinates, {topology.name} (failed chips left out)"
    why = "emulated devices have no network" if devices[0].platform == "cpu" else "devices report no coordinates"
    return list(devices[:p]), f"by device id ({why})"


def _inputs(rng, dtype, shape):
    np_dtype = np.dtype(dtype) if dtype not in ("bfloat16",) else None
    if np_dtype is not None and np.issubdtype(np_dtype, np.integer):
        info = np.iinfo(np_dtype)
        return rng.integers(info.min, int(info.max) + 1, size=shape, dtype=np_dtype)
    import ml_dtypes  # a dependency of jax: numpy's bfloat16

    target = ml_dtypes.bfloat16 if dtype == "bfloat16" else np_dtype
    return rng.standard_normal(shape).astype(target)


def _reference(collective, mesh):
    """The JAX primitive the schedule is checked and timed against, as a ``shard_map`` of a ``(p, ...)`` array."""
    import jax  # optional dependency (the [jax] extra)

    per_device = {"allreduce": lambda v: jax.lax.psum(v, AXIS),
                  "reduce-scatter": lambda v: jax.lax.psum_scatter(v[0], AXIS, tiled=True)[None],
                  "allgather": lambda v: jax.lax.all_gather(v[0], AXIS, tiled=True)[None]}[collective]
    return jax.shard_map(per_device, mesh=mesh, in_specs=jax.P(AXIS), out_specs=jax.P(AXIS))


def _expected(collective, base, integer):
    """``(exact, bound, per_iteration)``: the result on every device, its error bound, and what iteration ``i``
    adds per unit (integers: ``want = exact + i * per_iteration``)."""
    p = base.shape[0]
    if collective == "allgather":  # copies only: the gathered blocks, bit for bit, on every device
        exact = np.broadcast_to((base if integer else base.astype(np.float64)).reshape(-1), (p, base.size))
        return exact, (None if integer else np.zeros(exact.shape)), 1
    if integer:
        total = base.sum(axis=0, dtype=base.dtype)  # wraps modulo 2^bits, as every order of sums does
        bound = None
    else:
        wide = base.astype(np.float64)
        total = wide.sum(axis=0)
        eps = float(np.finfo(base.dtype).eps) + float(np.finfo(np.float64).eps)
        bound = (p - 1) * eps * np.abs(wide).sum(axis=0) * 1.01 + p * float(np.finfo(base.dtype).smallest_subnormal)
    if collective == "reduce-scatter":  # device r's block: the r-th p-th of the sum
        total = total.reshape(p, -1)
        bound = None if bound is None else bound.reshape(p, -1)
    return total, bound, p


def execute_tables(tables, devices, elements: int, dtype: str, iters: int, warmup: int, seed: int = 0) -> dict:
    """Compile and run the schedule and its JAX primitive on ``devices`` (in vertex order); the measured fields.

    ``elements`` is the whole vector per device: a reduce-scatter's input (its output the device's
    ``elements / p``), an allgather's output (its input the device's block).  The primitive is
    ``psum``, ``psum_scatter(..., tiled=True)`` or ``all_gather(..., tiled=True)``.
    """
    import jax  # optional dependency (the [jax] extra)
    from synth.runtime.jax.executor import collective_fn  # lazy: imports JAX

    p = tables.n_devices
    collective = getattr(tables, "collective", "allreduce")
    with jax.enable_x64(DTYPES[dtype] == 8):
        mesh = jax.sharding.Mesh(np.array(devices, dtype=object), (AXIS,))
        sharding = jax.sharding.NamedSharding(mesh, jax.P(AXIS))
        shape = (p, elements // p) if collective == "allgather" else (p, elements)
        base = _inputs(np.random.default_rng(seed), dtype, shape)
        integer = np.issubdtype(base.dtype, np.integer)
        x0 = jax.device_put(base, sharding)
        t0 = time.perf_counter()
        lowered = jax.jit(collective_fn(tables, mesh, AXIS)).lower(x0)
        t1 = time.perf_counter()
        ours = lowered.compile()
        t2 = time.perf_counter()
        psum = jax.jit(_reference(collective, mesh)).lower(x0).compile()
        t3 = time.perf_counter()
        exact, bound, per_iteration = _expected(collective, base, integer)
        if integer:
            step = jax.jit(lambda v, i: v + i.astype(v.dtype))
        else:
            step = jax.jit(lambda v, i: v * (2.0 ** (i % 4)).astype(v.dtype))
        times, ptimes, errors = [], [], []
        for i in range(warmup + iters):
            xi = step(x0, np.int32(i)).block_until_ready()
            t = time.perf_counter()
            y = ours(xi).block_until_ready()
            t_ours = time.perf_counter() - t
            t = time.perf_counter()
            z = psum(xi).block_until_ready()
            t_psum = time.perf_counter() - t
            if i >= warmup:
                times.append(t_ours)
                ptimes.append(t_psum)
            y, z = np.asarray(y), np.asarray(z)
            if integer:
                want = (exact + np.asarray(per_iteration * i).astype(base.dtype)).astype(base.dtype)
                bad, pbad, diff = (y != want).sum(), (z != want).sum(), (y != z).sum()
            else:
                scale = 2.0 ** (i % 4)
                want, tol = exact * scale, bound * scale
                yw, zw = y.astype(np.float64), z.astype(np.float64)
                bad, pbad = (np.abs(yw - want) > tol).sum(), (np.abs(zw - want) > tol).sum()
                diff = (np.abs(yw - zw) > 2 * tol).sum()
            if bad:
                dev, el = np.argwhere(y != want if integer else np.abs(y.astype(np.float64) - want) > tol)[0]
                errors.append(f"iteration {i}: {int(bad)} element(s) differ from the exact {_WHAT[collective]} "
                              f"(first on device {int(dev)}, element {int(el)})")
            if diff:
                errors.append(f"iteration {i}: {int(diff)} element(s) differ from {REFERENCES[collective]}'s result")
            if pbad:
                errors.append(f"iteration {i}: {REFERENCES[collective]} itself differs from the exact "
                              f"{_WHAT[collective]} in {int(pbad)} element(s)")
    if integer or collective == "allgather":
        check = "bit-exact"
    else:
        check = "float64 sum, error bound of any summation order"
    return {"schedule_s": times, "psum_s": ptimes, "errors": errors, "lower_s": t1 - t0, "compile_s": t2 - t1,
            "psum_compile_s": t3 - t2, "platform": devices[0].platform, "jax_version": jax.__version__,
            "check": check}


def run_jax(source, size="1MiB", iters: int = 5, dtype: str = "float32", *, warmup: int = 1, platform=None,
            timeout: float = 1800.0, seed: int = 0) -> JaxRunReport:
    """Run a schedule on the local JAX devices, check every iteration, and time it next to ``psum``.

    Parameters
    ----------
    source
        A certificate or explicit file path, or anything :func:`~synth.runtime.plan.load_schedule` takes.
    size : str or int
        Bytes per device; the vector has ``size // itemsize`` elements.
    iters, warmup : int
        Timed iterations after untimed ones; every one is checked.
    dtype : str
        One of :data:`DTYPES` (64-bit types turn on ``jax_enable_x64`` for the run).
    platform : str, optional
        ``"cpu"``, ``"tpu"``, ``"gpu"``: the JAX platform (default: JAX's default backend).
    timeout : float
        Seconds before a fresh-process run is killed.

    Returns
    -------
    JaxRunReport
        A wrong result is reported in ``errors``, not raised.

    Raises
    ------
    SynthError
        JAX not installed (the message says ``pip install -e '.[jax]'``), or too few devices.
    OptionError
        A bad ``dtype``, ``iters``, ``warmup`` or ``size``.
    """
    if dtype not in DTYPES:
        raise OptionError(f"dtype must be one of {', '.join(DTYPES)} for the JAX engine, not {dtype!r}")
    if iters < 1 or warmup < 0:
        raise OptionError("iters must be at least 1 and warmup non-negative")
    elements = parse_size(size) // DTYPES[dtype]
    if elements < 1:
        raise OptionError(f"size must hold at least one {dtype} element")
    t0 = time.perf_counter()
    schedule, weights, label = load_schedule(source)
    tables = build_tables((schedule, weights))
    tables_s = time.perf_counter() - t0
    if tables.collective != "allreduce":  # p equal blocks, as psum_scatter and all_gather (tiled) need
        elements -= elements % tables.n_devices
        if elements < 1:
            raise OptionError(f"size must hold at least {tables.n_devices} {dtype} elements: the {tables.collective} "
                              f"cuts the vector into {tables.n_devices} equal blocks")
    check_host_memory(tables.n_devices, elements, DTYPES[dtype], jax_bytes, "devices")
    try:
        import jax  # optional dependency (the [jax] extra)
    except ImportError:
        raise SynthError(f"jax is not installed; install the JAX extra: {INSTALL_HINT}") from None
    fresh = functools.partial(_run_fresh, tables, elements, dtype, iters, warmup, seed, timeout)
    res, where, devices = _devices(jax, platform, tables.n_devices, fresh)
    if res is None:
        devices, order = device_order(devices, schedule.topology, tables.n_devices)
        res = execute_tables(tables, devices, elements, dtype, iters, warmup, seed)
    else:
        order = res.pop("order")
    return JaxRunReport(label=label, devices=tables.n_devices, platform=res["platform"], elements=elements,
                        dtype=dtype, iters=iters, warmup=warmup, rounds=tables.n_rounds, chunks=tables.n_chunks,
                        messages=tables.n_messages,
                        permutations=tables.n_permutations, padding=tables.padding, schedule_s=res["schedule_s"],
                        psum_s=res["psum_s"], errors=res["errors"], lower_s=res["lower_s"],
                        compile_s=res["compile_s"], psum_compile_s=res["psum_compile_s"], tables_s=tables_s,
                        where=where, order=order, check=res["check"], jax_version=res["jax_version"],
                        collective=tables.collective)


def _devices(jax, platform, p, fresh):
    """``(result, where, devices)``: the ``p`` devices to run on, or the result of ``fresh()`` (a run in a
    fresh process) when this one started JAX with fewer host devices."""
    res, where, devices = None, "in process", None
    if platform in (None, "cpu"):
        cpu = host_devices(p)  # before the backends start, asks for p host devices; starts them
        if platform == "cpu" or jax.default_backend() == "cpu":
            if cpu is None:
                res = fresh()
                where = "a fresh process: this one had started JAX with fewer host devices"
            else:
                devices = cpu
                where = "in process, emulated host devices"
    if res is None and devices is None:
        try:
            devices = list(jax.devices(platform) if platform else jax.devices())
        except RuntimeError as exc:  # JAX's word for an unknown or unavailable backend
            raise SynthError(f"JAX platform {platform!r}: {str(exc).splitlines()[0]}") from None
        if len(devices) < p:
            raise SynthError(f"the schedule needs {p} devices; {len(devices)} {devices[0].platform} device(s) "
                             f"found (platform cpu emulates {p} host devices)")
    return res, where, devices


def _run_fresh(tables, elements, dtype, iters, warmup, seed, timeout) -> dict:
    """Run in a fresh Python with ``p`` host devices (this process started JAX with fewer)."""
    with tempfile.TemporaryDirectory(prefix="synth-jax-") as d:
        with open(os.path.join(d, "tables.pickle"), "wb") as f:
            pickle.dump(tables, f)
        with open(os.path.join(d, "args.json"), "w", encoding="utf-8") as f:
            json.dump({"elements": elements, "dtype": dtype, "iters": iters, "warmup": warmup, "seed": seed}, f)
        env = dict(os.environ, JAX_NUM_CPU_DEVICES=str(tables.n_devices), JAX_PLATFORMS="cpu")
        try:
            proc = subprocess.run([sys.executable, "-m", "synth.runtime.jax._worker", d], env=env, capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise SynthError(f"the JAX run did not finish within {timeout:g} s and was killed") from None
        path = os.path.join(d, "result.json")
        if proc.returncode != 0 or not os.path.exists(path):
            tail = " | ".join((proc.stderr or proc.stdout or "").strip().splitlines()[-3:])
            raise SynthError(f"the JAX run in a fresh process failed (exit code {proc.returncode}): {tail}")
        return read_json(path)
