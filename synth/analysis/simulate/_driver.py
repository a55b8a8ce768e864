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
SimGrid link per directed link of the topology, SHARED, at its own bandwidth (``l_bandwidth.d``,
bytes/s).  CM02 weights a flow's share by its route latency (its ``sharing_penalty`` is the latency: TCP's RTT
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
workers through a semaphore, at the same simulated instant (:class:`_ShortLists`).  They differ
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


class _Replay:
    """What a driver replays: the messages, routes and events (arrays read from ``DIR``), the countdown
    ``count`` and the ``finish`` times it fills, and the SimGrid ``hosts``, ``clock`` and ``ticks``."""

    def __init__(self, directory, tag, meta):
        M, E, R = meta["n_messages"], meta["n_events"], meta["n_routes"]
        self.M = M
        self.m_route = _read(directory, "m_route.q", "q", M)
        self.m_delay = _read(directory, "m_delay.q", "q", M)
        self.m_owner = _read(directory, "m_owner.q", "q", M)
        self.m_bytes = _read(directory, f"bytes-{tag}.q", "q", M)
        self.r_src = _read(directory, "r_src.q", "q", R)
        self.r_dst = _read(directory, "r_dst.q", "q", R)
        self.r_ptr = _read(directory, "r_ptr.q", "q", R + 1)
        self.r_links = _read(directory, "r_links.q", "q", self.r_ptr[R] if R else 0)
        self.e_count = _read(directory, "e_count.q", "q", E)
        self.e_ptr = _read(directory, "e_ptr.q", "q", E + 1)
        self.e_succ = _read(directory, "e_succ.q", "q", self.e_ptr[E] if E else 0)
        self.l_bandwidth = _read(directory, "l_bandwidth.d", "d", meta["n_links"])
        self.count = array("q", self.e_count)
        self.finish = array("d", [0.0]) * M
        self.hosts, self.clock, self.ticks = [], None, []


class _Worker:
    __slots__ = ("comms", "tags", "inbox", "sem", "here")

    def __init__(self, sg, inbox, here):
        self.comms, self.tags, self.inbox, self.sem, self.here = [], [], inbox, sg.Semaphore(0), here


def _hold(sem):  # a mailbox's permanent receiver: a daemon on its host, blocked for good
    sem.acquire()


