"""Closed-form groups of lattice tori and grids (issue 40), against brute force."""

import itertools

import networkx as nx
import numpy as np
import pytest
from _lattice_brute import in_lattice as _in_lattice  # tests/_lattice_brute.py
from networkx.algorithms.isomorphism import GraphMatcher

from synth.errors import GroupError
from synth.symmetry.lattice import (automorphism_order, grid_group, lattice_gamma, lattice_group,
                                    lattice_translations, lattice_translations_negation, point_group)
from synth.symmetry.spec import default_group, named_group
from synth.topology.lattice import grid, parse_lattice, twisted


@pytest.mark.parametrize("make", [lambda: twisted((4, 4, 8)), lambda: twisted((2, 4, 4)), lambda: twisted((3, 6)),
                                  lambda: parse_lattice("5,2;0,5"), lambda: parse_lattice("3,1,0;0,3,1;0,0,4")])
def test_point_group_against_brute_force(make):
    t = make()
    d = t.ndim
    brute = {(p, s) for p in itertools.permutations(range(d)) for s in itertools.product((1, -1), repeat=d)
             if all(_in_lattice(t.basis, [s[i] * row[p[i]] for i in range(d)]) for row in t.basis)}
    pg = point_group(t)
    assert set(pg) == brute and pg[0] == (tuple(range(d)), (1,) * d)
    for perm, signs in pg:   # each is an automorphism: links go to links
        c = t.coords(np.arange(t.n_vertices))[:, list(perm)] * np.asarray(signs)
        img = t.vertex(c)
        assert np.all(t.link_ids(img[t.link_src], img[t.link_dst]) >= 0)


@pytest.mark.parametrize("make, equal", [
    (lambda: twisted((3, 6)), True), (lambda: twisted((5, 10)), True), (lambda: twisted((2, 2, 4)), False),
    (lambda: parse_lattice("5,2;0,5"), True), (lambda: grid((3, 4), (False, False)), True),
    (lambda: grid((3, 5), (False, True)), True), (lambda: grid((2, 3, 2), (True, True, True)), True),
])
def test_order_against_networkx(make, equal):
    t = make()
    g = nx.Graph()
    g.add_edges_from(zip(t.link_src.tolist(), t.link_dst.tolist()))
    n = sum(1 for _ in GraphMatcher(g, g).isomorphisms_iter())
    order = automorphism_order(t)
    assert n % order == 0
    assert (n == order) == equal   # twisted 2x2x4 has automorphisms beyond the affine ones


@pytest.mark.parametrize("shape", [(4, 4, 8), (4, 8, 8), (4, 8), (2, 2, 4), (3, 6)])
def test_twisted_tori_are_link_regular(shape):
    t = twisted(shape)
    g = lattice_gamma(t)
    assert g.is_regular and g.order == t.n_links
    assert named_group(t, g.spec).order == g.order and default_group(t).spec == {"kind": "lattice-gamma"}
    tn = lattice_translations_negation(t)
    assert tn.order == 2 * t.n_vertices and tn.n_link_orbits == t.ndim and tn.is_free
    tr = lattice_translations(t)
    assert tr.order == t.n_vertices and tr.n_link_orbits == 2 * t.ndim


def test_rectangular_and_mixed():
    g = lattice_group(grid((4, 6), (True, True)))
    assert g.order == 48 and g.n_link_orbits == 2     # the rectangular torus: translations and negation
    mesh = grid((5, 7), (False, False))
    gm = lattice_group(mesh)
    assert gm.spec == {"kind": "grid-reflections"} and gm.order == 4
    assert named_group(mesh, gm.spec).order == 4
    with pytest.raises(GroupError, match="does not wrap"):
        lattice_gamma(mesh)
    mixed = grid_group(grid((8, 16), (False, True)))
    assert mixed.order == 16 * 4
