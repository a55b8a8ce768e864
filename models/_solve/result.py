"""What a solver run returns: one status type and one solution type for every model.

Examples
--------
>>> import numpy as np
>>> sol = MipSolution(Status.OPTIMAL, 18.0, 18.0, np.ones(3), 0.1)
>>> sol.status == "optimal", f"{sol.status}", sol.status, sol.interrupted
(True, 'optimal', 'optimal', False)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

__all__ = ["Status", "MipSolution"]


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
    """One solver run of a :class:`~synth.models._solve.linear.LinearModel`."""

    status: Status
    objective: float | None     # incumbent value (None without one)
    bound: float                # the solver's dual bound, valid for this model; -inf if none, inf if infeasible
    values: np.ndarray | None   # column values of the incumbent
    seconds: float
    interrupted: bool = False   # stopped by Ctrl-C (or a callback that raised it), not by a limit or a proof
