"""Groups: orders, regularity, orbits, and rejection of non-automorphisms / non-free actions."""

import numpy as np
import pytest

from synth.errors import GroupError
from synth.symmetry.group import Group
from synth.symmetry.spec import named_group
from synth.symmetry.torus import torus_gamma, torus_translations, torus_translations_negation
from synth.topology.torus import parse_torus

from conftest import equal_sided_shapes


@pytest.mark.parametrize("shape", equal_sided_shapes(300))
def test_gamma_is_regular_with_order_2dn_d(shape):
    t = parse_torus(shape)
    g = torus_gamma(t)
    assert g.order == 2 * t.ndim * t.n_vertices == t.n_links
    assert g.is_regular
    images = g.link_images(np.arange(t.n_links))  # brute force: every column a permutation
    assert np.all(np.sort(images, axis=0) == np.arange(t.n_links)[:, None])


def test_element_numbering_is_canonical(t44):
    g = torus_gamma(t44)
    assert np.array_equal(g.link_images([0]).ravel(), g.orbit_links)
    U = g.vertex_images(np.arange(t44.n_vertices))
    for row in U[:: 7]:  # each element is an automorphism of the torus
        assert np.all(t44.link_ids(row[t44.link_src], row[t44.link_dst]) >= 0)
    assert len({tuple(r) for r in U.tolist()}) == g.order


@pytest.mark.parametrize("shape,orbits", [("3x5", 2), ("4x6", 2), ("3x4x5", 3), ("8x8", 2)])
def test_translations_negation(shape, orbits):
    t = parse_torus(shape)
    g = torus_translations_negation(t)
    assert g.order == 2 * t.n_vertices
    assert g.n_link_orbits == orbits
    assert np.array_equal(g.orbit_sizes, np.full(orbits, g.order))
    assert np.array_equal(g.link_orbit, t.link_dim)


def test_translations_orbits_per_direction():
    t = parse_torus("4x6")
    g = torus_translations(t)
    assert g.order == 24 and g.n_link_orbits == 4


def test_not_an_automorphism_is_rejected(t44):
    perm = np.arange(16)
    perm[[0, 1]] = perm[[1, 0]]
    with pytest.raises(GroupError, match="not an automorphism"):
        Group.from_generators(t44, [perm], "swap", {})


def test_not_a_permutation_is_rejected(t44):
    with pytest.raises(GroupError, match="not a permutation"):
        Group.from_generators(t44, [np.zeros(16, dtype=int)], "zero", {})


def test_nontrivial_stabilizer_everywhere_is_rejected():
    from synth.topology import Topology

    star = Topology.from_links("star", {"kind": "links"}, 4, [(0, 1), (0, 2), (0, 3), (1, 0), (2, 0), (3, 0)])
    s3 = [[0, 2, 1, 3], [0, 2, 3, 1]]  # S3 on the leaves: every link is fixed by a transposition
    with pytest.raises(GroupError, match="trivial stabilizer"):
        Group.from_generators(star, s3, "S3", {})
    g = Group.from_generators(star, [[0, 2, 3, 1]], "C3", {})  # the rotations alone act freely
    assert g.order == 3 and g.is_free and not g.is_regular


def test_flip_group_has_half_size_orbits(t44):
    c = t44.coords(np.arange(16))
    flip = t44.vertex(np.stack([c[:, 0], -c[:, 1]], axis=1))  # fixes the links along dimension 0 on row 0
    g = Group.from_generators(t44, [flip], "flip", {})
    assert g.order == 2 and not g.is_free
    assert set(g.orbit_sizes.tolist()) == {1, 2}


def test_named_group_round_trip(t44):
    g = torus_gamma(t44)
    h = named_group(t44, {"kind": "generators", "generators": g.generators.tolist()})
    assert np.array_equal(h.orbit_links, g.orbit_links)
    assert np.array_equal(h.vertex_images(np.arange(16)), g.vertex_images(np.arange(16)))
    with pytest.raises(GroupError, match="unknown group kind"):
        named_group(t44, {"kind": "nope"})
    with pytest.raises(GroupError, match="equal-sided"):
        torus_gamma(parse_torus("4x6"))
