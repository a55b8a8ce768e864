"""The NIC rail of every connection of a schedule on a fabric of servers: the MSCCL channel it goes on.

An MSCCL program names GPUs only: a route through switches (GPU -> NVSwitch -> GPU, or GPU -> NIC ->
rail switch -> NIC -> GPU) is one send from its first GPU to its last, and the runtime carries it
over NVLink or the network.  Which NIC a network send uses is the runtime's choice per *channel*:
NCCL (and the MSCCL runtimes built on it) give each channel its own network connection and spread
the channels over the NICs.  So the export puts every connection that leaves a server on the
channel of its rail: the local index (:func:`synth.topology.tiers.local_index`) of the GPU whose
link into the scale-out tier the route takes (the sender itself on a rail-aligned route, the GPU it
relays through over NVLink on a PXN-style route).  Connections inside a server, and every connection
on a topology without a scale-out tier, have no rail and are placed as before.

Examples
--------
>>> from synth.topology.user import topology_from_json
>>> from synth.baselines.gpu import hierarchical, two_servers_example
>>> t = topology_from_json(two_servers_example(2, 4, 2))
>>> rails = connection_rails(hierarchical(t).schedule)
>>> sorted(rails.items())[:4]      # (sender rank, receiver rank) -> rail: GPU k of each server on rail k
[((0, 4), 0), ((1, 5), 1), ((2, 6), 2), ((3, 7), 3)]
"""

from __future__ import annotations

import numpy as np

from synth.runtime.plan import flatten, transmission_links
from synth.topology.tiers import local_index, scale_out_links

__all__ = ["connection_rails"]


def connection_rails(schedule) -> dict:
    """``{(sender rank, receiver rank): rail}`` for every connection whose route enters the scale-out tier
    (the rail of its earliest such transmission); empty on a topology without one."""
    t = schedule.topology
    slow = scale_out_links(t)
    if not slow.any():
        return {}
    rnd, _, _, links = transmission_links(schedule)
    _, _, _, src, dst, _ = flatten(schedule)
    safe = np.where(links >= 0, links, 0)
    crossing = slow[safe] & (links >= 0)
    hit = crossing.any(axis=1)
    if not hit.any():
        return {}
    rows = np.flatnonzero(hit)
    first = np.argmax(crossing[rows], axis=1)           # the first scale-out link of each route
    # the GPU that route enters the tier from: the last compute vertex at or before that link's source
    tails = t.link_src[safe[rows]]                       # source of every link of the route
    upto = np.arange(links.shape[1])[None, :] <= first[:, None]
    is_gpu = t.is_compute[tails] & upto
    last_gpu = links.shape[1] - 1 - np.argmax(is_gpu[:, ::-1], axis=1)
    gpu = tails[np.arange(rows.size), last_gpu]
    rail = local_index(t)[gpu]
    order = np.lexsort((rows, rnd[rows]))                # the earliest transmission of a connection decides
    out = {}
    for i in order.tolist():
        out.setdefault((int(src[rows[i]]), int(dst[rows[i]])), int(rail[i]))
    return out
