"""Choose a schedule by message size: the depth bound (or the exchange) with the least modeled time.

What ``synth solve --size BYTES`` does before it solves: sweep every depth bound once
(:func:`synth.solving.sweep.sweep`, at that one size), take the candidate whose modeled time
(:func:`synth.analysis.cost.model_time`) is least, and read the input elements per node from the byte count.
After the solve, :func:`size_summary` reports the chosen schedule's modeled time and goodput.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> choice = choose_by_size(parse_torus("4x4"), 1 << 16, time_limit=10, cache=False)
>>> choice.chosen, choice.depth, choice.exchange, choice.elements
('k=1', 1, False, 16384)
>>> choose_by_size(parse_torus("4x4"), 1 << 28, time_limit=10, cache=False).exchange
True
"""

from __future__ import annotations

from dataclasses import dataclass

from synth.check import measure_symmetric
from synth.analysis.cost import Network, goodput, model_time
from synth.units import format_size
from synth.schedule.chunking import chunk_elements
from synth.schedule.lift import lifted_weights
from synth.solving.sweep import sweep, sweep_note

__all__ = ["SizeChoice", "choose_by_size", "elements_for", "size_note", "size_summary", "choice_summary"]


@dataclass(frozen=True)
class SizeChoice:
    """The schedule :func:`choose_by_size` picked for one message size."""

    nbytes: int
    chosen: str  # "k=K" or "exchange", as in :attr:`synth.solving.sweep.SweepTable.best`
    depth: int | None  # the depth bound K; None for the exchange
    exchange: bool
    modeled_seconds: float  # the time of the chosen schedule at ``nbytes`` under ``engine``
    elements: int  # input elements per node that ``nbytes`` hold
    engine: str = "model"  # what timed the candidates: the cost model, or a SimGrid replay


def elements_for(nbytes: int, net: Network = Network()) -> int:
    """Input elements per node in a message of ``nbytes`` bytes (``net.element_bytes`` each).

    >>> elements_for(1 << 20)
    262144
    """
    return nbytes // net.element_bytes


def size_note(topology, time_limit=60.0, seed=0, solver="auto"):
    """One line saying how long :func:`choose_by_size` may take, or None when nothing is to solve."""
    return sweep_note(topology, None, time_limit, seed, solver)


def choose_by_size(topology, nbytes: int, **options) -> SizeChoice:
    """The depth bound or exchange with the least time at ``nbytes`` on an equal-sided torus.

    Every depth bound below the diameter is solved once (up to ``time_limit`` each, from the
    cache of :func:`synth.solving.khop.khop_tree` when solved before); the ``options`` are those of
    :func:`synth.solving.sweep.sweep` (:class:`~synth.solving.sweep.SweepOptions`) but ``sizes``:
    ``time_limit``, ``seed``, ``solver``, ``net``, ``cache``, ``progress``, ``report``, ``engine``
    (``"model"``: the cost model; ``"simgrid"``: a SimGrid replay) and ``solve_many`` (who solves the
    depths).
    """
    net, engine = options.get("net", Network()), options.get("engine", "model")
    table = sweep(topology, **{**options, "sizes": [nbytes]})
    chosen = table.best[nbytes]
    exchange = chosen == "exchange"
    return SizeChoice(nbytes, chosen, None if exchange else int(chosen.split("=")[1]), exchange,
                      table.times[nbytes][chosen], elements_for(nbytes, net), engine)


def size_summary(certificate, choice: SizeChoice) -> dict:
    """What ``synth solve --size`` adds to its summary: the choice, the size, modeled time and goodput.

    The certificate's schedule is measured at its own element count (symmetric check) and costed
    with the default :class:`synth.analysis.cost.Network`.
    """
    base, group = certificate.base, certificate.group
    m = measure_symmetric(base, group, chunk_elements(lifted_weights(base, group), certificate.elements),
                          certificate.dropped)
    out = {"chosen": choice.chosen, "size": format_size(choice.nbytes), "modeled_us": round(model_time(m) * 1e6, 3),
           "goodput_gbps": round(goodput(m) * 8 / 1e9, 2)}
    if choice.engine != "model":
        out["simulated_us"] = round(choice.modeled_seconds * 1e6, 3)
    return out


def choice_summary(certificate, net: Network = Network()) -> dict:
    """What ``synth solve --size`` adds to its summary off an equal-sided torus: the candidate chosen
    (:mod:`synth.solving.candidates`), the size, its time there and the goodput ``N (p-1) / (p T)``."""
    choice = certificate.provenance["size_choice"]
    p, seconds = certificate.network.n_compute, choice["seconds"]
    key = "modeled_us" if choice["engine"] == "model" else "simulated_us"
    return {"chosen": choice["chosen"], "size": format_size(choice["size"]), key: round(seconds * 1e6, 3),
            "goodput_gbps": round(choice["size"] * (p - 1) / (p * seconds) * 8 / 1e9, 2)}
