"""What the k-hop bench scripts share: the harness (from ``bench/``), the orbit LP run, the search start.

A script in ``bench/khop/`` runs as ``python bench/khop/NAME.py`` from the repo root, so its
own folder is on ``sys.path`` and ``bench/`` is not: importing this module appends ``bench/``
and re-exports :mod:`_harness`, so the scripts write ``from _common import Table, ...``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))

from _harness import Col, Ratio, Table, log, parse_args, parse_only, parser, timed  # noqa: E402

__all__ = ["Col", "Ratio", "Table", "log", "parse_args", "parse_only", "parser", "timed", "timed_orbit_lp",
           "khop_starts"]


def timed_orbit_lp(t, k, perms=None, fix=None, deadline=None):
    """The layered LP of ``t`` solved until it converges or stalls (15 rounds), and its seconds.

    ``perms``: the group to aggregate on (default the root's stabilizer); ``fix``: a
    ``(v, h, value)`` for :meth:`~synth.models.khop.lp.LayeredLP.fix_depth`. Shared by
    bounds.py, branch.py and intgap.py.

    Returns
    -------
    lp : LayeredLP
    res : LPResult
    seconds : float
    """
    # imported here so that scripts that solve no LP do not load the models and their solvers
    from synth.models.forest.instance import distance_matrix, root_stabilizer
    from synth.models.khop.lp import LayeredLP

    t0 = time.perf_counter()
    lp = LayeredLP(distance_matrix(t), k, root_stabilizer(t) if perms is None else perms)
    if fix is not None:
        lp.fix_depth(*fix)
    res = lp.solve(deadline=deadline, stall_rounds=15)
    return lp, res, time.perf_counter() - t0


def khop_starts(instances):
    """The common start of the k-hop search races: per ``(shape, k)``, the torus, its distances and a tree.

    The tree is the farthest-point construction plus descent (seed 0, two orders), from which
    window.py and jump.py start each search they compare.

    Yields
    ------
    shape, k, t, D, start
        ``t`` the torus, ``D`` its distance matrix, ``start`` the construction's result.
    """
    # imported here so that scripts that search no tree do not load the models
    from synth.models.khop.search.construct import heuristic_tree
    from synth.models.forest.instance import distance_matrix
    from synth.topology.torus import parse_torus

    for shape, k in instances:
        t = parse_torus(shape)
        D = distance_matrix(t)
        yield shape, k, t, D, heuristic_tree(D, k, seed=0, iterations=0, n_orders=2)
