"""The JAX executor on 16 and 64 emulated CPU devices: exact sums and agreement with psum, inside jit; reduce-scatter
and allgather on 3, 8 and 9 against psum_scatter and all_gather.

The number of host devices is fixed when JAX's CPU backend starts, once per process.  This module
asks for 64 in the environment when it is imported, at collection, before any test of the
process runs (pytest-xdist workers collect every file before running any), so JAX starts with 64
whichever test first uses it; the 16-device cases run on the first 16.  Should JAX have started
earlier with fewer, the fixture fails saying so.
"""

import os

from synth.runtime.jax.devices import requested_host_devices

if requested_host_devices(os.environ) < 64:  # before JAX is imported anywhere in this process
    os.environ["JAX_NUM_CPU_DEVICES"] = "64"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

jax = pytest.importorskip("jax")

from synth.baselines import build_baseline  # noqa: E402
from synth.errors import OptionError  # noqa: E402
from synth.runtime.jax import allreduce_fn, build_tables, psum_fn  # noqa: E402
from synth.runtime.jax.devices import host_devices  # noqa: E402
from synth.solving import solve  # noqa: E402
from synth.topology.hyperx import parse_hyperx  # noqa: E402
from synth.topology.spineleaf import parse_spine_leaf  # noqa: E402
from synth.topology.torus import parse_torus  # noqa: E402

P = jax.P


@pytest.fixture(scope="module")
def cpu():
    devices = host_devices(64)
    if devices is None:
        pytest.fail("JAX started in this process with fewer than 64 host devices before this module could ask "
                    "for them (JAX_NUM_CPU_DEVICES=64 before the first JAX operation)")
    return devices


def _source(name, root):
    """The schedules: 16 devices on 4x4 (or 4 spines x 4 hosts), 64 devices from instances/ or 8x8."""
    t44 = parse_torus("4x4")
    table = {
        "sp-16": lambda: solve(t44).certificate,
        "exchange-16": lambda: solve(t44, exchange=True).certificate,
        "khop-16": lambda: solve(t44, depth=2, time_limit=5).certificate,
        "bucket-16": lambda: build_baseline("bucket", t44),
        "sp-64": lambda: root / "instances/torus/sp-8x8.json",
        "exchange-64": lambda: root / "instances/torus/exchange-8x8.json",
        "khop-64": lambda: root / "instances/torus/khop-8x8-k3.json",
        "bucket-64": lambda: build_baseline("bucket", parse_torus("8x8")),
        "hyperx-16": lambda: solve(parse_hyperx("4x4")).certificate,
        "spine-leaf-16": lambda: solve(parse_spine_leaf("4,4,4")).certificate,
        "recursive-doubling-16": lambda: build_baseline("recursive-doubling", parse_spine_leaf("4,4,4")),
        "ring-16": lambda: build_baseline("ring", t44),
        "swing-b-16": lambda: build_baseline("swing-b", t44),
        "swing-l-16": lambda: build_baseline("swing-l", t44),
        "trivance-l-16": lambda: build_baseline("trivance-l", t44),
        "halving-doubling-16": lambda: build_baseline("halving-doubling", t44),
        "rect-64": lambda: solve(parse_torus("16x4")).certificate,
        "hyperx-64": lambda: solve(parse_hyperx("8x8")).certificate,
        "spine-leaf-64": lambda: solve(parse_spine_leaf("4,16,4")).certificate,
        "sp-4x4x4-64": lambda: root / "instances/torus/sp-4x4x4.json",
    }
    return table[name]()


def _inputs(p, seed=0):
    """int32 over the whole range (sums wrap) and float32 holding small integers (sums exact)."""
    rng = np.random.default_rng(seed)
    ints = rng.integers(-2**31, 2**31, size=(p, 203), dtype=np.int64).astype(np.int32)
    floats = rng.integers(-2**16, 2**16, size=(p, 3, 37)).astype(np.float32)
    return {"i": ints, "f": floats}


