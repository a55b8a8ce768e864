"""Link bandwidths as exact numbers: what the checker's bandwidth term and bounds divide by.

A link's bandwidth is a float64 in GB/s (:attr:`synth.topology.base.Topology.link_bandwidth`).  The
checker takes the float's exact value (a dyadic rational: ``300``, ``25``, ``12.5`` are what they say;
``0.1`` is the binary fraction JSON's reader made of it, as the independent verifier
``tools/verify_explicit.py`` reads it too) and expresses every bandwidth as an integer count of one common
``unit`` (the largest rational that divides them all).  Sums of
bandwidths (cut capacities) are then exact integer sums, maximum flows run on integers, and a round's
time ``max_e load(e) / bandwidth(e)`` is an exact fraction (elements per GB/s).  Every link 1 GB/s (the
default): one unit of 1, and every value is what it was before links had bandwidths.

Examples
--------
>>> from synth.topology.base import Topology
>>> t = Topology.from_links("pair", {"kind": "links"}, 2, [(0, 1), (1, 0)], bandwidth=[0.5, 1.25])
>>> caps = link_capacities(t)
>>> str(caps.unit), caps.units.tolist()
('1/4', [2, 5])
>>> str(caps.capacity(np.array([True, True])))
'7/4'
>>> str(caps.round_time(np.array([3, 5])))     # max(3 / 0.5, 5 / 1.25)
'6'
>>> str(exact_bandwidth(300.0)), str(exact_bandwidth(0.1))
('300', '3602879701896397/36028797018963968')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = ["Capacities", "link_capacities", "exact_bandwidth", "max_ratio"]

_INT64_SAFE = 1 << 62


def exact_bandwidth(x) -> Fraction:
    """The exact rational value of a bandwidth float."""
    return Fraction(float(x))


def max_ratio(load: np.ndarray, units: np.ndarray) -> Fraction:
    """``max_i load[i] / units[i]`` exactly (``units`` positive integers; an empty array gives 0).

    Floats pick the candidates (within a relative 1e-9 of the float maximum, far above float64's rounding
    of two integer conversions and one division); exact fractions decide among the distinct candidates.
    """
    if load.size == 0:
        return Fraction(0)
    if units.dtype != object and units.min() == units.max():   # one bandwidth: the largest load decides
        return Fraction(int(load.max()), int(units.flat[0]))
    ratio = load.astype(np.float64) / units.astype(np.float64)
    top = float(ratio.max())
    cand = np.flatnonzero(ratio >= top * (1 - 1e-9))
    pairs = {(int(a), int(b)) for a, b in zip(load[cand].tolist(), units[cand].tolist())}
    return max(Fraction(a, b) for a, b in pairs)


@dataclass(frozen=True)
class Capacities:
    """Every link's bandwidth as ``units[e] * unit`` GB/s, ``units`` positive integers with no common factor.

    ``units`` is int64 while every sum of it fits (``max * E < 2**62``), else an object array of Python ints.
    """

    unit: Fraction
    units: np.ndarray

    @property
    def uniform(self) -> bool:
        """Whether every link has the same bandwidth."""
        return bool(self.units.size == 0 or (self.units == self.units.flat[0]).all())

    def capacity(self, mask) -> Fraction:
        """The summed bandwidth (GB/s, exact) of the links selected by ``mask`` (boolean or index array)."""
        return int(self.units[mask].sum()) * self.unit

    def vertex_capacities(self, t) -> tuple:
        """``(out, in)``: integer arrays of every vertex's summed out- and in-link units."""
        out = np.zeros(t.n_vertices, dtype=self.units.dtype)
        inn = np.zeros(t.n_vertices, dtype=self.units.dtype)
        np.add.at(out, t.link_src, self.units)
        np.add.at(inn, t.link_dst, self.units)
        return out, inn

    def round_time(self, load: np.ndarray) -> Fraction:
        """``max_e load[e] / bandwidth(e)``: a round's time in elements per GB/s, exact."""
        return max_ratio(load, self.units) / self.unit


def link_capacities(t) -> Capacities:
    """The exact :class:`Capacities` of ``t``'s links (one unit of 1 GB/s when it has no bandwidths)."""
    E = t.n_links
    if t.bandwidth is None:
        return _frozen(Fraction(1), np.ones(E, dtype=np.int64))
    values, class_of = np.unique(t.link_bandwidth, return_inverse=True)
    exact = [exact_bandwidth(v) for v in values.tolist()]
    den = math.lcm(*(f.denominator for f in exact))
    ints = [f.numerator * (den // f.denominator) for f in exact]
    g = math.gcd(*ints)
    ints = [i // g for i in ints]
    dtype = np.int64 if max(ints) * max(E, 1) < _INT64_SAFE else object
    per_class = np.empty(len(ints), dtype=dtype)
    per_class[:] = ints
    return _frozen(Fraction(g, den), per_class[class_of.ravel()])


def _frozen(unit: Fraction, units: np.ndarray) -> Capacities:
    units.setflags(write=False)
    return Capacities(unit, units)
