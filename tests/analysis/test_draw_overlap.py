"""No text of the timeline panel (legend, labels, title) lies on another panel or its title."""

import pytest

from synth.analysis.draw import render, scene
from synth.cli import main


@pytest.mark.parametrize("argv", [["--torus", "8x8", "--fail-link", "0-1", "--time-limit", "2"], ["--torus", "8x8"],
                                  ["--torus", "4x4x4"]])
def test_the_timeline_keeps_to_its_panel(tmp_path, argv):
    cert = tmp_path / "c.json"
    assert main(["solve", *argv, "--out", str(cert)]) == 0
    fig, _ = render(scene(str(cert)))
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    timeline = next(ax for ax in fig.axes if ax.get_ylabel() == "modeled time (us)")
    mine = [timeline.get_legend().get_window_extent(r), timeline.yaxis.label.get_window_extent(r),
            timeline.xaxis.label.get_window_extent(r), timeline.title.get_window_extent(r),
            timeline.get_tightbbox(r)]
    for ax in fig.axes:
        if ax is timeline:
            continue
        theirs = [ax.get_window_extent(r)] + ([ax.title.get_window_extent(r)] if ax.get_title() else [])
        for a in mine:
            for b in theirs:
                assert not a.overlaps(b), (ax.get_title(), a, b)
    assert timeline.title.get_window_extent(r).x1 <= fig.bbox.x1
