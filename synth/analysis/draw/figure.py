"""The whole picture: tree panels and the timeline on top, the per-round load heat maps below.

:func:`render` lays a :class:`~synth.analysis.draw.contents.Scene` out on a matplotlib ``Figure``
(Agg, never pyplot: no global state); :func:`draw` reads a file, renders it and writes the
picture atomically (:func:`synth.fileio.write_atomic`).  The bytes are the same for the same
input: PNG files carry no ``Software`` entry, SVG files no date and a fixed ``svg.hashsalt``.

One heat panel per round, all on one colour scale: from the smallest to the largest load shown
(from 0 when every link shown carries the same load);
beyond :data:`MAX_PANELS` rounds an evenly spaced selection (first and last included), or the
one round ``round_`` names (:func:`synth.analysis.draw.contents.shown_rounds`).

Examples
--------
>>> import os, tempfile
>>> from synth.baselines import build_baseline
>>> from synth.topology.torus import parse_torus
>>> folder = tempfile.mkdtemp()
>>> build_baseline("swing-l", parse_torus("4x4")).write(os.path.join(folder, "swing.jsonl"))
>>> d = draw(os.path.join(folder, "swing.jsonl"), os.path.join(folder, "swing.png"), round_=3)
>>> d.rounds, d.kind, d.load_max, d.width
((3,), 'explicit', 262144, 1400)
"""

from __future__ import annotations

import io
import math
import os
import textwrap
from dataclasses import dataclass

import numpy as np

from synth.analysis.cost import Network
from synth.analysis.draw.contents import scene
from synth.analysis.draw.layout import layout
from synth.analysis.draw.panels import heat_panel, timeline_panel, tree_panel
from synth.check.claims import require_valid
from synth.errors import OptionError
from synth.fileio import check_writable, write_atomic
from synth.units import format_size

__all__ = ["Drawing", "render", "draw", "picture_bytes", "FORMATS", "DPI"]

FORMATS = ("png", "svg")
DPI = 100
WIDTH = 14.0  # inches
_COLUMNS = 8  # heat panels per row
_CMAP = "viridis"


@dataclass(frozen=True)
class Drawing:
    """What a picture shows: the rounds of its heat panels, the colour scale (bytes), its size in pixels."""

    topology: str
    label: str
    kind: str
    layout: str
    rounds: tuple
    load_min: int
    load_max: int
    size: int
    model_seconds: float
    trees: int
    width: int = 0
    height: int = 0

    def to_json(self) -> dict:
        return {"topology": self.topology, "schedule": self.label, "kind": self.kind, "layout": self.layout,
                "rounds": list(self.rounds), "load_min_bytes": self.load_min, "load_max_bytes": self.load_max,
                "size": self.size, "model_seconds": self.model_seconds, "trees": self.trees,
                "width_px": self.width, "height_px": self.height}


def _aspect(lay) -> float:
    span = np.ptp(lay.pos, axis=0) + 1.6
    return float(np.clip(span[1] / span[0], 0.12, 1.4))


