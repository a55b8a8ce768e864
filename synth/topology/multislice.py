"""Several TPU slices joined by the data-centre network (multislice), with ICI and DCN bandwidths.

``K`` copies of a slice (any topology of the lattice family: a torus, a twisted torus, a grid) and
one DCN switch: every chip of every slice is linked to the switch, both ways, at the DCN bandwidth
per chip; the slice's own links carry the ICI bandwidth per link and direction.  One switch for
the whole data-centre network is the choice made here: it assumes the DCN is non-blocking between
slices (every chip can send at its NIC's rate to any other slice at once), the same model
ForestColl uses for its IB switch.  A DCN with less bisection would need switches per slice and
oversubscribed links between them; that is not modelled.

**Numbering**: chip ``c`` of slice ``k`` is ``k*C + c`` (``C`` chips per slice, numbered as in the
slice), the DCN switch is ``K*C``.  **Links**: slice ``k``'s links in the slice's order (link
``k*E + e``), then chip -> switch for every chip, then switch -> chip; :attr:`Multislice.link_class`
is ``0`` on ICI links and ``1`` on DCN links (``class_names``: ``("ici", "dcn")``).

In certificates and explicit files::

    {"kind": "multislice", "slice": {"kind": "torus", "shape": [4, 4, 4]}, "slices": 2,
     "ici_bandwidth": 100.0, "dcn_bandwidth": 6.25}

``--machine tpu-v5p:4x4x4 --slices 2`` builds it with the generation's ICI and DCN figures
(:data:`synth.topology.machines.TPU_BANDWIDTHS`); ``--dcn-bandwidth`` sets the DCN figure.

Examples
--------
>>> from synth.topology.spec import build_topology
>>> t = build_topology({"kind": "multislice", "slice": {"kind": "torus", "shape": [4, 4]}, "slices": 2,
...                     "ici_bandwidth": 50.0, "dcn_bandwidth": 3.125})
>>> t.name, t.n_vertices, t.n_compute, t.n_links, t.dcn_switch
('2 slices of torus 4x4', 33, 32, 192, 32)
>>> sorted(set(t.link_bandwidth.tolist()))
[3.125, 50.0]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from synth.errors import TopologyError
from synth.topology.base import Topology, check_size, is_int

__all__ = ["Multislice", "multislice", "multislice_from_spec", "multislice_spec_size", "SLICE_KINDS",
           "MAX_SLICES"]

#: the spec kinds a slice may be (the lattice family)
SLICE_KINDS = ("torus", "grid", "lattice", "twisted")
#: more slices than this is a typo (Google's multislice documentation describes jobs of a few slices)
MAX_SLICES = 64
_KEYS = {"kind", "slice", "slices", "ici_bandwidth", "dcn_bandwidth"}


@dataclass(frozen=True, eq=False)
class Multislice(Topology):
    """``slices`` copies of ``slice_topology`` and one DCN switch (module docstring)."""

    slices: int = 0
    slice_topology: Topology = None
    link_class: np.ndarray = field(default=None, repr=False)
    class_names: tuple = ()

    @property
    def chips_per_slice(self) -> int:
        return self.slice_topology.n_vertices

    @property
    def dcn_switch(self) -> int:
        """Vertex id of the DCN switch."""
        return self.slices * self.chips_per_slice

    def chip(self, slice_index, chip) -> np.ndarray:
        """Vertex id of ``chip`` (its id in the slice) of slice ``slice_index``."""
        return np.asarray(slice_index) * self.chips_per_slice + np.asarray(chip)


def _positive(value, key) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value <= 0:
        raise TopologyError(f"a multislice spec needs '{key}': a finite number of GB/s above 0, got "
                            f"{str(value)[:20]}")
    return float(value)


def _slices(k) -> int:
    if not is_int(k) or not 2 <= k <= MAX_SLICES:
        raise TopologyError(f"a multislice has 2 to {MAX_SLICES} slices, got {str(k)[:20]}")
    return int(k)


def multislice(inner: Topology, slices: int, ici_bandwidth: float, dcn_bandwidth: float) -> Multislice:
    """``slices`` copies of ``inner`` joined by one DCN switch (module docstring)."""
    K = _slices(slices)
    ici, dcn = _positive(ici_bandwidth, "ici_bandwidth"), _positive(dcn_bandwidth, "dcn_bandwidth")
    C, E = inner.n_vertices, inner.n_links
    name = f"{K} slices of {inner.name}"
    check_size(name, K * C + 1, K * (E + 2 * C))
    offset = np.repeat(np.arange(K, dtype=np.int64) * C, E)
    chips = np.arange(K * C, dtype=np.int64)
    switch = np.full(K * C, K * C, dtype=np.int64)
    src = np.concatenate([np.tile(inner.link_src, K) + offset, chips, switch])
    dst = np.concatenate([np.tile(inner.link_dst, K) + offset, switch, chips])
    cls = np.concatenate([np.zeros(K * E, dtype=np.int8), np.ones(2 * K * C, dtype=np.int8)])
    compute = (np.arange(K)[:, None] * C + inner.compute[None, :]).ravel()
    spec = {"kind": "multislice", "slice": inner.spec, "slices": K, "ici_bandwidth": ici, "dcn_bandwidth": dcn}
    return Multislice(name, spec, K * C + 1, src, dst, compute, bandwidth=np.where(cls == 0, ici, dcn),
                      slices=K, slice_topology=inner, link_class=cls, class_names=("ici", "dcn"))


def _slice_spec(spec) -> dict:
    extra = sorted(set(spec) - _KEYS)
    if extra:
        raise TopologyError(f"unknown key {extra[0][:40]!r} in a multislice spec; valid: {', '.join(sorted(_KEYS))}")
    inner = spec.get("slice")
    if not isinstance(inner, dict) or inner.get("kind") not in SLICE_KINDS or "failed" in inner:
        raise TopologyError(f"a multislice spec needs 'slice': a healthy topology spec of kind "
                            f"{', '.join(SLICE_KINDS)}")
    return inner


def multislice_from_spec(spec, read: Callable[[dict], Topology]) -> Multislice:
    """A ``multislice`` spec (module docstring); ``read`` builds the slice from its spec."""
    return multislice(read(_slice_spec(spec)), spec.get("slices"), spec.get("ici_bandwidth"),
                      spec.get("dcn_bandwidth"))


def multislice_spec_size(spec, size: Callable[[dict], tuple | None]):
    """``(V, E, chips)`` of a ``multislice`` spec without building it (``size``: the slice's sizer); None if
    malformed."""
    try:
        inner = _slice_spec(spec)
    except TopologyError:
        return None
    k, counts = spec.get("slices"), size(inner)
    if counts is None or not is_int(k) or not 2 <= k <= MAX_SLICES:
        return None
    V, E, C = counts
    return k * V + 1, k * (E + 2 * V), None if C is None else k * C

