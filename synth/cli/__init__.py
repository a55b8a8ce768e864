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
line ``synth: error: ...`` on stderr with exit code 2.  ``synth check`` exits 1 only when a schedule
fails its check (INVALID); a crash is never 1.  SIGTERM is handled like Ctrl-C, so a write in
progress removes its temp file; either stops the whole command (every solve, sweep and by-size
loop lets it through), never writes ``--out``, and exits 130 (Ctrl-C) or 143 (SIGTERM), with what
an interrupted solve kept said on the same line.  Flags are validated where they are parsed: time limits finite and
positive, seeds 32-bit, counts and sizes in range.

Exit codes: 0 success, 1 a failed check or run (INVALID), 2 an error, 130 Ctrl-C, 143 SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from synth._version import __version__
from synth.cli import (baseline, bound, campaign, check, compare, draw, export, info, repair, run, simulate, solve,
                       sweep)
from synth.cli._common import EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, EXIT_USAGE, Parser, with_flags
from synth.errors import SynthError
from synth.fileio import printable

__all__ = ["main"]

#: the commands in the order ``synth --help`` lists them
COMMANDS = (solve, repair, check, export, run, simulate, bound, baseline, compare, sweep, draw, info, campaign)


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="synth", description="Provably optimal allreduce schedules on symmetric networks.")
    p.add_argument("--version", action="version", version=f"synth {__version__}")
    p.set_defaults(main=main)  # the entry point, for commands that run synth command lines elsewhere (campaign)
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


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    else:
        text = with_flags(exc, str(exc))  # an OptionError names a parameter: say its flag
    text = printable(" ".join(text.split()) or exc.__class__.__name__)   # names from files: no control characters
    return text if len(text) <= 400 else text[:400] + " ..."


def _main(argv) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help()
            return EXIT_USAGE
        return args.func(args)
    except BrokenPipeError:  # e.g. `synth check FILE | head`: stop quietly like other shell tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (Exception, KeyboardInterrupt) as exc:
        line, code = _failure(exc)
        print(line, file=sys.stderr)
        return code


#: failures whose one line needs no detail, tested in this order (Terminated is a KeyboardInterrupt)
_FIXED_LINES = (
    (Terminated, "synth: terminated", EXIT_TERMINATED),
    (KeyboardInterrupt, "synth: interrupted", EXIT_INTERRUPTED),
    (MemoryError, "synth: error: out of memory (try --mode symmetric or a smaller instance)", EXIT_USAGE),
    (RecursionError, "synth: error: the input is nested too deeply", EXIT_USAGE),
)


def _failure(exc: BaseException) -> tuple:
    """The one line on stderr and the exit code of a command that raised ``exc``.

    An interrupt's line carries what the interrupted work says it kept (its notes, e.g. the
    best tree so far, kept in the solve cache marked interrupted).
    """
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
