"""Probes that need a signal or an environment of their own: Ctrl-C and SIGTERM during solves,
sweeps and ``solve --size``; a cache that cannot be written; a temp folder left by a SIGKILLed write.

Each returns ``(name, problem or '', seconds, stderr)``; :mod:`probe_hostile` runs them after its other probes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from _probe_run import ROOT, WALL_LIMIT, cap_memory, run, synth_argv

__all__ = ["INTERRUPTS", "STOP_LIMIT", "special_probes"]


#: (name, argv, signal, seconds into the solve, allowed exit code); the command must stop within STOP_LIMIT
#: seconds of the signal, leave the older --out intact, and never run the next depth
INTERRUPTS = (
    ("SIGTERM during a k-hop solve", ["solve", "--depth", "3", "--torus", "16x16", "--seed", "5", "--time-limit",
                                      "60", "--out", "{out}"], "SIGTERM", 6.0, 143),
    ("SIGINT during a k-hop solve", ["solve", "--depth", "3", "--torus", "16x16", "--seed", "5", "--time-limit",
                                     "60", "--out", "{out}"], "SIGINT", 6.0, 130),
    ("SIGTERM late in a k-hop solve (LP, MIP)", ["solve", "--depth", "3", "--torus", "12x12", "--time-limit", "60",
                                                 "--solver", "cpsat", "--out", "{out}"], "SIGTERM", 15.0, 143),
    ("SIGTERM during an exchange-forest solve", ["solve", "--depth", "3", "--exchange", "--torus", "12x12",
                                                 "--time-limit", "60", "--out", "{out}"], "SIGTERM", 4.0, 143),
    ("SIGINT during a k-hop family solve", ["solve", "--depth", "3", "--torus", "12x12", "--group",
                                            "translations-negation", "--time-limit", "60", "--out", "{out}"],
     "SIGINT", 3.0, 130),
    ("SIGTERM during a sweep", ["sweep", "--torus", "12x12", "--time-limit", "60", "--out", "{out}"], "SIGTERM",
     4.0, 143),
    ("SIGINT during a sweep --jobs 2", ["sweep", "--torus", "12x12", "--time-limit", "60", "--jobs", "2",
                                        "--out", "{out}"], "SIGINT", 4.0, 130),
    ("SIGTERM during solve --size", ["solve", "--torus", "12x12", "--size", "1MiB", "--time-limit", "60",
                                     "--out", "{out}"], "SIGTERM", 4.0, 143),
)
STOP_LIMIT = 10.0


def _interrupted(folder: Path, argv, sig: str, after: float, wall=WALL_LIMIT):
    """Run ``synth argv``; ``after`` seconds after it says it is solving, send ``sig``.

    Returns (exit code or None, stderr, seconds from the signal to the exit).
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SYNTH_CACHE_DIR": str(folder / "cache"), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(synth_argv(*argv), cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=env, start_new_session=True, preexec_fn=cap_memory,
                            text=True, errors="replace")
    seen = []
    for line in proc.stderr:            # the command is past start-up and solving (a note says so)
        seen.append(line)
        if "solving" in line:
            break
    time.sleep(after)
    t0 = time.monotonic()
    if proc.poll() is None:
        proc.send_signal(getattr(signal, sig))
    try:
        _, err = proc.communicate(timeout=wall)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        _, err = proc.communicate()
        code = None
    return code, "".join(seen) + err, time.monotonic() - t0


def special_probes(folder: Path, only=None) -> list:
    """(name, problem or '', seconds, stderr) of the interrupt, unwritable-cache and stale-temp-folder probes
    (those whose name contains ``only``, when given)."""
    results = []
    wanted = lambda name: not only or only in name  # noqa: E731
    for i, (name, argv, sig, after, want) in enumerate(INTERRUPTS):
        if not wanted(name):
            continue
        out = folder / f"int39-{i}.json"
        out.write_text("OLD")
        code, err, seconds = _interrupted(folder, [a.format(out=out) for a in argv], sig, after)
        problem = ("did not stop" if code is None else f"exit {code}, expected {want}" if code != want else
                   f"stopped {seconds:.1f} s after {sig}" if seconds > STOP_LIMIT else
                   "--out was replaced" if out.read_text() != "OLD" else
                   "traceback" if "Traceback" in err else
                   "went on to the next depth" if "k=5" in err else "")
        results.append((name, problem, seconds, err))
    name = "an unwritable cache is said, no rerun promised"
    if wanted(name):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "SYNTH_CACHE_DIR": "/proc/self/synth-cache"}
        done = subprocess.run(synth_argv("solve", "--torus", "4x4", "--depth", "2", "--time-limit", "10"), cwd=folder,
                              capture_output=True, text=True, env=env, timeout=WALL_LIMIT)
        ok = done.returncode == 0 and "cannot be written" in done.stderr and "instant" not in done.stderr
        results.append((name, "" if ok else f"exit {done.returncode}; stderr does not say the cache cannot be "
                        "written", 0.0, done.stderr))
    name = "a SIGKILLed write's temp folder is removed"
    if wanted(name):
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout.strip()
        stale = folder / f".t39.json.tmp-{dead}-abcdefgh"
        stale.mkdir()
        (stale / "t39.json").write_text("half a certificate")
        os.utime(stale, (time.time() - 120, time.time() - 120))
        code, _, err, seconds, _ = run(synth_argv("solve", "--torus", "4x4", "--out", str(folder / "t39.json")), folder)
        results.append((name, "" if code == 0 and not stale.exists() else "the stale temp folder is still there",
                        seconds, err))
    return results
