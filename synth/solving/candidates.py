"""Choose a schedule by message size where no Γ lifts k-hop trees: damaged networks, meshes, lattices, user graphs.

``synth solve --size S`` on an equal-sided healthy torus sweeps the depth bounds of lifted k-hop trees
(:mod:`synth.solving.by_size`).  Everywhere else :func:`plan_by_size` lists the candidates, and
:func:`build_by_size` builds and certifies each, times it at ``S`` (the cost model, or a SimGrid replay)
and keeps the fastest:

* ``default``: what a solve without ``size`` builds, where that is not the packing model itself (the
  lifted shortest-path tree of a grid, SP-allreduce on a twisted torus, a balanced family, ...);
* ``layered``: the packing model's layered trees, ``2H`` rounds (:mod:`synth.solving.packing`);
* ``timed R=...``: timed trees with ``R = H ... H + 4`` reduce rounds (``2R`` rounds; the packing path's
  ``depth`` ``R``), each kept only where it beats the layered LP's schedule by the bandwidth bound (else
  that candidate's schedule is the layered one); an ``R`` whose master LP would exceed the row limit is
  left out, with the reason;
* ``depth K=...``: the depth-bounded packing, ``K = H // 2`` (arcs of up to ``ceil(H / K)`` hops);
* ``ring``: the Ring baseline on a Hamiltonian cycle (:func:`synth.baselines.build_baseline`), certified
  as an explicit schedule under the trivial group; on links of unequal bandwidth (GPU servers, TPU slices)
  the baselines GPU users run instead, each where it applies: ``nccl-ring``, ``nccl-tree`` and
  ``hierarchical`` (:mod:`synth.baselines.gpu`).

Where switches only forward (GPU servers), the packing model's trees are routed
(:mod:`synth.models.packing.routed`): the ``routed`` candidate stands for ``layered`` (``2H`` rounds, ``H``
the compute hops), there is no depth-bounded candidate, and the timed candidates also include the ``R`` a
solve without ``size`` takes (more rounds where links differ in bandwidth).

A timed candidate is not built when its ``2R`` rounds alone, at ``alpha`` each, plus the certified
bandwidth bound at ``S`` already take as long as the best candidate built before it (by the cost
model): no schedule of ``2R`` rounds could win, and its share of the time goes to those after it.

The candidates share ``time_limit``, in CPU seconds of this process as the LPs count them: each solve gets
the time left over the solving candidates left (a timed candidate's two LPs, the layered one and the master,
half of that each), so the whole choice takes about ``time_limit`` CPU seconds (more wall time on a busy
machine).  A candidate that fails, or that the time left cannot
reach, is left out with the reason.  The choice, every candidate's modeled (or simulated) time at ``S``
and why the pick was made go into the notes and the certificate's ``provenance["size_choice"]``.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.topology.failures import damage, parse_failures
>>> from synth.solving.request import SolveRequest
>>> t = parse_torus("4x4"); d = damage(t, parse_failures(t, links=["0-1"]))
>>> from synth.solving.planning import plan
>>> p = plan(SolveRequest(d, size=1 << 20, time_limit=20))
>>> p.construction, [c.name for c in p.prepared.candidates]
('by-size', ['ring', 'layered', 'depth K=2', 'timed R=4', 'timed R=5', 'timed R=6', 'timed R=7', 'timed R=8'])
>>> r = p.build(SolveRequest(d, size=1 << 20, time_limit=20), p)
>>> choice = r.certificate.provenance["size_choice"]
>>> choice["chosen"], choice["size"], len(choice["candidates"])
('timed R=4', 1048576, 8)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

from synth.analysis.cost import Network, goodput_bound, lifted_metrics, message_elements, model_time, sized_metrics
from synth.check.claims import certify
from synth.errors import OptionError, SynthError
from synth.schedule.lift import lift, lifted_weights
from synth.solving.packing import PackingPrep, certified_fraction, plan_packing
from synth.solving.request import OPTIONS, Plan, SolveRequest, SolveResult
from synth.solving.rounds import timed_rounds
from synth.symmetry.residual import trivial_group
from synth.units import format_size

__all__ = ["Candidate", "SizePrep", "plan_by_size", "build_by_size", "build_candidates", "takes_candidates",
           "without_size", "RING_MAX_TRANSMISSIONS", "MIN_SHARE", "EXTRA_ROUNDS", "GPU_BASELINES"]

#: the Ring is certified explicitly: beyond this many transmissions (2 directions x 2(p-1) rounds x p) it is left out
RING_MAX_TRANSMISSIONS = 2_000_000
#: seconds below which a solving candidate's share of the time limit is too little to start it
MIN_SHARE = 0.1
#: the timed candidates' reduce rounds run from H to H + EXTRA_ROUNDS
EXTRA_ROUNDS = 4
#: the plans that are the packing model itself (their network gets no separate ``default`` candidate)
_PACKING = ("timed-packing", "layered-packing")
#: the provenance algorithm a candidate kind adds to those of the default and packing plans
_KIND_ALGORITHM = {"depth": "depth-bounded-packing"}
#: the baselines GPU users run, candidates on links of unequal bandwidth where each applies
GPU_BASELINES = ("nccl-ring", "nccl-tree", "hierarchical")


@dataclass(frozen=True)
class Candidate:
    """One candidate of :func:`plan_by_size`: its ``name``, ``kind`` (``default``, ``layered`` (the routed trees
    too), ``timed``, ``depth``, ``baseline``: the Ring or a GPU baseline), the ``depth`` its packing plan takes (timed: R; depth-bounded: K) and the rounds
    it will have (a text: ``"2R = 10"``); ``solves``: a solver runs (it takes a share of the time limit)."""

    name: str
    kind: str
    depth: int | None
    rounds: str
    solves: bool = True   # a solver runs: the candidate takes a share of the time limit


@dataclass(frozen=True, eq=False)
class SizePrep:
    """What :func:`plan_by_size` decided: the size, the engine, the candidates, those left out (notes), the
    default plan and the packing plan they derive from, the packing model's group and reason."""

    nbytes: int
    engine: str
    candidates: tuple
    left_out: tuple
    default: Plan
    packing: Plan | None
    group: object
    reason: str


