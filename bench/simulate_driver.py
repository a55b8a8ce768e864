"""The SimGrid driver before and after: the same simulated times, and messages per second.

Run: ``python bench/simulate_driver.py [--set quick|compare|scale] [--only NAME:MODE,...] [--json [FILE]]``.
Needs SimGrid (``apt-get install -y python3-simgrid``).

``NAME`` is a file of ``instances/torus`` without ``.json`` (``sp-8x8``, ``khop-16x16-k3``) or
``BASELINE@SHAPE`` (``bucket@8x8``); ``MODE`` is ``rounds`` or ``deps``.  Sets ``quick`` and
``compare`` replay each instance at 1 MiB with both drivers of :mod:`synth.analysis.simulate.run`:
``lists`` (the first one: 64 controllers, each waiting with ``Comm.wait_any`` on every flow it
started, a cost linear in its list per finished flow) and ``short-lists`` (workers whose wait
lists hold at most ``WAIT_LIST`` comms), and print the relative difference of their simulated
times (``0`` is equal to the last bit).  Set ``scale`` runs only ``short-lists`` on SP-allreduce
16x16, 32x32, 64x64 and the 16x16 depth-3 tree (``--only`` runs both drivers, ``--driver`` one).
``cpu s`` is the driver's CPU seconds inside SimGrid's run (all its threads), ``wall s`` the whole
subprocess (start, platform, run) on a machine shared with other jobs; ``msg/s`` divides the
messages by each.
"""

import os
import sys
from pathlib import Path

from _harness import Col, Table, log, parse_args, parser

from synth.analysis.cost import Network
from synth.analysis.simulate import INSTALL_HINT, simgrid_available, simulate_schedule
from synth.baselines import build_baseline
from synth.runtime.plan import load_schedule
from synth.topology.torus import parse_torus

ROOT = Path(__file__).resolve().parents[1]
MiB = 1 << 20
BOTH = ("lists", "short-lists")
_CMP = [(n, m) for n in ("sp-8x8", "khop-8x8-k3", "bucket@8x8") for m in ("rounds", "deps")]
SETS = {"quick": _CMP,
        "compare": _CMP + [("khop-16x16-k3", "rounds"), ("khop-16x16-k3", "deps")],
        "scale": [(n, "rounds") for n in ("sp-16x16", "khop-16x16-k3", "sp-32x32", "sp-64x64")]}
COLUMNS = [Col("instance", "name", "<14"), Col("mode", fmt="<6"), Col("driver", fmt="<11"),
           Col("messages", fmt=">9d"), Col("sim us", "sim_us", ">17.12f"), Col("rel diff", "diff", ">9.1e"),
           Col("wall s", "wall_s", ">7.2f"), Col("cpu s", "cpu_s", ">7.2f"), Col("msg/s wall", "rate_wall", ">10.0f"),
           Col("msg/s cpu", "rate_cpu", ">10.0f")]


def load(name):
    """``(schedule, weights)`` of an instance name (see the module docstring)."""
    if "@" in name:
        baseline, shape = name.split("@")
        b = build_baseline(baseline, parse_torus(shape))
        return b.schedule, b.weights
    schedule, weights, _ = load_schedule(str(ROOT / "instances" / "torus" / f"{name}.json"))
    return schedule, weights


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, str), spec="NAME:MODE")
    ap.add_argument("--driver", choices=BOTH, help="only this driver (default: both, but short-lists for --set scale)")
    args = parse_args(ap, argv)
    if not simgrid_available():
        raise SystemExit(f"bench/simulate_driver.py: {INSTALL_HINT}")
    table = Table(COLUMNS, json=args.json, title=f"host: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    drivers = (args.driver,) if args.driver else ("short-lists",) if args.set == "scale" and not args.only else BOTH
    for name, mode in args.instances:
        schedule, weights = load(name)
        first = None
        for driver in drivers:
            log(f"{name} {mode} {driver}")
            r = simulate_schedule(schedule, weights, [MiB], Network(), mode, name, model=False, driver=driver)[0]
            first = r.seconds if first is None else first
            table.add({"name": name, "mode": mode, "driver": driver, "messages": r.messages, "sim_us": r.seconds * 1e6,
                       "diff": r.seconds / first - 1, "wall_s": r.wall_seconds, "cpu_s": r.cpu_seconds,
                       "rate_wall": r.messages / r.wall_seconds, "rate_cpu": r.messages / r.cpu_seconds})
    return 0


if __name__ == "__main__":
    sys.exit(main())
