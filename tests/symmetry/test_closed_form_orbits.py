"""Link orbits and link images given in closed form: checked, and computed instead when wrong."""

import numpy as np
import pytest

from synth.symmetry.group import Group
from synth.symmetry.lattice import _link_images, _translations, lattice_gamma, link_classes, vertex_map
from synth.topology.lattice import twisted


@pytest.fixture(scope="module")
def setting():
    t = twisted((4, 4, 8))
    point = [((0, 1, 2), (-1, -1, -1))]
    gens = np.stack(_translations(t) + [vertex_map(t, e) for e in point])
    return t, point, gens


def _plain(t, gens):
    return Group.from_generators(t, gens, "plain", {})


def test_closed_forms_equal_the_computed_orbits_and_images(setting):
    t, point, gens = setting
    hinted = Group.from_generators(t, gens, "hinted", {}, link_classes=link_classes(t, point),
                                   link_images=_link_images(t, gens, point))
    plain = _plain(t, gens)
    assert np.array_equal(hinted.link_orbit, plain.link_orbit)
    assert np.array_equal(hinted.generator_links, plain.generator_links)
    assert hinted.order == plain.order


def test_wrong_classes_and_images_are_caught(setting):
    t, point, gens = setting
    plain = _plain(t, gens)
    merged = np.zeros(t.n_links, dtype=np.int64)                 # invariant, but the base class is 3 orbits
    split = np.arange(t.n_links)                                 # not invariant
    images = _link_images(t, gens, point)
    images[0] = np.roll(images[0], 1)                            # a wrong permutation of the links
    for classes in (merged, split):
        g = Group.from_generators(t, gens, "wrong", {}, link_classes=classes, link_images=images)
        assert np.array_equal(g.link_orbit, plain.link_orbit)
        assert np.array_equal(g.generator_links, plain.generator_links)


def test_lattice_gamma_of_a_twisted_torus_still_has_one_link_orbit():
    g = lattice_gamma(twisted((4, 4, 8)))
    assert g.n_link_orbits == 1 and g.is_free and g.order == g.topology.n_links
