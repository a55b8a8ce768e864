"""Run schedules under JAX next to jax.lax.psum: 16 emulated devices (4x4) and, with --set big, 64 (8x8).

Run: ``python bench/jax.py [--set quick|big] [--only 4x4,8x8] [--sizes 4KiB,256KiB] [--iters 5] [--dtype float32]
[--json [FILE]]``.  Needs the JAX extra (``pip install -e '.[jax]'``).  Prints one line per (torus,
schedule, size): the median steady-state time per iteration of the schedule (``ppermute`` inside
``shard_map``) and of ``psum`` on the same inputs in the same process, their ratio, whether every
iteration matched the exact sum and psum, the ppermutes per allreduce and both compile times.

On CPU the devices are emulated host devices of one process, time-sharing the machine's cores:
each collective is a rendezvous of ``p`` threads, so the figures measure XLA's CPU runtime, not a
network.  Compare schedules with each other and with psum on the same machine only.
"""

import os
import sys

import numpy as np

from _harness import Col, Ratio, Table, parse_args, parser, timed

from synth.baselines import build_baseline
from synth.schedule.exchange import exchange_allreduce
from synth.schedule.lift import lift
from synth.schedule.sp import sp_allreduce
from synth.solving import solve
from synth.symmetry.torus import torus_gamma
from synth.topology.torus import parse_torus

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SETS = {"quick": [("4x4",)], "big": [("4x4",), ("8x8",)]}
COLUMNS = [Col("torus", "shape", "<5"), Col("schedule", fmt="<8"), Col("size", fmt=">7"),
           Col("sched ms", "schedule_ms", ">9.3f"), Col("psum ms", "psum_ms", ">8.3f"),
           Ratio("ratio", "schedule_ms", "psum_ms", fmt=">7.2f"), Col("ok", fmt=">5"),
           Col("ppermutes", "permutations", ">9"), Col("compile s", "compile_s", ">9.2f"),
           Col("psum compile s", "psum_compile_s", ">14.2f"), Col("wall s", "wall_s", ">6.1f")]


def cases(shape):
    """SP, exchange, a k-hop tree (depth 2 on 4x4, the certified depth-3 tree of instances/ on 8x8) and Bucket."""
    t = parse_torus(shape)
    g = torus_gamma(t)
    khop = (solve(t, depth=2, time_limit=10).certificate if shape == "4x4"
            else os.path.join(ROOT, "instances", "torus", f"khop-{shape}-k3.json"))
    return {"sp": lift(sp_allreduce(t), g), "exchange": lift(exchange_allreduce(t), g), "k-hop": khop,
            "bucket": build_baseline("bucket", t)}


def _unshadow_jax():
    """As a script this file's folder is ``sys.path[0]``, where ``import jax`` would find this file: drop it."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]


def main(argv=None):
    _unshadow_jax()
    from synth.runtime.jax.devices import host_devices  # imports JAX: after the path is fixed
    from synth.runtime.jax.run import run_jax

    ap = parser(__doc__, SETS, fields=(str,), spec="SHAPE")
    ap.add_argument("--sizes", default="4KiB,256KiB,4MiB")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--dtype", default="float32")
    args = parse_args(ap, argv)
    shapes = [s for (s,) in args.instances]
    host_devices(max(int(np.prod(parse_torus(s).shape)) for s in shapes))  # before JAX starts: enough for all
    table = Table(COLUMNS, json=args.json, title=f"host: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    for shape in shapes:
        for name, sched in cases(shape).items():
            for size in args.sizes.split(","):
                r, wall = timed(run_jax, sched, size=size, iters=args.iters, dtype=args.dtype)
                table.add({"shape": shape, "schedule": name, "size": size, "schedule_ms": 1e3 * r.median_s,
                           "psum_ms": 1e3 * r.psum_median_s, "ok": r.ok, "permutations": r.permutations,
                           "compile_s": r.compile_s, "psum_compile_s": r.psum_compile_s, "wall_s": wall})


if __name__ == "__main__":
    main()
