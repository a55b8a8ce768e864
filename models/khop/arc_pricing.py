"""Columns of the layered LP: arc orbits as columns, and pricing the missing ones (module docstring of lp).

:class:`ColumnPricing` is the half of :class:`synth.models.khop.lp.LayeredLP` that decides
which arc orbits are columns: the initial arcs, adding orbits, the exact reduced costs of
missing arcs under any duals and the Lagrangian bound they give, and the arcs a bound
cannot exclude.  It reads the LP's state (``D``, ``k``, ``perms``, duals, cuts) and
is not used on its own.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from synth.models.backends.lagrangian import lagrangian_bound

__all__ = ["ColumnPricing"]


class ColumnPricing:
    """Column management and pricing of :class:`~synth.models.khop.lp.LayeredLP` (a mixin)."""

    def _arcs_within(self, radius):
        """Allowed arcs ``(t, r, h)``, ``r`` a representative, ``h >= 2``, ``dist(t, r) <= radius``."""
        ts, rs, hs = [], [], []
        for idx, r in enumerate(self.reps):
            n = np.searchsorted(self._cand_d[idx], radius, side="right")
            t = self._cand_t[idx][:n]
            for h in range(2, self.k + 1):
                tt = t if h == 2 else t[~self._root_nbr[t]]
                ts.append(tt)
                rs.append(np.full(tt.size, r))
                hs.append(np.full(tt.size, h))
        if not ts:
            z = np.zeros(0, dtype=np.int64)
            return z, z, z
        return np.concatenate(ts), np.concatenate(rs), np.concatenate(hs)

    def _keys(self, t, i, h):
        V = self.V
        imgs = self.perms[:, t].astype(np.int64) * V + self.perms[:, i]
        return imgs.min(axis=0) + np.asarray(h, dtype=np.int64) * V * V

    @property
    def arcs(self):
        """``(tail, head, layer, col)`` of every member arc of every column."""
        if self._arcs is None:
            if self._arc_chunks:
                self._arcs = tuple(np.concatenate(c) for c in zip(*self._arc_chunks))
            else:
                z = np.zeros(0, dtype=np.int64)
                self._arcs = (z, z, z, z)
            self._arc_chunks = [self._arcs]
        return self._arcs

    @property
    def n_z(self):
        return self.col_layer.size

    def add_arcs(self, t, i, h):
        """Make the orbits of the arcs ``(t, i, h)`` columns (those not columns yet); return how many."""
        t, i, h = (np.asarray(a, dtype=np.int64).ravel() for a in (t, i, h))
        if t.size == 0:
            return 0
        V, k = self.V, self.k
        keys = self._keys(t, i, h)
        ukeys, first = np.unique(keys, return_index=True)
        new = np.fromiter((kk not in self._key_to_col for kk in ukeys.tolist()), dtype=bool, count=ukeys.size)
        if not new.any():
            return 0
        ukeys, first = ukeys[new], first[new]
        t0, i0, h0 = t[first], i[first], h[first]
        n_new = ukeys.size
        self._new_cols += n_new
        base = self.n_z
        cols = base + np.arange(n_new)
        for c, kk in zip(cols.tolist(), ukeys.tolist()):
            self._key_to_col[kk] = c
        # member arcs: all images, deduplicated
        mt = self.perms[:, t0].astype(np.int64).ravel()
        mi = self.perms[:, i0].astype(np.int64).ravel()
        mc = np.tile(cols, self.G)
        mh = np.tile(h0, self.G)
        code = (mc * V + mt) * V + mi
        _, uniq = np.unique(code, return_index=True)
        mt, mi, mc, mh = mt[uniq], mi[uniq], mc[uniq], mh[uniq]
        self._arc_chunks.append((mt, mi, mh, mc))
        self._arcs = None
        size = np.bincount(mc - base, minlength=n_new).astype(np.float64)
        dist = self.D[t0, i0].astype(np.float64)
        self.col_layer = np.concatenate([self.col_layer, h0])
        self.col_size = np.concatenate([self.col_size, size])
        self.col_dist = np.concatenate([self.col_dist, dist])
        # entries in existing rows: definition rows (arcs whose head is a representative)
        R, C, X = [], [], []
        isrep = self.vrep[mi] == mi
        rr = self.rep_index[mi[isrep]] * k + mh[isrep] - 1
        pair, cnt = np.unique(np.stack([rr, mc[isrep]]), axis=1, return_counts=True)
        R.append(pair[0])
        C.append(pair[1])
        X.append(-cnt.astype(np.float64))
        # cut rows
        if self.cuts:
            inc = self._incidence()
            hn = mh * V + mi
            tn = np.where(mh == 1, 0, (mh - 1) * V + mt)
            Eh = inc[hn]
            enter = (Eh - Eh.multiply(inc[tn])).tocoo()
            if enter.nnz:
                agg = sp.csr_matrix((enter.data, (mc[enter.row] - base, enter.col)),
                                    shape=(n_new, len(self.cuts))).tocoo()
                R.append(np.asarray(self._cut_rows)[agg.col])
                C.append(agg.row + base)
                X.append(agg.data)
        R, C, X = np.concatenate(R), np.concatenate(C), np.concatenate(X)
        M = sp.csc_matrix((X, (R, C - base)), shape=(self.row_lo.size, n_new))
        costs = size * dist
        self.h.addCols(n_new, costs, np.zeros(n_new), np.ones(n_new), M.nnz, M.indptr[:-1].astype(np.int32),
                       M.indices.astype(np.int32), M.data)
        self._coo[0].append(R)
        self._coo[1].append(C + self.n_y)
        self._coo[2].append(X)
        # link rows z - y[rep(tail), h - 1] <= 0 for h >= 2, with a representative arc whose head is a rep
        lk = np.flatnonzero(h0 >= 2)
        if lk.size:
            # the first member with a representative head gives the tail to link to
            sel = isrep & (mh >= 2)
            order = np.argsort(mc[sel], kind="stable")
            cs, ts = mc[sel][order], mt[sel][order]
            firsts = np.searchsorted(cs, cols[lk])
            tails = ts[firsts]
            ycol = self.rep_index[self.vrep[tails]] * k + (h0[lk] - 2)
            nr = self.row_lo.size
            rows = nr + np.arange(lk.size)
            self._append_rows(np.concatenate([rows, rows]), np.concatenate([cols[lk] + self.n_y, ycol]),
                              np.concatenate([np.ones(lk.size), -np.ones(lk.size)]),
                              np.full(lk.size, -np.inf), np.zeros(lk.size), feasible=True)
        return n_new

    # ================================================================ pricing
    def _cut_weights(self, u):
        """``W[node]``: total dual of the cuts holding each layered node."""
        if not self.cuts:
            return np.zeros(self.n_nodes)
        return self._incidence() @ u[np.asarray(self._cut_rows)]

    def price(self, threshold=0.0, collect=True, duals=None, deadline=None, max_candidates=None):
        """Missing arcs with a representative head and reduced cost ``< threshold`` (exact).

        Parameters
        ----------
        deadline : float, optional
            ``time.monotonic()`` value; past it (checked between representatives) the
            pricing gives up.
        max_candidates : int, optional
            Give up when more missing arcs than this need exact pricing.

        Returns
        -------
        t, i, h, rc : numpy.ndarray
            The arcs (heads are representatives) and their per-arc reduced costs.
        missing_sum : float or None
            ``sum over every missing arc orbit O of |O| min(0, rc_O)`` (the Lagrangian's
            missing part); ``None`` (and no arcs) when the pricing gave up.
        """
        V, k, G = self.V, self.k, self.G
        u = self.duals if duals is None else duals
        W = self._cut_weights(u)
        udef = u[:self.n_y]
        # 1. candidates: tails closer than rho(r, h) + threshold (every other arc has rc >= threshold)
        cand_t, cand_r, cand_h, cand_idx, cand_w = [], [], [], [], []
        z = np.zeros(0, dtype=np.int64)
        n_cand = 0
        for idx, r in enumerate(self.reps):
            if (deadline is not None and time.monotonic() > deadline) or \
                    (max_candidates is not None and n_cand > max_candidates):
                return z, z, z, np.zeros(0), None
            imgs_r = self.perms[:, r]
            for h in range(2, k + 1):
                wmean = W[h * V + imgs_r].mean()
                rho = wmean - udef[idx * k + h - 1] / self.orb[idx]
                n = np.searchsorted(self._cand_d[idx], rho + threshold, side="left")
                if n == 0:
                    continue
                t = self._cand_t[idx][:n]
                if h >= 3:
                    t = t[~self._root_nbr[t]]
                n_cand += t.size
                cand_t.append(t)
                cand_r.append(np.full(t.size, r))
                cand_h.append(np.full(t.size, h))
                cand_idx.append(np.full(t.size, idx))
                cand_w.append(np.full(t.size, wmean))
        if (max_candidates is not None and n_cand > max_candidates) or \
                (deadline is not None and time.monotonic() > deadline):
            return z, z, z, np.zeros(0), None
        if not cand_t:
            return z, z, z, np.zeros(0), 0.0
        t, r, h = np.concatenate(cand_t), np.concatenate(cand_r), np.concatenate(cand_h)
        idx, wmean = np.concatenate(cand_idx), np.concatenate(cand_w)
        keys = self._keys(t, r, h)
        present = np.fromiter((kk in self._key_to_col for kk in keys.tolist()), dtype=bool, count=t.size)
        t, r, h, idx, wmean = t[~present], r[~present], h[~present], idx[~present], wmean[~present]
        if t.size == 0:
            return z, z, z, np.zeros(0), 0.0
        # 2. exact cut term: mean over g of (W(head image) - weight of cuts holding both ends)
        enter = wmean
        if self.cuts:
            inc = self._incidence()
            ucut = u[np.asarray(self._cut_rows)]
            both = np.zeros(t.size)
            step = max(1, 200_000 // G)        # bounded memory: the incidence rows of G images per arc
            for a in range(0, t.size, step):
                if deadline is not None and time.monotonic() > deadline:
                    return z, z, z, np.zeros(0), None
                sl = slice(a, a + step)
                hn = (h[None, sl] * V + self.perms[:, r[sl]]).ravel()
                tn = ((h[None, sl] - 1) * V + self.perms[:, t[sl]]).ravel()
                both[sl] = (inc[tn].multiply(inc[hn]) @ ucut).reshape(G, -1).mean(axis=0)
            enter = wmean - both
        rc = self.D[t, r] + udef[idx * k + h - 1] / self.orb[idx] - enter
        missing = float((self.orb[idx] * np.minimum(rc, 0)).sum())
        if not collect:
            return z, z, z, np.zeros(0), missing
        sel = rc < threshold
        return t[sel], r[sel], h[sel], rc[sel], missing

    def _update_bound(self, missing_sum):
        A = self.matrix()
        cost = np.concatenate([np.zeros(self.n_y), self.col_size * self.col_dist])
        lo = np.concatenate([self.y_lo, np.zeros(self.n_z)])
        hi = np.concatenate([self.y_hi, np.ones(self.n_z)])
        bound, rc = lagrangian_bound(A, self.row_lo, self.row_hi, cost, lo, hi, self.duals)
        bound += missing_sum
        if bound > self.bound:
            self.bound = bound
            nz = np.flatnonzero(self.duals)
            self._best_ids, self._best_vals = self.row_ids[nz].copy(), self.duals[nz].copy()
        return bound

    def arcs_below(self, threshold, max_arcs=None, deadline=None):
        """Every arc (all images) whose reduced cost under the best bound's duals is ``<= threshold``.

        Present columns and missing arcs are priced with the same duals, so
        ``bound + rc`` bounds the weight of any tree that uses the arc.

        Parameters
        ----------
        max_arcs : int, optional
            Give up (return ``None``) as soon as more arcs than this are certain to
            survive, or more than ``4 * max_arcs`` candidates need exact pricing.
        deadline : float, optional
            ``time.monotonic()`` value; give up (return ``None``) past it.

        Returns
        -------
        tail, head, layer : numpy.ndarray
            (``None`` when it gave up.)
        """
        u = self.best_duals()
        A = self.matrix()
        cost = self.col_size * self.col_dist
        u_clip = u.copy()
        u_clip[(u_clip > 0) & ~np.isfinite(self.row_lo)] = 0.0
        u_clip[(u_clip < 0) & ~np.isfinite(self.row_hi)] = 0.0
        rc_cols = cost - (A.T @ u_clip)[self.n_y:]
        mt, mi, mh, mc = self.arcs
        rc_arc = rc_cols[mc] / self.col_size[mc]
        keep = rc_arc <= threshold
        if max_arcs is not None and keep.sum() > max_arcs:
            return None
        t, i, h = mt[keep], mi[keep], mh[keep]
        cap = None if max_arcs is None else 4 * max_arcs // self.G + 1
        pt, pi, ph, _prc, missing = self.price(threshold=threshold + 1e-9, duals=u_clip, deadline=deadline,
                                               max_candidates=cap)
        if missing is None:
            return None
        if pt.size:
            imt = self.perms[:, pt].ravel()
            imi = self.perms[:, pi].ravel()
            imh = np.tile(ph, self.G)
            code = np.unique((imh * self.V + imt) * self.V + imi)
            ph2, rest = np.divmod(code, self.V * self.V)
            pt2, pi2 = np.divmod(rest, self.V)
            t, i, h = np.concatenate([t, pt2]), np.concatenate([i, pi2]), np.concatenate([h, ph2])
        if max_arcs is not None and t.size > max_arcs:
            return None
        return t, i, h
