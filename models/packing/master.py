"""The timed trees' restricted master LP in HiGHS: one column per tree, load rows per link orbit and round.

A column is a tree of an owner that represents its orbit under the group, lifted by every element
(:mod:`synth.models.packing.timed`); its load on a link in a round is how many of its lifted arcs'
routes cross the link then.  Rows: ``load_{e,s} <= b_e M_s`` for every link orbit ``e`` and round
``s`` (one row per orbit: a lifted column loads every link of an orbit alike), and ``G * sum x = 1``
(the owners' shares free); the objective ``sum_s M_s``; the timed trees' column generation
(:func:`synth.models.packing.timed.solve_timed`) solves it.

Rows that cannot bind are left out (:func:`load_rows`): a column loads a link only through the routes
of :class:`~synth.models.packing.tree_space.TreeSpace`, so links on exactly the same routes carry the
same load in every column and round (a GPU's link to its NIC and the NIC's link to the rail switch),
and only the one of least bandwidth needs rows; a link on no route carries nothing.  Every dropped
link's constraint follows from a kept one's, so the LP is the same with fewer rows.

Examples
--------
>>> from synth.topology.user import topology_from_json
>>> from synth.models.packing.tree_space import TreeSpace
>>> pair = topology_from_json({"vertices": 2, "links": [[0, 1]], "bandwidth": [2]})
>>> lp = MasterLP(TreeSpace.build(pair, None, R=1), G=1, method="simplex")
>>> lp.add(0, np.array([2, 1]), np.array([-1, 1])), lp.add(1, np.array([1, 2]), np.array([0, -1]))
(True, True)
>>> obj, x, pi, mu = lp.solve()
>>> round(obj, 6), x.round(6).tolist()      # half the vector each way, over 2 GB/s, up then down
(0.5, [0.5, 0.5])
"""

from __future__ import annotations

import numpy as np

from synth.models.backends.solvers import new_highs
from synth.models.packing.tree_space import TreeSpace

__all__ = ["MasterLP", "load_rows", "n_load_orbits"]


def _column_rows(space, L, plink, routes):
    """Row indices (round-major ``(s - 1) * E + e``) and counts of one tree's lifted loads; ``routes[0]`` is
    the route of each vertex's arc up, ``routes[1]`` that of its reverse down."""
    E, R = space.images.shape[1], space.R
    v = np.flatnonzero(plink >= 0)
    parts = []
    for q, rnd in ((routes[0][v], L[v]), (routes[1][v], 2 * R + 1 - L[v])):
        links = space.route_links[q]                                        # (n, W), padded with -1
        has = links >= 0
        rnds = np.broadcast_to(rnd[:, None], links.shape)[has]
        parts.append(((rnds - 1)[None, :] * E + space.images[:, links[has]]).ravel())
    rows, counts = np.unique(np.concatenate(parts), return_counts=True)
    return rows.astype(np.int32), counts.astype(np.float64)


def load_rows(space: TreeSpace) -> np.ndarray:
    """Per link whether it needs load rows (module docstring): the link of least bandwidth (then least index)
    among those on the same set of routes, none of those on no route.

    >>> from synth.topology.user import topology_from_json
    >>> path = topology_from_json({"vertices": 3, "compute": [0, 2], "links": [[0, 1], [1, 2]],
    ...                            "bandwidth": [5, 3]})
    >>> load_rows(TreeSpace.build(path, None, R=1)).tolist()      # 0-1-2 through a forwarding vertex 1: the 3 GB/s links
    [False, False, True, True]
    """
    E = space.topology.n_links
    q, w = np.nonzero(space.route_links >= 0)
    link = space.route_links[q, w]
    order = np.lexsort((q, link))
    link, q = link[order], q[order]
    start = np.searchsorted(link, np.arange(E + 1))
    # the set of routes through each link, as bytes: equal sets, equal loads
    sig = [q[start[e]:start[e + 1]].tobytes() for e in range(E)]
    _, group = np.unique(np.array(sig, dtype=object), return_inverse=True)
    bw = space.topology.link_bandwidth
    first = np.lexsort((np.arange(E), bw, group))
    lead = np.r_[True, group[first][1:] != group[first][:-1]]
    keep = np.zeros(E, dtype=bool)
    keep[first[lead]] = True
    return keep & (np.diff(start) > 0)


