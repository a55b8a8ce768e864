"""Two-tier spine-leaf (Clos) networks: hosts compute, switches only forward.

``q`` spines, ``l`` leaves, ``q`` hosts per leaf; every leaf is joined to every
spine.  Numbering: host ``h_{i,j}`` (host ``i`` of leaf ``j``) is vertex
``j*q + i``; leaf ``L_j`` is ``q*l + j``; spine ``S_i`` is ``q*l + l + i``.
Links, in this order: host uplinks ``h_{i,j} -> L_j`` (by host id), host
downlinks ``L_j -> h_{i,j}``, then ``L_j -> S_i`` and ``S_i -> L_j`` (``j`` major).

Group (SPEC section 6): ``h_{i,j} -> h_{i+a, j+b}``, ``L_j -> L_{j+b}``,
``S_i -> S_{i+a}``, order ``q*l``; it acts freely on links with four orbits.

Base schedule: the shortest-path star rooted at ``h_{0,0}``: every host sends
to the root in one round (``h_{i,0}`` through ``L_0``; ``h_{i,j}``, ``j > 0``,
through ``L_j``, ``S_i`` and ``L_0``) and receives the result back the same way
in the next.  Host links, the bottleneck, are balanced exactly; the idle share
of spine links in each round shows up honestly as Ω slightly above 1.

Examples
--------
>>> s = spine_leaf(2, 3, 2)
>>> s.n_vertices, s.n_compute, s.n_links
(11, 6, 24)
>>> b = spine_leaf_star(s)
>>> b.n_rounds, int(b.route_lengths.max())
(2, 4)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from synth.errors import TopologyError
from synth.group import Group
from synth.schedule import COPY, REDUCE, BaseSchedule
from synth.topology import Topology, check_size

__all__ = ["SpineLeaf", "spine_leaf", "parse_spine_leaf", "spine_leaf_group", "spine_leaf_star"]


def parse_spine_leaf(text: str) -> "SpineLeaf":
    """Parse ``'spines,leaves,hosts_per_leaf'``, e.g. ``'16,32,16'``."""
    m = re.match(r"^\s*(\d{1,9})\s*,\s*(\d{1,9})\s*,\s*(\d{1,9})\s*$", str(text))
    if not m:
        raise TopologyError(f"spine-leaf {str(text)[:40]!r} is not of the form SPINES,LEAVES,HOSTS (e.g. 16,32,16), "
                            "each at most 9 digits")
    return spine_leaf(*(int(x) for x in m.groups()))


def spine_leaf(spines: int, leaves: int, hosts: int) -> "SpineLeaf":
    """The spine-leaf network; ``hosts`` per leaf must equal ``spines`` (the paper's symmetric case).

    Within :data:`synth.topology.MAX_LINKS` (``4 * spines * leaves`` links), checked before building.
    """
    if any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) for x in (spines, leaves, hosts)):
        raise TopologyError("spine-leaf spines, leaves and hosts must be integers")
    spines, leaves, hosts = int(spines), int(leaves), int(hosts)
    if spines < 1 or leaves < 2 or hosts < 1:
        raise TopologyError("spine-leaf needs at least 1 spine, 2 leaves and 1 host per leaf")
    if hosts != spines:
        raise TopologyError(f"spine-leaf with {hosts} hosts per leaf and {spines} spines: the symmetry "
                            "h_(i,j) -> h_(i+a,j+b), S_i -> S_(i+a) needs hosts per leaf = spines")
    q, l = spines, leaves
    check_size(f"spine-leaf {q},{l},{hosts}", q * l + l + q, 4 * q * l)
    n_hosts = q * l
    host = np.arange(n_hosts)
    leaf_of = n_hosts + host // q
    leaf = n_hosts + np.repeat(np.arange(l), q)
    spine = n_hosts + l + np.tile(np.arange(q), l)
    src = np.concatenate([host, leaf_of, leaf, spine])
    dst = np.concatenate([leaf_of, host, spine, leaf])
    return SpineLeaf(f"spine-leaf {q},{l},{q}", {"kind": "spine-leaf", "spines": q, "leaves": l, "hosts": q},
                     n_hosts + l + q, src, dst, host, q, l)


@dataclass(frozen=True, eq=False)
class SpineLeaf(Topology):
    """A spine-leaf network; see the module docstring for the numbering."""

    spines: int = 0
    leaves: int = 0

    @property
    def diameter(self) -> int:
        """Hops between hosts on different leaves (host, leaf, spine, leaf, host)."""
        return 4

    @property
    def hosts_per_leaf(self) -> int:
        return self.spines

    def host(self, i, j) -> np.ndarray:
        return np.asarray(j) * self.spines + np.asarray(i)

    def leaf(self, j) -> np.ndarray:
        return self.spines * self.leaves + np.asarray(j)

    def spine(self, i) -> np.ndarray:
        return self.spines * self.leaves + self.leaves + np.asarray(i)


def spine_leaf_group(s: SpineLeaf) -> Group:
    """The host-index and leaf shifts (order ``q*l``)."""
    q, l = s.spines, s.leaves
    i, j = np.arange(q * l) % q, np.arange(q * l) // q
    shift_i = np.concatenate([s.host((i + 1) % q, j), s.leaf(np.arange(l)), s.spine((np.arange(q) + 1) % q)])
    shift_j = np.concatenate([s.host(i, (j + 1) % l), s.leaf((np.arange(l) + 1) % l), s.spine(np.arange(q))])
    return Group.from_generators(s, np.stack([shift_i, shift_j]), f"host-leaf shifts({s.name})",
                                 {"kind": "spine-leaf-shifts"})


def spine_leaf_star(s: SpineLeaf) -> BaseSchedule:
    """The shortest-path star rooted at ``h_{0,0}`` (see the module docstring)."""
    q, l = s.spines, s.leaves
    root = 0
    rows = []
    for j in range(l):
        for i in range(q):
            h = int(s.host(i, j))
            if h == root:
                continue
            path = [h, int(s.leaf(j)), root] if j == 0 else [h, int(s.leaf(j)), int(s.spine(i)), int(s.leaf(0)), root]
            up = s.link_ids(path[:-1], path[1:])
            down = s.link_ids(path[::-1][:-1], path[::-1][1:])
            rows.append((0, 1, h, root, REDUCE, up))
            rows.append((0, 2, root, h, COPY, down))
    rows.sort(key=lambda r: (r[1], r[2], r[3]))
    return BaseSchedule.from_rows(s, 2, rows, (1,), ("shortest-path star, root h(0,0), depth 1",))
