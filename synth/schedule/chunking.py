"""Chunk sizes: ``N`` elements cut into chunks by weight, and the block layout of a reduce-scatter or allgather.

Layout of a reduce-scatter or allgather (the runtimes' convention, ``MPI_Reduce_scatter_block``,
``MPI_Allgather``, NCCL): ``N`` elements per node in all, ``N`` a multiple of ``p``; the ``r``-th
compute node (in the order of ``topology.compute``) owns the contiguous block
``[r*N/p, (r+1)*N/p)`` of the vector (its reduce-scatter output, its allgather input).  The
block is cut over the chunks that node owns, in chunk order, proportionally to their weights
by :func:`chunk_elements` (:func:`block_chunk_elements`); so chunks lie in the vector by owner
rank, then chunk id (:func:`chunk_offsets`).  When a block does not split evenly the chunk
sizes differ by one element and Ω is measured on those real sizes.

Chunking: :func:`chunk_elements` cuts ``N`` elements into chunks proportional
to their weights; chunk ``c`` gets ``floor(N*U_{c+1}/U) - floor(N*U_c/U)``
elements, ``U_c`` the cumulative weight of the chunks before ``c``, so any
remainder is spread evenly over the chunk order and sizes differ from the
exact proportion by less than one element.

Examples
--------
>>> chunk_elements([1, 1, 1], 10).tolist()
[3, 3, 4]
>>> chunk_elements([2, 1], 6).tolist()
[4, 2]
>>> block_chunk_elements([0, 1, 0, 1], [1, 1, 1, 1], [0, 1], 6).tolist()
[1, 1, 2, 2]
>>> chunk_offsets([0, 1, 0, 1], [1, 1, 2, 2], [0, 1]).tolist()
[0, 3, 1, 4]
"""

from __future__ import annotations

import numpy as np

from synth.errors import ArgumentTypeError, ScheduleError, check_int

__all__ = ["chunk_elements", "require_elements", "positive_chunks", "block_chunk_elements", "chunk_offsets"]


def block_chunk_elements(owner, weights, compute, n_elements: int) -> np.ndarray:
    """Chunk sizes of a reduce-scatter or allgather of ``n_elements`` per node (module docstring: layout).

    Every compute node owns a block of ``n_elements / p`` elements, cut over its chunks (in chunk
    order) in proportion to their ``weights`` by :func:`chunk_elements`.

    Raises
    ------
    ScheduleError
        If ``n_elements`` is not a multiple of ``p``, or a compute node owns no chunk.
    """
    owner = np.asarray(owner, dtype=np.int64).ravel()
    weights = np.asarray(weights, dtype=np.int64).ravel()
    compute = np.asarray(compute, dtype=np.int64).ravel()
    p = compute.size
    if isinstance(n_elements, bool) or not isinstance(n_elements, (int, np.integer)) or n_elements < 0:
        raise ScheduleError(f"the number of elements must be a non-negative integer, got {str(n_elements)[:40]}")
    if int(n_elements) % p:
        raise ScheduleError(f"{int(n_elements)} elements do not cut into {p} equal blocks: a reduce-scatter or "
                            f"allgather needs a multiple of the {p} compute nodes")
    block = int(n_elements) // p
    sizes = np.zeros(owner.size, dtype=np.int64)
    order = np.argsort(owner, kind="stable")
    cuts = np.searchsorted(owner[order], compute)
    ends = np.searchsorted(owner[order], compute, side="right")
    for r, (a, z) in enumerate(zip(cuts.tolist(), ends.tolist())):
        if a == z:
            raise ScheduleError(f"compute node {int(compute[r])} owns no chunk: its block would have nowhere to go")
        mine = order[a:z]
        sizes[mine] = chunk_elements(weights[mine], block)
    return sizes


