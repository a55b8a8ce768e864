"""The CLI stays thin: no function in ``synth/cli`` takes more than 8 parameters or is longer than 80 lines."""

import ast
from pathlib import Path

import pytest

import synth.cli

CLI = Path(synth.cli.__file__).parent
MAX_PARAMETERS, MAX_LINES = 8, 80


def _too_big(source: str, where: str) -> list:
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)
            lines = node.end_lineno - node.lineno + 1
            if n > MAX_PARAMETERS or lines > MAX_LINES:
                out.append(f"{where}:{node.lineno} {getattr(node, 'name', 'lambda')}: {n} parameters, {lines} lines")
    return out


@pytest.mark.parametrize("path", sorted(CLI.glob("*.py")), ids=lambda p: p.name)
def test_cli_functions_are_small(path):
    assert _too_big(path.read_text(), path.name) == []


def test_the_check_catches_a_big_function():
    many = "def f(a, b, c, d, e, f, g, h, i):\n    pass\n"
    long = "def g():\n" + "    x = 1\n" * 80
    assert len(_too_big(many + long, "x.py")) == 2
    assert _too_big("def h(a, b, c, d, e, f, g, h):\n" + "    x = 1\n" * 79, "x.py") == []
