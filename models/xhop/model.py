"""The hop-indexed MILP for exchange forests, built family by family.

A virtual super-root ``r`` has exactly two children: ``a = 0`` (always) and the partner ``b``,
chosen among ``data.partners``.  Variables (all binary):

* ``x[b]``        -- ``b`` is the partner root (``add_partner_vars``);
* ``z[i, j, l]``  -- ``j`` hangs under ``i`` at depth ``l`` (``add_arc_vars``); at ``l = 1``
  the tail is a root (``0`` or a partner), below it a non-root;
* ``y[j, l]``     -- ``j`` sits at depth ``l``, ``l = 1..h`` (``add_depth_vars``).

Families (each an ``add_<family>(model, vars, data)`` helper):

* ``partner_choice``  ``sum_b x[b] = 1``;
* ``depth_vars``      ``y[j, l] = sum_i z[i, j, l]``;
* ``one_place``       ``x[j] + sum_l y[j, l] = 1`` for ``j != 0`` (a root, or at one depth);
* ``parent_above``    ``z[i, j, l] <= y[i, l - 1]`` for ``l >= 2``, and ``z[b, j, 1] <= x[b]``;
* ``partner_arcs``    ``z[i, j, l] <= sum of x[b] over the partners whose exact reduction
  keeps the arc`` (only for arcs some partner drops);
* ``weight_objective`` minimize ``sum dist(i, j) z[i, j, l] + sum dist(0, b) x[b]``.

Every integral solution is an exchange forest of depth ``<= h`` with roots ``0`` and the
chosen ``b`` (each non-root has one parent one level up, so parents lead to a root), and
every such forest is one (with ``reduce=False`` arcs; with the exact reductions of
:mod:`models.xhop.instance` an optimal forest always remains).

The model is a :class:`LinearModel`: solver-neutral arrays that compile to HiGHS or CP-SAT.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.models.xhop.instance import distance_matrix
>>> t = parse_torus("4x4")
>>> data = model_data(distance_matrix(t), 2, [1, 2, 5, 6, 10])
>>> model, v = build_xhop_model(data)
>>> sol = model.solve_highs(time_limit=20)
>>> sol.status, round(sol.objective), decode_forest(v, sol.values, data)[0] in (1, 2, 5, 6, 10)
('optimal', 17, True)

Its LP relaxation with directed cuts separated by max-flow (the layered graph merges the two roots
into one source; :class:`~synth.models.forest.cuts.CutLoop` adds each cut's images under the pair's
stabilizer):

>>> from synth.models.forest.cuts import CutLoop
>>> from synth.models.xhop.instance import hop_arcs
>>> t = parse_torus("6x6")
>>> data = model_data(distance_matrix(t), 3, [1], arcs=hop_arcs(distance_matrix(t), 1, 3))
>>> model, v = build_xhop_model(data)
>>> res = CutLoop(model, v, data).run()
>>> res.bound >= 37 - 1e-6, res.n_cuts > 0
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.models.backends.linear import LinearModel  # noqa: F401  (re-exported)
from synth.models.backends.result import MipSolution  # noqa: F401  (re-exported)
from synth.models.xhop.instance import forest_depths, hop_arcs

__all__ = [
    "LinearModel",
    "MipSolution",
    "ModelData",
    "ModelVars",
    "add_arc_vars",
    "add_depth_vars",
    "add_objective_cutoff",
    "add_one_place",
    "add_parent_above",
    "add_partner_arcs",
    "add_partner_choice",
    "add_partner_vars",
    "add_weight_objective",
    "build_xhop_model",
    "decode_forest",
    "encode_forest",
    "model_data",
]


@dataclass(frozen=True, eq=False)
class ModelData:
    """Distances, depth bound, candidate partners and the allowed arcs.

    ``arc_ok`` is an ``n_arcs x n_partners`` boolean matrix: arc ``e`` is usable when
    partner ``p`` is chosen (``None``: every arc for every partner).
    """

    D: np.ndarray
    h: int
    partners: np.ndarray
    tail: np.ndarray
    head: np.ndarray
    layer: np.ndarray
    arc_ok: np.ndarray | None = None

    @property
    def V(self) -> int:
        return int(self.D.shape[0])


def model_data(D, h: int, partners, reduce: bool = True, arcs=None) -> ModelData:
    """Arcs for the given partners: the union of each partner's (reduced) arcs, with ``arc_ok``.

    ``arcs`` may give ``(tail, head, layer)`` directly for a single partner (e.g. after
    reduced-cost fixing).
    """
    partners = np.asarray(partners, dtype=np.int64).ravel()
    V = D.shape[0]
    if arcs is not None:
        if partners.size != 1:
            raise ValueError("explicit arcs are for a single partner")
        tail, head, layer = (np.asarray(a, dtype=np.int64) for a in arcs)
        return ModelData(D, int(h), partners, tail, head, layer, None)
    keys, per = [], []
    for b in partners.tolist():
        tl, hd, ly = hop_arcs(D, b, h, reduce=reduce)
        k = (ly * V + tl) * V + hd
        keys.append(k)
        per.append(k)
    allk = np.unique(np.concatenate(keys))
    ok = np.zeros((allk.size, partners.size), dtype=bool)
    for p, k in enumerate(per):
        ok[np.searchsorted(allk, k), p] = True
    layer, rest = np.divmod(allk, V * V)
    tail, head = np.divmod(rest, V)
    return ModelData(D, int(h), partners, tail, head, layer, None if ok.all() else ok)


@dataclass
class ModelVars:
    """Column indices: ``x`` per partner, ``z`` per arc, ``y[j, l]`` (``-1`` where absent)."""

    x: np.ndarray
    z: np.ndarray
    y: np.ndarray


# ------------------------------------------------------------------ families
def add_partner_vars(model: LinearModel, data: ModelData) -> np.ndarray:
    """Binary ``x[b]`` per candidate partner (fixed to 1 when there is only one)."""
    n = data.partners.size
    return model.add_vars(n, 1.0 if n == 1 else 0.0, 1.0, True)


def add_arc_vars(model: LinearModel, data: ModelData) -> np.ndarray:
    """Binary ``z[i, j, l]`` per allowed hop-indexed arc."""
    return model.add_vars(data.tail.size, 0.0, 1.0, True)


def add_depth_vars(model: LinearModel, z: np.ndarray, data: ModelData) -> np.ndarray:
    """``y[j, l] = sum_i z[i, j, l]`` for every ``(j, l)`` some arc enters; returns the ``V x (h+1)`` columns."""
    V, h = data.V, data.h
    key = data.head * (h + 1) + data.layer
    used = np.unique(key)
    ycols = model.add_vars(used.size, 0.0, 1.0, False)
    y = np.full(V * (h + 1), -1, dtype=np.int64)
    y[used] = ycols
    r = np.searchsorted(used, key)
    model.add_rows(np.concatenate([np.arange(used.size), r]), np.concatenate([ycols, z]),
                   np.concatenate([np.ones(used.size), -np.ones(z.size)]), used.size, 0.0, 0.0, "depth_vars")
    return y.reshape(V, h + 1)


def add_partner_choice(model: LinearModel, x: np.ndarray, data: ModelData) -> range:
    """Exactly one partner: ``sum_b x[b] = 1``."""
    return model.add_rows(np.zeros(x.size), x, np.ones(x.size), 1, 1.0, 1.0, "partner_choice")


def add_one_place(model: LinearModel, x: np.ndarray, y: np.ndarray, data: ModelData) -> range:
    """``x[j] + sum_l y[j, l] = 1`` for every ``j != 0`` (a vertex is a root or at exactly one depth)."""
    V = data.V
    jj, ll = np.nonzero(y[1:] >= 0)
    rows = [jj]
    cols = [y[1:][jj, ll]]
    rows.append(data.partners - 1)
    cols.append(x)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return model.add_rows(rows, cols, np.ones(rows.size), V - 1, 1.0, 1.0, "one_place")


def add_parent_above(model: LinearModel, x: np.ndarray, z: np.ndarray, y: np.ndarray, data: ModelData) -> range:
    """``z[i, j, l] <= y[i, l - 1]`` for ``l >= 2``; ``z[b, j, 1] <= x[b]`` for a partner ``b``.

    An arc whose tail cannot sit at depth ``l - 1`` (no ``y`` column) is bounded by 0.
    """
    pos = {int(b): p for p, b in enumerate(data.partners.tolist())}
    deep = np.flatnonzero(data.layer >= 2)
    up = y[data.tail[deep], data.layer[deep] - 1]
    top = np.flatnonzero((data.layer == 1) & (data.tail != 0))
    if data.partners.size == 1:
        top = top[:0]                   # x is fixed to 1
    top_x = np.array([x[pos[int(i)]] for i in data.tail[top].tolist()], dtype=np.int64)
    n = deep.size + top.size
    r = np.arange(n)
    other = np.concatenate([up, top_x])
    has = other >= 0
    rows = np.concatenate([r, r[has]])
    cols = np.concatenate([z[np.concatenate([deep, top])], other[has]])
    vals = np.concatenate([np.ones(n), -np.ones(int(has.sum()))])
    return model.add_rows(rows, cols, vals, n, -np.inf, 0.0, "parent_above")


def add_partner_arcs(model: LinearModel, x: np.ndarray, z: np.ndarray, data: ModelData) -> range:
    """``z[e] <= sum of x[b]`` over the partners that keep arc ``e`` (for arcs some partner drops).

    Written as ``z[e] + sum of x[b] over the partners that drop e <= 1`` when that is shorter.
    """
    if data.arc_ok is None:
        return range(model.n_rows, model.n_rows)
    ok = data.arc_ok
    partial = np.flatnonzero(~ok.all(axis=1))
    rows, cols, vals, hi = [np.arange(partial.size)], [z[partial]], [np.ones(partial.size)], np.zeros(partial.size)
    n_ok = ok[partial].sum(axis=1)
    use_drop = n_ok > ok.shape[1] - n_ok
    hi[use_drop] = 1.0
    sub = ok[partial]
    rr, pp = np.nonzero(np.where(use_drop[:, None], ~sub, sub))
    rows.append(rr)
    cols.append(x[pp])
    vals.append(np.where(use_drop[rr], 1.0, -1.0))
    return model.add_rows(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), partial.size,
                          -np.inf, hi, "partner_arcs")


def add_weight_objective(model: LinearModel, x: np.ndarray, z: np.ndarray, data: ModelData) -> np.ndarray:
    """Minimize ``W = sum dist(i, j) z[i, j, l] + sum dist(0, b) x[b]``; returns the cost vector."""
    D = data.D
    model.set_cost(np.concatenate([z, x]),
                   np.concatenate([D[data.tail, data.head], D[0, data.partners]]).astype(np.float64))
    return model.cost


def add_objective_cutoff(model: LinearModel, upper: float) -> range:
    """``W <= upper``: a solution must beat the incumbent (with ``upper = UB - 1``)."""
    c = model.cost
    nz = np.flatnonzero(c)
    return model.add_rows(np.zeros(nz.size), nz, c[nz], 1, -np.inf, float(upper) + 0.5, "objective_cutoff")


def build_xhop_model(data: ModelData):
    """The full model: partner, arc and depth variables, the families, the objective."""
    model = LinearModel(name=f"xhop_h{data.h}")
    x = add_partner_vars(model, data)
    z = add_arc_vars(model, data)
    y = add_depth_vars(model, z, data)
    add_partner_choice(model, x, data)
    add_one_place(model, x, y, data)
    add_parent_above(model, x, z, y, data)
    add_partner_arcs(model, x, z, data)
    add_weight_objective(model, x, z, data)
    return model, ModelVars(x, z, y)


def decode_forest(v: ModelVars, values, data: ModelData):
    """``(b, parent)`` of an integral solution."""
    values = np.asarray(values)
    b = int(data.partners[int(np.argmax(values[v.x]))])
    parent = np.full(data.V, -1, dtype=np.int64)
    on = np.flatnonzero(values[v.z] > 0.5)
    parent[data.head[on]] = data.tail[on]
    return b, parent


def encode_forest(v: ModelVars, data: ModelData, model: LinearModel, b: int, parent):
    """The column vector of a forest, or ``None`` if the model has no column for one of its arcs."""
    parent = np.asarray(parent, dtype=np.int64)
    try:
        depth = forest_depths(parent, [0, b])
    except ValueError:
        return None
    hits = np.flatnonzero(data.partners == b)
    if hits.size == 0:
        return None
    vals = np.zeros(model.n_cols)
    vals[v.x[hits[0]]] = 1.0
    V, h = data.V, data.h
    if depth.max() > h:
        return None
    key = (data.layer * V + data.tail) * V + data.head
    order = np.argsort(key)
    kids = np.flatnonzero(parent >= 0)
    want = (depth[kids] * V + parent[kids]) * V + kids
    pos = np.searchsorted(key[order], want)
    pos = np.minimum(pos, key.size - 1)
    if key.size == 0 or np.any(key[order][pos] != want):
        return None
    vals[v.z[order[pos]]] = 1.0
    yc = v.y[kids, depth[kids]]
    if np.any(yc < 0):
        return None
    vals[yc] = 1.0
    return vals
