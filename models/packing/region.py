"""The damaged region of a torus and the healthy trees around it: what the local timed trees keep and change.

On a torus the healthy schedule (SP-allreduce: the dimension-order BFS tree ``T0`` of vertex 0, lifted by
Γ) loads every link equally in every round.  Its trees are ``T(r, P) = r + P(T0)``: a translation by the
owner ``r`` of a point-group image ``P(T0)``; over a point group ``W`` that holds Γ's (the signs and
cyclic rotations of the coordinates), every owner's trees with equal weights are still balanced round
by round (a union of images of the Γ schedule).  After a failure only a few vertices need other parents:
:func:`damaged_region` returns them (the *free* vertices: within ``radius`` hops of a failure, every
vertex whose distance to some owner changed, and their neighbours) and the *halo* around them (their
other neighbours), whose labels and parents stay healthy.  :func:`point_group` closes Γ's point part
with the linear parts of the lifting group, so the group maps trees of the family onto trees of it;
:func:`healthy_parents` gives any tree's parent of any vertex in closed form, without the family in memory.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.spec import default_group
>>> t = parse_torus("8x8"); d = damage(t, parse_failures(t, links=["0-1"]))
>>> g = default_group(d)
>>> W = point_group(t, g)
>>> len(W), healthy_parents(t, np.array([9]), np.array([0]), W[:1], np.array([0])).tolist()
(8, [[1]])
>>> free, halo = damaged_region(d, g, radius=1)
>>> bool(free[0] and free[1]), int(free.sum()) < 64
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.errors import SynthError
from synth.models.packing.local import near_failures
from synth.schedule.data import REDUCE
from synth.schedule.sp import bfs_parents, sp_allreduce
from synth.topology.torus import Torus

__all__ = ["point_group", "linear_part", "healthy_parents", "damaged_region", "neighbours_of", "TreeReference",
           "gamma_points", "is_sp_gamma"]


def linear_part(t: Torus, image: np.ndarray) -> np.ndarray:
    """The signed permutation matrix ``A`` of an automorphism given as a vertex permutation ``u -> A u + b``."""
    d = t.ndim
    b = t.coords(int(image[0]))
    A = np.zeros((d, d), dtype=np.int64)
    for i in range(d):
        e = np.zeros(d, dtype=np.int64)
        e[i] = 1
        c = (t.coords(int(image[int(t.vertex(e))])) - b) % t.sides
        j = np.flatnonzero(c != 0)
        if j.size != 1 or c[j[0]] not in (1, t.sides[j[0]] - 1):
            raise SynthError("not an affine automorphism of the torus")
        A[j[0], i] = 1 if c[j[0]] == 1 else -1
    return A


def point_group(t: Torus, group) -> list:
    """Γ's point part (``±`` the cyclic rotations of the coordinates) closed with the linear parts of ``group``'s
    elements: a list of signed permutation matrices, the identity first."""
    if not isinstance(t, Torus) or not t.is_equal_sided:
        raise SynthError("the local timed trees start from SP-allreduce: an equal-sided torus")
    d = t.ndim
    rho = np.roll(np.eye(d, dtype=np.int64), -1, axis=0)
    gens = [-np.eye(d, dtype=np.int64), rho]
    if group is not None:
        gens += [linear_part(t, img) for img in group.vertex_images(np.arange(t.n_vertices))]
    out = [np.eye(d, dtype=np.int64)]
    seen = {out[0].tobytes()}
    i = 0
    while i < len(out):
        for g in gens:
            m = g @ out[i]
            if m.tobytes() not in seen:
                seen.add(m.tobytes())
                out.append(m)
        i += 1
    return out


def healthy_parents(t: Torus, vertices, roots, mats, keep) -> np.ndarray:
    """``out[i, j]``: the parent of ``vertices[j]`` in the tree ``roots[i] + mats[keep[i]](T0)`` (-1 at the root).

    ``vertices`` (n,), ``roots`` and ``keep`` (m,), ``mats`` a list of signed permutation matrices."""
    par0 = bfs_parents(t, 0)
    A = np.stack(mats)[np.asarray(keep)]                                  # (m, d, d)
    rel = (t.coords(np.asarray(vertices))[None, :, :] - t.coords(np.asarray(roots))[:, None, :])  # (m, n, d)
    u = np.einsum("mji,mnj->mni", A, rel) % t.sides                      # A^-1 = A^T
    pu = par0[t.vertex(u)]
    back = np.einsum("mij,mnj->mni", A, t.coords(np.maximum(pu, 0)))
    out = t.vertex((back + t.coords(np.asarray(roots))[:, None, :]) % t.sides)
    return np.where(pu < 0, -1, out)


def gamma_points(t: Torus) -> list:
    """Γ's point part: ``±`` the cyclic rotations of the coordinates (``2d`` signed permutation matrices)."""
    d = t.ndim
    rho = np.roll(np.eye(d, dtype=np.int64), -1, axis=0)
    rots = [np.linalg.matrix_power(rho, j) for j in range(d)]
    return rots + [-m for m in rots]


