"""The root stabilizer has one home, synth.symmetry.torus.root_stabilizer; the names the checker
(synth.check.bounds.root_stabilizer_perms, int64) and the models (synth.models.forest.instance)
import give the same permutations (the models' in the same order and dtype, the checker's as a set).
"""

import numpy as np
import pytest

from synth.check.bounds import root_stabilizer_perms
from synth.models.forest.instance import root_stabilizer as models_root_stabilizer
from synth.symmetry.torus import root_stabilizer
from synth.topology.torus import parse_torus


@pytest.mark.parametrize("shape", ["3", "4", "4x4", "3x5", "4x6", "5x5", "3x3x3", "4x4x6"])
def test_every_copy_gives_the_same_permutations(shape):
    t = parse_torus(shape)
    s = root_stabilizer(t)
    assert s.dtype == np.int32 and np.array_equal(s[0], np.arange(t.n_vertices))
    assert np.all(s[:, 0] == 0)                                        # each fixes the root
    assert np.array_equal(np.sort(s, axis=1), np.tile(np.arange(t.n_vertices), (len(s), 1)))  # permutations
    assert np.array_equal(s, models_root_stabilizer(t))  # the models' one copy (khop and xhop share it)
    checker = root_stabilizer_perms(t)
    assert {row.tobytes() for row in s.astype(np.int64)} == {row.tobytes() for row in checker}


def test_order_counts_equal_sides():
    assert len(root_stabilizer(parse_torus("4x4"))) == 8       # 2! * 2^2
    assert len(root_stabilizer(parse_torus("4x6"))) == 4       # 2^2
    assert len(root_stabilizer(parse_torus("5x5x5"))) == 48    # 3! * 2^3
