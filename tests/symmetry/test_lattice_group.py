"""Closed-form groups of lattice tori and grids, against brute force."""

import itertools

import networkx as nx
import numpy as np
import pytest
from _lattice_brute import in_lattice as _in_lattice  # tests/_lattice_brute.py
from networkx.algorithms.isomorphism import GraphMatcher

from synth.errors import GroupError
from synth.symmetry.lattice import (automorphism_order, grid_group, lattice_gamma, lattice_group,
                                    lattice_stabilizer, lattice_translations, lattice_translations_negation,
                                    point_group)
from synth.symmetry.residual import fixing
from synth.symmetry.spec import default_group, named_group
from synth.topology.failures import damage, parse_failures
from synth.topology.machines import machine_spec
from synth.topology.spec import build_topology
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


@pytest.mark.parametrize("make", [
    lambda: twisted((3, 6)), lambda: parse_lattice("5,2;0,5"), lambda: grid((3, 4), (False, False)),
    lambda: grid((3, 5), (False, True)), lambda: grid((2, 3, 2), (True, True, True)), lambda: grid((3, 4), (True, True)),
])
@pytest.mark.parametrize("what", ["link", "node", "both"])
def test_stabilizer_of_failures_against_networkx(make, what):
    # every automorphism of the healthy graph that fixes the failure set (networkx enumerates them all; on
    # these graphs the closed-form group is the whole automorphism group) is one lattice_stabilizer finds
    t = make()
    u, v = int(t.link_src[1]), int(t.link_dst[1])
    f = parse_failures(t, links=[f"{u}-{v}"] if what != "node" else [],
                       nodes=[str(t.n_vertices - 1)] if what != "link" else [])
    g = nx.Graph()
    g.add_edges_from(zip(t.link_src.tolist(), t.link_dst.tolist()))
    brute = set()
    for m in GraphMatcher(g, g).isomorphisms_iter():
        p = np.array([m[x] for x in range(t.n_vertices)])
        if fixing(p[None, :], f).shape[0]:
            brute.add(tuple(p.tolist()))
    got = {tuple(p) for p in lattice_stabilizer(t, f).tolist()}
    assert got == brute


def test_a_damaged_tofu_job_keeps_a_group_that_numbers_chunks():
    # the Tofu-D job 2x2x2 minus a link of a b ring: 240 automorphisms fix it, but every link then has a
    # nontrivial stabilizer; the residual group is the largest greedy subgroup that lifts (24 elements)
    t = build_topology(machine_spec("tofu-d:2x2x2"))
    f = parse_failures(t, links=["0.0.0.0.0.0-0.0.0.0.1.0"])
    assert lattice_stabilizer(t, f).shape[0] == 240
    g = default_group(damage(t, f))
    assert g.order == 24 and g.name.startswith("residual(automorphisms(")
    assert lattice_gamma(t).order == 96                # translations only: their residual is trivial
