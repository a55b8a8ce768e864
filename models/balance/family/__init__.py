"""Depth-bounded (k-hop) families for groups smaller than Γ (rectangular tori, docs/spec.md §5-§6).

Under Γ on an equal-sided torus one k-hop tree lifts to Omega = 1; under a smaller
group (translations x negation, translations) a weighted family of k-hop trees does
when every link orbit carries the same load in every round.  The modules, bottom-up:

* :mod:`~synth.models.balance.family.profiles`: route profiles per link orbit and the
  dimension-weighted metrics;
* :mod:`~synth.models.balance.family.labels`: trees scheduled by labels (rounds), their
  compaction and mirror images;
* :mod:`~synth.models.balance.family.skeletons`: the k-hop trees (heuristic or exact) that
  give the hubs and their labels;
* :mod:`~synth.models.balance.family.assignment`: the MIP that gives every vertex a hub and
  a label per unit (built apart from solving);
* :mod:`~synth.models.balance.family.family`: :func:`khop_family`, which tries families by
  size and returns the candidates for :func:`synth.models.balance.balance_candidates`.

Examples
--------
>>> from synth.topology.torus import parse_torus
>>> b = labelled_tree_schedule(parse_torus("3"), [-1, 0, 0], [0, 1, 3], 3)  # label 2 unused
>>> b.n_rounds, compact_rounds(b).n_rounds
(6, 4)
"""

from .family import KHopFamily, khop_family
from .labels import compact_rounds, labelled_tree_schedule
from .profiles import dimension_metric, orbit_profiles
from .skeletons import EXACT_MAX_VERTICES, ITERATIONS, skeletons

__all__ = ["KHopFamily", "khop_family", "labelled_tree_schedule", "compact_rounds", "dimension_metric",
           "orbit_profiles", "skeletons", "EXACT_MAX_VERTICES", "ITERATIONS"]
