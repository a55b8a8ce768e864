"""The public API: the facade's names, and a layout with no compatibility shims.

Nothing was ever released (0.x), so there is no old import path to keep: every module of ``synth`` and
``synth.models`` is a stage package or one of the few shared modules below, and no facade name is both a
module and a function.
"""

import importlib
from pathlib import Path
from types import ModuleType

import synth

ROOT = Path(__file__).resolve().parents[1]
#: the only modules at the top of synth/ (everything else is a stage package)
TOP_MODULES = {"__init__", "__main__", "_version", "errors", "units", "fileio"}
STAGES = {"topology", "symmetry", "schedule", "check", "solving", "baselines", "runtime", "analysis", "cli"}


def test_synth_holds_its_stages_and_shared_modules_only():
    modules = {p.stem for p in (ROOT / "synth").glob("*.py")}
    packages = {p.parent.name for p in (ROOT / "synth").glob("*/__init__.py")}
    assert modules == TOP_MODULES
    assert STAGES <= packages, STAGES - packages


def test_models_top_level_holds_subpackages_and_shared_names():
    modules = {p.stem for p in (ROOT / "models").glob("*.py")}
    assert modules == {"__init__", "_names"}


def test_no_module_is_a_reexport_shim():
    """A module whose body is imports and ``__all__`` alone (a shim) has no place in the tree."""
    import ast

    shims = []
    for folder in (ROOT / "synth", ROOT / "models"):
        for path in folder.rglob("*.py"):
            if path.name == "__init__.py":
                continue
            body = ast.parse(path.read_text()).body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            if body and all(isinstance(n, (ast.Import, ast.ImportFrom)) or (
                    isinstance(n, ast.Assign) and [getattr(t, "id", None) for t in n.targets] == ["__all__"])
                    for n in body):
                shims.append(str(path.relative_to(ROOT)))
    assert shims == []


def test_every_facade_name_resolves_and_none_is_a_module():
    for name in synth.__all__:
        obj = getattr(synth, name)
        assert not isinstance(obj, ModuleType), name
        assert importlib.util.find_spec(f"synth.{name}") is None or name in STAGES, name


def test_the_entry_points_users_call():
    from synth.check.claims import certify
    from synth.cli import main
    from synth.models.khop import solve_khop

    assert callable(certify) and callable(main) and callable(solve_khop)
    assert synth.certify is certify and synth.lift.__module__ == "synth.schedule.lift"
