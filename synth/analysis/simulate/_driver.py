"""The SimGrid side of ``synth simulate``: replay a packed schedule as flows on SimGrid.

Run as ``/usr/bin/python3 _driver.py DIR SIZE_TAG`` by :func:`synth.analysis.simulate.run.run_driver`.
It imports only the standard library and ``simgrid`` (Debian's ``python3-simgrid`` imports
under the system interpreter only), never numpy or synth.  ``DIR`` holds ``meta.json`` and the
arrays written by :func:`synth.analysis.simulate.run.write_inputs`, raw little-endian int64
(``.q``) or float64 (``.d``) files; ``bytes-SIZE_TAG.q`` holds the bytes of every message for
this run.  It writes ``finish-SIZE_TAG.d`` (the completion time of every message) and
``result-SIZE_TAG.json``.  With ``$SYNTH_PROGRESS_SECONDS`` set it prints ``progress FLOWS CLOCK`` on
stderr about that often (the flows ended so far and the simulated clock; not the ``lists`` driver).

The platform: one SimGrid host per route *source* (a compute vertex, or an alias of it when
messages from one vertex to one destination take different routes: SimGrid routes by host pair)
and one per destination, in one Full zone whose routes are the schedule's own link lists; one
SimGrid link per directed link of the topology, SHARED, at the given bandwidth.  CM02 weights a
flow's share by its route latency (its ``sharing_penalty`` is the latency: TCP's RTT
unfairness, not max-min).  So when all routes have the same length, the links carry the
latency (``link_latency``: every flow has the same penalty and the shares are max-min);
otherwise links have **zero latency** (every flow has penalty 1: exact max-min) and the
latency of a message (``alpha + hops * L``) is paid before its flow starts, as a one-byte
transfer over a private FATPIPE link of that latency, one per batch of messages released at
the same instant with the same delay (CM02 pays latency the same way: a delay, then the
bandwidth phase).

Events: messages ``0..M-1`` and gates ``M..E-1``, each with a count of prerequisites and a
list of successors (CSR).  A message starts when its count reaches zero; a gate fires at once.
SimGrid actors start flows and wait with ``Comm.wait_any``, whose cost is linear in the length of
the list at every return (it registers on, then unregisters from, every comm of the list).  So
``meta["driver"]`` ``mailboxes`` (the default) and ``short-lists`` keep every list at most
``meta["wait_list"]`` long: workers, each an actor (an OS thread under the Python bindings'
thread contexts), take the flows they release while they have room and hand the rest to idle
workers through a semaphore, at the same simulated instant (:func:`_short_lists`).  They differ
in how a flow starts.  ``short-lists`` calls ``Comm.sendto_async``, whose comm SimGrid 3.32
*detaches*: it sits in one list of the maestro's (``ActorImpl::activities_``, a ``std::list``)
that ``CommImpl::finish`` walks to the end to remove it, so every finished flow costs time
linear in the flows in flight, whichever actor waits for it (60 to 95 % of the CPU from 16,000
concurrent flows on).  ``mailboxes`` puts to a permanent mailbox per destination host, whose
receiver is a daemon actor that stays on that host, blocked for good; the worker moves to the
source host first (``this_actor.set_host``, only when it changes).  SimGrid routes a mailbox comm
between the hosts of its two actors, so the flow takes the same route, and the comm is the
worker's own: nothing global to walk.  ``lists`` is the first driver, kept to measure against:
``meta["controllers"]`` actors, each waiting on every flow it started, so its lists grow with the
concurrent flows.
"""

import json
import os
import sys
import time
from array import array


def _read(directory, name, code, n):
    a = array(code)
    if n:
        with open(os.path.join(directory, name), "rb") as f:
            a.fromfile(f, n)
    if sys.byteorder != "little":
        a.byteswap()
    return a


