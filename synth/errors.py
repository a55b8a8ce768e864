"""The exceptions synth raises, as one small hierarchy.

Every error a user can cause (a bad shape, a corrupt file, a schedule that is
not an allreduce) is a :class:`SynthError`; the CLI turns it into a one-line
message and a non-zero exit code.  Anything else escaping is a bug.
"""

__all__ = [
    "SynthError",
    "TopologyError",
    "GroupError",
    "ScheduleError",
    "FileFormatError",
]


class SynthError(Exception):
    """Base class of every error synth reports to a user."""


class TopologyError(SynthError, ValueError):
    """A topology description is malformed (e.g. ``'16xx'`` or a side below 3)."""


class GroupError(SynthError, ValueError):
    """Permutations that are not automorphisms, or a group unfit for lifting."""


class ScheduleError(SynthError, ValueError):
    """A schedule is malformed: a route that is not a path, a bad round, ..."""


class FileFormatError(SynthError, ValueError):
    """A certificate or explicit schedule file cannot be read."""
