"""The JAX executor's tables (numpy only, no JAX): permutations, padding, and a numpy run of the tables.

Allreduce, reduce-scatter and allgather: each run checks the exact result modulo 2^64."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from synth.baselines import BASELINES, build_baseline
from synth.baselines.gpu import two_servers_example
from synth.topology.user import topology_from_json

GPU_BASELINES = ("nccl-ring", "nccl-tree", "hierarchical")
from synth.errors import ScheduleError
from synth.runtime.jax.tables import build_tables, split_permutations
from synth.runtime.plan import load_schedule
from synth.schedule import Block, Schedule
from synth.solving import solve
from synth.topology.hyperx import parse_hyperx
from synth.topology.spineleaf import parse_spine_leaf
from synth.topology.torus import parse_torus

INSTANCES = "instances/torus/"


def run_tables(tab, x):
    """The executor's semantics on numpy: one element per row, ``x`` of shape (p, W), int64 (wraps)."""
    p, W = tab.n_devices, tab.n_rows
    dev = np.arange(p)[:, None]
    state = np.concatenate([x, np.zeros((p, 1), dtype=x.dtype)], axis=1)  # and the trash row
    for rt in tab.rounds:
        sent = state[dev, rt.send]
        got = np.zeros_like(sent)
        for pairs, off, length in rt.perms:
            s, d = np.array(pairs).T
            got[d, off:off + length] = sent[s, off:off + length]
        if rt.add is not None:
            np.add.at(state, (np.broadcast_to(dev, rt.add.shape), rt.add), got)
        if rt.put is not None:
            state[dev, rt.put] = got
    return state[:, :W]


def _build(name, root):
    """Every kind of schedule synth writes: baselines on 4x4, SP / exchange / k-hop / rectangular / HyperX /
    spine-leaf at 16 and 64 devices, and SP on 16x16 (256)."""
    t44 = parse_torus("4x4")
    if name in GPU_BASELINES:      # defined on fabrics with link bandwidths: two servers of four GPUs
        return build_baseline(name, topology_from_json(two_servers_example()))
    if name in BASELINES:
        return build_baseline(name, t44)
    built = {
        "sp-4x4": lambda: solve(t44).certificate, "exchange-4x4": lambda: solve(t44, exchange=True).certificate,
        "bucket-8x8": lambda: build_baseline("bucket", parse_torus("8x8")),
        "rect-16x4": lambda: solve(parse_torus("16x4")).certificate,
        "hyperx-8x8": lambda: solve(parse_hyperx("8x8")).certificate,
        "spine-leaf-4,16,4": lambda: solve(parse_spine_leaf("4,16,4")).certificate,
        "recursive-doubling-spine-leaf": lambda: build_baseline("recursive-doubling", parse_spine_leaf("4,4,4")),
    }
    return built[name]() if name in built else root / INSTANCES / f"{name}.json"


NAMES = sorted(BASELINES) + ["sp-4x4", "exchange-4x4", "khop-8x8-k3", "sp-4x4x4", "exchange-8x8", "bucket-8x8",
                             "rect-16x4", "hyperx-8x8", "spine-leaf-4,16,4", "recursive-doubling-spine-leaf",
                             pytest.param("sp-16x16", marks=pytest.mark.slow)]


@pytest.fixture(scope="module")
def case(pytestconfig):
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = build_tables(_build(name, pytestconfig.rootpath))
        return cache[name]
    return get


@pytest.mark.parametrize("name", NAMES)
def test_tables_compute_the_exact_sum_in_the_fewest_permutations(case, name):
    tab = case(name)
    assert tab.n_permutations == tab.permutation_lower_bound  # König: the busiest device's partners per round
    for rt in tab.rounds:
        for t in (rt.send, rt.add, rt.put):  # the executor promises XLA in-bounds rows: 0..W (W the trash row)
            assert t is None or (t.dtype == np.int32 and t.min() >= 0 and t.max() <= tab.n_rows)
        offs = [off for _, off, _ in rt.perms]
        assert offs == sorted(offs) and rt.perms[-1][1] + rt.perms[-1][2] == rt.length
        for pairs, _, _ in rt.perms:  # a permutation: no device sends twice, none receives twice
            s, d = np.array(pairs).T
            assert np.unique(s).size == s.size and np.unique(d).size == d.size
    x = np.random.default_rng(0).integers(-2**62, 2**62, size=(tab.n_devices, tab.n_rows))
    assert (run_tables(tab, x) == x.sum(axis=0)[None]).all()  # exact modulo 2^64


