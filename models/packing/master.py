"""The timed trees' master LP (:mod:`synth.models.packing.timed`): one column per timed tree of an owner that
represents its orbit under the group, ``M_s`` per round, load rows per link orbit and round.

Examples
--------
>>> from synth.symmetry.spec import default_group
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.topology.torus import parse_torus
>>> from synth.models.packing.tree_space import TreeSpace
>>> d = damage(parse_torus("4x4"), parse_failures(parse_torus("4x4"), links=["0-1"]))
>>> g = default_group(d)
>>> mirrored(d), rows_per_round(d, g) == g.n_link_orbits
(True, True)
>>> MasterLP(TreeSpace.build(d, g, 5), g.order).n_load == 5 * g.n_link_orbits     # the reduce rounds' rows
True
"""

from __future__ import annotations

import numpy as np

from synth.models.backends.solvers import new_highs
from synth.models.packing.routed import needs_routes
from synth.models.packing.tree_space import TreeSpace

__all__ = ["MasterLP", "mirrored", "rows_per_round"]


def _column_rows(space, orbits, L, plink, routes, mirror=False, window=None):
    """Load rows (round-major ``(s - 1) * n + o``: ``o`` the link's orbit, ``orbits = (orbit of each link, size
    of each orbit)``, ``n`` orbits) and loads of one tree lifted by the group: a use of link ``l`` loads each
    link of its orbit ``O`` ``|G| / |O|`` times (counted on the orbit's row without lifting the tree: a
    16x16x16 periodic group of order 1,024 lifted every tree to 8 M link uses).  ``routes[0]`` is the route of
    each vertex's arc up, ``routes[1]`` that of its reverse down.

    ``window`` ``(R_j, o)``: the tree has ``R_j`` reduce rounds and runs in rounds ``o + 1 .. o + 2 R_j``
    (None: ``(R, 0)``, every round).  ``mirror``: the rows of rounds ``1..R`` only, for the tree in its window
    and the tree in the mirrored window together, each at half weight (a load in round ``s > R`` on link ``e``
    counts in round ``2R + 1 - s`` on ``e``'s reverse, whose orbit is that of the image's reverse): a window
    centred in the rounds is its own mirror, and its rows are its reduce rounds' loads.  ``orbits`` None: one row
    per link, the tree lifted by every element (the same LP, :class:`MasterLP`)."""
    lift = orbits is None
    (orbit, size), G, R = (None, None) if lift else orbits, space.images.shape[0], space.R
    n = space.images.shape[1] if lift else size.size
    Rj, o = (R, 0) if window is None else window
    v = np.flatnonzero(plink >= 0)
    parts = []
    for q, rnd in ((routes[0][v], L[v] + o), (routes[1][v], 2 * Rj + 1 - L[v] + o)):
        links = space.route_links[q]                                        # (n, W), padded with -1
        has = links >= 0
        rnds = np.broadcast_to(rnd[:, None], links.shape)[has]
        used = links[has]
        if mirror:
            late = rnds > R
            rnds = np.where(late, 2 * R + 1 - rnds, rnds)
            used = np.where(late, space.rev[used], used)
        parts.append(((rnds - 1)[None, :] * n + (space.images[:, used] if lift else orbit[used])).ravel())
    rows, counts = np.unique(np.concatenate(parts), return_counts=True)
    loads = counts * (1.0 if lift else G / size[rows % n]) * (0.5 if mirror else 1.0)
    return rows.astype(np.int32), loads


