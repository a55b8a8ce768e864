"""Cuts of the layered graph of depth-bounded trees: cone cuts in closed form, max-flow cuts.

Node ``(i, h)`` (id ``h * V + i``) means "vertex ``i`` at depth ``h``"; a cut ``S`` holds
every copy ``(j, 1..k)`` of a terminal ``j`` and not the root, and an arborescence that
reaches ``j`` enters it: ``z(delta-(S)) >= 1``.  :mod:`synth.models.khop.lp` separates
these for its LP, :func:`synth.models.khop.pipeline.layered_separator` inside SCIP's search.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

__all__ = ["MIN_VIOLATION", "cone_cuts", "flow_cuts"]

_SCALE = 1_000_000      # max-flow needs integer capacities: LP values in units of 1e-6
MIN_VIOLATION = 1e-4    # a cut counts as violated by at least this much


def _fixed_csr(n, tails, heads, data):
    """CSR matrix with entries in a known order, and the index in ``data`` of each input entry.

    The ``(tail, head)`` pairs must be distinct.  A fixed structure lets the separation
    change capacities in place instead of rebuilding the matrix.
    """
    order = np.lexsort((heads, tails))
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(tails, minlength=n), out=indptr[1:])
    G = sp.csr_matrix((data[order].astype(np.int32), heads[order].astype(np.int32), indptr), shape=(n, n))
    pos = np.empty(order.size, dtype=np.int64)
    pos[order] = np.arange(order.size)
    return G, pos


def cone_cuts(D, k, arcs, x_arc, terminals, tol=MIN_VIOLATION, per_terminal=2, extra=None, deadline=None):
    """Violated cone cuts ``S_j(r)`` (:mod:`synth.models.khop.lp`), ``r >= k``, for each terminal ``j``.

    A non-root arc ``(t, i, h)`` enters ``S_j(r)`` exactly when
    ``dist(i, j) + h <= r <= dist(t, j) + h - 2`` and a root arc ``(0, i, 1)`` when
    ``dist(i, j) + 1 <= r``; the cut value as a function of ``r`` is a sum of interval
    indicators, evaluated for every ``r`` at once with a difference array.

    Parameters
    ----------
    D : numpy.ndarray
        ``V x V`` distances.
    k : int
    arcs : tuple of numpy.ndarray
        ``(tail, head, layer)`` of the hop-indexed arcs (root arcs: tail 0, layer 1).
    x_arc : numpy.ndarray
        Value of each arc.
    terminals : array_like
        The vertices ``j`` to separate for.
    per_terminal : int
        At most this many cuts (the most violated radii) per terminal.

    Returns
    -------
    list of (int, numpy.ndarray)
        ``(j, layered node ids of S)`` (ids ``h * V + i``).

    Examples
    --------
    On the path 0 - 1 - 2 - 3 with ``k = 2``, the root arcs into 1 and 2 carry 0.8
    into the cones of vertex 2 of radius 2 and 3 (the arc 1 -> 2 starts inside them):

    >>> D = np.abs(np.subtract.outer(np.arange(4), np.arange(4)))
    >>> arcs = (np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([1, 1, 2]))
    >>> [(j, S.tolist()) for j, S in cone_cuts(D, 2, arcs, np.array([0.5, 0.3, 0.5]), [2])]
    [(2, [5, 6, 7, 10]), (2, [4, 5, 6, 7, 9, 10, 11])]
    """
    V = D.shape[0]
    extra = V if extra is None else extra
    R = k + extra + 1
    mt, mi, mh = arcs
    sup = np.flatnonzero(x_arc > 1e-9)
    xs, t, i, h = x_arc[sup], mt[sup], mi[sup], mh[sup]
    root = h == 1
    found = []
    for j in np.asarray(terminals).tolist():
        if deadline is not None and time.monotonic() > deadline:
            break
        lo = D[i, j].astype(np.int64) + h
        hi = np.where(root, R - 1, D[t, j].astype(np.int64) + h - 2)
        ok = hi >= lo
        diff = np.zeros(R + 1)
        np.add.at(diff, np.minimum(lo[ok], R), xs[ok])
        np.add.at(diff, np.minimum(hi[ok] + 1, R), -xs[ok])
        val = np.cumsum(diff)[k:R]
        viol = np.flatnonzero(val < 1 - tol)
        for r in viol[np.argsort(val[viol], kind="stable")][:per_terminal] + k:
            nodes = [layer * V + np.flatnonzero(D[j] <= r - layer) for layer in range(1, k + 1)]
            found.append((int(j), np.concatenate(nodes)))
    return found


def flow_cuts(D, k, arcs, x_arc, terminals, tol=MIN_VIOLATION, deadline=None, max_nested=8, front=False):
    """Violated directed cuts by max-flow from the root to the copies of each terminal ``j``.

    When the flow is below 1, the back cut (nodes that still reach the sink in the
    residual graph) is violated (and the front cut, if ``front``); up to ``max_nested``
    rounds then saturate the cut's arcs and look again.  Arguments as :func:`cone_cuts`.

    Returns
    -------
    list of (int, numpy.ndarray)
        ``(j, boolean mask of S over the layered nodes)``.

    Examples
    --------
    Only 0.9 reaches the copies 6 and 10 of vertex 2 (same path as :func:`cone_cuts`):

    >>> D = np.abs(np.subtract.outer(np.arange(4), np.arange(4)))
    >>> arcs = (np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([1, 1, 2]))
    >>> [(j, np.flatnonzero(S).tolist()) for j, S in flow_cuts(D, 2, arcs, np.array([1.0, 0.5, 0.4]), [2])]
    [(2, [6, 10])]
    """
    V = D.shape[0]
    mt, mi, mh = arcs
    n_nodes = (k + 1) * V
    sup = np.flatnonzero(x_arc > 1e-9)
    cap = np.floor(x_arc[sup] * _SCALE).astype(np.int64)
    keep = cap > 0
    sup, cap = sup[keep], cap[keep]
    t_net = np.where(mh[sup] == 1, 0, (mh[sup] - 1) * V + mt[sup])
    h_net = mh[sup] * V + mi[sup]
    n = n_nodes + 1
    sink = n - 1
    hn_all = mh * V + mi
    tn_all = np.where(mh == 1, 0, (mh - 1) * V + mt)
    sink_t = (np.arange(1, k + 1)[:, None] * V + np.arange(V)[None, :]).ravel()
    tt = np.concatenate([t_net, sink_t])
    hh = np.concatenate([h_net, np.full(sink_t.size, sink)])
    Gm, pos = _fixed_csr(n, tt, hh, np.concatenate([cap, np.zeros(sink_t.size, dtype=np.int64)]))
    base = Gm.data.copy()
    pos_arc, pos_sink = pos[:sup.size], pos[sup.size:].reshape(k, V)
    found = []
    for j in np.asarray(terminals).tolist():
        if deadline is not None and time.monotonic() > deadline:
            break
        extra_t = np.arange(1, k + 1) * V + j
        Gm.data[:] = base
        Gm.data[pos_sink[:, j]] = 2 * _SCALE * k
        for _ in range(max_nested):
            res = maximum_flow(Gm, 0, sink)
            if res.flow_value >= _SCALE * (1 - tol):
                break
            Rg = (Gm - res.flow).tocsr()
            Rg.data = (Rg.data > 0).astype(np.int8)
            Rg.eliminate_zeros()
            cands = []
            reach = breadth_first_order(Rg.T.tocsr(), sink, directed=True, return_predecessors=False)
            back = np.zeros(n, dtype=bool)
            back[reach] = True
            cands.append(back)
            if front:
                src = breadth_first_order(Rg, 0, directed=True, return_predecessors=False)
                fr = np.ones(n, dtype=bool)
                fr[src] = False
                if not np.array_equal(fr, back):
                    cands.append(fr)
            progress = False
            for inS in cands:
                inS[sink] = False
                inS[extra_t] = True
                if x_arc[inS[hn_all] & ~inS[tn_all]].sum() < 1 - tol:
                    found.append((int(j), inS[:-1].copy()))
                    Gm.data[pos_arc[inS[h_net] & ~inS[t_net]]] = _SCALE
                    progress = True
            if not progress:
                break
    return found
