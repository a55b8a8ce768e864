"""Schedules for graphs that symmetry cannot balance: trees packed by an LP, then made integer.

* :mod:`~synth.models.packing.layered`: the layered LP (one chunk per owner, shortest-path trees
  layered by distance, fractional parents and shares; the residual group shrinks it);
* :mod:`~synth.models.packing.local`: the same LP near the failures only, a healthy schedule's trees
  kept elsewhere (large networks, and repair);
* :mod:`~synth.models.packing.arcs`: arc sets (parent choices and the links they load) and the packing
  LP over them, shared by the layered and routed models;
* :mod:`~synth.models.packing.rounding`: from the LP's fractions to an integer schedule (each
  owner's chunk cut into units, units sharing a tree merged into one weighted component);
* :mod:`~synth.models.packing.classdual`: the whole LP's dual as the certified bound of the layered
  class (docs/bounds.md section 5);
* :mod:`~synth.models.packing.pipeline`: :func:`pack`, the layered LP and its rounding, returned
  uncertified as every packing model's schedule is (:class:`~synth.models.packing.result.Packed`, with
  the LP's status and share of the volume bound as numbers): the solve stage certifies it;
* :mod:`~synth.models.packing.timed`: timed trees (any send round, any parent, more rounds) by column
  generation over the trees :mod:`~synth.models.packing.tree_pricing` finds among the arcs of
  :mod:`~synth.models.packing.tree_space` (links, or routes through switches; docs/timed.md), made
  integer by :mod:`~synth.models.packing.timed_schedule`;
* :mod:`~synth.models.packing.local_timed`: timed trees near the failures only, the healthy SP trees kept
  elsewhere (:mod:`~synth.models.packing.region`: the damaged region and the healthy trees in closed
  form); experimental, not yet on the solve path (docs/failures.md section 8);
* :mod:`~synth.models.packing.routed` (routes through switches, one-way links) and
  :mod:`~synth.models.packing.depth` (depth-bounded trees for small messages).
"""

from .layered import LayeredArcs, LayeredSolution, build_layered, layered_arcs, root_reps, solve_layered
from .local import Reference, reference_fractions, solve_local
from .pipeline import pack
from .result import Packed
from .rounding import round_schedule
from .classdual import class_dual, with_class_bound
from .timed import TimedOptions, TimedSolution, solve_timed
from .timed_schedule import pack_timed

__all__ = ["LayeredArcs", "LayeredSolution", "build_layered", "layered_arcs", "root_reps", "solve_layered",
           "Packed", "pack", "round_schedule", "Reference", "reference_fractions", "solve_local", "class_dual",
           "with_class_bound", "TimedOptions", "TimedSolution", "pack_timed", "solve_timed"]
