"""Failed links and chips: a transformation of any topology that keeps a record of what was removed.

A failure set names physical connections (a failed link ``u-v`` removes both directed links
``u->v`` and ``v->u``, or the one that exists on a directed graph) and vertices (a failed chip
neither computes nor forwards: every link at it goes, and it leaves the compute set).  Vertex
ids stay those of the healthy topology, so coordinates, certificates and group elements keep
their meaning; a failed vertex stays as an isolated vertex with no link.

In a topology spec (certificates, explicit files) the failures are the ``failed`` list beside the
healthy topology's keys: a pair ``[u, v]`` is a failed link, an integer ``v`` a failed vertex,
sorted, links first::

    {"kind": "torus", "shape": [8, 8], "failed": [[0, 1], 9]}

:func:`synth.topology.spec.build_topology` rebuilds the healthy topology from the other keys,
then applies the list (:func:`damage`).  A failure set that leaves the compute vertices unable
to reach each other is refused, with one line naming a cut.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("4x4")
>>> f = parse_failures(t, links=["0.0-0.1"], nodes=["2.2"])
>>> f.to_json()
[[0, 1], 10]
>>> d = damage(t, f)
>>> d.n_links, d.n_compute, d.spec["failed"], d.diameter
(54, 15, [[0, 1], 10], 4)
>>> damage(parse_torus("3"), parse_failures(parse_torus("3"), links=["0-1", "1-2"]))
... # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
synth.errors.TopologyError: torus 3 with 2 failed links: the failures disconnect the compute vertices: links
cross from [1] to the rest only over failed links and vertices (the cut: 0-1, 1-2)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from synth.errors import TopologyError
from synth.topology.base import Grid, Topology

__all__ = ["Failures", "Damaged", "damage", "parse_failures", "failures_from_json", "parse_vertex", "healthy_spec",
           "failed_step", "whole_network", "without_nodes"]

_ID = re.compile(r"^\d{1,9}$")
_COORD = re.compile(r"^\d{1,9}(\.\d{1,9})+$")
MAX_FAILURES = 100_000  # a failure list longer than this is a typo or an attack, not a network


def _pairs(links) -> tuple:
    return tuple(sorted({(min(int(u), int(v)), max(int(u), int(v))) for u, v in links}))


@dataclass(frozen=True)
class Failures:
    """Failed connections (``links``: sorted pairs ``(u, v)``, ``u < v``) and failed vertices (sorted ids).

    ``idle``: those of ``links`` that work but that a schedule leaves unused: a schedule for the network with
    more links gone is one for the network itself, and one whose missing links repeat under a lattice of
    translations keeps that symmetry (:mod:`synth.solving.periodic`).  Everything but the bounds sees them as
    gone; the bounds count them as the capacity they are (:func:`whole_network`).
    """

    links: tuple = ()
    nodes: tuple = ()
    idle: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "links", _pairs(self.links))
        object.__setattr__(self, "nodes", tuple(sorted({int(v) for v in self.nodes})))
        object.__setattr__(self, "idle", _pairs(self.idle))
        if not set(self.idle) <= set(self.links):
            raise TopologyError("idle links must be among the links removed")

    def __bool__(self) -> bool:
        return bool(self.links or self.nodes)

    @property
    def failed_links(self) -> tuple:
        """The links that failed (``links`` without the idle ones)."""
        idle = set(self.idle)
        return tuple(e for e in self.links if e not in idle)

    def to_json(self) -> list:
        """The ``failed`` list of a topology spec: pairs first, then vertex ids (idle links apart: ``idle``)."""
        return [[u, v] for u, v in self.failed_links] + list(self.nodes)

    def describe(self) -> str:
        parts, failed = [], len(self.failed_links)
        if failed:
            parts.append(f"{failed} failed link{'s' * (failed > 1)}")
        if self.nodes:
            parts.append(f"{len(self.nodes)} failed node{'s' * (len(self.nodes) > 1)}")
        idle = len(self.idle)
        return " and ".join(parts) + (f" ({idle} link{'s' * (idle > 1)} left idle)" if idle else "")


@dataclass(frozen=True, eq=False)
class Damaged(Topology):
    """A topology with failures applied: the healthy topology and the failures are kept beside it."""

    healthy: Topology = None
    failures: Failures = None

    @cached_property
    def network(self) -> Topology:
        """The network itself: this topology with its idle links back (itself when it leaves none idle)."""
        if not self.failures.idle:
            return self
        return damage(self.healthy, Failures(self.failures.failed_links, self.failures.nodes))

    @cached_property
    def diameter(self) -> int:
        """The largest hop distance between two compute vertices.

        Every compute vertex's BFS at once, as bit sets: ``reach[v]`` holds a bit per source that has reached
        ``v``; one step ORs each vertex's in-neighbours' sets into its own, and the diameter is the number of
        steps until every compute vertex has every source (a few ms on 4,096 chips, where a BFS per source
        took seconds).
        """
        compute = self.compute
        V, n = self.n_vertices, compute.size
        words = (n + 63) // 64
        reach = np.zeros((V, words), dtype=np.uint64)
        bit = np.arange(n)
        reach[compute, bit // 64] = np.left_shift(np.uint64(1), (bit % 64).astype(np.uint64))
        full = np.zeros(words, dtype=np.uint64)
        np.bitwise_or.at(full, bit // 64, reach[compute, bit // 64])
        order = np.argsort(self.link_dst, kind="stable")
        src, dst = self.link_src[order], self.link_dst[order]
        heads = np.flatnonzero(np.r_[True, dst[1:] != dst[:-1]]) if dst.size else np.zeros(0, dtype=np.int64)
        steps = 0
        while not np.array_equal(reach[compute], np.broadcast_to(full, (n, words))):
            new = reach.copy()
            if heads.size:
                new[dst[heads]] |= np.bitwise_or.reduceat(reach[src], heads, axis=0)
            if np.array_equal(new, reach):   # disconnected compute vertices: the farthest reachable ones count
                return max(int(self.bfs([int(v)])[compute].max()) for v in compute)
            reach, steps = new, steps + 1
        return steps


def failed_step(t: Topology, u: int, v: int) -> str | None:
    """Why the step ``u -> v``, not a link of ``t``, is one of its failures (a failed link, or a link at a
    failed chip of the healthy topology), or None when it is no link of the healthy topology either.

    A route over a failure is a false schedule, not a malformed file: the checker calls it INVALID.

    >>> from synth.topology.torus import parse_torus
    >>> d = damage(parse_torus("4x4"), parse_failures(parse_torus("4x4"), links=["0-1"], nodes=["5"]))
    >>> failed_step(d, 1, 0), failed_step(d, 4, 5), failed_step(d, 0, 5)
    ('the failed link 0-1', 'the failed node 5', None)
    """
    if not isinstance(t, Damaged):
        return None
    h = t.healthy
    if not (0 <= u < h.n_vertices and 0 <= v < h.n_vertices) or h.link_ids(np.array([u]), np.array([v]))[0] < 0:
        return None
    dead = [w for w in (u, v) if w in t.failures.nodes]
    if dead:
        return f"the failed node {dead[0]}"
    return f"the {'idle' if (min(u, v), max(u, v)) in t.failures.idle else 'failed'} link {min(u, v)}-{max(u, v)}"


def whole_network(t: Topology) -> Topology:
    """The network whose links a bound counts: ``t`` with the links its schedules leave idle back
    (:attr:`Damaged.network`); ``t`` itself when it leaves none idle.

    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("4x4")
    >>> p = damage(t, Failures(links=[(0, 1), (2, 3)], idle=[(2, 3)]))
    >>> p.name, p.n_links, whole_network(p).n_links, whole_network(t) is t
    ('torus 4x4 with 1 failed link (1 link left idle)', 60, 62, True)
    """
    return t.network if isinstance(t, Damaged) else t


def without_nodes(t: Topology, nodes) -> Topology:
    """``t`` (healthy, or with failed and idle links but no failed chip) with the chips ``nodes`` failed as well:
    the network a schedule runs on once it drops those chips (a certificate's ``dropped``,
    :mod:`synth.check.certificate`); ``t`` itself when ``nodes`` is empty.

    >>> from synth.topology.torus import parse_torus
    >>> p = damage(parse_torus("4x4"), Failures(links=[(0, 1), (2, 3)], idle=[(2, 3)]))
    >>> d = without_nodes(p, [9])
    >>> d.name, d.n_links, d.n_compute, d.spec["failed"], d.spec["idle"]
    ('torus 4x4 with 1 failed link and 1 failed node (1 link left idle)', 52, 15, [[0, 1], 9], [[2, 3]])

    Raises
    ------
    TopologyError
        If ``t`` already has failed chips, or as :func:`damage`.
    """
    nodes = tuple(sorted({int(v) for v in nodes}))
    if not nodes:
        return t
    if not isinstance(t, Damaged):
        return damage(t, Failures((), nodes))
    if t.failures.nodes:
        raise TopologyError(f"{t.name} already has failed chips; name them all at once")
    return damage(t.healthy, Failures(t.failures.links, nodes, t.failures.idle))


def healthy_spec(spec: dict) -> dict:
    """The spec of the healthy topology: ``spec`` without its ``failed`` and ``idle`` lists."""
    return {k: v for k, v in spec.items() if k not in ("failed", "idle")}


def failures_from_json(data, idle=None) -> Failures:
    """Read a ``failed`` list (pairs are links, integers vertices) and an ``idle`` one (pairs), strictly typed."""
    if not isinstance(data, list) or len(data) > MAX_FAILURES:
        raise TopologyError(f"'failed' must be a list of at most {MAX_FAILURES} entries: [u, v] pairs (failed "
                            "links) and vertex ids (failed nodes)")
    links, nodes = [], []
    for item in data:
        if _is_int(item) and item >= 0:
            nodes.append(item)
        elif isinstance(item, list) and len(item) == 2 and all(_is_int(x) and x >= 0 for x in item):
            links.append(tuple(item))
        else:
            raise TopologyError(f"'failed' entry {str(item)[:40]} is neither a vertex id nor a [u, v] pair of ids")
    if idle is not None and (not isinstance(idle, list) or len(idle) > MAX_FAILURES or not all(
            isinstance(item, list) and len(item) == 2 and all(_is_int(x) and x >= 0 for x in item) for item in idle)):
        raise TopologyError(f"'idle' must be a list of at most {MAX_FAILURES} [u, v] pairs (links left unused)")
    idle = _pairs(idle or ())
    both = set(_pairs(links)) & set(idle)
    if both:
        raise TopologyError(f"link {'-'.join(map(str, min(both)))} is both failed and idle")
    return Failures(tuple(links) + idle, tuple(nodes), idle)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def parse_vertex(t: Topology, text: str) -> int:
    """A vertex from its id (``'17'``) or, on a grid topology (torus, HyperX), its coordinates (``'2.1'``)."""
    text = str(text).strip()
    if _ID.match(text):
        v = int(text)
    elif _COORD.match(text) and isinstance(t, Grid):
        coords = [int(x) for x in text.split(".")]
        if len(coords) != t.ndim or any(c >= s for c, s in zip(coords, t.shape)):
            raise TopologyError(f"vertex {text[:40]!r}: {t.name} has coordinates below "
                                f"{'.'.join(str(s) for s in t.shape)}")
        v = int(t.vertex(coords))
    else:
        what = "an id or coordinates such as 0.1" if isinstance(t, Grid) else "a vertex id"
        raise TopologyError(f"cannot read {text[:40]!r} as a vertex of {t.name} ({what})")
    if v >= t.n_vertices:
        raise TopologyError(f"vertex {v} is not a vertex of {t.name} (0..{t.n_vertices - 1})")
    return v


def parse_failures(t: Topology, links=(), nodes=()) -> Failures:
    """Failures from the CLI's spellings: links ``'U-V'`` and nodes ``'V'`` (ids or coordinates)."""
    pairs = []
    for text in links:
        parts = str(text).split("-")
        if len(parts) != 2:
            raise TopologyError(f"cannot read {str(text)[:40]!r} as a link U-V (e.g. 3-4 or 0.1-0.2)")
        pairs.append((parse_vertex(t, parts[0]), parse_vertex(t, parts[1])))
    return Failures(tuple(pairs), tuple(parse_vertex(t, v) for v in nodes))


