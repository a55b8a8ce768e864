"""Ctrl-C and SIGTERM stop every solve, sweep and by-size loop at once, with 130 / 143.

Each test runs ``synth`` in a real process, waits until it is solving, sends the signal and
checks: the exit code, that it came within seconds, that ``--out`` (an older file) is intact,
and that nothing after the interrupted depth ran.  A k-hop solve that caught the
interrupt would exit 0 and write the interrupted tree over ``--out``, and a sweep would go on to the next depth.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

SOLVING = 2.5      # seconds into the solve before the signal: past start-up, inside the search
PROMPT = 6.0       # the most the command may take to stop after the signal (a busy CI machine)


def _start(args, cache):
    env = dict(os.environ, SYNTH_CACHE_DIR=str(cache), PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "synth", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def _interrupt(proc, sig, wait_for="note: solving"):
    """Wait for the line that says the solve starts, then SOLVING seconds; send ``sig``; (code, seconds, stderr)."""
    seen = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if wait_for in line:
            break
    time.sleep(SOLVING)
    assert proc.poll() is None, "".join(seen) + proc.stderr.read()
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        _out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, time.monotonic() - t0, "".join(seen) + err


CODES = {signal.SIGINT: (130, "synth: interrupted"), signal.SIGTERM: (143, "synth: terminated")}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_khop_solve_stops_and_never_writes_out(tmp_path, sig):
    out = tmp_path / "o.json"
    out.write_text("OLD")
    proc = _start(["solve", "--depth", "3", "--torus", "12x12", "--seed", "5", "--out", str(out),
                   "--time-limit", "60"], tmp_path / "cache")
    code, seconds, err = _interrupt(proc, sig)
    assert (code, err.strip().splitlines()[-1].split(" (")[0]) == CODES[sig], err
    assert seconds < PROMPT, err
    assert out.read_text() == "OLD"
    assert "Traceback" not in err
    kept = list((tmp_path / "cache").glob("*.interrupted.json"))
    if kept:        # the best tree so far, kept for what it is: never served as an answer
        assert "kept in the cache marked interrupted" in err
        assert json.loads(kept[0].read_text())["interrupted"] is True
        assert not list((tmp_path / "cache").glob("*-r*[0-9].json"))


def test_exchange_forest_solve_stops(tmp_path):
    out = tmp_path / "o.json"
    out.write_text("OLD")
    proc = _start(["solve", "--depth", "3", "--exchange", "--torus", "12x12", "--out", str(out), "--time-limit", "60"],
                  tmp_path / "cache")
    code, seconds, err = _interrupt(proc, signal.SIGTERM)
    assert code == 143 and seconds < PROMPT and out.read_text() == "OLD", err
    assert err.strip().splitlines()[-1].startswith("synth: terminated")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sweep_stops_at_the_current_depth(tmp_path, jobs):
    out = tmp_path / "t.json"
    out.write_text("OLD")
    proc = _start(["sweep", "--torus", "12x12", "--time-limit", "60", "--jobs", jobs, "--out", str(out)],
                  tmp_path / "cache")
    code, seconds, err = _interrupt(proc, signal.SIGTERM, wait_for="k=")
    assert code == 143 and seconds < PROMPT and out.read_text() == "OLD", err
    assert "k=5" not in err         # no later depth was started


def test_solve_size_stops(tmp_path):
    proc = _start(["solve", "--torus", "12x12", "--size", "1MiB", "--time-limit", "60"], tmp_path / "cache")
    code, seconds, err = _interrupt(proc, signal.SIGINT, wait_for="k=")
    assert code == 130 and seconds < PROMPT, err
    assert "best at" not in err and "chosen" not in err


def test_a_later_run_solves_again_and_says_so(tmp_path):
    """After an interrupted solve, the same command does not serve the kept tree: it solves and notes it."""
    cache = tmp_path / "cache"
    proc = _start(["solve", "--depth", "2", "--torus", "6x6", "--time-limit", "30"], cache)
    proc.wait(timeout=120)      # a solved entry first ...
    (entry,) = cache.iterdir()
    stopped = entry.with_name(entry.stem + ".interrupted.json")
    data = json.loads(entry.read_text())
    entry.unlink()              # ... turned into an interrupted one (the sha256 covers the mark)
    data["interrupted"] = True
    from synth.solving.cache import _digest

    data["sha256"] = _digest(data)
    stopped.write_text(json.dumps(data))
    done = subprocess.run([sys.executable, "-m", "synth", "solve", "--depth", "2", "--torus", "6x6", "--time-limit",
                           "30"], capture_output=True, text=True, env=dict(os.environ, SYNTH_CACHE_DIR=str(cache)))
    assert done.returncode == 0, done.stderr
    assert "interrupted solve" in done.stderr and "solved again" in done.stderr
    assert "read from the cache" not in done.stderr
    assert [p.name for p in cache.iterdir()] == [entry.name]


def _rows(store):
    """The store's (status, error) per row, read-only; [] while it is not there yet."""
    import sqlite3

    if not store.exists():
        return []
    try:
        with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
            return db.execute("select status, error from results order by position").fetchall()
    except sqlite3.Error:
        return []


