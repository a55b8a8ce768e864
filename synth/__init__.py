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

from synth.errors import FileFormatError, GroupError, ScheduleError, SynthError, TopologyError  # noqa: E402
from synth.topology import Topology  # noqa: E402
from synth.torus import Torus, parse_torus, torus  # noqa: E402
from synth.hyperx import HyperX, parse_hyperx  # noqa: E402
from synth.spineleaf import SpineLeaf, parse_spine_leaf  # noqa: E402
from synth.group import Group, named_group, torus_gamma, torus_translations, torus_translations_negation  # noqa
from synth.schedule import BaseSchedule, Block, Schedule, chunk_elements, exchange_schedule, tree_schedule  # noqa
from synth.lift import lift, lifted_weights  # noqa: E402
from synth.sp import sp_allreduce  # noqa: E402
from synth.exchange import exchange_allreduce  # noqa: E402
from synth.check import Metrics, execute, measure_explicit, measure_symmetric, round_lower_bound  # noqa: E402
from synth.certificate import Certificate, read_certificate, write_certificate  # noqa: E402
from synth.certify import Report, certify, check_certificate, check_file  # noqa: E402
from synth.explicit import read_explicit, write_explicit  # noqa: E402
from synth.cost import Network, goodput, goodput_bound, model_time  # noqa: E402
from synth.solve import SolveResult, solve  # noqa: E402

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
