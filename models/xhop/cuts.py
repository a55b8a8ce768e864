"""Directed cuts for the per-partner hop-indexed model, separated by max-flow in the layered graph.

Layered graph: node ``(l, i)`` means "vertex ``i`` at depth ``l``"; the two roots are merged
into one source (layer 0), the arc ``(i, j, l)`` goes from ``(l - 1, i)`` to ``(l, j)``.  An
integral solution is an arborescence of this graph that reaches exactly one copy of every
vertex, so for every set ``S`` of layered nodes that holds every copy of a vertex ``j`` and
not the source,

    z(delta-(S)) >= 1                                                   (directed cut)

The parent-above rows are the special case ``S = {(l - 1, i)} + copies of j``; larger sets
also forbid cycles through several depths of the same vertices, which the LP otherwise uses.

Separation: for each terminal ``j``, a max-flow from the source to the copies of ``j`` with
the LP values as capacities; a flow below 1 gives a violated cut (the source side's
complement, and the sink side); a nested round raises the cut's arcs to capacity 1 and looks
again for a different one.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.models.xhop.instance import distance_matrix, hop_arcs
>>> from synth.models.xhop.model import build_xhop_model, model_data
>>> t = parse_torus("6x6")
>>> data = model_data(distance_matrix(t), 3, [1], arcs=hop_arcs(distance_matrix(t), 1, 3))
>>> model, v = build_xhop_model(data)
>>> loop = CutLoop(model, v, data)
>>> res = loop.run()
>>> res.bound >= 37 - 1e-6, res.n_cuts > 0
(True, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, maximum_flow
from synth.models._solve.lagrangian import lagrangian_bound
from synth.models.xhop.model import LinearModel, ModelData, ModelVars

__all__ = ["CutLoop", "CutResult", "add_layer_cuts"]

_SCALE = 1_000_000
_VIOL = 1e-4


def add_layer_cuts(model: LinearModel, z: np.ndarray, cuts, data: ModelData) -> range:
    """Directed cuts ``z(delta-(S)) >= 1``; each cut is given by the indices of its entering arcs."""
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
    """LP relaxation of a one-partner model with directed-cut separation (module docstring)."""

    def __init__(self, model: LinearModel, v: ModelVars, data: ModelData, perms=None):
        if data.partners.size != 1:
            raise ValueError("the cut loop is for a model with one partner")
        self.model, self.v, self.data = model, v, data
        V, h = data.V, data.h
        self.b = int(data.partners[0])
        self.net_tail = np.where(data.layer == 1, 0, (data.layer - 1) * V + data.tail)
        self.net_head = data.layer * V + data.head
        self.n_net = (h + 1) * V + 1
        self.sink = self.n_net - 1
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
        """Violated cuts for the arc values ``zv`` (lists of entering-arc indices); stops at ``deadline``."""
        V, h, n = self.data.V, self.data.h, self.n_net
        sup = np.flatnonzero(zv > 1e-9)
        cap = np.floor(zv[sup] * _SCALE).astype(np.int64)
        keep = cap > 0
        sup, cap = sup[keep], cap[keep]
        t_net, h_net = self.net_tail[sup], self.net_head[sup]
        sink_t = (np.arange(1, h + 1)[:, None] * V + np.arange(V)[None, :]).ravel()
        tt = np.concatenate([t_net, sink_t])
        hh = np.concatenate([h_net, np.full(sink_t.size, self.sink)])
        order = np.lexsort((hh, tt))
        indptr = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(np.bincount(tt, minlength=n), out=indptr[1:])
        data = np.concatenate([cap, np.zeros(sink_t.size, dtype=np.int64)])[order].astype(np.int32)
        G = sp.csr_matrix((data, hh[order].astype(np.int32), indptr), shape=(n, n))
        pos = np.empty(order.size, dtype=np.int64)
        pos[order] = np.arange(order.size)
        base = G.data.copy()
        pos_arc, pos_sink = pos[:sup.size], pos[sup.size:].reshape(h, V)
        found, seen = [], set()
        for j in self.terminals.tolist():
            if deadline is not None and found and time.monotonic() > deadline:
                break
            copies = np.arange(1, h + 1) * V + j
            G.data[:] = base
            G.data[pos_sink[:, j]] = 2 * _SCALE * h
            for _ in range(max_nested):
                res = maximum_flow(G, 0, self.sink)
                if res.flow_value >= _SCALE * (1 - _VIOL):
                    break
                R = (G - res.flow).tocsr()
                R.data = (R.data > 0).astype(np.int8)
                R.eliminate_zeros()
                src = breadth_first_order(R, 0, directed=True, return_predecessors=False)
                front = np.ones(n, dtype=bool)
                front[src] = False
                back = np.zeros(n, dtype=bool)
                back[breadth_first_order(R.T.tocsr(), self.sink, directed=True, return_predecessors=False)] = True
                progress = False
                for inS in (front, back):
                    inS[self.sink] = False
                    inS[copies] = True
                    enter = inS[self.net_head] & ~inS[self.net_tail]
                    if zv[enter].sum() < 1 - _VIOL:
                        idx = np.flatnonzero(enter)
                        key = idx.tobytes()
                        if key not in seen:
                            seen.add(key)
                            found.append(idx)
                        G.data[pos_arc[(inS[h_net] & ~inS[t_net])]] = _SCALE
                        progress = True
                if not progress:
                    break
        return found

    def run(self, deadline=None, target=np.inf, max_rounds=200, progress=None) -> CutResult:
        """Solve, separate, add, repeat; stop when nothing is violated, at ``deadline`` or once the
        bound reaches ``target``."""
        import highspy

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
            rows = add_layer_cuts(model, self.v.z, cuts, self.data)
            self.cuts.extend(cuts)
            A_new = model.last_block()
            h.addRows(len(cuts), np.ones(len(cuts)), np.full(len(cuts), highspy.kHighsInf), A_new.nnz,
                      A_new.indptr[:-1].astype(np.int32), A_new.indices.astype(np.int32), A_new.data)
            self.n_cuts += len(rows)
        return CutResult(self.best_bound, obj, converged, rounds, self.n_cuts, time.monotonic() - t0, self.best_rc)
