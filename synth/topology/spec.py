"""Build topologies from their JSON ``spec`` (the ``topology`` object of certificates and explicit files).

Examples
--------
>>> build_topology({"kind": "torus", "shape": [4, 4]}).name
'torus 4x4'
>>> build_topology({"kind": "ring"})
Traceback (most recent call last):
...
synth.errors.TopologyError: unknown topology kind 'ring'; valid: grid, hyperx, lattice, links, spine-leaf, torus, twisted
"""

from __future__ import annotations

from synth.errors import TopologyError
from synth.topology.base import Topology
from synth.topology.failures import damage, failures_from_json, healthy_spec
from synth.topology.hyperx import hyperx
from synth.topology.lattice import grid, lattice_size, lattice_torus, twisted, twisted_basis
from synth.topology.spineleaf import spine_leaf
from synth.topology.torus import torus

__all__ = ["build_topology", "spec_size", "TOPOLOGIES"]


def _torus(spec):
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
        raise TopologyError("a torus spec needs 'shape': a list of integers")
    wrap = _wrap(spec, len(shape))
    if wrap is not None and not all(wrap):  # a side that does not wrap: the grid
        return grid(shape, wrap)
    return torus(shape)


def _shape(spec, kind):
    shape = spec.get("shape")
    if not isinstance(shape, list) or not shape or not all(_is_int(s) for s in shape):
        raise TopologyError(f"a {kind} spec needs 'shape': a list of integers")
    return shape


def _wrap(spec, d):
    wrap = spec.get("wrap")
    if wrap is None:
        return None
    if not isinstance(wrap, list) or len(wrap) != d or not all(isinstance(w, bool) for w in wrap):
        raise TopologyError(f"'wrap' must be a list of {d} booleans, one per side")
    return wrap


def _grid(spec):
    shape = _shape(spec, "grid")
    wrap = _wrap(spec, len(shape))
    if wrap is not None and all(wrap) and min(shape) >= 3:
        return torus(shape)   # every side wraps: the plain torus, with its closed forms
    return grid(shape, [False] * len(shape) if wrap is None else wrap)


def _lattice(spec):
    basis = spec.get("basis")
    if not isinstance(basis, list) or not all(isinstance(r, list) and all(_is_int(x) for x in r) for r in basis):
        raise TopologyError("a lattice spec needs 'basis': a list of integer rows")
    return lattice_torus(basis, _wrap(spec, len(basis)))


def _twisted(spec):
    return twisted(_shape(spec, "twisted"))


def _hyperx(spec):
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
        raise TopologyError("a hyperx spec needs 'shape': a list of integers")
    return hyperx(shape)


def _spine_leaf(spec):
    vals = [spec.get(k) for k in ("spines", "leaves", "hosts")]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        raise TopologyError("a spine-leaf spec needs integer 'spines', 'leaves' and 'hosts'")
    return spine_leaf(*vals)


def _links(spec):
    n, links, compute = spec.get("vertices"), spec.get("links"), spec.get("compute")
    if isinstance(n, bool) or not isinstance(n, int) or not isinstance(links, list) \
            or not (compute is None or isinstance(compute, list)):
        raise TopologyError("a links spec needs integer 'vertices', 'links' ([[u, v], ...]) and optionally "
                            "'compute' (a list of vertex ids)")
    if not all(isinstance(pair, list) and len(pair) == 2 and all(_is_int(x) for x in pair) for pair in links) \
            or not all(_is_int(c) for c in compute or ()):
        raise TopologyError("a links spec's 'links' must be [u, v] pairs of integer vertex ids, and 'compute' "
                            "integer ids")
    return Topology.from_links(str(spec.get("name", "graph"))[:200], dict(spec), n, links, compute)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


TOPOLOGIES = {"torus": _torus, "hyperx": _hyperx, "spine-leaf": _spine_leaf, "links": _links,
              "grid": _grid, "lattice": _lattice, "twisted": _twisted}


def spec_size(spec) -> tuple:
    """``(vertices, links, compute vertices)`` of the topology ``spec`` names, without building it.

    Used to check a file's declared sizes against its content before anything of the
    topology's size is allocated.  Malformed specs give ``None`` (build them to get the error);
    the compute count of a ``links`` spec is ``None`` (its links are in the file anyway).

    Examples
    --------
    >>> spec_size({"kind": "torus", "shape": [3000, 3000]})
    (9000000, 36000000, 9000000)
    >>> spec_size({"kind": "spine-leaf", "spines": 2, "leaves": 3, "hosts": 2})
    (11, 24, 6)
    """
    kind = spec.get("kind") if isinstance(spec, dict) else None
    if kind in TOPOLOGIES and "failed" in spec:
        # failures only remove: the healthy counts bound V and E; the compute count is left to the build
        healthy = spec_size(healthy_spec(spec))
        return None if healthy is None else (healthy[0], healthy[1], None)
    if kind in ("lattice", "grid", "twisted") or kind == "torus" and isinstance(spec.get("wrap"), list):
        return _lattice_size(spec, kind)
    if kind in ("torus", "hyperx"):
        shape = spec.get("shape")
        if not isinstance(shape, list) or not shape or len(shape) > 64 or not all(
                _is_int(s) and s >= 1 for s in shape):
            return None
        V = 1
        for s in shape:
            V *= s
        E = V * (2 * len(shape) if kind == "torus" else sum(s - 1 for s in shape))
        return V, E, V
    if kind == "spine-leaf":
        q, l, h = (spec.get(k) for k in ("spines", "leaves", "hosts"))
        if not all(_is_int(x) and x >= 0 for x in (q, l, h)):
            return None
        return q * l + l + q, 4 * q * l, h * l
    if kind == "links":
        n, links = spec.get("vertices"), spec.get("links")
        if not _is_int(n) or not isinstance(links, list):
            return None
        return n, len(links), None   # listed in the file itself: its size bounds the work already
    return None


def _lattice_size(spec, kind):
    """Exact sizes of the lattice kinds; ``None`` when malformed."""
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


def build_topology(spec) -> Topology:
    """The topology a JSON spec describes (a ``failed`` list applied to it: :mod:`synth.topology.failures`)."""
    kind = spec.get("kind") if isinstance(spec, dict) else None
    if kind not in TOPOLOGIES:
        raise TopologyError(f"unknown topology kind {kind!r}; valid: {', '.join(sorted(TOPOLOGIES))}")
    if "failed" in spec:
        return damage(TOPOLOGIES[kind](healthy_spec(spec)), failures_from_json(spec["failed"]))
    return TOPOLOGIES[kind](spec)
