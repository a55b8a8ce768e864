"""The checker stands apart: importing it loads no optimization model, solver or solve stage, and the MSCCL
validator no exporter.  Each probe runs in a fresh interpreter."""

import json
import subprocess
import sys
from pathlib import Path


SOLVERS = ("synth.models", "ortools", "highspy", "pyscipopt")
SYNTH = Path(__file__).resolve().parents[1] / "synth"
#: every module of the checker, bounds included, found on disk so that a new one is probed too
CHECKER = sorted(".".join(("synth",) + p.relative_to(SYNTH).with_suffix("").parts).removesuffix(".__init__")
                 for p in (SYNTH / "check").rglob("*.py"))
EXPORTER = ("synth.runtime.msccl.export", "synth.runtime.msccl.layout", "synth.runtime.msccl.operations",
            "synth.runtime.msccl.threadblocks", "synth.runtime.plan")
VALIDATOR = ["synth.runtime.msccl.check", "synth.runtime.msccl.check.parse", "synth.runtime.msccl.check.validate",
             "synth.runtime.msccl.check.interpret", "synth.runtime.msccl.check.races"]

#: load the package ``synth`` without running its __init__ (the facade, which sits above every stage and
#: imports synth.solving), so that only the edges of the module under test count
_NO_FACADE = ("import importlib.util; spec = importlib.util.find_spec('synth'); "
              "sys.modules['synth'] = importlib.util.module_from_spec(spec); ")


def loaded(modules, prefixes, facade: bool = True) -> list:
    """The modules starting with one of ``prefixes`` that importing ``modules`` (a name or a list) loads in a fresh
    interpreter.  Importing a package's module runs the package's __init__ first, so one interpreter for several
    modules of a package hides nothing."""
    module = modules if isinstance(modules, str) else ", ".join(modules)
    code = ("import json, sys; " + ("" if facade else _NO_FACADE) + f"import {module}; "
            f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({tuple(prefixes)!r}))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_every_checker_module_is_probed():
    assert {"synth.check", "synth.check.bounds", "synth.check.bounds.steiner", "synth.check.claims"} <= set(CHECKER)


def test_the_checker_loads_no_model_and_no_solver():
    assert loaded(CHECKER, SOLVERS) == []


def test_the_checker_loads_no_solve_stage():
    """Without the facade (which imports every stage), the checker reaches neither synth.solving nor a model."""
    assert loaded(CHECKER, SOLVERS + ("synth.solving",), facade=False) == []


def test_the_msccl_validator_loads_no_exporter():
    assert loaded(VALIDATOR, SOLVERS + EXPORTER) == []
    assert loaded(VALIDATOR, SOLVERS + EXPORTER + ("synth.solving",), facade=False) == []


def test_the_probe_sees_a_loaded_module():
    """The tests above can fail: a module that does load a solver, the solve stage or the exporter is seen."""
    assert "ortools" in loaded("ortools", ("ortools",))
    assert "synth.solving" in loaded("synth.solving", ("synth.solving",), facade=False)
    assert "synth.runtime.msccl.export" in loaded("synth.runtime.msccl", EXPORTER + ("synth.runtime.msccl",),
                                                  facade=False) + loaded("synth.runtime.msccl.export", EXPORTER)


#: what ``synth --help`` must not wait for (synth/cli/__init__.py's docstring names them)
SLOW = ("synth.models.", "ortools", "highspy", "pyscipopt", "scipy", "matplotlib", "dask", "distributed", "mpi4py",
        "jax")


def test_the_cli_loads_the_library_but_no_model_solver_or_heavy_dependency():
    """``import synth.cli`` loads synth's own modules at module level (the truth its docstring tells) and none of
    the slow ones: ``synth.models`` is only its lazy package and the table of solver names."""
    assert loaded("synth.cli", SLOW) == ["synth.models._names"]
    assert len(loaded("synth.cli", ("synth.",))) > 60
