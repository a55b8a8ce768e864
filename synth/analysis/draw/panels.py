"""The three kinds of panel of a picture, each drawn on a matplotlib ``Axes`` it is given.

* :func:`tree_panel`: the topology in light grey, a tree's links as arrows towards the parent, its
  roots marked;
* :func:`heat_panel`: every directed link coloured by its load in one round;
* :func:`timeline_panel`: the modeled time of every round as stacked bars (``alpha``, hop latency,
  bandwidth).

Failed links and vertices (a damaged topology's ``failures``, :mod:`synth.topology.failures`) are drawn on
every topology panel, dashed red and crossed out.  On a topology whose links differ in bandwidth (GPU
servers, multislice, a ``--topology`` file with a ``bandwidth`` list) every link's stroke is as wide as
its bandwidth class (:func:`bandwidth_widths`: the widest class twice the base width, the narrowest
half, logarithmic between), and the first tree panel carries a legend of the classes in GB/s.  Nothing here imports matplotlib at module level: the
callers pass its objects in.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.analysis.draw.layout import layout
>>> t = parse_torus("4x4")
>>> pairs, vertices = failed_parts(t)
>>> pairs.shape, vertices.size
((0, 2), 0)
>>> from synth.topology.failures import Failures, damage
>>> [a.tolist() for a in failed_parts(damage(t, Failures(links=[(1, 0)], nodes=[5])))]
[[[0, 1]], [5]]
>>> bandwidth_widths(t) is None
True
>>> from synth.topology.gpu import gpu_fabric
>>> sorted(set(bandwidth_widths(gpu_fabric("dgx-a100", 2)).tolist()))
[0.5, 2.0]
"""

from __future__ import annotations

import numpy as np

from synth.analysis.draw.layout import STUB, Layout
from synth.topology.link_classes import bandwidth_classes

__all__ = ["tree_panel", "heat_panel", "timeline_panel", "failed_parts", "scales", "bandwidth_widths", "TERMS"]

#: the timeline's three terms: label and colour
TERMS = (("alpha (per round)", "#9e9e9e"), ("hop latency x longest route", "#4c72b0"),
         ("busiest link's bytes / bandwidth", "#dd8452"))
_BACKGROUND = "#d0d0d0"
_TREE = "#1f3b73"
_FAILED = "#d62728"


def failed_parts(topology) -> tuple:
    """``(pairs, vertices)``: the failed connections (``K x 2`` vertex ids, ``u < v``) and failed vertices of a
    damaged ``topology`` (empty arrays for a healthy one); links its schedules leave idle work, so they are not
    among them (they are not drawn)."""
    failures = getattr(topology, "failures", None)
    links = failures.failed_links if failures else ()
    nodes = failures.nodes if failures else ()
    return np.array(links, dtype=np.int64).reshape(-1, 2), np.array(nodes, dtype=np.int64)


def bandwidth_widths(topology):
    """Each link's stroke width relative to the base width, by bandwidth (module docstring); None when every
    link has the same bandwidth (the picture is then drawn as before)."""
    bw = topology.link_bandwidth
    lo, hi = float(bw.min()) if bw.size else 1.0, float(bw.max()) if bw.size else 1.0
    if hi <= lo:
        return None
    return 0.5 + 1.5 * np.log(bw / lo) / np.log(hi / lo)


def _bandwidth_legend(ax, topology, lw) -> None:
    """A legend of the bandwidth classes: a stroke of each class's width, its GB/s and name."""
    from matplotlib.lines import Line2D  # matplotlib: the caller imported it already

    widths = bandwidth_widths(topology)
    if widths is None:
        return
    bw = topology.link_bandwidth
    handles, seen = [], set()
    for c in bandwidth_classes(topology):
        label = f"{c.bandwidth:g} GB/s" + (f" {c.name}" if c.name else "")
        if label in seen:
            continue
        seen.add(label)
        width = float(widths[np.flatnonzero(bw == c.bandwidth)[0]])
        handles.append(Line2D([], [], color="#606060", linewidth=max(lw * 1.2 * width, 0.4), label=label))
    ax.legend(handles=handles, loc="upper right", fontsize=6, frameon=False, title="links (per direction)",
              title_fontsize=6)


def scales(lay: Layout, width_points: float) -> tuple:
    """``(line width, marker area)`` in points for a panel ``width_points`` wide showing ``lay``."""
    span = max(float(np.ptp(lay.pos[:, 0])) if lay.pos.size else 1.0, 1.0)
    unit = width_points / (span + 1.0)  # points per layout unit
    return float(np.clip(0.18 * unit, 0.15, 2.5)), float(np.clip(0.45 * unit, 0.6, 9.0)) ** 2


def _vertices(ax, lay, topology, area, color="#555555"):
    compute = topology.is_compute
    ax.scatter(*lay.pos[compute].T, s=area, c=color, marker="o", linewidths=0, zorder=3)
    if (~compute).any():  # switches
        ax.scatter(*lay.pos[~compute].T, s=area * 1.6, c="#8c8c8c", marker="s", linewidths=0, zorder=3)


