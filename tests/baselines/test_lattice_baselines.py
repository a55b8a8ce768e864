"""Baselines on lattice tori and grids: Ring on a Hamiltonian cycle, the ring-based ones refused."""

import numpy as np
import pytest

from synth.baselines import build_baseline
from synth.baselines.lattice import box_cycle
from synth.errors import TopologyError
from synth.topology.lattice import grid, parse_lattice, twisted


@pytest.mark.parametrize("make", [lambda: twisted((4, 4, 8)), lambda: twisted((2, 4)), lambda: grid((4, 5), (0, 0)),
                                  lambda: grid((3, 4, 3), (0, 1, 0)), lambda: grid((2, 3, 2), (1, 1, 1)),
                                  lambda: parse_lattice("3,1;1,3"), lambda: grid((1, 6), (0, 1))])
def test_box_cycle_is_hamiltonian(make):
    t = make()
    seq = box_cycle(t)
    assert sorted(seq.tolist()) == list(range(t.n_vertices))
    assert np.all(t.link_ids(seq, np.roll(seq, -1)) >= 0)     # consecutive nodes (and last-first) are linked


def test_ring_on_lattice_kinds():
    m = build_baseline("ring", twisted((4, 8))).measure()
    assert (m.rounds, str(m.psi), str(m.theta), str(m.omega)) == (62, "1", "1", "2")
    assert str(build_baseline("ring", grid((4, 4), (False, False))).measure().psi) == "1"


@pytest.mark.parametrize("name", ["bucket", "swing-b", "swing-l", "trivance-l", "trivance-b"])
def test_ring_based_refused_with_reason(name):
    with pytest.raises(TopologyError, match="coordinate rings"):
        build_baseline(name, twisted((4, 4, 8)))
    with pytest.raises(TopologyError, match="does not wrap"):
        build_baseline(name, grid((4, 4), (False, True)))


def test_odd_box_refused():
    with pytest.raises(TopologyError, match="odd number"):
        build_baseline("ring", grid((3, 5), (False, False)))