def takes_candidates(topology) -> bool:
    """Whether ``size`` on ``topology`` ranks these candidates (not an equal-sided healthy torus: its depth sweep)."""
    return not getattr(topology, "is_equal_sided", False)


def without_size(req, **changes) -> SolveRequest:
    """``req`` with ``size`` dropped (and ``changes`` made): the request one candidate is built from, with the
    message's ``elements`` (unless given): a packing schedule then rounds to as many units as they fill
    (:func:`~synth.solving.packing.units`), where its default units would leave chunks empty at a small size."""
    values = {name: getattr(req, name) for name in OPTIONS}
    n = 0 if req.size is None else message_elements(req.size, Network().element_bytes, req.topology.n_compute,
                                                     req.collective)
    if values["elements"] is None and n > 0:     # (a size under one element is refused by its plan)
        values["elements"] = n
    return SolveRequest(req.topology, **{**values, "size": None, "engine": "model", **changes})


def plan_by_size(req, default) -> Plan:
    """The plan of ``size`` on a network without Γ (module docstring): the candidates and what is left out;
    ``default`` is the plan of the same request without ``size`` (:func:`synth.solving.planning.plan`)."""
    t = req.topology
    if req.size < Network().element_bytes:
        raise OptionError(f"size {req.size} bytes is smaller than one element of {Network().element_bytes} bytes")
    if not takes_candidates(t):
        raise OptionError(f"size on {t.name}: the depth sweep of an equal-sided torus chooses "
                          "(synth.solving.by_size.choose_by_size)")
    packing, group, reason, left_out = None, None, default.reason, []
    if default.construction in _PACKING and isinstance(default.prepared, PackingPrep):
        packing, group, reason = default, default.group, default.prepared.reason
    else:   # a user graph's packing plan comes wrapped with its refusal: planned here again, as the default's
        try:
            what = default.reason if default.construction in _PACKING else f"{t.name}: the packing model"
            packing = plan_packing(without_size(req), t, default.group if default.construction in _PACKING else None,
                                   what, req.time_limit, None)
            group, reason = packing.group, packing.prepared.reason
        except SynthError as exc:
            left_out.append(f"the packing candidates: {exc}")
    cands = []
    if default.construction not in _PACKING:
        cands.append(Candidate("default", "default", None, default.construction, default.solves))
    cands += _baselines(t, left_out)
    if packing is not None:
        cands += _packing_candidates(packing, group, left_out)
    if not cands:
        raise SynthError(f"size on {t.name}: no candidate to build ({'; '.join(left_out)})")
    prep = SizePrep(req.size, req.engine, tuple(cands), tuple(left_out), default, packing, group, reason)
    notes = [f"candidates at {format_size(req.size)}: " + ", ".join(
                 f"{c.name} ({c.rounds}, as a solve without `size` builds)" if c.kind == "default" else
                 f"{c.name} ({c.rounds} rounds)" for c in cands),
             f"they share `time_limit` {req.time_limit:g} s (CPU seconds): each solve gets the time left over the solving "
             "candidates left (a timed candidate's layered LP and master LP half of it each); the one of least "
             + ("modeled time (cost model)" if req.engine == "model" else "simulated time (SimGrid replay)")
             + " is kept", *left_out]
    algorithms = tuple(dict.fromkeys([a for p in (default, packing) if p is not None for a in p.algorithms]
                                     + [_KIND_ALGORITHM.get(c.kind, c.name) for c in cands
                                        if c.kind in _KIND_ALGORITHM or c.kind == "baseline"]))
    return Plan("by-size", f"{t.name}: no Γ lifts k-hop trees here; {len(cands)} candidates ranked at "
                f"{format_size(req.size)}", default.group_name if packing is None else packing.group_name,
                algorithms, build_by_size,
                default.group if packing is None else packing.group, solves=True, time_limit=req.time_limit,
                notes=tuple(notes), prepared=prep)


