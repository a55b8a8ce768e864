"""The one table of network kinds: for each, its flags, parsers, spec kinds, builders, default group and solve path.

A *kind* is a family of networks one topology class holds (tori, HyperX, spine-leaf, the lattice
family, user graphs, and damaged networks, which wrap any of them).  Its row in :data:`KINDS` says

* ``flags``: the command-line flags that name a network of the kind (``--torus SHAPE``), each with
  the parser of its word, and the flags that modify one (``--no-wrap``, ``--fail-link``); the CLI
  adds them in this order (:func:`synth.cli._common.add_topology_args`) and reads them back
  (:func:`synth.cli._common.topology_from_args`);
* ``specs``: the JSON ``kind`` s its topologies are stored as in certificates and explicit files,
  each with a reader and a sizer (:func:`synth.topology.spec.build_topology`, ``spec_size``);
* ``types``: the topology classes of the kind, for :func:`kind_of`;
* ``group``: the kind of its default lifting group, a key of :data:`synth.symmetry.spec.GROUPS`
  (``None``: no closed-form group; :func:`synth.symmetry.spec.default_group` builds it);
* ``solve_path``: which construction family ``synth.solve`` runs on it (``torus``, ``hyperx``,
  ``spineleaf``, ``lattice``, ``user``, ``packing``), the key the solve stage dispatches on
  (``kind_of(topology).solve_path``, one function of ``synth/solving`` per path).

Adding a kind is one module (the topology class, its builder, its word parser and its spec
reader and sizer) plus one row here (docs/architecture.md, "What a change touches").

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> kind_of(parse_torus("4x4")).solve_path, kind_of(parse_torus("4x4")).group(parse_torus("4x4"))
('torus', 'torus-gamma')
>>> [f.name for f in naming_flags()]
['torus', 'hyperx', 'spine_leaf', 'twisted', 'lattice', 'mesh', 'machine', 'topology']
>>> read_spec({"kind": "spine-leaf", "spines": 2, "leaves": 2, "hosts": 2}).name
'spine-leaf 2,2,2'
>>> spec_kind("ring")
Traceback (most recent call last):
...
synth.errors.TopologyError: unknown topology kind 'ring'; valid: gpu, grid, hyperx, lattice, links, multislice, spine-leaf, torus, twisted
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from synth.errors import TopologyError
from synth.topology.base import Topology
from synth.topology.failures import Damaged
from synth.topology.gpu import GpuFabric, gpu_from_spec, gpu_spec_size
from synth.topology.hyperx import HyperX, hyperx_from_spec, hyperx_spec_size, parse_hyperx
from synth.topology.lattice import LatticeTorus, parse_lattice, twisted
from synth.topology.lattice_spec import (grid_from_spec, lattice_from_spec, lattice_spec_size, parse_grid_words,
                                         parse_shape, torus_from_spec, torus_spec_size, twisted_from_spec)
from synth.topology.machines import machine_spec
from synth.topology.multislice import Multislice, SLICE_KINDS, multislice_from_spec, multislice_spec_size
from synth.topology.spineleaf import SpineLeaf, parse_spine_leaf, spine_leaf_from_spec, spine_leaf_spec_size
from synth.topology.torus import Torus, parse_torus
from synth.topology.user import links_from_spec, links_spec_size, read_topology

__all__ = ["TopologyFlag", "SpecKind", "NetworkKind", "KINDS", "kind_of", "naming_flags", "topology_flags",
           "spec_kind", "spec_kinds", "read_spec"]


@dataclass(frozen=True)
class TopologyFlag:
    """A command-line flag of a kind: ``--`` + ``name`` (``_`` -> ``-``), its metavar and help.

    ``parse(word, no_wrap)`` gives ``(topology, generators or None)`` for a flag that names a network;
    a modifier (``--no-wrap``, ``--fail-link``) has none; the CLI says which flags ``--no-wrap`` goes
    with before its help.  ``example`` is its word in the message that
    asks for one topology; ``no_wrap``: ``--no-wrap`` may go with it; ``repeatable``: given any number
    of times; ``reads_file``: its word is a path (a cluster worker may not see it); ``options``: the
    modifier flags (by name) whose words its parser takes as keyword arguments (None when not given),
    e.g. ``--slices`` with ``--machine``.
    """

    name: str
    metavar: str
    help: str
    parse: Callable | None = None
    example: str = ""
    no_wrap: bool = False
    repeatable: bool = False
    reads_file: bool = False
    options: tuple = ()


@dataclass(frozen=True)
class SpecKind:
    """A JSON topology ``kind``: its reader (spec -> topology) and sizer (spec -> ``(V, E, compute)`` or None)."""

    kind: str
    build: Callable[[dict], Topology]
    size: Callable[[dict], tuple | None]


@dataclass(frozen=True)
class NetworkKind:
    """One row of the table (module docstring)."""

    name: str
    types: tuple
    flags: tuple
    specs: tuple
    group: Callable[[Topology], str | None]
    solve_path: str


def _built(parse):
    """A flag parser from a word parser: no generators come with a built-in network."""
    return lambda word, no_wrap: (parse(word), None)


def _torus(word, no_wrap):
    return (parse_torus(word) if no_wrap is None else parse_grid_words(word, "torus", no_wrap)), None


def _machine(word, no_wrap, slices=None, dcn_bandwidth=None):
    return read_spec(machine_spec(word, mesh=no_wrap is not None, slices=slices, dcn_bandwidth=dcn_bandwidth)), None


def _read_slice(spec):
    return spec_kind(spec.get("kind")).build(spec)


def _slice_size(spec):
    kind = spec.get("kind")
    return spec_kinds()[kind].size(spec) if kind in SLICE_KINDS else None


def _no_group(topology):
    return None


KINDS = (
    NetworkKind("torus", (Torus,), (
        TopologyFlag("torus", "SHAPE", "torus side lengths, e.g. 16x16 or 8x8x8", _torus, "16x16", no_wrap=True),),
        (SpecKind("torus", torus_from_spec, torus_spec_size),),
        lambda t: "torus-gamma" if t.is_equal_sided else "torus-translations-negation", "torus"),
    NetworkKind("hyperx", (HyperX,), (
        TopologyFlag("hyperx", "SHAPE", "HyperX sides, e.g. 32x32", _built(parse_hyperx), "32x32"),),
        (SpecKind("hyperx", hyperx_from_spec, hyperx_spec_size),),
        lambda t: "hyperx-rotations" if t.ndim == 2 and t.shape[0] == t.shape[1] else "hyperx-shifts-negation",
        "hyperx"),
    NetworkKind("spine-leaf", (SpineLeaf,), (
        TopologyFlag("spine_leaf", "S,L,H", "spines, leaves, hosts per leaf, e.g. 16,32,16",
                     _built(parse_spine_leaf), "16,32,16"),),
        (SpecKind("spine-leaf", spine_leaf_from_spec, spine_leaf_spec_size),),
        lambda t: "spine-leaf-shifts", "spineleaf"),
    NetworkKind("lattice", (LatticeTorus,), (
        TopologyFlag("twisted", "SHAPE", "twisted torus (TPU v4/v5p): kx2k, kxkx2k or kx2kx2k, e.g. 4x4x8",
                     _built(lambda word: twisted(parse_shape(word, "twisted"))), "4x4x8"),
        TopologyFlag("lattice", "BASIS", "lattice torus Z^d/L, L given by the rows of a basis, e.g. "
                     "'4,0,4;0,4,4;0,0,8' (docs/machines.md)", _built(parse_lattice), "'4,4;0,8'"),
        TopologyFlag("mesh", "SHAPE", "grid with no wraparound, e.g. 8x8",
                     _built(lambda word: parse_grid_words(word, "mesh", None)), "8x8"),
        TopologyFlag("machine", "NAME:SHAPE", "a vendor's slice or servers, e.g. tpu-v4:4x4x8, trn2:4x4x4, "
                     "tofu-d:4x4x4, dgx-a100:2, dgx-h100:4, mi250:2 (docs/machines.md)", _machine, "tpu-v4:4x4x8",
                     no_wrap=True, options=("slices", "dcn_bandwidth")),
        TopologyFlag("no_wrap", "DIMS", "the sides (0-based, comma separated) that do not wrap, e.g. 0 or 0,1,2")),
        (SpecKind("grid", grid_from_spec, lattice_spec_size), SpecKind("lattice", lattice_from_spec, lattice_spec_size),
         SpecKind("twisted", twisted_from_spec, lattice_spec_size)),
        lambda t: "lattice-gamma" if t.is_vertex_transitive else "grid-reflections", "lattice"),
    NetworkKind("gpu", (GpuFabric,), (), (SpecKind("gpu", gpu_from_spec, gpu_spec_size),), lambda t: "gpu-shifts",
                "user"),
    NetworkKind("multislice", (Multislice,), (
        TopologyFlag("slices", "K", "with --machine tpu-*: K copies of the slice joined by the data-centre network "
                     "(one DCN switch; docs/machines.md)"),
        TopologyFlag("dcn_bandwidth", "GB/s", "with --slices: DCN bandwidth per chip and direction (default: the "
                     "TPU generation's, e.g. 6.25 on tpu-v5p)")),
        (SpecKind("multislice", lambda spec: multislice_from_spec(spec, _read_slice),
                  lambda spec: multislice_spec_size(spec, _slice_size)),),
        lambda t: "multislice-shifts", "user"),
    NetworkKind("user", (Topology,), (
        TopologyFlag("topology", "FILE", "a synth-topology JSON file: vertices, links, optional compute, "
                     "bandwidth (GB/s), latency (µs) and generators (docs/formats.md, 'The --topology file')", lambda word, no_wrap: read_topology(word),
                     "FILE", reads_file=True),),
        (SpecKind("links", links_from_spec, links_spec_size),), _no_group, "user"),
    NetworkKind("damaged", (Damaged,), (
        TopologyFlag("fail_link", "U-V", "a failed link (both directions), by vertex ids or coordinates, e.g. 3-4 "
                     "or 0.1-0.2; repeatable (docs/failures.md)", repeatable=True),
        TopologyFlag("fail_node", "V", "a failed chip (it neither computes nor forwards), e.g. 9 or 1.1; repeatable",
                     repeatable=True)),
        (), _no_group, "packing"),
)


def kind_of(topology) -> NetworkKind:
    """The row of ``topology``'s kind: the one whose class is nearest in its class hierarchy.

    Raises
    ------
    TopologyError
        If ``topology`` is not a :class:`~synth.topology.base.Topology`.
    """
    rows = {cls: row for row in KINDS for cls in row.types}
    for cls in type(topology).__mro__:
        if cls in rows:
            return rows[cls]
    raise TopologyError(f"not a topology: {type(topology).__name__}")


def topology_flags() -> list:
    """Every flag of every kind, in table order (the order ``--help`` lists them)."""
    return [flag for row in KINDS for flag in row.flags]


def naming_flags() -> list:
    """The flags that name a network (exactly one of them is given), in table order."""
    return [flag for flag in topology_flags() if flag.parse is not None]


def spec_kinds() -> dict:
    """JSON ``kind`` -> :class:`SpecKind`, of every row."""
    return {spec.kind: spec for row in KINDS for spec in row.specs}


def spec_kind(kind) -> SpecKind:
    """The :class:`SpecKind` of the JSON ``kind``, refused naming the valid ones."""
    kinds = spec_kinds()
    if not isinstance(kind, str) or kind not in kinds:
        raise TopologyError(f"unknown topology kind {kind!r}; valid: {', '.join(sorted(kinds))}")
    return kinds[kind]


def read_spec(spec: dict) -> Topology:
    """The healthy topology a JSON spec describes (its ``kind``'s reader; failures: ``build_topology``)."""
    return spec_kind(spec.get("kind")).build(spec)
