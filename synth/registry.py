"""Build topologies from their JSON ``spec`` (the ``topology`` object of certificates and explicit files).

Examples
--------
>>> build_topology({"kind": "torus", "shape": [4, 4]}).name
'torus 4x4'
>>> build_topology({"kind": "ring"})
Traceback (most recent call last):
...
synth.errors.TopologyError: unknown topology kind 'ring'; valid: hyperx, links, spine-leaf, torus
"""

from __future__ import annotations

from synth.errors import TopologyError
from synth.topology import Topology
from synth.torus import torus

__all__ = ["build_topology", "default_group", "group_builder", "group_kinds", "TOPOLOGIES"]


def _torus(spec):
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
        raise TopologyError("a torus spec needs 'shape': a list of integers")
    return torus(shape)


def _hyperx(spec):
    from synth.hyperx import hyperx

    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
        raise TopologyError("a hyperx spec needs 'shape': a list of integers")
    return hyperx(shape)


def _spine_leaf(spec):
    from synth.spineleaf import spine_leaf

    try:
        return spine_leaf(int(spec["spines"]), int(spec["leaves"]), int(spec["hosts"]))
    except (KeyError, TypeError, ValueError):
        raise TopologyError("a spine-leaf spec needs integer 'spines', 'leaves' and 'hosts'") from None


def _links(spec):
    try:
        return Topology.from_links(spec.get("name", "graph"), dict(spec), int(spec["vertices"]), spec["links"],
                                   spec.get("compute"))
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, TopologyError):
            raise
        raise TopologyError(f"a links spec needs 'vertices' and 'links' ([[u, v], ...]): {exc}") from None


TOPOLOGIES = {"torus": _torus, "hyperx": _hyperx, "spine-leaf": _spine_leaf, "links": _links}


def _group_builders():
    from synth.group import torus_gamma, torus_translations, torus_translations_negation
    from synth.hyperx import hyperx_group
    from synth.spineleaf import spine_leaf_group

    return {
        "torus-gamma": torus_gamma,
        "torus-translations-negation": torus_translations_negation,
        "torus-translations": torus_translations,
        "hyperx-rotations": hyperx_group,
        "hyperx-shifts-negation": hyperx_group,
        "spine-leaf-shifts": spine_leaf_group,
    }


def group_builder(kind):
    """The builder of a named group kind, or ``None``."""
    return _group_builders().get(kind)


def group_kinds():
    return sorted(_group_builders())


def build_topology(spec) -> Topology:
    """The topology a JSON spec describes."""
    kind = spec.get("kind") if isinstance(spec, dict) else None
    if kind not in TOPOLOGIES:
        raise TopologyError(f"unknown topology kind {kind!r}; valid: {', '.join(sorted(TOPOLOGIES))}")
    return TOPOLOGIES[kind](spec)


def default_group(topology: Topology):
    """The largest built-in group for a topology (Γ on equal-sided tori), or ``None``."""
    from synth.group import torus_gamma, torus_translations_negation
    from synth.hyperx import HyperX, hyperx_group
    from synth.spineleaf import SpineLeaf, spine_leaf_group
    from synth.torus import Torus

    if isinstance(topology, Torus):
        return torus_gamma(topology) if topology.is_equal_sided else torus_translations_negation(topology)
    if isinstance(topology, HyperX):
        return hyperx_group(topology)
    if isinstance(topology, SpineLeaf):
        return spine_leaf_group(topology)
    return None
