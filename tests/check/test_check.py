"""The checker against hand-built schedules, closed forms, and itself (explicit vs symmetric)."""

from fractions import Fraction

import numpy as np
import pytest

from synth.check import execute, measure_explicit, measure_symmetric, round_lower_bound
from synth.errors import ScheduleError
from synth.symmetry.torus import torus_gamma, torus_translations_negation
from synth.schedule.lift import lift, lifted_weights
from synth.schedule import COPY, REDUCE, Block, Schedule, chunk_elements, tree_schedule
from synth.schedule.sp import bfs_parents, sp_allreduce
from synth.topology.torus import parse_torus

from conftest import equal_sided_shapes


def ring3_schedule(blocks, n_chunks=1, rounds=2):
    t = parse_torus("3")
    return t, Schedule(t, n_chunks, rounds, tuple(blocks))


def blk(t, rnd, op, chunk, pairs):
    links = t.link_ids([u for u, _ in pairs], [v for _, v in pairs]).reshape(-1, 1)
    return Block(rnd, op, np.asarray(chunk, dtype=np.int32), links)


def test_hand_built_correct_schedule():
    t = parse_torus("3")  # ring 0-1-2: reduce into 0, then broadcast
    s = Schedule(t, 1, 2, (blk(t, 1, REDUCE, [0, 0], [(1, 0), (2, 0)]), blk(t, 2, COPY, [0, 0], [(0, 1), (0, 2)])))
    assert execute(s) == []
    m = measure_explicit(s, [6])
    assert (m.rounds, m.vol_abs, m.vol_phys, m.psi, m.theta) == (2, 24, 24, 1, 1)
    assert m.max_load == (6, 6) and m.total_load == (12, 12)
    assert m.omega == Fraction(6 * 12, 24)  # 2 of 6 links busy per round


def test_missing_contribution_is_caught():
    t = parse_torus("3")
    s = Schedule(t, 1, 2, (blk(t, 1, REDUCE, [0], [(1, 0)]), blk(t, 2, COPY, [0, 0], [(0, 1), (0, 2)])))
    assert any("node" in e for e in execute(s))


def test_double_count_is_caught():
    t = parse_torus("3")
    s = Schedule(t, 1, 3, (blk(t, 1, REDUCE, [0, 0], [(1, 0), (2, 0)]), blk(t, 2, REDUCE, [0], [(1, 0)]),
                           blk(t, 3, COPY, [0, 0], [(0, 1), (0, 2)])))
    assert execute(s)


def test_payload_is_start_of_round_value():
    # 2 -> 1 and 1 -> 0 in the same round: 0 must NOT get 2's input through 1
    t = parse_torus("3")
    s = Schedule(t, 1, 2, (blk(t, 1, REDUCE, [0, 0], [(2, 1), (1, 0)]), blk(t, 2, COPY, [0, 0], [(0, 1), (0, 2)])))
    assert execute(s)


def test_copy_conflicts_are_errors():
    t = parse_torus("3")
    base = [blk(t, 1, REDUCE, [0, 0], [(1, 0), (2, 0)])]
    two_copies = Schedule(t, 1, 2, tuple(base + [blk(t, 2, COPY, [0, 0, 0], [(0, 1), (0, 2), (2, 1)])]))
    assert any("two copies" in e for e in execute(two_copies))
    copy_and_reduce = Schedule(t, 1, 2, tuple(base + [blk(t, 2, COPY, [0, 0], [(0, 1), (0, 2)]),
                                                      blk(t, 2, REDUCE, [0], [(2, 1)])]))
    assert any("copy and a reduce" in e for e in execute(copy_and_reduce))


def test_malformed_routes_raise():
    t = parse_torus("4")
    bad_path = Block(1, REDUCE, np.zeros(1, np.int32), np.array([[0, 0]], np.int32))  # 0->1 then 0->1 again
    with pytest.raises(ScheduleError, match="not a path"):
        execute(Schedule(t, 1, 1, (bad_path,)))
    with pytest.raises(ScheduleError, match="chunk"):
        execute(Schedule(t, 1, 1, (Block(1, REDUCE, np.array([3], np.int32), np.array([[0]], np.int32)),)))


@pytest.mark.parametrize("shape", equal_sided_shapes(256))
def test_symmetric_agrees_with_explicit(shape):
    t = parse_torus(shape)
    g = torus_gamma(t)
    b = sp_allreduce(t)
    s = lift(b, g)
    assert execute(s) == []
    for n in (g.order, 3 * g.order + 5):  # uniform chunks, then a remainder spread over the chunks
        sizes = chunk_elements(lifted_weights(b, g), n)
        me, ms = measure_explicit(s, sizes), measure_symmetric(b, g, sizes)
        assert me == ms
    assert me.rounds == 2 * t.diameter
    assert ms.transmissions == g.order * 2 * (t.n_vertices - 1)


@pytest.mark.parametrize("shape", equal_sided_shapes(256))
def test_sp_is_fully_bandwidth_optimal_for_uniform_chunks(shape):
    t = parse_torus(shape)
    g = torus_gamma(t)
    b = sp_allreduce(t)
    m = measure_symmetric(b, g, chunk_elements(lifted_weights(b, g), 2 * g.order))
    assert (m.psi, m.theta, m.omega, m.weight) == (1, 1, 1, t.n_vertices - 1)


def test_remainder_makes_omega_honest():
    t = parse_torus("4x4")
    g, b = torus_gamma(t), sp_allreduce(t)
    m = measure_symmetric(b, g, chunk_elements(lifted_weights(b, g), g.order + 1))
    assert m.omega > 1 and m.psi == 1


@pytest.mark.parametrize("shape", ["3", "4", "7", "3x3", "4x4", "3x5", "4x6", "5x6", "3x3x3", "4x4x4", "3x4x5",
                                   "6x6x3"])
def test_round_lower_bound_closed_form(shape):
    t = parse_torus(shape)
    # closed form (docs/spec.md §3): every vertex has ecc H; a pair along dimension i has ecc H-1 iff n_i is even
    expect = 2 * t.diameter - 1 if any(n % 2 == 0 for n in t.shape) else 2 * t.diameter
    group = torus_gamma(t) if t.is_equal_sided else torus_translations_negation(t)
    assert round_lower_bound(t, group)[0] == expect
    assert round_lower_bound(t)[0] == expect  # brute force over every vertex and link


def test_tree_schedule_from_parents():
    t = parse_torus("5x5")
    b = tree_schedule(t, bfs_parents(t), 0)
    assert b.n_rounds == 2 * t.diameter
    assert b.n_transmissions == 2 * (t.n_vertices - 1)
    assert execute(b.as_schedule()) == []
    star = np.where(np.arange(25) == 0, -1, 0)
    s = tree_schedule(t, star, 0)  # depth 1, multi-hop routes
    assert s.n_rounds == 2 and execute(s.as_schedule()) == []
    assert measure_explicit(s.as_schedule(), [1]).weight == int(t.dist(0, np.arange(25)).sum())
    with pytest.raises(ScheduleError, match="cycle"):
        cyc = star.copy()
        cyc[1], cyc[2] = 2, 1
        tree_schedule(t, cyc, 0)


def test_chunk_elements_spread_remainder():
    sizes = chunk_elements([1] * 7, 100)
    assert sizes.sum() == 100 and sizes.max() - sizes.min() <= 1
    sizes = chunk_elements([1, 3], 10)
    assert sizes.tolist() == [2, 8]
