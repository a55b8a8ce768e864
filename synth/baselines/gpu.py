"""What GPU users run: NCCL's rings and double binary tree, and the hierarchical allreduce, on fabrics of servers.

A *fabric of servers* is a topology whose links carry bandwidths, with a scale-out tier of slower
links between its servers (:mod:`synth.topology.tiers`: the servers are found from the links alone,
so the DGX, MI250 and multislice presets and a ``--topology`` file of the same shape are alike).  Rings
and chains visit a server's GPUs in one order, the same in every server (:func:`_ring_order`: a cycle
through the fastest direct GPU links, as RCCL's xGMI rings and a slice's ICI rings, else id order);
position ``k`` of that order is the same GPU, with the same NIC and rail, in every server.  Every transmission follows the fastest route (:class:`synth.topology.tiers.FastestRoutes`: least
``sum 1 / bandwidth``, so NVLink and a slice's ICI links before a NIC or the data-centre switch), through the
switches.

=================  ==============================================================================
name               algorithm
=================  ==============================================================================
``nccl-ring``      NCCL's rings: one channel per local index ``c`` (per NIC rail), each a ring over
                   every GPU that runs through a server's GPUs and leaves it from the GPU whose
                   rail the next server enters on (server ``s`` visits local indices ``c - s,
                   c - s + 1, ...``); the vector cut into one part per channel, each part a ring
                   reduce-scatter then allgather (``2(p-1)`` rounds, Psi = 1).  Where a server's
                   GPUs have direct links (MI250's xGMI, a slice's ICI), the rings NCCL's and RCCL's
                   search builds over them, sharing the links' lanes (:mod:`synth.baselines.channel_rings`):
                   a channel per ring on one server, per path from NIC to NIC across servers
``nccl-tree``      NCCL's double binary tree: two binary trees over the servers (the second the
                   first shifted by one server, so a leaf of one is inside the other), a chain
                   through the GPUs inside each server; ``G/2`` channels of such pairs, channel
                   ``c``'s chains entering the servers at local indices ``c`` and ``c + G/2`` (so
                   every NIC carries one tree); each tree carries its share of the vector in
                   :data:`PIPELINE` pipelined chunks: a reduce up the tree, then a broadcast down
``hierarchical``   the allreduce of multislice JAX and of NCCL's 2D algorithms: a ring
                   reduce-scatter inside every server (GPU ``k`` gets shard ``k``), a ring allreduce
                   of shard ``k`` across the servers among the GPUs of local index ``k`` (one rail
                   each), a ring allgather inside every server
=================  ==============================================================================

Examples
--------
>>> from synth.topology.user import topology_from_json
>>> from synth.check import execute
>>> t = topology_from_json(two_servers_example())     # 2 servers of 4 GPUs, 2 rails
>>> fabric_servers(t).tolist()
[[0, 1, 2, 3], [4, 5, 6, 7]]
>>> [execute(f(t).schedule) for f in (nccl_ring, nccl_tree, hierarchical)]
[[], [], []]
>>> m = hierarchical(t).measure()
>>> m.rounds, str(m.psi)
(8, '1')
"""

from __future__ import annotations

import numpy as np

from synth.baselines._engine import Rounds
from synth.baselines.base import Baseline
from synth.baselines.channel_rings import channel_paths, channel_rings, hamiltonian_cycle
from synth.errors import TopologyError
from synth.schedule import COPY, REDUCE
from synth.topology import tiers
from synth.topology.base import Topology

__all__ = ["fabric_servers", "nccl_ring", "nccl_tree", "hierarchical", "PIPELINE", "SUPPORTED",
           "two_servers_example"]

SUPPORTED = ("fabrics with link bandwidths whose servers hold equal GPU counts (GPU servers joined by NIC rails, "
             "TPU slices joined by DCN; one server without a slower scale-out tier)")
#: chunks per tree of ``nccl-tree`` (NCCL pipelines a tree in many slices; 16 keeps the pipeline fill small)
PIPELINE = 16


def two_servers_example(servers: int = 2, gpus: int = 4, rails: int = 2) -> dict:
    """A ``synth-topology`` object of ``servers`` servers of ``gpus`` GPUs on a 300 GB/s switch, each GPU with
    a 25 GB/s NIC on rail switch ``local index % rails`` (a small DGX): the fabric of the examples and tests.

    >>> spec = two_servers_example()
    >>> spec["vertices"], len(spec["links"]), sorted(set(spec["bandwidth"]))
    (20, 24, [25, 300])
    """
    n_gpu = servers * gpus
    switch = lambda s: n_gpu + s                            # noqa: E731
    nic = lambda v: n_gpu + servers + v                     # noqa: E731
    rail = lambda r: n_gpu + servers + n_gpu + r            # noqa: E731
    links, bandwidth = [], []
    for v in range(n_gpu):
        s, k = divmod(v, gpus)
        links += [[v, switch(s)], [v, nic(v)], [nic(v), rail(k % rails)]]
        bandwidth += [300, 25, 25]
    return {"format": "synth-topology", "version": 1, "name": f"{servers} servers of {gpus} GPUs",
            "vertices": n_gpu + servers + n_gpu + rails, "links": links, "bandwidth": bandwidth,
            "compute": list(range(n_gpu))}


