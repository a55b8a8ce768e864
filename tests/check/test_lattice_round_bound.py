"""The round lower bound on lattice kinds from closed-form eccentricities equals the general search's."""

import pytest

import synth.check.eccentricity as eccentricity
from synth.symmetry.spec import default_group
from synth.topology.lattice import grid, lattice_torus, twisted
from synth.topology.machines import machine_spec
from synth.topology.spec import build_topology

CASES = [grid((4, 4), (False, False)), grid((5, 4), (False, False)), grid((8, 16), (False, True)),
         grid((3, 4, 5), (False, True, False)), grid((4, 4, 4), (False, False, False)), twisted((4, 8)),
         twisted((4, 4, 8)), lattice_torus(((4, 1), (0, 4))), grid((2, 5), (False, False)), grid((7,), (False,)),
         grid((6,), (False,)), build_topology(machine_spec("tofu-d:4x3x2", mesh=True))]


@pytest.mark.parametrize("t", CASES, ids=lambda t: t.name)
def test_closed_form_round_bound_is_the_general_one(t, monkeypatch):
    g = default_group(t)
    fast = eccentricity.round_lower_bound(t, g)
    monkeypatch.setattr(eccentricity, "LatticeTorus", type("NotALattice", (), {}))   # the general BFS search
    assert eccentricity.round_lower_bound(t, g) == fast
    assert eccentricity.round_lower_bound(t, None) == fast                        # and without a group