def _check(name, cpu, root):
    tab = build_tables(_source(name, root))
    p = tab.n_devices
    mesh = jax.sharding.Mesh(np.array(cpu[:p]), ("x",))
    ours = allreduce_fn(tab, mesh, "x")
    ref = jax.shard_map(lambda v: jax.lax.psum(v, "x"), mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    both = jax.jit(lambda x: (ours(x), ref(x)))  # one compile: the schedule and psum on both dtypes
    x = _inputs(p)
    got, want = both(x)
    for k in x:
        exact = x[k].sum(axis=0, dtype=x[k].dtype)  # int32 wraps as every order of sums does; floats are exact
        assert np.array_equal(np.asarray(got[k]), np.broadcast_to(exact, x[k].shape)), (name, k)
        assert np.array_equal(np.asarray(got[k]), np.asarray(want[k])), (name, k)


@pytest.mark.parametrize("name", ["sp-16", "exchange-16", "khop-16", "bucket-16", "sp-64", "exchange-64", "khop-64",
                                  "bucket-64"])
def test_exact_sums_and_psum(cpu, pytestconfig, name):
    _check(name, cpu, pytestconfig.rootpath)


@pytest.mark.parametrize("name", ["hyperx-16", "spine-leaf-16", "recursive-doubling-16"])
def test_every_kind_on_16_devices(cpu, pytestconfig, name):
    _check(name, cpu, pytestconfig.rootpath)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ring-16", "swing-b-16", "swing-l-16", "trivance-l-16", "halving-doubling-16",
                                  "rect-64", "hyperx-64", "spine-leaf-64", "sp-4x4x4-64"])
def test_every_kind_on_64_devices(cpu, pytestconfig, name):
    _check(name, cpu, pytestconfig.rootpath)


def test_drop_in_for_psum_in_a_training_step(cpu):
    """psum_fn inside the user's own shard_map and jit, on a 2-D mesh (allreduce over one axis), on a pytree."""
    cert = solve(parse_torus("4x4")).certificate
    mesh = jax.sharding.Mesh(np.array(cpu[:64]).reshape(16, 4), ("data", "model"))
    allreduce = psum_fn(cert, "data")

    def step(params, grads, reduce):
        g = reduce(grads, "data")
        return jax.tree.map(lambda w, d: w - 0.5 * d, params, g), g["count"]

    def make(reduce):
        return jax.jit(jax.shard_map(lambda p_, g_: step(p_, g_, reduce), mesh=mesh,
                                     in_specs=(P(), P("data", "model")), out_specs=(P(), P()), check_vma=False))

    rng = np.random.default_rng(3)
    params = {"w": np.ones((8,), np.float32), "b": np.zeros((2, 3), np.float32), "count": np.int32(0)}
    grads = {"w": rng.integers(-8, 8, size=(16, 8 * 4)).astype(np.float32),
             "b": rng.integers(-8, 8, size=(16, 2 * 4, 3)).astype(np.float32),
             "count": np.ones((16, 4), np.int32)}
    ours = make(lambda g, ax: allreduce(g))
    ref = make(jax.lax.psum)
    (p1, c1), (p2, c2) = ours(params, grads), ref(params, grads)
    assert int(np.asarray(c1).ravel()[0]) == int(np.asarray(c2).ravel()[0]) == 16
    for k in params:
        assert np.array_equal(np.asarray(p1[k]), np.asarray(p2[k])), k


def test_refuses_a_mesh_of_the_wrong_size(cpu):
    cert = solve(parse_torus("4x4")).certificate
    mesh = jax.sharding.Mesh(np.array(cpu[:8]), ("x",))
    with pytest.raises(OptionError, match="axis_name 'x' has 8 devices; the schedule .* needs 16"):
        allreduce_fn(cert, mesh, "x")
    with pytest.raises(OptionError, match="not an axis of the mesh"):
        allreduce_fn(cert, mesh, "y")
    f = jax.jit(jax.shard_map(psum_fn(cert, "x"), mesh=mesh, in_specs=P("x"), out_specs=P("x")))
    with pytest.raises(OptionError, match="has 8 devices"):
        f(np.zeros((8, 4), np.float32))


def _half(name, collective, root=None):
    """Reduce-scatter and allgather schedules on 9 (torus 3x3) and 8 (spine-leaf 2,4,2) devices, the ring's
    halves on 3 with uneven weights (blocks of 4 rows cut unevenly); at 64 (slow) the certified instances
    of 8x8 and the halves of k-hop trees, bucket, HyperX and spine-leaf."""
    from synth.baselines.halves import baseline_half

    made = {"sp-3x3": lambda: solve(parse_torus("3x3"), collective=collective).certificate,
            "spine-leaf-8": lambda: solve(parse_spine_leaf("2,4,2"), collective=collective).certificate,
            "sp-8x8-instance": lambda: root / "instances" / collective / "sp-8x8.json",
            "khop-8x8-k3": lambda: solve(parse_torus("8x8"), depth=3, time_limit=30, collective=collective).certificate,
            "bucket-8x8": lambda: baseline_half(build_baseline("bucket", parse_torus("8x8")), collective),
            "hyperx-64": lambda: solve(parse_hyperx("8x8"), collective=collective).certificate,
            "spine-leaf-64": lambda: solve(parse_spine_leaf("4,16,4"), collective=collective).certificate}
    if name in made:
        return made[name]()
    half = baseline_half(build_baseline("ring", parse_torus("3")), collective)
    return half.schedule, np.array([1, 1, 1, 3, 1, 1])


