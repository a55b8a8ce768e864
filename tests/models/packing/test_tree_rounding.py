"""The rounding of the local LP onto the healthy trees: SP-allreduce lifted by Γ and balanced families."""

from fractions import Fraction

import numpy as np
import pytest

from synth.check.claims import certify
from synth.models.packing.layered import layered_arcs
from synth.models.packing.local import solve_local
from synth.models.packing.region import TreeReference
from synth.models.packing.tree_rounding import MIN_SHARE, block_starts, round_on_trees
from synth.solving.balanced import balanced_family
from synth.symmetry.spec import default_group
from synth.symmetry.torus import torus_translations_negation
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus


def _reference(t, family):
    if not family:
        return TreeReference.sp_gamma(t)
    g = torus_translations_negation(t)
    return TreeReference.lifted(balanced_family(t, g, False, 10.0, 0)[0], g)


def _relative_tree(t, parent, owner):
    """``parent`` (one component's parents) translated so ``owner`` is vertex 0, ``-2`` at the owner."""
    x = t.coords(np.arange(t.n_vertices))
    s = t.coords(int(owner))
    rel = np.full(t.n_vertices, -2, dtype=np.int64)
    has = parent >= 0
    u = t.vertex((x - s) % t.sides)
    rel[u[has]] = t.vertex((t.coords(parent[has]) - s) % t.sides)
    return rel


def test_blocks_split_units_by_weight_exactly():
    # equal weights: floor(n k / K), what the blocks of SP-allreduce's 2d trees always were; unequal: by weight
    n = np.arange(0, 50)
    assert np.array_equal(block_starts(n, np.ones(6)), (n[:, None] * np.arange(1, 6)[None]) // 6)
    got = block_starts(n, np.array([3.0, 1.0, 4.0]))
    assert np.array_equal(got, np.stack([(3 * n) // 8, (4 * n) // 8], axis=1))
    sizes = np.diff(np.c_[np.zeros(n.size, dtype=np.int64), got, n], axis=1)
    assert np.all(sizes >= 0) and np.all(np.abs(sizes - n[:, None] * np.array([3, 1, 4]) / 8) < 1)


@pytest.mark.parametrize("shape, family", [("6x6", False), ("4x6", True), ("4x6x8", True)])
def test_components_are_healthy_trees_changed_only_at_free_pairs(shape, family):
    # every component is its owner's translation of the tree its block names, except at the LP's free pairs;
    # each owner's units split over the trees by their weights, and the certified term meets the LP's value
    t = parse_torus(shape)
    d = damage(t, parse_failures(t, links=["0-1"]))
    ref = _reference(t, family)
    sol = solve_local(layered_arcs(d, default_group(d)), ref, radius=1)
    base, images = round_on_trees(sol, ref, units=256)
    data = sol.data
    parent = images.trees[0]
    free = np.zeros((data.n_roots, t.n_vertices), dtype=bool)
    free[data.root[sol.free], data.child[sol.free]] = True
    owner_index = np.searchsorted(data.roots, images.shift)
    assert np.array_equal(data.roots[owner_index], images.shift)
    table = ref.table
    for c in range(images.of.size):
        rel = _relative_tree(t, parent[c], images.shift[c])
        x = t.coords(np.arange(t.n_vertices))
        u = t.vertex((x - t.coords(int(images.shift[c]))) % t.sides)   # vertex v is u[v] relative to the owner
        differs = rel[u] != table[images.of[c]][u]
        assert not np.any(differs & ~free[owner_index[c]]), c
    w = np.asarray(base.weights, dtype=np.int64)
    K = table.shape[0]
    for r in range(data.n_roots):
        mine = images.shift == data.roots[r]
        per_tree = np.bincount(images.of[mine], weights=w[mine], minlength=K)
        total = per_tree.sum()
        assert np.all(np.abs(per_tree - total * ref.weight / ref.weight.sum()) < 1 + 256 // MIN_SHARE)
    # no sliver beside a block's start (a free pair's cut one unit away): a chunk of a few MiB keeps an element
    first = np.array([int(label.split("units ")[1].split("..")[0]) for label in base.labels])
    n_root = np.bincount(owner_index, weights=w, minlength=data.n_roots).astype(np.int64)
    starts = block_starts(n_root, ref.weight)
    at_block = (first > 0) & np.any(starts[owner_index] == first[:, None], axis=1)
    before = np.flatnonzero(at_block) - 1                    # components come in (owner, first unit) order
    assert at_block.any() and np.all(w[at_block] >= 256 // MIN_SHARE) and np.all(w[before] >= 256 // MIN_SHARE)
    cert = certify(base, data.group)
    assert float(Fraction(cert.claims["bandwidth_fraction"])) == pytest.approx(sol.fraction, rel=0.02)
