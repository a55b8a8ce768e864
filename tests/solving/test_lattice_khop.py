"""k-hop trees on lattice tori: the pipeline on the lattice's distances and point group."""

import numpy as np
import pytest

from synth.check.bounds import STEINER_KIND, cone_count_bound, khop_dual_bound
from synth.errors import OptionError, SynthError
from synth.models.forest.instance import distance_matrix, root_stabilizer, translations
from synth.models.khop import solve_khop
from synth.models.khop.brute import brute_force_khop
from synth.solving import check_written, solve
from synth.solving.cache import cache_key
from synth.topology.lattice import grid, lattice_torus, twisted
from synth.topology.torus import parse_torus

#: small non-diagonal lattices (16 and 12 vertices, diameter 3 and 4) where brute force is exact
TINY = [((4, 1), (0, 4)), ((2, 1), (0, 8)), ((3, 1), (0, 4))]


def _bfs_matrix(t):
    return np.stack([t.bfs([v]) for v in range(t.n_vertices)]).astype(np.int64)


@pytest.mark.parametrize("t", [twisted((4, 8)), twisted((2, 2, 4)), lattice_torus(((4, 1), (0, 4)))],
                         ids=lambda t: t.name)
def test_distance_matrix_is_the_graph_metric(t):
    assert np.array_equal(distance_matrix(t, dtype=np.int64), _bfs_matrix(t))


def _is_automorphism(t, perm):
    links = set(zip(t.link_src.tolist(), t.link_dst.tolist()))
    return all((int(perm[u]), int(perm[v])) in links for u, v in links)


@pytest.mark.parametrize("t", [twisted((4, 4, 8)), twisted((4, 8)), lattice_torus(((4, 1), (0, 4)))],
                         ids=lambda t: t.name)
def test_root_stabilizer_of_a_lattice_is_automorphisms_fixing_zero(t):
    perms = root_stabilizer(t)
    assert (perms[:, 0] == 0).all() and perms[0].tolist() == list(range(t.n_vertices))
    assert all(_is_automorphism(t, p) for p in perms)
    shifts = translations(t, 2)
    assert all(_is_automorphism(t, p) for p in shifts)


def test_root_stabilizer_keeps_only_the_point_group():
    """(4,1),(0,4) has sides 4 and 4 but no swap maps its lattice onto itself: 2 elements, not a square's 8."""
    t = lattice_torus(((4, 1), (0, 4)))
    assert root_stabilizer(t).shape[0] == 2
    assert root_stabilizer(twisted((4, 4, 8))).shape[0] == 48     # the plain 4x4x8 has 16
    assert root_stabilizer(parse_torus("4x4x8")).shape[0] == 16


@pytest.mark.parametrize("basis", TINY)
@pytest.mark.parametrize("k", [2, 3])
def test_solve_khop_matches_brute_force_on_tiny_lattices(basis, k):
    t = lattice_torus(basis)
    if k >= t.diameter:
        pytest.skip("k >= H is the BFS tree")
    exact, _ = brute_force_khop(t, k)
    r = solve_khop(t, k, time_limit=20)
    assert (r.status, r.weight) == ("optimal", exact)
    assert r.depth <= k
    # every bound synth check re-derives is valid: never above the brute-force optimum
    assert khop_dual_bound(t, k, r.dual).bound <= exact
    assert cone_count_bound(t, k).bound <= exact


def test_bfs_tree_of_a_lattice_has_weight_p_minus_one():
    t = twisted((4, 8))
    r = solve_khop(t, t.diameter)
    assert (r.weight, r.depth, r.status) == (t.n_vertices - 1, t.diameter, "optimal")


def test_steiner_dual_is_refused_on_a_lattice():
    with pytest.raises(SynthError, match="plain tori"):
        khop_dual_bound(twisted((4, 8)), 2, {"kind": STEINER_KIND, "k": 2, "terminals": [20]})


def test_cache_keys_of_twisted_and_plain_tori_differ():
    a, b = cache_key(twisted((4, 4, 8)), 3, "auto", 60, 0), cache_key(parse_torus("4x4x8"), 3, "auto", 60, 0)
    assert a != b and "lattice" in a and "torus" in b


def test_twisted_khop_is_certified_balanced(tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path))
    t = twisted((4, 8))
    r = solve(t, depth=2, time_limit=20)
    c = r.certificate.claims
    assert (c["rounds"], c["psi"], c["omega"], r.depth) == (4, "1", "1", 2)
    rep = check_written(r.certificate)
    assert not rep.errors and rep.claims["weight_lower_bound"][2]
    # a second solve reads the tree from the cache, re-checked
    again = solve(t, depth=2, time_limit=20)
    assert again.certificate.claims["weight"] == c["weight"] and any("cache" in n for n in again.notes)


def test_khop_refused_with_a_reason():
    with pytest.raises(OptionError, match="link orbits"):
        solve(lattice_torus(((4, 1), (0, 4))), depth=2, time_limit=5)


@pytest.mark.parametrize("wrap", [(False, False), (True, False)], ids=["mesh", "mixed"])
def test_depth_on_a_grid_takes_the_depth_bounded_packing(wrap):
    # no node-transitive group lifts a k-hop tree on a mesh: the depth-bounded LP builds it
    t = grid((4, 6), wrap)
    r = solve(t, depth=2, time_limit=20)
    c = r.certificate.claims
    assert r.certificate.provenance["algorithm"] == "depth-bounded-packing"
    assert c["rounds"] <= 4 < t.diameter and r.depth <= 2
    assert "below the diameter" in r.notes[0]
    rep = check_written(r.certificate)
    assert not rep.errors


def test_khop_exchange_refused_on_a_lattice():
    with pytest.raises(OptionError, match="exchange"):
        solve(twisted((4, 8)), depth=2, exchange=True, time_limit=5)
