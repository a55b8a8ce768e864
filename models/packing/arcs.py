"""Arc sets and the packing LP over them: parent choices, shares, loads per round.

A packing model (:mod:`~synth.models.packing.layered`: one-hop trees layered by distance;
:mod:`~synth.models.packing.routed`: trees whose arcs are routes through switches or one-way
links) is one or more :class:`ArcSet` s: per arc, the owner (an index into the represented roots),
the child vertex whose parent it chooses, and the links the arc loads, in which round.  Every arc
of a set has a variable ``y >= 0``; the arcs of one (owner, child) pair share the owner's share
``w_r`` (``sum y = w_r``), and the load of a link in a round, summed over every image under the
group, is at most ``b_e M_s`` (``b_e`` the link's bandwidth: a round lasts as long as its slowest link's
load over bandwidth, so ``M_s`` is that time per element); the LP minimizes ``sum_s M_s``
(:func:`build_packing_lp`).  The bandwidth multiplies ``M_s`` rather than dividing the loads, so a load
row's dual stays a price per element on the link, which the pricing of timed trees takes as it is.
:mod:`~synth.models.packing.rounding` turns a solution into an integer schedule.

Examples
--------
>>> import numpy as np
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("3x3")
>>> arcs = ArcSet(np.zeros(1, int), np.array([1]), ((np.array([[0]]), np.array([1])),))
>>> m, ys, w, M = build_packing_lp("toy", np.array([0]), None, 1, t, [arcs])
>>> [block[-1] for block in m.rows], m.n_rows  # one share row, one pair row, one load row per link
(['shares', 'pass_share', 'load'], 38)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.errors import SynthError
from synth.models.backends.linear import LinearModel
from synth.topology.failures import whole_network

__all__ = ["ArcSet", "build_packing_lp", "stabilizers", "load_orbits", "load_duals", "lifted_links", "no_solution",
           "volume_bound", "TIME_LIMIT_HINT"]

#: what to do when an LP ran out of time (the CLI spells `time_limit` as its flag)
TIME_LIMIT_HINT = "give a larger `time_limit`"


@dataclass(frozen=True, eq=False)
class ArcSet:
    """Parent choices with one variable each: ``root`` (index into the roots), ``child``, and ``uses``:
    ``((links, rounds), ...)``, each arc loading the links of row ``links[i]`` (padded with ``-1``) in
    round ``rounds[i]``."""

    root: np.ndarray
    child: np.ndarray
    uses: tuple

    @property
    def n_arcs(self) -> int:
        return int(self.child.size)


def lifted_links(group, links) -> np.ndarray:
    """``out[i, j]``: element ``i`` of ``group`` applied to link ``links[j]`` (one row when there is no group)."""
    if group is None:
        return np.asarray(links, dtype=np.int64)[None, :]
    return group.link_images(links).astype(np.int64)


def volume_bound(t) -> float:
    """The volume bound per element with bandwidths: ``2 (p - 1) d_min / sum_e b_e`` (GB/s; ``|E|`` when every
    link has bandwidth 1).

    Every element crosses ``2 (p - 1) d_min`` links at least, and in a round of length ``M_s`` the links carry
    at most ``M_s sum_e b_e``; the packing LPs report their value as a share of this.

    >>> from synth.topology.user import topology_from_json
    >>> volume_bound(topology_from_json({"vertices": 2, "links": [[0, 1]], "bandwidth": [4]}))
    0.25
    """
    from synth.check.bounds.bandwidth import min_compute_distance   # the checker's d_min: the same bound

    t = whole_network(t)    # links a schedule leaves idle count: the network's bound
    return 2 * (t.n_compute - 1) * min_compute_distance(t) / float(t.link_bandwidth.sum())


def stabilizers(group, roots) -> np.ndarray:
    """How many elements of ``group`` fix each of the represented owners ``roots``: owner ``r``'s share ``w_r``
    reaches each vertex of its orbit that many times once lifted.

    >>> from synth.symmetry.spec import default_group
    >>> from synth.topology.failures import damage, parse_failures
    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("6x6"); d = damage(t, parse_failures(t, links=["0-1"]))
    >>> stabilizers(default_group(d), np.array([0, 2, 6])).tolist()   # a mirror fixes the failed link's row
    [2, 2, 1]
    """
    if group is None:
        return np.ones(len(roots), dtype=np.int64)
    return group.order // np.bincount(group.vertex_orbit)[group.vertex_orbit[np.asarray(roots)]]


def build_packing_lp(name, roots, group, n_rounds, t, arcsets, free_shares=True):
    """The packing LP on topology ``t`` as a :class:`~synth.models.backends.linear.LinearModel`, its represented
    owners ``roots`` (vertices); returns ``(model, ys, w, M)``.

    ``ys`` holds the columns of each arc set; ``free_shares=False`` gives every lifted owner the same share (a
    represented owner fixed by ``s`` elements of ``group`` is lifted onto each vertex of its orbit ``s`` times, so
    its ``w`` is ``1 / (p s)``; the same ``w`` for all gave the owners on a failed link's row of a damaged 6x6
    torus, which a mirror fixes, twice the others' block of a reduce-scatter).  Rows: ``shares`` (the lifted
    shares sum to one), ``equal_shares``, ``pass_share`` per set (each pair passes its owner's share to its arcs),
    then ``load`` (every link orbit of ``group`` and round,
    round-major: the load at most ``b_e M_s``, ``b_e`` the link's bandwidth; :func:`load_duals` reads their duals
    as prices per link).
    """
    G = 1 if group is None else group.order
    E, n_vertices, n_roots = t.n_links, t.n_vertices, len(roots)
    m = LinearModel(name=name)
    ys = [m.add_vars(a.n_arcs, 0.0, np.inf, integer=False) for a in arcsets]
    w = m.add_vars(n_roots, 0.0, np.inf, integer=False)
    M = m.add_vars(n_rounds, 0.0, np.inf, integer=False, cost=1.0)
    # every lifted chunk's shares sum to one vector: G * sum_r w_r = 1
    m.add_rows(np.zeros(n_roots), w, np.full(n_roots, float(G)), 1, 1.0, 1.0, "shares")
    if not free_shares:   # s_r w_r the same for every owner: each lifted owner's share
        stab = stabilizers(group, roots).astype(float)
        m.add_rows(np.arange(n_roots - 1).repeat(2), np.stack([w[:-1], w[1:]], 1).ravel(),
                   np.stack([stab[:-1], -stab[1:]], 1).ravel(), n_roots - 1, 0.0, 0.0, "equal_shares")
    # each non-root vertex passes its owner's whole share to its parents
    for a, y in zip(arcsets, ys):
        key = a.root * n_vertices + a.child
        uniq, pair = np.unique(key, return_inverse=True)
        rows = np.concatenate([pair, np.arange(uniq.size)])
        cols = np.concatenate([y, w[uniq // n_vertices]])
        vals = np.concatenate([np.ones(a.n_arcs), -np.ones(uniq.size)])
        m.add_rows(rows, cols, vals, uniq.size, 0.0, 0.0, "pass_share")
    # load of link e in round s, over every lifted image, is at most b_e M_s.  A lifted load is the same on every
    # link of an orbit (an arc over link l loads each link of l's orbit O |G| / |O| times), so one row per link
    # orbit and round is the same LP with |O| times fewer rows and G times fewer nonzeros (a periodic 16x16x16,
    # group of order 1,024: 0.4 M nonzeros against 300 M)
    orbit, size = load_orbits(group, E)
    n_orbits = size.size
    rows, cols, vals = [], [], []
    for a, y in zip(arcsets, ys):
        for links, rnd in a.uses:
            links = np.asarray(links).reshape(a.n_arcs, -1)
            for k in range(links.shape[1]):
                sel = np.flatnonzero(links[:, k] >= 0)
                o = orbit[links[sel, k]]
                rows.append((rnd[sel] - 1) * n_orbits + o)
                cols.append(y[sel])
                vals.append(G / size[o])
    reps = np.unique(orbit, return_index=True)[1]
    rows.append(np.arange(n_rounds * n_orbits))
    cols.append(np.repeat(M, n_orbits))
    vals.append(-np.tile(t.link_bandwidth[reps], n_rounds))
    m.add_rows(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), n_rounds * n_orbits, -np.inf, 0.0,
               "load")
    return m, ys, w, M


def load_orbits(group, E: int) -> tuple:
    """``(orbit, size)``: the load row of each of the ``E`` links (its orbit under ``group``) and each row's links.

    >>> from synth.symmetry.spec import default_group
    >>> from synth.topology.torus import parse_torus
    >>> orbit, size = load_orbits(default_group(parse_torus("4x4")), 64)
    >>> int(orbit.max()), size.tolist()        # Γ of a torus is regular on its links: one orbit
    (0, [64])
    """
    if group is None:
        return np.arange(E), np.ones(E, dtype=np.int64)
    return np.asarray(group.link_orbit, dtype=np.int64), np.asarray(group.orbit_sizes, dtype=np.int64)


def load_duals(row_dual, n_rounds: int, group, E: int) -> np.ndarray:
    """``n_rounds x E`` prices per element on each link from the duals of a :func:`build_packing_lp` model's rows
    (minus those of its load rows, which come last), each link orbit's spread evenly over its links: a dual of
    the LP with one load row per link, of the same value.

    >>> load_duals(np.array([0.0, -2.0, -4.0]), 2, None, 1).tolist()     # the last two rows: one link, two rounds
    [[2.0], [4.0]]
    """
    orbit, size = load_orbits(group, E)
    per_orbit = -np.asarray(row_dual)[-n_rounds * size.size:].reshape(n_rounds, size.size)
    return per_orbit[:, orbit] / size[orbit]


def no_solution(kind: str, t, sol, time_limit, hint: str = TIME_LIMIT_HINT) -> SynthError:
    """The error of the ``kind`` LP on ``t`` that ended without a solution (``sol``, a HiGHS run).

    When it ran until ``time_limit`` (seconds) it says so, and ``hint``; else it names HiGHS's status.

    >>> from types import SimpleNamespace as run
    >>> t = run(name="mesh 16x16")
    >>> str(no_solution("depth-bounded", t, run(status="unknown", seconds=19.9), 20.0))
    'the depth-bounded LP on mesh 16x16 found no solution within the time limit (20 s): give a larger `time_limit`'
    >>> str(no_solution("routed", t, run(status="infeasible", seconds=0.1), 20.0))
    'the routed LP found no solution on mesh 16x16 (infeasible)'
    """
    if str(sol.status) == "unknown" and time_limit is not None and sol.seconds >= 0.95 * time_limit:
        return SynthError(f"the {kind} LP on {t.name} found no solution within the time limit ({time_limit:g} s): "
                          f"{hint}")
    return SynthError(f"the {kind} LP found no solution on {t.name} ({sol.status})")
