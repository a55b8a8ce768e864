"""What the ``synth`` commands share: exit codes, limits, flag types, where output and progress go,
the topology flags, the text table of a summary, and the flags of the library's parameters.

The flag types are argparse ``type=`` callables: a flag is validated where it is parsed, and a bad
value becomes argparse's one-line usage error.
"""

from __future__ import annotations

import argparse
import math
import re
import signal
import sys

from synth.errors import OptionError, SynthError
from synth.fileio import printable
from synth.topology.base import MAX_VERTICES
from synth.topology.failures import damage, parse_failures
from synth.topology.kinds import naming_flags, topology_flags
from synth.units import parse_size

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 128 + signal.SIGTERM

DEFAULT_TIME_LIMIT = 60.0
#: longest accepted --time-limit / --timeout (about 4 months): a bound that catches typos, not a real wait
MAX_SECONDS = 1e7
#: seeds go to the solvers as 32-bit ints (SCIP's randomization/randomseedshift, CP-SAT's random_seed)
MAX_SEED = 2**31 - 1
#: largest --depth: a tree's depth is below its vertex count, and no network has more than MAX_VERTICES
MAX_DEPTH = MAX_VERTICES
#: input elements per node (--elements): 2**48 float32 elements are 1 PiB, the largest size parse_size takes
MAX_ELEMENTS = 2**48


class Parser(argparse.ArgumentParser):
    """synth's argument parser: one-line errors, and flags only as written in full.

    No abbreviations (``--ou`` is not ``--out``): a script must not change meaning when a flag is
    added, and what a flag does is decided by what it is, not by what it starts with.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):  # one line, exit 2 (argparse prints the usage too)
        # a command's parser names the command; the top parser's name would repeat the "synth: error:" prefix
        raise SynthError(message if self.prog == "synth" else f"{self.prog}: {message}")


# ---------------------------------------------------------------- where output and progress go
def keep_freed_memory() -> None:
    """Ask glibc's allocator to keep freed memory for reuse rather than return it to the system at once.

    A pod's repair builds and drops many arrays of tens of millions of entries; each fresh one costs the
    kernel a page fault per page (half the command's CPU time on a 16x16x16 torus: 10.6 system seconds,
    6.6 with this).  Peak memory is unchanged.  Elsewhere (no glibc) nothing happens.
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    for param, value in ((-1, 16 << 30), (-2, 1 << 30), (-3, 32 << 20)):   # M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD
        mallopt(param, value)


def progress(message: str) -> None:
    if sys.stderr.isatty():
        print(f"[synth] {printable(message)}", file=sys.stderr, flush=True)


def progress_always(message: str) -> None:
    """Progress that shows on stderr even when it is not a terminal (one line per solved depth)."""
    print(f"[synth] {printable(message)}", file=sys.stderr, flush=True)


def print_note(message: str) -> None:
    """Print a library note on stderr, the parameters it quotes spelled as their flags (:func:`flags_in`)."""
    print(f"note: {printable(flags_in(message))}", file=sys.stderr, flush=True)


def stdout_for(args):
    """Where a command's summary goes: stderr when ``--out -`` puts the file itself on stdout."""
    return sys.stderr if getattr(args, "out", None) == "-" else sys.stdout


#: labels of the text tables where the JSON key alone would mislead
_LABELS = {"round_lower_bound": "round_lower_bound (one-hop)"}


def print_table(summary: dict, stream) -> None:
    """``key  value`` lines; the bound's scope is in its label, not a line of its own."""
    rows = {_LABELS.get(k, k): v for k, v in summary.items() if k != "round_lower_bound_scope"}
    if "certificate" in summary and summary["certificate"] is None:
        rows["certificate"] = "not written (--out FILE writes it)"
    elif summary.get("certificate") == "-":
        rows["certificate"] = "written to stdout"
    width = max(len(k) for k in rows)
    for k, v in rows.items():
        if v is not None:
            print(f"{k:<{width}}  {printable(v)}", file=stream)


