"""The device order of a torus from physical coordinates, on fake devices (as TPUs report them)."""

from types import SimpleNamespace

import numpy as np
import pytest

from synth.errors import OptionError
from synth.runtime.jax.devices import requested_host_devices, torus_device_order


def fake(coords, core=None, start=0):
    out = []
    for i, c in enumerate(coords):
        d = SimpleNamespace(id=start + i, coords=tuple(c), platform="tpu")
        if core is not None:
            d.core_on_chip = core[i]
        out.append(d)
    return out


def grid(shape, offset=(0, 0, 0)):
    """Coordinates of a box, x fastest (the order TPU device ids follow), padded to (x, y, z)."""
    cs = [tuple(int(v) for v in c[::-1]) for c in np.ndindex(*shape[::-1])]
    return [tuple(c[i] + offset[i] if i < len(c) else offset[i] for i in range(3)) for c in cs]


@pytest.mark.parametrize("shape", [(4, 4), (4, 4, 4), (8, 4), (3, 5, 4)])
def test_vertex_v_sits_at_its_coordinates(shape):
    rng = np.random.default_rng(0)
    devs = fake(grid(shape, offset=(2, 0, 1)))
    order = torus_device_order([devs[i] for i in rng.permutation(len(devs))], "x".join(map(str, shape)))
    for v, d in enumerate(order):
        local = tuple(d.coords[i] - (2, 0, 1)[i] for i in range(len(shape)))
        assert np.ravel_multi_index(local, shape) == v


def test_a_constant_axis_is_dropped():
    devs = fake([(x, 0, z) for z in range(4) for x in range(4)])  # an x-z slice
    order = torus_device_order(devs, (4, 4))
    assert [d.coords for d in order[:5]] == [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 0, 3), (1, 0, 0)]


@pytest.mark.parametrize("devs, shape, message", [
    (fake(grid((4, 4))), "4x8", "shape 4x8 has 32 vertices, but 16 devices were given"),
    (fake(grid((8, 4))), "4x8", "span 8x4x1 .*pass shape 8x4\\?"),
    (fake(grid((4, 4))[:15] + [(9, 9, 0)]), "4x4", "span 10x10x1"),
    (fake(grid((16, 1))), "4x4", "span 16x1x1 .*not 4x4"),
    ([SimpleNamespace(id=i, platform="cpu") for i in range(16)], "4x4", "no physical coordinates"),
    (fake(grid((4, 4))[1:] + [(0, 1, 0)]), "4x4", "1 device\\(s\\) share coordinates .*core_on_chip"),
    (fake([c for c in grid((4, 4)) for _ in (0, 1)], core=[0, 1] * 16), "4x4", "2 cores per chip: pass core_on_chip"),
])
def test_refusals_say_why(devs, shape, message):
    with pytest.raises(OptionError, match=message):
        torus_device_order(devs, shape)


def test_two_cores_per_chip_keep_one():
    coords = [c for c in grid((4, 4)) for _ in (0, 1)]
    devs = fake(coords, core=[0, 1] * 16)
    order = torus_device_order(devs, "4x4", core_on_chip=1)
    assert all(d.core_on_chip == 1 for d in order) and len({d.coords for d in order}) == 16


def test_requested_host_devices():
    assert requested_host_devices({}) == 0
    both = {"JAX_NUM_CPU_DEVICES": "12", "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    assert requested_host_devices(both) == 12
    assert requested_host_devices({"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}) == 4


def test_torus_mesh_refuses_before_it_builds_a_mesh():
    pytest.importorskip("jax")
    from synth.runtime.jax.devices import torus_mesh

    with pytest.raises(OptionError, match="no physical coordinates"):
        torus_mesh([SimpleNamespace(id=i, platform="cpu") for i in range(9)], "3x3")
