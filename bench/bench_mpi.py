"""Run schedules under MPI next to MPI_Allreduce: 16 ranks (4x4) and, with --big, 64 ranks (8x8).

Run: ``python bench/bench_mpi.py [--big] [--sizes 64KiB,1MiB] [--iters 5] [--modes rounds,deps]``.
Needs the MPI extra (``pip install -e '.[mpi]'``).  Prints one line per (torus, schedule,
mode, size): the median per-iteration time of the schedule and of ``MPI_Allreduce`` on
the same data (each iteration's time is the slowest rank's), their ratio, and whether
every iteration matched the exact sum and MPI_Allreduce.  Also times the MSCCL export and
its check for the same schedules.

On a machine with fewer cores than ranks the numbers measure the oversubscribed host
(processes time-share cores), not a network: compare schedules with each other and with
MPI_Allreduce on the same machine only.
"""

import argparse
import os
import time

import numpy as np

from synth.baselines import build_baseline
from synth.exchange import exchange_allreduce
from synth.group import torus_gamma
from synth.lift import lift
from synth.runtime.mpi import run_schedule
from synth.runtime.msccl import export_msccl
from synth.runtime.msccl_check import check_xml
from synth.schedule import tree_schedule
from synth.sp import sp_allreduce
from synth.torus import parse_torus


def hub_parents(t, step):
    parent = np.full(t.n_vertices, -1, dtype=np.int64)
    for v in range(1, t.n_vertices):
        c = np.unravel_index(v, t.shape)
        hub = int(np.ravel_multi_index(tuple((x // step) * step for x in c), t.shape))
        parent[v] = 0 if hub == v else hub
    return parent


def cases(shape):
    t = parse_torus(shape)
    g = torus_gamma(t)
    out = {"sp": lift(sp_allreduce(t), g), "exchange": lift(exchange_allreduce(t), g),
           "bucket": build_baseline("bucket", t)}
    if shape == "4x4":
        out["k-hop(2)"] = lift(tree_schedule(t, hub_parents(t, 2), 0), g)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--big", action="store_true", help="also 8x8 (64 ranks)")
    ap.add_argument("--sizes", default="64KiB,1MiB")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--modes", default="rounds,deps")
    ap.add_argument("--no-msccl", action="store_true")
    args = ap.parse_args()
    print(f"host: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    shapes = ["4x4"] + (["8x8"] if args.big else [])
    for shape in shapes:
        for name, sched in cases(shape).items():
            if not args.no_msccl:
                t0 = time.perf_counter()
                ex = export_msccl(sched)
                t1 = time.perf_counter()
                rep = check_xml(ex.xml)
                t2 = time.perf_counter()
                print(f"{shape} {name:9s} msccl: export {t1 - t0:.2f} s, check {t2 - t1:.2f} s, ok={rep.ok}; "
                      f"{ex.summary()}", flush=True)
            for mode in args.modes.split(","):
                for size in args.sizes.split(","):
                    t0 = time.perf_counter()
                    r = run_schedule(sched, size=size, iters=args.iters, mode=mode)
                    wall = time.perf_counter() - t0
                    print(f"{shape} {name:9s} {mode:6s} {size:>6s}  schedule {1e3 * r.median_s:9.2f} ms   "
                          f"MPI_Allreduce {1e3 * r.allreduce_median_s:9.2f} ms   ratio "
                          f"{r.median_s / r.allreduce_median_s:5.2f}   ok={r.ok}   (launch {r.launch_s:.1f} s, "
                          f"wall {wall:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
