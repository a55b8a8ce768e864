"""Baseline allreduce algorithms as explicit schedules the checker verifies.

Every baseline is generated transmission by transmission in synth's explicit
representation (:class:`synth.schedule.Schedule`), so :func:`synth.check.execute`
proves it correct and :func:`synth.check.measure_explicit` measures its
``S``, ``Psi``, ``Theta`` and ``Omega`` exactly as for SP-allreduce.

=====================  ==========================================================
name                   algorithm
=====================  ==========================================================
``ring``               balanced multiport Ring: ``d`` edge-disjoint Hamiltonian
                       cycles, each run both ways (Patarasuk & Yuan 2009)
``bucket``             balanced multiport Bucket: ring reduce-scatter/allgather
                       along the coordinate rings (Jain & Sabharwal 2010;
                       Sack & Gropp 2015)
``swing-l``            Swing, latency-optimal (De Sensi et al., NSDI 2024)
``swing-b``            Swing, bandwidth-optimal
``swing-l-1port``      Swing, latency-optimal on one port (the reference
                       launcher's SwingL)
``trivance-l``         Trivance, latency-optimal (Juerss, Addanki, Schmid 2026)
``trivance-b``         Trivance, bandwidth-optimal (the reference's distances
                       and direction balance on every side)
``recursive-doubling`` recursive doubling (Rabenseifner 2004, Thakur et al. 2005)
``halving-doubling``   Rabenseifner's recursive halving reduce-scatter + doubling
                       allgather
``nccl-ring``          NCCL's rings on GPU fabrics: one channel per NIC rail,
                       each a ring through every server (:mod:`synth.baselines.gpu`)
``nccl-tree``          NCCL's double binary tree across servers, a chain inside
                       each, pipelined
``hierarchical``       reduce-scatter inside each server (or TPU slice), allreduce
                       across servers per rail (over DCN), allgather inside
=====================  ==========================================================

Each module's docstring names the reference code it follows and where it
differs.  Bucket, Swing and Trivance also run on HyperX as the torus of the
same shape embedded in it (:mod:`synth.baselines.hyperx`, the paper's
section 7.6); Ring and the doubling families run on spine-leaf with routes
through the switches, and so do Bucket, Swing and Trivance, on the ring of
the hosts (:mod:`synth.baselines.spineleaf`).  The GPU baselines run on fabrics
whose links carry bandwidths, servers found from the slowest tier of links
(:func:`synth.baselines.gpu.fabric_servers`).

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.check import execute
>>> b = build_baseline("bucket", parse_torus("4x4"))
>>> execute(b.schedule)
[]
>>> m = b.measure()
>>> m.rounds, str(m.psi), str(m.theta), str(m.omega)
(12, '1', '1', '1')
>>> sorted(BASELINES)[:3]
['bucket', 'halving-doubling', 'hierarchical']
"""

from __future__ import annotations

from synth.baselines import bucket, doubling, gpu, ring, swing, trivance
from synth.baselines.base import Baseline
from synth.baselines.hyperx import on_hyperx
from synth.baselines.spineleaf import on_spine_leaf
from synth.baselines.lattice import lattice_ring, refusal
from synth.errors import TopologyError
from synth.topology.lattice import LatticeTorus

__all__ = ["Baseline", "BASELINES", "SUPPORTED", "build_baseline"]


_REGISTRY = {
    "ring": (ring.ring, ring.SUPPORTED),
    "bucket": (on_spine_leaf(on_hyperx(bucket.bucket)), bucket.SUPPORTED),
    "swing-l": (on_spine_leaf(on_hyperx(swing.swing_l)), swing.SUPPORTED),
    "swing-b": (on_spine_leaf(on_hyperx(swing.swing_b)), swing.SUPPORTED),
    "swing-l-1port": (on_spine_leaf(on_hyperx(swing.swing_l_1port)), swing.SUPPORTED),
    "trivance-l": (on_spine_leaf(on_hyperx(trivance.trivance_l)), trivance.SUPPORTED),
    "trivance-b": (on_spine_leaf(on_hyperx(trivance.trivance_b)), trivance.SUPPORTED),
    "recursive-doubling": (doubling.recursive_doubling, doubling.SUPPORTED),
    "halving-doubling": (doubling.halving_doubling, doubling.SUPPORTED),
    "nccl-ring": (gpu.nccl_ring, gpu.SUPPORTED),
    "nccl-tree": (gpu.nccl_tree, gpu.SUPPORTED),
    "hierarchical": (gpu.hierarchical, gpu.SUPPORTED),
}
#: name -> builder ``f(topology) -> Baseline``
BASELINES = {name: f for name, (f, _) in _REGISTRY.items()}
#: name -> one line saying which shapes the algorithm supports
SUPPORTED = {name: s for name, (_, s) in _REGISTRY.items()}


def build_baseline(name: str, topology) -> Baseline:
    """Build the named baseline's explicit schedule on ``topology``.

    Parameters
    ----------
    name : str
        One of :data:`BASELINES`.
    topology : Topology
        A :class:`~synth.topology.torus.Torus` (every baseline), a HyperX (Bucket,
        Swing, Trivance), a spine-leaf (every baseline; Bucket, Swing and
        Trivance on the ring of its hosts) or, for the doubling families, any
        topology with compute nodes.

    Returns
    -------
    Baseline
        The explicit schedule and its chunk weights; each builder's docstring
        (:mod:`synth.baselines.bucket`, ...) says how its chunks are numbered.

    Raises
    ------
    TopologyError
        For an unknown name, or a shape the algorithm is not defined on (the
        message says which shapes it supports).

    Examples
    --------
    >>> from synth.topology.torus import parse_torus
    >>> b = build_baseline("trivance-l", parse_torus("9x9"))
    >>> b.name, b.schedule.n_rounds
    ('trivance-l', 4)
    >>> build_baseline("tree", parse_torus("4x4"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    synth.errors.TopologyError: unknown baseline 'tree'; valid: bucket, halving-doubling, ..., trivance-l
    """
    if name not in BASELINES:
        raise TopologyError(f"unknown baseline {name!r}; valid: {', '.join(sorted(BASELINES))}")
    if isinstance(topology, LatticeTorus):   # twisted tori, meshes, mixed wrap: Ring on a Hamiltonian cycle
        if name == "ring":
            return lattice_ring(topology)
        if name not in ("recursive-doubling", "halving-doubling"):
            raise TopologyError(refusal(name, topology))
    return BASELINES[name](topology)
