"""The ``synth`` command line: a thin layer over the library.

Each command is one module (:mod:`synth.cli.solve`, ``check``, ``export``, ``run``, ``simulate``, ``bound``,
``baseline``, ``compare``, ``sweep``, ``draw``, ``info``, ``campaign``, ``repair``) with ``add_parser(sub)``
and ``cmd_<name>(args)``, which parses its arguments, calls the library, and prints;
:mod:`synth.cli._common` holds what they share.  Command modules import the library's own modules at
module level, so ``import synth.cli`` loads most of ``synth``; what is slow to load waits inside the
command that needs it: the models and every solver binding (OR-Tools, HiGHS, SCIP), SciPy, matplotlib,
Dask, MPI and JAX (a test in ``tests/test_isolation.py`` says so).

:func:`main` turns every expected failure (a :class:`~synth.errors.SynthError`, and as a safety net
any ``OSError``, ``ValueError``, ``OverflowError``, ``RecursionError`` or ``MemoryError``) into one
line ``synth: error: ...`` on stderr with exit code 2.  Exit 1 means only that a schedule fails its
check (INVALID): ``synth check`` says so, and any command given such a file refuses it with one line
(:class:`~synth.errors.InvalidScheduleError`); a crash is never 1.  SIGTERM is handled like Ctrl-C, so a write in
progress removes its temp file; either stops the whole command (every solve, sweep and by-size
loop lets it through), never writes ``--out``, and exits 130 (Ctrl-C) or 143 (SIGTERM), with what
an interrupted solve kept said on the same line.  Flags are validated where they are parsed: time limits finite and
positive, seeds 32-bit, counts and sizes in range.

Exit codes: 0 success, 1 a failed check or run (INVALID), 2 an error, 130 Ctrl-C, 143 SIGTERM.

:func:`task_main` runs a campaign task's command line (on a Dask worker, or in the campaign's own
process): it refuses what a task may not do (:mod:`synth.cli.task`) and lets an interrupt reach the
campaign; :func:`task_vetter` makes the same check of a campaign file before any task runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from synth._version import __version__
from synth.cli import (baseline, bound, campaign, check, compare, draw, export, info, repair, run, simulate, solve,
                       sweep, task)
from synth.cli._common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, EXIT_USAGE, Parser, with_flags
from synth.errors import CampaignError, InvalidScheduleError, SynthError
from synth.fileio import printable

__all__ = ["main", "task_main", "task_vetter"]

#: the commands in the order ``synth --help`` lists them
COMMANDS = (solve, repair, check, export, run, simulate, bound, baseline, compare, sweep, draw, info, campaign)


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="synth", description="Provably optimal allreduce schedules on symmetric networks.")
    p.add_argument("--version", action="version", version=f"synth {__version__}")
    # the entry point of campaign tasks, and its check of a campaign file, for the commands that run synth
    # command lines elsewhere (campaign, compare --cluster)
    p.set_defaults(main=task_main, task_vetter=task_vetter)
    sub = p.add_subparsers(dest="command", parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(sub)
    return p


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised wherever the program is, so that cleanup (temp files) runs as for Ctrl-C."""


#: set when SIGTERM arrived: a solver engine that caught the interrupt and raised a plain
#: KeyboardInterrupt in its place still ends the command with 143, not 130
_TERMINATED = threading.Event()


def _on_sigterm(signum, frame):
    _TERMINATED.set()
    raise Terminated()


def main(argv=None) -> int:
    """Run one ``synth`` command; return its exit code (see the module docstring)."""
    handled = threading.current_thread() is threading.main_thread()
    _TERMINATED.clear()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if handled else None
    try:
        return _main(argv)
    finally:
        if handled:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def task_main(argv) -> int:
    """Run one campaign task's command line (the ``entry`` of :func:`synth.campaign.run_campaign`).

    As :func:`main`, except that what a task may not do (:func:`synth.cli.task.refusal`: write files,
    run programs, join clusters) ends it with exit 2 before it starts, and Ctrl-C or SIGTERM is raised
    on to the campaign (which stops, leaving the task pending) instead of ending the task alone.  It
    installs no signal handler: the campaign's own process decides what a signal does.

    >>> task_main(["info", "--torus", "4x4", "--out", "x.json"])
    2
    """
    return _main(argv, as_task=True)


