"""Closed-form group orders (synth.symmetry.affine) against the Schreier check they replace."""

import numpy as np
import pytest

from synth.errors import GroupError
from synth.symmetry.group import Group
from synth.symmetry.lattice import grid_group, lattice_gamma, lattice_translations_negation
from synth.symmetry.torus import torus_gamma, torus_translations, torus_translations_negation
from synth.topology.lattice import grid, lattice_torus, twisted
from synth.topology.machines import machine_spec
from synth.topology.spec import build_topology
from synth.topology.torus import parse_torus

GROUPS = [(torus_gamma, parse_torus("4x4")), (torus_gamma, parse_torus("3x3x3")),
          (torus_translations_negation, parse_torus("4x6")), (torus_translations, parse_torus("3x5")),
          (lattice_gamma, twisted((4, 8))), (lattice_gamma, twisted((4, 4, 8))),
          (lattice_translations_negation, lattice_torus(((4, 1), (0, 4)))),
          (grid_group, grid((4, 6), (False, True))), (grid_group, grid((3, 4, 5), (False, False, False))),
          (lattice_gamma, build_topology(machine_spec("tofu-d:2x3x2")))]


@pytest.mark.parametrize("build, t", GROUPS, ids=lambda x: getattr(x, "name", getattr(x, "__name__", "")))
def test_closed_form_order_is_the_schreier_checked_one(build, t):
    g = build(t)
    checked = Group.from_generators(t, g.generators, g.name, g.spec)      # Schreier's lemma, no closed form
    assert g.order == checked.order
    assert np.array_equal(g.link_orbit, checked.link_orbit)


def test_a_wrong_order_is_caught():
    """Knock-out: a claimed order larger than the orbit of the base link is refused (stabilizer not trivial)."""
    g = torus_gamma(parse_torus("4x4"))
    with pytest.raises(GroupError, match="no link has a trivial stabilizer"):
        Group.from_generators(g.topology, g.generators, g.name, g.spec, order=2 * g.order)


def test_a_group_with_a_nontrivial_link_stabilizer_is_refused():
    """The whole square group on a 4x4 torus (translations, the swap, a reflection): every link is fixed by
    a reflection, so the orbits (64 links) fall short of |T| |H| = 16 * 8 and both checks refuse it."""
    from synth.symmetry.affine import affine_order

    t = parse_torus("4x4")
    c = t.coords(np.arange(16))
    gens = np.stack([t.vertex(c + [1, 0]), t.vertex(c[:, ::-1]), t.vertex(c * [1, -1])])
    order = affine_order(t, [((1, 0), (1, 1)), ((0, 1), (1, -1))])
    assert order == 128
    for claimed in (order, None):
        with pytest.raises(GroupError, match="trivial stabilizer"):
            Group.from_generators(t, gens, "square", {"kind": "test"}, order=claimed)