#: the point part (linear parts of the elements fixing vertex 0) of the torus groups with translations
_POINTS = {"torus-translations": 1, "torus-translations-negation": 2}


@dataclass(frozen=True, eq=False)
class TreeReference:
    """The parent fractions of the healthy trees of a torus, a family of one-hop trees lifted by translations,
    in closed form: owner ``r``'s trees are ``r + T_k`` for every tree ``T_k`` rooted at vertex 0 of the table
    (weight ``w_k``), so the share of ``r``'s chunk for which ``child``'s parent is ``parent`` is the weight of
    the trees that say so over all.  What :func:`synth.models.packing.local.reference_fractions` gives for the
    lifted schedule, without lifting it: SP-allreduce lifted by Γ is :meth:`sp_gamma` (``2d p`` trees: gigabytes
    on a 16x16x16 torus), a family lifted by translations and negation :meth:`lifted` (on the 16x20x28 torus
    8,959 arcs times 17,920 elements: 10 GB).  The rounding onto these trees
    (:func:`~synth.models.packing.tree_rounding.round_on_trees`) gives owner ``r`` a block of units per tree.

    ``table[k, u]``: the parent of ``u`` in ``T_k`` (``-2`` at the root 0, so no parent matches it);
    ``weight[k]``: its positive weight; ``what``: which trees, for the notes.
    """

    torus: Torus
    table: np.ndarray
    weight: np.ndarray
    what: str = ""

    @classmethod
    def sp_gamma(cls, t: Torus) -> "TreeReference":
        """SP-allreduce lifted by Γ on the equal-sided torus ``t``: the ``2d`` trees ``P(T0)`` of Γ's point
        part ``P``, equal weights."""
        par0 = bfs_parents(t, 0)
        u = t.coords(np.arange(t.n_vertices))
        rows = []
        for A in gamma_points(t):
            pu = par0[t.vertex(u @ A)]                                   # A^-1 = A^T: the vertex A^T u of T0
            rows.append(np.where(pu < 0, -2, t.vertex(t.coords(np.maximum(pu, 0)) @ A.T)))
        return cls(t, np.stack(rows), np.ones(len(rows)), "SP-allreduce lifted by Γ")

    @classmethod
    def lifted(cls, base, group) -> "TreeReference":
        """``base`` (a family of one-hop trees on a torus) lifted by ``group`` (``torus-translations`` or
        ``torus-translations-negation``): the trees ``P(T_c - root_c)`` for the point part ``P`` (the identity,
        and ``-I`` under negation), each of its tree's weight.

        Raises
        ------
        SynthError
            On another group, a component over longer routes, or one that is not a tree with one root.
        """
        t = base.topology
        n_points = _POINTS.get(getattr(group, "spec", {}).get("kind"))
        if not isinstance(t, Torus) or n_points is None:
            raise SynthError("a family reference needs a torus lifted by its translations (and negation)")
        red = np.flatnonzero(base.op == REDUCE)
        if np.any(base.route_lengths[red] != 1):
            raise SynthError("the healthy family reduces over routes longer than one hop")
        u = t.coords(np.arange(t.n_vertices))
        rows, weights = [], []
        for c in range(base.n_components):
            if base.weights[c] <= 0:
                continue
            sel = red[base.component[red] == c]
            src, dst = base.src[sel].astype(np.int64), base.dst[sel].astype(np.int64)
            root = np.setdiff1d(dst, src)
            if root.size != 1 or np.unique(src).size != src.size:
                raise SynthError(f"component {c} of the healthy family is not a tree with one root")
            par = np.full(t.n_vertices, -1, dtype=np.int64)
            par[src] = dst
            rho = t.coords(int(root[0]))
            for sign in (1, -1)[:n_points]:
                pu = par[t.vertex(sign * u + rho)]                       # the vertex P^-1 w + root of T_c
                rel = t.vertex(sign * (t.coords(np.maximum(pu, 0)) - rho))
                rows.append(np.where(pu < 0, -2, rel))
                weights.append(float(base.weights[c]))
        return cls(t, np.stack(rows), np.asarray(weights),
                   f"{len(weights) // n_points} tree(s) lifted by {getattr(group, 'name', 'the group')}")

    def lookup(self, root, child, parent) -> np.ndarray:
        t = self.torus
        root, child, parent = (np.asarray(a, dtype=np.int64) for a in (root, child, parent))
        # an arc's child and parent looked up relative to its root: the trees of r are r + T_k
        rel_child, rel_parent = _relative(t, child, root), _relative(t, parent, root)
        hits = np.zeros(root.shape, dtype=np.float64)
        for row, w in zip(self.table, self.weight):
            hits += w * (row[rel_child] == rel_parent)
        return hits / self.weight.sum()


