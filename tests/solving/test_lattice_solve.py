"""Schedules on lattice tori: Psi = Theta = Omega = 1 in 2H rounds where the group balances one tree."""

from fractions import Fraction

import pytest

from synth.check.claims import check_certificate
from synth.errors import OptionError
from synth.solving import solve
from synth.solving.lattice import exchange_pair, volume_fraction
from synth.topology.lattice import grid, parse_lattice, twisted


@pytest.mark.parametrize("shape, H", [((4, 4, 8), 6), ((4, 8), 4), ((2, 2, 4), 3), ((3, 6), 3)])
def test_twisted_sp_allreduce_is_fully_optimal(shape, H):
    t = twisted(shape)
    r = solve(t)
    c = r.certificate.claims
    assert (c["rounds"], c["psi"], c["theta"], c["omega"]) == (2 * H, "1", "1", "1")
    assert r.depth == H == t.diameter and volume_fraction(c) == 1
    assert check_certificate(r.certificate, "symmetric").valid


def test_twisted_exchange_meets_the_round_bound():
    t = twisted((4, 4, 8))
    a, b, ecc = exchange_pair(t)
    assert ecc == t.diameter - 1
    c = solve(t, exchange=True).certificate.claims
    assert (c["rounds"], c["omega"], c["round_lower_bound"]) == (11, "1", 11)


@pytest.mark.parametrize("collective", ["reduce-scatter", "allgather"])
def test_halves(collective):
    c = solve(twisted((2, 4)), collective=collective).certificate.claims
    assert c["rounds"] == 2 and c["omega"] == "1"


def test_several_orbits_go_through_the_balance_model():
    t = parse_lattice("3,0;0,5")        # a diagonal lattice: the rectangular torus, two link orbits
    r = solve(t, time_limit=20)
    c = r.certificate.claims
    assert c["omega"] == "1" and c["rounds"] == 2 * t.diameter
    assert r.certificate.solver["model"] == "synth.models.balance"


def test_mesh_is_reported_not_refused():
    r = solve(grid((3, 4), (False, False)), time_limit=5)
    c = r.certificate.claims
    assert Fraction(c["omega"]) >= 1 and 0 < volume_fraction(c) <= 1
    # the packing model beats the lifted shortest-path tree on a mesh, and says why it was used
    assert r.certificate.provenance["algorithm"] in ("layered-packing", "timed-packing")
    assert "not vertex-transitive" in r.notes[0]
    from synth.check.claims import certify
    from synth.schedule.user import shortest_path_tree
    from synth.symmetry.lattice import grid_group

    m = grid((3, 4), (False, False))
    lifted = certify(shortest_path_tree(m), grid_group(m)).claims
    assert Fraction(c["bandwidth_fraction"]) > Fraction(lifted["bandwidth_fraction"])
    with pytest.raises(OptionError, match="does not wrap"):
        solve(grid((3, 4), (False, False)), exchange=True)
    # k-hop trees need a transitive group: a depth bound takes the depth-bounded packing instead
    assert solve(grid((3, 4), (False, False)), depth=2).certificate.provenance["algorithm"] == "depth-bounded-packing"