@pytest.mark.parametrize("name", ["sp-3x3", "spine-leaf-8", "ring-3-uneven",
                                  *(pytest.param(n, marks=pytest.mark.slow) for n in
                                    ("sp-8x8-instance", "khop-8x8-k3", "bucket-8x8", "hyperx-64", "spine-leaf-64"))])
def test_reduce_scatter_and_allgather_match_the_jax_primitives(cpu, pytestconfig, name):
    """Both halves in one jit, on a pytree of int32 (wrapping sums) and float32 leaves of several shapes:
    bit-exact against the exact blocks and against psum_scatter / all_gather (tiled)."""
    from synth.runtime.jax import all_gather_fn, psum_scatter_fn

    rs, ag = (build_tables(_half(name, c, pytestconfig.rootpath)) for c in ("reduce-scatter", "allgather"))
    p = rs.n_devices
    mesh = jax.sharding.Mesh(np.array(cpu[:p]), ("x",))
    ours_rs, ours_ag = psum_scatter_fn(rs, "x"), all_gather_fn(ag, "x")

    def both(x, blocks):
        return (ours_rs(x), jax.lax.psum_scatter(x, "x", tiled=True),
                ours_ag(blocks), jax.lax.all_gather(blocks, "x", tiled=True))

    f = jax.jit(jax.shard_map(lambda x, b: both(jax.tree.map(lambda v: v[0], x), jax.tree.map(lambda v: v[0], b)),
                              mesh=mesh, in_specs=(P("x"), P("x")), out_specs=P("x"), check_vma=False))
    rng = np.random.default_rng(4)
    x = {"i": rng.integers(-2**31, 2**31, size=(p, 5 * p), dtype=np.int64).astype(np.int32),
         "f": rng.integers(-2**16, 2**16, size=(p, 3 * p, 2)).astype(np.float32)}
    blocks = {"i": x["i"][:, :7], "f": x["f"][:, :1]}
    got_rs, ref_rs, got_ag, ref_ag = f(x, blocks)
    # out_specs P("x") concatenates the devices' results along axis 0, device 0 first
    for k in x:
        exact = x[k].sum(axis=0, dtype=x[k].dtype)  # device r's result: the r-th p-th of axis 0 of the sum
        got, ref = np.asarray(got_rs[k]), np.asarray(ref_rs[k])
        assert got.shape == ref.shape == exact.shape, (name, k)
        assert np.array_equal(got, exact) and np.array_equal(got, ref), (name, k)
        got, ref = np.asarray(got_ag[k]), np.asarray(ref_ag[k])
        gathered = np.concatenate(list(blocks[k]))  # every device's result: the blocks in device order
        assert got.shape == ref.shape == (p * gathered.shape[0],) + gathered.shape[1:], (name, k)
        assert np.array_equal(got, np.concatenate([gathered] * p)) and np.array_equal(got, ref), (name, k)


def test_each_collective_refuses_the_others_schedules_and_unsplittable_inputs(cpu):
    from synth.runtime.jax import all_gather_fn, collective_fn, psum_scatter_fn

    rs, ag = (_half("sp-3x3", c) for c in ("reduce-scatter", "allgather"))
    with pytest.raises(OptionError, match=r"reduce-scatter schedule .* run it with psum_scatter_fn"):
        psum_fn(rs, "x")
    with pytest.raises(OptionError, match=r"allgather schedule .* run it with all_gather_fn"):
        psum_scatter_fn(ag, "x")
    with pytest.raises(OptionError, match=r"allreduce schedule .* run it with psum_fn"):
        all_gather_fn(solve(parse_torus("3x3")).certificate, "x")
    mesh = jax.sharding.Mesh(np.array(cpu[:9]), ("x",))
    g = jax.jit(collective_fn(rs, mesh, "x"))
    with pytest.raises(OptionError, match="a leading axis of 10 does not split into the 9 devices' blocks"):
        g(np.zeros((9, 10), np.int32))
    with pytest.raises(OptionError, match="at least one dimension"):
        jax.jit(jax.shard_map(psum_scatter_fn(rs, "x"), mesh=mesh, in_specs=P(), out_specs=P("x")))(np.int32(1))
