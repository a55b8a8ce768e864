"""Campaign files: JSON or TOML, a list of tasks and grids that expand into more.

A campaign file holds ``tasks`` (each an argument list of a synth command, or a library call
``{"call": "module:function", "kwargs": {...}}``) and ``grids``: each grid names a command, the
flags that vary (every combination is a task, in the order the flags are written, the last
varying fastest) and fixed arguments (``args``, given as they are)::

    {"tasks": [["info", "--torus", "4x4x4"]],
     "grids": [{"command": "solve", "vary": {"--torus": ["4x4", "6x6"], "--depth": [1, 2]},
                "args": ["--time-limit", "10"]}]}

A ``true`` value in ``vary`` is a bare flag, ``false`` leaves the flag out.  Tasks with the same
content key are run once (the first kept).  ``vet``, when given (``synth.cli.task_vetter()``), judges
each command line as synth's parser reads it; a task it refuses refuses the whole file.

Examples
--------
>>> tasks = parse_campaign({"grids": [{"command": "solve", "vary": {"--torus": ["4x4", "6x6"], "--depth": [1, 2]}}]})
>>> [" ".join(t.argv[1:-1]) for t in tasks]
['--torus 4x4 --depth 1', '--torus 4x4 --depth 2', '--torus 6x6 --depth 1', '--torus 6x6 --depth 2']
>>> len(parse_campaign({"tasks": [["info", "--torus", "4x4"], ["info", "--torus", "4x4", "--json"]]}))
1
>>> parse_campaign({"task": []})
Traceback (most recent call last):
...
synth.errors.CampaignError: a campaign has 'tasks' and/or 'grids', not 'task'
"""

from __future__ import annotations

import itertools
import json
import tomllib
from pathlib import Path

from synth.campaign.spec import Task, task_from_json
from synth.errors import CampaignError, FileFormatError
from synth.fileio import LIMITS, printable, read_capped

__all__ = ["parse_campaign", "read_campaign", "expand_grid", "MAX_TASKS"]

#: the most tasks one campaign file may expand into
MAX_TASKS = 1_000_000


def _flag_value(value) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, (list, dict)):
        raise CampaignError(f"grid value {json.dumps(value)[:60]} must be a string or a number")
    return str(value)


def expand_grid(grid) -> list:
    """The argument lists of one grid (module docstring), each a list of strings.

    >>> expand_grid({"command": "info", "vary": {"--torus": ["4x4", "8x8"], "--json": [True]}})
    [['info', '--torus', '4x4', '--json'], ['info', '--torus', '8x8', '--json']]
    """
    if not isinstance(grid, dict) or not isinstance(grid.get("command"), str):
        raise CampaignError("a grid is an object with a 'command' (e.g. \"solve\"), 'vary' and optional 'args'")
    extra = set(grid) - {"command", "vary", "args"}
    if extra:
        raise CampaignError(f"a grid has 'command', 'vary' and 'args', not {', '.join(sorted(extra))}")
    vary, fixed = grid.get("vary", {}), grid.get("args", [])
    if not isinstance(vary, dict) or not all(isinstance(v, list) and v for v in vary.values()):
        raise CampaignError("a grid's 'vary' maps each flag to a non-empty list of values")
    if not isinstance(fixed, list) or not all(isinstance(a, (str, int, float)) for a in fixed):
        raise CampaignError("a grid's 'args' is a list of arguments")
    count = 1
    for values in vary.values():
        count *= len(values)
    if count > MAX_TASKS:
        raise CampaignError(f"a grid of {count:,} tasks is more than {MAX_TASKS:,}")
    out = []
    for combo in itertools.product(*vary.values()):
        argv = [grid["command"]]
        for flag, value in zip(vary, combo):
            if value is True:
                argv.append(flag)
            elif value is not False:
                argv += [flag, _flag_value(value)]
        out.append(argv + [_flag_value(a) for a in fixed])
    return out


def parse_campaign(data, vet=None) -> list:
    """The tasks of a campaign (the parsed JSON or TOML of its file), grids expanded, duplicates dropped.

    ``vet(argv)`` raises :class:`~synth.errors.CampaignError` for a command line that may not run.
    """
    if not isinstance(data, dict):
        raise CampaignError("a campaign is an object with 'tasks' and/or 'grids'")
    extra = set(data) - {"tasks", "grids"}
    if extra:
        raise CampaignError(f"a campaign has 'tasks' and/or 'grids', not {', '.join(map(repr, sorted(extra)))}")
    entries, grids = data.get("tasks", []), data.get("grids", [])
    if not isinstance(entries, list) or not isinstance(grids, list):
        raise CampaignError("'tasks' and 'grids' are lists")
    if len(entries) > MAX_TASKS:
        raise CampaignError(f"the campaign has more than {MAX_TASKS:,} tasks")
    for grid in grids:
        entries = entries + expand_grid(grid)
        if len(entries) > MAX_TASKS:
            raise CampaignError(f"the campaign has more than {MAX_TASKS:,} tasks")
    tasks, seen = [], set()
    for entry in entries:
        task = task_from_json(entry)
        if task.key not in seen:
            if vet is not None and task.argv:
                try:
                    vet(task.argv)
                except CampaignError as exc:
                    raise CampaignError(f"task {printable(task.label()[:120])}: {exc}") from None
            seen.add(task.key)
            tasks.append(task)
    if not tasks:
        raise CampaignError("the campaign has no tasks")
    return tasks


def read_campaign(path, vet=None) -> list[Task]:
    """The tasks of the campaign file at ``path``: TOML when it ends in ``.toml``, JSON otherwise
    (a regular file within ``synth.fileio.LIMITS['json']``); ``vet`` as in :func:`parse_campaign`."""
    path = Path(path)
    try:
        raw = read_capped(path, LIMITS["json"])
    except FileFormatError as exc:
        raise CampaignError(str(exc)) from None
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(raw.decode("utf-8"))
        else:
            data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        kind = "TOML" if path.suffix.lower() == ".toml" else "JSON"
        raise CampaignError(f"{printable(path)}: not {kind}: {' '.join(str(exc).split())[:200]}") from None
    try:
        return parse_campaign(data, vet)
    except CampaignError as exc:
        raise CampaignError(f"{printable(path)}: {exc}") from None
