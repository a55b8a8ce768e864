"""Fit an MSCCL export's operations into threadblocks and channels, and write the XML text.

Threadblocks: one per (peer, direction) for every connection segment, ``send`` *or* ``recv``,
never both.  When a threadblock would exceed ``max_steps``, its connection is split by rounds
over more channels (:func:`fit_threadblocks`).  Dependencies are reduced with vector clocks
to the ones not implied by the order of threadblocks and by other dependencies; a step keeps
one dependency and the others become ``nop`` steps just before it (:func:`emit_xml`).
"""

from __future__ import annotations

import math

import numpy as np

from synth.errors import ScheduleError

__all__ = ["fit_threadblocks", "emit_xml"]


def _segments(sizes, k):
    """Split a sequence of message step counts into ``k`` contiguous segments of similar total."""
    total = sum(sizes)
    bounds, acc, seg = [], 0, 0
    for i, s in enumerate(sizes):
        if seg < k - 1 and acc > 0 and acc + s / 2 > total * (seg + 1) / k:
            bounds.append(i)
            seg += 1
        acc += s
    return bounds


def _segment_of_messages(ops, splits):
    """Segment of every message of every connection, its messages cut in ``splits[conn]`` parts of similar
    step counts (both sides have the same runs); and the connections ``(sender, receiver)``."""
    conn_msgs = {}  # (sender, receiver) -> [[message, runs], ...] in order
    for o in ops:
        kind, peer = o.stream
        if kind != "send":
            continue
        lst = conn_msgs.setdefault((o.gpu, peer), [])
        if not lst or lst[-1][0] != o.msg:
            lst.append([o.msg, 0])
        lst[-1][1] += 1
    seg_of_msg = {}
    for key, lst in conn_msgs.items():
        k = splits.get(key, 1)
        bounds = _segments([n for _, n in lst], k) if k > 1 else []
        seg, bi = 0, 0
        for i, (m, _) in enumerate(lst):
            while bi < len(bounds) and i >= bounds[bi]:
                seg += 1
                bi += 1
            seg_of_msg[(key, m)] = seg
    return seg_of_msg, list(conn_msgs)


def _place_ops(ops, splits, p, limits, rails=None):
    """Threadblocks of every GPU, each ``{"key": (kind, peer, segment), "chan", "ops"}``; sets ``tb``/``pos``."""
    seg_of_msg, conns = _segment_of_messages(ops, splits)
    # channels: segment j of a connection goes to channel j*G + group, groups keep <= max per channel
    conn_group = _channel_groups(conns, p, limits.max_tbs_per_channel, rails or {}, limits.max_channels)
    n_groups = 1 + max(conn_group.values(), default=0)
    tb_index = [dict() for _ in range(p)]
    tbs = [[] for _ in range(p)]
    for i, o in enumerate(ops):
        kind, peer = o.stream
        if kind == "local":
            key = ("local", -1, 0)
            chan = 0
        else:
            conn = (o.gpu, peer) if kind == "send" else (peer, o.gpu)
            seg = seg_of_msg[(conn, o.msg)]
            chan = seg * n_groups + conn_group[conn]
            key = (kind, peer, seg)
        t = tb_index[o.gpu].get(key)
        if t is None:
            t = len(tbs[o.gpu])
            tb_index[o.gpu][key] = t
            tbs[o.gpu].append({"key": key, "chan": chan, "ops": []})
        o.tb = t
        o.pos = len(tbs[o.gpu][t]["ops"])
        tbs[o.gpu][t]["ops"].append(i)
    return tbs


def _renumber(ops, tbs):
    """Renumber every GPU's threadblocks: by channel, sends before receives, then peer; local last."""
    def sort_key(tb):
        kind, peer, _ = tb["key"]
        return (kind == "local", tb["chan"], kind != "send", peer)

    for gpu in range(len(tbs)):
        new_order = sorted(range(len(tbs[gpu])), key=lambda t: sort_key(tbs[gpu][t]))
        remap = {old: new for new, old in enumerate(new_order)}
        tbs[gpu] = [tbs[gpu][t] for t in new_order]
        for tb in tbs[gpu]:
            for i in tb["ops"]:
                ops[i].tb = remap[ops[i].tb]


def _minimal_deps(ops, tbs):
    """Set every op's ``deps`` to the dependencies not implied by the threadblocks' order and by the other
    dependencies, with vector clocks (ops are in a topological order)."""
    vc = [None] * len(ops)
    last_in_tb = [dict() for _ in range(len(tbs))]
    for i, o in enumerate(ops):
        ntb = len(tbs[o.gpu])
        prev = last_in_tb[o.gpu].get(o.tb)
        known = vc[prev].copy() if prev is not None else np.full(ntb, -1, dtype=np.int64)
        cands = [d for d in set(o.deps0) if ops[d].tb != o.tb]
        cands.sort(key=lambda d: -int(vc[d].sum()))
        kept = []
        for d in cands:
            od = ops[d]
            if known[od.tb] >= od.pos:
                continue
            kept.append(d)
            np.maximum(known, vc[d], out=known)
        # drop kept deps implied by later-kept ones
        final = []
        for d in kept:
            od = ops[d]
            if any(x != d and vc[x][od.tb] >= od.pos for x in kept):
                continue
            final.append(d)
        o.deps = sorted(final, key=lambda d: (ops[d].tb, ops[d].pos))
        known[o.tb] = o.pos
        vc[i] = known
        last_in_tb[o.gpu][o.tb] = i


