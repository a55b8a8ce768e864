import itertools
import os
import shutil
import tempfile

import pytest

from synth.topology.torus import parse_torus
from synth.topology.user import topology_from_json

_CACHE = tempfile.mkdtemp(prefix="synth-test-cache-")


def pytest_configure(config):
    """Solved trees go to a cache of this test process (each xdist worker has its own), never the user's."""
    os.environ["SYNTH_CACHE_DIR"] = _CACHE


def pytest_unconfigure(config):
    shutil.rmtree(_CACHE, ignore_errors=True)


def equal_sided_shapes(max_p):
    """Every equal-sided torus n^d (n >= 3) with at most max_p vertices."""
    out = []
    for d in range(1, 8):
        for n in itertools.count(3):
            if n**d > max_p:
                break
            out.append("x".join([str(n)] * d))
    return out


@pytest.fixture(scope="session")
def t44():
    return parse_torus("4x4")


@pytest.fixture(autouse=True)
def _run_in_tmp(tmp_path, monkeypatch):
    """Each test runs in a fresh folder, so a file a command writes (``--out``) never lands in the repo."""
    monkeypatch.chdir(tmp_path)


# ------------------------------------------- depth-bounded trees on tiny tori (tests/models/)
#: tiny tori whose subset DP is quick, with every depth bound 1 .. H
TINY_SHAPES = ["3x3", "3x4", "3x5", "7", "9", "11", "4x4"]


def tiny_cases(shapes=TINY_SHAPES, max_vertices=16):
    """``(shape, k)`` for every shape of at most ``max_vertices`` vertices and every ``k`` in 1 .. H."""
    out = []
    for s in shapes:
        t = parse_torus(s)
        if t.n_vertices <= max_vertices:
            out.extend((s, k) for k in range(1, t.diameter + 1))
    return out


def all_trees(V, k):
    """``(parent, depth)`` of every spanning tree of ``K_V`` rooted at 0 with depth ``<= k`` (tiny ``V`` only)."""
    import numpy as np  # keeps this conftest's import light for the tests that never call it

    from synth.models.forest.instance import tree_depths  # as above

    out = []
    for row in np.array(np.meshgrid(*[np.arange(V)] * (V - 1), indexing="ij")).reshape(V - 1, -1).T:
        parent = np.concatenate([[-1], row])
        try:
            depth = tree_depths(parent)
        except ValueError:      # a cycle
            continue
        if depth.max() <= k:
            out.append((parent, depth))
    return out


def count_trees(n, k):
    """Spanning trees of K_{n+1} rooted at 0 with depth <= k: n! [x^n] exp(T_{k-1}), T_h = x exp(T_{h-1})."""
    from fractions import Fraction
    from math import factorial

    def mul(a, b):
        c = [Fraction(0)] * (n + 1)
        for i, x in enumerate(a):
            if x:
                for j, y in enumerate(b[:n + 1 - i]):
                    c[i + j] += x * y
        return c

    def exp(a):                                   # a[0] == 0
        out, term = [Fraction(0)] * (n + 1), [Fraction(1)] + [Fraction(0)] * n
        out[0] = Fraction(1)
        for m in range(1, n + 1):
            term = [x / m for x in mul(term, a)]
            out = [x + y for x, y in zip(out, term)]
        return out

    T = [Fraction(0), Fraction(1)] + [Fraction(0)] * (n - 1)      # height <= 0: a single vertex
    for _ in range(k - 1):
        T = [Fraction(0)] + mul([Fraction(1)] + [Fraction(0)] * n, exp(T))[:n]
    return int(exp(T)[n] * factorial(n))


@pytest.fixture(scope="session")
def brute():
    """``brute(shape, k, reduce=False)``: W*(k) and an optimal tree by the subset DP, computed once per instance."""
    from synth.models.forest.instance import allowed_pairs  # the models load only for the tests that use them
    from synth.models.khop.brute import brute_force_khop  # as above

    cache = {}

    def get(shape, k, reduce=False):
        key = (shape, k, reduce)
        if key not in cache:
            t = parse_torus(shape)
            cache[key] = brute_force_khop(t, k, allowed_pairs(t) if reduce else None)
        return cache[key]

    return get


@pytest.fixture
def python_sigint():
    """SIGINT raises KeyboardInterrupt (Python's own handler) for the test: a pytest-xdist worker runs with
    SIGINT at its default, which would end the worker (and hang the run) when a test interrupts itself."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


BANDWIDTHS = (0.5, 1, 2, 3, 12.5, 25, 300)


def weighted_graph(rng, n, extra, switches=0, directed=False):
    """A connected random graph (a random spanning tree plus ``extra`` links) with random bandwidths from
    :data:`BANDWIDTHS`; the last ``switches`` vertices do not compute; ``directed``: each direction its own."""
    links = [[int(rng.integers(0, v)), v] for v in range(1, n)]
    for _ in range(extra):
        a, b = rng.choice(n, 2, replace=False)
        links.append([int(a), int(b)])
    links = sorted({tuple(sorted(x)) for x in links})
    if directed:
        links = sorted(links + [(b, a) for a, b in links])
    data = {"vertices": n, "links": [list(x) for x in links], "directed": directed,
            "bandwidth": [float(rng.choice(BANDWIDTHS)) for _ in links]}
    if switches:
        data["compute"] = list(range(max(n - switches, 2)))
    return topology_from_json(data)


def direct_family(t):
    """One chunk per compute vertex r: every other compute vertex sends its input straight to r (shortest route),
    and r sends the sum back; the chunks share rounds, so some links carry several (a schedule for any graph)."""
    from synth.schedule.data import COPY, REDUCE, BaseSchedule
    rows = []
    for c, r in enumerate(t.compute.tolist()):
        for v in t.compute.tolist():
            if v != r:
                rows.append((c, 1, v, r, REDUCE, t.shortest_route(v, r)))
                rows.append((c, 2, r, v, COPY, t.shortest_route(r, v)))
    rows.sort(key=lambda x: (x[1], x[0], x[2], x[3]))
    return BaseSchedule.from_rows(t, t.n_compute, rows, (1,) * t.n_compute, ("direct",) * t.n_compute)


def cli_args(argv):
    """The CLI's topology flags parsed from ``argv`` (the parser every network command uses)."""
    from synth.cli._common import Parser, add_topology_args
    parser = Parser(prog="t")
    add_topology_args(parser)
    return parser.parse_args(argv)


def cli_topology(argv):
    """The topology the CLI builds from ``argv``."""
    from synth.cli._common import topology_from_args
    return topology_from_args(cli_args(argv))
