"""The SimGrid drivers side by side: the same simulated times, and messages per second.

Run: ``python bench/simulate_driver.py [--set quick|compare|scale|stars] [--only NAME:MODE,...] [--json [FILE]]``.
Needs SimGrid (``apt-get install -y python3-simgrid``).

``NAME`` is a file of ``instances/torus`` without ``.json`` (``sp-8x8``, ``khop-16x16-k3``),
``BASELINE@SHAPE`` (``bucket@8x8``) or ``star-S-L-H`` (the SP star of spine-leaf ``S,L,H``:
``L*H*(L*H-1)`` concurrent flows in its busiest round); ``MODE`` is ``rounds`` or ``deps``.  Every instance is
replayed at 1 MiB (the stars at 32 KiB, the paper's small spine-leaf size) with the drivers of
:mod:`synth.analysis.simulate.run`: ``lists`` (the first one: 64 controllers, each waiting with
``Comm.wait_any`` on every flow it started, a cost linear in its list per finished flow),
``short-lists`` (workers whose wait lists stay short, starting flows with ``Comm.sendto_async``,
whose detached comms SimGrid 3.32 keeps in one global list it walks at every end) and ``mailboxes``
(the default: the same workers, starting flows as puts to a mailbox per destination host).  It
prints the relative difference of their simulated times to the first driver's (``0`` is equal to the
last bit).  Sets ``quick`` and ``compare`` run the three drivers; ``scale`` (SP-allreduce 16x16, 32x32,
64x64 and the 16x16 depth-3 tree) and ``stars`` (``star-8-8-8``, ``star-8-16-8``, ``star-12-24-12``,
``star-16-32-16``) run ``short-lists`` and ``mailboxes`` (``--driver`` one of them; ``--only`` runs all
three unless ``--driver`` says otherwise); the two bigger stars skip the drivers that crawl there
(``CRAWL``) unless ``--driver`` names them.  ``cpu s`` is the driver's CPU seconds inside SimGrid's run
(all its threads), ``wall s`` the whole subprocess (start, platform, run) on a machine shared with other
jobs; ``msg/s`` divides the messages by each.
"""

import os
import sys
from pathlib import Path

from _harness import Col, Table, log, parse_args, parser

from synth.analysis.cost import Network
from synth.analysis.simulate import INSTALL_HINT, SimOptions, simgrid_available, simulate_schedule
from synth.baselines import build_baseline
from synth.runtime.plan import load_schedule
from synth.schedule.lift import lift, lifted_weights
from synth.schedule.spineleaf import spine_leaf_star
from synth.symmetry.spineleaf import spine_leaf_group
from synth.topology.spineleaf import parse_spine_leaf
from synth.topology.torus import parse_torus

ROOT = Path(__file__).resolve().parents[1]
MiB = 1 << 20
KiB = 1 << 10
ALL = ("lists", "short-lists", "mailboxes")
WORKERS = ("short-lists", "mailboxes")
# what a driver is not run on unless --driver names it: SimGrid's walk of the detached comms' global list
# makes short-lists crawl there (bench/RESULTS.md); the first driver's lists are as long as the flows in flight
CRAWL = {"short-lists": {"star-12-24-12": "stopped unfinished after 14.5 min of CPU",
                         "star-16-32-16": "stopped unfinished after 85 min of CPU"},
         "lists": {"star-12-24-12": "lists of 1,300 comms", "star-16-32-16": "lists of 4,000 comms"}}
_CMP = [(n, m) for n in ("sp-8x8", "khop-8x8-k3", "bucket@8x8") for m in ("rounds", "deps")]
SETS = {"quick": _CMP,
        "compare": _CMP + [("khop-16x16-k3", "rounds"), ("khop-16x16-k3", "deps")],
        "scale": [(n, "rounds") for n in ("sp-16x16", "khop-16x16-k3", "sp-32x32", "sp-64x64")],
        "stars": [(f"star-{s}", "rounds") for s in ("8-8-8", "8-16-8", "12-24-12", "16-32-16")]}
COLUMNS = [Col("instance", "name", "<14"), Col("mode", fmt="<6"), Col("driver", fmt="<11"),
           Col("messages", fmt=">9d"), Col("sim us", "sim_us", ">17.12f"), Col("rel diff", "diff", ">9.1e"),
           Col("wall s", "wall_s", ">7.2f"), Col("cpu s", "cpu_s", ">7.2f"), Col("msg/s wall", "rate_wall", ">10.0f"),
           Col("msg/s cpu", "rate_cpu", ">10.0f")]


def load(name):
    """``(schedule, weights)`` of an instance name (see the module docstring)."""
    if name.startswith("star-"):
        s = parse_spine_leaf(name[5:].replace("-", ","))
        base, g = spine_leaf_star(s), spine_leaf_group(s)
        return lift(base, g), lifted_weights(base, g)
    if "@" in name:
        baseline, shape = name.split("@")
        b = build_baseline(baseline, parse_torus(shape))
        return b.schedule, b.weights
    schedule, weights, _ = load_schedule(str(ROOT / "instances" / "torus" / f"{name}.json"))
    return schedule, weights


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str, str), spec="NAME:MODE")
    ap.add_argument("--driver", choices=ALL, help="only this driver (default: all three, but short-lists and "
                    "mailboxes for --set scale and stars)")
    args = parse_args(ap, argv)
    if not simgrid_available():
        raise SystemExit(f"bench/simulate_driver.py: {INSTALL_HINT}")
    table = Table(COLUMNS, json=args.json, title=f"host: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    drivers = (args.driver,) if args.driver else WORKERS if args.set in ("scale", "stars") and not args.only else ALL
    for name, mode in args.instances:
        schedule, weights = load(name)
        first = None
        for driver in drivers:
            if name in CRAWL.get(driver, ()) and not args.driver:
                log(f"{name} {mode} {driver}: skipped ({CRAWL[driver][name]}; --driver {driver} runs it)")
                continue
            log(f"{name} {mode} {driver}")
            size = 32 * KiB if name.startswith("star-") else MiB
            r = simulate_schedule(schedule, weights, [size], Network(), mode, name,
                                  options=SimOptions(model=False, driver=driver))[0]
            first = r.seconds if first is None else first
            table.add({"name": name, "mode": mode, "driver": driver, "messages": r.messages, "sim_us": r.seconds * 1e6,
                       "diff": r.seconds / first - 1, "wall_s": r.wall_seconds, "cpu_s": r.cpu_seconds,
                       "rate_wall": r.messages / r.wall_seconds, "rate_cpu": r.messages / r.cpu_seconds})
    return 0


if __name__ == "__main__":
    sys.exit(main())
