"""A checkable lower bound for k-hop trees from a few terminals: the excess Steiner bound.

Let ``T`` be a spanning tree of depth ``<= k`` rooted at vertex 0 of a torus, ``W(T)``
the sum of the torus distances between the ends of its edges, and call
``W(T) - (p - 1) = sum over edges of (dist - 1)`` its *excess*: every edge costs at
least 1 and unit edges cost nothing extra.  Pick a few non-root vertices ``S`` (the
terminals).  The tree paths from the root to ``S`` form a subtree ``U`` of ``T``; its
edges cost ``dist - 1 >= 0`` each, so ``excess(T) >= excess(U)``, and ``U`` is an
arborescence of *layered* nodes ``(vertex, depth)``, from ``(0, 0)`` down by one depth
per edge, ``<= k`` deep, that holds every terminal.  The least excess of such an
arborescence, over all of them (a vertex may even appear twice), is therefore a lower
bound on ``W* - (p - 1)``.  It is a hop-constrained Steiner arborescence problem, solved
exactly by the Dreyfus-Wagner recursion over subsets of ``S``:

* ``g[X][d, v]``: least excess of an arborescence rooted at ``(v, d)`` holding ``X``;
* ``g[{s}][d, s] = 0`` for ``1 <= d <= k``;
* merge: ``g[X][d, v] <= g[Y][d, v] + g[X - Y][d, v]`` (two branches at ``(v, d)``);
* extend: ``g[X][d, v] <= dist(v, w) - 1 + g[X][d + 1, w]`` for ``w != v`` (one edge);
* the bound is ``p - 1 + g[S][0, 0]``, the root at depth 0 only.

The extension is an L1 distance transform: with "stays" ``(v, d) -> (v, d + 1)`` at no
cost allowed (they never help: lifting the subtree below a stay by one depth removes
it), ``min(h(v), min over neighbours v' of v of T(v'))`` with ``T(v') = min_w dist(v', w) +
h(w)``, which is separable over the torus's dimensions.  The work is about
``3^|S| (k + 1) p`` for the merges and ``2^|S| k p d`` for the extensions: 12 terminals on
16x16 at depth 9 take 1.9 s, 9 terminals on 32x32 at depth 20 take 1.3 s.

Why it helps.  The layered LP spreads a deep vertex's cost over all the symmetric
images of the tree; the Steiner bound, an integer program solved exactly, cannot.
On 16x16, the antipode ``A`` and the vertices 3 and 4 from it along the axes (9 terminals)
prove ``W*(9) >= 266``, where the LP proves 265; ``W*(11) >= 263`` (the LP: 261).

Stored form (JSON): ``{"kind": "khop-terminal-steiner", "k": k, "terminals": [ids]}``;
:func:`terminal_bound` re-derives the bound from the topology and the terminals alone.

Examples
--------
The far corner of a 5x5 torus is 4 away and a tree of depth 1 reaches it in one edge,
so any such tree has excess at least 3 (the star's is 40 - 24 = 16).  With every vertex a
terminal, depth 1 leaves only the star:

>>> from synth.topology.torus import parse_torus
>>> terminal_bound(parse_torus("5x5"), 1, [12]).bound
27
>>> terminal_bound(parse_torus("3x3"), 1, list(range(1, 9))).bound     # the star: 4 * 1 + 4 * 2
12
"""

from __future__ import annotations

import numpy as np

from synth.check.bounds.kinds import STEINER_KIND, DualBound
from synth.errors import SynthError

__all__ = ["terminal_bound", "excess_tables", "steiner_dual", "splits", "MAX_TERMINALS", "MAX_CELLS"]

MAX_TERMINALS = 16          # 3^16 merges: minutes on 16x16, and the tables take 2^16 (k + 1) p int32s
MAX_CELLS = 1 << 29         # table entries (int32): 2 GiB
_BIG = np.int32(1 << 28)    # "unreachable"; sums of two stay below 2^31 and are clipped back
_MERGE_BYTES = 64 << 20     # the sums of one merge batch


