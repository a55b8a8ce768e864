"""The memory pre-check every engine makes before it starts: refuse a size that cannot fit.

``synth run`` starts ``p`` ranks (MPI) or ``p`` devices (JAX) that each hold several vectors
of the full size; at ``--size 64GiB`` on 16 ranks that is terabytes.  :func:`check_host_memory`
refuses such a size with one line before anything is started, from the engine's own estimate
of its bytes per element (:data:`mpi_bytes`, :func:`jax_bytes`) and the memory this host has
available now (:func:`available_bytes`).

Examples
--------
>>> check_host_memory(16, 1024, 4, mpi_bytes, "ranks")            # 16 ranks of 4 KiB: fine
>>> check_host_memory(16, 2**34, 4, mpi_bytes, "ranks", have=2**34)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
synth.errors.OptionError: size 68,719,476,736 bytes per rank needs about 13312.0 GiB for 16 ranks' ...
"""

from __future__ import annotations

import os

from synth.errors import OptionError, SynthError
from synth.fileio import read_capped

__all__ = ["available_bytes", "check_host_memory", "mpi_bytes", "jax_bytes"]


def mpi_bytes(itemsize: int) -> int:
    """Bytes per element of one MPI rank (:mod:`synth.runtime.mpi._worker`).

    The vector, the input, MPI's input and result, the expected values and the packed send and
    receive buffers (about seven vectors of ``itemsize``), and the int64 index and bool
    comparison temporaries of building the inputs and checking the result (about 24 bytes).
    """
    return 7 * itemsize + 24


def jax_bytes(itemsize: int) -> int:
    """Bytes per element of one JAX device (:mod:`synth.runtime.jax.run`): inputs, two results and a
    copy, and the float64 reference and results of the check."""
    return 4 * itemsize + 40


def available_bytes() -> int | None:
    """The memory this host can give a new job now (``MemAvailable``), or its physical memory, or None."""
    try:
        for line in read_capped("/proc/meminfo", 1 << 20).splitlines():
            if line.startswith(b"MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError, SynthError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_host_memory(p: int, elements: int, itemsize: int, per_element, unit: str, *, have=None) -> None:
    """Refuse (:class:`OptionError` naming ``size``) a run of ``p`` ``unit`` s of ``elements`` each that would not fit.

    ``per_element(itemsize)`` is the engine's bytes per element of one rank or device; ``have``
    the bytes available (default :func:`available_bytes`; unknown: no check, the run finds out).
    """
    need = p * elements * per_element(itemsize)
    have = available_bytes() if have is None else have
    if have is not None and need > have:
        raise OptionError(f"size {elements * itemsize:,} bytes per {unit[:-1]} needs about {need / 2**30:.1f} GiB "
                          f"for {p} {unit}' buffers, inputs and checks; this host has {have / 2**30:.1f} GiB "
                          "available")
