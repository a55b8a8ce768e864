"""No function in the solve stage, the packing models or the CLI takes more than 8 parameters or runs over 80 lines.

Read from the source with :mod:`ast`: a parameter is any positional, keyword-only or ``*``/``**``
one (``self`` and ``cls`` of methods not counted); a function's length runs from its ``def`` (or
first decorator) to its last line, docstring included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("synth/solving", "models/packing", "synth/cli")
MAX_PARAMETERS, MAX_LINES = 8, 80


def _parameters(node) -> int:
    a = node.args
    names = [x.arg for x in a.posonlyargs + a.args]
    n = len(names) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)
    return n - (1 if names and names[0] in ("self", "cls") else 0)


def oversized(source: str, name: str = "<source>") -> list:
    """``path:line name (n parameters, m lines)`` for every function of ``source`` over the limits."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            params, lines = _parameters(node), node.end_lineno - first + 1
            if params > MAX_PARAMETERS or lines > MAX_LINES:
                out.append(f"{name}:{node.lineno} {node.name} ({params} parameters, {lines} lines)")
    return out


@pytest.mark.parametrize("package", PACKAGES)
def test_functions_are_small(package):
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        found += oversized(path.read_text(), str(path.relative_to(ROOT)))
    assert not found, "\n".join(found)


def test_the_test_catches_a_long_signature_and_a_long_body():
    wide = "def f(a, b, c, d, e, f, g, h, i):\n    pass\n"
    long = "def g(self, x):\n" + "    x += 1\n" * 80
    method = "class C:\n    def m(self, a, b, c, d, e, f, g, h):\n        pass\n"
    assert oversized(wide) == ["<source>:1 f (9 parameters, 2 lines)"]
    assert oversized(long) == ["<source>:1 g (1 parameters, 81 lines)"]
    assert oversized(method) == []