def _short_lists(sg, engine, meta, M, initial, m_delay, m_bytes, m_route, r_src, r_dst, e_ptr, e_succ, count, finish,
                 hosts, clock, ticks):
    """Workers (SimGrid actors) that each wait with ``Comm.wait_any`` on at most ``wait_list`` comms.

    A *job* is one comm: a message's flow, or a timer (a one-byte transfer over a FATPIPE link whose
    latency is the delay) for the messages released at one instant with one delay; it starts as a put
    to its destination's mailbox (``mailboxes``) or a ``sendto_async`` (``short-lists``), the module
    docstring says why.  The worker that sees a comm end counts down its successors and takes the jobs
    they make ready while its list has room; the rest go, ``wait_list`` at a time, to idle workers
    (woken through their semaphore, at the same simulated instant) or to new ones, up to
    ``max_workers`` (each is an OS thread, and a process gets only so many); past that the lists grow.
    So each end costs ``O(wait_list)`` in SimGrid's wait while the concurrent flows number at most
    ``wait_list * max_workers``.  ``busy`` counts the jobs handed out and not done: when it reaches zero
    nothing can happen any more, and the idle workers are told to stop.
    """
    cap, most = max(1, int(meta["wait_list"])), max(1, int(meta["max_workers"]))
    sendto_async, wait_any = sg.Comm.sendto_async, sg.Comm.wait_any
    idle, state = [], {"busy": 0, "stop": False, "workers": 0}
    mailboxes = meta["driver"] == "mailboxes"
    set_host = sg.this_actor.set_host
    every, ends, last = float(os.environ.get("SYNTH_PROGRESS_SECONDS") or 0), [0], [time.perf_counter()]

    def report(now):
        """Every ``$SYNTH_PROGRESS_SECONDS`` of wall time (0: never), ``progress FLOWS CLOCK`` on stderr."""
        ends[0] += 1
        if every and not ends[0] & 1023 and time.perf_counter() - last[0] >= every:
            last[0] = time.perf_counter()
            print(f"progress {ends[0]} {now!r}", file=sys.stderr, flush=True)

    class Worker:
        __slots__ = ("comms", "tags", "inbox", "sem", "here")

        def __init__(self, inbox):
            self.comms, self.tags, self.inbox, self.sem, self.here = [], [], inbox, sg.Semaphore(0), clock

    def hold(sem):  # a mailbox's permanent receiver: a daemon on its host, blocked for good
        sem.acquire()

    def inbox_on(host, name):
        box, receiver = sg.Mailbox.by_name(name), sg.Actor.create(name, host, hold, sg.Semaphore(0))
        receiver.daemonize()  # killed when the last worker ends, whether it ever ran or not
        box.set_receiver(receiver)
        return box

    if mailboxes:  # one mailbox per destination, whose receiver stays on that host
        dests = set(r_dst)
        boxes = [inbox_on(h, f"d{i}") if i in dests else None for i, h in enumerate(hosts)]
        tick_boxes = [inbox_on(t, f"t{d}") for d, t in enumerate(ticks)]

    def ready_jobs(x, now):
        """Count down the successors of event ``x``: the jobs of the messages that become ready (flows
        ``m``, then one timer ``(d, [m, ...])`` per distinct delay); empty undelayed messages end now."""
        stack, jobs, waiting = [x], [], {}
        while stack:
            x = stack.pop()
            for k in range(e_ptr[x], e_ptr[x + 1]):
                s = e_succ[k]
                count[s] -= 1
                if count[s] == 0:
                    if s >= M:
                        stack.append(s)
                    elif m_delay[s] >= 0:
                        waiting.setdefault(m_delay[s], []).append(s)
                    elif m_bytes[s] > 0:
                        jobs.append(s)
                    else:  # SimGrid would never end a 0-byte flow: done when it starts
                        finish[s] = now
                        stack.append(s)
        jobs.extend((d, waiting[d]) for d in sorted(waiting))
        return jobs

    def begin(w, job):
        if mailboxes:  # a put from the worker's host to the destination's mailbox: the worker moves there first
            if isinstance(job, tuple):
                src, box, nbytes = clock, tick_boxes[job[0]], 1
            else:
                r = m_route[job]
                src, box, nbytes = hosts[r_src[r]], boxes[r_dst[r]], m_bytes[job]
            if w.here is not src:
                set_host(src)
                w.here = src
            w.comms.append(box.put_async(None, nbytes))
        elif isinstance(job, tuple):  # one byte over a link of 1e30 B/s: the latency, and 1e-30 s of transfer
            w.comms.append(sendto_async(clock, ticks[job[0]], 1))
        else:
            r = m_route[job]
            w.comms.append(sendto_async(hosts[r_src[r]], hosts[r_dst[r]], m_bytes[job]))
        w.tags.append(job)

    def hand_out(w, jobs):
        """Start ``jobs`` on ``w`` while its list has room; the rest go to idle or new workers."""
        state["busy"] += len(jobs)
        i = 0
        while i < len(jobs) and len(w.comms) < cap:
            begin(w, jobs[i])
            i += 1
        while i < len(jobs):
            part = jobs[i:i + cap]
            i += cap
            if idle:
                other = idle.pop()
                other.inbox = part
                other.sem.release()
            elif state["workers"] < most:
                state["workers"] += 1
                sg.Actor.create("w", clock, work, Worker(part))
            else:  # as many workers (OS threads) as allowed: this one's list grows past cap
                for job in part:
                    begin(w, job)

    def work(w):
        while True:
            if w.inbox:
                for job in w.inbox:
                    begin(w, job)
                w.inbox = []
            if not w.comms:
                if state["stop"]:
                    return
                idle.append(w)
                w.sem.acquire()
                continue
            i = wait_any(w.comms)
            job = w.tags[i]
            w.comms[i] = w.comms[-1]
            w.tags[i] = w.tags[-1]
            w.comms.pop()
            w.tags.pop()
            state["busy"] -= 1
            now = engine.clock
            if isinstance(job, tuple):  # a timer: its messages' flows start now (empty ones end now)
                jobs = []
                for m in job[1]:
                    if m_bytes[m] > 0:
                        jobs.append(m)
                    else:
                        finish[m] = now
                        jobs.extend(ready_jobs(m, now))
            else:
                finish[job] = now
                jobs = ready_jobs(job, now)
                report(now)
            if jobs:
                hand_out(w, jobs)
            if state["busy"] == 0:  # nothing in flight and nothing handed out: the end
                state["stop"] = True
                while idle:
                    idle.pop().sem.release()

    jobs, waiting = [], {}
    for e in initial:  # what needs nothing starts at time 0 (and a gate that needs nothing fires)
        if e >= M or (m_bytes[e] <= 0 and m_delay[e] < 0):
            jobs.extend(ready_jobs(e, 0.0))
        elif m_delay[e] >= 0:
            waiting.setdefault(m_delay[e], []).append(e)
        else:
            jobs.append(e)
    jobs.extend((d, waiting[d]) for d in sorted(waiting))
    state["busy"] = len(jobs)
    per = max(cap, -(-len(jobs) // most))  # at most ``most`` workers, even at time 0
    for i in range(0, len(jobs), per):
        state["workers"] += 1
        sg.Actor.create("w", clock, work, Worker(jobs[i:i + per]))


def _wait_lists(sg, engine, meta, M, initial_events, m_owner, m_delay, m_bytes, m_route, r_src, r_dst, e_ptr,
                e_succ, count, finish, hosts, clock, ticks):
    """The first driver (``meta["driver"] == "lists"``), kept to measure against: ``controllers`` actors
    that each wait with ``Comm.wait_any`` on every flow they started, a cost linear in the list per end;
    a batch of messages released at one instant with one delay waits for a one-byte timer transfer."""
    n_ctl = max(1, min(meta["controllers"], M))
    pending = [([], []) for _ in range(n_ctl)]  # per controller: comms, and tags (m: m's flow; a list: a timer)

    def start_flow(m, comms, tags, now):
        if m_bytes[m] <= 0:  # an empty message is done when it starts (SimGrid would never end a 0-byte flow)
            finish[m] = now
            release([m], comms, tags, now)
            return
        r = m_route[m]
        comms.append(sg.Comm.sendto_async(hosts[r_src[r]], hosts[r_dst[r]], m_bytes[m]))
        tags.append(m)

    def start(ready, comms, tags, now):
        """Start the messages ``ready``: one timer per distinct delay, then their flows."""
        waiting = {}
        for m in ready:
            d = m_delay[m]
            if d >= 0:
                waiting.setdefault(d, []).append(m)
            else:
                start_flow(m, comms, tags, now)
        for d in sorted(waiting):  # one byte over a link of 1e30 B/s: the latency, and 1e-30 s of transfer
            comms.append(sg.Comm.sendto_async(clock, ticks[d], 1))
            tags.append(waiting[d])

    def release(done, comms, tags, now):
        """Count down the successors of the events ``done``; start the messages that become ready."""
        stack, ready = list(done), []
        while stack:
            x = stack.pop()
            for k in range(e_ptr[x], e_ptr[x + 1]):
                s = e_succ[k]
                count[s] -= 1
                if count[s] == 0:
                    if s >= M:
                        stack.append(s)
                    else:
                        ready.append(s)
        if ready:
            start(ready, comms, tags, now)

    initial = [[] for _ in range(n_ctl)]
    for e in initial_events:
        initial[0 if e >= M else m_owner[e] % n_ctl].append(e)

    def controller(c):
        comms, tags = pending[c]
        # what needs nothing starts at time 0 (and a gate that needs nothing fires)
        release([e for e in initial[c] if e >= M], comms, tags, 0.0)
        start([e for e in initial[c] if e < M], comms, tags, 0.0)
        while comms:
            i = sg.Comm.wait_any(comms)
            tag = tags[i]
            comms[i] = comms[-1]
            tags[i] = tags[-1]
            comms.pop()
            tags.pop()
            now = engine.clock
            if isinstance(tag, list):  # a timer: its messages' flows start now
                for m in tag:
                    start_flow(m, comms, tags, now)
            else:
                finish[tag] = now
                release([tag], comms, tags, now)

    for c in range(n_ctl):
        if initial[c]:
            sg.Actor.create(f"ctl{c}", clock, controller, c)


def main(directory, tag):
    import simgrid as sg  # the optional dependency, present only under the system interpreter

    with open(os.path.join(directory, "meta.json")) as f:
        meta = json.load(f)
    M, E, R = meta["n_messages"], meta["n_events"], meta["n_routes"]
    n_hosts, n_links = meta["n_hosts"], meta["n_links"]
    m_route = _read(directory, "m_route.q", "q", M)
    m_delay = _read(directory, "m_delay.q", "q", M)
    m_owner = _read(directory, "m_owner.q", "q", M)
    m_bytes = _read(directory, f"bytes-{tag}.q", "q", M)
    r_src = _read(directory, "r_src.q", "q", R)
    r_dst = _read(directory, "r_dst.q", "q", R)
    r_ptr = _read(directory, "r_ptr.q", "q", R + 1)
    r_links = _read(directory, "r_links.q", "q", r_ptr[R] if R else 0)
    e_count = _read(directory, "e_count.q", "q", E)
    e_ptr = _read(directory, "e_ptr.q", "q", E + 1)
    e_succ = _read(directory, "e_succ.q", "q", e_ptr[E] if E else 0)
    delays = meta["delays"]

    engine = sg.Engine(["synth-simulate", "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
                        "--cfg=network/TCP-gamma:0", "--cfg=network/weight-S:0", "--cfg=network/latency-factor:1",
                        "--cfg=network/bandwidth-factor:1", f"--cfg=surf/precision:{meta['precision_timing']}",
                        "--log=root.thres:critical"])
    t0 = time.perf_counter()
    zone = sg.NetZone.create_full_zone("synth")
    hosts = [zone.create_host(f"h{i}", 1e9) for i in range(n_hosts)]
    links = []
    for i in range(n_links):
        link = zone.create_link(f"l{i}", meta["bandwidth"])
        link.set_latency(meta["link_latency"])
        link.seal()
        links.append(sg.LinkInRoute(link))
    for r in range(R):
        zone.add_route(hosts[r_src[r]].netpoint, hosts[r_dst[r]].netpoint, None, None,
                       [links[k] for k in r_links[r_ptr[r]:r_ptr[r + 1]]], False)
    # timers: a one-byte transfer from clock host to clock host d, over a FATPIPE link of latency delays[d]
    clock = zone.create_host("clock", 1e9)
    ticks = []
    for d, latency in enumerate(delays):
        target = zone.create_host(f"tick{d}", 1e9)
        link = zone.create_link(f"t{d}", 1e30)
        link.set_latency(latency)
        link.set_sharing_policy(sg.Link.SharingPolicy.FATPIPE, None)
        link.seal()
        zone.add_route(clock.netpoint, target.netpoint, None, None, [sg.LinkInRoute(link)], False)
        ticks.append(target)
    zone.seal()
    setup_s = time.perf_counter() - t0

    finish = array("d", [0.0]) * M
    count = array("q", e_count)
    initial = [e for e in range(E) if e_count[e] == 0]
    if meta["driver"] in ("short-lists", "mailboxes"):
        _short_lists(sg, engine, meta, M, initial, m_delay, m_bytes, m_route, r_src, r_dst, e_ptr, e_succ, count,
                     finish, hosts, clock, ticks)
    else:
        _wait_lists(sg, engine, meta, M, initial, m_owner, m_delay, m_bytes, m_route, r_src, r_dst, e_ptr, e_succ,
                    count, finish, hosts, clock, ticks)
    t1, c1 = time.perf_counter(), time.process_time()
    engine.run()
    run_s, run_cpu = time.perf_counter() - t1, time.process_time() - c1
    left = sum(1 for e in range(E) if count[e] > 0)
    with open(os.path.join(directory, f"finish-{tag}.d"), "wb") as f:
        out = array("d", finish)
        if sys.byteorder != "little":
            out.byteswap()
        out.tofile(f)
    result = {"time": max(finish) if M else 0.0, "n_messages": M, "setup_seconds": setup_s, "run_seconds": run_s,
              "run_cpu_seconds": run_cpu, "unfinished_events": left, "simgrid": sg.simgrid_version}
    with open(os.path.join(directory, f"result-{tag}.json"), "w") as f:
        json.dump(result, f)
    return 0 if left == 0 else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
