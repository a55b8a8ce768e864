"""What every probe shares: run one ``synth`` process within the time and memory budget, write a file.

Used by :mod:`probe_hostile` (the runner and the file, flag and graph probes) and :mod:`probe_signals`
(interrupts and the probes that need an environment of their own).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["ROOT", "WALL_LIMIT", "MEMORY_LIMIT_MIB", "cap_memory", "synth_argv", "run", "write"]

ROOT = Path(__file__).resolve().parents[1]
WALL_LIMIT = 60.0
MEMORY_LIMIT_MIB = 3 * 1024
ADDRESS_SPACE_CAP = 8 << 30  # a runaway probe fails with MemoryError instead of taking the machine down


def cap_memory():
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_CAP, ADDRESS_SPACE_CAP))


def synth_argv(*argv) -> list:
    return [sys.executable, "-m", "synth", *argv]


def run(cmd, cwd, stdin=None, wall=WALL_LIMIT):
    """Run ``cmd``; return (exit code or None on time-out, stdout, stderr, seconds, peak RSS in MiB)."""
    t0 = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SYNTH_CACHE_DIR": str(Path(cwd) / "cache")}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, stdin=stdin or subprocess.DEVNULL, env=env,
                                start_new_session=True, preexec_fn=cap_memory)
        code = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() - t0 > wall:
                os.killpg(proc.pid, 9)
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = code if code is not None else -9
        out.seek(0)
        err.seek(0)
        return (code, out.read().decode(errors="replace"), err.read().decode(errors="replace"),
                time.monotonic() - t0, usage.ru_maxrss / 1024)


def write(folder: Path, name: str, data) -> str:
    path = folder / name
    if isinstance(data, (dict, list)) and not (isinstance(data, list) and data and isinstance(data[0], str)):
        path.write_text(json.dumps(data))
    elif isinstance(data, list):
        path.write_text("".join(data))
    else:
        path.write_text(data)
    return str(path)
