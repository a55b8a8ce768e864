"""Balanced families: weighted trees or forests whose lift has Omega = 1 under a group smaller than Γ.

The stages, bottom-up (each module imports only those before it):

* :mod:`~synth.models.balance.data`: what a unit component (a BFS tree, a BFS forest
  plus exchange, or a fixed candidate) puts on each link orbit in each round;
* :mod:`~synth.models.balance.model`: the CP-SAT model from ``add_*`` helpers, and its
  deterministic solve;
* :mod:`~synth.models.balance.build`: from the model's counts to weighted components
  and a :class:`~synth.schedule.BaseSchedule`;
* :mod:`~synth.models.balance.pipeline`: :func:`balance_bfs_trees`,
  :func:`balance_exchange_forests`, :func:`balance_candidates` (balanced model, then the
  smallest-Omega fallback, then the checker's measurement);
* :mod:`~synth.models.balance.family`: depth-bounded (k-hop) candidate trees for
  :func:`balance_candidates` (imported on its own: ``synth.models.balance.family``).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.symmetry.torus import torus_translations_negation
>>> t = parse_torus("3x5"); r = balance(t, torus_translations_negation(t))
>>> r.status, r.family, r.chunks, str(r.omega)
('optimal', 'trees', 30, '1')
"""

from .pipeline import (FAMILIES, BalanceResult, balance, balance_bfs_trees, balance_candidates,
                       balance_exchange_forests)

__all__ = ["BalanceResult", "FAMILIES", "balance", "balance_bfs_trees", "balance_exchange_forests",
           "balance_candidates"]
