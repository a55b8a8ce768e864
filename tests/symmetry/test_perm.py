"""synth.symmetry.perm against brute force: closure by multiplication on tiny groups."""

import itertools
import math

import numpy as np
import pytest

from synth.errors import GroupError
from synth.symmetry.perm import PermGroup, cycle_lengths, is_semiregular, orbits, perm_order


def closure(gens, n):
    """Every element of <gens>, by breadth-first multiplication (brute force)."""
    ident = tuple(range(n))
    seen, todo = {ident}, [ident]
    while todo:
        g = todo.pop()
        for s in gens:
            h = tuple(np.asarray(s)[list(g)])
            if h not in seen:
                seen.add(h)
                todo.append(h)
    return seen


def random_gens(rng, n, k):
    return [rng.permutation(n) for _ in range(k)]


CASES = [([[1, 2, 3, 0]], 4), ([[1, 0, 2, 3], [0, 1, 3, 2]], 4), ([[1, 2, 3, 4, 0], [1, 0, 2, 3, 4]], 5),
         ([[1, 2, 0, 4, 5, 3]], 6), ([[0, 1, 2]], 3), ([[1, 0, 3, 2, 5, 4], [2, 3, 0, 1, 4, 5]], 6)]
CASES += [(random_gens(np.random.default_rng(s), 6, 1 + s % 2), 6) for s in range(8)]


@pytest.mark.parametrize("gens,n", CASES)
@pytest.mark.parametrize("randomized", [False, True])
def test_chain_matches_brute_force(gens, n, randomized):
    elems = closure(gens, n)
    g = PermGroup.from_generators(gens, n, order=len(elems) if randomized else None, seed=3)
    assert g.order == len(elems)
    assert {tuple(e) for e in g.elements().tolist()} == elems
    for p in itertools.permutations(range(n)):   # membership, over all of S_n
        assert g.contains(list(p)) == (p in elems)
    rng = np.random.default_rng(0)
    assert all(tuple(g.random_element(rng).tolist()) in elems for _ in range(20))
    brute = {x: min(e[x] for e in elems) for x in range(n)}   # smallest point of each orbit
    assert g.orbits().tolist() == [brute[x] for x in range(n)]


def test_random_elements_are_uniform_on_a_small_group():
    g = PermGroup.from_generators([[1, 2, 0, 3], [1, 0, 2, 3]])   # S_3 on the first three points
    rng = np.random.default_rng(1)
    counts = {}
    for _ in range(6000):
        key = tuple(g.random_element(rng).tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 6 and all(800 < c < 1200 for c in counts.values())


def test_cycles_order_and_semiregularity_against_brute_force():
    rng = np.random.default_rng(5)
    for _ in range(50):
        p = rng.permutation(9)
        lengths = []
        for x in range(9):
            y, k = p[x], 1
            while y != x:
                y, k = p[y], k + 1
            lengths.append(k)
        assert cycle_lengths(p).tolist() == lengths
        assert perm_order(p) == math.lcm(*lengths)
        assert is_semiregular(p) == (len(set(lengths)) == 1 and lengths[0] > 1)
    assert orbits(4, np.zeros((0, 4), dtype=int)).tolist() == [0, 1, 2, 3]


def test_limits_are_kept():
    big = [np.roll(np.arange(60), 1), np.r_[1, 0, np.arange(2, 60)]]   # S_60
    with pytest.raises(GroupError, match="limit"):
        PermGroup.from_generators(big, max_entries=10_000)
    with pytest.raises(GroupError, match="time limit"):
        PermGroup.from_generators(big, deadline=0.0)
    with pytest.raises(GroupError, match="not a permutation"):
        PermGroup.from_generators([[0, 0, 1]])
    assert PermGroup.from_generators(big, order=math.factorial(60)).order == math.factorial(60)
