"""Choosing the terminals of the excess Steiner bound (:mod:`synth.check.bounds.steiner`) by separation.

The bound of a terminal set ``S`` is exact for ``S`` but only counts the vertices of
``S``; a good ``S`` holds the vertices the cheap relaxed arborescences leave out.
Separation: solve the Dreyfus-Wagner tables for ``S``, read an optimal arborescence
back from them, and keep its edges longer than 1 (its *jumps*).  The torus plus those
jumps, searched breadth-first from the root, is a real tree of excess at most the bound;
if it is deeper than ``k`` at some vertex, that vertex is what the relaxation missed, and
the deepest such vertex joins ``S`` (with a look-ahead among a few of them while the
tables are cheap).  If nothing is too deep, that tree is optimal.

Separation grows ``S`` one vertex at a time and can miss sets whose strength only shows
together; :func:`axis_sets` adds structured ones (the farthest vertex and the vertices
at one or two radii from it along the axes), which are cheap and often stronger.

Measured (16x16, :func:`terminal_search`, best of both; the layered LP's bound in brackets):
k = 8: 267 [268]; k = 9: 266 [265]; k = 10: 264 [263]; k = 11: 263 [261]; k = 12: 261
[260]; k = 13: 260 [259], which is optimal; about 7 s each.  Up to 15 terminals (35-47 s)
does not do better.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> import time
>>> res = terminal_search(parse_torus("8x8"), 6, deadline=time.monotonic() + 30)
>>> res.bound, len(res.terminals) <= 12
(66, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from synth.check.bounds.steiner import MAX_CELLS, MAX_TERMINALS, excess_tables, splits, steiner_dual

__all__ = ["SteinerResult", "terminal_search", "axis_sets", "relaxed_jumps", "jump_tree"]

_GROWTH = 3.2       # a terminal more costs about 3x (the merges are 3^|S|)


@dataclass(frozen=True)
class SteinerResult:
    """The best terminal set found: its bound (``p - 1 + excess``), the terminals and, if it closed, a tree."""

    bound: int
    terminals: tuple
    dual: dict
    parent: np.ndarray | None      # a tree of weight ``bound`` when the relaxation's jumps cover everything
    seconds: float


def relaxed_jumps(D, k, terminals, g):
    """The edges longer than 1 of an optimal relaxed arborescence, read back from the tables ``g``.

    Parameters
    ----------
    D : numpy.ndarray
        The torus distance matrix.
    k : int
    terminals : sequence of int
    g : numpy.ndarray
        :func:`synth.check.bounds.steiner.excess_tables` of ``terminals``.

    Returns
    -------
    list of (int, int)
        ``(u, w)``: ``u`` the parent end.  Their ``dist - 1`` add up to ``g[S][0, 0]``.
    """
    terms = list(terminals)
    jumps = []
    stack = [((1 << len(terms)) - 1, 0, 0)]
    while stack:
        X, d, u = stack.pop()
        val = int(g[X, d, u])
        if X & (X - 1) == 0 and terms[X.bit_length() - 1] == u and d >= 1 and val == 0:
            continue
        if d < k:
            if u != 0 and int(g[X, d + 1, u]) == val:           # a stay
                stack.append((X, d + 1, u))
                continue
            cost = D[u].astype(np.int64) - 1 + g[X, d + 1]
            cost[u] = np.iinfo(np.int64).max
            w = int(np.argmin(cost))
            if int(cost[w]) == val:
                if D[u, w] > 1:
                    jumps.append((u, w))
                stack.append((X, d + 1, w))
                continue
        parts = splits(X, X.bit_count())
        match = np.flatnonzero(g[parts, d, u].astype(np.int64) + g[X ^ parts, d, u] == val)
        if match.size == 0:
            raise AssertionError("steiner tables: no decomposition matches")   # cannot happen
        a = int(parts[match[0]])
        stack.append((a, d, u))
        stack.append((X ^ a, d, u))
    return jumps


def jump_tree(D, jumps):
    """Breadth-first tree of the torus plus ``jumps`` from the root: ``(parent, depth)``.

    ``parent[0] = -1``; every jump is an extra undirected edge.
    """
    V = D.shape[0]
    u, w = np.nonzero(D == 1)
    if jumps:
        ju, jw = np.asarray(jumps, dtype=np.int64).T
        u, w = np.r_[u, ju, jw], np.r_[w, jw, ju]
    A = sp.csr_matrix((np.ones(u.size, dtype=np.int8), (u, w)), shape=(V, V))
    depth, pred = shortest_path(A, unweighted=True, indices=0, return_predecessors=True)
    depth = depth.astype(np.int64)
    parent = pred.astype(np.int64)
    parent[0] = -1
    return parent, depth


def axis_sets(t, k, d0):
    """Structured terminal sets: the farthest vertex ``A`` and the vertices ``A +- r e_i`` for one or two radii.

    Radii run from 1 to the largest distance from ``A`` to a vertex farther than ``k`` from the
    root; single radii first, then pairs by increasing sum.  On 16x16 these beat separation:
    ``{A} + axis(3) + axis(4)`` proves ``W*(9) >= 266`` and ``{A} + axis(2) + axis(3)`` proves
    ``W*(11) >= 263``, where separation reaches 265 and 262.

    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("8x8")
    >>> d0 = t.dist(0, list(range(64)))
    >>> axis_sets(t, 6, d0)                          # A = (4, 4); far: (4, 4) and its 4 neighbours
    [[36, 28, 44, 35, 37]]
    """
    V = t.n_vertices
    far = np.flatnonzero(d0 > k)
    if far.size == 0:
        return []
    a = int(far[np.argmax(d0[far])])
    rmax = int(t.dist(a, far).max())
    shape = np.asarray(t.shape)
    ca = np.asarray(t.coords(np.asarray([a]))).reshape(-1)

    def ring(r):
        out = []
        for i in range(shape.size):
            for sign in (-1, 1):
                c = ca.copy()
                c[i] = (c[i] + sign * r) % shape[i]
                v = int(np.ravel_multi_index(tuple(c), tuple(shape)))
                if v != 0 and v != a and v not in out:
                    out.append(v)
        return out

    rings = {r: ring(r) for r in range(1, rmax + 1)}
    sets = [[a] + rings[r] for r in range(1, rmax + 1)]
    pairs = sorted(((r1, r2) for r1 in range(1, rmax + 1) for r2 in range(r1 + 1, rmax + 1)),
                   key=lambda p: (p[0] + p[1], p[0]))
    sets += [[a] + rings[r1] + [v for v in rings[r2] if v not in rings[r1]] for r1, r2 in pairs]
    return [S for S in sets if len(S) <= MAX_TERMINALS and (1 << len(S)) * (k + 1) * V <= MAX_CELLS]


def terminal_search(t, k, *, D=None, deadline, max_terminals=12, lookahead=3, beat=None, progress=None):
    """Grow a terminal set by separation (module docstring), then try :func:`axis_sets`; keep the best.

    Parameters
    ----------
    t : Torus
    k : int
        Depth bound.
    D : numpy.ndarray, optional
        The distance matrix (computed if omitted).
    deadline : float
        ``time.monotonic()`` value; a table that would likely not finish in time is not started.
        Separation stops at half the time, the axis sets use the rest.
    max_terminals : int
        At most ``synth.check.bounds.steiner.MAX_TERMINALS``.
    lookahead : int
        How many of the deepest uncovered vertices are tried at each step (the best bound wins;
        ties go to the deepest).  Only while a table takes under a second.
    beat : int, optional
        A bound already proven (the LP's): work that cannot prove more is skipped.  A terminal
        ``v`` adds at most ``max(0, dist(0, v) - k)`` to the excess (a path of its own), so
        separation stops when its bound plus that much per terminal left stays at or below
        ``beat``, and a structured set whose terminals add up to no more is not solved.
    progress : callable, optional
        Gets one line per terminal added.

    Returns
    -------
    SteinerResult
    """
    t0 = time.monotonic()
    V = t.n_vertices
    if D is None:
        verts = np.arange(V)
        D = t.dist(verts[:, None], verts[None, :])
    d0 = np.asarray(D[0], dtype=np.int64)
    max_terminals = min(max_terminals, MAX_TERMINALS)
    far = np.flatnonzero(d0 > k)
    if far.size == 0:
        return SteinerResult(V - 1, (), steiner_dual(t, k, []), None, time.monotonic() - t0)
    terms = [int(far[np.argmax(d0[far])])]
    half = t0 + 0.5 * (deadline - t0)           # separation's share; the axis sets get the rest
    reach = int(d0.max()) - k                   # the most one terminal can add to the excess
    beat = -1 if beat is None else int(beat)
    best, parent = None, None
    while True:
        ts = time.monotonic()
        g = excess_tables(t, k, terms)
        last, last_size = time.monotonic() - ts, len(terms)
        bound = V - 1 + int(g[-1, 0, 0])
        if best is None or bound > best[0]:
            best = (bound, tuple(terms))
        jumps = relaxed_jumps(D, k, terms, g)
        tree, depth = jump_tree(D, jumps)
        uncovered = far[depth[far] > k]
        if progress is not None:
            progress(f"steiner bound {bound} from {len(terms)} terminals ({last:.1f} s), "
                     f"{uncovered.size} far vertices uncovered")
        if uncovered.size == 0:
            parent = tree
            best = (bound, tuple(terms))
            break
        if (len(terms) >= max_terminals or time.monotonic() + _GROWTH * last > half
                or (2 << len(terms)) * (k + 1) * V > MAX_CELLS
                or bound + (max_terminals - len(terms)) * reach <= beat):
            break
        order = uncovered[np.lexsort((uncovered, -d0[uncovered], -depth[uncovered]))]
        pick = int(order[0])
        if lookahead > 1 and _GROWTH * last * lookahead < 1.0:
            scores = []
            for c in order[:lookahead]:
                gc = excess_tables(t, k, terms + [int(c)])
                scores.append(int(gc[-1, 0, 0]))
            pick = int(order[int(np.argmax(scores))])
        terms.append(pick)
    if parent is None:
        for S in axis_sets(t, k, d0):
            if len(S) > max_terminals or V - 1 + int(np.maximum(d0[S] - k, 0).sum()) <= max(beat, best[0]):
                continue
            if time.monotonic() + last * _GROWTH ** (len(S) - last_size) > deadline:
                continue
            ts = time.monotonic()
            bound = V - 1 + int(excess_tables(t, k, S)[-1, 0, 0])
            last, last_size = time.monotonic() - ts, len(S)
            if bound > best[0]:
                best = (bound, tuple(S))
                if progress is not None:
                    progress(f"steiner bound {bound} from the farthest vertex and its axis rings ({len(S)} terminals)")
    bound, terms = best
    return SteinerResult(bound, terms, steiner_dual(t, k, list(terms)), parent, time.monotonic() - t0)
