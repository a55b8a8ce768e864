"""The one table of group names (synth.symmetry.spec): every kind rebuilds from its spec, names are checked."""

import pytest

from synth.errors import GroupError, OptionError
from synth.symmetry.spec import GROUPS, TORUS_GROUPS, default_group, group_kinds, named_group, torus_group
from synth.topology.gpu import gpu_fabric
from synth.topology.spec import build_topology
from synth.topology.hyperx import parse_hyperx
from synth.topology.lattice import grid, twisted
from synth.topology.spineleaf import parse_spine_leaf
from synth.topology.torus import parse_torus

FAMILIES = {"torus": parse_torus("4x4"), "hyperx-rotations": parse_hyperx("4x4"),
            "hyperx-shifts-negation": parse_hyperx("3x4"), "spine-leaf": parse_spine_leaf("2,3,2"),
            "lattice": twisted((2, 4)), "grid-reflections": grid((3, 4), (False, False)),   # lattice kinds
            "grid-translations": grid((3, 4), (False, True)), "gpu-shifts": gpu_fabric("dgx-a100", 2),
            "multislice-shifts": build_topology({"kind": "multislice", "slice": {"kind": "torus", "shape": [4, 4]},
                                                 "slices": 2, "ici_bandwidth": 50.0, "dcn_bandwidth": 3.125})}


def topology_for(kind):
    return FAMILIES["torus" if kind.startswith("torus") else "spine-leaf" if kind.startswith("spine")
                    else "lattice" if kind.startswith("lattice") else kind]


@pytest.mark.parametrize("kind", sorted(GROUPS))
def test_every_kind_rebuilds_from_the_spec_it_writes(kind):
    t = topology_for(kind)
    g = GROUPS[kind].build(t)
    assert g.spec == {"kind": kind}
    h = named_group(t, g.to_json())
    assert h.order == g.order and (h.generators == g.generators).all()


def test_torus_names_and_kinds_are_one_table():
    assert list(TORUS_GROUPS) == ["gamma", "translations-negation", "translations"]
    t = FAMILIES["torus"]
    for name in TORUS_GROUPS:
        assert torus_group(t, name).spec["kind"] == f"torus-{name}"
    with pytest.raises(OptionError, match="valid: gamma, translations-negation, translations"):
        torus_group(t, "trans-neg")
    with pytest.raises(GroupError, match="valid: " + ", ".join(group_kinds() + ["generators"])):
        named_group(t, {"kind": "gamma"})


def test_default_group_per_family():
    assert default_group(parse_torus("4x4")).spec == {"kind": "torus-gamma"}
    assert default_group(parse_torus("3x4")).spec == {"kind": "torus-translations-negation"}
    assert default_group(FAMILIES["hyperx-rotations"]).spec == {"kind": "hyperx-rotations"}
    assert default_group(FAMILIES["spine-leaf"]).spec == {"kind": "spine-leaf-shifts"}