def damage(t: Topology, failures: Failures) -> Topology:
    """``t`` with ``failures`` applied (module docstring); ``t`` itself when there are none.

    Raises
    ------
    TopologyError
        If a failed link is not a link of ``t``, a failed vertex not a vertex, fewer than two
        compute vertices remain, or the compute vertices no longer reach each other (naming a cut).
    """
    if not failures:
        return t
    if len(failures.links) + len(failures.nodes) > MAX_FAILURES:
        raise TopologyError(f"more than {MAX_FAILURES} failures")
    if isinstance(t, Damaged):
        raise TopologyError(f"{t.name} already has failures; name them all at once")
    V = t.n_vertices
    keep = np.ones(t.n_links, dtype=bool)
    for what, links in (("failed", failures.failed_links), ("idle", failures.idle)):
        if not links:
            continue
        pairs = np.asarray(links, dtype=np.int64)
        if pairs.max() >= V:
            raise TopologyError(f"{what} link {links[int(np.argmax(pairs.max(axis=1) >= V))]} names a "
                                f"vertex outside 0..{V - 1}")
        fwd, bwd = t.link_ids(pairs[:, 0], pairs[:, 1]), t.link_ids(pairs[:, 1], pairs[:, 0])
        missing = (fwd < 0) & (bwd < 0)
        if missing.any():
            u, v = links[int(np.argmax(missing))]
            raise TopologyError(f"{what} link {u}-{v} is not a link of {t.name}")
        keep[fwd[fwd >= 0]] = False
        keep[bwd[bwd >= 0]] = False
    nodes = np.asarray(failures.nodes, dtype=np.int64)
    if nodes.size and nodes.max() >= V:
        raise TopologyError(f"failed node {int(nodes.max())} is not a vertex of {t.name} (0..{V - 1})")
    dead = np.zeros(V, dtype=bool)
    dead[nodes] = True
    keep &= ~dead[t.link_src] & ~dead[t.link_dst]
    compute = t.compute[~dead[t.compute]]
    name = f"{t.name} with {failures.describe()}"
    if compute.size < 2:
        raise TopologyError(f"{name}: fewer than two compute vertices remain")
    spec = {**t.spec, "failed": failures.to_json()}
    if failures.idle:
        spec["idle"] = [list(e) for e in failures.idle]
    d = Damaged(name, spec, V, t.link_src[keep], t.link_dst[keep], compute, healthy=t, failures=failures,
                bandwidth=None if t.bandwidth is None else t.bandwidth[keep],
                latency=None if t.latency is None else t.latency[keep])
    _check_connected(d)
    return d


def _check_connected(d: Damaged) -> None:
    """Refuse a damaged topology whose compute vertices cannot all reach each other, naming a cut."""
    first = int(d.compute[0])
    for reverse in (False, True):
        reach = d.bfs([first], reverse=reverse) >= 0
        if reach[d.compute].all():
            continue
        side = reach if not reverse else ~reach   # links leave `side` only through failures
        h = d.healthy
        cut = side[h.link_src] & ~side[h.link_dst]
        pairs = sorted({(min(a, b), max(a, b)) for a, b in zip(h.link_src[cut].tolist(), h.link_dst[cut].tolist())})
        small = np.flatnonzero(side if side[d.compute].sum() <= (~side)[d.compute].sum() else ~side)
        small = small[d.is_compute[small]]
        shown = small[:8].tolist() + (["..."] if small.size > 8 else [])
        cut_text = ", ".join(f"{a}-{b}" for a, b in pairs[:8]) + (", ..." if len(pairs) > 8 else "")
        raise TopologyError(f"{d.name}: the failures disconnect the compute vertices: links cross from "
                            f"{shown} to the rest only over failed links and vertices (the cut: "
                            f"{cut_text})".replace("'...'", "..."))
