"""The healthy trees the local LP keeps: what the healthy solve builds, unless its schedule would be too large."""

import numpy as np

import synth.solving.reference as reference
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus


def _damaged(shape):
    t = parse_torus(shape)
    return damage(t, parse_failures(t, links=["0-1"]))


def test_an_equal_sided_torus_keeps_sp_allreduce_by_gamma():
    ref = reference.healthy_reference(_damaged("4x4x4"))
    assert ref.what == "SP-allreduce lifted by Γ" and ref.table.shape == (6, 64) and np.all(ref.weight == 1)


def test_sides_that_differ_keep_the_balanced_family_unless_it_is_too_large(monkeypatch):
    ref = reference.healthy_reference(_damaged("4x6x8"))
    assert ref.what.startswith("the balanced family of the healthy solve, 3 tree(s)")
    assert ref.table.shape == (6, 192)      # three trees and their negations
    assert reference.family_sends(parse_torus("4x6x8"), 6) == 2 * 6 * 192 * 191
    monkeypatch.setattr(reference, "FAMILY_MAX_SENDS", reference.family_sends(parse_torus("4x6x8"), 6) - 1)
    ref = reference.healthy_reference(_damaged("4x6x8"))
    assert ref.what.startswith("SP-allreduce lifted by translations-negation") and "unbalanced here" in ref.what
    assert ref.table.shape == (2, 192)