def render(sc):
    """``(figure, drawing)``: ``sc`` (a :class:`~synth.analysis.draw.contents.Scene`) on a matplotlib Figure."""
    # matplotlib waits until a picture is made: `synth --help` and every other command never load it
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    t, lay = sc.topology, layout(sc.topology)
    rounds, n_rounds = sc.rounds, int(sc.times.shape[1])
    lo, hi = int(sc.loads.min()), int(sc.loads.max())
    aspect = _aspect(lay)
    cols = min(len(rounds), _COLUMNS if aspect >= 0.5 else _COLUMNS // 2)  # wide layouts (3D): fewer per row
    rows = math.ceil(len(rounds) / cols)
    heat_w = min((WIDTH - 1.2) / cols, 4.5)  # one round alone stays a panel, not a poster
    heat_h = heat_w * aspect + 0.35
    top_h = float(np.clip(7.5 / max(len(sc.trees), 1) * aspect, 3.2, 7.0)) + 0.5
    height = round((top_h + rows * heat_h + 0.6) * DPI) / DPI  # a whole number of pixels
    fig = Figure(figsize=(WIDTH, height), dpi=DPI)
    FigureCanvasAgg(fig)
    outer = fig.add_gridspec(2, 1, height_ratios=[top_h, rows * heat_h], hspace=0.2, left=0.02, right=0.95,
                             top=1 - 0.75 / fig.get_figheight(), bottom=0.02)
    # an empty column before the timeline holds its tick labels and y-axis label clear of the last tree
    top = outer[0].subgridspec(1, len(sc.trees) + 2, width_ratios=[1.4] * len(sc.trees) + [0.35, 1.0], wspace=0.08)
    tree_w = WIDTH * 0.96 * 1.4 / (1.4 * len(sc.trees) + 1.35) * 72
    for i, tree in enumerate(sc.trees):
        ax = fig.add_subplot(top[0, i])
        tree_panel(ax, lay, t, tree, tree_w, legend=i == 0)
        more = f" (first {len(sc.trees)} of {sc.n_trees})" if i == 0 and sc.n_trees > len(sc.trees) else ""
        # the title wraps to its panel's width (several trees share the row)
        title = f"{tree.label}{more}: arrows point to the parent"
        ax.set_title(textwrap.fill(title, max(30, int(tree_w / 5.5))), fontsize=9 if len(sc.trees) == 1 else 7)
    size_text = format_size(sc.size)
    timeline_panel(fig.add_subplot(top[0, -1]), sc.times, size_text, rounds if sc.picked else ())
    bar_w = 0.08 * heat_w * cols / (WIDTH - 1.2)  # the colour bar keeps its width beside a lone panel
    grid = outer[1].subgridspec(rows, cols + 1, width_ratios=[1.0] * cols + [bar_w], wspace=0.05, hspace=0.25)
    norm = Normalize(vmin=lo if lo < hi else 0, vmax=hi)  # one load everywhere: a scale from 0 to it
    lines = None
    for k, s in enumerate(rounds):
        ax = fig.add_subplot(grid[k // cols, k % cols])
        lines = heat_panel(ax, lay, t, sc.loads[k], norm, _CMAP, heat_w * 72)
        ax.set_title(f"round {s}: max {format_size(int(sc.loads[k].max()))}", fontsize=8)
    bar = fig.colorbar(lines, cax=fig.add_subplot(grid[:, -1]))
    unit, scale = next((u, f) for u, f in (("MiB", 1 << 20), ("KiB", 1 << 10), ("bytes", 1)) if hi >= f or f == 1)
    vmin = lo if lo < hi else 0
    ticks = MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]).tick_values(vmin / scale, hi / scale) * scale
    bar.set_ticks([x for x in ticks if vmin <= x <= hi])  # round numbers of the unit; the scale stays in bytes
    bar.formatter = FuncFormatter(lambda x, _: f"{x / scale:.4g}")
    bar.update_ticks()
    bar.set_label(f"{unit} per link and round (at {size_text} per node)", fontsize=8)
    sampled = "" if sc.picked or len(rounds) == n_rounds else f"; {len(rounds)} of {n_rounds} rounds shown"
    fig.suptitle(f"{sc.label} on {t.name} ({sc.kind}){sampled}", fontsize=12, y=1 - 0.15 / fig.get_figheight())
    width, height = fig.canvas.get_width_height()
    drawing = Drawing(t.name, sc.label, sc.kind, lay.kind, rounds, lo, hi, sc.size, float(sc.times.sum()),
                      len(sc.trees), width, height)
    return fig, drawing


def picture_bytes(fig, fmt: str) -> bytes:
    """The figure as PNG or SVG bytes, the same for the same figure (no date, no tool version, fixed ids)."""
    from matplotlib import rc_context  # see render: matplotlib only when drawing

    if fmt not in FORMATS:
        raise OptionError(f"picture format {fmt!r} is not one of {', '.join(FORMATS)}")
    metadata = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
    buf = io.BytesIO()
    with rc_context({"svg.hashsalt": "synth-draw", "svg.fonttype": "path"}):
        fig.savefig(buf, format=fmt, dpi=DPI, metadata=metadata, **({"pil_kwargs": {"optimize": True}}
                                                                    if fmt == "png" else {}))
    return buf.getvalue()


def _format(out) -> str:
    ext = os.path.splitext(os.fspath(out))[1].lower().lstrip(".")
    if ext not in FORMATS:
        raise OptionError(f"draw: cannot tell the picture format of {os.fspath(out)[:200]!r}; name it .png or .svg")
    return ext


def draw(path, out, *, round_=None, size: int = 1 << 20, net: Network = Network()) -> Drawing:
    """Draw the schedule of ``path`` (a certificate or an explicit file) into ``out`` (``.png`` or ``.svg``).

    Raises
    ------
    OptionError
        For an unknown picture format, a round outside the schedule, a topology too large to draw
        (:data:`synth.analysis.draw.contents.MAX_DRAWN_VERTICES`) or a size below one element.
    FileFormatError
        If ``path`` cannot be read as a certificate or explicit file, or ``out`` cannot be written.
    InvalidScheduleError
        If the checker finds ``path`` INVALID (:func:`synth.check.claims.require_valid`): nothing is drawn.
    """
    fmt = _format(out)
    check_writable(out)
    contents = scene(path, size, net, round_)
    require_valid(path, "not drawn")
    fig, drawing = render(contents)
    write_atomic(out, picture_bytes(fig, fmt))
    return drawing
