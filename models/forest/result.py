"""What a depth-bounded forest solve returns: the fields :class:`~synth.models.khop.KHopResult`
and :class:`~synth.models.xhop.XHopResult` share, under the same names.

Examples
--------
>>> import numpy as np
>>> r = ForestResult(Status.OPTIMAL, np.array([-1, 0, 0]), 1, 2, 2, 0.0, 0.1, 0, "star", "closed form", 5.0, 1)
>>> r.status, r.weight == r.lower_bound, r.depth <= r.depth_bound, r.interrupted
('optimal', True, True, False)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.models.backends.result import Status

__all__ = ["ForestResult", "Status"]


@dataclass(frozen=True)
class ForestResult:
    """Outcome of a solve for a minimum-weight forest of depth at most ``depth_bound``.

    Attributes
    ----------
    status : Status
        ``"optimal"`` (``weight == lower_bound``), ``"feasible"`` (a forest with a gap),
        ``"infeasible"`` or ``"unknown"``.
    parent : numpy.ndarray
        int64 parent array, ``-1`` at every root.
    depth : int
        Actual depth (at most ``depth_bound``).
    weight : int
        ``W`` of the tree or forest.
    lower_bound : int or float
        A valid lower bound on the optimum (an integer when proven).
    gap : float
        ``(weight - lower_bound) / weight``.
    seconds : float
        Wall time of the call.
    seed : int
    solver : str
        What produced the tree or forest (a solver option, a closed form, a search).
    bound_method : str
        Which argument gives ``lower_bound``.
    time_limit : float
    depth_bound : int
        The depth bound asked for.
    interrupted : bool
        The solve was cut short by Ctrl-C rather than ending on a proof, its fixed
        iteration counts or its time limit: the same inputs would not reproduce it.
    """

    status: Status
    parent: np.ndarray
    depth: int
    weight: int
    lower_bound: float
    gap: float
    seconds: float
    seed: int
    solver: str
    bound_method: str
    time_limit: float
    depth_bound: int = 0
    interrupted: bool = False
