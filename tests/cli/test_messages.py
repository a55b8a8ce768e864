"""Library messages name parameters, never flags; the CLI says the flag of every parameter they name.

A library error begins with the parameter it is about (an ``OptionError``) and quotes any other
parameter it names, `like_this`; :func:`synth.cli._common.with_flags` (errors) and
:func:`~synth.cli._common.flags_in` (notes) turn each into its flag.  The first test reads every
``raise`` and every note the library builds (``synth/`` but the CLI, and ``models/``) and fails on a
flag spelled there, or on a quoted name the CLI cannot map.
"""

import ast
import re
from pathlib import Path

import pytest

from synth.cli._common import PARAMETERS, flag_for, flags_in, with_flags
from synth.errors import OptionError, ScheduleError, SynthError

ROOT = Path(__file__).resolve().parents[2]
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
_QUOTED = re.compile(r"(?<!`)`(\w+)`(?!`)")


def _library_files():
    for folder in (ROOT / "synth", ROOT / "models"):
        for path in sorted(folder.rglob("*.py")):
            if "cli" not in path.relative_to(ROOT).parts:
                yield path


def _message_texts(tree):
    """The string pieces of every ``raise X(...)`` and of every string appended to a list named ``notes``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
              and "notes" in ast.unparse(node.func.value)):
            target = node
        else:
            continue
        for sub in ast.walk(target):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                yield node.lineno, sub.value


def test_library_messages_name_parameters_the_cli_can_map():
    flags, unknown, quoted = [], [], set()
    for path in _library_files():
        for line, text in _message_texts(ast.parse(path.read_text())):
            where = f"{path.relative_to(ROOT)}:{line}"
            flags += [f"{where}: {m}" for m in _FLAG.findall(text)]
            for name in _QUOTED.findall(text):
                quoted.add(name)
                if name not in PARAMETERS:
                    unknown.append(f"{where}: `{name}`")
    assert flags == [], "library messages spell flags; name the parameter (quoted `like_this`) instead"
    assert unknown == [], "quoted names the CLI cannot map to a flag (add them to synth.cli._common.PARAMETERS)"
    assert {"depth", "group", "exchange", "allow_unbalanced", "mode", "mpiexec", "max_bytes"} <= quoted


@pytest.mark.parametrize("exc,line", [
    (OptionError("start continues a k-hop tree solve: it needs `depth` below the diameter, an equal-sided torus, "
                 "the default `group` and no `exchange`"),
     "--start continues a k-hop tree solve: it needs --depth below the diameter, an equal-sided torus, "
     "the default --group and no --exchange"),
    (SynthError("no symmetry found ...; pass `allow_unbalanced` to get that schedule anyway"),
     "no symmetry found ...; pass --allow-unbalanced to get that schedule anyway"),
    (OptionError("mode explicit: the lifted schedule has 9 route links, ...; use `mode` symmetric"),
     "--mode explicit: the lifted schedule has 9 route links, ...; use --mode symmetric"),
    (OptionError("mpiexec not given, and none found ..., or name the launcher with `mpiexec`"),
     "--mpiexec not given, and none found ..., or name the launcher with --mpiexec"),
    (ScheduleError("`max_bytes` 0 must be at least 1 and at least `min_bytes` 5"),
     "--max-bytes 0 must be at least 1 and at least --min-bytes 5"),
    (ValueError("`depth` of a bug"), "`depth` of a bug"),     # not a library error: left alone
])
def test_the_cli_says_the_flag_of_every_parameter_a_message_names(exc, line):
    assert with_flags(exc, str(exc)) == line


def test_notes_name_parameters_the_cli_maps():
    """The MSCCL scratch note: ``maxBytes`` is the XML attribute (kept), ``max_bytes`` the parameter (a flag)."""
    from synth.runtime.msccl import export_msccl
    from synth.schedule.exchange import exchange_allreduce
    from synth.schedule.lift import lift
    from synth.symmetry.torus import torus_gamma
    from synth.topology.torus import parse_torus

    t = parse_torus("4x4")
    ex = export_msccl(lift(exchange_allreduce(t), torus_gamma(t)), max_bytes=1 << 40)
    assert len(ex.notes) == 1 and "a smaller `max_bytes` avoids that" in ex.notes[0]
    text = flags_in(ex.notes[0])
    assert text.startswith("maxBytes 1099511627776 makes") and "a smaller --max-bytes avoids that" in text
    assert flag_for("max_bytes") == "--max-bytes"


def test_parser_errors_say_synth_once(capsys):
    """The top parser's errors do not repeat the program name after ``synth: error:``."""
    from synth.cli import main

    assert main(["solve", "--torus", "4x4", "--ou", "x.json"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "synth: error: unrecognized arguments: --ou x.json"
    assert main(["solve", "--torus", "4x4", "--depth", "x"]) == 2
    assert capsys.readouterr().err.startswith("synth: error: synth solve: argument --depth")
