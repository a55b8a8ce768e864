"""Compare SP-allreduce, its variants and the baselines under the cost model, size by size.

On a network where no Γ lifts k-hop trees (damaged networks, meshes, lattices, rectangular tori, user
graphs) synth's schedule is not one but the candidates of ``synth solve --size``
(:mod:`synth.solving.candidates`: the default construction, the layered trees, timed trees of ``H ... H + 4``
reduce rounds, the depth-bounded trees; ``sp`` in ``algorithms`` names them all), built once within the
shared time limit; the Ring is the baseline's row.

Every candidate is a checked schedule: the base schedules through the
checker's symmetric mode, the baselines executed transmission by transmission
once; then each is measured at every message size (integer chunk sizes for
that size, so Ω is honest when a size does not divide evenly) and costed with
:func:`synth.analysis.cost.model_time`.  Where a size gives some chunks of synth's candidates no
element (the packed schedules of damaged networks: 1,024 weight units per owner and more)
those chunks move nothing (:func:`synth.analysis.cost.lifted_metrics`); a baseline whose
chunks need more elements than the size has is measured in 1-byte elements, or left out
where even those are too few, with a note.  Its fraction of
the bound is of :func:`synth.analysis.cost.goodput_bound`, a true bound on every network.

``collective`` ``"reduce-scatter"`` or ``"allgather"`` compares the halves instead: SP's
(:func:`synth.solving.solve`) and the baselines' phases (:mod:`synth.baselines.halves`; those
without phases are left out with a note); each size is rounded down to a multiple of ``p``
elements (equal blocks), and the bound is ``D B`` (:func:`synth.analysis.cost.goodput_bound`).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> rows = compare(parse_torus("4x4"), [65536], algorithms=["sp", "exchange", "bucket"])
>>> [(r.algorithm, r.rounds) for r in rows]
[('sp', 8), ('exchange', 7), ('bucket', 12)]
>>> [r.algorithm for r in rows if r.best]
['exchange']
>>> rows = compare(parse_torus("4x4"), [65536], algorithms=["sp", "bucket"], collective="reduce-scatter")
>>> [(r.algorithm, r.rounds) for r in rows]
[('sp', 4), ('bucket', 6)]
"""

from __future__ import annotations

from dataclasses import dataclass

from synth.analysis.cost import (Network, goodput, goodput_bound, lifted_metrics, message_elements, model_time,
                                 sized_metrics)
from synth.analysis.forestcoll import forestcoll_note
from synth.analysis.simulate import ENGINES, simulated_seconds
from synth.baselines import BASELINES, build_baseline
from synth.baselines.halves import baseline_half
from synth.check import execute, measure_explicit
from synth.errors import OptionError, SynthError
from synth.schedule.exchange import exchange_allreduce
from synth.schedule.lift import lift, lifted_weights
from synth.symmetry.spec import default_group
from synth.solving import SolveRequest, plan, solve
from synth.solving.candidates import build_candidates, takes_candidates
from synth.topology.torus import Torus

__all__ = ["Row", "compare", "candidates", "EXPLICIT_BASELINE_LIMIT", "DEFAULT_SOLVE_SECONDS"]

EXPLICIT_BASELINE_LIMIT = 20_000_000  # transmissions; bigger baselines are skipped with a note
#: the time limit of synth's own schedule's solve (where it solves at all: packing, balance models)
DEFAULT_SOLVE_SECONDS = 30.0


@dataclass(frozen=True)
class Row:
    """One algorithm at one message size."""

    algorithm: str
    size: int
    rounds: int
    psi: object
    theta: object
    omega: object
    seconds: float
    goodput: float
    fraction_of_bound: float
    best: bool = False

    def to_json(self) -> dict:
        return {"algorithm": self.algorithm, "size": self.size, "rounds": self.rounds, "psi": float(self.psi),
                "theta": float(self.theta), "omega": float(self.omega), "seconds": self.seconds,
                "goodput_bytes_per_s": self.goodput, "fraction_of_bound": self.fraction_of_bound,
                "best": self.best}


