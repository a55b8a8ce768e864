"""Baselines as explicit schedules: exact execution, and the closed forms of paper Appendix C / docs/spec.md §7.

Every metric below is measured by the checker on the explicit schedule with
one element per unit of chunk weight, so chunks are exactly equal and the
fractions are the exact closed forms (no rounding anywhere).
"""

from fractions import Fraction

import numpy as np
import pytest

from synth.baselines import BASELINES, SUPPORTED, Baseline, build_baseline
from synth.baselines.ring import hamiltonian_cycles, hamiltonian_decomposition
from synth.baselines.swing import rho
from synth.check.claims import check_file
from synth.check import execute
from synth.errors import TopologyError
from synth.check.explicit import read_explicit, write_explicit
from synth.schedule import Schedule
from synth.topology import Topology
from synth.topology.torus import parse_torus

NAMES = ["ring", "bucket", "swing-l", "swing-b", "swing-l-1port", "trivance-l", "trivance-b", "recursive-doubling",
         "halving-doubling"]
#: the baselines of fabrics with link bandwidths (tests/baselines/test_gpu_baselines.py)
GPU_NAMES = ["nccl-ring", "nccl-tree", "hierarchical"]

# 1-D, 2-D and 3-D; powers of two and of three; even and odd others; unequal sides
SHAPES = ["3", "4", "6", "7", "9", "3x3", "4x4", "3x4", "4x6", "5x7", "6x6", "8x8", "9x9", "3x3x3", "4x4x4",
          "3x4x5"]


def measured(name, shape):
    b = build_baseline(name, parse_torus(shape))
    return b, b.measure()


# ------------------------------------------------------------------ registry
def test_registry_holds_the_twelve_baselines():
    assert sorted(BASELINES) == sorted(NAMES + GPU_NAMES)
    assert sorted(SUPPORTED) == sorted(NAMES + GPU_NAMES)
    assert all(isinstance(s, str) and "\n" not in s for s in SUPPORTED.values())


def test_unknown_name_is_a_topology_error():
    with pytest.raises(TopologyError, match="unknown baseline 'tree'; valid: bucket"):
        build_baseline("tree", parse_torus("4x4"))


def _star(hosts):
    """``hosts`` compute nodes around one switch (vertex ``hosts``)."""
    links = [(h, hosts) for h in range(hosts)] + [(hosts, h) for h in range(hosts)]
    return Topology.from_links("star", {"kind": "links"}, hosts + 1, links, compute=list(range(hosts)))


@pytest.mark.parametrize("name", [n for n in NAMES if "doubling" not in n])
def test_torus_algorithms_refuse_other_topologies_with_one_line(name):
    with pytest.raises(TopologyError) as exc:
        build_baseline(name, _star(4))
    msg = str(exc.value)
    assert "\n" not in msg and "defined on tori (any shape)" in msg and "spine-leaf" in msg and name in msg


@pytest.mark.parametrize("name", ["recursive-doubling", "halving-doubling"])
@pytest.mark.parametrize("hosts", [2, 3, 4, 5, 8])
def test_doubling_runs_on_any_topology(name, hosts):
    b = build_baseline(name, _star(hosts))
    assert execute(b.schedule) == []
    m = b.measure()
    q = hosts.bit_length() - 1
    extra = 0 if hosts == 1 << q else 2
    assert m.rounds == (q if name == "recursive-doubling" else 2 * q) + extra
    assert m.max_route == 2  # host -> switch -> host


def test_doubling_needs_two_nodes():
    with pytest.raises(TopologyError, match="at least 2 compute nodes"):
        build_baseline("recursive-doubling", _star(1))


# --------------------------------------------------------------- correctness
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", NAMES)
def test_every_baseline_is_a_correct_allreduce(name, shape):
    b = build_baseline(name, parse_torus(shape))
    assert isinstance(b, Baseline) and isinstance(b.schedule, Schedule) and b.name == name
    assert b.weights.dtype == np.int64 and b.weights.size == b.n_chunks and (b.weights >= 1).all()
    assert execute(b.schedule) == []
    assert b.measure().psi >= 1


@pytest.mark.parametrize("name", NAMES)
def test_a_dropped_or_doubled_transmission_is_caught(name):
    b = build_baseline(name, parse_torus("4x4"))
    blocks = list(b.schedule.blocks)
    i = max(range(len(blocks)), key=lambda k: len(blocks[k]))
    blk = blocks[i]
    dropped = type(blk)(blk.round, blk.op, blk.chunk[1:], blk.links[1:])
    broken = Schedule(b.schedule.topology, b.n_chunks, b.schedule.n_rounds,
                      tuple(blocks[:i] + [dropped] + blocks[i + 1:]))
    assert execute(broken)


