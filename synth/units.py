"""Sizes, rates and times: the one place synth reads and writes them.

Every command reads message sizes with :func:`parse_size` (``solve --size``,
``compare``/``sweep --sizes``, ``run --size``), link rates with
:func:`parse_bandwidth` and latencies with :func:`parse_time`; sizes are written
back with :func:`format_size`.  Values are exact (decimal, no float rounding of the
text) and bounded, so a typo is refused rather than expanded.

Examples
--------
>>> parse_size("64KiB"), parse_size("1MiB"), parse_size("256MiB"), parse_size("1000")
(65536, 1048576, 268435456, 1000)
>>> parse_bandwidth("400Gbps")
50000000000.0
>>> parse_time("400ns")
4e-07
>>> format_size(parse_size("64k")), format_size(1000)
('64KiB', '1000B')
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

import numpy as np

from synth.errors import SynthError

__all__ = ["parse_size", "parse_bandwidth", "parse_time", "format_size", "MAX_SIZE"]

_SIZE = {"": 1, "b": 1, "k": 2**10, "kib": 2**10, "m": 2**20, "mib": 2**20, "g": 2**30, "gib": 2**30,
         "t": 2**40, "tib": 2**40, "p": 2**50, "pib": 2**50, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
         "pb": 10**15}  # up to P: MAX_SIZE is 1 PiB, and every size up to it must be writable in its own unit
_RATE = {"bps": 1 / 8, "kbps": 1e3 / 8, "mbps": 1e6 / 8, "gbps": 1e9 / 8, "tbps": 1e12 / 8,
         "b/s": 1.0, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9}
_TIME = {"s": "1", "ms": "1e-3", "us": "1e-6", "µs": "1e-6", "ns": "1e-9"}

#: the largest message size accepted anywhere (1 PiB per node): beyond any real buffer, and small
#: enough that element counts and chunk offsets stay exact in int64 and float64
MAX_SIZE = 2**50


def _parse_decimal(text, table, what, example) -> Decimal:
    """``text`` as an exact :class:`~decimal.Decimal` in the base unit of ``table``."""
    s = str(text).strip().lower()
    # at most 4 exponent digits and 64 characters: '1e99999999' is refused, not expanded
    m = re.match(r"^([0-9]*\.?[0-9]+(?:e[+-]?\d{1,4})?)\s*([a-zµ/]*)$", s) if len(s) <= 64 else None
    if not m or m.group(2) not in table:
        raise SynthError(f"cannot read the {what} {text!r}; write it like {example} "
                         f"(units: {', '.join(k for k in table if k)})")
    return Decimal(m.group(1)) * Decimal(str(table[m.group(2)]))


def _parse(text, table, what, example) -> float:
    value = float(_parse_decimal(text, table, what, example))
    if not math.isfinite(value):
        raise SynthError(f"{what} {text!r} is too large")
    return value


def parse_size(text) -> int:
    """Bytes from ``'64KiB'``, ``'1MiB'``, ``'4096'``, ``'64k'``, ``'1MB'`` (binary and decimal units).

    The one size parser of every command (``solve --size``, ``compare``/``sweep --sizes``,
    ``run --size``).  A bare ``k``, ``m``, ``g``, ``t`` is binary (``64k`` = 65536), as most
    HPC tools read it; ``kB``, ``MB``, ... are decimal.  The value is exact (no float rounding)
    and must be a whole number of bytes from 1 to :data:`MAX_SIZE`.

    >>> parse_size("2 KiB"), parse_size("1kB"), parse_size("1K"), parse_size(4096)
    (2048, 1000, 1024, 4096)
    >>> parse_size("1PiB") == MAX_SIZE, format_size(parse_size("1PiB")), parse_size("1PB")
    (True, '1PiB', 1000000000000000)

    Raises
    ------
    SynthError
        For text it cannot read, zero, a fraction of a byte, or more than :data:`MAX_SIZE`.
    """
    if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
        value = Decimal(int(text))
    else:
        value = _parse_decimal(text, _SIZE, "size", "64KiB or 1MiB")
    if value != value.to_integral_value() or value <= 0:
        raise SynthError(f"size {text!r} must be a positive whole number of bytes")
    if value > MAX_SIZE:
        raise SynthError(f"size {text!r} is over the limit of {format_size(MAX_SIZE)}")
    return int(value)


def parse_bandwidth(text) -> float:
    """Bytes per second from ``'400Gbps'`` (bits) or ``'50GB/s'`` (bytes)."""
    value = _parse(text, _RATE, "bandwidth", "400Gbps")
    if value <= 0:
        raise SynthError("bandwidth must be positive")
    return value


def parse_time(text) -> float:
    """Seconds from ``'400ns'``, ``'1us'``, ``'0'``."""
    if str(text).strip() == "0":
        return 0.0
    return _parse(text, _TIME, "time", "400ns")


def format_size(n: int) -> str:
    """``65536 -> '64KiB'``."""
    for unit, k in (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n % k == 0:
            return f"{n // k}{unit}"
    return f"{n}B"
