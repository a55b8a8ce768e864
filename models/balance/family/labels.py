"""Labels as rounds: k-hop trees scheduled by vertex labels instead of depths.

A tree of depth at most ``K`` is scheduled by *labels* ``l(v)`` in ``1..K`` (root
``0``) with ``l(parent) < l(v)``: ``v`` reduces into its parent in round
``K - l(v) + 1`` and receives the result in round ``K + l(v)`` (``2K`` rounds; with
``l`` the depth this is :func:`synth.schedule.tree_schedule`).  A leaf's label is
free above its parent's, so leaves can be moved between rounds to even out the
orbits.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("3")
>>> trees, K = compress_labels([(np.array([-1, 0, 0]), np.array([0, 1, 3]))])
>>> K, trees[0][1].tolist()
(2, [0, 1, 2])
"""

from __future__ import annotations

import numpy as np

from synth.errors import SynthError
from synth.schedule import COPY, REDUCE, BaseSchedule

__all__ = ["labelled_tree_schedule", "compact_rounds", "compress_labels", "mirror_tree"]


def labelled_tree_schedule(t, parent, labels, depth: int, label: str = "") -> BaseSchedule:
    """A tree scheduled by labels: ``v`` reduces in round ``K - l(v) + 1``, receives in ``K + l(v)``.

    Parameters
    ----------
    t : Torus
    parent : array_like
        ``-1`` at the root 0, a vertex elsewhere.
    labels : array_like
        ``0`` at the root, ``l(parent[v]) < l(v) <= depth`` elsewhere.
    depth : int
        ``K``; the schedule has ``2K`` rounds (edges on the dimension-order route ``t.route``).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("3")
    >>> b = labelled_tree_schedule(t, [-1, 0, 0], [0, 1, 2], 2)
    >>> b.n_rounds, b.round.tolist(), b.src.tolist(), b.op.tolist()
    (4, [1, 2, 3, 4], [2, 1, 0, 0], [0, 0, 1, 1])
    """
    parent = np.asarray(parent, dtype=np.int64)
    labels = np.asarray(labels, dtype=np.int64)
    kids = np.flatnonzero(parent >= 0)
    if labels[0] != 0 or np.any(labels[kids] <= labels[parent[kids]]) or np.any(labels[kids] > depth):
        raise SynthError("labels must grow from the root (0) to every child and stay within the depth")
    rows = []
    for v in kids.tolist():
        u, h = int(parent[v]), int(labels[v])
        rows.append((0, depth - h + 1, v, u, REDUCE, t.route(v, u)))
        rows.append((0, depth + h, u, v, COPY, t.route(u, v)))
    rows.sort(key=lambda r: (r[1], r[2], r[3]))
    return BaseSchedule.from_rows(t, 2 * depth, rows, (1,), (label or f"labelled tree, depth {depth}",))


def compress_labels(units_trees):
    """Drop label values no vertex uses (keeping the order), so that the depth is as small as possible.

    ``units_trees`` is ``[(parent, labels), ...]``; returns the relabelled list and the depth.
    """
    used = np.unique(np.concatenate([lab for _, lab in units_trees]))
    remap = np.zeros(int(used.max()) + 1, dtype=np.int64)
    remap[used] = np.arange(used.size)
    return [(p, remap[lab]) for p, lab in units_trees], int(used.size - 1)


def compact_rounds(base) -> BaseSchedule:
    """Drop the label levels no component uses from a labelled-tree schedule (``2K`` -> ``2K'`` rounds).

    Rounds ``s`` and ``2K + 1 - s`` hold label ``K - s + 1``; a level with neither is removed.
    A weighted family may use fewer levels than its candidates together.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> b = labelled_tree_schedule(parse_torus("3"), [-1, 0, 0], [0, 1, 3], 3)
    >>> compact_rounds(b).round.tolist()
    [1, 2, 3, 4]
    """
    S = base.n_rounds
    K = S // 2
    used = np.zeros(K + 1, dtype=bool)
    r = base.round.astype(np.int64)
    lab = np.where(r <= K, K - r + 1, r - K)
    used[lab] = True
    if used[1:].all():
        return base
    keep = np.flatnonzero(used[1:]) + 1
    remap = np.zeros(K + 1, dtype=np.int64)
    remap[keep] = np.arange(1, keep.size + 1)
    K2 = int(keep.size)
    nl = remap[lab]
    rnd = np.where(r <= K, K2 - nl + 1, K2 + nl)
    return BaseSchedule(base.topology, 2 * K2, base.component, rnd, base.src, base.dst, base.op, base.route_ptr,
                        base.route_links, base.weights, base.labels)


def mirror_tree(t, parent, labels, neg):
    """The image of a labelled tree under the negation ``v -> -v`` (root 0 stays).

    ``neg`` is the negation as a vertex map; ``t`` is the torus it acts on.
    """
    kids = np.flatnonzero(parent >= 0)
    mp = np.full(parent.size, -1, dtype=np.int64)
    mp[neg[kids]] = neg[parent[kids]]
    ml = np.zeros_like(labels)
    ml[neg] = labels
    return mp, ml
