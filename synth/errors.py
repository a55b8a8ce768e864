"""The exceptions synth raises, as one small hierarchy.

Every error a user can cause (a bad shape, a corrupt file, a schedule that is
not an allreduce) is a :class:`SynthError`; the CLI turns it into a one-line
message and a non-zero exit code.  Anything else escaping is a bug.

Library errors name the *parameter* that is wrong, as the library spells it
(``depth must be at least 1``); the CLI, which knows which flag sets which
parameter, rewrites the leading name of an :class:`OptionError` into its flag.
"""

__all__ = [
    "SynthError",
    "TopologyError",
    "GroupError",
    "ScheduleError",
    "InvalidScheduleError",
    "FileFormatError",
    "OptionError",
    "SolverError",
    "XmlError",
    "CampaignError",
]


class SynthError(Exception):
    """Base class of every error synth reports to a user."""


class TopologyError(SynthError, ValueError):
    """A topology description is malformed (e.g. ``'16xx'`` or a side below 3)."""


class GroupError(SynthError, ValueError):
    """Permutations that are not automorphisms, or a group unfit for lifting."""


class ScheduleError(SynthError, ValueError):
    """A schedule is malformed: a route that is not a path, a bad round, ..."""


class InvalidScheduleError(ScheduleError):
    """The checker finds a schedule file INVALID (not the collective it claims, or a claim fails): a command
    that would use it refuses it; the CLI exits 1, as ``synth check`` does on the same file."""


class FileFormatError(SynthError, ValueError):
    """A certificate or explicit schedule file cannot be read."""


class OptionError(SynthError, ValueError):
    """A parameter of a library call is out of range or inconsistent with the others.

    The message begins with the parameter's name as the library spells it, so that the
    CLI can say the flag instead; any other parameter a library message (of any
    :class:`SynthError`, or a note) names is quoted in backticks, `like_this`, for the same
    reason (:func:`synth.cli._common.with_flags`):

    >>> str(OptionError("depth must be at least 1, not 0"))
    'depth must be at least 1, not 0'
    """


class SolverError(SynthError):
    """A solver is not installed, not supported for this model, or failed in a way we can name."""


class XmlError(SynthError, ValueError):
    """The text is not an MSCCL algorithm the checker can read (:mod:`synth.runtime.msccl.check`)."""


class CampaignError(SynthError):
    """A campaign file, a cluster address or a results store that synth cannot use (:mod:`synth.campaign`)."""
