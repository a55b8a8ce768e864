"""The balanced-family fallback shared by tori and lattice tori: weighted BFS trees or exchange forests.

Used when the lifting group has several link orbits (docs/spec.md §6): :mod:`synth.models.balance`
chooses weights so the lift has Ω = 1, or reports the smallest Ω it found.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.symmetry.torus import torus_translations_negation
>>> t = parse_torus("3x4")
>>> base, algorithm, claims, notes = balanced_family(t, torus_translations_negation(t), False, 10.0, 0)
>>> algorithm, claims["model"], notes
('balanced-bfs-trees', 'synth.models.balance', [])
"""

from __future__ import annotations

from synth.solving.request import quiet

__all__ = ["balanced_family"]


def balanced_family(topology, grp, exchange, time_limit, seed, progress=quiet):
    """``(base, algorithm, solver claims, notes)`` of the balance model's family on ``topology`` under ``grp``."""
    # the models load on demand: they pull in the solvers, which the other constructions never need
    from synth.models.balance import balance_bfs_trees, balance_exchange_forests

    progress(f"balancing {'exchange forests' if exchange else 'BFS trees'} over {grp.n_link_orbits} "
             "link orbits (CP-SAT)")
    fn = balance_exchange_forests if exchange else balance_bfs_trees
    result = fn(topology, grp, time_limit=time_limit, seed=seed)
    algorithm = "balanced-forest-exchange" if exchange else "balanced-bfs-trees"
    claims = {"model": "synth.models.balance", "balance_status": result.status, "chunks": result.chunks,
              "seconds": round(result.seconds, 3), "seed": seed,
              "meaning": "status 'optimal': no balanced family of this kind has fewer chunks"}
    notes = [] if result.balanced else [f"no balanced family found ({result.status}); best omega = {result.omega}"]
    return result.base, algorithm, claims, notes
