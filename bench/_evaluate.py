"""What the evaluation scripts (``bench/machines.py``, ``bench/failures.py``) measure of one schedule.

A *candidate* is an explicit schedule and its chunk weights on a topology: SP-allreduce or the
packing model's schedule (:func:`synth.solving.solve`, lifted), the exchange, a baseline
(:func:`synth.baselines.build_baseline`), or a Ring on a Hamiltonian cycle the script found.
:func:`evaluate` measures it at every message size with the checker
(:func:`synth.check.measure_explicit` at the integer chunk sizes of that size), reports

* ``rounds``, ``Q/N`` (the bandwidth term over the elements per node) and ``bw %``: the
  certified lower bound of docs/bounds.md (volume and least cut, :mod:`synth.check.bounds.bandwidth`)
  as a percentage of the bandwidth term;
* per size: the cost model's time and goodput (:mod:`synth.analysis.cost`: 400 Gb/s links,
  400 ns per hop, alpha 1 us) and, when SimGrid is installed and the schedule has at most
  ``sim_limit`` messages, a SimGrid replay's (:func:`synth.analysis.simulate.simulate_schedule`,
  rounds mode).  A replay that is skipped says why in ``sim_note``.  A size with fewer elements than
  the schedule has chunks is padded to one element per chunk (``note``); goodput counts the real ones.

A candidate that cannot be built (a baseline refused on the shape, a solve that fails) is a row
with its reason in ``note`` and no figures: the scripts never stop on one refusal.
"""

from __future__ import annotations

import numpy as np

from synth.analysis.cost import Network, model_time
from synth.analysis.simulate import SimOptions, pack, simgrid_available, simulate_schedule
from synth.baselines import build_baseline
from synth.check import execute, measure_explicit
from synth.check.bounds.bandwidth import bandwidth_bound, best_cut
from synth.errors import SynthError
from synth.schedule import chunk_elements
from synth.runtime.plan import load_schedule
from synth.solving import solve
from synth.units import format_size

__all__ = ["Candidate", "solved", "certified", "baseline", "evaluate", "size_keys", "bound_of", "best_by",
           "merge_refused", "GBPS"]

GBPS = 8 / 1e9  # bytes per second -> Gb/s
NET = Network()


class Candidate:
    """A schedule to evaluate: ``name``, ``schedule`` and ``weights`` (or ``note``, why there is none)."""

    def __init__(self, name, schedule=None, weights=None, note=None, info=None):
        self.name, self.schedule, self.weights, self.note = name, schedule, weights, note
        self.info = dict(info or {})


def solved(name, topology, **kwargs):
    """The certified schedule of ``solve(topology, **kwargs)``, lifted; its claims in ``info``.

    ``name`` None: the certificate's algorithm (``sp-allreduce``, ``forest-exchange``, ``layered-packing``, ...).
    """
    try:
        cert = solve(topology, **kwargs).certificate
    except SynthError as exc:
        return Candidate(name or ("exchange" if kwargs.get("exchange") else "synth"),
                         note=f"refused: {' '.join(str(exc).split())}")
    return certified(name, cert)


def certified(name, cert):
    """A certificate as a candidate (``name`` None: its algorithm), through the runtime's schedule loader."""
    name = name or cert.provenance.get("algorithm") or "synth"
    c = cert.claims
    info = {"method": cert.provenance.get("algorithm"), "round_bound": c.get("round_lower_bound"),
            "certified": c.get("bandwidth_fraction"), "lp": (cert.solver or {}).get("lp_fraction_of_volume_bound")}
    try:
        schedule, weights, _ = load_schedule(cert)
    except SynthError as exc:
        return Candidate(name, note=f"cannot replay: {' '.join(str(exc).split())}", info=info)
    return Candidate(name, schedule, weights, info=info)


def baseline(name, topology, label=None):
    """The baseline ``name`` on ``topology`` (executed once by the checker), or its refusal."""
    try:
        b = build_baseline(name, topology)
    except SynthError as exc:
        return Candidate(label or name, note=" ".join(str(exc).split()))
    errors = execute(b.schedule)
    if errors:
        return Candidate(label or name, note=f"INVALID: {errors[0]}")
    return Candidate(label or name, b.schedule, b.weights)


