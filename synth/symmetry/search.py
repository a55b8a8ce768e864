"""The symmetry group of a user topology: the given generators, or one chosen inside the full automorphism group.

Without generators, nauty gives the full automorphism group ``Aut`` (:mod:`synth.symmetry.nauty`;
compute vertices and link directions preserved) and Schreier–Sims a stabilizer chain of it
(:mod:`synth.symmetry.perm`), from which uniformly random automorphisms are drawn.  Lifting needs
a subgroup ``H`` with a link of trivial stabilizer (:mod:`synth.symmetry.group`: ``|H|`` equals the
chunk count and element ``i`` numbers chunk ``i``); it balances every base schedule when ``H`` acts
regularly on the links, and often when ``H`` acts freely.  :func:`search_group` grows such subgroups
greedily from random cyclic subgroups that act freely on the links, adding random automorphisms
and conjugates of the current generators while the group stays fit, and keeps the best: free
first, then the fewest link orbits, then the largest order.  The work is bounded (``restarts`` x
``tries`` group checks, ``samples`` random elements) and every step checks the deadline; when
no fit group is found within those limits it says so, never that none exists.

Examples
--------
>>> from synth.topology.user import topology_from_json
>>> t = topology_from_json({"format": "synth-topology", "version": 1, "vertices": 4,
...                         "links": [[0, 1], [1, 2], [2, 3], [3, 0]]})
>>> g = search_group(t)
>>> g.order, g.is_regular
(8, True)
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from synth.errors import GroupError
from synth.symmetry.group import Group
from synth.symmetry.nauty import automorphisms
from synth.symmetry.perm import PermGroup, cycle_lengths, inverse, random_elements
from synth.topology.base import Topology

__all__ = ["search_group", "user_group"]

_GIVE_UP = "none found within the limits; pass `generators` (vertex permutations of a group) to use one"


def user_group(t: Topology, generators=None, *, rounds=None, seconds=30.0) -> Group:
    """The given generators (verified), or a searched group (see :func:`search_group`)."""
    if generators is not None:
        return Group.from_generators(t, generators, f"given({t.name})",
                                     {"kind": "generators", "generators": np.asarray(generators).tolist()})
    return search_group(t, rounds=rounds, seconds=seconds)


def search_group(t: Topology, *, rounds=None, seconds=30.0, seed=0, restarts=24, tries=48, samples=1024,
                 patience=6) -> Group:
    """A subgroup of the automorphism group that can number chunks, chosen within the limits.

    Parameters
    ----------
    rounds : sequence of (numpy.ndarray, numpy.ndarray), or a callable returning one, optional
        The base schedule to balance, as ``(links, weights)`` per round: every (transmission, route
        link) incidence and its component's weight.  Given, groups are ranked by the exact Ω of the
        lift (docs/spec.md §6) and the search stops at Ω = 1; otherwise by link orbits alone.  A callable
        is called once nauty has the group, so a graph over the limits is refused before it is built.
    seconds : float
        Wall-clock limit of the whole search (nauty included).
    seed : int
        Seed of the random automorphisms: same graph and seed, same group.
    restarts, tries, samples, patience : int
        Greedy runs, candidates tried per run, random automorphisms drawn for the starting cyclic
        groups, and runs without improvement after which the search stops.

    Raises
    ------
    GroupError
        If the graph has no automorphism but the identity (nauty's full group is trivial), or no fit
        subgroup was found within the limits (the message says so and suggests `generators`).
    """
    deadline = time.monotonic() + seconds
    try:
        aut = automorphisms(t, deadline=deadline)
    except GroupError as exc:
        raise GroupError(f"{exc}; {_GIVE_UP}") from None
    if aut.order == 1:
        raise GroupError(f"{t.name}: the graph has no automorphism but the identity (nauty), so no group can "
                         "number chunks")
    rng = np.random.default_rng(seed)
    score = _Scorer(t, rounds() if callable(rounds) else rounds)
    best, stale = None, 0
    try:
        draw = _sampler(t, aut, deadline, rng)
        starts, tried = [], set()
        # random elements are cheap next to growing groups: draw them all first, so the best starts come first
        for stage in (aut.generators, samples):
            starts += _cyclic_starts(t, stage, draw, len(starts), deadline)
            starts.sort(key=lambda item: item[:3])
            for key in [item for item in starts if item[2] not in tried][:restarts]:
                tried.add(key[2])
                group = _grow(t, [key[3]], draw, rng, tries, deadline)
                if group is not None and (best is None or score(group) < score(best)):
                    best, stale = group, 0
                else:
                    stale += 1
                if score.perfect(best) or stale >= patience:
                    break
            if score.perfect(best) or len(tried) >= restarts:
                break
    except _OutOfTime:
        pass   # the best group so far, if any, is still a verified one
    if best is None:
        raise GroupError(f"{t.name}: a group of automorphisms that can number chunks: {_GIVE_UP} "
                         f"(nauty: |Aut| = {aut.order:.6g})")
    gens = best.generators.tolist()
    return Group.from_generators(t, gens, f"searched({t.name})", {"kind": "generators", "generators": gens})


class _OutOfTime(Exception):
    pass


def _tick(deadline):
    if time.monotonic() > deadline:
        raise _OutOfTime


class _Scorer:
    """Ranks groups: exact Ω of the lift of ``rounds`` (if given), then link orbits, then order (larger first)."""

    def __init__(self, t, rounds):
        self.n_links = t.n_links
        self.rounds = None if rounds is None else [(np.asarray(links, dtype=np.int64), np.asarray(w, dtype=np.int64))
                                                   for links, w in rounds]

    def omega(self, group) -> Fraction:
        """Σ_s max_O u_O(s)/|O| times E over Σ_s u(s): the load on a link of orbit O in round s is
        proportional to u_O(s)/|O| (docs/spec.md §6)."""
        if self.rounds is None:
            return Fraction(1)
        sizes = group.orbit_sizes
        peak, total = Fraction(0), 0
        for links, weights in self.rounds:
            u = np.bincount(group.link_orbit[links], weights=weights, minlength=sizes.size).astype(np.int64)
            top = int(np.argmax(u / sizes))
            peak += Fraction(int(u[top]), int(sizes[top]))
            total += int(u.sum())
        return peak * self.n_links / total if total else Fraction(1)

    def __call__(self, group):
        return (self.omega(group), group.n_link_orbits, -group.order)

    def perfect(self, group) -> bool:
        """Nothing can rank better: Ω = 1 for the given rounds, else a regular action on the links."""
        if group is None:
            return False
        return self.omega(group) == 1 if self.rounds is not None else group.is_regular


def _sampler(t, aut, deadline, rng):
    """A function drawing random automorphisms: from a stabilizer chain, or by product replacement if too big."""
    try:
        chain = PermGroup.from_generators(aut.generators, t.n_vertices, order=aut.order, deadline=deadline,
                                          seed=int(rng.integers(1 << 31)))
    except GroupError as exc:
        if time.monotonic() > deadline:
            raise _OutOfTime from exc
        stream = random_elements(aut.generators, t.n_vertices, rng)
        return lambda: next(stream)
    return lambda: chain.random_element(rng)


def _cyclic_starts(t, elements, draw, first, deadline):
    """Candidate starts ``(not semiregular, -order, key, element)``: of each element (``elements`` is an array,
    or a count of random ones to draw), the power of largest order among it and its prime-power parts
    whose cyclic group has a free link cycle (needed to number chunks); semiregular on the links ranks first."""
    found = []
    count = elements if isinstance(elements, int) else elements.shape[0]
    for k in range(count):
        _tick(deadline)
        g = draw() if isinstance(elements, int) else elements[k]
        lengths = cycle_lengths(t.link_ids(g[t.link_src], g[t.link_dst]))
        distinct = np.unique(lengths).tolist()
        order = math.lcm(*distinct)
        options = [1] if lengths.max() == order > 1 else []
        for p in _primes_of(distinct):   # the p-part of g: g^(order / p^a) has order p^a, and a cycle of it
            pa = p ** max(_valuation(L, p) for L in distinct)
            options.append(order // pa)
        best = None
        for d in options:
            sub = lengths // np.gcd(lengths, d)
            key = (not bool(np.all(sub == sub[0])), -int(sub.max()))
            if best is None or key < best[0]:
                best = (key, d)
        if best is not None:
            found.append((*best[0], first + k, _power(g, best[1])))
    return found


def _primes_of(numbers):
    primes = set()
    for n in numbers:
        p = 2
        while p * p <= n:
            while n % p == 0:
                primes.add(p)
                n //= p
            p += 1
        if n > 1:
            primes.add(n)
    return sorted(primes)


def _valuation(n, p):
    a = 0
    while n % p == 0:
        n //= p
        a += 1
    return a


def _grow(t, gens, draw, rng, tries, deadline, draws_per_try=16):
    """Greedy: add a random automorphism or a conjugate of a generator whenever the group stays fit and grows.

    A candidate ``y`` is checked (by building the group) only if it maps no link of the base orbit ``O``
    into ``O``: otherwise some ``h1 y h2`` (``h1, h2`` in the group) fixes the base link, and the group
    it would give cannot number chunks, unless ``y`` is already in it.
    """
    try:
        group = Group.from_generators(t, gens, "candidate", {})
    except GroupError:
        return None
    checks, draws = 0, 0
    while checks < tries and draws < tries * draws_per_try:
        _tick(deadline)
        draws += 1
        y = draw()
        if rng.random() < 0.5:
            h = group.generators[rng.integers(group.generators.shape[0])]
            y = inverse(y)[h[y]]  # a conjugate of h: same cycle type
        in_orbit = np.zeros(t.n_links, dtype=bool)
        in_orbit[group.orbit_links] = True
        base = group.orbit_links
        if np.any(in_orbit[t.link_ids(y[t.link_src[base]], y[t.link_dst[base]])]):
            continue
        checks += 1
        try:
            candidate = Group.from_generators(t, np.vstack([group.generators, y]), "candidate", {})
        except GroupError:
            continue
        if candidate.order > group.order:
            group = candidate
    return group


def _power(g, d):
    out, base = np.arange(g.size), np.asarray(g)
    while d:
        if d & 1:
            out = base[out]
        base = base[base]
        d >>= 1
    return out
