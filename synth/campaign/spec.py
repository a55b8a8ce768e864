"""Campaign tasks: what one task runs, and the content key that names its result.

A task is either a ``synth`` command line (its command first; ``--json`` is added when missing, so
the command prints one JSON object, the task's result) or a call of one of synth's own task functions
(:data:`CALLS`: ``"module:function"`` with JSON keyword arguments; its return value, JSON data, is the
result).  :func:`task_from_json` reads a task from a campaign file, which is untrusted: a call it
accepts is one of :data:`CALLS`, with known keyword arguments, and a command line starts with one of
:data:`JSON_COMMANDS` (its flags are judged by synth's parser, :mod:`synth.cli.task`, which this
stage sits below).  Python code may build a :class:`Task` of any function itself (``bench/simulate.py``
sends its own module to the workers).
The content key is a hash of the task's canonical JSON, synth's version and, for tasks that may
solve, the k-hop solver's revision: the same work under the same code has the same key, so a
restarted campaign skips what is already in its store.

Examples
--------
>>> t = task_from_json(["info", "--torus", "4x4"])
>>> t.argv, t.to_json()
(('info', '--torus', '4x4', '--json'), ['info', '--torus', '4x4', '--json'])
>>> t.key == task_from_json(["info", "--torus", "4x4", "--json"]).key, len(t.key)
(True, 32)
>>> c = task_from_json({"call": "synth.campaign.calls:khop_entry", "kwargs": {"shape": [4, 4], "k": 2}})
>>> c.call, c.arguments()
('synth.campaign.calls:khop_entry', {'k': 2, 'shape': [4, 4]})
>>> task_from_json({"call": "os:system", "kwargs": {"command": "touch x"}})  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
synth.errors.CampaignError: task {"call": "os:system", "kwargs": {"command": "touch x"}}: 'call' must be one of
synth's task functions (synth.campaign.calls:khop_entry, synth.units:parse_size)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from synth._version import __version__
from synth.errors import CampaignError

__all__ = ["Task", "task_from_json", "content_key", "canonical", "JSON_COMMANDS", "SOLVING_COMMANDS", "CALLS"]

#: the synth commands that print one JSON object with ``--json`` (a task may run any of them)
JSON_COMMANDS = ("solve", "check", "export", "run", "simulate", "bound", "baseline", "compare", "sweep", "info")
#: commands whose result depends on the k-hop solver: their keys include its revision
SOLVING_COMMANDS = ("solve", "sweep", "compare", "export", "run")
#: the functions a campaign file may call: name -> (required keyword arguments, optional ones)
CALLS = {
    "synth.campaign.calls:khop_entry": (("shape", "k"), ("time_limit", "seed", "solver", "cache")),
    "synth.units:parse_size": (("text",), ()),
}
MAX_ARGS, MAX_ARG_CHARS = 1000, 10_000


def canonical(data) -> str:
    """The canonical JSON text of ``data``: sorted keys, no spaces (what keys are hashed from).

    >>> canonical({"b": 1, "a": [1, 2]})
    '{"a":[1,2],"b":1}'
    """
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True)
class Task:
    """One unit of a campaign: a command line (``argv``) or a library call (``call``, ``kwargs``)."""

    argv: tuple = ()
    call: str = ""
    kwargs: str = "{}"  # the call's keyword arguments as canonical JSON (hashable, and sent as it is)

    def to_json(self):
        """The task as JSON data: the argument list, or ``{"call": ..., "kwargs": {...}}``."""
        return list(self.argv) if self.argv else {"call": self.call, "kwargs": self.arguments()}

    def arguments(self) -> dict:
        return json.loads(self.kwargs)

    @property
    def key(self) -> str:
        return content_key(self)

    def label(self) -> str:
        """A short text for messages: the command line, or the call."""
        return " ".join(self.argv) if self.argv else f"{self.call}({self.kwargs})"


def _solver_revision() -> int:
    # waits until a key is needed: the models package pulls in solver bindings at import
    from synth.models.khop import SOLVER_REVISION

    return SOLVER_REVISION


def content_key(task: Task) -> str:
    """32 hex digits of sha256 over the task's canonical JSON, synth's version and (where it matters)
    the solver's revision: a call (it may solve) or a command in :data:`SOLVING_COMMANDS`."""
    data = {"task": task.to_json(), "synth": __version__}
    if not task.argv or task.argv[0] in SOLVING_COMMANDS:
        data["solver_revision"] = _solver_revision()
    return hashlib.sha256(canonical(data).encode()).hexdigest()[:32]


def _short(obj) -> str:
    text = json.dumps(obj) if not isinstance(obj, str) else repr(obj)
    return text if len(text) <= 120 else text[:117] + "..."


def _argv_task(obj: list) -> Task:
    if not obj or len(obj) > MAX_ARGS or not all(isinstance(a, str) and len(a) <= MAX_ARG_CHARS for a in obj):
        raise CampaignError(f"task {_short(obj)}: a command line is a non-empty list of at most {MAX_ARGS} strings")
    if obj[0] not in JSON_COMMANDS:
        raise CampaignError(f"task {_short(obj)}: the first item must be a synth command that prints JSON "
                            f"({', '.join(JSON_COMMANDS)})")
    argv = tuple(obj) if "--json" in obj else (*obj, "--json")
    return Task(argv=argv)


def _call_task(obj: dict) -> Task:
    extra = set(obj) - {"call", "kwargs"}
    if extra:
        raise CampaignError(f"task {_short(obj)}: unknown field(s) {', '.join(sorted(map(str, extra)))} "
                            f"(a call has 'call' and 'kwargs')")
    call, kwargs = obj.get("call"), obj.get("kwargs", {})
    if not isinstance(call, str) or call not in CALLS:  # compared by value: nothing else is ever imported
        raise CampaignError(f"task {_short(obj)}: 'call' must be one of synth's task functions "
                            f"({', '.join(CALLS)})")
    if not isinstance(kwargs, dict):
        raise CampaignError(f"task {_short(obj)}: 'kwargs' must be an object")
    required, optional = CALLS[call]
    unknown = sorted(map(str, set(kwargs) - set(required) - set(optional)))
    missing = [name for name in required if name not in kwargs]
    if unknown or missing:
        raise CampaignError(f"task {_short(obj)}: " + (f"unknown keyword argument(s) {', '.join(unknown)}" if unknown
                            else f"missing keyword argument(s) {', '.join(missing)}") +
                            f" of {call} (it takes {', '.join(required + optional)})")
    try:
        text = canonical(kwargs)
    except (TypeError, ValueError):
        raise CampaignError(f"task {_short(obj)}: 'kwargs' must be JSON data") from None
    return Task(call=call, kwargs=text)


def task_from_json(obj) -> Task:
    """The :class:`Task` of a campaign file's entry (an argument list or a call object), validated;
    a :class:`Task` is returned as it is."""
    if isinstance(obj, Task):
        return obj
    if isinstance(obj, (list, tuple)):
        return _argv_task(list(obj))
    if isinstance(obj, dict):
        return _call_task(obj)
    raise CampaignError(f"task {_short(obj)}: a task is a list of arguments or a {{'call': ..., 'kwargs': ...}} "
                        f"object")
