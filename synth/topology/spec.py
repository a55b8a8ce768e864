"""Build topologies from their JSON ``spec`` (the ``topology`` object of certificates and explicit files).

Each JSON ``kind`` has its reader and sizer in the table of network kinds
(:mod:`synth.topology.kinds`); a ``failed`` list on any of them is applied here
(:mod:`synth.topology.failures`).

Examples
--------
>>> build_topology({"kind": "torus", "shape": [4, 4]}).name
'torus 4x4'
>>> build_topology({"kind": "ring"})
Traceback (most recent call last):
...
synth.errors.TopologyError: unknown topology kind 'ring'; valid: gpu, grid, hyperx, lattice, links, multislice, spine-leaf, torus, twisted
"""

from __future__ import annotations

from synth.errors import TopologyError
from synth.topology.base import Topology
from synth.topology.failures import damage, failures_from_json, healthy_spec
from synth.topology.kinds import read_spec, spec_kind, spec_kinds

__all__ = ["build_topology", "spec_size"]


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
    kinds = spec_kinds()
    if not isinstance(kind, str) or kind not in kinds:
        return None
    if "failed" in spec:
        # failures only remove: the healthy counts bound V and E; the compute count is left to the build
        healthy = spec_size(healthy_spec(spec))
        return None if healthy is None else (healthy[0], healthy[1], None)
    return kinds[kind].size(spec)


def build_topology(spec) -> Topology:
    """The topology a JSON spec describes (a ``failed`` list applied to it: :mod:`synth.topology.failures`)."""
    kind = spec_kind(spec.get("kind") if isinstance(spec, dict) else None)
    if "failed" in spec:
        return damage(kind.build(healthy_spec(spec)), failures_from_json(spec["failed"], spec.get("idle")))
    if "idle" in spec:
        raise TopologyError("an 'idle' list (links a schedule leaves unused) needs the 'failed' list beside it")
    return read_spec(spec)
