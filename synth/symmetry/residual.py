"""The symmetry that survives failures: the elements of the healthy group that fix the failure set.

An automorphism of the healthy graph that maps the set of failed vertices onto itself and the set
of failed connections onto itself maps the damaged graph onto itself, so these elements form a
subgroup of automorphisms of the damaged topology (:mod:`synth.topology.failures`).  They are
found by filtering the healthy group's elements (closed forms on tori, HyperX and spine-leaf; the
given or searched group on user graphs), never by a search on the damaged graph; the subgroup is
then verified on the damaged topology like any group (:meth:`synth.symmetry.group.Group.from_generators`)
and stored in certificates as explicit generators.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.symmetry.torus import torus_gamma
>>> t = parse_torus("4x4")
>>> g = residual_group(damage(t, parse_failures(t, links=["0-1"])), torus_gamma(t))
>>> g.order, g.spec["kind"]
(2, 'generators')
>>> residual_group(damage(t, parse_failures(t, nodes=["5"])), torus_gamma(t)).order
4
"""

from __future__ import annotations

import numpy as np

from synth.symmetry.group import Group

#: entries of one block of vertex images (a group order x vertices block)
_BLOCK = 1 << 22

__all__ = ["residual_elements", "residual_group", "trivial_group", "fixing", "fixes_failures"]


def residual_elements(healthy_group: Group, failures) -> np.ndarray:
    """Vertex permutations (rows) of the healthy group's elements that fix the failure set, identity first.

    The elements are tried on the vertices the failures touch first; only those that fix the failure set
    are mapped whole, a block of vertices at a time (Γ of a 64x64 torus has 32,768 elements of 4,096
    vertices: 1 GiB whole, sorted row by row, for the four that fix one failed link).
    """
    V = healthy_group.topology.n_vertices
    touched = np.unique(np.concatenate([np.asarray(failures.nodes, dtype=np.int64),
                                        np.asarray(failures.links, dtype=np.int64).ravel()]))
    keep = np.flatnonzero(fixes_failures(healthy_group.vertex_images(touched).astype(np.int64), touched, failures, V))
    perms = np.empty((keep.size, V), dtype=np.int64)
    step = max(1, _BLOCK // max(1, healthy_group.order))
    for a in range(0, V, step):
        perms[:, a:a + step] = healthy_group.vertex_images(np.arange(a, min(V, a + step)))[keep]
    return fixing(perms, failures)


def fixes_failures(images, touched, failures, V) -> np.ndarray:
    """Which rows of ``images`` (the images of the vertices ``touched``, sorted) map the failed vertices onto
    themselves and the failed connections onto themselves."""
    ok = np.ones(images.shape[0], dtype=bool)
    if failures.nodes:
        nodes = np.asarray(failures.nodes, dtype=np.int64)
        ok &= (np.sort(images[:, np.searchsorted(touched, nodes)], axis=1) == nodes).all(axis=1)
    if failures.links:
        pairs = np.asarray(failures.links, dtype=np.int64)
        keys = np.sort(pairs[:, 0] * V + pairs[:, 1])
        a, b = images[:, np.searchsorted(touched, pairs[:, 0])], images[:, np.searchsorted(touched, pairs[:, 1])]
        ok &= (np.sort(np.minimum(a, b) * V + np.maximum(a, b), axis=1) == keys).all(axis=1)
    return ok


def fixing(perms: np.ndarray, failures) -> np.ndarray:
    """The distinct rows of ``perms`` (vertex permutations) that map the failed vertices onto themselves
    and the failed connections onto themselves, identity first."""
    perms = np.unique(np.asarray(perms, dtype=np.int64), axis=0)
    V = perms.shape[1]
    everyone = np.arange(V)
    kept = perms[fixes_failures(perms, everyone, failures, V)]
    identity = np.flatnonzero((kept == everyone).all(axis=1))
    order = np.concatenate([identity, np.setdiff1d(np.arange(kept.shape[0]), identity)])
    return kept[order]


def residual_group(damaged, healthy_group: Group, elements: np.ndarray | None = None,
                   name: str | None = None) -> Group:
    """The subgroup of ``healthy_group`` that fixes ``damaged.failures``, verified on ``damaged``.

    Its generators are a few of its elements, picked greedily (each one not in the group the
    previous ones generate), so certificates stay small.  ``elements``: the elements that fix the
    failures, found otherwise (:func:`synth.symmetry.lattice.lattice_stabilizer`: from a larger
    healthy group than ``healthy_group``), with the group's ``name``.
    """
    if elements is None:
        elements = residual_elements(healthy_group, damaged.failures)
    gens, reached = _generators(damaged, elements, check=False)
    if not _numbers_chunks(damaged, reached):
        # every link has a nontrivial stabilizer, so the group cannot number chunks: the elements that keep
        # a link with a trivial one, greedily
        gens, reached = _generators(damaged, elements, check=True)
    name = name or f"residual({healthy_group.name})"
    if gens.shape[0] == 0:
        return trivial_group(damaged, name)
    spec = {"kind": "generators", "name": name, "generators": gens.tolist()}
    return Group.from_generators(damaged, gens, spec["name"], spec)


def trivial_group(t, name: str = "trivial") -> Group:
    """The group of the identity alone, spelled by its identity permutation (it lifts nothing).

    >>> from synth.topology.torus import parse_torus
    >>> trivial_group(parse_torus("3")).order
    1
    """
    identity = np.arange(t.n_vertices, dtype=np.int64)[None, :]
    return Group.from_generators(t, identity, name, {"kind": "generators", "name": name,
                                                     "generators": identity.tolist()})


def _generators(t, elements, check: bool):
    """Generators picked greedily from ``elements`` (each one outside the group of those before; with
    ``check``, only those that keep a link with a trivial stabilizer) and the group they generate."""
    V = t.n_vertices
    gens = np.zeros((0, V), dtype=np.int64)
    reached = {np.arange(V, dtype=np.int64).tobytes(): np.arange(V, dtype=np.int64)}
    for perm in elements[1:]:
        if np.ascontiguousarray(perm, dtype=np.int64).tobytes() in reached:
            continue
        more = np.vstack([gens, perm])
        closure = _closure(more)
        if check and not _numbers_chunks(t, closure):
            continue
        gens, reached = more, closure
    return gens, reached


def _numbers_chunks(t, elements: dict) -> bool:
    """Does some live link have a trivial stabilizer in the group of ``elements`` (no other element maps
    it onto itself)?  Lifting needs one (:meth:`synth.symmetry.group.Group.from_generators`)."""
    if len(elements) == 1:
        return True
    free = np.ones(t.n_links, dtype=bool)
    identity = np.arange(t.n_vertices, dtype=np.int64).tobytes()
    for key, p in elements.items():
        if key != identity:
            free &= ~((p[t.link_src] == t.link_src) & (p[t.link_dst] == t.link_dst))
    return bool(free.any())


def _closure(gens: np.ndarray) -> dict:
    """Every element the permutations ``gens`` generate, keyed by its bytes; the residual groups are small."""
    V = gens.shape[1]
    identity = np.arange(V, dtype=np.int64)
    seen = {identity.tobytes(): identity}
    frontier = [identity]
    while frontier:
        nxt = []
        for p in frontier:
            for g in gens:
                q = np.ascontiguousarray(g[p], dtype=np.int64)
                key = q.tobytes()
                if key not in seen:
                    seen[key] = q
                    nxt.append(q)
        frontier = nxt
    return seen