def fabric_servers(t: Topology) -> np.ndarray:
    """The servers of a fabric (:func:`synth.topology.tiers.fabric_servers`), refusing a topology whose links
    carry no bandwidths.

    Raises
    ------
    TopologyError
        For a topology without bandwidths, or servers of different GPU counts.
    """
    if not isinstance(t, Topology) or not t.has_bandwidths:
        raise TopologyError(f"the GPU baselines are defined on {SUPPORTED}, not on "
                            f"{getattr(t, 'name', type(t).__name__)!r}, whose links carry no bandwidths")
    return tiers.fabric_servers(t)


#: expansions of the search for one ring through a server's fastest direct links before it settles for id order
RING_ORDER_SEARCH = 200_000


def _ring_order(t: Topology, server) -> np.ndarray:
    """The order of a server's GPUs (local indices) that its rings and chains follow: a cycle through direct
    GPU-to-GPU links whose slowest link is as fast as any such cycle's (the xGMI rings RCCL picks on an MI250,
    a slice's ICI rings), found by a depth-first search that tries the GPUs with the fewest onward links first;
    id order when no such cycle is found (GPUs that meet only through a switch: any order is alike there).

    >>> from synth.topology.user import topology_from_json
    >>> square = topology_from_json({"vertices": 4, "links": [[0, 2], [2, 1], [1, 3], [3, 0], [0, 1]],
    ...                              "bandwidth": [100, 100, 100, 100, 50]})
    >>> _ring_order(square, np.arange(4)).tolist()
    [0, 2, 1, 3]
    """
    G = server.size
    ids = t.link_ids(np.repeat(server, G), np.tile(server, G)).reshape(G, G)
    bw = np.where(ids >= 0, t.link_bandwidth[np.maximum(ids, 0)], 0.0)
    bw = np.minimum(bw, bw.T)                       # both directions of a ring carry data
    np.fill_diagonal(bw, 0.0)
    for floor in sorted(set(bw[bw > 0].tolist()), reverse=True):
        order = hamiltonian_cycle(bw >= floor, budget=RING_ORDER_SEARCH)
        if order is not None:
            return order
    return np.arange(G)


def _ordered_servers(t: Topology) -> np.ndarray:
    """:func:`fabric_servers` with every server's GPUs in the ring order of the first (the servers are alike, so
    position ``k`` is the same local index, the same NIC and rail, in every server)."""
    servers = fabric_servers(t)
    return servers[:, _ring_order(t, servers[0])]


def _ring_steps(rings, chunks):
    """A ring allgather on every row of ``rings`` (``n_rings x n`` vertices) at once: per step ``(src, dst, chunk)``.

    ``chunks[r, b]`` (an array of chunk ids, ``n_rings x n x m``) starts at ``rings[r, b]``; in step ``k``
    position ``q`` sends the chunks of position ``q - k`` to position ``q + 1``.
    """
    n_rings, n = rings.shape
    q = np.arange(n)
    steps = []
    for k in range(n - 1):
        src = np.repeat(rings.ravel(), chunks.shape[2])
        dst = np.repeat(rings[:, (q + 1) % n].ravel(), chunks.shape[2])
        steps.append((src, dst, chunks[:, (q - k) % n, :].ravel()))
    return steps


def _add_allgather(r: Rounds, steps, first: int) -> int:
    for k, (src, dst, chunk) in enumerate(steps):
        r.add(first + k, COPY, chunk, src, dst)
    return len(steps)


def _add_reduce_scatter(r: Rounds, steps, first: int) -> int:
    """The allgather ``steps`` reversed in time: every copy ``u -> v`` of step ``k`` a reduce ``v -> u``."""
    K = len(steps)
    for k, (src, dst, chunk) in enumerate(steps):
        r.add(first + K - 1 - k, REDUCE, chunk, dst, src)
    return K


def _direct_bandwidth(t: Topology, server) -> np.ndarray:
    """``G x G``: GB/s of the direct link from each GPU of ``server`` to each other (0: none)."""
    G = server.size
    ids = t.link_ids(np.repeat(server, G), np.tile(server, G)).reshape(G, G)
    bw = np.where(ids >= 0, t.link_bandwidth[np.maximum(ids, 0)], 0.0)
    np.fill_diagonal(bw, 0.0)
    return bw


