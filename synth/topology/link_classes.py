"""Links grouped by class and bandwidth: what ``synth info`` lists and ``synth draw`` colours.

A preset that knows its link classes (GPU servers: ``nvswitch``/``xgmi``, ``nic``, ``rail``;
multislice: ``ici``, ``dcn``) carries ``link_class`` (one label per link) and ``class_names``;
a damaged network takes its surviving links' classes from its healthy network.  Any other
topology is grouped by bandwidth alone (a ``--topology`` file with a ``bandwidth`` list).

Examples
--------
>>> from synth.topology.gpu import gpu_fabric
>>> [(c.name, c.bandwidth, c.links) for c in bandwidth_classes(gpu_fabric("dgx-a100", 2))]
[('nvswitch', 300.0, 32), ('nic', 25.0, 32), ('rail', 25.0, 32)]
>>> from synth.topology.torus import parse_torus
>>> bandwidth_classes(parse_torus("4x4"))
[LinkClass(name=None, bandwidth=1.0, latency=0.0, links=64)]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synth.topology.base import Topology

__all__ = ["LinkClass", "bandwidth_classes", "link_class_labels"]


@dataclass(frozen=True)
class LinkClass:
    """A class of directed links: its name (None when the topology names none), GB/s, µs, and how many."""

    name: str | None
    bandwidth: float
    latency: float
    links: int

    def to_json(self) -> dict:
        return {"class": self.name, "bandwidth": self.bandwidth, "latency": self.latency, "links": self.links}

    def describe(self) -> str:
        """``'nic: 32 links at 25 GB/s'`` (with the latency when it is not 0)."""
        lat = f", {self.latency:g} µs" if self.latency else ""
        return f"{self.name + ': ' if self.name else ''}{self.links} links at {self.bandwidth:g} GB/s{lat}"


def link_class_labels(t: Topology) -> tuple:
    """``(labels, names)``: each link's class label and the class names, or ``(None, ())`` when ``t`` names none."""
    healthy = getattr(t, "healthy", None)
    source = t if healthy is None else healthy
    labels, names = getattr(source, "link_class", None), getattr(source, "class_names", ())
    if labels is None:
        return None, ()
    if healthy is not None:
        labels = labels[healthy.link_ids(t.link_src, t.link_dst)]
    return np.asarray(labels), tuple(names)


def bandwidth_classes(t: Topology) -> list:
    """The links of ``t`` grouped by (class, bandwidth, latency), in class order then by falling bandwidth."""
    labels, names = link_class_labels(t)
    bw, lat = t.link_bandwidth, t.link_latency
    label = np.zeros(t.n_links, dtype=np.int64) if labels is None else labels.astype(np.int64)
    keys = np.stack([label, -bw, lat], axis=1)
    uniq, counts = np.unique(keys, axis=0, return_counts=True)
    return [LinkClass(names[int(k[0])] if names else None, float(-k[1]), float(k[2]), int(c))
            for k, c in zip(uniq, counts)]