def _relative(t: Torus, v, root) -> np.ndarray:
    """The vertex ``v - root`` (coordinates modulo the sides)."""
    return t.vertex(t.coords(v) - t.coords(root))


def is_sp_gamma(base, group) -> bool:
    """Whether ``base`` lifted by ``group`` is SP-allreduce lifted by Γ (what :meth:`TreeReference.sp_gamma`
    describes)."""
    t = base.topology
    if not isinstance(t, Torus) or not t.is_equal_sided or getattr(group, "spec", None) != {"kind": "torus-gamma"}:
        return False
    sp = sp_allreduce(t)
    if base.n_rounds != sp.n_rounds or base.n_components != sp.n_components or \
            base.n_transmissions != sp.n_transmissions or not np.array_equal(base.weights, sp.weights):
        return False
    # the same rows in any order: a certificate read back lists a tree's sends vertex by vertex
    if np.any(base.route_lengths != 1) or np.any(sp.route_lengths != 1):
        return False
    names = ("component", "round", "src", "dst", "op", "route_links")
    rows = [np.stack([np.asarray(getattr(b, k), dtype=np.int64) for k in names]) for b in (base, sp)]
    rows = [r[:, np.lexsort(r[::-1])] for r in rows]
    return bool(np.array_equal(rows[0], rows[1]))


def neighbours_of(t, mask) -> np.ndarray:
    """Vertices with a link to a vertex of ``mask`` (either direction)."""
    out = np.zeros(t.n_vertices, dtype=bool)
    out[t.link_src[mask[t.link_dst]]] = True
    out[t.link_dst[mask[t.link_src]]] = True
    return out


def damaged_region(d, group, radius: int = 2):
    """``(free, halo)`` masks over the vertices of the damaged torus ``d`` (module docstring)."""
    h = d.healthy
    live = d.is_compute & (np.bincount(d.link_src, minlength=d.n_vertices) > 0)
    reps = np.flatnonzero(live) if group is None else \
        np.unique(group.vertex_images(np.arange(d.n_vertices)).min(axis=0)[live])
    changed = np.zeros(d.n_vertices, dtype=bool)
    for r in reps.tolist():
        dd = d.bfs([r])
        changed |= live & (dd != h.dist(np.arange(d.n_vertices), r))
    if group is not None:
        imgs = group.vertex_images(np.flatnonzero(changed))
        changed[np.unique(imgs)] = True
    free = live & (near_failures(d, radius) | changed | neighbours_of(d, changed))
    halo = live & ~free & neighbours_of(d, free)
    return free, halo