# ---------------------------------------------------------------- flag types (argparse ``type=``)
def seconds(text) -> float:
    """A time limit: a finite number of seconds above 0 and at most :data:`MAX_SECONDS`."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"cannot read {str(text)[:40]!r} as seconds") from None
    if not (math.isfinite(value) and 0 < value <= MAX_SECONDS):
        raise argparse.ArgumentTypeError(f"{str(text)[:40]!r} must be a finite number of seconds above 0 "
                                         f"and at most {MAX_SECONDS:g}")
    return value


def int_in(lo: int, hi: int):
    """A ``type=`` for whole numbers from ``lo`` to ``hi``."""
    def parse(text) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{str(text)[:40]!r} is not a whole number") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{str(text)[:40]} is out of range ({lo} to {hi:,})")
        return value
    parse.__name__ = f"whole number {lo}..{hi}"
    return parse


def size(text) -> int:
    """A message size in bytes, read by :func:`synth.units.parse_size` (the one size parser)."""
    try:
        return parse_size(text)
    except SynthError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def sizes(text) -> list:
    """Comma-separated message sizes (``64KiB,1MiB``)."""
    out = [size(part) for part in str(text).split(",") if part.strip()]
    if not out:
        raise argparse.ArgumentTypeError("give at least one size, e.g. 64KiB,1MiB")
    return out


# ---------------------------------------------------------------- where the work runs
def add_cluster_arg(parser, what: str) -> None:
    """``--cluster``: run ``what`` as campaign tasks (:mod:`synth.campaign`); without it, here as before."""
    parser.add_argument("--cluster", metavar="WHERE",
                        help=f"run {what} as campaign tasks on a Dask cluster: local (one worker per core), "
                             "local:N, tcp://HOST:PORT (a running scheduler) or serial (default: in this process, "
                             "without Dask)")


def topology_argv(args) -> list:
    """The topology flag of ``args`` as command-line words, for a task that workers run (not ``--topology
    FILE``: a worker may not see the file)."""
    flags = topology_flags()
    if any(getattr(args, flag.name, None) is not None for flag in flags if flag.reads_file):
        raise SynthError("with --cluster, name the topology by its flags (--torus, --twisted, --mesh, ...): "
                         "workers may not see a --topology FILE")
    words = []
    for flag in flags:
        value = getattr(args, flag.name, None)
        for one in (value if isinstance(value, list) else [] if value is None else [value]):
            words += [_option(flag), one]
    if not words:
        raise SynthError("with --cluster, name the topology by its flags (--torus, --twisted, --mesh, ...)")
    return words


# ---------------------------------------------------------------- the topology flags (synth.topology.kinds)
def _option(flag) -> str:
    return "--" + flag.name.replace("_", "-")


def add_topology_args(parser) -> None:
    """The flags of every network kind, in the table's order (:func:`synth.topology.kinds.topology_flags`)."""
    with_no_wrap = " or ".join(_option(flag) for flag in naming_flags() if flag.no_wrap)
    for flag in topology_flags():
        extra = {"action": "append", "default": []} if flag.repeatable else {}
        text = f"with {with_no_wrap}: {flag.help}" if flag.name == "no_wrap" else flag.help
        parser.add_argument(_option(flag), metavar=flag.metavar, help=text, **extra)


def topology_from_args(args):
    """The network the topology flags of ``args`` name (exactly one naming flag), failures applied.

    Sets ``args.generators``: those of a ``--topology`` file, else None.
    """
    given = [(flag, getattr(args, flag.name, None)) for flag in naming_flags()]
    given = [(flag, value) for flag, value in given if value is not None]
    if len(given) != 1:
        words = [f"{_option(flag)} {flag.example}" for flag in naming_flags()]
        raise SynthError(f"name exactly one topology: {', '.join(words[:-1])} or {words[-1]}")
    flag, value = given[0]
    no_wrap = getattr(args, "no_wrap", None)
    if no_wrap is not None and not flag.no_wrap:
        raise SynthError(f"--no-wrap goes with {' or '.join(_option(f) for f in naming_flags() if f.no_wrap)}")
    for option in sorted({name for f in naming_flags() for name in f.options} - set(flag.options)):
        if getattr(args, option, None) is not None:
            takers = [f for f in naming_flags() if option in f.options]
            raise SynthError(f"{flag_for(option)} goes with {' or '.join(_option(f) for f in takers)}")
    options = {name: getattr(args, name, None) for name in flag.options}
    topology, args.generators = flag.parse(value, no_wrap, **options)
    failures = parse_failures(topology, getattr(args, "fail_link", None) or (), getattr(args, "fail_node", None) or ())
    return damage(topology, failures)