def merge_refused(cands):
    """``cands`` with the refused ones merged into one last candidate (their names, the first one's reason)."""
    refused = [c for c in cands if c.schedule is None]
    if len(refused) < 2:
        return list(cands)
    kept = [c for c in cands if c.schedule is not None]
    return kept + [Candidate(", ".join(c.name for c in refused), note=refused[0].note)]


def size_keys(sizes):
    """``(label, model key, sim key)`` per size in bytes."""
    return [(format_size(s), f"model {format_size(s)}", f"sim {format_size(s)}") for s in sizes]


_BOUND_CUTS = {}


def bound_of(topology, elements):
    """The certified lower bound on the bandwidth term (elements) for ``elements`` per node."""
    key = id(topology)
    if key not in _BOUND_CUTS:
        _BOUND_CUTS[key] = (topology, best_cut(topology))  # keep the topology alive with its cut
    return bandwidth_bound(topology, elements, _BOUND_CUTS[key][1]).value


def _chunks(weights, n):
    """Chunk sizes for ``n`` elements and the elements moved: ``n``, or more when a chunk would be empty.

    A message smaller than the schedule's chunk count is padded as a runtime would: every chunk gets
    ``max(1, floor(w n / sum w))`` elements (the goodput still counts only the ``n`` real ones).
    """
    sizes = np.asarray(chunk_elements(weights, n), dtype=np.int64)
    if sizes.min() < 1:
        w = np.asarray(weights, dtype=np.int64)
        sizes = np.maximum(1, (w * n) // int(w.sum()))
    return sizes, int(sizes.sum())


def evaluate(topology, cand, sizes, *, sim=True, sim_limit=60_000, net=NET):
    """One row: the candidate's rounds, ``Q/N``, share of the bound, and goodput by model and SimGrid per size.

    A measurement or replay that fails leaves the figures made so far and says why in ``note``.
    """
    row = {"algorithm": cand.name, **cand.info}
    try:
        return _evaluate(topology, cand, sizes, row, sim, sim_limit, net)
    except SynthError as exc:
        row["note"] = "; ".join(x for x in (row.get("note"), f"failed: {' '.join(str(exc).split())}") if x)
        return row


def _evaluate(topology, cand, sizes, row, sim, sim_limit, net):
    if cand.schedule is None:
        row["note"] = cand.note
        return row
    p = topology.n_compute
    real = lambda n, seconds: n * net.element_bytes * (p - 1) / (p * seconds) * GBPS  # noqa: E731
    chunks, padded = {}, []
    for (label, mkey, _), size in zip(size_keys(sizes), sizes):
        n = size // net.element_bytes
        chunks[size] = _chunks(cand.weights, n)
        if chunks[size][1] != n:
            padded.append(f"{label} padded to {chunks[size][1]} elements (one per chunk)")
        m = measure_explicit(cand.schedule, chunks[size][0])
        row[mkey] = real(n, model_time(m, net))
        row[f"model_us {label}"] = model_time(m, net) * 1e6
    if padded:
        row["note"] = "; ".join(padded)
    # the bandwidth term and its share of the bound at the largest size (least rounding)
    sizes_, n_ = chunks[max(sizes)]
    m = measure_explicit(cand.schedule, sizes_)
    row.update(rounds=m.rounds, p=p, omega=str(m.omega), q_per_n=float(m.bandwidth_term / n_),
               bw=100 * float(bound_of(topology, n_) / m.bandwidth_term))
    if not sim:
        row["sim_note"] = "not simulated (--no-sim)"
        return row
    if not simgrid_available():
        row["sim_note"] = "SimGrid not installed"
        return row
    messages = pack(cand.schedule, "rounds").n_messages
    row["messages"] = messages
    if messages > sim_limit:
        row["sim_note"] = f"not simulated: {messages:,} messages > --sim-limit {sim_limit:,}"
        return row
    for (label, _, skey), size in zip(size_keys(sizes), sizes):
        # the chunk sizes as weights: the replay moves exactly the elements the model measured
        part, total = chunks[size]
        r = simulate_schedule(cand.schedule, part, [total * net.element_bytes], net, label=cand.name,
                              options=SimOptions(model=False))[0]
        row[skey] = real(size // net.element_bytes, r.seconds)
        row[f"sim_us {label}"] = r.seconds * 1e6
    return row


def best_by(rows, key):
    """The row with the largest value at ``key`` (None when no row has one)."""
    have = [r for r in rows if r.get(key) is not None and np.isfinite(r[key])]
    return max(have, key=lambda r: r[key]) if have else None
