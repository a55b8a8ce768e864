"""What a picture shows, computed without matplotlib: the trees, the loads of every round and the timeline.

A :class:`Scene` is read from a certificate or an explicit file through the checker's own readers
(:func:`synth.check.claims.file_kind`, :func:`synth.check.certificate.read_certificate`,
:func:`synth.check.explicit.read_explicit`).  At a message size of ``size`` bytes per node:

* the **trees**: a certificate's base schedule, one tree per component (its transmissions for one
  chunk); an explicit file's chunk 0.  A tree's edges are the links of its ``reduce`` transmissions
  (child to parent); a component without any (an allgather) shows its ``copy`` transmissions
  reversed, so every arrow points to the parent.  Its roots receive and never send, or exchange
  (reduce into each other: the forest plus exchange of docs/spec.md §4);
* the **loads**: bytes on every link in every round, as the checker measures them
  (:func:`synth.check.metrics.link_loads_symmetric` for a certificate: per link orbit;
  :func:`synth.check.metrics.link_loads_explicit` for an explicit file, whose own chunk sizes serve
  as weights, as in :func:`synth.runtime.plan.load_schedule`);
* the **timeline**: the modeled time of every round, split into ``alpha``, ``lam h_s`` and
  ``beta max_e load_s(e)`` (:func:`synth.analysis.cost.round_times`).

Examples
--------
>>> import tempfile, os
>>> from synth.topology.torus import parse_torus
>>> from synth.symmetry.torus import torus_gamma
>>> from synth.schedule.sp import sp_allreduce
>>> from synth.check.claims import certify
>>> from synth.check.certificate import write_certificate
>>> t = parse_torus("4x4")
>>> path = os.path.join(tempfile.mkdtemp(), "sp.json")
>>> write_certificate(certify(sp_allreduce(t), torus_gamma(t)), path)
>>> s = scene(path, 1 << 20)
>>> s.kind, s.loads.shape, len(s.trees), s.trees[0].roots.tolist()
('certificate', (8, 64), 1, [0])
>>> s.trees[0].links.size  # a spanning tree of 16 vertices
15
>>> int(s.loads[0].min()) == int(s.loads[0].max())  # Gamma balances every round: Omega = 1
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.analysis.cost import Network, round_times
from synth.check.certificate import read_certificate
from synth.check.claims import file_kind
from synth.check.explicit import read_explicit
from synth.check.metrics import link_loads_explicit, link_loads_symmetric, measure_explicit, measure_symmetric
from synth.errors import OptionError
from synth.schedule import ALLREDUCE, COPY, REDUCE, block_chunk_elements, chunk_elements
from synth.schedule.lift import lift, lifted_chunk_elements
from synth.schedule.weights import keep_chunks

__all__ = ["Tree", "Scene", "scene", "shown_rounds", "MAX_DRAWN_VERTICES", "MAX_DRAWN_LINKS", "MAX_TREES",
           "MAX_PANELS"]

MAX_DRAWN_VERTICES = 4096  # a 64x64 torus, a 16x16x16 torus, a 64x64 HyperX... beyond, a picture shows nothing
MAX_DRAWN_LINKS = 1 << 16  # a 32x32 HyperX has 63,488
MAX_TREES = 4  # tree panels at most (a balanced family may have many components)
MAX_PANELS = 16  # heat panels at most; more rounds are sampled evenly


@dataclass(frozen=True, eq=False)
class Tree:
    """One tree: ``links`` (one per hop, each pointing towards the parent), its ``roots`` and a label."""

    links: np.ndarray
    roots: np.ndarray
    label: str


@dataclass(frozen=True, eq=False)
class Scene:
    """Everything a picture shows (module docstring): ``loads[i]`` the bytes on every link in round
    ``rounds[i]`` (``picked``: the one round asked for), ``times`` ``3 x S`` seconds."""

    topology: object
    kind: str
    label: str
    trees: tuple
    rounds: tuple
    loads: np.ndarray
    times: np.ndarray
    size: int
    n_trees: int
    picked: bool = False


def shown_rounds(n_rounds: int, round_=None) -> tuple:
    """The rounds that get a heat panel: ``round_`` alone, every round, or :data:`MAX_PANELS` spread evenly.

    >>> shown_rounds(8), shown_rounds(128)[:3], len(shown_rounds(128)), shown_rounds(8, 5)
    ((1, 2, 3, 4, 5, 6, 7, 8), (1, 9, 18), 16, (5,))
    """
    if round_ is not None:
        if isinstance(round_, bool) or not isinstance(round_, int) or not 1 <= round_ <= n_rounds:
            raise OptionError(f"round_ must be a round of the schedule, 1 to {n_rounds}, not {round_}")
        return (round_,)
    if n_rounds <= MAX_PANELS:
        return tuple(range(1, n_rounds + 1))
    return tuple(int(s) for s in np.unique(np.round(np.linspace(1, n_rounds, MAX_PANELS)).astype(int)))


def _tree(topology, links_per_hop, ops, label) -> Tree:
    """A tree from transmissions (rows of ``links_per_hop``: link ids of one route, ``-1`` padded)."""
    reduce = ops == REDUCE
    rows = links_per_hop[reduce] if reduce.any() else links_per_hop[ops == COPY]
    valid = rows >= 0
    src = topology.link_src[rows[:, 0]].astype(np.int64)
    dst = topology.link_dst[rows[np.arange(rows.shape[0]), valid.sum(axis=1) - 1]].astype(np.int64)
    links = rows[valid]
    if not reduce.any():  # only copies (an allgather): the same tree, reversed
        src, dst = dst, src
        links = topology.link_ids(topology.link_dst[links], topology.link_src[links])
        links = links[links >= 0]
    # roots: who receives and never sends, and the two ends of an exchange (each reduces into the other)
    V = topology.n_vertices
    mutual = np.isin(dst * V + src, src * V + dst)
    roots = np.union1d(np.setdiff1d(dst, src), src[mutual])
    return Tree(links.astype(np.int64), roots.astype(np.int64), label)


def _padded(routes) -> np.ndarray:
    width = max((r.size for r in routes), default=1)
    out = np.full((len(routes), width), -1, dtype=np.int64)
    for i, r in enumerate(routes):
        out[i, :r.size] = r
    return out


def _check_size(topology) -> None:
    if topology.n_vertices > MAX_DRAWN_VERTICES or topology.n_links > MAX_DRAWN_LINKS:
        raise OptionError(f"draw: {topology.name} has {topology.n_vertices} vertices and {topology.n_links} links; "
                          f"pictures show at most {MAX_DRAWN_VERTICES} vertices and {MAX_DRAWN_LINKS} links")


def _certificate(path, n_elements, round_):
    cert = read_certificate(path)
    base, t, dropped = cert.base, cert.network, cert.dropped
    _check_size(t)
    sizes = lifted_chunk_elements(base, cert.group, n_elements)
    # each component as lifted by the identity: on the network without the dropped chips, their sends left out
    dead = np.isin(base.src, dropped) | np.isin(base.dst, dropped)
    onto = t.link_ids(cert.topology.link_src, cert.topology.link_dst) if dropped else np.arange(t.n_links)
    trees = []
    for c in range(min(base.n_components, MAX_TREES)):
        idx = np.flatnonzero((base.component == c) & ~dead)
        routes = _padded([onto[base.route(i)] for i in idx])
        trees.append(_tree(t, routes, base.op[idx], base.labels[c]))
    label = str(cert.provenance.get("algorithm") or "certificate")
    rounds = shown_rounds(base.n_rounds, round_)
    if sizes.min() < 1:   # a size too small for some chunk of unequal weights: loads of the chunks that move
        part, kept = keep_chunks(lift(base, cert.group, dropped), sizes)
        return (t, label, tuple(trees), base.n_components, rounds, link_loads_explicit(part, kept, rounds),
                measure_explicit(part, kept))
    loads = link_loads_symmetric(base, cert.group, sizes, rounds, dropped)
    return (t, label, tuple(trees), base.n_components, rounds, loads, measure_symmetric(base, cert.group, sizes,
                                                                                        dropped))


def _explicit(path, n_elements, round_):
    schedule, own, _ = read_explicit(path)
    t = schedule.topology
    _check_size(t)
    if schedule.owner is None:
        sizes = chunk_elements(own, n_elements)
    else:
        sizes = block_chunk_elements(schedule.owner, own, t.compute, n_elements)
    routes, ops = [], []
    for b in schedule.blocks:
        sel = b.chunk == 0
        routes.extend(b.links[sel])
        ops.extend([b.op] * int(sel.sum()))
    tree = _tree(t, _padded(routes), np.asarray(ops, dtype=np.int8), "chunk 0")
    label = f"explicit {schedule.collective}" if schedule.collective != ALLREDUCE else "explicit schedule"
    rounds = shown_rounds(schedule.n_rounds, round_)
    schedule, sizes = keep_chunks(schedule, sizes)   # chunks without elements at this size move nothing
    return t, label, (tree,), 1, rounds, link_loads_explicit(schedule, sizes, rounds), measure_explicit(schedule, sizes)


def scene(path, size: int = 1 << 20, net: Network = Network(), round_=None) -> Scene:
    """Read ``path`` (a certificate or an explicit file) and compute what its picture shows at ``size`` bytes per
    node: the loads of round ``round_``, or of :func:`shown_rounds`.

    Raises
    ------
    OptionError
        If the topology is beyond :data:`MAX_DRAWN_VERTICES` or :data:`MAX_DRAWN_LINKS`, ``size``
        is below one element, or ``round_`` is not a round of the schedule.
    FileFormatError, ScheduleError
        From the readers, for a file they refuse, or a size too small for every chunk to get an element.
    """
    n_elements = int(size) // net.element_bytes
    if n_elements < 1:
        raise OptionError(f"size must be at least one element ({net.element_bytes} bytes), got {size}")
    kind = file_kind(path)
    read = _explicit if kind == "explicit" else _certificate
    t, label, trees, n_trees, rounds, loads, metrics = read(path, n_elements, round_)
    return Scene(t, kind, label, trees, rounds, loads * net.element_bytes, round_times(metrics, net), int(size),
                 n_trees, round_ is not None)
