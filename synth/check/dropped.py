"""Dropped chips: a certificate's schedule on a network with a chip more, every tree having it as a leaf.

A failed chip breaks a pod's symmetry, and a schedule of the damaged pod lifted by the few elements that fix
the chip has a base tree per cell for every tree of the symmetric one.  A certificate may instead state the
schedule of the network *with* the chip (its ``topology``, lifted by its ``group``) and the chips it
``dropped`` (:mod:`synth.check.certificate`): every lifted transmission from or to a dropped chip is left out,
and what remains is the schedule of the network without them
(:func:`~synth.topology.failures.without_nodes`).  That is a correct allreduce there when each base component
is one on the network with the chip (the checker executes it) and every vertex of a dropped chip's orbit is a
leaf of every component (:func:`drop_of` verifies it): it forwards nothing, so taking out its one reduce and its
copies takes its input out of every total and changes nothing else.  An explicit check lifts the schedule
without the chips (:func:`synth.schedule.lift.lift`) and executes it on that network directly.

The measurements follow from the symmetric ones: the sends left out are those of a leaf, over one link at the
chip, so every other link carries what it carried; the links at the dropped chips are gone, and the sends and
elements they carried are counted out (``sends``, ``lost``), per base send from the group's images of its leaf.

Examples
--------
>>> from synth import parse_torus, sp_allreduce, torus_gamma
>>> t = parse_torus("3x3"); g = torus_gamma(t); b = sp_allreduce(t)
>>> drop_of(b, g, np.ones((1, 9), dtype=np.int64), [4])
Traceback (most recent call last):
...
synth.errors.InvalidScheduleError: component 0: chip 4, in the orbit of a dropped chip, forwards (only a leaf of \
every tree can be dropped)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.errors import InvalidScheduleError, ScheduleError
from synth.schedule.data import ALLREDUCE, COPY, REDUCE
from synth.topology.failures import without_nodes

__all__ = ["Drop", "drop_of"]


@dataclass(frozen=True, eq=False)
class Drop:
    """What dropping chips leaves of a lifted schedule.

    Attributes
    ----------
    network : Topology
        The network without the dropped chips (the base topology itself when none are).
    keep : numpy.ndarray
        Per link of the base topology, whether it is a link of ``network`` (in the same order).
    sends, lost : int
        The lifted transmissions left out, and the elements they carried (each over one link).
    """

    network: object
    keep: np.ndarray
    sends: int = 0
    lost: int = 0


def drop_of(base, group, sizes, dropped) -> Drop:
    """The :class:`Drop` of ``lift(base, group)`` without the chips ``dropped``, ``sizes`` its chunks' elements
    (components x ``|G|``), once every vertex of their orbits is known to be a leaf of every component.

    Raises
    ------
    InvalidScheduleError
        If a vertex of a dropped chip's orbit receives a reduce, sends a copy, or has a send longer than one
        link or through it (the schedule without the chip would be false).
    ScheduleError
        If the schedule is no allreduce, or the group fixes a dropped chip's orbit within the dropped ones.
    """
    t = base.topology
    if not len(dropped):
        return Drop(t, np.ones(t.n_links, dtype=bool))
    if base.collective != ALLREDUCE:
        raise ScheduleError(f"only an allreduce drops chips, not a {base.collective}")
    net = without_nodes(t, dropped)
    nodes = np.asarray(net.failures.nodes, dtype=np.int64)
    orbit = group.vertex_orbit
    if np.any(np.bincount(orbit[nodes], minlength=orbit.max() + 1)[orbit[nodes]] == np.bincount(orbit)[orbit[nodes]]):
        raise ScheduleError("a dropped chip's orbit holds dropped chips only: its sends would go from every chunk")
    leaf = np.isin(orbit, orbit[nodes])
    n, L = base.n_transmissions, base.route_lengths
    ends = leaf[t.link_src[base.route_links]] | leaf[t.link_dst[base.route_links]]
    touched = np.bincount(np.repeat(np.arange(n), L), weights=ends, minlength=n) > 0
    own = (L == 1) & (((base.op == REDUCE) & leaf[base.src] & ~leaf[base.dst])
                      | ((base.op == COPY) & leaf[base.dst] & ~leaf[base.src]))
    bad = np.flatnonzero(touched & ~own)
    if bad.size:
        i = int(bad[0])
        u = int(base.src[i]) if leaf[base.src[i]] else int(base.dst[i]) if leaf[base.dst[i]] else \
            int(t.link_src[base.route(i)][leaf[t.link_src[base.route(i)]]][0])
        raise InvalidScheduleError(f"component {int(base.component[i])}: chip {u}, in the orbit of a dropped chip, "
                                   "forwards (only a leaf of every tree can be dropped)")
    sel = np.flatnonzero(touched)
    chip = np.where(base.op[sel] == REDUCE, base.src[sel], base.dst[sel])
    chips, at = np.unique(chip, return_inverse=True)
    hit = np.isin(group.vertex_images(chips), nodes).astype(np.int64)      # (|G|, chips): element g drops it
    lost = (np.asarray(sizes, dtype=np.int64) @ hit)[base.component[sel], at.ravel()]
    dead = np.zeros(t.n_vertices, dtype=bool)
    dead[nodes] = True
    keep = ~dead[t.link_src] & ~dead[t.link_dst]
    if not (np.array_equal(net.link_src, t.link_src[keep]) and np.array_equal(net.link_dst, t.link_dst[keep])):
        raise ScheduleError("internal: the network without the dropped chips numbers its links differently")
    return Drop(net, keep, int(hit.sum(axis=0)[at.ravel()].sum()), sum(lost.tolist()))
