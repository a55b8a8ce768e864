"""A second, independent flow-level replay for the tests: exact max-min by progressive filling.

Plain Python, no SimGrid: flows on links of equal bandwidth, each message waiting
``alpha + hops * hop_latency`` after its prerequisites (the event graph of
:func:`synth.analysis.simulate.pack`) before its flow starts (``latency_at="start"``), or
``alpha`` before and ``hops * hop_latency`` after its flow (``"end"``).  Rates are recomputed at every
start and finish by progressive filling (raise every unfrozen flow's rate together; freeze the
flows of a link once it is full), which is the max-min fair allocation.
"""

import heapq


def max_min_rates(active, links_of, bandwidth):
    """Max-min rates of the flows ``active`` (ids), ``links_of[m]`` the links of flow ``m``."""
    rate = {}
    left = {}
    users = {}
    for m in active:
        for e in links_of[m]:
            users.setdefault(e, set()).add(m)
            left[e] = bandwidth
    free = set(active)
    while free:
        share = min(left[e] / len(users[e] & free) for e in users if users[e] & free)
        tight = [e for e in users if users[e] & free and left[e] / len(users[e] & free) <= share * (1 + 1e-12)]
        frozen = set().union(*(users[e] & free for e in tight))
        for m in free:
            rate[m] = rate.get(m, 0.0) + share
        for e in users:
            left[e] -= share * len(users[e] & free)
        free -= frozen
    return rate


def replay(flows, message_bytes, bandwidth, alpha, hop_latency, latency_at="start"):
    """Completion time of every message (list of floats)."""
    M = flows.n_messages
    links_of = [flows.r_links[flows.r_ptr[r]:flows.r_ptr[r + 1]].tolist() for r in flows.m_route.tolist()]
    hop_part = [h * hop_latency for h in flows.m_hops.tolist()]
    delay = [alpha + (x if latency_at == "start" else 0.0) for x in hop_part]
    tail = [x if latency_at == "end" else 0.0 for x in hop_part]
    tails = []  # heap of (time, message): flows done, their hop latency still running
    count = flows.e_count.tolist()
    ptr, succ = flows.e_ptr.tolist(), flows.e_succ.tolist()
    finish = [None] * M
    starts = []  # heap of (time, message)
    remaining = {}
    now = 0.0

    def release(events):
        stack = list(events)
        while stack:
            x = stack.pop()
            for s in succ[ptr[x]:ptr[x + 1]]:
                count[s] -= 1
                if count[s] == 0:
                    if s >= M:
                        stack.append(s)
                    else:
                        heapq.heappush(starts, (now + delay[s], s))

    release([e for e in range(len(count)) if count[e] == 0 and e >= M])
    for m in range(M):
        if count[m] == 0:
            heapq.heappush(starts, (delay[m], m))
    while starts or remaining or tails:
        rate = max_min_rates(list(remaining), links_of, bandwidth) if remaining else {}
        t_finish = min((remaining[m] / rate[m] for m in remaining), default=float("inf"))
        t_start = starts[0][0] - now if starts else float("inf")
        t_tail = tails[0][0] - now if tails else float("inf")
        dt = min(t_finish, t_start, t_tail)
        now += dt
        streamed = []
        for m in list(remaining):
            remaining[m] -= rate[m] * dt
            if remaining[m] <= 1e-9 * message_bytes[m]:
                streamed.append(m)
        for m in streamed:
            del remaining[m]
        while starts and starts[0][0] <= now * (1 + 1e-15):
            _, m = heapq.heappop(starts)
            if message_bytes[m] > 0:
                remaining[m] = float(message_bytes[m])
            else:
                streamed.append(m)
        for m in streamed:
            heapq.heappush(tails, (now + tail[m], m))
        done = []
        while tails and tails[0][0] <= now * (1 + 1e-15):
            _, m = heapq.heappop(tails)
            finish[m] = now
            done.append(m)
        release(done)
    return finish
