"""What the solve stage passes whole: the request (a topology and every option), the plan, the result.

:class:`SolveRequest` holds the topology and every option of :func:`synth.solving.solve`, validated once
when it is made; every function of the solve stage takes it whole.  :class:`Plan` is what
:func:`synth.solving.planning.plan` decides for a request without solving: the construction and why,
the group, whether a solver runs (so ``time_limit`` applies) and whether the k-hop cache answers;
its ``build`` is the function that runs the construction, so what a plan says is what runs.
:func:`quiet` is the progress callback that says nothing.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> r = SolveRequest(parse_torus("4x4"), depth=2)
>>> r.depth, r.time_limit, r.collective
(2, 60.0, 'allreduce')
>>> SolveRequest(parse_torus("4x4"), dpeth=2)
Traceback (most recent call last):
...
synth.errors.OptionError: unknown option 'dpeth'; the options are depth, elements, mode, exchange, progress, generators, allow_unbalanced, group, time_limit, seed, solver, start, collective, size, engine
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Callable

from synth.errors import OptionError, check_instance, check_int
from synth.schedule.data import ALLREDUCE, COLLECTIVES
from synth.topology.base import Topology

__all__ = ["SolveRequest", "Plan", "SolveResult", "OPTIONS", "CONSTRUCTIONS", "quiet"]


def quiet(_message) -> None:
    """The progress callback that says nothing (the default of every ``progress``)."""


#: what each construction of a plan builds (:attr:`Plan.construction`)
CONSTRUCTIONS = {
    "sp": "SP-allreduce: the BFS tree of depth H, lifted by a group regular on the links (2H rounds)",
    "exchange": "a BFS forest on an adjacent pair plus the exchange, lifted (2H - 1 rounds)",
    "balanced-family": "BFS trees or exchange forests weighted by the balance model (CP-SAT) so the lift "
                       "through a group with several link orbits has omega = 1",
    "khop-tree": "a least-weight tree of depth <= K (the k-hop model), lifted (2K rounds)",
    "khop-exchange": "a least-weight exchange forest of depth <= K (the xhop model), lifted",
    "khop-family": "k-hop trees of depth <= K weighted by the balance model for a group with several "
                   "link orbits",
    "hyperx-tree": "the HyperX windmill (2-D) or coordinate BFS tree, lifted by the HyperX group",
    "spine-leaf-star": "the shortest-path star of a spine-leaf network, lifted by the host and leaf shifts",
    "shortest-path-tree": "a shortest-path tree, lifted by the graph's group",
    "grid-tree": "the shortest-path tree from a centre vertex lifted by the grid group, or the packing "
                 "model's trees when they reach more of the bandwidth bound",
    "layered-packing": "the layered LP's trees, owners and shares (one chunk per owner, 2H rounds), made "
                       "integer",
    "timed-packing": "the layered LP (the routed LP on switches), then timed trees (more rounds, any parent, "
                     "routes through the switches) by column generation; the schedule nearer the bandwidth bound "
                     "is kept",
    "routed-packing": "the routed LP: trees whose arcs are routes through switches or one-way links",
    "depth-packing": "the depth-bounded LP: trees of depth <= K whose arcs are multi-hop routes",
    "by-size": "every candidate (the default construction, the layered or routed trees, timed trees of H ... H + 4 "
               "reduce rounds, the depth-bounded trees, the Ring, or on links of unequal bandwidth NCCL's rings and "
               "tree and the hierarchical allreduce) built within one shared time limit and timed at the message "
               "size; the fastest is kept",
}


@dataclass(frozen=True, eq=False)
class SolveRequest:
    """A topology and every option of :func:`synth.solving.solve`, validated when made.

    Parameters are :func:`synth.solving.solve`'s; an unknown one is an
    :class:`~synth.errors.OptionError` naming the options.
    """

    topology: Topology
    depth: int | None = None
    elements: int | None = None
    mode: str = "auto"
    exchange: bool = False
    progress: Callable = field(default=quiet, repr=False)
    generators: object = None
    allow_unbalanced: bool = False
    group: str | None = None
    time_limit: float = 60.0
    seed: int = 0
    solver: str = "auto"
    start: object = None
    collective: str = ALLREDUCE
    size: int | None = None
    engine: str = "model"

    def __init__(self, topology, **options):
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise OptionError(f"unknown option {str(unknown[0])[:40]!r}; the options are {', '.join(OPTIONS)}")
        check_instance(topology, "topology", Topology, " (e.g. synth.parse_torus('4x4'))")
        values = {f.name: options.get(f.name, f.default) for f in fields(self) if f.name != "topology"}
        values["depth"] = check_int(values["depth"], "depth", 1, optional=True)
        values["elements"] = check_int(values["elements"], "elements", 1, optional=True)
        values["seed"] = check_int(values["seed"], "seed")
        values["size"] = check_int(values["size"], "size", 1, optional=True)
        if values["engine"] != "model":
            # the SimGrid stage loads the runtime's plan: only a request that names another engine waits for it
            from synth.analysis.simulate import ENGINES

            if values["engine"] not in ENGINES:
                raise OptionError(f"engine must be one of {', '.join(ENGINES)}, got {str(values['engine'])[:40]!r}")
        if values["size"] is not None and (values["depth"] is not None or values["exchange"]
                                           or values["collective"] != ALLREDUCE or values["start"] is not None):
            raise OptionError("size chooses among allreduce schedules (the depth, the rounds, tree or exchange) "
                              "itself: not with depth, exchange, start or another collective")
        if values["collective"] not in COLLECTIVES:
            raise OptionError(f"collective must be one of {', '.join(COLLECTIVES)}, got "
                              f"{str(values['collective'])[:40]!r}")
        if values["collective"] != ALLREDUCE and values["exchange"]:
            raise OptionError(f"collective {values['collective']}: the exchange schedules have no such half (their "
                              "two roots swap aggregates in the middle round, so neither half alone is a "
                              "reduce-scatter or an allgather); use a tree, without exchange")
        object.__setattr__(self, "topology", topology)
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def say(self, message: str) -> None:
        """Report progress through the request's callback."""
        self.progress(message)


