"""From the model's counts to weighted components and a :class:`~synth.schedule.BaseSchedule`.

:func:`split_units` cuts the aggregate counts ``y[p, i, O]`` of ``w[p]`` units
into ``w[p]`` single units (each type's counts summing to its size), as evenly
as possible so that units coincide whenever they can; equal units merge into
one component whose weight is their number, and the weights are divided by
their gcd (balance is homogeneous in the weights).  :func:`build_base` then
assigns concrete BFS parents: within a (level, type) class the vertices are
taken in increasing id order and handed out to orbits in increasing orbit
order, each vertex taking its predecessor over the smallest link of that orbit.

Examples
--------
>>> split_units({0: 3, 1: 5}, 4, 2)
[{0: 1, 1: 1}, {0: 1, 1: 1}, {0: 1, 1: 1}, {1: 2}]
"""

from __future__ import annotations

from math import gcd

import numpy as np

from synth.schedule import COPY, REDUCE, BaseSchedule

__all__ = ["split_units", "components_from_values", "build_base"]


def split_units(counts: dict, units: int, size: int) -> list:
    """Split orbit counts (summing to ``units * size``) into ``units`` dicts each summing to ``size``.

    Every unit gets ``counts[O] // units`` of orbit ``O``; the remainders are dealt
    round-robin, so units differ by at most one vertex per orbit.
    """
    if sum(counts.values()) != units * size:
        raise ValueError("counts do not add up to units * size")
    base = {o: c // units for o, c in counts.items()}
    out = [dict(base) for _ in range(units)]
    j = 0
    for o in sorted(counts):
        for _ in range(counts[o] - base[o] * units):
            out[j % units][o] += 1
            j += 1
    return [{o: c for o, c in u.items() if c} for u in out]


def components_from_values(data, values) -> list:
    """Weighted components ``[(column, spec, weight), ...]`` from a solution's values.

    ``column`` is ``("option", p)`` with ``spec`` a tuple (per type) of sorted ``(orbit, count)``
    tuples, or ``("candidate", c)`` with ``spec = None``.  Weights are reduced by their gcd.
    """
    comps = {}
    order = []
    for p, opt in enumerate(data.options):
        w = values["w"][p,]
        if w == 0:
            continue
        per_type = []
        for i in range(opt.n_types):
            cnt = {o: values["y"][p, i, o] for o in opt.type_orbits[i]}
            per_type.append(split_units(cnt, w, int(opt.type_count[i])))
        for u in range(w):
            key = (("option", p), tuple(tuple(sorted(per_type[i][u].items())) for i in range(opt.n_types)))
            if key not in comps:
                order.append(key)
                comps[key] = 0
            comps[key] += 1
    for c in range(len(data.candidates)):
        k = values["k"].get((c,), 0)
        if k:
            key = (("candidate", c), None)
            order.append(key)
            comps[key] = k
    g = 0
    for key in order:
        g = gcd(g, comps[key])
    return [(key[0], key[1], comps[key] // max(g, 1)) for key in order]


def _parents(opt, spec) -> np.ndarray:
    V = opt.level.size
    parent = np.full(V, -1, dtype=np.int64)
    order = np.argsort(opt.vtype, kind="stable")
    ptr = np.searchsorted(opt.vtype[order], np.arange(opt.n_types + 1))
    for i, items in enumerate(spec):
        verts = order[ptr[i]:ptr[i + 1]]
        a = 0
        for o, c in items:
            chunk = verts[a:a + c]
            parent[chunk] = opt.pred[chunk, o]
            a += c
    return parent


def build_base(topology, data, comps) -> BaseSchedule:
    """The base schedule of weighted components (see :func:`components_from_values`).

    Option components become BFS trees (or forests plus the exchange) with one-hop routes;
    candidate components are copied as they are.
    """
    parts, weights, labels = [], [], []
    for t, (col, spec, weight) in enumerate(comps):
        kind, idx = col
        if kind == "option":
            opt = data.options[idx]
            parent = _parents(opt, spec)
            kids = np.flatnonzero(parent >= 0)
            lv = opt.level[kids]
            up = topology.link_ids(kids, parent[kids]).astype(np.int64)
            down = topology.link_ids(parent[kids], kids).astype(np.int64)
            rnd = np.concatenate([opt.reduce_round(lv), opt.copy_round(lv)])
            src = np.concatenate([kids, parent[kids]])
            dst = np.concatenate([parent[kids], kids])
            op = np.concatenate([np.full(kids.size, REDUCE), np.full(kids.size, COPY)])
            links = np.concatenate([up, down])
            if opt.kind == "forest":
                a, b = opt.roots
                rnd = np.concatenate([rnd, [opt.depth + 1] * 2])
                src = np.concatenate([src, [a, b]])
                dst = np.concatenate([dst, [b, a]])
                op = np.concatenate([op, [REDUCE, REDUCE]])
                links = np.concatenate([links, topology.link_ids([a, b], [b, a]).astype(np.int64)])
            ptr = np.arange(links.size + 1)
            label = opt.label()
        else:
            one = data.candidates[idx].schedule
            rnd, src, dst, op, ptr, links = one.round, one.src, one.dst, one.op, one.route_ptr, one.route_links
            label = one.labels[0]
        order = np.lexsort((dst, src, rnd))
        lengths = np.diff(ptr)[order]
        starts = ptr[:-1][order]
        offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
        new_links = np.asarray(links)[np.repeat(starts, lengths) + np.arange(int(lengths.sum())) - offsets]
        parts.append((np.full(order.size, t), rnd[order], src[order], dst[order], op[order], lengths, new_links))
        weights.append(weight)
        labels.append(label)
    cat = [np.concatenate([p[j] for p in parts]) for j in range(7)]
    ptr = np.concatenate([[0], np.cumsum(cat[5])])
    return BaseSchedule(topology, data.n_rounds, cat[0], cat[1], cat[2], cat[3], cat[4], ptr, cat[6],
                        np.asarray(weights), tuple(labels))
