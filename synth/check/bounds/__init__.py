"""Checkable lower bounds, re-derived without the solver: three families, one module each.

* **k-hop trees** (this package's :func:`khop_dual_bound`): a lower bound on ``W*(k)``, the least
  weight of a spanning tree of depth ``<= k`` rooted at vertex 0 of a torus, from a dual the
  certificate stores;
* **bandwidth** (:mod:`~synth.check.bounds.bandwidth`): the volume and cut bounds on the bandwidth
  term of any allreduce on any graph, re-derived from the topology and a stored cut;
* **the layered class** (:mod:`~synth.check.bounds.layered_class`): the least bandwidth term of any
  schedule of shortest-path trees layered by distance, re-derived from a stored dual after checking
  that the schedule is layered.

The certificate claims each; ``synth check`` re-derives it, so a wrong or tampered dual or cut can
only give a weaker number or an INVALID verdict, never a false bound.

The k-hop dual's ``"kind"`` (:mod:`~synth.check.bounds.kinds`) names its re-derivation:

* ``"khop-layered-lagrangian"``: the Lagrangian relaxation of the layered LP at the stored
  dual (:mod:`~synth.check.bounds.lagrangian`); any dual gives a valid bound, so a wrong or
  tampered dual can only give a weaker number, never a false one;
* ``"khop-cone-count"`` stores nothing but ``k``: its bound (:func:`cone_count_bound`) is
  re-derived from the topology alone and needs no LP, which is what large tori (64x64),
  where the LP does not finish, get (:mod:`~synth.check.bounds.cone`);
* ``"khop-terminal-steiner"`` stores ``k`` and a few terminal vertices: its bound is the
  exact least excess of a depth-``k`` arborescence reaching them (:func:`terminal_bound`,
  :mod:`~synth.check.bounds.steiner`).

The bandwidth and layered-class bounds are imported from their modules
(``from synth.check.bounds.bandwidth import bandwidth_bound``); :mod:`synth.check.claims` checks all three.

Examples
--------
One dispatch for the three kinds; a dual for a deeper bound proves the shallower one too:

>>> from synth.topology.torus import parse_torus
>>> t = parse_torus("5x5")
>>> [khop_dual_bound(t, 1, {"kind": kind, "k": 1, "terminals": [12]}).bound for kind in KINDS]
[0, 60, 27]
>>> khop_dual_bound(t, 1, {"kind": CONE_KIND, "k": 2}).bound <= 60
True
>>> khop_dual_bound(t, 2, {"kind": CONE_KIND, "k": 1})
Traceback (most recent call last):
...
synth.errors.SynthError: dual bound is for depth 1; a bound for depth 2 needs a dual for depth >= 2
"""

from __future__ import annotations

from synth.check.bounds.cone import MAX_CONE_VERTICES, cone_count_bound
from synth.check.bounds.kinds import CONE_KIND, KIND, KINDS, STEINER_KIND, DualBound
from synth.check.bounds.lagrangian import MAX_LAGRANGIAN_VERTICES, layered_dual_bound, root_stabilizer_perms
from synth.check.bounds.steiner import MAX_CELLS, MAX_TERMINALS, excess_tables, splits, steiner_dual, terminal_bound
from synth.errors import SynthError
from synth.topology.lattice import LatticeTorus
from synth.topology.torus import Torus

__all__ = ["khop_dual_bound", "DualBound", "KIND", "CONE_KIND", "STEINER_KIND", "KINDS", "cone_count_bound",
           "layered_dual_bound", "root_stabilizer_perms", "terminal_bound", "excess_tables", "steiner_dual",
           "splits", "MAX_CONE_VERTICES", "MAX_LAGRANGIAN_VERTICES", "MAX_TERMINALS", "MAX_CELLS"]

#: the re-derivation of each kind, called as ``f(t, k, dual)`` with ``k`` the dual's own depth
_DERIVE = {
    KIND: layered_dual_bound,
    CONE_KIND: lambda t, k, dual: cone_count_bound(t, k),
    STEINER_KIND: lambda t, k, dual: terminal_bound(t, k, dual.get("terminals")),
}


def khop_dual_bound(t, k: int, dual: dict) -> DualBound:
    """Re-derive the lower bound on ``W*(k)`` that the stored ``dual`` proves, dispatching on its kind.

    Parameters
    ----------
    t : Torus
    k : int
        Depth bound to prove a bound for.  The dual may be for any depth ``dual["k"] >= k``
        (``W*`` does not increase with the depth bound).
    dual : dict
        The stored dual.

    Returns
    -------
    DualBound

    Raises
    ------
    SynthError
        If the dual is malformed: wrong kind, a depth below ``k``, ids out of range, a cut that
        is not a valid ``S``, or a dual of the wrong sign.
    """
    lattice = isinstance(t, LatticeTorus) and t.is_vertex_transitive
    if not isinstance(t, Torus) and not lattice:
        raise SynthError(f"dual bound: k-hop bounds are defined on tori and lattice tori, not on {t.name}")
    if not isinstance(dual, dict) or dual.get("kind") not in _DERIVE:
        raise SynthError(f"dual bound: expected kind {KIND!r}, {CONE_KIND!r} or {STEINER_KIND!r}")
    if lattice and dual["kind"] == STEINER_KIND:
        # its tables are separable over a plain torus's sides; a twisted wrap is not
        raise SynthError(f"dual bound: the {STEINER_KIND!r} bound is defined on plain tori, not on {t.name}")
    kd = dual.get("k")
    if not isinstance(kd, int) or isinstance(kd, bool) or kd < k:
        raise SynthError(f"dual bound is for depth {str(kd)[:40]}; a bound for depth {k} needs a dual for "
                         f"depth >= {k}")
    k = kd                                  # W*(k) >= W*(kd) for k <= kd
    return _DERIVE[dual["kind"]](t, k, dual)