# ---------------------------------------------------------------- library parameters -> flags
#: the flag that sets each library parameter whose name is not the flag's (``time_limit`` -> ``--time-limit``)
FLAGS = {"keep_dir": "--workdir", "generators": "'generators' in the --topology file"}
#: the library parameters the commands pass on from their flags (the flag is ``--`` + the name, ``_`` -> ``-``)
PARAMETERS = ("allow_unbalanced", "alpha", "bandwidth", "depth", "depths", "dtype", "element_bytes", "elements",
              "exchange", "generators", "group", "hop_latency", "iters", "jobs", "keep_dir", "max_bytes",
              "max_transmissions", "min_bytes", "mode", "mpiexec", "proto", "seed", "size", "sizes", "solver",
              "start", "time_limit", "timeout", "warmup")
PARAMETERS += ("collective",)  # --collective on solve, baseline, compare
PARAMETERS += ("engine",)  # --engine on solve --size, sweep, compare
PARAMETERS += ("hop_latency_at",)  # --hop-latency-at on simulate
PARAMETERS += ("round_",)  # --round on draw
FLAGS["round_"] = "--round"
PARAMETERS += ("cluster",)  # --cluster on campaign run, sweep, solve --size, compare
PARAMETERS += ("no_wrap",)  # --no-wrap with --torus or --machine
PARAMETERS += ("fail_link", "fail_node")  # failures on every topology, and synth repair
PARAMETERS += ("slices", "dcn_bandwidth")  # --slices and --dcn-bandwidth with --machine tpu-*

_LEADING_NAME = re.compile(r"(\w+)(?=[\s:=,]|$)")
_QUOTED_NAME = re.compile(r"`(\w+)`")


def flag_for(parameter: str) -> str:
    """The flag that sets a library parameter.

    >>> flag_for("time_limit"), flag_for("keep_dir")
    ('--time-limit', '--workdir')
    """
    return FLAGS.get(parameter, "--" + parameter.replace("_", "-"))


def flags_in(text: str) -> str:
    """``text`` (a library message or note) with every parameter it quotes, `like_this`, spelled as its flag.

    A quoted name that is not a parameter of the commands loses its quotes only.

    >>> flags_in("pass `allow_unbalanced` to get it anyway; `maxBytes` is the XML's")
    "pass --allow-unbalanced to get it anyway; maxBytes is the XML's"
    """
    return _QUOTED_NAME.sub(lambda m: flag_for(m.group(1)) if m.group(1) in PARAMETERS else m.group(1), text)


def with_flags(exc: BaseException, text: str) -> str:
    """``text`` (the message of ``exc``) with the library parameters it names spelled as their flags.

    An :class:`~synth.errors.OptionError` begins with the parameter it names, as the library
    spells it (``depth must be at least 1``): the CLI says ``--depth``.  Any library error
    (:class:`~synth.errors.SynthError`) quotes the other parameters it names, `like_this`
    (:func:`flags_in`).

    >>> with_flags(OptionError("start needs `depth` below the diameter"), "start needs `depth` below the diameter")
    '--start needs --depth below the diameter'
    """
    if not isinstance(exc, SynthError):
        return text
    match = _LEADING_NAME.match(text) if isinstance(exc, OptionError) else None
    if match is not None and match.group(1) in PARAMETERS:
        text = flag_for(match.group(1)) + text[match.end():]
    return flags_in(text)