def test_schedules_are_deterministic():
    t = parse_torus("5x6")
    for name in ("ring", "swing-b"):
        a, b = build_baseline(name, t).schedule, build_baseline(name, t).schedule
        assert len(a.blocks) == len(b.blocks)
        assert all(np.array_equal(x.chunk, y.chunk) and np.array_equal(x.links, y.links)
                   for x, y in zip(a.blocks, b.blocks))


# ---------------------------------------------------- Bucket, Ring (C.1, 2.4)
@pytest.mark.parametrize("shape", ["3", "5", "3x3", "4x4", "5x5", "7x7", "8x8", "9x9", "3x3x3", "4x4x4"])
def test_bucket_closed_form_on_equal_sides(shape):
    t = parse_torus(shape)
    n, d = t.shape[0], t.ndim
    _, m = measured("bucket", shape)
    assert m.rounds == 2 * d * (n - 1)
    assert (m.psi, m.theta, m.omega) == (1, 1, 1)
    assert m.max_route == 1


def test_bucket_on_unequal_sides_keeps_minimal_volume():
    b, m = measured("bucket", "3x6")
    # the reference's 4 stages, each as long as the longest ring (5 steps); the 3-ring idles 3 rounds of 5
    assert m.rounds == 4 * 5 and (m.psi, m.theta) == (1, 1) and m.omega > 1
    assert "idle" in b.notes


@pytest.mark.parametrize("shape", ["3", "6", "3x3", "3x4", "4x4", "5x7", "8x8", "9x9", "3x3x3", "4x4x4", "3x4x5"])
def test_ring_is_fully_bandwidth_optimal_in_2p_minus_2_rounds(shape):
    t = parse_torus(shape)
    _, m = measured("ring", shape)
    assert m.rounds == 2 * (t.n_vertices - 1)
    assert (m.psi, m.theta, m.omega) == (1, 1, 1)
    # every round: every directed link carries exactly one block
    assert set(m.max_load) == {1} and set(m.total_load) == {t.n_links}


@pytest.mark.parametrize("shape", ["3x3", "3x4", "4x7", "9x9", "3x3x3", "3x4x5", "3x3x3x3"])
def test_hamiltonian_decomposition(shape):
    t = parse_torus(shape)
    color = hamiltonian_decomposition(t)
    assert np.array_equal(np.bincount(color.ravel(), minlength=t.ndim), [t.n_vertices] * t.ndim)
    cycles = hamiltonian_cycles(t)
    used = set()
    for seq in cycles:
        assert sorted(seq.tolist()) == list(range(t.n_vertices))
        steps = t.dist(seq, np.roll(seq, -1))
        assert (steps == 1).all()  # consecutive vertices are neighbours
        for u, v in zip(seq.tolist(), np.roll(seq, -1).tolist()):
            used.add(frozenset((u, v)))
    assert len(used) == t.n_vertices * t.ndim  # every edge exactly once


# ----------------------------------------------------------- Swing (C.2, C.3)
def a_k(k):
    """|rho(k)| = (2^{k+1} + (-1)^k) / 3: the Swing partner distance at per-dimension step k."""
    return (2 ** (k + 1) + (-1) ** k) // 3


def A(m):
    """A_m = sum_{k<m} |rho(k)|.

    Derivation (paper Appendix C.3, docs/spec.md §7).  On a side n = 2^m each dimension
    gets m SwingL steps; at its k-th one every node exchanges its whole (part
    of the) vector with the node |rho(k)| = (2^{k+1} + (-1)^k)/3 away (1, 1, 3,
    5, 11, 21, ...), which is below n/2, so the shortest route has exactly that
    length.  All d*m steps move the same volume, so Theta is the mean route
    length d*A_m/(d*m) = A_m/m.  Summing the two geometric series,
    A_m = (2^{m+1} - 2 + (m mod 2)) / 3.
    """
    return (2 ** (m + 1) - 2 + m % 2) // 3


