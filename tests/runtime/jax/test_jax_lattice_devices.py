"""torus_device_order on twisted and unwrapped slices, with fake devices whose coords are given."""

from types import SimpleNamespace as Dev

import numpy as np
import pytest

from synth.errors import OptionError
from synth.runtime.jax.devices import torus_device_order
from synth.topology.lattice import grid, twisted


def _devices(shape, seed=0):
    coords = np.indices(shape).reshape(len(shape), -1).T
    rng = np.random.default_rng(seed)
    coords = coords[rng.permutation(len(coords))]
    return [Dev(id=i, coords=tuple(int(x) for x in c) + (0,) * (3 - len(shape))) for i, c in enumerate(coords)]


@pytest.mark.parametrize("topology", [twisted((4, 4, 8)), twisted((4, 8)), grid((2, 2, 4), (False,) * 3),
                                      grid((8, 16), (False, True))])
def test_order_follows_coordinates(topology):
    devs = _devices(topology.shape)
    order = torus_device_order(devs, topology)
    got = np.array([d.coords[:topology.ndim] for d in order])
    assert np.array_equal(got, topology.coords(np.arange(topology.n_vertices)))
    assert torus_device_order(devs, "x".join(map(str, topology.shape))) == order


def test_twisted_wrap_link_joins_the_twisted_coordinates():
    t = twisted((4, 4, 8))
    order = torus_device_order(_devices(t.shape, 1), t)
    e = int(np.flatnonzero((t.link_src == 0) & (t.link_dim == 0) & (t.link_sign == -1))[0])
    # the -x step from (0,0,0) wraps to (3,0,4): the twist (4,0,4) is in the lattice, so x=-1 is x=3, z+4
    assert order[int(t.link_dst[e])].coords == (3, 0, 4)


def test_wrong_box_refused():
    with pytest.raises(OptionError, match="not 4x8x4 in order"):
        torus_device_order(_devices((4, 4, 8)), "4x8x4")