#: the options of a request, in the order :func:`synth.solving.solve` documents them
OPTIONS = tuple(f.name for f in fields(SolveRequest) if f.name != "topology")


@dataclass(frozen=True, eq=False)
class Plan:
    """What a request will build and why, decided without solving (:func:`synth.solving.planning.plan`).

    ``construction`` is a key of :data:`CONSTRUCTIONS`; ``algorithms`` the provenance algorithms the
    certificate may carry (one, or those of the alternatives the construction compares once built);
    ``group`` the verified lifting group (None: the construction has its own, named by ``group_name``);
    ``solves``: a solver runs; ``time_limit`` the limit it honours (None: none, or no solver);
    ``cached``: the k-hop cache holds the tree;
    ``notes``: what the user should know before the solve; ``build(request, plan)`` runs it;
    ``prepared``: what the planning computed that the build reuses (arcs, a certified tree).
    """

    construction: str
    reason: str
    group_name: str
    algorithms: tuple
    build: Callable = field(repr=False)
    group: object = field(default=None, repr=False)
    solves: bool = False
    time_limit: float | None = None
    cached: bool = False
    notes: tuple = ()
    depth: int | None = None
    exchange: bool = False
    prepared: object = field(default=None, repr=False)

    def as_dict(self) -> dict:
        """The plan as ``synth solve --plan --json`` prints it."""
        return {"construction": self.construction, "what": CONSTRUCTIONS[self.construction],
                "reason": self.reason, "algorithms": list(self.algorithms), "group": self.group_name,
                "group_order": None if self.group is None else int(self.group.order),
                "solves": self.solves, "time_limit": self.time_limit, "cached": self.cached,
                "notes": list(self.notes)}


@dataclass
class SolveResult:
    """A certified schedule and what the user should know about it."""

    certificate: object
    depth: int
    notes: list = field(default_factory=list)