def chunk_offsets(owner, sizes, compute) -> np.ndarray:
    """Where each chunk starts in the vector: by owner rank (order of ``compute``), then chunk id."""
    owner = np.asarray(owner, dtype=np.int64).ravel()
    sizes = np.asarray(sizes, dtype=np.int64).ravel()
    rank = np.full(int(max(owner.max(), np.max(compute))) + 1, -1, dtype=np.int64)
    rank[np.asarray(compute, dtype=np.int64)] = np.arange(len(compute))
    order = np.lexsort((np.arange(owner.size), rank[owner]))
    offsets = np.zeros(owner.size, dtype=np.int64)
    offsets[order] = np.concatenate([[0], np.cumsum(sizes[order])[:-1]])
    return offsets


def _integer_weights(weights) -> np.ndarray:
    """``weights`` as a 1-d integer array, or :class:`ArgumentTypeError` naming the parameter."""
    arr = np.asarray(weights) if isinstance(weights, (list, tuple, np.ndarray)) else None
    if arr is None or arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise ArgumentTypeError(f"weights must be a 1-d list or array of integers, got {type(weights).__name__}")
    return arr


def chunk_elements(weights, n_elements: int) -> np.ndarray:
    """Integer elements per chunk for ``n_elements`` split proportionally to ``weights``.

    The arithmetic is exact: int64 when ``n_elements * sum(weights)`` provably fits, Python
    integers otherwise.  Sizes can be zero (fewer elements than weight); the checker refuses
    such chunks (:func:`positive_chunks`).

    Raises
    ------
    ScheduleError
        If a weight is not a positive integer or ``n_elements`` is negative.

    Examples
    --------
    >>> chunk_elements([2**57 + 1], 64).tolist()
    [64]
    >>> chunk_elements([1, 2**52], 2**52 + 1).tolist()
    [1, 4503599627370496]
    """
    weights = _integer_weights(weights)
    n_elements = check_int(n_elements, "n_elements")
    if isinstance(n_elements, bool) or not isinstance(n_elements, (int, np.integer)):
        raise ScheduleError(f"the number of elements must be an integer, got {n_elements!r}")
    n = int(n_elements)
    w = [int(x) for x in np.asarray(weights).ravel().tolist()]
    if not w or min(w) < 1:
        raise ScheduleError("chunk weights must be positive")
    if n < 0:
        raise ScheduleError("the number of elements must be non-negative")
    total = sum(w)
    if n >= 1 << 62:
        raise ScheduleError(f"{n} elements is beyond the int64 range of chunk sizes")
    if n * total < 1 << 62:  # then every cumulative weight times n fits int64: no wrap is possible
        cum = np.concatenate([[0], np.cumsum(np.asarray(w, dtype=np.int64))])
        return np.diff(n * cum // total)
    cum, bounds = 0, [0]
    for x in w:
        cum += x
        bounds.append(n * cum // total)
    return np.diff(np.asarray(bounds, dtype=np.int64))  # each bound is at most n < 2**62


def require_elements(elements: int, n_chunks: int) -> None:
    """Refuse fewer elements than chunks, before any sizes are made: some chunk would get none.

    Examples
    --------
    >>> require_elements(10, 64)
    Traceback (most recent call last):
    ...
    synth.errors.ScheduleError: 10 elements cannot fill 64 chunks; every chunk needs at least one
    """
    if elements < n_chunks:
        raise ScheduleError(f"{elements} elements cannot fill {n_chunks} chunks; every chunk needs at least one")


def positive_chunks(sizes, what: str = "chunk") -> None:
    """Refuse a chunk of zero or negative elements: it moves nothing and its loads prove nothing.

    Raises
    ------
    ScheduleError
        Naming the first such chunk.

    Examples
    --------
    >>> positive_chunks(chunk_elements([1, 1, 1], 2))
    Traceback (most recent call last):
    ...
    synth.errors.ScheduleError: chunk 0 gets 0 elements; every chunk needs at least one (use more elements)
    """
    sizes = np.asarray(sizes)
    if sizes.size and sizes.min() < 1:
        c = int(np.argmax(sizes < 1))
        raise ScheduleError(f"{what} {c} gets {int(sizes[c])} elements; every chunk needs at least one "
                            "(use more elements)")