def _campaign(tmp_path, data):
    (tmp_path / "c.json").write_text(json.dumps(data))
    store = tmp_path / "c.sqlite"
    proc = _start(["campaign", "run", str(tmp_path / "c.json"), "--cluster", "serial", "--store", str(store)],
                  tmp_path / "cache")
    return proc, store


def _signal_when(proc, store, sig, done: int):
    """Send ``sig`` once ``done`` rows are finished (at most 120 s of waiting); (code, seconds, stderr)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and sum(s != "pending" for s, _ in _rows(store)) < done:
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    t0 = time.monotonic()
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=60)
    return proc.returncode, time.monotonic() - t0, err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_serial_campaign_stops_and_leaves_the_running_task_pending(tmp_path, sig):
    """As with --cluster local: the campaign ends with 143 (130), the task it was running stays pending (so
    the next run runs it), and nothing after it ran."""
    proc, store = _campaign(tmp_path, {"tasks": [
        ["info", "--torus", "4x4"],
        ["solve", "--depth", "3", "--torus", "12x12", "--seed", "5", "--time-limit", "60"],
        ["info", "--torus", "6x6"]]})
    code, seconds, err = _signal_when(proc, store, sig, done=1)
    assert (code, err.strip().splitlines()[-1].split(" (")[0]) == CODES[sig], err
    assert seconds < PROMPT and "Traceback" not in err
    assert _rows(store) == [("done", None), ("pending", None), ("pending", None)]


def test_a_serial_campaign_of_many_short_tasks_stops_too(tmp_path):
    """Thousands of short tasks: the signal lands inside one of them, and still ends the campaign."""
    shapes = [f"{a}x{b}" for a in range(3, 60) for b in range(3, 60)]
    proc, store = _campaign(tmp_path, {"grids": [{"command": "info", "vary": {"--torus": shapes}}]})
    code, seconds, err = _signal_when(proc, store, signal.SIGTERM, done=50)
    rows = _rows(store)
    assert code == 143 and seconds < PROMPT, err
    assert all(status != "failed" for status, _ in rows), [r for r in rows if r[0] == "failed"][:3]
    assert 50 <= sum(status == "done" for status, _ in rows) < len(shapes)


def test_python_m_synth_exits_with_the_interrupt_code_after_a_c_librarys_interrupt(tmp_path):
    """A KeyboardInterrupt that crossed a C library's PyRun call (here: PyRun_String raising it, caught) sets
    CPython's unhandled-interrupt flag; ``python -m synth`` still exits with the CLI's 130, not by SIGINT."""
    (tmp_path / "sitecustomize.py").write_text(
        "import ctypes\n"
        "import synth.cli\n"
        "def main(argv=None):\n"
        "    run = ctypes.pythonapi.PyRun_String\n"
        "    run.restype, run.argtypes = ctypes.py_object, [ctypes.c_char_p, ctypes.c_int, ctypes.py_object,"
        " ctypes.py_object]\n"
        "    try:\n"
        "        run(b'raise KeyboardInterrupt', 257, {}, {})\n"
        "    except KeyboardInterrupt:\n"
        "        pass\n"
        "    return 130\n"
        "synth.cli.main = main\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "synth", "info", "--torus", "4x4"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 130, done.stderr