def _cyclic_transform(a, axis):
    """In place: ``a[..., i, ...] <- min_j cyc(i, j) + a[..., j, ...]`` along ``axis`` (two sweeps each way)."""
    view = np.moveaxis(a, axis, 0)
    m = view.shape[0]
    for step in range(1, 2 * m):
        i = step % m
        np.minimum(view[i], view[i - 1] + 1, out=view[i])
    for step in range(1, 2 * m):
        i = (-step - 1) % m
        np.minimum(view[i], view[(i + 1) % m] + 1, out=view[i])


def _extend(h, shape):
    """``min(h(v), min_{w != v} dist(v, w) - 1 + h(w))`` for a batch ``h`` of shape ``(B, p)``."""
    B = h.shape[0]
    T = h.reshape((B,) + tuple(shape)).copy()
    for axis in range(1, T.ndim):
        _cyclic_transform(T, axis)
    best = h.reshape(T.shape).copy()
    for axis in range(1, T.ndim):
        for shift in (1, -1):
            np.minimum(best, np.roll(T, shift, axis=axis), out=best)
    return best.reshape(B, -1)


_MAX_WORK = 1 << 34     # 3^s (k + 1) V: the merges, well under a minute


def _check_depth(k):
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise SynthError(f"steiner bound: need an integer depth k >= 1, got {str(k)[:40]}")


def _check_work(t, k, s):
    """Refuse merges beyond ``_MAX_WORK`` before making them (the tables' size is ``MAX_CELLS``'s job)."""
    if 3 ** s * (k + 1) * t.n_vertices > _MAX_WORK:
        raise SynthError(f"steiner bound: {s} terminals at depth {k} on {t.n_vertices} vertices is beyond what this "
                         "check re-derives")


def _check_terminals(t, terminals):
    V = t.n_vertices
    if not isinstance(terminals, (list, tuple)):
        raise SynthError("steiner bound: 'terminals' must be a list of vertex ids")
    out = []
    if len(terminals) > MAX_TERMINALS:
        raise SynthError(f"steiner bound: {len(terminals)} terminals; at most {MAX_TERMINALS} are supported")
    for s in terminals:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 < int(s) < V:
            raise SynthError(f"steiner bound: terminal {str(s)[:40]} is not a vertex id in 1..{V - 1}")
        out.append(int(s))
    if len(set(out)) != len(out):
        raise SynthError("steiner bound: a terminal is listed twice")
    if len(out) > MAX_TERMINALS:
        raise SynthError(f"steiner bound: {len(out)} terminals; at most {MAX_TERMINALS} are supported")
    return out


def splits(X: int, size: int) -> np.ndarray:
    """The subsets ``Y`` of the bit mask ``X`` that hold its lowest bit, ``Y != X``: one side of every split."""
    low = X & -X
    rest = [1 << b for b in range(X.bit_length()) if (X ^ low) >> b & 1]
    subs = np.arange((1 << (size - 1)) - 1, dtype=np.int64)          # every subset of rest but rest itself
    bits = (subs[:, None] >> np.arange(size - 1)) & 1
    return bits @ np.asarray(rest, dtype=np.int64) + low


