"""Pick the construction for a request, build it, and certify it.

:func:`solve` makes a :class:`~synth.solving.request.SolveRequest` of the topology and the options,
asks :func:`~synth.solving.planning.plan` which construction runs (one planner per network family:
:mod:`~synth.solving.torus`, :mod:`~synth.solving.lattice`, :mod:`~synth.solving.graphs` for HyperX,
spine-leaf, user graphs and damaged networks, and :mod:`~synth.solving.packing` for the packing
models), and runs the plan's ``build``.  The other submodules: :mod:`~synth.solving.khop` (k-hop
trees, from the cache of :mod:`~synth.solving.cache` or the models), :mod:`~synth.solving.record`,
:mod:`~synth.solving.balanced`, :mod:`~synth.solving.repair`, :mod:`~synth.solving.sweep` (every depth bound),
:mod:`~synth.solving.by_size` (a depth chosen by message size), :mod:`~synth.solving.candidates` (the
candidates ranked by message size elsewhere) and :mod:`~synth.solving.summary`
(what ``synth solve`` prints).  Errors in the parameters are :class:`~synth.errors.OptionError`
s that begin with the parameter's name; the CLI says its flag.

``collective`` (``"allreduce"``, ``"reduce-scatter"`` or ``"allgather"``) certifies, instead of
the allreduce, the reduction or the dissemination half of the same construction
(:func:`synth.schedule.collective.collective_half`): every tree construction (SP and the balanced
BFS trees of rectangular tori or smaller groups, k-hop trees and families, HyperX windmills,
spine-leaf stars, user graphs) has both; the exchange schedules do not.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> r = solve(parse_torus("4x4"))
>>> r.certificate.claims["rounds"], r.depth
(8, 4)
>>> rs = solve(parse_torus("4x4"), collective="reduce-scatter")
>>> rs.certificate.claims["rounds"], rs.certificate.claims["round_optimal"], rs.depth
(4, True, 4)
"""

from __future__ import annotations

from synth.check.certificate import read_certificate
from synth.check.claims import check_certificate
from synth.solving.graphs import PACKING_MAX_VERTICES
from synth.solving.planning import plan
from synth.solving.request import SolveRequest, SolveResult
from synth.symmetry.spec import TORUS_GROUPS

__all__ = ["SolveResult", "SolveRequest", "solve", "run", "plan", "check_written", "TORUS_GROUPS",
           "PACKING_MAX_VERTICES"]


def check_written(cert, path=None):
    """The checker's report on the certificate as written to ``path`` (or on ``cert`` when ``path`` is None).

    What ``synth solve`` prints as ``valid``: the file is read back and every claim
    re-derived, the dual's bound included, in symmetric mode (one orbit per group
    element; 16x16, k = 3: about 0.3 s), so ``valid True`` is what ``synth check``
    says of the same file.
    """
    return check_certificate(cert if path is None else read_certificate(path), "symmetric")


def solve(topology, **options) -> SolveResult:
    """Build and certify the best schedule synth knows for ``topology`` and the ``options``.

    The options (:class:`~synth.solving.request.SolveRequest`; an unknown one is an
    :class:`~synth.errors.OptionError`):

    ``depth``
        Without it (or with ``depth >= H``) this is SP-allreduce: the BFS tree of depth ``H``, which has
        the least possible weight ``p - 1``; below the diameter, a k-hop tree (or family, or packing).
    ``exchange``
        On a torus with an even side, the forest plus exchange, ``2H - 1`` rounds; on an all-odd torus
        ``2H`` is already the lower bound and SP-allreduce is returned.
    ``group``
        The torus symmetry group (:data:`synth.symmetry.spec.TORUS_GROUPS`); Γ (the default on equal-sided
        tori) is regular on links so any BFS tree balances; under a smaller group (fewer chunks) or on a
        rectangular torus the balance model of :mod:`synth.models.balance` chooses weighted trees or forests
        with Ω = 1.
    ``start``
        A parent array of a tree of depth ``<= depth`` (:func:`synth.solving.khop.start_tree`) that a k-hop
        solve (Γ on an equal-sided torus, ``depth < H``) starts from.
    ``collective``
        Certify the reduce-scatter or allgather half of the construction instead (``"allreduce"``,
        ``"reduce-scatter"`` or ``"allgather"``; every tree construction has both halves, the exchange
        schedules do not); a tree of depth ``h`` then takes ``h`` rounds.
    ``elements``, ``mode``
        Input elements per node (default one per chunk) and the check mode of :func:`synth.certify`.
    ``generators``, ``allow_unbalanced``
        A user graph's group generators, and whether to keep a lift that no symmetry balances.
    ``time_limit``, ``seed``, ``solver``, ``progress``
        The solvers' limit (seconds), seed and k-hop solver; a callback for progress lines.
    ``size``, ``engine``
        A message size in bytes: off an equal-sided healthy torus, build the candidates of
        :mod:`synth.solving.candidates` (layered, timed with ``R = H ... H + 4``, depth-bounded, Ring)
        within the one ``time_limit`` and keep the fastest at that size by the cost model
        (``engine="model"``) or a SimGrid replay (``"simgrid"``); on such a torus the depth sweep of
        :func:`synth.solving.by_size.choose_by_size` chooses instead.

    What runs is what :func:`synth.solving.planning.plan` says for the same options.
    """
    return run(SolveRequest(topology, **options))


def run(request: SolveRequest) -> SolveResult:
    """Plan ``request`` and build what the plan says: :func:`solve` for a request already made."""
    chosen = plan(request)
    return chosen.build(request, chosen)
