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
    "ArgumentTypeError",
    "check_instance",
    "check_int",
    "check_path",
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


class ArgumentTypeError(OptionError, TypeError):
    """A library call got an argument of the wrong type (``depth=2.5``, a string for a topology).

    A :class:`TypeError` for library users and an :class:`OptionError` (so a :class:`SynthError`) for the CLI;
    the message begins with the parameter's name.
    """


def check_instance(value, name: str, cls, example: str = ""):
    """``value`` if it is a ``cls``, else :class:`ArgumentTypeError` naming ``name`` and what was expected.

    >>> check_instance("4x4", "topology", int, " (e.g. 3)")
    Traceback (most recent call last):
    ...
    synth.errors.ArgumentTypeError: topology: expected a int (e.g. 3), got str
    """
    if not isinstance(value, cls):
        want = cls.__name__ if isinstance(cls, type) else " or ".join(c.__name__ for c in cls)
        raise ArgumentTypeError(f"{name}: expected a {want}{example}, got {type(value).__name__}")
    return value


def check_int(value, name: str, minimum=None, optional: bool = False):
    """``value`` as an ``int`` (numpy integers accepted; bool, float and the rest refused), at least ``minimum``.

    >>> check_int(2, "depth"), check_int(None, "depth", optional=True)
    (2, None)
    >>> check_int(2.5, "depth")
    Traceback (most recent call last):
    ...
    synth.errors.ArgumentTypeError: depth must be an int, got float 2.5
    >>> check_int(0, "depth", minimum=1)
    Traceback (most recent call last):
    ...
    synth.errors.OptionError: depth must be at least 1, got 0
    """
    import numbers   # here: errors is imported by everything, keep its import cost nil

    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{name} must be an int, got {type(value).__name__} {str(value)[:40]}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise OptionError(f"{name} must be at least {minimum}, got {value}")
    return value


def check_path(value, name: str = "path"):
    """A file path (``str`` or :class:`os.PathLike`); integers (file descriptors) and the rest are refused."""
    import os

    if isinstance(value, bool) or not isinstance(value, (str, os.PathLike)):
        raise ArgumentTypeError(f"{name} must be a file path (str or os.PathLike), got {type(value).__name__}")
    return value
