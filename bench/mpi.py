"""Run schedules under MPI next to MPI_Allreduce: 16 ranks (4x4) and, with --big, 64 ranks (8x8).

Run: ``python bench/mpi.py [--big] [--sizes 64KiB,1MiB] [--iters 5] [--modes rounds,deps] [--json [FILE]]``.
Needs the MPI extra (``pip install -e '.[mpi]'``).  Prints one line per (torus, schedule,
mode, size): the median per-iteration time of the schedule and of ``MPI_Allreduce`` on
the same data (each iteration's time is the slowest rank's), their ratio, and whether
every iteration matched the exact sum and MPI_Allreduce.  Also times the MSCCL export and
its check for the same schedules.

On a machine with fewer cores than ranks the numbers measure the oversubscribed host
(processes time-share cores), not a network: compare schedules with each other and with
MPI_Allreduce on the same machine only.
"""

import os


from _harness import Col, Ratio, Table, parse_args, parser, timed

from synth.baselines import build_baseline
from synth.schedule.exchange import exchange_allreduce
from synth.schedule.forest import hub_parents
from synth.symmetry.torus import torus_gamma
from synth.schedule.lift import lift
from synth.runtime.mpi import run_schedule
from synth.runtime.msccl import export_msccl
from synth.runtime.msccl.check import check_xml
from synth.schedule import tree_schedule
from synth.schedule.sp import sp_allreduce
from synth.topology.torus import parse_torus

SETS = {"quick": [("4x4",)], "big": [("4x4",), ("8x8",)]}
COLUMNS = [Col("torus", "shape", "<5"), Col("schedule", fmt="<9"), Col("mode", fmt="<6"), Col("size", fmt=">6"),
           Col("sched ms", "schedule_ms", ">9.2f"), Col("MPI ms", "allreduce_ms", ">9.2f"),
           Ratio("ratio", "schedule_ms", "allreduce_ms", fmt=">6.2f"), Col("ok", fmt=">5"),
           Col("launch s", "launch_s", ">8.1f"), Col("wall s", "wall_s", ">6.1f"),
           Col("export s", "export_s", ">8.2f"), Col("check s", "check_s", ">7.2f"), Col("xml ok", "xml_ok", ">6"),
           Col("msccl", "summary", "")]


def cases(shape):
    t = parse_torus(shape)
    g = torus_gamma(t)
    out = {"sp": lift(sp_allreduce(t), g), "exchange": lift(exchange_allreduce(t), g),
           "bucket": build_baseline("bucket", t)}
    if shape == "4x4":
        out["k-hop(2)"] = lift(tree_schedule(t, hub_parents(t, 2), 0), g)
    return out


def main(argv=None):
    ap = parser(__doc__, SETS, fields=(str,), spec="SHAPE")
    ap.add_argument("--big", action="store_true", help="also 8x8 (64 ranks): the same as --set big")
    ap.add_argument("--sizes", default="64KiB,1MiB")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--modes", default="rounds,deps")
    ap.add_argument("--no-msccl", action="store_true")
    args = parse_args(ap, argv)
    shapes = [s for (s,) in (SETS["big"] if args.big else args.instances)]
    # the MSCCL export and check of each schedule is a row of its own, its ratio column empty
    table = Table(COLUMNS, json=args.json, title=f"host: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    for shape in shapes:
        for name, sched in cases(shape).items():
            if not args.no_msccl:
                ex, t_export = timed(export_msccl, sched)
                rep, t_check = timed(check_xml, ex.xml)
                table.add({"shape": shape, "schedule": name, "mode": "msccl", "export_s": t_export,
                           "check_s": t_check, "xml_ok": rep.ok, "summary": ex.summary()})
            for mode in args.modes.split(","):
                for size in args.sizes.split(","):
                    r, wall = timed(run_schedule, sched, size=size, iters=args.iters, mode=mode)
                    table.add({"shape": shape, "schedule": name, "mode": mode, "size": size,
                               "schedule_ms": 1e3 * r.median_s, "allreduce_ms": 1e3 * r.allreduce_median_s,
                               "ok": r.ok, "launch_s": r.launch_s, "wall_s": wall})


if __name__ == "__main__":
    main()