def _scale_out(t: Topology, server) -> tuple:
    """GB/s into and out of each GPU of ``server`` over its links to vertices that do not compute (its NIC, a
    DCN switch): what a channel entering or leaving the server there can use."""
    forward = ~t.is_compute[t.link_dst]
    out = np.bincount(t.link_src[forward], weights=t.link_bandwidth[forward], minlength=t.n_vertices)
    back = ~t.is_compute[t.link_src]
    into = np.bincount(t.link_dst[back], weights=t.link_bandwidth[back], minlength=t.n_vertices)
    return into[server], out[server]


def _channel_orders(t: Topology, servers) -> tuple:
    """``(channels x S x G local indices, kind, what)``: the order in which each channel visits each server's
    GPUs, found over the servers' direct links (:mod:`synth.baselines.channel_rings`), whether a channel is a
    ``"ring"`` or a ``"path"``, and what was found; ``(None, "", "")`` without any.

    One server: a channel per ring.  Several: a channel per path, each server visited along the same path
    (entered through the path's first GPU's NIC, left through its last GPU's), the next server entered at the
    path's first GPU again.
    """
    S, G = servers.shape
    bw = _direct_bandwidth(t, servers[0])
    if S == 1:
        found, speed = channel_rings(bw)
        kind = "ring"
    else:
        found, speed = channel_paths(bw, *_scale_out(t, servers[0]))
        kind = "path"
    if not found:
        return None, "", ""
    what = f"{len(found)} {kind}{'s' * (len(found) > 1)} at {speed:g} GB/s over the direct links"
    return np.broadcast_to(np.stack(found)[:, None, :], (len(found), S, G)), kind, what


def nccl_ring(t: Topology) -> Baseline:
    """NCCL's rings (module docstring); chunk ``c p + q`` the block of channel ``c`` that ends reduced at position
    ``q`` of its ring.

    Servers whose GPUs are joined by direct links (MI250's xGMI, a slice's ICI) get the channels NCCL's and
    RCCL's search would build over them (:mod:`synth.baselines.channel_rings`: channels that share the links'
    bandwidth, as many as carry the most): one server runs one channel per ring through its GPUs; several
    run one channel per path from a NIC through a server's GPUs to another NIC, every server visited along
    it (:func:`_channel_orders`).  Servers whose GPUs meet only through a switch (the NVSwitch) run one
    channel per local index, in id order.
    """
    servers = fabric_servers(t)
    S, G = servers.shape
    p = S * G
    local, kind, what = _channel_orders(t, servers)
    if local is None:                       # one order, channel c entering server s at its position c - s
        order = _ring_order(t, servers[0])
        c = np.arange(G)
        local = order[(c[:, None, None] - np.arange(S)[None, :, None] + np.arange(G)[None, None, :]) % G]
    channels = local.shape[0]
    rings = servers[np.arange(S)[None, :, None], local].reshape(channels, p)    # channel x position
    steps = _ring_steps(rings, np.arange(channels * p).reshape(channels, p, 1))
    r = Rounds(t, tiers.FastestRoutes(t))
    K = _add_reduce_scatter(r, steps, 1)
    _add_allgather(r, steps, 1 + K)
    per = f"one per {kind}; {what}" if kind else "one per local index, one ring order"
    notes = f"{channels} channels ({per}) over {S} server{'s' * (S > 1)} of {G} GPUs"
    return Baseline(r.schedule(channels * p, 2 * K), np.ones(channels * p, dtype=np.int64), "nccl-ring", notes)


def _binary_tree(n: int) -> np.ndarray:
    """The parent of every rank of a balanced in-order binary tree over ``0..n-1`` (the root's is -1).

    >>> _binary_tree(5).tolist()
    [2, 0, -1, 2, 3]
    """
    parent = np.full(n, -1, dtype=np.int64)
    todo = [(0, n - 1, -1)]
    while todo:
        lo, hi, up = todo.pop()
        if lo > hi:
            continue
        mid = (lo + hi) // 2
        parent[mid] = up
        todo += [(lo, mid - 1, mid), (mid + 1, hi, mid)]
    return parent


def _tree_parents(servers, tree: int, head: int) -> dict:
    """Parent of every GPU (-1 at the root) in tree ``tree`` (0 or 1) of a double binary tree whose chains
    enter each server at local index ``head``."""
    S, G = servers.shape
    server_parent = _binary_tree(S)
    order = (np.arange(S) + tree) % S                       # tree 1: the ranks shifted by one server
    chain = servers[:, (np.arange(G) + head) % G]           # chain[s, 0] is server s's head
    parent = {}
    for rank in range(S):
        s = order[rank]
        up = server_parent[rank]
        parent[chain[s, 0]] = -1 if up < 0 else chain[order[up], 0]
        for k in range(1, G):
            parent[chain[s, k]] = chain[s, k - 1]
    return parent