def excess_tables(t, k: int, terminals) -> np.ndarray:
    """The Dreyfus-Wagner tables ``g``: ``g[X, d, v]`` for each subset ``X`` (a bit mask) of ``terminals``.

    Parameters
    ----------
    t : Torus
    k : int
        Depth bound, ``k >= 1``.
    terminals : sequence of int
        Distinct non-root vertex ids, at most ``MAX_TERMINALS``.

    Returns
    -------
    numpy.ndarray
        ``int32``, shape ``(2^|S|, k + 1, p)``; unreachable entries are ``2^28``; row 0 is unused.
        ``g[X, d, v]`` is the least excess of a layered arborescence rooted at ``(v, d)`` holding
        the terminals of ``X`` (the root vertex 0 only at depth 0).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> g = excess_tables(parse_torus("6x6"), 2, [21])   # vertex 21 = (3, 3), 6 away
    >>> int(g[1, 0, 0]), int(g[1, 1, 0]), int(g[1, 1, 3]), int(g[1, 2, 21])
    (4, 268435456, 2, 0)
    """
    _check_depth(k)
    terms = _check_terminals(t, terminals)
    V, s = t.n_vertices, len(terms)
    if (1 << s) * (k + 1) * V > MAX_CELLS:
        raise SynthError(f"steiner bound: {s} terminals at depth {k} on {V} vertices need more than "
                         f"{MAX_CELLS * 4 >> 30} GiB of tables; use fewer terminals")
    _check_work(t, k, s)
    shape = tuple(t.shape)
    g = np.full((1 << s, k + 1, V), _BIG, dtype=np.int32)
    by_size = [[] for _ in range(s + 1)]
    for X in range(1, 1 << s):
        by_size[X.bit_count()].append(X)
    cell = 4 * (k + 1) * V                                   # bytes of one table g[X]
    for size in range(1, s + 1):
        Xs = np.asarray(by_size[size], dtype=np.int64)
        if size == 1:
            for X in Xs:
                g[X, 1:, terms[int(X).bit_length() - 1]] = 0
        else:
            parts = np.stack([splits(int(X), size) for X in Xs])     # (nX, 2^(size-1) - 1), same width
            n_split = parts.shape[1]
            per = max(1, _MERGE_BYTES // cell)               # sums per batch
            xs_step = max(1, per // n_split)
            sp_step = min(n_split, per)
            for lo in range(0, Xs.size, xs_step):
                X = Xs[lo:lo + xs_step]
                red = g[X]
                for slo in range(0, n_split, sp_step):
                    a = parts[lo:lo + xs_step, slo:slo + sp_step]
                    sums = g[a] + g[X[:, None] ^ a]           # (x, splits, k + 1, V)
                    red = np.minimum(red, sums.min(axis=1))
                g[X] = np.minimum(red, _BIG)
        g[Xs, 1:, 0] = _BIG
        for d in range(k - 1, -1, -1):
            ext = _extend(g[Xs, d + 1], shape)
            layer = np.minimum(np.minimum(g[Xs, d], ext), _BIG)
            if d >= 1:
                layer[:, 0] = _BIG
            g[Xs, d] = layer
    return g


def terminal_bound(t, k: int, terminals) -> DualBound:
    """``W*(k) >= p - 1 + g[S][0, 0]``: the excess Steiner bound of ``terminals`` (see the module docstring).

    Parameters
    ----------
    t, k, terminals
        The torus, the depth bound and the terminals, as for :func:`excess_tables`.

    Returns
    -------
    DualBound
        ``value == bound`` (integer arithmetic, ``tol = 0``); ``rows`` is the number of terminals.

    Raises
    ------
    SynthError
        On a bad depth or terminal list.

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> t = parse_torus("16x16")
    >>> terminal_bound(t, 10, [136]).bound       # the antipode (8, 8), 16 away: excess >= 16 - 10
    261
    """
    _check_depth(k)
    terms = _check_terminals(t, terminals)
    V = t.n_vertices
    if not terms:
        return DualBound(V - 1, float(V - 1), 0.0, 0)
    k = min(k, V - 1)   # no arborescence on V vertices is deeper, so the tables for V - 1 are those for k
    g = excess_tables(t, k, terms)
    excess = int(g[-1, 0, 0])
    if excess >= _BIG:                      # cannot happen for k >= 1 (one edge reaches anything)
        raise SynthError("steiner bound: the terminals are unreachable within the depth bound")
    return DualBound(V - 1 + excess, float(V - 1 + excess), 0.0, len(terms))


def steiner_dual(t, k: int, terminals) -> dict:
    """The stored form of :func:`terminal_bound` (what the certificate keeps)."""
    b = terminal_bound(t, k, terminals)
    return {"kind": STEINER_KIND, "k": int(k), "terminals": [int(s) for s in terminals], "bound": int(b.bound)}