def task_vetter() -> task.Vetter:
    """The check of a campaign file's command lines before any task runs (``vet`` of
    :func:`synth.campaign.read_campaign`): it refuses what :func:`task_main` would refuse."""
    return task.Vetter(_parser())


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    else:
        text = with_flags(exc, str(exc))  # an OptionError names a parameter: say its flag
    text = printable(" ".join(text.split()) or exc.__class__.__name__)   # names from files: no control characters
    return text if len(text) <= 400 else text[:400] + " ..."


def _main(argv, as_task: bool = False) -> int:
    parser = _parser()
    args = None
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help()
            return EXIT_USAGE
        if as_task:
            why = task.refusal(args)
            if why is not None:
                raise CampaignError(why)
        return args.func(args)
    except BrokenPipeError:  # e.g. `synth check FILE | head`: stop quietly like other shell tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (Exception, KeyboardInterrupt) as exc:
        if as_task and isinstance(exc, KeyboardInterrupt):
            raise
        line, code = _failure(exc, getattr(args, "command", None))
        print(line, file=sys.stderr)
        return code


#: failures whose one line needs no detail, tested in this order (Terminated is a KeyboardInterrupt)
_FIXED_LINES = (
    (Terminated, "synth: terminated", EXIT_TERMINATED),
    (KeyboardInterrupt, "synth: interrupted", EXIT_INTERRUPTED),
    (MemoryError, "synth: error: out of memory (try a smaller instance)", EXIT_USAGE),
    (RecursionError, "synth: error: the input is nested too deeply", EXIT_USAGE),
)
#: the commands whose check has a symmetric mode, the one to try when the explicit check runs out of memory
_SYMMETRIC_MODE = ("check", "solve", "repair")


def _failure(exc: BaseException, command: str | None = None) -> tuple:
    """The one line on stderr and the exit code of ``command`` (None: not parsed yet) that raised ``exc``.

    An interrupt's line carries what the interrupted work says it kept (its notes, e.g. the
    best tree so far, kept in the solve cache marked interrupted).  Out of memory, the line says to try
    ``--mode symmetric`` where ``command`` has it (``synth run`` of a 24x24 certificate on 576 JAX devices
    suggested it, and `run` has no such mode).
    """
    if isinstance(exc, MemoryError) and command in _SYMMETRIC_MODE:
        return "synth: error: out of memory (try --mode symmetric or a smaller instance)", EXIT_USAGE
    if isinstance(exc, InvalidScheduleError):   # the checker finds the file INVALID: exit 1, as synth check
        return f"synth: {_one_line(exc)}", EXIT_FAILED
    if isinstance(exc, (SynthError, OSError)):
        return f"synth: error: {_one_line(exc)}", EXIT_USAGE
    if isinstance(exc, KeyboardInterrupt):
        line, code = (("synth: terminated", EXIT_TERMINATED) if isinstance(exc, Terminated) or _TERMINATED.is_set()
                      else ("synth: interrupted", EXIT_INTERRUPTED))
        notes = "; ".join(" ".join(str(n).split()) for n in getattr(exc, "__notes__", ()))
        return (f"{line} ({printable(notes)})" if notes else line), code
    for kind, line, code in _FIXED_LINES:
        if isinstance(exc, kind):
            return line, code
    if isinstance(exc, (ValueError, OverflowError)):  # a check the library missed: still the user's input
        return f"synth: error: {_one_line(exc)} ({exc.__class__.__name__})", EXIT_USAGE
    if os.environ.get("SYNTH_DEBUG"):  # a bug: one line and a way to the traceback, never exit 1 (INVALID)
        import traceback

        traceback.print_exc()
    return (f"synth: internal error: {exc.__class__.__name__}: {_one_line(exc)} (a bug: please report it with "
            "the command; SYNTH_DEBUG=1 prints the traceback)"), EXIT_USAGE
