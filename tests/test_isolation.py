"""The checker stands apart: importing it loads no optimization model or solver, and the MSCCL validator no exporter."""

import json
import subprocess
import sys

import pytest

SOLVERS = ("synth.models", "ortools", "highspy", "pyscipopt")


def loaded(module: str, prefixes) -> list:
    """The modules starting with one of ``prefixes`` that ``import module`` loads in a fresh interpreter."""
    code = (f"import json, sys, {module}; "
            f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({tuple(prefixes)!r}))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("module", ["synth.check", "synth.certify", "synth.dualbound", "synth.steinerbound"])
def test_the_checker_loads_no_model_and_no_solver(module):
    assert loaded(module, SOLVERS) == []


def test_the_msccl_validator_loads_no_exporter():
    assert loaded("synth.runtime.msccl_check", SOLVERS + ("synth.runtime.msccl",)) == ["synth.runtime.msccl_check"]


def test_the_probe_sees_a_loaded_module():
    """The test above can fail: a module that does load a solver is seen."""
    assert "ortools" in loaded("ortools", ("ortools",))
