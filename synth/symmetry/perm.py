"""Permutation groups given by generators: orbits, a stabilizer chain, order, membership, random elements.

A permutation of ``n`` points is an integer array ``p`` with ``p[x]`` the image of
``x``; "``p`` then ``q``" is ``q[p]``.  :class:`PermGroup` builds a base and strong
generating set by Schreier–Sims: deterministic (every Schreier generator sifted) when the
order is unknown, randomized (sift random elements until the product of the basic orbit
lengths reaches it) when the order is known, e.g. from nauty.  Either way every step checks
an optional ``deadline`` (a :func:`time.monotonic` value) and the transversals are capped at
``max_entries`` integers, so the work is bounded; exceeding either raises :class:`GroupError`
saying which limit stopped it.

This module knows nothing of graphs: :mod:`synth.symmetry.search` uses it on the
automorphism group of a user topology, and any residual group (a damaged network's
automorphisms fixing the failures) can use it the same way.

Examples
--------
>>> import numpy as np
>>> g = PermGroup.from_generators([[1, 2, 3, 0], [1, 0, 2, 3]])   # S_4
>>> g.order, g.base
(24, (0, 1, 2))
>>> g.contains([3, 2, 1, 0]), PermGroup.from_generators([[1, 2, 3, 0]]).contains([1, 0, 2, 3])
(True, False)
>>> orbits(6, np.array([[1, 0, 2, 3, 5, 4]])).tolist()
[0, 0, 2, 3, 4, 4]
>>> sorted(g.random_element(np.random.default_rng(0)).tolist())
[0, 1, 2, 3]
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from synth.errors import GroupError

__all__ = ["PermGroup", "random_elements", "orbits", "cycle_lengths", "perm_order", "is_semiregular", "compose",
           "inverse"]

MAX_ENTRIES = 1 << 25  # integers held by all transversals together (about 256 MB as int64)


def compose(p, q) -> np.ndarray:
    """``p`` then ``q``."""
    return np.asarray(q)[np.asarray(p)]


def inverse(p) -> np.ndarray:
    p = np.asarray(p)
    out = np.empty_like(p)
    out[p] = np.arange(p.size, dtype=p.dtype)
    return out


def orbits(n: int, perms) -> np.ndarray:
    """Orbit label of each of ``n`` points under the permutations ``perms`` (``k x n``), labels by first point.

    Hooking and pointer jumping (Shiloach-Vishkin): each round hooks the root of every point's tree
    onto the smaller root across each permutation's pairs, then jumps pointers to the roots; a round
    that hooks nothing leaves one tree per orbit, rooted at its smallest point.  About ``log n``
    rounds of ``O(k n)`` array work (the full Fugaku's 1.6 million links under 8 generators: 0.3 s,
    where a sparse-graph search took 2.6 s).

    >>> orbits(6, [[1, 2, 0, 3, 5, 4]]).tolist()
    [0, 0, 0, 3, 4, 4]
    """
    perms = np.asarray(perms, dtype=np.int64).reshape(-1, n)
    parent = np.arange(n, dtype=np.int64)
    while perms.shape[0]:
        before = parent.copy()
        for g in perms:
            a, b = parent, parent[g]
            np.minimum.at(parent, np.maximum(a, b), np.minimum(a, b))
            while True:                                  # pointer jumping: every point to its root
                jumped = parent[parent]
                if np.array_equal(jumped, parent):
                    break
                parent = jumped
        if np.array_equal(parent, before):
            break
    return parent


def cycle_lengths(p) -> np.ndarray:
    """Length of the cycle of the permutation ``p`` through each point (pointer doubling, vectorized).

    >>> cycle_lengths([1, 2, 0, 4, 3, 5]).tolist()
    [3, 3, 3, 2, 2, 1]
    """
    p = np.asarray(p, dtype=np.int64)
    label, step = np.arange(p.size), p.copy()
    for _ in range(max(1, int(p.size).bit_length())):   # after k rounds: min over 2^k points ahead
        label = np.minimum(label, label[step])
        step = step[step]
    return np.bincount(label, minlength=p.size)[label]


def perm_order(p) -> int:
    """The order of a permutation (lcm of its cycle lengths)."""
    return math.lcm(*np.unique(cycle_lengths(np.asarray(p))).tolist())


def is_semiregular(p) -> bool:
    """True when every cycle of ``p`` has the same length, above 1: ``<p>`` then fixes no point.

    >>> is_semiregular([1, 0, 3, 2]), is_semiregular([1, 0, 2, 3])
    (True, False)
    """
    lengths = cycle_lengths(np.asarray(p))
    return bool(lengths.size and lengths[0] > 1 and np.all(lengths == lengths[0]))


def _check(deadline, what):
    if deadline is not None and time.monotonic() > deadline:
        raise GroupError(f"{what}: time limit reached")


@dataclass(frozen=True, eq=False)
class _Level:
    point: int
    orbit: np.ndarray   # the basic orbit, in discovery order
    reps: np.ndarray    # reps[i] maps ``point`` to ``orbit[i]`` (len(orbit) x n)
    inv: np.ndarray     # their inverses
    where: dict         # orbit point -> row of reps


class PermGroup:
    """A permutation group with a base and strong generating set (build with :meth:`from_generators`).

    Attributes
    ----------
    n : int
        Degree (number of points).
    generators : numpy.ndarray
        ``k x n`` the given generators (identities dropped).
    base : tuple of int
        Base points ``b_1 .. b_m``; level ``i`` holds the orbit of ``b_i`` under the
        stabilizer of ``b_1 .. b_{i-1}`` and a transversal of its cosets.
    """

    def __init__(self, n, generators, levels, strong):
        self.n = n
        self.generators = generators
        self._levels = levels
        self._strong = strong       # (generator, level it was added at)
        self._entries = 0

    # ------------------------------------------------------------------ building
    @classmethod
    def from_generators(cls, generators, n=None, *, order=None, deadline=None, seed=0,
                        max_entries=MAX_ENTRIES) -> "PermGroup":
        """Schreier–Sims on ``generators`` (``k x n``; ``n`` needed when ``k`` is 0).

        Parameters
        ----------
        order : int, optional
            The group's order if known (nauty's; for huge groups only its leading digits need be
            right): then random elements are sifted until the chain reaches it (the result is a
            Monte Carlo one only in how long it takes); otherwise every Schreier generator is.
        deadline : float, optional
            A :func:`time.monotonic` time after which the build stops with :class:`GroupError`.
        max_entries : int
            Cap on the integers all transversals hold together.
        """
        gens = np.asarray(generators, dtype=np.int64)
        if n is None:
            if gens.ndim != 2:
                raise GroupError("give n when there are no generators")
            n = gens.shape[1]
        gens = gens.reshape(-1, n)
        for g in gens:
            if not np.array_equal(np.sort(g), np.arange(n)):
                raise GroupError(f"a generator is not a permutation of {n} points")
        gens = gens[np.any(gens != np.arange(n), axis=1)]
        group = cls(n, gens, [], [])
        if order is None:
            group._deterministic(deadline, max_entries)
        else:
            group._randomized(order, deadline, seed, max_entries)
        return group

    def _level_gens(self, i):
        """Strong generators fixing the first ``i`` base points (those added at level ``i`` or deeper)."""
        return [s for s, depth in self._strong if depth >= i]

    def _extend(self, i, new, deadline, max_entries):
        """Grow the basic orbit and transversal of level ``i`` after strong generator ``new`` joined it."""
        lv, gens = self._levels[i], self._level_gens(i)
        orbit, reps, where = lv.orbit.tolist(), list(lv.reps), dict(lv.where)
        todo = []
        for k, x in enumerate(orbit):   # the new generator applied to the old orbit
            y = int(new[x])
            if y not in where:
                where[y] = len(orbit)
                orbit.append(y)
                reps.append(new[reps[k]])    # reps[k] then new
                todo.append(len(orbit) - 1)
        while todo:   # every generator applied to the new points
            _check(deadline, "permutation group")
            k = todo.pop()
            for s in gens:
                y = int(s[orbit[k]])
                if y not in where:
                    where[y] = len(orbit)
                    orbit.append(y)
                    reps.append(s[reps[k]])
                    todo.append(len(orbit) - 1)
        self._entries += (len(orbit) - lv.orbit.size) * self.n
        if self._entries > max_entries:
            raise GroupError(f"permutation group: transversals over the limit of {max_entries:,} entries")
        reps = np.array(reps)
        inv = np.empty_like(reps)
        np.put_along_axis(inv, reps, np.arange(self.n)[None, :], axis=1)
        self._levels[i] = _Level(lv.point, np.array(orbit), reps, inv, where)

    def _sift(self, g, start=0):
        """Strip ``g`` through the levels from ``start``: (residue, level where it stopped)."""
        for i in range(start, len(self._levels)):
            lv = self._levels[i]
            row = lv.where.get(int(g[lv.point]))
            if row is None:
                return g, i
            g = lv.inv[row][g]    # g then rep^-1
        return g, len(self._levels)

    def _add_strong(self, h, level, deadline, max_entries):
        """Add a non-identity residue ``h`` found at ``level`` (it fixes the base points before it)."""
        self._strong.append((h, level))
        if level == len(self._levels):
            moved = int(np.flatnonzero(h != np.arange(self.n))[0])
            ident = np.arange(self.n)[None, :]
            self._levels.append(_Level(moved, np.array([moved]), ident, ident, {moved: 0}))
            self._entries += self.n
        for j in range(level, -1, -1):
            self._extend(j, h, deadline, max_entries)
        return level

    def _deterministic(self, deadline, max_entries):
        for g in self.generators:
            h, level = self._sift(g)
            if level < len(self._levels) or np.any(h != np.arange(self.n)):
                self._add_strong(h, level, deadline, max_entries)
        i = len(self._levels) - 1
        while i >= 0:
            changed = None
            lv, gens = self._levels[i], self._level_gens(i)
            for row, beta in enumerate(lv.orbit.tolist()):
                for s in gens:
                    _check(deadline, "permutation group")
                    # Schreier generator u_beta s u_{s(beta)}^-1 fixes the base point of level i
                    image = lv.reps[lv.where[int(s[beta])]]
                    h, level = self._sift(inverse(image)[s[lv.reps[row]]], i + 1)
                    if level < len(self._levels) or np.any(h != np.arange(self.n)):
                        changed = self._add_strong(h, level, deadline, max_entries)
                        break
                if changed is not None:
                    break
            # deeper levels are unchanged (the new generator moves this level's base point): resume here
            i = changed if changed is not None else i - 1

    def _randomized(self, order, deadline, seed, max_entries):
        rng = np.random.default_rng(seed)
        for g in self.generators:
            h, level = self._sift(g)
            if level < len(self._levels) or np.any(h != np.arange(self.n)):
                self._add_strong(h, level, deadline, max_entries)
        state = _ProductReplacement(self.generators, self.n, rng)
        target = math.log(order)   # logs: nauty gives huge orders only approximately (a float mantissa)
        while abs(math.log(self.order) - target) > 1e-9:
            _check(deadline, "permutation group")
            if math.log(self.order) > target + 1e-9:
                raise GroupError(f"permutation group: the generators give an order above the given {order}")
            h, level = self._sift(state.next())
            if level < len(self._levels) or np.any(h != np.arange(self.n)):
                self._add_strong(h, level, deadline, max_entries)

    # ------------------------------------------------------------------- queries
    @property
    def base(self) -> tuple:
        return tuple(lv.point for lv in self._levels)

    @property
    def order(self) -> int:
        return math.prod(lv.orbit.size for lv in self._levels)

    @property
    def strong_generators(self) -> np.ndarray:
        return np.array([s for s, _ in self._strong], dtype=np.int64).reshape(-1, self.n)

    def orbits(self) -> np.ndarray:
        """Orbit label (smallest point of the orbit) of every point."""
        return orbits(self.n, self.generators)

    def contains(self, p) -> bool:
        """Membership by sifting."""
        p = np.asarray(p, dtype=np.int64)
        if p.shape != (self.n,) or not np.array_equal(np.sort(p), np.arange(self.n)):
            return False
        h, level = self._sift(p)
        return level == len(self._levels) and bool(np.all(h == np.arange(self.n)))

    def random_element(self, rng) -> np.ndarray:
        """A uniformly random element: a random coset representative per level, multiplied up."""
        g = np.arange(self.n)
        for lv in reversed(self._levels):
            g = lv.reps[rng.integers(lv.orbit.size)][g]    # g then rep
        return g

    def elements(self, limit=100_000):
        """Every element (for small groups and tests), in no particular order."""
        if self.order > limit:
            raise GroupError(f"permutation group: {self.order} elements, over the limit of {limit}")
        out = [np.arange(self.n)]
        for lv in reversed(self._levels):
            out = [rep[g] for rep in lv.reps for g in out]
        return np.array(out)


def random_elements(generators, n, rng):
    """An endless stream of nearly uniform random elements of ``<generators>``, without a stabilizer chain.

    For groups whose chain would be too large (:data:`MAX_ENTRIES`).
    """
    state = _ProductReplacement(np.asarray(generators, dtype=np.int64).reshape(-1, n), n, rng)
    while True:
        yield state.next().copy()


class _ProductReplacement:
    """Nearly uniform random elements from generators (product replacement with an accumulator)."""

    def __init__(self, gens, n, rng, slots=10, warmup=30):
        gens = [g for g in gens] or [np.arange(n)]
        self.slots = [gens[i % len(gens)].copy() for i in range(max(slots, len(gens)))]
        self.acc = np.arange(n)
        self.rng = rng
        for _ in range(warmup):
            self.next()

    def next(self) -> np.ndarray:
        i, j = self.rng.choice(len(self.slots), 2, replace=False)
        a, b = self.slots[i], self.slots[j]
        self.slots[i] = b[a] if self.rng.random() < 0.5 else a[b]
        self.acc = self.slots[i][self.acc]
        return self.acc
