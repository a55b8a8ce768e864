"""k-hop trees on lattice tori (twisted tori, ``--lattice``): the k-hop pipeline lifted by the lattice group.

A depth bound ``k`` below the diameter ``H`` asks for a spanning tree of depth ``<= k`` of least
weight ``W`` (the sum of its edges' hop distances), as on a plain torus: the k-hop model
(:mod:`synth.models.khop`) needs only the graph, its distances (one vectorized BFS, read through
:meth:`synth.topology.lattice.LatticeTorus.dist`) and the root's stabilizer (the lattice's point
group, :func:`synth.symmetry.torus.root_stabilizer`).  Its lower bound is the layered LP's dual or
the cone count, both re-derived by ``synth check`` from the lattice's own distances; the excess
Steiner bound, whose tables are separable over a plain torus's sides, is not used.

Where the lattice group is regular on the links (every twisted torus), the tree lifts to
Ψ = Θ = Ω = 1 in ``2h`` rounds (the balance lemma).  A lattice with several link orbits (a
diagonal ``--lattice`` with unequal sides, the Tofu-D unit) would need the balanced k-hop families,
which are built on plain tori only: refused with that reason.

Examples
--------
>>> from synth.topology.lattice import twisted
>>> from synth.symmetry.lattice import lattice_gamma
>>> t = twisted((4, 8))
>>> cert, depth, notes = lattice_khop(t, lattice_gamma(t), 2, time_limit=20)
>>> c = cert.claims
>>> c["rounds"], c["psi"], c["omega"], c["weight"], depth, cert.solver["status"]
(4, '1', '1', '41', 2, 'optimal (solver claim)')
>>> cert.solver["dual_bound"]["bound"]        # what synth check re-derives; the MIP proved 41
40
"""

from __future__ import annotations

from synth.check.claims import certify
from synth.errors import OptionError
from synth.schedule.collective import collective_half
from synth.schedule.data import ALLREDUCE
from synth.solving.khop import khop_notes, khop_tree, tree_base

__all__ = ["lattice_khop"]


def _quiet(_message):
    pass


def lattice_khop(t, grp, depth, elements=None, mode="auto", exchange=False, progress=_quiet, time_limit=60.0,
                 seed=0, collective=ALLREDUCE, solver="auto", start=None):
    """The k-hop tree of ``t`` for the depth bound ``depth``, lifted by ``grp`` and certified.

    Parameters
    ----------
    t : LatticeTorus
        Vertex-transitive (every side wraps).
    grp : Group
        The lifting group; it must be regular on the links (module docstring).

    Returns
    -------
    (Certificate, int, list)
        As :func:`synth.solving.lattice.solve_lattice`: the certificate, the tree's depth, the notes.
    """
    if exchange:
        raise OptionError(f"depth-bounded exchange forests are built on plain equal-sided tori only, not on "
                          f"{t.name}; drop `exchange` for the k-hop tree (2h rounds), or drop `depth` for the BFS "
                          "forest plus exchange")
    if not grp.is_regular:
        raise OptionError(f"the {grp.spec['kind']} group of {t.name} has {grp.n_link_orbits} link orbits: a lifted "
                          "k-hop tree would not balance, and the balanced k-hop families are built on plain tori "
                          "only; drop `depth` (the balanced BFS families), or use the default group")
    rec = khop_tree(t, depth, time_limit=time_limit, seed=seed, solver=solver, progress=progress, start=start)
    base = tree_base(t, rec)
    progress(f"checking the lifted schedule ({base.n_transmissions * grp.order:,} transmissions)")
    cert = certify(collective_half(base, collective), grp, elements, mode=mode, solver=rec.solver_claims(),
                   provenance={"algorithm": "k-sp-allreduce", "group": grp.spec["kind"], "seed": seed})
    return cert, rec.depth, khop_notes(rec)
