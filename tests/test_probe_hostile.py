"""The hostile-input probes of tools/probe_hostile.py, each in its own process (slow: about a minute)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_every_hostile_probe_ends_cleanly():
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "probe_hostile.py")], capture_output=True,
                         text=True, timeout=3600)
    failures = [line for line in out.stdout.splitlines() if line.startswith("FAIL")]
    assert out.returncode == 0 and not failures, "\n".join(failures) or out.stderr[-2000:]
