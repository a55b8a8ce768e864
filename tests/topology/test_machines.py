"""Machine presets: each builds the graph its vendor documents, and refuses other shapes in one line."""

import pytest

from synth.errors import TopologyError
from synth.topology.lattice import LatticeTorus
from synth.topology.machines import MACHINES, machine_spec
from synth.topology.spec import build_topology
from synth.topology.torus import Torus


@pytest.mark.parametrize("text, kind, wrap", [
    ("tpu-v4:2x2x4", "mesh", (True, True, False)),        # sides of 2 are one link, wrapped or not
    ("tpu-v4:4x4x4", "torus", None), ("tpu-v4:4x4x8", "twisted", None), ("tpu-v4:8x8x16", "twisted", None),
    ("tpu-v4:4x8x8", "twisted", None), ("tpu-v4:4x4x12", "torus", None), ("tpu-v5p:16x16x24", "torus", None),
    ("tpu-v5e:8x16", "grid", (False, True)), ("tpu-v6e:8x8", "mesh", (False, False)),
    ("tpu-v6e:16x16", "torus", None), ("tpu7x:4x4x8", "torus", None), ("trn2:4x4", "torus", None),
    ("trn2:4x4x4", "torus", None), ("ipu-pod:4x16", "torus", None),
])
def test_presets(text, kind, wrap):
    t = build_topology(machine_spec(text))
    assert t.name.startswith({"mesh": "mesh", "torus": "torus", "twisted": "twisted torus", "grid": "grid"}[kind])
    if kind == "torus":
        assert isinstance(t, Torus)
    if wrap is not None:
        assert isinstance(t, LatticeTorus) and t.wrap == wrap


def test_tofu():
    t = build_topology(machine_spec("tofu-d:4x3x2"))
    assert t.shape == (4, 3, 2, 2, 3, 2) and t.wrap == (True,) * 6
    m = build_topology(machine_spec("tofu-d:4x3x4", mesh=True))
    assert m.wrap == (False, False, False, True, True, True)
    # a: one link per node (side 2), b: a ring of 3 (two links), c: one link
    assert [int((m.link_dim[m.link_src == 0] == i).sum()) for i in (3, 4, 5)] == [1, 2, 1]


@pytest.mark.parametrize("text, match", [
    ("tpu-v4:3x3x3", "valid: 2x2x1"), ("tpu-v4:16x16x32", "does not offer"), ("tpu-v5e:32x32", "16x16"),
    ("trn2:4x8", "4x4 \\(instance\\)"), ("tofu-d:25x1x1", "24x23x24"), ("ipu-pod:8x8", "4x16"),
    ("nope:4x4", "valid: dgx-a100, dgx-h100, ipu-pod"), ("tpu-v4", "needs a shape"), ("tpu-v4:4x4x", "needs a shape"),
])
def test_refusals(text, match):
    with pytest.raises(TopologyError, match=match):
        machine_spec(text)


def test_every_preset_names_its_source():
    for m in MACHINES.values():
        assert m.source and m.valid
