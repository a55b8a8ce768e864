"""A SimGrid driver that dies (out of memory under ulimit -v, a C++ abort) gives one line, never a backtrace frame."""

import sys

import numpy as np
import pytest

import synth.analysis.simulate.run as run
from synth.errors import SynthError

BACKTRACE = r'''
import os, signal, sys
sys.stderr.write("terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n"
                 if "{memory}" == "yes" else "[0.000000] [ker_context/CRITICAL] Failed to create the context\n")
sys.stderr.write("Backtrace (displayed in actor maestro):\n")
for i in range(8):
    sys.stderr.write(f"  {{i}}# simgrid::kernel::context::SwappedContext::SwappedContext() at ./src/ctx.cpp:{{i}}\n")
sys.stderr.flush()
os.kill(os.getpid(), signal.SIGABRT)
'''


@pytest.mark.parametrize("memory", ["yes", "no"])
def test_a_driver_that_aborts_gives_its_reason_in_one_line(tmp_path, monkeypatch, memory):
    driver = tmp_path / "driver.py"
    driver.write_text(BACKTRACE.format(memory=memory))
    monkeypatch.setattr(run, "DRIVER", str(driver))
    monkeypatch.setattr(run, "simgrid_python", lambda: sys.executable)
    with pytest.raises(SynthError) as info:
        run.run_driver(str(tmp_path), "t", np.ones(3, dtype=np.int64))
    line = str(info.value)
    assert "\n" not in line and "#" not in line and "killed by SIGABRT" in line
    if memory == "yes":
        assert "ran out of memory" in line and "bad_alloc" in line and "ulimit -v" in line
    else:
        assert "Failed to create the context" in line
