"""Forest plus exchange: 2H-1 rounds, certified round-optimal, on even tori of any dimension."""

import pytest

from synth.check.claims import certify, check_certificate
from synth.cli import main
from synth.errors import TopologyError
from synth.schedule.exchange import bfs_forest_parents, exchange_allreduce, exchange_roots
from synth.schedule.forest import forest_depths
from synth.symmetry.torus import torus_gamma
from synth.topology.torus import parse_torus

EVEN = ["4", "6", "10", "4x4", "6x6", "8x8", "10x10", "12x12", "4x4x4", "6x6x6", "4x4x4x4", "16x16"]


@pytest.mark.parametrize("shape", EVEN)
def test_exchange_is_round_optimal(shape):
    t = parse_torus(shape)
    g = torus_gamma(t)
    cert = certify(exchange_allreduce(t), g)
    c = cert.claims
    assert c["rounds"] == 2 * t.diameter - 1 == c["round_lower_bound"]
    assert c["round_optimal"] is True
    assert (c["psi"], c["theta"], c["omega"], c["max_route"]) == ("1", "1", "1", 1)
    assert c["transmissions"] == g.order * 2 * (t.n_vertices - 1)
    assert check_certificate(cert, "symmetric").valid


@pytest.mark.parametrize("shape", ["4x4", "6x6x6", "8x8"])
def test_forest_depth_is_pair_eccentricity(shape):
    t = parse_torus(shape)
    a, b = exchange_roots(t)
    depth = forest_depths(t, bfs_forest_parents(t, a, b), [a, b])
    assert depth.max() == t.diameter - 1
    assert (t.dist(a, b)) == 1


def test_odd_torus_keeps_sp(capsys):
    assert main(["solve", "--torus", "5x5", "--exchange", "--json"]) == 0
    out, err = capsys.readouterr()
    assert '"rounds": 8' in out and "already the lower bound" in err
    with pytest.raises(TopologyError):
        exchange_allreduce(parse_torus("5x5"))


@pytest.mark.parametrize("shape", ["4x4", "8x8", "5x5", "4x4x4", "3x3x3", "4x6", "3x4"])
def test_bound_command_agrees_with_closed_form(shape, capsys):
    assert main(["bound", "--torus", shape]) == 0
    assert "closed form" in capsys.readouterr().out
