"""Two-tier spine-leaf (Clos) networks: hosts compute, switches only forward.

``q`` spines, ``l`` leaves, ``q`` hosts per leaf; every leaf is joined to every
spine.  Numbering: host ``h_{i,j}`` (host ``i`` of leaf ``j``) is vertex
``j*q + i``; leaf ``L_j`` is ``q*l + j``; spine ``S_i`` is ``q*l + l + i``.
Links, in this order: host uplinks ``h_{i,j} -> L_j`` (by host id), host
downlinks ``L_j -> h_{i,j}``, then ``L_j -> S_i`` and ``S_i -> L_j`` (``j`` major).

Its symmetry group is in :mod:`synth.symmetry.spineleaf`, its base schedule (the
shortest-path star) in :mod:`synth.schedule.spineleaf`.

Examples
--------
>>> s = spine_leaf(2, 3, 2)
>>> s.n_vertices, s.n_compute, s.n_links
(11, 6, 24)
>>> int(s.leaf(1)), int(s.spine(0))
(7, 9)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from synth.errors import TopologyError, check_instance
from synth.topology.base import Topology, check_size, is_int

__all__ = ["SpineLeaf", "spine_leaf", "parse_spine_leaf", "spine_leaf_from_spec", "spine_leaf_spec_size"]


def parse_spine_leaf(text: str) -> "SpineLeaf":
    """Parse ``'spines,leaves,hosts_per_leaf'``, e.g. ``'16,32,16'``."""
    check_instance(text, "text", str, " (e.g. '4,8,4')")
    m = re.match(r"^\s*(\d{1,9})\s*,\s*(\d{1,9})\s*,\s*(\d{1,9})\s*$", str(text))
    if not m:
        raise TopologyError(f"spine-leaf {str(text)[:40]!r} is not of the form SPINES,LEAVES,HOSTS (e.g. 16,32,16), "
                            "each at most 9 digits")
    return spine_leaf(*(int(x) for x in m.groups()))


def spine_leaf_from_spec(spec) -> "SpineLeaf":
    """A ``spine-leaf`` spec (integer ``spines``, ``leaves`` and ``hosts``)."""
    vals = [spec.get(k) for k in ("spines", "leaves", "hosts")]
    if not all(is_int(v) for v in vals):
        raise TopologyError("a spine-leaf spec needs integer 'spines', 'leaves' and 'hosts'")
    return spine_leaf(*vals)


def spine_leaf_spec_size(spec):
    """``(V, E, hosts)`` of a ``spine-leaf`` spec without building it; None if malformed.

    >>> spine_leaf_spec_size({"kind": "spine-leaf", "spines": 2, "leaves": 3, "hosts": 2})
    (11, 24, 6)
    """
    q, l, h = (spec.get(k) for k in ("spines", "leaves", "hosts"))
    if not all(is_int(x) and x >= 0 for x in (q, l, h)):
        return None
    return q * l + l + q, 4 * q * l, h * l


def spine_leaf(spines: int, leaves: int, hosts: int) -> "SpineLeaf":
    """The spine-leaf network; ``hosts`` per leaf must equal ``spines`` (the paper's symmetric case).

    Within :data:`synth.topology.base.MAX_LINKS` (``4 * spines * leaves`` links), checked before building.
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