def F2(m, d):
    """Theta of SwingB on T_{2^m}^d (the paper's F_2): step s moves 2^-(s+1) of a port's data |rho(s//d)| hops."""
    num = sum(Fraction(a_k(s // d), 2 ** (s + 1)) for s in range(d * m))
    return num / (1 - Fraction(1, 2 ** (d * m)))


def test_rho_and_A():
    assert [rho(k) for k in range(6)] == [1, -1, 3, -5, 11, -21]
    assert all(abs(rho(k)) == a_k(k) for k in range(20))
    assert all(A(m) == sum(a_k(k) for k in range(m)) for m in range(1, 20))


@pytest.mark.parametrize("shape", ["4", "8", "16", "4x4", "8x8", "4x4x4"])
def test_swing_l_closed_form(shape):
    t = parse_torus(shape)
    n, d, p = t.shape[0], t.ndim, t.n_vertices
    mm = n.bit_length() - 1
    _, m = measured("swing-l", shape)
    assert m.rounds == d * mm  # log2 p
    assert m.psi == Fraction(p * d * mm, 2 * (p - 1))
    assert m.theta == Fraction(A(mm), mm)
    assert m.omega == 1  # plain + mirrored ports load both directions of each link equally


@pytest.mark.parametrize("shape", ["4", "8", "16", "4x4", "8x8", "4x4x4"])
def test_swing_b_closed_form(shape):
    t = parse_torus(shape)
    n, d = t.shape[0], t.ndim
    mm = n.bit_length() - 1
    _, m = measured("swing-b", shape)
    assert m.rounds == 2 * d * mm  # 2 log2 p
    assert m.psi == 1
    assert m.theta == F2(mm, d)
    assert m.omega == 1


def test_swing_b_theta_tends_to_the_paper_limit():
    for d in (2, 3, 4):
        limit = Fraction(2 ** d * (2 ** d - 1), (2 ** d - 2) * (2 ** d + 1))
        assert abs(F2(40, d) - limit) < Fraction(1, 10 ** 9)


def test_swing_on_other_sides():
    # even sides: swing-b runs ceil(log2 n) steps per side on the real ring, still minimal volume
    _, m = measured("swing-b", "6x10")
    assert m.rounds == 2 * (3 + 4) and m.psi == 1
    # odd sides are shrunk to the power of two below (2 extra rounds per shrunk side)
    _, m = measured("swing-l", "9x9")
    assert m.rounds == 6 + 2 * 2
    b, m = measured("swing-b", "9x9")
    assert m.rounds == 2 * 6 + 2 * 2 and "virtual 8x8" in b.notes


# -------------------------------------------------------------- Trivance (C.4)
def F3(t, d):
    """Theta of TrivanceB on T_{3^t}^d (the paper's F_3): step s sends 2*3^-(s+1) of a part 3^(s//d) hops."""
    num = sum(Fraction(2 * 3 ** (s // d), 3 ** (s + 1)) for s in range(d * t))
    return num / (1 - Fraction(1, 3 ** (d * t)))


@pytest.mark.parametrize("shape", ["3", "9", "27", "3x3", "9x9", "3x3x3"])
def test_trivance_l_closed_form(shape):
    t = parse_torus(shape)
    n, d, p = t.shape[0], t.ndim, t.n_vertices
    tt = round(np.log(n) / np.log(3))
    _, m = measured("trivance-l", shape)
    assert m.rounds == d * tt  # log3 p
    assert m.psi == Fraction(p * d * tt, p - 1)
    assert m.theta == Fraction(n - 1, 2 * tt)
    assert m.omega == 1


@pytest.mark.parametrize("shape", ["3", "9", "27", "3x3", "9x9", "3x3x3"])
def test_trivance_b_closed_form(shape):
    t = parse_torus(shape)
    n, d = t.shape[0], t.ndim
    tt = round(np.log(n) / np.log(3))
    _, m = measured("trivance-b", shape)
    assert m.rounds == 2 * d * tt  # 2 log3 p
    assert m.psi == 1
    assert m.theta == F3(tt, d)
    assert m.omega == 1


def test_trivance_b_theta_tends_to_the_paper_limit():
    for d in (2, 3, 4):
        assert abs(F3(30, d) - Fraction(3 ** d - 1, 3 ** d - 3)) < Fraction(1, 10 ** 9)


def test_trivance_on_other_sides():
    _, m = measured("trivance-b", "4x8")
    assert m.rounds == 2 * (2 + 2) and m.psi == 1  # ceil(log3 n) steps per side
    b, m = measured("trivance-l", "4x4")
    assert m.rounds == 2 + 2 * 2 and "virtual 3x3" in b.notes


# ------------------------------------------------- recursive doubling (2.4)
@pytest.mark.parametrize("shape", ["4", "8", "4x4", "8x8", "4x4x4"])
def test_doubling_closed_forms_on_powers_of_two(shape):
    p = parse_torus(shape).n_vertices
    q = p.bit_length() - 1
    _, m = measured("recursive-doubling", shape)
    assert m.rounds == q and m.psi == Fraction(p * q, 2 * (p - 1))
    _, m = measured("halving-doubling", shape)
    assert m.rounds == 2 * q and m.psi == 1


@pytest.mark.parametrize("shape", ["3", "3x3", "5x7"])
def test_doubling_folds_non_powers_of_two(shape):
    p = parse_torus(shape).n_vertices
    q = p.bit_length() - 1
    assert measured("recursive-doubling", shape)[1].rounds == q + 2
    assert measured("halving-doubling", shape)[1].rounds == 2 * q + 2


# ------------------------------------------------------------ file round trip
@pytest.mark.parametrize("name,shape", [("swing-b", "4x4"), ("trivance-l", "9x9"), ("ring", "3x4"),
                                        ("halving-doubling", "3x3")])
def test_explicit_file_round_trip(tmp_path, name, shape):
    b = build_baseline(name, parse_torus(shape))
    sizes = b.chunk_sizes(3 * int(b.weights.sum()))
    m = b.measure(3 * int(b.weights.sum()))
    path = tmp_path / f"{name}.jsonl"
    claims = {"rounds": m.rounds, "psi": str(m.psi), "theta": str(m.theta), "omega": str(m.omega)}
    write_explicit(b.schedule, sizes, path, claims=claims)
    schedule, read_sizes, header = read_explicit(path)
    assert schedule.n_transmissions == b.schedule.n_transmissions and read_sizes.tolist() == sizes.tolist()
    report = check_file(path)
    assert report.valid, (report.errors, report.claims)
    assert report.metrics.psi == m.psi and report.metrics.theta == m.theta and report.metrics.omega == m.omega
    assert all(ok for _, _, ok in report.claims.values()) and set(report.claims) == set(claims)


# ----------------------------------------------------------------- heavier
@pytest.mark.slow
@pytest.mark.parametrize("shape", [str(n) for n in range(3, 33)] +
                         [f"{a}x{b}" for a in range(3, 11) for b in range(a, 11)] +
                         ["5x5x5", "4x4x6", "6x10x3", "3x3x3x3", "4x4x4x4"])
def test_many_shapes_slow(shape):
    for name in NAMES:
        assert execute(build_baseline(name, parse_torus(shape)).schedule) == [], name


@pytest.mark.slow
def test_closed_forms_on_larger_tori_slow():
    for shape, mm in (("16x16", 4), ("32x32", 5), ("8x8x8", 3)):
        t = parse_torus(shape)
        d, p = t.ndim, t.n_vertices
        for name in ("swing-l", "swing-b"):
            b, m = measured(name, shape)
            assert execute(b.schedule) == []
            if name == "swing-l":
                assert (m.rounds, m.psi, m.theta, m.omega) == (
                    d * mm, Fraction(p * d * mm, 2 * (p - 1)), Fraction(A(mm), mm), 1)
            else:
                assert (m.rounds, m.psi, m.theta, m.omega) == (2 * d * mm, 1, F2(mm, d), 1)
    for shape, tt in (("27x27", 3), ("9x9x9", 2)):
        t = parse_torus(shape)
        n, d, p = t.shape[0], t.ndim, t.n_vertices
        b, m = measured("trivance-l", shape)
        assert execute(b.schedule) == []
        assert (m.rounds, m.psi, m.theta, m.omega) == (d * tt, Fraction(p * d * tt, p - 1),
                                                        Fraction(n - 1, 2 * tt), 1)
        b, m = measured("trivance-b", shape)
        assert execute(b.schedule) == []
        assert (m.rounds, m.psi, m.theta, m.omega) == (2 * d * tt, 1, F3(tt, d), 1)
    for shape in ("16x16", "6x6x6"):
        t = parse_torus(shape)
        b, m = measured("bucket", shape)
        assert execute(b.schedule) == []
        assert (m.rounds, m.psi, m.theta, m.omega) == (2 * t.ndim * (t.shape[0] - 1), 1, 1, 1)
        b, m = measured("ring", shape)
        assert execute(b.schedule) == []
        assert (m.rounds, m.psi, m.theta, m.omega) == (2 * (t.n_vertices - 1), 1, 1, 1)


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["64x64", "16x16x16", "5x7x9x11"])
def test_hamiltonian_decomposition_scales_slow(shape):
    t = parse_torus(shape)
    color = hamiltonian_decomposition(t)
    assert len(hamiltonian_cycles(t)) == t.ndim
    assert np.array_equal(np.bincount(color.ravel()), [t.n_vertices] * t.ndim)


@pytest.mark.parametrize("name", ["bucket", "trivance-b", "recursive-doubling"])
def test_baseline_write_carries_checkable_claims(tmp_path, name):
    b = build_baseline(name, parse_torus("3x4"))
    path = tmp_path / "b.jsonl"
    b.write(path, elements=2 * int(b.weights.sum()))
    report = check_file(path)
    assert report.valid and report.errors == []
    assert {"rounds", "psi", "theta", "omega", "vol_abs", "vol_phys"} <= set(report.claims)
    assert all(ok for _, _, ok in report.claims.values())
