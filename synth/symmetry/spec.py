"""Groups by name: the one table of group kinds and their spellings.

Certificates name a group by its *kind* (``{"kind": "torus-gamma"}``, or explicit
``{"kind": "generators", ...}``); ``solve(group=...)`` and ``synth solve --group`` name a
torus group by its short *name* (``gamma``).  :data:`GROUPS` holds both spellings and the
builder of each kind, so there is one place to add a group.  Which group a network lifts with
by default is its kind's (the ``group`` of its row in :mod:`synth.topology.kinds`):
:func:`default_group`; :func:`lifting_group` adds the user graphs' searched or given groups and
is the one place the group is decided (the CLI and the solve stage both call it).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("4x4")
>>> named_group(t, {"kind": "torus-gamma"}).order, torus_group(t, "translations").order
(64, 16)
>>> torus_group(t, "bogus")
Traceback (most recent call last):
...
synth.errors.OptionError: unknown group 'bogus'; valid: gamma, translations-negation, translations
>>> default_group(t).spec
{'kind': 'torus-gamma'}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from synth.errors import GroupError, OptionError, check_instance
from synth.symmetry.gpu import failed_servers, gpu_group
from synth.symmetry.group import Group
from synth.symmetry.hyperx import hyperx_group
from synth.symmetry.multislice import failed_slices, multislice_group
from synth.symmetry.lattice import (grid_group, grid_translations, lattice_gamma, lattice_stabilizer, signed_axes,
                                    lattice_translations, lattice_translations_negation)
from synth.symmetry.residual import residual_group
from synth.symmetry.search import user_group
from synth.symmetry.spineleaf import spine_leaf_group
from synth.symmetry.torus import torus_gamma, torus_translations, torus_translations_negation
from synth.topology.base import Topology
from synth.topology.failures import Damaged
from synth.topology.gpu import GpuFabric
from synth.topology.kinds import kind_of
from synth.topology.lattice import LatticeTorus, grid
from synth.topology.multislice import Multislice
from synth.topology.torus import Torus

__all__ = ["fixing_group", "GroupKind", "GROUPS", "TORUS_GROUPS", "named_group", "torus_group", "torus_group_builder",
           "default_group", "lifting_group", "group_builder", "group_kinds"]


@dataclass(frozen=True)
class GroupKind:
    """A named group: its kind (as certificates spell it), its builder, and its short name on tori."""

    kind: str
    build: Callable[[Topology], Group]
    name: str | None = None   # what solve(group=...) takes; None: not chosen by name


GROUPS = {g.kind: g for g in (
    GroupKind("torus-gamma", torus_gamma, "gamma"),
    GroupKind("torus-translations-negation", torus_translations_negation, "translations-negation"),
    GroupKind("torus-translations", torus_translations, "translations"),
    GroupKind("hyperx-rotations", hyperx_group),
    GroupKind("hyperx-shifts-negation", hyperx_group),
    GroupKind("spine-leaf-shifts", spine_leaf_group),
    GroupKind("gpu-shifts", gpu_group),             # GPU servers (synth.symmetry.gpu)
    GroupKind("multislice-shifts", lambda t: multislice_group(t, default_group(t.slice_topology))),
    GroupKind("lattice-gamma", lattice_gamma),      # lattice tori and grids (synth.symmetry.lattice)
    GroupKind("lattice-translations-negation", lattice_translations_negation),
    GroupKind("lattice-translations", lattice_translations),
    GroupKind("grid-reflections", grid_group),
    GroupKind("grid-translations", grid_translations),
)}

#: short name -> builder of the torus groups that ``solve(group=...)`` takes, Γ first
TORUS_GROUPS = {g.name: g.build for g in GROUPS.values() if g.name is not None}


def group_builder(kind):
    """The builder of a named group kind, or ``None``."""
    entry = GROUPS.get(kind)
    return None if entry is None else entry.build


def group_kinds() -> list:
    """The group kinds a spec may name (besides ``generators``), sorted."""
    return sorted(GROUPS)


def torus_group_builder(name: str) -> Callable[[Topology], Group]:
    """The builder of the torus group of short name ``name`` (:data:`TORUS_GROUPS`).

    Raises
    ------
    OptionError
        If ``name`` is not one of them, naming the choices.
    """
    if name not in TORUS_GROUPS:
        raise OptionError(f"unknown group {name!r}; valid: {', '.join(TORUS_GROUPS)}")
    return TORUS_GROUPS[name]


def torus_group(t, name: str) -> Group:
    """The torus group of short name ``name`` (:data:`TORUS_GROUPS`), verified (see :func:`torus_group_builder`)."""
    return torus_group_builder(name)(t)


def named_group(topology: Topology, spec: dict) -> Group:
    """Rebuild (and verify) a group from its JSON ``spec``.

    ``{"kind": "generators", "generators": [[...], ...]}`` gives explicit vertex
    permutations; other kinds name a builder in :data:`GROUPS`.
    """
    check_instance(topology, "topology", Topology, " (e.g. synth.parse_torus('4x4'))")
    check_instance(spec, "spec", dict, " (e.g. {'kind': 'torus-gamma'})")
    kind = spec.get("kind") if isinstance(spec, dict) else None
    if kind == "generators":
        gens = spec.get("generators")
        if not isinstance(gens, list) or not all(isinstance(g, list) and all(
                isinstance(v, int) and not isinstance(v, bool) for v in g) for g in gens):
            raise GroupError("group generators must be lists of integer vertex ids")
        try:
            arr = np.asarray(gens, dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            raise GroupError("group generators must be lists of vertex ids") from None
        if arr.ndim != 2 or arr.shape[1] != topology.n_vertices:
            raise GroupError(f"each group generator must list {topology.n_vertices} vertex images")
        return Group.from_generators(topology, arr, spec.get("name", "generators"), dict(spec))
    builder = group_builder(kind)
    if builder is None:
        raise GroupError(f"unknown group kind {kind!r}; valid: {', '.join(group_kinds() + ['generators'])}")
    try:
        return builder(topology)
    except (AttributeError, TypeError):
        raise GroupError(f"group kind {kind!r} does not apply to {topology.name}") from None


def _lattice_view(t):
    """``t`` as a lattice torus with the same vertex numbering (a plain torus: the diagonal lattice), or None."""
    if isinstance(t, LatticeTorus):
        return t
    if isinstance(t, Torus):
        return grid(tuple(t.shape), (True,) * len(t.shape))
    return None


def default_group(topology: Topology):
    """The largest built-in group for a topology (Γ on equal-sided tori), or ``None``.

    The group kind comes from the topology's row in the table of network kinds
    (:func:`synth.topology.kinds.kind_of`); a kind without one (user graphs) gives ``None``.
    A damaged topology gets the residual group of its healthy topology's (:mod:`synth.symmetry.residual`);
    on tori, lattice tori and grids, of every closed-form automorphism (translations and the whole point
    group: :func:`synth.symmetry.lattice.lattice_stabilizer`), which may be larger than the lifting group.
    """
    if isinstance(topology, Damaged):
        healthy = default_group(topology.healthy)
        whole = _whole_units_group(topology.healthy, topology.failures)
        if whole is not None:       # the larger residual: of rotating every unit, or the whole units only
            return max((residual_group(topology, g) for g in (healthy, whole)), key=lambda g: g.order)
        if healthy is None:
            return None
        view = _lattice_view(topology.healthy)
        if view is None or not (topology.failures.nodes or topology.failures.links):
            return residual_group(topology, healthy)
        # every closed-form automorphism that fixes the failures, not only the lifting group's
        return residual_group(topology, healthy, lattice_stabilizer(view, topology.failures),
                              f"residual(automorphisms({topology.healthy.name}))")
    kind = kind_of(topology).group(topology)
    return None if kind is None else GROUPS[kind].build(topology)


def fixing_group(t, fixed, on: Topology) -> Group:
    """The automorphisms of the torus or lattice torus ``t`` that fix ``fixed`` (a
    :class:`~synth.topology.failures.Failures`: its links and the set of its vertices), as a group of ``on`` (a
    network on ``t``'s vertices whose links they preserve: a periodic network whose fixed chips still work).

    Where no link of ``on`` would have a trivial stabilizer (a lattice of fixed chips on a 3-D torus: every link
    is fixed by an element that exchanges the two other axes), only the elements whose permutation of the axes is
    even, which keep the links along an axis apart from the others.

    >>> from synth.topology.failures import Failures
    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("8x8x8"); chips = Failures(nodes=[0, 4, 32, 36, 256, 260, 288, 292])
    >>> fixing_group(t, chips, t).order        # 8 translations, 8 signs, 3 rotations of the axes
    192
    """
    view = _lattice_view(t)
    elements = lattice_stabilizer(view, fixed)
    name = f"residual(automorphisms({t.name}) fixing {len(fixed.nodes)} chips)"
    if t.ndim > 2:
        elements = elements[_even_axes(view, elements)]
    return residual_group(on, None, elements, name)


def _even_axes(t, elements) -> np.ndarray:
    """Which rows of ``elements`` (vertex permutations of grid ``t``) permute the axes evenly."""
    axes = np.abs(signed_axes(t, elements)) - 1
    return sum((axes[:, i] > axes[:, j]).astype(np.int64) for i in range(t.ndim) for j in range(i + 1, t.ndim)) % 2 == 0


def _whole_units_group(healthy: Topology, failures):
    """On GPU servers and multislices, the group whose rotation cycles only the servers (slices) that
    ``failures`` leaves whole: the rotation of all of them fixes no failure inside one; elsewhere None."""
    if isinstance(healthy, GpuFabric):
        return gpu_group(healthy, failed_servers(healthy, failures))
    if isinstance(healthy, Multislice):
        return multislice_group(healthy, default_group(healthy.slice_topology), failed_slices(healthy, failures))
    return None


def lifting_group(topology: Topology, generators=None, *, rounds=None) -> Group:
    """The group synth lifts with when none is named: the one place that decides it.

    A built-in kind lifts with its :func:`default_group` (on a damaged network, the residual of the
    healthy network's).  Where the kind has none (user graphs), ``generators`` (vertex permutations,
    from a ``--topology`` file) give it, else nauty searches one (:func:`synth.symmetry.search.user_group`,
    ``rounds`` passed on).  On a damaged network given ``generators``, the residual of their group on
    the healthy network; without them, the residual of the searched one where no default exists.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> lifting_group(parse_torus("4x4")).spec
    {'kind': 'torus-gamma'}
    >>> from synth.topology.base import Topology
    >>> ring = Topology.from_links("ring 5", {"kind": "links"}, 5, [[i, (i + 1) % 5] for i in range(5)]
    ...                            + [[(i + 1) % 5, i] for i in range(5)])
    >>> lifting_group(ring, [[1, 2, 3, 4, 0]]).order
    5
    """
    if isinstance(topology, Damaged):
        group = default_group(topology) if generators is None else None
        return group if group is not None else residual_group(topology, user_group(topology.healthy, generators))
    group = default_group(topology)
    return group if group is not None else user_group(topology, generators, rounds=rounds)