def _failed(ax, lay, topology, lw, area):
    from matplotlib.collections import LineCollection  # matplotlib: the caller imported it already

    pairs, vertices = failed_parts(topology)
    if pairs.size:
        segments = np.stack([lay.pos[pairs[:, 0]], lay.pos[pairs[:, 1]]], axis=1)
        ax.add_collection(LineCollection(segments, colors=_FAILED, linewidths=max(lw * 1.5, 0.8),
                                         linestyles="dashed", zorder=4, gid="failed"))
    if vertices.size:
        ax.scatter(*lay.pos[vertices].T, s=area * 3, c=_FAILED, marker="x", linewidths=max(lw * 2, 1.0), zorder=5,
                   gid="failed")


def _frame(ax, lay):
    ax.set_aspect("equal")
    ax.set_axis_off()
    lo, hi = lay.pos.min(axis=0) - 0.8, lay.pos.max(axis=0) + 0.8
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])


def tree_panel(ax, lay: Layout, topology, tree, width_points: float, legend: bool = True) -> None:
    """Draw ``tree`` (a :class:`synth.analysis.draw.contents.Tree`) over the topology in grey (``legend``: with
    the legend of the bandwidth classes, when the links differ)."""
    from matplotlib.collections import LineCollection  # matplotlib: the caller imported it already

    lw, area = scales(lay, width_points)
    widths = bandwidth_widths(topology)
    ax.add_collection(LineCollection(lay.centred, colors=_BACKGROUND, linewidths=lw * 0.6 * (
        1.0 if widths is None else widths), zorder=1, antialiaseds=False))
    links = tree.links
    paths = lay.centred[links]
    wrapped = lay.wrap[links]
    # a wrapping link also gets a stub arriving at its receiver, from the side it wraps from
    dst = lay.pos[topology.link_dst[links[wrapped]]]
    arriving = np.stack([dst - STUB * lay.step[links[wrapped]], dst], axis=1)
    pieces = [paths] + ([np.linspace(arriving[:, 0], arriving[:, 1], paths.shape[1], axis=1)]
                                 if arriving.size else [])
    shafts = np.concatenate(pieces)
    ax.add_collection(LineCollection(shafts, colors=_TREE, linewidths=lw * 2, zorder=2))
    mid = shafts.shape[1] // 2  # an arrowhead halfway along every hop, pointing towards the parent
    tail, head = shafts[:, mid - 2], shafts[:, mid + 3]
    span = float(np.ptp(lay.pos[:, 0])) + 1.0
    ax.quiver(tail[:, 0], tail[:, 1], head[:, 0] - tail[:, 0], head[:, 1] - tail[:, 1], angles="xy",
              scale_units="xy", scale=1, color=_TREE, width=float(np.clip(0.08 / span, 0.0008, 0.006)),
              headwidth=4, headlength=4, headaxislength=3.5, zorder=2)
    _vertices(ax, lay, topology, area)
    ax.scatter(*lay.pos[tree.roots].T, s=area * 5, c="#c44e52", marker="*", linewidths=0, zorder=4)
    _failed(ax, lay, topology, lw, area)
    if legend:
        _bandwidth_legend(ax, topology, lw)
    _frame(ax, lay)


def heat_panel(ax, lay: Layout, topology, loads, norm, cmap, width_points: float):
    """Colour every link by ``loads`` (one round); returns the ``LineCollection`` (its array is ``loads``)."""
    from matplotlib.collections import LineCollection  # matplotlib: the caller imported it already

    lw, area = scales(lay, width_points)
    widths = bandwidth_widths(topology)
    lines = LineCollection(lay.paths, array=np.asarray(loads, dtype=np.float64), cmap=cmap, norm=norm,
                           linewidths=lw * 1.6 * (1.0 if widths is None else widths), zorder=2,
                           antialiaseds=False)  # flat colours: small files
    ax.add_collection(lines)
    _vertices(ax, lay, topology, area * 0.5, color="#333333")
    _failed(ax, lay, topology, lw, area)
    _frame(ax, lay)
    return lines


def timeline_panel(ax, times: np.ndarray, size_text: str, highlight=()) -> None:
    """Stacked bars of the three terms of every round's modeled time (``times``: ``3 x S`` seconds)."""
    from matplotlib.ticker import MaxNLocator  # matplotlib: the caller imported it already

    us = np.asarray(times, dtype=np.float64) * 1e6
    rounds = np.arange(1, us.shape[1] + 1)
    bottom = np.zeros(us.shape[1])
    for row, (label, colour) in zip(us, TERMS):
        ax.bar(rounds, row, bottom=bottom, color=colour, label=label, width=0.8 if rounds.size <= 32 else 1.0,
               linewidth=0)
        bottom += row
    for s in highlight:
        ax.bar([s], [bottom[s - 1]], width=0.8, fill=False, edgecolor="black", linewidth=1.2)
    ax.set_xlabel("round")
    ax.set_ylabel("modeled time (us)")
    # two lines and a legend of one column: the panel is narrow, and nothing may spill onto the next one
    ax.set_title(f"modeled time at {size_text}:\n{bottom.sum():.2f} us in {us.shape[1]} rounds", fontsize=9)
    ax.set_xlim(0.3, us.shape[1] + 0.7)
    ax.set_ylim(0, bottom.max() * 1.6)  # room for the legend's three lines above the bars
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper left", ncol=1, fontsize=7, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
