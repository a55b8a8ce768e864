"""Presets checked against the vendor rules (sources in synth.topology.machines)."""

import pytest

from synth.errors import TopologyError
from synth.topology.machines import MACHINES, machine_spec


@pytest.mark.parametrize("text, kind", [
    ("tpu-v5p:16x16x24", "torus"), ("tpu-v5p:8x16x16", "twisted"), ("tpu-v5p:8x8x16", "twisted"),
    ("tpu-v5p:2x4x4", "grid"), ("tpu7x:12x12x36", "torus"), ("tpu7x:4x4x8", "torus"),
    ("tpu-v4:4x4x64", "torus"), ("tpu-v4:16x16x16", "torus"), ("trn2:4x4x4", "torus")])
def test_vendor_shapes_are_offered(text, kind):
    assert machine_spec(text)["kind"] == kind


@pytest.mark.parametrize("text", ["tpu-v5p:16x20x28",    # the v5p pod, not a slice (6,144 chips at most)
                                  "tpu-v5p:24x16x16",    # v5p shapes are listed A <= B <= C
                                  "tpu7x:16x16x48",      # 192 cubes > 144
                                  "tpu7x:8x4x4", "tpu-v4:16x16x32", "tpu-v4:4x4x260"])
def test_shapes_the_vendor_does_not_offer_are_refused(text):
    with pytest.raises(TopologyError, match="does not offer"):
        machine_spec(text)


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_every_preset_names_a_source_url(name):
    assert "https://" in MACHINES[name].source
