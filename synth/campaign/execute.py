"""Run one task where it lands (a Dask worker, or the client itself when serial): no Dask here.

:func:`execute` never raises for the task's own failure: a command that exits non-zero, prints
no JSON object, or a call that raises, gives ``status`` ``"failed"`` and a one-line ``error``.
A command line runs in-process through the entry point it is given (``synth.cli.task_main``,
passed down by the caller: this stage sits below the CLI and does not import it), its stdout and
stderr captured; that entry point refuses what a task may not do, and lets Ctrl-C and SIGTERM
through to the campaign.  A call runs the function its task names: a task read from a campaign
file names one of :data:`synth.campaign.spec.CALLS` (checked when the file is read).

Examples
--------
>>> from synth.campaign.spec import task_from_json
>>> out = execute(task_from_json({"call": "synth.units:parse_size", "kwargs": {"text": "1KiB"}}))
>>> out["status"], out["result"], out["error"]
('done', 1024, None)
>>> out = execute(task_from_json({"call": "synth.units:parse_size", "kwargs": {"text": "lots"}}))
>>> out["status"], out["error"][:32]
('failed', 'SynthError: cannot read the size')
>>> execute(task_from_json(["info", "--torus", "4x4"]))["error"]
'no command entry point was given to run a command line'
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import time

from synth.campaign.spec import Task

__all__ = ["execute", "one_line", "MAX_ERROR_CHARS"]

MAX_ERROR_CHARS = 400


class TaskFailed(Exception):
    """The task ran and failed; the message is its one line."""


def one_line(text: str) -> str:
    """``text`` on one line of at most :data:`MAX_ERROR_CHARS` characters.

    >>> one_line("  two\\n lines ")
    'two lines'
    """
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 4] + " ..."


def _run_command(entry, argv) -> dict:
    if entry is None:
        raise TaskFailed("no command entry point was given to run a command line")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = entry(list(argv))
        except SystemExit as exc:  # argparse's --help and --version exit
            code = exc.code if isinstance(exc.code, int) else 2
    if code != 0:
        lines = [line for line in err.getvalue().splitlines() if line.strip()]
        raise TaskFailed(f"exit {code}: {lines[-1] if lines else 'no message'}")
    text = out.getvalue().strip()
    for candidate in (text, text.splitlines()[-1] if text else ""):
        try:
            result = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(result, dict):
            return result
    raise TaskFailed("the command printed no JSON object")


def _run_call(task: Task):
    module, _, name = task.call.partition(":")
    try:
        function = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise TaskFailed(f"cannot load {task.call}: {exc}") from None
    result = function(**task.arguments())
    try:
        return json.loads(json.dumps(result, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise TaskFailed(f"{task.call} returned what is not JSON data: {exc}") from None


def execute(task: Task, entry=None) -> dict:
    """Run ``task``: ``{"status", "result", "error", "seconds"}`` (module docstring).

    ``entry`` runs a command line (``entry(argv) -> exit code``): ``synth.cli.task_main``.
    """
    start = time.perf_counter()
    try:
        result = _run_command(entry, task.argv) if task.argv else _run_call(task)
        status, error = "done", None
    except TaskFailed as exc:
        result, status, error = None, "failed", one_line(str(exc))
    except Exception as exc:  # the task's own failure, whatever it is, is its row's error
        result, status, error = None, "failed", one_line(f"{exc.__class__.__name__}: {exc}")
    return {"status": status, "result": result, "error": error, "seconds": round(time.perf_counter() - start, 6)}