class MasterLP:
    """The restricted master LP in HiGHS, columns added as they are priced (:mod:`synth.models.packing.timed`).

    ``method``: ``"ipm"`` solves each restricted master by the interior point method without crossover,
    whose duals lie near the centre of the optimal face: priced at them, column generation needs far
    fewer solves than at the extreme duals of a simplex basis (on the 8x8 torus with one failed link and
    60 CPU s, 96.5 % of the volume bound against 91.7 % at ``R = 12``: ``bench/timed_lp.py``);
    ``solve(vertex=True)`` adds the crossover for a vertex solution (the pricing's last look, and the
    weights that are rounded).  ``"simplex"``: primal simplex from the last basis (exact values at
    every solve: the exact pricing uses it).  ``orbits``: one load row per link orbit of the group and
    round (False: one per link; the same LP).

    Where every arc is one link and a link's reverse has its bandwidth (:func:`mirrored`), a copy round's
    rows repeat the reduce rounds' (a tree's copy over ``rev e`` in round ``2R + 1 - s`` loads what its
    reduce over ``e`` did in round ``s``), so at an optimum ``M_s = M_{2R+1-s}``: the master keeps the
    reduce rounds' rows only, each ``M_s`` counted twice (the same LP with half the rows; ``mirror=False``
    keeps every round's).  A tree in a window off the centre (:func:`_column_rows`) is then a column with
    its mirror image, half each, and :meth:`solve` returns prices for every round such that a column's price
    is its tree's load priced in its own window.
    """

    def __init__(self, space: TreeSpace, G: int, method: str = "ipm", orbits: bool = True, mirror: bool = True):
        import highspy  # optional solver: imported when used

        if method not in ("ipm", "simplex"):
            raise ValueError(f"method must be 'ipm' or 'simplex', got {method!r}")
        self.space, self.G, self.method, self.orbits = space, G, method, orbits
        E = space.images.shape[1]
        # a column is a tree summed over the group, so its load is the same on every link of an orbit: one
        # row per (round, link orbit) is the same LP with |orbit| times fewer rows and nonzeros
        order, starts, _, orbit = space.orbits if orbits else (np.arange(E), np.arange(E), None, np.arange(E))
        self.reps, self.orbit = order[starts], orbit                        # each orbit's least link, its index
        self.orbit_size = np.bincount(self.orbit, minlength=self.reps.size).astype(np.float64)
        self.h = h = new_highs()
        h.setOptionValue("presolve", "off")
        h.setOptionValue("threads", 1)
        if method == "ipm":
            h.setOptionValue("solver", "ipm")
            h.setOptionValue("run_crossover", "off")
            # IPX on the dual: with windows on the 16x16 torus (5,421 rows, 2,969 columns of about 250
            # nonzeros) the primal's starting basis took minutes, the dual 4 s; mi250:2's master 0.94 s for 1.09
            h.setOptionValue("ipx_dualize_strategy", 1)
        else:
            # columns arrive between solves: primal simplex from the last basis
            h.setOptionValue("solver", "simplex")
            h.setOptionValue("simplex_strategy", 4)
        R, n = space.R, self.reps.size
        self.mirror = mirror and mirrored(space.topology)
        S = R if self.mirror else 2 * R                                     # rounds with rows
        self.n_load = S * n
        inf = highspy.kHighsInf
        self.n_m = S                                                        # the columns M_s come first
        h.addCols(S, np.full(S, 2.0 if self.mirror else 1.0), np.zeros(S), np.full(S, inf), 0,
                  np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        starts = np.arange(self.n_load, dtype=np.int32)
        # load <= b_e M_s (every link of an orbit has the same bandwidth: groups keep them)
        bw = np.tile(space.topology.link_bandwidth[self.reps], S)
        h.addRows(self.n_load, np.full(self.n_load, -inf), np.zeros(self.n_load), self.n_load, starts,
                  np.repeat(np.arange(S, dtype=np.int32), n), -bw)
        h.addRows(1, np.ones(1), np.ones(1), 0, np.zeros(1, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.keys, self.root, self.labels, self.plink, self.routes, self.idle = set(), [], [], [], [], []
        self.window = []                                                    # per column: (R_j, o)

    @property
    def n_columns(self) -> int:
        return len(self.root)

    @staticmethod
    def _key(k, L, plink, routes, window):
        return int(k), L.tobytes(), plink.tobytes(), routes.tobytes(), window

    def add(self, k, L, plink, routes=None, window=None) -> bool:
        """Add the tree (owner index ``k``; ``routes``: ``(2, V)``, the routes up and down of each vertex's arc,
        None: the first route of the arc and of its reverse; ``window``: ``(R_j, o)``, its reduce rounds and
        offset, None: ``(R, 0)``, labels ``L`` then in ``1..R_j``) unless it is already a column or takes a leaf
        of the space as a parent; True if added."""
        if routes is None:
            first = self.space.route_ptr[:-1]
            a = np.maximum(plink, 0)
            routes = np.where(plink >= 0, np.stack([first[a], first[self.space.arc_rev[a]]]), -1)
        routes = np.asarray(routes, dtype=np.int64)
        if self.space.leaf is not None and self.space.leaf[self.space.arc_dst[plink[plink >= 0]]].any():
            return False        # a tree through a leaf (a failed chip's copy forwards nothing) is not a column
        window = (self.space.R, 0) if window is None else (int(window[0]), int(window[1]))
        key = self._key(k, L, plink, routes, window)
        if key in self.keys:
            return False
        self.keys.add(key)
        rows, loads = _column_rows(self.space, (self.orbit, self.orbit_size) if self.orbits else None, L, plink,
                                   routes, self.mirror, window)
        rows = np.r_[rows, self.n_load].astype(np.int32)
        vals = np.r_[loads, float(self.G)]
        self.h.addCols(1, np.zeros(1), np.zeros(1), np.full(1, np.inf), rows.size, np.zeros(1, np.int32), rows, vals)
        self.root.append(int(k))
        self.idle.append(0)
        self.labels.append(L.copy())
        self.plink.append(plink.copy())
        self.routes.append(routes.copy())
        self.window.append(window)
        return True

    def purge(self, idle: int) -> np.ndarray:
        """Drop the tree columns that have had weight 0 for ``idle`` solves (nonbasic ones only under the
        simplex); they may come back.  Returns which of the columns before it are kept."""
        import highspy  # optional solver: imported when used

        if self.method == "simplex":
            status = self.h.getBasis().col_status[self.n_m:]
            drop = [j for j, (i, st) in enumerate(zip(self.idle, status))
                    if i >= idle and st != highspy.HighsBasisStatus.kBasic]
        else:
            drop = [j for j, i in enumerate(self.idle) if i >= idle]
        kept = np.ones(self.n_columns, dtype=bool)
        if not drop:
            return kept
        kept[drop] = False
        self.h.deleteCols(len(drop), np.asarray(drop, dtype=np.int32) + self.n_m)
        gone = set(drop)
        for j in drop:
            self.keys.discard(self._key(self.root[j], self.labels[j], self.plink[j], self.routes[j], self.window[j]))
        for name in ("root", "labels", "plink", "routes", "idle", "window"):
            setattr(self, name, [v for j, v in enumerate(getattr(self, name)) if j not in gone])
        return kept

    def solve(self, vertex: bool = False, seconds: float | None = None):
        """Solve; returns ``(objective, x, pi (2R, E), mu)`` with ``pi >= 0`` the load rows' prices, or None
        when HiGHS stopped after ``seconds`` of this solve (wall clock; None: no limit) without an optimum.

        ``vertex``: under ``"ipm"``, cross over to a vertex (its weights and extreme duals).  A column
        counts as used when its weight is above ``1e-6`` of the largest (an interior point leaves every
        weight slightly positive)."""
        import highspy  # optional solver: imported when used

        interior = self.method == "ipm" and not vertex
        if self.method == "ipm":
            self.h.setOptionValue("run_crossover", "off" if interior else "on")
        # HiGHS's time limit counts the run time of every solve of this model so far, not of this one
        self.h.setOptionValue("time_limit", highspy.kHighsInf if seconds is None else
                              self.h.getRunTime() + float(seconds))
        self.h.run()
        if seconds is not None and self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        sol = self.h.getSolution()
        x = np.maximum(np.asarray(sol.col_value)[self.n_m:], 0.0)
        if not interior:
            x = np.where(x > 1e-12 * max(x.max(initial=0.0), 1e-300), x, 0.0)
        y = np.asarray(sol.row_dual)
        # an orbit row's price spread evenly over its links: every column costs the same as in the full LP
        pi = (np.maximum(-y[:self.n_load], 0.0).reshape(-1, self.reps.size) / self.orbit_size)[:, self.orbit]
        if self.mirror:     # round 2R + 1 - s on rev e is priced as round s on e, and a column is two trees at half
            pi = 0.5 * np.concatenate([pi, pi[::-1][:, self.space.rev]])
        used = x > (1e-6 * x.max() if interior and x.size else 0.0)
        self.idle = [0 if u else i + 1 for u, i in zip(used.tolist(), self.idle)]
        return float(self.h.getInfo().objective_function_value), x, pi, float(y[self.n_load])

    @property
    def tolerance(self) -> float:
        """Relative reduced cost below which a tree improves: the interior point's duals are accurate to
        about 1e-8 of the objective, a basis's to round-off."""
        return 1e-7 if self.method == "ipm" else 1e-9


def mirrored(t) -> bool:
    """True when every arc of the timed trees on ``t`` is one link (no switches) and every link's reverse has
    its bandwidth: a tree's copy rounds then load exactly what its reduce rounds did, mirrored
    (:class:`MasterLP` keeps the reduce rounds' rows only)."""
    if needs_routes(t) is not None:
        return False
    bw = t.link_bandwidth
    return bool(np.array_equal(bw, bw[t.link_ids(t.link_dst, t.link_src)]))


def rows_per_round(t, group) -> int:
    """Load rows of :class:`MasterLP` per reduce round on ``t`` with ``group``: one per link orbit, twice
    that unless the copy rounds mirror the reduce rounds (:func:`mirrored`)."""
    orbits = t.n_links if group is None else group.n_link_orbits
    return orbits if mirrored(t) else 2 * orbits
