"""Directed cuts for the per-partner hop-indexed model (a thin name: the code is :mod:`synth.models.forest.cuts`).

The layered graph merges the two roots ``{0, b}`` into one source; :class:`CutLoop` solves the
LP relaxation of a one-partner model, separating directed cuts by max-flow
(:func:`synth.models.forest.cuts.flow_cuts`) and adding their images under the pair's stabilizer.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> from synth.models.xhop.instance import distance_matrix, hop_arcs
>>> from synth.models.xhop.model import build_xhop_model, model_data
>>> t = parse_torus("6x6")
>>> data = model_data(distance_matrix(t), 3, [1], arcs=hop_arcs(distance_matrix(t), 1, 3))
>>> model, v = build_xhop_model(data)
>>> loop = CutLoop(model, v, data)
>>> res = loop.run()
>>> res.bound >= 37 - 1e-6, res.n_cuts > 0
(True, True)
"""

from synth.models.forest.cuts import CutLoop, CutResult
from synth.models.forest.cuts import add_entering_cuts as add_layer_cuts

__all__ = ["CutLoop", "CutResult", "add_layer_cuts"]
