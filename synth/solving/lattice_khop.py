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
>>> from synth.solving.request import SolveRequest
>>> req = SolveRequest(t, depth=2, time_limit=20)
>>> p = plan_lattice_khop(req, lattice_gamma(t))
>>> r = p.build(req, p)
>>> c = r.certificate.claims
>>> c["rounds"], c["psi"], c["omega"], c["weight"], r.depth, r.certificate.solver["status"]
(4, '1', '1', '41', 2, 'optimal (solver claim)')
>>> r.certificate.solver["dual_bound"]["bound"]        # what synth check re-derives; the MIP proved 41
40
"""

from __future__ import annotations

from synth.errors import OptionError
from synth.solving.khop import cache_answers, check_start, khop_notes, khop_tree, tree_base
from synth.solving.request import Plan, SolveResult
from synth.solving.torus import lifted_result

__all__ = ["plan_lattice_khop", "build_lattice_khop"]


def plan_lattice_khop(req, grp) -> Plan:
    """The plan of the k-hop tree of a lattice torus for the depth bound ``req.depth``, lifted by ``grp`` (which
    must be regular on the links: module docstring); raises the option errors a solve would."""
    t, k = req.topology, req.depth
    if req.exchange:
        raise OptionError(f"depth-bounded exchange forests are built on plain equal-sided tori only, not on "
                          f"{t.name}; drop `exchange` for the k-hop tree (2h rounds), or drop `depth` for the BFS "
                          "forest plus exchange")
    if not grp.is_regular:
        raise OptionError(f"the {grp.spec['kind']} group of {t.name} has {grp.n_link_orbits} link orbits: a lifted "
                          "k-hop tree would not balance, and the balanced k-hop families are built on plain tori "
                          "only; drop `depth` (the balanced BFS families), or use the default group")
    reason = f"depth {k} below the diameter {t.diameter}: a least-weight tree of depth <= {k}"
    if req.start is not None:
        check_start(t, req.start, k)     # refused before any solve, as the solve would
        reason += ", started from the given tree"
    cached = req.start is None and cache_answers(t, k, req.time_limit, req.seed, req.solver)
    return Plan("khop-tree", reason, grp.spec["kind"], ("k-sp-allreduce",), build_lattice_khop, grp,
                solves=not cached, time_limit=None if cached else req.time_limit, cached=cached, depth=k)


def build_lattice_khop(req, plan) -> SolveResult:
    """The k-hop tree of a lattice torus, lifted by the plan's group and certified."""
    t = req.topology
    rec = khop_tree(t, req.depth, time_limit=req.time_limit, seed=req.seed, solver=req.solver,
                    progress=req.progress, start=req.start)
    provenance = {"algorithm": "k-sp-allreduce", "group": plan.group.spec["kind"], "seed": req.seed}
    return lifted_result(req, tree_base(t, rec), plan.group, rec.solver_claims(), provenance, rec.depth,
                         khop_notes(rec))
