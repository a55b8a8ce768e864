"""The lattice family read from JSON specs and from the command line's words.

Four spec kinds build a :class:`~synth.topology.lattice.LatticeTorus` or a
:class:`~synth.topology.torus.Torus`: ``torus`` (a ``wrap`` list with a side that does not
wrap makes it a grid), ``grid`` (every side wrapped and at least 3: the plain torus, with its
closed forms), ``lattice`` (a basis) and ``twisted`` (a TPU v4/v5p shape).  Each has a reader
(``*_from_spec``) and a sizer (:func:`lattice_spec_size`: the counts without building it, for
checking a file's declared sizes first).  The shape words of ``--twisted``, ``--mesh`` and
``--torus`` with ``--no-wrap`` are parsed here too (:func:`parse_shape`, :func:`parse_grid_words`);
:mod:`synth.topology.kinds` puts them in its table.

Examples
--------
>>> grid_from_spec({"kind": "grid", "shape": [4, 4], "wrap": [True, True]}).name
'torus 4x4'
>>> torus_from_spec({"kind": "torus", "shape": [4, 4], "wrap": [False, True]}).name
'grid 4x4 wrap 1'
>>> lattice_spec_size({"kind": "twisted", "shape": [4, 4, 8]})
(128, 768, 128)
>>> parse_grid_words("8x8", "mesh", None).name
'mesh 8x8'
"""

from __future__ import annotations

import re

from synth.errors import TopologyError
from synth.topology.base import is_int, spec_volume
from synth.topology.lattice import grid, lattice_size, lattice_torus, parse_wrap, twisted, twisted_basis
from synth.topology.torus import shape_sides, torus

__all__ = ["torus_from_spec", "grid_from_spec", "lattice_from_spec", "twisted_from_spec", "lattice_spec_size",
           "torus_spec_size", "parse_shape", "parse_grid_words"]

_SHAPE = re.compile(r"^\d+(x\d+)*$")


def _shape(spec, kind):
    shape = spec.get("shape")
    if not isinstance(shape, list) or not shape or not all(is_int(s) for s in shape):
        raise TopologyError(f"a {kind} spec needs 'shape': a list of integers")
    return shape


def _wrap(spec, d):
    wrap = spec.get("wrap")
    if wrap is None:
        return None
    if not isinstance(wrap, list) or len(wrap) != d or not all(isinstance(w, bool) for w in wrap):
        raise TopologyError(f"'wrap' must be a list of {d} booleans, one per side")
    return wrap


def torus_from_spec(spec):
    """A ``torus`` spec: the torus, or the grid when its ``wrap`` list leaves a side unwrapped."""
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(is_int(s) for s in shape):
        raise TopologyError("a torus spec needs 'shape': a list of integers")
    wrap = _wrap(spec, len(shape))
    if wrap is not None and not all(wrap):  # a side that does not wrap: the grid
        return grid(shape, wrap)
    return torus(shape)


def grid_from_spec(spec):
    """A ``grid`` spec: the grid (a mesh without ``wrap``), or the plain torus when every side wraps and is >= 3."""
    shape = _shape(spec, "grid")
    wrap = _wrap(spec, len(shape))
    if wrap is not None and all(wrap) and min(shape) >= 3:
        return torus(shape)   # every side wraps: the plain torus, with its closed forms
    return grid(shape, [False] * len(shape) if wrap is None else wrap)


def lattice_from_spec(spec):
    """A ``lattice`` spec: the lattice torus of the rows of ``basis`` (and ``wrap``)."""
    basis = spec.get("basis")
    if not isinstance(basis, list) or not all(isinstance(r, list) and all(is_int(x) for x in r) for r in basis):
        raise TopologyError("a lattice spec needs 'basis': a list of integer rows")
    return lattice_torus(basis, _wrap(spec, len(basis)))


def twisted_from_spec(spec):
    """A ``twisted`` spec: the twisted torus of ``shape``."""
    return twisted(_shape(spec, "twisted"))


def torus_spec_size(spec):
    """``(V, E, V)`` of a ``torus`` spec (:func:`lattice_spec_size` when it has a ``wrap`` list); None if malformed."""
    if isinstance(spec.get("wrap"), list):
        return lattice_spec_size(spec)
    sized = spec_volume(spec)
    if sized is None:
        return None
    shape, V = sized
    return V, V * 2 * len(shape), V


def lattice_spec_size(spec):
    """Exact ``(V, E, V)`` of a ``lattice``, ``grid``, ``twisted`` or wrapped ``torus`` spec; None if malformed."""
    kind = spec.get("kind")
    try:
        if kind == "lattice":
            basis, wrap = spec.get("basis"), spec.get("wrap")
        else:
            shape = _shape(spec, kind)
            if kind == "twisted":
                basis, wrap = twisted_basis(shape), None
            else:
                basis = [[s if i == j else 0 for j in range(len(shape))] for i, s in enumerate(shape)]
                wrap = _wrap(spec, len(shape)) or [False] * len(shape)
        V, E = lattice_size(basis, wrap)
    except TopologyError:
        return None
    return V, E, V


def parse_shape(text, flag: str) -> tuple:
    """The sides of the shape word ``text`` of the flag ``flag`` (``NxNx...``), refused with the flag's name."""
    text = str(text).strip().lower()
    if not _SHAPE.match(text):
        raise TopologyError(f"--{flag} shape {text[:40]!r} is not of the form NxNx... (e.g. 4x4x8)")
    return shape_sides(text, flag)


def parse_grid_words(text, flag: str, no_wrap):
    """``--mesh SHAPE`` (``no_wrap`` None: no side wraps) or ``--torus SHAPE --no-wrap DIMS``."""
    shape = parse_shape(text, flag)
    wrap = (False,) * len(shape) if no_wrap is None else parse_wrap(no_wrap, len(shape))
    return grid_from_spec({"kind": "grid", "shape": list(shape), "wrap": list(wrap)})