def _orbits(space: TreeSpace, orbits: bool):
    """``(reps, orbit)``: the representative link of every orbit that needs rows, and per link its orbit's
    position among them (-1: no rows).  An orbit has rows when one of its links does (:func:`load_rows`)."""
    E = space.images.shape[1]
    rep = space.images.min(axis=0) if orbits else np.arange(E)
    need = np.zeros(E, dtype=bool)
    np.logical_or.at(need, rep, load_rows(space))
    reps = np.flatnonzero((rep == np.arange(E)) & need)
    at = np.searchsorted(reps, rep)
    return reps, np.where(need[rep], at, -1)


def n_load_orbits(space: TreeSpace) -> int:
    """How many link orbits have load rows in :class:`MasterLP` (per round)."""
    return int(_orbits(space, True)[0].size)


class MasterLP:
    """The restricted master LP in HiGHS, columns added as they are priced (module docstring).

    ``method``: ``"ipm"`` solves each restricted master by the interior point method without crossover,
    whose duals lie near the centre of the optimal face: priced at them, column generation needs far
    fewer solves than at the extreme duals of a simplex basis (on the 8x8 torus with one failed link and
    60 CPU s, 96.5 % of the volume bound against 91.7 % at ``R = 12``: ``bench/timed_lp.py``);
    ``solve(vertex=True)`` adds the crossover for a vertex solution (the pricing's last look, and the
    weights that are rounded).  ``"simplex"``: primal simplex from the last basis (exact values at
    every solve: the exact pricing uses it).  ``orbits``: one load row per link orbit of the group and
    round (False: one per link; the same LP).
    """

    def __init__(self, space: TreeSpace, G: int, method: str = "ipm", orbits: bool = True):
        import highspy  # optional solver: imported when used

        if method not in ("ipm", "simplex"):
            raise ValueError(f"method must be 'ipm' or 'simplex', got {method!r}")
        self.space, self.G, self.method = space, G, method
        # a column is a tree summed over the group, so its load is the same on every link of an orbit: one
        # row per (round, link orbit) is the same LP with |orbit| times fewer rows and nonzeros
        # links whose rows cannot bind have none (load_rows): their orbit is -1
        self.reps, self.orbit = _orbits(space, orbits)
        self.orbit_size = np.bincount(self.orbit[self.orbit >= 0], minlength=self.reps.size).astype(np.float64)
        self.h = h = new_highs()
        h.setOptionValue("presolve", "off")
        h.setOptionValue("threads", 1)
        if method == "ipm":
            h.setOptionValue("solver", "ipm")
            h.setOptionValue("run_crossover", "off")
        else:
            # columns arrive between solves: primal simplex from the last basis
            h.setOptionValue("solver", "simplex")
            h.setOptionValue("simplex_strategy", 4)
        R, n = space.R, self.reps.size
        self.n_load = 2 * R * n
        inf = highspy.kHighsInf
        h.addCols(2 * R, np.ones(2 * R), np.zeros(2 * R), np.full(2 * R, inf), 0, np.zeros(0, np.int32),
                  np.zeros(0, np.int32), np.zeros(0))
        starts = np.arange(self.n_load, dtype=np.int32)
        # load <= b_e M_s (every link of an orbit has the same bandwidth: groups keep them)
        bw = np.tile(space.topology.link_bandwidth[self.reps], 2 * R)
        h.addRows(self.n_load, np.full(self.n_load, -inf), np.zeros(self.n_load), self.n_load, starts,
                  np.repeat(np.arange(2 * R, dtype=np.int32), n), -bw)
        h.addRows(1, np.ones(1), np.ones(1), 0, np.zeros(1, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.keys, self.root, self.labels, self.plink, self.routes, self.idle = set(), [], [], [], [], []

    @property
    def n_columns(self) -> int:
        return len(self.root)

    @staticmethod
    def _key(k, L, plink, routes):
        return int(k), L.tobytes(), plink.tobytes(), routes.tobytes()

    def add(self, k, L, plink, routes=None) -> bool:
        """Add the tree (owner index ``k``; ``routes``: ``(2, V)``, the routes up and down of each vertex's arc,
        None: the first route of the arc and of its reverse) unless it is already a column; True if added."""
        if routes is None:
            first = self.space.route_ptr[:-1]
            a = np.maximum(plink, 0)
            routes = np.where(plink >= 0, np.stack([first[a], first[self.space.arc_rev[a]]]), -1)
        routes = np.asarray(routes, dtype=np.int64)
        key = self._key(k, L, plink, routes)
        if key in self.keys:
            return False
        self.keys.add(key)
        rows, counts = _column_rows(self.space, L, plink, routes)
        E = self.space.images.shape[1]
        s, e = np.divmod(rows, E)
        mine = (self.orbit[e] >= 0) & (self.reps[np.maximum(self.orbit[e], 0)] == e)   # the representatives' rows
        rows = np.r_[s[mine] * self.reps.size + self.orbit[e[mine]], self.n_load].astype(np.int32)
        vals = np.r_[counts[mine], float(self.G)]
        self.h.addCols(1, np.zeros(1), np.zeros(1), np.full(1, np.inf), rows.size, np.zeros(1, np.int32), rows, vals)
        self.root.append(int(k))
        self.idle.append(0)
        self.labels.append(L.copy())
        self.plink.append(plink.copy())
        self.routes.append(routes.copy())
        return True

    def purge(self, idle: int):
        """Drop the tree columns that have had weight 0 for ``idle`` solves (nonbasic ones only under the
        simplex); they may come back."""
        import highspy  # optional solver: imported when used

        R = self.space.R
        if self.method == "simplex":
            status = self.h.getBasis().col_status[2 * R:]
            drop = [j for j, (i, st) in enumerate(zip(self.idle, status))
                    if i >= idle and st != highspy.HighsBasisStatus.kBasic]
        else:
            drop = [j for j, i in enumerate(self.idle) if i >= idle]
        if not drop:
            return 0
        self.h.deleteCols(len(drop), np.asarray(drop, dtype=np.int32) + 2 * R)
        gone = set(drop)
        for j in drop:
            self.keys.discard(self._key(self.root[j], self.labels[j], self.plink[j], self.routes[j]))
        for name in ("root", "labels", "plink", "routes", "idle"):
            setattr(self, name, [v for j, v in enumerate(getattr(self, name)) if j not in gone])
        return len(drop)

    def solve(self, vertex: bool = False):
        """Solve; returns ``(objective, x, pi (2R, E), mu)`` with ``pi >= 0`` the load rows' prices.

        ``vertex``: under ``"ipm"``, cross over to a vertex (its weights and extreme duals).  A column
        counts as used when its weight is above ``1e-6`` of the largest (an interior point leaves every
        weight slightly positive)."""
        interior = self.method == "ipm" and not vertex
        if self.method == "ipm":
            self.h.setOptionValue("run_crossover", "off" if interior else "on")
        self.h.run()
        sol = self.h.getSolution()
        R = self.space.R
        x = np.maximum(np.asarray(sol.col_value)[2 * R:], 0.0)
        if not interior:
            x = np.where(x > 1e-12 * max(x.max(initial=0.0), 1e-300), x, 0.0)
        y = np.asarray(sol.row_dual)
        # an orbit row's price spread evenly over its links: every column costs the same as in the full LP
        pi = (np.maximum(-y[:self.n_load], 0.0).reshape(2 * R, self.reps.size) / self.orbit_size)
        pi = np.where(self.orbit >= 0, pi[:, np.maximum(self.orbit, 0)], 0.0)
        used = x > (1e-6 * x.max() if interior and x.size else 0.0)
        self.idle = [0 if u else i + 1 for u, i in zip(used.tolist(), self.idle)]
        return float(self.h.getInfo().objective_function_value), x, pi, float(y[self.n_load])

    @property
    def tolerance(self) -> float:
        """Relative reduced cost below which a tree improves: the interior point's duals are accurate to
        about 1e-8 of the objective, a basis's to round-off."""
        return 1e-7 if self.method == "ipm" else 1e-9
