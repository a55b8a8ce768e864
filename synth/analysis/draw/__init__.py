"""Pictures of a schedule on its topology: ``synth draw``.

:mod:`~synth.analysis.draw.contents` computes what a picture shows (trees, per-round link loads,
the modeled timeline) with the checker's readers and measures; :mod:`~synth.analysis.draw.layout`
places vertices and links per topology kind; :mod:`~synth.analysis.draw.panels` and
:mod:`~synth.analysis.draw.figure` draw them with matplotlib, imported only when a picture is made.
"""

from synth.analysis.draw.figure import Drawing, FORMATS, draw, render
from synth.analysis.draw.layout import Layout
from synth.analysis.draw.contents import MAX_DRAWN_LINKS, MAX_DRAWN_VERTICES, MAX_PANELS, Scene, Tree, scene

__all__ = ["Drawing", "FORMATS", "MAX_PANELS", "draw", "render", "Layout", "MAX_DRAWN_LINKS",
           "MAX_DRAWN_VERTICES", "Scene", "Tree", "scene"]
