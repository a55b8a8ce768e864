"""What a campaign task's command line may do: run one synth command that prints JSON, and nothing that
writes files, runs programs or reaches other machines from the worker.

A campaign file is untrusted input.  A command task is judged by what synth's own parser makes of it
(flags whole, no abbreviations: ``--ou`` is not ``--out``), never by how its words are spelled, so
``--out=PATH``, an option value that looks like a flag, or ``--`` cannot slip past a string match.
The same test runs twice: when the campaign file is read (:class:`Vetter`: the whole campaign is
refused before anything runs) and on the worker, just before the command runs (:func:`refusal`, through
:func:`synth.cli.task_main`).

Examples
--------
>>> from synth.cli import _parser
>>> p = _parser()
>>> refusal(p.parse_args(["solve", "--torus", "4x4", "--depth", "2"])) is None
True
>>> refusal(p.parse_args(["solve", "--torus", "4x4", "--out=x.json"]))
'--out would write a file on the worker; results come back through the store'
>>> refusal(p.parse_args(["draw", "cert.json", "--out", "x.png"]))[:49]
'synth draw is not a command a campaign task runs '
>>> vet = Vetter(p)
>>> vet(["solve", "--torus", "4x4", "--depth", "0"])  # a bad value: the task fails as its row
>>> vet(["solve", "--torus", "4x4", "--ou", "x.json"])
Traceback (most recent call last):
...
synth.errors.CampaignError: synth solve has no argument(s) --ou x.json (flags are written whole)
>>> vet(["run", "c.json", "--mpiexec", "sh -c id"])
Traceback (most recent call last):
...
synth.errors.CampaignError: --mpiexec would run a program the campaign file names
"""

from __future__ import annotations

import contextlib
import io

from synth.campaign.spec import JSON_COMMANDS
from synth.errors import CampaignError, SynthError
from synth.fileio import printable

__all__ = ["refusal", "Vetter", "UNSAFE"]

#: parsed options (argparse ``dest``) a task may not set to anything but their harmless value, and why
UNSAFE = {
    "out": (None, "--out would write a file on the worker; results come back through the store"),
    "workdir": (None, "--workdir would write files on the worker; results come back through the store"),
    "mpiexec": (None, "--mpiexec would run a program the campaign file names"),
    "cluster": (None, "--cluster would start or join another Dask cluster from inside a task"),
    "jobs": (1, "--jobs would start solver processes beside the worker's one task (the cluster spreads the work)"),
}


def refusal(args) -> str | None:
    """Why the parsed command line ``args`` may not run as a campaign task, or ``None`` when it may."""
    if getattr(args, "command", None) not in JSON_COMMANDS:
        return (f"synth {args.command} is not a command a campaign task runs (those that print one JSON object: "
                f"{', '.join(JSON_COMMANDS)})")
    for dest, (harmless, why) in UNSAFE.items():
        if getattr(args, dest, harmless) != harmless:
            return why
    return None


class Vetter:
    """``vet(argv)``: refuse (:class:`~synth.errors.CampaignError`) the command line ``argv`` if, as ``parser``
    reads it, it has words the command does not take (a misspelt or abbreviated flag), asks for what a task
    may not do (:func:`refusal`), or only prints help or the version.

    A command line whose values the parser rejects (``--depth 0``) passes: it can run nothing, and fails as
    its task's row with the parser's line, as it would on the worker.

    What argparse makes of a line depends on its command and its words that start with ``-``; the others
    are values, placed by count.  A line of the same shape as one that passed passes without a second
    parse: a grid of 100,000 tasks is parsed once per shape, not 100,000 times.
    """

    def __init__(self, parser):
        self.parser = parser
        self.passed = set()

    def __call__(self, argv) -> None:
        argv = list(argv)
        shape = (argv[0], *(word if word.startswith("-") else None for word in argv[1:])) if argv else ()
        if shape in self.passed:
            return
        quiet = io.StringIO()
        try:
            with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
                args, unknown = self.parser.parse_known_args(argv)
        except SystemExit:
            raise CampaignError("--help and --version print no JSON object") from None
        except SynthError:
            return
        if unknown:
            raise CampaignError(f"synth {args.command} has no argument(s) {printable(' '.join(unknown))[:120]} "
                                f"(flags are written whole)")
        why = refusal(args)
        if why is not None:
            raise CampaignError(why)
        self.passed.add(shape)
