"""Probes of ``synth campaign run`` with hostile campaign files: calls of other modules, flags that
write files or run programs, however spelt.  Each must end with one line and exit 2 before any task runs;
:mod:`probe_hostile` runs them with its other probes.
"""

from __future__ import annotations

from pathlib import Path

from _probe_run import write

__all__ = ["campaign_probes"]

#: (name, one hostile task): each campaign file holds a harmless task first, then this one
HOSTILE_TASKS = (
    ("call os:system", {"call": "os:system", "kwargs": {"command": "touch owned"}}),
    ("call subprocess:run", {"call": "subprocess:run", "kwargs": {"args": ["touch", "owned"]}}),
    ("call builtins:exec", {"call": "builtins:exec", "kwargs": {"source": "open('owned', 'w')"}}),
    ("call synth.fileio:write_atomic", {"call": "synth.fileio:write_atomic", "kwargs": {"path": "owned",
                                                                                       "lines": "x"}}),
    ("call khop_entry with a path", {"call": "synth.campaign.calls:khop_entry",
                                     "kwargs": {"shape": [4, 4], "k": 2, "out": "owned"}}),
    ("solve --out", ["solve", "--torus", "4x4", "--out", "owned"]),
    ("solve --out=", ["solve", "--torus", "4x4", "--out=owned"]),
    ("solve --ou", ["solve", "--torus", "4x4", "--ou", "owned"]),
    ("solve --ou=", ["solve", "--torus", "4x4", "--ou=owned"]),
    ("solve --o", ["solve", "--torus", "4x4", "--o", "owned"]),
    ("sweep --ou", ["sweep", "--torus", "4x4", "--depths", "1", "--ou", "owned"]),
    ("run --workdir", ["run", "c.json", "--workdir", "owned"]),
    ("run --mpiexec", ["run", "c.json", "--mpiexec", "touch owned"]),
    ("solve --size --cluster", ["solve", "--torus", "4x4", "--size", "1MiB", "--cluster", "tcp://127.0.0.1:9"]),
    ("info --help", ["info", "--torus", "4x4", "--help"]),
    ("draw", ["draw", "c.json", "--out", "owned.png"]),
)


def campaign_probes(folder: Path) -> list:
    """(name, argv, allowed exit codes) of each hostile campaign file, run serially with its own store."""
    out = []
    for i, (name, task) in enumerate(HOSTILE_TASKS):
        path = write(folder, f"campaign-{i}.json", {"tasks": [["info", "--torus", "4x4"], task]})
        out.append((f"campaign: {name}", ["campaign", "run", path, "--cluster", "serial", "--store",
                                          str(folder / f"campaign-{i}.sqlite")], (2,)))
    return out