def test_symmetric_schedules_need_no_padding(case):
    for name in ("sp-4x4", "exchange-8x8", "khop-8x8-k3", "bucket-8x8", "hyperx-8x8"):
        assert case(name).padding == 1.0, name


def test_a_lost_transmission_gives_a_wrong_sum():
    sched, w, _ = load_schedule(solve(parse_torus("4x4")).certificate)
    b = sched.blocks[2]
    blocks = list(sched.blocks)
    blocks[2] = Block(b.round, b.op, b.chunk[1:], b.links[1:])
    bad = build_tables((Schedule(sched.topology, sched.n_chunks, sched.n_rounds, tuple(blocks)), w))
    x = np.random.default_rng(1).integers(0, 2**40, size=(bad.n_devices, bad.n_rows))
    assert not (run_tables(bad, x) == x.sum(axis=0)[None]).all()


def test_weights_become_rows_in_layout_order():
    b = build_baseline("ring", parse_torus("3"))
    tab = build_tables((b.schedule, np.array([1, 2, 3, 1, 2, 3])))
    assert tab.n_rows == 12 and tab.row_length(25) == 3 and tab.row_length(0) == 1
    x = np.arange(3 * 12).reshape(3, 12)
    assert (run_tables(tab, x) == x.sum(axis=0)).all()


@pytest.mark.parametrize("seed", range(20))
def test_split_permutations_uses_max_degree_colours(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 30))
    pairs = {(int(a), int(b)) for a, b in rng.integers(0, n, size=(int(rng.integers(1, 4 * n)), 2)) if a != b}
    src, dst = np.array(sorted(pairs)).T
    lengths = rng.integers(1, 4, size=src.size)
    colour = split_permutations(src, dst, lengths)
    degree = max(np.bincount(src).max(), np.bincount(dst).max())
    assert colour.max() + 1 == degree
    for c in range(degree):
        assert np.unique(src[colour == c]).size == (colour == c).sum()
        assert np.unique(dst[colour == c]).size == (colour == c).sum()


def test_split_permutations_refuses_a_repeated_pair():
    with pytest.raises(ScheduleError, match="repeats"):
        split_permutations([0, 0], [1, 1])


def run_collective(tab, x, seed=0):
    """:func:`run_tables` for a reduce-scatter or allgather: ``x`` (p, W) the devices' inputs, one element a row.

    A reduce-scatter starts from the whole input; an allgather from the device's own block, every other
    row random (its value is undefined, so nothing may depend on it).  Returns the final (p, W) rows.
    """
    p, W, R = tab.n_devices, tab.n_rows, tab.block_rows
    dev = np.arange(p)[:, None]
    if tab.collective == "allgather":
        start = np.random.default_rng(seed).integers(-2**62, 2**62, size=x.shape)
        own = np.arange(W)[None, :] // R == dev
        start[own] = x[own]
    else:
        start = x
    return run_tables(tab, start)


def _collective_source(name, collective):
    """Tiny instances of both collectives: tori 3x3, 4x4, 4x3 (rectangular), the hypercube 2x2x2 (a torus
    side must be 3 or more: HyperX 2x2x2 is that cube), HyperX 3x3, spine-leaf, baseline halves, and the
    ring's halves with uneven weights (devices owning different weights: blocks of R rows cut unevenly)."""
    from synth.baselines.halves import baseline_half

    torus = {"3x3": "3x3", "4x4": "4x4", "4x3": "4x3"}
    if name in torus:
        return solve(parse_torus(torus[name]), collective=collective).certificate
    if name == "hypercube-2x2x2":
        return solve(parse_hyperx("2x2x2"), collective=collective).certificate
    if name == "hyperx-3x3":
        return solve(parse_hyperx("3x3"), collective=collective).certificate
    if name.startswith("spine-leaf-"):
        return solve(parse_spine_leaf(name[len("spine-leaf-"):]), collective=collective).certificate
    if name.endswith("-instance"):  # a certified instance of instances/<collective>/
        return Path(__file__).resolve().parents[3] / "instances" / collective / f"{name[:-len('-instance')]}.json"
    if name == "ring-3-uneven":
        half = baseline_half(build_baseline("ring", parse_torus("3")), collective)
        return half.schedule, np.array([1, 1, 1, 3, 1, 1])
    base, shape = name.rsplit("-", 1)
    return baseline_half(build_baseline(base, parse_torus(shape)), collective)