def _baselines(t, left_out) -> list:
    """The baseline candidates (module docstring): the Ring, or on links of unequal bandwidth the GPU baselines
    that apply to ``t``; none (with the reason in ``left_out``) when too large to certify here."""
    if t.has_bandwidths:
        from synth.baselines import build_baseline   # the registry loads every baseline: on demand

        out = []
        for name in GPU_BASELINES:
            try:
                b = build_baseline(name, t)
            except SynthError as exc:
                left_out.append(f"{name}: {' '.join(str(exc).split())[:160]}")
                continue
            n = b.schedule.n_transmissions
            if n > RING_MAX_TRANSMISSIONS:
                left_out.append(f"{name}: {n:,} transmissions to certify (more than {RING_MAX_TRANSMISSIONS:,})")
                continue
            out.append(Candidate(name, "baseline", None, f"{b.schedule.n_rounds}", False))
        return out
    p = t.n_compute
    n = 4 * (p - 1) * p
    if n > RING_MAX_TRANSMISSIONS:
        left_out.append(f"ring: {n:,} transmissions to certify (more than {RING_MAX_TRANSMISSIONS:,})")
        return []
    return [Candidate("ring", "baseline", None, f"2(p-1) = {2 * (p - 1)}", False)]


def _packing_candidates(packing, group, left_out) -> list:
    """The layered (routed), depth-bounded and timed candidates of the packing plan ``packing`` (module
    docstring)."""
    from synth.models.packing.master import rows_per_round   # the models load with the solvers, on demand

    prep = packing.prepared
    routed = hasattr(prep.data, "H_up")
    H = prep.data.H_up if routed else prep.data.H
    per_round = rows_per_round(prep.topology, group)
    out = [Candidate("routed" if routed else "layered", "layered", None, f"2H = {2 * H}")]
    K = H // 2
    if 1 <= K < H and not routed:
        out.append(Candidate(f"depth K={K}", "depth", K, f"2 x levels = {2 * math.ceil(H / math.ceil(H / K))}"))
    rounds = list(range(H, H + EXTRA_ROUNDS + 1))
    if prep.R is not None and prep.R not in rounds:   # the default's R (more rounds on unequal links)
        rounds.append(prep.R)
    for R in rounds:
        if packing.construction != "timed-packing" or timed_rounds(H, R, per_round)[1] is not None:
            left_out.append(f"timed R={R}: its master LP would have {R * per_round:,} load rows, more than the "
                            "packing path takes")
            continue
        out.append(Candidate(f"timed R={R}", "timed", R, f"2R = {2 * R}"))
    return out


