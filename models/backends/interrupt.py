"""Stop a solver running in C at once on Ctrl-C or SIGTERM, and let the interrupt through.

Python runs a signal's handler only when the main thread runs Python again: during a long
C call (CP-SAT's search) Ctrl-C and SIGTERM would wait for the call's own time limit.  And
CP-SAT, left to itself, catches Ctrl-C and ends as if its time had run out, so the caller
would carry on as if nothing happened.  :func:`stop_on_signal` closes both gaps: it takes
the solver's SIGINT handling away (the caller sets ``catch_sigint_signal = False``), and a
helper thread, woken by Python's signal wakeup file descriptor, calls the solver's thread-safe
``stop()`` the moment a signal arrives; when the call returns, Python raises the pending
``KeyboardInterrupt`` (or the CLI's SIGTERM exception) as usual.

Examples
--------
>>> with stop_on_signal(lambda: None):
...     1 + 1
2
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading

__all__ = ["stop_on_signal", "cpsat_solve"]


@contextlib.contextmanager
def stop_on_signal(stop):
    """Call ``stop()`` from a helper thread as soon as SIGINT or SIGTERM arrives in the block (with a Python handler).

    Outside the main thread (where Python cannot watch signals) the block simply runs.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    r, w = os.pipe()
    os.set_blocking(w, False)
    os.set_blocking(r, False)
    try:
        old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except ValueError:              # not the main interpreter: nothing to watch
        os.close(r)
        os.close(w)
        yield
        return
    done = threading.Event()

    def watch():
        while not done.is_set():
            ready, _, _ = select.select([r], [], [], 0.1)
            if ready and _drain(r):
                stop()

    watcher = threading.Thread(target=watch, name="synth-stop-on-signal", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(old, warn_on_full_buffer=False)
        done.set()
        watcher.join()
        os.close(r)
        os.close(w)


#: the signals that stop a solve (the wakeup fd also hears any other signal with a Python handler)
STOPPING = frozenset({int(signal.SIGINT), int(signal.SIGTERM)})


def _drain(fd) -> bool:
    """Whether the wakeup bytes waiting on ``fd`` (one signal number each) hold SIGINT or SIGTERM."""
    try:
        return not STOPPING.isdisjoint(os.read(fd, 512))
    except BlockingIOError:
        return False


def cpsat_solve(solver, model, callback=None):
    """``solver.solve(model, callback)`` that Ctrl-C and SIGTERM stop at once and interrupt (module docstring)."""
    solver.parameters.catch_sigint_signal = False
    with stop_on_signal(solver.stop_search):
        return solver.solve(model, callback) if callback is not None else solver.solve(model)
