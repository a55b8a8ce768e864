"""The hop-indexed k-hop tree model, built from one helper per constraint family.

Variables (dicts keyed by index tuples, names built from the indices):

* ``z[i, j, h]`` binary: vertex ``j`` at depth ``h`` with parent ``i`` (name ``z_i_j_h``);
* ``y[j, h]`` in ``[0, 1]``: vertex ``j`` at depth ``h`` (name ``y_j_h``), integral
  whenever ``z`` is.

Families (each ``add_<family>(model, vars, data)`` posts one family and returns what
it creates, keyed by index tuples):

* :func:`add_arc_vars` -- the ``z`` variables of the allowed hop-indexed arcs;
* :func:`add_depth_vars` -- ``y[j, h] = sum_i z[i, j, h]``;
* :func:`add_one_parent` -- ``sum_h y[j, h] = 1`` for every non-root ``j``;
* :func:`add_parent_above` -- ``z[i, j, h] <= y[i, h - 1]`` for ``h >= 2``;
* :func:`add_layer_cuts` -- directed cuts of the layered graph (``models.khop.lp``);
* :func:`add_weight_objective` -- minimize ``sum dist(i, j) z[i, j, h]``.

Every integral solution of the first four families is a spanning tree of depth at most
``k`` rooted at 0 (each vertex has one parent one level up, so following parents
strictly decreases the depth down to the root), and every such tree is one.

The model is a :class:`LinearModel`: solver-neutral arrays that compile to HiGHS
(:meth:`LinearModel.to_highs`), CP-SAT (:meth:`LinearModel.to_cpsat`) or SCIP
(:meth:`LinearModel.solve_scip`, which also takes a separator of cuts to add at every
node of its branch-and-cut).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.models.forest.instance import distance_matrix, hop_arcs
>>> t = parse_torus("4x4")
>>> data = ModelData(distance_matrix(t), 2, *hop_arcs(t, 2))
>>> model, z, y = build_hop_model(data)
>>> len(z), model.n_rows
(93, 119)
>>> sol = model.solve_highs(time_limit=10)
>>> sol.status, round(sol.objective)
('optimal', 18)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.models.backends.linear import LinearModel  # noqa: F401  (re-exported)
from synth.models.backends.result import MipSolution  # noqa: F401  (re-exported)

__all__ = ["ModelData", "LinearModel", "MipSolution", "add_arc_vars", "add_depth_vars", "add_one_parent",
           "add_parent_above", "add_layer_cuts", "add_weight_objective", "build_hop_model", "decode_parent"]


@dataclass(frozen=True, eq=False)
class ModelData:
    """What the helpers need: distances, depth bound and the allowed hop-indexed arcs."""

    D: np.ndarray
    k: int
    tail: np.ndarray
    head: np.ndarray
    layer: np.ndarray

    @property
    def V(self) -> int:
        return int(self.D.shape[0])


# ------------------------------------------------------------------ families
def add_arc_vars(model: LinearModel, data: ModelData) -> dict:
    """Binary ``z[i, j, h]`` for every allowed hop-indexed arc; returns the dict."""
    z = {}
    for i, j, h in zip(data.tail.tolist(), data.head.tolist(), data.layer.tolist()):
        z[i, j, h] = model.add_var(f"z_{i}_{j}_{h}", 0, 1, True)
    return z


def add_depth_vars(model: LinearModel, z: dict, data: ModelData) -> dict:
    """``y[j, h] = sum_i z[i, j, h]`` (a variable and its defining row per used ``(j, h)``).

    Returns
    -------
    dict
        ``(j, h) -> (y column, defining row)``.
    """
    into = {}
    for (i, j, h), col in z.items():
        into.setdefault((j, h), []).append(col)
    out = {}
    for (j, h), cols in sorted(into.items()):
        y = model.add_var(f"y_{j}_{h}", 0, 1, False)
        row = model.add_row([y] + cols, [1.0] + [-1.0] * len(cols), 0.0, 0.0, f"depth_{j}_{h}")
        out[j, h] = (y, row)
    return out


def add_one_parent(model: LinearModel, y: dict, data: ModelData) -> dict:
    """``sum_h y[j, h] = 1`` for every non-root vertex ``j``; returns ``j -> row``."""
    per = {j: [] for j in range(1, data.V)}
    for (j, h), (col, _) in y.items():
        per[j].append(col)
    return {j: model.add_row(cols, np.ones(len(cols)), 1.0, 1.0, f"one_parent_{j}") for j, cols in per.items()}


def add_parent_above(model: LinearModel, z: dict, y: dict, data: ModelData) -> dict:
    """``z[i, j, h] <= y[i, h - 1]`` for ``h >= 2`` (``z`` is fixed to 0 if ``i`` can't be at ``h - 1``).

    Returns
    -------
    dict
        ``(i, j, h) -> row``.
    """
    out = {}
    for (i, j, h), col in z.items():
        if h < 2:
            continue
        if (i, h - 1) in y:
            out[i, j, h] = model.add_row([col, y[i, h - 1][0]], [1.0, -1.0], -np.inf, 0.0, f"parent_above_{i}_{j}_{h}")
        else:
            out[i, j, h] = model.add_row([col], [1.0], -np.inf, 0.0, f"parent_above_{i}_{j}_{h}")
    return out


def add_layer_cuts(model: LinearModel, z: dict, cuts, data: ModelData) -> list:
    """Directed cuts ``z(delta-(S)) >= 1``; ``cuts`` holds ``(j, nodes)`` with layered node ids ``h * V + i``.

    ``S`` must contain every copy ``(j, 1..k)`` of ``j`` and not the root.  Arcs of the
    cut missing from ``z`` (reduced away) are left out, which keeps the cut valid for
    the trees the model can still represent.  Returns the rows.
    """
    V = data.V
    keys = list(z.keys())
    if not keys:
        return []
    arr = np.asarray(keys, dtype=np.int64)
    cols = np.fromiter(z.values(), dtype=np.int64, count=len(keys))
    t_node = np.where(arr[:, 2] == 1, 0, (arr[:, 2] - 1) * V + arr[:, 0])
    h_node = arr[:, 2] * V + arr[:, 1]
    rows = []
    n_nodes = (data.k + 1) * V
    for n, (j, nodes) in enumerate(cuts):
        inS = np.zeros(n_nodes, dtype=bool)
        inS[np.asarray(nodes, dtype=np.int64)] = True
        enter = inS[h_node] & ~inS[t_node]
        c = cols[enter]
        rows.append(model.add_row(c, np.ones(c.size), 1.0, np.inf, f"cut_{j}_{n}"))
    return rows


def add_weight_objective(model: LinearModel, z: dict, data: ModelData) -> dict:
    """Minimize ``W = sum dist(i, j) z[i, j, h]``; returns ``col -> cost``."""
    out = {}
    for (i, j, h), col in z.items():
        out[col] = float(data.D[i, j])
        model.set_cost(col, out[col])
    return out


def build_hop_model(data: ModelData, cuts=()):
    """The full model: arc and depth variables, one parent, parent above, cuts, objective."""
    model = LinearModel(name=f"khop_k{data.k}")
    z = add_arc_vars(model, data)
    y = add_depth_vars(model, z, data)
    add_one_parent(model, y, data)
    add_parent_above(model, z, y, data)
    if len(cuts):
        add_layer_cuts(model, z, cuts, data)
    add_weight_objective(model, z, data)
    return model, z, y


def decode_parent(z: dict, values, V: int) -> np.ndarray:
    """Parent array of an integral solution."""
    parent = np.full(V, -1, dtype=np.int64)
    for (i, j, h), col in z.items():
        if values[col] > 0.5:
            parent[j] = i
    return parent
