"""The bound of the layered class, re-derived from a stored dual: how far a schedule is from the best of its kind.

The *layered class* (docs/bounds.md section 5) holds every allreduce whose chunks are reduced to an
owner ``r`` and broadcast back along one shortest-path tree, layered by distance: a compute vertex at
distance ``d`` from ``r`` sends its partial sum to its parent ``u`` (one hop closer) in round
``H - d + 1`` and receives the result from the same ``u`` in round ``H + d`` (``H`` the largest
eccentricity of a compute vertex).  Any shares, any trees, with or without a group.

A dual ``pi[s, e] >= 0`` with ``sum_e pi[s, e] <= 1`` in every round proves, by weak duality, that every
schedule of the class has a bandwidth term of at least ``N * min_r c_r(pi)``, where
``c_r(pi) = sum_{v != r} min_u (pi[H - d_r(v) + 1, v->u] + pi[H + d_r(v), u->v])`` is the cheapest
layered tree of owner ``r``.  :func:`class_value` evaluates it (vectorized: one BFS per owner); the
certificate's claim :data:`CLASS_KEY` stores the dual (:func:`dual_to_json`), the value and the
schedule's fraction of it, and :func:`check_class_claim` re-derives all three, after checking that the
schedule *is* layered (:func:`layered_violation`): the bound says nothing about any other schedule.

Examples
--------
A uniform dual gives the volume bound (every owner's tree has ``2 (p - 1)`` transmissions):

>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("4x4")
>>> D = layered_distances(t)
>>> pi = np.full((2 * D.H, t.n_links), 1.0 / t.n_links)
>>> round(class_value(t, pi, D), 9), round(2 * 15 / 64, 9)
(0.46875, 0.46875)
>>> dual_from_json(t, D, dual_to_json(pi)).shape
(8, 64)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from synth.errors import ScheduleError
from synth.schedule.data import COPY, REDUCE

__all__ = ["CLASS_KEY", "CLASS_NAME", "ROUND_TOL", "VALUE_TOL", "LayeredDistances", "layered_distances",
           "reverse_links", "owner_costs", "cheapest_trees", "class_value", "dual_to_json", "dual_from_json",
           "layered_violation", "class_claim", "check_class_claim", "base_transmissions", "explicit_transmissions"]

CLASS_KEY = "class_bound"
CLASS_NAME = "layered shortest-path trees, 2H rounds"
ROUND_TOL = 1e-9      # a round's dual may sum to 1 + ROUND_TOL (the value is divided by the largest sum anyway)
VALUE_TOL = 1e-9      # relative: a claimed value or fraction must be the re-derived one within this
_BLOCK = 1 << 22      # (owners x links) entries evaluated at once


@dataclass(frozen=True, eq=False)
class LayeredDistances:
    """``dist[i, v]``: hops from compute vertex ``compute[i]`` to ``v`` (-1: unreachable); ``H`` the largest."""

    compute: np.ndarray
    dist: np.ndarray
    H: int
    rev: np.ndarray       # the reverse of each link


def reverse_links(t, who: str = "the layered class") -> np.ndarray:
    """The reverse of every link, refusing a graph outside the class (switches, one-way links) for ``who``."""
    linked = np.zeros(t.n_vertices, dtype=bool)
    linked[t.link_src] = True
    if np.any(linked & ~t.is_compute):
        raise ScheduleError(f"{who} needs every linked vertex to compute; {t.name} has switches")
    rev = t.link_ids(t.link_dst, t.link_src)
    if np.any(rev < 0):
        raise ScheduleError(f"{who} needs every link's reverse; {t.name} has one-way links")
    return rev


def layered_distances(t) -> LayeredDistances:
    """One BFS per compute vertex; refuses graphs outside the class (:func:`reverse_links`)."""
    rev = reverse_links(t)
    comp = t.compute.astype(np.int64)
    dist = np.stack([t.bfs([int(r)]) for r in comp.tolist()]).astype(np.int64)
    if np.any(dist[:, comp] < 0):
        raise ScheduleError(f"the compute vertices of {t.name} do not reach each other")
    return LayeredDistances(comp, dist, int(dist[:, comp].max()), rev.astype(np.int64))


def _out_slots(t) -> np.ndarray:
    """``slot[v, k]``: the ``k``-th out-link of vertex ``v`` (-1 past its degree)."""
    src = t.link_src.astype(np.int64)
    order = np.argsort(src, kind="stable")
    deg = np.bincount(src, minlength=t.n_vertices)
    slot = np.full((t.n_vertices, max(int(deg.max(initial=0)), 1)), -1, dtype=np.int64)
    first = np.r_[0, np.cumsum(deg)[:-1]]
    slot[src[order], np.arange(order.size) - first[src[order]]] = order
    return slot


def cheapest_trees(t, pi, D: LayeredDistances, owners=None) -> tuple:
    """``(c_r(pi), up[r, v])`` for the compute vertices ``owners`` (indices into ``D.compute``; all by default).

    ``up[i, v]`` is the link ``v -> u`` to the cheapest parent of ``v`` in owner ``i``'s tree under ``pi``
    (-1 at the owner and at vertices that do not compute): the owner's cheapest layered tree.
    """
    E, H = t.n_links, D.H
    owners = np.arange(D.compute.size) if owners is None else np.asarray(owners, dtype=np.int64)
    slot = _out_slots(t)
    has = slot >= 0
    links = np.where(has, slot, 0)
    ends = t.link_dst[links]
    flat = np.ascontiguousarray(pi, dtype=np.float64).ravel()
    costs = np.empty(owners.size)
    up = np.full((owners.size, t.n_vertices), -1, dtype=np.int64)
    step = max(1, _BLOCK // max(slot.size, 1))
    for lo in range(0, owners.size, step):
        dist = D.dist[owners[lo:lo + step]]                      # (owners, V)
        dv = dist[:, :, None]
        arc = has[None] & (dist[:, ends] >= 0) & (dist[:, ends] == dv - 1)
        upi = np.clip(H - dv, 0, 2 * H - 1) * E + links[None]     # round H - d + 1 (0-based H - d), link v -> u
        downi = np.clip(H + dv - 1, 0, 2 * H - 1) * E + D.rev[links][None]
        cost = np.where(arc, flat[upi] + flat[downi], np.inf)
        k = np.argmin(cost, axis=2)                               # the first cheapest parent
        best = np.take_along_axis(cost, k[:, :, None], axis=2)[:, :, 0]
        keep = t.is_compute[None, :] & (dist > 0)
        if np.any(keep & ~np.isfinite(best)):
            raise ScheduleError("a compute vertex has no shortest-path parent")
        costs[lo:lo + step] = np.where(keep, best, 0.0).sum(axis=1)
        up[lo:lo + step] = np.where(keep, links[np.arange(t.n_vertices)[None, :], k], -1)
    return costs, up


def owner_costs(t, pi, D: LayeredDistances) -> np.ndarray:
    """``c_r(pi)`` for every compute vertex ``r`` (in ``D.compute`` order): its cheapest layered tree."""
    return cheapest_trees(t, pi, D)[0]


def class_value(t, pi, D: LayeredDistances) -> float:
    """``min_r c_r(pi) / max(1, largest round sum)``: a lower bound per element on every layered schedule."""
    pi = np.ascontiguousarray(pi, dtype=np.float64)   # one memory order: the same sums wherever pi came from
    return float(owner_costs(t, pi, D).min()) / max(1.0, float(pi.sum(axis=1).max()))


def dual_to_json(pi) -> dict:
    """The nonzero entries of ``pi`` as parallel lists (rounds 1-based, sorted by round then link)."""
    pi = np.asarray(pi, dtype=np.float64)
    s, e = np.nonzero(pi)
    return {"rounds": int(pi.shape[0]), "round": (s + 1).tolist(), "link": e.tolist(),
            "value": [float(x) for x in pi[s, e].tolist()]}


def dual_from_json(t, D: LayeredDistances, obj) -> np.ndarray:
    """The dual ``pi`` (``2H x |E|``) a certificate stores, refusing anything malformed.

    Raises
    ------
    ScheduleError
        If the lists are not of equal length, an id is out of range or repeated, a value is negative
        or not finite, or a round's values sum to more than ``1 + ROUND_TOL``.
    """
    R, E = 2 * D.H, t.n_links
    if not isinstance(obj, dict) or obj.get("rounds") != R:
        raise ScheduleError(f"the class bound's dual must be an object with 'rounds' = 2H = {R}")
    cols = [obj.get(k) for k in ("round", "link", "value")]
    if not all(isinstance(c, list) for c in cols) or len({len(c) for c in cols}) != 1 or len(cols[0]) > R * E:
        raise ScheduleError("the class bound's dual needs lists 'round', 'link', 'value' of one length")
    ints = cols[0] + cols[1]
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in ints) or \
            not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in cols[2]):
        raise ScheduleError("the class bound's dual: rounds and links must be integers, values numbers")
    s, e = np.asarray(cols[0], dtype=np.int64), np.asarray(cols[1], dtype=np.int64)
    v = np.asarray(cols[2], dtype=np.float64)
    if s.size and (s.min() < 1 or s.max() > R or e.min() < 0 or e.max() >= E):
        raise ScheduleError(f"the class bound's dual: rounds in 1..{R} and links in 0..{E - 1}")
    if np.unique((s - 1) * E + e).size != s.size:
        raise ScheduleError("the class bound's dual repeats a (round, link)")
    if not np.all(np.isfinite(v)) or np.any(v < 0):
        raise ScheduleError("the class bound's dual must be finite and nonnegative")
    pi = np.zeros((R, E))
    pi[s - 1, e] = v
    sums = pi.sum(axis=1)
    if np.any(sums > 1 + ROUND_TOL):
        worst = int(np.argmax(sums))
        raise ScheduleError(f"the class bound's dual sums to {sums[worst]:.12g} > 1 in round {worst + 1}")
    return pi


def base_transmissions(base) -> tuple:
    """``(chunk, round, src, dst, op, hops)`` of a base schedule (component = chunk: lifting keeps the class)."""
    return base.component, base.round, base.src, base.dst, base.op, base.route_lengths


def explicit_transmissions(schedule) -> tuple:
    """``(chunk, round, src, dst, op, hops)`` of an explicit schedule."""
    t, blocks = schedule.topology, schedule.blocks
    if not blocks:
        return tuple(np.zeros(0, dtype=np.int64) for _ in range(6))
    cat = np.concatenate
    return (cat([b.chunk for b in blocks]), cat([np.full(len(b), b.round) for b in blocks]),
            cat([t.link_src[b.links[:, 0]] for b in blocks]), cat([t.link_dst[b.links[:, -1]] for b in blocks]),
            cat([np.full(len(b), b.op) for b in blocks]), cat([np.full(len(b), b.links.shape[1]) for b in blocks]))


def layered_violation(t, D: LayeredDistances, tx, n_chunks: int):
    """Why the transmissions ``tx`` (:func:`base_transmissions`) are not a layered schedule, or None.

    Each chunk must be one tree: its root (the compute vertex sending no reduce) and, for every other
    compute vertex ``v`` at distance ``d``, exactly one one-hop reduce ``v -> u`` in round ``H - d + 1``
    with ``u`` one hop closer and one copy ``u -> v`` from the same ``u`` in round ``H + d``.
    """
    chunk, rnd, src, dst, op, hops = (np.asarray(a, dtype=np.int64) for a in tx)
    p, H = D.compute.size, D.H
    if np.any(hops != 1):
        return "a transmission routes over several hops"
    if not np.all((op == REDUCE) | (op == COPY)):
        return "an operation is neither reduce nor copy"
    red, cop = op == REDUCE, op == COPY
    if np.any(np.bincount(chunk[red], minlength=n_chunks) != p - 1) or \
            np.any(np.bincount(chunk[cop], minlength=n_chunks) != p - 1):
        return f"a chunk does not have {p - 1} reduces and {p - 1} copies"
    index = np.full(t.n_vertices, -1, dtype=np.int64)
    index[D.compute] = np.arange(p)
    if np.any(index[src] < 0) or np.any(index[dst] < 0):
        return "a transmission starts or ends outside the compute vertices"
    key_r = chunk[red] * t.n_vertices + src[red]
    if np.unique(key_r).size != key_r.size:
        return "a vertex sends a chunk's reduce twice"
    root = int(D.compute.sum()) * np.ones(n_chunks, dtype=np.int64) - np.bincount(chunk[red], weights=src[red],
                                                                                  minlength=n_chunks).astype(np.int64)
    ri = index[np.clip(root, 0, t.n_vertices - 1)]
    if np.any((root < 0) | (root >= t.n_vertices)) or np.any(ri < 0):
        return "a chunk has no single root"
    ri = ri[chunk]
    d_src, d_dst = D.dist[ri, src], D.dist[ri, dst]
    ok_red = (d_dst == d_src - 1) & (rnd == H - d_src + 1)
    ok_cop = (d_src == d_dst - 1) & (rnd == H + d_dst)
    if np.any(red & ~ok_red):
        return "a reduce does not go one hop closer to its chunk's root in round H - d + 1"
    if np.any(cop & ~ok_cop):
        return "a copy does not go one hop away from its chunk's root in round H + d"
    r_order = np.lexsort((src[red], chunk[red]))
    c_order = np.lexsort((dst[cop], chunk[cop]))
    if not (np.array_equal(chunk[red][r_order], chunk[cop][c_order])
            and np.array_equal(src[red][r_order], dst[cop][c_order])
            and np.array_equal(dst[red][r_order], src[cop][c_order])):
        return "a vertex does not receive its chunk's result from the parent it reduced to"
    return None


def class_claim(t, pi, D: LayeredDistances, elements: int, bandwidth_term) -> dict:
    """The claim :data:`CLASS_KEY`: the class, the bound for ``elements`` per node, the fraction, the dual."""
    value = elements * class_value(t, pi, D)
    return {"class": CLASS_NAME, "value": value, "fraction": value / float(bandwidth_term),
            "dual": dual_to_json(pi)}


def _close(a, b) -> bool:
    return isinstance(a, (int, float)) and not isinstance(a, bool) and math.isfinite(a) \
        and abs(a - b) <= VALUE_TOL * max(1.0, abs(b))


def check_class_claim(t, claimed, metrics, tx, n_chunks: int) -> tuple:
    """Re-derive the claim: ``(claimed, measured, ok, error)`` with the dual left out of both summaries.

    ``tx`` are the schedule's transmissions (:func:`base_transmissions`); a schedule that is not
    layered, a malformed dual, or a value or fraction other than the re-derived one fails.
    """
    shown = {k: v for k, v in claimed.items() if k != "dual"} if isinstance(claimed, dict) else claimed
    if not isinstance(claimed, dict) or claimed.get("class") != CLASS_NAME:
        return shown, None, False, f"claim {CLASS_KEY} must be an object for the class {CLASS_NAME!r}"
    if t.has_bandwidths:
        return shown, None, False, f"claim {CLASS_KEY}: the bound of the layered class counts every link as " \
                                   "1 GB/s; it is no bound on links with bandwidths"
    try:
        D = layered_distances(t)
        why = layered_violation(t, D, tx, n_chunks)
        if why is not None:
            return shown, None, False, f"claim {CLASS_KEY}: the schedule is not layered ({why}): the bound " \
                                       "of the layered class does not apply to it"
        pi = dual_from_json(t, D, claimed.get("dual"))
    except ScheduleError as exc:
        return shown, None, False, f"claim {CLASS_KEY}: {exc}"
    value = metrics.elements * class_value(t, pi, D)
    measured = {"class": CLASS_NAME, "value": value, "fraction": value / float(metrics.bandwidth_term)}
    ok = _close(claimed.get("value"), measured["value"]) and _close(claimed.get("fraction"), measured["fraction"])
    return shown, measured, ok, None
