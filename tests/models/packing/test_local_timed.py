"""The local timed trees: healthy trees kept outside the damaged region, a master LP inside it."""

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from synth.check.claims import certify
from synth.models.packing import local_timed as lt
from synth.models.packing.region import damaged_region, healthy_parents, point_group
from synth.schedule.sp import bfs_parents
from synth.symmetry.spec import default_group
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus


def _damaged(shape, links=(), nodes=()):
    t = parse_torus(shape)
    d = damage(t, parse_failures(t, links=list(links), nodes=list(nodes)))
    return t, d, default_group(d)


def test_healthy_parents_translate_the_sp_tree():
    t = parse_torus("6x6")
    mats = point_group(t, None)
    par0 = bfs_parents(t, 0)
    got = healthy_parents(t, np.arange(36), np.array([0]), mats, np.array([0]))[0]
    assert np.array_equal(got, par0)
    # owner 7, a rotated tree: every parent is a neighbour one hop closer to the owner
    for k in range(len(mats)):
        p = healthy_parents(t, np.arange(36), np.array([7]), mats, np.array([k]))[0]
        v = np.flatnonzero(p >= 0)
        assert np.all(t.dist(v, p[v]) == 1) and np.all(t.dist(p[v], 7) == t.dist(v, 7) - 1)
        assert p[7] == -1


def test_region_holds_every_vertex_whose_distance_changed():
    t, d, g = _damaged("6x6", links=["0-1"])
    free, halo = damaged_region(d, g, radius=1)
    for r in range(36):
        changed = d.bfs([r]) != t.dist(np.arange(36), r)
        assert np.all(free[changed])
    assert not np.any(free & halo)


@pytest.mark.parametrize("shape,links,nodes", [("6x6", ["0-1"], []), ("6x6", [], ["7"])])
def test_schedule_certifies_and_meets_its_lp(shape, links, nodes):
    _, d, g = _damaged(shape, links, nodes)
    sol = lt.solve_local_timed(d, g, extra=2, radius=1, time_limit=30)
    base = lt.round_local_timed(sol, units=256)
    c = certify(base, g, provenance={"algorithm": "local-timed-packing", "group": g.name, "seed": None})
    frac = float(Fraction(c.claims["bandwidth_fraction"]))
    # the certified schedule is the LP's columns rounded: within the rounding's loss of the LP's value
    assert abs(frac - sol.fraction) < 0.01
    assert sol.fraction > 0.75


def test_far_rows_matter():
    """Knocked out (the far links' loads taken as zero), the LP claims more than its schedule reaches."""
    _, d, g = _damaged("6x6", links=["0-1"])
    orig = lt._far_loads
    try:
        lt._far_loads = lambda *a: np.zeros_like(orig(*a))
        sol = lt.solve_local_timed(d, g, extra=2, radius=1, time_limit=30)
    finally:
        lt._far_loads = orig
    base = lt.round_local_timed(sol, units=256)
    c = certify(base, g, provenance={"algorithm": "x", "group": g.name, "seed": None})
    assert float(Fraction(c.claims["bandwidth_fraction"])) < sol.fraction - 0.05


@pytest.mark.parametrize("shape", ["6x6", "5x5", "4x4x4"])
def test_sp_reference_is_the_lifted_schedule(shape):
    from synth.models.packing.local import reference_fractions
    from synth.models.packing.region import TreeReference, is_sp_gamma
    from synth.schedule.sp import sp_allreduce
    from synth.symmetry.torus import torus_gamma, torus_translations

    t = parse_torus(shape)
    V = t.n_vertices
    lifted = reference_fractions(sp_allreduce(t), torus_gamma(t))
    r = np.repeat(np.arange(V), t.n_links)
    c, p = np.tile(t.link_src, V), np.tile(t.link_dst, V)
    assert np.array_equal(TreeReference.sp_gamma(t).lookup(r, c, p), lifted.lookup(r, c, p))
    assert is_sp_gamma(sp_allreduce(t), torus_gamma(t))
    assert not is_sp_gamma(sp_allreduce(t), torus_translations(t))
    assert not is_sp_gamma(sp_allreduce(t, root=1), torus_gamma(t))


@pytest.mark.parametrize("shape", ["3x4", "4x6", "3x4x5"])
@pytest.mark.parametrize("negation", [True, False])
@pytest.mark.parametrize("family", [True, False])
def test_family_reference_is_the_lifted_family(shape, negation, family):
    # the balanced family of a torus whose sides differ, or SP-allreduce (rooted off the origin), lifted by its
    # translations (and negation): every (owner, child, parent) triple, arcs or not, against the brute-force lift
    from synth.models.packing.local import reference_fractions
    from synth.models.packing.region import TreeReference
    from synth.schedule.sp import sp_allreduce
    from synth.solving.balanced import balanced_family
    from synth.symmetry.torus import torus_translations, torus_translations_negation

    t = parse_torus(shape)
    g = (torus_translations_negation if negation else torus_translations)(t)
    base = balanced_family(t, g, False, 10.0, 0)[0] if family else sp_allreduce(t, root=5)
    V = t.n_vertices
    r, c, p = (a.ravel() for a in np.meshgrid(np.arange(V), np.arange(V), np.arange(V), indexing="ij"))
    want = reference_fractions(base, g).lookup(r, c, p)
    assert np.allclose(TreeReference.lifted(base, g).lookup(r, c, p), want, atol=1e-12, rtol=0)
    assert want.sum() == pytest.approx(V * (V - 1))


@pytest.mark.parametrize("shape", ["6x6", "4x4x4"])
def test_sp_gamma_is_recognised_in_a_certificate_read_back(shape, tmp_path):
    """A certificate lists a tree's sends vertex by vertex (tree form): the same schedule, rows reordered."""
    from synth.check.certificate import read_certificate, write_certificate
    from synth.models.packing.region import is_sp_gamma
    from synth.schedule.sp import sp_allreduce
    from synth.solving import solve

    t = parse_torus(shape)
    path = tmp_path / "sp.json"
    write_certificate(solve(t).certificate, path)
    back = read_certificate(path)
    assert not np.array_equal(back.base.src, sp_allreduce(t).src)      # the order differs: the test's point
    assert is_sp_gamma(back.base, back.group)
    one_off = dataclasses.replace(back.base, round=np.where(np.arange(back.base.n_transmissions) == 0,
                                                            back.base.round + 1, back.base.round))
    assert not is_sp_gamma(one_off, back.group)