def candidates(topology, algorithms=None, progress=lambda m: None, notes=None, collective="allreduce",
               sources=None, time_limit=DEFAULT_SOLVE_SECONDS, size=1 << 20):
    """``name -> measure(n_elements)`` for every candidate, each checked once for correctness.

    ``sources``, a dict if given, receives ``name -> (schedule, chunk weights)`` thunks for the
    candidates (what a simulator replays).  ``time_limit`` (seconds) is that of synth's own
    schedule's solve (:func:`synth.solving.solve`).  ``size`` (bytes): the smallest message measured, whose
    elements set synth's packing candidates' units (:func:`synth.solving.packing.units`: a chunk for every
    element at that size and above).
    """
    notes = notes if notes is not None else []
    sources = sources if sources is not None else {}
    wanted = list(algorithms) if algorithms else None
    out = {}

    def symmetric(base, group, name, dropped=()):
        sources[name] = lambda: (lift(base, group, dropped), lifted_weights(base, group))

        def measure(n):
            return lifted_metrics(base, group, n, dropped)
        return measure

    group = default_group(topology)
    if (wanted is None or "sp" in wanted) and collective == "allreduce" and takes_candidates(topology):
        progress(f"building synth's candidates on {topology.name} (sharing the time limit, {time_limit:g} s)")
        # the smallest size sets the packing schedules' units; every size is measured below
        req = SolveRequest(topology, size=size, time_limit=time_limit, progress=progress)
        for built in build_candidates(req, plan(req), baselines=False):   # listed as baselines below
            if built.result is None:
                notes.append(f"{built.candidate.name}: {built.why}")
                continue
            cert = built.result.certificate
            out[built.candidate.name] = symmetric(cert.base, cert.group, built.candidate.name, cert.dropped)
    elif wanted is None or "sp" in wanted:
        progress(f"solving synth's schedule on {topology.name} (where a model solves: up to the time limit, "
                 f"{time_limit:g} s)")
        cert = solve(topology, collective=collective, time_limit=time_limit, progress=progress).certificate
        out["sp"] = symmetric(cert.base, cert.group, "sp", cert.dropped)
    is_torus = isinstance(topology, Torus)
    if collective != "allreduce" and wanted is not None and "exchange" in wanted:
        notes.append(f"exchange: has no {collective} half")
    if collective == "allreduce" and is_torus and any(n % 2 == 0 for n in topology.shape) \
            and (wanted is None or "exchange" in wanted):
        base = exchange_allreduce(topology)
        if execute(base.as_schedule()):
            raise SynthError("internal: the exchange schedule failed its check")
        out["exchange"] = symmetric(base, group, "exchange")
    for name in sorted(BASELINES):
        if wanted is not None and name not in wanted:
            continue
        try:
            b = baseline_half(build_baseline(name, topology), collective)
        except SynthError as exc:
            notes.append(f"{name}: {exc}")
            continue
        if b.schedule.n_transmissions > EXPLICIT_BASELINE_LIMIT:
            notes.append(f"{name}: skipped ({b.schedule.n_transmissions:,} transmissions)")
            continue
        progress(f"checking {name} ({b.schedule.n_transmissions:,} transmissions)")
        errors = execute(b.schedule)
        if errors:
            raise SynthError(f"internal: baseline {name} failed its check: {errors[0]}")
        out[name] = (lambda bl: lambda n: measure_explicit(bl.schedule, bl.chunk_sizes(n)))(b)
        sources[name] = (lambda bl: lambda: (bl.schedule, bl.weights))(b)
    if wanted:
        unknown = set(wanted) - set(out) - {n.split(":")[0] for n in notes} - {"sp"}
        if unknown:
            raise SynthError(f"unknown algorithm(s) {', '.join(sorted(unknown))}; valid: sp, exchange, "
                             f"{', '.join(sorted(BASELINES))}")
    return out


def compare(topology, sizes, net: Network = Network(), algorithms=None, progress=lambda m: None, notes=None,
            collective="allreduce", engine: str = "model", simulate_many=None, time_limit=DEFAULT_SOLVE_SECONDS):
    """Rows for every candidate at every size (bytes); the fastest per size has ``best=True``.

    ``engine="simgrid"`` times every candidate by a SimGrid replay (rounds mode,
    :func:`synth.analysis.simulate.simulated_seconds`) instead of the cost model; Ψ, Θ and Ω
    are measured as before.  The replay times allreduce schedules only.  ``simulate_many``, if
    given, replays the candidates in place of this process: it takes their names and returns
    ``name -> [seconds per size]`` (``synth compare --cluster`` passes one that runs each as a
    campaign task).  ``time_limit``: of synth's own schedule's solve (:func:`candidates`).
    """
    if engine not in ENGINES:
        raise OptionError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine != "model" and collective != "allreduce":
        raise OptionError(f"`engine` {engine} times allreduce schedules only, not {collective}")
    notes = notes if notes is not None else []
    sources = {}
    elements = [message_elements(size, net.element_bytes, topology.n_compute, collective) for size in sizes]
    if min(elements) < 1:
        size = sizes[elements.index(min(elements))]
        raise SynthError(f"size {size} bytes is smaller than one element of {net.element_bytes} bytes"
                         + ("" if collective == "allreduce" else f" per node ({topology.n_compute} blocks)"))
    cands = candidates(topology, algorithms, progress, notes, collective, sources, time_limit, min(sizes))
    if topology.has_bandwidths:   # links of unequal bandwidth: the yardstick GPU users know
        notes.append(forestcoll_note(topology, collective))
    bound = goodput_bound(topology, net, collective)
    simulated = {}
    if engine == "simgrid" and simulate_many is not None:
        simulated = simulate_many(list(cands))
    elif engine == "simgrid":
        for name in cands:
            progress(f"simulating {name} at {len(sizes)} size(s)")
            simulated[name] = simulated_seconds(*sources[name](), sizes, net)
    rows = []
    for i, (size, n) in enumerate(zip(sizes, elements)):
        progress(f"measuring {len(cands)} candidate(s) at {size:,} bytes")
        block = []
        for name, measure in cands.items():
            m, at = sized_metrics(measure, size, n, net, topology.n_compute, collective)
            if m is None:
                notes.append(f"{name}: left out at {size:,} bytes, fewer bytes than its chunks need")
                continue
            if at is not net:
                notes.append(f"{name}: measured at {size:,} bytes in {m.elements:,} elements of 1 byte (its chunks "
                             f"need more than {n:,} elements of {net.element_bytes} bytes)")
            t = model_time(m, at) if engine == "model" else simulated[name][i]
            g = goodput(m, at) if engine == "model" else m.elements * at.element_bytes * (m.compute_nodes - 1) / (
                m.compute_nodes * t)
            block.append(Row(name, size, m.rounds, m.psi, m.theta, m.omega, t, g, g / bound))
        fastest = min((r.seconds for r in block), default=None)
        rows.extend(Row(**{**r.__dict__, "best": r.seconds == fastest}) for r in block)
    return rows
