"""Lower bounds: the layered-graph LP of the k-hop tree problem, aggregated over the root's stabilizer.

Layered graph (Gouveia, Simonetti & Uchoa 2011).  Node ``(i, h)`` means "vertex ``i``
at depth ``h``"; the hop-indexed arc ``(i, j, h)`` goes from ``(i, h-1)`` to ``(j, h)``
(``(0, 0)`` is the root).  A k-hop tree is a set of arcs that reaches every vertex
exactly once.  The LP (variables in ``[0, 1]``):

* ``y[j, h] = sum_i z[i, j, h]``                (definition)
* ``sum_h y[j, h] = 1``                          (every vertex once)
* ``z[i, j, h] <= y[i, h-1]``                    (a parent exists at the depth above)
* ``z(delta-(S)) >= 1`` for every set ``S`` of layered nodes that holds every copy
  ``(j, 1..k)`` of a vertex ``j`` but not the root (directed cuts: the tree reaches ``j``).

The cuts are separated by max-flow from the root to the copies of ``j``; a nested
round raises the found cut's arcs to capacity 1 and looks again.

Symmetry.  The root's stabilizer maps the LP to itself, so averaging an optimum over
the group gives an invariant optimum: restricting to invariant solutions (one
variable per orbit of arcs, one row per orbit of rows) loses nothing.  The variable
of an orbit stands for the common value of its arcs.  A dual ``u`` of this aggregated
LP spreads to a dual of the full LP (``u_R / |R|`` on each row of the orbit ``R``) with
the same value, and the reduced cost of each arc of an orbit ``O`` is the aggregated
reduced cost divided by ``|O|``; this is what makes reduced-cost fixing on single arcs valid.

The reported bound is always the Lagrangian value ``b.u + sum_c min(0, rc_c)`` of the
current duals, recomputed here in float64 from the matrix we built (not read from the
LP solver), so it is valid for any duals, converged or not.

Examples
--------
>>> from synth.torus import parse_torus
>>> from synth.models._khop_instance import distance_matrix, root_stabilizer, hop_arcs
>>> t = parse_torus("5x5")
>>> lp = LayeredLP(distance_matrix(t), 2, root_stabilizer(t), *hop_arcs(t, 2))
>>> res = lp.solve()
>>> round(res.bound, 3), res.converged
(30.667, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

__all__ = ["LayeredLP", "LPResult", "lagrangian_bound"]


_SCALE = 1_000_000      # max-flow needs integer capacities: LP values in units of 1e-6
_VIOLATION = 1e-4


@dataclass(frozen=True)
class LPResult:
    """State of the LP after :meth:`LayeredLP.solve`."""

    bound: float          # valid lower bound on W* (Lagrangian value of the last duals)
    objective: float      # LP objective of the last solve
    converged: bool       # no violated cut left (the LP bound of the full cut model)
    rounds: int
    n_cuts: int
    seconds: float


def lagrangian_bound(A, row_lo, row_hi, cost, col_lo, col_hi, duals):
    """``b.u + sum_c min over [lo, hi] of rc_c x_c`` with ``rc = cost - A^T u``: valid for any ``u``.

    A dual on a row side that is infinite is clipped to 0 (that is still a valid dual).

    Returns
    -------
    bound : float
    rc : numpy.ndarray
        Reduced costs of the clipped duals.
    """
    u = np.asarray(duals, dtype=np.float64).copy()
    u[(u > 0) & ~np.isfinite(row_lo)] = 0.0
    u[(u < 0) & ~np.isfinite(row_hi)] = 0.0
    rc = cost - A.T @ u
    rhs = np.where(u > 0, np.where(np.isfinite(row_lo), row_lo, 0.0), np.where(np.isfinite(row_hi), row_hi, 0.0))
    bound = float(u @ rhs) + float(np.minimum(rc * col_lo, rc * col_hi).sum())
    return bound, rc


def _fixed_csr(n, tails, heads, data):
    """CSR matrix with entries in a known order: returns the matrix and, per input entry, its index in ``data``.

    The ``(tail, head)`` pairs must be distinct.  Keeping the structure fixed lets the
    separation change capacities in place instead of rebuilding the matrix.
    """
    order = np.lexsort((heads, tails))
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(tails, minlength=n), out=indptr[1:])
    G = sp.csr_matrix((data[order].astype(np.int32), heads[order].astype(np.int32), indptr), shape=(n, n))
    pos = np.empty(order.size, dtype=np.int64)
    pos[order] = np.arange(order.size)
    return G, pos


class LayeredLP:
    """The aggregated layered-graph LP (module docstring) with its cut loop.

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` distances.
    k : int
        Depth bound.
    perms : numpy.ndarray
        ``G x V`` vertex permutations fixing the root and ``D`` (identity first).
    tail, head, layer : numpy.ndarray
        The hop-indexed arcs the model may use (after exact reductions), closed under ``perms``.
    """

    def __init__(self, D, k, perms, tail, head, layer):
        from synth.models._khop_model import new_highs

        self.D, self.k, self.perms = D, int(k), np.asarray(perms)
        self.V = V = D.shape[0]
        self.tail = np.asarray(tail, dtype=np.int64)
        self.head = np.asarray(head, dtype=np.int64)
        self.layer = np.asarray(layer, dtype=np.int64)
        self.cost_arc = D[self.tail, self.head].astype(np.float64)
        # ---- orbits: vertices, then (arc, layer) columns
        self.vrep = self.perms.min(axis=0).astype(np.int64)               # canonical rep of each vertex's orbit
        reps = np.unique(self.vrep[1:])
        self.reps = reps
        self.rep_index = np.full(V, -1, dtype=np.int64)
        self.rep_index[reps] = np.arange(reps.size)
        key = np.empty(self.tail.size, dtype=np.int64)
        for lo in range(0, self.tail.size, 1 << 20):                      # chunks bound the G x m temporaries
            sl = slice(lo, lo + (1 << 20))
            imgs = self.perms[:, self.tail[sl]].astype(np.int64) * V + self.perms[:, self.head[sl]]
            key[sl] = imgs.min(axis=0) + self.layer[sl] * V * V
        ukeys, self.col_of_arc = np.unique(key, return_inverse=True)
        self.n_z = ukeys.size
        self.orbit_size = np.bincount(self.col_of_arc, minlength=self.n_z).astype(np.float64)
        first = np.full(self.n_z, -1, dtype=np.int64)
        first[self.col_of_arc[::-1]] = np.arange(self.tail.size)[::-1]   # a representative arc per column
        self.col_rep_arc = first
        self.col_cost = np.bincount(self.col_of_arc, weights=self.cost_arc, minlength=self.n_z)
        # y columns: (rep, h) for h = 1..k
        self.n_y = reps.size * k
        self.n_cols = self.n_z + self.n_y
        # ---- the base rows
        rows, cols, vals, lo, hi = [], [], [], [], []
        r = 0
        # definition rows: y[rep, h] - sum of arcs into (rep, h) = 0
        sel = np.flatnonzero(self.rep_index[self.head] >= 0)
        sel = sel[self.vrep[self.head[sel]] == self.head[sel]]
        ridx = self.rep_index[self.head[sel]] * k + (self.layer[sel] - 1)
        pairs = np.unique(np.stack([ridx, self.col_of_arc[sel]]), axis=1, return_counts=True)
        rows.append(r + pairs[0][0]); cols.append(pairs[0][1]); vals.append(-pairs[1].astype(np.float64))
        rows.append(r + np.arange(self.n_y)); cols.append(self.n_z + np.arange(self.n_y)); vals.append(np.ones(self.n_y))
        lo.append(np.zeros(self.n_y)); hi.append(np.zeros(self.n_y))
        has_in = np.zeros(self.n_y, dtype=bool)
        has_in[pairs[0][0]] = True
        r += self.n_y
        # once rows: sum_h y[rep, h] = 1
        nrep = reps.size
        rows.append(r + np.repeat(np.arange(nrep), k)); cols.append(self.n_z + np.arange(self.n_y))
        vals.append(np.ones(self.n_y)); lo.append(np.ones(nrep)); hi.append(np.ones(nrep))
        r += nrep
        # link rows: z[col] - y[rep(tail), h-1] <= 0 for h >= 2
        lk = np.flatnonzero(self.layer[self.col_rep_arc] >= 2)
        ra = self.col_rep_arc[lk]
        ycol = self.n_z + self.rep_index[self.vrep[self.tail[ra]]] * k + (self.layer[ra] - 2)
        nl = lk.size
        rows.append(r + np.arange(nl)); cols.append(lk); vals.append(np.ones(nl))
        rows.append(r + np.arange(nl)); cols.append(ycol); vals.append(-np.ones(nl))
        lo.append(np.full(nl, -np.inf)); hi.append(np.zeros(nl))
        r += nl
        self.n_base_rows = r
        A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(r, self.n_cols))
        self.row_lo = np.concatenate(lo)
        self.row_hi = np.concatenate(hi)
        self.cost = np.concatenate([self.col_cost, np.zeros(self.n_y)])
        self.col_lo = np.zeros(self.n_cols)
        self.col_hi = np.ones(self.n_cols)
        self.col_hi[self.n_z:][~has_in] = 0.0
        self._A_blocks = [A]
        self._A = A
        self.cuts = []          # (terminal, nodes of S) for reuse (e.g. in a MIP)
        # ---- HiGHS model
        import highspy

        h = new_highs()
        h.setOptionValue("threads", 1)
        h.setOptionValue("random_seed", 0)
        inf = highspy.kHighsInf
        h.addCols(self.n_cols, self.cost, self.col_lo, self.col_hi, 0, np.zeros(0, np.int32), np.zeros(0, np.int32),
                  np.zeros(0))
        self._add_rows_to_highs(h, A, self.row_lo, self.row_hi, inf)
        self.h = h
        self.cones = True           # separate cone cuts first (cheap, and most of the bound)
        self.warm = True            # warm-start the dual simplex after adding cuts
        self.front = False          # also add front cuts (source side)
        self.max_nested = 8
        self.x = None
        self.duals = None
        self.rc = None
        self.bound = -np.inf
        # ---- layered network skeleton: node id = h * V + i (root = 0); sink = (k + 1) * V
        self.net_tail = np.where(self.layer == 1, 0, (self.layer - 1) * V + self.tail)
        self.net_head = self.layer * V + self.head
        self.n_net = (k + 1) * V + 1

    @staticmethod
    def _add_rows_to_highs(h, A, lo, hi, inf):
        A = sp.csr_matrix(A)
        h.addRows(A.shape[0], np.where(np.isfinite(lo), lo, -inf), np.where(np.isfinite(hi), hi, inf), A.nnz,
                  A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data)

    # ------------------------------------------------------------------ LP
    def _lp_solve(self):
        # A cold solve with presolve beats HiGHS's warm start after added rows here by
        # about 5x (presolve removes most link rows and fixed columns).
        if not self.warm:
            self.h.clearSolver()
        self.h.run()
        sol = self.h.getSolution()
        self.x = np.asarray(sol.col_value)
        self.duals = np.asarray(sol.row_dual)
        if self._A.shape[0] != sum(b.shape[0] for b in self._A_blocks):
            pass
        self._A = sp.vstack(self._A_blocks, format="csr") if len(self._A_blocks) > 1 else self._A_blocks[0]
        self._A_blocks = [self._A]
        bound, rc = lagrangian_bound(self._A, self.row_lo, self.row_hi, self.cost, self.col_lo, self.col_hi,
                                     self.duals)
        if bound > self.bound:
            self.bound, self.rc = bound, rc
        return float(self.h.getInfo().objective_function_value)

    # ------------------------------------------------------------ separation
    def arc_values(self):
        """Current LP value of every full arc."""
        return self.x[self.col_of_arc]

    def _cut_row(self, inS):
        """Aggregated row of the cut ``z(delta-(S)) >= 1`` (``inS`` marks layered nodes)."""
        enter = inS[self.net_head] & ~inS[self.net_tail]
        counts = np.bincount(self.col_of_arc[enter], minlength=self.n_z)
        nz = np.flatnonzero(counts)
        return nz, counts[nz].astype(np.float64)

    def separate(self, x_arc, terminals=None, max_nested=8, tol=_VIOLATION, front=True):
        """Violated directed cuts for the given arc values; returns ``(j, S)`` pairs, ``S`` a boolean node mask.

        For each terminal: max-flow from the root to the copies of ``j``; when it is
        below 1, the back cut (nodes that still reach the sink in the residual graph)
        and, if different, the front cut (nodes the root cannot reach) are violated.
        Nested rounds then saturate the cut's arcs and look again.
        """
        V, k = self.V, self.k
        sup = np.flatnonzero(x_arc > 1e-9)
        cap = np.floor(x_arc[sup] * _SCALE).astype(np.int64)
        keep = cap > 0
        sup, cap = sup[keep], cap[keep]
        t_net, h_net = self.net_tail[sup], self.net_head[sup]
        sink = self.n_net - 1
        terminals = self.reps if terminals is None else terminals
        found = []
        n = self.n_net
        # one structure for every terminal: support arcs plus (i, h) -> sink for all i, h (capacity 0 but j's)
        sink_t = (np.arange(1, k + 1)[:, None] * V + np.arange(V)[None, :]).ravel()
        tt = np.concatenate([t_net, sink_t])
        hh = np.concatenate([h_net, np.full(sink_t.size, sink)])
        G, pos = _fixed_csr(n, tt, hh, np.concatenate([cap, np.zeros(sink_t.size, dtype=np.int64)]))
        base = G.data.copy()
        pos_arc, pos_sink = pos[:sup.size], pos[sup.size:].reshape(k, V)
        for j in terminals:
            extra_t = np.arange(1, k + 1) * V + j
            G.data[:] = base
            G.data[pos_sink[:, j]] = 2 * _SCALE * k
            for _ in range(max_nested):
                res = maximum_flow(G, 0, sink)
                if res.flow_value >= _SCALE * (1 - tol):
                    break
                R = (G - res.flow).tocsr()
                R.data = (R.data > 0).astype(np.int8)
                R.eliminate_zeros()
                new_cuts = []
                reach = breadth_first_order(R.T.tocsr(), sink, directed=True, return_predecessors=False)
                back = np.zeros(n, dtype=bool)
                back[reach] = True
                new_cuts.append(back)
                if front:
                    src = breadth_first_order(R, 0, directed=True, return_predecessors=False)
                    fr = np.ones(n, dtype=bool)
                    fr[src] = False
                    if not np.array_equal(fr, back):
                        new_cuts.append(fr)
                progress = False
                for inS in new_cuts:
                    inS[sink] = False
                    inS[extra_t] = True
                    value = x_arc[inS[self.net_head] & ~inS[self.net_tail]].sum()
                    if value < 1 - tol:
                        found.append((int(j), inS[:-1].copy()))
                        in_cut = inS[h_net] & ~inS[t_net]
                        G.data[pos_arc[in_cut]] = _SCALE
                        progress = True
                if not progress:
                    break
        return found

    def separate_cones(self, x_arc, extra=None, tol=_VIOLATION, per_terminal=2):
        """Violated cone cuts: ``S_j(r) = {(i, h) : dist(i, j) <= r - h}`` for ``r >= k``.

        ``S_j(r)`` holds every copy of ``j`` (``r >= k``) and never the root, so it is a
        directed cut.  A non-root arc ``(t, i, h)`` enters it exactly when
        ``dist(i, j) + h <= r <= dist(t, j) + h - 2`` and a root arc ``(0, i, 1)`` when
        ``dist(i, j) + 1 <= r``: the cut value as a function of ``r`` is a sum of interval
        indicators, evaluated for all ``r`` at once with a difference array.
        """
        V, k, D = self.V, self.k, self.D
        extra = self.V if extra is None else extra
        R = k + extra + 1
        sup = np.flatnonzero(x_arc > 1e-9)
        xs = x_arc[sup]
        t, i, h = self.tail[sup], self.head[sup], self.layer[sup]
        root = t == 0
        found = []
        for j in self.reps:
            lo = D[i, j].astype(np.int64) + h
            hi = np.where(root, R - 1, D[t, j].astype(np.int64) + h - 2)
            ok = hi >= lo
            diff = np.zeros(R + 1)
            np.add.at(diff, np.minimum(lo[ok], R), xs[ok])
            np.add.at(diff, np.minimum(hi[ok] + 1, R), -xs[ok])
            val = np.cumsum(diff)[k:R]
            viol = np.flatnonzero(val < 1 - tol)
            for r in viol[np.argsort(val[viol])][:per_terminal] + k:
                inS = np.zeros(self.n_net - 1, dtype=bool)
                for layer in range(1, k + 1):
                    inS[layer * V + np.flatnonzero(D[j] <= r - layer)] = True
                found.append((int(j), inS))
        return found

    def add_cuts(self, found):
        if not found:
            return 0
        rows, cols, vals = [], [], []
        for i, (j, inS) in enumerate(found):
            nz, cnt = self._cut_row(np.append(inS, False))
            rows.append(np.full(nz.size, i)); cols.append(nz); vals.append(cnt)
            self.cuts.append((j, np.flatnonzero(inS)))
        A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                          shape=(len(found), self.n_cols))
        lo, hi = np.ones(len(found)), np.full(len(found), np.inf)
        import highspy

        self._add_rows_to_highs(self.h, A, lo, hi, highspy.kHighsInf)
        self._A_blocks.append(A)
        self.row_lo = np.concatenate([self.row_lo, lo])
        self.row_hi = np.concatenate([self.row_hi, hi])
        return len(found)

    # ------------------------------------------------------------------ loop
    def arc_vector(self, parent, depth):
        """Arc values of the tree ``parent`` averaged over the group, or ``None`` if it uses a removed arc.

        The average of a tree's images lies in the LP's polytope and is invariant, so it
        serves as the interior point of in-out separation.
        """
        V = self.V
        v = np.flatnonzero(np.asarray(parent) >= 0)
        key = (np.asarray(depth)[v] * V + np.asarray(parent)[v]) * V + v
        arc_key = (self.layer * V + self.tail) * V + self.head
        order = np.argsort(arc_key)
        pos = np.searchsorted(arc_key[order], key)
        if np.any(pos >= order.size) or np.any(arc_key[order][np.minimum(pos, order.size - 1)] != key):
            return None
        cols = self.col_of_arc[order[pos]]
        zeta = np.bincount(cols, minlength=self.n_z) / self.orbit_size
        return zeta[self.col_of_arc]

    def solve(self, deadline=None, max_rounds=10_000, progress=None, target=None, x_in=None,
              alpha=0.5) -> LPResult:
        """Cut loop: solve, separate, add, until no violated cut, the deadline, or ``bound >= target``.

        With ``x_in`` (a point of the polytope, e.g. :meth:`arc_vector` of a tree) the
        separation is in-out: cuts are looked for at ``alpha * x_lp + (1 - alpha) * x_in``
        first; a cut violated there is violated by ``x_lp`` too, and deeper.  When none
        is, that point becomes the new ``x_in`` and ``x_lp`` itself is separated.
        """
        t0 = time.monotonic()
        obj = self._lp_solve()
        rounds, converged = 0, False
        while rounds < max_rounds:
            if deadline is not None and time.monotonic() > deadline:
                break
            if target is not None and self.bound >= target:
                break
            x_out = self.arc_values()
            found = self.separate_cones(x_out) if self.cones else []
            if not found and x_in is not None:
                x_sep = alpha * x_out + (1 - alpha) * x_in
                found = self.separate(x_sep, max_nested=self.max_nested, front=self.front)
                if not found:
                    x_in = x_sep
            if not found:
                found = self.separate(x_out, max_nested=self.max_nested, front=self.front)
            rounds += 1
            if not found:
                converged = True
                break
            self.add_cuts(found)
            obj = self._lp_solve()
            if progress:
                progress(f"lp round {rounds}: {len(found)} cuts, objective {obj:.3f}, bound {self.bound:.3f}")
        return LPResult(self.bound, obj, converged, rounds, len(self.cuts), time.monotonic() - t0)

    def arc_reduced_costs(self):
        """Reduced cost of every full arc for the best duals so far (aggregated rc / orbit size)."""
        return self.rc[:self.n_z][self.col_of_arc] / self.orbit_size[self.col_of_arc]