@dataclass(frozen=True)
class Built:
    """A candidate as built: its certified result, or None and why it was left out."""

    candidate: Candidate
    result: SolveResult | None
    why: str = ""
    seconds: float = 0.0   # wall seconds its build took


def build_candidates(req, plan, baselines=True, skip=None):
    """Build the candidates of ``plan`` (:func:`plan_by_size`) within the shared time limit, yielding each as built
    (:class:`Built`); ``baselines=False`` leaves the baselines out (``synth compare`` lists them itself); ``skip(cand)``,
    if given, is asked before each build and returns why not to build it (or None)."""
    prep = plan.prepared
    cands = [c for c in prep.candidates if baselines or c.kind != "baseline"]
    deadline = time.process_time() + req.time_limit   # CPU seconds of the solves, as the LPs count them
    shared = {}   # the layered LP, solved once for the layered and the timed candidates (same network)
    for i, cand in enumerate(cands):
        why = skip(cand) if skip is not None else None
        if why:
            yield Built(cand, None, why)
            continue
        left = sum(c.solves and not (skip is not None and skip(c)) for c in cands[i:])
        share = (deadline - time.process_time()) / max(left, 1)
        if cand.kind == "layered":   # the timed candidates start from its LP: it takes their halves for it too
            share = min(share * (1 + sum(c.kind == "timed" for c in cands[i + 1:]) / 2),
                        deadline - time.process_time())
        if cand.solves and share < MIN_SHARE:
            yield Built(cand, None, f"not built: {max(deadline - time.process_time(), 0):.1f} CPU s of the time "
                                    f"limit left for {left} solving candidate(s)")
            continue
        req.say(f"size candidate {cand.name} ({i + 1} of {len(cands)})"
                + (f", up to {share:.1f} s" if cand.solves else ""))
        start, cpu = time.monotonic(), time.process_time()
        try:
            built = Built(cand, _build_one(req, prep, cand, share, shared), seconds=time.monotonic() - start)
        except SynthError as exc:
            built = Built(cand, None, str(exc), time.monotonic() - start)
        if not cand.solves:   # a baseline's certification is no solve's time (the Ring on 24x24 took the minute)
            deadline += time.process_time() - cpu
        yield built