class _ShortLists:
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

    def __init__(self, sg, engine, meta, rp):
        self.sg, self.engine, self.rp = sg, engine, rp
        self.cap, self.most = max(1, int(meta["wait_list"])), max(1, int(meta["max_workers"]))
        self.idle, self.busy, self.stop, self.workers = [], 0, False, 0
        self.mailboxes = meta["driver"] == "mailboxes"
        self.every = float(os.environ.get("SYNTH_PROGRESS_SECONDS") or 0)
        self.ends, self.last = 0, time.perf_counter()
        if self.mailboxes:  # one mailbox per destination, whose receiver stays on that host
            dests = set(rp.r_dst)
            self.boxes = [self.inbox_on(h, f"d{i}") if i in dests else None for i, h in enumerate(rp.hosts)]
            self.tick_boxes = [self.inbox_on(t, f"t{d}") for d, t in enumerate(rp.ticks)]

    def report(self, now):
        """Every ``$SYNTH_PROGRESS_SECONDS`` of wall time (0: never), ``progress FLOWS CLOCK`` on stderr."""
        self.ends += 1
        if self.every and not self.ends & 1023 and time.perf_counter() - self.last >= self.every:
            self.last = time.perf_counter()
            print(f"progress {self.ends} {now!r}", file=sys.stderr, flush=True)

    def inbox_on(self, host, name):
        sg = self.sg
        box, receiver = sg.Mailbox.by_name(name), sg.Actor.create(name, host, _hold, sg.Semaphore(0))
        receiver.daemonize()  # killed when the last worker ends, whether it ever ran or not
        box.set_receiver(receiver)
        return box

    def ready_jobs(self, x, now):
        """Count down the successors of event ``x``: the jobs of the messages that become ready (flows
        ``m``, then one timer ``(d, [m, ...])`` per distinct delay); empty undelayed messages end now."""
        rp = self.rp
        M, e_ptr, e_succ, count, m_delay, m_bytes = rp.M, rp.e_ptr, rp.e_succ, rp.count, rp.m_delay, rp.m_bytes
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
                        rp.finish[s] = now
                        stack.append(s)
        jobs.extend((d, waiting[d]) for d in sorted(waiting))
        return jobs

    def begin(self, w, job):
        rp = self.rp
        if self.mailboxes:  # a put from the worker's host to the destination's mailbox: the worker moves there first
            if isinstance(job, tuple):
                src, box, nbytes = rp.clock, self.tick_boxes[job[0]], 1
            else:
                r = rp.m_route[job]
                src, box, nbytes = rp.hosts[rp.r_src[r]], self.boxes[rp.r_dst[r]], rp.m_bytes[job]
            if w.here is not src:
                self.sg.this_actor.set_host(src)
                w.here = src
            w.comms.append(box.put_async(None, nbytes))
        elif isinstance(job, tuple):  # one byte over a link of 1e30 B/s: the latency, and 1e-30 s of transfer
            w.comms.append(self.sg.Comm.sendto_async(rp.clock, rp.ticks[job[0]], 1))
        else:
            r = rp.m_route[job]
            w.comms.append(self.sg.Comm.sendto_async(rp.hosts[rp.r_src[r]], rp.hosts[rp.r_dst[r]], rp.m_bytes[job]))
        w.tags.append(job)

    def hand_out(self, w, jobs):
        """Start ``jobs`` on ``w`` while its list has room; the rest go to idle or new workers."""
        cap = self.cap
        self.busy += len(jobs)
        i = 0
        while i < len(jobs) and len(w.comms) < cap:
            self.begin(w, jobs[i])
            i += 1
        while i < len(jobs):
            part = jobs[i:i + cap]
            i += cap
            if self.idle:
                other = self.idle.pop()
                other.inbox = part
                other.sem.release()
            elif self.workers < self.most:
                self.spawn(part)
            else:  # as many workers (OS threads) as allowed: this one's list grows past cap
                for job in part:
                    self.begin(w, job)

    def spawn(self, jobs):
        self.workers += 1
        self.sg.Actor.create("w", self.rp.clock, self.work, _Worker(self.sg, jobs, self.rp.clock))

    def ended(self, job):
        """The jobs that the end of ``job`` (a flow, or a timer whose messages' flows start now) makes ready."""
        rp, now = self.rp, self.engine.clock
        if not isinstance(job, tuple):
            rp.finish[job] = now
            jobs = self.ready_jobs(job, now)
            self.report(now)
            return jobs
        jobs = []
        for m in job[1]:  # empty messages end now
            if rp.m_bytes[m] > 0:
                jobs.append(m)
            else:
                rp.finish[m] = now
                jobs.extend(self.ready_jobs(m, now))
        return jobs

    def work(self, w):
        while True:
            if w.inbox:
                for job in w.inbox:
                    self.begin(w, job)
                w.inbox = []
            if not w.comms:
                if self.stop:
                    return
                self.idle.append(w)
                w.sem.acquire()
                continue
            i = self.sg.Comm.wait_any(w.comms)
            job = w.tags[i]
            w.comms[i] = w.comms[-1]
            w.tags[i] = w.tags[-1]
            w.comms.pop()
            w.tags.pop()
            self.busy -= 1
            jobs = self.ended(job)
            if jobs:
                self.hand_out(w, jobs)
            if self.busy == 0:  # nothing in flight and nothing handed out: the end
                self.stop = True
                while self.idle:
                    self.idle.pop().sem.release()

    def start(self, initial):
        """What needs nothing starts at time 0 (and a gate that needs nothing fires)."""
        rp = self.rp
        jobs, waiting = [], {}
        for e in initial:
            if e >= rp.M or (rp.m_bytes[e] <= 0 and rp.m_delay[e] < 0):
                jobs.extend(self.ready_jobs(e, 0.0))
            elif rp.m_delay[e] >= 0:
                waiting.setdefault(rp.m_delay[e], []).append(e)
            else:
                jobs.append(e)
        jobs.extend((d, waiting[d]) for d in sorted(waiting))
        self.busy = len(jobs)
        per = max(self.cap, -(-len(jobs) // self.most))  # at most ``most`` workers, even at time 0
        for i in range(0, len(jobs), per):
            self.spawn(jobs[i:i + per])


class _WaitLists:
    """The first driver (``meta["driver"] == "lists"``), kept to measure against: ``controllers`` actors
    that each wait with ``Comm.wait_any`` on every flow they started, a cost linear in the list per end;
    a batch of messages released at one instant with one delay waits for a one-byte timer transfer."""

    def __init__(self, sg, engine, meta, rp):
        self.sg, self.engine, self.rp = sg, engine, rp
        self.n_ctl = max(1, min(meta["controllers"], rp.M))

    def start_flow(self, m, comms, tags, now):
        rp = self.rp
        if rp.m_bytes[m] <= 0:  # an empty message is done when it starts (SimGrid would never end a 0-byte flow)
            rp.finish[m] = now
            self.release([m], comms, tags, now)
            return
        r = rp.m_route[m]
        comms.append(self.sg.Comm.sendto_async(rp.hosts[rp.r_src[r]], rp.hosts[rp.r_dst[r]], rp.m_bytes[m]))
        tags.append(m)

    def start(self, ready, comms, tags, now):
        """Start the messages ``ready``: one timer per distinct delay, then their flows."""
        waiting = {}
        for m in ready:
            d = self.rp.m_delay[m]
            if d >= 0:
                waiting.setdefault(d, []).append(m)
            else:
                self.start_flow(m, comms, tags, now)
        for d in sorted(waiting):  # one byte over a link of 1e30 B/s: the latency, and 1e-30 s of transfer
            comms.append(self.sg.Comm.sendto_async(self.rp.clock, self.rp.ticks[d], 1))
            tags.append(waiting[d])

    def release(self, done, comms, tags, now):
        """Count down the successors of the events ``done``; start the messages that become ready."""
        rp = self.rp
        stack, ready = list(done), []
        while stack:
            x = stack.pop()
            for k in range(rp.e_ptr[x], rp.e_ptr[x + 1]):
                s = rp.e_succ[k]
                rp.count[s] -= 1
                if rp.count[s] == 0:
                    if s >= rp.M:
                        stack.append(s)
                    else:
                        ready.append(s)
        if ready:
            self.start(ready, comms, tags, now)

    def controller(self, initial):
        comms, tags = [], []  # tags: m for m's flow, a list for a timer
        # what needs nothing starts at time 0 (and a gate that needs nothing fires)
        self.release([e for e in initial if e >= self.rp.M], comms, tags, 0.0)
        self.start([e for e in initial if e < self.rp.M], comms, tags, 0.0)
        while comms:
            i = self.sg.Comm.wait_any(comms)
            tag = tags[i]
            comms[i] = comms[-1]
            tags[i] = tags[-1]
            comms.pop()
            tags.pop()
            now = self.engine.clock
            if isinstance(tag, list):  # a timer: its messages' flows start now
                for m in tag:
                    self.start_flow(m, comms, tags, now)
            else:
                self.rp.finish[tag] = now
                self.release([tag], comms, tags, now)

    def begin(self, initial_events):
        initial = [[] for _ in range(self.n_ctl)]
        for e in initial_events:
            initial[0 if e >= self.rp.M else self.rp.m_owner[e] % self.n_ctl].append(e)
        for c in range(self.n_ctl):
            if initial[c]:
                self.sg.Actor.create(f"ctl{c}", self.rp.clock, self.controller, initial[c])


def _platform(sg, meta, rp):
    """The SimGrid zone: a host per route end, a SHARED link per topology link, the schedule's routes,
    and the timers (a one-byte transfer from clock host to clock host d, over a FATPIPE link of latency
    ``delays[d]``); fills ``rp.hosts``, ``rp.clock`` and ``rp.ticks``."""
    zone = sg.NetZone.create_full_zone("synth")
    rp.hosts = [zone.create_host(f"h{i}", 1e9) for i in range(meta["n_hosts"])]
    links = []
    for i in range(meta["n_links"]):
        link = zone.create_link(f"l{i}", rp.l_bandwidth[i])
        link.set_latency(meta["link_latency"])
        link.seal()
        links.append(sg.LinkInRoute(link))
    for r in range(meta["n_routes"]):
        zone.add_route(rp.hosts[rp.r_src[r]].netpoint, rp.hosts[rp.r_dst[r]].netpoint, None, None,
                       [links[k] for k in rp.r_links[rp.r_ptr[r]:rp.r_ptr[r + 1]]], False)
    rp.clock = zone.create_host("clock", 1e9)
    for d, latency in enumerate(meta["delays"]):
        target = zone.create_host(f"tick{d}", 1e9)
        link = zone.create_link(f"t{d}", 1e30)
        link.set_latency(latency)
        link.set_sharing_policy(sg.Link.SharingPolicy.FATPIPE, None)
        link.seal()
        zone.add_route(rp.clock.netpoint, target.netpoint, None, None, [sg.LinkInRoute(link)], False)
        rp.ticks.append(target)
    zone.seal()


def main(directory, tag):
    import simgrid as sg  # the optional dependency, present only under the system interpreter

    with open(os.path.join(directory, "meta.json")) as f:
        meta = json.load(f)
    rp = _Replay(directory, tag, meta)
    M, E = meta["n_messages"], meta["n_events"]
    engine = sg.Engine(["synth-simulate", "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
                        "--cfg=network/TCP-gamma:0", "--cfg=network/weight-S:0", "--cfg=network/latency-factor:1",
                        "--cfg=network/bandwidth-factor:1", f"--cfg=surf/precision:{meta['precision_timing']}",
                        "--log=root.thres:critical"])
    t0 = time.perf_counter()
    _platform(sg, meta, rp)
    setup_s = time.perf_counter() - t0
    initial = [e for e in range(E) if rp.e_count[e] == 0]
    if meta["driver"] in ("short-lists", "mailboxes"):
        _ShortLists(sg, engine, meta, rp).start(initial)
    else:
        _WaitLists(sg, engine, meta, rp).begin(initial)
    t1, c1 = time.perf_counter(), time.process_time()
    engine.run()
    run_s, run_cpu = time.perf_counter() - t1, time.process_time() - c1
    left = sum(1 for e in range(E) if rp.count[e] > 0)
    with open(os.path.join(directory, f"finish-{tag}.d"), "wb") as f:
        out = array("d", rp.finish)
        if sys.byteorder != "little":
            out.byteswap()
        out.tofile(f)
    result = {"time": max(rp.finish) if M else 0.0, "n_messages": M, "setup_seconds": setup_s, "run_seconds": run_s,
              "run_cpu_seconds": run_cpu, "unfinished_events": left, "simgrid": sg.simgrid_version}
    with open(os.path.join(directory, f"result-{tag}.json"), "w") as f:
        json.dump(result, f)
    return 0 if left == 0 else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
