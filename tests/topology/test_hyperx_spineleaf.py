"""HyperX and spine-leaf: invariants, groups, the windmill's balance, the spine-leaf star's honest metrics."""

from fractions import Fraction

import numpy as np
import pytest

from synth.check.claims import certify, check_certificate
from synth.cli import main
from synth.errors import TopologyError
from synth.schedule.forest import forest_depths
from synth.schedule.hyperx import hyperx_tree, windmill_parents
from synth.schedule.spineleaf import spine_leaf_star
from synth.symmetry.hyperx import hyperx_group
from synth.symmetry.spineleaf import spine_leaf_group
from synth.topology.hyperx import parse_hyperx
from synth.topology.spineleaf import parse_spine_leaf


@pytest.mark.parametrize("shape", ["3x3", "4x4", "3x5", "4x4x4", "2x3", "5"])
def test_hyperx_invariants(shape):
    h = parse_hyperx(shape)
    sides = [int(s) for s in shape.split("x")]
    p, D = int(np.prod(sides)), sum(s - 1 for s in sides)
    assert (h.n_vertices, h.n_links) == (p, p * D)
    assert np.all(np.bincount(h.link_src) == D) and np.all(np.bincount(h.link_dst) == D)
    dm = h.distance_matrix()
    u, v = np.meshgrid(np.arange(p), np.arange(p), indexing="ij")
    assert np.array_equal(h.dist(u, v), dm) and dm.max() == h.diameter == len(sides)
    assert np.array_equal(h.link_ids(h.link_src, h.link_dst), np.arange(h.n_links))
    for a, b in [(0, p - 1), (1, p // 2)]:
        r = h.route(a, b)
        assert r.size == dm[a, b] and h.link_src[r[0]] == a and h.link_dst[r[-1]] == b


@pytest.mark.parametrize("n", range(3, 11))
def test_windmill_is_fully_bandwidth_optimal(n):
    h = parse_hyperx(f"{n}x{n}")
    g = hyperx_group(h)
    assert g.order == 4 * n * n
    sizes = sorted(set(g.orbit_sizes.tolist()))
    assert sizes == ([2 * n * n, 4 * n * n] if n % 2 == 0 else [4 * n * n])  # the n/2 orbit is half-size
    assert forest_depths(h, windmill_parents(h), [0]).max() == 2
    cert = certify(hyperx_tree(h), g, mode="explicit")
    assert (cert.claims["rounds"], cert.claims["psi"], cert.claims["theta"], cert.claims["omega"]) == (4, "1", "1", "1")
    assert check_certificate(cert, "symmetric").metrics == check_certificate(cert, "explicit").metrics


def test_rectangular_hyperx_reports_honest_omega():
    h = parse_hyperx("3x4")
    cert = certify(hyperx_tree(h), hyperx_group(h))
    assert Fraction(cert.claims["omega"]) > 1 and cert.claims["psi"] == "1"


@pytest.mark.parametrize("q,l", [(1, 2), (2, 3), (3, 5), (4, 4), (16, 32)])
def test_spine_leaf_star(q, l):
    s = parse_spine_leaf(f"{q},{l},{q}")
    assert s.n_compute == q * l and s.n_vertices == q * l + l + q and s.n_links == 2 * q * l + 2 * q * l
    g = spine_leaf_group(s)
    assert g.order == q * l and g.is_free and g.n_link_orbits == 4
    cert = certify(spine_leaf_star(s), g)
    c = cert.claims
    p = q * l
    hops = 2 * (q - 1) + 4 * q * (l - 1)  # route hops of the reduce phase
    assert c["rounds"] == 2 and c["psi"] == "1"
    assert Fraction(c["theta"]) == Fraction(hops, p - 1)
    assert Fraction(c["omega"]) == Fraction(4 * (p - 1), hops)  # host links saturated, spine links a bit idle
    if p <= 64:
        assert check_certificate(cert, "explicit").metrics == check_certificate(cert, "symmetric").metrics


@pytest.mark.parametrize("text", ["16,32", "a,b,c", "4,4,2", "0,3,0", "4,1,4"])
def test_bad_spine_leaf(text):
    with pytest.raises(TopologyError):
        parse_spine_leaf(text)


def test_cli_other_topologies(tmp_path, capsys):
    out = tmp_path / "h.json"
    assert main(["solve", "--hyperx", "5x5", "--out", str(out)]) == 0
    assert main(["check", str(out)]) == 0
    assert main(["info", "--spine-leaf", "2,3,2", "--json"]) == 0
    assert main(["bound", "--hyperx", "4x4"]) == 0
    assert main(["solve", "--hyperx", "4x4", "--exchange"]) == 2
    assert main(["solve", "--torus", "4x4", "--hyperx", "4x4"]) == 2
    capsys.readouterr()
