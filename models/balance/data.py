"""Data of the balance model: what a unit component can do in each round, per link orbit.

The balance condition (docs/spec.md §6) only sees, for every round ``s`` and
link orbit ``O``, how many base incidences of each component fall on ``O``.
For BFS trees and BFS forests that number is decided level by level, and
within a level only by the *type* of each vertex: the set of orbits of its
links to a BFS predecessor (a neighbour one step closer to the roots).  Any
choice of one predecessor per vertex is a valid BFS tree (forest), so the
choices of different vertices, levels and components are independent, and
vertices of the same (level, type) are interchangeable.  The model therefore
never looks at single vertices: an :class:`Option` (a root set) is reduced to
``type_count[i]`` vertices of type ``i`` at level ``type_level[i]`` that may
use the orbits ``type_orbits[i]``; the per-vertex arrays are kept only to
build the schedule afterwards.

Rounds of a unit component of depth ``h`` (level ``l = 1..h``):

* tree: reduce of level ``l`` in round ``h - l + 1``, copy in round ``h + l``;
  ``2h`` rounds;
* forest plus exchange: reduce in round ``h - l + 1``, the two roots exchange
  in round ``h + 1``, copy in round ``h + 1 + l``; ``2h + 1`` rounds.

A copy runs ``parent -> v``, the reverse of the reduce link ``v -> parent``; its
orbit is ``rev[O]`` (automorphisms commute with reversing links).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.symmetry.torus import torus_translations_negation
>>> t = parse_torus("3x4"); g = torus_translations_negation(t)
>>> opt = tree_options(t, g)[0]
>>> opt.depth, opt.n_rounds, opt.level_sizes().tolist()
(3, 6, [4, 5, 2])
>>> [(int(l), o, int(c)) for l, o, c in zip(opt.type_level, opt.type_orbits, opt.type_count)]
[(1, (1,), 2), (1, (0,), 2), (2, (1,), 1), (2, (0, 1), 4), (3, (0, 1), 2)]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.errors import ScheduleError, TopologyError
from synth.schedule import BaseSchedule

__all__ = ["Option", "Candidate", "BalanceData", "orbit_reversal", "tree_options", "forest_options",
           "exchange_pairs", "candidate_columns", "balance_data", "unit_incidences", "chunk_lower_bound"]


@dataclass(frozen=True, eq=False)
class Option:
    """A root set for unit components (one BFS tree or forest of weight 1).

    Attributes
    ----------
    kind : str
        ``"tree"`` (one root) or ``"forest"`` (two adjacent roots and the exchange).
    roots : tuple of int
    depth : int
        ``h``, the largest distance to the roots.
    n_rounds : int
        ``2h`` for a tree, ``2h + 1`` for a forest.
    type_level, type_count : numpy.ndarray
        Level and number of vertices of each type.
    type_orbits : tuple of tuple of int
        The orbits a vertex of each type may use towards its parent.
    fixed : numpy.ndarray
        ``n_rounds x m`` incidences that do not depend on choices (the exchange).
    level, vtype : numpy.ndarray
        Per vertex: distance to the roots, type index (``-1`` on roots).
    pred : numpy.ndarray
        ``V x m``: a predecessor reached over a link of orbit ``O`` (``-1`` if none);
        the one over the smallest link id, so building is deterministic.
    """

    kind: str
    roots: tuple
    depth: int
    n_rounds: int
    type_level: np.ndarray
    type_orbits: tuple
    type_count: np.ndarray
    fixed: np.ndarray
    level: np.ndarray
    vtype: np.ndarray
    pred: np.ndarray

    @property
    def n_types(self) -> int:
        return int(self.type_count.size)

    def reduce_round(self, level) -> np.ndarray:
        """Round in which vertices at ``level`` reduce into their parents."""
        return self.depth - np.asarray(level) + 1

    def copy_round(self, level) -> np.ndarray:
        """Round in which vertices at ``level`` receive the result from their parents."""
        return self.depth + np.asarray(level) + (1 if self.kind == "forest" else 0)

    def level_sizes(self) -> np.ndarray:
        """Number of vertices at levels ``1..depth``."""
        return np.bincount(self.type_level, weights=self.type_count, minlength=self.depth + 1)[1:].astype(np.int64)

    def label(self) -> str:
        if self.kind == "tree":
            return f"bfs tree, root {self.roots[0]}, depth {self.depth}"
        return f"bfs forest, roots {self.roots[0]}-{self.roots[1]}, depth {self.depth}, exchange"


@dataclass(frozen=True, eq=False)
class Candidate:
    """A fixed component (the hook for other families, e.g. k-hop trees): its schedule and incidences.

    ``schedule`` is the component alone (:meth:`~synth.schedule.data.BaseSchedule.component_alone`);
    ``inc[s-1, O]`` counts the (transmission, route link) incidences of round ``s`` on orbit ``O``.
    """

    schedule: BaseSchedule
    inc: np.ndarray


@dataclass(frozen=True, eq=False)
class BalanceData:
    """Everything the CP-SAT model needs: options, candidates, orbits and bounds."""

    n_orbits: int
    n_rounds: int
    rev: np.ndarray
    options: tuple
    candidates: tuple
    max_weight: int

    @property
    def n_columns(self) -> int:
        return len(self.options) + len(self.candidates)


def orbit_reversal(topology, group) -> np.ndarray:
    """``rev[O]``: the orbit of the reverses of the links of orbit ``O``.

    Raises
    ------
    TopologyError
        If some link has no reverse (copies run against reduces, so both must exist).
    """
    rev_link = topology.link_ids(topology.link_dst, topology.link_src)
    if np.any(rev_link < 0):
        raise TopologyError("balanced BFS families need every link to have a reverse link")
    m = group.n_link_orbits
    rev = np.full(m, -1, dtype=np.int64)
    rev[group.link_orbit] = group.link_orbit[rev_link]
    # an automorphism maps reverse pairs to reverse pairs, so rev is well defined; check it anyway
    if not np.array_equal(rev[group.link_orbit], group.link_orbit[rev_link]):
        raise TopologyError("link reversal does not act on the link orbits")
    return rev


def _option(topology, group, kind, roots) -> Option:
    if topology.n_compute != topology.n_vertices:
        raise TopologyError("BFS families need every vertex to hold data (use candidates for switched networks)")
    roots = tuple(int(r) for r in roots)
    V, m = topology.n_vertices, group.n_link_orbits
    level = topology.bfs(list(roots), reverse=True).astype(np.int64)
    if np.any(level < 0):
        raise TopologyError(f"not every vertex reaches the roots {roots}")
    depth = int(level.max())
    if depth < 1:
        raise TopologyError("the roots cover every vertex: nothing to schedule")
    src, dst = topology.link_src.astype(np.int64), topology.link_dst.astype(np.int64)
    step = (level[src] >= 1) & (level[dst] == level[src] - 1)
    if kind == "forest":
        step &= ~np.isin(src, roots)
    links = np.flatnonzero(step)  # increasing link ids: the first per (vertex, orbit) is the smallest
    orb = group.link_orbit[links].astype(np.int64)
    key = src[links] * m + orb
    _, first = np.unique(key, return_index=True)
    pred = np.full((V, m), -1, dtype=np.int64)
    pred[src[links[first]], orb[first]] = dst[links[first]]
    mask = pred >= 0
    nonroot = np.ones(V, dtype=bool)
    nonroot[list(roots)] = False
    rows = np.concatenate([level[:, None], mask.astype(np.int64)], axis=1)[nonroot]
    uniq, inv, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    vtype = np.full(V, -1, dtype=np.int64)
    vtype[nonroot] = inv.ravel()
    n_rounds = 2 * depth + (1 if kind == "forest" else 0)
    fixed = np.zeros((n_rounds, m), dtype=np.int64)
    if kind == "forest":
        a, b = roots
        for u, w in ((a, b), (b, a)):
            e = int(topology.link_ids([u], [w])[0])
            if e < 0:
                raise TopologyError(f"exchange roots {a}, {b} are not adjacent")
            fixed[depth, group.link_orbit[e]] += 1
    return Option(kind, roots, depth, n_rounds, uniq[:, 0].copy(),
                  tuple(tuple(np.flatnonzero(r[1:]).tolist()) for r in uniq), counts.astype(np.int64),
                  fixed, level, vtype, pred)


def tree_options(topology, group, roots=(0,)) -> tuple:
    """One :class:`Option` per root: BFS trees rooted there (all roots must have the same eccentricity)."""
    out = tuple(_option(topology, group, "tree", (r,)) for r in roots)
    if len({o.n_rounds for o in out}) > 1:
        raise ScheduleError("tree roots with different eccentricities give different round counts")
    return out


def exchange_pairs(topology, group) -> tuple:
    """Adjacent root pairs for forests, one per class under the group, of least joint eccentricity.

    Every adjacent pair is the image of a pair ``(src, dst)`` of the first link of some link
    orbit; pairs whose link orbits (in either direction) agree are images of each other.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> from synth.symmetry.torus import torus_translations_negation
    >>> t = parse_torus("4x6"); exchange_pairs(t, torus_translations_negation(t))
    ((0, 6), (0, 1))
    >>> t = parse_torus("4x5"); exchange_pairs(t, torus_translations_negation(t))
    ((0, 5),)
    """
    rev = orbit_reversal(topology, group)
    E = topology.n_links
    first = np.full(group.n_link_orbits, E, dtype=np.int64)
    np.minimum.at(first, group.link_orbit, np.arange(E))
    seen, pairs = set(), []
    for o, e in enumerate(first.tolist()):
        key = frozenset((o, int(rev[o])))
        if key in seen:
            continue
        seen.add(key)
        a, b = int(topology.link_src[e]), int(topology.link_dst[e])
        if topology.is_compute[a] and topology.is_compute[b]:
            pairs.append((a, b))
    ecc = [int(topology.bfs(list(p), reverse=True).max()) for p in pairs]
    best = min(ecc)
    return tuple(p for p, e in zip(pairs, ecc) if e == best)


def forest_options(topology, group, pairs=None) -> tuple:
    """One :class:`Option` per adjacent root pair (default :func:`exchange_pairs`)."""
    pairs = exchange_pairs(topology, group) if pairs is None else tuple(tuple(p) for p in pairs)
    out = tuple(_option(topology, group, "forest", p) for p in pairs)
    if len({o.n_rounds for o in out}) > 1:
        raise ScheduleError("root pairs with different eccentricities give different round counts")
    return out


def candidate_columns(group, schedules) -> tuple:
    """Every component of the given base schedules as a fixed :class:`Candidate`.

    This is the hook for families built elsewhere (k-hop trees of :mod:`synth.models.balance.family`,
    hand-made trees, ...): the model only chooses their integer weights.
    """
    out = []
    m = group.n_link_orbits
    for base in schedules:
        for c in range(base.n_components):
            one = base.component_alone(c)
            inc = np.zeros((base.n_rounds, m), dtype=np.int64)
            np.add.at(inc, (np.repeat(one.round, one.route_lengths) - 1, group.link_orbit[one.route_links]), 1)
            out.append(Candidate(one, inc))
    return tuple(out)


def balance_data(topology, group, options=(), candidates=(), max_weight=16) -> BalanceData:
    """Bundle options and candidates (all with the same number of rounds) for the model."""
    rounds = {o.n_rounds for o in options} | {c.schedule.n_rounds for c in candidates}
    if len(rounds) != 1:
        raise ScheduleError(f"all components must have the same number of rounds, got {sorted(rounds)}")
    if max_weight < 1:
        raise ScheduleError("max_weight must be at least 1")
    return BalanceData(group.n_link_orbits, rounds.pop(), orbit_reversal(topology, group), tuple(options),
                       tuple(candidates), int(max_weight))


def unit_incidences(data) -> np.ndarray:
    """``columns x S``: base incidences of one unit of each option and candidate, per round."""
    rows = []
    for opt in data.options:
        inc = opt.fixed.sum(axis=1).astype(np.int64)
        sizes = opt.level_sizes()
        lv = np.arange(1, opt.depth + 1)
        inc[opt.reduce_round(lv) - 1] += sizes
        inc[opt.copy_round(lv) - 1] += sizes
        rows.append(inc)
    rows += [c.inc.sum(axis=1) for c in data.candidates]
    return np.asarray(rows, dtype=np.int64).reshape(-1, data.n_rounds)


def chunk_lower_bound(data, n_links: int) -> int:
    """Fewest chunks any Omega = 1 schedule can have whose chunks each run one unit of ``data``.

    Omega = 1 loads every link in every round that has a transmission, and a chunk adds at
    most ``max_unit inc_s(unit)`` link incidences to round ``s``; so chunks ``>= |E| / that``
    in every round, whatever the group and the chunk sizes.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> from synth.symmetry.torus import torus_translations
    >>> t = parse_torus("8x8"); g = torus_translations(t)
    >>> chunk_lower_bound(balance_data(t, g, forest_options(t, g)), t.n_links)  # |E|/2: the exchange round
    128
    >>> chunk_lower_bound(balance_data(t, g, tree_options(t, g)), t.n_links)  # one vertex at distance H
    256
    """
    best = unit_incidences(data).max(axis=0)
    best = best[best > 0]
    return int(max(-(-n_links // int(b)) for b in best)) if best.size else 0
