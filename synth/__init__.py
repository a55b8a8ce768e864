"""synth: provably optimal allreduce schedules on symmetric networks.

The flat API re-exports the pieces most users need::

    >>> import synth
    >>> t = synth.parse_torus("4x4")
    >>> cert = synth.certify(synth.sp_allreduce(t), synth.torus_gamma(t))
    >>> cert.claims["rounds"], synth.check_certificate(cert).valid
    (8, True)

Optimization models live in :mod:`synth.models` (imported on demand; the
checker never imports them).
"""

from synth._version import __version__  # noqa: F401  (synth.__version__)

from synth.errors import FileFormatError, GroupError, ScheduleError, SynthError, TopologyError
from synth.topology import Topology
from synth.topology.torus import Torus, parse_torus, torus
from synth.topology.hyperx import HyperX, parse_hyperx
from synth.topology.spineleaf import SpineLeaf, parse_spine_leaf
from synth.symmetry.group import Group
from synth.symmetry.spec import named_group
from synth.symmetry.torus import torus_gamma, torus_translations, torus_translations_negation
from synth.schedule import BaseSchedule, Block, Schedule, chunk_elements, exchange_schedule, tree_schedule
from synth.schedule.lift import lift, lifted_weights
from synth.schedule.sp import sp_allreduce
from synth.schedule.exchange import exchange_allreduce
from synth.check import (Certificate, Metrics, Report, certify, check_certificate, check_file, execute,
                         measure_explicit, measure_symmetric, read_certificate, read_explicit, round_lower_bound,
                         write_certificate, write_explicit)
from synth.analysis.cost import Network, goodput, goodput_bound, model_time
from synth.solving import SolveResult, solve

__all__ = [
    "FileFormatError", "GroupError", "ScheduleError", "SynthError", "TopologyError", "Topology", "Torus",
    "parse_torus", "torus", "HyperX", "parse_hyperx", "SpineLeaf", "parse_spine_leaf", "Group", "named_group",
    "torus_gamma", "torus_translations", "torus_translations_negation", "BaseSchedule", "Block", "Schedule",
    "chunk_elements", "exchange_schedule", "tree_schedule", "lift", "lifted_weights", "sp_allreduce",
    "exchange_allreduce", "Metrics", "execute", "measure_explicit", "measure_symmetric", "round_lower_bound",
    "Certificate", "read_certificate", "write_certificate", "Report", "certify", "check_certificate",
    "check_file", "read_explicit", "write_explicit", "Network", "goodput", "goodput_bound", "model_time",
    "SolveResult", "solve",
]