def _overfull(tbs, splits, limits):
    """Connections whose threadblocks exceed ``max_steps``, mapped to the number of segments they need."""
    over = {}
    for gpu in range(len(tbs)):
        for tb in tbs[gpu]:
            s = tb["nsteps"]
            if s <= limits.max_steps:
                continue
            kind, peer, seg = tb["key"]
            if kind == "local":
                raise ScheduleError(f"GPU {gpu} needs {s} local copy steps, over MSCCL_MAX_NUM_STEPS "
                                    f"{limits.max_steps}")
            conn = (gpu, peer) if kind == "send" else (peer, gpu)
            # how many segments this connection needs overall, at least one more than now
            total_steps = sum(t2["nsteps"] for t2 in tbs[gpu] if t2["key"][0] == kind and t2["key"][1] == peer)
            need = max(math.ceil(total_steps * 1.15 / limits.max_steps), splits.get(conn, 1) + 1)
            over[conn] = max(over.get(conn, 0), need)
    return over


def _assign(ops, splits, p, limits, rails=None):
    """Assign ops to threadblocks (gpu, stream, segment), compute minimal deps and nops.

    Returns ``(tbs, over)``: ``tbs[gpu]`` = list of dicts (key, chan, ops, nsteps);
    ``over`` maps connections whose threadblocks exceed ``max_steps`` to a larger split.
    """
    tbs = _place_ops(ops, splits, p, limits, rails)
    _renumber(ops, tbs)
    _minimal_deps(ops, tbs)
    for gpu in range(p):  # steps, nops first
        for tb in tbs[gpu]:
            tb["nsteps"] = sum(max(len(ops[i].deps), 1) for i in tb["ops"])
    return tbs, _overfull(tbs, splits, limits)


def _channel_groups(conns, p, per_channel, rails=None, n_rails=1):
    """Group connections so that no GPU has more than ``per_channel`` send (or recv) peers in a group.

    A connection with a rail (``rails[(u, v)]``, :mod:`synth.runtime.msccl.rails`) goes to group ``rail mod
    n_rails`` or, when that one is full for its GPUs, to the next with the same remainder; the others take
    the first group with room, after them.

    >>> _channel_groups([(0, 1), (1, 0), (0, 2)], 3, 32, {(0, 2): 1}, 32)
    {(0, 2): 1, (0, 1): 0, (1, 0): 0}
    """
    rails = rails or {}
    group = {}
    send_n, recv_n = {}, {}
    for u, v in sorted(conns, key=lambda c: (c not in rails, c)):
        start, stride = (rails[(u, v)] % n_rails, n_rails) if (u, v) in rails else (0, 1)
        gidx = start
        while send_n.get((u, gidx), 0) >= per_channel or recv_n.get((v, gidx), 0) >= per_channel:
            gidx += stride
        group[(u, v)] = gidx
        send_n[(u, gidx)] = send_n.get((u, gidx), 0) + 1
        recv_n[(v, gidx)] = recv_n.get((v, gidx), 0) + 1
    return group


def _number_steps(ops, tbs):
    """Step numbers of every op (its nops before it), and ``hasdep`` of the ops others depend on."""
    for gpu_tbs in tbs:
        for tb in gpu_tbs:
            s = 0
            for i in tb["ops"]:
                o = ops[i]
                s += max(len(o.deps) - 1, 0)
                o.step = s
                s += 1
    for o in ops:
        for d in o.deps:
            ops[d].hasdep = 1


def _limit_problems(tbs, p, limits):
    """``(stats, problems)``: channels, threadblocks and steps, and the runtime limits they exceed."""
    nchannels = 1 + max((tb["chan"] for gpu in range(p) for tb in tbs[gpu]), default=0)
    max_tbs = max((len(t) for t in tbs), default=0)
    max_steps = max((tb["nsteps"] for gpu in range(p) for tb in tbs[gpu]), default=0)
    problems = []
    if nchannels > limits.max_channels:
        problems.append(f"{nchannels} channels, over MAXCHANNELS {limits.max_channels}")
    if max_tbs > limits.max_tbs:
        problems.append(f"{max_tbs} threadblocks on one GPU, over the limit {limits.max_tbs}")
    if max_steps > limits.max_steps:
        problems.append(f"{max_steps} steps in one threadblock, over MSCCL_MAX_NUM_STEPS {limits.max_steps}")
    for gpu in range(p):
        per_chan_s, per_chan_r = {}, {}
        for tb in tbs[gpu]:
            kind = tb["key"][0]
            if kind == "send":
                per_chan_s[tb["chan"]] = per_chan_s.get(tb["chan"], 0) + 1
            elif kind == "recv":
                per_chan_r[tb["chan"]] = per_chan_r.get(tb["chan"], 0) + 1
        worst = max(list(per_chan_s.values()) + list(per_chan_r.values()) + [0])
        if worst > limits.max_tbs_per_channel:
            problems.append(f"GPU {gpu}: {worst} threadblocks on one channel, over "
                            f"MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL {limits.max_tbs_per_channel}")
            break
        nodes = 1 + p + len(tbs[gpu]) + sum(tb["nsteps"] for tb in tbs[gpu])
        if nodes > limits.max_nodes:
            problems.append(f"GPU {gpu}: {nodes} XML nodes for one rank, over the parser's limit of "
                            f"{limits.max_nodes} (MAX_NODES {limits.max_nodes + 1} less the slot its next read takes)")
            break
    return {"nchannels": nchannels, "max_tbs": max_tbs, "max_steps": max_steps}, problems


