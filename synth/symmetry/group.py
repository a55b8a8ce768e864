"""Groups of network automorphisms as permutation arrays.

A :class:`Group` is given by generator permutations of the vertices.  Before
anything uses it, :meth:`Group.from_generators` proves three facts with exact
array arithmetic:

1. every generator is an automorphism (a vertex permutation that maps links to
   links and compute vertices to compute vertices), so every product is one;
2. the *base link* ``f0`` (the smallest link of a largest link orbit) has a
   trivial stabilizer: all Schreier generators ``u_{s(e)}^-1 s u_e`` are the
   identity;
3. hence the elements are exactly one ``u_e`` per link ``e`` of the orbit of
   ``f0``, with ``u_e(f0) = e``, and ``|G| = |orbit(f0)|``.

Element ``i`` is the one that maps ``f0`` to ``orbit_links[i]`` (orbit links in
increasing order): this numbering is canonical, it does not depend on the
generators chosen.  Lifting (:mod:`synth.schedule.lift`) gives element ``i`` chunk ``i``.

By orbit-stabilizer, each element maps a link ``f`` of orbit ``O`` onto every
link of ``O`` exactly ``|G| / |O|`` times, so lifting a base schedule (equal
chunks) loads every link of ``O`` in round ``s`` with ``|G| / |O|`` times the
base schedule's round-``s`` incidences on ``O`` (docs/spec.md §6).  The action is
*free* when every orbit has ``|G|`` links (e.g. tori), and *regular* when it is
free with a single orbit: then every link carries the same load.  HyperX with
even sides has a half-size orbit (links of offset ``n/2``).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.symmetry.torus import torus_gamma
>>> g = torus_gamma(parse_torus("4x4"))
>>> g.order, g.is_regular, g.n_link_orbits
(64, True, 1)
>>> g.link_images([0]).ravel()[:5].tolist()
[0, 1, 2, 3, 4]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from synth.errors import GroupError
from synth.symmetry.perm import orbits
from synth.topology.base import Topology

__all__ = ["Group"]

_BLOCK = 1 << 24  # entries per block in the big comparisons (bounds temporary memory)


def _components(n, perms):
    """Orbit label (``0..count-1``, in order of the orbits' smallest points) of each point under the
    permutations ``perms`` (k x n), and ``count`` (:func:`synth.symmetry.perm.orbits`)."""
    first = orbits(n, perms)
    root = first == np.arange(n)
    rank = np.cumsum(root) - 1
    return rank[first], int(root.sum())


def _generator_array(generators, V) -> np.ndarray:
    """``generators`` as a ``k x V`` integer array (``k >= 1``), or a :class:`GroupError` saying what is wrong."""
    try:
        arr = np.asarray(generators)
    except (TypeError, ValueError):   # ragged lists
        arr = None
    if arr is None or arr.dtype == object or (arr.size and arr.dtype.kind not in "iu"):
        raise GroupError(f"generators must be lists of {V} integer vertex images each")
    if arr.size == 0:
        raise GroupError("no generators given (give at least one vertex permutation)")
    if arr.ndim not in (1, 2) or arr.shape[-1] != V:
        raise GroupError(f"each generator must list the {V} vertex images, got shape {list(arr.shape)}")
    return arr.astype(np.int64).reshape(-1, V)


@dataclass(frozen=True, eq=False)
class Group:
    """A verified group of automorphisms with a link of trivial stabilizer.

    Build it with :meth:`from_generators`; the fields below are derived there.

    Attributes
    ----------
    topology : Topology
    name : str
    spec : dict
        JSON description; :func:`synth.symmetry.spec.named_group` rebuilds the group from it.
    generators : numpy.ndarray
        ``k x V`` vertex permutations.
    generator_links : numpy.ndarray
        ``k x E`` induced link permutations.
    orbit_links : numpy.ndarray
        The orbit of link 0 in increasing order; element ``i`` maps link 0 to ``orbit_links[i]``.
    link_orbit : numpy.ndarray
        Orbit label (0..m-1, numbered by smallest link) of every link.
    """

    topology: Topology
    name: str
    spec: dict
    generators: np.ndarray
    generator_links: np.ndarray
    orbit_links: np.ndarray
    link_orbit: np.ndarray
    _levels: tuple  # Schreier tree in BFS order: ((generator, children, parents), ...)

    # -------------------------------------------------------------- building
    @classmethod
    def from_generators(cls, topology: Topology, generators, name: str, spec: dict, order: int | None = None,
                        link_classes=None, link_images=None) -> "Group":
        """Verify ``generators`` and build the group they generate (see module docstring).

        ``order``: the order of the generated group, known in closed form by the caller (an affine
        group ``T ⋊ H`` of a torus or lattice torus: ``|T| |H|``, :mod:`synth.symmetry.affine`).  Fact
        2 is then proved by counting instead of Schreier's lemma: the orbit of ``f0`` has ``|G| /
        |Stab(f0)|`` links, so it has ``order`` links exactly when the stabilizer is trivial.  This
        costs ``O(k E)`` where the Schreier check costs ``O(k |G| V)`` (the full Fugaku: 10^12).

        ``link_classes``: the link orbits in closed form (one label per link), from a caller that knows
        why each class is one orbit (:func:`synth.symmetry.lattice.link_classes`: the translations are
        transitive on each step's links).  The labels are checked to be invariant under every generator,
        so each class is a union of orbits, and the base class is walked link by link (the Schreier
        tree), so it is one orbit; a failed check falls back to computing the orbits (union-find).
        ``link_images``: candidate link permutations of the generators (``k x E``), checked link by link
        (each image link must join the images of its ends), searched for where a check fails.

        Raises
        ------
        GroupError
            If a generator is not an automorphism or no link has a trivial stabilizer.
        """
        V, E = topology.n_vertices, topology.n_links
        gens = _generator_array(generators, V)
        gen_links = np.empty((gens.shape[0], E), dtype=np.int32)
        for i, g in enumerate(gens):
            if not np.array_equal(np.sort(g), np.arange(V)):
                raise GroupError(f"generator {i} is not a permutation of the {V} vertices")
            if not np.array_equal(np.sort(g[topology.compute]), topology.compute):
                raise GroupError(f"generator {i} does not map compute vertices to compute vertices")
            src, dst = g[topology.link_src], g[topology.link_dst]
            img = None if link_images is None else np.asarray(link_images[i], dtype=np.int64)
            if img is None or img.shape != (E,) or np.any((img < 0) | (img >= E)) \
                    or not (np.array_equal(topology.link_src[img], src) and np.array_equal(topology.link_dst[img], dst)):
                img = topology.link_ids(src, dst)
            if np.any(img < 0):
                bad = int(np.argmax(img < 0))
                raise GroupError(
                    f"generator {i} is not an automorphism: it maps link "
                    f"{topology.link_src[bad]}->{topology.link_dst[bad]} to a non-link")
            for key in ("bandwidth", "latency"):
                values = getattr(topology, key)
                if values is not None and np.any(values[img] != values):
                    bad = int(np.argmax(values[img] != values))
                    raise GroupError(
                        f"generator {i} is not an automorphism of the links' {key}s: it maps link "
                        f"{topology.link_src[bad]}->{topology.link_dst[bad]} ({values[bad]:g}) to one of "
                        f"{values[img[bad]]:g}")
            gen_links[i] = img
        gens = gens.astype(np.int32)
        link_orbit = n_orbits = None
        if link_classes is not None:
            link_orbit = np.asarray(link_classes, dtype=np.int64)
            if link_orbit.shape != (E,) or any(not np.array_equal(link_orbit[g], link_orbit) for g in gen_links):
                link_orbit = None   # not invariant: compute the orbits
            else:
                link_orbit = np.unique(link_orbit, return_inverse=True)[1].ravel()
                n_orbits = int(link_orbit.max()) + 1
        if link_orbit is None:
            link_orbit, n_orbits = _components(E, gen_links)
        # relabel orbits by their smallest link, so labels are canonical
        first = np.full(n_orbits, E, dtype=np.int64)
        np.minimum.at(first, link_orbit, np.arange(E))
        rank = np.empty(n_orbits, dtype=np.int64)
        rank[np.argsort(first)] = np.arange(n_orbits)
        link_orbit = rank[link_orbit].astype(np.int32)
        sizes = np.bincount(link_orbit)
        base_orbit = int(np.argmax(sizes))  # a largest orbit; the first such (smallest links) on ties
        orbit_links = np.flatnonzero(link_orbit == base_orbit).astype(np.int32)
        levels = cls._schreier_tree(gen_links, orbit_links)
        if link_classes is not None and 1 + sum(c.size for _, c, _ in levels) != orbit_links.size:
            # the class given as the base orbit is several orbits: compute them instead
            return cls.from_generators(topology, generators, name, spec, order)
        group = cls(topology, name, spec, gens, gen_links, orbit_links, link_orbit, levels)
        if order is None:
            group._check_base_stabilizer()
        elif group.order != int(order):
            raise GroupError(f"{name}: the orbit of link {int(orbit_links[0])}, a largest, has {group.order} links "
                             f"where the group has {int(order)} elements: no link has a trivial stabilizer; such a "
                             "group cannot number chunks")
        if np.any(group.order % sizes):
            raise GroupError(f"{name}: an orbit size does not divide |G| (internal inconsistency)")
        return group

    @staticmethod
    def _schreier_tree(gen_links, orbit_links):
        """BFS over the orbit of the base link ``orbit_links[0]``; each new link gets (parent, generator)."""
        E = gen_links.shape[1]
        pos = np.full(E, -1, dtype=np.int64)
        pos[orbit_links] = np.arange(orbit_links.size)
        seen = np.zeros(orbit_links.size, dtype=bool)
        seen[0] = True
        frontier = np.array([0], dtype=np.int64)  # element indices
        levels = []
        while frontier.size:
            child_all, parent_all = [], []
            for s in range(gen_links.shape[0]):
                child = pos[gen_links[s][orbit_links[frontier]]]
                new = ~seen[child]
                child, parent = child[new], frontier[new]
                child, first = np.unique(child, return_index=True)
                parent = parent[first]
                seen[child] = True
                child_all.append(child)
                parent_all.append(parent)
            frontier = np.concatenate(child_all)
            # one (generator, children, parents) step per generator and level: children of a level
            # depend only on parents of earlier levels, so the steps can run in this order
            levels.extend((s, c, p) for s, (c, p) in enumerate(zip(child_all, parent_all)) if c.size)
        return tuple(levels)

    def _propagate(self, identity_row, tables):
        """Images of ``identity_row`` (points) under every element: ``G x len(row)``."""
        out = np.empty((self.order, identity_row.size), dtype=np.int32)
        out[0] = identity_row
        for s, child, parent in self._levels:
            out[child] = tables[s][out[parent]]
        return out

    def _check_base_stabilizer(self):
        """Schreier's lemma: the stabilizer of f0 is trivial iff s.u_e == u_{s(e)} for all s, e.

        Both sides are vertex maps compared point by point, so the check runs on blocks of
        vertices: memory stays at about ``_BLOCK`` entries instead of ``|G| x V``.
        """
        pos = np.full(self.topology.n_links, -1, dtype=np.int64)
        pos[self.orbit_links] = np.arange(self.order)
        targets = [pos[gl[self.orbit_links]] for gl in self.generator_links]
        V = self.topology.n_vertices
        step = max(1, _BLOCK // max(1, self.order))
        for a in range(0, V, step):
            U = self.vertex_images(np.arange(a, min(V, a + step)))  # G x block
            for gv, target in zip(self.generators, targets):
                if not np.array_equal(gv[U], U[target]):
                    raise GroupError(
                        f"{self.name}: no link has a trivial stabilizer (a non-identity element fixes "
                        f"link {int(self.orbit_links[0])}, from a largest orbit); such a group cannot number chunks")

    # ------------------------------------------------------------- queries
    @property
    def order(self) -> int:
        """Number of elements ``|G|``."""
        return int(self.orbit_links.size)

    @cached_property
    def n_link_orbits(self) -> int:
        return int(self.link_orbit.max()) + 1 if self.link_orbit.size else 0

    @property
    def base_link(self) -> int:
        """The link ``f0`` whose images number the elements."""
        return int(self.orbit_links[0])

    @property
    def is_free(self) -> bool:
        """True when no element but the identity fixes a link (every orbit has ``|G|`` links)."""
        return bool(np.all(self.orbit_sizes == self.order))

    @property
    def is_regular(self) -> bool:
        """True when the action on links is regular (free and transitive)."""
        return self.n_link_orbits == 1 and self.is_free

    @cached_property
    def orbit_sizes(self) -> np.ndarray:
        return np.bincount(self.link_orbit)

    @cached_property
    def vertex_orbit(self) -> np.ndarray:
        """Orbit label of every vertex."""
        return _components(self.topology.n_vertices, self.generators)[0]

    def vertex_images(self, vertices) -> np.ndarray:
        """``out[i, j]`` = element ``i`` applied to ``vertices[j]``."""
        return self._propagate(np.asarray(vertices, dtype=np.int32).ravel(), self.generators)

    def link_images(self, links) -> np.ndarray:
        """``out[i, j]`` = element ``i`` applied to link ``links[j]``."""
        return self._propagate(np.asarray(links, dtype=np.int32).ravel(), self.generator_links)

    def to_json(self) -> dict:
        return dict(self.spec)