COLLECTIVE_NAMES = ["3x3", "4x4", "4x3", "hypercube-2x2x2", "hyperx-3x3", "spine-leaf-2,4,2", "spine-leaf-4,4,4",
                    "ring-4x4", "bucket-4x4", "halving-doubling-4x4", "ring-3-uneven",
                    pytest.param("sp-16x16-instance", marks=pytest.mark.slow),
                    pytest.param("windmill-32x32-instance", marks=pytest.mark.slow)]


@pytest.mark.parametrize("collective", ["reduce-scatter", "allgather"])
@pytest.mark.parametrize("name", COLLECTIVE_NAMES)
def test_collective_tables_leave_every_block_exact_in_the_fewest_permutations(name, collective):
    tab = build_tables(_collective_source(name, collective))
    p, W, R = tab.n_devices, tab.n_rows, tab.block_rows
    assert tab.collective == collective and R >= 1 and W == p * R
    assert tab.n_permutations == tab.permutation_lower_bound
    for rt in tab.rounds:
        for t in (rt.send, rt.add, rt.put):
            assert t is None or (t.dtype == np.int32 and t.min() >= 0 and t.max() <= W)
        if collective == "allgather":
            assert rt.add is None  # copies only
    x = np.random.default_rng(2).integers(-2**62, 2**62, size=(p, W))
    out = run_collective(tab, x)
    if collective == "reduce-scatter":  # device r's own R rows hold the sum; the rest may hold anything
        mine = out.reshape(p, p, R)[np.arange(p), np.arange(p)]
        assert (mine == x.sum(axis=0).reshape(p, R)).all()
    else:  # every device holds every device's own block, copied
        gathered = x.reshape(p, p, R)[np.arange(p), np.arange(p)].reshape(-1)
        assert (out == gathered[None]).all()


def test_the_blocks_of_uneven_owners_have_equal_rows():
    tab = build_tables(_collective_source("ring-3-uneven", "reduce-scatter"))
    assert tab.block_rows == 4 and tab.n_rows == 12  # device 0 owns weight 1 + 3, the others 1 + 1
    assert tab.row_length(3 * 4 * 5) == 5 and tab.row_length(3 * 7) == 2


@pytest.mark.parametrize("collective", ["reduce-scatter", "allgather"])
def test_a_lost_transmission_leaves_a_block_wrong(collective):
    sched, w, _ = load_schedule(_collective_source("3x3", collective))
    blocks = list(sched.blocks)
    b = blocks[-1]
    blocks[-1] = Block(b.round, b.op, b.chunk[1:], b.links[1:])
    bad = build_tables((replace(sched, blocks=tuple(blocks)), w))
    p, R = bad.n_devices, bad.block_rows
    x = np.random.default_rng(3).integers(0, 2**40, size=(p, bad.n_rows))
    out = run_collective(bad, x)
    if collective == "reduce-scatter":
        assert not (out.reshape(p, p, R)[np.arange(p), np.arange(p)] == x.sum(axis=0).reshape(p, R)).all()
    else:
        assert not (out == x.reshape(p, p, R)[np.arange(p), np.arange(p)].reshape(-1)[None]).all()


def test_the_certified_instances_build_and_a_node_without_a_block_is_refused():
    root = Path(__file__).resolve().parents[3] / "instances"
    for kind in ("reduce-scatter", "allgather"):
        tab = build_tables(root / kind / "sp-8x8.json")
        assert (tab.collective, tab.n_devices, tab.n_rounds, tab.block_rows) == (kind, 64, 8, 4)
    sched, w, _ = load_schedule(_collective_source("ring-4x4", "reduce-scatter"))
    lonely = replace(sched, owner=np.where(sched.owner == 5, 6, sched.owner))
    with pytest.raises(ScheduleError, match="compute node 5 owns no chunk"):
        build_tables((lonely, w))