def _tb_steps(ops, tb, out):
    """Append the ``step`` elements of threadblock ``tb`` to ``out``; ``(steps, nops)`` written."""
    s = n_nops = 0
    for i in tb["ops"]:
        o = ops[i]
        for d in o.deps[:-1]:
            od = ops[d]
            out.append(f'      <step s="{s}" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" '
                       f'cnt="0" depid="{od.tb}" deps="{od.step}" hasdep="0"/>\n')
            s += 1
            n_nops += 1
        if o.deps:
            od = ops[o.deps[-1]]
            depid, deps = od.tb, od.step
        else:
            depid = deps = -1
        out.append(f'      <step s="{s}" type="{o.type}" srcbuf="{o.srcbuf}" srcoff="{o.srcoff}" '
                   f'dstbuf="{o.dstbuf}" dstoff="{o.dstoff}" cnt="{o.cnt}" depid="{depid}" deps="{deps}" '
                   f'hasdep="{o.hasdep}"/>\n')
        s += 1
    return s - n_nops, n_nops


def emit_xml(ops, tbs, layout, s_chunks, opts):
    """Number the steps, mark dependencies, check the limits and write the XML text.

    ``layout`` (:class:`~synth.runtime.msccl.layout.ChunkLayout`) gives the GPUs, ``nchunksperloop``
    and the collective's buffer sizes; ``opts`` (:class:`~synth.runtime.msccl.limits.MscclOptions`)
    the header, its ``name`` and ``max_bytes`` resolved.  Returns ``(xml, stats)``.
    """
    p, units, coll, block = layout.p, layout.units, layout.bufmap.coll, layout.bufmap.block
    _number_steps(ops, tbs)
    stats, problems = _limit_problems(tbs, p, opts.limits)
    if problems:
        raise ScheduleError("the schedule does not fit the MSCCL runtime limits: " + "; ".join(problems))
    out = [f'<algo name="{opts.name}" proto="{opts.proto}" nchannels="{stats["nchannels"]}" '
           f'nchunksperloop="{units}" ngpus="{p}" coll="{coll}" inplace="{int(bool(opts.inplace))}" '
           f'outofplace="{int(bool(opts.outofplace))}" minBytes="{int(opts.min_bytes)}" '
           f'maxBytes="{int(opts.max_bytes)}">\n']
    n_steps = n_nops = 0
    i_chunks, o_chunks = {"allreduce": (units, units), "reducescatter": (units, block)}.get(coll, (block, units))
    for gpu in range(p):
        out.append(f'  <gpu id="{gpu}" i_chunks="{i_chunks}" o_chunks="{o_chunks}" s_chunks="{int(s_chunks[gpu])}">\n')
        for t, tb in enumerate(tbs[gpu]):
            kind, peer, _ = tb["key"]
            send = peer if kind == "send" else -1
            recv = peer if kind == "recv" else -1
            out.append(f'    <tb id="{t}" send="{send}" recv="{recv}" chan="{tb["chan"]}">\n')
            steps, nops = _tb_steps(ops, tb, out)
            n_steps, n_nops = n_steps + steps, n_nops + nops
            out.append("    </tb>\n")
        out.append("  </gpu>\n")
    out.append("</algo>\n")
    return "".join(out), {**stats, "steps": n_steps + n_nops, "nops": n_nops}


def fit_threadblocks(ops, p, limits, rails=None):
    """Threadblocks of every GPU (see :func:`_assign`), connections split until every one fits ``max_steps``;
    ``rails`` maps connections across servers to their rail's channel (:func:`_channel_groups`)."""
    # -------- threadblocks: split connections over channels until every threadblock fits
    splits = {}  # (sender, receiver) -> number of segments
    for _attempt in range(12):
        tbs, n_over = _assign(ops, splits, p, limits, rails)
        if not n_over:
            break
        for (u, v), need in n_over.items():
            splits[(u, v)] = need
    else:
        raise ScheduleError(f"cannot fit the steps within MSCCL_MAX_NUM_STEPS {limits.max_steps}: a single message "
                            "(its runs and the nops of their dependencies) is longer than that")
    return tbs
