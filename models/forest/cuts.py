"""Cuts of the layered graph of depth-bounded forests on a root set: cone cuts, max-flow cuts, cut loops.

Node ``(i, h)`` (id ``h * V + i``) means "vertex ``i`` at depth ``h``"; the roots are merged
into one source (node 0, layer 0), and the arc ``(i, j, h)`` goes from ``(h - 1, i)`` to
``(h, j)`` (from the source when ``h = 1``).  A cut ``S`` holds every copy ``(j, 1..k)`` of
a terminal ``j`` and not the source, and a forest that reaches ``j`` enters it:
``z(delta-(S)) >= 1``.  The parent-above rows are the special case ``S = {(h - 1, i)} +
copies of j``; larger sets also forbid cycles through several depths of the same vertices,
which the LP otherwise uses.

* :func:`cone_cuts` (closed form, one root) and :func:`flow_cuts` (max-flow, any root set)
  find violated cuts for given arc values;
* :func:`cut_images` maps cuts through vertex permutations, :func:`layered_separator`
  separates both kinds inside SCIP's branch-and-cut (k-hop trees, :mod:`synth.models.khop.lp`
  separates them for its LP);
* :class:`CutLoop` is the LP relaxation of a one-partner exchange model with flow cuts and
  their images under the pair's stabilizer (:mod:`synth.models.xhop.pipeline`).

The modules here import no k-hop or exchange model; :mod:`synth.models.xhop.model` shows a
cut loop at work.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

from synth.models.backends.lagrangian import lagrangian_bound

__all__ = ["MIN_VIOLATION", "cone_cuts", "flow_cuts", "cut_images", "layered_separator", "add_entering_cuts",
           "CutLoop", "CutResult"]

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


def flow_cuts(D, k, arcs, x_arc, terminals, tol=MIN_VIOLATION, deadline=None, max_nested=8, front=False,
              min_found=0):
    """Violated directed cuts by max-flow from the roots (one source) to the copies of each terminal ``j``.

    When the flow is below 1, the back cut (nodes that still reach the sink in the
    residual graph) is violated (and the front cut, the complement of what the source
    still reaches, if ``front``: after the back cut, or before it if ``front="first"``);
    up to ``max_nested`` rounds then saturate the cut's arcs and look again.  Past
    ``deadline`` it stops once it has ``min_found`` cuts.  Arguments as :func:`cone_cuts`
    (root arcs: layer 1, any tail).

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
        if deadline is not None and len(found) >= min_found and time.monotonic() > deadline:
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
            reach = breadth_first_order(Rg.T.tocsr(), sink, directed=True, return_predecessors=False)
            back = np.zeros(n, dtype=bool)
            back[reach] = True
            cands = [back]
            if front:
                src = breadth_first_order(Rg, 0, directed=True, return_predecessors=False)
                fr = np.ones(n, dtype=bool)
                fr[src] = False
                if not np.array_equal(fr, back):
                    cands.insert(0 if front == "first" else 1, fr)
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


def cut_images(cuts, perms, V):
    """All images of layered cuts ``(j, nodes)`` under the vertex permutations ``perms`` (deduplicated).

    Examples
    --------
    >>> flip = np.array([0, 2, 1])                  # swaps vertices 1 and 2, fixes the root
    >>> [(j, S.tolist()) for j, S in cut_images([(1, [4])], [np.arange(3), flip], 3)]
    [(1, [4]), (2, [5])]
    """
    seen, out = set(), []
    for j, nodes in cuts:
        nodes = np.asarray(nodes, dtype=np.int64)
        h, i = np.divmod(nodes, V)
        for g in perms:
            img = np.sort(h * V + g[i])
            key = img.tobytes()
            if key not in seen:
                seen.add(key)
                out.append((int(g[j]), img))
    return out