def _build_one(req, prep, cand, share, shared=None) -> SolveResult:
    """Build and certify one candidate, its solves limited to ``share`` seconds; ``shared``: a dict the layered and
    timed candidates (on one network) keep their layered LP in, solved by the first of them."""
    t = req.topology
    one = without_size(req, time_limit=share)
    if cand.kind == "baseline":
        # every baseline module loads with the registry: only a solve that builds a baseline waits for them
        from synth.baselines import build_baseline

        b = build_baseline(cand.name, t)
        cert = certify(b.schedule.as_base(b.weights), trivial_group(t), req.elements, mode=req.mode,
                       provenance={"algorithm": cand.name, "group": "trivial", "seed": None})
        return SolveResult(cert, cert.claims["rounds"] // 2, [f"{cand.name}: {b.notes}"])
    if cand.kind == "default":
        return prep.default.build(one, replace(prep.default, time_limit=share))
    periodic = prep.packing.prepared.periodic
    if cand.kind == "layered":
        base = prep.packing
        name = "routed-packing" if base.algorithms[0] == "routed-packing" else "layered-packing"
        p = replace(base, construction=name, algorithms=(name,),
                    prepared=replace(base.prepared, R=None, time_limit=share, shared=shared), time_limit=share)
    elif cand.kind == "depth":
        # on the network itself: a periodic network's group is not its group, nor are its chips' copies leaves of
        # the depth-bounded arcs
        p = plan_packing(without_size(req, time_limit=share, depth=cand.depth), t,
                         prep.group if periodic is None else None, prep.reason, share, cand.depth)
    else:   # timed: on the packing plan's network; the layered LP (unless shared) and the master half the share each
        part = share if shared and "layered" in shared else share / 2
        p = plan_packing(without_size(req, time_limit=part, depth=cand.depth), prep.packing.prepared.topology,
                         prep.group, prep.reason, part, cand.depth, periodic)
        p = replace(p, prepared=replace(p.prepared, shared=shared))
    return p.build(one, p)


def _timed(cert, nbytes, engine, net) -> tuple:
    """``(seconds, rounds)`` of a certified schedule at ``nbytes`` bytes: the cost model, or a SimGrid replay."""
    base, group = cert.base, cert.group
    if engine == "simgrid":
        # the SimGrid stage loads the runtime's plan: only a SimGrid replay waits for it
        from synth.analysis.simulate import simulated_seconds

        return simulated_seconds(lift(base, group, cert.dropped), lifted_weights(base, group), [nbytes], net)[0], \
            cert.claims["rounds"]
    p = cert.network.n_compute
    m, at = sized_metrics(lambda n: lifted_metrics(base, group, n, cert.dropped), nbytes,
                          message_elements(nbytes, net.element_bytes, p, "allreduce"), net, p, "allreduce")
    if m is None:
        raise SynthError(f"fewer bytes than its chunks need at {format_size(nbytes)}")
    return model_time(m, at), m.rounds


def _bandwidth_floor(topology, nbytes, net) -> float:
    """Seconds no allreduce of ``nbytes`` bytes per node on ``topology`` beats in its bandwidth term (the model's
    ``beta`` times the certified bound: :func:`synth.analysis.cost.goodput_bound`)."""
    p = topology.n_compute
    return nbytes * (p - 1) / (p * goodput_bound(topology, net))


def build_by_size(req, plan, net: Network = Network()) -> SolveResult:
    """Build every candidate of ``plan``, time each at the size, keep the fastest (module docstring)."""
    prep = plan.prepared
    rows, best, took = [], None, []
    floor = _bandwidth_floor(req.topology, prep.nbytes, net)

    def skip(cand):   # by the model only: a timed candidate's 2R rounds and the bandwidth bound cannot beat the best
        if prep.engine != "model" or cand.kind != "timed" or best is None:
            return None
        least = 2 * cand.depth * net.alpha + floor
        if least < best[1]:
            return None
        return (f"not built: any schedule of 2R = {2 * cand.depth} rounds takes at least {least * 1e6:.2f} us at "
                f"{format_size(prep.nbytes)} (2R x alpha + the certified bandwidth bound), no less than "
                f"{best[1] * 1e6:.2f} us of {best[0].candidate.name}")

    for built in build_candidates(req, plan, skip=skip):
        name = built.candidate.name
        if built.result is None:
            rows.append({"name": name, "left_out": built.why})
            continue
        cert = built.result.certificate
        try:
            seconds, rounds = _timed(cert, prep.nbytes, prep.engine, net)
        except SynthError as exc:
            rows.append({"name": name, "left_out": str(exc)})
            continue
        rows.append({"name": name, "algorithm": cert.provenance.get("algorithm"), "rounds": rounds,
                     "seconds": seconds, "bandwidth_fraction": float(certified_fraction(cert))})
        took.append(f"{name} {built.seconds:.1f} s")
        if best is None or seconds < best[1]:
            best = (built, seconds)
    if best is None:
        raise SynthError(f"size {format_size(prep.nbytes)}: no candidate was built ("
                         + "; ".join(f"{r['name']}: {r['left_out']}" for r in rows) + ")")
    built, seconds = best
    how = "modeled" if prep.engine == "model" else "simulated"
    cert = built.result.certificate
    cert.provenance["size_choice"] = {"size": prep.nbytes, "engine": prep.engine, "chosen": built.candidate.name,
                                      "seconds": seconds, "candidates": rows}
    listed = "; ".join(f"{r['name']} {r['rounds']} rounds {r['seconds'] * 1e6:.2f} us" if "seconds" in r else
                       f"{r['name']} left out ({r['left_out']})" for r in rows)
    notes = [f"size {format_size(prep.nbytes)}: {how} times of the candidates: {listed}",
             f"chosen: {built.candidate.name} ({cert.provenance.get('algorithm')}, {cert.claims['rounds']} rounds), "
             f"the least {how} time at {format_size(prep.nbytes)}, {seconds * 1e6:.2f} us",
             f"built in (wall seconds): {', '.join(took)}", *prep.left_out, *built.result.notes]
    return SolveResult(cert, built.result.depth, notes)
