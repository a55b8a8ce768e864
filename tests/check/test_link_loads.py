"""Per-link round loads (synth.check.metrics.link_loads_*): symmetric equals explicit, equal or unequal chunks,
every round or a few; their maxima and sums are what measure_* reports."""

import numpy as np
import pytest

from synth.check.metrics import link_loads_explicit, link_loads_symmetric, measure_explicit
from synth.errors import ScheduleError
from synth.schedule.lift import lift, lifted_chunk_elements
from synth.schedule.sp import sp_allreduce
from synth.symmetry.torus import torus_gamma
from synth.topology.torus import parse_torus


@pytest.mark.parametrize("shape, elements", [("4x4", 64), ("5x5", 50 * 3 + 7), ("3x3x3", 162 * 2 + 1)])
def test_symmetric_loads_are_the_explicit_ones(shape, elements):
    t = parse_torus(shape)
    g, b = torus_gamma(t), sp_allreduce(t)
    sizes = lifted_chunk_elements(b, g, elements)  # some sizes unequal when elements is not a multiple of |G|
    schedule = lift(b, g)
    explicit = link_loads_explicit(schedule, sizes)
    assert np.array_equal(link_loads_symmetric(b, g, sizes), explicit)
    m = measure_explicit(schedule, sizes)
    assert tuple(explicit.max(axis=1).tolist()) == m.max_load and tuple(explicit.sum(axis=1).tolist()) == m.total_load
    picked = (b.n_rounds, 2)
    assert np.array_equal(link_loads_symmetric(b, g, sizes, picked), explicit[[b.n_rounds - 1, 1]])
    assert np.array_equal(link_loads_explicit(schedule, sizes, picked), explicit[[b.n_rounds - 1, 1]])
    with pytest.raises(ScheduleError, match="rounds must lie"):
        link_loads_symmetric(b, g, sizes, (0,))