def layered_separator(D, k, z, deadline=None):
    """Cone and flow cuts of a k-hop model's arcs ``z``, as rows for :meth:`LinearModel.solve_scip`.

    ``z`` maps each arc ``(tail, head, layer)`` to its column.  Cone cuts first (closed
    form); max-flow cuts only when no cone cut is violated, as in the LP's loop.  Every
    non-root vertex is a terminal (the search breaks the symmetry the LP aggregates over).

    Examples
    --------
    The path 0 - 1 - 2 - 3 with ``k = 2`` and five arcs; the tree ``0 -> 1, 0 -> 2 -> 3``
    violates no cut, and where nothing is taken each terminal gets its cone cuts:

    >>> D = np.abs(np.subtract.outer(np.arange(4), np.arange(4)))
    >>> z = {(0, 1, 1): 0, (0, 2, 1): 1, (0, 3, 1): 2, (1, 2, 2): 3, (2, 3, 2): 4}
    >>> sep = layered_separator(D, 2, z)
    >>> sep(np.array([1.0, 1.0, 0.0, 0.0, 1.0]))
    []
    >>> [(c.tolist(), rhs) for c, _coef, rhs in sep(np.zeros(5))][:2]
    [([0, 1], 1.0), ([0, 1, 2], 1.0)]
    """
    keys = np.asarray(list(z.keys()), dtype=np.int64).reshape(-1, 3)
    cols = np.fromiter(z.values(), dtype=np.int64, count=len(z))
    arcs = (keys[:, 0], keys[:, 1], keys[:, 2])
    V = D.shape[0]
    hn = keys[:, 2] * V + keys[:, 1]
    tn = np.where(keys[:, 2] == 1, 0, (keys[:, 2] - 1) * V + keys[:, 0])
    terminals = np.arange(1, V)
    n_nodes = (k + 1) * V

    def separate(x):
        xa = np.asarray(x)[cols]
        found = cone_cuts(D, k, arcs, xa, terminals, deadline=deadline)
        if not found:
            found = flow_cuts(D, k, arcs, xa, terminals, deadline=deadline)
        rows = []
        for _j, S in found:
            S = np.asarray(S)
            inS = S[:n_nodes] if S.dtype == bool else np.isin(np.arange(n_nodes), S)
            c = cols[inS[hn] & ~inS[tn]]
            rows.append((c, np.ones(c.size), 1.0))
        return rows

    return separate


def add_entering_cuts(model, z: np.ndarray, cuts, data) -> range:
    """Directed cuts ``z(delta-(S)) >= 1`` on the arc columns ``z``; each cut given by its entering arcs' indices."""
    cuts = [np.asarray(c, dtype=np.int64) for c in cuts]
    if not cuts:
        return range(model.n_rows, model.n_rows)
    rows = np.concatenate([np.full(c.size, i) for i, c in enumerate(cuts)])
    cols = z[np.concatenate(cuts)]
    return model.add_rows(rows, cols, np.ones(cols.size), len(cuts), 1.0, np.inf, "layer_cuts")


@dataclass(frozen=True)
class CutResult:
    bound: float          # valid lower bound (Lagrangian value of the last duals)
    objective: float      # last LP objective
    converged: bool       # no violated cut left
    rounds: int
    n_cuts: int
    seconds: float
    rc: np.ndarray | None  # reduced costs of the columns at the best bound


