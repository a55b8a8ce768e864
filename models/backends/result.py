"""What a solver run returns: one status type, one solution type and one incumbent for every model.

* :class:`Status` -- how a solve ended (a ``str``, so ``status == "optimal"`` and JSON keep working);
* :class:`MipSolution` -- one run of a :class:`~synth.models.backends.linear.LinearModel`;
* :class:`Incumbent` -- the best tree or forest found so far (frozen);
* :class:`Best` -- what a pipeline has so far (the incumbent, the best bound and its
  provenance), updated through :meth:`Best.offer_tree` and :meth:`Best.offer_bound` so
  that whatever was found survives a Ctrl-C in any phase.

Examples
--------
>>> import numpy as np
>>> sol = MipSolution(Status.OPTIMAL, 18.0, 18.0, np.ones(3), 0.1)
>>> sol.status == "optimal", f"{sol.status}", sol.status, sol.interrupted
(True, 'optimal', 'optimal', False)
>>> best = Best(bound=3.0, method="W >= p - 1")
>>> best.offer_tree(np.array([-1, 0, 0, 1]), 4, "heuristic", print)
incumbent W = 4 (heuristic)
True
>>> best.offer_tree(np.array([-1, 0, 0, 0]), 5, "search", print)      # heavier: refused
False
>>> best.offer_bound(4, "LP", print)
bound 4 (LP)
True
>>> best.weight, best.bound, best.method, best.closed
(4, 4.0, 'LP', True)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

__all__ = ["Status", "MipSolution", "Incumbent", "Best"]


class Status(enum.StrEnum):
    """How a solve ended; a ``str``, so ``status == "optimal"`` and JSON output keep working."""

    OPTIMAL = "optimal"         # proved optimal (or, for an LP, solved)
    FEASIBLE = "feasible"       # an incumbent, no proof
    INFEASIBLE = "infeasible"   # proved to have no solution
    UNKNOWN = "unknown"         # neither an incumbent nor a proof

    def __repr__(self) -> str:      # reads as the string it equals, in tuples and reports alike
        return repr(self.value)


@dataclass(frozen=True, eq=False)
class MipSolution:
    """One solver run of a :class:`~synth.models.backends.linear.LinearModel`."""

    status: Status
    objective: float | None     # incumbent value (None without one)
    bound: float                # the solver's dual bound, valid for this model; -inf if none, inf if infeasible
    values: np.ndarray | None   # column values of the incumbent
    seconds: float
    interrupted: bool = False   # stopped by Ctrl-C (or a callback that raised it), not by a limit or a proof
    row_dual: np.ndarray | None = None   # an LP's row duals (HiGHS's sign convention), when the solver has them


@dataclass(frozen=True, eq=False)
class Incumbent:
    """A depth-bounded tree or forest found by a search or a solver.

    Attributes
    ----------
    parent : numpy.ndarray
        int64 parent array, ``-1`` at every root.
    weight : int
        Its weight ``W`` (for an exchange forest: the forest edges plus ``dist(a, b)``).
    source : str
        What produced it (``"heuristic"``, ``"jump search"``, ``"cp-sat"``, ...).
    roots : tuple of int
        The root set: ``(0,)`` for a k-hop tree, ``(0, b)`` for an exchange forest.
    """

    parent: np.ndarray
    weight: int
    source: str
    roots: tuple = (0,)

    @property
    def partner(self) -> int | None:
        """The second root ``b`` of an exchange forest (``None`` for a tree)."""
        return self.roots[1] if len(self.roots) > 1 else None


class Best:
    """The incumbent and the best lower bound of one solve, updated in place.

    Deliberately mutable (the records it holds are frozen): a pipeline offers trees and
    bounds as it finds them, and the caller reads whatever is there when the pipeline
    returns or is interrupted.

    Parameters
    ----------
    bound : float
        The starting lower bound (``-inf``: none yet).
    method : str
        Its provenance.
    """

    def __init__(self, bound: float = -np.inf, method: str = ""):
        self.incumbent: Incumbent | None = None
        self.bound = float(bound)
        self.method = method
        self.dual: dict | None = None     # the dual behind the strongest re-derivable bound (k-hop)

    @property
    def parent(self) -> np.ndarray | None:
        return None if self.incumbent is None else self.incumbent.parent

    @property
    def weight(self) -> int | None:
        return None if self.incumbent is None else self.incumbent.weight

    @property
    def closed(self) -> bool:
        """Whether the bound has reached the incumbent (nothing left to prove)."""
        return self.incumbent is not None and self.bound >= self.incumbent.weight

    def offer_tree(self, parent, weight, source, say=lambda _m: None, roots=(0,)) -> bool:
        """Keep ``parent`` if it is lighter than the incumbent; returns whether it was kept."""
        if self.incumbent is not None and weight >= self.incumbent.weight:
            return False
        roots = tuple(int(r) for r in roots)
        self.incumbent = Incumbent(np.asarray(parent, dtype=np.int64), int(weight), source, roots)
        partner = f", partner {roots[1]}" if len(roots) > 1 else ""
        say(f"incumbent W = {weight}{partner} ({source})")
        return True

    def offer_bound(self, bound, method, say=lambda _m: None) -> bool:
        """Keep ``bound`` if it is stronger (by more than 1e-9); returns whether it was kept."""
        bound = float(bound)
        if bound <= self.bound + 1e-9:
            return False
        self.bound, self.method = bound, method
        say(f"bound {bound:g} ({method})")
        return True

    def __repr__(self) -> str:
        return f"Best(weight={self.weight}, bound={self.bound:g}, method={self.method!r})"