def _heights_and_depths(parent: dict):
    """``(height, depth)`` of every vertex of the tree ``parent`` (leaves have height 1, the root depth 0)."""
    children = {}
    for v, u in parent.items():
        children.setdefault(u, []).append(v)
    order = list(children[-1])                 # breadth first from the root: parents before children
    for v in order:
        order.extend(children.get(v, ()))
    depth = {order[0]: 0}
    for v in order[1:]:
        depth[v] = depth[parent[v]] + 1
    height = {}
    for v in reversed(order):
        height[v] = 1 + max((height[c] for c in children.get(v, ())), default=0)
    return height, depth


def _add_pipelined_tree(r: Rounds, parent: dict, chunks, reduce_rounds: int) -> int:
    """Reduce ``chunks`` up the tree ``parent`` and broadcast them down, pipelined: a vertex of height ``h``
    (leaves 1) sends chunk ``j`` up in round ``h + j``; a vertex at depth ``d`` gets it back in round
    ``reduce_rounds + d + j``.  Returns the last round used."""
    height, depth = _heights_and_depths(parent)
    chunks = np.asarray(chunks, dtype=np.int64)
    j = np.arange(chunks.size)
    last = 0
    for v, u in parent.items():
        if u >= 0:
            for k in range(chunks.size):        # a round per chunk: one transmission of each link per round
                r.add(height[v] + k, REDUCE, chunks[k], [v], [u])
                r.add(reduce_rounds + depth[v] + k, COPY, chunks[k], [u], [v])
            last = max(last, reduce_rounds + depth[v] + int(j[-1]))
    return last


def _tree_reduce_rounds(parent: dict, pipeline: int) -> int:
    """Rounds of the pipelined reduce of a tree: its root's height less one, plus the pipeline less one."""
    height, depth = _heights_and_depths(parent)
    root = next(v for v, d in depth.items() if d == 0)
    return height[root] - 1 + pipeline - 1


def nccl_tree(t: Topology, pipeline: int = PIPELINE) -> Baseline:
    """NCCL's double binary tree (module docstring): ``pipeline`` chunks per tree, trees in channel order."""
    servers = _ordered_servers(t)
    S, G = servers.shape
    pairs = max(1, G // 2)
    r = Rounds(t, tiers.FastestRoutes(t))
    parents = [_tree_parents(servers, k, c + k * (G // 2)) for c in range(pairs) for k in (0, 1)]
    reduce_rounds = max(_tree_reduce_rounds(par, pipeline) for par in parents)
    last = 0
    for k, par in enumerate(parents):
        last = max(last, _add_pipelined_tree(r, par, np.arange(k * pipeline, (k + 1) * pipeline), reduce_rounds))
    n = len(parents) * pipeline
    notes = (f"{pairs} channel{'s' * (pairs > 1)} of two binary trees over {S} server{'s' * (S > 1)}, a chain "
             f"through each server's {G} GPUs, {pipeline} pipelined chunks per tree")
    return Baseline(r.schedule(n, last), np.ones(n, dtype=np.int64), "nccl-tree", notes)


def hierarchical(t: Topology) -> Baseline:
    """Reduce-scatter inside the servers, allreduce across them per local index, allgather inside (module
    docstring); ``G S`` chunks, chunk ``k S + j`` the part of shard ``k`` that ends reduced on server ``j``."""
    servers = _ordered_servers(t)
    S, G = servers.shape
    chunk = np.arange(G * S).reshape(G, S)
    inside = _ring_steps(servers, np.broadcast_to(chunk, (S, G, S)))            # per server: shard k at GPU k
    across = _ring_steps(servers.T.copy(), chunk[:, :, None]) if S > 1 else []   # per local index k: ring of servers
    r = Rounds(t, tiers.FastestRoutes(t))
    rnd = 1 + _add_reduce_scatter(r, inside, 1)
    rnd += _add_reduce_scatter(r, across, rnd)
    rnd += _add_allgather(r, across, rnd)
    rnd += _add_allgather(r, inside, rnd)
    notes = f"rings of {G} GPUs inside {S} server{'s' * (S > 1)}"
    if S > 1:
        notes += f", rings of {S} servers per rail"
    return Baseline(r.schedule(G * S, rnd - 1), np.ones(G * S, dtype=np.int64), "hierarchical", notes)