class CutLoop:
    """LP relaxation of a one-partner exchange model (roots ``{0, b}``) with flow-cut separation.

    ``model`` is a :class:`~synth.models.backends.linear.LinearModel` whose arc columns are
    ``v.z``, over the arcs of ``data`` (``tail``, ``head``, ``layer``, ``h``, ``V`` and one
    partner in ``partners``; :class:`synth.models.xhop.model.ModelData`).  Each round solves
    the LP in HiGHS, takes the Lagrangian bound of its duals (valid for any duals), and adds
    the violated cuts of :func:`flow_cuts` with their images under ``perms``.
    """

    def __init__(self, model, v, data, perms=None):
        if data.partners.size != 1:
            raise ValueError("the cut loop is for a model with one partner")
        self.model, self.v, self.data = model, v, data
        V = data.V
        self.b = int(data.partners[0])
        self.net_tail = np.where(data.layer == 1, 0, (data.layer - 1) * V + data.tail)
        self.net_head = data.layer * V + data.head
        self.terminals = np.setdiff1d(np.unique(data.head), [0, self.b])
        self.n_cuts = 0
        self.cuts = []          # entering-arc indices of every cut added
        # symmetry: images of the arcs under automorphisms preserving {0, b} (layer-1 arcs by head)
        self.arc_images = None
        if perms is not None and len(perms) > 1:
            key = self._keys(data.tail, data.head, data.layer)
            order = np.argsort(key)
            imgs = []
            for g in np.asarray(perms)[1:]:
                k2 = self._keys(g[data.tail], g[data.head], data.layer)
                pos = np.minimum(np.searchsorted(key[order], k2), key.size - 1)
                if np.all(key[order][pos] == k2):
                    imgs.append(order[pos])
            self.arc_images = imgs
        self.best_bound, self.best_rc = -np.inf, None
        self.x = None           # the last LP solution

    def _keys(self, tail, head, layer):
        V = self.data.V
        return (layer * (V + 1) + np.where(layer == 1, V, tail)) * V + head

    def with_images(self, cuts):
        """The cuts and their images under the symmetry (deduplicated)."""
        if not self.arc_images:
            return cuts
        out, seen = [], set()
        for c in cuts:
            for img in [c] + [m[c] for m in self.arc_images]:
                img = np.sort(img)
                k = img.tobytes()
                if k not in seen:
                    seen.add(k)
                    out.append(img)
        return out

    def separate(self, zv, max_nested=3, deadline=None):
        """Violated cuts for the arc values ``zv`` (lists of entering-arc indices); stops at ``deadline``.

        :func:`flow_cuts` with the front cut before the back cut, and at least one cut
        before the deadline counts.
        """
        data = self.data
        found, seen = [], set()
        for _j, inS in flow_cuts(data.D, data.h, (data.tail, data.head, data.layer), zv, self.terminals,
                                 deadline=deadline, max_nested=max_nested, front="first", min_found=1):
            idx = np.flatnonzero(inS[self.net_head] & ~inS[self.net_tail])
            key = idx.tobytes()
            if key not in seen:
                seen.add(key)
                found.append(idx)
        return found

    def run(self, deadline=None, target=np.inf, max_rounds=200, progress=None) -> CutResult:
        """Solve, separate, add, repeat; stop when nothing is violated, at ``deadline`` or once the
        bound reaches ``target``."""
        import highspy  # an optional solver, loaded when a cut loop runs

        t0 = time.monotonic()
        model = self.model
        h = model.to_highs(relax=True)
        h.setOptionValue("presolve", "off")
        converged, rounds, obj = False, 0, -np.inf
        for rounds in range(1, max_rounds + 1):
            if deadline is not None:
                h.setOptionValue("time_limit", float(max(deadline - time.monotonic(), 0.01)))
            h.run()
            sol = h.getSolution()
            if not sol.dual_valid:
                break
            obj = float(h.getInfo().objective_function_value)
            A, lo, hi = model.matrix()
            bound, rc = lagrangian_bound(A, lo, hi, model.cost, model.lo, model.hi, np.asarray(sol.row_dual))
            if bound > self.best_bound:
                self.best_bound, self.best_rc = bound, rc
            if progress:
                progress(f"partner {self.b}: LP round {rounds}, bound {bound:.3f}, {self.n_cuts} cuts")
            if self.best_bound >= target or (deadline is not None and time.monotonic() > deadline):
                break
            x = np.asarray(sol.col_value)
            self.x = x
            cuts = self.separate(x[self.v.z], deadline=deadline)
            if not cuts:
                converged = True
                break
            cuts = self.with_images(cuts)
            rows = add_entering_cuts(model, self.v.z, cuts, self.data)
            self.cuts.extend(cuts)
            A_new = model.last_block()
            h.addRows(len(cuts), np.ones(len(cuts)), np.full(len(cuts), highspy.kHighsInf), A_new.nnz,
                      A_new.indptr[:-1].astype(np.int32), A_new.indices.astype(np.int32), A_new.data)
            self.n_cuts += len(rows)
        return CutResult(self.best_bound, obj, converged, rounds, self.n_cuts, time.monotonic() - t0, self.best_rc)
